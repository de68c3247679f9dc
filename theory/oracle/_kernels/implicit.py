"""Oracle kernels: the residual network of implicit-reg (theory.implicit): forward and loss gradient."""

from __future__ import annotations

import numpy as np

from ...experiments.config import Choice, Int, OrNone
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _rng

ACTIVATIONS = ("tanh", "relu", "gelu", "sin", "identity")
#: the built-in networks (L, n, d, q, m) and their seeds (any other shape uses _OTHER_SEED); the output dimension
#: d' is 2 throughout
_BUILT_IN = {(1, 3, 2, 4, 3): 91, (10, 5, 3, 6, 5): 92, (200, 4, 2, 5, 4): 93}
_OTHER_SEED = 94
_D_OUT = 2


def _implicit_case(activation, L, n, d, q, m):
    """One network and its data: the built-in cases (named {activation}_L{L}_q{q}_m{m}) and the cases at the user's
    parameters (named {activation}_L{L}_n{n}_d{d}_q{q}_m{m} unless the shape is a built-in one) alike."""
    shape = (L, n, d, q, m)
    seed = _BUILT_IN.get(shape, _OTHER_SEED)
    r = _rng(seed)
    inputs = {"X": r.standard_normal((n, d)), "Y": r.standard_normal((n, _D_OUT)),
              "A": r.standard_normal((q, d)) / np.sqrt(d), "V": r.standard_normal((L, q, m)),
              "W": r.standard_normal((L, m, q)), "B": r.standard_normal((_D_OUT, q)) / np.sqrt(q),
              "activation": activation}
    name = (f"{activation}_L{L}_q{q}_m{m}" if shape in _BUILT_IN else f"{activation}_L{L}_n{n}_d{d}_q{q}_m{m}")
    return Case(name, {"seed": seed, "L": L, "n": n, "d": d, "q": q, "m": m, "activation": activation,
                       "law": "entries N(0,1) (A, B scaled by 1/sqrt(fan-in)); X, Y ~ N(0,1)"}, inputs)


def _implicit_cases():
    return [_implicit_case(activation, *shape) for activation in ACTIVATIONS for shape in _BUILT_IN]


def _generate(L, n, d, q, m, activation):
    from ..._validation import check_memory, check_work

    if q < max(d, _D_OUT):
        raise ValueError(f"the hidden width q must be at least max(d, d') = {max(d, _D_OUT)} (implicit-reg Section 3, "
                         f"d' = {_D_OUT}); got q = {q}")
    func = "the oracle's implicit cases"
    check_memory(8 * (4 * (L + 1) * n * q + 4 * L * q * m + n * (d + q)), "L", L, func=func,
                 hint=f"The states ({L + 1}, {n}, {q}), the weights ({L}, {q}, {m}) and their gradients.")
    check_work(20.0 * L * n * q * m + 10.0 * n * q * d, "L", L, func=func)
    return [_implicit_case(a, L, n, d, q, m) for a in ((activation,) if activation else ACTIVATIONS)]


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

_ARGUMENTS = (
    Argument("X", "(n, d)", "float64", "the inputs, one sample per row"),
    Argument("Y", "(n, dp)", "float64", "the targets (dp = d' = 2; unused by the forward pass)"),
    Argument("A", "(q, d)", "float64", "the input layer, h_0 = A x"),
    Argument("V", "(L, q, m)", "float64", "V[k] is V_{k+1} of implicit-reg Eq. (3)"),
    Argument("W", "(L, m, q)", "float64", "W[k] is W_{k+1} of Eq. (3)"),
    Argument("B", "(dp, q)", "float64", "the output layer, F = B h_L"),
    Argument("activation", "scalar", "str", "'tanh', 'relu', 'gelu' (exact), 'sin' or 'identity'"),
)
_MODEL_CONVENTION = Convention(
    "the scaling of the residual layers",
    "h_0 = A x, h_{k+1} = h_k + V_{k+1} sigma(W_{k+1} h_k / sqrt(q)) / (L sqrt(m)), F = B h_L (implicit-reg Eq. (3)): "
    "the factors 1/L and 1/sqrt(m), 1/sqrt(q) are explicit, the weights of order 1",
    "a standard ResNet without the factors (h + V sigma(W h)), or with the width scaling folded into the "
    "initialisation (standard parametrisation)",
    "code without the factors: call it with V / (L sqrt(m)) and W / sqrt(q); its gradients in V and W times "
    "1 / (L sqrt(m)) and 1 / sqrt(q) are ours")
_LAYOUT_CONVENTION = Convention(
    "the layout",
    "samples in rows: h_0 = X A^T of shape (n, q); V[k] and W[k] hold the paper's layer k + 1 (V_1 .. V_L); "
    "F = h_L B^T of shape (n, d')",
    "torch.nn.Linear(q, m, bias=False) stores its weight as (m, q) and computes h @ weight.T: W_k = weight, likewise "
    "V_k = the weight of nn.Linear(m, q); column-sample code (x in columns) takes X.T",
    "set W[k] = linear1.weight, V[k] = linear2.weight (no bias); column-sample code: pass X.T and transpose h and "
    "F back")
