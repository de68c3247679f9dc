"""Residual families f(x, theta) of a residual network x_{n+1} = x_n + f(x_n, theta_n) / N.

Each family is a small frozen object carrying its kernel code, its formula, the shape of one layer's
parameters and the global constants of Assumption 2 of ``resnet-node`` where they exist. The public
APIs of :mod:`theory.resnet` (which exports :class:`Residual`, :data:`RESIDUALS` and :func:`mlp`) and of
:mod:`theory.momentum` (Eq. (4.2) of Sander's thesis, chapter 4, with the same families) resolve a name to
one of these (:func:`resolve_residual`) before any jitted code runs; the kernels evaluating them are
``theory._residual_kernels``. :func:`ode_work` is the cost model of the interpolating ODE of
``resnet-node`` Definition 1 for a family, shared by :func:`theory.resnet.interpolating_ode` and the
experiments that budget its calls.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._residual_kernels import BIAS, BIAS_SQ, LINEAR, MLP, TANH, TANH_OUT
from ._validation import as_float_array, check_int

__all__ = ["Residual", "RESIDUALS", "mlp", "resolve_residual", "ode_work"]


@dataclass(frozen=True)
class Residual:
    """A residual family f(x, theta) with x in R^d.

    Attributes
    ----------
    name : str
        Registry name.
    code : int
        Kernel code (see ``theory._residual_kernels``).
    formula : str
        The defining formula.
    width : int
        Hidden width m of the perceptron family; 0 for the others.
    """

    name: str
    code: int
    formula: str
    width: int = 0

    def __post_init__(self):
        func = "theory.resnet.Residual"
        for key in ("name", "formula"):
            if not isinstance(getattr(self, key), str):
                raise TypeError(f"`{key}` of {func} must be a string; got {type(getattr(self, key)).__name__}.")
        codes = {r.code for r in RESIDUALS.values()} | {MLP} if "RESIDUALS" in globals() else None
        code = check_int(self.code, "code", func=func)
        if codes is not None and code not in codes:
            raise ValueError(f"`code` of {func} must be a kernel code, one of {sorted(codes)}; got {code}.")
        width = check_int(self.width, "width", func=func, minimum=0)
        if (code == MLP) != (width >= 1):
            raise ValueError(f"`width` of {func} must be >= 1 for the perceptron family (code {MLP}) and 0 "
                             f"for the others; got {width} with code {code}.")
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "width", width)

    def param_shape(self, d: int) -> tuple[int, ...]:
        """Shape of one layer's parameters for states in R^d."""
        if self.code in (LINEAR, TANH, TANH_OUT):
            return (d, d)
        if self.code == MLP:
            return (2 * d * self.width + self.width,)
        return (d,)

    def pack(self, V, W, b):
        """Flatten perceptron weights V (..., d, m), W (..., m, d), b (..., m) into (..., P)."""
        if self.code != MLP:
            raise TypeError(f"pack applies to the 'mlp' family only; this residual is {self.name!r}.")
        func = "theory.resnet.Residual.pack"
        m = self.width
        V = as_float_array(V, "V", func=func, ndim=tuple(range(2, 33)))
        lead, d = V.shape[:-2], V.shape[-2]
        if V.shape[-1] != m or d < 1:
            raise ValueError(f"`V` of {func} must have shape (..., d, {m}) with d >= 1; got {V.shape}.")
        W = as_float_array(W, "W", func=func, shape=(*lead, m, d))
        b = as_float_array(b, "b", func=func, shape=(*lead, m))
        return np.concatenate([V.reshape(lead + (-1,)), W.reshape(lead + (-1,)), b.reshape(lead + (-1,))], axis=-1)

    def unpack(self, theta, d: int):
        """Inverse of :meth:`pack`: return (V, W, b)."""
        if self.code != MLP:
            raise TypeError(f"unpack applies to the 'mlp' family only; this residual is {self.name!r}.")
        func = "theory.resnet.Residual.unpack"
        m = self.width
        d = check_int(d, "d", func=func, minimum=1)
        theta = as_float_array(theta, "theta", func=func, ndim=tuple(range(1, 33)))
        if theta.shape[-1] != 2 * d * m + m:
            raise ValueError(f"`theta` of {func} must have shape (..., {2 * d * m + m}) = (..., 2 d m + m) for d = {d}, "
                             f"m = {m}; got {theta.shape}.")
        lead = theta.shape[:-1]
        V = theta[..., : d * m].reshape(lead + (d, m))
        W = theta[..., d * m : 2 * d * m].reshape(lead + (m, d))
        b = theta[..., 2 * d * m :]
        return V, W, b

    def lipschitz_x(self, theta, d: int) -> float:
        """max_n of a global Lipschitz constant of x -> f(x, theta_n) in the Euclidean norm.

        linear, tanh, tanh_out: ||theta_n||_op (``|tanh'| <= 1``), a convex function of theta, so the
        bound also holds between slices under weight interpolation; mlp: max_n ||V_n||_op times
        max_n ||W_n||_op (the product of separate maxima, because interpolating V and W jointly can
        exceed every slice's own ||V_n|| ||W_n||); the two bias families do not depend on x (0).
        """
        theta = np.asarray(theta, dtype=np.float64)
        if self.code in (LINEAR, TANH, TANH_OUT):
            return float(np.max(np.linalg.norm(theta, ord=2, axis=(-2, -1))))
        if self.code == MLP:
            V, W, _ = self.unpack(theta, d)
            return float(np.max(np.linalg.norm(V, 2, axis=(-2, -1))) * np.max(np.linalg.norm(W, 2, axis=(-2, -1))))
        return 0.0

    def sup_norm(self, theta, d: int) -> float:
        """max_n sup_x ||f(x, theta_n)||, the constant C_f of Assumption 2 (inf where unbounded).

        tanh: sqrt(d); tanh_out: sqrt(d) ||theta_n||_op; mlp: sqrt(m) ||V_n||_op; linear: inf.
        """
        theta = np.asarray(theta, dtype=np.float64)
        if self.code == LINEAR:
            return float("inf")
        if self.code == TANH:
            return float(np.sqrt(d))
        if self.code == TANH_OUT:
            return float(np.sqrt(d) * np.max(np.linalg.norm(theta, ord=2, axis=(-2, -1))))
        if self.code == MLP:
            V, _, _ = self.unpack(theta, d)
            return float(np.sqrt(self.width) * np.max(np.linalg.norm(V, 2, axis=(-2, -1))))
        if self.code == BIAS:
            return float(np.max(np.linalg.norm(theta, axis=-1)))
        return float(np.max(np.linalg.norm(theta * theta, axis=-1)))


