"""Speed of one gradient step of the two-timescale network (thesis (Marion), chapter 6).

One step of gradient descent at ratio eps, m = 20 neurons, eta = 4e-3, target of App. 6.C:
* ours, uniform grid: ``theory.two_timescale.gradient_descent(..., steps=1, quadrature=5001)`` minus nothing
  (the public call, validation included), and the kernel loop per step measured over 1000 steps;
* ours, exact quadrature (composite Gauss rule split at the kinks, the default);
* a vectorised NumPy step on the same 5001-point trapezoid grid (features as an (m, N) array).
Interleaved repeats, minimum of the repeats. Run: ``python benchmarks/bench_two_timescale.py``; writes
a markdown table to stdout and to benchmarks/out/two_timescale.md. Target: ours (grid) >= 5x NumPy.
"""

from __future__ import annotations

import os
import time

import numpy as np

import theory.two_timescale as T

M, ETA, N_GRID, STEPS, REPEATS = 20, 4e-3, 5001, 1000, 7


def numpy_step(a, u, eps, h, x, w, fx):
    z = (x[None, :] - u[:, None]) / ETA
    t = np.clip(z + 0.5, 0.0, 1.0)
    s = t ** 3 * (10 - 15 * t + 6 * t ** 2)
    ds = 30 * t ** 2 * (1 - t) ** 2 / ETA
    r = a[0] + a[1:] @ s - fx
    ga = np.concatenate(([w @ r], s @ (w * r)))
    gu = -a[1:] * (ds @ (w * r))
    return a - h * ga, u - eps * h * gu


def run():
    v, f = T.THESIS_TARGET
    rng = np.random.default_rng(0)
    u0 = np.sort(rng.uniform(0, 1, M))
    a0 = rng.normal(size=M + 1) * 0.1
    x = np.linspace(0, 1, N_GRID)
    w = np.full(N_GRID, 1 / (N_GRID - 1))
    w[[0, -1]] /= 2
    fx = T.evaluate_target(x, v, f)
    T.gradient_descent(a0, u0, 1e-3, 0.1, 2, ETA, v, f, quadrature=N_GRID)  # compile
    T.gradient_descent(a0, u0, 1e-3, 0.1, 2, ETA, v, f)
    # agreement of the two grid implementations
    tr = T.gradient_descent(a0, u0, 1e-3, 0.1, 1, ETA, v, f, quadrature=N_GRID)
    na, nu = numpy_step(a0, u0, 1e-3, 0.1, x, w, fx)
    agree = max(np.abs(tr.a[-1] - na).max(), np.abs(tr.u[-1] - nu).max())
    times = {"ours, grid 5001 (per step, 1000 steps)": [], "ours, exact quadrature (per step, 1000 steps)": [],
             "NumPy vectorised, grid 5001 (per step)": []}
    for _ in range(REPEATS):
        t = time.perf_counter()
        T.gradient_descent(a0, u0, 1e-3, 0.1, STEPS, ETA, v, f, quadrature=N_GRID, record_every=STEPS)
        times["ours, grid 5001 (per step, 1000 steps)"].append((time.perf_counter() - t) / STEPS)
        t = time.perf_counter()
        T.gradient_descent(a0, u0, 1e-3, 0.1, STEPS, ETA, v, f, record_every=STEPS)
        times["ours, exact quadrature (per step, 1000 steps)"].append((time.perf_counter() - t) / STEPS)
        a, u = a0, u0
        t = time.perf_counter()
        for _ in range(100):
            a, u = numpy_step(a, u, 1e-3, 0.1, x, w, fx)
        times["NumPy vectorised, grid 5001 (per step)"].append((time.perf_counter() - t) / 100)
    best = {k: min(vs) for k, vs in times.items()}
    ref = best["NumPy vectorised, grid 5001 (per step)"]
    lines = ["| implementation | time per step | NumPy / this |", "|---|---|---|"]
    for k, s in best.items():
        lines.append(f"| {k} | {s * 1e6:.1f} us | {ref / s:.1f}x |")
    lines.append("")
    lines.append(f"m = {M}, eta = {ETA}; grid implementations agree to {agree:.1e}; minimum of {REPEATS} "
                 "interleaved repeats; machine shared with other jobs (figures indicative).")
    text = "\n".join(lines)
    print(text)
    os.makedirs(os.path.join(os.path.dirname(__file__), "out"), exist_ok=True)
    with open(os.path.join(os.path.dirname(__file__), "out", "two_timescale.md"), "w") as fh:
        fh.write(text + "\n")
    return best


if __name__ == "__main__":
    run()
