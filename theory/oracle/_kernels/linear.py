"""Oracle kernels: the deep linear ResNet (theory.linear)."""

from __future__ import annotations

import numpy as np

from ...experiments.config import Int
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _rng

#: the built-in generic networks: depth N, width d and seed (any other (N, d) uses _OTHER_SEED)
_BUILT_IN = {(1, 1): 41, (1, 3): 42, (10, 3): 43, (100, 5): 44, (1000, 3): 45}
_OTHER_SEED = 40


def _linear_row(N: int, d: int):
    """(name, params, inputs) of the generic network random_N{N}_d{d}: the built-in ones and the ones at the user's
    parameters alike."""
    seed = _BUILT_IN.get((N, d), _OTHER_SEED)
    r = _rng(seed)
    theta = r.standard_normal((N, d, d))
    A = r.standard_normal((d, d))
    Sigma = A @ A.T / d + 0.1 * np.eye(d)
    return (f"random_N{N}_d{d}", {"seed": seed, "N": N, "d": d,
                                  "law": "theta ~ N(0,1); Sigma = A A^T/d + 0.1 I; B ~ N(0,1)"},
            {"theta": theta, "Sigma": Sigma, "B": r.standard_normal((d, d))})


def _linear_rows():
    rows = [_linear_row(N, d) for N, d in _BUILT_IN]
    r = _rng(46)
    Q, _ = np.linalg.qr(r.standard_normal((4, 4)))
    Sigma = Q @ np.diag([1.0, 1e-4, 1e-8, 1e-12]) @ Q.T
    rows.append(("nearly_singular_Sigma_N20_d4", {"seed": 46, "N": 20, "d": 4, "law": "Sigma eigenvalues 1..1e-12"},
                 {"theta": r.standard_normal((20, 4, 4)), "Sigma": (Sigma + Sigma.T) / 2, "B": r.standard_normal((4, 4))}))
    r = _rng(47)
    rows.append(("zero_theta_N50_d3", {"seed": 47, "N": 50, "d": 3, "law": "theta = 0 (Pi = I)"},
                 {"theta": np.zeros((50, 3, 3)), "Sigma": np.eye(3), "B": r.standard_normal((3, 3))}))
    r = _rng(48)
    rows.append(("large_theta_N10_d3", {"seed": 48, "N": 10, "d": 3, "law": "theta ~ N(0, 100)"},
                 {"theta": 10 * r.standard_normal((10, 3, 3)), "Sigma": np.eye(3), "B": r.standard_normal((3, 3))}))
    return rows


def _linear_growth(theta):
    N = theta.shape[0]
    norms = np.max(np.sum(np.abs(theta), axis=-1), axis=-1)
    return float(np.exp(np.sum(np.log1p(norms / N))))  # prod (1 + ||theta_n||_inf / N) >= every partial product


def _linear_product_tol(inputs, ref, eps):
    theta = inputs["theta"]
    N, d = theta.shape[0], theta.shape[-1]
    return (4.0 * (N + d) * eps * _linear_growth(theta),)


def _linear_loss_tol(inputs, ref, eps):
    theta, Sigma, B = inputs["theta"], inputs["Sigma"], inputs["B"]
    N, d = theta.shape[0], theta.shape[-1]
    M = _linear_growth(theta) + float(np.max(np.sum(np.abs(B), axis=-1)))
    return (8.0 * (N + d) * eps * d * d * float(np.max(np.abs(Sigma))) * M * M,)


def _linear_gradient_tol(inputs, ref, eps):
    theta, Sigma, B = inputs["theta"], inputs["Sigma"], inputs["B"]
    N, d = theta.shape[0], theta.shape[-1]
    P = _linear_growth(theta)
    M = P + float(np.max(np.sum(np.abs(B), axis=-1)))
    return (8.0 * (N + d) * eps * (2.0 / N) * d * d * float(np.max(np.abs(Sigma))) * P * P * M,)


_LINEAR_WHY = ("every partial product of the layers I + theta_n/N is bounded by P = prod(1 + ||theta_n||_inf/N); a "
               "product of N matrices rounds by about (N + d) eps P (d-term dot products, N factors); the loss is a "
               "quadratic form in Pi - B (|Pi - B| <= M = P + ||B||_inf) and the gradient "
               "(2/N) Pi_after^T (Pi - B) Sigma Pi_before^T a product of three such factors")


def _linear_ref(name):
    def ref(**inputs):
        import theory.linear as L

        if name == "product":
            return (L.product(inputs["theta"]),)
        return (np.asarray(getattr(L, name)(inputs["theta"], inputs["Sigma"], inputs["B"])),)
    return ref


def _generator(make):
    def generate(N, d):
        from ..._validation import check_memory, check_work

        func = "the oracle's linear cases"
        check_memory(8 * 4 * (N + 2) * d * d, "N", N, func=func,
                     hint=f"The weights ({N}, {d}, {d}) and the partial products of the gradient are held at once.")
        check_work(20.0 * (N + 2) * d ** 3, "N", N, func=func)
        return make([_linear_row(N, d)])
    return generate


