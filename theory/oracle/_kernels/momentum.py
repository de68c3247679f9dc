"""Oracle kernels: momentum ResNets (theory.momentum; Sander's thesis, chapter 4): forward map (4.2), its inverse (4.3), the gradient by backpropagation, and the time-1 map Psi_eps of the linear second-order model (Prop. 4.3)."""

from __future__ import annotations

import math

import numpy as np

from ...experiments.config import Int, Real
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _guard, _rng, _tag, _validated
from ._momentum_jit import _products_norms

#: the residual families of the cases (theory.resnet.RESIDUALS): f = theta x, tanh(theta x), theta tanh(x)
_RESIDUALS = ("linear", "tanh", "tanh_out")
#: the width of the built-in cases
_D = 3
#: the seeds of the built-in cases at their (gamma, N); any other pair uses _OTHER_SEED
_SEEDS = {(0.0, 10): 121, (0.5, 1): 122, (0.5, 10): 123, (0.9, 100): 124, (1.0, 10): 125, (0.99, 1000): 126}
_OTHER_SEED = 129


def _momentum_row(residual: str, gamma: float, N: int, d: int = _D) -> tuple[str, dict, dict]:
    """(name, params, inputs): theta ~ N(0, 4/(d N^2)) entries (a unit-size flow), x0 ~ N(0, 1), v0 ~ N(0, 1) (0 for
    N >= 1000: a unit v0 would carry x_N about v0/(1 - gamma) away), seeded by (gamma, N); named
    ``{residual}_gamma{gamma}_N{N}``, suffixed ``_d{d}`` off the built-in width."""
    seed = _SEEDS.get((gamma, N), _OTHER_SEED)
    r = _rng(seed)
    theta = 2.0 * r.standard_normal((N, d, d)) / (np.sqrt(d) * N)
    x0, v0 = r.standard_normal(d), r.standard_normal(d)
    if N >= 1000:
        v0 = np.zeros(d)
    return (f"{residual}_gamma{_tag(gamma)}_N{N}" + ("" if d == _D else f"_d{d}"),
            {"seed": seed, "N": N, "d": d, "gamma": gamma, "residual": residual,
             "law": "theta ~ N(0, 4/(d N^2)), x0 ~ N(0, 1), " + ("v0 = 0" if N >= 1000 else "v0 ~ N(0, 1)")},
            {"x0": x0, "v0": v0, "theta": theta, "residual": residual, "gamma": gamma})


def _momentum_sized(kernel: str, N: int, d: int) -> None:
    """The tolerance rule multiplies every pair of step Jacobians (2d x 2d): about N^2 (2d)^3 operations."""
    _guard(kernel, "N", N, nbytes=8.0 * 4 * N * (2 * d) ** 2, ops=float(N) * N * (2 * d) ** 3,
           hint=f"The tolerance rule forms the products of the N = {N} step Jacobians of size 2d = {2 * d}.")


def _momentum_rows():
    rows = [_momentum_row(residual, gamma, N) for residual in _RESIDUALS for gamma, N in _SEEDS]
    r = _rng(127)
    d = _D
    rows.append(("tanh_gamma0.9_large_theta_N20", {"seed": 127, "N": 20, "d": d, "gamma": 0.9, "residual": "tanh",
                                                    "law": "theta ~ N(0, 4/d) (unscaled), v0 = 0"},
                 {"x0": r.standard_normal(d), "v0": np.zeros(d), "theta": 2.0 * r.standard_normal((20, d, d)) / np.sqrt(d),
                  "residual": "tanh", "gamma": 0.9}))
    rows.append(("linear_gamma0.5_d1_N10", {"N": 10, "d": 1, "gamma": 0.5, "residual": "linear",
                                            "law": "d = 1, theta_n = -1 (oscillating velocity)"},
                 {"x0": np.array([1.0]), "v0": np.array([0.0]), "theta": np.full((10, 1, 1), -1.0),
                  "residual": "linear", "gamma": 0.5}))
    return rows


