"""Speed of the exact expectations of ``theory.icl`` (paper key ``icl-ar``) against Monte Carlo at equal error.

The population loss l_T(C, p) of Prop. 6.8's setting (unitary contexts, Lemma 6.6's output, target λ^T) is
computed three ways in the same run:

* ``expected_loss``: the exact expectation by merged monomials (E[z^a conj(z)^b] = δ_ab), Numba kernel;
* ``quadratic_loss``: the closed form of Prop. 6.8 (as corrected);
* Monte Carlo: the sample mean of ||output - λ^T||² over n i.i.d. contexts (vectorised NumPy).

Monte Carlo's standard error is σ/√n, σ² the variance of one sample (estimated from the batch), so reaching an
error ε needs n = σ²/ε² samples; its time at ε is n times the measured per-sample cost. The ratio reported is
(Monte Carlo time at ε) / (exact time), at ε = 1e-10 (the exact results agree with each other to ~1e-15
relative, so their error is far below ε). Timings: interleaved repeats (exact, closed form, Monte Carlo batch
in turn), minimum over the repeats. The machine is shared with other jobs: absolute times are noisy, ratios
less so.

Run ``python benchmarks/bench_icl.py [--quick]``; writes a markdown table to stdout and benchmarks/out/bench_icl.md.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from theory.icl import expected_loss, quadratic_loss, unitary_contexts

FULL = {"sizes": [(3, 5), (10, 15), (20, 30)], "batch": 20000, "repeats": 5, "eps": 1e-10}
QUICK = {"sizes": [(3, 5), (10, 15)], "batch": 5000, "repeats": 3, "eps": 1e-10}


def _mc_samples(C, p, lam):
    T = len(p)
    t = np.arange(1, T + 1)
    key = lam[:, None, :] ** (t - T + 1)[None, :, None]  # (n, T, d): λ_j^{t-T+1}
    val = lam[:, None, :] ** (t - 1)[None, :, None]
    out = np.einsum("t,ij,ntj,nti->ni", p, C, key, val)
    return np.sum(np.abs(out - lam ** T) ** 2, axis=1)


def _best(fn, inner):
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner


def bench(d, T, *, batch, repeats, eps, seed=0):
    rng = np.random.default_rng(seed)
    C, p = rng.normal(size=(d, d)) / np.sqrt(d), rng.normal(size=T) / np.sqrt(T)
    lam = unitary_contexts(d, batch, rng)
    exact = expected_loss(C, p)  # warm (JIT)
    closed = quadratic_loss(C, p)
    samples = _mc_samples(C, p, lam)
    t_exact, t_closed, t_mc = np.inf, np.inf, np.inf
    for _ in range(repeats):  # interleaved
        t_exact = min(t_exact, _best(lambda: expected_loss(C, p), 200))
        t_closed = min(t_closed, _best(lambda: quadratic_loss(C, p), 200))
        t_mc = min(t_mc, _best(lambda: _mc_samples(C, p, lam), 1))
    per_sample = t_mc / batch
    var = float(samples.var(ddof=1))
    n_needed = var / eps ** 2
    mc_time = n_needed * per_sample
    return {"d": d, "T": T, "exact": exact, "closed_rel": abs(closed - exact) / exact,
            "mc_mean": float(samples.mean()), "mc_se": float(np.sqrt(var / batch)),
            "mc_err": abs(float(samples.mean()) - exact), "sigma": np.sqrt(var), "t_exact": t_exact,
            "t_closed": t_closed, "per_sample": per_sample, "n_needed": n_needed, "mc_time": mc_time,
            "ratio": mc_time / t_exact, "ratio_closed": mc_time / t_closed, "batch": batch, "eps": eps}


def table(rows):
    head = ("| d | T | exact l_T | merged-monomial time | closed-form time | MC σ per sample | MC n for ε | "
            "MC time for ε | ratio MC/exact | ratio MC/closed | MC check (batch) |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        lines.append(
            f"| {r['d']} | {r['T']} | {r['exact']:.6g} | {r['t_exact'] * 1e6:.1f} µs | {r['t_closed'] * 1e6:.1f} µs | "
            f"{r['sigma']:.3g} | {r['n_needed']:.2e} | {r['mc_time']:.2e} s ({r['mc_time'] / 86400 / 365:.1f} yr) | "
            f"{r['ratio']:.1e} | {r['ratio_closed']:.1e} | |mean - exact| = {r['mc_err']:.2g} "
            f"({r['mc_err'] / r['mc_se']:.1f} s.e., n = {r['batch']}) |")
    return "\n".join(lines)


def run(*, quick=False):
    cfg = QUICK if quick else FULL
    rows = [bench(d, T, batch=cfg["batch"], repeats=cfg["repeats"], eps=cfg["eps"]) for d, T in cfg["sizes"]]
    text = (f"## theory.icl: exact expectation vs Monte Carlo at equal error ε = {cfg['eps']:g}\n\n{table(rows)}\n\n"
            "Monte Carlo time at ε = (σ²/ε²) × measured per-sample cost; minimum over interleaved repeats; a shared, "
            "loaded machine.\n")
    print(text)
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    (out / "bench_icl.md").write_text(text)
    return rows


if __name__ == "__main__":
    import sys

    run(quick="--quick" in sys.argv)
