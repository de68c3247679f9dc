"""Time-stepping schemes of a residual network with step 1/N (``resnet-node``, Eqs. (1), (6), (8), (9)).

Each scheme is a small frozen record of metadata plus its kernels; the API resolves the name in Python.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._validation import check_int
from . import _kernels

#: parameter slices beyond N per scheme with kernels
_EXTRA = {"euler": 0, "heun": 1}

__all__ = ["Scheme", "SCHEMES", "resolve_scheme"]


@dataclass(frozen=True)
class Scheme:
    """A forward scheme and its reverse-time counterpart.

    Attributes
    ----------
    name : str
        Registry name.
    order : int
        Global order of the forward scheme as an ODE solver (error O(N^-order) for smooth fields).
    extra_slices : int
        Parameter slices beyond N that depth N needs: 0 for Euler, 1 for Heun (theta_0 .. theta_N).
    forward, reverse : str
        The forward step and the reverse-time step, as formulas.
    """

    name: str
    order: int
    extra_slices: int
    forward: str
    reverse: str

    def __post_init__(self):
        func = "theory.resnet.Scheme"
        if not isinstance(self.name, str):
            raise TypeError(f"`name` of {func} must be a string; got {type(self.name).__name__}.")
        if self.name not in _EXTRA:
            raise ValueError(f"`name` of {func} must be one of {sorted(_EXTRA)} (the schemes with kernels); "
                             f"got {self.name!r}.")
        check_int(self.order, "order", func=func, minimum=1)
        extra = check_int(self.extra_slices, "extra_slices", func=func)
        if extra != _EXTRA[self.name]:
            raise ValueError(f"`extra_slices` of {func} must be {_EXTRA[self.name]} for the {self.name!r} scheme; "
                             f"got {extra}.")
        for key in ("forward", "reverse"):
            if not isinstance(getattr(self, key), str):
                raise TypeError(f"`{key}` of {func} must be a string (a formula); got {type(getattr(self, key)).__name__}.")

    def depth(self, n_slices: int) -> int:
        """Depth N for ``n_slices`` parameter slices."""
        return n_slices - self.extra_slices


SCHEMES = {
    "euler": Scheme(
        "euler", 1, 0,
        "x_{n+1} = x_n + f(x_n, theta_n)/N   (Eq. (1))",
        "x_n = x_{n+1} - f(x_{n+1}, theta_n)/N   (Eq. (6))",
    ),
    "heun": Scheme(
        "heun", 2, 1,
        "y_n = x_n + f(x_n, theta_n)/N; x_{n+1} = x_n + (f(x_n, theta_n) + f(y_n, theta_{n+1}))/(2N)   (Eq. (8))",
        "y_n = x_{n+1} - f(x_{n+1}, theta_{n+1})/N; "
        "x_n = x_{n+1} - (f(x_{n+1}, theta_{n+1}) + f(y_n, theta_n))/(2N)   (Eq. (9))",
    ),
}

# kernels per scheme: forward trajectory, reverse trajectory, memory-free last state, backprop, adjoint
KERNELS = {
    "euler": (_kernels.euler_forward, _kernels.euler_reverse, _kernels.euler_last,
              _kernels.euler_backprop, _kernels.euler_adjoint),
    "heun": (_kernels.heun_forward, _kernels.heun_reverse, _kernels.heun_last,
             _kernels.heun_backprop, _kernels.heun_adjoint),
}


def resolve_scheme(scheme, func: str) -> Scheme:
    """Map a scheme name (or a :class:`Scheme`) to a :class:`Scheme`."""
    if isinstance(scheme, Scheme):
        return scheme
    if not isinstance(scheme, str):
        raise TypeError(f"`scheme` of {func} must be a string, one of {sorted(SCHEMES)}; got {scheme!r}.")
    if scheme not in SCHEMES:
        raise ValueError(f"`scheme` of {func} must be one of {sorted(SCHEMES)}; got {scheme!r}.")
    return SCHEMES[scheme]
