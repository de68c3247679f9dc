"""Oracle kernels: depth-N residual networks (theory.resnet): forward, reverse, gradient; Euler and Heun; the step h
as an argument (1/N in the document, 1/(N+1) or 1 in public code)."""

from __future__ import annotations

import numpy as np

from ...experiments.config import Choice, Int, OrNone
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _rng

SCHEMES = ("euler", "heun")
#: the residual functions of the cases: the three with a (d, d) weight matrix per layer, then the bias f = theta
#: (theta_n in R^d) and the two-layer perceptron f = V tanh(W x + b) (theory.resnet.mlp(m); theta_n packed by
#: theory.resnet.Residual.pack, of length 2 d m + m)
RESIDUALS = ("linear", "tanh", "tanh_out", "bias", "mlp")
_MATRIX_RESIDUALS = RESIDUALS[:3]
#: the hidden width m of the built-in mlp cases
MLP_WIDTH = 3
#: the step rules a case may follow (its `step` argument is the rule's value at its depth N), with the suffix of
#: the case names: the document's 1/N (Eqs. (1), (8)), 1/(N+1) (a HeunNet stepping by one over its N + 1 weight
#: slices, as public code does) and 1 (the standard ResNet x + f(x))
STEP_RULES = {"1/N": "", "1/(N+1)": "_step_1_over_Nplus1", "1": "_step_1"}
#: the seeds of the built-in depths (any other N uses _OTHER_SEED); depths above _SMOOTH_ABOVE draw weights smooth
#: in depth (theta_n = cos(2 pi n/N) A), as deep networks that approach an ODE (resnet-node Section 3.2)
_SEEDS = {1: 31, 10: 32, 100: 33}
_OTHER_SEED = 34
_SMOOTH_ABOVE = 1000
_D = 4


def _step_value(rule: str, N: int) -> float:
    return {"1/N": 1.0 / N, "1/(N+1)": 1.0 / (N + 1), "1": 1.0}[rule]


def _layer_weights(r, residual: str, slices: int, d: int, width: int, smooth: bool):
    """(theta, law) of a bias (theta ~ N(0, 1), shape (K, d)) or perceptron network (V ~ N(0, 1/m) (K, d, m),
    W ~ N(0, 1/d) (K, m, d), b ~ N(0, 1) (K, m), packed into (K, 2 d m + m)); smooth in depth: theta_n =
    cos(2 pi n/N) A for one draw A."""
    from theory.resnet import mlp

    K = 1 if smooth else slices
    if residual == "bias":
        theta, law = r.standard_normal((K, d)), "theta ~ N(0, 1)"
    else:
        V = r.standard_normal((K, d, width)) / np.sqrt(width)
        W = r.standard_normal((K, width, d)) / np.sqrt(d)
        theta = mlp(width).pack(V, W, r.standard_normal((K, width)))
        law = f"V ~ N(0, 1/m), W ~ N(0, 1/d), b ~ N(0, 1), m = {width}, packed (V, W, b)"
    if smooth:
        theta = np.cos(2 * np.pi * np.linspace(0, 1, slices))[:, None] * theta
        law = f"theta_n = cos(2 pi n/N) A, A: {law} (smooth in depth)"
    return theta, law


def _resnet_row(scheme: str, residual: str, N: int, d: int = _D, step: str = "1/N", width: int = MLP_WIDTH):
    """(name, params, inputs) of one network: the built-in cases and the cases at the user's parameters alike."""
    seed = _SEEDS.get(N, _OTHER_SEED)
    r = _rng(seed)
    slices = N + 1 if scheme == "heun" else N
    if residual not in _MATRIX_RESIDUALS:
        theta, law = _layer_weights(r, residual, slices, d, width, N > _SMOOTH_ABOVE)
        x0 = r.standard_normal(d)
    elif N > _SMOOTH_ABOVE:
        s = np.linspace(0, 1, slices)[:, None, None]
        theta = np.cos(2 * np.pi * s) * r.standard_normal((1, d, d)) / np.sqrt(d)
        x0 = r.standard_normal(d)
        law = "theta_n = cos(2 pi n/N) A, A ~ N(0, 1/d) (smooth in depth)"
    else:
        theta = r.standard_normal((slices, d, d)) / np.sqrt(d)
        x0 = r.standard_normal(d)
        law = "theta ~ N(0, 1/d), x0 ~ N(0, 1)"
    params = {"seed": seed, "N": N, "d": d, "scheme": scheme, "residual": residual, "law": law}
    if residual == "mlp":
        params["width"] = width
    if step != "1/N":
        params["step"] = step
    name = (f"{scheme}_{residual}_N{N}" + (f"_d{d}" if d != _D else "")
            + (f"_m{width}" if residual == "mlp" and width != MLP_WIDTH else "") + STEP_RULES[step])
    return (name, params, {"x0": x0, "theta": theta, "residual": residual, "scheme": scheme,
                           "step": _step_value(step, N)})


