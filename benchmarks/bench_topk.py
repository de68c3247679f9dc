"""Speed of ``theory.topk`` (regularised top-k, paper key ``topk``) against sorting.

1. ``topk_mask`` at n = 10^6, k = 100 (reg = 1, p = 2, x ~ N(0, 1)) against ``np.sort`` on the same
   input, in the same run: ratio = ours / sort (sorting is the floor of a full-sort method; only a
   window of the largest entries is sorted here). Target: ratio <= 2. Also p = 4/3 and the magnitude
   operator, reported without a target.
2. Scaling of ``topk_mask`` over n = 10^3 .. 10^6 (k = 100, or n/10 when that is smaller), with the
   ``np.sort`` time beside it and the log-log slope of ours against n.
3. ``jvp`` and ``vjp`` (O(n) after the forward pass) against the forward call, at n = 10^4 and 10^6.
4. ``topk_mask`` for p = 1.5 (a per-block root solve instead of closed-form pooling) at n = 10^6,
   k = 100, reg = 1 and 10, with the number of non-zeros (the pooled block's size); times only, no
   target.

Before timing, the window result is compared with the full-sort computation (bit for bit). All
draws come from ``numpy.random.default_rng(seed)``. Public names only, except the full-sort
reference ``theory.topk._api._forward(..., full=True)`` used for the equality check.
"""

from __future__ import annotations

import numpy as np

from _harness import fmt_time, format_table, loglog_slope, time_call
from theory.topk import jvp, topk_magnitude, topk_mask, vjp
from theory.topk._api import _forward

__all__ = ["bench_pnorm", "bench_products", "bench_scaling", "bench_vs_sort", "run"]

FAMILY = "topk"
FULL = {"n": 10**6, "k": 100, "target": 2.0, "ns": [10**3, 10**4, 10**5, 10**6], "products_ns": [10**4, 10**6],
        "pnorm_n": 10**6}
QUICK = {"n": 10**5, "k": 100, "target": 2.0, "ns": [10**3, 10**4, 10**5], "products_ns": [10**4],
         "pnorm_n": 10**5}


def make_problem(n, seed=0):
    return np.random.default_rng(seed).standard_normal(n)


def _identical(x, k, reg, p, mode):
    fast, *_ = _forward(x, k, reg, p, mode, "bench")
    full, *_ = _forward(x, k, reg, p, mode, "bench", full=True)
    return bool(np.array_equal(fast, full))


def bench_vs_sort(*, n, k, target, seed=0, reg=1.0, **timing):
    x = make_problem(n, seed)
    sort = time_call(lambda: np.sort(x), **timing)
    runs = []
    for name, fn, p, mode in [("topk_mask", topk_mask, 2.0, "mask"), ("topk_mask", topk_mask, 4.0 / 3.0, "mask"),
                              ("topk_magnitude", topk_magnitude, 2.0, "magnitude"),
                              ("topk_magnitude", topk_magnitude, 4.0 / 3.0, "magnitude")]:
        y = fn(x, k, reg, p)
        ours = time_call(lambda: fn(x, k, reg, p), **timing)
        runs.append({"function": name, "p": p, "nonzeros": int(np.count_nonzero(y)),
                     "identical_to_full_sort": _identical(x, k, reg, p, mode), "theory": ours.as_dict(),
                     "ratio": ours.median / sort.median, "ratio_range": [ours.q1 / sort.q3, ours.q3 / sort.q1]})
    main = runs[0]["ratio"]
    return {"family": FAMILY, "name": "topk_vs_sort", "params": {"n": n, "k": k, "reg": reg, "seed": seed},
            "sort": sort.as_dict(), "runs": runs, "target": target, "ratio": main, "target_met": main <= target}


