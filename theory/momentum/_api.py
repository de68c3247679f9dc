r"""Momentum ResNets and their linear second-order limit (Sander's thesis, chapter 4): the public API.

Every public function validates its arguments here (shape, dtype, finiteness, range; TypeError for a
wrong kind, ValueError for a wrong value, both naming the argument), estimates its work and memory
before any long loop, and calls the private kernels (:mod:`theory.momentum._kernels`, Numba, float64;
:mod:`theory.momentum._exact`, Python integers).

Discrete model, Eq. (4.2) of the thesis: with a momentum term gamma in [0, 1],

    v_{n+1} = gamma v_n + (1 - gamma) f(x_n, theta_n),    x_{n+1} = x_n + v_{n+1},

and its inverse, Eq. (4.3): x_n = x_{n+1} - v_{n+1}, v_n = (v_{n+1} - (1 - gamma) f(x_n, theta_n)) / gamma.

Continuous linear model, Eq. (4.7): eps x'' + x' = theta x on [0, 1] with x(0) = x_0, x'(0) = 0,
whose time-1 map is Psi_eps(theta) (Prop. 4.3). The scalar range of Psi_eps is [lambda_eps, +inf)
(Sec. 4.4.3), and Thm 4.4 characterises the matrices D, diagonalizable over C, with D = Psi_eps(theta)
for a real theta.
"""

from __future__ import annotations

import cmath
import math
import numbers

import numpy as np
import scipy.linalg

from .. import _alloc, _f_eps
from .._errors import NonFiniteError
from .._finite import all_finite
from .._residual_kernels import scratch_shape
from .._residuals import resolve_residual
from .._validation import (
    as_float_array,
    check_choice,
    check_finite_output,
    check_int,
    check_interval,
    check_memory,
    check_work,
    plain,
)
from . import _exact, _kernels

__all__ = ["forward", "inverse", "gradient", "residual_f", "psi", "psi_series", "lambda_eps", "representable",
           "preimage", "to_fixed", "from_fixed", "forward_exact", "inverse_exact"]

_HINT = "Reduce the weights or the input."

#: smallest accepted positive eps: below the smallest normal float64, 1/eps and e^{-1/(2 eps)} lose
#: every digit (lambda_eps returned NaN at eps = 5e-324)
_EPS_MIN = float(np.finfo(np.float64).tiny)

#: fixed-point precision accepted by the exact functions, in bits after the binary point
_FRAC_BITS_MAX = 200

# Cost of the exact (Python-integer) loops in floating-point-operation equivalents (MAX_WORK = 1e11 is
# about a minute of one core, 1.7e3 per microsecond), measured on forward_exact/inverse_exact: about
# 180 us per layer, 9 us per coordinate and layer, 0.012 us per buffer bit per coordinate and layer.
_EXACT_LAYER_OPS = 3e5
_EXACT_COORD_OPS = 1.5e4
_EXACT_BIT_OPS = 20.0


# ------------------------------------------------------------------------------- the residual network

def _prepare(func, x, x_name, v, v_name, theta, residual, gamma, *, inverse=False, gamma_open=None,
             finite_theta=True, depth=None, passes=1, store=True, max_work=None):
    res = resolve_residual(residual, func)
    x = as_float_array(x, x_name, func=func, ndim=(1, 2))
    if x.shape[-1] < 1 or x.size == 0:
        raise ValueError(f"`{x_name}` of {func} must have d >= 1 and at least one row; got shape {x.shape}.")
    single = x.ndim == 1
    xb = np.ascontiguousarray(x.reshape(1, -1) if single else x)
    B, d = xb.shape
    if gamma_open is None:
        gamma_open = inverse
    if gamma_open:
        gamma = check_interval(gamma, "gamma", 0.0, 1.0, func=func, closed="right")
    else:
        gamma = check_interval(gamma, "gamma", 0.0, 1.0, func=func, closed="both")
    pshape = res.param_shape(d)
    theta = as_float_array(theta, "theta", func=func, finite=finite_theta)
    if theta.ndim != 1 + len(pshape) or theta.shape[1:] != pshape or theta.shape[0] < 1:
        want = "(N, " + ", ".join(str(p) for p in pshape) + ")"
        raise ValueError(f"`theta` of {func} must have shape {want} with N >= 1 for the {res.name!r} residual "
                         f"with d = {d} from `{x_name}`; got {theta.shape}.")
    N = theta.shape[0]
    if depth is not None:
        depth = check_int(depth, "depth", func=func, minimum=1)
        if N != 1:
            raise ValueError(f"`depth` of {func} ties the weights: `theta` must then hold one slice, shape (1, "
                             f"{', '.join(str(p) for p in pshape)}); got {theta.shape}.")
        N = depth
    # the size that drives the cost: the depth (named as the argument that sets it) or the batch
    name, value = ("depth", N) if depth is not None else ("theta", N)
    if B > N:
        name, value = x_name, B
    if store:
        check_memory(16 * (N + 1) * B * d, name, value, func=func,
                     hint=f"Two trajectories of shape ({N + 1}, {B}, {d}).")
    check_work(passes * N * B * 2.0 * math.prod(pshape), name, value, func=func, max_work=max_work,
               hint=f"Depth N = {N}, batch B = {B}, d = {d}.")
    th = np.ascontiguousarray(theta.reshape(theta.shape[0], -1))
    if not finite_theta and isinstance(v, str) and not all_finite(th[0]):
        raise ValueError(f"`theta` of {func} must be finite; got NaN or inf in layer 0.")
    work = np.empty(scratch_shape(d, B, res.width))
    fbuf = np.empty((B, d))
    if isinstance(v, str) and not inverse:
        if v != "f":
            raise ValueError(f"`{v_name}` of {func} must be an array, None (zero) or 'f' (v0 = f(x0, theta_0)); "
                             f"got {v!r}.")
        vb = np.empty((B, d))
        _kernels._residual_eval(res.code, res.width, xb, th[0], vb, work)
        check_finite_output(vb, f"`{v_name}` = f(x0, theta_0)", func=func, hint=_HINT)
    elif v is None and not inverse:
        vb = np.zeros((B, d))
    else:
        vv = as_float_array(v, v_name, func=func, ndim=(x.ndim,))
        if vv.shape != x.shape:
            raise ValueError(f"`{v_name}` of {func} must have the shape of `{x_name}`, {x.shape}; got {vv.shape}.")
        vb = np.ascontiguousarray(vv.reshape(B, d))
    return res, xb, vb, th, gamma, single, work, fbuf, N