#: the built-in cases at the other step rules: Heun at 1/(N+1) for every residual and depth 1, 10, 100; Euler at
#: step 1 (no depth scaling) at depths 2 and 3 (at depth 1 it is the step 1/N; from depth 5 on the gradients' rule,
#: a worst-case bound exp(2 N h Lambda), exceeds 1e-5 of the gradient and from depth 10 on 1 %: it decides nothing)
_ALTERNATIVE_STEPS = ([("heun", N, "1/(N+1)") for N in (1, 10, 100)] + [("euler", N, "1") for N in (2, 3)])


def _resnet_rows(long=False):
    """The built-in networks: the matrix residuals (linear, tanh, tanh_out) first, as they always were, then the
    bias and mlp residuals on the same grid of schemes, depths and steps."""
    rows = []
    for scheme in SCHEMES:
        for residual in _MATRIX_RESIDUALS:
            for N in _SEEDS:
                rows.append(_resnet_row(scheme, residual, N))
            if long:
                rows.append(_resnet_row(scheme, residual, 10_000))
    r = _rng(35)
    rows.append(("euler_tanh_out_large_theta_N50",
                 {"seed": 35, "N": 50, "d": 4, "scheme": "euler", "residual": "tanh_out", "law": "theta ~ N(0, 9/d)"},
                 {"x0": r.standard_normal(4), "theta": 3 * r.standard_normal((50, 4, 4)) / 2, "residual": "tanh_out",
                  "scheme": "euler", "step": 1.0 / 50}))
    for scheme, N, step in _ALTERNATIVE_STEPS:
        for residual in _MATRIX_RESIDUALS:
            rows.append(_resnet_row(scheme, residual, N, _D, step))
    for residual in RESIDUALS[3:]:
        for scheme in SCHEMES:
            for N in _SEEDS:
                rows.append(_resnet_row(scheme, residual, N))
            if long:
                rows.append(_resnet_row(scheme, residual, 10_000))
        for scheme, N, step in _ALTERNATIVE_STEPS:
            rows.append(_resnet_row(scheme, residual, N, _D, step))
    return rows


def _check_size(N: int, d: int, kernel: str, width: int = MLP_WIDTH) -> None:
    from ..._validation import check_memory, check_work

    func = f"the oracle's {kernel} cases"
    P = max(d * d, 2 * d * width + width)  # the largest layer: (d, d) or the packed perceptron
    check_memory(8 * 4 * (N + 2) * (P + d), "N", N, func=func,
                 hint=f"The weights ({N + 1}, {P}), the trajectory and its gradient are held at once.")
    check_work(30.0 * (N + 1) * P, "N", N, func=func)


def _depth(theta, scheme) -> int:
    return theta.shape[0] - (1 if scheme == "heun" else 0)


def _scales(theta, residual, scheme, step):
    """(c, a): the step h as the package's 1/N with the weights scaled by c = N h and the state by a.

    Proof of the identities. linear f = theta x and tanh_out f = theta tanh(x) are linear in theta, so
    h f(x, theta) = (1/N) f(x, c theta) for every x: each Euler and Heun step at step h on theta (resnet-node
    Eqs. (1), (8), and the reverse steps (6), (9)) is the package's step at 1/N on c theta, a = 1. tanh
    f = tanh(theta x) is not linear in theta, but with x = a z and a = c: x + h tanh(theta x) = a (z + (h/a)
    tanh((a theta) z)) = a (z + (1/N) tanh((c theta) z)), and the Heun stage y = x + h tanh(theta_n x) is a times
    the package's stage on z likewise, so the trajectory at step h is a times the package's from z0 = x0 / a on
    c theta. At h = 1/N, c = a = 1 exactly and the package is called on the case's own arrays.
    """
    N = _depth(theta, scheme)
    if not (isinstance(step, (float, int)) and not isinstance(step, bool) and 0.0 < step < float("inf")):
        raise ValueError(f"`step` must be a positive finite number; got {step!r}")
    c = 1.0 if step == 1.0 / N else N * float(step)
    return c, (c if residual == "tanh" else 1.0)


