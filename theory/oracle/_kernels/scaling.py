"""Oracle kernels: scaled ResNets at initialisation (theory.scaling.forward)."""

from __future__ import annotations

import math

import numpy as np

from ...experiments.config import Int, Real
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _guard, _rng, _tag, _validated

#: the negative-side slope of leaky_relu in the default cases: theory.scaling.forward's default (the example of
#: scaling Table 1; tests/test_oracle_show.py checks that the two agree)
SLOPE = 0.8
#: the slopes of the alternative-convention cases: PyTorch's and JAX's default 0.01, TensorFlow's 0.2
_OTHER_SLOPES = (0.01, 0.2)
#: the width of the built-in cases
_D = 4
#: the seeds of the built-in cases at their (depth L, exponent beta); any other pair uses _OTHER_SEED
_SEEDS = {(1, 0.5): 71, (100, 0.5): 72, (1000, 1.0): 73}
_OTHER_SEED = 74
#: the architectures of scaling Table 1 with the activations of their cases (res-3 is ReLU by definition)
_ARCHS = (("res1", ("relu", "tanh", "leaky_relu", "identity")), ("res2", ("relu", "tanh", "leaky_relu")),
          ("res3", ("relu",)))
#: the built-in cases before the leaky_relu slope became an argument (their names and inputs are kept)
_FIRST = {("res1", a) for a in _ARCHS[0][1]} | {("res2", "relu"), ("res2", "tanh"), ("res3", "relu")}


def _scaling_case(arch: str, activation: str, L: int, beta: float, d: int = _D, slope: float = SLOPE) -> Case:
    """One case: V, W ~ N(0, 1/d) entries and h0 ~ N(0, 1) from the seed of (L, beta). The name is the built-in
    one, ``{arch}_{activation}_L{L}_beta{beta}``, suffixed ``_d{d}`` off the built-in width and ``_slope{s}`` for
    leaky_relu off the default slope (the other activations always carry the default slope, which they ignore)."""
    seed = _SEEDS.get((L, beta), _OTHER_SEED)
    leaky = activation == "leaky_relu"
    slope = float(slope) if leaky else SLOPE
    r = _rng(seed)
    V = r.standard_normal((L, d, d)) / np.sqrt(d)
    W = np.zeros((0,)) if arch == "res1" else r.standard_normal((L, d, d)) / np.sqrt(d)  # res1: empty, no W
    inputs = {"h0": r.standard_normal(d), "V": V, "W": W, "beta": beta, "arch": arch, "activation": activation,
              "slope": slope}
    params = {"seed": seed, "L": L, "d": d, "beta": beta, "arch": arch, "activation": activation,
              "law": "V, W ~ N(0, 1/d) entries, h0 ~ N(0, 1)"}
    if leaky:
        params["slope"] = slope
    name = (f"{arch}_{activation}_L{L}_beta{beta}" + ("" if d == _D else f"_d{d}")
            + (f"_slope{_tag(slope)}" if leaky and slope != SLOPE else ""))
    return Case(name, params, inputs)


def _scaling_generate(L: int, beta: float, d: int, slope: float) -> list[Case]:
    """The cases of every architecture and activation at depth L, exponent beta, width d and leaky slope
    ``slope``: the code path of the built-in cases (``--param L=5000 --param slope=0.01``)."""
    _guard("scaling_forward", "L", L, nbytes=8.0 * 6 * L * d * d,
           ops=L * (4.0 * d ** 3 + 1e5),  # the tolerance rule: a d x d product per layer in a Python loop
           hint=f"The tolerance rule multiplies the L = {L} layer Jacobians of size d = {d}.")
    return _validated("scaling_forward", [_scaling_case(a, act, L, beta, d, slope)
                                          for a, acts in _ARCHS for act in acts])


def _scaling_cases():
    cases = [_scaling_case(arch, activation, L, beta) for arch, acts in _ARCHS for activation in acts
             if (arch, activation) in _FIRST for L, beta in _SEEDS]
    cases += [_scaling_case("res2", "leaky_relu", L, beta) for L, beta in _SEEDS]
    cases += [_scaling_case(arch, "leaky_relu", L, beta, slope=s) for arch in ("res1", "res2") for s in _OTHER_SLOPES
              for L, beta in _SEEDS]
    return cases


def _scaling_ref(h0, V, W, beta, arch, activation, slope):
    from theory.scaling import forward

    return (forward(h0, V, None if W.size == 0 else W, beta, arch, activation, slope=slope),)


def _activation_slope(activation, z, slope):
    if activation == "relu":
        return (z > 0).astype(float)
    if activation == "leaky_relu":
        return np.where(z > 0, 1.0, slope)
    if activation == "tanh":
        return 1.0 - np.tanh(z) ** 2
    return np.ones_like(z)


def _scaling_tol(inputs, ref, eps):
    """Amplification max_l ||d h_L / d h_l||_inf from the layer Jacobians I + L^-beta V_l diag(sigma') W_l along
    the reference trajectory, accumulated from the top."""
    V, W, beta, h = inputs["V"], inputs["W"], inputs["beta"], ref[0]
    activation, slope = inputs["activation"], float(inputs["slope"])
    L, d = V.shape[0], V.shape[-1]
    alpha = L ** (-beta)
    A = np.eye(d)
    amp = 1.0
    for l in range(L - 1, -1, -1):
        if W.size == 0:
            J = np.eye(d) + alpha * V[l] * _activation_slope(activation, h[l], slope)[None, :]
        else:
            J = np.eye(d) + alpha * (V[l] * _activation_slope(activation, W[l] @ h[l], slope)[None, :]) @ W[l]
        A = A @ J
        amp = max(amp, float(np.max(np.sum(np.abs(A), axis=1))))
    return (4.0 * (L + 2 * d) * eps * float(np.max(np.abs(h))) * amp,)


