"""Oracle kernels: truncated signatures and the signature kernel (thesis (Marion), chapter 5; factorial normalization)."""

from __future__ import annotations

import numpy as np

from .._core import Case, Kernel, register
from ._common import _rng


def _signature_cases() -> list[Case]:
    cases = []
    for n, d, depth, seed, scale in ((2, 3, 6, 1, 0.5), (10, 2, 5, 2, 0.3), (100, 3, 4, 3, 0.1),
                                     (1000, 3, 6, 4, 0.01), (50, 1, 8, 5, 0.2), (20, 5, 3, 6, 0.4)):
        X = np.cumsum(_rng(seed).standard_normal((n, d)) * scale, axis=0)
        cases.append(Case(f"walk_n{n}_d{d}_depth{depth}", {"n": n, "d": d, "depth": depth, "seed": seed,
                                                           "law": f"random walk, N(0, {scale}^2) steps"},
                          {"path": X, "depth": depth}))
    cases.append(Case("constant_path", {"n": 5, "d": 2, "depth": 4, "law": "all points equal"},
                      {"path": np.ones((5, 2)), "depth": 4}))
    cases.append(Case("depth0", {"n": 3, "d": 2, "depth": 0, "law": "level 0 only"},
                      {"path": np.arange(6.0).reshape(3, 2), "depth": 0}))
    return cases


def _signature_ref(path, depth):
    from theory.signature import signature

    return (np.concatenate([np.ravel(s) for s in signature(path, depth)]),)


def _tv(path):
    return float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum())


def _signature_tol(inputs, ref, eps):
    path, depth = inputs["path"], int(inputs["depth"])
    return (16.0 * path.shape[0] * (depth + 1) * eps * max(1.0, _tv(path)) ** depth,)


register(Kernel(
    name="signature",
    module="theory.signature",
    signature="fn(path, depth) -> sig   (levels 0..depth of the factorial-normalized signature (level k = k! times "
              "the iterated integral), each level row-major, concatenated; path (n, d), piecewise linear)",
    outputs=("sig",),
    make_cases=_signature_cases,
    reference=_signature_ref,
    tolerance=_signature_tol,
    rule="max|sig - sig_ref| <= 16 n (depth + 1) eps max(1, TV)^depth, TV the path's total variation",
    why="level k has norm at most TV^k in this normalization; each of the n - 1 segment products (Chen's "
        "relation) adds at most depth + 1 rounded terms of that size per entry",
))


def _kernel_cases() -> list[Case]:
    cases = []
    for n, d, depth, seed, scale in ((2, 2, 10, 7, 0.6), (30, 3, 5, 8, 0.2), (200, 2, 6, 9, 0.05),
                                     (1000, 3, 6, 10, 0.01)):
        r = _rng(seed)
        X = np.cumsum(r.standard_normal((n, d)) * scale, axis=0)
        Y = np.cumsum(r.standard_normal((n, d)) * scale, axis=0)
        cases.append(Case(f"walks_n{n}_d{d}_depth{depth}", {"n": n, "d": d, "depth": depth, "seed": seed},
                          {"path_x": X, "path_y": Y, "depth": depth}))
    return cases


def _kernel_ref(path_x, path_y, depth):
    from theory.signature import kernel

    return (np.array(kernel(path_x, path_y, depth)),)


def _kernel_tol(inputs, ref, eps):
    X, Y, depth = inputs["path_x"], inputs["path_y"], int(inputs["depth"])
    g = max(1.0, _tv(X)) * max(1.0, _tv(Y))
    return (32.0 * (X.shape[0] + Y.shape[0]) * (depth + 1) ** 2 * eps * g ** depth,)


register(Kernel(
    name="signature_kernel",
    module="theory.signature",
    signature="fn(path_x, path_y, depth) -> k   (sum over levels 0..depth of <X^k, Y^k>, factorial "
              "normalization, paths as given (no time augmentation))",
    outputs=("k",),
    make_cases=_kernel_cases,
    reference=_kernel_ref,
    tolerance=_kernel_tol,
    rule="|k - k_ref| <= 32 (n_x + n_y) (depth + 1)^2 eps (max(1, TV_x) max(1, TV_y))^depth",
    why="the kernel is a sum over depth + 1 levels of inner products of two signatures, each entry within the "
        "signature rule; Cauchy-Schwarz bounds level k's inner product by (TV_x TV_y)^k",
))


# in-context AR learning (theory.icl, thesis chapter 6): the exact population losses


def _icl_rows():
    rows = []
    for context, d, T, seed in (("unitary", 1, 2, 71), ("unitary", 3, 5, 72), ("unitary", 10, 15, 73),
                                ("orthogonal", 2, 3, 74), ("orthogonal", 4, 6, 75), ("orthogonal", 10, 15, 76)):
        r = _rng(seed)
        rows.append((f"{context}_d{d}_T{T}", {"seed": seed, "d": d, "T": T, "context": context,
                                              "law": "C ~ N(0, 1/d), p ~ N(0, 1)"},
                     {"C": r.standard_normal((d, d)) / np.sqrt(d), "p": r.standard_normal(T), "context": context}))
    r = _rng(77)
    rows.append(("unitary_large_C_d3_T4", {"seed": 77, "d": 3, "T": 4, "context": "unitary", "law": "C ~ N(0, 1e6)"},
                 {"C": 1e3 * r.standard_normal((3, 3)), "p": r.standard_normal(4), "context": "unitary"}))
    return rows


def _icl_scale(C, p):
    # |each merged coefficient| <= S = max_i sum_t sum_j |p_t C_ij| + 1
    return float(np.max(np.abs(C).sum(axis=1)) * np.abs(p).sum()) + 1.0


def _icl_loss_tol(inputs, ref, eps):
    C, p = inputs["C"], inputs["p"]
    d, T = C.shape[0], p.shape[0]
    S = _icl_scale(C, p)
    base = 8.0 * (T * d + d) * eps * S
    return (base * d * S, base * 2.0 * float(np.abs(p).sum()), base * 2.0 * float(np.max(np.abs(C).sum(axis=1))) * d)


def _icl_loss_ref(C, p, context):
    from theory.icl import expected_loss

    loss, gC, gp = expected_loss(C, p, context, return_gradient=True)
    return (np.asarray(loss), gC, gp)


register(Kernel(
    name="icl_expected_loss",
    module="theory.icl",
    signature="fn(C, p, context) -> (loss, dC, dp)   (exact E||sum_t p_t C lambda^(t-T+1) * lambda^(t-1) - lambda^T||^2 "
              "over unitary or orthogonal (conjugate-pair) contexts, and its gradient)",
    outputs=("loss", "dC", "dp"),
    make_cases=lambda: [Case(*row) for row in _icl_rows()],
    reference=_icl_loss_ref,
    tolerance=_icl_loss_tol,
    rule="|loss - ref| <= 8 (T d + d) eps d S^2; gradients: 8 (T d + d) eps S 2 ||p||_1 (dC), "
         "8 (T d + d) eps S 2 d max_i ||C_i||_1 (dp); S = max_i sum_(t,j) |p_t C_ij| + 1",
    why=("the loss is a sum over merged monomials of squared coefficients, each a sum of at most T d products "
         "p_t C_ij minus 0 or 1 and bounded by S; rounding each coefficient costs (T d) eps S, squaring and summing "
         "the d coordinates' coefficients multiplies by 2 d S; the gradient entries are sums of 2 coef p_t or "
         "2 coef C_ij"),
))