def _width(theta, d: int) -> int:
    """The hidden width m of a packed perceptron layer of length P = 2 d m + m = m (2 d + 1)."""
    P = theta.shape[-1]
    if theta.ndim != 2 or P % (2 * d + 1) or P == 0:
        raise ValueError(f"`theta` of an mlp residual must have shape (K, 2 d m + m) = (K, m (2 d + 1)) with d = {d}; "
                         f"got {theta.shape}")
    return P // (2 * d + 1)


def _package_residual(residual, theta, d: int):
    """The package's residual for the case's name: theory.resnet.mlp(m) for 'mlp' (m from theta's shape)."""
    from theory.resnet import mlp

    return mlp(_width(theta, d)) if residual == "mlp" else residual


def _scaled(theta, residual, c: float, d: int):
    """The weights at the package's step 1/N for a case at step h = c / N: h f(x, theta) = (1/N) f(x, S theta)
    with S theta = c theta for the residuals linear in theta (linear, tanh_out, bias; tanh with the state scaled,
    see _scales) and, for the perceptron V tanh(W x + b), linear in V alone: S scales the V block by c (W and b
    unchanged). S is linear and diagonal, so it also maps a gradient in S theta back to theta (the chain rule)."""
    if c == 1.0:
        return theta
    if residual != "mlp":
        return c * theta
    m = _width(theta, d)
    out = np.array(theta, dtype=np.float64, copy=True)
    out[..., : d * m] *= c
    return out


def _forward_at(x0, theta, residual, scheme, step):
    from theory.resnet import forward

    c, a = _scales(theta, residual, scheme, step)
    d = np.shape(x0)[-1]
    res = _package_residual(residual, theta, d)
    if c == 1.0:
        return forward(x0, theta, res, scheme)
    return a * forward(x0 / a, _scaled(theta, residual, c, d), res, scheme)


def _lipschitz_sum(theta, residual="linear", d=None):
    """Lambda = mean over layers of a Lipschitz constant of x -> f(x, theta_n) in the sup norm: ||theta_n||_inf for
    the matrix residuals, 0 for the bias (f does not depend on x), || |V_n| |W_n| ||_inf for the perceptron (its
    Jacobian V_n diag(tanh') W_n has entries at most (|V_n| |W_n|)_ij, |tanh'| <= 1); the flow amplifies errors by at most exp(Lambda)."""
    if residual == "bias":
        return 0.0
    if residual == "mlp":
        from theory.resnet import mlp

        V, W, _ = mlp(_width(theta, d)).unpack(theta, d)
        return float(np.mean(np.max(np.sum(np.abs(V) @ np.abs(W), axis=-1), axis=-1)))
    return float(np.mean(np.max(np.sum(np.abs(theta), axis=-1), axis=-1)))


def _state_dim(inputs) -> int:
    return np.shape(inputs["x0"] if "x0" in inputs else inputs["xN"])[-1]


def _flow_bound(inputs):
    """N h Lambda: at step h the flow amplifies errors by at most prod (1 + h Lip_m) <= exp(N h Lambda)."""
    c, _ = _scales(inputs["theta"], inputs["residual"], inputs["scheme"], inputs["step"])
    return c * _lipschitz_sum(inputs["theta"], inputs["residual"], _state_dim(inputs)), c


def _layer_term(inputs, xmax: float):
    """(m, F) of the bias and perceptron residuals, whose f is not bounded by Lip |x|: F = N h max_n |f|-scale, the
    sum over the layers of h times the size of f's terms (bias: max|theta_n|; perceptron: || |V_n| u_n ||_inf
    with u_n = 1 + max|x| |W_n| 1 + |b_n|, the pre-activation W x + b rounded and passed through tanh' <= 1), and m the
    perceptron's width (m more rounded terms per layer: V tanh(.) sums m products); (0, 0) otherwise."""
    theta, residual = inputs["theta"], inputs["residual"]
    if residual not in ("bias", "mlp"):
        return 0, 0.0
    c, _ = _scales(theta, residual, inputs["scheme"], inputs["step"])  # N h = c
    if residual == "bias":
        return 0, c * float(np.max(np.abs(theta)))
    from theory.resnet import mlp

    d = _state_dim(inputs)
    m = _width(theta, d)
    V, W, b = mlp(m).unpack(theta, d)
    u = 1.0 + xmax * np.sum(np.abs(W), axis=-1) + np.abs(b)  # (K, m): the size of each pre-activation's terms
    return m, c * float(np.max(np.einsum("kim,km->ki", np.abs(V), u)))


