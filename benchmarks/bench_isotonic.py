"""Speed of ``theory.isotonic.isotonic_regression`` (p = 2, weighted PAV) against SciPy.

For n = 10^3 .. 10^6, in the same run: the public :func:`theory.isotonic.isotonic_regression` and
``scipy.optimize.isotonic_regression`` (the anchor) on the same input, y_i = trend + noise
(``linspace(0, 3, n) + N(0, 1)``: many pooled blocks of varied length), unweighted and with weights
``U(0.5, 2)``, cycling through several such inputs (below). Before timing, x and blocks of both are
compared on every input: they must be equal bit for bit.
Reported: the first call of ours (JIT compile or cache load), medians with IQR, and
ratio = SciPy median / ours (> 1: ours faster). Target at n = 10^6: ratio >= 1 (goal 1.5).
Extra anchor (the ``bench`` extra): scikit-learn's ``IsotonicRegression`` (``fit_transform`` on
x = 0..n-1, ``increasing=True``, the same weights), timed and compared (fit equal to ours within
1e-12 relative; its blocks are not exposed), on the first input only; skipped with a note when
scikit-learn is not installed.
All draws come from ``numpy.random.default_rng(seed)``. Public names only.

Fairness of the measurement (both sides get the same conditions, whatever ran before):

* Allocator state. Both functions allocate n-sized float64 buffers per call (SciPy: a copy of y, the
  weights or ones, the block array; ours: x and two stacks). glibc serves such buffers either from
  fresh ``mmap`` pages, which are zero-filled on first touch at every call (about 1700 minor page
  faults, 2 ms, per SciPy call at n = 10^6), or from the heap, reused without faults, and which of
  the two depends on its dynamic mmap threshold, raised by the largest block freed so far. Before
  this fix the state therefore depended on history: the first timed case at each n (unweighted)
  paid the faults, a case timed after scikit-learn's large buffers had been freed did not, which
  made the weighted case look faster than the unweighted one. :func:`_settle_allocator` now frees
  one block larger than all the buffers of the next calls before each case, so that both sides run
  in the steady state of a long-lived process (heap reuse, no first-touch faults); the minor page
  faults per call of each side are measured (``getrusage``) and printed to show it.
* Order and drift. Each side is timed ``REPEATS`` times, alternately (ours, SciPy, SciPy, ours,
  ...), and the rounds are pooled; the ratio is also computed per repeat and its range reported
  ("ratio spread"), so that a load change on the shared machine shows instead of biasing one side.
* Branch predictor. PAV's branches depend on the data; timing rounds that repeat one input let the
  CPU's branch predictor learn that input's branch sequence, which made the calls at n = 10^3 and
  10^4 2 to 4 times faster than on unseen data (kernel alone, n = 10^4: 50 us on one repeated
  input, 124 us when cycling through 16 inputs) and favoured whichever code the predictor happened
  to learn better. Each call now takes the next of ``_pool_size(n)`` inputs drawn with seeds
  seed, seed + 1, ... (16 up to n = 2.5 10^5, 4 at n = 10^6), the same sequence for both sides;
  x and blocks are compared with SciPy's on every one of them.
* Input conversion: both receive the same float64 C-contiguous arrays (no conversion on either side
  beyond SciPy's own copies, which are part of its call).
"""

from __future__ import annotations

import itertools
import resource

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
REPEATS = 3  # alternating timings of each side per case
FULL = {"ns": [10**3, 10**4, 10**5, 10**6], "target": 1.0, "goal": 1.5}
QUICK = {"ns": [10**3, 10**4], "target": 1.0, "goal": 1.5}


def make_problem(n, seed=0):
    rng = np.random.default_rng(seed)
    y = np.linspace(0.0, 3.0, n) + rng.standard_normal(n)
    w = rng.uniform(0.5, 2.0, n)
    return y, w


def _settle_allocator(n):
    """Free one block larger than every buffer of an n-sized call (see the module docstring): glibc's
    dynamic mmap threshold then lies above those buffers, so both sides reuse heap memory."""
    block = np.empty(4 * (n + 1))
    block.fill(0.0)
    del block