def _run(kernel, func, x, x_name, v, v_name, theta, residual, gamma, inverse, depth, max_work):
    res, xb, vb, th, gamma, single, work, fbuf, N = _prepare(func, x, x_name, v, v_name, theta, residual, gamma,
                                                             inverse=inverse, finite_theta=False, depth=depth,
                                                             max_work=max_work)
    B, d = xb.shape
    xs = _alloc.empty((N + 1, B, d))  # written once by the kernel: huge-page aligned, fewer page faults
    vs = _alloc.empty((N + 1, B, d))
    nonfinite = np.zeros(1, dtype=np.int64)
    bad = kernel(res.code, res.width, xb, vb, th, gamma, xs, vs, fbuf, work, True, nonfinite)
    if bad >= 0:
        raise ValueError(f"`theta` of {func} must be finite; got NaN or inf in layer {bad}.")
    if nonfinite[0]:  # counted by the kernel as it wrote them; the messages name what overflowed
        check_finite_output(xs, "the positions", func=func, hint=_HINT)
        check_finite_output(vs, "the velocities", func=func, hint=_HINT)
    if single:
        return xs[:, 0, :], vs[:, 0, :]
    return xs, vs


def forward(x0, v0, theta, residual, gamma, *, depth=None, max_work=None):
    r"""Trajectory of a Momentum ResNet, Eq. (4.2) of the thesis (chapter 4).

    :math:`v_{n+1} = \gamma v_n + (1-\gamma) f(x_n, \theta_n)`, :math:`x_{n+1} = x_n + v_{n+1}`;
    gamma = 0 is the ResNet (4.1) and gamma = 1 leaves v constant.

    Parameters
    ----------
    x0 : array_like, shape (d,) or (B, d)
        Input (one or a batch of B), d >= 1, finite.
    v0 : array_like of the shape of x0, None or ``"f"``
        Initial velocity; None is zero; ``"f"`` is v0 = f(x0, theta_0), the initial velocity of Prop. 4.2.
    theta : array_like, shape ``(N, *P)``
        One parameter slice per layer, in the layouts of :mod:`theory.resnet` (P = (d, d) for
        ``"linear"``, ``"tanh"``, ``"tanh_out"``; (2dm + m,) for :func:`theory.resnet.mlp`). Finite.
    residual : str or theory.resnet.Residual
        The residual family f(x, theta_n): a name of :data:`theory.resnet.RESIDUALS` or a
        :class:`theory.resnet.Residual` (e.g. ``theory.resnet.mlp(m)``).
    gamma : float in [0, 1]
        Momentum term.
    depth : int >= 1, optional
        Tied weights (as in Fig. 4.1 and Sec. 4.3.2 of the thesis): ``theta`` holds one slice, shape
        ``(1, *P)``, shared by ``depth`` layers. Default: N = theta.shape[0] layers.
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``); the cost,
        about 2 N B ``|P|``, is estimated before the kernel runs.

    Returns
    -------
    xs, vs : ndarray, shape (N + 1, d) or (N + 1, B, d)
        Positions and velocities x_0..x_N and v_0..v_N, float64.

    Raises
    ------
    TypeError
        An argument of the wrong kind (a string, None or a complex array for ``x0``, a float ``depth``, ...).
    ValueError
        A wrong shape, NaN or inf in an input, ``gamma`` outside [0, 1], ``depth`` < 1 or with more than one
        slice, or a call whose memory or work exceeds the limits.
    theory.NonFiniteError
        The trajectory overflowed.

    Examples
    --------
    >>> import numpy as np
    >>> xs, vs = forward([1.0], None, np.full((2, 1, 1), -1.0), "linear", 0.5)
    >>> xs[:, 0].tolist(), vs[:, 0].tolist()
    ([1.0, 0.5, 0.0], [0.0, -0.5, -0.5])
    """
    return _run(_kernels.momentum_forward, "theory.momentum.forward", x0, "x0", v0, "v0", theta, residual, gamma,
                False, depth, max_work)


def inverse(xN, vN, theta, residual, gamma, *, depth=None, max_work=None):
    r"""Reconstruct a Momentum ResNet's trajectory from its output, Eq. (4.3) of the thesis.

    :math:`x_n = x_{n+1} - v_{n+1}`, then :math:`v_n = (v_{n+1} - (1-\gamma) f(x_n,\theta_n))/\gamma`
    for n = N-1, ..., 0. In floating point the division by gamma multiplies the rounding errors by up
    to gamma^{-N} (the thesis avoids it with exact fixed-point multiplication, App. 4.C, see
    :func:`inverse_exact`); gamma = 0 has no inverse and is refused.

    Parameters
    ----------
    xN : array_like, shape (d,) or (B, d)
        Output positions, finite.
    vN : array_like of the shape of xN
        Output velocities, finite.
    theta : array_like, shape ``(N, *P)``
        As in :func:`forward`.
    residual : str or theory.resnet.Residual
        As in :func:`forward`.
    gamma : float in (0, 1]
        Momentum term.
    depth : int >= 1, optional
        Tied weights, as in :func:`forward`.
    max_work : float, optional
        Budget in floating-point operations, as in :func:`forward`.

    Returns
    -------
    xs, vs : ndarray, shape (N + 1, d) or (N + 1, B, d)
        The reconstructed trajectory, with xs[N] = xN and vs[N] = vN.

    Raises
    ------
    TypeError
        An argument of the wrong kind (``vN`` None, a string, ...).
    ValueError
        A wrong shape, NaN or inf, ``gamma`` outside (0, 1], or a call over the memory or work limits.
    theory.NonFiniteError
        The reconstruction overflowed (rounding errors amplified by gamma^{-N}).
    """
    return _run(_kernels.momentum_inverse, "theory.momentum.inverse", xN, "xN", vN, "vN", theta, residual, gamma,
                True, depth, max_work)