def _resnet_traj_tolerance(inputs, ref, eps):
    theta = inputs["theta"]
    if inputs["residual"] in _MATRIX_RESIDUALS:
        N, d = theta.shape[0], theta.shape[-1]
        return (4.0 * (N + d) * eps * float(np.max(np.abs(ref[0]))) * np.exp(_flow_bound(inputs)[0]),)
    N, d = theta.shape[0], _state_dim(inputs)
    xmax = float(np.max(np.abs(ref[0])))
    m, F = _layer_term(inputs, xmax)
    return (4.0 * (N + d + m) * eps * (xmax + F) * np.exp(_flow_bound(inputs)[0]),)


_RESNET_WHY = ("each layer rounds x_n + h f(x_n, theta_n) (a d-term dot product and an addition) by about "
               "(d + 1) eps max|x|, and the discrete flow amplifies an error made at layer n by at most "
               "prod (1 + h Lip_m) <= exp(Lambda) with Lip_m <= ||theta_m||_inf for the linear, tanh and tanh_out "
               "residuals; N layers add up to N of these. The bias f = theta_n does not depend on x (Lip = 0, no "
               "amplification) and adds h theta_n, rounded like max|theta|; the perceptron V tanh(W x + b) has "
               "Lip <= || |V_n| |W_n| ||_inf and |f| <= ||V_n||_inf, not a multiple of |x|: its terms of size "
               "|V_n| (1 + max|x| |W_n| 1 + |b_n|), m more per layer, enter as F")
_TRAJ_RULE = ("max|x - x_ref| <= 4 (N + d) eps max|x_ref| exp(Lambda), Lambda = N h mean_n ||theta_n||_inf "
              "(h the step: N h = 1 at h = 1/N); bias and mlp: 4 (N + d + m) eps (max|x_ref| + F) exp(Lambda) with "
              "F = N h max|theta| and Lambda = 0 (bias), F = N h max_n || |V_n| (1 + max|x_ref| |W_n| 1 + |b_n|) ||_inf "
              "and Lambda = N h mean_n || |V_n| |W_n| ||_inf (mlp, width m; m = 0 for bias)")


def _resnet_forward_ref(x0, theta, residual, scheme, step):
    return (_forward_at(x0, theta, residual, scheme, step),)


# ---------------------------------------------------------------------------------------------- declarations

_X0 = Argument("x0", "(d,)", "float64", "the input x_0")
_THETA = Argument("theta", "(K, d, d), (K, d) or (K, P)", "float64", "the weight slices: K = N for euler, "
                  "K = N + 1 for heun; theta[n] is theta_n of resnet-node Eqs. (1), (8): (d, d) for the matrix "
                  "residuals, (d,) for 'bias', the packed (V, W, b) of length P = 2 d m + m for 'mlp'")
_RESIDUAL = Argument("residual", "scalar", "str", "'linear' f = theta x, 'tanh' f = tanh(theta x), "
                     "'tanh_out' f = theta tanh(x), 'bias' f = theta, 'mlp' f = V tanh(W x + b)")
_SCHEME = Argument("scheme", "scalar", "str", "'euler' (Eq. (1)) or 'heun' (Eq. (8), the HeunNet)")
_STEP = Argument("step", "scalar", "float64", "the step h of every layer: 1/N in the document's cases, 1/(N+1) "
                 "in *_step_1_over_Nplus1, 1 in *_step_1")
_Y = Argument("y", "(d,)", "float64", "the target of the loss 1/2 ||x_N - y||^2")

_STEP_CONVENTION = Convention(
    "the step and the number of weight slices",
    "x_{n+1} = x_n + h f(x_n, theta_n) with h = 1/N and N slices (Euler, resnet-node Eq. (1)); the HeunNet "
    "y_n = x_n + h f(x_n, theta_n), x_{n+1} = x_n + (h/2)(f(x_n, theta_n) + f(y_n, theta_{n+1})) with h = 1/N and "
    "N + 1 slices theta_0 .. theta_N (Eq. (8)); the cases *_step_1_over_Nplus1 (Heun) and *_step_1 (Euler) have "
    "another step in `step`",
    "public HeunNet code steps by 1/(N+1), one over its N + 1 weight slices; a standard ResNet (He et al.) "
    "adds f(x) unscaled (h = 1); some code takes the depth from theta.shape[0] in both schemes",
    "pass `step` as your step h; code with its own fixed step h0: set c = step / h0 and call it on c * theta "
    "(linear, tanh_out, bias: h f(x, theta) = h0 f(x, c theta)); mlp: scale the V block only, V -> c V (theta[:, "
    ":d m] *= c); for tanh also scale the state: return c * fn(x0 / c, c * theta, ...) (a trajectory; see each "
    "kernel for gradients); Heun's depth is theta.shape[0] - 1",
    parameter="step")
