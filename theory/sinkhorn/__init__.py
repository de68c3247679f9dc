r"""Sinkhorn attention (paper key ``sinkformers``: M. E. Sander's thesis, chapter 5, "Sinkformers").

Notation of the chapter: tokens :math:`x_1,\dots,x_n\in\mathbb R^d` (the rows of ``X``), query and key
matrices :math:`W_Q,W_K\in\mathbb R^{m\times d}`, value matrix :math:`W_V\in\mathbb R^{d\times d}`, logits
:math:`C_{ij}=(W_Qx_i)^\top W_Kx_j` and :math:`K^0=\exp(C)` entrywise. Sinkhorn's iterations (Eq. (5.3))
alternate the row normalisation :math:`N_R(K)_{ij}=K_{ij}/\sum_lK_{il}` (first) and the column
normalisation :math:`N_C`; :math:`K^1=N_R(K^0)` is the row SoftMax of the Transformer and the limit
:math:`K^\infty=\mathrm{Sinkhorn}(C)` is doubly stochastic (§5.3).

* :func:`sinkhorn`: :math:`K^l` or :math:`K^\infty`, computed in the log domain (App. 5.B writes the same
  iterations on potentials with target marginals :math:`1/n`; the matrix here has unit row and column sums,
  i.e. it is :math:`n` times that plan).
* :func:`attention`: the attention vector fields of §5.4 at the tokens, for the empirical measure
  :math:`\mu=\frac1n\sum_j\delta_{x_j}`: :math:`T^0(x_i)=\frac1n\sum_jK^0_{ij}W_Vx_j` (``"kernel"``),
  :math:`T^1(x_i)=\sum_jK^1_{ij}W_Vx_j` (``"softmax"``, Eq. (5.1)) and
  :math:`T^\infty(x_i)=\sum_jK^\infty_{ij}W_Vx_j` (``"sinkhorn"``, Eq. (5.4)). With this measure the
  kernels of §5.4 are :math:`k^p(x_i,x_j)=nK^p_{ij}` for p in {1, ∞}, which is why :math:`T^0` carries
  the factor :math:`1/n` and the other two do not.
* :func:`energy`: the energies of Prop. 5.3 at the empirical measure,
  :math:`E^0(X)=\mathcal F^0(\mu)=\frac1{2n^2}\sum_{ij}K^0_{ij}` and
  :math:`E^\infty(X)=\mathcal F^\infty(\mu)=-\frac1{2n^2}\sum_{ij}k_{ij}\log(k_{ij}/K^0_{ij})` with
  :math:`k=nK^\infty`; under Assumption 5.2 (:math:`W_Q^\top W_K=W_K^\top W_Q=-W_V`) the vector fields
  are :math:`T=-n\nabla_XE` (Prop. 5.3).
* :func:`sinkhorn_reference`: a plain NumPy log-domain implementation, for tests.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from .._errors import NonFiniteError
from .._validation import as_float_array, check_choice, check_finite_output, check_int, check_interval
from . import _kernels

__all__ = ["sinkhorn", "sinkhorn_reference", "attention", "logits", "energy", "l2_softmax_field", "KINDS",
           "MAX_LOGIT_RANGE"]

#: The attention kinds of :func:`attention`: K^0 ("kernel"), K^1 ("softmax"), K^∞ ("sinkhorn").
KINDS = ("kernel", "softmax", "sinkhorn")

#: Largest accepted spread max(C) - min(C) of the logits. The log-domain iterates are C plus two
#: potentials bounded by this spread, so below it no subtraction overflows and no NaN can appear.
MAX_LOGIT_RANGE = 1e300

_DEFAULT_MAX_ITER = 100_000


def _check_logits(C, func):
    C = as_float_array(C, "C", func=func, ndim=2, min_size=1)
    if C.shape[0] != C.shape[1]:
        raise ValueError(f"`C` of {func} must be a square (n, n) matrix; got shape {C.shape}.")
    spread = float(C.max()) - float(C.min())
    if not spread <= MAX_LOGIT_RANGE:  # also catches an overflow of the difference to inf
        raise ValueError(f"`C` of {func} must have max(C) - min(C) <= {MAX_LOGIT_RANGE:g} (the log-domain iterates "
                         f"would overflow); got a spread of {spread:g}.")
    return C


def _run_kernel(L, n_iter, tol, max_iter):
    """Sinkhorn's iterations on L (max L = 0) in place: on scalings (matrix-vector products) when the logit range
    is at most SCALING_MAX_RANGE, in the log domain (n m exponentials per normalisation) beyond."""
    if L.min() >= -_kernels.SCALING_MAX_RANGE:
        return _kernels.sinkhorn_scaling(L, n_iter, tol, max_iter)
    return _kernels.sinkhorn_log(L, n_iter, tol, max_iter)


def sinkhorn(C, n_iter=None, tol=1e-13, *, max_iter=_DEFAULT_MAX_ITER, return_info=False):
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
        Finite logits with max(C) - min(C) <= ``MAX_LOGIT_RANGE`` (1e300).
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

    Returns
    -------
    K : ndarray, shape (n, n)
    """
    func = "theory.sinkhorn.sinkhorn"
    C = _check_logits(C, func)
    tol = check_interval(tol, "tol", 0.0, 1.0, func=func)
    max_iter = check_int(max_iter, "max_iter", func=func, minimum=1)
    if n_iter is None:
        nit = 0
    else:
        nit = check_int(n_iter, "n_iter", func=func, minimum=1)
    L = C - C.max()  # a global shift changes nothing and keeps the iterates near 0
    made, err = _run_kernel(L, nit, tol, max_iter)
    if n_iter is None and not err <= tol:
        raise ValueError(f"{func}: no convergence within `max_iter`={max_iter} normalisations (column error "
                         f"{err:.3g} > tol {tol:g}); raise `max_iter` or `tol`, or scale the logits down.")
    K = np.exp(L)
    check_finite_output(K, "the Sinkhorn matrix", func=func)
    if return_info:
        if err < 0:
            err = float(np.max(np.abs(K.sum(axis=0) - 1.0)))
        return K, {"n_iter": int(made), "col_error": float(err)}
    return K


