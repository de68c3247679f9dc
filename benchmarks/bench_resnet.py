"""Speed and memory of ``theory.resnet`` against plain NumPy doing the same arithmetic.

Forward speed (``bench_forward``)
    One trajectory x_{n+1} = x_n + tanh(theta_n x_n)/N (Euler; Heun for completeness) through the
    public :func:`theory.resnet.forward`, against a NumPy loop over the layers that stores the
    trajectory into a preallocated array: ``x = x + np.tanh(theta[n] @ x) / N`` for one input,
    ``X = X + np.tanh(X @ theta[n].T) / N`` for a batch. Both get the same float64 C-contiguous
    arrays; the trajectories are compared before anything is timed (a benchmark of two different
    computations would be meaningless). Reported ratio: NumPy median / theory median.

Memory (``bench_memory``)
    Peak memory traced by tracemalloc during :func:`theory.resnet.gradient` with
    ``method="adjoint"`` and ``method="backprop"`` (tanh residual, Euler, one input), against N.
    theta (N, d, d) and grad_theta (same shape) necessarily scale with N; the input theta exists
    before the call and is not traced, grad_theta is an output and is. Three figures per call:

    * ``peak``: the raw traced peak;
    * ``working = peak - grad_theta bytes`` (8 N d^2): the working memory as the brief defines it;
    * ``beyond_validation = working - peak(final_state)``: the peak of
      :func:`theory.resnet.final_state` on the same inputs (same input validation, memory-free
      forward pass, no gradient) is subtracted as an empirical baseline. In this version of the
      package validation copies theta (8 N d^2 bytes) and builds an ``np.isfinite`` mask of it
      (N d^2 bytes), both O(N); this column removes exactly that and shows what the gradient
      itself adds: a constant for the adjoint, the (N + 1) d-float trajectory for backprop.

    Log-log slopes against N are fitted for each column; the plot goes to ``out/resnet_memory.png``.

All random draws come from ``numpy.random.default_rng(seed)``. Public names only (``theory.resnet``).
"""

from __future__ import annotations

import os

if __name__ == "__main__":
    # Run as a script (the size grid): BLAS on one thread for both sides unless the caller says
    # otherwise. On a small machine shared with other jobs, OpenBLAS's busy-waiting threads make
    # every BLAS-bound time (NumPy's and the kernels') several times slower and erratic.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from _harness import cold_first_call, loglog_slope, peak_memory, time_call  # noqa: E402
from theory.resnet import final_state, forward, gradient  # noqa: E402

__all__ = ["bench_compile", "bench_forward", "bench_memory", "make_problem", "numpy_forward", "plot_memory"]

F8 = 8  # bytes per float64


def make_problem(d, N, B=None, scheme="euler", seed=0):
    """x0 of shape (d,) or (B, d) with unit-variance entries and theta with N (+1 for Heun) slices
    of entries N(0, 1/d), so that theta_n x has O(1) entries and tanh works in its curved range."""
    rng = np.random.default_rng(seed)
    K = N + (1 if scheme == "heun" else 0)
    theta = rng.standard_normal((K, d, d)) / np.sqrt(d)
    x0 = rng.standard_normal(d if B is None else (B, d))
    return x0, theta


def numpy_forward(x0, theta, scheme="euler"):
    """The anchor: the same tanh residual network as a plain NumPy loop over the layers."""
    K = theta.shape[0]
    N = K - (1 if scheme == "heun" else 0)
    traj = np.empty((N + 1,) + x0.shape)
    x = x0.copy()
    traj[0] = x
    single = x0.ndim == 1
    if scheme == "euler":
        if single:
            for n in range(N):
                x = x + np.tanh(theta[n] @ x) / N
                traj[n + 1] = x
        else:
            for n in range(N):
                x = x + np.tanh(x @ theta[n].T) / N
                traj[n + 1] = x
    elif scheme == "heun":  # Eq. (8): y = x + f(x, th_n)/N; x' = x + (f(x, th_n) + f(y, th_{n+1}))/(2N)
        if single:
            for n in range(N):
                f1 = np.tanh(theta[n] @ x)
                y = x + f1 / N
                x = x + (f1 + np.tanh(theta[n + 1] @ y)) / (2 * N)
                traj[n + 1] = x
        else:
            for n in range(N):
                f1 = np.tanh(x @ theta[n].T)
                y = x + f1 / N
                x = x + (f1 + np.tanh(y @ theta[n + 1].T)) / (2 * N)
                traj[n + 1] = x
    else:
        raise ValueError(f"unknown scheme {scheme!r}")
    return traj


