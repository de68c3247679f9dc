r"""Signatures, the signature kernel and the signature (Taylor) expansion of a residual RNN: the public API.

Thesis (Marion), chapter 5 ("Framing RNN as a kernel method: a neural ODE approach"). Every public
function validates its arguments here (shape, dtype, finiteness, range; TypeError for a wrong kind,
ValueError for a wrong value, both naming the argument), estimates its work and memory before any long
loop, and calls the private Numba kernels of :mod:`theory.signature._kernels` (float64).

Normalization
-------------
The chapter (Definition 5.4) uses the **factorial** normalization of the signature: level k is

.. math:: \mathbb X^k_{[s,t]} = k!\int_{s<u_1<\dots<u_k<t} dX_{u_1}\otimes\dots\otimes dX_{u_k},

whereas iisignature, signatory, esig and most of the literature use the **standard** one (without
the k!). Conversion: ``standard level k = factorial level k / k!`` (:func:`to_standard`,
:func:`to_factorial`). In the factorial normalization a straight segment of increment ``b`` has
level k equal to ``b^{(x)k}`` (Example 5.5), Chen's relation (Prop. 5.21) carries binomial weights,

.. math:: \mathbb X^k_{[s,t]} = \sum_{j=0}^k \binom kj \mathbb X^j_{[s,u]}\otimes\mathbb X^{k-j}_{[u,t]},

and the signature kernel of two straight segments with increments a, b is
:math:`\sum_k \langle a,b\rangle^k = 1/(1-\langle a,b\rangle)` for :math:`|\langle a,b\rangle|<1`
(in the standard normalization it would be :math:`\sum_k\langle a,b\rangle^k/(k!)^2`).

Paths are arrays of shape ``(n_points, d)``, piecewise linear between the points; a truncated
signature is a list of ``depth + 1`` arrays of shapes ``()``, ``(d,)``, ``(d, d)``, ...
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from theory._errors import NonFiniteError
from theory._validation import (
    as_float_array,
    check_bool,
    check_choice,
    check_finite_output,
    check_int,
    check_interval,
    check_memory,
    check_work,
)

from . import _kernels as K

__all__ = [
    "signature", "signature_batch", "to_standard", "to_factorial", "chen", "kernel", "signature_inner",
    "signature_norm",
    "linear_kernel", "total_variation", "time_augment", "rnn", "ode_solution", "cde_solution", "star_products",
    "taylor_expansion", "rkhs_coefficients", "rkhs_norm", "activation_derivatives", "derivative_sup",
    "derivative_bound", "lambda_bound", "ACTIVATIONS",
]

#: activation names accepted by the RNN functions
ACTIVATIONS = ("identity", "tanh", "logistic")
_KIND = {"identity": K.IDENTITY, "tanh": K.TANH, "logistic": K.LOGISTIC}
_NORMS = ("factorial", "standard")
#: largest number of entries of a truncated signature (about 0.8 GB of float64)
_MAX_ENTRIES = 100_000_000
#: largest level whose weight k! is a float64 (171! overflows): the factorial normalization, the
#: conversions and the 1/k! of the Taylor expansion stop there
_MAX_FACTORIAL_LEVEL = 170
#: largest depth of :func:`kernel`, whose level k carries (k!)^2 (99!^2 overflows)
_MAX_KERNEL_DEPTH = 98


def _max_ndim():
    try:
        np.empty((1,) * 64)
    except ValueError:  # NumPy 1.x
        return 32
    return 64


#: largest depth of a signature returned as arrays: level k has k axes, and NumPy arrays have at most 64
_MAX_LEVEL_NDIM = _max_ndim()

# Floating-point-operation equivalents of one Python-level step (MAX_WORK = 1e11 is about a minute of
# one core): a tuple built and looked up in the jet tables, a call of a jitted function from Python.
_PY_STEP_OPS = 2e3
_PY_CALL_OPS = 1e4
# one step of the jet product's inner loop (a table look-up and a multiply-add, compiled)
_JET_OPS = 0.25


def _largest_finite(f):
    n = 0
    while n < _MAX_FACTORIAL_LEVEL and math.isfinite(f(n + 1)):
        n += 1
    return n


#: largest n whose printed bound (Lemmas 5.19, 5.20) is a float64: 150 (logistic) and 133 (tanh)
_BOUND_NMAX = {"logistic": _largest_finite(lambda n: 2.0 ** (n - 1) * math.factorial(n)),
               "tanh": _largest_finite(lambda n: 4.0 ** n * math.factorial(n))}


# ------------------------------------------------------------------------------ validation helpers

def _path(path, name, func, *, min_points=2):
    arr = as_float_array(path, name, func=func, ndim=2)
    if arr.shape[0] < min_points:
        raise ValueError(f"`{name}` of {func} must have at least {min_points} points (rows); got shape {arr.shape}.")
    if arr.shape[1] < 1:
        raise ValueError(f"`{name}` of {func} must have at least one coordinate (column); got shape {arr.shape}.")
    return arr


def _depth(depth, d, func, *, maximum=None, why=""):
    """``depth`` as an int with its number of entries sum_k d^k <= _MAX_ENTRIES, refused before any big
    integer is formed (d^depth of a huge depth has more digits than Python prints)."""
    depth = check_int(depth, "depth", func=func, minimum=0)
    if maximum is not None and depth > maximum:
        raise ValueError(f"`depth` of {func} must be <= {maximum}{why}; got {depth}.")
    if d > 1 and depth * math.log(d) > math.log(_MAX_ENTRIES) + 1.0:
        raise ValueError(f"`depth` of {func}: a depth-{depth} signature in dimension {d} has about "
                         f"10^{depth * math.log10(d):.4g} entries, more than the {_MAX_ENTRIES} allowed; "
                         f"lower `depth`.")
    size = _size(d, depth)
    if size > _MAX_ENTRIES:
        raise ValueError(f"`depth` of {func}: a depth-{depth} signature in dimension {d} has {size} entries, "
                         f"more than the {_MAX_ENTRIES} allowed; lower `depth`.")
    return depth


def _size(d, depth):
    return (d ** (depth + 1) - 1) // (d - 1) if d > 1 else depth + 1


def _signature_work(n_points, d, depth, func, max_work=None):
    """Refuse a signature whose Horner updates (Prop. 5.21, one per segment) exceed the work budget: level k
    costs about 7 d^k per segment for d >= 2 and 3k for d = 1."""
    per_segment = 7.0 * _size(d, depth) if d > 1 else depth + 1.5 * depth * max(depth - 1, 0)
    check_work((n_points - 1) * per_segment, "depth", depth, func=func, max_work=max_work,
               hint=f"{n_points - 1} segments in dimension {d}.")


def _unflatten(flat, d, depth):
    out, pos = [], 0
    for k in range(depth + 1):
        n = d ** k
        out.append(flat[pos:pos + n].reshape((d,) * k).copy())
        pos += n
    return out


def _flatten(sig, name, func):
    """A truncated signature (levels of shapes (), (d,), (d, d), ...) as (flat float64 array, d, depth)."""
    if not isinstance(sig, (list, tuple)):
        raise TypeError(f"`{name}` of {func} must be a list of levels (arrays of shapes (), (d,), (d, d), ...); "
                        f"got {type(sig).__name__}.")
    if len(sig) < 1:
        raise ValueError(f"`{name}` of {func} must hold at least level 0; got an empty {type(sig).__name__}.")
    levels = []
    for k, lv in enumerate(sig):
        arr = as_float_array(lv, f"{name}[{k}]", func=func)
        levels.append(arr.reshape(np.shape(lv)))
    if levels[0].shape != ():
        raise ValueError(f"`{name}[0]` of {func} must be a scalar (level 0); got shape {levels[0].shape}.")
    if len(levels) > 1 and (levels[1].ndim != 1 or levels[1].shape[0] < 1):
        raise ValueError(f"`{name}[1]` of {func} must have shape (d,) with d >= 1; got {levels[1].shape}.")
    d = levels[1].shape[0] if len(levels) > 1 else 1
    for k, lv in enumerate(levels):
        if lv.shape != (d,) * k:
            raise ValueError(f"`{name}[{k}]` of {func} must have shape {(d,) * k}; got {lv.shape}.")
    return np.concatenate([lv.ravel() for lv in levels]), d, len(levels) - 1


def _check_levels(depth, name, func):
    if depth > _MAX_FACTORIAL_LEVEL:
        raise ValueError(f"`{name}` of {func} must hold at most {_MAX_FACTORIAL_LEVEL + 1} levels (k! leaves float64 "
                         f"beyond level {_MAX_FACTORIAL_LEVEL}); got {depth + 1}.")


def _scale_levels(sig, name, func, power):
    flat, d, depth = _flatten(sig, name, func)
    _check_levels(depth, name, func)
    levels = _unflatten(flat, d, depth)
    with np.errstate(over="ignore"):
        out = [lv * float(math.factorial(k)) ** power for k, lv in enumerate(levels)]
    for lv in out:
        check_finite_output(lv, "the converted signature", func=func, hint=f"Reduce the entries of `{name}`.")
    return out


def _check_float(value, what, func, hint=""):
    if not math.isfinite(value):
        extra = f" {hint}" if hint else ""
        raise NonFiniteError(f"{func}: {what} overflowed to NaN or inf.{extra}")
    return value


# ------------------------------------------------------------------------------------ signatures

def signature(path, depth, normalization="factorial", *, max_work=None):
    r"""Truncated signature of a piecewise-linear path, levels 0..``depth`` (Definition 5.4, thesis (Marion), ch. 5).

    Computed segment by segment with Chen's relation (Prop. 5.21): a segment of increment
    :math:`\Delta` has standard level k :math:`\Delta^{\otimes k}/k!`, and
    :math:`S = \exp(\Delta_1)\otimes\cdots\otimes\exp(\Delta_{n-1})` is built from the last segment
    backwards, :math:`S \leftarrow \exp(\Delta)\otimes S`, each level with the Horner scheme
    :math:`S^k \mathrel{+}= \Delta\otimes(S^{k-1} + \tfrac{\Delta}{2}\otimes(S^{k-2} + \tfrac{\Delta}{3}\otimes(\cdots
    + \tfrac{\Delta}{k})))` in O(d^depth) per segment (the top level's increments are applied eight
    segments at a time). At depth 2 (d <= 128) the second level is one matrix product over the segments,
    :math:`S^2 = \sum_s (S^1(s) + \tfrac{\Delta_s}{2})\otimes\Delta_s`, computed by NumPy's BLAS over blocks
    of segments, on the calling thread. The returned levels are views of one contiguous buffer.

    Parameters
    ----------
    path : array_like, shape (n_points, d)
        At least 2 finite points, d >= 1.
    depth : int >= 0
        Truncation level N: at most 64 (level k is an array of k axes, NumPy's limit), with
        sum_k d^k <= 1e8 entries.
    normalization : {"factorial", "standard"}
        "factorial": the chapter's Definition 5.4 (level k carries k!); "standard": iisignature's.
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, about a minute of
        one core); the cost is estimated before the computation runs.

    Returns
    -------
    list of ndarray
        ``depth + 1`` float64 arrays of shapes ``()``, ``(d,)``, ``(d, d)``, ...; level 0 is 1.

    Raises
    ------
    TypeError
        ``path`` not a real array, ``depth`` not an integer, ``normalization`` not a string.
    ValueError
        ``path`` of the wrong shape or not finite, ``depth`` negative, above 64, or over the entry or work
        limits (refused before any computation); an unknown ``normalization``.
    theory.NonFiniteError
        The signature overflowed (increments too large for the depth).

    Examples
    --------
    >>> s = signature([[0.0, 0.0], [0.3, 0.4]], 3)
    >>> bool(np.allclose(s[2], np.outer([0.3, 0.4], [0.3, 0.4])))   # Example 5.5: b (x) b
    True
    """
    func = "theory.signature.signature"
    arr = _path(path, "path", func)
    check_choice(normalization, "normalization", _NORMS, func=func)
    depth = _depth(depth, arr.shape[1], func, maximum=_MAX_LEVEL_NDIM,
                   why=f" (level k is an array of k axes, and NumPy arrays have at most {_MAX_LEVEL_NDIM})")
    _signature_work(arr.shape[0], arr.shape[1], depth, func, max_work)
    flat, ok = K.signature_levels(arr, depth, normalization == "factorial")
    if not ok:
        raise NonFiniteError(f"{func}: the signature overflowed to NaN or inf. The path's increments are too large "
                             f"for this depth.")
    return _levels_of(flat, arr.shape[1], depth, ())


def _levels_of(flat, d, depth, lead):
    """Views of the flat row-major levels (last axis of ``flat``) as arrays of shapes lead + (d,) * k."""
    out, pos = [], 0
    for k in range(depth + 1):
        n = d ** k
        out.append(flat[..., pos:pos + n].reshape(lead + (d,) * k))
        pos += n
    return out


def _threads(n_threads, func):
    import numba

    top = int(numba.config.NUMBA_NUM_THREADS)
    if n_threads is None:
        return int(numba.get_num_threads())
    return check_int(n_threads, "n_threads", func=func, minimum=1, maximum=top)


def signature_batch(paths, depth, normalization="factorial", *, n_threads=None, max_work=None):
    r"""Truncated signatures of a batch of piecewise-linear paths of one length, in parallel over the batch.

    Path b gets :func:`signature` ``(paths[b], depth, normalization)`` (Definition 5.4, thesis (Marion),
    ch. 5): Chen's relation (Prop. 5.21) segment by segment, :math:`S(X) = \exp(\Delta_1)\otimes\cdots
    \otimes\exp(\Delta_{n-1})` with :math:`\exp(\Delta)^k = \Delta^{\otimes k}/k!` (standard levels; the
    factorial ones carry k!), the same values bit for bit as one call per path.

    Parameters
    ----------
    paths : array_like, shape (batch, n_points, d)
        batch >= 1 paths of at least 2 finite points each, d >= 1.
    depth : int >= 0
        Truncation level N, at most 64, with sum_k d^k <= 1e8 entries per path and batch * sum_k d^k <= 1e8
        in all.
    normalization : {"factorial", "standard"}
        As in :func:`signature`.
    n_threads : int, optional
        Threads of the parallel loop over the batch, 1 to ``numba.config.NUMBA_NUM_THREADS``; default
        ``numba.get_num_threads()`` (all cores unless set lower). The caller's setting is restored afterwards.
    max_work : float, optional
        Budget in floating-point operations for the whole batch (default ``theory._validation.MAX_WORK``); the
        cost is estimated before the computation runs.

    Returns
    -------
    list of ndarray
        ``depth + 1`` float64 arrays of shapes ``(batch,)``, ``(batch, d)``, ``(batch, d, d)``, ...: level k
        of path b is ``out[k][b]``. They are views of one (batch, sum_k d^k) buffer.

    Raises
    ------
    TypeError
        ``paths`` not a real array, ``depth`` or ``n_threads`` not an integer, ``normalization`` not a string.
    ValueError
        ``paths`` not of shape (batch, n_points, d) with batch >= 1, n_points >= 2, d >= 1, or not finite;
        ``depth`` or ``n_threads`` out of range; a batch over the entry or work limits (refused before any
        computation); an unknown ``normalization``.
    theory.NonFiniteError
        A signature overflowed (increments too large for the depth).

    Examples
    --------
    >>> paths = np.cumsum(np.full((4, 3, 2), 0.1), axis=1)
    >>> sigs = signature_batch(paths, 2)
    >>> sigs[2].shape
    (4, 2, 2)
    >>> bool(np.allclose(sigs[2][1], signature(paths[1], 2)[2]))
    True
    """
    func = "theory.signature.signature_batch"
    arr = as_float_array(paths, "paths", func=func, ndim=3)
    nb, npts, d = arr.shape
    if nb < 1 or npts < 2 or d < 1:
        raise ValueError(f"`paths` of {func} must have shape (batch, n_points, d) with batch >= 1, n_points >= 2 "
                         f"and d >= 1; got {arr.shape}.")
    check_choice(normalization, "normalization", _NORMS, func=func)
    depth = _depth(depth, d, func, maximum=_MAX_LEVEL_NDIM,
                   why=f" (level k is an array of k axes, and NumPy arrays have at most {_MAX_LEVEL_NDIM})")
    size = _size(d, depth)
    if nb * size > _MAX_ENTRIES:
        raise ValueError(f"`paths` of {func}: {nb} signatures of {size} entries are {nb * size} entries, more than "
                         f"the {_MAX_ENTRIES} allowed; split the batch or lower `depth`.")
    threads = _threads(n_threads, func)
    per_segment = 7.0 * size if d > 1 else depth + 1.5 * depth * max(depth - 1, 0)
    check_work(nb * (npts - 1) * per_segment, "depth", depth, func=func, max_work=max_work,
               hint=f"{nb} paths of {npts - 1} segments in dimension {d}.")
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        flat, ok = K.signature_batch_levels(arr, depth, normalization == "factorial", threads)
    finally:
        numba.set_num_threads(before)
    if not ok:
        raise NonFiniteError(f"{func}: a signature overflowed to NaN or inf. The paths' increments are too large "
                             f"for this depth.")
    return _levels_of(flat, d, depth, (nb,))


def to_standard(sig):
    r"""Convert a factorial-normalized truncated signature (Definition 5.4, thesis (Marion), ch. 5) to the standard one.

    Level k is divided by k!.

    Parameters
    ----------
    sig : list of array_like
        Levels 0..N of shapes (), (d,), (d, d), ..., finite; N <= 170.

    Returns
    -------
    list of ndarray
        The standard levels, float64, of the same shapes.

    Raises
    ------
    TypeError
        ``sig`` not a list or tuple, or a level not a real array.
    ValueError
        A level of the wrong shape or not finite, or more than 171 levels.
    """
    return _scale_levels(sig, "sig", "theory.signature.to_standard", -1)


def to_factorial(sig):
    r"""Convert a standard truncated signature (iisignature's) to the factorial normalization (Definition 5.4, ch. 5).

    Level k is multiplied by k!.

    Parameters
    ----------
    sig : list of array_like
        Levels 0..N of shapes (), (d,), (d, d), ..., finite; N <= 170.

    Returns
    -------
    list of ndarray
        The factorial levels, float64, of the same shapes.

    Raises
    ------
    TypeError
        ``sig`` not a list or tuple, or a level not a real array.
    ValueError
        A level of the wrong shape or not finite, or more than 171 levels.
    theory.NonFiniteError
        A level times k! overflowed.
    """
    return _scale_levels(sig, "sig", "theory.signature.to_factorial", 1)


def _pair(sig_a, sig_b, func):
    a, d, depth = _flatten(sig_a, "sig_a", func)
    b, d2, depth2 = _flatten(sig_b, "sig_b", func)
    if (d, depth) != (d2, depth2):
        raise ValueError(f"`sig_b` of {func} must have the dimension and depth of `sig_a` ({d}, {depth}); "
                         f"got ({d2}, {depth2}).")
    return a, b, d, depth


def chen(sig_a, sig_b, normalization="factorial", *, max_work=None):
    r"""Product of two truncated signatures (Chen's relation, Prop. 5.21 of the thesis (Marion), ch. 5).

    The signature of the concatenation of the two paths. Factorial normalization:
    :math:`C^k = \sum_j \binom kj A^j\otimes B^{k-j}`; standard: without the binomials.

    Parameters
    ----------
    sig_a, sig_b : list of array_like
        Levels 0..N of one dimension d and one depth N (shapes (), (d,), (d, d), ...), finite.
    normalization : {"factorial", "standard"}
        The normalization of both inputs and of the result.
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, about a minute of
        one core); the cost is estimated before the computation runs.

    Returns
    -------
    list of ndarray
        Levels 0..N of the product, float64.

    Raises
    ------
    TypeError
        A signature not a list or tuple, a level not a real array, ``normalization`` not a string.
    ValueError
        Levels of the wrong shapes, dimensions or depths that differ, NaN or inf, an unknown
        ``normalization``, or a product over the work limit.
    theory.NonFiniteError
        The product overflowed.
    """
    func = "theory.signature.chen"
    check_choice(normalization, "normalization", _NORMS, func=func)
    a, b, d, depth = _pair(sig_a, sig_b, func)
    check_work(2.0 * (depth + 1) * a.size, "sig_a", f"{depth + 1} levels in dimension {d}", func=func,
               max_work=max_work)
    out = _unflatten(K.chen_flat(a, b, d, depth, normalization == "factorial"), d, depth)
    for lv in out:
        check_finite_output(lv, "the product", func=func, hint="Reduce the entries of `sig_a` or `sig_b`.")
    return out


def signature_inner(sig_a, sig_b):
    r"""The inner product of (5.6), thesis (Marion), ch. 5.

    :math:`\langle a, b\rangle_{\mathscr T} = \sum_k \langle a_k, b_k\rangle`.

    Entrywise products of the levels, summed.

    Parameters
    ----------
    sig_a, sig_b : list of array_like
        Levels 0..N of one dimension and one depth, finite.

    Returns
    -------
    float
        The inner product.

    Raises
    ------
    TypeError
        A signature not a list or tuple, or a level not a real array.
    ValueError
        Levels of the wrong shapes, dimensions or depths that differ, NaN or inf.
    theory.NonFiniteError
        The sum overflowed.
    """
    func = "theory.signature.signature_inner"
    a, b, _, _ = _pair(sig_a, sig_b, func)
    with np.errstate(over="ignore", invalid="ignore"):
        ip = float(a @ b)
    return _check_float(ip, "the inner product", func)


def signature_norm(sig):
    r"""The norm :math:`\|a\|_{\mathscr T} = \langle a, a\rangle_{\mathscr T}^{1/2}` of (5.6), thesis (Marion), ch. 5.

    Parameters
    ----------
    sig : list of array_like
        Levels 0..N of shapes (), (d,), (d, d), ..., finite.

    Returns
    -------
    float
        The norm.

    Raises
    ------
    TypeError
        ``sig`` not a list or tuple, or a level not a real array.
    ValueError
        A level of the wrong shape, NaN or inf.
    theory.NonFiniteError
        The sum of squares overflowed.
    """
    func = "theory.signature.signature_norm"
    a, _, _ = _flatten(sig, "sig", func)
    with np.errstate(over="ignore", invalid="ignore"):
        norm = float(np.sqrt(a @ a))
    return _check_float(norm, "the norm", func)


def kernel(path_x, path_y, depth, *, max_work=None):
    r"""Truncated signature kernel :math:`\sum_{k\le N}\langle \mathbb X^k, \mathbb Y^k\rangle` (factorial levels).

    The kernel K of section 5.2.2 of the thesis (Marion), chapter 5, of the paths as given (apply
    :func:`time_augment` first for the chapter's :math:`K(X, Y) = \langle S(\bar X), S(\bar Y)\rangle`).
    With the standard levels :math:`S^k` of :func:`signature`,
    :math:`K = \sum_{k\le N} (k!)^2 \langle S^k(X), S^k(Y)\rangle`: both signatures and the weighted
    dot product are computed in one compiled call.

    Parameters
    ----------
    path_x, path_y : array_like, shape (n_points, d)
        Two paths of one dimension d >= 1 (their numbers of points may differ), at least 2 finite points each.
    depth : int in [0, 98]
        Truncation level N (level k carries (k!)^2, which leaves float64 beyond 98), with
        sum_k d^k <= 1e8 entries.
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, about a minute of
        one core); the cost is estimated before the computation runs.

    Returns
    -------
    float
        The truncated kernel.

    Raises
    ------
    TypeError
        A path not a real array, ``depth`` not an integer.
    ValueError
        Paths of the wrong shapes or dimensions, NaN or inf, ``depth`` out of range or over the entry or
        work limits.
    theory.NonFiniteError
        The kernel overflowed.
    """
    func = "theory.signature.kernel"
    x = _path(path_x, "path_x", func)
    y = _path(path_y, "path_y", func)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"`path_y` of {func} must have the dimension of `path_x` ({x.shape[1]}); got {y.shape[1]}.")
    depth = _depth(depth, x.shape[1], func, maximum=_MAX_KERNEL_DEPTH, why=" (level k carries (k!)^2, which leaves "
                   "float64 beyond 98)")
    _signature_work(x.shape[0] + y.shape[0] - 1, x.shape[1], depth, func, max_work)
    total, ok = K.kernel_levels(x, y, depth)
    if not ok:
        raise NonFiniteError(f"{func}: the kernel overflowed to NaN or inf. The paths' increments are too large.")
    return float(total)


def linear_kernel(a, b):
    r"""Closed form of the (untruncated) signature kernel of two straight segments with increments a, b.

    :math:`\sum_{k\ge0}\langle a,b\rangle^k = 1/(1-\langle a,b\rangle)`, valid in the factorial
    normalization when :math:`|\langle a,b\rangle| < 1` (Example 5.5 of the thesis (Marion), chapter 5).

    Parameters
    ----------
    a, b : array_like, shape (d,)
        The increments, finite, d >= 1.

    Returns
    -------
    float
        1 / (1 - <a, b>).

    Raises
    ------
    TypeError
        ``a`` or ``b`` not a real array.
    ValueError
        Shapes that differ, NaN or inf, or ``|<a, b>| >= 1`` (the series diverges).
    """
    func = "theory.signature.linear_kernel"
    a = as_float_array(a, "a", func=func, ndim=1, min_size=1)
    b = as_float_array(b, "b", func=func, shape=a.shape)
    with np.errstate(over="ignore", invalid="ignore"):
        ip = float(a @ b)
    if not abs(ip) < 1.0:
        raise ValueError(f"`a`, `b` of {func}: the series converges only for |<a, b>| < 1; got <a, b> = {ip}.")
    return 1.0 / (1.0 - ip)


def _total_variation(arr, func):
    with np.errstate(over="ignore", invalid="ignore"):
        tv = float(np.linalg.norm(np.diff(arr, axis=0), axis=1).sum())
    return _check_float(tv, "the total variation", func, "Reduce the path's increments.")


def total_variation(path):
    r"""Total variation of the piecewise-linear path: the sum of the Euclidean lengths of its segments.

    The quantity bounded by L in the chapter's input set (Prop. 5.2 of the thesis (Marion), ch. 5).

    Parameters
    ----------
    path : array_like, shape (n_points, d)
        At least 2 finite points, d >= 1.

    Returns
    -------
    float
        sum_j ||x_{j+1} - x_j||_2.

    Raises
    ------
    TypeError
        ``path`` not a real array.
    ValueError
        ``path`` of the wrong shape, NaN or inf.
    theory.NonFiniteError
        The sum overflowed.
    """
    func = "theory.signature.total_variation"
    return _total_variation(_path(path, "path", func), func)


def time_augment(path, L, times=None, *, check=True):
    r"""Time-augmented path :math:`\bar X_t = (X_t, \frac{1-L}{2} t)` of Prop. 5.2 (thesis (Marion), chapter 5).

    Parameters
    ----------
    path : array_like, shape (n_points, d)
        Values of X at ``times``, at least 2 finite points.
    L : float in (0, 1)
        The total-variation bound.
    times : array_like, shape (n_points,), optional
        Strictly increasing times in [0, 1], first 0 and last 1; default ``linspace(0, 1, n_points)``.
    check : bool
        When True, raise if X_0 != 0 or the total variation exceeds L (the chapter's input set):
        its bounds (Prop. 5.6, Prop. 5.9, Thm 5.11-5.14) do not apply to such a path.

    Returns
    -------
    ndarray, shape (n_points, d + 1)
        The path with the rescaled time as last column.

    Raises
    ------
    TypeError
        ``path`` or ``times`` not a real array, ``L`` not a real number, ``check`` not a bool.
    ValueError
        Wrong shapes, NaN or inf, ``L`` outside (0, 1), ``times`` not increasing from 0 to 1, or (``check``)
        a path outside the chapter's input set.
    """
    func = "theory.signature.time_augment"
    arr = _path(path, "path", func)
    L = check_interval(L, "L", 0.0, 1.0, func=func)
    check = check_bool(check, "check", func=func)
    n = arr.shape[0]
    if times is None:
        t = np.linspace(0.0, 1.0, n)
    else:
        t = as_float_array(times, "times", func=func, shape=(n,))
        if t[0] != 0.0 or t[-1] != 1.0 or np.any(np.diff(t) <= 0):
            raise ValueError(f"`times` of {func} must increase strictly from 0 to 1; got {t[0]}..{t[-1]}.")
    if check:
        if np.any(arr[0] != 0.0):
            raise ValueError(f"`path` of {func} must start at 0 (X_0 = 0, the chapter's input set); got {arr[0]}. "
                             f"Subtract the first point, or pass check=False (the chapter's bounds do not apply).")
        with np.errstate(over="ignore", invalid="ignore"):
            tv = float(np.linalg.norm(np.diff(arr, axis=0), axis=1).sum())
        if not tv <= L * (1.0 + 1e-12):  # round-off of a path rescaled to total variation exactly L
            raise ValueError(f"`path` of {func} has total variation {tv:.6g} > L = {L}: the chapter's bounds do not "
                             f"apply; rescale the path or pass check=False.")
    return np.column_stack([arr, 0.5 * (1.0 - L) * t])


# ------------------------------------------------------------------------------------- RNN side

def _rnn_params(U, V, b, func):
    U = as_float_array(U, "U", func=func, ndim=2)
    e = U.shape[0]
    if U.shape != (e, e) or e < 1:
        raise ValueError(f"`U` of {func} must be square (e, e) with e >= 1; got {U.shape}.")
    V = as_float_array(V, "V", func=func, ndim=2)
    if V.shape[0] != e or V.shape[1] < 1:
        raise ValueError(f"`V` of {func} must have shape ({e}, d) with d >= 1; got {V.shape}.")
    b = as_float_array(b, "b", func=func, shape=(e,))
    return U, V, b


def _h0(h0, e, func, name="h0"):
    if h0 is None:
        return np.zeros(e)
    return as_float_array(h0, name, func=func, shape=(e,), copy=True)


def _rnn_guard(steps, n_out, e, d, name, value, func, *, evals=1, substeps=1, max_work=None):
    """Work of ``steps`` field evaluations (2 e (e + d) each, ``evals`` per step) and memory of the
    (n_out, e) output, checked before the kernel runs."""
    check_memory(8.0 * n_out * e, name, value, func=func, hint=f"The output has shape ({n_out}, {e}).")
    check_work(float(steps) * substeps * evals * (2.0 * e * (e + d) + 10.0 * e), name, value, func=func,
               max_work=max_work)


def rnn(xs, U, V, b, activation="tanh", h0=None, *, max_work=None):
    r"""Residual RNN (5.1) of the thesis (Marion), ch. 5: :math:`h_{j+1} = h_j + \frac1T\sigma(U h_j + V x_{j+1} + b)`.

    For j = 0..T-1 (equations (5.1)-(5.2)); ``xs`` holds :math:`x_1, \dots, x_T` (the right end point of
    each step).

    Parameters
    ----------
    xs : array_like, shape (T, d)
        Inputs, T >= 1, finite.
    U : array_like, shape (e, e)
        Recurrent weights, e >= 1, finite.
    V : array_like, shape (e, d)
        Input weights, finite.
    b : array_like, shape (e,)
        Bias, finite.
    activation : {"identity", "tanh", "logistic"}
        The elementwise sigma (:data:`ACTIVATIONS`).
    h0 : array_like, shape (e,), optional
        Initial hidden state; default 0.
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, about a minute of
        one core); the cost is estimated before the computation runs.

    Returns
    -------
    ndarray, shape (T + 1, e)
        h_0..h_T, float64.

    Raises
    ------
    TypeError
        An array argument not real, ``activation`` not a string.
    ValueError
        Wrong shapes, NaN or inf, an unknown ``activation``, or a call over the work or memory limits.
    theory.NonFiniteError
        The hidden states overflowed.
    """
    func = "theory.signature.rnn"
    U, V, b = _rnn_params(U, V, b, func)
    xs = as_float_array(xs, "xs", func=func, ndim=2)
    if xs.shape[0] < 1 or xs.shape[1] != V.shape[1]:
        raise ValueError(f"`xs` of {func} must have shape (T, {V.shape[1]}) with T >= 1; got {xs.shape}.")
    check_choice(activation, "activation", ACTIVATIONS, func=func)
    h = _h0(h0, U.shape[0], func)
    _rnn_guard(xs.shape[0], xs.shape[0] + 1, U.shape[0], V.shape[1], "xs", f"{xs.shape[0]} steps", func,
               max_work=max_work)
    hs = K.rnn_forward(xs, U, V, b, _KIND[activation], h)
    check_finite_output(hs, "the hidden states", func=func)
    return hs


def ode_solution(path, U, V, b, activation="tanh", h0=None, substeps=8, *, max_work=None):
    r"""Solution of the ODE (5.3), thesis (Marion), ch. 5: :math:`dH_t = \sigma(U H_t + V X_t + b) dt`, at the knots.

    X is piecewise linear through ``path`` at times ``j / (n_points - 1)``; classical RK4 with
    ``substeps`` steps per segment (error O((n_points * substeps)^-4)).

    Parameters
    ----------
    path : array_like, shape (n_points, d)
        At least 2 finite points.
    U, V, b : array_like
        As in :func:`rnn`: shapes (e, e), (e, d), (e,).
    activation : {"identity", "tanh", "logistic"}
        The elementwise sigma.
    h0 : array_like, shape (e,), optional
        H_0; default 0.
    substeps : int >= 1
        RK4 steps per segment.
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, about a minute of
        one core); the cost is estimated before the computation runs.

    Returns
    -------
    ndarray, shape (n_points, e)
        H at the knots, float64.

    Raises
    ------
    TypeError
        An array argument not real, ``activation`` not a string, ``substeps`` not an integer.
    ValueError
        Wrong shapes, NaN or inf, an unknown ``activation``, ``substeps`` < 1, or a call over the work or
        memory limits (refused before the solver runs).
    theory.NonFiniteError
        The solution overflowed.
    """
    func = "theory.signature.ode_solution"
    U, V, b = _rnn_params(U, V, b, func)
    arr = _path(path, "path", func)
    if arr.shape[1] != V.shape[1]:
        raise ValueError(f"`path` of {func} must have {V.shape[1]} columns (V's); got {arr.shape[1]}.")
    check_choice(activation, "activation", ACTIVATIONS, func=func)
    substeps = check_int(substeps, "substeps", func=func, minimum=1)
    h = _h0(h0, U.shape[0], func)
    _rnn_guard(arr.shape[0] - 1, arr.shape[0], U.shape[0], V.shape[1], "substeps", substeps, func, evals=4,
               substeps=substeps, max_work=max_work)
    hs = K.ode_rk4(arr, U, V, b, _KIND[activation], h, substeps)
    check_finite_output(hs, "the ODE solution", func=func)
    return hs


def cde_solution(path_bar, U, V, b, L, activation="tanh", hbar0=None, substeps=8, *, max_work=None):
    r"""Solution of the CDE (5.4), thesis (Marion), ch. 5: :math:`d\bar H_t = \mathbf F(\bar H_t) d\bar X_t`.

    :math:`\mathbf F(\bar h) = \begin{pmatrix} 0 & \frac2{1-L}\sigma(W\bar h + b)\\ I_d & 0\end{pmatrix}`,
    W = (U V) (Prop. 5.2 and Example 5.3); RK4 with ``substeps`` steps per segment.

    Parameters
    ----------
    path_bar : array_like, shape (n_points, d + 1)
        The time-augmented path (:func:`time_augment`), last column the rescaled time; at least 2 finite points.
    U, V, b : array_like
        As in :func:`rnn`: shapes (e, e), (e, d), (e,).
    L : float in (0, 1)
        The total-variation bound of Prop. 5.2.
    activation : {"identity", "tanh", "logistic"}
        The elementwise sigma.
    hbar0 : array_like, shape (e + d,), optional
        :math:`\bar H_0 = (h_0, X_0)`; default 0.
    substeps : int >= 1
        RK4 steps per segment.
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, about a minute of
        one core); the cost is estimated before the computation runs.

    Returns
    -------
    ndarray, shape (n_points, e + d)
        :math:`\bar H` at the knots, float64.

    Raises
    ------
    TypeError
        An array argument not real, ``L`` not a real number, ``activation`` not a string, ``substeps`` not an
        integer.
    ValueError
        Wrong shapes, NaN or inf, ``L`` outside (0, 1), an unknown ``activation``, ``substeps`` < 1, or a call
        over the work or memory limits (refused before the solver runs).
    theory.NonFiniteError
        The solution overflowed.
    """
    func = "theory.signature.cde_solution"
    U, V, b = _rnn_params(U, V, b, func)
    e, d = V.shape
    arr = _path(path_bar, "path_bar", func)
    if arr.shape[1] != d + 1:
        raise ValueError(f"`path_bar` of {func} must have d + 1 = {d + 1} columns; got {arr.shape[1]}.")
    L = check_interval(L, "L", 0.0, 1.0, func=func)
    check_choice(activation, "activation", ACTIVATIONS, func=func)
    substeps = check_int(substeps, "substeps", func=func, minimum=1)
    hb0 = _h0(hbar0, e + d, func, "hbar0")
    _rnn_guard(arr.shape[0] - 1, arr.shape[0], e + d, d, "substeps", substeps, func, evals=4, substeps=substeps,
               max_work=max_work)
    out = K.cde_rk4(arr, np.hstack([U, V]), b, _KIND[activation], 2.0 / (1.0 - L), hb0, substeps)
    check_finite_output(out, "the CDE solution", func=func)
    return out


# ------------------------------------------------------------------------ activation derivatives

def activation_derivatives(activation, n):
    r"""Polynomials :math:`p_0..p_n` with :math:`\sigma^{(k)}(x) = p_k(\sigma(x))` (Lemmas 5.19-5.20, ch. 5).

    Logistic: :math:`\sigma' = \sigma(1-\sigma)`, so :math:`p_{k+1}(s) = p_k'(s)\,s(1-s)`; tanh:
    :math:`p_{k+1}(t) = p_k'(t)(1-t^2)`; identity: :math:`p_0 = s`, :math:`p_1 = 1`, then 0.

    Parameters
    ----------
    activation : {"identity", "tanh", "logistic"}
        The activation sigma.
    n : int in [0, 60]
        Highest derivative.

    Returns
    -------
    list of ndarray
        ``n + 1`` coefficient arrays (numpy.polynomial order, lowest degree first), float64.

    Raises
    ------
    TypeError
        ``activation`` not a string, ``n`` not an integer.
    ValueError
        An unknown ``activation``, ``n`` outside [0, 60].
    """
    func = "theory.signature.activation_derivatives"
    check_choice(activation, "activation", ACTIVATIONS, func=func)
    n = check_int(n, "n", func=func, minimum=0, maximum=60)
    P = np.polynomial.polynomial
    if activation == "identity":
        return ([np.array([0.0, 1.0]), np.array([1.0])] + [np.array([0.0])] * max(0, n - 1))[: n + 1]
    mult = np.array([0.0, 1.0, -1.0]) if activation == "logistic" else np.array([1.0, 0.0, -1.0])
    polys = [np.array([0.0, 1.0])]
    for _ in range(n):
        polys.append(P.polymul(P.polyder(polys[-1]), mult))
    return polys


def derivative_sup(activation, n):
    r""":math:`\sup_x|\sigma^{(n)}(x)|`, exact up to root-finding round-off (the constants of Lemmas 5.19-5.20).

    :math:`\sigma^{(n)} = p_n(\sigma)` (:func:`activation_derivatives`) and :math:`\sigma(\mathbb R)` is
    (0, 1) (logistic) or (-1, 1) (tanh): the sup is the max of :math:`|p_n|` over the critical points and
    end points of that interval.

    Parameters
    ----------
    activation : {"identity", "tanh", "logistic"}
        The activation sigma.
    n : int in [0, 60]
        Order of the derivative.

    Returns
    -------
    float
        The supremum; for the identity it is exact: inf at n = 0 (``sup |x|`` over the real line), 1 at
        n = 1, 0 beyond.

    Raises
    ------
    TypeError
        ``activation`` not a string, ``n`` not an integer.
    ValueError
        An unknown ``activation``, ``n`` outside [0, 60].
    """
    func = "theory.signature.derivative_sup"
    check_choice(activation, "activation", ACTIVATIONS, func=func)
    n = check_int(n, "n", func=func, minimum=0, maximum=60)
    if activation == "identity":
        return math.inf if n == 0 else (1.0 if n == 1 else 0.0)
    p = activation_derivatives(activation, n)[-1]
    lo, hi = (0.0, 1.0) if activation == "logistic" else (-1.0, 1.0)
    P = np.polynomial.polynomial
    cand = [lo, hi]
    dp = P.polyder(p)
    if len(dp) > 0 and np.any(dp != 0):
        for r in P.polyroots(dp):
            if abs(r.imag) < 1e-9 and lo <= r.real <= hi:
                cand.append(float(r.real))
    return float(max(abs(P.polyval(c, p)) for c in cand))


def derivative_bound(activation, n):
    r"""The printed bounds on :math:`\sup|\sigma^{(n)}|`: :math:`2^{n-1} n!` (logistic) and :math:`4^n n!` (tanh).

    Lemma 5.19 (logistic) and Lemma 5.20 (tanh) of the thesis (Marion), chapter 5.

    Parameters
    ----------
    activation : {"tanh", "logistic"}
        The activation sigma.
    n : int >= 0
        Order of the derivative: at most 150 (logistic) or 133 (tanh), where the bound is still a float64.

    Returns
    -------
    float
        The printed bound.

    Raises
    ------
    TypeError
        ``activation`` not a string, ``n`` not an integer.
    ValueError
        An unknown ``activation`` (the identity has no printed bound), ``n`` out of range.
    """
    func = "theory.signature.derivative_bound"
    check_choice(activation, "activation", ("tanh", "logistic"), func=func)
    n = check_int(n, "n", func=func, minimum=0, maximum=_BOUND_NMAX[activation])
    if activation == "logistic":
        return 2.0 ** (n - 1) * math.factorial(n)
    return 4.0 ** n * math.factorial(n)


def lambda_bound(N, a, W_frobenius, L, corrected=True):
    r"""Bound on :math:`\Lambda_N(\mathbf F_{RNN})` of Prop. 5.10 (thesis (Marion), chapter 5).

    Printed: :math:`\sqrt2 a (8a^2\|W\|_F/(1-L))^{N-1} N!`. ``corrected=True`` multiplies it by
    :math:`2/(1-L)`: the field (5.5) carries the factor :math:`2/(1-L)` once in every factor of the
    product rule of Lemma 5.23, while Lemma 5.24 counts it k times in a k-th derivative (none at k = 0).

    Parameters
    ----------
    N : int in [1, 170]
        Order (N! leaves float64 beyond 170).
    a : float > 0
        The activation constant of Prop. 5.10.
    W_frobenius : float >= 0
        :math:`\|W\|_F`.
    L : float in (0, 1)
        The total-variation bound.
    corrected : bool
        Multiply the printed bound by 2/(1-L).

    Returns
    -------
    float
        The bound.

    Raises
    ------
    TypeError
        ``N`` not an integer, ``a``, ``W_frobenius`` or ``L`` not real numbers, ``corrected`` not a bool.
    ValueError
        An argument out of range.
    theory.NonFiniteError
        The bound overflows float64.
    """
    func = "theory.signature.lambda_bound"
    N = check_int(N, "N", func=func, minimum=1, maximum=_MAX_FACTORIAL_LEVEL)
    a = check_interval(a, "a", 0.0, math.inf, func=func)
    w = check_interval(W_frobenius, "W_frobenius", 0.0, math.inf, func=func, closed="left")
    L = check_interval(L, "L", 0.0, 1.0, func=func)
    corrected = check_bool(corrected, "corrected", func=func)
    hint = "Lower `N`, `a` or `W_frobenius`."
    try:
        val = math.sqrt(2.0) * a * (8.0 * a * a * w / (1.0 - L)) ** (N - 1) * math.factorial(N)
    except OverflowError:  # a float power beyond the float64 range
        raise NonFiniteError(f"{func}: the bound overflowed to inf. {hint}") from None
    val = val * 2.0 / (1.0 - L) if corrected else val
    return _check_float(val, "the bound", func, hint)


# ------------------------------------------------------------------- star products and expansion

def _monomials(e, D):
    """Exponents m in N^e with |m| <= D, sorted by (|m|, m): the C(e + D, D) multisets of at most D of the
    e variables, generated directly (not by filtering the (D + 1)^e tuples of a grid)."""
    out = []
    for g in range(D + 1):
        for combo in itertools.combinations_with_replacement(range(e), g):
            m = [0] * e
            for i in combo:
                m[i] += 1
            out.append(tuple(m))
    out.sort(key=lambda m: (sum(m), m))
    return out


def _jet_tables(e, D):
    expo = _monomials(e, D)
    index = {m: i for i, m in enumerate(expo)}
    n = len(expo)
    deg = [sum(m) for m in expo]
    upto = [0] * (D + 2)  # upto[k]: number of exponents of degree < k (expo is sorted by degree)
    for k in range(D + 2):
        upto[k] = sum(1 for g in deg if g < k)
    mul = -np.ones((n, n), dtype=np.int64)
    for p, a in enumerate(expo):
        for q in range(upto[D - deg[p] + 1]):  # the products of degree <= D
            s = tuple(x + y for x, y in zip(a, expo[q]))
            mul[p, q] = index[s]
    up = -np.ones((n, e), dtype=np.int64)
    upm = np.zeros((n, e))
    for p, a in enumerate(expo):
        for m in range(e):
            s = list(a)
            s[m] += 1
            s = tuple(s)
            if s in index:
                up[p, m] = index[s]
                upm[p, m] = a[m] + 1
    return expo, index, mul, up, upm


def _support(e, D, s):
    """Number of monomials of degree <= D in e variables that involve at most s of them:
    sum_j C(e, j) C(D, j) (j variables, each of exponent >= 1, exponents summing to <= D)."""
    return sum(math.comb(e, j) * math.comb(D, j) for j in range(min(s, D, e) + 1))


def _star_guard(e, d, depth, func, max_work=None):
    """Memory and work of :func:`star_products`, from its sizes alone, before any table is built.

    Jets hold n = C(e + D, D) coefficients (D = depth - 1); the multiplication table is n x n. A product
    with t applications of the non-constant column F^{d+1} has jets in at most t + 1 of the e variables
    (each application multiplies by sigma(z), a sum of one-variable jets), which bounds the nonzero
    coefficients that the jet products visit: C(k-2, t) d^(k-2-t) of the products of level k - 1 have t."""
    db, eb, D = d + 1, e + d, depth - 1
    n = float(math.comb(e + D, D))
    peak_nodes = db ** (depth - 1) + db ** max(depth - 2, 0)
    nbytes = 8.0 * (n * n + 2 * n * e + peak_nodes * e * n + sum(db ** k * eb for k in range(1, depth + 1)))
    check_memory(nbytes, "depth", depth, func=func, hint=f"Jets of {int(n)} coefficients in e = {e} variables.")
    pairs = sum(math.comb(e + g - 1, g) * math.comb(e + D - g, D - g) for g in range(D + 1))
    ops = _PY_STEP_OPS * (pairs + n * e) + n * n
    for k in range(2, depth + 1):
        for t in range(k - 1):
            count = math.comb(k - 2, t) * d ** (k - 2 - t)
            ops += count * (db * _PY_CALL_OPS + e * e * n * (2.0 * d + 2.0 + _JET_OPS * _support(e, D, t + 1)))
    check_work(ops, "depth", depth, func=func, max_work=max_work,
               hint=f"Jets of {int(n)} coefficients in e = {e} variables.")


def star_products(U, V, b, L, depth, activation="tanh", hbar0=None, *, max_work=None):
    r"""Iterated differential products :math:`F^{i_1}\star\cdots\star F^{i_k}(\bar h_0)` of the field (5.5).

    Definition 5.7 of the thesis (Marion), chapter 5: :math:`(F\star G)(h) = J(G)(h)F(h)`, nested from
    the right, so :math:`F^{i_1}\star\cdots\star F^{i_k} = (F^{i_1}\cdot\nabla)\cdots(F^{i_{k-1}}\cdot\nabla)F^{i_k}`
    (index :math:`i_1` belongs to the earliest time). The columns are :math:`F^i = e_{e+i}` (i <= d,
    constant) and :math:`F^{d+1}(\bar h) = (\frac2{1-L}\sigma(W\bar h + b), 0)`. Every product is a
    function of :math:`z = W\bar h + b`; they are computed exactly (to round-off) with truncated
    multivariate Taylor polynomials in z of degree depth - 1, built from the activation's derivatives.

    Parameters
    ----------
    U, V, b : array_like
        As in :func:`rnn`: shapes (e, e), (e, d), (e,), finite.
    L : float in (0, 1)
        The total-variation bound of Prop. 5.2.
    depth : int in [1, 12]
        Highest order k, with (d + 1)^(depth - 1) e <= 5e6 products per level.
    activation : {"identity", "tanh", "logistic"}
        The elementwise sigma.
    hbar0 : array_like, shape (e + d,), optional
        The point :math:`\bar h_0`; default 0.
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, about a minute of
        one core); the cost is estimated before the computation runs.

    Returns
    -------
    list of ndarray
        Entry k-1 has shape ``(d+1,)*k + (e+d,)``: index (i_1..i_k) (0-based) then the vector.

    Raises
    ------
    TypeError
        An array argument not real, ``L`` not a real number, ``depth`` not an integer, ``activation`` not a
        string.
    ValueError
        Wrong shapes, NaN or inf, ``L`` outside (0, 1), ``depth`` out of range, an unknown ``activation``, or
        a call over the work or memory limits (refused before the jets are built).
    theory.NonFiniteError
        A product overflowed.
    """
    func = "theory.signature.star_products"
    U, V, b = _rnn_params(U, V, b, func)
    e, d = V.shape
    L = check_interval(L, "L", 0.0, 1.0, func=func)
    depth = check_int(depth, "depth", func=func, minimum=1, maximum=12)
    check_choice(activation, "activation", ACTIVATIONS, func=func)
    db, eb = d + 1, e + d
    if db ** (depth - 1) * e > 5_000_000:
        raise ValueError(f"`depth` of {func}: {db ** (depth - 1)} products per level is too many; lower `depth`.")
    hb0 = _h0(hbar0, eb, func, "hbar0")
    _star_guard(e, d, depth, func, max_work)
    W = np.hstack([U, V])
    with np.errstate(over="ignore", invalid="ignore"):
        z0 = W @ hb0 + b
    check_finite_output(z0, "W hbar0 + b", func=func, hint="Reduce `hbar0` or the weights.")
    c = 2.0 / (1.0 - L)
    D = depth - 1
    expo, index, mul, up, upm = _jet_tables(e, D)
    n = len(expo)
    polys = activation_derivatives(activation, D) if activation != "identity" else None
    sig = np.zeros((e, n))
    for j in range(e):
        if activation == "identity":
            sig[j, index[tuple(0 for _ in range(e))]] = z0[j]
            if D >= 1:
                sig[j, index[tuple(1 if m == j else 0 for m in range(e))]] = 1.0
        else:
            s = K.act(z0[j], _KIND[activation])
            for k in range(D + 1):
                mono = tuple(k if m == j else 0 for m in range(e))
                sig[j, index[mono]] = np.polynomial.polynomial.polyval(s, polys[k]) / math.factorial(k)
    with np.errstate(over="ignore", invalid="ignore"):
        field = c * sig  # jets of the first e coordinates of F^{d+1}
        dir_jet = c * (U @ sig)  # jets of the z-direction of F^{d+1}: W F^{d+1} = c U sigma(z)
    out = []
    lvl1 = np.zeros((db, eb))
    for i in range(d):
        lvl1[i, e + i] = 1.0
    lvl1[d, :e] = field[:, 0]
    out.append(lvl1)
    # suffix tree of jets: nodes[s] is the jet of F^{i_j} * ... * F^{i_k} with i_k = d+1, keyed by the suffix
    nodes = [field]
    for k in range(2, depth + 1):
        new_nodes = [None] * (db ** (k - 1))
        level = np.zeros((db,) * k + (eb,))
        flat = level.reshape(db ** (k - 1), db, eb)
        for sfx, G in enumerate(nodes):
            for i in range(db):
                if i < d:
                    H = K.star_apply(G, np.ascontiguousarray(V[:, i]), True, dir_jet, mul, up, upm)
                else:
                    H = K.star_apply(G, np.zeros(e), False, dir_jet, mul, up, upm)
                new_nodes[i * db ** (k - 2) + sfx] = H
                # new suffix (i, old suffix): index i * db**(k-2) + sfx among suffixes of length k-1 that end in d+1
                flat[i * db ** (k - 2) + sfx, d, :e] = H[:, 0]
        nodes = new_nodes
        out.append(level)
    for k, lv in enumerate(out):
        check_finite_output(lv, f"the level-{k + 1} star products", func=func)
    return out


def _products(products, func, *, min_levels=1):
    """``products`` (levels k = 1.. of shapes (db,)*k + (eb,)) as float64 arrays, with (db, eb)."""
    if not isinstance(products, (list, tuple)):
        raise TypeError(f"`products` of {func} must be the list returned by star_products; got "
                        f"{type(products).__name__}.")
    if len(products) < min_levels:
        raise ValueError(f"`products` of {func} must hold at least {min_levels} level(s); got {len(products)}.")
    if len(products) > _MAX_FACTORIAL_LEVEL:
        raise ValueError(f"`products` of {func} must hold at most {_MAX_FACTORIAL_LEVEL} levels (k! leaves float64 "
                         f"beyond); got {len(products)}.")
    out = []
    for k, P in enumerate(products, start=1):
        arr = as_float_array(P, f"products[{k - 1}]", func=func)
        arr = arr.reshape(np.shape(P))
        if k == 1:
            if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 2:
                raise ValueError(f"`products[0]` of {func} must have shape (d + 1, e + d) with e, d >= 1; got "
                                 f"{arr.shape}.")
            db, eb = arr.shape
        if arr.shape != (db,) * k + (eb,):
            raise ValueError(f"`products[{k - 1}]` of {func} must have shape {(db,) * k + (eb,)}; got {arr.shape}.")
        out.append(arr)
    return out, db, eb


def taylor_expansion(sig, products, hbar0=None):
    r"""Step-N Taylor expansion :math:`\bar h_0 + \sum_{k=1}^N \frac1{k!}\sum_I S^I F^I(\bar h_0)`.

    Thesis (Marion), chapter 5, section 5.2.3 (before Prop. 5.9): the signature :math:`S` of the driving
    path against the star products :math:`F^I` of the field (5.5).

    Parameters
    ----------
    sig : list of array_like
        The factorial-normalized signature of the time-augmented path (levels 0..N, dimension d + 1), finite.
    products : list of array_like
        The output of :func:`star_products` at the same :math:`\bar h_0`, at least max(N, 1) levels of shapes
        (d + 1,)*k + (e + d,).
    hbar0 : array_like, shape (e + d,), optional
        :math:`\bar h_0`; default 0.

    Returns
    -------
    ndarray, shape (e + d,)
        The expansion, float64.

    Raises
    ------
    TypeError
        ``sig`` or ``products`` not a list or tuple, a level not a real array.
    ValueError
        Wrong shapes (dimensions of ``sig`` and ``products`` that differ), too few levels, NaN or inf.
    theory.NonFiniteError
        The expansion overflowed.
    """
    func = "theory.signature.taylor_expansion"
    flat, db, N = _flatten(sig, "sig", func)
    Ps, pdb, eb = _products(products, func, min_levels=max(N, 1))
    if N >= 1 and pdb != db:
        raise ValueError(f"`products` of {func} must act in the dimension of `sig`, d + 1 = {db}; got {pdb}.")
    h = _h0(hbar0, eb, func, "hbar0")
    levels = _unflatten(flat, db, N)
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(1, N + 1):
            h = h + np.tensordot(levels[k], Ps[k - 1], axes=k) / math.factorial(k)
    return check_finite_output(h, "the expansion", func=func, hint="Reduce `sig` or `products`.")


def rkhs_coefficients(psi, products, hbar0=None):
    r"""Coefficients :math:`\alpha_k^I = \frac1{k!}\psi(\mathrm{Proj}\,F^I(\bar h_0))` of Thm 5.11 (Marion, ch. 5).

    Proj keeps the first e coordinates of :math:`\bar h = (h, x)`; level 0 is :math:`\psi(\mathrm{Proj}\,\bar h_0)`.

    Parameters
    ----------
    psi : array_like, shape (e,) or (p, e)
        The linear read-out (one output or p), finite.
    products : list of array_like
        The output of :func:`star_products` (levels k = 1..N of shapes (d + 1,)*k + (e + d,)), the e of
        ``psi``.
    hbar0 : array_like, shape (e + d,), optional
        :math:`\bar h_0`; default 0.

    Returns
    -------
    list of ndarray
        Levels 0..N of shapes ``(p,) + (d+1,)*k`` (the leading p dropped for a vector ``psi``), float64.

    Raises
    ------
    TypeError
        ``products`` not a list or tuple, an array argument not real.
    ValueError
        Wrong shapes (``psi`` not acting on the e hidden coordinates of ``products``), NaN or inf.
    theory.NonFiniteError
        A coefficient overflowed.
    """
    func = "theory.signature.rkhs_coefficients"
    psi = as_float_array(psi, "psi", func=func, ndim=(1, 2))
    vec = psi.ndim == 1
    psi2 = psi[None, :] if vec else psi
    e = psi2.shape[1]
    if psi2.shape[0] < 1 or e < 1:
        raise ValueError(f"`psi` of {func} must have shape (e,) or (p, e) with p, e >= 1; got {psi.shape}.")
    Ps, db, eb = _products(products, func)
    if eb <= e or db != eb - e + 1:
        raise ValueError(f"`psi` of {func} must act on the e hidden coordinates of `products` (levels of shape "
                         f"(d + 1, e + d) = {(db, eb)}, so e = {eb - db + 1}); got e = {e}.")
    h = _h0(hbar0, eb, func, "hbar0")
    with np.errstate(over="ignore", invalid="ignore"):
        out = [psi2 @ h[:e]]
        for k, P in enumerate(Ps, start=1):
            out.append(np.moveaxis(P[..., :e] @ psi2.T, -1, 0) / math.factorial(k))
    for o in out:
        check_finite_output(o, "the coefficients", func=func, hint="Reduce `psi` or `products`.")
    return [o[0] if vec else o for o in out]


def rkhs_norm(alpha):
    r""":math:`\|\xi_\alpha\|_{\mathscr H} = \|\alpha\|_{\mathscr T}` (5.7) of truncated coefficients (Marion, ch. 5).

    The square root of the sum of the squares of every entry of every level.

    Parameters
    ----------
    alpha : list of array_like
        Levels as returned by :func:`rkhs_coefficients` for one output, finite.

    Returns
    -------
    float
        The norm.

    Raises
    ------
    TypeError
        ``alpha`` not a list or tuple, a level not a real array.
    ValueError
        An empty list, NaN or inf.
    theory.NonFiniteError
        The sum of squares overflowed.
    """
    func = "theory.signature.rkhs_norm"
    if not isinstance(alpha, (list, tuple)):
        raise TypeError(f"`alpha` of {func} must be a non-empty list of levels; got {type(alpha).__name__}.")
    if not alpha:
        raise ValueError(f"`alpha` of {func} must be a non-empty list of levels; got an empty {type(alpha).__name__}.")
    total = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for k, a in enumerate(alpha):
            a = as_float_array(a, f"alpha[{k}]", func=func)
            total += float(np.sum(a * a))
    return _check_float(math.sqrt(total), "the norm", func, "Reduce the entries of `alpha`.")
