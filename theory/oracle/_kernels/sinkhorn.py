"""Oracle kernels: sinkhorn attention (theory.sinkhorn; the sinkformers chapter of Sander's thesis): the doubly stochastic limit and the three attention fields (kernel K^0 / n, row SoftMax K^1, Sinkhorn K^infinity)."""

from __future__ import annotations

import numpy as np

from .._core import Case, Kernel, register
from ._common import _rng


#: the column-sum error at which the reference stops (theory.sinkhorn.sinkhorn's default); a user's limit
#: must be as converged
SINKHORN_TOL = 1e-13


def _sinkhorn_matrix_cases():
    cases = []

    def add(name, C, **params):
        cases.append(Case(name, params, {"C": np.asarray(C, dtype=np.float64)}))

    for n, scale, seed in ((2, 1.0, 101), (5, 1.0, 102), (30, 1.0, 103), (200, 1.0, 104), (50, 5.0, 105)):
        add(f"gauss_n{n}_scale{scale:g}", scale * _rng(seed).standard_normal((n, n)), n=n, seed=seed,
            law=f"C_ij ~ N(0, {scale ** 2:g})", regime="slow mixing (gap ~ 0.03)" if scale > 1 else "generic")
    add("n1", [[0.3]], n=1, law="a single logit (K = [[1]])")
    r = _rng(106)
    a, b = r.standard_normal(8), r.standard_normal(8)
    add("separable_n8", a[:, None] + b[None, :], n=8, seed=106, law="C_ij = a_i + b_j (limit: all entries 1/n)")
    A = _rng(107).standard_normal((10, 10))
    add("symmetric_n10", (A + A.T) / 2, n=10, seed=107, law="symmetric C")
    add("constant_n6", np.full((6, 6), 7.5), n=6, law="constant logits (ties everywhere)")
    add("huge_offset_n6", 1e300 + _rng(108).standard_normal((6, 6)), n=6, seed=108,
        law="N(0, 1) + 1e300 (rounds to a constant: the limit is uniform)")
    return cases


def _gap(K):
    """1 - sigma_2(K) for a doubly stochastic K (sigma_1 = 1): the spectral gap of the scaling problem."""
    if K.shape[0] == 1:
        return 1.0
    s2 = np.linalg.eigvalsh(K @ K.T)  # squared singular values, increasing
    return max(float(1.0 - np.sqrt(max(s2[-2], 0.0))), 1e-300)


def _sinkhorn_ref(C):
    from theory.sinkhorn import sinkhorn

    return (sinkhorn(C, tol=SINKHORN_TOL),)


def _spread(C):
    return float(np.max(C) - np.min(C))


def _sinkhorn_tol(inputs, ref, eps):
    C, K = inputs["C"], ref[0]
    n = C.shape[0]
    gap = _gap(K)
    return ((8.0 * (n + 2) * eps * (1.0 + _spread(C)) + 4.0 * SINKHORN_TOL) * float(np.max(K)) / gap,)


_SINKHORN_WHY = ("the limit is K = exp(C + f 1^T + 1 g^T) with potentials f, g fixing unit row and column sums; a "
                 "perturbation dC (rounding: about n eps (1 + spread(C)) in the log domain, the log-sum-exps of "
                 "n terms of size spread(C)) changes log K by dC plus the change of the potentials, which solve a "
                 "linear system whose smallest nonzero eigenvalue is the spectral gap 1 - sigma_2(K); so |dK| <= "
                 "(|dC| + 2|dC|/gap) max K. Stopping at a column-sum error tau leaves the iterate within about "
                 "tau/gap of the limit, tau = 1e-13 for the reference and for the implementation under test")

register(Kernel(
    name="sinkhorn",
    module="theory.sinkhorn",
    signature="fn(C) -> K   (Sinkhorn's limit of exp(C), rows normalised first: unit row and column sums, "
              "converged to column sums within 1e-13)",
    outputs=("K",),
    make_cases=_sinkhorn_matrix_cases,
    reference=_sinkhorn_ref,
    tolerance=_sinkhorn_tol,
    rule="max|K - K_ref| <= (8 (n + 2) eps (1 + spread(C)) + 4e-13) max K_ref / (1 - sigma_2(K_ref)), "
         "spread = max C - min C",
    why=_SINKHORN_WHY,
))


