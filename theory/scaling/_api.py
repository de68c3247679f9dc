r"""Public API of the scaled ResNets at initialisation (paper key ``scaling``).

Model (4) of Marion, Fermanian, Biau, Vert, "Scaling ResNets in the Large-depth Regime" (HAL
hal-03697725), with the architectures of Table 1:

.. math:: h_{k+1} = h_k + \alpha_L V_{k+1}\, g(h_k, \theta_{k+1}), \qquad \alpha_L = L^{-\beta},

res-1 :math:`g = \sigma(h)`, res-2 :math:`g = \sigma(W_{k+1} h)`, res-3 :math:`g = \mathrm{ReLU}(W_{k+1} h)`.
``V[k]`` and ``W[k]`` hold :math:`V_{k+1}` and :math:`W_{k+1}` (the weights of the layer that maps
:math:`h_k` to :math:`h_{k+1}`), and L is ``V.shape[0]``. Every function takes one input ``(d,)`` or a
batch ``(B, d)`` sharing the weights.

Overflow. In the explosion regime (:math:`L\alpha_L^2 \gg 1`, e.g. beta = 0.25 at large L) the
states leave the float64 range; :func:`forward`, :func:`backward` and :func:`jacobian` then raise
:class:`~theory.NonFiniteError`. The log-domain functions :func:`forward_normalized`,
:func:`log_norm_ratio` and :func:`log_gradient_ratio` renormalise every layer and never overflow;
they need a positively homogeneous layer (every arch with relu, leaky_relu or identity).
"""

from __future__ import annotations

import numpy as np

from .._validation import (
    NonFiniteError,
    as_float_array,
    check_choice,
    check_finite_output,
    check_interval,
)
from . import _kernels as K

__all__ = [
    "ACTIVATIONS",
    "ARCHS",
    "backward",
    "forward",
    "forward_normalized",
    "gradient_ratio",
    "jacobian",
    "log_gradient_ratio",
    "log_norm_ratio",
    "norm_ratio",
]

#: Architectures of Table 1 (``scaling``): name -> kernel code.
ARCHS = {"res1": K.RES1, "res2": K.RES2, "res3": K.RES3}
#: Activations of res-1 / res-2 (res-3 is always ReLU): name -> kernel code.
ACTIVATIONS = {"relu": K.RELU, "leaky_relu": K.LEAKY_RELU, "identity": K.IDENTITY, "tanh": K.TANH}
#: Activations for which every architecture is positively 1-homogeneous (log-domain functions).
HOMOGENEOUS = ("identity", "leaky_relu", "relu")

_OVERFLOW_HINT = (
    "The network explodes beyond the float64 range (small beta or large weights); use the log-domain "
    "theory.scaling.forward_normalized, log_norm_ratio or log_gradient_ratio instead."
)


def _alpha(L, beta):
    """alpha_L = L^(-beta) (a Python float; underflows harmlessly to 0 for huge beta)."""
    return float(L) ** (-beta)


