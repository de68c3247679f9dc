r"""Public API of fractional Gaussian noise and fractional Brownian motion (``scaling``, Section 4.1).

Sampling is exact for every Hurst index H in (0, 1): Davies–Harte circulant embedding with the
standard first row (Davies & Harte 1987; Wood & Chan 1994),

.. math::

    c = [\gamma(0), \gamma(1), \dots, \gamma(n-1), \gamma(n), \gamma(n-1), \dots, \gamma(1)]
    \quad (\text{length } M = 2n),

whose circulant matrix is non-negative definite for every H. Several public samplers (the ``fbm``
package 0.3.0, ``fracbm`` 0.3.0, the experiment code of the ``scaling`` paper) put 0 where gamma(n)
belongs; that circulant has negative eigenvalues for H >~ 0.8 at small n and for H >= 0.9 up to
n ~ 1000 and beyond, and those samplers then fall back to an O(n^2) method, clip silently (wrong
covariance) or return complex numbers. Here a negative eigenvalue beyond round-off raises an error;
it is never clipped.

Private helpers used by the tests: :func:`_embedding_row`, :func:`_eigenvalues`,
:func:`_check_eigenvalues`, :func:`_weights` (cached), :func:`_transform`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._validation import (
    as_float_array,
    as_generator,
    check_finite_output,
    check_int,
    check_interval,
    check_memory,
    check_size,
)
from ._kernels import _autocovariance

__all__ = ["autocovariance", "fgn", "fbm"]

# Largest accepted lag magnitude: every integer below it is exact in float64.
_MAX_LAG = 2.0**53

# Eigenvalues of the embedding above -_EIG_RTOL * max eigenvalue are round-off and set to 0; below
# it, an error. Round-off of the rfft is about eps * log2(2n) * sum|c| and sum|c| <= 2 * max
# eigenvalue (for H >= 1/2 all of c is positive and sum c = lambda_0 = max; for H < 1/2,
# sum|c| <= 2 while the eigenvalues average gamma(0) = 1), so 1e-10 is 1e4 times round-off even
# at n = 2**30.
_EIG_RTOL = 1e-10

# Cached weight vectors (one per (n, H)); each holds n + 1 floats, so the cache holds at most
# 32 (n + 1) floats: 8 MiB per entry at n = 2**20.
_CACHE_SIZE = 32


# --------------------------------------------------------------------------------- validation


def _check_hurst(hurst, func):
    return check_interval(hurst, "hurst", 0.0, 1.0, func=func, closed="neither")


def _check_rng(rng, func):
    """NumPy's convention: None, an int seed or a Generator (:func:`theory._validation.as_generator`)."""
    return as_generator(rng, "rng", func)


# --------------------------------------------------------------------------------- embedding


def _gamma(lags, hurst):
    """gamma_H at non-negative integer-valued float64 lags (no validation)."""
    lags = np.ascontiguousarray(lags, dtype=np.float64).reshape(-1)
    out = np.empty_like(lags)
    _autocovariance(lags, 2.0 * hurst, out)
    return out


def _embedding_row(n, hurst):
    r"""First row of the Davies–Harte circulant, shape (2n,): [gamma(0..n), gamma(n-1..1)].

    Its circulant C (C_ij = c_{(j - i) mod 2n}) has top-left n x n block equal to the Toeplitz
    covariance T_ij = gamma(|i - j|) of n consecutive fGn values.
    """
    g = _gamma(np.arange(n + 1, dtype=np.float64), hurst)
    return np.concatenate([g, g[-2:0:-1]])


def _eigenvalues(row):
    """Eigenvalues of the circulant with a real symmetric first row of even length 2n: the n + 1
    distinct values lambda_j = sum_k c_k cos(2 pi j k / 2n), j = 0..n, from one rfft (raw, unclipped)."""
    return np.fft.rfft(row).real


