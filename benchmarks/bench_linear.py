"""Speed of ``theory.linear``: the deep linear ResNet's gradient and its rescaled gradient flow.

Gradient cost against depth (``bench_gradient_scaling``)
    Median time of the public :func:`theory.linear.gradient` (prefix and suffix products, O(N d^3))
    at fixed d on a geometric ladder of depths N. The exponent of time against N is the
    least-squares slope on log-log axes with a percentile-bootstrap interval, from
    :func:`theory.rates.fit_rate` on the medians. Target: 1.0 +- 0.1. The anchor of the ratios is
    the smallest N of the same run: ``per layer / anchor`` is (time / N) over the anchor's time / N,
    1 for perfectly linear cost. The public call includes input validation (a few NumPy calls on
    Sigma and B, a finiteness check of theta, three (N, d, d) allocations): a fixed cost that
    flattens the small-N end of the ladder. Beside it, the same arithmetic through the private
    kernel ``theory.linear._kernels.gradient`` with buffers allocated once: the difference is the
    public call's validation and its three fresh (N, d, d) arrays, whose pages the kernel touches
    for the first time (minor page faults once an array outgrows the allocator's reuse threshold).

Prefix/suffix products against the naive kernel (``bench_naive``)
    At one (N, d), the public gradient against the private kernel
    ``theory.linear._kernels.gradient_per_layer_products``, which recomputes the products before and
    after each layer: O(N^2 d^3). Both gradients are compared first (max |difference| over max
    |naive gradient|); the naive kernel is timed with few rounds because one call takes seconds.
    Reported ratio: naive median / public median. Target: >= 50.

Full flow (``bench_flow``)
    :func:`theory.linear.gradient_flow` (DOP853, rtol 1e-10, atol 1e-12) from zero weights with
    Sigma = I and B = expm(b G / ||G||_F) for a seeded Gaussian G (||log B||_F = b), returned at
    T equally spaced times on [0, t_end], ``full_output=True`` (the diagnostics at the T times are
    included in the time). Reported: time, right-hand-side evaluations (nfev), final and initial
    loss, and flow time / (nfev x public gradient median at the same N), the cost of the integrator
    and the diagnostics over the bare gradient evaluations. Target: finishes in seconds, read as a
    median under ``limit_s`` (10 s).

All random draws come from ``numpy.random.default_rng(seed)``. Public names only, except the
naive kernel, which is private by design (a reference, not an API).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from _harness import cold_first_call, time_call
from theory.linear import gradient, gradient_flow, initial_weights
from theory.linear import _kernels
from theory.rates import fit_rate

__all__ = ["bench_compile", "bench_flow", "bench_gradient_scaling", "bench_naive", "make_problem", "target_B"]

FAMILY = "linear"


def target_B(d, size=0.6, seed=0):
    """B = expm(size G / ||G||_F) for a Gaussian G: a target of moderate size, ||log B||_F = size."""
    G = np.random.default_rng(seed).standard_normal((d, d))
    return scipy.linalg.expm(size * G / np.linalg.norm(G))


def make_problem(N, d, seed=0):
    """theta with i.i.d. layers of Frobenius norm 1/4 (``initial_weights(..., "iid")``), a random
    symmetric positive definite Sigma = I + W W^T / d, and B from :func:`target_B`. The timing does
    not depend on the values; a non-identity Sigma makes the naive-kernel comparison a real check."""
    rng = np.random.default_rng(seed)
    theta = initial_weights(N, d, "iid", rng)
    W = rng.standard_normal((d, d))
    Sigma = np.eye(d) + W @ W.T / d
    return theta, Sigma, target_B(d, seed=seed + 1)


def minor_faults(fn, calls=5):
    """Minor page faults per call of ``fn()`` (getrusage over ``calls`` calls), or None off Unix.

    A fresh array whose pages the process has not used before costs one fault per page (or per
    group of pages) at first touch; glibc serves large arrays with fresh mappings or trims the heap
    after freeing them depending on its history, so the count shows when a timing includes it.
    """
    try:
        import resource
    except ImportError:
        return None
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def _timing_kw(timing):
    return {k: timing[k] for k in ("warmup", "min_time", "max_rounds", "min_rounds") if k in timing}


def bench_gradient_scaling(*, d=8, Ns=(256, 512, 1024, 2048, 4096, 8192, 16384), seed=0, target=1.0,
                           tolerance=0.1, timing=None):
    """Median time of theory.linear.gradient on a ladder of N; log-log exponent with a bootstrap CI."""
    kw = _timing_kw(timing or {})
    runs = []
    # settle the machine on the workload first: the first ladder point was otherwise measured
    # while the CPU was still leaving the compile phase (seen as a 1.8x slower first point)
    theta, Sigma, B = make_problem(Ns[0], d, seed)
    time_call(lambda: gradient(theta, Sigma, B), **kw)
    for N in Ns:
        theta, Sigma, B = make_problem(N, d, seed)
        t = time_call(lambda: gradient(theta, Sigma, B), **kw)
        bufs = [np.empty((N, d, d)) for _ in range(2)] + [np.empty((d, d)) for _ in range(5)]
        tk = time_call(lambda: _kernels.gradient(theta, Sigma, B, *bufs), **kw)
        runs.append({"N": int(N), "timing": t.as_dict(), "kernel_timing": tk.as_dict(),
                     "page_faults_per_call": minor_faults(lambda: gradient(theta, Sigma, B)),
                     "kernel_page_faults_per_call": minor_faults(lambda: _kernels.gradient(theta, Sigma, B, *bufs))})
        del theta, bufs
    grid = np.asarray(Ns, dtype=float)
    fit = fit_rate(grid, np.array([r["timing"]["median"] for r in runs]), seed=seed)
    fit_k = fit_rate(grid, np.array([r["kernel_timing"]["median"] for r in runs]), seed=seed)
    anchor = runs[0]["timing"]["median"] / runs[0]["N"]
    for r in runs:
        r["per_layer"] = r["timing"]["median"] / r["N"]
        r["per_layer_ratio"] = r["per_layer"] / anchor
        r["kernel_per_layer"] = r["kernel_timing"]["median"] / r["N"]
    lo, hi = (float(c) for c in fit.ci)
    return {
        "name": f"linear gradient cost vs depth (d = {d})",
        "family": FAMILY,
        "kind": "scaling",
        "params": {"d": d, "N": [int(N) for N in Ns], "seed": seed},
        "runs": runs,
        "slope": float(fit.slope),
        "slope_ci": [lo, hi],
        "slope_ci_level": float(fit.level),
        "r2": float(fit.r2),
        "kernel_slope": float(fit_k.slope),
        "kernel_slope_ci": [float(c) for c in fit_k.ci],
        "kernel_definition": "theory.linear._kernels.gradient with preallocated buffers (no validation, "
                             "no allocation)",
        "target": target,
        "tolerance": tolerance,
        "target_met": bool(abs(fit.slope - target) <= tolerance),
        "ci_within_target": bool(target - tolerance <= lo and hi <= target + tolerance),
        "anchor": f"N = {runs[0]['N']} (smallest N): per-layer time ratios are against it",
    }


def bench_naive(*, d=8, N=4096, seed=0, target=50.0, rounds=3, timing=None):
    """Public gradient against the O(N^2 d^3) per-layer kernel at one (N, d); checks they agree."""
    theta, Sigma, B = make_problem(N, d, seed)
    grad_naive = np.empty((N, d, d))
    A, P, Q, R = (np.empty((d, d)) for _ in range(4))

    def naive():
        _kernels.gradient_per_layer_products(theta, Sigma, B, grad_naive, A, P, Q, R)
        return grad_naive

    naive()  # JIT compilation or cache load; the harness times its own first call again below
    grad_fast = gradient(theta, Sigma, B)
    scale = float(np.max(np.abs(grad_naive)))
    max_rel_diff = float(np.max(np.abs(grad_fast - grad_naive)) / scale)
    if not max_rel_diff <= 1e-10:
        raise AssertionError(f"public and naive gradients disagree: max rel diff = {max_rel_diff:.3e}")
    t_fast = time_call(lambda: gradient(theta, Sigma, B), **_timing_kw(timing or {}))
    faults = minor_faults(lambda: gradient(theta, Sigma, B))
    t_naive = time_call(naive, warmup=0, min_time=0.0, min_rounds=rounds, max_rounds=rounds)
    ratio = t_naive.median / t_fast.median
    return {
        "name": f"linear gradient: prefix/suffix products vs per-layer products (d = {d}, N = {N})",
        "family": FAMILY,
        "kind": "speed",
        "params": {"d": d, "N": N, "seed": seed, "naive_rounds": rounds},
        "theory": t_fast.as_dict(),
        "naive": t_naive.as_dict(),
        "ratio": ratio,
        "ratio_range": [t_naive.q1 / t_fast.q3, t_naive.q3 / t_fast.q1],
        "ratio_definition": "naive median / theory median",
        "theory_page_faults_per_call": faults,
        "target": target,
        "goal": None,
        "target_met": bool(ratio >= target),
        "goal_met": None,
        "max_rel_diff": max_rel_diff,
        "max_rel_diff_definition": "max |public - naive| / max |naive|",
    }


def bench_flow(*, N=1024, d=8, t_end=20.0, n_times=21, B_size=0.6, seed=0, rounds=2, limit_s=10.0):
    """Time gradient_flow from zero weights (Sigma = I, B = expm(B_size G/||G||_F)); nfev, losses."""
    Sigma = np.eye(d)
    B = target_B(d, B_size, seed)
    theta0 = np.zeros((N, d, d))
    times = np.linspace(0.0, t_end, n_times)
    out = {}

    def run():
        out["theta_t"], out["info"] = gradient_flow(theta0, Sigma, B, times, full_output=True)

    t_flow = time_call(run, warmup=0, min_time=0.0, min_rounds=rounds, max_rounds=rounds)
    info = out.pop("info")
    out.clear()
    # The anchor: one public gradient at the same N and d, measured in the same run.
    t_grad = time_call(lambda: gradient(theta0, Sigma, B), warmup=2, min_time=0.2, min_rounds=5)
    per_eval = t_flow.median / info.nfev
    return {
        "name": f"linear gradient flow (DOP853, d = {d}, N = {N}, t in [0, {t_end:g}])",
        "family": FAMILY,
        "kind": "flow",
        "params": {"N": N, "d": d, "t_end": t_end, "n_times": n_times, "seed": seed,
                   "Sigma": "identity", "B": f"expm({B_size:g} G / ||G||_F), G ~ Gaussian (d, d), seed {seed}",
                   "B_fro": float(np.linalg.norm(B)), "theta0": "zeros", "rtol": 1e-10, "atol": 1e-12,
                   "limit_s": limit_s},
        "theory": t_flow.as_dict(),
        "gradient": t_grad.as_dict(),
        "nfev": int(info.nfev),
        "loss_initial": float(info.loss[0]),
        "loss_final": float(info.loss[-1]),
        "per_evaluation": per_eval,
        "overhead_ratio": per_eval / t_grad.median,
        "overhead_ratio_definition": "flow median / (nfev x public gradient median at the same N, d)",
        "target": "finishes in seconds: median below limit_s",
        "target_met": bool(t_flow.median < limit_s),
    }


_COLD = """
import time
import numpy as np
from theory.linear import gradient, gradient_flow
theta = np.random.default_rng(0).standard_normal((8, 4, 4)) / 8.0
t0 = time.perf_counter()
{call}
print(time.perf_counter() - t0)
"""


def bench_compile(names=None):
    """First call of each entry point in a fresh interpreter with an empty Numba cache (JIT compile)."""
    cases = {
        "linear gradient": "gradient(theta, np.eye(4), np.eye(4))",
        "linear gradient_flow": "gradient_flow(theta, np.eye(4), np.eye(4), [0.0, 1.0])",
    }
    names = list(cases) if names is None else list(names)
    return {"name": "cold JIT compile, theory.linear (first call, empty Numba cache, fresh interpreter)",
            "family": FAMILY, "kind": "compile",
            "seconds": {name: cold_first_call(_COLD.format(call=cases[name])) for name in names}}