def _momentum_generate(kernel: str, cases_of):
    """The generator of ``kernel``'s cases at the user's (N, d, gamma): one case per residual family, the rows of
    the built-in cases turned into cases by ``cases_of`` (the kernel's own builder), checked once."""
    def generate(N: int, d: int, gamma: float) -> list[Case]:
        _momentum_sized(kernel, N, d)
        return _validated(kernel, cases_of([_momentum_row(residual, gamma, N, d) for residual in _RESIDUALS]))
    return generate


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



def _forward_of(rows) -> list[Case]:
    return [Case(*row) for row in rows]


def _momentum_forward_ref(x0, v0, theta, residual, gamma):
    from theory.momentum import forward

    return tuple(forward(x0, v0, theta, residual, gamma))


def _momentum_forward_tol(inputs, ref, eps):
    theta = inputs["theta"]
    N, d = theta.shape[0], theta.shape[-1]
    amp = _momentum_amplification(ref[0], theta, inputs["residual"], inputs["gamma"])
    t = 2.0 * (d + 3) * eps * max(float(np.max(np.abs(ref[0]))), float(np.max(np.abs(ref[1])))) * amp
    return (t, t)


_N_PARAM = Parameter("N", Int(low=1), 10, "the depth theta.shape[0] of the three cases, one per residual family "
                     "(built-in: 1, 10, 100, 1000)")
_D_PARAM = Parameter("d", Int(low=1), _D, "the width (built-in: 3)")
_GAMMA_PARAM = Parameter("gamma", Real(0.0, 1.0), 0.5, "the momentum term (built-in: 0, 0.5, 0.9, 0.99, 1)")
_THETA = Argument("theta", "(N, d, d)", "float64", "theta[n] = theta_n, the weight of step n (N = theta.shape[0])")
_RESIDUAL = Argument("residual", "scalar", "str", "f(x, theta_n): 'linear' theta_n x, 'tanh' tanh(theta_n x), "
                     "'tanh_out' theta_n tanh(x)")
_GAMMA = Argument("gamma", "scalar", "float", "the momentum term, in [0, 1]")
_UPDATE = Convention(
    "the update (4.2)",
    "v_{n+1} = gamma v_n + (1 - gamma) f(x_n, theta_n), then x_{n+1} = x_n + v_{n+1} (the new velocity); no step "
    "size (the cases scale theta by 1/N)",
    "the eps form of Section 4.3.4, v_{n+1} = v_n + (f(x_n, theta_n) - v_n) / eps; the heavy-ball form "
    "v_{n+1} = gamma v_n + f(x_n, theta_n) without the factor 1 - gamma; the explicit order x_{n+1} = x_n + v_n",
    "for the eps form pass eps = 1 / (1 - gamma) (infinite at gamma = 1: v stays constant); for the heavy-ball form "
    "pass theta * (1 - gamma) with 'linear' and 'tanh_out' (f is linear in theta there; 'tanh' has no such "
    "mapping); the explicit order is another network: update v first")
_FAMILIES = Convention(
    "the residual families",
    "f(x, theta_n) = theta_n x ('linear'), tanh(theta_n x) ('tanh'), theta_n tanh(x) ('tanh_out'), no bias; theta_n "
    "acts on column vectors",
    "torch.nn.Linear(d, d, bias=False) computes x @ weight.T = weight x",
    "load theta[n] as the Linear layer's weight, untransposed, bias=False")
_STATES = Convention(
    "the returned trajectory",
    "xs and vs of shape (N + 1, d): x_0, ..., x_N and v_0, ..., v_N, the initial ones included",
    "the output x_N alone; an initial velocity fixed inside the network, v_0 = 0 or v_0 = f(x_0, theta_0) "
    "(Section 4.3.1)",
    "start from the v0 given and return np.stack of every state and every velocity")