class _Net:
    """Validated network of one call: codes, alpha and float64 C-contiguous weights."""

    def __init__(self, func, d, d_name, V, W, beta, arch, activation, slope, homogeneous=False):
        self.func = func
        arch = check_choice(arch, "arch", ARCHS, func=func)
        activation = check_choice(activation, "activation", ACTIVATIONS, func=func)
        if arch == "res3" and activation != "relu":
            raise ValueError(
                f"`activation` of {func} must be 'relu' for arch 'res3' (its ReLU is part of the "
                f"architecture; use 'res2' for another activation); got {activation!r}."
            )
        if homogeneous and activation not in HOMOGENEOUS:
            raise ValueError(
                f"`activation` of {func} must be one of {list(HOMOGENEOUS)} (positively homogeneous, so "
                f"that renormalising every layer is exact); got {activation!r}. A tanh network grows at "
                f"most linearly in L and cannot overflow: use theory.scaling.forward."
            )
        self.slope = check_interval(slope, "slope", -np.inf, np.inf, func=func)
        self.beta = check_interval(beta, "beta", 0.0, np.inf, func=func)
        V = as_float_array(V, "V", func=func, ndim=3)
        if V.shape[0] < 1 or V.shape[1:] != (d, d):
            raise ValueError(
                f"`V` of {func} must have shape (L, {d}, {d}) with L >= 1 and d = {d} from `{d_name}`; "
                f"got {V.shape}."
            )
        self.L = V.shape[0]
        if arch == "res1":
            if W is not None:
                raise ValueError(
                    f"`W` of {func} must be None for arch 'res1' (h + alpha V sigma(h) has no inner "
                    f"weights); got {type(W).__name__}."
                )
            W = np.empty((0, 0, 0))
        else:
            if W is None:
                raise ValueError(f"`W` of {func} is required for arch {arch!r}, shape (L, d, d) like `V`.")
            W = as_float_array(W, "W", func=func, ndim=3)
            if W.shape != V.shape:
                raise ValueError(f"`W` of {func} must have the shape of `V`, {V.shape}; got {W.shape}.")
        self.V, self.W = V, W
        self.arch, self.activation = arch, activation
        self.arch_code, self.act_code = ARCHS[arch], ACTIVATIONS[activation]
        self.alpha = _alpha(self.L, self.beta)

    def args(self):
        return self.arch_code, self.act_code, self.slope, self.alpha, self.V, self.W


def _states(x, name, func):
    """An input ``(d,)`` or ``(B, d)`` as a fresh float64 ``(B, d)`` array, and whether it was single."""
    x = as_float_array(x, name, func=func, ndim=(1, 2), copy=True)
    if x.shape[-1] < 1 or x.size == 0:
        raise ValueError(f"`{name}` of {func} must have d >= 1 and at least one row; got shape {x.shape}.")
    single = x.ndim == 1
    return (x.reshape(1, -1) if single else x), single


def _raise_status(status, func, what):
    if status == K.ZERO_NORM:
        raise ValueError(
            f"{func}: {what} became exactly zero, so its log norm is -inf; use theory.scaling.forward "
            f"and backward (direct domain) for such weights."
        )
    if status == K.NON_FINITE:
        raise NonFiniteError(f"{func}: {what} overflowed to NaN or inf inside one layer; reduce the weights.")


def _norms(x, axis=-1):
    """Euclidean norms along ``axis`` without overflow or underflow of the squares."""
    m = np.max(np.abs(x), axis=axis, keepdims=True)
    safe = np.where(m > 0.0, m, 1.0)
    return (m * np.sqrt(np.sum((x / safe) ** 2, axis=axis, keepdims=True))).squeeze(axis)


def _log_dist(s, u, v):
    r"""log ||e^s u - v|| for unit rows u, v (B, d) and log scales s (B,), without overflow.

    For s >= 0 it is s + log ||u - e^{-s} v|| (e^{-s} may underflow to 0: harmless), else
    log ||e^s u - v||. Exactly zero distances give -inf.
    """
    s = np.asarray(s, dtype=np.float64)
    pos = s >= 0.0
    with np.errstate(over="ignore", under="ignore"):
        lo = np.exp(-np.abs(s))[:, None]
    diff = np.where(pos[:, None], u - lo * v, lo * u - v)
    with np.errstate(divide="ignore"):
        return np.where(pos, s, 0.0) + np.log(_norms(diff))


# ---------------------------------------------------------------------------------------------------
# Direct domain
# ---------------------------------------------------------------------------------------------------


