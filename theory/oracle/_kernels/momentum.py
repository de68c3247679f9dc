"""Oracle kernels: momentum ResNets (theory.momentum; Sander's thesis, chapter 4): forward map (4.2), its inverse (4.3), the gradient by backpropagation, and the time-1 map Psi_eps of the linear second-order model (Prop. 4.3)."""

from __future__ import annotations

import numpy as np

from .._core import Case, Kernel, register
from ._common import _rng
from ._momentum_jit import _products_norms


def _momentum_rows():
    rows = []
    d = 3
    for residual in ("linear", "tanh", "tanh_out"):
        for gamma, N, seed in ((0.0, 10, 121), (0.5, 1, 122), (0.5, 10, 123), (0.9, 100, 124), (1.0, 10, 125),
                               (0.99, 1000, 126)):
            r = _rng(seed)
            theta = 2.0 * r.standard_normal((N, d, d)) / (np.sqrt(d) * N)
            x0, v0 = r.standard_normal(d), r.standard_normal(d)
            if N >= 1000:
                v0 = np.zeros(d)  # a unit v0 would carry x_N about v0/(1 - gamma) = 100 away
            rows.append((f"{residual}_gamma{gamma:g}_N{N}",
                         {"seed": seed, "N": N, "d": d, "gamma": gamma, "residual": residual,
                          "law": "theta ~ N(0, 4/(d N^2)), x0 ~ N(0, 1), " + ("v0 = 0" if N >= 1000 else "v0 ~ N(0, 1)")},
                         {"x0": x0, "v0": v0, "theta": theta, "residual": residual, "gamma": gamma}))
    r = _rng(127)
    rows.append(("tanh_gamma0.9_large_theta_N20", {"seed": 127, "N": 20, "d": d, "gamma": 0.9, "residual": "tanh",
                                                    "law": "theta ~ N(0, 4/d) (unscaled), v0 = 0"},
                 {"x0": r.standard_normal(d), "v0": np.zeros(d), "theta": 2.0 * r.standard_normal((20, d, d)) / np.sqrt(d),
                  "residual": "tanh", "gamma": 0.9}))
    rows.append(("linear_gamma0.5_d1_N10", {"N": 10, "d": 1, "gamma": 0.5, "residual": "linear",
                                            "law": "d = 1, theta_n = -1 (oscillating velocity)"},
                 {"x0": np.array([1.0]), "v0": np.array([0.0]), "theta": np.full((10, 1, 1), -1.0),
                  "residual": "linear", "gamma": 0.5}))
    return rows


def _residual_jacobian(residual, x, th):
    if residual == "linear":
        return th
    if residual == "tanh":
        return (1.0 - np.tanh(th @ x) ** 2)[:, None] * th
    return th * (1.0 - np.tanh(x) ** 2)[None, :]  # tanh_out


def _momentum_amplification(xs, theta, residual, gamma, inverse=False, both=False):
    """max over n' of sum_{n <= n'} ||J_{n'-1} ... J_n||_inf, J_n the Jacobian in (x, v) of step n along the
    trajectory xs (of the inverse steps, taken from the top, when ``inverse``): the total growth of one rounding
    error per step up to any later step (all start positions propagated together, one batched product per step).
    ``both``: also the largest single norm max_{n <= n'} ||J_{n'-1} ... J_n||_inf."""
    N, d = theta.shape[0], theta.shape[-1]
    eye = np.eye(d)
    J = np.zeros((N, 2 * d, 2 * d))
    order = range(N - 1, -1, -1) if inverse else range(N)
    for i, n in enumerate(order):
        if inverse:  # step from (x_{n+1}, v_{n+1}) to (x_n, v_n); the residual at x_n
            F = (1.0 - gamma) * _residual_jacobian(residual, xs[n], theta[n]) / gamma
            J[i, :d, :d], J[i, :d, d:] = eye, -eye
            J[i, d:, :d], J[i, d:, d:] = -F, eye / gamma + F
        else:
            F = (1.0 - gamma) * _residual_jacobian(residual, xs[n], theta[n])
            J[i, :d, :d], J[i, :d, d:] = eye + F, gamma * eye
            J[i, d:, :d], J[i, d:, d:] = F, gamma * eye
    total, largest = _products_norms(J)
    return (total, largest) if both else total