register(Kernel(
    name="scaling_forward",
    trajectory=("h",),
    module="theory.scaling",
    signature="fn(h0, V, W, beta, arch, activation, slope) -> h   ((L+1, d); W empty (shape (0,)) for res1, "
              "meaning none; slope: leaky_relu's negative-side slope)",
    make_cases=_scaling_cases,
    reference=_scaling_ref,
    tolerance=_scaling_tol,
    rule="max|h - h_ref| <= 4 (L + 2d) eps max|h_ref| max_l ||d h_L / d h_l||_inf",
    why="each layer h + L^-beta V sigma(W h) rounds two d-term dot products and an addition (about 2d eps "
        "max|h|), and an error made at layer l reaches the output multiplied by the Jacobian of the remaining "
        "layers, the product of I + L^-beta V_k diag(sigma'(W_k h_k)) W_k along the reference trajectory (its "
        "largest infinity norm over l is the condition number used; the worst-case product of layer Lipschitz "
        "constants would be exp(L^(1-beta) ||V|| ||W||), astronomically loose for beta = 1/2)",
    arguments=(
        Argument("h0", "(d,)", "float64", "the input h_0 = A x of the residual layers"),
        Argument("V", "(L, d, d)", "float64", "V[k] is V_{k+1}, the outer matrix of layer k + 1 (L = V.shape[0])"),
        Argument("W", "(L, d, d) or (0,)", "float64", "W[k] is W_{k+1} (res2, res3); an empty array for res1"),
        Argument("beta", "scalar", "float", "the scaling exponent, beta > 0: alpha_L = L^-beta"),
        Argument("arch", "scalar", "str", "'res1', 'res2' or 'res3' (scaling Table 1)"),
        Argument("activation", "scalar", "str", "'relu', 'tanh', 'leaky_relu' or 'identity' (always 'relu' with "
                 "res3)"),
        Argument("slope", "scalar", "float", "the negative-side slope s of leaky_relu, x_+ + s min(x, 0) (given to "
                 "every case; only leaky_relu uses it)"),
    ),
    returns=(Argument("h", "(L+1, d)", "float64", "the hidden states h_0, h_1, ..., h_L as rows"),),
    conventions=(
        Convention("the residual scaling alpha_L",
                   "h_{k+1} = h_k + L^-beta V_{k+1} g(h_k, theta_{k+1}), alpha_L = L^-beta with L = V.shape[0] "
                   "(scaling, model (4))",
                   "no factor (alpha = 1: torchvision's ResNets, He et al. 2016); a fixed factor such as 1/L or "
                   "1/sqrt(L) written into the block; the scale moved into the initialisation variance "
                   "(Var(alpha V) = alpha^2 Var(V), Section 2 of scaling)",
                   "call an implementation with a fixed factor alpha (1 for none) with V * L**(-beta) / alpha: the "
                   "residual branch is linear in V"),
        Convention("the layer and its weights",
                   "res-1: V_k sigma(h), res-2: V_k sigma(W_k h), res-3: V_k ReLU(W_k h) (scaling Table 1), no "
                   "bias; V[k] and W[k] act on column vectors",
                   "torch.nn.Linear(d, d, bias=False) computes x @ weight.T, i.e. weight x; a bias, or a "
                   "pre-activation block sigma(h) first, is another network",
                   "load V[k] and W[k] as the Linear layers' weight, untransposed, with bias=False"),
        Convention("leaky ReLU's negative slope",
                   "sigma(x) = x_+ + s min(x, 0) with s the argument `slope`: 0.8 in the default cases (the example "
                   "of scaling Table 1, which asks s in [1/sqrt(2), 1)), and cases at 0.01 and 0.2",
                   "torch.nn.LeakyReLU and jax.nn.leaky_relu default to negative_slope = 0.01, tf.nn.leaky_relu to "
                   "alpha = 0.2, Keras's LeakyReLU to 0.3; reading the x_- of Table 1 as the nonnegative part "
                   "max(-x, 0) gives x_+ + s max(-x, 0)",
                   "pass negative_slope=slope (never the library's default); for x_+ + s max(-x, 0) pass s = -slope",
                   parameter="slope"),
        Convention("res-1 has no W",
                   "W is an empty array, shape (0,), in the res1 cases",
                   "None, or an identity that is never used",
                   "W = None if W.size == 0 else W"),
        Convention("the returned states",
                   "all L + 1 states h_0, ..., h_L as the rows of one array (h_0 the input itself)",
                   "a network's forward() returns h_L alone, or the states after each layer without h_0",
                   "collect the states and return np.stack([h_0, h_1, ..., h_L])"),
    ),
    parameters=(
        Parameter("L", Int(low=1), 100, "the depth (V.shape[0]); the built-in cases have L = 1, 100, 1000"),
        Parameter("beta", Real(0.0, math.inf, closed="neither"), 0.5, "the scaling exponent (built-in: 0.5, 1)"),
        Parameter("d", Int(low=1), _D, "the width (built-in: 4)"),
        Parameter("slope", Real(-1.0, 1.0), SLOPE, "the negative-side slope of the leaky_relu cases (built-in: 0.8, "
                  "0.01, 0.2); the other activations ignore it"),
    ),
    generate=_scaling_generate,
))