def _attention_cases():
    cases = []
    m, d = 3, 4
    rows = []
    for n, scale, seed in ((1, 1.0, 111), (5, 1.0, 112), (30, 1.0, 113), (200, 1.0, 114), (20, 2.5, 115)):
        r = _rng(seed)
        rows.append((f"n{n}" + ("" if scale == 1.0 else f"_large_logits_x{scale:g}"),
                     {"seed": seed, "n": n, "d": d, "m": m, "law": f"X ~ N(0, {scale ** 2:g}); W ~ N(0, 1/d)"},
                     {"X": scale * r.standard_normal((n, d)), "WQ": r.standard_normal((m, d)) / np.sqrt(d),
                      "WK": r.standard_normal((m, d)) / np.sqrt(d), "WV": r.standard_normal((d, d)) / np.sqrt(d)}))
    r = _rng(116)
    WQ = r.standard_normal((d, d)) / np.sqrt(d)
    rows.append(("assumption_5_2_n12", {"seed": 116, "n": 12, "d": d, "m": d,
                                        "law": "WK = WQ, WV = -WQ^T WK (symmetric: the energy's gradient field)"},
                 {"X": r.standard_normal((12, d)), "WQ": WQ, "WK": WQ, "WV": -WQ.T @ WQ}))
    x = r.standard_normal(d)
    rows.append(("identical_tokens_n7", {"seed": 116, "n": 7, "d": d, "m": m, "law": "seven copies of one token"},
                 {"X": np.tile(x, (7, 1)), "WQ": r.standard_normal((m, d)), "WK": r.standard_normal((m, d)),
                  "WV": r.standard_normal((d, d))}))
    for name, params, inputs in rows:
        for kind in ("kernel", "softmax", "sinkhorn"):
            cases.append(Case(f"{kind}_{name}", {**params, "kind": kind}, {**inputs, "kind": kind}))
    return cases


def _attention_ref(X, WQ, WK, WV, kind):
    from theory.sinkhorn import attention

    return (attention(X, WQ, WK, WV, kind, tol=SINKHORN_TOL),)


def _attention_tol(inputs, ref, eps):
    from theory.sinkhorn import logits, sinkhorn

    X, WQ, WK, WV, kind = inputs["X"], inputs["WQ"], inputs["WK"], inputs["WV"], inputs["kind"]
    n, d = X.shape
    m = WQ.shape[0]
    C = logits(X, WQ, WK)
    Cabs = float(np.max((np.abs(X) @ np.abs(WQ).T) @ (np.abs(X) @ np.abs(WK).T).T))  # bound on the logits' terms
    Vabs = np.max(np.abs(X) @ np.abs(WV).T, axis=1)  # max_k (|X||WV|^T)_jk per token j
    conv = 0.0
    if kind == "kernel":
        A, g = np.exp(C) / n, 1.0
    elif kind == "softmax":
        A, g = np.exp(C - np.max(C, axis=1, keepdims=True)), 2.0
        A /= A.sum(axis=1, keepdims=True)
    else:
        A = sinkhorn(C, tol=SINKHORN_TOL)
        gap = _gap(A)
        g = 1.0 + 2.0 / gap
        conv = 4.0 * SINKHORN_TOL * n * float(np.max(Vabs)) / gap
    S = float(np.max(A @ Vabs))
    return (8.0 * eps * S * ((n + m + d) + (m + d) * g * Cabs) + conv,)


register(Kernel(
    name="sinkhorn_attention",
    module="theory.sinkhorn",
    signature="fn(X, WQ, WK, WV, kind) -> T   ((n, d); T_i = sum_j A_ij WV x_j with C = (X WQ^T)(X WK^T)^T and "
              "A = exp(C)/n (kind 'kernel'), the row SoftMax of C ('softmax') or Sinkhorn's limit ('sinkhorn'))",
    outputs=("T",),
    make_cases=_attention_cases,
    reference=_attention_ref,
    tolerance=_attention_tol,
    rule="max|T - T_ref| <= 8 eps max_i sum_j A_ij v_j ((n + m + d) + (m + d) g |C|max) (+ 4e-13 n max v / gap for "
         "'sinkhorn'); v_j = max_k (|X||WV|^T)_jk, g = 1 kernel, 2 softmax, 1 + 2/gap sinkhorn, "
         "|C|max = max (|X||WQ|^T)(|X||WK|^T)^T",
    why="a logit is a sum of m d products, rounded by about (m + d) eps |C|max; the kernel exp(C) turns that into a "
        "relative error of the same size per entry, the row SoftMax into at most twice it (numerator and "
        "normaliser), Sinkhorn's limit into (1 + 2/gap) times it (the potentials, see the sinkhorn kernel); the "
        "product with the values X WV^T adds n + d rounding terms of size max|X||WV|^T",
))