def gradient(x0, v0, theta, residual, gamma, y, method="backprop", *, max_work=None):
    r"""Loss L = 1/2 sum_b ||x_N[b] - y[b]||^2 of a Momentum ResNet (4.2) and its gradients.

    ``method="backprop"`` stores the trajectory of (4.2) (memory growing like N B d) and backpropagates
    through it; ``method="memory_free"`` keeps only (x_N, v_N) and rebuilds each (x_n, v_n) backwards
    with the inverse (4.3) while backpropagating (the memory-free training of Sec. 4.3.2 and App. 4.E of
    the thesis): its memory does not grow with N. In floating point the rebuilt activations carry the
    rounding errors of (4.3), amplified by up to gamma^{-N}; gamma = 0 is refused for that method.

    Parameters
    ----------
    x0 : array_like, shape (d,) or (B, d)
        Inputs, finite.
    v0 : array_like of the shape of x0, or None
        Initial velocities (None is zero); the gradient treats them as an input.
    theta : array_like, shape ``(N, *P)``
        As in :func:`forward`.
    residual : str or theory.resnet.Residual
        As in :func:`forward`.
    gamma : float
        In [0, 1] for ``"backprop"``, in (0, 1] for ``"memory_free"``.
    y : array_like of the shape of x0
        Targets, finite.
    method : {"backprop", "memory_free"}
        How the activations are obtained during backpropagation.
    max_work : float, optional
        Budget in floating-point operations, as in :func:`forward` (three passes for ``"backprop"``,
        four for ``"memory_free"``).

    Returns
    -------
    loss : float
        L = 1/2 sum ||x_N - y||^2.
    dtheta : ndarray of the shape of theta
        dL/dtheta.
    dx0, dv0 : ndarray of the shape of x0
        dL/dx0 and dL/dv0.

    Raises
    ------
    TypeError
        An argument of the wrong kind (``method`` not a string, ``y`` complex, ...).
    ValueError
        A wrong shape or value (``v0 = "f"``, an unknown ``method``, ``gamma`` out of range, NaN or inf
        in an input), or a call over the memory or work limits.
    theory.NonFiniteError
        The output, the loss or a gradient overflowed.
    """
    func = "theory.momentum.gradient"
    check_choice(method, "method", ("backprop", "memory_free"), func=func)
    if isinstance(v0, str):
        raise ValueError(f"`v0` of {func} must be an array or None; got {v0!r}.")
    backprop = method == "backprop"
    res, xb, vb, th, gamma, single, work, fbuf, _ = _prepare(func, x0, "x0", v0, "v0", theta, residual, gamma,
                                                             gamma_open=not backprop, passes=3 if backprop else 4,
                                                             store=backprop, max_work=max_work)
    x_in = np.asarray(x0)
    yy = as_float_array(y, "y", func=func, shape=x_in.shape)
    yb = np.ascontiguousarray(yy.reshape(xb.shape))
    N, (B, d) = th.shape[0], xb.shape
    gtheta = np.zeros_like(th)
    tmp, jx = np.empty((B, d)), np.empty((B, d))
    if backprop:
        xs = _alloc.empty((N + 1, B, d))
        vs = _alloc.empty((N + 1, B, d))
        _kernels.momentum_forward(res.code, res.width, xb, vb, th, gamma, xs, vs, fbuf, work, False,
                                  np.zeros(1, dtype=np.int64))
        xN, vN = xs[N], vs[N]
        check_finite_output(xN, "the output", func=func, hint=_HINT)
        with np.errstate(over="ignore", invalid="ignore"):
            gx = xN - yb
            loss = 0.5 * float(np.sum(gx * gx))
        gv = np.zeros((B, d))
        _check_loss(loss, gx, func)
        _kernels.momentum_backprop(res.code, res.width, xs, th, gamma, gx, gv, gtheta, tmp, jx, work)
    else:
        x, v = xb.copy(), vb.copy()
        _kernels.momentum_last(res.code, res.width, x, v, th, gamma, fbuf, work)
        check_finite_output(x, "the output", func=func, hint=_HINT)
        with np.errstate(over="ignore", invalid="ignore"):
            gx = x - yb
            loss = 0.5 * float(np.sum(gx * gx))
        gv = np.zeros((B, d))
        _check_loss(loss, gx, func)
        _kernels.momentum_memory_free(res.code, res.width, x, v, th, gamma, gx, gv, gtheta, tmp, jx, fbuf, work)
    for arr, what in ((gtheta, "dtheta"), (gx, "dx0"), (gv, "dv0")):
        check_finite_output(arr, what, func=func, hint=_HINT)
    shape = x_in.shape
    return loss, gtheta.reshape(np.shape(theta)), gx.reshape(shape), gv.reshape(shape)


def _check_loss(loss, gx, func):
    check_finite_output(gx, "the residual x_N - y", func=func, hint=_HINT)
    if not math.isfinite(loss):
        raise NonFiniteError(f"{func}: the loss overflowed to NaN or inf. {_HINT}")


def _residual_batch(res, xb, th, func):
    """f(x_b, theta_n) for a batch xb (B, d) (float64, C-contiguous) and one flat slice th."""
    B, d = xb.shape
    out = np.empty((B, d))
    _kernels._residual_eval(res.code, res.width, xb, th, out, np.empty(scratch_shape(d, B, res.width, blocks=1)))
    return check_finite_output(out, "f(x, theta_n)", func=func, hint=_HINT)