def forward(h0, V, W=None, beta=0.5, arch="res3", activation="relu", *, slope=0.8):
    r"""Hidden states :math:`h_0, \dots, h_L` of a scaled ResNet (``scaling`` model (4), Table 1).

    .. math:: h_{k+1} = h_k + \alpha_L V_{k+1} g(h_k, \theta_{k+1}), \qquad \alpha_L = L^{-\beta},

    where, with :math:`\sigma` the activation applied entrywise,

    * ``"res1"``: :math:`g = \sigma(h_k)` (no ``W``),
    * ``"res2"``: :math:`g = \sigma(W_{k+1} h_k)`,
    * ``"res3"``: :math:`g = \mathrm{ReLU}(W_{k+1} h_k)` (``activation`` must be ``"relu"``).

    Parameters
    ----------
    h0 : array_like, shape (d,) or (B, d)
        Input :math:`h_0 = Ax`, or a batch of inputs sharing the weights.
    V : array_like, shape (L, d, d)
        ``V[k]`` is :math:`V_{k+1}`; L = ``V.shape[0]`` >= 1 is the depth (see :func:`weights`).
    W : array_like, shape (L, d, d), or None
        ``W[k]`` is :math:`W_{k+1}`; required for res-2 and res-3, and must be None for res-1
        (a ``W`` given to res-1 raises, instead of being silently ignored).
    beta : float
        Scaling exponent, beta > 0; :math:`\alpha_L = L^{-\beta}` with L = ``V.shape[0]``.
    arch : {"res1", "res2", "res3"}
    activation : {"relu", "leaky_relu", "identity", "tanh"}
        :math:`\sigma` of res-1 and res-2; leaky_relu is :math:`x_+ + s\,x_-` with
        :math:`x_- = \min(x, 0)` and ``slope`` s.
    slope : float
        Negative-side slope s of leaky_relu (default 0.8, the paper's example; Table 1 asks
        :math:`s \in [1/\sqrt2, 1)`, any finite value is accepted); unused by other activations.

    Returns
    -------
    ndarray, shape (L + 1, d) or (L + 1, B, d)
        :math:`h_0, \dots, h_L`.

    Raises
    ------
    TypeError, ValueError
        Wrong kinds, shapes, non-finite inputs, unknown names, beta <= 0, ``W`` missing or extra.
    theory.NonFiniteError
        The states overflowed (explosion regime): use :func:`forward_normalized` or
        :func:`log_norm_ratio`.

    Notes
    -----
    Cost O(L B d^2). A batch equals the stack of single calls bit for bit. Claims: ``scaling``
    Lemma 14, Propositions 2, 3, Corollary 4, Proposition 12, Figures 1, 4, 7.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.scaling import forward
    >>> V = np.full((4, 1, 1), 0.5)          # res-1, identity: h_{k+1} = (1 + alpha V) h_k
    >>> forward([1.0], V, None, beta=1.0, arch="res1", activation="identity")[-1]   # (1 + 1/8)^4
    array([1.60180664])
    """
    func = "theory.scaling.forward"
    h, single = _states(h0, "h0", func)
    net = _Net(func, h.shape[1], "h0", V, W, beta, arch, activation, slope)
    B, d = h.shape
    traj = np.empty((net.L + 1, B, d))
    K._forward(*net.args(), h, traj, np.zeros(B), np.empty((0, B)), np.empty(d), False)
    check_finite_output(traj, "the hidden states", func=func, hint=_OVERFLOW_HINT)
    return traj[:, 0, :] if single else traj


