"""Oracle kernels: depth-N residual networks (theory.resnet): forward, reverse, gradient; Euler and Heun."""

from __future__ import annotations

import numpy as np

from .._core import Case, Kernel, register
from ._common import _rng


def _resnet_rows(long=False):
    rows = []
    d = 4
    for scheme in ("euler", "heun"):
        for residual in ("linear", "tanh", "tanh_out"):
            for N, seed in ((1, 31), (10, 32), (100, 33)):
                r = _rng(seed)
                slices = N + 1 if scheme == "heun" else N
                theta = r.standard_normal((slices, d, d)) / np.sqrt(d)
                x0 = r.standard_normal(d)
                rows.append((f"{scheme}_{residual}_N{N}",
                             {"seed": seed, "N": N, "d": d, "scheme": scheme, "residual": residual,
                              "law": "theta ~ N(0, 1/d), x0 ~ N(0, 1)"},
                             {"x0": x0, "theta": theta, "residual": residual, "scheme": scheme}))
            if long:
                N, seed = 10_000, 34
                r = _rng(seed)
                slices = N + 1 if scheme == "heun" else N
                s = np.linspace(0, 1, slices)[:, None, None]
                theta = np.cos(2 * np.pi * s) * r.standard_normal((1, d, d)) / np.sqrt(d)
                rows.append((f"{scheme}_{residual}_N10000",
                             {"seed": seed, "N": N, "d": d, "scheme": scheme, "residual": residual,
                              "law": "theta_n = cos(2 pi n/N) A, A ~ N(0, 1/d) (smooth in depth)"},
                             {"x0": r.standard_normal(d), "theta": theta, "residual": residual, "scheme": scheme}))
    r = _rng(35)
    rows.append(("euler_tanh_out_large_theta_N50",
                 {"seed": 35, "N": 50, "d": 4, "scheme": "euler", "residual": "tanh_out", "law": "theta ~ N(0, 9/d)"},
                 {"x0": r.standard_normal(4), "theta": 3 * r.standard_normal((50, 4, 4)) / 2, "residual": "tanh_out",
                  "scheme": "euler"}))
    return rows


def _lipschitz_sum(theta):
    """Lambda = mean over layers of ||theta_n||_inf: the flow amplifies errors by at most exp(Lambda)."""
    return float(np.mean(np.max(np.sum(np.abs(theta), axis=-1), axis=-1)))


def _resnet_traj_tolerance(inputs, ref, eps):
    theta = inputs["theta"]
    N, d = theta.shape[0], theta.shape[-1]
    return (4.0 * (N + d) * eps * float(np.max(np.abs(ref[0]))) * np.exp(_lipschitz_sum(theta)),)


_RESNET_WHY = ("each layer rounds x_n + f(x_n, theta_n)/N (a d-term dot product and an addition) by about "
               "(d + 1) eps max|x|, and the discrete flow amplifies an error made at layer n by at most "
               "prod (1 + Lip_m/N) <= exp(Lambda) with Lip_m <= ||theta_m||_inf for the linear, tanh and tanh_out "
               "residuals; N layers add up to N of these")


def _resnet_forward_ref(x0, theta, residual, scheme):
    from theory.resnet import forward

    return (forward(x0, theta, residual, scheme),)


register(Kernel(
    name="resnet_forward",
    module="theory.resnet",
    signature="fn(x0, theta, residual, scheme) -> x   (trajectory (N+1, d); theta (N, d, d), (N+1, d, d) for heun)",
    outputs=("x",),
    make_cases=lambda: [Case(*row) for row in _resnet_rows(long=True)],
    reference=_resnet_forward_ref,
    tolerance=_resnet_traj_tolerance,
    rule="max|x - x_ref| <= 4 (N + d) eps max|x_ref| exp(Lambda), Lambda = mean_n ||theta_n||_inf",
    why=_RESNET_WHY,
))


def _reverse_cases():
    from theory.resnet import forward

    cases = []
    for name, params, inputs in _resnet_rows(long=False):
        xN = forward(inputs["x0"], inputs["theta"], inputs["residual"], inputs["scheme"])[-1]
        cases.append(Case(name, {**params, "xN": "forward(x0, theta)[-1]"},
                          {"xN": xN, "theta": inputs["theta"], "residual": inputs["residual"],
                           "scheme": inputs["scheme"]}))
    return cases


def _resnet_reverse_ref(xN, theta, residual, scheme):
    from theory.resnet import reverse

    return (reverse(xN, theta, residual, scheme),)


register(Kernel(
    name="resnet_reverse",
    module="theory.resnet",
    signature="fn(xN, theta, residual, scheme) -> x   (the reverse-time reconstruction, (N+1, d))",
    outputs=("x",),
    make_cases=_reverse_cases,
    reference=_resnet_reverse_ref,
    tolerance=_resnet_traj_tolerance,
    rule="max|x - x_ref| <= 4 (N + d) eps max|x_ref| exp(Lambda), Lambda = mean_n ||theta_n||_inf",
    why=_RESNET_WHY + " (backwards in depth)",
))