def residual_f(x, theta_n, residual):
    r"""One layer's residual f(x, theta_n) for the families of :mod:`theory.resnet`, without a step size.

    The term of Eq. (4.2) of the thesis (chapter 4) that a Momentum ResNet adds to its velocity, scaled
    by (1 - gamma).

    Parameters
    ----------
    x : array_like, shape (d,) or (B, d)
        Points, d >= 1, finite.
    theta_n : array_like, shape ``P``
        One layer's parameters in the layout of :mod:`theory.resnet` ((d, d) or (2dm + m,)), finite.
    residual : str or theory.resnet.Residual
        The residual family, as in :func:`forward`.

    Returns
    -------
    ndarray of the shape of x
        f(x, theta_n), float64.

    Raises
    ------
    TypeError
        An argument of the wrong kind.
    ValueError
        A wrong shape, or NaN or inf in an input.
    theory.NonFiniteError
        The residual overflowed.
    """
    func = "theory.momentum.residual_f"
    res = resolve_residual(residual, func)
    x = as_float_array(x, "x", func=func, ndim=(1, 2))
    if x.shape[-1] < 1 or x.size == 0:
        raise ValueError(f"`x` of {func} must have d >= 1 and at least one row; got shape {x.shape}.")
    xb = np.ascontiguousarray(x.reshape(1, -1) if x.ndim == 1 else x)
    th = as_float_array(theta_n, "theta_n", func=func, shape=res.param_shape(xb.shape[1]))
    out = _residual_batch(res, xb, np.ascontiguousarray(th.reshape(-1)), func)
    return out[0] if x.ndim == 1 else out


# ------------------------------------------------------------------------------- exact inversion

def _check_frac_bits(frac_bits, func):
    return check_int(frac_bits, "frac_bits", func=func, minimum=1, maximum=_FRAC_BITS_MAX)


def _to_fixed(x, name, frac_bits, func):
    """``x`` (validated float64) on the grid 2^-frac_bits, refusing values whose scaled size leaves float64."""
    scale = 2.0 ** frac_bits
    top = float(np.max(np.abs(x))) if x.size else 0.0
    if not math.isfinite(top * scale):
        raise ValueError(f"`{name}` of {func} must satisfy |{name}| 2**frac_bits < 1.8e308 (the float64 range) with "
                         f"frac_bits = {frac_bits}; got max |{name}| = {top:.6g}.")
    return _exact.to_ints(x, frac_bits)


def _int_array(z, name, func, *, ndim=None, max_bits=None):
    """``z`` as a new object array of Python ints (from ints, NumPy integer arrays or nested lists of ints)."""
    if isinstance(z, (str, bytes)) or z is None:
        raise TypeError(f"`{name}` of {func} must be an array of integers; got {plain(z)!r}.")
    if isinstance(z, np.ndarray) and z.dtype != object:
        if z.dtype.kind not in "iu":
            raise TypeError(f"`{name}` of {func} must be an array of integers (Python ints or an integer dtype); "
                            f"got dtype {z.dtype}.")
        arr = z.astype(object)  # NumPy integers become Python ints
    else:
        try:
            arr = np.array(z, dtype=object)
        except Exception as exc:  # ragged nesting and the like
            raise TypeError(f"`{name}` of {func} must be an array of integers; got {type(z).__name__} "
                            f"({exc}).") from None
        for idx in np.ndindex(arr.shape):
            t = arr[idx]
            if isinstance(t, (bool, np.bool_)) or not isinstance(t, (numbers.Integral, np.integer)):
                raise TypeError(f"`{name}` of {func} must be an array of integers; got an entry {plain(t)!r} of "
                                f"type {type(t).__name__}.")
            arr[idx] = int(t)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"`{name}` of {func} must have {ndim} dimension(s); got shape {arr.shape}.")
    if max_bits is not None:
        bits = max((int(t).bit_length() for t in arr.flat), default=0)
        if bits > max_bits:
            raise ValueError(f"`{name}` of {func} must hold integers of at most {max_bits} bits (float64's range); "
                             f"got one of {bits} bits.")
    return arr


def to_fixed(x, frac_bits=52):
    r"""Round a float array to the fixed-point grid of App. 4.C of the thesis (ch. 4): integers, units 2^-frac_bits.

    z = round(x 2^frac_bits), exactly (the product is exact in float64, the rounding is to nearest, ties to even).

    Parameters
    ----------
    x : array_like
        Finite real values, any shape; ``|x| 2^frac_bits`` must stay below the float64 maximum.
    frac_bits : int in [1, 200]
        Bits after the binary point.

    Returns
    -------
    ndarray of object, the shape of x
        Python ints.

    Raises
    ------
    TypeError
        ``x`` not real numeric (a string, None, complex), ``frac_bits`` not an integer (2.5, True).
    ValueError
        NaN or inf in ``x``, ``|x| 2^frac_bits`` beyond float64, ``frac_bits`` outside [1, 200].

    Examples
    --------
    >>> to_fixed([0.75, -1.5], 2).tolist()
    [3, -6]
    """
    func = "theory.momentum.to_fixed"
    frac_bits = _check_frac_bits(frac_bits, func)
    out = _to_fixed(as_float_array(x, "x", func=func), "x", frac_bits, func)
    return out.reshape(()) if np.ndim(x) == 0 else out  # as_float_array gives a 0-d input one axis


def from_fixed(z, frac_bits=52):
    r"""Float values z 2^-frac_bits of fixed-point integers (the inverse of :func:`to_fixed` on the grid; App. 4.C).

    Parameters
    ----------
    z : array_like of int
        Python ints (an object array or nested lists) or a NumPy integer array, any shape, of at most 1023
        bits each.
    frac_bits : int in [1, 200]
        Bits after the binary point.

    Returns
    -------
    ndarray of float64, the shape of z
        float(z) / 2^frac_bits.

    Raises
    ------
    TypeError
        ``z`` holds a non-integer (a float, a bool, a string), ``frac_bits`` not an integer.
    ValueError
        An integer beyond float64's range, ``frac_bits`` outside [1, 200].

    Examples
    --------
    >>> from_fixed([3, -6], 2).tolist()
    [0.75, -1.5]
    """
    func = "theory.momentum.from_fixed"
    frac_bits = _check_frac_bits(frac_bits, func)
    arr = _int_array(z, "z", func, max_bits=1023)
    return _exact.to_floats(arr, frac_bits)


def _show(k):
    """An int for a message: its digits, or its size when printing them would be long (or refused by Python)."""
    return str(k) if abs(k).bit_length() <= 256 else f"an integer of {abs(k).bit_length()} bits"


def _num_den(func, num, den, frac_bits):
    num = check_int(num, "num", func=func, minimum=1)
    den = check_int(den, "den", func=func, minimum=1)
    if num > den:
        raise ValueError(f"`num` of {func} must be <= `den` (gamma = num / den in (0, 1]); got {_show(num)} / "
                         f"{_show(den)}.")
    return num, den, _check_frac_bits(frac_bits, func)