def backward(hs, V, W, pL, beta=0.5, arch="res3", activation="relu", *, slope=0.8):
    r"""Gradients :math:`p_k = \partial \ell / \partial h_k` with respect to the hidden states.

    .. math:: p_k = p_{k+1} + \alpha_L \Big(\frac{\partial g(h_k, \theta_{k+1})}{\partial h}\Big)^{\!\top}
              V_{k+1}^\top p_{k+1}, \qquad k = L-1, \dots, 0,

    with :math:`\partial_h g = \mathrm{diag}\,\sigma'(h_k)` (res-1) or
    :math:`\mathrm{diag}\,\sigma'(W_{k+1}h_k)\,W_{k+1}` (res-2, res-3), and the left derivative at the
    kinks (ReLU'(0) = 0, leaky'(0) = s, as in PyTorch). Equivalently :math:`p_0 = J^\top p_L` with
    :math:`J = \partial h_L / \partial h_0` (:func:`jacobian`).

    Parameters
    ----------
    hs : array_like, shape (L + 1, d) or (L + 1, B, d)
        Linearisation points, normally ``forward(h0, V, W, ...)``; only h_0 .. h_{L-1} are read.
    V, W : array_like or None
        As in :func:`forward` (``W`` None for res-1; it is positional here).
    pL : array_like, shape (d,) or (B, d)
        :math:`p_L = \nabla_{h_L} \ell`, e.g. :math:`2(Bh_L - y)B^\top` for the squared loss.
    beta, arch, activation, slope
        As in :func:`forward`.

    Returns
    -------
    ndarray, shape (L + 1, d) or (L + 1, B, d)
        :math:`p_0, \dots, p_L` (the last equals ``pL``).

    Raises
    ------
    TypeError, ValueError
        As :func:`forward`; ``hs`` with other than L + 1 states, ``pL`` of another shape.
    theory.NonFiniteError
        The co-states overflowed: use :func:`log_gradient_ratio`.

    Notes
    -----
    Claims: ``scaling`` Propositions 6, 7, Corollary 8, Figures 3, 5, 7.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.scaling import backward
    >>> V = np.full((4, 1, 1), 0.5)
    >>> hs = np.ones((5, 1))
    >>> backward(hs, V, None, [1.0], beta=1.0, arch="res1", activation="identity")[0]   # (1 + 1/8)^4
    array([1.60180664])
    """
    func = "theory.scaling.backward"
    hs = as_float_array(hs, "hs", func=func, ndim=(2, 3))
    if hs.shape[0] < 2 or hs.shape[-1] < 1 or hs.size == 0:
        raise ValueError(
            f"`hs` of {func} must have shape (L + 1, d) or (L + 1, B, d) with L >= 1, d >= 1, B >= 1; "
            f"got {hs.shape}."
        )
    single = hs.ndim == 2
    hs3 = hs.reshape(hs.shape[0], 1, -1) if single else hs
    B, d = hs3.shape[1:]
    net = _Net(func, d, "hs", V, W, beta, arch, activation, slope)
    if hs.shape[0] != net.L + 1:
        raise ValueError(
            f"`hs` of {func} must hold L + 1 = {net.L + 1} states for L = {net.L} layers in `V`; "
            f"got {hs.shape[0]}."
        )
    p = as_float_array(pL, "pL", func=func, ndim=(1, 2), copy=True)
    want = (d,) if single else (B, d)
    if p.shape != want:
        raise ValueError(f"`pL` of {func} must have shape {want}, matching `hs` {hs.shape}; got {p.shape}.")
    p = p.reshape(B, d)
    ps = np.empty((net.L + 1, B, d))
    K._backward(*net.args(), hs3, p, ps, np.zeros(B), np.empty(d), np.empty(d), np.empty(d), False)
    check_finite_output(ps, "the gradients p_k", func=func,
                        hint=_OVERFLOW_HINT.replace("network explodes", "gradients explode"))
    return ps[:, 0, :] if single else ps