def _momentum_forward_ref(x0, v0, theta, residual, gamma):
    from theory.momentum import forward

    return tuple(forward(x0, v0, theta, residual, gamma))


def _momentum_forward_tol(inputs, ref, eps):
    theta = inputs["theta"]
    N, d = theta.shape[0], theta.shape[-1]
    amp = _momentum_amplification(ref[0], theta, inputs["residual"], inputs["gamma"])
    t = 2.0 * (d + 3) * eps * max(float(np.max(np.abs(ref[0]))), float(np.max(np.abs(ref[1])))) * amp
    return (t, t)


_MOMENTUM_WHY = ("each step v' = gamma v + (1 - gamma) f(x, theta_n), x' = x + v' rounds a d-term dot product and "
                 "three operations, about (d + 3) eps max(|x|, |v|); an error made at step n reaches step n' through the "
                 "product of the step Jacobians [[I + (1-gamma) F, gamma I], [(1-gamma) F, gamma I]] (F = df/dx along "
                 "the reference trajectory); the sum of their infinity norms over the steps n before n', maximised "
                 "over n', is computed per case: the condition number of the discrete flow for one rounding per step")

register(Kernel(
    name="momentum_forward",
    module="theory.momentum",
    signature="fn(x0, v0, theta, residual, gamma) -> (xs, vs)   ((N+1, d) each; v_{n+1} = gamma v_n + (1-gamma) "
              "f(x_n, theta_n), x_{n+1} = x_n + v_{n+1}; no 1/N step)",
    outputs=("xs", "vs"),
    make_cases=lambda: [Case(*row) for row in _momentum_rows()],
    reference=_momentum_forward_ref,
    tolerance=_momentum_forward_tol,
    rule="max|xs - xs_ref|, max|vs - vs_ref| <= 2 (d + 3) eps max(|xs_ref|, |vs_ref|) A, "
         "A = 1 + max_n' sum_{n <= n'} ||J_{n'-1} ... J_n||_inf (step Jacobians along the reference trajectory)",
    why=_MOMENTUM_WHY,
))


def _momentum_inverse_cases():
    from theory.momentum import forward

    cases = []
    for name, params, inputs in _momentum_rows():
        if inputs["gamma"] == 0.0:
            continue  # gamma = 0 has no inverse
        xs, vs = forward(inputs["x0"], inputs["v0"], inputs["theta"], inputs["residual"], inputs["gamma"])
        cases.append(Case(name, {**params, "xN, vN": "momentum forward of (x0, v0)"},
                          {"xN": xs[-1], "vN": vs[-1], "theta": inputs["theta"], "residual": inputs["residual"],
                           "gamma": inputs["gamma"]}))
    return cases


def _momentum_inverse_ref(xN, vN, theta, residual, gamma):
    from theory.momentum import inverse

    return tuple(inverse(xN, vN, theta, residual, gamma))


def _momentum_inverse_tol(inputs, ref, eps):
    theta, gamma = inputs["theta"], inputs["gamma"]
    N, d = theta.shape[0], theta.shape[-1]
    amp = _momentum_amplification(ref[0], theta, inputs["residual"], gamma, inverse=True)
    t = 2.0 * (d + 3) * eps * max(float(np.max(np.abs(ref[0]))), float(np.max(np.abs(ref[1])))) * amp / gamma
    return (t, t)


