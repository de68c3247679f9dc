r"""Initial weight laws of ``scaling``: i.i.d. (A1), smooth (A5) and fractional (Section 4).

Every law gives ``(L, d, d)`` weights whose entries, multiplied by :math:`\sqrt d`, have mean 0 and
variance 1, and do not depend on L in law (all L-dependence of the network sits in
:math:`\alpha_L`, ``scaling`` §2.1).
"""

from __future__ import annotations

import functools

import numpy as np

from .._validation import as_float_array, check_array_memory, check_choice, check_int, check_interval
from .._validation import as_generator as _as_generator

__all__ = ["LAWS", "SMOOTH_LENGTHSCALE", "weights"]

#: Weight laws accepted by :func:`weights`.
LAWS = ("gaussian", "uniform", "rademacher", "smooth", "fbm")
#: Default RBF length-scale of the smooth law: the paper's "RBF kernel of variance 1e-2" (Appendix E)
#: is the squared length-scale in the authors' code, so ell = 0.1.
SMOOTH_LENGTHSCALE = 0.1


def as_generator(rng, func):
    """``rng`` as a :class:`numpy.random.Generator` (NumPy's convention: None, an int seed or a
    Generator; see :func:`theory._validation.as_generator`)."""
    return _as_generator(rng, "rng", func)


#: Pivoted-Cholesky stopping tolerance of the smooth law: every marginal variance is within it of 1
#: and every covariance entry within it of the RBF kernel.
_RBF_TOL = 1e-12


@functools.lru_cache(maxsize=16)
def _rbf_factor(L, lengthscale):
    r"""F (L, r) with F F^T = K - R, K the RBF Gram matrix exp(-(s - s')^2 / (2 ell^2)) at s = k/L.

    Pivoted (low-rank) Cholesky: repeatedly take the grid point of largest residual variance as the
    next pivot and subtract its conditional column, until every residual variance R_kk is at most
    :data:`_RBF_TOL`. R stays positive semi-definite, so |R_kl| <= sqrt(R_kk R_ll) <= tol entrywise:
    marginal variances are 1 to 1e-12 and no jitter is needed. A smooth kernel on a fine grid is
    numerically low-rank (r = 31 at L = 1000, ell = 0.1), so this costs O(L r^2) (milliseconds),
    where a full eigendecomposition of the numerically singular Gram matrix takes seconds; r grows
    to L as ell shrinks below the grid spacing. Cached, as a sweep over seeds reuses it.
    """
    s = np.arange(1, L + 1) / L
    F = np.empty((L, L))
    resid = np.ones(L)  # diagonal of K - F F^T; K has a unit diagonal
    r = 0
    while r < L:
        i = int(np.argmax(resid))
        if resid[i] <= _RBF_TOL:
            break
        with np.errstate(over="ignore"):  # a length-scale near 1e-300 overflows z to inf: exp(-inf) = 0
            z = (s - s[i]) / lengthscale  # not ell**2, which overflows (OverflowError) for ell near 1e300
            col = np.exp(-0.5 * (z * z)) - F[:, :r] @ F[i, :r]
        col /= np.sqrt(resid[i])
        F[:, r] = col
        resid -= col * col
        resid[i] = 0.0  # exactly, by construction (rounding aside)
        r += 1
    F = np.ascontiguousarray(F[:, :r])
    F.setflags(write=False)
    return F


