r"""Generic estimators of the Polyak-Lojasiewicz (PL) ratio (paper key ``implicit-reg``, Definition 1 and
Propositions 5 and 8; they take numbers or callables, not that paper's model).

A loss :math:`\ell \ge 0` satisfies the PL condition with constant :math:`\mu > 0` on a set :math:`S` if
:math:`\|\nabla\ell(w)\|^2 \ge \mu\,\ell(w)` for all :math:`w \in S`; the best constant is
:math:`\mu_S = \inf_S \|\nabla\ell\|^2/\ell`. Along the gradient flow :math:`\dot w = -\nabla\ell(w)`,
:math:`\frac{d}{dt}\ell = -\|\nabla\ell\|^2`, so :math:`-\frac{d}{dt}\log\ell = \|\nabla\ell\|^2/\ell \ge \mu_S`
and :math:`\ell(t) \le e^{-\mu_S t}\ell(0)` while the flow stays in :math:`S` (Prop. 8 (v)).

Every estimator here reports the ratio where the loss is positive and raises :class:`ValueError` at a zero
loss: the ratio is undefined there (0/0 at a global minimiser), and it is reported, never divided silently.
A sampled infimum is an *upper* bound on :math:`\mu_S` (a minimiser may be missed); only a proof gives a
lower bound.

Worked example (used in tests/test_pl.py). Least squares :math:`\ell(w) = \tfrac12\|Xw - y\|^2`,
:math:`X \in \mathbb R^{n\times p}`, :math:`y \in \mathrm{range}(X)`. The residual :math:`\rho = Xw - y` lies in
:math:`\mathrm{range}(X)`; write :math:`X = U\Sigma V^\top` (thin SVD over the :math:`k` positive singular
values), :math:`\rho = Uc`. Then :math:`\nabla\ell = X^\top\rho = V\Sigma c`, so
:math:`\|\nabla\ell\|^2 = \sum_i s_i^2c_i^2 \ge s_{\min}^{+2}\|c\|^2 = s_{\min}^{+2}\cdot 2\ell`, i.e.

.. math:: \|\nabla\ell(w)\|^2 / \ell(w) \ge 2\, s_{\min}^+(X)^2,

with equality exactly when :math:`\rho` is a left singular vector of :math:`s_{\min}^+`, i.e. on the line
:math:`w = w^\star + \tau v_{\min}` (:math:`\tau \ne 0`). The ratio depends only on the direction of
:math:`w - w^\star`, so on any ball containing a minimiser :math:`w^\star` in its interior the PL constant is
exactly :math:`2 s_{\min}^+(X)^2`. (If :math:`y \notin \mathrm{range}(X)` the minimum loss is positive and
the PL inequality fails near the minimiser: :math:`\ell` must be replaced by :math:`\ell - \ell^\star`.)
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .._errors import NonFiniteError
from .._validation import as_float_array, check_int, check_interval, plain

__all__ = ["BallPL", "IntegratedPL", "TrajectoryPL", "ball_pl", "integrated_pl", "pl_ratio", "trajectory_pl"]


def _check_losses(losses, name, func):
    """Raise at a zero or negative loss; the message names the first offending index."""
    bad = np.flatnonzero(losses <= 0.0)
    if bad.size:
        i = int(bad[0])
        what = "zero" if losses[i] == 0.0 else "negative"
        raise ValueError(f"`{name}` of {func} must be positive: entry {i} is {what} ({losses[i]!r}); the PL "
                         f"ratio ||grad l||^2 / l is undefined at a zero loss (a global minimiser) and a PL "
                         f"loss is nonnegative. Report such a point instead of dividing by it.")


@np.errstate(all="ignore")
def pl_ratio(loss, grad):
    r"""PL ratio :math:`\|\nabla\ell(w)\|^2 / \ell(w)` at one point.

    Parameters
    ----------
    loss : float
        :math:`\ell(w) > 0`.
    grad : array_like, any shape
        :math:`\nabla\ell(w)` (Euclidean norm of the flattened array).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``loss`` zero (undefined ratio: reported, never divided), negative or not finite; ``grad`` not finite.
    TypeError
        ``loss`` not a real number, ``grad`` not a real array.

    Examples
    --------
    Least squares :math:`\ell(w) = \frac12\|Xw - y\|^2` with :math:`X = \mathrm{diag}(1, 2)`, :math:`y = 0`,
    at :math:`w = (1, 0)`: :math:`\ell = 1/2`, :math:`\nabla\ell = (1, 0)`, ratio
    :math:`2 = 2 s_{\min}(X)^2`.

    >>> from theory.pl import pl_ratio
    >>> pl_ratio(0.5, [1.0, 0.0])
    2.0
    """
    func = "theory.pl.pl_ratio"
    loss = check_interval(loss, "loss", -np.inf, np.inf, func=func)
    _check_losses(np.array([loss]), "loss", func)
    g = as_float_array(grad, "grad", func=func)
    out = float(np.dot(g.ravel(), g.ravel()) / loss)
    if not np.isfinite(out):
        raise NonFiniteError(f"theory.pl.pl_ratio: ||grad||^2 / loss overflowed (loss = {plain(loss)!r}); rescale the loss.")
    return out


@dataclass(frozen=True)
class TrajectoryPL:
    """PL ratios along a recorded trajectory.

    Attributes
    ----------
    ratios : ndarray, shape (T,)
        :math:`\\|\\nabla\\ell_k\\|^2 / \\ell_k` per step.
    mu_min : float
        Their minimum: the empirical PL constant along the trajectory.
    argmin : int
        Step index of the minimum (first one on ties).
    """

    ratios: np.ndarray
    mu_min: float
    argmin: int

    def to_measured(self):
        return {"mu_min": self.mu_min, "argmin": self.argmin, "n_steps": int(self.ratios.size)}


@np.errstate(all="ignore")
def trajectory_pl(losses, grad_norms_sq):
    r"""Per-step PL ratios :math:`\mu_k = \|\nabla\ell(w_k)\|^2/\ell(w_k)` and their minimum.

    Parameters
    ----------
    losses : array_like, shape (T,)
        :math:`\ell(w_k) > 0`, T >= 1.
    grad_norms_sq : array_like, shape (T,)
        :math:`\|\nabla\ell(w_k)\|^2 \ge 0` (squared norms, in the metric of the flow).

    Returns
    -------
    TrajectoryPL

    Raises
    ------
    ValueError
        A zero loss (the ratio is undefined there: the index is reported), a negative loss or squared norm,
        mismatched shapes, NaN or inf.

    Examples
    --------
    >>> from theory.pl import trajectory_pl
    >>> trajectory_pl([1.0, 0.5, 0.25], [2.0, 0.9, 0.5]).mu_min
    1.8
    """
    func = "theory.pl.trajectory_pl"
    losses = as_float_array(losses, "losses", func=func, ndim=1, min_size=1)
    g = as_float_array(grad_norms_sq, "grad_norms_sq", func=func, shape=(losses.size,))
    _check_losses(losses, "losses", func)
    if (g < 0).any():
        i = int(np.flatnonzero(g < 0)[0])
        raise ValueError(f"`grad_norms_sq` of {func} must be >= 0 (squared norms); entry {i} is {g[i]!r}.")
    ratios = g / losses
    if not np.isfinite(ratios).all():
        raise NonFiniteError(f"{func}: grad_norms_sq / losses overflowed; rescale the loss.")
    k = int(np.argmin(ratios))
    return TrajectoryPL(ratios=ratios, mu_min=float(ratios[k]), argmin=k)


@dataclass(frozen=True)
class IntegratedPL:
    """Implied PL rate along a gradient-flow trajectory.

    Attributes
    ----------
    t : ndarray, shape (T,)
    mu : ndarray, shape (T,)
        :math:`\\mu(t) = -\\frac{d}{dt}\\log\\ell(t)` by second-order finite differences
        (``numpy.gradient``, ``edge_order=2``; error :math:`O(h^2)`).
    mu_average : ndarray, shape (T - 1,)
        :math:`\\log(\\ell(t_0)/\\ell(t_k)) / (t_k - t_0)` for k >= 1: the rate of
        :math:`\\ell(t) \\le e^{-\\mu t}\\ell(t_0)` (Prop. 8 (v)) actually achieved.
    mu_min : float
        ``min(mu)``.
    dloss_dt : ndarray, shape (T,)
        :math:`\\frac{d\\ell}{dt}` by the same finite differences.
    residual : ndarray, shape (T,) or None
        :math:`(\\frac{d\\ell}{dt} + \\|\\nabla\\ell\\|^2) / \\|\\nabla\\ell\\|^2` when ``grad_norms_sq`` was given:
        the gradient-flow identity :math:`\\frac{d\\ell}{dt} = -\\|\\nabla\\ell\\|^2`, relative
        (0/0 entries, a zero gradient with a constant loss, count as 0).
    max_relative_residual : float or None
        ``max |residual|``.
    """

    t: np.ndarray
    mu: np.ndarray
    mu_average: np.ndarray
    mu_min: float
    dloss_dt: np.ndarray
    residual: np.ndarray | None
    max_relative_residual: float | None

    def to_measured(self):
        return {"mu_min": self.mu_min, "mu_average_final": float(self.mu_average[-1]),
                "max_relative_residual": self.max_relative_residual}


@np.errstate(all="ignore")
def integrated_pl(t, losses, grad_norms_sq=None):
    r"""Implied PL rate :math:`\mu(t) = -\frac{d}{dt}\log\ell(t)` and the identity
    :math:`\frac{d\ell}{dt} = -\|\nabla\ell\|^2` along a gradient-flow trajectory.

    Along :math:`\dot w = -\nabla\ell(w)`, :math:`\mu(t) = \|\nabla\ell(w(t))\|^2/\ell(w(t))`, the PL ratio at
    the current point, so :math:`\min_t\mu(t)` estimates the PL constant of the region the flow visits.
    Derivatives are second-order finite differences in ``t`` (non-uniform grids allowed), accurate to
    :math:`O(h^2)`: a residual of order :math:`h^2` is discretisation, a larger one means the trajectory is
    not a gradient flow of this loss (wrong metric, a missing factor such as the paper's L, or a discrete
    optimiser with a large step).

    Parameters
    ----------
    t : array_like, shape (T,)
        Strictly increasing times, T >= 3.
    losses : array_like, shape (T,)
        :math:`\ell(t_k) > 0`.
    grad_norms_sq : array_like, shape (T,), optional
        :math:`\|\nabla\ell(w(t_k))\|^2` in the metric of the flow; enables the residual.

    Returns
    -------
    IntegratedPL

    Raises
    ------
    ValueError
        ``t`` not strictly increasing or shorter than 3, a zero (reported) or negative loss, shape mismatch,
        NaN or inf.

    Examples
    --------
    :math:`\ell(t) = e^{-2t}` (flow of :math:`\frac12 w^2` scaled): :math:`\mu \equiv 2`.

    >>> import numpy as np
    >>> from theory.pl import integrated_pl
    >>> t = np.linspace(0.0, 1.0, 101)
    >>> res = integrated_pl(t, np.exp(-2 * t), 2 * np.exp(-2 * t))
    >>> bool(abs(res.mu_min - 2) < 1e-3), bool(res.max_relative_residual < 1e-3)
    (True, True)
    """
    func = "theory.pl.integrated_pl"
    t = as_float_array(t, "t", func=func, ndim=1, min_size=3)
    losses = as_float_array(losses, "losses", func=func, shape=(t.size,))
    if not (np.diff(t) > 0).all():
        raise ValueError(f"`t` of {func} must be strictly increasing.")
    _check_losses(losses, "losses", func)
    g = None
    if grad_norms_sq is not None:
        g = as_float_array(grad_norms_sq, "grad_norms_sq", func=func, shape=(t.size,))
        if (g < 0).any():
            raise ValueError(f"`grad_norms_sq` of {func} must be >= 0 (squared norms).")
    mu = -np.gradient(np.log(losses), t, edge_order=2)
    dl = np.gradient(losses, t, edge_order=2)
    mu_avg = np.log(losses[0] / losses[1:]) / (t[1:] - t[0])
    residual = max_res = None
    if g is not None:
        num = dl + g
        residual = np.divide(num, g, out=np.zeros_like(num), where=g > 0)
        bad = np.flatnonzero((g == 0) & (num != 0))
        if bad.size:
            raise ValueError(f"`grad_norms_sq` of {func} is 0 at t[{int(bad[0])}] while the loss changes there "
                             f"(dl/dt = {plain(dl[bad[0]])!r}): the trajectory is not a gradient flow of this loss.")
        max_res = float(np.abs(residual).max())
    outputs = (mu, dl, mu_avg) + (() if residual is None else (residual,))
    if not all(np.isfinite(a).all() for a in outputs):
        raise NonFiniteError(f"{func}: the finite differences overflowed to NaN or inf (losses span "
                             f"{losses.min():.3g}..{losses.max():.3g} over t in {t[0]:.3g}..{t[-1]:.3g}); rescale "
                             f"the losses or the times.")
    return IntegratedPL(t=t, mu=mu, mu_average=mu_avg, mu_min=float(mu.min()), dloss_dt=dl, residual=residual,
                        max_relative_residual=max_res)


@dataclass(frozen=True)
class BallPL:
    """Smallest PL ratio found on a Euclidean ball.

    Attributes
    ----------
    mu_min : float
        :math:`\\min` of :math:`\\|\\nabla\\ell\\|^2/\\ell` over every point evaluated: an upper bound on the
        ball's PL constant.
    argmin : ndarray, shape of ``center``
        Where it was found.
    n_evaluations : int
        Number of ratio evaluations (each one ``loss_fn`` and one ``grad_fn`` call), finite-difference
        probes included.
    mu_random : float
        Minimum over the centre and the ``n_random`` uniform points.
    mu_adversarial : float or None
        Minimum reached by the projected descents (None if ``n_adversarial`` = 0).
    n_random, n_adversarial : int
        The knobs used.
    """

    mu_min: float
    argmin: np.ndarray
    n_evaluations: int
    mu_random: float
    mu_adversarial: float | None
    n_random: int
    n_adversarial: int

    def to_measured(self):
        return {"mu_min": self.mu_min, "mu_random": self.mu_random, "mu_adversarial": self.mu_adversarial,
                "n_evaluations": self.n_evaluations}


class _Ratio:
    """Counts evaluations and validates what the user's callables return."""

    def __init__(self, loss_fn, grad_fn, shape, func):
        self.loss_fn, self.grad_fn, self.shape, self.func, self.n = loss_fn, grad_fn, shape, func, 0

    def __call__(self, w):
        self.n += 1
        x = w.reshape(self.shape).copy()  # the user's callables may mutate their argument
        loss = self.loss_fn(x)
        if isinstance(loss, np.ndarray) and loss.size == 1:
            loss = loss.reshape(())[()]
        if isinstance(loss, (bool, np.bool_)) or not isinstance(loss, (numbers.Real, np.floating, np.integer)):
            raise TypeError(f"`loss_fn` of {self.func} must return a real number; got {type(loss).__name__}.")
        loss = float(loss)
        if not np.isfinite(loss) or loss < 0:
            raise ValueError(f"`loss_fn` of {self.func} must return a finite nonnegative loss; got {plain(loss)!r} at "
                             f"w = {x.ravel().tolist()}.")
        if loss == 0.0:
            raise ValueError(f"`loss_fn` of {self.func} returned 0 at w = {x.ravel().tolist()}: the PL ratio is "
                             f"undefined at a global minimiser. Report it (shrink or move the ball) rather "
                             f"than divide by it.")
        g = np.asarray(self.grad_fn(w.reshape(self.shape).copy()), dtype=np.float64)
        if g.size != w.size:
            raise ValueError(f"`grad_fn` of {self.func} must return an array of shape {self.shape}; "
                             f"got shape {g.shape}.")
        if not np.isfinite(g).all():
            raise ValueError(f"`grad_fn` of {self.func} returned NaN or inf at w = {x.ravel().tolist()}.")
        g = g.ravel()
        out = float(g @ g) / loss
        if not np.isfinite(out):
            raise NonFiniteError(f"{self.func}: ||grad||^2 / loss overflowed at w = {x.ravel().tolist()}.")
        return out


