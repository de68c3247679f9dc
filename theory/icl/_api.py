r"""Public API of :mod:`theory.icl` (paper key ``icl-ar``: M. E. Sander's thesis, chapter 6): validation at the
door, then the private computations of :mod:`theory.icl._processes`, ``_attention``, ``_torus``, ``_loss`` and
``_training``.

Every function here checks each argument (kind, shape, finiteness, range) and raises :class:`TypeError` or
:class:`ValueError` naming it; arrays are computed in float64 (complex128 where complex input is documented);
a result that overflows raises :class:`theory.NonFiniteError`; a call whose cost is not fixed by the size of
its input (the monomial structures grow like :math:`d^3T`, flows with the number of steps) estimates its work
and memory up front and refuses a larger one (``max_work``, :data:`theory._validation.MAX_WORK`). The exact
functions (:func:`expected_loss_exact`, :func:`augmented_loss_exact`, :func:`expected_abs2`,
:func:`torus_moment`) turn every input (NumPy integer, bool and float scalars and arrays of any dtype included)
into Python ints and :class:`fractions.Fraction` before any arithmetic, so that no fixed-width integer can
overflow.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from .._validation import (
    as_float_array,
    as_generator,
    check_bool,
    check_choice,
    check_finite_output,
    check_int,
    check_interval,
    check_memory,
    check_size,
    check_work,
    plain,
)
from . import _attention, _loss, _processes, _torus, _training
from ._loss import CONTEXTS
from ._processes import S0_CONVENTIONS
from ._training import FlowResult

__all__ = [
    "CONTEXTS", "S0_CONVENTIONS", "FlowResult",
    "unitary_contexts", "orthogonal_contexts", "haar_orthogonal", "ar_sequence", "augmented_tokens", "rotation_blocks",
    "augmented_forward", "attention_forward", "diagonal_forward", "block_parameters", "gd_construction",
    "gd_step_prediction",
    "torus_moment", "expected_abs2", "group_monomials",
    "expected_loss", "expected_loss_exact", "quadratic_loss", "printed_quadratic_loss", "quadratic_loss_gradient",
    "population_loss", "augmented_loss", "augmented_loss_exact", "augmented_ray_loss", "eta_star",
    "eta_star_printed", "augmented_min_loss", "pe_moment", "pe_hessian", "pe_hessian_printed", "pe_loss",
    "gradient_flow", "scalar_flow",
]

# Cost model of the interpreted loops, measured on one core and counted at 1e9 operations per second (the
# unit of theory._validation.MAX_WORK): building the merged monomials of the model (6.6) costs about 1.5 us
# per term (i, t, j) plus up to 80 ns per term and variable (the multi-key sort; 1.3 s in all at
# d = T = 60); of the augmented model about 3 us per term (i, t, k, l, j); one rational
# multiply-add about 30 us (Fractions of floats carry 53-bit denominators);
# the moment counts along the ray about 100 us per context length plus 0.4 us per exponent entry; one RK4
# step of Prop. 6.9 about 45 us; one token of ar_sequence about 3 us; one evaluation of the loss (6.3) in the
# compiled flow about 5 us plus 3 us per context length (allocations) plus 10 operations per merged term.
_TERM = 1500.0
_TERM_VAR = 80.0
_AUG_TERM = 3000.0
_RATIONAL = 3.0e4
_RAY_CALL = 1.0e5
_RAY_ENTRY = 400.0
_RK4_STEP = 4.5e4
_TOKEN = 3000.0
_EVAL = 5000.0
_EVAL_T = 3000.0


# ------------------------------------------------------------------------------------------ validation

def _f(n):
    """``n`` (a Python int) as a float for cost estimates; inf beyond the float range."""
    try:
        return float(n)
    except OverflowError:
        return math.inf


def _numeric(x, name, func, *, ndim=None, shape=None, min_size=None):
    """``x`` as a finite float64 array, or complex128 when it is complex (documented as accepted)."""
    try:
        arr = np.asarray(x)
    except Exception:  # ragged lists: as_float_array words the error
        arr = None
    if arr is not None and arr.dtype.kind == "c":
        as_float_array(arr.real, name, func=func, ndim=ndim, shape=shape, min_size=min_size)
        as_float_array(arr.imag, name, func=func)
        return np.ascontiguousarray(arr, np.complex128)
    if arr is not None and (arr.dtype == object or arr.dtype.kind not in "biuf"):
        raise TypeError(f"`{name}` of {func} must be a real or complex numeric array; got dtype {arr.dtype}.")
    return as_float_array(x, name, func=func, ndim=ndim, shape=shape, min_size=min_size)


def _check_context(context, func):
    return check_choice(context, "context", CONTEXTS, func=func)


def _check_s0(s0, func):
    return check_choice(s0, "s0", S0_CONVENTIONS, func=func)


def _check_real(v, name, func):
    return check_interval(v, name, -np.inf, np.inf, func=func)


def _check_mu(mu, func):
    return check_interval(mu, "mu", 1.0, np.inf, func=func, closed="left")


def _exact_number(v, name, func):
    """``v`` as a Python int or :class:`~fractions.Fraction`: bools and NumPy integers by ``int``, NumPy and
    Python floats exactly by ``as_integer_ratio``, Fractions and other rationals as they are."""
    if isinstance(v, (bool, np.bool_, numbers.Integral, np.integer)):
        return int(v)
    if isinstance(v, Fraction):
        return v
    if isinstance(v, numbers.Rational):
        return Fraction(int(v.numerator), int(v.denominator))
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            raise ValueError(f"`{name}` of {func} must be finite; got {plain(v)!r}.")
        return Fraction(*v.as_integer_ratio())
    raise TypeError(f"`{name}` of {func} must hold ints, Fractions or finite real floats; got "
                    f"{type(v).__name__} {plain(v)!r}.")


def _exact_array(x, name, func, ndim):
    """``x`` (a nested sequence or an array of any integer, bool or float dtype, or of Python numbers) as the
    flat list of its entries as Python ints and Fractions, and its shape (``ndim`` dimensions)."""
    if isinstance(x, np.ndarray):
        arr = x
        if arr.dtype != object and arr.dtype.kind not in "biuf":
            raise TypeError(f"`{name}` of {func} must hold ints, Fractions or finite real floats; got dtype "
                            f"{arr.dtype}.")
    else:
        try:
            arr = np.asarray(x, dtype=object)
        except Exception as exc:
            raise TypeError(f"`{name}` of {func} must be a {ndim}-d array of numbers; got "
                            f"{type(x).__name__} ({exc}).") from None
    flat = [_exact_number(v, name, func) for v in arr.flat]
    if arr.ndim != ndim:
        raise ValueError(f"`{name}` of {func} must have {ndim} dimension(s); got shape {arr.shape}.")
    return flat, arr.shape


def _int_array(x, name, func, *, ndim=None, exact=False):
    """``x`` as an integer ndarray (bools count as 0/1, made int64). With ``exact``, Python ints beyond the int64
    range are accepted too (an object array of Python ints)."""
    try:
        arr = np.asarray(x)
    except Exception as exc:
        raise TypeError(f"`{name}` of {func} must be an integer array; got {type(x).__name__} ({exc}).") from None
    if arr.dtype.kind == "b" or (arr.dtype.kind == "f" and arr.size == 0):
        arr = arr.astype(np.int64)
    elif arr.dtype == object and exact:
        for v in arr.flat:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Integral, np.integer)):
                raise TypeError(f"`{name}` of {func} must hold integers; got {type(v).__name__} {plain(v)!r}.")
        arr = np.vectorize(int, otypes=[object])(arr) if arr.size else arr
    elif arr.dtype.kind not in "iu":
        raise TypeError(f"`{name}` of {func} must be an integer array (int64 range); got dtype {arr.dtype}.")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"`{name}` of {func} must have {ndim} dimension(s); got shape {arr.shape}.")
    return arr


def _check_output(values, func, hint=""):
    """Raise :class:`theory.NonFiniteError` when a result (float or complex, scalar or array) is not finite."""
    for v in values:
        v = np.ascontiguousarray(v)
        if v.dtype.kind == "c":
            v = v.astype(np.complex128, copy=False).reshape(-1).view(np.float64)
        check_finite_output(v, "the result", func=func, hint=hint)


# ------------------------------------------------------------------------------------------ processes

def unitary_contexts(d, size=(), rng=None):
    r"""Draw the diagonals of unitary contexts :math:`\mathcal C_U` (thesis, §6.3, Assumption 6.2).

    :math:`\lambda=(\lambda_1,\dots,\lambda_d)` with :math:`\lambda_j=e^{2\pi iu_j}`, :math:`u_j` i.i.d.
    uniform on [0, 1): the commuting context :math:`W=\mathrm{diag}(\lambda)` of the AR process
    :math:`s_{t+1}=Ws_t`.

    Parameters
    ----------
    d : int
        Token dimension, >= 1.
    size : int or tuple of int, optional
        Leading shape (number of contexts); default one context.
    rng : None, int or numpy.random.Generator, optional
        Source of randomness (:func:`numpy.random.default_rng` convention).

    Returns
    -------
    ndarray of complex128, shape (\*size, d)
        Unit-modulus phases.

    Raises
    ------
    TypeError
        ``d`` not an int, ``size`` not an int or tuple of ints, ``rng`` of another kind.
    ValueError
        ``d`` < 1, a negative entry of ``size``, or more than 16 GiB of output.

    Examples
    --------
    >>> lam = unitary_contexts(3, size=2, rng=0)
    >>> lam.shape, bool(np.allclose(abs(lam), 1))
    ((2, 3), True)
    """
    func = "theory.icl.unitary_contexts"
    d = check_int(d, "d", func=func, minimum=1)
    size = check_size(size, func=func)
    m = math.prod(size)
    check_memory(40 * _f(max(m, 1)) * d, "d" if d >= m else "size", d if d >= m else size, func=func,
                 hint="Each phase takes 40 bytes while drawn.")
    rng = as_generator(rng, func=func)
    return _processes.unitary_contexts(d, size, rng)


def orthogonal_contexts(delta, size=(), rng=None):
    r"""Draw the diagonals of orthogonal contexts :math:`\mathcal C_O` (thesis, §6.3, Assumption 6.2).

    :math:`\lambda=(\lambda_1,\bar\lambda_1,\dots,\lambda_\delta,\bar\lambda_\delta)` with δ i.i.d. uniform
    phases, d = 2δ: the eigenvalues of a block-diagonal rotation (see :func:`rotation_blocks`).

    Parameters
    ----------
    delta : int
        Number of rotation blocks δ >= 1 (d = 2δ).
    size : int or tuple of int, optional
        Leading shape; default one context.
    rng : None, int or numpy.random.Generator, optional
        Source of randomness.

    Returns
    -------
    ndarray of complex128, shape (\*size, 2 delta)
        Conjugate pairs on the unit circle.

    Raises
    ------
    TypeError
        ``delta`` not an int, ``size`` not an int or tuple of ints, ``rng`` of another kind.
    ValueError
        ``delta`` < 1, a negative entry of ``size``, or more than 16 GiB of output.

    Examples
    --------
    >>> lam = orthogonal_contexts(2, rng=0)
    >>> bool(np.allclose(lam[1::2], lam[0::2].conj()))
    True
    """
    func = "theory.icl.orthogonal_contexts"
    delta = check_int(delta, "delta", func=func, minimum=1)
    size = check_size(size, func=func)
    m = math.prod(size)
    check_memory(72 * _f(max(m, 1)) * delta, "delta" if delta >= m else "size", delta if delta >= m else size,
                 func=func, hint="Each pair takes 72 bytes while drawn.")
    rng = as_generator(rng, func=func)
    return _processes.orthogonal_contexts(delta, size, rng)


def rotation_blocks(lam):
    r"""The real orthogonal matrix of an orthogonal context (thesis, §6.3): block-diagonal rotations.

    Block i is :math:`R_{\theta_i}=\begin{pmatrix}\cos\theta_i&-\sin\theta_i\\\sin\theta_i&\cos\theta_i\end{pmatrix}`
    with :math:`\lambda_{2i-1}=e^{i\theta_i}`; the matrix is similar to :math:`\mathrm{diag}(\lambda)`.

    Parameters
    ----------
    lam : array_like of complex, shape (2 delta,)
        :math:`(\lambda_1,\bar\lambda_1,\dots,\lambda_\delta,\bar\lambda_\delta)` on the unit circle (as drawn by
        :func:`orthogonal_contexts`; real input is accepted when it is of this form, e.g. ±1).

    Returns
    -------
    ndarray of float64, shape (2 delta, 2 delta)

    Raises
    ------
    TypeError
        ``lam`` not numeric.
    ValueError
        ``lam`` not 1-d of even positive length, not finite, not in conjugate pairs or off the unit circle
        (tolerance 1e-8), or a matrix above 16 GiB.

    Examples
    --------
    >>> rotation_blocks([1j, -1j])
    array([[ 0., -1.],
           [ 1.,  0.]])
    """
    func = "theory.icl.rotation_blocks"
    lam = _numeric(lam, "lam", func, ndim=1, min_size=2)
    if lam.size % 2:
        raise ValueError(f"`lam` of {func} must have even length 2δ; got {lam.size}.")
    if not np.allclose(lam[1::2], lam[0::2].conj()) or not np.allclose(np.abs(lam), 1):
        raise ValueError(f"`lam` of {func} must be (λ1, conj λ1, ..., λδ, conj λδ) on the unit circle.")
    check_memory(8 * _f(lam.size) ** 2, "lam", f"length {lam.size}", func=func)
    return _processes.rotation_blocks(lam)


def haar_orthogonal(d, size=(), rng=None, *, max_work=None):
    r"""Haar-distributed orthogonal matrices (a general context of §6.3 with real tokens).

    QR decomposition :math:`G=QR` of a matrix of i.i.d. standard normals, with the columns of Q multiplied by
    the signs of the diagonal of R (Mezzadri's fix), which makes Q Haar distributed on O(d).

    Parameters
    ----------
    d : int
        Dimension, >= 1.
    size : int or tuple of int, optional
        Leading shape; default one matrix.
    rng : None, int or numpy.random.Generator, optional
        Source of randomness.
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about 4 d^3 per matrix.

    Returns
    -------
    ndarray of float64, shape (\*size, d, d)
        Orthogonal matrices.

    Raises
    ------
    TypeError
        ``d`` not an int, ``size`` not an int or tuple of ints, ``rng`` of another kind.
    ValueError
        ``d`` < 1, a negative entry of ``size``, more than 16 GiB of memory or a cost above ``max_work``.

    Examples
    --------
    >>> Q = haar_orthogonal(3, rng=0)
    >>> bool(np.allclose(Q.T @ Q, np.eye(3)))
    True
    """
    func = "theory.icl.haar_orthogonal"
    d = check_int(d, "d", func=func, minimum=1)
    size = check_size(size, func=func)
    m = math.prod(size)
    name, value = ("d", d) if d * d >= m else ("size", size)
    check_memory(32 * _f(max(m, 1)) * _f(d) ** 2, name, value, func=func,
                 hint="Each entry takes 32 bytes during the QR.")
    check_work(_f(m) * (4 * _f(d) ** 3 + 1e3), name, value, func=func, max_work=max_work)
    rng = as_generator(rng, func=func)
    return _processes.haar_orthogonal(d, size, rng)


def _context_matrix(W, func, unitary_tol=1e-10):
    """A context: a unitary (d, d) matrix or a diagonal (d,) on the unit circle, float64 or complex128."""
    W = _numeric(W, "W", func, ndim=(1, 2), min_size=1)
    if W.ndim == 1:  # a diagonal context
        dev = float(np.max(np.abs(np.abs(W) - 1.0)))
        if dev > unitary_tol:
            raise ValueError(f"`W` of {func} (a diagonal) must lie on the unit circle (Assumption 6.2, §6.3); "
                             f"max ||λ_i| - 1| = {dev:.3g}.")
        return W
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"`W` of {func} must be a square (d, d) matrix or a diagonal of shape (d,); got {W.shape}.")
    with np.errstate(all="ignore"):  # huge entries give an infinite deviation, refused below
        dev = float(np.max(np.abs(W.conj().T @ W - np.eye(W.shape[0]))))
    if dev > unitary_tol:
        raise ValueError(f"`W` of {func} must be unitary (or orthogonal), W*W = I (§6.3); max |W*W - I| = {dev:.3g}.")
    return W


def ar_sequence(W, T, s1=None, *, max_work=None):
    r"""The tokens of the AR(1) process of §6.3: :math:`s_{t+1}=Ws_t`, :math:`t=1,\dots,T-1`.

    Under Assumption 6.2 with a diagonal context, :math:`s_t=\lambda^{t-1}\odot s_1` entrywise.

    Parameters
    ----------
    W : array_like, shape (d, d) or (d,)
        A unitary (or orthogonal) context matrix, real or complex, or the diagonal λ of a commuting one (on the
        unit circle); non-unitary input raises (the chapter's processes are norm preserving; tolerance 1e-10).
    T : int
        Context length, >= 1.
    s1 : array_like, shape (d,), optional
        Start token, real or complex; default :math:`\mathbf 1_d` (§6.3).
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about 3000 + 2 d^2 per token.

    Returns
    -------
    ndarray, shape (T, d)
        :math:`s_1,\dots,s_T`; complex128 when ``W`` is a diagonal or complex or ``s1`` is complex, else float64.

    Raises
    ------
    TypeError
        ``W`` or ``s1`` not numeric, ``T`` not an int.
    ValueError
        ``W`` not unitary, not finite or of the wrong shape; ``s1`` not finite or not of length d; ``T`` < 1;
        more than 16 GiB or a cost above ``max_work``.

    Examples
    --------
    >>> ar_sequence([1j, -1.0], 3)
    array([[ 1.+0.j,  1.+0.j],
           [ 0.+1.j, -1.+0.j],
           [-1.+0.j,  1.-0.j]])
    """
    func = "theory.icl.ar_sequence"
    W = _context_matrix(W, func)
    T = check_int(T, "T", func=func, minimum=1)
    d = W.shape[0]
    if s1 is not None:
        s1 = _numeric(s1, "s1", func, shape=(d,))
    check_memory(16 * _f(T) * d, "T", T, func=func, hint=f"The tokens have shape ({T}, {d}).")
    check_work(_f(T) * (_TOKEN + 2 * d * (d if W.ndim == 2 else 1)), "T", T, func=func, max_work=max_work)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _processes.ar_sequence(W, T, s1)
    _check_output([out], func, hint="Use a smaller `s1`.")
    return out


def augmented_tokens(s, s0="zero", W=None):
    r"""The augmented tokens :math:`e_t=(0,s_t,s_{t-1})\in\mathbb C^{3d}` of §6.4 (the input of Eq. (6.4)).

    Parameters
    ----------
    s : array_like, shape (T, d)
        The tokens :math:`s_1,\dots,s_T`, real or complex, T >= 1, d >= 1.
    s0 : {"zero", "inverse"}
        :math:`s_0=0`, or :math:`s_0=W^{-1}s_1=W^*s_1` (then ``W`` is required).
    W : array_like, shape (d, d) or (d,), optional
        The context (unitary matrix or diagonal on the unit circle), required for ``s0="inverse"``; when given
        it is validated also with ``s0="zero"``, and a complex ``W`` makes the tokens complex.

    Returns
    -------
    ndarray, shape (T, 3d)
        float64, or complex128 when ``s`` or ``W`` is complex.

    Raises
    ------
    TypeError
        ``s`` or ``W`` not numeric, ``s0`` not a string.
    ValueError
        ``s`` of the wrong shape or not finite, ``s0`` unknown, ``W`` missing for ``s0="inverse"``, not
        unitary or not of size d.

    Examples
    --------
    >>> augmented_tokens([[1.0], [2.0]])
    array([[0., 1., 0.],
           [0., 2., 1.]])
    """
    func = "theory.icl.augmented_tokens"
    s = _numeric(s, "s", func, ndim=2)
    if s.shape[0] < 1 or s.shape[1] < 1:
        raise ValueError(f"`s` of {func} must have shape (T, d) with T >= 1 and d >= 1; got {s.shape}.")
    s0 = _check_s0(s0, func)
    if W is None:
        if s0 == "inverse":
            raise ValueError(f"`W` of {func} is required with s0='inverse' (s_0 = W^-1 s_1).")
    else:
        W = _context_matrix(W, func)
        if W.shape[0] != s.shape[1]:
            raise ValueError(f"`W` of {func} must be of size d = {s.shape[1]} (from `s`); got {W.shape}.")
    complex_out = np.iscomplexobj(s) or (W is not None and np.iscomplexobj(W))
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _processes.augmented_tokens(s, s0, W, complex_out)
    _check_output([out], func, hint="Use smaller `s`.")
    return out


# ------------------------------------------------------------------------------------------ attention

def augmented_forward(A, B, e, *, max_work=None):
    r"""The augmented one-head linear attention layer, Eq. (6.4) of the thesis, read at the last token:

    .. math:: \mathcal T_\theta(e_{1:T})=\Big(e_T+\sum_{t=1}^T(e_t^*Ae_T)\,Be_t\Big)_{1:d},

    the first d coordinates of the output (the prediction of :math:`s_{T+1}`); Hermitian product linear in its
    first argument.

    Parameters
    ----------
    A, B : array_like, shape (3d, 3d)
        The layer's matrices :math:`A=W_K^\top W_Q`, :math:`B=W_OW_V`, real or complex.
    e : array_like, shape (T, 3d)
        Augmented tokens (:func:`augmented_tokens`), real or complex, T >= 1.
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about 8 T (3d)^2.

    Returns
    -------
    ndarray, shape (d,)
        float64, or complex128 when an input is complex.

    Raises
    ------
    TypeError
        An argument not numeric.
    ValueError
        Wrong shapes (``A``, ``B`` must match ``e``), non-finite entries, or a cost above ``max_work``.

    Examples
    --------
    >>> A, B = gd_construction(1, 0.5)
    >>> augmented_forward(A, B, augmented_tokens([[1.0], [2.0]]))  # 0.5 s_2 s_1 s_2
    array([2.])
    """
    func = "theory.icl.augmented_forward"
    e = _numeric(e, "e", func, ndim=2)
    T, D = e.shape
    if T < 1 or D % 3 or D == 0:
        raise ValueError(f"`e` of {func} must have shape (T, 3d) with T >= 1 and d >= 1; got {e.shape}.")
    A = _numeric(A, "A", func, shape=(D, D))
    B = _numeric(B, "B", func, shape=(D, D))
    check_work(8 * _f(T) * _f(D) ** 2, "e", f"shape {e.shape}", func=func, max_work=max_work)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _attention.augmented_forward(A, B, e)
    _check_output([out], func)
    return out


def _row(P, T, func):
    P = as_float_array(P, "P", func=func, ndim=(1, 2))
    if P.ndim == 1:
        if P.shape[0] != T:
            raise ValueError(f"`P` of {func}, given as a row, must have length T = {T}; got {P.shape[0]}.")
        return P
    if P.shape[0] != P.shape[1] or P.shape[0] < T:
        raise ValueError(f"`P` of {func} must be a square (Tmax, Tmax) matrix with Tmax >= T = {T}; got {P.shape}.")
    return P[T - 2, :T]


def attention_forward(A, B, P, s, *, max_work=None):
    r"""The multi-head linear attention layer with positional encoding, Eq. (6.6) of the thesis, read at
    position T-1:

    .. math:: \mathcal T_\theta(e_{1:T})=\sum_{h=1}^H\sum_{t=1}^TP_{T-1,t}\,\big((A^hs_{T-1})^*s_t\big)\,B^hs_t .

    Parameters
    ----------
    A, B : array_like, shape (H, d, d)
        The heads' :math:`A^h=W_K^{h\top}W_Q^h` and :math:`B^h=W_O^hW_V^h`, real or complex, H >= 1.
    P : array_like, shape (Tmax, Tmax) or (T,)
        Real positional encoding (row T-1, 1-based, is used; Tmax >= T) or that row itself.
    s : array_like, shape (T, d)
        The tokens, real or complex, T >= 2 (the output is read at position T-1), d >= 1.
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about 8 H T d^2.

    Returns
    -------
    ndarray, shape (d,)
        float64, or complex128 when an input is complex.

    Raises
    ------
    TypeError
        An argument not numeric (``P`` complex included).
    ValueError
        Wrong shapes, non-finite entries, more than 16 GiB or a cost above ``max_work``.

    Examples
    --------
    >>> attention_forward(np.ones((1, 1, 1)), np.ones((1, 1, 1)), [0.0, 1.0], [[1.0], [2.0]])
    array([4.])
    """
    func = "theory.icl.attention_forward"
    s = _numeric(s, "s", func, ndim=2)
    T, d = s.shape
    if T < 2 or d < 1:
        raise ValueError(f"`s` of {func} must hold T >= 2 tokens of dimension d >= 1 (the output is read at "
                         f"position T-1); got shape {s.shape}.")
    A = _numeric(A, "A", func, ndim=3)
    if A.shape[0] < 1 or A.shape[1:] != (d, d):
        raise ValueError(f"`A` of {func} must have shape (H, {d}, {d}) with H >= 1; got {A.shape}.")
    B = _numeric(B, "B", func, shape=A.shape)
    p = _row(P, T, func)
    H = A.shape[0]
    check_memory(16 * _f(H) * T * d, "s", f"shape {s.shape}", func=func)
    check_work(8 * _f(H) * T * d * d, "s", f"shape {s.shape}", func=func, max_work=max_work)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _attention.attention_forward(A, B, p, s)
    _check_output([out], func)
    return out


def diagonal_forward(Amat, Bmat, p, lam, *, max_work=None):
    r"""Lemma 6.6 of the thesis: the output of (6.6) under Assumptions 6.2 and 2 on :math:`s_t=\lambda^{t-1}`.

    With diagonal heads :math:`A^h=\mathrm{diag}(a_h)`, :math:`B^h=\mathrm{diag}(b_h)` and
    :math:`\mathbf C=\mathbf B^\top\mathbf A`, coordinate i is

    .. math:: \sum_{t=1}^Tp_t\sum_{j=1}^dC_{ij}\lambda_j^{t-T+1}\lambda_i^{t-1}.

    Parameters
    ----------
    Amat, Bmat : array_like, shape (H, d)
        Rows :math:`a_h`, :math:`b_h` (the diagonals of the heads), real, H >= 1, d >= 1.
    p : array_like, shape (T,)
        The row :math:`P_{T-1,1:T}`, real, T >= 2.
    lam : array_like, shape (d,)
        The context diagonal, on the unit circle (tolerance 1e-10).
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about 8 T d^2.

    Returns
    -------
    ndarray of complex128, shape (d,)

    Raises
    ------
    TypeError
        An argument not numeric (``Amat``, ``Bmat``, ``p`` complex included).
    ValueError
        Wrong shapes, non-finite entries, ``lam`` off the unit circle, more than 16 GiB or a cost above
        ``max_work``.

    Examples
    --------
    >>> diagonal_forward([[1.0]], [[1.0]], [0.0, 1.0], [1j])  # C = 1, p = e_T: predicts s_3 = λ^2
    array([-1.+0.j])
    """
    func = "theory.icl.diagonal_forward"
    Amat = as_float_array(Amat, "Amat", func=func, ndim=2)
    if Amat.shape[0] < 1 or Amat.shape[1] < 1:
        raise ValueError(f"`Amat` of {func} must have shape (H, d) with H, d >= 1; got {Amat.shape}.")
    Bmat = as_float_array(Bmat, "Bmat", func=func, shape=Amat.shape)
    p = as_float_array(p, "p", func=func, ndim=1)
    T = p.shape[0]
    if T < 2:
        raise ValueError(f"`p` of {func} must have length T >= 2; got {T}.")
    d = Amat.shape[1]
    lam = _numeric(lam, "lam", func, shape=(d,)).astype(complex)
    if np.max(np.abs(np.abs(lam) - 1)) > 1e-10:
        raise ValueError(f"`lam` of {func} must lie on the unit circle (Assumption 6.2).")
    check_memory(32 * _f(T) * d, "p", f"length {T}", func=func)
    check_work(8 * _f(T) * d * d + 2 * _f(Amat.shape[0]) * d * d, "p", f"length {T}", func=func,
               max_work=max_work)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _attention.diagonal_forward(Amat, Bmat, p, lam)
    _check_output([out], func)
    return out


def block_parameters(a, b, d):
    r"""The matrices A, B of Assumption 1 (§6.4 of the thesis) from :math:`a=(a_1,..,a_4)`, :math:`b=(b_1,b_2)`.

    In blocks of size d (block rows and columns 1..3 along the augmented token :math:`(0,s_t,s_{t-1})`):
    :math:`A_{22}=a_1I`, :math:`A_{23}=a_2I`, :math:`A_{32}=a_3I`, :math:`A_{33}=a_4I`, :math:`B_{12}=b_1I`,
    :math:`B_{13}=b_2I`, every other block 0.

    Parameters
    ----------
    a : array_like, shape (4,)
        Real, finite.
    b : array_like, shape (2,)
        Real, finite.
    d : int
        Token dimension, >= 1.

    Returns
    -------
    A, B : ndarray of float64, shape (3d, 3d)

    Raises
    ------
    TypeError
        ``a`` or ``b`` not real numeric, ``d`` not an int.
    ValueError
        Wrong shapes, non-finite entries, ``d`` < 1 or more than 16 GiB.

    Examples
    --------
    >>> A, B = block_parameters([0, 0, 1, 0], [1, 0], 1)
    >>> A
    array([[0., 0., 0.],
           [0., 0., 0.],
           [0., 1., 0.]])
    """
    func = "theory.icl.block_parameters"
    a = as_float_array(a, "a", func=func, shape=(4,))
    b = as_float_array(b, "b", func=func, shape=(2,))
    d = check_int(d, "d", func=func, minimum=1)
    check_memory(160 * _f(d) ** 2, "d", d, func=func, hint="A and B have shape (3d, 3d).")
    return _attention.block_parameters(a, b, d)


def gd_construction(d, eta):
    r"""Eq. (6.8) of the thesis: the parameters under which (6.4) is one gradient step (Prop. 6.4).

    A with only block (3, 2) equal to :math:`I_d`, B with only block (1, 2) equal to :math:`\eta I_d`, i.e.
    :func:`block_parameters` with :math:`a=(0,0,1,0)`, :math:`b=(\eta,0)`.

    Parameters
    ----------
    d : int
        Token dimension, >= 1.
    eta : float
        Step size of the inner gradient step, finite.

    Returns
    -------
    A, B : ndarray of float64, shape (3d, 3d)

    Raises
    ------
    TypeError
        ``d`` not an int, ``eta`` not a real number.
    ValueError
        ``d`` < 1, ``eta`` not finite, more than 16 GiB.

    Examples
    --------
    >>> A, B = gd_construction(1, 0.5)
    >>> B[0]
    array([0. , 0.5, 0. ])
    """
    func = "theory.icl.gd_construction"
    d = check_int(d, "d", func=func, minimum=1)
    eta = _check_real(eta, "eta", func)
    check_memory(160 * _f(d) ** 2, "d", d, func=func, hint="A and B have shape (3d, 3d).")
    return _attention.block_parameters(np.array([0.0, 0.0, 1.0, 0.0]), np.array([eta, 0.0]), d)


def gd_step_prediction(s, eta, *, max_work=None):
    r"""One gradient step on the inner loss (6.5) from :math:`W_0=0`, applied to the last token (Prop. 6.4):

    .. math:: (W_0-\eta\nabla_WL(W_0))s_T=\eta\sum_{t=1}^{T-1}s_{t+1}(s_t^*s_T),\qquad
              L(W)=\tfrac12\sum_{t=1}^{T-1}\|s_{t+1}-Ws_t\|^2 .

    Parameters
    ----------
    s : array_like, shape (T, d)
        The tokens, real or complex, T >= 1 (T = 1 gives 0), d >= 1; float32 and integer input are computed in
        float64.
    eta : float
        Step size, finite.
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about 8 T d^2.

    Returns
    -------
    ndarray, shape (d,)
        float64, or complex128 for complex ``s``.

    Raises
    ------
    TypeError
        ``s`` not numeric, ``eta`` not a real number.
    ValueError
        ``s`` of the wrong shape or not finite, ``eta`` not finite, more than 16 GiB or a cost above
        ``max_work``.

    Examples
    --------
    >>> gd_step_prediction([[1.0], [2.0]], 0.5)
    array([2.])
    """
    func = "theory.icl.gd_step_prediction"
    s = _numeric(s, "s", func, ndim=2)
    if s.shape[0] < 1 or s.shape[1] < 1:
        raise ValueError(f"`s` of {func} must have shape (T, d) with T >= 1 and d >= 1; got {s.shape}.")
    eta = _check_real(eta, "eta", func)
    T, d = s.shape
    check_memory(48 * _f(d) ** 2, "s", f"shape {s.shape}", func=func, hint="The gradient is a (d, d) matrix.")
    check_work(8 * _f(T) * d * d, "s", f"shape {s.shape}", func=func, max_work=max_work)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _attention.gd_step_prediction(s, eta)
    _check_output([out], func)
    return out


# ------------------------------------------------------------------------------------------ torus moments

def torus_moment(a, b):
    r"""Exact :math:`\mathbb E\big[\prod_kz_k^{a_k}\bar z_k^{b_k}\big]` for i.i.d. uniform unit-circle
    :math:`z_k`: 1 if ``a == b`` entrywise, else 0 (the fact behind every exact loss of chapter 6).

    Parameters
    ----------
    a, b : int or sequence of int
        Non-negative exponents of the variables and of their conjugates, of the same length: Python ints
        (any size), NumPy integer or bool scalars or arrays of any integer or bool dtype (bools count as 0/1).

    Returns
    -------
    int
        0 or 1.

    Raises
    ------
    TypeError
        An exponent not an integer.
    ValueError
        Negative exponents, more than one dimension, or lengths that differ.

    Examples
    --------
    >>> torus_moment([2, 1], [2, 1]), torus_moment(3, 1)
    (1, 0)
    """
    func = "theory.icl.torus_moment"
    out = []
    for name, v in (("a", a), ("b", b)):
        arr = np.atleast_1d(_int_array(v, name, func, exact=True))
        if arr.ndim != 1:
            raise ValueError(f"`{name}` of {func} must be an int or a 1-d sequence of ints; got shape {arr.shape}.")
        vals = [int(x) for x in arr.tolist()]
        if any(x < 0 for x in vals):
            raise ValueError(f"`{name}` of {func} must hold non-negative integers; got {vals}.")
        out.append(vals)
    if len(out[0]) != len(out[1]):
        raise ValueError(f"`a` and `b` of {func} must have the same length; got {len(out[0])} and {len(out[1])}.")
    return int(out[0] == out[1])


def group_monomials(exponents):
    r"""Merge equal monomials :math:`z^\alpha`: the group of each row of ``exponents``.

    Two rows get the same id exactly when they are equal; the ids are ranks in lexicographic order, so
    :math:`\mathbb E|\sum_kc_kz^{\alpha_k}|^2=\sum_g|\sum_{k:\,\mathrm{ids}_k=g}c_k|^2`
    (:func:`expected_abs2`).

    Parameters
    ----------
    exponents : array_like of int, shape (n_terms, m)
        Exponent vectors :math:`\alpha\in\mathbb Z^m` of the terms (any integer dtype; bools count as 0/1).

    Returns
    -------
    ids : ndarray of int64, shape (n_terms,)
        Group of each row, in 0..n_groups-1.
    n_groups : int
        Number of distinct rows.

    Raises
    ------
    TypeError
        ``exponents`` not an integer array (floats included).
    ValueError
        ``exponents`` not 2-d.

    Examples
    --------
    >>> ids, n = group_monomials([[1, 0], [0, 1], [1, 0]])
    >>> ids.tolist(), n
    ([1, 0, 1], 2)
    """
    func = "theory.icl.group_monomials"
    e = _int_array(exponents, "exponents", func, ndim=2)
    return _torus.group_monomials(e)


def expected_abs2(coefficients, exponents):
    r"""Exact :math:`\mathbb E|\sum_kc_kz^{\alpha_k}|^2` over i.i.d. uniform unit-circle :math:`z`.

    Since :math:`\mathbb E[z^a\bar z^b]=\delta_{ab}`, it is the sum over distinct monomials of the squared
    modulus of the merged coefficient: :math:`\sum_\alpha|\sum_{k:\,\alpha_k=\alpha}c_k|^2`.

    Parameters
    ----------
    coefficients : sequence of int, float or Fraction, length n_terms
        Either all exact (Python ints, :class:`fractions.Fraction`, bools, NumPy integer or bool scalars or
        arrays; then the result is exact) or any mix with real or complex floats (then float64 arithmetic).
    exponents : array_like of int, shape (n_terms, m)
        Exponent vectors of the terms (any integer dtype).

    Returns
    -------
    int, Fraction or float
        An int for integer (and bool) coefficients, a ``Fraction`` for exact rational ones, a float otherwise.

    Raises
    ------
    TypeError
        A coefficient not a number (strings, None), ``exponents`` not an integer array.
    ValueError
        ``coefficients`` not 1-d, non-finite or beyond the float64 range (float path), ``exponents`` not of
        shape (n_terms, m).
    theory.NonFiniteError
        The float sum overflowed.

    Examples
    --------
    >>> from fractions import Fraction
    >>> expected_abs2([Fraction(1, 2), Fraction(1, 3), -1], [[1, 0], [1, 0], [0, -1]])  # |5/6|^2 + 1
    Fraction(61, 36)
    """
    func = "theory.icl.expected_abs2"
    if isinstance(coefficients, np.ndarray):
        arr = coefficients
        if arr.dtype != object and arr.dtype.kind not in "biufc":
            raise TypeError(f"`coefficients` of {func} must hold numbers; got dtype {arr.dtype}.")
    else:
        try:
            arr = np.asarray(coefficients, dtype=object)
        except Exception as exc:
            raise TypeError(f"`coefficients` of {func} must be a sequence of numbers; got "
                            f"{type(coefficients).__name__} ({exc}).") from None
    coeffs = list(arr.flat)
    exact = True
    for c in coeffs:
        if isinstance(c, (bool, np.bool_, numbers.Rational, np.integer)):
            continue
        if isinstance(c, (numbers.Complex, np.number)) and not isinstance(c, (str, bytes)):
            exact = False
            continue
        raise TypeError(f"`coefficients` of {func} must hold numbers; got {type(c).__name__} {plain(c)!r}.")
    if arr.ndim != 1:
        raise ValueError(f"`coefficients` of {func} must be a 1-d sequence; got shape {arr.shape}.")
    e = _int_array(exponents, "exponents", func, ndim=2)
    if e.shape[0] != len(coeffs):
        raise ValueError(f"`exponents` of {func} must have shape (len(coefficients), m) = ({len(coeffs)}, m); "
                         f"got {e.shape}.")
    if exact:
        vals = [_exact_number(c, "coefficients", func) for c in coeffs]
        total = _torus.expected_abs2_exact(vals, e)
        return int(total) if all(isinstance(v, int) for v in vals) else total
    try:
        c = np.asarray(coeffs, dtype=complex)
    except OverflowError:
        raise ValueError(f"`coefficients` of {func} must lie in the float64 range when floats are mixed in; "
                         f"got an integer beyond it.") from None
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`coefficients` of {func} must be numbers ({exc}).") from None
    if not np.all(np.isfinite(c)):
        raise ValueError(f"`coefficients` of {func} must be finite; got NaN or inf.")
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _torus.expected_abs2_float(c, e)
    check_finite_output(np.array([out]), "the sum", func=func, hint="Use smaller `coefficients`.")
    return out


# ------------------------------------------------------------------------------------------ losses (6.3)

def _Cp(C, p, func, allow_complex=False):
    """C square (d, d), d >= 1, float64 (or complex128 when allowed); p of length T >= 2, float64."""
    C = _numeric(C, "C", func, ndim=2) if allow_complex else as_float_array(C, "C", func=func, ndim=2)
    if C.shape[0] != C.shape[1] or C.shape[0] == 0:
        raise ValueError(f"`C` of {func} must be a square (d, d) matrix with d >= 1; got shape {C.shape}.")
    p = as_float_array(p, "p", func=func, ndim=1)
    if p.shape[0] < 2:
        raise ValueError(f"`p` of {func} must have length T >= 2 (the row P_(T-1, 1..T)); got length {p.shape[0]}.")
    return C, p


def _check_even(d, context, name, func):
    if context == "orthogonal" and d % 2:
        raise ValueError(f"`{name}` of {func} must have even size d = 2δ for context='orthogonal'; got d = {d}.")


def _structure_cost(d, T):
    """(operations, bytes) of the merged monomials of the model (6.6) at one context length."""
    d, T = _f(d), _f(T)
    return d * d * T * (_TERM + _TERM_VAR * d), 40.0 * d * d * T


def _guard_structure(d, T, func, max_work, name, value, extra_ops=0.0):
    ops, nbytes = _structure_cost(d, T)
    check_memory(nbytes, name, value, func=func, hint="The merged monomials take about 40 d^2 T bytes.")
    check_work(ops + extra_ops, name, value, func=func, max_work=max_work)


def expected_loss(C, p, context="unitary", *, return_gradient=False, max_work=None):
    r"""Exact population loss :math:`l_T(\mathbf C,p)` of the model (6.6) at one context length (Prop. 6.8's
    setting, Assumptions 6.2 and 2, Lemma 6.6):

    .. math:: l_T(\mathbf C,p)=\mathbb E_\lambda\Big\|\sum_{t=1}^Tp_t\,\mathbf C\lambda^{t-T+1}\odot
              \lambda^{t-1}-\lambda^T\Big\|^2 ,

    tokens :math:`s_1=\mathbf 1_d`, :math:`s_{t+1}=Ws_t`, :math:`W=\mathrm{diag}(\lambda)` with i.i.d. uniform
    phases, :math:`\mathbf C=\mathbf B^\top\mathbf A`, the row :math:`p=(P_{T-1,1},\dots,P_{T-1,T})` and target
    :math:`s_{T+1}`. Computed exactly by merging the monomials of each output coordinate
    (:math:`\mathbb E[z^a\bar z^b]=\delta_{ab}`), not by sampling; the unitary case equals
    :func:`quadratic_loss` (Prop. 6.8 as corrected).

    Parameters
    ----------
    C : array_like, shape (d, d)
        :math:`\mathbf C=\mathbf B^\top\mathbf A`; real, or complex (then no gradient), d >= 1.
    p : array_like, shape (T,)
        The row :math:`P_{T-1,1:T}`, real, T >= 2.
    context : {"unitary", "orthogonal"}
        :math:`\mathcal C_U` (d i.i.d. phases) or :math:`\mathcal C_O` (d even, conjugate pairs).
    return_gradient : bool
        Also return :math:`\partial l/\partial\mathbf C` and :math:`\partial l/\partial p` (real C only).
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about :math:`d^2T(1500+80d)` to merge the
        monomials (cached per (d, T, context)).

    Returns
    -------
    loss : float
        :math:`l_T(\mathbf C,p)\ge0`.
    grad_C : ndarray of float64, shape (d, d)
        Only with ``return_gradient``.
    grad_p : ndarray of float64, shape (T,)
        Only with ``return_gradient``.

    Raises
    ------
    TypeError
        ``C`` or ``p`` not numeric (complex ``C`` with ``return_gradient``, complex ``p``), ``context`` not a
        string, ``return_gradient`` not a bool.
    ValueError
        Wrong shapes, odd d with ``context="orthogonal"``, non-finite entries, unknown ``context``, more than
        16 GiB or a cost above ``max_work``.
    theory.NonFiniteError
        The loss or its gradient overflowed.

    Examples
    --------
    >>> float(expected_loss([[0.5, 0.5], [0.5, 0.5]], [-1.0, 2.0], "orthogonal"))  # Lemma 6.10, T = 2
    0.0
    """
    func = "theory.icl.expected_loss"
    context = _check_context(context, func)
    return_gradient = check_bool(return_gradient, "return_gradient", func=func)
    C, p = _Cp(C, p, func, allow_complex=not return_gradient)
    d, T = C.shape[0], p.shape[0]
    _check_even(d, context, "C", func)
    name, value = ("C", f"shape {C.shape}") if d * d >= T else ("p", f"length {T}")
    _guard_structure(d, T, func, max_work, name, value)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _loss.expected_loss(C, p, context, return_gradient)
    _check_output(out if return_gradient else [out], func, hint="Use smaller `C` or `p`.")
    return out


def expected_loss_exact(C, p, context="unitary", *, max_work=None):
    r""":func:`expected_loss` in exact rational arithmetic: :math:`l_T(\mathbf C,p)` as a ``Fraction``.

    Every entry is turned into a Python int or :class:`fractions.Fraction` before any arithmetic (floats
    exactly, by ``as_integer_ratio``; NumPy integer and bool scalars and arrays by ``int``), so the result is the
    exact value of the formula of :func:`expected_loss` at the given numbers.

    Parameters
    ----------
    C : array_like, shape (d, d)
        Real entries: Python ints, Fractions, finite floats, NumPy arrays of any integer, bool or float dtype,
        d >= 1.
    p : array_like, shape (T,)
        The row :math:`P_{T-1,1:T}`, same kinds, T >= 2.
    context : {"unitary", "orthogonal"}
        As in :func:`expected_loss`.
    max_work : float, optional
        Budget in floating-point operations (default 1e11); one rational multiply-add counts 3e4.

    Returns
    -------
    Fraction

    Raises
    ------
    TypeError
        An entry not an int, Fraction or real float (strings, None, complex), ``context`` not a string.
    ValueError
        Wrong shapes, odd d with ``context="orthogonal"``, NaN or inf, unknown ``context``, more than 16 GiB or
        a cost above ``max_work``.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> expected_loss_exact([[F(1, 2), F(1, 2)], [F(1, 2), F(1, 2)]], [0, -1, 2], "orthogonal")
    Fraction(0, 1)
    """
    func = "theory.icl.expected_loss_exact"
    context = _check_context(context, func)
    Cflat, Cshape = _exact_array(C, "C", func, 2)
    if Cshape[0] != Cshape[1] or Cshape[0] == 0:
        raise ValueError(f"`C` of {func} must be a square (d, d) matrix with d >= 1; got shape {Cshape}.")
    pf, pshape = _exact_array(p, "p", func, 1)
    d, T = Cshape[0], pshape[0]
    if T < 2:
        raise ValueError(f"`p` of {func} must have length T >= 2 (the row P_(T-1, 1..T)); got length {T}.")
    _check_even(d, context, "C", func)
    name, value = ("C", f"shape {Cshape}") if d * d >= T else ("p", f"length {T}")
    _guard_structure(d, T, func, max_work, name, value, extra_ops=_RATIONAL * _f(d) * d * T)
    Cf = [Cflat[i * d:(i + 1) * d] for i in range(d)]
    return _loss.expected_loss_exact(Cf, pf, context)


def quadratic_loss(C, p):
    r"""Closed form of :math:`l_T` for unitary contexts: Prop. 6.8 of the thesis, as corrected,

    .. math:: l_T(\mathbf C,p)=\|p\|^2\|\mathbf C\|_F^2+p_{T-1}^2\big(S(\mathbf C^\top\mathbf C)-\|\mathbf C\|_F^2
              \big)-2\,\mathrm{Re\,Tr}(\mathbf C)\,p_T+d ,

    :math:`S(\mathbf C^\top\mathbf C)=\|\mathbf C\mathbf 1\|^2` the sum of all entries (moduli for complex C).
    The printed statement lacks the :math:`-\|\mathbf C\|_F^2` inside the bracket (:func:`printed_quadratic_loss`):
    the monomials of the terms t = T-1 do not depend on j and merge into one coefficient per coordinate.

    Parameters
    ----------
    C : array_like, shape (d, d)
        Real or complex, d >= 1.
    p : array_like, shape (T,)
        Real, T >= 2.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        ``C`` or ``p`` not numeric (complex ``p`` included).
    ValueError
        Wrong shapes or non-finite entries.
    theory.NonFiniteError
        The value overflowed.

    Examples
    --------
    >>> quadratic_loss([[1.0]], [0.0, 1.0])  # the exact predictor: C = 1, p = e_T
    0.0
    """
    func = "theory.icl.quadratic_loss"
    C, p = _Cp(C, p, func, allow_complex=True)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _loss.quadratic_loss(C, p)
    _check_output([out], func, hint="Use smaller `C` or `p`.")
    return out


def printed_quadratic_loss(C, p):
    r"""Prop. 6.8 of the thesis as printed:
    :math:`\|p\|^2\|\mathbf C\|_F^2+p_{T-1}^2S(\mathbf C^\top\mathbf C)-2\,\mathrm{Re\,Tr}(\mathbf C)p_T+d`.

    It exceeds the exact loss (:func:`quadratic_loss`, :func:`expected_loss`) by
    :math:`p_{T-1}^2\|\mathbf C\|_F^2`; kept for the erratum check.

    Parameters
    ----------
    C : array_like, shape (d, d)
        Real or complex, d >= 1.
    p : array_like, shape (T,)
        Real, T >= 2.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        ``C`` or ``p`` not numeric (complex ``p`` included).
    ValueError
        Wrong shapes or non-finite entries.
    theory.NonFiniteError
        The value overflowed.

    Examples
    --------
    >>> printed_quadratic_loss([[1.0]], [0.0, 1.0])
    0.0
    """
    func = "theory.icl.printed_quadratic_loss"
    C, p = _Cp(C, p, func, allow_complex=True)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _loss.printed_quadratic_loss(C, p)
    _check_output([out], func, hint="Use smaller `C` or `p`.")
    return out


def quadratic_loss_gradient(C, p):
    r"""Gradient of :func:`quadratic_loss` for real C:

    .. math:: \partial_{\mathbf C}l=2\|p\|^2\mathbf C+2p_{T-1}^2(\mathbf C\mathbf 1\mathbf 1^\top-\mathbf C)
              -2p_TI,\qquad
              \partial_pl=2\|\mathbf C\|_F^2p+2p_{T-1}(S-\|\mathbf C\|_F^2)e_{T-1}-2\,\mathrm{Tr}(\mathbf C)e_T .

    Parameters
    ----------
    C : array_like, shape (d, d)
        Real, d >= 1.
    p : array_like, shape (T,)
        Real, T >= 2.

    Returns
    -------
    grad_C : ndarray of float64, shape (d, d)
    grad_p : ndarray of float64, shape (T,)

    Raises
    ------
    TypeError
        ``C`` or ``p`` not real numeric.
    ValueError
        Wrong shapes or non-finite entries.
    theory.NonFiniteError
        The gradient overflowed.

    Examples
    --------
    >>> gC, gp = quadratic_loss_gradient([[1.0]], [0.0, 1.0])
    >>> float(gC[0, 0]), gp.tolist()
    (0.0, [0.0, 0.0])
    """
    func = "theory.icl.quadratic_loss_gradient"
    C, p = _Cp(C, p, func)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _loss.quadratic_loss_gradient(C, p)
    _check_output(out, func, hint="Use smaller `C` or `p`.")
    return out


def _heads(Amat, Bmat, P, Tmax, context, func, names, copy=False):
    """Validated (A, B, P, Tmax) of the loss (6.3)."""
    nA, nB, nP = names
    A = as_float_array(Amat, nA, func=func, ndim=2, copy=copy)
    if A.shape[0] < 1 or A.shape[1] < 1:
        raise ValueError(f"`{nA}` of {func} must have shape (H, d) with H, d >= 1; got {A.shape}.")
    B = as_float_array(Bmat, nB, func=func, ndim=2, copy=copy)
    if B.shape != A.shape:
        raise ValueError(f"`{nB}` of {func} must have the shape of `{nA}`, (H, d) = {A.shape}; got {B.shape}.")
    P = as_float_array(P, nP, func=func, ndim=2, copy=copy)
    if P.shape[0] != P.shape[1] or P.shape[0] < 2:
        raise ValueError(f"`{nP}` of {func} must be a square (Tmax, Tmax) matrix with Tmax >= 2; got {P.shape}.")
    Tmax = P.shape[0] if Tmax is None else check_int(Tmax, "Tmax", func=func, minimum=2, maximum=P.shape[0])
    d = A.shape[1]
    if context == "orthogonal" and d % 2:
        raise ValueError(f"`{nA}` of {func} must have an even number of columns d = 2δ for context='orthogonal'; "
                         f"got d = {d}.")
    return A, B, P, Tmax


def _population_cost(H, d, Tmax):
    """(operations, bytes) of the structures of T = 2..Tmax and one evaluation of the loss (6.3)."""
    S = _f(Tmax) * (_f(Tmax) + 1) / 2 - 1  # Σ_{T=2}^{Tmax} T
    d, H = _f(d), _f(H)
    ops = d * d * S * (_TERM + _TERM_VAR * d)
    per_eval = _EVAL + _EVAL_T * (_f(Tmax) - 1) + 10.0 * d * d * S + 4.0 * H * d * d
    return ops, 8.0 * d * d * S + 32.0 * d * d * Tmax, per_eval


def population_loss(Amat, Bmat, P, Tmax=None, context="unitary", *, return_gradient=False, max_work=None):
    r"""The population loss (6.3) of the model (6.6) under Assumptions 6.2 and 2:

    .. math:: \ell(\mathbf A,\mathbf B,P)=\sum_{T=2}^{T_{\max}}l_T\big(\mathbf B^\top\mathbf A,
              (P_{T-1,1},\dots,P_{T-1,T})\big),

    each :math:`l_T` exact (:func:`expected_loss`).

    Parameters
    ----------
    Amat, Bmat : array_like, shape (H, d)
        Head diagonals stacked by rows (:math:`\mathbf A_{h,j}=a_h^j`), real, H, d >= 1.
    P : array_like, shape (Tmax, Tmax)
        Positional encoding, real; rows 1..Tmax-1 (1-based) and entries t <= T of row T-1 are used.
    Tmax : int, optional
        Largest context length, 2 <= Tmax <= P.shape[0]; default P.shape[0].
    context : {"unitary", "orthogonal"}
        As in :func:`expected_loss` (d even for ``"orthogonal"``).
    return_gradient : bool
        Also return the gradients with respect to Amat, Bmat and P (zero on unused entries of P).
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about :math:`d^2(1500+80d)T_{\max}^2/2` to merge
        the monomials (cached).

    Returns
    -------
    loss : float
    grad_A, grad_B : ndarray of float64, shape (H, d)
        Only with ``return_gradient``.
    grad_P : ndarray of float64, shape (Tmax, Tmax) as given
        Only with ``return_gradient``.

    Raises
    ------
    TypeError
        An array not real numeric, ``Tmax`` not an int, ``context`` not a string, ``return_gradient`` not a
        bool.
    ValueError
        Wrong shapes, non-finite entries, ``Tmax`` out of range, odd d with ``context="orthogonal"``, more than
        16 GiB or a cost above ``max_work``.
    theory.NonFiniteError
        The loss or a gradient overflowed.

    Examples
    --------
    >>> float(population_loss([[1.0]], [[1.0]], [[0.0, 1.0], [0.0, 1.0]]))  # C = 1, P_1 = e_2: exact
    0.0
    """
    func = "theory.icl.population_loss"
    context = _check_context(context, func)
    return_gradient = check_bool(return_gradient, "return_gradient", func=func)
    Tmax_given = Tmax is not None
    A, B, P, Tmax = _heads(Amat, Bmat, P, Tmax, context, func, ("Amat", "Bmat", "P"))
    H, d = A.shape
    ops, nbytes, per_eval = _population_cost(H, d, Tmax)
    name, value = ("Tmax" if Tmax_given else "P", Tmax) if Tmax >= d else ("Amat", f"shape {A.shape}")
    check_memory(nbytes, name, value, func=func, hint="The merged monomials take about 4 d^2 Tmax^2 bytes.")
    check_work(ops + per_eval, name, value, func=func, max_work=max_work)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _loss.population_loss(A, B, P, Tmax, context, return_gradient)
    _check_output(out if return_gradient else [out], func, hint="Use smaller parameters.")
    return out


# ------------------------------------------------------------------------------------------ augmented model

def _aug_args(a, b, d, Tmax, s0, func):
    a = as_float_array(a, "a", func=func, shape=(4,))
    b = as_float_array(b, "b", func=func, shape=(2,))
    d = check_int(d, "d", func=func, minimum=1)
    Tmax = check_int(Tmax, "Tmax", func=func, minimum=2)
    s0 = _check_s0(s0, func)
    return a, b, d, Tmax, s0


def _guard_augmented(d, Tmax, func, max_work, per_group=0.0):
    """Work and memory of the augmented structures of T = 2..Tmax: 8 d^2 T terms per length."""
    S = _f(Tmax) * (_f(Tmax) + 1) / 2 - 1
    terms = 8.0 * _f(d) ** 2 * S
    name, value = ("Tmax", Tmax) if Tmax >= d else ("d", d)
    check_memory(64.0 * terms + 8.0 * _f(d) * Tmax * (100 + 8 * _f(d)), name, value, func=func,
                 hint="The merged monomials of every length are kept, 64 bytes per term.")
    check_work(terms * (_AUG_TERM + 10.0 * _f(d) + per_group), name, value, func=func, max_work=max_work)


def augmented_loss(a, b, d, Tmax, s0="inverse", *, return_gradient=False, max_work=None):
    r"""Exact loss (6.3) of the augmented model (6.4) under Assumptions 6.2 (unitary contexts) and 1
    (Lemma 6.13 of the thesis):

    .. math:: \ell(a,b)=\sum_{T=2}^{T_{\max}}\mathbb E_\lambda\big\|\mathcal T_\theta(e_{1:T})-s_{T+1}\big\|^2,

    with the parameters :math:`A(a)`, :math:`B(b)` of :func:`block_parameters`, computed by merging the
    monomials of the phases (each term :math:`a_kb_l` once per merged monomial).

    Parameters
    ----------
    a : array_like, shape (4,)
        :math:`(a_1,a_2,a_3,a_4)`, real, finite.
    b : array_like, shape (2,)
        :math:`(b_1,b_2)`, real, finite.
    d : int
        Token dimension, >= 1.
    Tmax : int
        Largest context length, >= 2 (the loss sums T = 2..Tmax).
    s0 : {"inverse", "zero"}
        The augmented token :math:`e_1=(0,s_1,s_0)` with :math:`s_0=W^{-1}s_1` (the thesis's computation in the
        proof of Prop. 6.5) or :math:`s_0=0`.
    return_gradient : bool
        Also return the gradients with respect to a and b.
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about :math:`1.2\cdot10^4\,d^2T_{\max}^2` to merge
        the monomials (cached per (d, T, s0)).

    Returns
    -------
    loss : float
    grad_a : ndarray of float64, shape (4,)
        Only with ``return_gradient``.
    grad_b : ndarray of float64, shape (2,)
        Only with ``return_gradient``.

    Raises
    ------
    TypeError
        ``a``, ``b`` not real numeric, ``d``, ``Tmax`` not ints, ``s0`` not a string, ``return_gradient`` not a
        bool.
    ValueError
        Wrong shapes, non-finite entries, ``d`` < 1, ``Tmax`` < 2, unknown ``s0``, more than 16 GiB or a cost
        above ``max_work`` (Tmax = 1e5 is refused at once).
    theory.NonFiniteError
        The loss or a gradient overflowed.

    Examples
    --------
    >>> augmented_loss([0, 0, 0, 0], [0, 0], 3, 4)  # the zero model: d (Tmax - 1)
    9.0
    """
    func = "theory.icl.augmented_loss"
    return_gradient = check_bool(return_gradient, "return_gradient", func=func)
    a, b, d, Tmax, s0 = _aug_args(a, b, d, Tmax, s0, func)
    _guard_augmented(d, Tmax, func, max_work)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _loss.augmented_loss(a, b, d, Tmax, s0, return_gradient)
    _check_output(out if return_gradient else [out], func, hint="Use smaller `a` or `b`.")
    return out


def augmented_loss_exact(a, b, d, Tmax, s0="inverse", *, max_work=None):
    r""":func:`augmented_loss` in exact rational arithmetic, a ``Fraction``.

    Every entry of ``a`` and ``b`` is turned into a Python int or :class:`fractions.Fraction` before any
    arithmetic (floats exactly; NumPy integer and bool scalars and arrays by ``int``): no fixed-width integer
    can overflow.

    Parameters
    ----------
    a : array_like, shape (4,)
        Python ints, Fractions, finite floats, or NumPy arrays of any integer, bool or float dtype.
    b : array_like, shape (2,)
        Same kinds.
    d : int
        Token dimension, >= 1.
    Tmax : int
        Largest context length, >= 2.
    s0 : {"inverse", "zero"}
        As in :func:`augmented_loss`.
    max_work : float, optional
        Budget in floating-point operations (default 1e11); rational arithmetic counts about 1e4 per merged
        monomial.

    Returns
    -------
    Fraction

    Raises
    ------
    TypeError
        An entry not an int, Fraction or real float (strings, None, complex), ``d`` or ``Tmax`` not an int,
        ``s0`` not a string.
    ValueError
        Wrong shapes, NaN or inf, ``d`` < 1, ``Tmax`` < 2, unknown ``s0``, more than 16 GiB or a cost above
        ``max_work``.

    Examples
    --------
    >>> import numpy as np
    >>> L = augmented_loss_exact([0.1, 0.2, 0.3, 0.4], np.array([1, 1]), 2, 3)  # int64 b, no overflow
    >>> round(float(L), 12)
    59.96
    """
    func = "theory.icl.augmented_loss_exact"
    af, ashape = _exact_array(a, "a", func, 1)
    if ashape != (4,):
        raise ValueError(f"`a` of {func} must have shape (4,); got {ashape}.")
    bf, bshape = _exact_array(b, "b", func, 1)
    if bshape != (2,):
        raise ValueError(f"`b` of {func} must have shape (2,); got {bshape}.")
    d = check_int(d, "d", func=func, minimum=1)
    Tmax = check_int(Tmax, "Tmax", func=func, minimum=2)
    s0 = _check_s0(s0, func)
    _guard_augmented(d, Tmax, func, max_work, per_group=1e4)
    return _loss.augmented_loss_exact(af, bf, d, Tmax, s0)


def _dT(d, T, func, nameT="T"):
    d = check_int(d, "d", func=func, minimum=1)
    T = check_int(T, nameT, func=func, minimum=2)
    return d, T


def _guard_ray(d, Tmax, func, max_work, nameT):
    """Work and memory of the moment counts of T = 2..Tmax (one count per T: rows (T d + 1, d))."""
    S = _f(Tmax) * (_f(Tmax) + 1) / 2 - 1
    name, value = (nameT, Tmax) if Tmax >= d else ("d", d)
    check_memory(32.0 * _f(Tmax) * _f(d) ** 2, name, value, func=func, hint="The counts sort T d exponent rows.")
    check_work(_RAY_CALL * (_f(Tmax) - 1) + _RAY_ENTRY * _f(d) ** 2 * S, name, value, func=func, max_work=max_work)


def augmented_ray_loss(eta, d, T, s0="inverse", *, max_work=None):
    r"""Exact loss of the augmented model at one context length T along the ray :math:`a_3b_1=\eta` (the other
    parameters 0), from integer moment counts:

    .. math:: l_T(\eta)=d\Big(\eta^2\sum_gn_g^2-2\eta\sum_gn_g\delta_g+1\Big),

    :math:`n_g` the number of terms in merged monomial g and :math:`\delta_g=[g\text{ is }\lambda_1^T]`. With
    ``s0="inverse"`` this is :math:`d(\eta^2(T^2+(d-1)T)-2\eta T+1)` (proof of Prop. 6.5).

    Parameters
    ----------
    eta : float
        The product :math:`a_3b_1`, finite.
    d : int
        Token dimension, >= 1.
    T : int
        Context length, >= 2.
    s0 : {"inverse", "zero"}
        As in :func:`augmented_loss`.
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about 1e5 + 400 T d^2.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        ``eta`` not a real number, ``d`` or ``T`` not an int, ``s0`` not a string.
    ValueError
        ``eta`` not finite, ``d`` < 1, ``T`` < 2, unknown ``s0``, more than 16 GiB or a cost above ``max_work``.
    theory.NonFiniteError
        The loss overflowed (huge ``eta``).

    Examples
    --------
    >>> augmented_ray_loss(0.5, 2, 3)  # 2 (0.25 (9 + 3) - 3 + 1)
    2.0
    """
    func = "theory.icl.augmented_ray_loss"
    eta = _check_real(eta, "eta", func)
    d, T = _dT(d, T, func)
    s0 = _check_s0(s0, func)
    name, value = ("T", T) if T >= d else ("d", d)
    check_memory(32.0 * _f(T) * _f(d) ** 2, name, value, func=func, hint="The counts sort T d exponent rows.")
    check_work(_RAY_CALL + _RAY_ENTRY * _f(T) * _f(d) ** 2, name, value, func=func, max_work=max_work)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _loss.augmented_ray_loss(eta, d, T, s0)
    _check_output([out], func, hint="Use a smaller `eta`.")
    return out


def eta_star(d, Tmax, s0="inverse", *, max_work=None):
    r"""The exact minimiser :math:`\eta^*` of the augmented loss along :math:`a_3b_1=\eta` (other parameters 0),
    a ``Fraction`` computed from integer moment counts (:math:`\mathbb E[z^a\bar z^b]=\delta_{ab}`):

    .. math:: \eta^*=\frac{\sum_{T=2}^{T_{\max}}\sum_gn_g\delta_g}{\sum_{T=2}^{T_{\max}}\sum_gn_g^2}.

    With ``s0="inverse"`` it equals Prop. 6.5's
    :math:`\sum_{T=2}^{T_{\max}}T/\sum_{T=2}^{T_{\max}}(T^2+(d-1)T)` (:func:`eta_star_printed`); with
    ``s0="zero"`` (every context sum loses its t = 1 term) it is :math:`\sum_T(T-1)/\sum_T((T-1)^2+(d-1)(T-1))`.

    Parameters
    ----------
    d : int
        Token dimension, >= 1.
    Tmax : int
        Largest context length, >= 2.
    s0 : {"inverse", "zero"}
        As in :func:`augmented_loss`.
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about :math:`10^5T_{\max}+200d^2T_{\max}^2`.

    Returns
    -------
    Fraction

    Raises
    ------
    TypeError
        ``d`` or ``Tmax`` not an int, ``s0`` not a string.
    ValueError
        ``d`` < 1, ``Tmax`` < 2, unknown ``s0``, more than 16 GiB or a cost above ``max_work``.

    Examples
    --------
    >>> eta_star(2, 4), eta_star(2, 4, "zero")
    (Fraction(9, 38), Fraction(3, 10))
    """
    func = "theory.icl.eta_star"
    d, Tmax = _dT(d, Tmax, func, "Tmax")
    s0 = _check_s0(s0, func)
    _guard_ray(d, Tmax, func, max_work, "Tmax")
    return _loss.eta_star(d, Tmax, s0)


def augmented_min_loss(d, Tmax, s0="inverse", *, max_work=None):
    r"""The augmented loss at :math:`\eta^*` (:func:`eta_star`), a ``Fraction``:

    .. math:: \ell(\eta^*)=\sum\delta-\frac{(\sum n\delta)^2}{\sum n^2}

    over the merged monomials of every T = 2..Tmax; for ``s0="inverse"`` it is
    :math:`d[(T_{\max}-1)-(\sum_TT)^2/\sum_T(T^2+(d-1)T)]` (Prop. 6.5).

    Parameters
    ----------
    d : int
        Token dimension, >= 1.
    Tmax : int
        Largest context length, >= 2.
    s0 : {"inverse", "zero"}
        As in :func:`augmented_loss`.
    max_work : float, optional
        Budget in floating-point operations (default 1e11), as :func:`eta_star`.

    Returns
    -------
    Fraction

    Raises
    ------
    TypeError
        ``d`` or ``Tmax`` not an int, ``s0`` not a string.
    ValueError
        ``d`` < 1, ``Tmax`` < 2, unknown ``s0``, more than 16 GiB or a cost above ``max_work``.

    Examples
    --------
    >>> augmented_min_loss(5, 50)
    Fraction(76, 1)
    """
    func = "theory.icl.augmented_min_loss"
    d, Tmax = _dT(d, Tmax, func, "Tmax")
    s0 = _check_s0(s0, func)
    _guard_ray(d, Tmax, func, max_work, "Tmax")
    return _loss.augmented_min_loss(d, Tmax, s0)


def eta_star_printed(d, Tmax):
    r"""Prop. 6.5's formula for the optimal step, as printed in the thesis, as a ``Fraction``:

    .. math:: \eta^*=\frac{\sum_{T=2}^{T_{\max}}T}{\sum_{T=2}^{T_{\max}}(T^2+(d-1)T)},

    from the closed forms of the two power sums (exact integers, any size).

    Parameters
    ----------
    d : int
        Token dimension, >= 1.
    Tmax : int
        Largest context length, >= 2.

    Returns
    -------
    Fraction

    Raises
    ------
    TypeError
        ``d`` or ``Tmax`` not an int.
    ValueError
        ``d`` < 1 or ``Tmax`` < 2.

    Examples
    --------
    >>> eta_star_printed(2, 4)
    Fraction(9, 38)
    """
    func = "theory.icl.eta_star_printed"
    d, Tmax = _dT(d, Tmax, func, "Tmax")
    return _loss.eta_star_printed(d, Tmax)


# ------------------------------------------------------------------------------------------ PE-only problem

def pe_moment(k, mu):
    r"""Exact :math:`\mathbb E[\lambda^{2k}]` for :math:`\lambda=e^{i\theta/\mu}`,
    :math:`\theta\sim\mathcal U(0,2\pi)` (the contexts :math:`\mathcal W(\mu)` of the problem (6.7)):

    .. math:: \mathbb E[\lambda^{2k}]=\frac{e^{ix}-1}{ix},\qquad x=\frac{4\pi k}{\mu}

    (1 at k = 0).

    Parameters
    ----------
    k : int or array_like of int
        Exponents, any shape, any integer dtype (int64 range).
    mu : float
        :math:`\mu\ge1`, finite.

    Returns
    -------
    complex or ndarray of complex128
        Same shape as ``k``.

    Raises
    ------
    TypeError
        ``k`` not an integer array (floats and bools included), ``mu`` not a real number.
    ValueError
        ``mu`` < 1 or not finite.

    Examples
    --------
    >>> pe_moment(0, 3.0)
    (1+0j)
    >>> bool(abs(pe_moment(3, 4.0) - 2j / (3 * np.pi)) < 1e-15)  # x = 3π: (e^{3πi} - 1)/(3πi)
    True
    """
    func = "theory.icl.pe_moment"
    mu = _check_mu(mu, func)
    try:
        k = np.asarray(k)
    except Exception as exc:
        raise TypeError(f"`k` of {func} must be an integer or integer array; got {type(k).__name__} ({exc}).") from None
    if k.dtype.kind not in "iu":
        raise TypeError(f"`k` of {func} must be an integer or integer array (int64 range); got dtype {k.dtype}.")
    return _loss.pe_moment(k, mu)


def pe_hessian(T, mu):
    r"""The matrix H of the quadratic form :math:`l(p)=(p-e_T)^\top H(p-e_T)` of (6.7) (Prop. 6.12, with the
    sine argument as corrected):

    .. math:: H_{t,t'}=\frac{\mu}{4\pi(t'-t)}\sin\frac{4\pi(t'-t)}{\mu},\qquad H_{tt}=1 .

    The Hessian of l is 2H.

    Parameters
    ----------
    T : int
        Context length, >= 1.
    mu : float
        :math:`\mu\ge1`, finite.

    Returns
    -------
    ndarray of float64, shape (T, T)

    Raises
    ------
    TypeError
        ``T`` not an int, ``mu`` not a real number.
    ValueError
        ``T`` < 1, ``mu`` < 1 or not finite, more than 16 GiB.

    Examples
    --------
    >>> pe_hessian(2, 4.0)  # 4/μ an integer: H = I
    array([[1.00000000e+00, 3.89817183e-17],
           [3.89817183e-17, 1.00000000e+00]])
    """
    func = "theory.icl.pe_hessian"
    T = check_int(T, "T", func=func, minimum=1)
    mu = _check_mu(mu, func)
    check_memory(24 * _f(T) ** 2, "T", T, func=func, hint=f"H has shape ({T}, {T}).")
    return _loss.pe_hessian(T, mu)


def pe_hessian_printed(T, mu):
    r"""Prop. 6.12's matrix as printed:
    :math:`\frac{\mu}{4\pi(t'-t)}\sin(4(t'-t))\frac{\pi}{\mu}=\frac{\sin(4(t'-t))}{4(t'-t)}` (1 on the diagonal);
    it does not depend on μ (the erratum of :func:`pe_hessian`).

    Parameters
    ----------
    T : int
        Context length, >= 1.
    mu : float
        :math:`\mu\ge1`, finite (validated, unused by the printed formula).

    Returns
    -------
    ndarray of float64, shape (T, T)

    Raises
    ------
    TypeError
        ``T`` not an int, ``mu`` not a real number.
    ValueError
        ``T`` < 1, ``mu`` < 1 or not finite, more than 16 GiB.

    Examples
    --------
    >>> pe_hessian_printed(2, 10.0)
    array([[ 1.        , -0.18920062],
           [-0.18920062,  1.        ]])
    """
    func = "theory.icl.pe_hessian_printed"
    T = check_int(T, "T", func=func, minimum=1)
    mu = _check_mu(mu, func)
    check_memory(40 * _f(T) ** 2, "T", T, func=func, hint=f"H has shape ({T}, {T}).")
    return _loss.pe_hessian_printed(T, mu)


def pe_loss(p, mu):
    r"""Exact loss of the positional-encoding-only problem (6.7) (Prop. 6.12):

    .. math:: l(p)=\mathbb E\Big|\sum_{t=1}^Tp_t\lambda^{2t-T}-\lambda^T\Big|^2=(p-e_T)^\top H(p-e_T),
              \qquad\lambda\sim\mathcal W(\mu),

    H of :func:`pe_hessian`.

    Parameters
    ----------
    p : array_like, shape (T,)
        Real, T >= 1.
    mu : float
        :math:`\mu\ge1`, finite.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        ``p`` not real numeric, ``mu`` not a real number.
    ValueError
        ``p`` not 1-d, empty or not finite, ``mu`` < 1 or not finite, more than 16 GiB (H is T x T).
    theory.NonFiniteError
        The loss overflowed.

    Examples
    --------
    >>> pe_loss([0.0, 1.0], 4.0)
    0.0
    """
    func = "theory.icl.pe_loss"
    p = as_float_array(p, "p", func=func, ndim=1, min_size=1)
    mu = _check_mu(mu, func)
    check_memory(24 * _f(p.shape[0]) ** 2, "p", f"length {p.shape[0]}", func=func,
                 hint="H is a (T, T) matrix.")
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _loss.pe_loss(p, mu)
    _check_output([out], func, hint="Use a smaller `p`.")
    return out


# ------------------------------------------------------------------------------------------ training

def gradient_flow(Amat0, Bmat0, P0, Tmax=None, context="unitary", *, lr=0.01, steps=1000, tol=0.0,
                  train_P=True, max_work=None):
    r"""Euler discretisation of the gradient flow :math:`\dot\theta=-\nabla\ell(\theta)` on the loss (6.3),
    :math:`\theta=(\mathbf A,\mathbf B,P)`, under Assumptions 6.2 and 2 (§6.5 and Fig. 6.3 of the thesis):

    .. math:: \theta_{k+1}=\theta_k-\mathrm{lr}\,\nabla\ell(\theta_k),

    full-batch gradient descent on the exact loss of :func:`population_loss` (no sampling). Only the entries of
    P that the loss uses (row T-1, columns 1..T, for T = 2..Tmax) move.

    Parameters
    ----------
    Amat0, Bmat0 : array_like, shape (H, d)
        Initial head diagonals, real, H, d >= 1 (never modified).
    P0 : array_like, shape (Tmax, Tmax)
        Initial positional encoding, real.
    Tmax : int, optional
        Largest context length, 2 <= Tmax <= P0.shape[0]; default P0.shape[0].
    context : {"unitary", "orthogonal"}
        As in :func:`expected_loss`.
    lr : float
        Step size, > 0.
    steps : int
        Largest number of steps, >= 0.
    tol : float
        Stop once the loss is <= tol, >= 0.
    train_P : bool
        Whether P moves (False: the flow on (A, B) at fixed P).
    max_work : float, optional
        Budget in floating-point operations (default 1e11); about
        :math:`\mathrm{steps}\,(5000+3000T_{\max}+5d^2T_{\max}^2)` plus the merge of the
        monomials.

    Returns
    -------
    FlowResult
        Final parameters, the losses before each step and after the last one, the number of steps taken.

    Raises
    ------
    TypeError
        An array not real numeric, ``Tmax`` or ``steps`` not an int, ``lr`` or ``tol`` not a real number,
        ``context`` not a string, ``train_P`` not a bool.
    ValueError
        Wrong shapes, non-finite entries, arguments out of range, more than 16 GiB or a cost above ``max_work``.
    theory.NonFiniteError
        The flow overflowed (use a smaller ``lr``).

    Examples
    --------
    >>> r = gradient_flow([[0.5]], [[0.5]], [[0.0, 0.0], [0.5, 0.5]], lr=0.1, steps=50)
    >>> r.steps, bool(r.losses[-1] < r.losses[0])
    (50, True)
    """
    func = "theory.icl.gradient_flow"
    context = _check_context(context, func)
    Tmax_given = Tmax is not None
    A, B, P, Tmax = _heads(Amat0, Bmat0, P0, Tmax, context, func, ("Amat0", "Bmat0", "P0"), copy=True)
    lr = check_interval(lr, "lr", 0.0, np.inf, func=func)
    steps = check_int(steps, "steps", func=func, minimum=0)
    tol = check_interval(tol, "tol", 0.0, np.inf, func=func, closed="left")
    train_P = check_bool(train_P, "train_P", func=func)
    H, d = A.shape
    ops, nbytes, per_eval = _population_cost(H, d, Tmax)
    stacked = 8.0 * (_f(Tmax) - 1) * Tmax * _f(d) ** 2
    name, value = ("Tmax" if Tmax_given else "P0", Tmax) if Tmax >= d else ("Amat0", f"shape {A.shape}")
    check_memory(nbytes + stacked, name, value, func=func, hint="The merged monomials take about 12 d^2 Tmax^2 bytes.")
    check_memory(8.0 * (_f(steps) + 1), "steps", steps, func=func, hint="The losses are kept, one float per step.")
    check_work(ops, name, value, func=func, max_work=max_work)
    check_work(ops + (_f(steps) + 1) * per_eval, "steps", steps, func=func, max_work=max_work)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        r = _training.gradient_flow(A, B, P, Tmax, context, lr, steps, tol, train_P)
    check_finite_output(r.losses, "the loss along the flow", func=func, hint="Use a smaller `lr`.")
    for v in (r.Amat, r.Bmat, r.P):
        check_finite_output(v, "the parameters along the flow", func=func, hint="Use a smaller `lr`.")
    return r


def scalar_flow(a0, b0, p0, t_end, n_steps, *, max_work=None):
    r"""Prop. 6.9 of the thesis: the gradient flow of the scalar problem :math:`\ell(a,b,p)=(pab-1)^2`,

    .. math:: \dot a=-2r\,pb,\quad\dot b=-2r\,pa,\quad\dot p=-2r\,ab,\qquad r=pab-1,

    integrated by classical RK4 with ``n_steps`` steps of size ``t_end / n_steps``.

    Parameters
    ----------
    a0, b0, p0 : float
        Initial values, finite.
    t_end : float
        Final time, > 0, finite.
    n_steps : int
        Number of RK4 steps, >= 1.
    max_work : float, optional
        Budget in floating-point operations (default 1e11); one step counts 4.5e4 (interpreted).

    Returns
    -------
    ndarray of float64, shape (n_steps + 1, 3)
        The states :math:`(a,b,p)` at the times :math:`k\,t_{\rm end}/n_{\rm steps}`.

    Raises
    ------
    TypeError
        A value not a real number, ``n_steps`` not an int.
    ValueError
        Non-finite values, ``t_end`` <= 0, ``n_steps`` < 1, more than 16 GiB or a cost above ``max_work``.
    theory.NonFiniteError
        The flow overflowed (use a smaller ``t_end`` or more ``n_steps``).

    Examples
    --------
    >>> out = scalar_flow(1.0, 1.0, 1.0, 1.0, 10)  # already at a minimum: pab = 1
    >>> out.shape, bool(np.all(out == 1.0))
    ((11, 3), True)
    """
    func = "theory.icl.scalar_flow"
    x = np.array([_check_real(v, n, func) for v, n in ((a0, "a0"), (b0, "b0"), (p0, "p0"))])
    t_end = check_interval(t_end, "t_end", 0.0, np.inf, func=func)
    n_steps = check_int(n_steps, "n_steps", func=func, minimum=1)
    check_memory(24.0 * (_f(n_steps) + 1), "n_steps", n_steps, func=func, hint="The states are kept.")
    check_work(_RK4_STEP * _f(n_steps), "n_steps", n_steps, func=func, max_work=max_work)
    with np.errstate(all="ignore"):  # an overflow is reported below, as NonFiniteError
        out = _training.scalar_flow(x, t_end, n_steps)
    check_finite_output(out, "the flow", func=func, hint="Use a smaller `t_end` or more `n_steps`.")
    return out