def _check_eigenvalues(lam, n, hurst, *, func="theory.fbm.fgn"):
    """Clip round-off negatives of ``lam`` to 0; raise if one is below -1e-10 * max(lam).

    Returns a new array. Raises :class:`RuntimeError` naming the smallest eigenvalue: a circulant
    with a genuinely negative eigenvalue is not a covariance, and clipping it would change the
    covariance of the samples (by 0.2 at H = 0.95, n = 64 for the zero-middle row).
    """
    lam = np.asarray(lam, dtype=np.float64)
    top = float(lam.max())
    low = float(lam.min())
    if not (top > 0.0) or low < -_EIG_RTOL * top:
        raise RuntimeError(
            f"{func}: the circulant embedding for n = {n}, hurst = {hurst!r} has eigenvalue {low:.3e} < "
            f"-{_EIG_RTOL:g} x max eigenvalue ({top:.3e}); it is not non-negative definite, so "
            "Davies-Harte sampling would not have the fGn covariance. Eigenvalues are never clipped "
            "beyond round-off; this indicates a wrong embedding row."
        )
    return np.maximum(lam, 0.0)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _weights(n, hurst):
    """Read-only weights w, shape (n + 1,), with w_0 = sqrt(2n lambda_0), w_j = sqrt(n lambda_j)
    (0 < j < n), w_n = sqrt(2n lambda_n); cached per (n, hurst) with hurst a Python float."""
    lam = _check_eigenvalues(_eigenvalues(_embedding_row(n, hurst)), n, hurst)
    w = np.sqrt(lam * n)
    w[0] *= math.sqrt(2.0)
    w[n] *= math.sqrt(2.0)
    w.setflags(write=False)
    return w


def _transform(z, w):
    r"""Davies–Harte map from standard normals to the embedded circulant process.

    ``z`` has shape (m, 2n), i.i.d. N(0, 1); returns y of shape (m, 2n) with covariance the
    circulant of the embedding row, so that y[:, :n] is exact fGn. Per row, with the pairs of z
    read as complex numbers V_j = z_{2j} + i z_{2j+1} (j = 1..n-1), and z_0, z_1 as the two real
    end coefficients,

    .. math::

        W_0 = w_0 z_0, \quad W_n = w_n z_1, \quad W_j = w_j V_j, \qquad
        y = \mathrm{irfft}(W, 2n),

    i.e. :math:`y_k = \frac1{2n}\sum_{j=0}^{2n-1} W_j e^{2\pi i jk/2n}` with Hermitian extension;
    then Cov(y_k, y_l) = (1/2n) sum_j lambda_j e^{2 pi i j (k - l)/2n} = c_{k-l}. Exactly 2n normals
    per path, one inverse real FFT.
    """
    m, two_n = z.shape
    n = two_n // 2
    zc = z.view(np.complex128)  # (m, n): V_0 .. V_{n-1}; V_0's parts serve as the two end coefficients
    spec = np.empty((m, n + 1), dtype=np.complex128)
    np.multiply(zc[:, 1:], w[1:n], out=spec[:, 1:n])
    spec[:, 0] = z[:, 0] * w[0]
    spec[:, n] = z[:, 1] * w[n]
    return np.fft.irfft(spec, n=two_n, axis=-1)


def _sample(n, hurst, size, rng, func):
    """Validated (n, H, size, rng) -> the (m, 2n) circulant process, m = prod(size), and the shape."""
    n = check_int(n, "n", func=func, minimum=1)
    hurst = _check_hurst(hurst, func)
    shape = check_size(size, func=func)
    rng = _check_rng(rng, func)
    m = math.prod(shape)
    # the normal draws, their transform and the output: three float64 arrays of m * 2n entries (the
    # embedding's eigenvalues, 2n more, count when m = 0)
    name, value = ("n", n) if m <= 2 * n else ("size", size)
    check_memory(3 * 8 * max(m, 1) * 2 * n, name, value, func=func,
                 hint=f"The samples have shape {(*shape, n)}.")
    w = _weights(n, hurst)
    if m == 0:
        return np.empty((0, 2 * n)), n, hurst, shape
    z = rng.standard_normal((m, 2 * n))
    return _transform(z, w), n, hurst, shape


# --------------------------------------------------------------------------------- public API