_ACTIVATION_CONVENTION = Convention(
    "the activations",
    "elementwise tanh, relu (relu'(0) = 0), the exact gelu x Phi(x) (Phi the standard normal cdf), sin, identity",
    "torch.nn.functional.gelu is exact by default (approximate='none'); jax.nn.gelu defaults to the tanh "
    "approximation (approximate=True)",
    "JAX: jax.nn.gelu(x, approximate=False); PyTorch: gelu(x) (not approximate='tanh')")
_PARAMETERS = (
    Parameter("L", Int(low=1), 10, "the depth (the built-in shapes (L, n, d, q, m): (1, 3, 2, 4, 3), (10, 5, 3, 6, 5), "
              "(200, 4, 2, 5, 4); another shape is named {activation}_L{L}_n{n}_d{d}_q{q}_m{m})"),
    Parameter("n", Int(low=1), 5, "the number of samples"),
    Parameter("d", Int(low=1), 3, "the input dimension"),
    Parameter("q", Int(low=2), 6, "the hidden width, q >= max(d, d') (d' = 2)"),
    Parameter("m", Int(low=1), 5, "the inner width of the residual perceptrons"),
    Parameter("activation", OrNone(Choice(*ACTIVATIONS), "all five"), None,
              "None: the five activations; or one of " + ", ".join(map(repr, ACTIVATIONS))),
)

register(Kernel(
    name="implicit_forward",
    trajectory=("h",),
    module="theory.implicit",
    signature="fn(X, Y, A, V, W, B, activation) -> (h, F)   (h (L+1, n, q), F (n, d'); Y unused)",
    make_cases=_implicit_cases,
    reference=_implicit_forward_ref,
    tolerance=_implicit_forward_tol,
    rule="max|h - h_ref| <= 4 (L + m + q + d) eps G max|h_ref| (F: times ||B||_inf), "
         "G = prod_k (1 + ||V_k||_inf ||W_k||_inf / (L sqrt(m q)))",
    why=_IMPLICIT_WHY,
    arguments=_ARGUMENTS,
    returns=(Argument("h", "(L+1, n, q)", "float64", "the hidden states h_0 .. h_L (h_0 = X A^T included)"),
             Argument("F", "(n, dp)", "float64", "the outputs F(x_i) = B h_L")),
    conventions=(_MODEL_CONVENTION, _LAYOUT_CONVENTION, _ACTIVATION_CONVENTION,
                 Convention("the outputs", "the states of every layer, h_0 first, and F",
                            "code returning F only, or h_1 .. h_L without h_0",
                            "return (np.stack([h0, *states]), F)")),
    parameters=_PARAMETERS,
    generate=_generate,
))

register(Kernel(
    name="implicit_gradient",
    gradient=True,
    module="theory.implicit",
    signature="fn(X, Y, A, V, W, B, activation) -> (loss, dA, dV, dW, dB)   (loss (1/n) sum ||F(x_i) - y_i||^2)",
    make_cases=_implicit_cases,
    reference=_implicit_gradient_ref,
    tolerance=_implicit_gradient_tol,
    rule="max|g - g_ref| <= 8 (L + m + q + n + d) eps G^2 (max|g_ref| + 2 |F - Y|_inf ||B||_inf S^2), "
         "S = max(1, max|h|, max|X|) (loss: S instead of 2 S^2)",
    why=_IMPLICIT_WHY,
    arguments=_ARGUMENTS,
    returns=(Argument("loss", "scalar", "float64", "the empirical risk (1/n) sum_i ||F(x_i) - y_i||^2"),
             Argument("dA", "(q, d)", "float64", "d loss / dA"),
             Argument("dV", "(L, q, m)", "float64", "d loss / dV (not the depth-scaled L d loss / dV of Eq. (4))"),
             Argument("dW", "(L, m, q)", "float64", "d loss / dW"),
             Argument("dB", "(dp, q)", "float64", "d loss / dB")),
    conventions=(
        Convention("the loss",
                   "the mean squared error (1/n) sum_i ||F(x_i) - y_i||^2 of implicit-reg Section 3 ('Data and "
                   "loss'): a mean over the n samples, a sum over the d' outputs, no 1/2",
                   "torch.nn.functional.mse_loss(F, Y) (reduction='mean') averages over all n d' entries; a "
                   "1/2 ||.||^2 loss halves it",
                   "mse_loss: multiply the loss and every gradient by d'; a 1/2-loss: by 2"),
        Convention("the gradient",
                   "the plain gradients of the loss in A, V, W and B",
                   "the gradient flow of Eq. (4) moves V_k and W_k by L times their gradient (the depth-scaled "
                   "metric)",
                   "from the flow's velocities: divide those of V and W by L (and change the sign)"),
        _MODEL_CONVENTION, _LAYOUT_CONVENTION, _ACTIVATION_CONVENTION,
    ),
    parameters=_PARAMETERS,
    generate=_generate,
))