def sinkhorn_reference(C, n_iter):
    """Plain NumPy log-domain Sinkhorn (``n_iter`` alternating normalisations, rows first), for tests."""
    L = np.array(C, dtype=np.float64)
    for it in range(int(n_iter)):
        axis = 1 if it % 2 == 0 else 0
        L = L - logsumexp(L, axis=axis, keepdims=True)
    return np.exp(L)


def _check_weights(X, WQ, WK, WV, func):
    X = as_float_array(X, "X", func=func, ndim=2, min_size=1)
    d = X.shape[1]
    WQ = as_float_array(WQ, "WQ", func=func, ndim=2, shape=(None, d))
    WK = as_float_array(WK, "WK", func=func, ndim=2, shape=(WQ.shape[0], d))
    if WV is not None:
        WV = as_float_array(WV, "WV", func=func, ndim=2, shape=(d, d))
    return X, WQ, WK, WV


def logits(X, WQ, WK):
    r"""The logits :math:`C_{ij}=(W_Qx_i)^\top W_Kx_j` of Eq. (5.1) (rows of ``X`` are the tokens)."""
    X, WQ, WK, _ = _check_weights(X, WQ, WK, None, "theory.sinkhorn.logits")
    C = (X @ WQ.T) @ (X @ WK.T).T
    return check_finite_output(C, "the logits", func="theory.sinkhorn.logits")


def _matrix(C, kind, n_iter, tol, func):
    n = C.shape[0]
    if kind == "kernel":
        if C.max() > 700.0:
            raise NonFiniteError(f"{func}: exp(C) overflows (max logit {C.max():.3g} > 700); scale the weights down "
                                 f"or use kind='softmax' / 'sinkhorn'.")
        return np.exp(C) / n
    if kind == "softmax":
        return sinkhorn(C, n_iter=1)
    return sinkhorn(C, n_iter=n_iter, tol=tol)


def attention(X, WQ, WK, WV, kind="sinkhorn", *, n_iter=None, tol=1e-13):
    r"""The attention vector field :math:`T^p` at the tokens (§5.4 of the thesis, chapter 5).

    :math:`T(x_i)=\sum_jA_{ij}W_Vx_j` with :math:`A=K^0/n` (``"kernel"``, :math:`T^0`),
    :math:`A=K^1` the row SoftMax (``"softmax"``, :math:`T^1`, Eq. (5.1)) or
    :math:`A=K^\infty=\mathrm{Sinkhorn}(C)` (``"sinkhorn"``, :math:`T^\infty`, Eq. (5.4)), for
    :math:`\mu=\frac1n\sum_j\delta_{x_j}`.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The tokens (rows).
    WQ, WK : array_like, shape (m, d)
    WV : array_like, shape (d, d)
    kind : {"sinkhorn", "softmax", "kernel"}
    n_iter : int, optional
        With ``kind="sinkhorn"``: a finite number of Sinkhorn normalisations instead of the limit.
    tol : float
        Convergence tolerance of the Sinkhorn limit.

    Returns
    -------
    T : ndarray, shape (n, d)
        Row i is :math:`T(x_i)`.
    """
    func = "theory.sinkhorn.attention"
    kind = check_choice(kind, "kind", KINDS, func=func)
    X, WQ, WK, WV = _check_weights(X, WQ, WK, WV, func)
    C = check_finite_output((X @ WQ.T) @ (X @ WK.T).T, "the logits", func=func)
    A = _matrix(C, kind, n_iter, tol, func)
    return check_finite_output(A @ (X @ WV.T), "the attention field", func=func)