_RESIDUAL_CONVENTION = Convention(
    "the residual functions and the layout",
    "f(x, theta) = theta @ x for 'linear', tanh(theta @ x) for 'tanh', theta @ tanh(x) for 'tanh_out' (resnet-node "
    "Section 3.2 and Eq. (1)): theta acts on the column vector x; 'bias' f = theta (theta_n in R^d); 'mlp' "
    "f = V tanh(W x + b) with theta_n = concatenate(V.ravel(), W.ravel(), b), V (d, m), W (m, d), b (m,), row-major "
    "(theory.resnet.mlp(m).pack(V, W, b); m = theta.shape[-1] / (2 d + 1))",
    "row-vector code computes x @ W (W = theta^T); torch.nn.Linear(d, d, bias=False) computes x @ weight.T, i.e. "
    "theta = weight; a pre-activation block is tanh_out, a post-activation one tanh; a PyTorch MLP block is "
    "nn.Linear(d, m) (weight (m, d), bias (m,)), tanh, nn.Linear(m, d, bias=False) (weight (d, m))",
    "row-vector code: pass theta.transpose(0, 2, 1) (and transpose a weight gradient back); nn.Linear: set "
    "weight = theta[n]; mlp: W = first.weight, b = first.bias, V = second.weight, i.e. theta[n] = "
    "np.concatenate([V.ravel(), W.ravel(), b]) and back V = theta[n, :d m].reshape(d, m), W = theta[n, d m:2 d m]"
    ".reshape(m, d), b = theta[n, 2 d m:] (the same slices of a gradient)")

_PARAMETERS = (
    Parameter("N", Int(low=1), 10, "the depth: the number of layers (Euler N weight slices, Heun N + 1); the built-in "
              "depths are 1, 10, 100 (and 10000 for resnet_forward); above 1000 the weights are smooth in depth, "
              "theta_n = cos(2 pi n/N) A"),
    Parameter("d", Int(low=1), _D, "the width of the state x in R^d (the built-in cases: d = 4; another d is in the "
              "case name, _d{d})"),
    Parameter("scheme", OrNone(Choice(*SCHEMES), "both"), None, "None: both schemes; or 'euler' or 'heun'"),
    Parameter("residual", OrNone(Choice(*RESIDUALS), "all five"), None,
              "None: the five residual functions; or one of 'linear', 'tanh', 'tanh_out', 'bias', 'mlp'"),
    Parameter("step", Choice(*STEP_RULES), "1/N", "the rule of the `step` argument: '1/N' (the document), "
              "'1/(N+1)' (names end in _step_1_over_Nplus1) or '1' (names end in _step_1)"),
    Parameter("width", Int(low=1), MLP_WIDTH, f"the hidden width m of the mlp residual (built-in: {MLP_WIDTH}; "
              "another m is in the case name, _m{m}); unused by the other residuals"),
)


def _generator(name, make):
    """The cases of kernel ``name`` at the user's parameters, from the rows of _resnet_row (the code path of the
    built-in cases); ``make(rows)`` turns the rows into the kernel's cases."""
    def generate(N, d, scheme, residual, step, width):
        _check_size(N, d, name, width)
        rows = [_resnet_row(s, r, N, d, step, width) for s in ((scheme,) if scheme else SCHEMES)
                for r in ((residual,) if residual else RESIDUALS)]
        return make(rows)
    return generate


register(Kernel(
    name="resnet_forward",
    trajectory=("x",),
    module="theory.resnet",
    signature="fn(x0, theta, residual, scheme, step) -> x   (trajectory (N+1, d); theta (N, d, d), (N+1, d, d) for "
              "heun; step h, 1/N in the document)",
    make_cases=lambda: [Case(*row) for row in _resnet_rows(long=True)],
    reference=_resnet_forward_ref,
    tolerance=_resnet_traj_tolerance,
    rule=_TRAJ_RULE,
    why=_RESNET_WHY,
    arguments=(_X0, _THETA, _RESIDUAL, _SCHEME, _STEP),
    returns=(Argument("x", "(N+1, d)", "float64", "the trajectory x_0, ..., x_N (x_0 included)"),),
    conventions=(
        _STEP_CONVENTION, _RESIDUAL_CONVENTION,
        Convention("the output", "the whole trajectory x_0 .. x_N, shape (N + 1, d), x_0 first",
                   "code returning x_N only, or the N hidden states without x_0",
                   "return np.vstack([x0, states]) (torch.stack of the list of states)"),
    ),
    parameters=_PARAMETERS,
    generate=_generator("resnet_forward", lambda rows: [Case(*row) for row in rows]),
))