def bench_forward(*, d=16, N=10_000, B=None, scheme="euler", seed=0, target=None, goal=None,
                  warmup=2, min_time=0.5, max_rounds=200, min_rounds=5):
    """Time theory.resnet.forward against :func:`numpy_forward`; returns a dict of results."""
    x0, theta = make_problem(d, N, B, scheme, seed)
    ours = forward(x0, theta, "tanh", scheme)
    ref = numpy_forward(x0, theta, scheme)
    max_abs_diff = float(np.max(np.abs(ours - ref)))
    # The two loops differ only in summation order and x/N versus x*(1/N): rounding-level agreement.
    if not max_abs_diff <= 1e-10 * max(1.0, float(np.max(np.abs(ref)))):
        raise AssertionError(f"theory and NumPy trajectories disagree: max |diff| = {max_abs_diff:.3e}")
    kw = dict(warmup=warmup, min_time=min_time, max_rounds=max_rounds, min_rounds=min_rounds)
    t_theory = time_call(lambda: forward(x0, theta, "tanh", scheme), **kw)
    t_numpy = time_call(lambda: numpy_forward(x0, theta, scheme), **kw)
    ratio = t_numpy.median / t_theory.median
    # A conservative spread of the ratio: slow quartile of one against fast quartile of the other.
    ratio_range = [t_numpy.q1 / t_theory.q3, t_numpy.q3 / t_theory.q1]
    batch = "single input" if B is None else f"batch of {B}"
    return {
        "name": f"forward {scheme} tanh, {batch}",
        "kind": "speed",
        "params": {"d": d, "N": N, "B": B, "scheme": scheme, "residual": "tanh", "seed": seed},
        "theory": t_theory.as_dict(),
        "numpy": t_numpy.as_dict(),
        "ratio": ratio,
        "ratio_range": ratio_range,
        "ratio_definition": "numpy median / theory median",
        "target": target,
        "goal": goal,
        "target_met": None if target is None else bool(ratio >= target),
        "goal_met": None if goal is None else bool(ratio >= goal),
        "max_abs_diff": max_abs_diff,
    }


_COLD = """
import time
import numpy as np
from theory.resnet import {func}
rng = np.random.default_rng(0)
x0 = rng.standard_normal(4)
theta = rng.standard_normal(({K}, 4, 4)) / 2.0
t0 = time.perf_counter()
{call}
print(time.perf_counter() - t0)
"""


def bench_compile(names=None):
    """First call of each public entry point in a fresh interpreter with an empty Numba cache: the
    JIT compilation time that the in-process ``first_call`` of :func:`bench_forward` does not show
    when Numba's on-disk cache (``cache=True``) already holds the kernels."""
    cases = {
        "forward euler": ("forward", 8, 'forward(x0, theta, "tanh")'),
        "forward heun": ("forward", 9, 'forward(x0, theta, "tanh", "heun")'),
        "gradient euler backprop": ("gradient", 8, 'gradient(x0, theta, x0, "tanh", method="backprop")'),
        "gradient euler adjoint": ("gradient", 8, 'gradient(x0, theta, x0, "tanh", method="adjoint")'),
    }
    names = list(cases) if names is None else list(names)
    out = {name: cold_first_call(_COLD.format(func=cases[name][0], K=cases[name][1], call=cases[name][2]))
           for name in names}
    return {"name": "cold JIT compile (first call, empty Numba cache, fresh interpreter)", "kind": "compile",
            "seconds": out}


def memory_needed(d, N, B=1):
    """Bytes a gradient call at (d, N) needs in total: the input theta, grad_theta and the backprop
    trajectory (the API reads theta in place and tests finiteness without a mask)."""
    theta = N * d * d * F8
    return theta + theta + (N + 1) * B * d * F8


