"""Oracle kernels: scaled ResNets at initialisation (theory.scaling.forward)."""

from __future__ import annotations

import numpy as np

from .._core import Case, Kernel, register
from ._common import _rng


def _scaling_cases():
    cases = []
    d = 4
    for arch, activations in (("res1", ("relu", "tanh", "leaky_relu", "identity")), ("res2", ("relu", "tanh")),
                              ("res3", ("relu",))):
        for activation in activations:
            for L, beta, seed in ((1, 0.5, 71), (100, 0.5, 72), (1000, 1.0, 73)):
                r = _rng(seed)
                V = r.standard_normal((L, d, d)) / np.sqrt(d)
                W = None if arch == "res1" else r.standard_normal((L, d, d)) / np.sqrt(d)
                inputs = {"h0": r.standard_normal(d), "V": V, "beta": beta, "arch": arch, "activation": activation}
                if W is not None:
                    inputs["W"] = W
                else:
                    inputs["W"] = np.zeros((0,))  # res1 has no W: an empty array stands for None
                cases.append(Case(f"{arch}_{activation}_L{L}_beta{beta}",
                                  {"seed": seed, "L": L, "d": d, "beta": beta, "arch": arch, "activation": activation,
                                   "law": "V, W ~ N(0, 1/d) entries, h0 ~ N(0, 1)"}, inputs))
    return cases


def _scaling_ref(h0, V, W, beta, arch, activation):
    from theory.scaling import forward

    return (forward(h0, V, None if W.size == 0 else W, beta, arch, activation),)


def _activation_slope(activation, z):
    if activation == "relu":
        return (z > 0).astype(float)
    if activation == "leaky_relu":
        return np.where(z > 0, 1.0, 0.8)  # the package's default negative slope
    if activation == "tanh":
        return 1.0 - np.tanh(z) ** 2
    return np.ones_like(z)


def _scaling_tol(inputs, ref, eps):
    """Amplification max_l ||d h_L / d h_l||_inf from the layer Jacobians I + L^-beta V_l diag(sigma') W_l along
    the reference trajectory, accumulated from the top."""
    V, W, beta, h = inputs["V"], inputs["W"], inputs["beta"], ref[0]
    L, d = V.shape[0], V.shape[-1]
    alpha = L ** (-beta)
    A = np.eye(d)
    amp = 1.0
    for l in range(L - 1, -1, -1):
        if W.size == 0:
            J = np.eye(d) + alpha * V[l] * _activation_slope(inputs["activation"], h[l])[None, :]
        else:
            J = np.eye(d) + alpha * (V[l] * _activation_slope(inputs["activation"], W[l] @ h[l])[None, :]) @ W[l]
        A = A @ J
        amp = max(amp, float(np.max(np.sum(np.abs(A), axis=1))))
    return (4.0 * (L + 2 * d) * eps * float(np.max(np.abs(h))) * amp,)


register(Kernel(
    name="scaling_forward",
    module="theory.scaling",
    signature="fn(h0, V, W, beta, arch, activation) -> h   ((L+1, d); W empty (shape (0,)) for res1, meaning none)",
    outputs=("h",),
    make_cases=_scaling_cases,
    reference=_scaling_ref,
    tolerance=_scaling_tol,
    rule="max|h - h_ref| <= 4 (L + 2d) eps max|h_ref| max_l ||d h_L / d h_l||_inf",
    why="each layer h + L^-beta V sigma(W h) rounds two d-term dot products and an addition (about 2d eps "
        "max|h|), and an error made at layer l reaches the output multiplied by the Jacobian of the remaining "
        "layers, the product of I + L^-beta V_k diag(sigma'(W_k h_k)) W_k along the reference trajectory (its "
        "largest infinity norm over l is the condition number used; the worst-case product of layer Lipschitz "
        "constants would be exp(L^(1-beta) ||V|| ||W||), astronomically loose for beta = 1/2)",
))
