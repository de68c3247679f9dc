"""Oracle kernels: the residual network of implicit-reg (theory.implicit): forward and loss gradient."""

from __future__ import annotations

import numpy as np

from .._core import Case, Kernel, register
from ._common import _rng


def _implicit_cases():
    cases = []
    for activation in ("tanh", "relu", "gelu", "sin", "identity"):
        for L, n, d, q, m, seed in ((1, 3, 2, 4, 3, 91), (10, 5, 3, 6, 5, 92), (200, 4, 2, 5, 4, 93)):
            r = _rng(seed)
            inputs = {"X": r.standard_normal((n, d)), "Y": r.standard_normal((n, 2)),
                      "A": r.standard_normal((q, d)) / np.sqrt(d), "V": r.standard_normal((L, q, m)),
                      "W": r.standard_normal((L, m, q)), "B": r.standard_normal((2, q)) / np.sqrt(q),
                      "activation": activation}
            cases.append(Case(f"{activation}_L{L}_q{q}_m{m}",
                              {"seed": seed, "L": L, "n": n, "d": d, "q": q, "m": m, "activation": activation,
                               "law": "entries N(0,1) (A, B scaled by 1/sqrt(fan-in)); X, Y ~ N(0,1)"}, inputs))
    return cases


def _implicit_growth(V, W):
    L, q, m = V.shape
    nV = np.max(np.sum(np.abs(V), axis=-1), axis=-1)
    nW = np.max(np.sum(np.abs(W), axis=-1), axis=-1)
    return float(np.exp(np.sum(np.log1p(nV * nW / (L * np.sqrt(m * q))))))


def _implicit_forward_ref(X, Y, A, V, W, B, activation):
    from theory.implicit import forward

    h, F = forward(X, {"A": A, "V": V, "W": W, "B": B}, activation)
    return (h, F)


def _implicit_forward_tol(inputs, ref, eps):
    V, W, B = inputs["V"], inputs["W"], inputs["B"]
    L, q, m = V.shape
    base = 4.0 * (L + m + q + inputs["X"].shape[1]) * eps * _implicit_growth(V, W) * float(np.max(np.abs(ref[0])))
    return (base, base * float(np.max(np.sum(np.abs(B), axis=-1))))


def _implicit_gradient_ref(X, Y, A, V, W, B, activation):
    from theory.implicit import loss_and_gradient

    loss, g = loss_and_gradient(X, Y, {"A": A, "V": V, "W": W, "B": B}, activation)
    return (np.asarray(loss), g.A, g.V, g.W, g.B)


def _implicit_gradient_tol(inputs, ref, eps):
    from theory.implicit import forward

    X, Y, V, W, B = inputs["X"], inputs["Y"], inputs["V"], inputs["W"], inputs["B"]
    L, q, m = V.shape
    h, F = forward(X, {"A": inputs["A"], "V": V, "W": W, "B": B}, inputs["activation"])
    G = _implicit_growth(V, W)
    nB = float(np.max(np.sum(np.abs(B), axis=-1)))
    R = float(np.max(np.abs(F - Y)))
    S = max(1.0, float(np.max(np.abs(h))), float(np.max(np.abs(X))))
    base = 8.0 * (L + m + q + X.shape[0] + X.shape[1]) * eps * G * G
    loss_tol = base * (float(ref[0]) + R * nB * S)
    return (loss_tol,) + tuple(base * (float(np.max(np.abs(g))) + 2.0 * R * nB * S * S) for g in ref[1:])


_IMPLICIT_WHY = ("layer k adds V_k sigma(W_k h / sqrt q) / (L sqrt m): two dot products of m and q terms, and a "
                 "Lipschitz constant of at most 1 + ||V_k|| ||W_k|| / (L sqrt(m q)) (the activations are "
                 "1-Lipschitz), so errors grow by at most G = prod_k of these; the backward pass multiplies by G again "
                 "and scales the residual F - Y by ||B|| and the states")

register(Kernel(
    name="implicit_forward",
    module="theory.implicit",
    signature="fn(X, Y, A, V, W, B, activation) -> (h, F)   (h (L+1, n, q), F (n, d'); Y unused)",
    outputs=("h", "F"),
    make_cases=_implicit_cases,
    reference=_implicit_forward_ref,
    tolerance=_implicit_forward_tol,
    rule="max|h - h_ref| <= 4 (L + m + q + d) eps G max|h_ref| (F: times ||B||_inf), "
         "G = prod_k (1 + ||V_k||_inf ||W_k||_inf / (L sqrt(m q)))",
    why=_IMPLICIT_WHY,
))

register(Kernel(
    name="implicit_gradient",
    module="theory.implicit",
    signature="fn(X, Y, A, V, W, B, activation) -> (loss, dA, dV, dW, dB)   (loss (1/n) sum ||F(x_i) - y_i||^2)",
    outputs=("loss", "dA", "dV", "dW", "dB"),
    make_cases=_implicit_cases,
    reference=_implicit_gradient_ref,
    tolerance=_implicit_gradient_tol,
    rule="max|g - g_ref| <= 8 (L + m + q + n + d) eps G^2 (max|g_ref| + 2 |F - Y|_inf ||B||_inf S^2), "
         "S = max(1, max|h|, max|X|) (loss: S instead of 2 S^2)",
    why=_IMPLICIT_WHY,
))