def _reverse_rows(rows):
    cases = []
    for name, params, inputs in rows:
        xN = _forward_at(inputs["x0"], inputs["theta"], inputs["residual"], inputs["scheme"], inputs["step"])[-1]
        cases.append(Case(name, {**params, "xN": "forward(x0, theta)[-1]"},
                          {"xN": xN, "theta": inputs["theta"], "residual": inputs["residual"],
                           "scheme": inputs["scheme"], "step": inputs["step"]}))
    return cases


def _resnet_reverse_ref(xN, theta, residual, scheme, step):
    from theory.resnet import reverse

    c, a = _scales(theta, residual, scheme, step)
    d = np.shape(xN)[-1]
    res = _package_residual(residual, theta, d)
    if c == 1.0:
        return (reverse(xN, theta, res, scheme),)
    return (a * reverse(xN / a, _scaled(theta, residual, c, d), res, scheme),)  # _scales, backwards in depth


register(Kernel(
    name="resnet_reverse",
    module="theory.resnet",
    signature="fn(xN, theta, residual, scheme, step) -> x   (the reverse-time reconstruction, (N+1, d))",
    make_cases=lambda: _reverse_rows(_resnet_rows(long=False)),
    reference=_resnet_reverse_ref,
    tolerance=_resnet_traj_tolerance,
    rule=_TRAJ_RULE,
    why=_RESNET_WHY + " (backwards in depth)",
    arguments=(Argument("xN", "(d,)", "float64", "the output x_N of the forward network (the start of the reverse "
                        "pass)"), _THETA, _RESIDUAL, _SCHEME, _STEP),
    returns=(Argument("x", "(N+1, d)", "float64", "the reconstructed x~_0, ..., x~_N (the last equals xN)"),),
    conventions=(
        Convention("the reverse scheme",
                   "Euler: x~_n = x~_{n+1} - h f(x~_{n+1}, theta_n) (resnet-node Eq. (6)); Heun: y~_n = x~_{n+1} - "
                   "h f(x~_{n+1}, theta_{n+1}), x~_n = x~_{n+1} - (h/2)(f(x~_{n+1}, theta_{n+1}) + f(y~_n, theta_n)) "
                   "(Eq. (9)); an approximate inverse (error O(1/N), Prop. 3; Heun O(Delta_theta/N + 1/N^2), Prop. 5)",
                   "an exact inverse by fixed-point iteration (x_n = x_{n+1} - h f(x_n, theta_n) solved for x_n) "
                   "inverts the forward network instead",
                   "none: the exact inverse differs from the reverse scheme by O(1/N) and fails these cases"),
        _STEP_CONVENTION, _RESIDUAL_CONVENTION,
        Convention("the output", "the whole reconstruction x~_0 .. x~_N, shape (N + 1, d), in forward order "
                   "(x~_N = xN last)",
                   "code returning the states in the order computed (x~_N first) or x~_0 only",
                   "return the reversed list: np.stack(states[::-1])"),
    ),
    parameters=_PARAMETERS,
    generate=_generator("resnet_reverse", _reverse_rows),
))


def _gradient_rows(rows):
    cases = []
    for name, params, inputs in rows:
        r = _rng(params["seed"] + 100)
        cases.append(Case(name, {**params, "y": "N(0, 1), seed + 100"},
                          {"x0": inputs["x0"], "theta": inputs["theta"], "y": r.standard_normal(inputs["x0"].size),
                           "residual": inputs["residual"], "scheme": inputs["scheme"], "step": inputs["step"]}))
    return cases


def _gradient_at(x0, theta, y, residual, scheme, step, method):
    """The package's gradient at step h: with the identities of _scales, L = 1/2 ||x_N - y||^2 = a^2 L~(c theta,
    x0 / a; y / a), L~ the package's loss at step 1/N, so dL/dtheta = a^2 c dL~/dtheta' and dL/dx0 = a dL~/dz0
    (the adjoint computes the same identities step by step: its reverse pass is the package's on the scaled
    variables)."""
    from theory.resnet import gradient

    c, a = _scales(theta, residual, scheme, step)
    d = np.shape(x0)[-1]
    res = _package_residual(residual, theta, d)
    if c == 1.0:
        return tuple(gradient(x0, theta, y, res, scheme, method=method))
    g_theta, g_x0 = gradient(x0 / a, _scaled(theta, residual, c, d), y / a, res, scheme, method=method)
    if residual == "mlp":  # S scales the V block only: dL/dtheta = S dL~/d(S theta)
        return (_scaled(g_theta, residual, c, d), g_x0)
    return (a * a * c * g_theta, a * g_x0)


