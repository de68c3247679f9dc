r"""Phase diagram of res-3 over (Hurst index, scaling exponent) with fGn weights (``scaling`` §4).

Figure 7 of Marion, Fermanian, Biau, Vert (thesis Figure 2.7): res-3,
:math:`h_{k+1} = h_k + L^{-\beta} V_{k+1}\mathrm{ReLU}(W_{k+1} h_k)`, whose weight sequences
:math:`(\sqrt d\,V_{k,ij})_{k=1}^L` and :math:`(\sqrt d\,W_{k,ij})_{k=1}^L` are independent unit-variance
fractional Gaussian noises of Hurst index H (:func:`theory.scaling.weights` with law ``"fbm"``). Each
cell holds

.. math:: \log_{10}\frac{\|h_L - h_0\|}{\|h_0\|} \quad\text{and}\quad
          \log_{10}\frac{\|p_0 - p_L\|}{\|p_L\|},

positive in the explosion regime, negative in the identity regime. The critical exponent
:math:`\beta^*(H)` is where the mean over weight draws crosses zero, by linear interpolation in beta;
the paper (Section 4.1) observes :math:`\beta^*(H) \approx \max(H, 1/2)`.

Public names: :func:`phase_diagram` (the grid of log ratios), :class:`PhaseDiagram` (its result) and
:func:`critical_beta` (the zero crossing of one curve). Claims: ``scaling/fig-7`` and
``scaling/fig-7/fine`` (through :func:`theory.experiments.scaling.fig7`). Claim ``scaling/e-2`` (the
identity-side slope) does not use this module: it fits depth ladders of :func:`theory.scaling.log_norm_ratio`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_float_array, check_array_memory, check_choice, check_int, check_work
from ._api import log_gradient_ratio, log_norm_ratio
from ._weights import as_generator, weights

__all__ = ["PhaseDiagram", "critical_beta", "phase_diagram"]

QUANTITIES = ("hidden", "gradient")
_LN10 = np.log(10.0)


def critical_beta(beta, values):
    r"""Zero crossing of a curve decreasing through zero: the critical exponent of one Hurst index.

    With :math:`v_i` the value at :math:`\beta_i` (a mean log ratio), the first index i with
    :math:`v_i \ge 0 > v_{i+1}` gives

    .. math:: \beta^* = \beta_i + (\beta_{i+1} - \beta_i)\,\frac{v_i}{v_i - v_{i+1}},

    the zero of the piecewise-linear interpolant on that interval.

    Parameters
    ----------
    beta : array_like, shape (n,)
        Strictly increasing exponents, n >= 2.
    values : array_like, shape (n,)
        Finite values at those exponents.

    Returns
    -------
    float
        :math:`\beta^*`, or NaN when the curve never crosses from non-negative to negative (all
        values negative: identity over the whole grid; all non-negative: explosion over it).

    Raises
    ------
    TypeError, ValueError
        Non-numeric input, shapes that differ, fewer than two points, beta not strictly
        increasing, non-finite values.

    Notes
    -----
    Where noise makes the curve cross zero several times, the first downward crossing is
    returned; :func:`phase_diagram` averages over weight draws before calling this.

    Examples
    --------
    >>> critical_beta([0.4, 0.5, 0.6], [0.3, 0.1, -0.3])
    0.525
    >>> import math
    >>> math.isnan(critical_beta([0.4, 0.5], [-0.2, -0.5]))
    True
    """
    func = "theory.scaling.phase.critical_beta"
    b = as_float_array(beta, "beta", func=func, ndim=1, min_size=2)
    v = as_float_array(values, "values", func=func, ndim=1)
    if v.shape != b.shape:
        raise ValueError(f"`values` of {func} must have the shape of `beta`, {b.shape}; got {v.shape}.")
    if np.any(np.diff(b) <= 0.0):
        raise ValueError(f"`beta` of {func} must be strictly increasing; got {b.tolist()[:8]}.")
    down = np.flatnonzero((v[:-1] >= 0.0) & (v[1:] < 0.0))
    if down.size == 0:
        return float("nan")
    i = int(down[0])
    return float(b[i] + (b[i + 1] - b[i]) * v[i] / (v[i] - v[i + 1]))


@dataclass(frozen=True)
class PhaseDiagram:
    """Log ratios of res-3 over a (Hurst index, beta) grid; returned by :func:`phase_diagram`.

    Attributes
    ----------
    hurst : ndarray, shape (nH,)
        Hurst indices.
    beta : ndarray, shape (nB,)
        Scaling exponents, strictly increasing.
    hidden : ndarray, shape (nH, nB, S)
        :math:`\\log_{10}(\\|h_L - h_0\\|/\\|h_0\\|)` for each weight draw s (mean over the inputs of
        that draw); the draws are shared by every beta of one Hurst index.
    gradient : ndarray, shape (nH, nB, S) or None
        :math:`\\log_{10}(\\|p_0 - p_L\\|/\\|p_L\\|)` likewise; None when not computed.
    L, d : int
        Depth and width.
    """

    hurst: np.ndarray
    beta: np.ndarray
    hidden: np.ndarray
    gradient: np.ndarray | None
    L: int
    d: int

    def mean(self, quantity="hidden"):
        """Mean over weight draws, shape (nH, nB), of ``"hidden"`` or ``"gradient"``."""
        return self._values(quantity).mean(axis=-1)

    def critical(self, quantity="hidden"):
        """:func:`critical_beta` of each Hurst index's mean curve, shape (nH,) (NaN: no crossing)."""
        m = self.mean(quantity)
        return np.array([critical_beta(self.beta, row) for row in m])

    def _values(self, quantity):
        check_choice(quantity, "quantity", QUANTITIES, func="theory.scaling.phase.PhaseDiagram")
        out = self.hidden if quantity == "hidden" else self.gradient
        if out is None:
            raise ValueError(
                "`quantity` of theory.scaling.phase.PhaseDiagram is 'gradient', but the diagram was "
                "computed with gradients=False."
            )
        return out