_MOMENTUM_WHY = ("each step v' = gamma v + (1 - gamma) f(x, theta_n), x' = x + v' rounds a d-term dot product and "
                 "three operations, about (d + 3) eps max(|x|, |v|); an error made at step n reaches step n' through the "
                 "product of the step Jacobians [[I + (1-gamma) F, gamma I], [(1-gamma) F, gamma I]] (F = df/dx along "
                 "the reference trajectory); the sum of their infinity norms over the steps n before n', maximised "
                 "over n', is computed per case: the condition number of the discrete flow for one rounding per step")

register(Kernel(
    name="momentum_forward",
    trajectory=("xs", "vs"),
    module="theory.momentum",
    signature="fn(x0, v0, theta, residual, gamma) -> (xs, vs)   ((N+1, d) each; v_{n+1} = gamma v_n + (1-gamma) "
              "f(x_n, theta_n), x_{n+1} = x_n + v_{n+1}; no 1/N step)",
    make_cases=lambda: _forward_of(_momentum_rows()),
    reference=_momentum_forward_ref,
    tolerance=_momentum_forward_tol,
    rule="max|xs - xs_ref|, max|vs - vs_ref| <= 2 (d + 3) eps max(|xs_ref|, |vs_ref|) A, "
         "A = 1 + max_n' sum_{n <= n'} ||J_{n'-1} ... J_n||_inf (step Jacobians along the reference trajectory)",
    why=_MOMENTUM_WHY,
    arguments=(Argument("x0", "(d,)", "float64", "the input x_0"),
               Argument("v0", "(d,)", "float64", "the initial velocity v_0 (zeros in the N >= 1000 cases)"),
               _THETA, _RESIDUAL, _GAMMA),
    returns=(Argument("xs", "(N+1, d)", "float64", "the states x_0, ..., x_N"),
             Argument("vs", "(N+1, d)", "float64", "the velocities v_0, ..., v_N")),
    conventions=(_UPDATE, _FAMILIES, _STATES),
    parameters=(_N_PARAM, _D_PARAM, _GAMMA_PARAM),
    generate=_momentum_generate("momentum_forward", _forward_of),
))


def _inverse_of(rows) -> list[Case]:
    """The inverse's cases of ``rows``: (xN, vN) the forward pass's output (gamma = 0 has no inverse: left out)."""
    from theory.momentum import forward

    cases = []
    for name, params, inputs in rows:
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
    make_cases=lambda: _inverse_of(_momentum_rows()),
    reference=_momentum_inverse_ref,
    tolerance=_momentum_inverse_tol,
    rule="max|xs - xs_ref|, max|vs - vs_ref| <= 2 (d + 3) eps max(|xs_ref|, |vs_ref|) A / gamma, A as in "
         "momentum_forward for the inverse-step Jacobians [[I, -I], [-G, I/gamma + G]], G = (1-gamma) F/gamma",
    why="the same count as momentum_forward for the inverse steps, each divided by gamma; the products of the "
        "inverse-step Jacobians grow like gamma^(-N) (their determinant is gamma^(-d) per step): the inverse of a "
        "Momentum ResNet with gamma < 1 is ill-conditioned in floating point, which the tolerance shows (gamma = 0.9, "
        "N = 100 and gamma = 0.99, N = 1000 allow 3e3 to 5e3 times momentum_forward's tolerance on the same case)",
    arguments=(Argument("xN", "(d,)", "float64", "the output x_N of the forward pass"),
               Argument("vN", "(d,)", "float64", "the velocity v_N of the forward pass"),
               _THETA, _RESIDUAL, Argument("gamma", "scalar", "float", "the momentum term, in (0, 1]")),
    returns=(Argument("xs", "(N+1, d)", "float64", "the reconstructed states x_0, ..., x_N (forward order)"),
             Argument("vs", "(N+1, d)", "float64", "the reconstructed velocities v_0, ..., v_N")),
    conventions=(
        Convention("the inverse (4.3)",
                   "x_n = x_{n+1} - v_{n+1}, then v_n = (v_{n+1} - (1 - gamma) f(x_n, theta_n)) / gamma for n = N-1, "
                   "..., 0, in floating point (no buffer of lost bits)",
                   "the exactly reversible fixed-point arithmetic of Section 4.3.1 and App. 4.C "
                   "(theory.momentum.inverse_exact), which needs the forward pass's buffer; the inverse of another "
                   "forward form (see momentum_forward)",
                   "divide by gamma in floating point; exact-arithmetic code cannot be checked here without its "
                   "buffer"),
        Convention("the order of the returned states",
                   "forward order: xs[0] = x_0, ..., xs[N] = xN, as momentum_forward returns them",
                   "the order of the reconstruction, x_N first",
                   "reverse: return xs[::-1], vs[::-1]"),
        _FAMILIES),
    parameters=(_N_PARAM, _D_PARAM, Parameter("gamma", Real(0.0, 1.0, closed="right"), 0.5, "the momentum term; 0 "
                                              "has no inverse (built-in: 0.5, 0.9, 0.99, 1)")),
    generate=_momentum_generate("momentum_inverse", _inverse_of),
))