def _exact_theta(func, theta, res, d):
    theta = as_float_array(theta, "theta", func=func)
    pshape = res.param_shape(d)
    if theta.ndim != 1 + len(pshape) or theta.shape[1:] != pshape or theta.shape[0] < 1:
        raise ValueError(f"`theta` of {func} must have shape (N, {', '.join(map(str, pshape))}) with N >= 1; got "
                         f"{theta.shape}.")
    return theta


def _exact_residual(res, theta, num, den, frac_bits, func):
    """residual(x_int, n): round((1 - gamma) f(x, theta_n) 2^frac_bits) on the grid, as Python ints."""
    c = 1.0 - num / den
    scale = 2.0 ** frac_bits
    flat = np.ascontiguousarray(theta.reshape(theta.shape[0], -1))

    def residual(x_int, n):
        try:
            x = _exact.to_floats(x_int, frac_bits)
        except OverflowError:
            raise NonFiniteError(f"{func}: the positions overflowed the float64 range in layer {n}. {_HINT}") from None
        f = _residual_batch(res, np.ascontiguousarray(x), flat[n], func)
        with np.errstate(over="ignore"):
            if not all_finite(c * f * scale):
                raise NonFiniteError(f"{func}: (1 - gamma) f(x, theta_n) 2**frac_bits overflowed in layer {n}. {_HINT}")
        return np.vectorize(lambda t: int(round(c * t * 2.0 ** frac_bits)), otypes=[object])(f)

    return residual


def _exact_guard(func, N, B, d, num, den, start_bits, frac_bits, max_work, *, grows):
    """Memory of the buffer and work of the integer loops, checked before they run. The forward loop
    (``grows``) adds log2(den / num) bits per coordinate and layer to a buffer of ``start_bits``; the
    inverse takes them back."""
    grow = math.log2(den) - math.log2(num) if num < den else 0.0  # exact for ints of any size
    bits = start_bits + (N * grow if grows else 0.0) + frac_bits + 64
    check_memory(B * d * bits / 8.0, "den", _show(den), func=func,
                 hint=f"The buffer gains log2(den / num) = {grow:.3g} bits per coordinate in each of N = {N} layers.")
    avg_bits = start_bits + (0.5 * N * grow if grows else 0.0) + frac_bits
    ops = N * (_EXACT_LAYER_OPS + B * d * (_EXACT_COORD_OPS + _EXACT_BIT_OPS * avg_bits))
    name, value = ("theta", N) if N * grow <= max(start_bits, 64) else ("den", _show(den))
    check_work(ops, name, value, func=func, max_work=max_work,
               hint=f"Python-integer arithmetic over N = {N} layers, B d = {B * d} coordinates, buffers of about "
                    f"{avg_bits:.3g} bits.")


def forward_exact(x0, v0, theta, residual, num, den, frac_bits=52, *, max_work=None):
    r"""Exactly reversible Momentum ResNet (4.2) with gamma = num / den (Sec. 4.3.2 and App. 4.C of the thesis).

    Positions and velocities live on the grid 2^-frac_bits as Python ints; the multiplication of v by
    gamma keeps the digits it drops in an integer buffer (the exact multiplication of Maclaurin, Duvenaud
    and Adams, 2015), so that :func:`inverse_exact` recovers the input bit for bit. The buffer grows by
    log2(den / num) bits per coordinate and layer (the memory count of Sec. 4.3.2).

    Parameters
    ----------
    x0 : array_like, shape (d,) or (B, d)
        Input, finite; rounded to the grid (:func:`to_fixed`). A vector is treated as one row.
    v0 : array_like of the shape of x0, or None
        Initial velocity, rounded to the grid; None is zero.
    theta : array_like, shape ``(N, *P)``
        As in :func:`forward`; finite.
    residual : str or theory.resnet.Residual
        As in :func:`forward`.
    num, den : int, 1 <= num <= den
        gamma = num / den.
    frac_bits : int in [1, 200]
        Bits after the binary point of the grid.
    max_work : float, optional
        Budget in floating-point-operation equivalents (default ``theory._validation.MAX_WORK``,
        about a minute): the integer loops are estimated before they run.

    Returns
    -------
    x_N, v_N, buffer : ndarray of object, shape (B, d)
        Python ints: the output on the grid and the buffer of dropped digits.

    Raises
    ------
    TypeError
        An argument of the wrong kind (``num``, ``den`` or ``frac_bits`` not an integer, ...).
    ValueError
        A wrong shape, NaN or inf, num > den, values beyond the grid's float64 range, or a call over the
        memory or work limits.
    theory.NonFiniteError
        The residual overflowed.
    """
    func = "theory.momentum.forward_exact"
    num, den, frac_bits = _num_den(func, num, den, frac_bits)
    res = resolve_residual(residual, func)
    x0a = as_float_array(x0, "x0", func=func, ndim=(1, 2))
    if x0a.shape[-1] < 1 or x0a.size == 0:
        raise ValueError(f"`x0` of {func} must have d >= 1 and at least one row; got shape {x0a.shape}.")
    x = _to_fixed(np.atleast_2d(x0a), "x0", frac_bits, func)
    if v0 is None:
        v = np.zeros_like(x)
    else:
        v = _to_fixed(np.atleast_2d(as_float_array(v0, "v0", func=func, shape=x0a.shape)), "v0", frac_bits, func)
    theta = _exact_theta(func, theta, res, x.shape[1])
    N, (B, d) = theta.shape[0], x.shape
    _exact_guard(func, N, B, d, num, den, 0, frac_bits, max_work, grows=True)
    return _exact.forward_loop(x, v, N, num, den, _exact_residual(res, theta, num, den, frac_bits, func))


