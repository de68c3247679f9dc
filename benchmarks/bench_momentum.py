"""Speed of ``theory.momentum`` and ``theory.sinkhorn`` against NumPy (and POT) doing the same arithmetic.

Momentum ResNet (``bench_momentum``)
    Forward pass (4.2) then the inverse (4.3) of Sander's thesis, chapter 4, at d = 64, N = 10^4 layers,
    residual f(x, theta_n) = tanh(theta_n x) (theta_n with entries N(0, 1/d)), gamma = 1 - 1/(50 N) (Fig. 4.2 of
    the thesis; at gamma = 0.9 the float inverse overflows after N = 10^4 layers, gamma^-N = 10^457), through the public
    :func:`theory.momentum.forward` and :func:`theory.momentum.inverse`, against a NumPy loop over the layers
    storing both trajectories into preallocated arrays. Both are compared before timing (largest gap over the
    whole trajectories). With one matrix per layer theta (328 MB) is streamed from memory twice, so the bench
    also times the floor of the round trip, theta read forwards and then fully descending (layer N - 1 down
    to 0, each matrix from its last entry to its first, the order the inverse needs the layers in), and each
    pass alone against the read of its own order: NumPy / floor bounds the ratio any implementation can
    reach on the machine.

Sinkhorn attention (``bench_sinkhorn``)
    Logits C = Q K^T / 8 with Q, K of shape (512, 64) (entries N(0, 1)), 100 Sinkhorn iterations (a column and
    a row normalisation each, i.e. 200 normalisations of Eq. (5.3) of chapter 5), through the public
    :func:`theory.sinkhorn.sinkhorn`, against POT's log-domain Sinkhorn ``ot.bregman.sinkhorn_log`` (reg 1,
    cost -C, uniform marginals, ``numItermax=100``, ``stopThr=0``; its plan times n is the attention matrix),
    on NumPy arrays and, when torch is installed, on float64 torch tensors, and a plain NumPy loop with
    ``scipy.special.logsumexp``. POT starts with a column step: the package is run on C^T (rows first) and
    its result transposed, which is the same sequence of operations. All results agree to 1e-12 before timing.

Timing: interleaved repeats (one call of each contender per round), the minimum over rounds is reported, and
the ratios are those minima's ratios, measured in the same run. Run as ``python benchmarks/bench_momentum.py``;
it prints a markdown table and writes it to ``benchmarks/out/momentum.md``.
"""

from __future__ import annotations

import os

if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from _harness import load_average, machine_info  # noqa: E402

__all__ = ["bench_momentum", "bench_sinkhorn", "interleaved", "numpy_momentum", "numpy_sinkhorn"]


def interleaved(fns, rounds):
    """Minimum per-call time of each callable over ``rounds`` rounds, one call of each per round (after one warm-up
    call each)."""
    for f in fns.values():
        f()
    best = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - t0)
    return best


def numpy_momentum(x0, theta, gamma, depth=None):
    """Eq. (4.2) then (4.3) with f(x, theta_n) = tanh(theta_n x), one NumPy statement per update (``depth``:
    tied weights, theta[0] in every layer)."""
    N, d = (theta.shape[0] if depth is None else depth), x0.shape[0]
    T = theta.shape[0]
    xs = np.empty((N + 1, d))
    vs = np.empty((N + 1, d))
    xs[0] = x0
    vs[0] = 0.0
    c = 1.0 - gamma
    for n in range(N):
        vs[n + 1] = gamma * vs[n] + c * np.tanh(theta[n if T > 1 else 0] @ xs[n])
        xs[n + 1] = xs[n] + vs[n + 1]
    rx = np.empty_like(xs)
    rv = np.empty_like(vs)
    rx[N], rv[N] = xs[N], vs[N]
    for n in range(N - 1, -1, -1):
        rx[n] = rx[n + 1] - rv[n + 1]
        rv[n] = (rv[n + 1] - c * np.tanh(theta[n if T > 1 else 0] @ rx[n])) / gamma
    return xs, vs, rx, rv


