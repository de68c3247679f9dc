r"""The parameters and the inputs of the residual network of implicit-reg, Eq. (3), validated once.

Shared private module (the conventions' rule for a piece used by two packages): :mod:`theory.implicit` trains and
differentiates the network, :mod:`theory.pl` evaluates its Polyak-Łojasiewicz ratios (Definition 1, Prop. 5); both
read their ``params``, ``X`` and ``Y`` through these functions, so a shape error reads the same in both. The network:
:math:`h_0 = A x`, :math:`h_k = h_{k-1} + \tfrac1L V_k \sigma(W_k h_{k-1})`, :math:`F(x) = B h_L`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from ._validation import as_float_array

__all__ = ["Params", "as_params", "as_inputs", "as_targets"]


@dataclasses.dataclass(frozen=True, eq=False)
class Params:
    r"""Parameters of the network of Eq. (3) (also used for their gradients).

    Attributes
    ----------
    A : ndarray, shape (q, d)
        Input layer, :math:`h_0 = A x`.
    V : ndarray, shape (L, q, m)
        Outer residual weights; ``V[k]`` is the paper's :math:`V_{k+1}`.
    W : ndarray, shape (L, m, q)
        Inner residual weights; ``W[k]`` is the paper's :math:`W_{k+1}`.
    B : ndarray, shape (d', q)
        Output layer, :math:`F(x) = B h_L`.
    """

    A: np.ndarray
    V: np.ndarray
    W: np.ndarray
    B: np.ndarray

    @property
    def L(self) -> int:
        return self.V.shape[0]

    @property
    def q(self) -> int:
        return self.A.shape[0]

    @property
    def m(self) -> int:
        return self.V.shape[2]

    @property
    def d(self) -> int:
        return self.A.shape[1]

    @property
    def d_out(self) -> int:
        return self.B.shape[0]

    def as_dict(self) -> dict:
        """The four arrays, keyed "A", "V", "W", "B"."""
        return {"A": self.A, "V": self.V, "W": self.W, "B": self.B}


def as_params(params, func, name="params", copy=True) -> Params:
    """Validated float64 C-contiguous ``params`` (a :class:`Params` or a mapping A, V, W, B).

    ``copy=True`` returns new arrays (for callers that update them in place, as :func:`train`);
    ``copy=False`` passes arrays that are already float64 and C-contiguous through for reading.
    """
    if isinstance(params, Params):
        raw = params.as_dict()
    elif isinstance(params, Mapping):
        missing = [k for k in "AVWB" if k not in params]
        if missing:
            raise ValueError(f"`{name}` of {func} must hold the arrays A, V, W, B; missing {missing}.")
        raw = {k: params[k] for k in "AVWB"}
    else:
        raise TypeError(f"`{name}` of {func} must be a theory.implicit.Params or a mapping with keys A, V, W, B; "
                        f"got {type(params).__name__}.")
    A = as_float_array(raw["A"], f"{name}.A", func=func, ndim=2, copy=copy)
    q, d = A.shape
    if q < 1 or d < 1:
        raise ValueError(f"`{name}.A` of {func} must have shape (q, d) with q, d >= 1; got {A.shape}.")
    V = as_float_array(raw["V"], f"{name}.V", func=func, ndim=3, copy=copy)
    L, qv, m = V.shape
    if L < 1 or m < 1 or qv != q:
        raise ValueError(f"`{name}.V` of {func} must have shape (L, q, m) with L, m >= 1 and q = {q} from "
                         f"`{name}.A`; got {V.shape}.")
    W = as_float_array(raw["W"], f"{name}.W", func=func, ndim=3, copy=copy)
    if W.shape != (L, m, q):
        raise ValueError(f"`{name}.W` of {func} must have shape (L, m, q) = ({L}, {m}, {q}) from `{name}.V`; "
                         f"got {W.shape}.")
    B = as_float_array(raw["B"], f"{name}.B", func=func, ndim=2, copy=copy)
    if B.shape[0] < 1 or B.shape[1] != q:
        raise ValueError(f"`{name}.B` of {func} must have shape (d', q) with d' >= 1 and q = {q}; got {B.shape}.")
    return Params(A, V, W, B)


def as_inputs(X, p: Params, func):
    X = as_float_array(X, "X", func=func, ndim=2)
    if X.shape[0] < 1 or X.shape[1] != p.d:
        raise ValueError(f"`X` of {func} must have shape (n, d) with n >= 1 and d = {p.d} from `params.A`; "
                         f"got {X.shape}.")
    return X


def as_targets(Y, n, p: Params, func):
    Y = as_float_array(Y, "Y", func=func, ndim=2)
    if Y.shape != (n, p.d_out):
        raise ValueError(f"`Y` of {func} must have shape (n, d') = ({n}, {p.d_out}) from `X` and `params.B`; "
                         f"got {Y.shape}.")
    return Y


Params.__module__ = "theory.implicit"  # documented and pickled under its public name