def inverse_exact(xN, vN, buffer, theta, residual, num, den, frac_bits=52, *, max_work=None):
    r"""Inverse of :func:`forward_exact`: Eq. (4.3) with the exact division by gamma = num / den (App. 4.C).

    x_n = x_{n+1} - v_{n+1}, then v_n is v_{n+1} - (1 - gamma) f(x_n, theta_n) divided by gamma exactly,
    taking back from the buffer the digits the forward multiplication dropped. From the output of
    :func:`forward_exact` it returns its rounded inputs and a zero buffer, bit for bit.

    Parameters
    ----------
    xN, vN, buffer : array_like of int, shape (B, d)
        Python ints (object arrays, as :func:`forward_exact` returns) or NumPy integer arrays; xN and vN of
        at most 1023 bits each.
    theta : array_like, shape ``(N, *P)``
        As in :func:`forward_exact`.
    residual : str or theory.resnet.Residual
        As in :func:`forward`.
    num, den : int, 1 <= num <= den
        gamma = num / den.
    frac_bits : int in [1, 200]
        Bits after the binary point of the grid.
    max_work : float, optional
        Budget, as in :func:`forward_exact`.

    Returns
    -------
    x_0, v_0, buffer_0 : ndarray of object, shape (B, d)
        Python ints.

    Raises
    ------
    TypeError
        An argument of the wrong kind (a float array for ``xN``, ``vN`` or ``buffer``, ...).
    ValueError
        Arrays not of one shape (B, d), integers beyond float64's range, num > den, or a call over the
        memory or work limits.
    theory.NonFiniteError
        The positions or the residual overflowed.
    """
    func = "theory.momentum.inverse_exact"
    num, den, frac_bits = _num_den(func, num, den, frac_bits)
    res = resolve_residual(residual, func)
    x = _int_array(xN, "xN", func, ndim=2, max_bits=1023)
    v = _int_array(vN, "vN", func, ndim=2, max_bits=1023)
    buf = _int_array(buffer, "buffer", func, ndim=2)
    if x.shape[1] < 1 or x.size == 0:
        raise ValueError(f"`xN` of {func} must have shape (B, d) with B, d >= 1; got {x.shape}.")
    for arr, name in ((v, "vN"), (buf, "buffer")):
        if arr.shape != x.shape:
            raise ValueError(f"`{name}` of {func} must have the shape of `xN`, {x.shape}; got {arr.shape}.")
    theta = _exact_theta(func, theta, res, x.shape[1])
    N, (B, d) = theta.shape[0], x.shape
    start = max((int(t).bit_length() for t in buf.flat), default=0)
    _exact_guard(func, N, B, d, num, den, start, frac_bits, max_work, grows=False)
    return _exact.inverse_loop(x, v, buf, N, num, den, _exact_residual(res, theta, num, den, frac_bits, func))


# ------------------------------------------------------------------ the linear second-order model

def _check_eps(eps, func, *, positive=False):
    eps = check_interval(eps, "eps", 0.0, math.inf, func=func, closed="neither" if positive else "left")
    if 0.0 < eps < _EPS_MIN:
        raise ValueError(f"`eps` of {func} must be 0 or at least {_EPS_MIN} (the smallest normal float64): below it "
                         f"1/eps and e^(-1/(2 eps)) lose every digit; got {eps}.")
    return eps


def _square(D, name, func):
    D = as_float_array(D, name, func=func, ndim=(2,))
    if D.shape[0] != D.shape[1] or D.shape[0] < 1:
        raise ValueError(f"`{name}` of {func} must be a square matrix (d, d) with d >= 1; got shape {D.shape}.")
    return D


def _dense_guard(d, name, func, *, size=1, factor=30.0, passes=1.0, max_work=None):
    """Work (``factor`` (size d)^3 per pass) and memory (a dozen (size d)^2 arrays) of dense linear algebra."""
    n = size * d
    check_memory(12 * 8.0 * n * n, name, f"a ({d}, {d}) matrix", func=func)
    check_work(factor * passes * float(n) ** 3, name, f"a ({d}, {d}) matrix", func=func, max_work=max_work)


def psi(theta, eps, *, max_work=None):
    r"""Psi_eps(theta), the time-1 map of eps x'' + x' = theta x, x'(0) = 0 (Eq. (4.7), Prop. 4.3 of the thesis, ch. 4).

    Computed as the top-left d x d block of exp([[0, I], [theta/eps, -I/eps]]) (the phase-space form
    of Eq. (4.7) used in the proof of Prop. 4.3); eps = 0 gives exp(theta), the first-order model (4.8).
    The series of Prop. 4.3 is :func:`psi_series`.

    Parameters
    ----------
    theta : array_like, shape (d, d)
        Finite, d >= 1.
    eps : float
        0, or at least the smallest normal float64 (2.2e-308).
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, about a minute of
        one core); the cost is estimated before the computation runs.

    Returns
    -------
    ndarray, shape (d, d)
        Psi_eps(theta), float64.

    Raises
    ------
    TypeError
        ``theta`` not a real array, ``eps`` not a real number.
    ValueError
        ``theta`` not square or not finite, ``eps`` negative, subnormal or not finite, or a matrix too large
        for the work or memory limits.
    theory.NonFiniteError
        theta / eps or the exponential overflowed.

    Examples
    --------
    >>> import numpy as np
    >>> round(float(psi([[-np.pi ** 2 - 0.25]], 1.0)[0, 0]), 12) == round(-float(np.exp(-0.5)), 12)
    True
    """
    func = "theory.momentum.psi"
    th = _square(theta, "theta", func)
    eps = _check_eps(eps, func)
    d = th.shape[0]
    hint = "Reduce the norm of theta or increase eps."
    with np.errstate(over="ignore", invalid="ignore"):
        if eps == 0.0:
            A = th
        else:
            A = np.zeros((2 * d, 2 * d))
            A[:d, d:] = np.eye(d)
            A[d:, :d] = th / eps
            A[d:, d:] = -np.eye(d) / eps
        check_finite_output(A, "theta / eps", func=func, hint=hint)
        norm = float(np.max(np.sum(np.abs(A), axis=0)))
        squarings = max(0.0, math.log2(norm / 5.4)) if norm > 0 and math.isfinite(norm) else 0.0
        _dense_guard(d, "theta", func, size=1 if eps == 0.0 else 2, factor=2.0, passes=20.0 + squarings,
                     max_work=max_work)
        out = scipy.linalg.expm(A) if eps == 0.0 else scipy.linalg.expm(A)[:d, :d]
    return check_finite_output(np.ascontiguousarray(out), "Psi_eps(theta)", func=func, hint=hint)