def autocovariance(k, hurst):
    r"""Autocovariance of unit-variance fractional Gaussian noise at integer lags.

    .. math::

        \gamma_H(k) = \operatorname{Cov}(X_j, X_{j+k})
        = \tfrac12\left(|k+1|^{2H} - 2|k|^{2H} + |k-1|^{2H}\right),

    the covariance of the increments X_j = B^H(j+1) - B^H(j) of a fractional Brownian motion with
    Hurst index H; gamma(-k) = gamma(k), gamma(0) = 1, gamma(k) = 0 for k != 0 at H = 1/2, and
    gamma(k) ~ H(2H - 1) k^{2H-2} for large k.

    Parameters
    ----------
    k : array_like of int
        Lags, any shape; integer dtype or integer-valued floats, with ``|k| < 2**53``.
    hurst : float
        Hurst index H in (0, 1).

    Returns
    -------
    float or ndarray
        gamma_H(k), float64, same shape as ``k`` (a NumPy float for a scalar lag).

    Raises
    ------
    TypeError
        ``k`` not real numeric (or boolean), ``hurst`` not a real number.
    ValueError
        ``k`` not finite, not integer-valued or too large; ``hurst`` outside (0, 1) or NaN.

    Notes
    -----
    Relative error a few ulps at every lag and H: the textbook difference of powers cancels
    catastrophically for large k (relative error ~ eps k^2 / ``|H(2H-1)|``: 1e-5 at k = 1e6, H = 0.99;
    5e-3 at H = 0.49), so lags k >= 2 use the sign-definite binomial series
    gamma(k) = k^{2H} sum_{j>=1} binom(2H, 2j) k^{-2j} and k = 1 uses expm1((2H - 1) log 2). Used by
    :func:`fgn` and :func:`fbm`; claims of paper key ``scaling`` (Section 4.1).

    References
    ----------
    ``scaling``, Section 4.1 (weights as increments of fBm). Davies, R. B. and Harte, D. S. (1987),
    Tests for Hurst effect, Biometrika 74(1), 95-101.

    Examples
    --------
    >>> from theory.fbm import autocovariance
    >>> autocovariance([0, 1, 2], 0.5)                  # white noise
    array([1., 0., 0.])
    >>> float(autocovariance(1, 0.75))   # 2**(2H-1) - 1 = sqrt(2) - 1 = 0.4142135623730950488...
    0.41421356237309503
    """
    func = "theory.fbm.autocovariance"
    hurst = _check_hurst(hurst, func)
    try:
        arr = np.asarray(k)
    except Exception:  # ragged lists: as_float_array words the error
        arr = None
    if arr is not None and arr.dtype.kind == "b":
        raise TypeError(f"`k` of {func} must hold integer lags; got dtype {arr.dtype}.")
    lags = as_float_array(k, "k", func=func).reshape(-1)
    shape = arr.shape  # as_float_array makes a scalar 1-d (np.ascontiguousarray)
    fractional = lags != np.floor(lags)
    if fractional.any():
        raise ValueError(f"`k` of {func} must hold integer lags; got {float(lags[fractional][0])!r}.")
    lags = np.abs(lags)
    if lags.size and lags.max() >= _MAX_LAG:
        raise ValueError(f"`k` of {func} must satisfy |k| < 2**53; got {float(lags.max())!r}.")
    out = _gamma(lags, hurst).reshape(shape)
    check_finite_output(out, "the autocovariance", func=func)
    return out[()] if out.ndim == 0 else out


def fgn(n, hurst, size=(), rng=None):
    r"""Exact samples of unit-variance fractional Gaussian noise (Davies–Harte).

    A sample is X = (X_0, ..., X_{n-1}), centred Gaussian with Toeplitz covariance
    :math:`\operatorname{Cov}(X_i, X_j) = \gamma_H(|i - j|)` (:func:`autocovariance`): the
    increments B^H(j+1) - B^H(j) of a fractional Brownian motion at unit step.

    Method: the covariance is embedded in the circulant matrix of the row
    :math:`c = [\gamma(0..n), \gamma(n-1..1)]` of length 2n, whose eigenvalues
    :math:`\lambda_j = \sum_k c_k \cos(\pi jk/n)` (j = 0..n, one rfft) are non-negative for every H;
    a sample is the first n entries of irfft(w * V) with V built from 2n standard normals and
    :math:`w_j = \sqrt{n\lambda_j}` (:math:`\sqrt{2n\lambda_j}` at j = 0, n). Cost
    O(n log n) per path; every path of a batch goes through one vectorised irfft.

    Parameters
    ----------
    n : int
        Number of values per path, n >= 1 (n = 1 gives one N(0, 1) value).
    hurst : float
        Hurst index H in (0, 1); H = 1/2 gives i.i.d. N(0, 1).
    size : int or tuple of int, optional
        Leading batch shape; independent paths. Default ``()``: one path.
    rng : numpy.random.Generator, optional
        Source of randomness, e.g. ``np.random.default_rng(seed)``. Default ``None`` draws from a
        fresh, unseeded generator, so results are **not reproducible** unless a generator is
        passed. Integer seeds are refused (TypeError): reusing one int across calls would repeat
        the same samples; create one generator and pass it to every call.

    Returns
    -------
    ndarray, shape (*size, n)
        float64 fGn, unit variance.

    Raises
    ------
    TypeError
        ``n`` not an int, ``hurst`` not a real number, ``size`` not an int or tuple of ints, ``rng``
        not a Generator.
    ValueError
        ``n < 1``, ``hurst`` outside (0, 1) or NaN, negative entry in ``size``.
    RuntimeError
        The embedding has a negative eigenvalue beyond round-off (never observed for the standard
        row; it would indicate a bug, and is never clipped silently).

    Notes
    -----
    The eigenvalues (as the weights w) are cached per (n, H) (LRU, 32 entries), so repeated calls
    pay only for the normal draws and one irfft. Paths are drawn in C order from ``rng``: the same
    generator state gives the same paths for ``size=(2, 3)`` as for ``size=6`` reshaped. Used for
    the fBm weights of paper key ``scaling`` (Section 4.1, Figs. 7 and 9).

    References
    ----------
    ``scaling``, Section 4.1. Davies, R. B. and Harte, D. S. (1987), Tests for Hurst effect,
    Biometrika 74(1), 95-101. Wood, A. T. A. and Chan, G. (1994), Simulation of stationary Gaussian
    processes in [0, 1]^d, J. Comput. Graph. Statist. 3(4), 409-432.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.fbm import fgn
    >>> x = fgn(1000, 0.7, size=(4, 2), rng=np.random.default_rng(0))
    >>> x.shape
    (4, 2, 1000)
    >>> bool(abs(x.var() - 1.0) < 0.15)
    True
    """
    func = "theory.fbm.fgn"
    y, n, _, shape = _sample(n, hurst, size, rng, func)
    out = np.ascontiguousarray(y[:, :n]).reshape(shape + (n,))
    check_finite_output(out, "the sample", func=func)
    return out


