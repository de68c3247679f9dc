r"""Speed of one gradient step of ``theory.implicit`` (the residual network of ``implicit-reg``) against NumPy.

Gradient (``bench_gradient``)
    One call of the public :func:`theory.implicit.loss_and_gradient` (loss and the four gradients,
    no parameter update) against the anchor ``numpy_loss_and_gradient`` below, the same computation
    vectorised over the batch in NumPy: the forward pass stores the hidden states h_k (L + 1, n, q) and
    the activations sigma(u_k) (L, n, m) as arrays over the batch, the backward pass is four matrix
    products per layer, with the scalings 1/(L sqrt m) and 1/sqrt q of Eq. (3). Both sides compute the
    loss and the gradients only; neither updates the parameters. Full size: L = 64, m = 64,
    q = d = d' = 16, n = 32, tanh, ``initialize(kind="iid")`` with V ~ N(0, 1) (so that every term of
    the backward pass is non-zero). Before timing, the loss and the four gradients of both must agree to
    1e-10 (max absolute difference relative to max(1, max |NumPy|)). Reported: the first call of ours
    (JIT compile or cache load), medians with IQR, ratio = NumPy median / ours median, and the rate of
    the 12 n q m L flops of the step's matrix products. Target >= 3. Above n L m q = 2^18 ours splits
    the batch into two chunks run in two threads (one with ``NUMBA_NUM_THREADS=1``, same results).
    The agreement check's results are dropped before timing: kept alive, they made glibc return the
    memory freed by each timed call to the system, so that both sides timed about 500 page faults per
    call (ours 1.7 ms instead of 1.1 ms on the 2-core machine of the README, NumPy 2.8 ms instead of
    2.0 ms).

Training (``bench_train``)
    The reduced training of ``checks/test_implicit_reg.py`` at its largest depth: n = 20, q = d = d' = 8,
    m = 16, L = 256, tanh, ``initialize(kind="paper")``, full-batch GD of Eq. (4) with lr = 0.05
    (residual weights at L lr), 200 steps, A and B fixed (``train_outer=False``): the public
    :func:`theory.implicit.train` against a NumPy loop of ``numpy_loss_and_gradient`` with the same
    update; the final losses must agree to 1e-10. No target.

Compilation (``bench_compile``)
    The first call of ``loss_and_gradient`` in a fresh interpreter with an empty Numba cache.

All draws come from ``numpy.random.default_rng(seed)``. Public names of ``theory.implicit`` only.
"""

from __future__ import annotations

import math

import numpy as np

from _harness import cold_first_call, fmt_time, format_table, time_call
from theory.implicit import Params, initialize, loss_and_gradient, synthetic_data, train

__all__ = ["FULL", "QUICK", "bench_compile", "bench_gradient", "bench_train", "numpy_loss_and_gradient", "run"]

FAMILY = "implicit"
FULL = {
    "gradient": dict(L=64, m=64, q=16, n=32, target=3.0),
    "train": dict(L=256, m=16, q=8, n=20, lr=0.05, steps=200),
}
QUICK = {
    "gradient": dict(L=16, m=16, q=8, n=8, target=3.0),
    "train": dict(L=32, m=16, q=8, n=20, lr=0.05, steps=50),
}
TOLERANCE = 1e-10


def numpy_loss_and_gradient(X, Y, p: Params):
    r"""Loss and gradients of ``implicit-reg`` Eq. (3) (tanh), vectorised over the batch in NumPy.

    Forward: H_0 = X A^T, U_k = H_k W_{k+1}^T / sqrt q, S_k = tanh(U_k), H_{k+1} = H_k + S_k V_{k+1}^T / (L sqrt m).
    Backward (P = dl/dH, rows p_{k,i}): G = (P V_{k+1}) * (1 - S_k^2),
    dl/dV_{k+1} = P^T S_k / (L sqrt m), dl/dW_{k+1} = G^T H_k / (L sqrt(m q)), P <- P + G W_{k+1} / (L sqrt(m q)).
    """
    A, V, W, B = p.A, p.V, p.W, p.B
    L, q, m = V.shape
    n = X.shape[0]
    inv_sq = 1.0 / math.sqrt(q)
    c_v = 1.0 / (L * math.sqrt(m))
    c_w = 1.0 / (L * math.sqrt(m * q))
    H = np.empty((L + 1, n, q))
    S = np.empty((L, n, m))
    H[0] = X @ A.T
    for k in range(L):
        np.tanh((H[k] @ W[k].T) * inv_sq, out=S[k])
        H[k + 1] = H[k] + c_v * (S[k] @ V[k].T)
    res = H[L] @ B.T - Y
    loss = float(np.sum(res * res) / n)
    P = (2.0 / n) * (res @ B)
    gV = np.empty_like(V)
    gW = np.empty_like(W)
    for k in range(L - 1, -1, -1):
        Sk = S[k]
        G = (P @ V[k]) * (1.0 - Sk * Sk)
        gV[k] = c_v * (P.T @ Sk)
        gW[k] = c_w * (G.T @ H[k])
        P = P + c_w * (G @ W[k])
    gA = P.T @ X
    gB = (2.0 / n) * (res.T @ H[L])
    return loss, Params(gA, gV, gW, gB)