def _theta_read_floors():
    """Numba kernels summing theta (N, P) with vector partial sums, nothing else computed: the memory floors
    of the two passes (every slice read once per pass, in the order the pass needs it).

    ``ascending``: layer 0 to N - 1, each slice from its first entry to its last (the forward pass (4.2));
    ``descending``: a fully descending read, layer N - 1 down to 0 and each slice from its last entry to its
    first (the inverse (4.3) needs the layers in that order); ``round_trip``: the two one after the other in
    one call, as the bench's round trip reads theta (the inverse starts with the slices the forward pass read
    last, some of them still in the last-level cache). The reads index the flat array with unsigned offsets,
    which lets the compiler vectorise them (with signed indices the backward read does not, and takes 7 times
    as long)."""
    from numba import njit

    flags = {"cache": False, "fastmath": {"reassoc", "contract"}, "error_model": "numpy"}

    @njit(**flags)
    def ascending(theta):
        flat = theta.reshape(-1)
        s = 0.0
        for k in range(flat.size):
            s += flat[np.uint64(k)]
        return s

    @njit(**flags)
    def descending(theta):
        flat = theta.reshape(-1)
        last = np.uint64(flat.size - 1)
        s = 0.0
        for kk in range(flat.size):
            s += flat[last - np.uint64(kk)]
        return s

    @njit(**flags)
    def round_trip(theta):
        return ascending(theta) + descending(theta)

    return ascending, descending, round_trip


def bench_momentum(d=64, N=10_000, gamma=None, rounds=11, seed=0, tied=False):
    """Forward + inverse of a Momentum ResNet: theory.momentum against the NumPy loop and, untied, the floors.

    gamma defaults to 1 - 1/(50 N), the choice of Fig. 4.2 of the thesis: the float inverse multiplies rounding
    errors by up to gamma^{-N}, which at gamma = 0.9 and N = 10^4 overflows (10^457). ``tied``: one weight matrix
    shared by all layers (Fig. 4.1 and Sec. 4.3.2), so that theta stays in cache; untied, theta is N d^2 floats
    (328 MB at the default sizes) and both sides stream it from memory, twice: the round trip's floor is
    reading theta forwards then fully descending (:func:`_theta_read_floors`), and NumPy / floor is the
    largest ratio any implementation of the round trip can show against the NumPy loop on the machine.
    Untied, each pass is also timed alone against its own floor. Every contender is timed in the same
    interleaved rounds.
    """
    import theory.momentum as M

    if gamma is None:
        gamma = 1.0 - 1.0 / (50.0 * N)
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal((1 if tied else N, d, d)) / np.sqrt(d)
    x0 = rng.standard_normal(d)
    depth = N if tied else None

    def package():
        xs, vs = M.forward(x0, None, theta, "tanh", gamma, depth=depth)
        rx, rv = M.inverse(xs[-1], vs[-1], theta, "tanh", gamma, depth=depth)
        return xs, vs, rx, rv

    a, b = package(), numpy_momentum(x0, theta, gamma, depth)
    fwd_gap = max(float(np.max(np.abs(a[0] - b[0]))), float(np.max(np.abs(a[1] - b[1]))))
    inv_gap = max(float(np.max(np.abs(a[2] - b[2]))), float(np.max(np.abs(a[3] - b[3]))))
    fns = {"theory": package, "numpy": lambda: numpy_momentum(x0, theta, gamma, depth)}
    if not tied:
        ascending, descending, round_trip = _theta_read_floors()
        flat = theta.reshape(N, -1)
        xN, vN = a[0][-1], a[1][-1]
        fns.update({"floor": lambda: round_trip(flat),
                    "theory forward": lambda: M.forward(x0, None, theta, "tanh", gamma),
                    "theory inverse": lambda: M.inverse(xN, vN, theta, "tanh", gamma),
                    "floor forward": lambda: ascending(flat), "floor inverse": lambda: descending(flat)})
    best = interleaved(fns, rounds)
    out = {"d": d, "N": N, "tied": tied, "gamma": gamma, "forward_gap": fwd_gap, "inverse_gap": inv_gap,
           "theory_s": best["theory"], "numpy_s": best["numpy"], "ratio": best["numpy"] / best["theory"],
           "times_s": best}
    if not tied:
        out["floor_s"] = best["floor"]
    return out


def numpy_sinkhorn(C, iterations):
    """Plain NumPy log-domain Sinkhorn on C: a column then a row log-normalisation per iteration."""
    from scipy.special import logsumexp

    L = C - C.max()
    for _ in range(iterations):
        L = L - logsumexp(L, axis=0, keepdims=True)
        L = L - logsumexp(L, axis=1, keepdims=True)
    return np.exp(L)