def weights(L, d, law, hurst=None, rng=None, *, lengthscale=None):
    r"""Layer weights :math:`V_1, \dots, V_L` at initialisation, shape (L, d, d).

    The entries of :math:`\sqrt d\,V_k` have mean 0 and unit variance under every law:

    * ``"gaussian"``: i.i.d. :math:`\mathcal N(0, 1/d)` (He);
    * ``"uniform"``: i.i.d. :math:`\mathcal U(-\sqrt{3/d}, \sqrt{3/d})` (Glorot / Keras);
    * ``"rademacher"``: i.i.d. :math:`\pm 1/\sqrt d`;
    * ``"smooth"``: :math:`V_k = \mathscr V_{k/L}` where each entry of :math:`\sqrt d\,\mathscr V` is an
      independent zero-mean Gaussian process on [0, 1] with RBF covariance
      :math:`\exp(-(s-s')^2/(2\ell^2))` (unit marginal variance);
    * ``"fbm"``: each entry sequence :math:`(\sqrt d\,V_{k,ij})_{k=1}^L` is an independent
      unit-variance fractional Gaussian noise of Hurst index ``hurst`` (increments of fBm
      normalised to unit variance), from :func:`theory.fbm.fgn`.

    The three i.i.d. laws are symmetric and 1-sub-Gaussian after the :math:`\sqrt d` rescaling:
    they satisfy (A1) with s = 1. They are independent across layers and entries.

    Parameters
    ----------
    L : int
        Depth, L >= 1.
    d : int
        Width, d >= 1.
    law : {"gaussian", "uniform", "rademacher", "smooth", "fbm"}
    hurst : float, optional
        Hurst index in (0, 1), required for ``"fbm"`` and refused for the other laws.
    rng : numpy.random.Generator or None
        Source of randomness; None draws fresh entropy (not reproducible). Integer seeds are refused:
        two calls with the same seed (for V and for W) would give identical weights.
    lengthscale : float, optional
        RBF length-scale :math:`\ell > 0` of ``"smooth"`` (default :data:`SMOOTH_LENGTHSCALE` = 0.1);
        refused for the other laws.

    Returns
    -------
    ndarray, shape (L, d, d)
        ``out[k]`` is :math:`V_{k+1}`, the weights of the layer mapping :math:`h_k` to :math:`h_{k+1}`.

    Raises
    ------
    TypeError, ValueError
        Bad L, d, law, hurst, lengthscale or rng; ``hurst`` / ``lengthscale`` given to another law.
    ImportError
        ``"fbm"`` while :mod:`theory.fbm` is not installed.

    Notes
    -----
    *Smooth law: values, not increments.* The smooth law samples the process at the grid points,
    :math:`V_k = \mathscr V_{k/L}` for k = 1..L (the index range of (A5) in the thesis version; the
    preprint's "0 <= k <= L - 1" would need a :math:`V_0`), because (A5) and Proposition 11 are stated
    for :math:`V_k = \mathscr V_{k/L}` with :math:`\mathscr V` Lipschitz: consecutive layers then differ
    by O(1/L) and the network with :math:`\alpha_L = 1/L` converges to the neural ODE (14). The authors'
    code for Figures 4-5 instead takes normalised *increments* of the process (about a derivative GP
    divided by :math:`\sqrt d`); both are smooth in k with the same critical beta = 1, and the values
    are the paper's stated model. Sampling: a low-rank pivoted Cholesky factor of the L x L Gram
    matrix (cached per (L, ell)); marginal variances are 1 and covariances the kernel's to 1e-12.

    *fBm law: unit variance, L-independent.* Increments of an fBm on [0, 1] have standard deviation
    :math:`L^{-H}`; like the authors' experiments (Figure 7, Table 3) the fGn is normalised to unit
    variance, so that the scale sits in :math:`\alpha_L` only. Literal increments would move the phase
    boundary to :math:`\max(0, 1/2 - H)`.

    The second weight family (``W`` of res-2/res-3, or :math:`\theta`) is drawn by a second call; the
    paper uses the same law for both.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.scaling import weights
    >>> V = weights(3, 2, "rademacher", rng=np.random.default_rng(0))
    >>> V.shape, bool(np.allclose(np.abs(V), 2 ** -0.5))
    ((3, 2, 2), True)
    """
    func = "theory.scaling.weights"
    L = check_int(L, "L", func=func, minimum=1)
    d = check_int(d, "d", func=func, minimum=1)
    law = check_choice(law, "law", LAWS, func=func)
    # the smooth law also builds an (L, L) kernel matrix
    check_array_memory((L, max(d * d, L if law == "smooth" else 1)), {"L": L, "d": d}, func=func, factor=2)
    if law == "fbm":
        if hurst is None:
            raise ValueError(f"`hurst` of {func} is required for law 'fbm': a Hurst index in (0, 1).")
        hurst = check_interval(hurst, "hurst", 0.0, 1.0, func=func)
    elif hurst is not None:
        raise ValueError(f"`hurst` of {func} applies to law 'fbm' only; got hurst={hurst!r} with law {law!r}.")
    if law == "smooth":
        ell = SMOOTH_LENGTHSCALE if lengthscale is None else lengthscale
        ell = check_interval(ell, "lengthscale", 0.0, np.inf, func=func)
    elif lengthscale is not None:
        raise ValueError(
            f"`lengthscale` of {func} applies to law 'smooth' only; got lengthscale={lengthscale!r} with law {law!r}."
        )
    gen = as_generator(rng, func)
    shape = (L, d, d)
    scale = 1.0 / np.sqrt(d)
    if law == "gaussian":
        out = gen.standard_normal(shape)
    elif law == "uniform":
        out = gen.uniform(-np.sqrt(3.0), np.sqrt(3.0), shape)
    elif law == "rademacher":
        out = 2.0 * gen.integers(0, 2, shape).astype(np.float64) - 1.0
    elif law == "smooth":
        F = _rbf_factor(L, ell)
        out = (F @ gen.standard_normal((F.shape[1], d * d))).reshape(shape)
    else:
        try:
            from theory.fbm import fgn  # written beside this package; imported only when needed
        except ImportError as exc:
            raise ImportError(
                f"law 'fbm' of {func} needs theory.fbm.fgn, which could not be imported ({exc})."
            ) from exc
        noise = as_float_array(fgn(L, hurst, size=(d, d), rng=gen), "fgn output", func=func, shape=(d, d, L))
        out = np.moveaxis(noise, -1, 0)
    return np.ascontiguousarray(out * scale, dtype=np.float64)
