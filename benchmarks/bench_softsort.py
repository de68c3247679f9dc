"""Speed of the soft sort, soft rank and top-k mask of ``theory.topk`` against torchsort 0.1.10.

Run: ``python benchmarks/bench_softsort.py [--quick] [--n 1e6] [--no-batch] [--torch-threads T] [--no-one-thread]``
(``--n`` and ``--no-batch`` run a subset, written with the suffix ``_subset``). Writes a markdown
table to stdout and to ``benchmarks/out/bench_softsort.md`` (and the numbers to
``bench_softsort.json``, the plot of the ratios against n to ``bench_softsort.png``).

Same process, float64, torchsort at its default number of threads. Both sides compute the same
operator (torchsort's "l2" soft sort and soft rank are ``theory.topk.soft_sort(x, reg, 2,
descending=False)`` and ``soft_rank(x, reg, 2, descending=False)``; this is checked before timing, to
1e-11 relative). The repeats of every case are interleaved (theory, torchsort, theory, ...) and each
side's time is the minimum over its repeats, so a load that comes and goes hits both alike.

Cases (x ~ N(0, 1), reg = 1, torchsort's default strength):

* one vector, n = 10^3 .. 10^6: soft_sort, soft_rank (torchsort on shape (1, n));
* a batch of 256 rows of 1000: soft_sort, soft_rank;
* value and vector-Jacobian product (the forward and backward passes of an autograd function):
  theory ``soft_rank_with_jacobian`` then ``jac.vjp(u)``; torchsort ``soft_rank`` on a tensor that
  requires grad, then ``backward(u)``; also soft_sort, and the batch;
* the isotonic regression alone (decreasing, unit weights): ``theory.isotonic.isotonic_regression``
  against torchsort's compiled ``isotonic_l2``;
* ``topk_mask`` (k = 10, reg = 1) on the 256 x 1000 batch against ``np.sort`` of the same array
  (target: ratio at most 1.5);
* floors of the one-vector soft rank, timed in the soft rank's own rounds (their ratio is to torchsort's
  soft rank): NumPy's default argsort and the gather x[order] (the issue's "argsort and gather" bound, with
  NumPy's fastest, unstable sort), and the least the operator's memory traffic needs with the stable
  permutation it must use: theory's radix argsort, the gather of the sorted values and the scatter of the
  result back to input order.

Threads: torch's intra-op threads and Numba's thread count are printed with the table (both the machine's
cores unless ``--torch-threads`` is given); a single vector runs on one core on the theory side. A second
table repeats every case with one thread on each side (``--no-one-thread`` skips it): with other jobs on
the cores a two-thread torch call can take several times its quiet time, a one-thread call barely more.

Targets (ratio = theory time / torchsort time): at most 1/1.25 = 0.8 for soft_sort and soft_rank on
one vector at every n, at most 1/1.5 = 0.667 on the batch, at most 1/1.2 = 0.833 for value + VJP; and
at most 0.667 in every soft_rank cell (one vector at every n, value and value + VJP, and the batch),
summarised in the line under the table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import load_average, machine_info  # noqa: E402

from theory.isotonic import isotonic_regression  # noqa: E402
from theory.topk import soft_rank, soft_rank_with_jacobian, soft_sort, soft_sort_with_jacobian, topk_mask  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
REG = 1.0
TARGETS = {"soft_sort": 1 / 1.25, "soft_rank": 1 / 1.25, "batch": 1 / 1.5, "value+vjp": 1 / 1.2}
#: every soft_rank cell (value, value + VJP, one vector and batch)
RANK_TARGET = 1 / 1.5


def _time(fns, budget):
    """Interleaved repeats: one call of each function per round, until ``budget`` seconds are spent
    (at least 3 rounds); calls shorter than 2 ms are looped so that each timing spans about 2 ms.
    Returns the minimum time per call of each function."""
    loops = []
    for f in fns:  # warm-up (JIT cache load) and the loop count
        f()
        t0 = time.perf_counter()
        f()
        dt = time.perf_counter() - t0
        loops.append(max(1, int(2e-3 / max(dt, 1e-7))))
    best = [np.inf] * len(fns)
    start = time.perf_counter()
    rounds = 0
    while rounds < 3 or (time.perf_counter() - start < budget and rounds < 200):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(loops[i]):
                f()
            best[i] = min(best[i], (time.perf_counter() - t0) / loops[i])
        rounds += 1
    return best


def _agree(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def run(quick=False, torch_threads=None, sizes=None, batch=True, numba_threads=None):
    import numba
    import torch
    import torchsort
    from torchsort.ops import isotonic_l2_cpu

    # start Numba's threading layer first: with the OpenMP layer its start resets the OpenMP thread
    # count that torch reads (torch.get_num_threads() becomes Numba's count)
    soft_rank(np.zeros((4, 20000)))
    if torch_threads:
        torch.set_num_threads(torch_threads)
    if numba_threads:
        numba.set_num_threads(numba_threads)

    ns = [10**3, 10**4, 10**5] if quick else [10**3, 10**4, 10**5, 10**6]
    if sizes is not None:
        ns = list(sizes)
    budget = 0.5 if quick else 2.0
    rng = np.random.default_rng(0)
    rows = []

    def add(case, n, ours, theirs, target, agree=None):
        rows.append({"case": case, "n": n, "theory_s": ours, "other_s": theirs, "ratio": ours / theirs,
                     "target": target, "met": None if target is None else ours / theirs <= target,
                     "rel_diff": agree})

    shapes = [(1, n) for n in ns] + ([(256, 1000)] if batch else [])
    for shape in shapes:
        X = rng.standard_normal(shape)
        U = rng.standard_normal(shape)
        x = X[0] if shape[0] == 1 else X
        u = U[0] if shape[0] == 1 else U
        Xt = torch.from_numpy(X)
        Ut = torch.from_numpy(U)
        label = f"{shape[0]} x {shape[1]}" if shape[0] > 1 else f"{shape[1]:.0e}".replace("e+0", "e")
        for name, ours_f, ours_j, theirs_f in (("soft_sort", soft_sort, soft_sort_with_jacobian, torchsort.soft_sort),
                                                ("soft_rank", soft_rank, soft_rank_with_jacobian, torchsort.soft_rank)):
            agree = _agree(ours_f(x, REG, 2.0, False), theirs_f(Xt, "l2", REG).numpy().reshape(np.shape(x)))

            def f_ours():
                return ours_f(x, REG, 2.0, False)

            def f_theirs():
                return theirs_f(Xt, "l2", REG)

            floors = []
            if name == "soft_rank" and shape[0] == 1:  # the memory floors of the one-vector rank, same rounds
                y_floor = np.empty(shape[1])

                def floor_np():
                    order = np.argsort(x)
                    return x[order]

                def floor_stable():
                    order = np.argsort(x, kind="stable")
                    y_floor[order] = x[order]
                    return y_floor

                floors = [("floor: np.argsort(x) + gather x[order]", floor_np),
                          ("floor: stable np.argsort + gather + scatter y[order] = x[order]", floor_stable)]
            times = _time([f_ours, f_theirs] + [f for _, f in floors], budget)
            t_o, t_t = times[:2]
            add(f"{name}" + (" (batch)" if shape[0] > 1 else ""), label, t_o, t_t,
                TARGETS["batch"] if shape[0] > 1 else TARGETS[name], agree)
            for (what, _), t_f in zip(floors, times[2:]):
                add(what, label, t_f, t_t, None)

            def g_ours():
                y, jac = ours_j(x, REG, 2.0, False)
                return jac.vjp(u)

            def g_theirs():
                xt = Xt.clone().requires_grad_(True)
                y = theirs_f(xt, "l2", REG)
                y.backward(Ut)
                return xt.grad

            xt = Xt.clone().requires_grad_(True)
            theirs_f(xt, "l2", REG).backward(Ut)
            agree_g = _agree(g_ours(), xt.grad.numpy().reshape(np.shape(x)))
            t_o, t_t = _time([g_ours, g_theirs], budget)
            add(f"{name} value + VJP" + (" (batch)" if shape[0] > 1 else ""), label, t_o, t_t, TARGETS["value+vjp"],
                agree_g)
        if shape[0] == 1:
            y = X[0] - np.arange(shape[1], 0, -1.0)
            yt = torch.from_numpy(y[None].copy())
            agree = _agree(isotonic_regression(y, increasing=False)[0], isotonic_l2_cpu(yt).numpy()[0])
            t_o, t_t = _time([lambda: isotonic_regression(y, increasing=False), lambda: isotonic_l2_cpu(yt)], budget)
            add("isotonic (decreasing)", label, t_o, t_t, None, agree)
    if batch:
        X = rng.standard_normal((256, 1000))
        np.testing.assert_array_equal(topk_mask(X, 10, REG)[3], topk_mask(X[3], 10, REG))
        t_o, t_s = _time([lambda: topk_mask(X, 10, REG), lambda: np.sort(X, axis=-1)], budget)
        rows.append({"case": "topk_mask (batch) vs np.sort", "n": "256 x 1000", "theory_s": t_o, "other_s": t_s,
                     "ratio": t_o / t_s, "target": 1.5, "met": t_o / t_s <= 1.5, "rel_diff": None})
    info = {"machine": machine_info() if "machine_info" in globals() else {}, "load_average": load_average(),
            "torch_threads": torch.get_num_threads(), "numba_threads": _numba_threads(), "quick": quick}
    return rows, info


def _numba_threads():
    try:
        import numba
        return numba.get_num_threads()
    except Exception:  # pragma: no cover
        return None


def _fmt(t):
    return f"{t * 1e3:.3g} ms" if t >= 1e-3 else f"{t * 1e6:.3g} us"


def table(rows, info):
    lines = [f"Load average at the end: {info['load_average']}; torch threads {info['torch_threads']}, "
             f"Numba threads {info['numba_threads']}.", "",
             "| case | n | theory | torchsort (np.sort for topk_mask) | ratio theory/other | target | met "
             "| rel. diff |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        tgt = "" if r["target"] is None else f"<= {r['target']:.3g}"
        met = "" if r["met"] is None else ("yes" if r["met"] else "no")
        rd = "" if r["rel_diff"] is None else f"{r['rel_diff']:.1e}"
        lines.append(f"| {r['case']} | {r['n']} | {_fmt(r['theory_s'])} | {_fmt(r['other_s'])} | {r['ratio']:.2f} | "
                     f"{tgt} | {met} | {rd} |")
    rank = [r for r in rows if r["case"].startswith("soft_rank")]
    if rank:
        worst = max(rank, key=lambda r: r["ratio"])
        lines += ["", f"Every soft_rank cell at most {RANK_TARGET:.3g} of torchsort's time: "
                  f"{'yes' if worst['ratio'] <= RANK_TARGET else 'no'} (largest ratio {worst['ratio']:.2f}, "
                  f"{worst['case']} at n = {worst['n']}; {len(rank)} cells)."]
    return "\n".join(lines)


def plot(rows, info, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.4, 4.2))
    for case, marker in (("soft_sort", "o"), ("soft_rank", "s"), ("soft_sort value + VJP", "^"),
                         ("soft_rank value + VJP", "v"), ("isotonic (decreasing)", "x")):
        pts = [(float(r["n"]), r["ratio"]) for r in rows if r["case"] == case]
        if pts:
            ax.plot(*zip(*pts), marker=marker, label=case)
    ax.axhline(1.0, color="grey", lw=0.8, ls=":", label="equal time")
    ax.axhline(TARGETS["soft_sort"], color="k", lw=0.8, ls="--", label="target soft_sort/rank (0.8)")
    ax.axhline(TARGETS["value+vjp"], color="k", lw=0.8, ls="-.", label="target value + VJP (0.833)")
    ax.set_xscale("log")
    ax.set_xlabel("n (one vector)")
    ax.set_ylabel("time theory / time torchsort")
    load = info.get("load_average")
    ax.set_title("theory.topk against torchsort 0.1.10 (float64, same process)\n"
                 f"torch threads {info.get('torch_threads')}, load average {load}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n up to 1e5, shorter timing budget")
    ap.add_argument("--torch-threads", type=int, default=None,
                    help="torch intra-op threads (default: torch's own default); the files get a suffix")
    ap.add_argument("--n", type=lambda v: [int(float(a)) for a in v.split(",")], default=None,
                    help="comma-separated lengths of the one-vector cases (e.g. 1e6 or 1e3,1e6; default all); "
                         "the files get a suffix")
    ap.add_argument("--no-batch", action="store_true", help="skip the 256 x 1000 batch and topk_mask cases")
    ap.add_argument("--no-one-thread", action="store_true",
                    help="skip the second table, every case again with one thread on both sides")
    args = ap.parse_args(argv)
    try:
        import torchsort  # noqa: F401
    except ImportError:
        sys.exit("bench_softsort needs torchsort 0.1.10, built against the installed torch: "
                 "pip install --no-build-isolation torchsort==0.1.10 (with nvcc off PATH on a machine without "
                 "a GPU; `make venv` does it).")
    rows, info = run(args.quick, args.torch_threads, args.n, not args.no_batch)
    text = table(rows, info)
    if not args.no_one_thread and (info["torch_threads"] != 1 or info["numba_threads"] != 1):
        rows1, info1 = run(args.quick, 1, args.n, not args.no_batch, numba_threads=1)
        text += ("\n\nThe same cases with one thread on both sides (torch.set_num_threads(1), "
                 "numba.set_num_threads(1)): other jobs on the cores slow a two-thread torch call far more "
                 "than a one-thread one.\n\n" + table(rows1, info1))
    print(text)
    OUT.mkdir(parents=True, exist_ok=True)
    tag = f"_torch{args.torch_threads}" if args.torch_threads else ""
    if args.n is not None or args.no_batch:  # a subset: never overwrite the full run's files
        tag += "_subset"
    (OUT / f"bench_softsort{tag}.md").write_text(text + "\n")
    (OUT / f"bench_softsort{tag}.json").write_text(json.dumps({"rows": rows, "info": info}, indent=1, default=str))
    plot(rows, info, OUT / f"bench_softsort{tag}.png")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