def bench_memory(*, grids, seed=0, budget_bytes=8 * 2**30):
    """Peak traced memory of gradient(method="adjoint" | "backprop") against N.

    ``grids`` maps d to the list of N to try; an N whose :func:`memory_needed` exceeds
    ``budget_bytes`` is skipped and listed under ``skipped``. Returns a dict of results.
    """
    runs, skipped = [], []
    for d, Ns in grids.items():
        for N in Ns:
            need = memory_needed(d, N)
            if need > budget_bytes:
                skipped.append({"d": d, "N": N, "needed_bytes": need, "budget_bytes": budget_bytes})
                continue
            x0, theta = make_problem(d, N, None, "euler", seed)
            y = np.zeros(d)
            base = peak_memory(lambda: final_state(x0, theta, "tanh"))
            g_theta = N * d * d * F8
            traj = (N + 1) * d * F8
            for method in ("adjoint", "backprop"):
                mem = peak_memory(lambda: gradient(x0, theta, y, "tanh", method=method))
                runs.append({
                    "d": d, "N": N, "method": method,
                    "peak": mem.peak, "retained": mem.retained,
                    "grad_theta_bytes": g_theta, "theta_bytes": g_theta, "trajectory_bytes": traj,
                    "validation_peak": base.peak,
                    "working": mem.peak - g_theta,
                    "beyond_validation": mem.peak - g_theta - base.peak,
                })
            del x0, theta
    slopes = []
    for d in grids:
        for method in ("adjoint", "backprop"):
            sel = [r for r in runs if r["d"] == d and r["method"] == method]
            if len(sel) < 2:
                continue
            Ns = [r["N"] for r in sel]
            slopes.append({
                "d": d, "method": method, "N": Ns,
                "slope_peak": loglog_slope(Ns, [r["peak"] for r in sel]),
                "slope_working": loglog_slope(Ns, [r["working"] for r in sel]),
                "slope_beyond_validation": loglog_slope(Ns, [r["beyond_validation"] for r in sel]),
            })
    return {
        "name": "gradient memory, adjoint vs backprop (tanh, Euler, one input)",
        "kind": "memory",
        "params": {"grids": {str(d): list(Ns) for d, Ns in grids.items()}, "seed": seed,
                   "budget_bytes": budget_bytes},
        "runs": runs,
        "skipped": skipped,
        "slopes": slopes,
    }