def psi_series(theta, eps, terms=80, *, max_work=None):
    r"""The series of Prop. 4.3 of the thesis (ch. 4): Psi_eps(theta) as a power series in M = theta/eps + I/(4 eps^2).

    .. math::

        \Psi_\varepsilon(\theta) = e^{-1/(2\varepsilon)} \sum_{n \ge 0}
            \Big(\frac{1}{(2n)!} + \frac{1}{2\varepsilon (2n+1)!}\Big) M^n ,

    summed over n < ``terms``. An independent evaluation of :func:`psi` for eps > 0 of moderate size
    (the terms grow like ||M||^n / (2n)!, so small eps loses accuracy to cancellation). Terms from
    n = 86 on have (2n)! beyond float64 and a coefficient of exactly 0: the sum stops there, and a
    series whose next term is not negligible there is refused (use :func:`psi`).

    Parameters
    ----------
    theta : array_like, shape (d, d)
        Finite, d >= 1.
    eps : float > 0
        At least the smallest normal float64.
    terms : int >= 1
        Number of terms summed (at most 86 are nonzero in float64).
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, about a minute of
        one core); the cost is estimated before the computation runs.

    Returns
    -------
    ndarray, shape (d, d)
        The partial sum, float64.

    Raises
    ------
    TypeError
        ``theta`` not a real array, ``eps`` not a real number, ``terms`` not an integer.
    ValueError
        ``theta`` not square or not finite, ``eps`` <= 0, subnormal or not finite, ``terms`` < 1, the
        series not converged when its coefficients underflow, or a matrix over the work or memory limits.
    theory.NonFiniteError
        M or the sum overflowed.
    """
    func = "theory.momentum.psi_series"
    th = _square(theta, "theta", func)
    eps = _check_eps(eps, func, positive=True)
    terms = check_int(terms, "terms", func=func, minimum=1)
    d = th.shape[0]
    hint = "Reduce theta or the number of terms, or use theory.momentum.psi."
    _dense_guard(d, "theta", func, factor=2.0, passes=float(min(terms, 90)), max_work=max_work)
    total = np.zeros((d, d))
    P = np.eye(d)
    f2n = 1.0  # (2n)!
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        M = th / eps + np.eye(d) / (4 * eps * eps)
        check_finite_output(M, "M = theta/eps + I/(4 eps^2)", func=func, hint=hint)
        for n in range(terms):
            if n:
                P = P @ M
                f2n *= (2 * n - 1) * (2 * n)
            coef = 1.0 / f2n + 1.0 / (2 * eps * f2n * (2 * n + 1))
            if coef == 0.0:
                # (2n)! left float64: this and every later term is 0 * M^n, which adds nothing to the sum (or NaN
                # once M^n overflows). Stop; the terms dropped must be negligible for the sum to be the series.
                _check_tail(P, M, n, eps, total, func)
                break
            total += coef * P
        out = math.exp(-0.5 / eps) * total
    return check_finite_output(out, "the series", func=func, hint=hint)


def _check_tail(P, M, n, eps, total, func):
    """Refuse when the first dropped term, about ||M^n|| / (2n)! (1 + 1/(2 eps (2n + 1))), is above
    round-off of the partial sum (estimated in logarithms: every factor leaves float64 here)."""
    size = float(np.max(np.abs(P)))
    grow = float(np.max(np.sum(np.abs(M), axis=1)))
    if size == 0.0 or grow == 0.0:
        return
    log_term = (math.log(size) + math.log(grow) - math.lgamma(2 * n + 1)
                + math.log1p(1.0 / (2 * eps * (2 * n + 1))))
    scale = float(np.max(np.abs(total)))
    if not (math.isfinite(log_term) and scale > 0 and log_term < math.log(scale) - 36.0 * math.log(2.0)):
        raise ValueError(f"`eps` of {func}: the series of Prop. 4.3 has not converged at n = {n} terms, where (2n)! "
                         f"leaves float64 (||theta/eps + I/(4 eps^2)|| = {grow:.3g}); increase eps, reduce `theta` or "
                         f"use theory.momentum.psi.")


def lambda_eps(eps):
    r"""(lambda_eps, alpha*): the minimum of G_eps(alpha) = e^{-1/(2eps)}(cos a + sin a / (2 eps a)) and its argmin.

    Sec. 4.4.3 and the proof of Thm 4.4 (thesis, ch. 4): Psi_eps maps the real line onto
    [lambda_eps, +inf). The minimum lies at the first critical point after pi, the root in
    (pi, 3 pi / 2) of G'(a) = 0, i.e. of a^2 sin a (2 eps) = a cos a - sin a; it is attained at the
    real theta* = -eps alpha*^2 - 1/(4 eps). lambda_eps lies in [-1, 0): it tends to -1 as eps grows
    and underflows to -0.0 for eps below about 1/1490.

    Parameters
    ----------
    eps : float > 0
        At least the smallest normal float64 (for eps = 0, exp(R) = (0, inf) has no minimum).

    Returns
    -------
    lam : float
        lambda_eps = G_eps(alpha*).
    alpha : float
        alpha* in (pi, 3 pi / 2).

    Raises
    ------
    TypeError
        ``eps`` not a real number.
    ValueError
        ``eps`` <= 0, subnormal or not finite.

    Examples
    --------
    >>> round(lambda_eps(1.0)[0], 8)
    -0.6134986
    """
    func = "theory.momentum.lambda_eps"
    return _f_eps.lambda_eps(_check_eps(eps, func, positive=True))


def _eig_blocks(D, func):
    with np.errstate(over="ignore", invalid="ignore"):
        vals, vecs = np.linalg.eig(D)
        if not (all_finite(vals.real) and all_finite(vals.imag)):
            raise NonFiniteError(f"{func}: the eigenvalues of `D` overflowed to NaN or inf. Reduce the entries of D.")
        scale = max(1.0, float(np.max(np.abs(vals))))
        cond = np.linalg.cond(vecs)
    if not np.isfinite(cond) or cond > 1e10:
        raise ValueError(f"`D` of {func} must be diagonalizable over C (Thm 4.4 of the thesis, ch. 4, treats "
                         f"that case); its eigenvector matrix has condition number {cond:.3g}.")
    return vals, vecs, scale