def _gradient_cases():
    cases = []
    for name, params, inputs in _resnet_rows(long=False):
        r = _rng(params["seed"] + 100)
        cases.append(Case(name, {**params, "y": "N(0, 1), seed + 100"},
                          {"x0": inputs["x0"], "theta": inputs["theta"], "y": r.standard_normal(4),
                           "residual": inputs["residual"], "scheme": inputs["scheme"]}))
    return cases


def _resnet_gradient_ref(x0, theta, y, residual, scheme):
    from theory.resnet import gradient

    return tuple(gradient(x0, theta, y, residual, scheme, method="backprop"))


def _resnet_gradient_tolerance(inputs, ref, eps):
    from theory.resnet import forward

    theta = inputs["theta"]
    N, d = theta.shape[0], theta.shape[-1]
    x = forward(inputs["x0"], theta, inputs["residual"], inputs["scheme"])
    amp = np.exp(2.0 * _lipschitz_sum(theta))
    r = float(np.max(np.abs(x[-1] - inputs["y"])))
    scale = max(1.0, float(np.max(np.abs(x))))
    base = 8.0 * (N + d) * eps * amp
    return (base * (float(np.max(np.abs(ref[0]))) + r * scale / N), base * (float(np.max(np.abs(ref[1]))) + r))


register(Kernel(
    name="resnet_gradient",
    module="theory.resnet",
    signature="fn(x0, theta, y, residual, scheme) -> (grad_theta, grad_x0)   (of 1/2 ||x_N - y||^2, exact backprop)",
    outputs=("grad_theta", "grad_x0"),
    make_cases=_gradient_cases,
    reference=_resnet_gradient_ref,
    tolerance=_resnet_gradient_tolerance,
    rule="max|g - g_ref| <= 8 (N + d) eps exp(2 Lambda) (max|g_ref| + |x_N - y|_inf max(1, max|x|)/N) "
         "(grad_x0: without the 1/N and max|x|)",
    why=_RESNET_WHY + "; the backward pass propagates the residual x_N - y through the transposed layer Jacobians "
        "(another factor exp(Lambda)) and each parameter gradient is an outer product with x_n scaled by 1/N",
))


def _adjoint_cases():
    cases = _gradient_cases()
    r = _rng(36)
    for scheme in ("euler", "heun"):
        N = 2000
        slices = N + 1 if scheme == "heun" else N
        s = np.linspace(0, 1, slices)[:, None, None]
        theta = np.cos(2 * np.pi * s) * r.standard_normal((1, 4, 4)) / 2
        cases.append(Case(f"{scheme}_tanh_N2000", {"seed": 36, "N": N, "d": 4, "scheme": scheme, "residual": "tanh",
                                                   "law": "theta_n = cos(2 pi n/N) A, A ~ N(0, 1/d) (smooth in depth)",
                                                   "y": "N(0, 1)"},
                          {"x0": r.standard_normal(4), "theta": theta, "y": r.standard_normal(4), "residual": "tanh",
                           "scheme": scheme}))
    return cases


def _resnet_adjoint_ref(x0, theta, y, residual, scheme):
    from theory.resnet import gradient

    return tuple(gradient(x0, theta, y, residual, scheme, method="adjoint"))


def _resnet_adjoint_tolerance(inputs, ref, eps):
    g_theta, g_x0 = _resnet_gradient_tolerance(inputs, ref, eps)
    amp = np.exp(_lipschitz_sum(inputs["theta"]))  # the reverse-time reconstruction: one more flow
    return (g_theta * amp, g_x0 * amp)


register(Kernel(
    name="resnet_gradient_adjoint",
    module="theory.resnet",
    signature="fn(x0, theta, y, residual, scheme) -> (grad_theta, grad_x0)   (the memory-free adjoint: x_N "
              "forward, then x_n rebuilt by the reverse-time scheme while backpropagating)",
    outputs=("grad_theta", "grad_x0"),
    make_cases=_adjoint_cases,
    reference=_resnet_adjoint_ref,
    tolerance=_resnet_adjoint_tolerance,
    rule="the resnet_gradient rule times exp(Lambda): "
         "max|g - g_ref| <= 8 (N + d) eps exp(3 Lambda) (max|g_ref| + |x_N - y|_inf max(1, max|x|)/N)",
    why=_RESNET_WHY + "; the adjoint reconstructs x_n backwards from x_N (the reverse scheme, another factor "
        "exp(Lambda) on the rounding errors) before backpropagating along the reconstruction. The adjoint differs "
        "from the exact gradient by O(1/N^2) per Euler slice and O(Delta_theta/N^2 + 1/N^3) per Heun slice (Prop. 4 "
        "and 6 of the resnet-node paper), far above this rounding rule at small N: an exact backprop fails these "
        "vectors and an adjoint fails resnet_gradient's",
))