def _gradient_of(rows) -> list[Case]:
    """The gradient's cases of ``rows``: the target y ~ N(0, 1) seeded by the row's seed + 100."""
    cases = []
    for name, params, inputs in rows:
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
    gradient=True,
    module="theory.momentum",
    signature="fn(x0, v0, theta, residual, gamma, y) -> (loss, dtheta, dx0, dv0)   (L = 1/2 ||x_N - y||^2 and its "
              "exact gradients)",
    make_cases=lambda: _gradient_of(_momentum_rows()),
    reference=_momentum_gradient_ref,
    tolerance=_momentum_gradient_tol,
    rule="max|g - g_ref| <= 4 (d + 3) eps A (1 + B) (max|g_ref| + |x_N - y|_inf S), S = max(1, |xs|, |vs|) "
         "(loss: d |x_N - y|_inf S); A as in momentum_forward, B = max_{n <= n'} ||J_{n'-1} ... J_n||_inf",
    why=_MOMENTUM_WHY + "; the backward pass carries the residual x_N - y back through the transposed step "
        "Jacobians: its own roundings add up to A again, and the forward pass's error reaches it amplified by at most "
        "B; each parameter gradient is an outer product with a state",
    arguments=(Argument("x0", "(d,)", "float64", "the input x_0"),
               Argument("v0", "(d,)", "float64", "the initial velocity v_0, an input of the gradient"),
               _THETA, _RESIDUAL, _GAMMA, Argument("y", "(d,)", "float64", "the target of x_N")),
    returns=(Argument("loss", "scalar", "float64", "L = 1/2 ||x_N - y||^2"),
             Argument("dtheta", "(N, d, d)", "float64", "dL/dtheta, theta's layout"),
             Argument("dx0", "(d,)", "float64", "dL/dx0"),
             Argument("dv0", "(d,)", "float64", "dL/dv0")),
    conventions=(
        Convention("the loss",
                   "L = 1/2 ||x_N - y||^2, a sum over the d coordinates",
                   "torch.nn.MSELoss() (the mean of (x_N - y)^2 over the d coordinates, no 1/2); "
                   "MSELoss(reduction='sum') (no 1/2)",
                   "multiply MSELoss()'s loss and gradients by d/2, reduction='sum''s by 1/2"),
        Convention("what is differentiated",
                   "theta, x0 and v0 (the initial velocity is an input): dtheta has theta's shape (N, d, d)",
                   "autograd with v0 made inside the network (v0 = 0 or f(x0, theta_0)) or not requiring grad",
                   "make v0 a leaf tensor with requires_grad=True, like x0 and theta"),
        _UPDATE, _FAMILIES),
    parameters=(_N_PARAM, _D_PARAM, _GAMMA_PARAM),
    generate=_momentum_generate("momentum_gradient", _gradient_of),
))


#: the seeds of the built-in random theta ~ N(0, 1) at their width d; any other d uses _PSI_OTHER_SEED
_PSI_SEEDS = {1: 131, 2: 132, 4: 133}
_PSI_OTHER_SEED = 137
#: the eps of the built-in random cases
_PSI_EPS = (0.0, 0.05, 0.5, 5.0)
#: the points of the trapezoid rule of the tolerance (an expm of a 2d x 2d matrix at each)
_PSI_POINTS = 17