def _max_rel_diff(loss_a, ga: Params, loss_b, gb: Params):
    """max over (loss, A, V, W, B) of max |a - b| / max(1, max |b|)."""
    diffs = {"loss": abs(loss_a - loss_b) / max(1.0, abs(loss_b))}
    for name, a in ga.as_dict().items():
        b = gb.as_dict()[name]
        diffs[name] = float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))
    return diffs


def make_problem(L, m, q, n, seed=0):
    rng = np.random.default_rng(seed)
    p0 = initialize(q, m, L, rng, q=q, d_out=q, kind="iid")
    p = Params(p0.A, rng.standard_normal(p0.V.shape), p0.W, p0.B)
    X, Y = synthetic_data(n, q, rng, d_out=q)
    return X, Y, p


def bench_gradient(*, L, m, q, n, target, seed=0, **timing):
    X, Y, p = make_problem(L, m, q, n, seed)
    loss_t, g_t = loss_and_gradient(X, Y, p, "tanh")
    loss_n, g_n = numpy_loss_and_gradient(X, Y, p)
    diffs = _max_rel_diff(loss_t, g_t, loss_n, g_n)
    # drop the two results before timing: kept alive, they pin the heap so that the allocator hands
    # the memory freed by every timed call back to the system, and both sides then time page faults
    del g_t, g_n
    agree = max(diffs.values()) <= TOLERANCE
    if not agree:
        raise AssertionError(f"theory.implicit.loss_and_gradient and the NumPy step disagree: {diffs}")
    ours = time_call(lambda: loss_and_gradient(X, Y, p, "tanh"), **timing)
    anchor = time_call(lambda: numpy_loss_and_gradient(X, Y, p), **timing)
    ratio = anchor.median / ours.median
    flops = 12 * n * q * m * L  # six (n, q) x (q, m)-sized matrix products per layer, 2 flops per multiply-add
    return {"family": FAMILY, "name": "implicit_gradient_vs_numpy", "kind": "gradient", "flops": flops,
            "gflops": {"theory": flops / ours.median / 1e9, "numpy": flops / anchor.median / 1e9},
            "params": {"L": L, "m": m, "q": q, "d": q, "d_out": q, "n": n, "activation": "tanh",
                       "seed": seed, "step": "loss and gradient only, no parameter update"},
            "theory": ours.as_dict(), "numpy": anchor.as_dict(), "ratio": ratio,
            "ratio_range": [anchor.q1 / ours.q3, anchor.q3 / ours.q1],
            "max_rel_diff": diffs, "tolerance": TOLERANCE, "agree": agree,
            "target": target, "target_met": ratio >= target}


def numpy_train(X, Y, p0: Params, *, lr, steps):
    """Full-batch GD of Eq. (4), A and B fixed, with ``numpy_loss_and_gradient``; returns (V, W, losses)."""
    V, W = p0.V.copy(), p0.W.copy()
    L = V.shape[0]
    losses = np.empty(steps + 1)
    for j in range(steps + 1):
        loss, g = numpy_loss_and_gradient(X, Y, Params(p0.A, V, W, p0.B))
        losses[j] = loss
        if j == steps:
            break
        V -= (lr * L) * g.V
        W -= (lr * L) * g.W
    return V, W, losses


def bench_train(*, L, m, q, n, lr, steps, seed=0, warmup=1, min_time=0.5, max_rounds=10, min_rounds=3, **_):
    X, Y = synthetic_data(n, q, np.random.default_rng(1000 + seed))
    p0 = initialize(q, m, L, np.random.default_rng(seed), kind="paper")
    p_t, losses_t = train(X, Y, p0, "tanh", lr=lr, steps=steps, train_outer=False)
    V_n, W_n, losses_n = numpy_train(X, Y, p0, lr=lr, steps=steps)
    diff = float(max(np.max(np.abs(losses_t - losses_n)), np.max(np.abs(p_t.V - V_n)), np.max(np.abs(p_t.W - W_n))))
    timing = dict(warmup=warmup, min_time=min_time, max_rounds=min(max_rounds, 10), min_rounds=min_rounds)
    ours = time_call(lambda: train(X, Y, p0, "tanh", lr=lr, steps=steps, train_outer=False), **timing)
    anchor = time_call(lambda: numpy_train(X, Y, p0, lr=lr, steps=steps), **timing)
    return {"family": FAMILY, "name": "implicit_train_vs_numpy", "kind": "train",
            "params": {"L": L, "m": m, "q": q, "n": n, "lr": lr, "steps": steps, "seed": seed,
                       "activation": "tanh", "init": "paper", "train_outer": False},
            "theory": ours.as_dict(), "numpy": anchor.as_dict(), "ratio": anchor.median / ours.median,
            "ratio_range": [anchor.q1 / ours.q3, anchor.q3 / ours.q1], "max_abs_diff": diff,
            "agree": diff <= TOLERANCE, "final_loss": float(losses_t[-1]), "target": None}