_THETA = Argument("theta", "(N, d, d)", "float64", "the layers: theta[0] = theta_1, the first applied (rightmost)")
_SIGMA = Argument("Sigma", "(d, d)", "float64", "the data covariance (symmetric positive definite)")
_B = Argument("B", "(d, d)", "float64", "the target matrix")
_PRODUCT_CONVENTION = Convention(
    "the product: order and step",
    "Pi = (I + theta_N/N) ... (I + theta_1/N) (resnet-node Section 3.2): theta[0] = theta_1 acts first (the rightmost "
    "factor) and every layer is scaled by 1/N",
    "a product written left to right ((I + theta_1/N) ... (I + theta_N/N)); a deep linear network without the 1/N "
    "(prod (I + W_n), deep matrix factorisation)",
    "left to right: pass theta[::-1] (and reverse a gradient back, g[::-1]); without 1/N: pass theta / N (a "
    "gradient of the unscaled loss at theta / N, divided by N, is ours)")
_LOSS_CONVENTION = Convention(
    "the loss",
    "L = ||Pi - B||_Sigma^2 = Tr((Pi - B) Sigma (Pi - B)^T) (resnet-node Eq. (5)): no 1/2 and no 1/n",
    "a loss with 1/2 (1/2 ||Pi - B||_Sigma^2)",
    "multiply a 1/2-loss, and its gradient, by 2")
_PARAMETERS = (
    Parameter("N", Int(low=1), 10, "the depth of the generic network random_N{N}_d{d} (the built-in ones: (N, d) = "
              "(1, 1), (1, 3), (10, 3), (100, 5), (1000, 3))"),
    Parameter("d", Int(low=1), 3, "the width of the generic network"),
)

register(Kernel(
    name="linear_product",
    module="theory.linear",
    signature="fn(theta) -> Pi   (Pi = (I + theta_N/N) ... (I + theta_1/N), theta (N, d, d), theta[0] = theta_1)",
    make_cases=lambda: [Case(n, p, {"theta": i["theta"]}) for n, p, i in _linear_rows()],
    reference=_linear_ref("product"),
    tolerance=_linear_product_tol,
    rule="max|Pi - Pi_ref| <= 4 (N + d) eps P, P = prod_n (1 + ||theta_n||_inf / N)",
    why=_LINEAR_WHY,
    arguments=(_THETA,),
    returns=(Argument("Pi", "(d, d)", "float64", "the end-to-end matrix of the network"),),
    conventions=(_PRODUCT_CONVENTION,),
    parameters=_PARAMETERS,
    generate=_generator(lambda rows: [Case(n, p, {"theta": i["theta"]}) for n, p, i in rows]),
))

register(Kernel(
    name="linear_loss",
    module="theory.linear",
    signature="fn(theta, Sigma, B) -> loss   (Tr((Pi - B) Sigma (Pi - B)^T), a 0-d array or float)",
    make_cases=lambda: [Case(*row) for row in _linear_rows()],
    reference=_linear_ref("loss"),
    tolerance=_linear_loss_tol,
    rule="|loss - loss_ref| <= 8 (N + d) eps d^2 max|Sigma| M^2, M = P + ||B||_inf",
    why=_LINEAR_WHY,
    arguments=(_THETA, _SIGMA, _B),
    returns=(Argument("loss", "scalar", "float64", "the loss (a float or a 0-d array)"),),
    conventions=(_LOSS_CONVENTION, _PRODUCT_CONVENTION),
    parameters=_PARAMETERS,
    generate=_generator(lambda rows: [Case(*row) for row in rows]),
))

register(Kernel(
    name="linear_gradient",
    gradient=True,
    module="theory.linear",
    signature="fn(theta, Sigma, B) -> grad   ((N, d, d): the true gradient of the loss, factor 2 included)",
    make_cases=lambda: [Case(*row) for row in _linear_rows()],
    reference=_linear_ref("gradient"),
    tolerance=_linear_gradient_tol,
    rule="max|g - g_ref| <= 8 (N + d) eps (2/N) d^2 max|Sigma| P^2 M",
    why=_LINEAR_WHY,
    arguments=(_THETA, _SIGMA, _B),
    returns=(Argument("grad", "(N, d, d)", "float64", "dL/dtheta_n for each layer, in the order of theta"),),
    conventions=(
        Convention("the gradient",
                   "the true gradient dL/dtheta_n = (2/N) Pi_{:n}^T (Pi - B) Sigma Pi_n^T, the factor 2 of the "
                   "squared loss included",
                   "the display of resnet-node Section 3.2, N grad_n = Pi_{:n}^T (Pi - B) Sigma Pi_n^T, is the "
                   "rescaled gradient of the flow d theta_n/dt = -N grad_n and drops the factor 2",
                   "from that formula's value G: return 2 G / N; from the rescaled gradient N grad_n: divide by N"),
        _LOSS_CONVENTION, _PRODUCT_CONVENTION,
    ),
    parameters=_PARAMETERS,
    generate=_generator(lambda rows: [Case(*row) for row in rows]),
))