def _resnet_gradient_ref(x0, theta, y, residual, scheme, step):
    return _gradient_at(x0, theta, y, residual, scheme, step, "backprop")


def _resnet_gradient_tolerance(inputs, ref, eps):
    theta = inputs["theta"]
    x = _forward_at(inputs["x0"], theta, inputs["residual"], inputs["scheme"], inputs["step"])
    flow, c = _flow_bound(inputs)
    amp = np.exp(2.0 * flow)
    r = float(np.max(np.abs(x[-1] - inputs["y"])))
    scale = max(1.0, float(np.max(np.abs(x))))
    if inputs["residual"] in _MATRIX_RESIDUALS:
        N, d = theta.shape[0], theta.shape[-1]
        base = 8.0 * (N + d) * eps * amp
        return (base * (float(np.max(np.abs(ref[0]))) + r * scale * c / N),
                base * (float(np.max(np.abs(ref[1]))) + r))
    # bias, mlp: the forward error's F enters the residual x_N - y, and the perceptron's weight gradients carry
    # the factors ||V_n||_inf (dL/dW, dL/db) and 1 (dL/dV: tanh is bounded)
    N, d = theta.shape[0], _state_dim(inputs)
    m, F = _layer_term(inputs, scale)
    vmax = 1.0
    if inputs["residual"] == "mlp":
        from theory.resnet import mlp

        V, _, _ = mlp(m).unpack(theta, d)
        vmax = max(1.0, float(np.max(np.sum(np.abs(V), axis=-1))))
    base = 8.0 * (N + d + m) * eps * amp
    r = r + F
    return (base * (float(np.max(np.abs(ref[0]))) + r * scale * vmax * c / N),
            base * (float(np.max(np.abs(ref[1]))) + r))


_GRADIENT_RULE = ("max|g - g_ref| <= 8 (N + d) eps exp(2 Lambda) (max|g_ref| + |x_N - y|_inf max(1, max|x|) h) "
                  "(grad_x0: without the h and max|x|), Lambda = N h mean_n ||theta_n||_inf; bias and mlp: "
                  "8 (N + d + m) eps exp(2 Lambda) (max|g_ref| + (|x_N - y|_inf + F) max(1, max|x|) v h), v = "
                  "max(1, max_n ||V_n||_inf) (1 for bias), F and Lambda as in the trajectory rule")
_LOSS_CONVENTION = Convention(
    "the loss",
    "L = 1/2 ||x_N - y||^2 (a sum over the d coordinates, the factor 1/2 included; the squared loss of "
    "resnet-node Eqs. (3), (7))",
    "torch.nn.functional.mse_loss(x_N, y) is the mean ||x_N - y||^2 / d (reduction='mean', the default); "
    "reduction='sum' is ||x_N - y||^2",
    "mse_loss(reduction='mean'): multiply both gradients by d/2; reduction='sum': by 1/2")
_GRADIENT_STEP = Convention(
    "the gradient at another step",
    "the gradients of L at the case's step h (`step`), in theta and x0",
    "code differentiating a network with its own fixed step h0",
    "with c = step / h0: linear and tanh_out, (c * g_theta, g_x0) of fn(x0, c * theta, y); tanh, "
    "(c^3 * g_theta, c * g_x0) of fn(x0 / c, c * theta, y / c); bias, (c * g_theta, g_x0) of fn(x0, c * theta, "
    "y); mlp, V -> c V in theta and the V block of g_theta times c (W and b blocks unchanged), g_x0 unchanged",
    parameter="step")

register(Kernel(
    name="resnet_gradient",
    gradient=True,
    module="theory.resnet",
    signature="fn(x0, theta, y, residual, scheme, step) -> (grad_theta, grad_x0)   (of 1/2 ||x_N - y||^2, exact "
              "backprop)",
    make_cases=lambda: _gradient_rows(_resnet_rows(long=False)),
    reference=_resnet_gradient_ref,
    tolerance=_resnet_gradient_tolerance,
    rule=_GRADIENT_RULE,
    why=_RESNET_WHY + "; the backward pass propagates the residual x_N - y through the transposed layer Jacobians "
        "(another factor exp(Lambda)) and each parameter gradient is an outer product with x_n scaled by h",
    arguments=(_X0, _THETA, _Y, _RESIDUAL, _SCHEME, _STEP),
    returns=(Argument("grad_theta", "(K, d, d)", "float64", "dL/dtheta, the shape of theta"),
             Argument("grad_x0", "(d,)", "float64", "dL/dx0")),
    conventions=(
        _LOSS_CONVENTION, _STEP_CONVENTION, _GRADIENT_STEP, _RESIDUAL_CONVENTION,
        Convention("the exact gradient",
                   "exact backpropagation through the stored trajectory (resnet-node Eq. (3) and its HeunNet "
                   "analogue): Heun's slice theta_n gets a term from step n and one from step n - 1",
                   "the memory-free adjoint (Eq. (7)) is resnet_gradient_adjoint, another kernel",
                   "torch.autograd / jax.grad through the forward pass give this gradient"),
    ),
    parameters=_PARAMETERS,
    generate=_generator("resnet_gradient", _gradient_rows),
))