def plot_memory(result, path):
    """Log-log working memory against N, both methods, one line per d; saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = result["runs"]
    slopes = {(s["d"], s["method"]): s for s in result["slopes"]}
    ds = sorted({r["d"] for r in runs})
    colors = {"backprop": "#c0392b", "adjoint": "#1f5fa8"}
    markers = {ds[0]: "o", ds[-1]: "s"} if len(ds) > 1 else {ds[0]: "o"}
    plt.rcParams.update({"font.size": 10, "axes.titlesize": 10.5, "legend.fontsize": 8.5})
    fig, ax = plt.subplots(figsize=(6.0, 4.4), constrained_layout=True)
    for d in ds:
        for method in ("backprop", "adjoint"):
            sel = [r for r in runs if r["d"] == d and r["method"] == method]
            if not sel:
                continue
            Ns = np.array([r["N"] for r in sel])
            vals = np.array([r["working"] for r in sel], dtype=float)
            ok = vals > 0
            s = slopes.get((d, method), {}).get("slope_working", float("nan"))
            ax.loglog(Ns[ok], vals[ok], marker=markers.get(d, "o"), color=colors[method],
                      linestyle="-" if d == ds[-1] else "--", markersize=5,
                      label=f"{method}, d = {d} (slope {s:.2f})")
    for d in ds:
        Ns = np.array(sorted({r["N"] for r in runs if r["d"] == d}))
        ax.loglog(Ns, (Ns + 1) * d * F8, color="0.55", linestyle=":", linewidth=1.2,
                  label=f"trajectory size 8(N+1)d, d = {d}")
    ax.set_xlabel("depth $N$")
    ax.set_ylabel("peak $-$ size of $\\nabla_\\theta$ (bytes, tracemalloc)")
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    ax.legend(loc="upper left", frameon=False, fontsize=8)
    fig.suptitle("theory.resnet.gradient: working memory against depth\n(tanh residual, Euler, one input)",
                 fontsize=11)
    fig.savefig(path, dpi=200)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------------
# Size grid: forward and backprop gradient against NumPy loops and against floors
# ---------------------------------------------------------------------------------------------------

GRID_D = (4, 16, 64, 256)
GRID_B = (1, 16, 256)
GRID_EXTRA = ((16, 64),)  # (d, B) cells run besides the grid: the target at d = 16, B = 64
GRID_N = (100, 10_000)
GRID_THETA_BYTES = 64 * 2**20  # theta (N, d, d) capped at 64 MiB: wide cases run at smaller N
GRID_FLOPS = 4e8  # and one forward pass capped at ~4e8 flops (about 0.1 s), so every case stays < ~1 s


def grid_depth(d, B, N):
    """The depth actually run for grid cell (d, B, N): N, reduced for wide cases (see the caps above)."""
    cap_mem = GRID_THETA_BYTES // (F8 * d * d)
    cap_flops = int(GRID_FLOPS // (2 * B * d * d))
    return int(max(10, min(N, cap_mem, cap_flops)))


def numpy_gradient(x0, theta, y):
    """The anchor for the gradient: backprop through a NumPy loop (tanh residual, Euler).

    Forward storing the trajectory (as :func:`numpy_forward`), then walking back:
    h = g (1 - tanh(theta_n x_n)^2) / N, grad theta_n = h x_n^T (summed over the batch),
    g <- g + theta_n^T h."""
    N = theta.shape[0]
    traj = numpy_forward(x0, theta)
    g = traj[N] - y
    gtheta = np.empty_like(theta)
    if x0.ndim == 1:
        for n in range(N - 1, -1, -1):
            x = traj[n]
            t = np.tanh(theta[n] @ x)
            h = g * (1.0 - t * t) / N
            gtheta[n] = np.outer(h, x)
            g = g + theta[n].T @ h
    else:
        for n in range(N - 1, -1, -1):
            X = traj[n]
            t = np.tanh(X @ theta[n].T)
            H = g * (1.0 - t * t) / N
            gtheta[n] = H.T @ X
            g = g + H @ theta[n]
    return gtheta, g


def _floor_call(x0, theta):
    """The floor of one forward pass: the larger of one read of theta (``theta.sum()``, the memory
    floor) and, for a batch, the N BLAS dgemm calls X (B, d) @ theta_n^T (d, d) of its products
    (same shapes, nothing else). Returns the callables; the caller takes the larger time."""
    N, d = theta.shape[0], theta.shape[1]
    flat = theta.reshape(-1)
    read = lambda: flat.sum()  # noqa: E731
    if x0.ndim == 1:
        return [read]
    X = np.ascontiguousarray(x0)
    out = np.empty((X.shape[0], d))

    def dgemm():
        for n in range(N):
            np.dot(X, theta[n].T, out=out)
    return [read, dgemm]


def _interleaved(fns, *, rounds=7, target=0.05):
    """Least CPU seconds per call of each function over interleaved rounds (each round runs every
    function once, repeated to about ``target`` seconds), so that load changes hit all alike.

    CPU time of the calling thread (``time.thread_time``), not wall time: every side computes on
    that one thread (BLAS with OPENBLAS_NUM_THREADS=1, PyTorch with one intra-op thread, the
    kernels), and on a machine shared with other jobs a wall-clock time counts their time slices
    too, more of them the longer a call runs, which biases the ratios towards the shorter call. Not
    the process's CPU time either: helper threads that PyTorch leaves spinning after its calls would
    be charged to whichever call runs next. The minimum over rounds, not the median: other jobs
    only add time (cache and memory-bandwidth contention remain)."""
    import time

    reps = []
    for fn in fns:
        fn()
        t0 = time.thread_time()
        fn()
        dt = time.thread_time() - t0
        reps.append(max(1, int(target / max(dt, 1e-7))))
    times = [[] for _ in fns]
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            t0 = time.thread_time()
            for _ in range(reps[k]):
                fn()
            times[k].append((time.thread_time() - t0) / reps[k])
    return [float(np.min(t)) for t in times]


def _torch_cell(d, B, N, seed, rounds, target, ref_gtheta):
    """The PyTorch CPU eager anchor of one grid cell (forward storing the trajectory, and autograd's
    gradient), timed by :func:`_interleaved` with one intra-op thread, after checking its gradient
    against ``ref_gtheta``. Runs in a child process (:func:`bench_grid`): freeing an autograd graph
    of 10^4 layers leaves hundreds of MB of mapped free heap behind, from which glibc then serves
    the large arrays of the other sides without the first-touch page faults they pay in a fresh
    process (d = 16, B = 64, N = 10^4: the forward pass's 82 MB trajectory, 21 instead of 29 ms),
    which would make every later timing depend on whether this anchor ran."""
    import torch

    torch.set_num_threads(1)  # like BLAS on both other sides (OPENBLAS_NUM_THREADS=1 as a script)
    x0, theta = make_problem(d, N, None if B == 1 else B, "euler", seed)
    tx = torch.from_numpy(x0.copy())
    ty = torch.zeros_like(tx)
    tth = torch.from_numpy(theta)

    def torch_forward():
        # the trajectory stored, as theory.resnet.forward and numpy_forward do
        x = tx
        traj = [x]
        with torch.no_grad():
            for n in range(N):
                x = x + torch.tanh(tth[n] @ x if x.ndim == 1 else x @ tth[n].T) / N
                traj.append(x)
        return torch.stack(traj)

    def torch_gradient():
        th = tth.detach().requires_grad_(True)
        x = tx.detach().requires_grad_(True)
        z = x
        for n in range(N):
            z = z + torch.tanh(th[n] @ z if z.ndim == 1 else z @ th[n].T) / N
        loss = 0.5 * ((z - ty) ** 2).sum()
        loss.backward()
        return th.grad, x.grad
    tg, _ = torch_gradient()
    if not np.max(np.abs(tg.numpy() - ref_gtheta)) <= 1e-10 * max(1.0, np.max(np.abs(ref_gtheta))):
        raise AssertionError(f"torch gradient disagrees at d={d}, B={B}, N={N}")
    return _interleaved([torch_forward, torch_gradient], rounds=rounds, target=target)


def bench_grid(*, ds=GRID_D, Bs=GRID_B, Ns=GRID_N, extra=GRID_EXTRA, seed=0, rounds=5, target=0.05,
               torch_anchor=True):
    """Forward and backprop gradient (tanh residual, Euler) over the (d, B, N) grid.

    For each cell: least CPU times (:func:`_interleaved`) of theory.resnet.forward / gradient, of :func:`numpy_forward` /
    :func:`numpy_gradient`, and of the floor (:func:`_floor_call`; the gradient floor is three of
    them: theta is read in the forward and backward passes and grad theta written once, and the
    backward pass does two products per layer), all interleaved. Results are checked to agree
    before timing. Ratios: numpy / theory (speed-up) and theory / floor (distance to the floor)."""
    import os
    import sys

    import importlib.util

    pool = None
    if torch_anchor and importlib.util.find_spec("torch") is not None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # one child process for the PyTorch anchor of every cell (see _torch_cell)
        pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    load_before = os.getloadavg()
    cells = []
    pairs = [(d, B) for d in ds for B in Bs]
    pairs += [(d, B) for d, B in extra if (d, B) not in pairs]
    pairs.sort()
    for d, B in pairs:
        for N0 in Ns:
            N = grid_depth(d, B, N0)
            if any(c["d"] == d and c["B"] == B and c["N"] == N for c in cells):
                continue
            x0, theta = make_problem(d, N, None if B == 1 else B, "euler", seed)
            y = np.zeros_like(x0)
            ours = forward(x0, theta, "tanh")
            ref = numpy_forward(x0, theta)
            scale = max(1.0, float(np.max(np.abs(ref))))
            if not float(np.max(np.abs(ours - ref))) <= 1e-10 * scale:
                raise AssertionError(f"forward disagrees at d={d}, B={B}, N={N}")
            gt, gx = gradient(x0, theta, y, "tanh")
            rt, rx = numpy_gradient(x0, theta, y)
            if not (np.max(np.abs(gt - rt)) <= 1e-10 * max(1.0, np.max(np.abs(rt)))
                    and np.max(np.abs(gx - rx)) <= 1e-10 * max(1.0, np.max(np.abs(rx)))):
                raise AssertionError(f"gradient disagrees at d={d}, B={B}, N={N}")
            fns = [lambda: forward(x0, theta, "tanh"), lambda: numpy_forward(x0, theta),
                   lambda: gradient(x0, theta, y, "tanh"), lambda: numpy_gradient(x0, theta, y),
                   *_floor_call(x0, theta)]
            n_floor = 1 if B == 1 else 2
            t = _interleaved(fns, rounds=rounds, target=target)
            if pool is not None:
                t += pool.submit(_torch_cell, d, B, N, seed, rounds, target, rt).result()
            floor = max(t[4:4 + n_floor])
            cell = {"d": d, "B": B, "N": N, "N_asked": N0, "read_theta": t[4],
                    "dgemm": t[5] if n_floor == 2 else None,
                    "theory_forward": t[0], "numpy_forward": t[1], "theory_gradient": t[2],
                    "numpy_gradient": t[3], "floor_forward": floor, "floor_gradient": 3 * floor,
                    "speedup_forward": t[1] / t[0], "speedup_gradient": t[3] / t[2],
                    "floor_ratio_forward": t[0] / floor, "floor_ratio_gradient": t[2] / (3 * floor)}
            if pool is not None:
                cell["torch_forward"] = t[-2]
                cell["torch_gradient"] = t[-1]
                cell["speedup_forward_vs_torch"] = t[-2] / t[0]
                cell["speedup_gradient_vs_torch"] = t[-1] / t[2]
            cells.append(cell)
            extra = ""
            if pool is not None:
                extra = (f"  torch/theory fwd x{cell['speedup_forward_vs_torch']:6.2f} "
                         f"grad x{cell['speedup_gradient_vs_torch']:6.2f}")
            print(f"d={d:4d} B={B:4d} N={N:6d}  fwd x{cell['speedup_forward']:6.2f} "
                  f"(floor x{cell['floor_ratio_forward']:5.2f})  grad x{cell['speedup_gradient']:6.2f} "
                  f"(floor x{cell['floor_ratio_gradient']:5.2f}){extra}", file=sys.stderr, flush=True)
    if pool is not None:
        pool.shutdown()
    return {"name": "resnet grid: forward and backprop gradient (tanh, Euler) vs NumPy loops and floors",
            "kind": "grid", "cells": cells, "load_before": load_before, "load_after": os.getloadavg(),
            "cpus": os.cpu_count(), "rounds": rounds, "torch": pool is not None}


def plot_grid(result, path, *, before=None):
    """Speed-up over the NumPy loop (forward and gradient) and distance to the floor, per cell; with
    ``before`` (an earlier result) its speed-ups are drawn hollow for comparison."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = result["cells"]
    labels = [f"d{c['d']}\nB{c['B']}\nN{c['N']}" for c in cells]
    x = np.arange(len(cells))
    fig, axes = plt.subplots(2, 1, figsize=(max(8.0, 0.45 * len(cells)), 7.0), constrained_layout=True, sharex=True)
    ax = axes[0]
    now = ", now" if before is not None else ""
    ax.semilogy(x - 0.12, [c["speedup_forward"] for c in cells], "o", color="#1f5fa8", label=f"forward vs NumPy{now}")
    ax.semilogy(x + 0.12, [c["speedup_gradient"] for c in cells], "s", color="#c0392b", label=f"gradient vs NumPy{now}")
    if before is not None:
        bmap = {(c["d"], c["B"], c["N"]): c for c in before["cells"]}
        bf = [bmap.get((c["d"], c["B"], c["N"]), {}).get("speedup_forward", np.nan) for c in cells]
        bg = [bmap.get((c["d"], c["B"], c["N"]), {}).get("speedup_gradient", np.nan) for c in cells]
        ax.semilogy(x - 0.12, bf, "o", mfc="none", color="#1f5fa8", label="forward, before")
        ax.semilogy(x + 0.12, bg, "s", mfc="none", color="#c0392b", label="gradient, before")
    if result.get("torch"):
        ax.semilogy(x - 0.12, [c["speedup_forward_vs_torch"] for c in cells], "^", color="#1f5fa8", alpha=0.45,
                    label="forward vs PyTorch eager")
        ax.semilogy(x + 0.12, [c["speedup_gradient_vs_torch"] for c in cells], "v", color="#c0392b", alpha=0.45,
                    label="gradient vs PyTorch eager (autograd)")
    ax.axhline(1.0, color="0.3", lw=1, ls="--", label="anchor (ratio 1)")
    ax.set_ylabel("anchor time / theory time")
    ax.legend(fontsize=8, ncol=3, frameon=False)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("theory.resnet (tanh, Euler, backprop gradient) against a NumPy loop over the layers (filled)\n"
                 "and PyTorch CPU eager (pale triangles); above 1: theory faster", fontsize=9.5)
    ax = axes[1]
    ax.semilogy(x - 0.12, [c["floor_ratio_forward"] for c in cells], "o", color="#1f5fa8", label="forward")
    ax.semilogy(x + 0.12, [c["floor_ratio_gradient"] for c in cells], "s", color="#c0392b", label="gradient")
    ax.axhline(1.0, color="0.3", lw=1, ls="--", label="floor (ratio 1)")
    ax.set_ylabel("theory time / floor time")
    ax.set_title("distance to the floor: max(one read of theta, the N per-layer dgemm calls alone), x3 for the "
                 "gradient\n(below 1 where BLAS call overhead dominates tiny products: no floor there)", fontsize=9.5)
    ax.legend(fontsize=8, frameon=False)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=7)
    la, lb = result["load_before"][0], result["load_after"][0]
    fig.suptitle(f"least thread CPU time of interleaved rounds, one thread each; 1-min load average {la:.1f} before, "
                 f"{lb:.1f} after, on {result['cpus']} CPUs", fontsize=9)
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def bench_adjoint_memory_grid(*, cases=((4, 1), (16, 1), (16, 64), (64, 256), (256, 16)),
                              Ns=(100, 400, 1600), seed=0):
    """Working memory of gradient(method="adjoint") against N at several (d, B): the tracemalloc
    peak minus the bytes of grad theta (an output of size 8 N P that must grow with N), with the
    log-log slope over ``Ns`` (0 when flat in N)."""
    out = []
    for d, B in cases:
        work = []
        for N in Ns:
            x0, theta = make_problem(d, N, None if B == 1 else B, "euler", seed)
            y = np.zeros_like(x0)
            mem = peak_memory(lambda: gradient(x0, theta, y, "tanh", method="adjoint"))
            work.append(mem.peak - theta.nbytes)
        out.append({"d": d, "B": B, "N": list(Ns), "working_bytes": work,
                    "slope": loglog_slope(list(Ns), work)})
    return out