def jacobian(h0, V, W=None, beta=0.5, arch="res3", activation="relu", *, slope=0.8):
    r"""Input-output Jacobian :math:`J = \partial h_L / \partial h_0` by forward-mode products.

    Tangent recursion (``scaling`` Eq. (9)), applied to the columns of the identity:

    .. math:: q_{k+1} = q_k + \alpha_L V_{k+1}\,\frac{\partial g(h_k, \theta_{k+1})}{\partial h}\, q_k,
              \qquad q_0 = I_d,

    so :math:`J = \prod_{k=L-1}^{0} (I + \alpha_L V_{k+1} \partial_h g_k)`. Same derivative convention
    as :func:`backward`; :math:`p_L^\top J = p_0^\top` to round-off.

    Parameters
    ----------
    h0, V, W, beta, arch, activation, slope
        As in :func:`forward`.

    Returns
    -------
    ndarray, shape (d, d) or (B, d, d)

    Raises
    ------
    TypeError, ValueError, theory.NonFiniteError
        As :func:`forward`.

    Notes
    -----
    Cost O(L B d^3) (BLAS products). :math:`\tfrac1d\|J - I\|_F^2` is the expectation of
    :math:`\|p_0 - p_L\|^2/\|p_L\|^2` over isotropic unit :math:`p_L` (Proposition 7).

    Examples
    --------
    >>> import numpy as np
    >>> from theory.scaling import jacobian
    >>> V = np.full((4, 1, 1), 0.5)
    >>> jacobian([1.0], V, None, beta=1.0, arch="res1", activation="identity")
    array([[1.60180664]])
    """
    func = "theory.scaling.jacobian"
    h, single = _states(h0, "h0", func)
    B, d = h.shape
    net = _Net(func, d, "h0", V, W, beta, arch, activation, slope)
    J = np.empty((B, d, d))
    K._jacobian(*net.args(), h, J, np.empty((d, d)), np.empty((d, d)), np.empty(d), np.empty(d))
    check_finite_output(J, "the Jacobian", func=func, hint=_OVERFLOW_HINT)
    check_finite_output(h, "the hidden states", func=func, hint=_OVERFLOW_HINT)
    return J[0] if single else J


def _ratio(traj, name, func, ref):
    """||x_0 - x_L|| / ||x_ref|| along axis 0 of an (L + 1, d) or (L + 1, B, d) array."""
    x = as_float_array(traj, name, func=func, ndim=(2, 3))
    if x.shape[0] < 1 or x.shape[-1] < 1 or x.size == 0:
        raise ValueError(
            f"`{name}` of {func} must have shape (L + 1, d) or (L + 1, B, d) with sizes >= 1; got {x.shape}."
        )
    den = _norms(x[ref])
    if np.any(den == 0.0):
        which = "h_0" if ref == 0 else "p_L"
        raise ValueError(f"`{name}` of {func} must have a nonzero {which} (the ratio divides by its norm).")
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        out = _norms(x[-1] - x[0]) / den
    check_finite_output(out, "the ratio", func=func)
    return float(out) if x.ndim == 2 else out


def norm_ratio(hs):
    r"""Relative change of the hidden state, :math:`\|h_L - h_0\| / \|h_0\|` (Figures 1, 4, 7).

    Parameters
    ----------
    hs : array_like, shape (L + 1, d) or (L + 1, B, d)
        A trajectory from :func:`forward`.

    Returns
    -------
    float, or ndarray of shape (B,)

    Raises
    ------
    ValueError
        :math:`h_0 = 0`, bad shapes, non-finite input; :class:`~theory.NonFiniteError` if the ratio overflows.

    Notes
    -----
    Norms are computed with scaling (no overflow of the squares). For exploding networks use
    :func:`log_norm_ratio`.

    Examples
    --------
    >>> from theory.scaling import norm_ratio
    >>> norm_ratio([[3.0, 0.0], [3.0, 4.0]])
    1.3333333333333333
    """
    return _ratio(hs, "hs", "theory.scaling.norm_ratio", 0)


def gradient_ratio(ps):
    r"""Relative change of the gradient, :math:`\|p_0 - p_L\| / \|p_L\|` (Figures 3, 5, 7).

    Parameters
    ----------
    ps : array_like, shape (L + 1, d) or (L + 1, B, d)
        Co-states :math:`p_0, \dots, p_L` from :func:`backward`.

    Returns
    -------
    float, or ndarray of shape (B,)

    Examples
    --------
    >>> from theory.scaling import gradient_ratio
    >>> gradient_ratio([[3.0, 4.0], [0.0, 4.0]])     # ||(3, 0)|| / ||(0, 4)||
    0.75
    """
    return _ratio(ps, "ps", "theory.scaling.gradient_ratio", -1)