def _psi_case(d: int, eps: float) -> Case:
    """``d{d}_eps{eps}``: theta ~ N(0, 1) entries seeded by d."""
    seed = _PSI_SEEDS.get(d, _PSI_OTHER_SEED)
    theta = _rng(seed).standard_normal((d, d))
    return Case(f"d{d}_eps{_tag(eps)}", {"d": d, "seed": seed, "law": "theta ~ N(0, 1)", "eps": eps},
                {"theta": theta, "eps": eps})


def _psi_generate(d: int, eps: float) -> list[Case]:
    """The random case at the user's (d, eps): the code path of the built-in ones."""
    _guard("momentum_psi", "d", d, nbytes=8.0 * 8 * (2 * d) ** 2, ops=(_PSI_POINTS + 2) * 40.0 * (2 * d) ** 3,
           hint=f"The tolerance rule takes {_PSI_POINTS} matrix exponentials of size 2d = {2 * d}.")
    return _validated("momentum_psi", [_psi_case(d, eps)])


def _psi_cases():
    cases = [_psi_case(d, eps) for d in _PSI_SEEDS for eps in _PSI_EPS]

    def add(name, theta, eps, **params):
        cases.append(Case(name, {**params, "eps": eps}, {"theta": np.asarray(theta, dtype=np.float64), "eps": eps}))

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
    s = np.linspace(0.0, 1.0, _PSI_POINTS)
    norms = np.array([np.linalg.norm(expm(t * A), 2) for t in s])
    integral = float(np.trapezoid(norms * norms[::-1], s))
    return (16.0 * (2 * d) * eps_m * float(np.linalg.norm(A, 2)) * integral + 4.0 * eps_m * float(np.max(np.abs(ref[0]))),)


register(Kernel(
    name="momentum_psi",
    module="theory.momentum",
    signature="fn(theta, eps) -> Psi   ((d, d): x(1) of eps x'' + x' = theta x, x(0) = x_0, x'(0) = 0, as x(1) = Psi x_0; "
              "eps = 0: exp(theta))",
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
    arguments=(Argument("theta", "(d, d)", "float64", "the linear residual x' = theta x of the second-order model"),
               Argument("eps", "scalar", "float", "eps >= 0 (0 or at least the smallest normal float64)")),
    returns=(Argument("Psi", "(d, d)", "float64", "Psi_eps(theta): x(1) = Psi x_0"),),
    conventions=(
        Convention("the map",
                   "Psi_eps(theta) sends x_0 to x(1) for eps x'' + x' = theta x with x(0) = x_0 and x'(0) = 0 (Eq. "
                   "(4.7), Prop. 4.3); eps = 0 is exp(theta), the first-order model (4.8), not an error",
                   "x'(0) = theta x_0 (the initial velocity v_0 = f(x_0) of Prop. 4.2) or a horizon other than 1; "
                   "the form x'' + x'/eps = theta x/eps is the same equation",
                   "none for another initial velocity or horizon (another map); from a phase-space solver return the "
                   "top-left d x d block of expm([[0, I], [theta/eps, -I/eps]])"),
        Convention("matrices act on column vectors",
                   "x(1) = Psi x_0",
                   "row vectors, x(1) = x_0 Psi' with Psi' = Psi^T",
                   "return the transpose of a row-convention matrix"),
    ),
    parameters=(
        Parameter("d", Int(low=1), 2, "the size of the random theta ~ N(0, 1) (built-in: 1, 2, 4)"),
        Parameter("eps", Real(0.0, math.inf), 0.5, "the inertia eps (built-in: 0, 0.05, 0.5, 5; also 0.01 to 1 in "
                  "the special cases); eps < 2.2e-308 other than 0 is refused by theory.momentum.psi"),
    ),
    generate=_psi_generate,
))