def bench_scaling(*, ns, k, seed=0, reg=1.0, **timing):
    runs = []
    for n in ns:
        kk = min(k, n // 10)
        x = make_problem(n, seed)
        ours = time_call(lambda: topk_mask(x, kk, reg), **timing)
        sort = time_call(lambda: np.sort(x), **timing)
        runs.append({"n": n, "k": kk, "theory": ours.as_dict(), "sort": sort.as_dict(),
                     "ratio": ours.median / sort.median})
    return {"family": FAMILY, "name": "topk_mask_scaling", "params": {"ns": ns, "k": k, "reg": reg, "seed": seed},
            "runs": runs, "slope": loglog_slope([r["n"] for r in runs], [r["theory"]["median"] for r in runs]),
            "sort_slope": loglog_slope([r["n"] for r in runs], [r["sort"]["median"] for r in runs])}


def bench_products(*, ns, k, seed=0, reg=1.0, **timing):
    runs = []
    for n in ns:
        x = make_problem(n, seed)
        v = np.random.default_rng(seed + 1).standard_normal(n)
        for mode in ("mask", "magnitude"):
            fwd = topk_mask if mode == "mask" else topk_magnitude
            f = time_call(lambda: fwd(x, k, reg), **timing)
            j = time_call(lambda: jvp(x, k, v, reg, mode=mode), **timing)
            t = time_call(lambda: vjp(x, k, v, reg, mode=mode), **timing)
            runs.append({"n": n, "mode": mode, "forward": f.as_dict(), "jvp": j.as_dict(), "vjp": t.as_dict(),
                         "jvp_over_forward": j.median / f.median, "vjp_over_forward": t.median / f.median})
    return {"family": FAMILY, "name": "topk_products", "params": {"ns": ns, "k": k, "reg": reg, "seed": seed},
            "runs": runs}


def bench_pnorm(*, n, k, seed=0, p=1.5, regs=(1.0, 10.0), **timing):
    x = make_problem(n, seed)
    runs = []
    for reg in regs:
        y = topk_mask(x, k, reg, p)
        ours = time_call(lambda: topk_mask(x, k, reg, p), **timing)
        runs.append({"reg": reg, "nonzeros": int(np.count_nonzero(y)), "theory": ours.as_dict(),
                     "identical_to_full_sort": _identical(x, k, reg, p, "mask")})
    return {"family": FAMILY, "name": "topk_mask_pnorm", "params": {"n": n, "k": k, "p": p, "seed": seed},
            "runs": runs, "target": None}


def _med(t):
    return f"{fmt_time(t['median'])} ({fmt_time(t['iqr'])}, {t['rounds']})"


def print_vs_sort(r):
    p = r["params"]
    rows = [[run["function"], f"{run['p']:.4g}", str(run["nonzeros"]), fmt_time(run["theory"]["first_call"]),
             _med(run["theory"]), _med(r["sort"]), f"{run['ratio']:.2f}",
             f"{run['ratio_range'][0]:.2f}-{run['ratio_range'][1]:.2f}",
             "yes" if run["identical_to_full_sort"] else "NO"] for run in r["runs"]]
    print(format_table(
        ["function", "p", "nonzeros", "1st call", "median (IQR, rounds)", "np.sort median", "theory/sort",
         "ratio IQR span", "= full sort"],
        rows, title=f"Regularised top-k vs np.sort: n = {p['n']}, k = {p['k']}, reg = {p['reg']:g}, x ~ N(0, 1)",
        align=["<", ">", ">", ">", ">", ">", ">", ">", "<"]))
    print(f"  topk_mask (p = 2): {r['ratio']:.2f} x np.sort; target <= {r['target']:g}: "
          f"{'met' if r['target_met'] else 'NOT met'}. '= full sort': the window result equals the full-sort "
          "computation bit for bit.")
    print()


def print_scaling(r):
    rows = [[str(run["n"]), str(run["k"]), _med(run["theory"]), _med(run["sort"]), f"{run['ratio']:.2f}"]
            for run in r["runs"]]
    print(format_table(["n", "k", "topk_mask median (IQR, rounds)", "np.sort median", "theory/sort"], rows,
                       title="topk_mask scaling (p = 2, reg = 1)", align=[">", ">", ">", ">", ">"]))
    print(f"  log-log slope vs n: topk_mask {r['slope']:.2f}, np.sort {r['sort_slope']:.2f}.")
    print()


def print_products(r):
    rows = [[str(run["n"]), run["mode"], _med(run["forward"]), _med(run["jvp"]), _med(run["vjp"]),
             f"{run['jvp_over_forward']:.2f}", f"{run['vjp_over_forward']:.2f}"] for run in r["runs"]]
    print(format_table(["n", "mode", "forward", "jvp", "vjp", "jvp/forward", "vjp/forward"], rows,
                       title=f"jvp / vjp (forward pass included) vs the forward call (k = {r['params']['k']}, p = 2)",
                       align=[">", "<", ">", ">", ">", ">", ">"]))
    print()


def print_pnorm(r):
    p = r["params"]
    rows = [[f"{run['reg']:g}", str(run["nonzeros"]), fmt_time(run["theory"]["first_call"]), _med(run["theory"]),
             "yes" if run["identical_to_full_sort"] else "NO"] for run in r["runs"]]
    print(format_table(["reg", "nonzeros", "1st call", "median (IQR, rounds)", "= full sort"], rows,
                       title=f"topk_mask, p = {p['p']:g}: n = {p['n']}, k = {p['k']}, x ~ N(0, 1) (no target)",
                       align=[">", ">", ">", ">", "<"]))
    print()


def run(*, quick=False, timing=None):
    """Every theory.topk benchmark of a configuration; prints the tables, returns the results."""
    cfg = QUICK if quick else FULL
    timing = timing or {}
    a = bench_vs_sort(n=cfg["n"], k=cfg["k"], target=cfg["target"], **timing)
    print_vs_sort(a)
    b = bench_scaling(ns=cfg["ns"], k=cfg["k"], **timing)
    print_scaling(b)
    c = bench_products(ns=cfg["products_ns"], k=cfg["k"], **timing)
    print_products(c)
    d = bench_pnorm(n=cfg["pnorm_n"], k=cfg["k"], **timing)
    print_pnorm(d)
    return [a, b, c, d]


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    run(quick="--quick" in sys.argv)