# ---------------------------------------------------------------------------------------------------
# Log domain
# ---------------------------------------------------------------------------------------------------


def _run_normalized(func, h0, V, W, beta, arch, activation, slope, store):
    h, single = _states(h0, "h0", func)
    B, d = h.shape
    net = _Net(func, d, "h0", V, W, beta, arch, activation, slope, homogeneous=True)
    nrm = _norms(h)
    if np.any(nrm == 0.0):
        raise ValueError(f"`h0` of {func} must be nonzero (its log norm is needed); got a zero row.")
    h /= nrm[:, None]
    logs = np.log(nrm)
    n = net.L + 1 if store else 0
    u = np.empty((n, B, d))
    logn = np.empty((n, B))
    u0 = h.copy()
    status = K._forward(*net.args(), h, u, logs, logn, np.empty(d), True)
    _raise_status(status, func, "a hidden state")
    return net, single, u0, h, logs - np.log(nrm), u, logn


def forward_normalized(h0, V, W=None, beta=0.5, arch="res3", activation="relu", *, slope=0.8):
    r"""Hidden states in the log domain: directions :math:`h_k/\|h_k\|` and :math:`\log\|h_k\|`.

    For a positively 1-homogeneous layer, :math:`g(ch) = c\,g(h)` for :math:`c > 0`, so the
    recursion commutes with rescaling: each state is divided by its norm after every layer and the
    log norms accumulate. Then :math:`h_k = e^{\ell_k} u_k` exactly in exact arithmetic, and no
    value leaves the float64 range however large :math:`\|h_L\|` is (res-3 without bias, res-1
    and res-2 with ReLU, leaky ReLU or the identity are positively 1-homogeneous).

    Parameters
    ----------
    h0, V, W, beta, arch, slope
        As in :func:`forward`.
    activation : {"relu", "leaky_relu", "identity"}
        The homogeneous activations (tanh raises: a tanh network cannot overflow).

    Returns
    -------
    u : ndarray, shape (L + 1, d) or (L + 1, B, d)
        Unit directions :math:`h_k / \|h_k\|`.
    log_norm : ndarray, shape (L + 1,) or (L + 1, B)
        Natural logarithms :math:`\ell_k = \log \|h_k\|` (``log_norm[0]`` is :math:`\log\|h_0\|`).

    Raises
    ------
    ValueError
        As :func:`forward`; tanh; :math:`h_0 = 0`; a state that becomes exactly zero.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.scaling import forward_normalized
    >>> V = np.full((4, 1, 1), 0.5)
    >>> u, log_norm = forward_normalized([2.0], V, None, beta=1.0, arch="res1", activation="identity")
    >>> bool(np.isclose(log_norm[-1], np.log(2.0) + 4 * np.log(1.125)))
    True
    """
    func = "theory.scaling.forward_normalized"
    net, single, _, _, _, u, logn = _run_normalized(func, h0, V, W, beta, arch, activation, slope, True)
    return (u[:, 0, :], logn[:, 0]) if single else (u, logn)


