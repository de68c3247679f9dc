r"""Continuous-depth limits of the scaled ResNets (``scaling`` Section 3).

* i.i.d. weights and beta = 1/2: the neural SDE (12), :math:`dH_t^\top = \sqrt{v/d}\,\sigma(H_t^\top)\,d\mathbf B_t`,
  with :math:`\mathbf B` a d x d matrix of independent Brownian motions (Proposition 10). The
  Euler-Maruyama scheme on the grid k/L *is* the res-1 network (11) driven by the Brownian increments;
  :func:`coupled_weights` and :func:`sde_em` put both on the same path.
* smooth weights and beta = 1: the neural ODE (14), :math:`dH_t = \mathscr V_t\, g(H_t, \Theta_t)\,dt`
  (Proposition 11), solved by :func:`neural_ode` with SciPy's DOP853.

Variance. The preprint writes :math:`\mathcal N(0, 2/d)` in (11), (12) and Proposition 10, the thesis
:math:`\mathcal N(0, 1/d)` in (2.11)-(2.12) (see ERRATA.md, entry 7); here it is a parameter v: weights
:math:`\mathcal N(0, v/d)` correspond to the diffusion coefficient :math:`\sqrt{v/d}`.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from .._validation import (
    NonFiniteError,
    as_float_array,
    check_array_memory,
    check_choice,
    check_finite_output,
    check_int,
    check_interval,
)
from . import _kernels as K
from ._api import ACTIVATIONS, ARCHS, _Net, _states
from ._weights import as_generator

__all__ = ["brownian_increments", "coupled_weights", "neural_ode", "sde_em"]


def brownian_increments(n, d, rng=None):
    r"""Increments of a d x d Brownian motion on the grid k/n of [0, 1], shape (n, d, d).

    ``out[k]`` is :math:`\mathbf B_{(k+1)/n} - \mathbf B_{k/n}`: i.i.d. :math:`\mathcal N(0, 1/n)` entries
    (Definition 9, entries independent Brownian motions).

    Parameters
    ----------
    n : int
        Number of steps, n >= 1.
    d : int
        Width, d >= 1.
    rng : numpy.random.Generator or None

    Examples
    --------
    >>> from theory.scaling import brownian_increments
    >>> import numpy as np
    >>> brownian_increments(8, 2, rng=np.random.default_rng(0)).shape
    (8, 2, 2)
    """
    func = "theory.scaling.brownian_increments"
    n = check_int(n, "n", func=func, minimum=1)
    d = check_int(d, "d", func=func, minimum=1)
    check_array_memory((n, d, d), {"n": n, "d": d}, func=func)
    gen = as_generator(rng, func)
    return gen.standard_normal((n, d, d)) * np.sqrt(1.0 / n)


def _coarse_sums(increments, factor, func):
    """Validated increments (n, d, d) summed over consecutive blocks of ``factor``: (n / factor, d, d)."""
    dB = as_float_array(increments, "increments", func=func, ndim=3)
    if dB.shape[0] < 1 or dB.shape[1] < 1 or dB.shape[1] != dB.shape[2]:
        raise ValueError(f"`increments` of {func} must have shape (n, d, d) with n, d >= 1; got {dB.shape}.")
    factor = check_int(factor, "factor", func=func, minimum=1)
    n, d = dB.shape[:2]
    if n % factor:
        raise ValueError(f"`factor` of {func} must divide the number of increments n = {n}; got {factor}.")
    if factor == 1:
        return dB
    with np.errstate(over="ignore", invalid="ignore"):
        S = np.ascontiguousarray(dB.reshape(n // factor, factor, d, d).sum(axis=1))
    check_finite_output(S, "the summed increments", func=func)
    return S


def coupled_weights(increments, variance=1.0, *, factor=1):
    r"""Weights of the res-1 network (11) driven by given Brownian increments (the SDE coupling).

    With :math:`S_k` the sum of ``factor`` consecutive increments (the increment of :math:`\mathbf B`
    over the coarse step k of L = n / factor),

    .. math:: V_{k+1} = \sqrt{vL/d}\; S_k^\top, \qquad k = 0, \dots, L - 1.

    If the increments are :math:`\mathcal N(0, 1/n)` (:func:`brownian_increments`), the entries of
    :math:`V_{k+1}` are i.i.d. :math:`\mathcal N(0, v/d)`: the network ``forward(h0, V, None,
    beta=0.5, arch="res1", activation=...)`` is then model (11) in law, and on this path it equals
    ``sde_em(h0, increments, activation, variance, factor=factor)`` (the Euler-Maruyama scheme at the
    coarse step) to round-off, since :math:`L^{-1/2}\sqrt{vL/d}\,S_k^\top = \sqrt{v/d}\,S_k^\top`.
    The transpose comes from the row-vector form :math:`h^\top \leftarrow h^\top + \sigma(h^\top)\Delta\mathbf B`
    of (12). A strong-error study (Proposition 10) compares coarse networks with a fine EM reference
    on the same increments.

    Parameters
    ----------
    increments : array_like, shape (n, d, d)
    variance : float
        v > 0 (1 in the thesis, 2 in the preprint).
    factor : int
        Fine steps per layer; must divide n.

    Returns
    -------
    ndarray, shape (n / factor, d, d)

    Examples
    --------
    >>> import numpy as np
    >>> from theory.scaling import brownian_increments, coupled_weights, forward, sde_em
    >>> dB = brownian_increments(64, 3, rng=np.random.default_rng(1))
    >>> V = coupled_weights(dB, factor=4)
    >>> h = forward(np.ones(3), V, None, beta=0.5, arch="res1", activation="tanh")
    >>> bool(np.allclose(h, sde_em(np.ones(3), dB, "tanh", factor=4), rtol=1e-13, atol=0.0))
    True
    """
    func = "theory.scaling.coupled_weights"
    S = _coarse_sums(increments, factor, func)
    v = check_interval(variance, "variance", 0.0, np.inf, func=func)
    L, d = S.shape[:2]
    with np.errstate(over="ignore"):
        V = np.ascontiguousarray(np.sqrt(v * L / d) * S.transpose(0, 2, 1))
    return check_finite_output(V, "the weights", func=func, hint="Reduce the variance.")


def sde_em(h0, increments, activation="relu", variance=1.0, *, slope=0.8, factor=1):
    r"""Euler-Maruyama scheme of the neural SDE (12) on given Brownian increments.

    .. math:: H_{k+1} = H_k + \sqrt{v/d}\; S_k^\top\, \sigma(H_k), \qquad k = 0, \dots, L - 1,

    the row-vector form :math:`H_{k+1}^\top = H_k^\top + \sqrt{v/d}\,\sigma(H_k^\top)\,S_k` of
    :math:`dH_t^\top = \sqrt{v/d}\,\sigma(H_t^\top)\,d\mathbf B_t` (zero drift), where :math:`S_k` sums
    ``factor`` consecutive increments (so one path gives the scheme at every step that divides n).

    Parameters
    ----------
    h0 : array_like, shape (d,) or (B, d)
        :math:`H_0`; a batch shares the Brownian path (as a batch of inputs shares the weights).
    increments : array_like, shape (n, d, d)
        :math:`\mathbf B_{t_{j+1}} - \mathbf B_{t_j}` on a grid of [0, 1] (:func:`brownian_increments`).
    activation : {"relu", "leaky_relu", "identity", "tanh"}
        :math:`\sigma` (Lipschitz, as Proposition 10 asks).
    variance : float
        v > 0.
    slope : float
        Slope of leaky_relu.
    factor : int
        Fine steps per EM step; must divide n.

    Returns
    -------
    ndarray, shape (n / factor + 1, d) or (n / factor + 1, B, d)
        :math:`H_0, H_{1/L}, \dots, H_1` with L = n / factor.

    Raises
    ------
    TypeError, ValueError, theory.NonFiniteError

    Notes
    -----
    Strong order 1/2 (multiplicative, non-commutative noise). Claim: ``scaling`` Proposition 10; see
    :func:`coupled_weights` for the network on the same path.
    """
    func = "theory.scaling.sde_em"
    h, single = _states(h0, "h0", func)
    S = _coarse_sums(increments, factor, func)
    B, d = h.shape
    if S.shape[1] != d:
        raise ValueError(
            f"`increments` of {func} must have shape (n, {d}, {d}) with d = {d} from `h0`; got {np.shape(increments)}."
        )
    v = check_interval(variance, "variance", 0.0, np.inf, func=func)
    # A res-1 network with alpha = 1 and V_{k+1} = sqrt(v/d) S_k^T is exactly the EM step.
    with np.errstate(over="ignore"):
        Vem = np.ascontiguousarray(np.sqrt(v / d) * S.transpose(0, 2, 1))
    check_finite_output(Vem, "the scaled increments", func=func, hint="Reduce the variance.")
    net = _Net(func, d, "h0", Vem, None, 1.0, "res1", activation, slope)
    traj = np.empty((net.L + 1, B, d))
    K._forward(net.arch_code, net.act_code, net.slope, 1.0, Vem, net.W, h, traj, np.zeros(B),
               np.empty((0, B)), np.empty(d), False)
    check_finite_output(traj, "the Euler-Maruyama path", func=func, hint="Reduce the variance or the input.")
    return traj[:, 0, :] if single else traj


def _weight_fn(w, name, d, func):
    """A callable t -> (d, d) float64 array, from a callable or a constant (d, d) array."""
    if callable(w):
        def at(t):
            val = np.asarray(w(t))
            if val.shape != (d, d):
                raise ValueError(
                    f"`{name}` of {func} must return shape ({d}, {d}) at every t; got {val.shape} at t = {t}."
                )
            val = as_float_array(val, f"{name}(t)", func=func)
            return val
        at(0.0)  # validate once before integrating
        return at
    const = as_float_array(w, name, func=func, shape=(d, d))
    return lambda t: const


def _activation_np(activation, slope):
    if activation == "relu":
        return lambda z: np.maximum(z, 0.0)
    if activation == "leaky_relu":
        return lambda z: np.where(z > 0.0, z, slope * z)
    if activation == "identity":
        return lambda z: z
    return np.tanh


def neural_ode(h0, V, W=None, t=1.0, arch="res3", activation="relu", *, slope=0.8, rtol=1e-12, atol=1e-12):
    r"""Solve the neural ODE (14), :math:`dH_t = \mathscr V_t\, g(H_t, \Theta_t)\,dt`, :math:`H_0 = h_0`.

    With :math:`g` as in :func:`forward`: :math:`\sigma(H)` (res-1), :math:`\sigma(\mathscr W_t H)`
    (res-2), :math:`\mathrm{ReLU}(\mathscr W_t H)` (res-3). The network with
    :math:`V_k = \mathscr V_{k/L}`, :math:`W_k = \mathscr W_{k/L}` and beta = 1 is its Euler scheme
    (model (13), right-endpoint weights) and converges at rate 1/L (Proposition 11).

    Parameters
    ----------
    h0 : array_like, shape (d,) or (B, d)
    V : callable or array_like
        :math:`t \mapsto \mathscr V_t`, returning a (d, d) array for t in [0, 1], or a constant
        (d, d) array (tied weights). Exceptions raised by the callable pass through unchanged.
    W : callable, array_like or None
        :math:`t \mapsto \mathscr W_t` likewise; required for res-2/res-3, None for res-1.
    t : float or array_like, shape (T,)
        Output times in [0, 1], non-decreasing; integration starts at 0.
    arch, activation, slope
        As in :func:`forward`.
    rtol, atol : float
        DOP853 tolerances, in (0, 1).

    Returns
    -------
    ndarray, shape (d,) / (B, d) for a scalar ``t``, else (T, d) / (T, B, d)

    Raises
    ------
    TypeError, ValueError
        Bad inputs, or a weight callable returning a wrong shape or non-finite values.
    theory.NonFiniteError
        The solution overflowed.
    RuntimeError
        DOP853 failed.

    Notes
    -----
    The vector field is only Lipschitz where ReLU kinks are crossed; DOP853 then takes small steps
    and its accuracy degrades from ~rtol to ~1e-10. Use smooth weight callables (trigonometric
    sums, random Fourier features) rather than interpolated grid samples. Claims: ``scaling``
    Propositions 11, 12(ii).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.linalg import expm
    >>> from theory.scaling import neural_ode
    >>> Vbar = np.array([[0.0, 1.0], [-1.0, 0.0]])          # H_t = e^{t Vbar} h0 (res-1, identity)
    >>> H1 = neural_ode([1.0, 0.0], Vbar, None, 1.0, "res1", "identity")
    >>> bool(np.allclose(H1, expm(Vbar) @ [1.0, 0.0], rtol=1e-10))
    True
    """
    func = "theory.scaling.neural_ode"
    arch = check_choice(arch, "arch", ARCHS, func=func)
    activation = check_choice(activation, "activation", ACTIVATIONS, func=func)
    if arch == "res3" and activation != "relu":
        raise ValueError(f"`activation` of {func} must be 'relu' for arch 'res3'; got {activation!r}.")
    slope = check_interval(slope, "slope", -np.inf, np.inf, func=func)
    rtol = check_interval(rtol, "rtol", 0.0, 1.0, func=func)
    atol = check_interval(atol, "atol", 0.0, 1.0, func=func)
    h, single = _states(h0, "h0", func)
    B, d = h.shape
    ts = as_float_array(t, "t", func=func, ndim=(0, 1), min_size=1)
    scalar_t = np.ndim(t) == 0
    ts = ts.reshape(-1)
    if np.any(ts < 0.0) or np.any(ts > 1.0) or np.any(np.diff(ts) < 0.0):
        raise ValueError(f"`t` of {func} must be non-decreasing times in [0, 1]; got {ts.tolist()[:8]}.")
    Vf = _weight_fn(V, "V", d, func)
    if arch == "res1":
        if W is not None:
            raise ValueError(f"`W` of {func} must be None for arch 'res1'; got {type(W).__name__}.")
        Wf = None
    else:
        if W is None:
            raise ValueError(f"`W` of {func} is required for arch {arch!r}: a callable or a (d, d) array.")
        Wf = _weight_fn(W, "W", d, func)
    sigma = _activation_np(activation, slope)

    # Set when DOP853 meets a non-finite field or a state within 1e8 of the float64 maximum (its error
    # norm then overflows and it reports a step-size failure): a failure is then an overflow.
    overflowed = [False]
    huge = np.finfo(np.float64).max * 1e-8

    def rhs(s, y):
        H = y.reshape(B, d)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported once, by name, below
            Z = H if Wf is None else H @ Wf(s).T
            f = (sigma(Z) @ Vf(s).T).ravel()
        if not (np.all(np.isfinite(f)) and np.max(np.abs(y)) < huge):
            overflowed[0] = True
        return f

    out = np.empty((ts.size, B, d))
    t_end = float(ts[-1])
    if t_end == 0.0:
        out[:] = h
    else:
        with np.errstate(over="ignore", invalid="ignore"):  # as in rhs: reported below, by name
            sol = solve_ivp(rhs, (0.0, t_end), h.ravel(), method="DOP853", t_eval=ts, rtol=rtol, atol=atol)
        if not np.all(np.isfinite(sol.y)) or (not sol.success and overflowed[0]):
            raise NonFiniteError(f"{func}: the ODE solution overflowed to NaN or inf.")
        if not sol.success:
            raise RuntimeError(f"{func}: DOP853 failed: {sol.message}")
        out[:] = sol.y.T.reshape(ts.size, B, d)
    check_finite_output(out, "the ODE solution", func=func)
    if single:
        out = out[:, 0, :]
    return out[0] if scalar_t else out