def _adjoint_cases():
    cases = _gradient_rows(_resnet_rows(long=False))
    r = _rng(36)
    for scheme in SCHEMES:
        N = 2000
        slices = N + 1 if scheme == "heun" else N
        s = np.linspace(0, 1, slices)[:, None, None]
        theta = np.cos(2 * np.pi * s) * r.standard_normal((1, 4, 4)) / 2
        cases.append(Case(f"{scheme}_tanh_N2000", {"seed": 36, "N": N, "d": 4, "scheme": scheme, "residual": "tanh",
                                                   "law": "theta_n = cos(2 pi n/N) A, A ~ N(0, 1/d) (smooth in depth)",
                                                   "y": "N(0, 1)"},
                          {"x0": r.standard_normal(4), "theta": theta, "y": r.standard_normal(4), "residual": "tanh",
                           "scheme": scheme, "step": 1.0 / N}))
    return cases


def _resnet_adjoint_ref(x0, theta, y, residual, scheme, step):
    return _gradient_at(x0, theta, y, residual, scheme, step, "adjoint")


def _resnet_adjoint_tolerance(inputs, ref, eps):
    g_theta, g_x0 = _resnet_gradient_tolerance(inputs, ref, eps)
    amp = np.exp(_flow_bound(inputs)[0])  # the reverse-time reconstruction: one more flow
    return (g_theta * amp, g_x0 * amp)


register(Kernel(
    name="resnet_gradient_adjoint",
    gradient=True,
    module="theory.resnet",
    signature="fn(x0, theta, y, residual, scheme, step) -> (grad_theta, grad_x0)   (the memory-free adjoint: x_N "
              "forward, then x_n rebuilt by the reverse-time scheme while backpropagating)",
    make_cases=_adjoint_cases,
    reference=_resnet_adjoint_ref,
    tolerance=_resnet_adjoint_tolerance,
    rule="the resnet_gradient rule times exp(Lambda): "
         "max|g - g_ref| <= 8 (N + d) eps exp(3 Lambda) (max|g_ref| + |x_N - y|_inf max(1, max|x|) h), "
         "Lambda = N h mean_n ||theta_n||_inf",
    why=_RESNET_WHY + "; the adjoint reconstructs x_n backwards from x_N (the reverse scheme, another factor "
        "exp(Lambda) on the rounding errors) before backpropagating along the reconstruction. The adjoint differs "
        "from the exact gradient by O(1/N^2) per Euler slice and O(Delta_theta/N^2 + 1/N^3) per Heun slice (Prop. 4 "
        "and 6 of the resnet-node paper), far above this rounding rule at small N: an exact backprop fails these "
        "vectors and an adjoint fails resnet_gradient's",
    arguments=(_X0, _THETA, _Y, _RESIDUAL, _SCHEME, _STEP),
    returns=(Argument("grad_theta", "(K, d, d)", "float64", "the adjoint's estimate of dL/dtheta"),
             Argument("grad_x0", "(d,)", "float64", "the adjoint's estimate of dL/dx0")),
    conventions=(
        Convention("the adjoint",
                   "x_N by the forward pass, then x~_n rebuilt by the reverse scheme (resnet-node Eq. (6), Heun "
                   "Eq. (9)) and the gradients of Eq. (7) along x~ (its HeunNet analogue for Heun): an approximate "
                   "gradient, not the exact one",
                   "torch.autograd / jax.grad, or checkpointing, give the exact gradient (resnet_gradient); a "
                   "continuous adjoint (torchdiffeq's odeint_adjoint) solves the ODE instead",
                   "none: an exact gradient fails these cases (by O(1/N^2), Prop. 4), and so does an ODE adjoint"),
        _LOSS_CONVENTION, _STEP_CONVENTION, _GRADIENT_STEP, _RESIDUAL_CONVENTION,
    ),
    parameters=_PARAMETERS,
    generate=_generator("resnet_gradient_adjoint", _gradient_rows),
))