def _project(w, center, radius):
    d = w - center
    n = np.linalg.norm(d)
    return w if n <= radius else center + d * (radius / n)


def _descend(ratio, w, value, center, radius, n_steps, h):
    """Projected normalised-gradient descent on the ratio with an adaptive step (accept only decreases)."""
    step = radius / 4.0
    for _ in range(n_steps):
        grad = np.empty_like(w)
        for i in range(w.size):  # central differences of the ratio
            e = np.zeros_like(w)
            e[i] = h
            grad[i] = (ratio(w + e) - ratio(w - e)) / (2.0 * h)
        norm = np.linalg.norm(grad)
        if not norm > 0:
            break
        while step > 1e-12 * radius:
            trial = _project(w - step * grad / norm, center, radius)
            v = ratio(trial)
            if v < value:
                w, value, step = trial, v, step * 1.5
                break
            step *= 0.5
        else:
            break
    return w, value


@np.errstate(all="ignore")
def ball_pl(loss_fn, grad_fn, center, radius, *, n_random=256, n_adversarial=4, n_steps=1000, fd_step=1e-6,
            rng=None):
    r"""Smallest PL ratio :math:`\|\nabla\ell(w)\|^2/\ell(w)` found on the ball
    :math:`\{w : \|w - c\|_2 \le M\}` by random sampling and by projected descent on the ratio.

    Method: (1) evaluate the ratio at the centre and at ``n_random`` points uniform in the ball
    (:math:`c + M u^{1/p} g/\|g\|`, :math:`g` Gaussian, :math:`u` uniform, p the number of parameters);
    (2) from the ``n_adversarial`` lowest of them, run at most ``n_steps`` steps of projected normalised
    gradient descent on the ratio, with its gradient by central differences (step ``fd_step * radius``,
    2p evaluations per step) and an adaptive step length that accepts decreases only. The result is the
    smallest value seen: an upper bound on the PL constant of the ball (a sampled infimum cannot certify
    a lower bound). The norm is the Euclidean norm of the flattened parameters; for block-wise balls such
    as Definition 1 of ``implicit-reg``, reparametrise first.

    Parameters
    ----------
    loss_fn : callable
        ``loss_fn(w) -> float`` with ``w`` of the shape of ``center``; must be > 0 wherever evaluated.
    grad_fn : callable
        ``grad_fn(w) -> array`` of the shape of ``center`` (in the metric of the flow).
    center : array_like, any shape with at least one element
    radius : float
        :math:`M > 0`.
    n_random : int, keyword-only
        Uniform points (>= 0).
    n_adversarial : int, keyword-only
        Descents (>= 0, at most ``n_random + 1``).
    n_steps : int, keyword-only
        Steps per descent (>= 1); a descent also stops when its step length falls below 1e-12 * radius.
        Normalised gradient descent zigzags on an ill-conditioned ratio: on least squares with
        :math:`s_{\max}/s_{\min}^+ = 10` it needs ~1000 steps for 1e-14 relative accuracy (~300 for 1e-4).
    fd_step : float, keyword-only
        Finite-difference step relative to ``radius``, in (0, 0.1].
    rng : None, int or numpy.random.Generator, keyword-only

    Returns
    -------
    BallPL

    Raises
    ------
    ValueError
        ``radius`` <= 0 or not finite, bad knobs, ``loss_fn`` returning 0 (the ratio is undefined at a
        global minimiser: reported), a negative or non-finite loss, a gradient of the wrong shape or
        non-finite.
    TypeError
        Non-callable ``loss_fn``/``grad_fn``, non-integer knobs, ``loss_fn`` not returning a number.

    Examples
    --------
    Least squares with :math:`X = \mathrm{diag}(1, 3)`, :math:`y = 0` (so :math:`w^\star = 0`); the ball
    around (0.1, 0.1) of radius 1 contains :math:`w^\star`, so its PL constant is
    :math:`2 s_{\min}(X)^2 = 2`:

    >>> import numpy as np
    >>> from theory.pl import ball_pl
    >>> X = np.diag([1.0, 3.0])
    >>> res = ball_pl(lambda w: 0.5 * np.sum((X @ w) ** 2), lambda w: X.T @ (X @ w), [0.1, 0.1], 1.0, rng=0)
    >>> bool(abs(res.mu_min - 2.0) < 1e-6)
    True
    """
    func = "theory.pl.ball_pl"
    if not callable(loss_fn):
        raise TypeError(f"`loss_fn` of {func} must be callable; got {type(loss_fn).__name__}.")
    if not callable(grad_fn):
        raise TypeError(f"`grad_fn` of {func} must be callable; got {type(grad_fn).__name__}.")
    center = as_float_array(center, "center", func=func, min_size=1, copy=True)
    radius = check_interval(radius, "radius", 0.0, np.inf, func=func)
    n_random = check_int(n_random, "n_random", func=func, minimum=0)
    n_adversarial = check_int(n_adversarial, "n_adversarial", func=func, minimum=0, maximum=n_random + 1)
    n_steps = check_int(n_steps, "n_steps", func=func, minimum=1)
    fd_step = check_interval(fd_step, "fd_step", 0.0, 0.1, func=func, closed="right")
    if not (rng is None or isinstance(rng, (np.random.Generator, numbers.Integral))) or isinstance(rng, bool):
        raise TypeError(f"`rng` of {func} must be None, an int seed or a numpy.random.Generator; got {rng!r}.")
    rng = np.random.default_rng(rng)

    shape, c = center.shape, center.ravel()
    p = c.size
    ratio = _Ratio(loss_fn, grad_fn, shape, func)
    g = rng.standard_normal((n_random, p))
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    pts = np.vstack([c[None, :], c + radius * rng.random((n_random, 1)) ** (1.0 / p) * g / norms])
    vals = np.array([ratio(x) for x in pts])
    order = np.argsort(vals, kind="stable")
    best_w, best = pts[order[0]], float(vals[order[0]])
    mu_random = best
    mu_adv = None
    for i in order[:n_adversarial]:
        w, v = _descend(ratio, pts[i].copy(), float(vals[i]), c, radius, n_steps, fd_step * radius)
        mu_adv = v if mu_adv is None else min(mu_adv, v)
        if v < best:
            best_w, best = w, v
    return BallPL(mu_min=best, argmin=best_w.reshape(shape).copy(), n_evaluations=ratio.n, mu_random=mu_random,
                  mu_adversarial=mu_adv, n_random=n_random, n_adversarial=n_adversarial)