def bench_sinkhorn(n=512, d=64, iterations=100, rounds=5, seed=0):
    """theory.sinkhorn.sinkhorn against POT's sinkhorn_log (NumPy and torch backends) and a NumPy loop."""
    import ot

    from theory.sinkhorn import sinkhorn

    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((n, d))
    K = rng.standard_normal((n, d))
    C = Q @ K.T / 8.0
    a = np.full(n, 1.0 / n)

    def package():
        return sinkhorn(C.T, n_iter=2 * iterations).T

    def pot_numpy():
        return n * ot.bregman.sinkhorn_log(a, a, -C, 1.0, numItermax=iterations, stopThr=0.0)

    fns = {"theory": package, "POT (NumPy)": pot_numpy,
           "NumPy loop": lambda: numpy_sinkhorn(C, iterations)}
    try:
        import torch

        torch.set_num_threads(int(os.environ.get("OPENBLAS_NUM_THREADS", "1")))
        Ct, at = torch.from_numpy(C), torch.from_numpy(a)

        def pot_torch():
            return n * ot.bregman.sinkhorn_log(at, at, -Ct, 1.0, numItermax=iterations, stopThr=0.0)

        fns["POT (torch)"] = pot_torch
    except ImportError:
        pass
    ref = package()
    gaps = {}
    for k, f in fns.items():
        out = f()
        out = out.numpy() if hasattr(out, "numpy") else out
        gaps[k] = float(np.max(np.abs(out - ref)))
    best = interleaved(fns, rounds)
    return {"n": n, "d": d, "iterations": iterations, "max_abs_gap": gaps, "times_s": best,
            "ratios": {k: best[k] / best["theory"] for k in best if k != "theory"}}


def main():
    out = Path(__file__).with_name("out")
    out.mkdir(exist_ok=True)
    ms = [bench_momentum(tied=False), bench_momentum(tied=True)]
    s = bench_sinkhorn()
    info = machine_info()
    lines = ["# theory.momentum and theory.sinkhorn against NumPy and POT", "",
             f"Machine: {info.get('cpu', '?')}, load average {load_average()} (other jobs share the cores; "
             f"ratios are measured in the same run, minimum of interleaved repeats). BLAS threads: "
             f"{os.environ.get('OPENBLAS_NUM_THREADS')}.", "",
             "| benchmark | contender | time | ratio (contender / theory) | max abs gap to theory |",
             "| --- | --- | --- | --- | --- |"]
    for m in ms:
        t = m["times_s"]
        lines += [f"| momentum forward + inverse, d = {m['d']}, N = {m['N']}, B = 1, "
                  f"{'tied weights' if m['tied'] else 'one matrix per layer'} | theory | {m['theory_s'] * 1e3:.1f} ms | 1 "
                  f"| - |",
                  f"| | NumPy loop | {m['numpy_s'] * 1e3:.1f} ms | {m['ratio']:.2f} | {m['forward_gap']:.1e} (forward), "
                  f"{m['inverse_gap']:.1e} (inverse) |"]
        if "floor_s" in m:
            lines += [f"| | floor: theta read forwards, then fully descending (layer N - 1 down to 0, each matrix "
                      f"from its last entry), one call | {m['floor_s'] * 1e3:.1f} ms | "
                      f"{m['floor_s'] / m['theory_s']:.2f} | - |",
                      f"| forward pass alone | theory | {t['theory forward'] * 1e3:.1f} ms | 1 | - |",
                      f"| | floor: theta read forwards | {t['floor forward'] * 1e3:.1f} ms | "
                      f"{t['floor forward'] / t['theory forward']:.2f} | - |",
                      f"| inverse pass alone | theory | {t['theory inverse'] * 1e3:.1f} ms | 1 | - |",
                      f"| | floor: theta read fully descending | {t['floor inverse'] * 1e3:.1f} ms | "
                      f"{t['floor inverse'] / t['theory inverse']:.2f} | - |"]
    for k, t in s["times_s"].items():
        ratio = "1" if k == "theory" else f"{s['ratios'][k]:.2f}"
        label = (f"Sinkhorn n = {s['n']}, d = {s['d']}, {s['iterations']} iterations" if k == "theory" else "")
        lines.append(f"| {label} | {k} | {t * 1e3:.1f} ms | {ratio} | {s['max_abs_gap'][k]:.1e} |")
    for m in ms:
        if "floor_s" in m:
            bound = m["numpy_s"] / m["floor_s"]
            lines += ["", f"Round trip, one matrix per layer: NumPy / theory = {m['ratio']:.2f} (target 5), "
                      f"theory / floor = {m['theory_s'] / m['floor_s']:.2f}; NumPy / floor = {bound:.2f}, the largest "
                      f"ratio to the NumPy loop that any code reading theta ({m['N'] * m['d'] ** 2 * 8 / 1e6:.0f} MB) "
                      f"once per pass can reach on this machine"
                      + (" (the target is above it: memory-bound here)." if bound < 5.0 else ".")]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    (out / "momentum.md").write_text(text)


if __name__ == "__main__":
    main()