def _fbm_weights(L, d, hurst, rng):
    return weights(L, d, "fbm", hurst, rng)


def phase_diagram(hurst, beta, *, L=1000, d=40, n_seeds=2, n_inputs=1, rng=None, gradients=True, max_work=None,
                  weights_fn=None):
    r"""Grid of :math:`\log_{10}` hidden-state and gradient ratios of res-3 over (H, beta) (Figure 7).

    For each Hurst index and each of ``n_seeds`` weight draws, V and W (shape (L, d, d)) are drawn
    once and shared by every beta, as are ``n_inputs`` Gaussian inputs :math:`h_0` and gradient
    directions :math:`p_L` (:math:`n_{out} = 1`: :math:`p_L \propto B^\top` with a Gaussian
    readout B). The ratios are computed in the log domain (:func:`theory.scaling.log_norm_ratio`,
    :func:`theory.scaling.log_gradient_ratio`), so the explosion side never overflows.

    Parameters
    ----------
    hurst : array_like, shape (nH,)
        Hurst indices in (0, 1).
    beta : array_like, shape (nB,)
        Strictly increasing exponents, beta > 0; :math:`\alpha_L = L^{-\beta}`.
    L, d : int
        Depth and width (Table 3: L = 1000, d = 40).
    n_seeds : int
        Weight draws per Hurst index.
    n_inputs : int
        Inputs per weight draw; each cell stores the mean of their log ratios.
    max_work : float, optional
        Budget in floating-point operations (default 1e11, :data:`theory._validation.MAX_WORK`),
        estimated as len(hurst) n_seeds (80 L d^2 + len(beta) L (4 d^2 n_inputs (x2 with gradients)
        + 2000)); a larger estimate is refused up front.
    rng : numpy.random.Generator or None
        Every draw, in the order H, draw, (V, W, inputs).
    gradients : bool
        Also compute the gradient ratios (doubles the cost).
    weights_fn : callable or None
        ``weights_fn(L, d, hurst, rng)`` returning (L, d, d) weights, called twice per draw (V,
        then W); default ``weights(L, d, "fbm", hurst, rng)``. Used to compare fGn samplers.

    Returns
    -------
    PhaseDiagram

    Raises
    ------
    TypeError, ValueError
        Bad grids, sizes or rng; weights of the wrong shape from ``weights_fn``.

    Notes
    -----
    Cost O(nH S (d^2 L log L + nB n_inputs L d^2)); the reduced grid of the ``scaling/fig-7`` check
    (7 Hurst indices, 25 betas, 2 draws, L = 1000, d = 40, with gradients) takes a few seconds.

    Examples
    --------
    >>> import numpy as np
    >>> pd = phase_diagram([0.5], [0.25, 1.0], L=200, d=8, rng=np.random.default_rng(0), gradients=False)
    >>> pd.hidden.shape
    (1, 2, 2)
    >>> bool(pd.mean()[0, 0] > 0 > pd.mean()[0, 1])      # explosion at beta = 1/4, identity at 1
    True
    """
    func = "theory.scaling.phase.phase_diagram"
    hs = as_float_array(hurst, "hurst", func=func, ndim=1, min_size=1, copy=True)
    if np.any(hs <= 0.0) or np.any(hs >= 1.0):
        raise ValueError(f"`hurst` of {func} must lie in (0, 1); got {hs.tolist()[:8]}.")
    bs = as_float_array(beta, "beta", func=func, ndim=1, min_size=1, copy=True)
    if np.any(bs <= 0.0) or np.any(np.diff(bs) <= 0.0):
        raise ValueError(f"`beta` of {func} must be positive and strictly increasing; got {bs.tolist()[:8]}.")
    L = check_int(L, "L", func=func, minimum=1)
    d = check_int(d, "d", func=func, minimum=1)
    n_seeds = check_int(n_seeds, "n_seeds", func=func, minimum=1)
    n_inputs = check_int(n_inputs, "n_inputs", func=func, minimum=1)
    check_array_memory((3, L + 1, max(d * d, n_inputs * d)), {"L": L, "d": d, "n_inputs": n_inputs}, func=func)
    if not isinstance(gradients, (bool, np.bool_)):
        raise TypeError(f"`gradients` of {func} must be a bool; got {gradients!r}.")
    if weights_fn is not None and not callable(weights_fn):
        raise TypeError(f"`weights_fn` of {func} must be callable or None; got {type(weights_fn).__name__}.")
    # per draw: two fGn weight tensors (FFTs, ~40 L d^2) and per beta a forward (and backward) pass
    per_draw = 80.0 * L * d * d + bs.size * L * (4.0 * d * d * n_inputs * (2 if gradients else 1) + 2e3)
    name = max({"n_seeds": n_seeds, "L": L}.items(), key=lambda kv: kv[1])[0]
    check_work(hs.size * n_seeds * per_draw, name, n_seeds if name == "n_seeds" else L, func=func,
               max_work=max_work)
    gen = as_generator(rng, func)
    draw = _fbm_weights if weights_fn is None else weights_fn

    hidden = np.empty((hs.size, bs.size, n_seeds))
    grad = np.empty_like(hidden) if gradients else None
    for i, H in enumerate(hs):
        for s in range(n_seeds):
            V = as_float_array(draw(L, d, float(H), gen), "weights_fn(...)", func=func, shape=(L, d, d))
            W = as_float_array(draw(L, d, float(H), gen), "weights_fn(...)", func=func, shape=(L, d, d))
            h0 = gen.standard_normal((n_inputs, d))
            pL = gen.standard_normal((n_inputs, d))
            for j, b in enumerate(bs):
                hidden[i, j, s] = np.mean(log_norm_ratio(h0, V, W, b, "res3")) / _LN10
                if gradients:
                    grad[i, j, s] = np.mean(log_gradient_ratio(h0, V, W, pL, b, "res3")) / _LN10
    for arr in (hs, bs, hidden) + ((grad,) if gradients else ()):
        arr.setflags(write=False)
    return PhaseDiagram(hurst=hs, beta=bs, hidden=hidden, gradient=grad, L=L, d=d)