RESIDUALS = {
    "linear": Residual("linear", LINEAR, "f(x, theta) = theta x"),
    "tanh": Residual("tanh", TANH, "f(x, theta) = tanh(theta x)"),
    "tanh_out": Residual("tanh_out", TANH_OUT, "f(x, theta) = theta tanh(x)"),
    "bias": Residual("bias", BIAS, "f(x, theta) = theta (theta in R^d)"),
    "bias_sq": Residual("bias_sq", BIAS_SQ, "f(x, theta) = theta * theta, elementwise"),
}


def mlp(width: int) -> Residual:
    """The perceptron family f(x, theta) = V tanh(W x + b) with hidden width ``width``.

    One layer's parameters are the flat vector (V.ravel(), W.ravel(), b) of length 2 d m + m; build
    it with :meth:`Residual.pack`.
    """
    width = check_int(width, "width", func="theory.resnet.mlp", minimum=1)
    return Residual("mlp", MLP, "f(x, theta) = V tanh(W x + b)", width)


def resolve_residual(residual, func: str) -> Residual:
    """Map a family name or a :class:`Residual` to a :class:`Residual`."""
    if isinstance(residual, Residual):
        return residual
    if isinstance(residual, str):
        if residual in RESIDUALS:
            return RESIDUALS[residual]
        if residual == "mlp":
            raise ValueError(f"`residual` of {func}: the 'mlp' family needs a width; pass theory.resnet.mlp(width).")
        raise ValueError(f"`residual` of {func} must be one of {sorted(RESIDUALS)} or a Residual; got {residual!r}.")
    raise TypeError(f"`residual` of {func} must be a family name or a Residual; got {type(residual).__name__}.")


#: floating-point operations charged per right-hand-side evaluation of the interpolating ODE, at least: one
#: evaluation is a Python call (tens of microseconds), whatever the size of the residual
ODE_EVAL_OVERHEAD = 20_000


def ode_work(cells, lipschitz, samples, residual, d):
    """Rough cost, in floating-point operations, of :func:`theory.resnet.interpolating_ode` on ``cells`` cells.

    DOP853 takes 12 right-hand-side evaluations per step; a smooth cell needs a few tens of steps at
    tight tolerance, and stability of an explicit scheme needs steps h <= ~4 / L, i.e. at least
    L / 4 steps over [0, 1] for a Lipschitz constant L; the curvature samples take 4 evaluations
    each. Each evaluation of ``residual`` (a :class:`Residual`) in R^d is charged its flops,
    2 (2 d m + m) for the perceptron family and 2 d^2 otherwise, or :data:`ODE_EVAL_OVERHEAD`,
    whichever is larger.
    """
    m = residual.width
    per_eval = max(ODE_EVAL_OVERHEAD, 2 * (2 * d * m + m) if m else 2 * d * d)
    evals = 12.0 * (30.0 * cells + lipschitz / 4.0) + 4.0 * cells * (samples + 1.0)
    return evals * per_eval