register(Kernel(
    name="momentum_inverse",
    module="theory.momentum",
    signature="fn(xN, vN, theta, residual, gamma) -> (xs, vs)   (the inverse (4.3): x_n = x_{n+1} - v_{n+1}, "
              "v_n = (v_{n+1} - (1-gamma) f(x_n, theta_n))/gamma; gamma in (0, 1])",
    outputs=("xs", "vs"),
    make_cases=_momentum_inverse_cases,
    reference=_momentum_inverse_ref,
    tolerance=_momentum_inverse_tol,
    rule="max|xs - xs_ref|, max|vs - vs_ref| <= 2 (d + 3) eps max(|xs_ref|, |vs_ref|) A / gamma, A as in "
         "momentum_forward for the inverse-step Jacobians [[I, -I], [-G, I/gamma + G]], G = (1-gamma) F/gamma",
    why="the same count as momentum_forward for the inverse steps, each divided by gamma; the products of the "
        "inverse-step Jacobians grow like gamma^(-N) (their determinant is gamma^(-d) per step): the inverse of a "
        "Momentum ResNet with gamma < 1 is ill-conditioned in floating point, which the tolerance shows (gamma = 0.9, "
        "N = 100 and gamma = 0.99, N = 1000 allow 3e3 to 5e3 times momentum_forward's tolerance on the same case)",
))


def _momentum_gradient_cases():
    cases = []
    for name, params, inputs in _momentum_rows():
        r = _rng(params.get("seed", 128) + 100)
        cases.append(Case(name, {**params, "y": "N(0, 1), seed + 100"}, {**inputs, "y": r.standard_normal(
            inputs["x0"].shape)}))
    return cases


def _momentum_gradient_ref(x0, v0, theta, residual, gamma, y):
    from theory.momentum import gradient

    loss, dtheta, dx0, dv0 = gradient(x0, v0, theta, residual, gamma, y, method="backprop")
    return (np.asarray(loss), dtheta, dx0, dv0)


def _momentum_gradient_tol(inputs, ref, eps):
    from theory.momentum import forward

    theta = inputs["theta"]
    N, d = theta.shape[0], theta.shape[-1]
    xs, vs = forward(inputs["x0"], inputs["v0"], theta, inputs["residual"], inputs["gamma"])
    total, largest = _momentum_amplification(xs, theta, inputs["residual"], inputs["gamma"], both=True)
    r = float(np.max(np.abs(xs[-1] - inputs["y"])))
    S = max(1.0, float(np.max(np.abs(xs))), float(np.max(np.abs(vs))))
    base = 4.0 * (d + 3) * eps * total * (1.0 + largest)
    loss = base * (float(ref[0]) + d * r * S)
    return (loss,) + tuple(base * (float(np.max(np.abs(g))) + r * S) for g in ref[1:])


register(Kernel(
    name="momentum_gradient",
    module="theory.momentum",
    signature="fn(x0, v0, theta, residual, gamma, y) -> (loss, dtheta, dx0, dv0)   (L = 1/2 ||x_N - y||^2 and its "
              "exact gradients)",
    outputs=("loss", "dtheta", "dx0", "dv0"),
    make_cases=_momentum_gradient_cases,
    reference=_momentum_gradient_ref,
    tolerance=_momentum_gradient_tol,
    rule="max|g - g_ref| <= 4 (d + 3) eps A (1 + B) (max|g_ref| + |x_N - y|_inf S), S = max(1, |xs|, |vs|) "
         "(loss: d |x_N - y|_inf S); A as in momentum_forward, B = max_{n <= n'} ||J_{n'-1} ... J_n||_inf",
    why=_MOMENTUM_WHY + "; the backward pass carries the residual x_N - y back through the transposed step "
        "Jacobians: its own roundings add up to A again, and the forward pass's error reaches it amplified by at most "
        "B; each parameter gradient is an outer product with a state",
))