def _pool_size(n):
    """Number of distinct inputs cycled through at size n (see the module docstring): 16, fewer when
    16 inputs would exceed 32 MB (4 at n = 10^6)."""
    return max(2, min(16, (4 * 10**6) // n))


def _cycling(fn, problems, weighted):
    """A callable that applies ``fn(y, w)`` to the next input of ``problems`` at each call."""
    args = [(yk, wk if weighted else None) for yk, wk in problems]
    it = itertools.cycle(args)
    return lambda: fn(*next(it))


def _faults_per_call(fn, calls=5):
    """Minor page faults per call of ``fn`` (after one untimed call)."""
    fn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def _alternating(ours_fn, anchor_fn, repeats, timing):
    """Time both sides ``repeats`` times each in ABBA order; pool the rounds, keep per-repeat ratios."""
    ours, anchor = [], []
    for k in range(repeats):
        pair = ((ours, ours_fn), (anchor, anchor_fn)) if k % 2 == 0 else ((anchor, anchor_fn), (ours, ours_fn))
        for out, fn in pair:
            out.append(time_call(fn, **timing))
    return ours, anchor


def _pooled(timings):
    """One timing dict from several runs of the same call: first call of the first run, pooled rounds."""
    times = np.concatenate([t.times for t in timings])
    q1, med, q3 = (float(v) for v in np.percentile(times, [25, 50, 75]))
    return {"first_call": timings[0].first_call, "median": med, "q1": q1, "q3": q3, "iqr": q3 - q1,
            "min": float(times.min()), "mean": float(times.mean()), "rounds": int(times.size),
            "repeats": len(timings), "repeat_medians": [t.median for t in timings]}


def bench_vs_scipy(*, ns, target, goal, seed=0, repeats=REPEATS, **timing):
    runs = []
    for n in ns:
        problems = [make_problem(n, seed + k) for k in range(_pool_size(n))]
        y, w0 = problems[0]
        for weighted in (False, True):
            w = w0 if weighted else None
            x, blocks = isotonic_regression(y, w)
            identical = True
            for yk, wk in problems:
                wk = wk if weighted else None
                xk, bk = isotonic_regression(yk, wk)
                ref = scipy_isotonic(yk, weights=wk)
                identical &= bool(np.array_equal(xk, ref.x) and np.array_equal(bk, ref.blocks))
            ours_fn = _cycling(lambda yk, wk: isotonic_regression(yk, wk), problems, weighted)
            anchor_fn = _cycling(lambda yk, wk: scipy_isotonic(yk, weights=wk), problems, weighted)
            _settle_allocator(n)
            faults = {"theory": _faults_per_call(ours_fn), "scipy": _faults_per_call(anchor_fn)}
            ours_runs, anchor_runs = _alternating(ours_fn, anchor_fn, repeats, timing)
            ours, anchor = _pooled(ours_runs), _pooled(anchor_runs)
            per_repeat = [a.median / o.median for o, a in zip(ours_runs, anchor_runs)]
            run_ = {"n": n, "weighted": weighted, "blocks": int(blocks.size - 1), "identical": identical,
                    "theory": ours, "scipy": anchor, "faults_per_call": faults,
                    "ratio": anchor["median"] / ours["median"],
                    "ratio_range": [anchor["q1"] / ours["q3"], anchor["q3"] / ours["q1"]],
                    "ratio_spread": [min(per_repeat), max(per_repeat)], "sklearn": None}
            if _SkIsotonic is not None:
                t = np.arange(n, dtype=np.float64)
                sk = lambda: _SkIsotonic(increasing=True).fit_transform(t, y, sample_weight=w)  # noqa: E731
                fit = sk()
                agree = float(np.max(np.abs(fit - x)) / max(1.0, float(np.max(np.abs(x)))))
                st = time_call(sk, **timing)
                run_["sklearn"] = {"timing": st.as_dict(), "ratio": st.median / ours["median"], "max_rel_diff": agree,
                                   "agrees": agree <= 1e-12}
            runs.append(run_)
    largest = [r for r in runs if r["n"] == max(ns)]
    worst = min(r["ratio"] for r in largest)
    return {"family": FAMILY, "name": "isotonic_vs_scipy", "params": {"ns": ns, "seed": seed, "repeats": repeats},
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
                     f"{run['ratio_spread'][0]:.2f}-{run['ratio_spread'][1]:.2f}",
                     f"{run['faults_per_call']['theory']:.0f} / {run['faults_per_call']['scipy']:.0f}",
                     "yes" if run["identical"] else "NO"])
    print(format_table(
        ["n", "weights", "blocks (1st input)", "theory 1st call", "theory median (IQR, rounds)",
         "scipy median (IQR, rounds)", "scipy/theory", "ratio IQR span", "ratio spread",
         "faults/call (theory / scipy)", "x, blocks identical"],
        rows, title="Isotonic regression (p = 2): theory.isotonic.isotonic_regression vs "
                    "scipy.optimize.isotonic_regression",
        align=[">", "<", ">", ">", ">", ">", ">", ">", ">", ">", "<"]))
    print("  y = linspace(0, 3, n) + N(0, 1); weights U(0.5, 2). 'ratio IQR span' = scipy q1 / theory q3 .. "
          "scipy q3 / theory q1.")
    print(f"  Each side timed {r['params']['repeats']} times alternately (ABBA), rounds pooled; 'ratio spread' = "
          "min .. max of the per-repeat median ratios. Allocator settled before each case (both sides reuse heap")
    print("  memory: minor page faults per call shown).")
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
