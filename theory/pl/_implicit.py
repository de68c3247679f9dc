r"""PL tools specific to the residual network of ``implicit-reg`` (Definition 1, Proposition 5 and its
proof in Appendix B.5; the theses number them Def. 3.5 and Prop. 3.6).

The PL ratio of Definition 1 for the network of Eq. (3), with the factor L of the depth-scaled metric of
the flow (4),

.. math::
    \mu(\theta) = \frac{G(\theta)}{\ell(\theta)}, \qquad
    G = \Big\|\frac{\partial\ell}{\partial A}\Big\|_F^2 + L\sum_{k=1}^L \Big\|\frac{\partial\ell}{\partial Z_k}\Big\|_F^2
        + \Big\|\frac{\partial\ell}{\partial B}\Big\|_F^2,
    \qquad \|\partial\ell/\partial Z_k\|_F^2 = \|\partial\ell/\partial V_k\|_F^2 + \|\partial\ell/\partial W_k\|_F^2,

is what the flow dissipates: :math:`d\ell/dt = -G` along Eq. (4). Three estimators of it:

* :func:`init_ratio`: its closed form at V = 0 (the initialisation of Section 3);
* :func:`certified_ratio`: the lower bound that the proof of Proposition 5 builds at any parameter point
  from the smallest singular values of the feature matrices and the norms of the backward states;
* :func:`prop5_constants`: the constants :math:`c_1 \dots c_4` and :math:`\delta` of the proposition, with
  :math:`M = c_3/\sqrt{nq}` and :math:`\mu = c_4/(n\sqrt{nq})`.

Data follow :mod:`theory.implicit`: ``X`` of shape (n, d) and ``Y`` of shape (n, d'), one sample per row
(the proof's matrices :math:`\mathbf x, \mathbf y` are their transposes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from .._errors import NonFiniteError
from .._validation import check_choice, check_int, check_interval
from .. import implicit as _implicit
from .._implicit_params import as_inputs, as_params, as_targets
from ._hermite import hermite_coefficient

__all__ = ["CertifiedPL", "Prop5Constants", "backward_states", "certified_ratio", "init_ratio", "prop5_constants"]

# Lipschitz constant K_sigma and sup-norm M_sigma of the activations of theory.implicit
_GELU_LIP = float(ndtr(math.sqrt(2.0)) + math.sqrt(2.0) * math.exp(-1.0) / math.sqrt(2.0 * math.pi))
_LIPSCHITZ = {"sin": 1.0, "tanh": 1.0, "gelu": _GELU_LIP, "relu": 1.0, "identity": 1.0}
_SUP = {"sin": 1.0, "tanh": 1.0, "gelu": math.inf, "relu": math.inf, "identity": math.inf}
_ETA_ZERO = 1e-12  # |eta_r| at or below this counts as zero (exact zeros are computed as 0 or ~1e-17)


def _sigma(name, u):
    if name == "sin":
        return np.sin(u)
    if name == "tanh":
        return np.tanh(u)
    if name == "gelu":
        return u * ndtr(u)
    if name == "relu":
        return np.maximum(u, 0.0)
    return u.copy()


def _dsigma(name, u):
    if name == "sin":
        return np.cos(u)
    if name == "tanh":
        return 1.0 - np.tanh(u) ** 2
    if name == "gelu":
        return ndtr(u) + u * np.exp(-0.5 * u * u) / math.sqrt(2.0 * math.pi)
    if name == "relu":
        return (u > 0.0).astype(np.float64)  # sigma'(0) = 0, as theory.implicit
    return np.ones_like(u)


# --------------------------------------------------------------------------- constants of Prop. 5


@dataclass(frozen=True)
class Prop5Constants:
    r"""Constants of Proposition 5 (``implicit-reg``, proof in Appendix B.5), with :math:`|\eta_r|`.

    Attributes
    ----------
    activation : str
    r : int
        Hermite order used (r >= 2, :math:`\eta_r(\sigma) \ne 0`).
    eta : float
        :math:`|\eta_r(\sigma)|` (the proof writes :math:`\eta_r`; it is negative for sin and tanh at r = 3,
        and only its size matters).
    k_sigma, m_sigma : float
        Lipschitz constant and :math:`\sup|\sigma|` (``inf`` for unbounded activations).
    C1, C2, C3 : float
        Intermediate constants of the proof: :math:`C_1 = K e^{2\sqrt2 K}`, :math:`C_2 = 128 C_1 K`,
        :math:`C_3 = e^{-2\sqrt2 K}/8` (K = ``k_sigma``).
    c1, c2, c3, c4 : float
        :math:`c_1 = \max(2^{10}C_1^2/\eta^2, 1)`, :math:`c_2 = C_2/\eta`,
        :math:`c_3 = \min(\eta/(32\sqrt2 K), 1/2)`, :math:`c_4 = C_3^2\eta^3/(2C_2)
        = \eta^3/(2^{14}K^2e^{6\sqrt2K})`.
    """

    activation: str
    r: int
    eta: float
    k_sigma: float
    m_sigma: float
    C1: float
    C2: float
    C3: float
    c1: float
    c2: float
    c3: float
    c4: float

    def radius(self, n, q):
        r""":math:`M = c_3/\sqrt{nq}`, the radius of the ball of Definition 1 in the proposition."""
        n, q = _nq(n, q, "Prop5Constants.radius")
        return self.c3 / math.sqrt(n * q)

    def proof_radius(self, n, q):
        r"""The radius the proof actually uses, :math:`\min(\eta/(32K\sqrt{2nq}), 1/2) \ge c_3/\sqrt{nq}`."""
        n, q = _nq(n, q, "Prop5Constants.proof_radius")
        return min(self.eta / (32.0 * self.k_sigma * math.sqrt(2.0 * n * q)), 0.5)

    def mu(self, n, q):
        r""":math:`\mu = c_4/(n\sqrt{nq})`, the PL constant the proposition guarantees on that ball."""
        n, q = _nq(n, q, "Prop5Constants.mu")
        return self.c4 / (n * math.sqrt(n * q))

    def delta(self, n, m, q, d, v_x=1.0):
        r"""Failure probability of Proposition 5,

        .. math::
            \delta = e^{-qm/16} + n\,e^{-3m\eta^2/(64M_\sigma^2 n)} + 2n^2 e^{-d/(2v_x n^{2/r})},

        with :math:`v_x` the sub-Gaussian variance proxy of the columns of :math:`\sqrt{d/q}\,\mathbf x`.
        Returned as computed: a value >= 1 means the statement is vacuous at these sizes (it is at every
        size a CPU reaches). Raises ValueError for an unbounded activation (the proposition assumes
        :math:`M_\sigma < \infty`).
        """
        func = "theory.pl.Prop5Constants.delta"
        if not math.isfinite(self.m_sigma):
            raise ValueError(f"{func}: Proposition 5 assumes a bounded activation; {self.activation!r} is unbounded "
                             f"(M_sigma = inf), so its delta is undefined.")
        n = check_int(n, "n", func=func, minimum=1, maximum=_SIZE_MAX)
        m = check_int(m, "m", func=func, minimum=1, maximum=_SIZE_MAX)
        q = check_int(q, "q", func=func, minimum=1, maximum=_SIZE_MAX)
        d = check_int(d, "d", func=func, minimum=1, maximum=_SIZE_MAX)
        v_x = check_interval(v_x, "v_x", 0.0, np.inf, func=func)
        with np.errstate(all="ignore"):
            out = float(math.exp(-q * m / 16.0) + n * math.exp(-3.0 * m * self.eta**2 / (64.0 * self.m_sigma**2 * n))
                     + 2.0 * n**2 * math.exp(-d / (2.0 * v_x * n ** (2.0 / self.r))))
        if not math.isfinite(out):
            raise NonFiniteError(f"{func}: delta overflowed (v_x = {v_x!r}); it is >= 1 (vacuous) at these sizes.")
        return out

    def assumptions(self, n, m, L, q, d, d_out):
        r"""Which size hypotheses of Proposition 5 hold: :math:`q \ge d + d'`, :math:`m \ge c_1 n`,
        :math:`L \ge c_2\sqrt{nq}` (dict of bools)."""
        func = "theory.pl.Prop5Constants.assumptions"
        n, m, L, q, d, d_out = (check_int(v, k, func=func, minimum=1, maximum=_SIZE_MAX) for v, k in
                                zip((n, m, L, q, d, d_out), ("n", "m", "L", "q", "d", "d_out")))
        return {"q >= d + d'": q >= d + d_out, "m >= c1 n": m >= self.c1 * n,
                "L >= c2 sqrt(nq)": L >= self.c2 * math.sqrt(n * q)}


_SIZE_MAX = 10**15  # sizes beyond this are no network anyone trains; larger ints would overflow float conversions


def _nq(n, q, where):
    func = f"theory.pl.{where}"
    return (check_int(n, "n", func=func, minimum=1, maximum=_SIZE_MAX),
            check_int(q, "q", func=func, minimum=1, maximum=_SIZE_MAX))


def prop5_constants(activation="sin", r=None):
    r"""The constants :math:`c_1, \dots, c_4` and :math:`\delta` of Proposition 5 of ``implicit-reg``.

    The proof (Appendix B.5) fixes an order r >= 2 with :math:`\eta_r(\sigma) \ne 0` and sets, with
    :math:`K = K_\sigma` and :math:`\eta = |\eta_r(\sigma)|`,

    .. math::
        c_1 = \max\Big(\frac{2^{10}K^2e^{4\sqrt2K}}{\eta^2}, 1\Big), \quad
        c_2 = \frac{128K^2e^{2\sqrt2K}}{\eta}, \quad
        c_3 = \min\Big(\frac{\eta}{32\sqrt2K}, \frac12\Big), \quad
        c_4 = \frac{\eta^3}{2^{14}K^2e^{6\sqrt2K}};

    if :math:`q \ge d + d'`, :math:`m \ge c_1 n`, :math:`L \ge c_2\sqrt{nq}` and :math:`\|x_i\| = \sqrt q`,
    then with probability at least :math:`1 - \delta` the network satisfies the :math:`(M, \mu)`-local PL
    condition around its initialisation with :math:`M = c_3/\sqrt{nq}`, :math:`\mu = c_4/(n\sqrt{nq})`
    (methods :meth:`Prop5Constants.radius`, :meth:`~Prop5Constants.mu`, :meth:`~Prop5Constants.delta`).
    The absolute value matters: :math:`\eta_3` is negative for sin and tanh, and the printed formulas
    would give a negative :math:`c_2`, :math:`c_4`.

    Parameters
    ----------
    activation : {"sin", "tanh", "gelu", "relu"}
        "identity" is rejected (:math:`\eta_r = 0` for every r >= 2). GELU and ReLU are unbounded (and
        ReLU is not C^2): outside the proposition's hypotheses, their c's are returned for comparison
        but :meth:`~Prop5Constants.delta` raises.
    r : int >= 2, optional
        Hermite order; default the smallest r >= 2 with :math:`\eta_r \ne 0` (3 for sin and tanh,
        2 for GELU and ReLU).

    Returns
    -------
    Prop5Constants

    Raises
    ------
    ValueError
        Unknown activation, r < 2, :math:`\eta_r(\sigma) = 0`.
    TypeError
        Non-string activation, non-integer r.

    Examples
    --------
    >>> from theory.pl import prop5_constants
    >>> c = prop5_constants("sin")
    >>> c.r, round(c.eta, 7), f"{c.c1:.3g}", f"{c.c4:.3g}"
    (3, 0.2476151, '4.78e+06', '1.91e-10')
    """
    func = "theory.pl.prop5_constants"
    activation = check_choice(activation, "activation", tuple(_LIPSCHITZ), func=func)
    if activation == "identity":
        raise ValueError(f"`activation` of {func}: 'identity' has eta_r = 0 for every r >= 2 (a polynomial "
                         f"activation); Proposition 5 does not apply.")
    if r is None:
        r = next(k for k in range(2, 12) if abs(float(hermite_coefficient(activation, k))) > _ETA_ZERO)
    r = check_int(r, "r", func=func, minimum=2, maximum=300)
    eta = abs(float(hermite_coefficient(activation, r)))
    if eta <= _ETA_ZERO:
        raise ValueError(f"`r` of {func}: eta_{r}({activation}) = 0; the proof needs an order with eta_r != 0.")
    K = _LIPSCHITZ[activation]
    e = math.exp(2.0 * math.sqrt(2.0) * K)
    C1 = K * e
    C2 = 128.0 * C1 * K
    C3 = 1.0 / (8.0 * e)
    return Prop5Constants(activation=activation, r=r, eta=eta, k_sigma=K, m_sigma=_SUP[activation], C1=C1, C2=C2,
                          C3=C3, c1=max(2.0**10 * C1**2 / eta**2, 1.0), c2=C2 / eta,
                          c3=min(eta / (32.0 * math.sqrt(2.0) * K), 0.5), c4=C3**2 * eta**3 / (2.0 * C2))


# --------------------------------------------------------------------------- ratios


def _inputs(X, Y, params, activation, func):
    check_choice(activation, "activation", _implicit.ACTIVATIONS, func=func)
    p = as_params(params, func)
    X = as_inputs(X, p, func)
    Y = as_targets(Y, X.shape[0], p, func)
    return X, Y, p


def _positive_loss(loss, func):
    if not loss > 0.0:
        raise ValueError(f"{func}: the loss is {loss!r} at these parameters; the PL ratio G / l is undefined at a "
                         f"zero loss (the data are interpolated). Report this point rather than divide by it.")


@np.errstate(all="ignore")
def init_ratio(X, Y, params, activation="sin"):
    r"""Closed form of the PL ratio :math:`G/\ell` of Definition 1 at V = 0 (the initialisation of Section 3).

    At :math:`V_k = 0` every layer is the identity, :math:`h_k = A x`, the backward state is constant,
    :math:`p_k = p_L`, and :math:`\partial\ell/\partial W_k = 0`. With :math:`H = XA^\top` (n x q),
    residuals :math:`R = HB^\top - Y`, :math:`P = \frac2n RB` (rows :math:`p_{L,i}/n`) and features
    :math:`S_k = \sigma(HW_k^\top/\sqrt q)` (n x m), Eqs. (14)-(16) give

    .. math::
        G = \|P^\top X\|_F^2 + \frac{1}{Lm}\sum_{k=1}^L\|P^\top S_k\|_F^2 + \frac{4}{n^2}\|R^\top H\|_F^2,
        \qquad \ell = \frac1n\|R\|_F^2,

    (the factor L of Definition 1 cancels the :math:`1/L^2` of :math:`\|\partial\ell/\partial V_k\|^2`), so
    for the weight-tied W of the paper the ratio does not depend on L. With the paper's A, B and
    :math:`q \ge d + d'` (then :math:`R = -Y`, and A, B have orthonormal columns/rows) it reduces to

    .. math:: \frac{G}{\ell} = \frac{\frac{8}{n^2}\|Y^\top X\|_F^2 + \frac{4}{n^2 m}\|Y^\top S\|_F^2}{\frac1n\|Y\|_F^2}.

    Parameters
    ----------
    X : array_like, shape (n, d)
    Y : array_like, shape (n, d')
    params : theory.implicit.Params or mapping
        V must be exactly 0; W, A, B arbitrary (W need not be tied).
    activation : {"tanh", "gelu", "sin", "relu", "identity"}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        V not zero, a zero loss (the ratio is undefined there: reported), shapes, NaN or inf.
    TypeError

    References
    ----------
    ``implicit-reg`` Definition 1, Eqs. (13)-(16), Proposition 5; tests/test_pl.py compares it with
    :func:`theory.implicit.loss_and_gradient` at several depths.
    """
    func = "theory.pl.init_ratio"
    X, Y, p = _inputs(X, Y, params, activation, func)
    if np.any(p.V != 0.0):
        raise ValueError(f"`params.V` of {func} must be exactly 0 (the closed form holds at the initialisation of "
                         f"Section 3); use certified_ratio or theory.implicit.loss_and_gradient elsewhere.")
    n, L, m, q = X.shape[0], p.L, p.m, p.q
    H = X @ p.A.T
    R = H @ p.B.T - Y
    loss = float(np.sum(R * R) / n)
    _positive_loss(loss, func)
    P = (2.0 / n) * (R @ p.B)
    gv = 0.0
    for k in range(L):
        S = _sigma(activation, H @ p.W[k].T / math.sqrt(q))
        gv += float(np.sum((P.T @ S) ** 2))
    with np.errstate(all="ignore"):
        G = float(np.sum((P.T @ X) ** 2)) + gv / (L * m) + float(np.sum((R.T @ H) ** 2)) * 4.0 / n**2
        out = G / loss
    if not math.isfinite(out):
        raise NonFiniteError(f"{func}: G / l overflowed; rescale the data.")
    return out


@dataclass(frozen=True)
class CertifiedPL:
    r"""The PL ratio of Definition 1 at one parameter point, its V-part and the proof's certificate.

    Attributes
    ----------
    certificate : float
        :math:`\frac{1}{Lm\ell}\sum_k s_{\min}(S_k)^2\|\mathbf p_k\|_F^2` (a lower bound of ``ratio_v``).
    ratio_v : float
        :math:`L\sum_k\|\partial\ell/\partial V_k\|_F^2/\ell`.
    ratio : float
        :math:`G/\ell` with G of Definition 1 (A, B and W blocks included).
    loss : float
    s_min : ndarray, shape (L,)
        n-th singular value of :math:`S_k = \sigma(W_k\mathbf h_{k-1}/\sqrt q)` (m x n), k = 1..L.
    p_norms : ndarray, shape (L,)
        :math:`\|\mathbf p_k\|_F`, k = 1..L, backward states with the 1/n of the loss included.
    """

    certificate: float
    ratio_v: float
    ratio: float
    loss: float
    s_min: np.ndarray
    p_norms: np.ndarray

    def to_measured(self):
        return {"certificate": self.certificate, "ratio_v": self.ratio_v, "ratio": self.ratio, "loss": self.loss,
                "min_s_min": float(self.s_min.min())}


@np.errstate(all="ignore")
def backward_states(X, Y, params, activation="sin"):
    r"""Hidden states h and matrix backward states :math:`\mathbf p_k = \partial\ell/\partial\mathbf h_k`,
    k = 0..L, both returned as rows, shape (L + 1, n, q) (the transposes of the proof's q x n matrices):
    Eq. (13) corrected (transpose), with the 1/n of the loss included as in Appendix B.5,

    .. math::
        \mathbf p_L = \tfrac2n(\mathbf h_LB^\top - Y)B, \qquad
        \mathbf p_k = \mathbf p_{k+1} + \tfrac{1}{L\sqrt{qm}}\big((\mathbf p_{k+1}V_{k+1})\odot
        \sigma'(\mathbf h_kW_{k+1}^\top/\sqrt q)\big)W_{k+1}.
    """
    func = "theory.pl.backward_states"
    X, Y, p = _inputs(X, Y, params, activation, func)
    h, _, P = _backward(X, Y, p, activation, func)
    return h, P


@np.errstate(all="ignore")
def _backward(X, Y, p, activation, func):
    h, F = _implicit.forward(X, p, activation)
    n, L, q, m = X.shape[0], p.L, p.q, p.m
    P = np.empty_like(h)
    P[L] = (2.0 / n) * ((F - Y) @ p.B)
    c = 1.0 / (L * math.sqrt(q * m))
    for k in range(L - 1, -1, -1):
        u = h[k] @ p.W[k].T / math.sqrt(q)
        P[k] = P[k + 1] + c * (((P[k + 1] @ p.V[k]) * _dsigma(activation, u)) @ p.W[k])
    if not np.isfinite(P).all():
        raise ValueError(f"{func}: the backward states overflowed; reduce the weights or the data.")
    return h, F, P


@np.errstate(all="ignore")
def certified_ratio(X, Y, params, activation="sin"):
    r"""The lower bound on the PL ratio that the proof of Proposition 5 builds, at any parameter point.

    With :math:`S_k = \sigma(W_k\mathbf h_{k-1}/\sqrt q) \in \mathbb R^{m\times n}` and the matrix backward
    state :math:`\mathbf p_k` (q x n, the loss's 1/n included),
    :math:`\partial\ell/\partial V_k = \frac{1}{L\sqrt m}\mathbf p_kS_k^\top`; for m >= n, Lemma 18 gives
    :math:`\|\mathbf p_kS_k^\top\|_F \ge s_{\min}(S_k)\|\mathbf p_k\|_F` (:math:`s_{\min}` the n-th singular
    value), hence (dropping the A, B and W blocks, as the proof does)

    .. math::
        \frac{G}{\ell} \;\ge\; \frac{L}{\ell}\sum_{k=1}^L\Big\|\frac{\partial\ell}{\partial V_k}\Big\|_F^2
        \;\ge\; \frac{1}{Lm\,\ell}\sum_{k=1}^L s_{\min}(S_k)^2\,\|\mathbf p_k\|_F^2 .

    The proof then bounds :math:`s_{\min}(S_k) \ge \sqrt m\,\eta_r/8` for the first layers (Lemma 21 plus a
    perturbation argument) and :math:`\|\mathbf p_k\|_F \ge e^{-2\sqrt2K_\sigma}\sqrt{\ell/n}` (Eq. (51)),
    which gives :math:`c_4/(n\sqrt{nq})`; the certificate here stops before those two worst-case steps, so
    it is exact given the computed singular values, and far larger.

    Parameters
    ----------
    X : array_like, shape (n, d)
    Y : array_like, shape (n, d')
    params : theory.implicit.Params or mapping
    activation : {"tanh", "gelu", "sin", "relu", "identity"}

    Returns
    -------
    CertifiedPL
        ``certificate <= ratio_v <= ratio`` (up to rounding).

    Raises
    ------
    ValueError
        m < n (the singular-value step needs m >= n: :math:`S_k^\top` must have at least as many columns as
        rows), a zero loss (reported), shapes, NaN or inf.
    TypeError

    Notes
    -----
    One forward and one backward pass (NumPy, O(L n q m)) and L singular-value decompositions of m x n
    matrices (O(L m n^2)); ``ratio`` and ``ratio_v`` come from :func:`theory.implicit.loss_and_gradient`.
    """
    func = "theory.pl.certified_ratio"
    X, Y, p = _inputs(X, Y, params, activation, func)
    n, L, m, q = X.shape[0], p.L, p.m, p.q
    if m < n:
        raise ValueError(f"{func}: the certificate needs m >= n (the residual width must be at least the sample "
                         f"size, so that s_min(S_k) of the m x n features can be positive); got m = {m}, n = {n}.")
    loss, g = _implicit.loss_and_gradient(X, Y, p, activation)
    _positive_loss(loss, func)
    h, _, P = _backward(X, Y, p, activation, func)
    s_min = np.empty(L)
    p_norms = np.empty(L)
    for k in range(L):
        S = _sigma(activation, h[k] @ p.W[k].T / math.sqrt(q))  # (n, m): the proof's S_{k+1}^T
        s_min[k] = np.linalg.svd(S, compute_uv=False)[n - 1]
        p_norms[k] = np.linalg.norm(P[k + 1])
    with np.errstate(all="ignore"):
        gv = L * float(np.sum(g.V**2))
        G = float(np.sum(g.A**2) + L * (np.sum(g.V**2) + np.sum(g.W**2)) + np.sum(g.B**2))
        cert = float(np.sum(s_min**2 * p_norms**2)) / (L * m * loss)
        values = (cert, gv / loss, G / loss)
    if not all(math.isfinite(v) for v in values):
        raise NonFiniteError(f"{func}: the PL ratio or its certificate overflowed to NaN or inf (loss {loss:.3g}); "
                             f"rescale the data or the weights.")
    return CertifiedPL(certificate=cert, ratio_v=gv / loss, ratio=G / loss, loss=loss, s_min=s_min, p_norms=p_norms)