def _psi_cases():
    cases = []

    def add(name, theta, eps, **params):
        cases.append(Case(name, {**params, "eps": eps}, {"theta": np.asarray(theta, dtype=np.float64), "eps": eps}))

    for d, seed in ((1, 131), (2, 132), (4, 133)):
        theta = _rng(seed).standard_normal((d, d))
        for eps in (0.0, 0.05, 0.5, 5.0):
            add(f"d{d}_eps{eps:g}", theta, eps, d=d, seed=seed, law="theta ~ N(0, 1)")
    r = _rng(134)
    add("eps0.01_d3", r.standard_normal((3, 3)), 0.01, d=3, seed=134, law="theta ~ N(0, 1); small eps (stiff)")
    from theory.momentum import lambda_eps

    lam, alpha = lambda_eps(0.5)
    add("at_theta_star_eps0.5", [[-0.5 * alpha ** 2 - 0.5]], 0.5, d=1,
        law="theta* = -eps alpha*^2 - 1/(4 eps): the minimum lambda_eps of Psi (Sec. 4.4.3)")
    add("oscillating_eps1", [[-np.pi ** 2 - 0.25]], 1.0, d=1, law="theta = -pi^2 - 1/4: Psi = -exp(-1/2)")
    Q, _ = np.linalg.qr(_rng(135).standard_normal((3, 3)))
    add("nearly_singular_eps0.5", Q @ np.diag([1.0, 1e-8, 0.0]) @ Q.T, 0.5, d=3, seed=135,
        law="symmetric, eigenvalues 1, 1e-8, 0")
    add("large_theta_eps0.1", 8.0 * _rng(136).standard_normal((3, 3)), 0.1, d=3, seed=136, law="theta ~ N(0, 64)")
    add("zero_eps0.3", np.zeros((2, 2)), 0.3, d=2, law="theta = 0: Psi = I (x stays at x0)")
    return cases


def _psi_ref(theta, eps):
    from theory.momentum import psi

    return (psi(theta, eps),)


def _psi_tol(inputs, ref, eps_m):
    from scipy.linalg import expm

    theta, eps = inputs["theta"], float(inputs["eps"])
    d = theta.shape[0]
    if eps == 0.0:
        A = theta
    else:
        A = np.zeros((2 * d, 2 * d))
        A[:d, d:] = np.eye(d)
        A[d:, :d] = theta / eps
        A[d:, d:] = -np.eye(d) / eps
    # the Frechet derivative of exp at A is E -> int_0^1 e^(sA) E e^((1-s)A) ds: bound its norm by the integral
    s = np.linspace(0.0, 1.0, 17)
    norms = np.array([np.linalg.norm(expm(t * A), 2) for t in s])
    integral = float(np.trapezoid(norms * norms[::-1], s))
    return (16.0 * (2 * d) * eps_m * float(np.linalg.norm(A, 2)) * integral + 4.0 * eps_m * float(np.max(np.abs(ref[0]))),)


register(Kernel(
    name="momentum_psi",
    module="theory.momentum",
    signature="fn(theta, eps) -> Psi   ((d, d): x(1) of eps x'' + x' = theta x, x(0) = x_0, x'(0) = 0, as x(1) = Psi x_0; "
              "eps = 0: exp(theta))",
    outputs=("Psi",),
    make_cases=_psi_cases,
    reference=_psi_ref,
    tolerance=_psi_tol,
    rule="max|Psi - Psi_ref| <= 32 d eps ||A|| int_0^1 ||e^(sA)|| ||e^((1-s)A)|| ds + 4 eps max|Psi_ref| (2-norms, "
         "trapezoid rule on 17 points), A = [[0, I], [theta/eps, -I/eps]] (A = theta for eps = 0)",
    why="Psi_eps(theta) is the top-left block of exp(A) for the phase-space matrix A of the second-order ODE (Prop. "
        "4.3); the derivative of exp at A in the direction E is int_0^1 e^(sA) E e^((1-s)A) ds, so a relative "
        "perturbation of A of size eps (the rounding of theta/eps, or the backward error of a scaling-and-squaring "
        "exponential) moves exp(A) by at most eps ||A|| times the integral; the factor 2d covers the 2d-term "
        "products, the last term the final rounding",
))