_COLD = """
import time, numpy as np
from theory.implicit import initialize, loss_and_gradient, synthetic_data
rng = np.random.default_rng(0)
p = initialize(4, 8, 8, rng, kind="iid")
X, Y = synthetic_data(4, 4, rng)
t0 = time.perf_counter()
loss_and_gradient(X, Y, p, "tanh")
print(time.perf_counter() - t0)
"""


def bench_compile():
    """First call in a fresh interpreter with an empty Numba cache (d = q = 4, m = 8, L = 8, n = 4)."""
    return {"family": FAMILY, "name": "cold first call (fresh interpreter, empty Numba cache)", "kind": "compile",
            "seconds": {"loss_and_gradient tanh": cold_first_call(_COLD)}}


# ------------------------------------------------------------------------------------------ printing


def _iqr(t):
    return f"{fmt_time(t['median'])} ({fmt_time(t['iqr'])}, {t['rounds']})"


def print_compile(r):
    rows = [[name, "failed" if t is None else fmt_time(t)] for name, t in r["seconds"].items()]
    print(format_table(["entry point", "first call"], rows, title="Cold JIT compilation, theory.implicit: first "
                       "call in a fresh interpreter with an empty Numba cache (d = q = 4, m = 8, L = 8, n = 4)"))
    print()


def print_gradient(r):
    p, t, n = r["params"], r["theory"], r["numpy"]
    rows = [[str(p["L"]), str(p["m"]), str(p["q"]), str(p["n"]), fmt_time(t["first_call"]), _iqr(t), _iqr(n),
             f"{r['ratio']:.2f}x", f"{r['ratio_range'][0]:.2f}-{r['ratio_range'][1]:.2f}",
             f">= {r['target']:g}: {'met' if r['target_met'] else 'NOT met'}"]]
    print(format_table(
        ["L", "m", "q = d = d'", "n", "theory 1st call", "theory median (IQR, rounds)", "NumPy median (IQR, rounds)",
         "NumPy/theory", "ratio IQR span", "target"],
        rows, title="One gradient step (loss + gradient, no update): theory.implicit.loss_and_gradient vs "
                    "vectorised NumPy (tanh)",
        align=[">"] * 9 + ["<"]))
    print("  'ratio IQR span' = NumPy q1 / theory q3 .. NumPy q3 / theory q1.")
    print(f"  {r['flops'] / 1e6:.1f} MFlop per step (matrix products only; the {p['L'] * p['n'] * p['m']} "
          f"activations come on top): {r['gflops']['theory']:.1f} GFlop/s for theory, {r['gflops']['numpy']:.1f} for "
          "NumPy.")
    worst = max(r["max_rel_diff"].values())
    print(f"  max |theory - NumPy| / max(1, max |NumPy|) over loss, A, V, W, B = {worst:.2e} "
          f"(tolerance {r['tolerance']:g}: {'agree' if r['agree'] else 'DISAGREE'}).")
    print()


def print_train(r):
    p, t, n = r["params"], r["theory"], r["numpy"]
    rows = [[str(p["L"]), str(p["m"]), str(p["q"]), str(p["n"]), str(p["steps"]), fmt_time(t["first_call"]),
             _iqr(t), _iqr(n), f"{r['ratio']:.2f}x", f"{r['ratio_range'][0]:.2f}-{r['ratio_range'][1]:.2f}"]]
    print(format_table(
        ["L", "m", "q = d = d'", "n", "steps", "theory 1st call", "theory median (IQR, rounds)",
         "NumPy median (IQR, rounds)", "NumPy/theory", "ratio IQR span"],
        rows, title="Reduced training of checks/test_implicit_reg.py: theory.implicit.train vs a NumPy GD loop "
                    "(tanh, lr = 0.05, A, B fixed)", align=[">"] * 10))
    print(f"  max |theory - NumPy| over losses, V, W = {r['max_abs_diff']:.2e} "
          f"({'agree' if r['agree'] else 'DISAGREE'} at {TOLERANCE:g}); final loss {r['final_loss']:.4g}. No target.")
    print()


def run(*, quick=False, timing=None):
    """Every theory.implicit benchmark of a configuration; prints the tables, returns the results."""
    cfg = QUICK if quick else FULL
    timing = timing or {}
    compile_result = bench_compile()
    print_compile(compile_result)
    grad = bench_gradient(**cfg["gradient"], **timing)
    print_gradient(grad)
    tr = bench_train(**cfg["train"], **timing)
    print_train(tr)
    return [compile_result, grad, tr]