def energy(X, WQ, WK, kind="sinkhorn", *, tol=1e-13):
    r"""The energy of Prop. 5.3 (thesis, chapter 5) at :math:`\mu=\frac1n\sum_j\delta_{x_j}`.

    ``"kernel"``: :math:`E^0=\frac1{2n^2}\sum_{ij}e^{C_{ij}}`; ``"sinkhorn"``:
    :math:`E^\infty=-\frac12\log n-\frac1{2n}\sum_{ij}K^\infty_{ij}(\log K^\infty_{ij}-C_{ij})`
    (:math:`=-\frac1{2n^2}\sum k\log(k/K^0)` with :math:`k=nK^\infty`). Row SoftMax has no such energy
    (Prop. 5.4), so ``"softmax"`` is refused.
    """
    func = "theory.sinkhorn.energy"
    kind = check_choice(kind, "kind", ("kernel", "sinkhorn"), func=func)
    X, WQ, WK, _ = _check_weights(X, WQ, WK, None, func)
    C = check_finite_output((X @ WQ.T) @ (X @ WK.T).T, "the logits", func=func)
    n = C.shape[0]
    if kind == "kernel":
        A = _matrix(C, "kernel", None, tol, func)
        return float(A.sum() / (2.0 * n))
    L = C - C.max()
    _, err = _run_kernel(L, 0, tol, _DEFAULT_MAX_ITER)
    if not err <= tol:
        raise ValueError(f"{func}: Sinkhorn did not converge (column error {err:.3g} > `tol` {tol:g}).")
    K = np.exp(L)
    # log K - C = L - (C - C.max()) - C.max(); use L directly (log-domain, no log of 0)
    return float(-0.5 * np.log(n) - np.sum(K * (L - C)) / (2.0 * n))


def l2_softmax_field(x, nodes, weights, WQ, WK, WV, eps):
    r"""The L2 self-attention field of §5.5 (thesis, chapter 5) for a weighted discrete measure, at points ``x``.

    :math:`T^1_{\mu,\varepsilon}(x)=\frac1\varepsilon\sum_j\tilde k^1_\varepsilon(x,x_j)w_jW_Vx_j` with
    :math:`\tilde k^1_\varepsilon(x,\cdot)w=\mathrm{SoftMax}_j(\tilde c(x,x_j)/\varepsilon+\log w_j)`,
    :math:`\tilde c(x,x')=-\frac12\|W_Qx-W_Kx'\|^2`, and :math:`\mu=\sum_jw_j\delta_{x_j}` (``weights`` > 0,
    normalised here to sum 1). Prop. 5.6 studies its centred version
    :math:`T^1_{\mu,\varepsilon}+\frac1\varepsilon W_Q^\top W_Q x` as :math:`\varepsilon\to0`.

    Parameters
    ----------
    x : array_like, shape (p, d)
        Evaluation points.
    nodes : array_like, shape (n, d)
    weights : array_like, shape (n,)
        Positive weights.
    WQ, WK : array_like, shape (m, d)
    WV : array_like, shape (d, d)
    eps : float > 0
        Bandwidth.

    Returns
    -------
    ndarray, shape (p, d)
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
    q = x @ WQ.T
    k = nodes @ WK.T
    cost = -0.5 * (np.sum(q * q, axis=1)[:, None] - 2.0 * q @ k.T + np.sum(k * k, axis=1)[None, :])
    logits_ = cost / eps + np.log(w / w.sum())[None, :]
    A = np.exp(logits_ - logsumexp(logits_, axis=1, keepdims=True))
    return check_finite_output(A @ (nodes @ WV.T) / eps, "the L2 attention field", func=func)