def log_norm_ratio(h0, V, W=None, beta=0.5, arch="res3", activation="relu", *, slope=0.8):
    r"""Natural logarithm of :math:`\|h_L - h_0\| / \|h_0\|`, computed without overflow.

    With :math:`h_L = e^{\ell_L} u_L` from the renormalised recursion (:func:`forward_normalized`)
    and :math:`s = \ell_L - \ell_0`:
    :math:`\log \frac{\|h_L - h_0\|}{\|h_0\|} = s + \log\|u_L - e^{-s}u_0\|` for :math:`s \ge 0`, and
    :math:`\log\|e^{s}u_L - u_0\|` otherwise. Where :func:`forward` does not overflow the two agree
    to round-off (``log(norm_ratio(forward(...)))``).

    Parameters
    ----------
    h0, V, W, beta, arch, activation, slope
        As in :func:`forward_normalized`.

    Returns
    -------
    float, or ndarray of shape (B,)
        ``-inf`` where :math:`h_L = h_0` exactly (e.g. V = 0).

    Notes
    -----
    For the proved forms of Proposition 3 and Figure 2, :math:`\log(\|h_L\|/\|h_0\|)` is
    ``log_norm[-1] - log_norm[0]`` of :func:`forward_normalized`. Claims: ``scaling`` Corollary 4(ii),
    Figure 7 (the heatmap's explosion side).

    Examples
    --------
    >>> import numpy as np
    >>> from theory.scaling import log_norm_ratio
    >>> V = np.full((1000, 1, 1), 1.0)       # (1 + 1/sqrt(1000))^1000 - 1 ~ 5.1e13
    >>> r = log_norm_ratio([1.0], V, None, beta=0.5, arch="res1", activation="identity")
    >>> bool(np.isclose(r, np.log((1 + 1000 ** -0.5) ** 1000 - 1)))
    True
    """
    func = "theory.scaling.log_norm_ratio"
    net, single, u0, uL, s, _, _ = _run_normalized(func, h0, V, W, beta, arch, activation, slope, False)
    out = _log_dist(s, uL, u0)
    return float(out[0]) if single else out


def log_gradient_ratio(h0, V, W, pL, beta=0.5, arch="res3", activation="relu", *, slope=0.8):
    r"""Natural logarithm of :math:`\|p_0 - p_L\| / \|p_L\|`, computed without overflow.

    The hidden states are run renormalised (:func:`forward_normalized`); for a positively
    homogeneous layer :math:`\partial_h g` depends on :math:`h_k` only through its direction, so the
    co-state recursion of :func:`backward` is run along the directions, itself renormalised each layer
    (it is linear in p). With :math:`p_0 = e^{c} r_0` and :math:`r_L = p_L/\|p_L\|`, the result is
    :math:`\log\|e^{c}r_0 - r_L\|`, evaluated as in :func:`log_norm_ratio`.

    Parameters
    ----------
    h0, V, W, beta, arch, activation, slope
        As in :func:`forward_normalized` (``W`` positional, None for res-1).
    pL : array_like, shape (d,) or (B, d)
        :math:`p_L`, nonzero.

    Returns
    -------
    float, or ndarray of shape (B,)

    Examples
    --------
    >>> import numpy as np
    >>> from theory.scaling import log_gradient_ratio
    >>> V = np.full((4, 1, 1), 0.5)          # p_0 = (1 + 1/8)^4 p_L
    >>> r = log_gradient_ratio([1.0], V, None, [1.0], beta=1.0, arch="res1", activation="identity")
    >>> bool(np.isclose(r, np.log(1.125 ** 4 - 1)))
    True
    """
    func = "theory.scaling.log_gradient_ratio"
    net, single, _, _, _, u, _ = _run_normalized(func, h0, V, W, beta, arch, activation, slope, True)
    B, d = u.shape[1:]
    p = as_float_array(pL, "pL", func=func, ndim=(1, 2), copy=True)
    want = (d,) if single else (B, d)
    if p.shape != want:
        raise ValueError(f"`pL` of {func} must have shape {want}, matching `h0`; got {p.shape}.")
    p = p.reshape(B, d)
    nrm = _norms(p)
    if np.any(nrm == 0.0):
        raise ValueError(f"`pL` of {func} must be nonzero (the ratio divides by its norm); got a zero row.")
    p /= nrm[:, None]
    rL = p.copy()
    logs = np.zeros(B)
    status = K._backward(*net.args(), u, p, np.empty((0, B, d)), logs, np.empty(d), np.empty(d),
                         np.empty(d), True)
    _raise_status(status, func, "a gradient p_k")
    out = _log_dist(logs, p, rL)
    return float(out[0]) if single else out
