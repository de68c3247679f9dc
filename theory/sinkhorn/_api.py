r"""Public API of Sinkhorn attention (paper key ``sinkformers``: M. E. Sander's thesis, chapter 5).

Every public function validates its arguments at the door (kind, shape, finiteness, range; lists are
accepted, strings, ``None`` where a number is expected and complex values are refused with a
:class:`TypeError` naming the argument), converts arrays to float64, refuses up front a call whose
arrays would exceed ``theory._validation.MAX_BYTES`` or whose iterations would exceed the work
budget ``max_work``, and only then calls the private kernels of :mod:`theory.sinkhorn._kernels`.

Cost model of the work budget, in floating-point operations per normalisation of an (n, n) matrix:
``4 n^2 + 2000`` on scalings (logits spanning at most 600: one matrix-vector product per
normalisation, and the convergence test's), ``600 n^2 + 2000`` in the log domain (exponentials and
logarithms per entry), ``200 n^2 + 1e6`` for the NumPy reference (a SciPy ``logsumexp`` call per
normalisation). The default budget of 1e11 operations is at most about 10 s of one core.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from .._errors import NonFiniteError
from .._validation import (
    MAX_BYTES,
    MAX_WORK,
    as_float_array,
    check_bool,
    check_choice,
    check_finite_output,
    check_int,
    check_interval,
    check_memory,
    check_work,
)
from . import _kernels

__all__ = ["KINDS", "MAX_LOGIT_RANGE", "attention", "energy", "l2_softmax_field", "logits", "sinkhorn",
           "sinkhorn_reference"]

#: The attention kinds of :func:`attention`: K^0 ("kernel"), K^1 ("softmax"), K^∞ ("sinkhorn").
KINDS = ("kernel", "softmax", "sinkhorn")

#: Largest accepted spread max(C) - min(C) of the logits. The log-domain iterates are C plus two
#: potentials bounded by this spread, so below it no subtraction overflows and no NaN can appear.
MAX_LOGIT_RANGE = 1e300

_DEFAULT_MAX_ITER = 100_000

#: largest iteration count handed to a kernel (a Numba int64)
_MAX_COUNT = 2**62

# cost model (floating-point operations) of one normalisation of an (n, m) matrix: per entry, plus a
# fixed part (calls, the absorption test, the convergence test's bookkeeping)
# (measured on one core: about 0.4 ns per entry on scalings, 70 ns per entry in the log domain
# (exponentials, and the column test's), 0.1-0.2 us of fixed cost per normalisation at small n, 40 ns
# per entry and 0.2 ms per call for the NumPy reference; so that the default budget of 1e11 is at
# most about 10 s, 1 op is counted as 0.1 ns)
_SCALING_OPS = 4
_LOG_OPS = 600
_STEP_OPS = 2000
_REFERENCE_OPS = 200
_REFERENCE_STEP_OPS = 1_000_000

#: float64 matrices of the size of C held at once by :func:`sinkhorn` (C, the iterate L, the scaled
#: kernel exp(L) of the scaling form, the result)
_SINKHORN_COPIES = 4


# --------------------------------------------------------------------------------- validation


def _check_logits(C, func, *, spread=False):
    """``C`` as a finite float64 square matrix of accepted size (and, with ``spread``, of accepted spread:
    :func:`sinkhorn` tests it on the shifted logits instead), or raise naming ``C``."""
    hint = "Sinkhorn holds about four float64 matrices of the shape of `C`."
    given = isinstance(C, np.ndarray) and C.ndim == 2
    if given:  # before the float64 copy (a broadcast view is small, its copy is not)
        check_memory(8 * _SINKHORN_COPIES * C.shape[0] * C.shape[1], "C", C.shape, func=func, hint=hint)
    C = as_float_array(C, "C", func=func, ndim=2, min_size=1)
    if C.shape[0] != C.shape[1]:
        raise ValueError(f"`C` of {func} must be a square (n, n) matrix; got shape {C.shape}.")
    if not given:
        check_memory(8 * _SINKHORN_COPIES * C.size, "C", C.shape, func=func, hint=hint)
    if spread:
        width = float(C.max()) - float(C.min())
        if not width <= MAX_LOGIT_RANGE:  # also catches an overflow of the difference to inf
            raise _spread_error(func, "C", width)
    return C


def _spread_error(func, name, spread):
    if name == "C":
        return ValueError(f"`C` of {func} must have max(C) - min(C) <= {MAX_LOGIT_RANGE:g} (the log-domain iterates "
                          f"would overflow); got a spread of {spread:g}.")
    return ValueError(f"`X`, `WQ` and `WK` of {func} give logits C = (X WQ^T)(X WK^T)^T with max(C) - min(C) = "
                      f"{spread:g} > {MAX_LOGIT_RANGE:g} (the log-domain iterates would overflow); scale them down.")


def _check_n_iter(n_iter, func, *, allow_none=True):
    """``n_iter`` as None (run to convergence) or an int in [1, 2**62]."""
    if n_iter is None and allow_none:
        return None
    if n_iter is None:
        raise TypeError(f"`n_iter` of {func} must be an integer >= 1; got None.")
    return check_int(n_iter, "n_iter", func=func, minimum=1, maximum=_MAX_COUNT)


def _check_knobs(n_iter, tol, max_iter, max_work, func):
    """The iteration arguments shared by :func:`sinkhorn`, :func:`attention` and :func:`energy`."""
    n_iter = _check_n_iter(n_iter, func)
    # fast paths for the common plain values (the checks below return them unchanged)
    if not (type(tol) is float and 0.0 < tol < 1.0):
        tol = check_interval(tol, "tol", 0.0, 1.0, func=func)
    if not (type(max_iter) is int and max_iter >= 1):
        max_iter = check_int(max_iter, "max_iter", func=func, minimum=1)
    budget = MAX_WORK if max_work is None else check_interval(max_work, "max_work", 0.0, np.inf, func=func)
    return n_iter, tol, max_iter, budget


def _check_weights(X, WQ, WK, WV, func, *, values=True):
    """The tokens and the weights as float64 arrays of matching shapes; ``WV`` only with ``values``
    (where it is required: None is refused like any non-array)."""
    X = as_float_array(X, "X", func=func, ndim=2, min_size=1)
    d = X.shape[1]
    WQ = as_float_array(WQ, "WQ", func=func, ndim=2, shape=(None, d))
    WK = as_float_array(WK, "WK", func=func, ndim=2, shape=(WQ.shape[0], d))
    if values:
        WV = as_float_array(WV, "WV", func=func, ndim=2, shape=(d, d))
    return X, WQ, WK, WV


def _check_token_matrix(X, WQ, func, *, copies, max_work, with_values=False):
    """Refuse, before the logits are formed, an (n, n) matrix above the memory limit or a product
    above the work budget: the logits cost 2 n m d + n^2 m, the field n d^2 + n^2 d more."""
    n, d = X.shape
    m = WQ.shape[0]
    if 8 * copies * n * n > MAX_BYTES:  # the message is formatted only when the call is refused
        check_memory(8 * copies * n * n, "X", X.shape, func=func,
                     hint=f"The attention holds about {copies} float64 (n, n) matrices, n = {n} tokens.")
    ops = 2 * n * m * d + n * n * m + ((n * d * d + n * n * d) if with_values else 0)
    if max_work is not None or not ops <= MAX_WORK:  # the message is formatted only when needed
        check_work(ops, "X", X.shape, func=func, max_work=max_work,
                   hint=f"n = {n} tokens, m = {m} query/key rows, d = {d}.")


def _logits_of(X, WQ, WK, func):
    """C = (X WQ^T)(X WK^T)^T, finite, or raise :class:`NonFiniteError` (callers silence NumPy's overflow
    warnings around it: an overflow is this error, never a RuntimeWarning)."""
    return check_finite_output((X @ WQ.T) @ (X @ WK.T).T, "the logits", func=func)


# --------------------------------------------------------------------------------- the iterations


def _step_ops(L, per_entry):
    return per_entry * L.size + _STEP_OPS


def _iterate(L, low, n_iter, tol, max_iter, budget, func, name):
    """Sinkhorn's iterations on L (max L = 0) in place, within the work budget.

    On scalings (matrix-vector products) when the logit range is at most SCALING_MAX_RANGE, in the log
    domain (n m exponentials per normalisation) beyond. With ``n_iter`` given its cost is checked up
    front (a ValueError naming ``n_iter``; a single normalisation above the budget names ``name``, the
    argument that fixes the size); to convergence, the normalisations stop at ``max_iter`` or
    where the budget is spent, whichever comes first. Returns (normalisations made, column error, the
    count the budget allowed). ``low`` is min L."""
    scaling = low >= -_kernels.SCALING_MAX_RANGE
    per = _step_ops(L, _SCALING_OPS if scaling else _LOG_OPS)
    kernel = _kernels.sinkhorn_scaling if scaling else _kernels.sinkhorn_log
    if n_iter is not None:
        if not n_iter * per <= budget:  # the message is formatted only when the call is refused
            check_work(n_iter * per, "n_iter", n_iter, func=func, max_work=budget,
                       hint=f"One normalisation of the {L.shape[0]} x {L.shape[1]} logits costs about {per:.3g}.")
        made, err = kernel(L, n_iter, 0.0, 1)
        return made, err, n_iter
    if not per <= budget:
        check_work(per, name, L.shape, func=func, max_work=budget, hint="This is the cost of a single normalisation.")
    allowed = int(min(max_iter, budget // per, _MAX_COUNT))
    made, err = kernel(L, 0, tol, allowed)
    return made, err, allowed


def _no_convergence(func, made, err, tol, max_iter, allowed, budget):
    if allowed < max_iter:
        return ValueError(f"{func}: no convergence within the work budget `max_work` = {budget:.3g} ({made} "
                          f"normalisations, column error {err:.3g} > `tol` {tol:g}); raise `max_work` or `tol`, "
                          f"or scale the logits down.")
    return ValueError(f"{func}: no convergence within `max_iter`={max_iter} normalisations (column error "
                      f"{err:.3g} > `tol` {tol:g}); raise `max_iter` or `tol`, or scale the logits down.")


def _sinkhorn_matrix(C, n_iter, tol, max_iter, budget, func, name):
    """log K^{n_iter} or log K^∞ of validated logits C, and (normalisations made, column error); logits
    spreading beyond MAX_LOGIT_RANGE are refused naming ``name`` ("C", or "X" for the logits of tokens).
    """
    top = C.max()
    # in Python floats (no RuntimeWarning): -inf when the difference overflows; it equals min L below
    # exactly (the rounding of x - top is monotone in x)
    low = float(C.min()) - float(top)
    if not -low <= MAX_LOGIT_RANGE:
        raise _spread_error(func, name, -low)
    L = C - top  # a global shift changes nothing and keeps the iterates near 0
    made, err, allowed = _iterate(L, low, n_iter, tol, max_iter, budget, func, name)
    if n_iter is None and not err <= tol:
        raise _no_convergence(func, made, err, tol, max_iter, allowed, budget)
    return L, made, err


# --------------------------------------------------------------------------------- public functions


def sinkhorn(C, n_iter=None, tol=1e-13, *, max_iter=_DEFAULT_MAX_ITER, return_info=False, max_work=None):
    r"""Sinkhorn's normalisation of the logits ``C`` (Eq. (5.3) of the thesis, chapter 5), in the log domain.

    Starting from :math:`\log K^0=C`, rows and columns are log-normalised alternately (rows first):
    :math:`L\leftarrow L-\mathrm{LSE}_j(L)` then :math:`L\leftarrow L-\mathrm{LSE}_i(L)`, and
    :math:`K=\exp(L)`. ``n_iter=1`` gives the row SoftMax :math:`K^1`; an odd count gives an exactly
    row-stochastic matrix. The result is invariant to adding :math:`f_i+g_j` to ``C`` once converged
    (Prop. 5.1). When the logits span at most 600, the same iterations run on scalings,
    :math:`K=\mathrm{diag}(u)e^{L}\mathrm{diag}(v)`, one matrix-vector product per normalisation, with
    scalings beyond :math:`10^{\pm100}` absorbed into :math:`L` (the log-domain stabilisation of App. 5.B's
    potentials); wider logits run in the log domain throughout.

    Parameters
    ----------
    C : array_like, shape (n, n)
        Finite real logits with max(C) - min(C) <= ``MAX_LOGIT_RANGE`` (1e300); converted to float64.
    n_iter : int >= 1, optional
        Number of normalisations (row, column, row, ...). ``None`` (default): iterate to convergence,
        :math:`K^\infty`.
    tol : float in (0, 1)
        With ``n_iter=None``: stop once, after a row step, :math:`\max_j|\sum_iK_{ij}-1|\le` ``tol``.
    max_iter : int >= 1
        With ``n_iter=None``: the most normalisations made; a ValueError naming ``max_iter`` is raised
        when the tolerance was not reached.
    return_info : bool
        Also return a dict with ``n_iter`` (normalisations made) and ``col_error``.
    max_work : float > 0, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, 1e11, at
        most about 10 s of one core). One normalisation is counted as 4 n^2 + 2000 on scalings and
        600 n^2 + 2000 in the log domain; with ``n_iter`` given a larger call is refused up front, and to convergence the
        iterations stop where the budget is spent (a ValueError naming ``max_work``).

    Returns
    -------
    K : ndarray, shape (n, n)
        :math:`K^{n\_iter}` or :math:`K^\infty`, float64, positive.
    info : dict
        Only with ``return_info=True``: ``{"n_iter": normalisations made, "col_error":`` the largest
        deviation of a column sum from 1 ``}``.

    Raises
    ------
    TypeError
        ``C`` not a real numeric array (strings, None, complex, objects); ``n_iter`` or ``max_iter`` not
        an integer (a bool, a float, a string); ``tol`` or ``max_work`` not a real number;
        ``return_info`` not a bool.
    ValueError
        ``C`` not a finite non-empty square matrix, of spread above ``MAX_LOGIT_RANGE`` or above the
        memory limit; ``n_iter`` or ``max_iter`` < 1; ``tol`` outside (0, 1); ``max_work`` not positive;
        ``n_iter`` normalisations above the work budget; no convergence within ``max_iter``
        normalisations or the work budget.
    """
    func = "theory.sinkhorn.sinkhorn"
    C = _check_logits(C, func)
    n_iter, tol, max_iter, budget = _check_knobs(n_iter, tol, max_iter, max_work, func)
    return_info = check_bool(return_info, "return_info", func=func)
    L, made, err = _sinkhorn_matrix(C, n_iter, tol, max_iter, budget, func, "C")
    K = np.exp(L)
    check_finite_output(K, "the Sinkhorn matrix", func=func)
    if return_info:
        if err < 0:
            err = float(np.max(np.abs(K.sum(axis=0) - 1.0)))
        return K, {"n_iter": int(made), "col_error": float(err)}
    return K


def sinkhorn_reference(C, n_iter, *, max_work=None):
    r"""Plain NumPy log-domain Sinkhorn: ``n_iter`` alternating normalisations, rows first (Eq. (5.3)).

    :math:`L\leftarrow C`, then for :math:`l=0,\dots,n\_iter-1`: :math:`L\leftarrow L-\mathrm{LSE}_j(L)`
    (rows) when :math:`l` is even, :math:`L\leftarrow L-\mathrm{LSE}_i(L)` (columns) when it is odd,
    with SciPy's ``logsumexp``; returns :math:`\exp(L)=K^{n\_iter}`. An independent reference for
    :func:`sinkhorn` (no shift, no scalings, no Numba), for tests and for other implementations.

    Parameters
    ----------
    C : array_like, shape (n, n)
        Finite real logits with max(C) - min(C) <= ``MAX_LOGIT_RANGE``; converted to float64.
    n_iter : int >= 1
        Number of normalisations.
    max_work : float > 0, optional
        Budget in floating-point operations (default 1e11); one normalisation is counted as
        200 n^2 + 1e6 (the cost of a ``logsumexp`` call), and a larger call is refused up front.

    Returns
    -------
    K : ndarray, shape (n, n)
        :math:`K^{n\_iter}`, float64.

    Raises
    ------
    TypeError
        ``C`` not a real numeric array; ``n_iter`` not an integer (None, a bool, a float, a string);
        ``max_work`` not a real number.
    ValueError
        ``C`` not a finite non-empty square matrix or of spread above ``MAX_LOGIT_RANGE``;
        ``n_iter`` < 1; the normalisations above the work budget.
    """
    func = "theory.sinkhorn.sinkhorn_reference"
    L = _check_logits(C, func, spread=True)
    n_iter = _check_n_iter(n_iter, func, allow_none=False)
    per = _REFERENCE_OPS * L.size + _REFERENCE_STEP_OPS
    if max_work is not None or not n_iter * per <= MAX_WORK:
        check_work(n_iter * per, "n_iter", n_iter, func=func, max_work=max_work,
                   hint=f"One normalisation of the {L.shape[0]} x {L.shape[1]} logits costs about {per:.3g}.")
    for it in range(n_iter):
        axis = 1 if it % 2 == 0 else 0
        L = L - logsumexp(L, axis=axis, keepdims=True)
    return check_finite_output(np.exp(L), "the Sinkhorn matrix", func=func)


def logits(X, WQ, WK, *, max_work=None):
    r"""The logits :math:`C_{ij}=(W_Qx_i)^\top W_Kx_j` of Eq. (5.1) (rows of ``X`` are the tokens).

    Parameters
    ----------
    X : array_like, shape (n, d)
        The tokens :math:`x_1,\dots,x_n` (rows), finite.
    WQ, WK : array_like, shape (m, d)
        Query and key matrices, finite.
    max_work : float > 0, optional
        Budget in floating-point operations (default 1e11) for 2 n m d + n^2 m, checked up front.

    Returns
    -------
    C : ndarray, shape (n, n)
        :math:`C=(XW_Q^\top)(XW_K^\top)^\top`, float64.

    Raises
    ------
    TypeError
        An argument not a real numeric array; ``max_work`` not a real number.
    ValueError
        ``X`` empty or not 2-D, ``WQ``/``WK`` not of shape (m, d) with d from ``X`` and the same m,
        an entry NaN or inf; the (n, n) matrix above the memory limit or the product above the work
        budget (naming ``X``).
    NonFiniteError
        A logit overflowed to inf.
    """
    func = "theory.sinkhorn.logits"
    X, WQ, WK, _ = _check_weights(X, WQ, WK, None, func, values=False)
    _check_token_matrix(X, WQ, func, copies=1, max_work=max_work)
    with np.errstate(over="ignore", invalid="ignore"):
        return _logits_of(X, WQ, WK, func)


def _matrix(C, kind, n_iter, tol, max_iter, budget, func):
    n = C.shape[0]
    if kind == "kernel":
        if C.max() > 700.0:
            raise NonFiniteError(f"{func}: exp(C) overflows (max logit {C.max():.3g} > 700); scale the weights down "
                                 f"or use kind='softmax' / 'sinkhorn'.")
        return np.exp(C) / n
    if kind == "softmax":
        n_iter = 1
    L, _, _ = _sinkhorn_matrix(C, n_iter, tol, max_iter, budget, func, "X")
    return check_finite_output(np.exp(L), "the Sinkhorn matrix", func=func)


def attention(X, WQ, WK, WV, kind="sinkhorn", *, n_iter=None, tol=1e-13, max_iter=_DEFAULT_MAX_ITER,
              max_work=None):
    r"""The attention vector field :math:`T^p` at the tokens (§5.4 of the thesis, chapter 5).

    :math:`T(x_i)=\sum_jA_{ij}W_Vx_j` with :math:`A=K^0/n` (``"kernel"``, :math:`T^0`),
    :math:`A=K^1` the row SoftMax (``"softmax"``, :math:`T^1`, Eq. (5.1)) or
    :math:`A=K^\infty=\mathrm{Sinkhorn}(C)` (``"sinkhorn"``, :math:`T^\infty`, Eq. (5.4)), for
    :math:`\mu=\frac1n\sum_j\delta_{x_j}` and the logits :math:`C=(XW_Q^\top)(XW_K^\top)^\top`.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The tokens (rows), finite.
    WQ, WK : array_like, shape (m, d)
        Query and key matrices, finite.
    WV : array_like, shape (d, d)
        Value matrix, finite.
    kind : {"sinkhorn", "softmax", "kernel"}
        The attention matrix (``KINDS``).
    n_iter : int >= 1, optional
        With ``kind="sinkhorn"``: a finite number of Sinkhorn normalisations instead of the limit
        (validated, and unused, with the other kinds).
    tol : float in (0, 1)
        Convergence tolerance of the Sinkhorn limit (as in :func:`sinkhorn`).
    max_iter : int >= 1
        The most normalisations of the Sinkhorn limit.
    max_work : float > 0, optional
        Budget in floating-point operations (default 1e11) of the products (2 n m d + n^2 m +
        n d^2 + n^2 d, checked up front) and of the normalisations (as in :func:`sinkhorn`).

    Returns
    -------
    T : ndarray, shape (n, d)
        Row i is :math:`T(x_i)`, float64.

    Raises
    ------
    TypeError
        An array not real numeric; ``kind`` not a string; ``n_iter`` or ``max_iter`` not an integer;
        ``tol`` or ``max_work`` not a real number.
    ValueError
        Shapes that do not match (``WQ``, ``WK`` of shape (m, d), ``WV`` (d, d), d from ``X``), an
        entry NaN or inf, ``kind`` not one of ``KINDS``, ``n_iter`` or ``max_iter`` < 1, ``tol``
        outside (0, 1); logits spreading beyond ``MAX_LOGIT_RANGE``; the (n, n) matrices above the
        memory limit or the work above the budget; no convergence of the Sinkhorn limit.
    NonFiniteError
        The logits, exp(C) (``"kernel"``, max logit above 700) or the field overflowed.
    """
    func = "theory.sinkhorn.attention"
    kind = check_choice(kind, "kind", KINDS, func=func)
    X, WQ, WK, WV = _check_weights(X, WQ, WK, WV, func)
    n_iter, tol, max_iter, budget = _check_knobs(n_iter, tol, max_iter, max_work, func)
    _check_token_matrix(X, WQ, func, copies=_SINKHORN_COPIES + 1, max_work=max_work, with_values=True)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow raises NonFiniteError below
        C = _logits_of(X, WQ, WK, func)
        A = _matrix(C, kind, n_iter, tol, max_iter, budget, func)
        T = A @ (X @ WV.T)
    return check_finite_output(T, "the attention field", func=func)


def energy(X, WQ, WK, kind="sinkhorn", *, tol=1e-13, max_iter=_DEFAULT_MAX_ITER, max_work=None):
    r"""The energy of Prop. 5.3 (thesis, chapter 5) at :math:`\mu=\frac1n\sum_j\delta_{x_j}`.

    ``"kernel"``: :math:`E^0=\frac1{2n^2}\sum_{ij}e^{C_{ij}}`; ``"sinkhorn"``:
    :math:`E^\infty=-\frac12\log n-\frac1{2n}\sum_{ij}K^\infty_{ij}(\log K^\infty_{ij}-C_{ij})`
    (:math:`=-\frac1{2n^2}\sum k\log(k/K^0)` with :math:`k=nK^\infty`). Row SoftMax has no such energy
    (Prop. 5.4), so ``"softmax"`` is refused. Under Assumption 5.2 the fields of :func:`attention`
    are :math:`T=-n\nabla_XE`.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The tokens (rows), finite.
    WQ, WK : array_like, shape (m, d)
        Query and key matrices, finite.
    kind : {"sinkhorn", "kernel"}
        Which energy.
    tol : float in (0, 1)
        Convergence tolerance of the Sinkhorn limit (``"sinkhorn"``; validated, and unused, with
        ``"kernel"``).
    max_iter : int >= 1
        The most normalisations of the Sinkhorn limit.
    max_work : float > 0, optional
        Budget in floating-point operations (default 1e11), as in :func:`attention`.

    Returns
    -------
    E : float
        :math:`E^0(X)` or :math:`E^\infty(X)`.

    Raises
    ------
    TypeError
        An array not real numeric; ``kind`` not a string; ``max_iter`` not an integer; ``tol`` or
        ``max_work`` not a real number.
    ValueError
        Shapes that do not match, an entry NaN or inf, ``kind`` not "sinkhorn" or "kernel",
        ``max_iter`` < 1, ``tol`` outside (0, 1); logits spreading beyond ``MAX_LOGIT_RANGE``; the
        (n, n) matrices above the memory limit or the work above the budget; no convergence.
    NonFiniteError
        The logits, exp(C) (``"kernel"``, max logit above 700) or the energy overflowed.
    """
    func = "theory.sinkhorn.energy"
    kind = check_choice(kind, "kind", ("kernel", "sinkhorn"), func=func)
    X, WQ, WK, _ = _check_weights(X, WQ, WK, None, func, values=False)
    _, tol, max_iter, budget = _check_knobs(None, tol, max_iter, max_work, func)
    _check_token_matrix(X, WQ, func, copies=_SINKHORN_COPIES + 1, max_work=max_work)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow raises NonFiniteError below
        C = _logits_of(X, WQ, WK, func)
        n = C.shape[0]
        if kind == "kernel":
            A = _matrix(C, "kernel", None, tol, max_iter, budget, func)
            return float(A.sum() / (2.0 * n))
        L, _, _ = _sinkhorn_matrix(C, None, tol, max_iter, budget, func, "X")
        K = np.exp(L)
        # log K - C = L - (C - C.max()) - C.max(); use L directly (log-domain, no log of 0)
        E = float(-0.5 * np.log(n) - np.sum(K * (L - C)) / (2.0 * n))
    if not np.isfinite(E):
        raise NonFiniteError(f"{func}: the energy overflowed to {E} (logits of magnitude {np.abs(C).max():.3g}); "
                             f"scale `X`, `WQ` or `WK` down.")
    return E


def l2_softmax_field(x, nodes, weights, WQ, WK, WV, eps, *, max_work=None):
    r"""The L2 self-attention field of §5.5 (thesis, chapter 5) for a weighted discrete measure, at points ``x``.

    :math:`T^1_{\mu,\varepsilon}(x)=\frac1\varepsilon\sum_j\tilde k^1_\varepsilon(x,x_j)w_jW_Vx_j` with
    :math:`\tilde k^1_\varepsilon(x,\cdot)w=\mathrm{SoftMax}_j(\tilde c(x,x_j)/\varepsilon+\log w_j)`,
    :math:`\tilde c(x,x')=-\frac12\|W_Qx-W_Kx'\|^2`, and :math:`\mu=\sum_jw_j\delta_{x_j}` (``weights`` > 0,
    normalised here to sum 1). Prop. 5.6 studies its centred version
    :math:`T^1_{\mu,\varepsilon}+\frac1\varepsilon W_Q^\top W_Q x` as :math:`\varepsilon\to0`.

    Parameters
    ----------
    x : array_like, shape (p, d)
        Evaluation points, finite.
    nodes : array_like, shape (n, d)
        The atoms :math:`x_j` of :math:`\mu`, finite.
    weights : array_like, shape (n,)
        Positive finite weights :math:`w_j` (normalised to sum 1).
    WQ, WK : array_like, shape (m, d)
        Query and key matrices, finite.
    WV : array_like, shape (d, d)
        Value matrix, finite.
    eps : float > 0
        Bandwidth :math:`\varepsilon`.
    max_work : float > 0, optional
        Budget in floating-point operations (default 1e11) for about p n (m + d + 30), checked up front.

    Returns
    -------
    T : ndarray, shape (p, d)
        Row i is :math:`T^1_{\mu,\varepsilon}(x_i)`, float64.

    Raises
    ------
    TypeError
        An array not real numeric; ``eps`` or ``max_work`` not a real number.
    ValueError
        Shapes that do not match (d from ``nodes``, n weights), an entry NaN or inf, a weight <= 0,
        ``eps`` not positive and finite; the (p, n) matrices above the memory limit or the work above
        the budget.
    NonFiniteError
        The field overflowed (``eps`` so small that the logits leave the float64 range).
    """
    func = "theory.sinkhorn.l2_softmax_field"
    nodes = as_float_array(nodes, "nodes", func=func, ndim=2, min_size=1)
    d = nodes.shape[1]
    x = as_float_array(x, "x", func=func, ndim=2, shape=(None, d))
    w = as_float_array(weights, "weights", func=func, ndim=1, shape=(nodes.shape[0],))
    if not np.all(w > 0):
        raise ValueError(f"`weights` of {func} must be positive.")
    _, WQ, WK, WV = _check_weights(nodes, WQ, WK, WV, func)
    eps = check_interval(eps, "eps", 0.0, np.inf, func=func)
    p, n, m = x.shape[0], nodes.shape[0], WQ.shape[0]
    if 8 * 5 * p * n > MAX_BYTES:
        check_memory(8 * 5 * p * n, "x" if p >= n else "nodes", x.shape if p >= n else nodes.shape, func=func,
                     hint=f"The field holds about five float64 (p, n) matrices, p = {p} points, n = {n} nodes.")
    ops = p * n * (m + d + 30) + (p + n) * m * d
    if max_work is not None or not ops <= MAX_WORK:
        check_work(ops, "x" if p >= n else "nodes", x.shape if p >= n else nodes.shape, func=func,
                   max_work=max_work, hint=f"p = {p} points, n = {n} nodes, m = {m}, d = {d}.")
    with np.errstate(over="ignore"):
        total = w.sum()
    if not np.isfinite(total):  # weights near the float64 maximum: normalise by the largest first
        w = w / w.max()
        total = w.sum()
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        q = x @ WQ.T
        k = nodes @ WK.T
        cost = -0.5 * (np.sum(q * q, axis=1)[:, None] - 2.0 * q @ k.T + np.sum(k * k, axis=1)[None, :])
        logits_ = cost / eps + np.log(w / total)[None, :]
        A = np.exp(logits_ - logsumexp(logits_, axis=1, keepdims=True))
        T = A @ (nodes @ WV.T) / eps
    return check_finite_output(T, "the L2 attention field", func=func,
                               hint="Scale `x`, `nodes` or the weights down, or raise `eps`.")