def fbm(n, hurst, size=(), length=1.0, rng=None):
    r"""Exact samples of fractional Brownian motion on [0, length] at n + 1 equispaced times.

    :math:`B^H` is the centred Gaussian process with :math:`B^H(0) = 0` and
    :math:`\mathbb E[B^H(s) B^H(t)] = \tfrac12(|s|^{2H} + |t|^{2H} - |t-s|^{2H})`
    (``scaling``, Section 4.1). With step :math:`\Delta = \text{length}/n`,

    .. math::

        B^H(j\Delta) = \Delta^H \sum_{i < j} X_i, \qquad j = 0, \dots, n,

    where X is unit-variance fGn (:func:`fgn`, by self-similarity), so the path starts at 0,
    Var B^H(t) = t^{2H} and E|B^H(t + tau) - B^H(t)|^2 = tau^{2H}.

    Parameters
    ----------
    n : int
        Number of steps, n >= 1.
    hurst : float
        Hurst index H in (0, 1); H = 1/2 gives Brownian motion.
    size : int or tuple of int, optional
        Leading batch shape; independent paths. Default ``()``: one path.
    length : float, optional
        Time horizon, finite and > 0. Default 1.
    rng : numpy.random.Generator, optional
        As in :func:`fgn` (``None``: unseeded, not reproducible; ints refused).

    Returns
    -------
    ndarray, shape (*size, n + 1)
        float64 values at times 0, length/n, ..., length; the first is exactly 0.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        As in :func:`fgn`; also ``length`` not a real number (TypeError) or not finite and
        positive (ValueError).

    Notes
    -----
    The same generator state gives the increments of :func:`fgn` with the same arguments, scaled
    by Delta^H and summed. The ``scaling`` paper's weights are increments of fBm on [0, 1]
    (variance L^{-2H} per layer); the unit-variance convention is :func:`fgn`.

    References
    ----------
    ``scaling``, Section 4.1. Davies & Harte (1987); Wood & Chan (1994) (see :func:`fgn`).

    Examples
    --------
    >>> import numpy as np
    >>> from theory.fbm import fbm
    >>> b = fbm(256, 0.3, size=3, length=2.0, rng=np.random.default_rng(1))
    >>> b.shape, float(b[0, 0])
    ((3, 257), 0.0)
    """
    func = "theory.fbm.fbm"
    # validate everything before drawing
    n = check_int(n, "n", func=func, minimum=1)
    length = check_interval(length, "length", 0.0, math.inf, func=func, closed="neither")
    y, n, hurst, shape = _sample(n, hurst, size, rng, func)
    m = y.shape[0]
    out = np.empty((m, n + 1))
    out[:, 0] = 0.0
    np.cumsum(y[:, :n], axis=-1, out=out[:, 1:])
    out[:, 1:] *= (length / n) ** hurst
    out = out.reshape(shape + (n + 1,))
    check_finite_output(out, "the path", func=func)
    return out
