r"""Signatures, the signature kernel and the signature (Taylor) expansion of a residual RNN.

Thesis (Marion), chapter 5 ("Framing RNN as a kernel method: a neural ODE approach").

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

import math

import numpy as np

from theory._errors import NonFiniteError
from theory._validation import as_float_array, check_choice, check_finite_output, check_int, check_interval

from . import _kernels as K

__all__ = [
    "signature", "to_standard", "to_factorial", "chen", "kernel", "signature_inner", "signature_norm",
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


def _path(path, name, func, *, min_points=2):
    arr = as_float_array(path, name, func=func, ndim=2)
    if arr.shape[0] < min_points:
        raise ValueError(f"`{name}` of {func} must have at least {min_points} points (rows); got shape {arr.shape}.")
    if arr.shape[1] < 1:
        raise ValueError(f"`{name}` of {func} must have at least one coordinate (column); got shape {arr.shape}.")
    return arr


def _depth(depth, d, func):
    depth = check_int(depth, "depth", func=func, minimum=0)
    size = sum(d ** k for k in range(depth + 1))
    if size > _MAX_ENTRIES:
        raise ValueError(f"`depth` of {func}: a depth-{depth} signature in dimension {d} has {size} entries, "
                         f"more than the {_MAX_ENTRIES} allowed; lower `depth`.")
    return depth


def _unflatten(flat, d, depth):
    out, pos = [], 0
    for k in range(depth + 1):
        n = d ** k
        out.append(flat[pos:pos + n].reshape((d,) * k).copy())
        pos += n
    return out


def _flatten(sig, name, func):
    if not isinstance(sig, (list, tuple)) or len(sig) < 1:
        raise TypeError(f"`{name}` of {func} must be a list of levels (arrays of shapes (), (d,), (d, d), ...); "
                        f"got {type(sig).__name__}.")
    levels = []
    for k, lv in enumerate(sig):
        shape = np.shape(lv)
        levels.append(as_float_array(lv, f"{name}[{k}]", func=func).reshape(shape))
    if levels[0].shape != ():
        raise ValueError(f"`{name}[0]` of {func} must be a scalar (level 0); got shape {levels[0].shape}.")
    d = levels[1].shape[0] if len(levels) > 1 else 1
    for k, lv in enumerate(levels):
        if lv.shape != (d,) * k:
            raise ValueError(f"`{name}[{k}]` of {func} must have shape {(d,) * k}; got {lv.shape}.")
    return np.concatenate([lv.ravel() for lv in levels]), d, len(levels) - 1


def _scale_levels(sig, name, func, power):
    flat, d, depth = _flatten(sig, name, func)
    levels = _unflatten(flat, d, depth)
    return [lv * float(math.factorial(k)) ** power for k, lv in enumerate(levels)]


def signature(path, depth, normalization="factorial"):
    r"""Truncated signature of a piecewise-linear path, levels 0..``depth``.

    Computed segment by segment with Chen's relation (Prop. 5.21 of the thesis (Marion), chapter 5):
    a segment of increment :math:`\Delta` has standard level k :math:`\Delta^{\otimes k}/k!`; the
    running signature is multiplied by it with a Horner scheme in O(d^depth) per segment.

    Parameters
    ----------
    path : array_like, shape (n_points, d)
        At least 2 finite points.
    depth : int
        Truncation level N >= 0.
    normalization : {"factorial", "standard"}
        "factorial": the chapter's Definition 5.4 (level k carries k!); "standard": iisignature's.

    Returns
    -------
    list of ndarray
        ``depth + 1`` arrays of shapes ``()``, ``(d,)``, ``(d, d)``, ...; level 0 is 1.

    Examples
    --------
    >>> s = signature([[0.0, 0.0], [0.3, 0.4]], 3)
    >>> bool(np.allclose(s[2], np.outer([0.3, 0.4], [0.3, 0.4])))   # Example 5.5: b (x) b
    True
    """
    func = "theory.signature.signature"
    arr = _path(path, "path", func)
    depth = _depth(depth, arr.shape[1], func)
    check_choice(normalization, "normalization", _NORMS, func=func)
    flat = K.signature_flat(arr, depth)  # levels stored with reversed index order
    d = arr.shape[1]
    levels, pos = [], 0
    for k in range(depth + 1):
        n = d ** k
        levels.append(flat[pos:pos + n].reshape((d,) * k).transpose(tuple(range(k - 1, -1, -1))).copy())
        pos += n
    if normalization == "factorial":
        levels = [lv * float(math.factorial(k)) for k, lv in enumerate(levels)]
    for lv in levels:
        check_finite_output(lv, "the signature", func=func, hint="The path's increments are too large for this depth.")
    return levels


def to_standard(sig):
    """Convert a factorial-normalized truncated signature (Definition 5.4) to the standard one: level k / k!."""
    return _scale_levels(sig, "sig", "theory.signature.to_standard", -1)


def to_factorial(sig):
    """Convert a standard truncated signature (iisignature's) to the chapter's normalization: level k * k!."""
    return _scale_levels(sig, "sig", "theory.signature.to_factorial", 1)


def chen(sig_a, sig_b, normalization="factorial"):
    r"""Product of two truncated signatures (Chen's relation, Prop. 5.21): the signature of the concatenation.

    Factorial normalization: :math:`C^k = \sum_j \binom kj A^j\otimes B^{k-j}`; standard: without the binomials.
    """
    func = "theory.signature.chen"
    check_choice(normalization, "normalization", _NORMS, func=func)
    a, d, depth = _flatten(sig_a, "sig_a", func)
    b, d2, depth2 = _flatten(sig_b, "sig_b", func)
    if (d, depth) != (d2, depth2):
        raise ValueError(f"`sig_b` of {func} must have the dimension and depth of `sig_a` ({d}, {depth}); "
                         f"got ({d2}, {depth2}).")
    return _unflatten(K.chen_flat(a, b, d, depth, normalization == "factorial"), d, depth)


def signature_inner(sig_a, sig_b):
    r""":math:`\langle a, b\rangle_{\mathscr T} = \sum_k \langle a_k, b_k\rangle` (entrywise), as in (5.6)."""
    func = "theory.signature.signature_inner"
    a, d, depth = _flatten(sig_a, "sig_a", func)
    b, d2, depth2 = _flatten(sig_b, "sig_b", func)
    if (d, depth) != (d2, depth2):
        raise ValueError(f"`sig_b` of {func} must have the dimension and depth of `sig_a` ({d}, {depth}); "
                         f"got ({d2}, {depth2}).")
    return float(a @ b)


def signature_norm(sig):
    r""":math:`\|a\|_{\mathscr T}`, the norm of (5.6)."""
    a, _, _ = _flatten(sig, "sig", "theory.signature.signature_norm")
    return float(np.sqrt(a @ a))


def kernel(path_x, path_y, depth):
    r"""Truncated signature kernel :math:`\sum_{k\le N}\langle \mathbb X^k, \mathbb Y^k\rangle` (factorial normalization).

    The kernel K of section 5.2.2 of the thesis (Marion), chapter 5, of the paths as given (apply
    :func:`time_augment` first for the chapter's :math:`K(X, Y) = \langle S(\bar X), S(\bar Y)\rangle`).
    """
    func = "theory.signature.kernel"
    x = _path(path_x, "path_x", func)
    y = _path(path_y, "path_y", func)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"`path_y` of {func} must have the dimension of `path_x` ({x.shape[1]}); got {y.shape[1]}.")
    depth = _depth(depth, x.shape[1], func)
    sx = K.signature_flat(x, depth)
    sy = K.signature_flat(y, depth)
    off = K.offsets(x.shape[1], depth)
    total = 0.0
    for k in range(depth + 1):
        w = float(math.factorial(k)) ** 2
        total += w * float(sx[off[k]:off[k + 1]] @ sy[off[k]:off[k + 1]])
    if not math.isfinite(total):
        raise NonFiniteError(f"{func}: the kernel overflowed to NaN or inf; the paths' increments are too large.")
    return total


def linear_kernel(a, b):
    r"""Closed form of the (untruncated) signature kernel of two straight segments with increments a, b.

    :math:`\sum_{k\ge0}\langle a,b\rangle^k = 1/(1-\langle a,b\rangle)`, valid in the factorial
    normalization when :math:`|\langle a,b\rangle| < 1` (Example 5.5 of the thesis (Marion), chapter 5).
    """
    func = "theory.signature.linear_kernel"
    a = as_float_array(a, "a", func=func, ndim=1, min_size=1)
    b = as_float_array(b, "b", func=func, shape=a.shape)
    ip = float(a @ b)
    if not abs(ip) < 1.0:
        raise ValueError(f"`a`, `b` of {func}: the series converges only for |<a, b>| < 1; got <a, b> = {ip}.")
    return 1.0 / (1.0 - ip)


def total_variation(path):
    """Total variation of the piecewise-linear path: sum of the Euclidean lengths of its segments."""
    arr = _path(path, "path", "theory.signature.total_variation")
    return float(np.linalg.norm(np.diff(arr, axis=0), axis=1).sum())


def time_augment(path, L, times=None, *, check=True):
    r"""Time-augmented path :math:`\bar X_t = (X_t, \frac{1-L}{2} t)` of Prop. 5.2 (thesis (Marion), chapter 5).

    Parameters
    ----------
    path : array_like, shape (n_points, d)
        Values of X at ``times``.
    L : float
        The total-variation bound, in (0, 1).
    times : array_like, optional
        Increasing times in [0, 1], first 0 and last 1; default ``linspace(0, 1, n_points)``.
    check : bool
        When True, raise if X_0 != 0 or the total variation exceeds L (the chapter's input set):
        its bounds (Prop. 5.6, Prop. 5.9, Thm 5.11-5.14) do not apply to such a path.
    """
    func = "theory.signature.time_augment"
    arr = _path(path, "path", func)
    L = check_interval(L, "L", 0.0, 1.0, func=func)
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
        tv = total_variation(arr)
        if tv > L * (1.0 + 1e-12):  # round-off of a path rescaled to total variation exactly L
            raise ValueError(f"`path` of {func} has total variation {tv:.6g} > L = {L}: the chapter's bounds do not "
                             f"apply; rescale the path or pass check=False.")
    return np.column_stack([arr, 0.5 * (1.0 - L) * t])


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


def rnn(xs, U, V, b, activation="tanh", h0=None):
    r"""Residual RNN (5.1): :math:`h_{j+1} = h_j + \frac1T\sigma(U h_j + V x_{j+1} + b)`, j = 0..T-1.

    Thesis (Marion), chapter 5, equations (5.1)-(5.2). ``xs`` has shape (T, d) and holds
    :math:`x_1, \dots, x_T` (the right end point of each step); returns :math:`h_0..h_T`, shape (T+1, e).
    """
    func = "theory.signature.rnn"
    U, V, b = _rnn_params(U, V, b, func)
    xs = as_float_array(xs, "xs", func=func, ndim=2)
    if xs.shape[0] < 1 or xs.shape[1] != V.shape[1]:
        raise ValueError(f"`xs` of {func} must have shape (T, {V.shape[1]}) with T >= 1; got {xs.shape}.")
    check_choice(activation, "activation", ACTIVATIONS, func=func)
    hs = K.rnn_forward(xs, U, V, b, _KIND[activation], _h0(h0, U.shape[0], func))
    check_finite_output(hs, "the hidden states", func=func)
    return hs


def ode_solution(path, U, V, b, activation="tanh", h0=None, substeps=8):
    r"""Solution of the ODE (5.3) :math:`dH_t = \sigma(U H_t + V X_t + b) dt` at the path's knots.

    X is piecewise linear through ``path`` at times ``j / (n_points - 1)``; classical RK4 with
    ``substeps`` steps per segment (error O((n_points * substeps)^-4)). Returns shape (n_points, e).
    """
    func = "theory.signature.ode_solution"
    U, V, b = _rnn_params(U, V, b, func)
    arr = _path(path, "path", func)
    if arr.shape[1] != V.shape[1]:
        raise ValueError(f"`path` of {func} must have {V.shape[1]} columns (V's); got {arr.shape[1]}.")
    check_choice(activation, "activation", ACTIVATIONS, func=func)
    substeps = check_int(substeps, "substeps", func=func, minimum=1)
    hs = K.ode_rk4(arr, U, V, b, _KIND[activation], _h0(h0, U.shape[0], func), substeps)
    check_finite_output(hs, "the ODE solution", func=func)
    return hs


def cde_solution(path_bar, U, V, b, L, activation="tanh", hbar0=None, substeps=8):
    r"""Solution of the CDE (5.4) :math:`d\bar H_t = \mathbf F(\bar H_t) d\bar X_t` with the field (5.5).

    :math:`\mathbf F(\bar h) = \begin{pmatrix} 0 & \frac2{1-L}\sigma(W\bar h + b)\\ I_d & 0\end{pmatrix}`,
    W = (U V) (Prop. 5.2 and Example 5.3 of the thesis (Marion), chapter 5). ``path_bar`` has shape
    (n_points, d + 1), last column the (rescaled) time; RK4 with ``substeps`` steps per segment.
    Returns shape (n_points, e + d). Default :math:`\bar H_0 = (h_0, X_0) = 0`.
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
    out = K.cde_rk4(arr, np.hstack([U, V]), b, _KIND[activation], 2.0 / (1.0 - L), hb0, substeps)
    check_finite_output(out, "the CDE solution", func=func)
    return out


# ------------------------------------------------------------------------ activation derivatives

def activation_derivatives(activation, n):
    r"""Polynomials :math:`p_0..p_n` with :math:`\sigma^{(k)}(x) = p_k(\sigma(x))` (numpy coefficient arrays, low first).

    Logistic: :math:`\sigma' = \sigma(1-\sigma)`, so :math:`p_{k+1}(s) = p_k'(s)\,s(1-s)`; tanh:
    :math:`p_{k+1}(t) = p_k'(t)(1-t^2)`; identity: :math:`p_0 = s`, :math:`p_1 = 1`, then 0.
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
    r""":math:`\sup_x|\sigma^{(n)}(x)|`, exactly up to root-finding round-off.

    :math:`\sigma^{(n)} = p_n(\sigma)` and :math:`\sigma(\mathbb R)` is (0, 1) (logistic) or (-1, 1)
    (tanh): the sup is the max of :math:`|p_n|` over the critical points and end points of that interval.
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
    r"""The printed bounds: logistic :math:`2^{n-1} n!` (Lemma 5.19), tanh :math:`4^n n!` (Lemma 5.20)."""
    func = "theory.signature.derivative_bound"
    check_choice(activation, "activation", ("tanh", "logistic"), func=func)
    n = check_int(n, "n", func=func, minimum=0, maximum=170)
    if activation == "logistic":
        return 2.0 ** (n - 1) * math.factorial(n)
    return 4.0 ** n * math.factorial(n)


def lambda_bound(N, a, W_frobenius, L, corrected=True):
    r"""Bound on :math:`\Lambda_N(\mathbf F_{RNN})` of Prop. 5.10 (thesis (Marion), chapter 5).

    Printed: :math:`\sqrt2 a (8a^2\|W\|_F/(1-L))^{N-1} N!`. ``corrected=True`` multiplies it by
    :math:`2/(1-L)`: the field (5.5) carries the factor :math:`2/(1-L)` once in every factor of the
    product rule of Lemma 5.23, while Lemma 5.24 counts it k times in a k-th derivative (none at k = 0).
    """
    func = "theory.signature.lambda_bound"
    N = check_int(N, "N", func=func, minimum=1)
    a = check_interval(a, "a", 0.0, math.inf, func=func)
    w = check_interval(W_frobenius, "W_frobenius", 0.0, math.inf, func=func, closed="left")
    L = check_interval(L, "L", 0.0, 1.0, func=func)
    val = math.sqrt(2.0) * a * (8.0 * a * a * w / (1.0 - L)) ** (N - 1) * math.factorial(N)
    return val * 2.0 / (1.0 - L) if corrected else val


# ------------------------------------------------------------------- star products and expansion

def _jet_tables(e, D):
    from itertools import product

    expo = [m for m in product(range(D + 1), repeat=e) if sum(m) <= D]
    expo.sort(key=lambda m: (sum(m), m))
    index = {m: i for i, m in enumerate(expo)}
    n = len(expo)
    mul = -np.ones((n, n), dtype=np.int64)
    for p, a in enumerate(expo):
        for q, c in enumerate(expo):
            s = tuple(x + y for x, y in zip(a, c))
            if sum(s) <= D:
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


def star_products(U, V, b, L, depth, activation="tanh", hbar0=None):
    r"""Iterated differential products :math:`F^{i_1}\star\cdots\star F^{i_k}(\bar h_0)` of the field (5.5), k = 1..depth.

    Definition 5.7 of the thesis (Marion), chapter 5: :math:`(F\star G)(h) = J(G)(h)F(h)`, nested from
    the right, so :math:`F^{i_1}\star\cdots\star F^{i_k} = (F^{i_1}\cdot\nabla)\cdots(F^{i_{k-1}}\cdot\nabla)F^{i_k}`
    (index :math:`i_1` belongs to the earliest time). The columns are :math:`F^i = e_{e+i}` (i <= d,
    constant) and :math:`F^{d+1}(\bar h) = (\frac2{1-L}\sigma(W\bar h + b), 0)`. Every product is a
    function of :math:`z = W\bar h + b`; they are computed exactly (to round-off) with truncated
    multivariate Taylor polynomials in z of degree depth - 1, built from the activation's derivatives.

    Returns
    -------
    list of ndarray
        Entry k-1 has shape ``(d+1,)*k + (e+d,)``: index (i_1..i_k) (0-based) then the vector.
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
    W = np.hstack([U, V])
    z0 = W @ hb0 + b
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


def taylor_expansion(sig, products, hbar0=None):
    r"""Step-N Taylor expansion :math:`\bar h_0 + \sum_{k=1}^N \frac1{k!}\sum_I S^I F^I(\bar h_0)`.

    Thesis (Marion), chapter 5, section 5.2.3 (before Prop. 5.9). ``sig`` is the factorial-normalized
    signature of the driving path (levels 0..N, dimension d+1) and ``products`` the output of
    :func:`star_products` at the same :math:`\bar h_0` (at least N levels).
    """
    func = "theory.signature.taylor_expansion"
    flat, db, N = _flatten(sig, "sig", func)
    if not isinstance(products, (list, tuple)) or len(products) < N:
        raise ValueError(f"`products` of {func} must hold at least {N} levels; got "
                         f"{len(products) if isinstance(products, (list, tuple)) else type(products).__name__}.")
    eb = np.asarray(products[0]).shape[-1]
    h = _h0(hbar0, eb, func, "hbar0")
    levels = _unflatten(flat, db, N)
    for k in range(1, N + 1):
        P = np.asarray(products[k - 1], dtype=float)
        if P.shape != (db,) * k + (eb,):
            raise ValueError(f"`products[{k - 1}]` of {func} must have shape {(db,) * k + (eb,)}; got {P.shape}.")
        h = h + np.tensordot(levels[k], P, axes=k) / math.factorial(k)
    return h


def rkhs_coefficients(psi, products, hbar0=None):
    r"""Coefficients :math:`\alpha_k^I = \frac1{k!}\psi(\mathrm{Proj}\,F^I(\bar h_0))` of Thm 5.11 (thesis (Marion), ch. 5).

    ``psi``: shape (e,) (one output) or (p, e). Returns levels 0..N as arrays of shapes
    ``(p,) + (d+1,)*k`` (the leading p dropped for a vector ``psi``); level 0 is :math:`\psi(\mathrm{Proj}\,\bar h_0)`.
    """
    func = "theory.signature.rkhs_coefficients"
    psi = as_float_array(psi, "psi", func=func, ndim=(1, 2))
    vec = psi.ndim == 1
    psi2 = psi[None, :] if vec else psi
    e = psi2.shape[1]
    if not isinstance(products, (list, tuple)) or not products:
        raise ValueError(f"`products` of {func} must be the non-empty list returned by star_products.")
    eb = np.asarray(products[0]).shape[-1]
    if eb <= e:
        raise ValueError(f"`psi` of {func} must act on the first e < e + d = {eb} coordinates; got e = {e}.")
    h = _h0(hbar0, eb, func, "hbar0")
    out = [psi2 @ h[:e]]
    for k, P in enumerate(products, start=1):
        P = np.asarray(P, dtype=float)
        out.append(np.moveaxis(P[..., :e] @ psi2.T, -1, 0) / math.factorial(k))
    return [o[0] if vec else o for o in out]


def rkhs_norm(alpha):
    r""":math:`\|\xi_\alpha\|_{\mathscr H} = \|\alpha\|_{\mathscr T}` (5.7) of truncated coefficients (levels as returned
    by :func:`rkhs_coefficients` for one output)."""
    func = "theory.signature.rkhs_norm"
    if not isinstance(alpha, (list, tuple)) or not alpha:
        raise TypeError(f"`alpha` of {func} must be a non-empty list of levels.")
    total = 0.0
    for k, a in enumerate(alpha):
        a = as_float_array(a, f"alpha[{k}]", func=func)
        total += float(np.sum(a * a))
    return math.sqrt(total)