# The targets, (d, B): (forward, gradient) least speed-up over the NumPy loop; a floor ratio
# target (theory / floor) for two cells; and never below 1x anywhere.
TARGETS_SPEEDUP = {(16, 1): (10.0, 5.0), (16, 64): (3.0, 3.0), (64, 256): (1.5, 1.5)}
TARGETS_FLOOR = {(16, 1): ("forward", 2.0), (64, 256): ("gradient", 1.5)}


def grid_markdown(result):
    """The grid as a markdown table (ratios only, one row per cell) and the list of targets with
    their measured figures and verdicts."""
    torch = result.get("torch")
    head = ["d", "B", "N", "fwd vs NumPy", "grad vs NumPy", "fwd / floor", "grad / floor"]
    if torch:
        head += ["fwd vs torch", "grad vs torch"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in result["cells"]:
        row = [str(c["d"]), str(c["B"]), str(c["N"]), f"{c['speedup_forward']:.2f}x", f"{c['speedup_gradient']:.2f}x",
               f"{c['floor_ratio_forward']:.2f}", f"{c['floor_ratio_gradient']:.2f}"]
        if torch:
            row += [f"{c['speedup_forward_vs_torch']:.2f}x", f"{c['speedup_gradient_vs_torch']:.2f}x"]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Ratios: 'vs NumPy' and 'vs torch' are the anchor's time over theory's (above 1: theory "
                 "faster); '/ floor' is theory's time over the floor (one read of theta; for a batch the larger "
                 "of that and the N dgemm calls of the forward products alone; x3 for the gradient). Least "
                 f"CPU time (one thread each side) of {result['rounds']} interleaved rounds. Load average {result['load_before'][0]:.1f} before, "
                 f"{result['load_after'][0]:.1f} after, on {result['cpus']} CPUs; "
                 f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}.")
    lines.append("")
    for c in result["cells"]:
        key = (c["d"], c["B"])
        if c["N_asked"] != max(c2["N_asked"] for c2 in result["cells"]):
            continue  # the targets concern the deepest runs (N = 10^4, capped for the wide cases)
        if key in TARGETS_SPEEDUP:
            tf, tg = TARGETS_SPEEDUP[key]
            for what, got, want in (("forward", c["speedup_forward"], tf), ("gradient", c["speedup_gradient"], tg)):
                lines.append(f"- d={c['d']}, B={c['B']}, N={c['N']}: {what} {got:.2f}x NumPy, target >= {want}x: "
                             f"{'MET' if got >= want else 'NOT MET'}")
        if key in TARGETS_FLOOR:
            what, want = TARGETS_FLOOR[key]
            got = c[f"floor_ratio_{what}"]
            lines.append(f"- d={c['d']}, B={c['B']}, N={c['N']}: {what} {got:.2f}x its floor, target <= {want}x: "
                         f"{'MET' if got <= want else 'NOT MET'}")
    worst = min(min(c["speedup_forward"], c["speedup_gradient"]) for c in result["cells"])
    lines.append(f"- never below 1x NumPy: least ratio on the grid {worst:.2f}x: {'MET' if worst >= 1.0 else 'NOT MET'}")
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(description="theory.resnet size grid against NumPy loops and floors")
    parser.add_argument("--out", default="benchmarks/out/resnet_grid.json")
    parser.add_argument("--before", help="an earlier grid JSON to draw for comparison")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a corner of the grid (d 4 and 16, B 1 and 16, N 100)")
    parser.add_argument("--cells", help="only these cells, 'd,B,N' separated by ';' (e.g. '16,64,10000;256,16,128'); "
                                        "N is capped as in the full grid")
    parser.add_argument("--no-torch", action="store_true", help="leave out the PyTorch anchor")
    args = parser.parse_args()
    if args.cells:
        res = None
        for spec in args.cells.split(";"):
            d, B, N = (int(v) for v in spec.split(","))
            part = bench_grid(ds=(d,), Bs=(B,), Ns=(N,), extra=(), rounds=args.rounds,
                              torch_anchor=not args.no_torch)
            if res is None:
                res = part
            else:
                res["cells"] += part["cells"]
                res["load_after"] = part["load_after"]
    elif args.quick:
        res = bench_grid(ds=(4, 16), Bs=(1, 16), Ns=(100,), extra=(), rounds=3, torch_anchor=not args.no_torch)
    else:
        res = bench_grid(rounds=args.rounds, torch_anchor=not args.no_torch)
    res["OPENBLAS_NUM_THREADS"] = os.environ.get("OPENBLAS_NUM_THREADS")
    import theory
    res["theory_path"] = theory.__file__
    import pathlib
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    table = grid_markdown(res)
    out.with_suffix(".md").write_text(table + "\n")
    print(table)
    before = json.loads(pathlib.Path(args.before).read_text()) if args.before else None
    plot_grid(res, out.with_suffix(".png"), before=before)
    print("load", res["load_before"], res["load_after"], file=sys.stderr)


