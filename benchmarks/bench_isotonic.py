"""Speed of ``theory.isotonic.isotonic_regression`` (p = 2, weighted PAV) against SciPy.

For n = 10^3 .. 10^6, in the same run: the public :func:`theory.isotonic.isotonic_regression` and
``scipy.optimize.isotonic_regression`` (the anchor) on the same input, y_i = trend + noise
(``linspace(0, 3, n) + N(0, 1)``: many pooled blocks of varied length), unweighted and with weights
``U(0.5, 2)``. Before timing, x and blocks of both are compared: they must be equal bit for bit.
Reported: the first call of ours (JIT compile or cache load), medians with IQR, and
ratio = SciPy median / ours (> 1: ours faster). Target at n = 10^6: ratio >= 1 (goal 1.5).
Extra anchor (the ``bench`` extra): scikit-learn's ``IsotonicRegression`` (``fit_transform`` on
x = 0..n-1, ``increasing=True``, the same weights), timed and compared (fit equal to ours within
1e-12 relative; its blocks are not exposed); skipped with a note when scikit-learn is not installed.
All draws come from ``numpy.random.default_rng(seed)``. Public names only.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import isotonic_regression as scipy_isotonic

from _harness import fmt_time, format_table, time_call
from theory.isotonic import isotonic_regression

try:  # extra anchor of the `bench` extra; the benchmark runs without it
    from sklearn.isotonic import IsotonicRegression as _SkIsotonic
except ImportError:  # pragma: no cover - depends on the environment
    _SkIsotonic = None

__all__ = ["bench_vs_scipy", "run"]

FAMILY = "isotonic"
FULL = {"ns": [10**3, 10**4, 10**5, 10**6], "target": 1.0, "goal": 1.5}
QUICK = {"ns": [10**3, 10**4], "target": 1.0, "goal": 1.5}


def make_problem(n, seed=0):
    rng = np.random.default_rng(seed)
    y = np.linspace(0.0, 3.0, n) + rng.standard_normal(n)
    w = rng.uniform(0.5, 2.0, n)
    return y, w


def bench_vs_scipy(*, ns, target, goal, seed=0, **timing):
    runs = []
    for n in ns:
        y, w0 = make_problem(n, seed)
        for weighted in (False, True):
            w = w0 if weighted else None
            x, blocks = isotonic_regression(y, w)
            ref = scipy_isotonic(y, weights=w)
            identical = bool(np.array_equal(x, ref.x) and np.array_equal(blocks, ref.blocks))
            ours = time_call(lambda: isotonic_regression(y, w), **timing)
            anchor = time_call(lambda: scipy_isotonic(y, weights=w), **timing)
            run_ = {"n": n, "weighted": weighted, "blocks": int(blocks.size - 1), "identical": identical,
                    "theory": ours.as_dict(), "scipy": anchor.as_dict(),
                    "ratio": anchor.median / ours.median,
                    "ratio_range": [anchor.q1 / ours.q3, anchor.q3 / ours.q1], "sklearn": None}
            if _SkIsotonic is not None:
                t = np.arange(n, dtype=np.float64)
                sk = lambda: _SkIsotonic(increasing=True).fit_transform(t, y, sample_weight=w)  # noqa: E731
                fit = sk()
                agree = float(np.max(np.abs(fit - x)) / max(1.0, float(np.max(np.abs(x)))))
                st = time_call(sk, **timing)
                run_["sklearn"] = {"timing": st.as_dict(), "ratio": st.median / ours.median, "max_rel_diff": agree,
                                   "agrees": agree <= 1e-12}
            runs.append(run_)
    largest = [r for r in runs if r["n"] == max(ns)]
    worst = min(r["ratio"] for r in largest)
    return {"family": FAMILY, "name": "isotonic_vs_scipy", "params": {"ns": ns, "seed": seed},
            "runs": runs, "target": target, "goal": goal, "ratio_at_largest": worst,
            "target_met": worst >= target, "goal_met": worst >= goal,
            "all_identical": all(r["identical"] for r in runs),
            "sklearn": None if _SkIsotonic is None else __import__("sklearn").__version__}


def print_vs_scipy(r):
    rows = []
    for run in r["runs"]:
        t, s = run["theory"], run["scipy"]
        rows.append([str(run["n"]), "yes" if run["weighted"] else "no", str(run["blocks"]),
                     fmt_time(t["first_call"]),
                     f"{fmt_time(t['median'])} ({fmt_time(t['iqr'])}, {t['rounds']})",
                     f"{fmt_time(s['median'])} ({fmt_time(s['iqr'])}, {s['rounds']})",
                     f"{run['ratio']:.2f}x", f"{run['ratio_range'][0]:.2f}-{run['ratio_range'][1]:.2f}",
                     "yes" if run["identical"] else "NO"])
    print(format_table(
        ["n", "weights", "blocks", "theory 1st call", "theory median (IQR, rounds)",
         "scipy median (IQR, rounds)", "scipy/theory", "ratio IQR span", "x, blocks identical"],
        rows, title="Isotonic regression (p = 2): theory.isotonic.isotonic_regression vs "
                    "scipy.optimize.isotonic_regression",
        align=[">", "<", ">", ">", ">", ">", ">", ">", "<"]))
    print("  y = linspace(0, 3, n) + N(0, 1); weights U(0.5, 2). 'ratio IQR span' = scipy q1 / theory q3 .. "
          "scipy q3 / theory q1.")
    print(f"  Worst ratio at n = {max(r['params']['ns'])}: {r['ratio_at_largest']:.2f}x; target >= "
          f"{r['target']:g}: {'met' if r['target_met'] else 'NOT met'}; goal >= {r['goal']:g}: "
          f"{'met' if r['goal_met'] else 'NOT met'}. Outputs identical everywhere: "
          f"{'yes' if r['all_identical'] else 'NO'}.")
    print()
    if r.get("sklearn") is None:
        print("  scikit-learn not installed: its IsotonicRegression anchor is skipped (pip install -e .[bench]).")
        print()
        return
    rows = [[str(run["n"]), "yes" if run["weighted"] else "no",
             f"{fmt_time(run['theory']['median'])}", f"{fmt_time(run['sklearn']['timing']['median'])} "
             f"({fmt_time(run['sklearn']['timing']['iqr'])}, {run['sklearn']['timing']['rounds']})",
             f"{run['sklearn']['ratio']:.2f}x", f"{run['sklearn']['max_rel_diff']:.1e}"] for run in r["runs"]]
    print(format_table(["n", "weights", "theory median", "sklearn median (IQR, rounds)", "sklearn/theory",
                        "max |diff| (rel.)"], rows,
                       title=f"Extra anchor: sklearn.isotonic.IsotonicRegression {r['sklearn']} (fit_transform, "
                             "x = 0..n-1)", align=[">", "<", ">", ">", ">", ">"]))
    print()


def run(*, quick=False, timing=None):
    """Every theory.isotonic benchmark of a configuration; prints the tables, returns the results."""
    cfg = QUICK if quick else FULL
    result = bench_vs_scipy(**cfg, **(timing or {}))
    print_vs_scipy(result)
    return [result]