def _real_clusters(values, tol):
    values = sorted(values)
    clusters = []
    for x in values:
        if clusters and abs(x - clusters[-1][-1]) <= tol:
            clusters[-1].append(x)
        else:
            clusters.append([x])
    return clusters


def _representable(D, eps, func):
    vals, _, scale = _eig_blocks(D, func)
    tol = 1e-8 * scale
    real = [float(v.real) for v in vals if v.imag == 0.0]
    if eps == 0.0:
        if np.any(np.abs(vals) <= tol):
            return False
        threshold = 0.0
    else:
        threshold = _f_eps.lambda_eps(eps)[0]
    bad = [x for x in real if x < threshold - tol]
    return all(len(c) % 2 == 0 for c in _real_clusters(bad, tol))


def representable(D, eps, *, max_work=None):
    r"""Whether D = Psi_eps(theta) for a real theta, D diagonalizable over C (Thm 4.4 of the thesis, ch. 4).

    eps > 0: every real eigenvalue of D below lambda_eps has even multiplicity. eps = 0 (first-order
    flows, D = exp(theta), Culver's criterion as quoted in Sec. 4.4.3): D is nonsingular and every
    negative eigenvalue has even multiplicity. Eigenvalues within 1e-8 ``max(1, |Sp D|)`` of each other
    count as equal.

    Parameters
    ----------
    D : array_like, shape (d, d)
        Finite, diagonalizable over C (eigenvector matrix of condition number at most 1e10).
    eps : float
        0, or at least the smallest normal float64.
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, about a minute of
        one core); the cost is estimated before the computation runs.

    Returns
    -------
    bool
        Whether a real preimage exists.

    Raises
    ------
    TypeError
        ``D`` not a real array, ``eps`` not a real number.
    ValueError
        ``D`` not square, not finite or not diagonalizable; ``eps`` negative, subnormal or not finite; a
        matrix over the work or memory limits.
    theory.NonFiniteError
        The eigenvalues of D overflowed.
    """
    func = "theory.momentum.representable"
    D = _square(D, "D", func)
    eps = _check_eps(eps, func)
    _dense_guard(D.shape[0], "D", func, max_work=max_work)
    return _representable(D, eps, func)


def preimage(D, eps, *, max_work=None):
    r"""A real theta with Psi_eps(theta) = D (constructive direction of Thm 4.4 of the thesis, ch. 4).

    Writes D = Q B Q^{-1} with B real block-diagonal (1 x 1 blocks for real eigenvalues, 2 x 2 blocks
    [[a, b], [-b, a]] for a complex pair a +- ib or for a pair of equal real eigenvalues below
    lambda_eps), solves f_eps(z) = lambda per block (f_eps(z) = Psi_eps(eps z - 1/(4 eps)); a real z on
    the increasing branch z >= -alpha*^2 for a real lambda >= lambda_eps, a non-real z otherwise,
    which exists by Lemma 4.5) and returns theta = eps Q X Q^{-1} - I / (4 eps). eps = 0 uses a real
    logarithm instead.

    Parameters
    ----------
    D : array_like, shape (d, d)
        Finite, diagonalizable over C, representable (:func:`representable`).
    eps : float
        0, or at least the smallest normal float64.
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, about a minute of
        one core); the cost is estimated before the computation runs.

    Returns
    -------
    ndarray, shape (d, d)
        theta, real, float64.

    Raises
    ------
    TypeError
        ``D`` not a real array, ``eps`` not a real number.
    ValueError
        D not representable at eps (see :func:`representable`), not square, not finite or not
        diagonalizable; ``eps`` out of range or too small for an eigenvalue's preimage to stay in float64;
        a matrix over the work or memory limits.
    theory.NonFiniteError
        theta overflowed.
    """
    func = "theory.momentum.preimage"
    D = _square(D, "D", func)
    eps = _check_eps(eps, func)
    _dense_guard(D.shape[0], "D", func, passes=2.0, max_work=max_work)
    if not _representable(D, eps, func):
        raise ValueError(f"`D` of {func} is not representable at eps = {eps}: a real eigenvalue below "
                         f"{'0' if eps == 0 else 'lambda_eps'} has odd multiplicity, or D is singular at eps = 0 "
                         f"(Thm 4.4 of the thesis, ch. 4).")
    vals, vecs, scale = _eig_blocks(D, func)
    tol = 1e-8 * scale
    d = D.shape[0]
    if eps > 0:
        lam, alpha = _f_eps.lambda_eps(eps)
        threshold = lam
    else:
        threshold = 0.0
    cols, blocks = [], []

    def solve(w, need_nonreal):
        if eps == 0.0:
            return cmath.log(w)
        return _f_eps.solve_complex(w, eps, need_nonreal, func)

    low_real = []
    for k, v in enumerate(vals):
        if v.imag > 0:
            p = vecs[:, k]
            z = solve(complex(v), False)
            cols += [p.real, p.imag]
            blocks.append(np.array([[z.real, z.imag], [-z.imag, z.real]]))
        elif v.imag == 0.0:
            x = float(v.real)
            if x < threshold - tol:
                low_real.append((x, vecs[:, k].real))
            else:
                z = math.log(x) if eps == 0.0 else _f_eps.solve_real(max(x, threshold), eps, lam, alpha, func)
                cols.append(vecs[:, k].real)
                blocks.append(np.array([[z]]))
    low_real.sort(key=lambda t: t[0])
    for i in range(0, len(low_real), 2):
        (x1, p1), (x2, p2) = low_real[i], low_real[i + 1]
        z = solve(0.5 * (x1 + x2), True)
        cols += [p1, p2]
        blocks.append(np.array([[z.real, z.imag], [-z.imag, z.real]]))
    Q = np.column_stack(cols)
    X = scipy.linalg.block_diag(*blocks)
    with np.errstate(over="ignore", invalid="ignore"):
        QX = Q @ X
        theta = np.linalg.solve(Q.T, QX.T).T  # Q X Q^{-1}
        if eps > 0:
            theta = eps * theta - np.eye(d) / (4 * eps)
    return check_finite_output(np.ascontiguousarray(theta), "theta", func=func)
