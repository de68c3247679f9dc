r"""Public API of the residual network of ``implicit-reg`` (Marion, Wu, Sander, Biau, "Implicit
regularization of deep residual networks towards neural ODEs"), Sections 3 and 5.1.

Model (Eq. (1), written out in Eq. (3)), with the paper's names: input dimension d, hidden width q,
residual (inner) width m, output dimension d' (``d_out``), depth L, q >= max(d, d'):

.. math::
    h_0 = A x, \qquad
    h_{k+1} = h_k + \frac{1}{L\sqrt m} V_{k+1}\,\sigma\Big(\frac{1}{\sqrt q} W_{k+1} h_k\Big),
    \quad k = 0, \dots, L-1, \qquad F(x) = B h_L,

loss :math:`\ell = \frac1n\sum_i \|F(x_i) - y_i\|^2` (no 1/2), gradient flow Eq. (4) with the
depth-scaled metric (the residual weights move L times faster than A and B), clipped flow Eq. (5).

Array index k of ``V`` and ``W`` stores the paper's layer k + 1 (V_1 .. V_L).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._validation import plain

from .._validation import (
    NonFiniteError,
    as_float_array,
    check_choice,
    check_finite_output,
    check_int,
    check_interval,
)
from . import _kernels

__all__ = ["ACTIVATIONS", "INIT_KINDS", "METHODS", "Params", "forward", "initialize", "loss_and_gradient",
           "synthetic_data", "train"]

ACTIVATIONS = ("tanh", "gelu", "sin", "relu", "identity")
"""Accepted activation names (elementwise sigma); GELU is the exact x Phi(x)."""
_CODES = {"tanh": _kernels.TANH, "gelu": _kernels.GELU, "sin": _kernels.SIN, "relu": _kernels.RELU,
          "identity": _kernels.IDENTITY}
INIT_KINDS = ("paper", "iid", "smooth")
"""Accepted ``kind`` of :func:`initialize`."""
METHODS = ("gd", "clipped")
"""Accepted ``method`` of :func:`train`: plain GD of Eq. (4), clipped GD of Eq. (5)."""

_OVERFLOW_HINT = "Reduce the weights, the input or the learning rate."


#: Largest number of float64 entries a public function allocates (8 GB); larger sizes are refused up front.
MAX_ENTRIES = 10**9
#: Default work budget of :func:`train`, in floating-point operations (about 10 minutes at a few Gflop/s).
DEFAULT_MAX_FLOPS = 2e12


def _as_rng(rng, func):
    """None (fresh entropy), an int seed >= 0 or a numpy.random.Generator, as everywhere in the package."""
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, (int, np.integer)):
        raise TypeError(f"`rng` of {func} must be None, an int seed or a numpy.random.Generator; "
                        f"got {type(rng).__name__}.")
    if rng < 0:
        raise ValueError(f"`rng` of {func} must be a non-negative seed; got {rng}.")
    return np.random.default_rng(int(rng))


def _check_entries(count, what, func):
    if count > MAX_ENTRIES:
        size = f"{count:.3e}" if count < 10**300 else f"a {len(str(count))}-digit number of"
        raise ValueError(f"{func}: {what} would hold {size} float64 entries (> {MAX_ENTRIES:.0e}); reduce the sizes.")


from .._implicit_params import Params
from .._implicit_params import as_inputs as _as_X
from .._implicit_params import as_params as _as_params
from .._implicit_params import as_targets as _as_Y


def _code(activation, func):
    return _CODES[check_choice(activation, "activation", ACTIVATIONS, func=func)]


# Work per layer n m q from which the samples are split into two chunks whose forward and backward
# passes run in two threads; below it, one chunk in one thread (the worker's start, some 50 us, and
# the smaller matrix products cost more than they save: measured on 2 cores, one chunk is faster at
# n m q <= 16384, two are 1.2x faster at 32768 and 1.4x at 51200). The split depends on the sizes
# only (never on the number of threads), and so do the results (see theory.implicit._kernels).
_PARALLEL_WORK = 1 << 15


def _chunks(n, p: Params):
    return 2 if n >= 2 and n * p.m * p.q >= _PARALLEL_WORK else 1


def _split(A, chunks):
    """The rows of A (n, k) as ``chunks`` consecutive blocks (chunks, n0, k), the last one zero-padded."""
    n = A.shape[0]
    n0 = -(-n // chunks)
    if n0 * chunks == n:
        return A.reshape(chunks, n0, A.shape[1])
    out = np.zeros((chunks * n0, A.shape[1]))
    out[:n] = A
    return out.reshape(chunks, n0, A.shape[1])


def _rows(a, n):
    """(C, n0, k) chunked rows back to the (n, k) rows of the n samples."""
    return a.reshape(a.shape[0] * a.shape[1], a.shape[2])[:n]


def _forward(code, X, p: Params, func):
    n = X.shape[0]
    L, q, m = p.V.shape
    h = np.empty((L + 1, n, q))
    _kernels._forward(code, X, p.A, p.V, p.W, h, np.empty((L, n, m)), np.empty((n, q)))
    check_finite_output(h, "the hidden states", func=func, hint=_OVERFLOW_HINT)
    F = h[L] @ p.B.T
    check_finite_output(F, "the output", func=func, hint=_OVERFLOW_HINT)
    return h, None, F


def _loss_grad(code, X, Y, p: Params, func, chunks=None):
    """Loss and gradients: one fused kernel (forward pass, Eq. (13) backward, Eq. (15)), then Eqs. (14), (16)."""
    n = X.shape[0]
    L, q, m = p.V.shape
    chunks = _chunks(n, p) if chunks is None else chunks
    Xc, Yc = _split(X, chunks), _split(Y, chunks)
    h, act, der, res, P, G, tmp, gV1, gW1 = _kernels.workspace(L, chunks, Xc.shape[1], q, m, p.d_out)
    gV = np.empty_like(p.V)
    gW = np.empty_like(p.W)
    _kernels.loss_grad(code, n, Xc, Yc, p.A, p.B, p.V, p.W, h, act, der, res, P, G, tmp, gV, gW, gV1, gW1)
    hL = _rows(h[:, L], n)
    # a non-finite h_k makes h_L non-finite (the residual connection carries it forward)
    check_finite_output(hL, "the hidden states", func=func, hint=_OVERFLOW_HINT)
    check_finite_output(res, "the output", func=func, hint=_OVERFLOW_HINT)
    # an overflow here is reported below, by name, as NonFiniteError (not as a RuntimeWarning)
    with np.errstate(over="ignore", invalid="ignore"):
        res = _rows(res, n)
        loss = float(np.sum(res * res) / n)
        gA = _rows(P, n).T @ X  # Eq. (14): sum_i p_{0,i} x_i^T
        gB = (2.0 / n) * (res.T @ hL)  # Eq. (16)
    grads = Params(gA, gV, gW, gB)
    for name, arr in grads.as_dict().items():
        check_finite_output(arr, f"the gradient with respect to {name}", func=func, hint=_OVERFLOW_HINT)
    if not np.isfinite(loss):
        raise NonFiniteError(f"{func}: the loss overflowed to NaN or inf. {_OVERFLOW_HINT}")
    return loss, grads


def forward(X, params, activation="tanh"):
    r"""Hidden states and output of the residual network of ``implicit-reg`` Eq. (1)/(3).

    .. math::
        h_0 = A x, \quad
        h_{k+1} = h_k + \frac{1}{L\sqrt m} V_{k+1}\sigma\Big(\frac{W_{k+1} h_k}{\sqrt q}\Big), \quad
        F(x) = B h_L.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Inputs x_1 .. x_n, one per row.
    params : Params or mapping with keys "A", "V", "W", "B"
        A (q, d), V (L, q, m), W (L, m, q), B (d', q); ``V[k]``, ``W[k]`` are the paper's layer k + 1.
    activation : {"tanh", "gelu", "sin", "relu", "identity"}
        The elementwise sigma (see :data:`ACTIVATIONS`).

    Returns
    -------
    h : ndarray, shape (L + 1, n, q)
        h_0 .. h_L for every sample.
    F : ndarray, shape (n, d')
        The outputs F(x_i) = B h_L.

    Raises
    ------
    TypeError, ValueError
        Wrong kinds, inconsistent shapes, non-finite input, unknown activation.
    theory.NonFiniteError
        The states overflowed.

    Notes
    -----
    O(L n q m) operations. The paper's theory assumes sigma C^2, Lipschitz, bounded, sigma(0) = 0
    (tanh, sin); GELU is its experiments' choice (unbounded) and ReLU its counter-example (App. D).

    References
    ----------
    ``implicit-reg`` Eq. (1), (3).

    Examples
    --------
    >>> import numpy as np
    >>> from theory.implicit import initialize, forward
    >>> p = initialize(3, 4, 5, np.random.default_rng(0))
    >>> h, F = forward(np.ones((2, 3)), p)
    >>> h.shape, F.shape, bool(np.all(h == 1.0))   # V = 0: every layer is the identity, F = x
    ((6, 2, 3), (2, 3), True)
    """
    func = "theory.implicit.forward"
    code = _code(activation, func)
    p = _as_params(params, func, copy=False)  # read only
    X = _as_X(X, p, func)
    h, _, F = _forward(code, X, p, func)
    return h, F


def loss_and_gradient(X, Y, params, activation="tanh"):
    r"""Squared loss and its exact gradient by backpropagation (``implicit-reg`` Eqs. (13)-(16), corrected).

    .. math::
        \ell = \frac1n \sum_{i=1}^n \|F(x_i) - y_i\|^2, \qquad
        p_{L,i} = 2 B^\top (F(x_i) - y_i), \qquad
        p_{k,i} = p_{k+1,i} + \frac1L \partial_1 f(h_{k,i}, Z_{k+1})^\top p_{k+1,i},

    :math:`\partial\ell/\partial A = \frac1n\sum_i p_{0,i} x_i^\top` (14),
    :math:`\partial\ell/\partial Z_{k} = \frac1{nL}\sum_i \partial_2 f(h_{k-1,i}, Z_k)^\top p_{k,i}` (15),
    :math:`\partial\ell/\partial B = \frac2n\sum_i (F(x_i) - y_i) h_{L,i}^\top` (16), with
    :math:`f(h, (V, W)) = V\sigma(Wh/\sqrt q)/\sqrt m`.

    Parameters
    ----------
    X : array_like, shape (n, d)
    Y : array_like, shape (n, d')
    params : Params or mapping, see :func:`forward`
    activation : {"tanh", "gelu", "sin", "relu", "identity"}

    Returns
    -------
    loss : float
    grads : Params
        dl/dA (q, d), dl/dV (L, q, m), dl/dW (L, m, q), dl/dB (d', q): plain Euclidean gradients
        (no depth factor; :func:`train` applies the factor L of Eq. (4)).

    Raises
    ------
    TypeError, ValueError, theory.NonFiniteError

    Notes
    -----
    O(L n q m) time, O(L n (q + m)) memory (the states are stored). Corrections to the printing,
    shown by tests/test_implicit.py against central finite differences: Eq. (13) prints
    :math:`\partial_1 f\,p_{k+1}` where the transpose :math:`(\partial_1 f)^\top p_{k+1}` is needed;
    the theses' version of Eq. (15) ((3.15)) prints :math:`p_{k-1,i}` instead of 004's :math:`p_{k,i}`.
    ReLU uses :math:`\sigma'(0) = 0`.

    References
    ----------
    ``implicit-reg`` Eqs. (13)-(16).
    """
    func = "theory.implicit.loss_and_gradient"
    code = _code(activation, func)
    p = _as_params(params, func, copy=False)  # read only
    X = _as_X(X, p, func)
    Y = _as_Y(Y, X.shape[0], p, func)
    return _loss_grad(code, X, Y, p, func)


def initialize(d, m, L, rng, *, q=None, d_out=None, kind="paper", lengthscale=None):
    r"""Initial parameters of Section 3 of ``implicit-reg`` (and the smooth initialisation of Section 4.3).

    :math:`A(0) = (I_d; 0_{(q-d)\times d})` (input into the first d coordinates),
    :math:`B(0) = (0_{d'\times(q-d')}, I_{d'})` (reads the last d'), and

    * ``kind="paper"``: :math:`V_k(0) = 0`, :math:`W_k(0) = W` for every k, one matrix with i.i.d. N(0, 1)
      entries (weight-tied; the 1/sqrt(q) of Eq. (3) makes W h / sqrt q of order one);
    * ``kind="iid"``: :math:`V_k(0) = 0`, independent N(0, 1) matrices W_k (the comparison of Table 1);
    * ``kind="smooth"`` (Section 4.3): :math:`V_k(0) = \mathcal V_0(k/L)`, :math:`W_k(0) = \mathcal W_0(k/L)`,
      k = 1..L, every entry of :math:`\mathcal V_0` and :math:`\mathcal W_0` an independent centred Gaussian
      process on [0, 1] with covariance :math:`K(s, s') = \exp(-(s - s')^2/(2\ell^2))` (unit variance).

    Construction of the smooth paths (exact, and one fixed function for every depth). The kernel factorises
    as :math:`K(s, s') = \sum_{j\ge0}\varphi_j(s)\varphi_j(s')` with
    :math:`\varphi_j(s) = e^{-u^2/2}u^j/\sqrt{j!}`, :math:`u = (s - 1/2)/\ell` (the Taylor series of
    :math:`e^{uu'}`), so :math:`f(s) = \sum_j z_j\varphi_j(s)` with i.i.d. N(0, 1) coefficients :math:`z_j` is
    a centred Gaussian process with covariance K. The series is cut at the first J with
    :math:`P(\mathrm{Poisson}(1/(4\ell^2)) \ge J) < 10^{-17}`, which bounds the covariance error by 1e-17
    on [0, 1] (:math:`|\sum_{j\ge J}\varphi_j(s)\varphi_j(s')|` is at most that Poisson tail); the
    :math:`\varphi_j` are evaluated in log scale and satisfy :math:`\sum_j\varphi_j^2 = 1`, so no term exceeds
    one and there is no cancellation (rounding in the logarithms gives a covariance error of about
    :math:`10^{-15}/\ell^2`: 1e-13 at :math:`\ell = 0.1`, 1e-12 at 0.03). Why not the alternatives: a Cholesky or eigen-decomposition of the
    L x L Gram matrix at the points k/L is numerically singular beyond L ~ 30 (it needs jitter or clipping,
    which changes the covariance) and draws a different function at each L; random Fourier features give
    the right covariance only on average over the frequencies (each draw is a finite sum of cosines, not a
    Gaussian process). Here the coefficients do not depend on L: with the same ``rng`` seed and the same
    (d, m, q, d', lengthscale), two depths L and L' discretise the same paths, ``V_k`` at s = k/L.
    Random draws, in order: the coefficients of :math:`\mathcal V_0` (J x q x m), then of
    :math:`\mathcal W_0` (J x m x q).

    Parameters
    ----------
    d : int >= 1
        Input dimension.
    m : int >= 1
        Residual (inner) width.
    L : int >= 1
        Depth.
    rng : None, int or numpy.random.Generator
    q : int, optional
        Hidden width, q >= max(d, d'); default max(d, d') (the experiments' q = d = d', A = B = I).
    d_out : int, optional
        Output dimension d'; default d.
    kind : {"paper", "iid", "smooth"}
    lengthscale : float > 0, optional
        The lengthscale :math:`\ell` of ``kind="smooth"`` (default 0.1; at most 20 000 series terms, i.e.
        :math:`\ell \gtrsim 0.004`); an error with the other kinds.

    Returns
    -------
    Params
        A (q, d), V (L, q, m), W (L, m, q), B (d', q).

    Notes
    -----
    With V = 0 (kinds "paper", "iid") and q >= d + d', B(0) A(0) = 0 and the initial output is 0; with
    q = d = d' it is x.

    Examples
    --------
    >>> import numpy as np
    >>> p = initialize(2, 3, 4, np.random.default_rng(0))
    >>> p.W.shape, bool(np.all(p.W == p.W[0])), bool(np.all(p.V == 0))
    ((4, 3, 2), True, True)
    >>> a = initialize(2, 3, 4, np.random.default_rng(1), kind="smooth", lengthscale=0.2)
    >>> b = initialize(2, 3, 8, np.random.default_rng(1), kind="smooth", lengthscale=0.2)
    >>> bool(np.allclose(a.W, b.W[1::2], rtol=0, atol=1e-13))   # same path: s = k/4 = 2k/8
    True
    """
    func = "theory.implicit.initialize"
    d = check_int(d, "d", func=func, minimum=1)
    m = check_int(m, "m", func=func, minimum=1)
    L = check_int(L, "L", func=func, minimum=1)
    d_out = d if d_out is None else check_int(d_out, "d_out", func=func, minimum=1)
    q = max(d, d_out) if q is None else check_int(q, "q", func=func, minimum=max(d, d_out))
    kind = check_choice(kind, "kind", INIT_KINDS, func=func)
    if kind == "smooth":
        ell = 0.1 if lengthscale is None else check_interval(lengthscale, "lengthscale", 0.0, np.inf, func=func)
    elif lengthscale is not None:
        raise ValueError(f"`lengthscale` of {func} applies to kind='smooth' only; got lengthscale={lengthscale!r} "
                         f"with kind={kind!r}.")
    rng = _as_rng(rng, func)
    _check_entries(2 * L * q * m + q * d + d_out * q, "the parameters (`L`, `m`, `d`, `q`)", func)
    A = np.zeros((q, d))
    A[:d, :d] = np.eye(d)
    B = np.zeros((d_out, q))
    B[:, q - d_out:] = np.eye(d_out)
    if kind == "smooth":
        # number of terms J: Poisson(x) upper tail below 1e-17, x = max u^2 = 1 / (4 ell^2)
        x = 0.25 / ell**2
        J_MAX = 20_000
        logpmf, J = -x, 0  # log P(Poisson(x) = J)
        while True:  # stop at the first J past the mode with P(Poisson(x) >= J) < 1e-17 (geometric tail bound)
            J += 1
            logpmf += np.log(x) - np.log(J)
            if J > x and np.exp(logpmf) * (J + 1) / (J + 1 - x) < 1e-17:
                break
            if J > J_MAX:
                raise ValueError(f"`lengthscale` of {func} is too small ({ell!r}): the exact series needs more "
                                 f"than {J_MAX} terms; use lengthscale >= 0.004 (at that scale the paths are "
                                 f"already rough at every reachable depth).")
        u = (np.arange(1, L + 1) / L - 0.5) / ell
        log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, J)))])
        logu = np.log(np.abs(u), out=np.full(L, -np.inf), where=u != 0)  # u = 0 (s = 1/2): phi_j = 0, j >= 1
        logphi = np.empty((L, J))
        logphi[:, 0] = -0.5 * u**2
        logphi[:, 1:] = -0.5 * u[:, None] ** 2 + np.arange(1, J)[None, :] * logu[:, None] - 0.5 * log_fact[None, 1:]
        sign = np.where((u[:, None] < 0) & (np.arange(J)[None, :] % 2 == 1), -1.0, 1.0)
        phi = sign * np.exp(logphi)  # (L, J), rows of unit norm up to the truncation
        zv = rng.standard_normal((J, q * m))
        zw = rng.standard_normal((J, m * q))
        V = np.ascontiguousarray((phi @ zv).reshape(L, q, m))
        W = np.ascontiguousarray((phi @ zw).reshape(L, m, q))
        return Params(A, V, W, B)
    V = np.zeros((L, q, m))
    if kind == "paper":
        W = np.ascontiguousarray(np.broadcast_to(rng.standard_normal((m, q)), (L, m, q)))
    else:
        W = rng.standard_normal((L, m, q))
    return Params(A, V, W, B)


def train(X, Y, params, activation="tanh", *, lr, steps, method="gd", clip=None, train_outer=True,
          max_flops=DEFAULT_MAX_FLOPS, return_stats=False):
    r"""Full-batch gradient descent with the depth-scaled metric of ``implicit-reg`` Eq. (4) (or (5)).

    ``method="gd"`` (Euler steps of the gradient flow (4), flow time t = j lr after j steps):

    .. math::
        A \leftarrow A - \eta\,\partial_A\ell, \quad
        Z_k \leftarrow Z_k - \eta\,L\,\partial_{Z_k}\ell, \quad
        B \leftarrow B - \eta\,\partial_B\ell,

    with :math:`\eta` = ``lr`` and :math:`Z_k = (V_k, W_k)`: the residual weights take the learning rate
    L lr (the paper's "learning rate L x 1e-2" of Section 5.1 is lr = 1e-2 here), A and B take lr.
    ``method="clipped"`` (Eq. (5)): :math:`Z_k \leftarrow Z_k + \eta\,\pi(-L\,\partial_{Z_k}\ell)` and
    :math:`A \leftarrow A + \eta\,\pi(-\partial_A\ell)`, likewise B, with :math:`\pi` the coordinatewise
    clipping to [-clip, clip] (applied after the factor L).

    Parameters
    ----------
    X : array_like, shape (n, d)
    Y : array_like, shape (n, d')
    params : Params or mapping
        Starting point (not modified).
    activation : {"tanh", "gelu", "sin", "relu", "identity"}
    lr : float > 0
        Step eta.
    steps : int >= 0
    method : {"gd", "clipped"}
    clip : float > 0, required for ``method="clipped"`` only
    train_outer : bool
        Train A and B as in Eq. (4) (default); False keeps them fixed, as in the experiments of
        Section 5.1 / Appendix E (q = d = d', A = B = I).
    max_flops : float > 0
        Work budget: the run is refused (ValueError naming `steps`, with the estimate) when
        ``(steps + 1) * 12 n L q m`` floating-point operations exceed it; pass a larger value (or ``inf``) to
        run a longer training on purpose.
    return_stats : bool
        Also return a :class:`TrainStats` (default False): the largest coordinate of the unclipped update
        direction over the run and, for ``method="clipped"``, the number of steps where the clip was active.

    Returns
    -------
    params : Params
        After ``steps`` steps.
    losses : ndarray, shape (steps + 1,)
        The loss before each step and after the last.
    stats : TrainStats
        Only with ``return_stats=True``.

    Raises
    ------
    TypeError, ValueError
    theory.NonFiniteError
        The iteration diverged (reduce ``lr``); the message gives the step.
    """
    func = "theory.implicit.train"
    code = _code(activation, func)
    lr = check_interval(lr, "lr", 0.0, np.inf, func=func)
    steps = check_int(steps, "steps", func=func, minimum=0)
    method = check_choice(method, "method", METHODS, func=func)
    if method == "clipped":
        if clip is None:
            raise ValueError(f"`clip` of {func} must be given (a float > 0) with method='clipped'.")
        clip = check_interval(clip, "clip", 0.0, np.inf, func=func)
    elif clip is not None:
        raise ValueError(f"`clip` of {func} applies to method='clipped' only; got clip={clip!r} with method='gd'.")
    if not isinstance(train_outer, (bool, np.bool_)):
        raise TypeError(f"`train_outer` of {func} must be a bool; got {plain(train_outer)!r}.")
    if not isinstance(return_stats, (bool, np.bool_)):
        raise TypeError(f"`return_stats` of {func} must be a bool; got {plain(return_stats)!r}.")
    p = _as_params(params, func)
    X = _as_X(X, p, func)
    Y = _as_Y(Y, X.shape[0], p, func)
    max_flops = check_interval(max_flops, "max_flops", 0.0, np.inf, func=func, closed="right")
    cost = (steps + 1) * 12 * X.shape[0] * p.L * p.q * p.m  # exact int: no overflow for huge `steps`
    if cost > max_flops:
        cost = float(cost) if cost < 10**300 else float("inf")
        raise ValueError(f"`steps` of {func} = {steps} would cost about {cost:.3g} floating-point operations "
                         f"(~{cost / 2e9:.3g} s at 2 Gflop/s), above max_flops = {max_flops:.3g}; reduce `steps` or "
                         f"pass a larger `max_flops` to run it on purpose.")
    A, V, W, B = p.A, p.V, p.W, p.B  # private copies, updated in place
    L = p.L
    losses = np.empty(steps + 1)
    max_update, active = 0.0, 0
    for j in range(steps + 1):
        try:
            loss, g = _loss_grad(code, X, Y, Params(A, V, W, B), func)
        except NonFiniteError as exc:
            raise NonFiniteError(f"{func}: diverged at step {j} of {steps} with lr = {lr}: {exc} "
                                 f"Reduce `lr`.") from None
        losses[j] = loss
        if j == steps:
            break
        if return_stats:
            top = _largest_update(L, train_outer, g)
            max_update = max(max_update, top)
            active += int(method == "clipped" and top > clip)
        with np.errstate(over="ignore", invalid="ignore"):  # a blow-up is caught at the next evaluation
            _step(method, lr, L, clip, train_outer, A, V, W, B, g)
    if return_stats:
        return Params(A, V, W, B), losses, TrainStats(max_update, active, steps)
    return Params(A, V, W, B), losses


@dataclasses.dataclass(frozen=True)
class TrainStats:
    r"""What :func:`train` measured along its run (``return_stats=True``).

    Attributes
    ----------
    max_update : float
        :math:`\max_j \max(\|L\,\partial_{Z_k}\ell\|_\infty, \|\partial_A\ell\|_\infty, \|\partial_B\ell\|_\infty)` over the
        steps taken (A and B only when trained): the largest coordinate of the update direction before clipping.
    clipped_steps : int
        Number of steps where at least one coordinate exceeded ``clip`` (``method="clipped"``; 0 for "gd").
        Zero means the clipped run of Eq. (5) coincides with the plain run of Eq. (4).
    steps : int
        Number of steps taken.
    """

    max_update: float
    clipped_steps: int
    steps: int


def _largest_update(L, train_outer, g):
    """Largest absolute coordinate of the unclipped update direction of one step."""
    top = L * max(float(np.max(np.abs(g.V))), float(np.max(np.abs(g.W))))
    if train_outer:
        top = max(top, float(np.max(np.abs(g.A))), float(np.max(np.abs(g.B))))
    return top


def _step(method, lr, L, clip, train_outer, A, V, W, B, g):
    """One in-place step of Eq. (4) (method "gd") or Eq. (5) (method "clipped")."""
    if method == "gd":
        V -= (lr * L) * g.V
        W -= (lr * L) * g.W
        if train_outer:
            A -= lr * g.A
            B -= lr * g.B
    else:
        V += lr * np.clip(-L * g.V, -clip, clip)
        W += lr * np.clip(-L * g.W, -clip, clip)
        if train_outer:
            A += lr * np.clip(-g.A, -clip, clip)
            B += lr * np.clip(-g.B, -clip, clip)


def synthetic_data(n, d, rng, *, d_out=None):
    r"""The synthetic sample of ``implicit-reg`` Section 5.1 / Appendix E.

    :math:`x_i \sim N(0, I_d)` and :math:`y_i \sim N(0, I_{d'})`, all independent (x and y independent:
    the experiments study optimisation only). The paper's settings: n = 100, d = 16, m = 32 (Figure 1,
    500 steps, lr = 1e-2 in :func:`train`'s convention); n = 50, d = 16, m = 64, L = 64 (Figure 2,
    80 000 steps, lr = 5e-3); q = d = d', GELU, ``train_outer=False``.

    Parameters
    ----------
    n : int >= 1
    d : int >= 1
    rng : None, int or numpy.random.Generator
    d_out : int, optional
        d'; default d.

    Returns
    -------
    X : ndarray, shape (n, d)
    Y : ndarray, shape (n, d')
    """
    func = "theory.implicit.synthetic_data"
    n = check_int(n, "n", func=func, minimum=1)
    d = check_int(d, "d", func=func, minimum=1)
    d_out = d if d_out is None else check_int(d_out, "d_out", func=func, minimum=1)
    rng = _as_rng(rng, func)
    _check_entries(n * (d + d_out), "the sample (`n`, `d`, `d_out`)", func)
    X = rng.standard_normal((n, d))
    Y = rng.standard_normal((n, d_out))
    return X, Y
