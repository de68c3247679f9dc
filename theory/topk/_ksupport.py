r"""k-support regularisers: the conjugates :math:`f_\varphi^*(\cdot, \mathbf 1_k)` of chapter 7 in closed form.

For a convex :math:`\varphi` and :math:`\mathbf w = \mathbf 1_k` (k ones, then zeros), Prop. 7.3 of the
thesis (chapter 7) writes the conjugate of :math:`f_\varphi(\mathbf x, \mathbf 1_k) = \sum_{i\le k}
\varphi(\mathbf x)_{[i]}` as a minimum over the capped simplex
:math:`P(\mathbf 1_k) = \{\mathbf z \in [0, 1]^n : \langle \mathbf z, \mathbf 1\rangle = k\}`:

.. math::

    f_\varphi^*(\mathbf y, \mathbf 1_k) = \min_{\mathbf z \in P(\mathbf 1_k)} \sum_i z_i\,\varphi^*(y_i / z_i).

Two choices of :math:`\varphi` make the inner problem :math:`\min_{\mathbf z} \sum_i g(a_i)/z_i`-like with the
same optimality structure, :math:`z_i = \min(1, a_i/\nu)` for a level :math:`\nu > 0` fixed by
:math:`\sum_i z_i = k`:

* :math:`\varphi(x) = x^2/2` (§7.4, "connection with k-support norms"): half the squared k-support norm,
  :func:`ksupport_norm_squared`, with :math:`a = |\mathbf y|`;
* :math:`\varphi(x) = e^{x-1}` (App. 7.B.1): the k-support negentropy, :func:`ksupport_negentropy`, with
  :math:`a = \mathbf y \ge 0`.

Sorting :math:`a_{[1]} \ge \dots \ge a_{[n]}`, let :math:`m` be the number of capped coordinates
(:math:`z = 1`) and :math:`T_m = \sum_{i > m} a_{[i]}`; then :math:`\nu = T_m / (k - m)` and :math:`m` is the
smallest integer in :math:`\{0, \dots, k-1\}` with :math:`a_{[m+1]} \le T_m/(k - m)` (for that m the
condition :math:`a_{[m]} > T_m/(k-m)` of the capped ones follows from the failure at m - 1). The values:

.. math::

    \tfrac12\|\mathbf y\|_{(k)}^2 = \tfrac12\sum_{i \le m} a_{[i]}^2 + \frac{T_m^2}{2(k - m)},
    \qquad
    \Omega_k(\mathbf y) = \sum_{i \le m} a_{[i]}\log a_{[i]} + T_m \log\frac{T_m}{k - m}

(with :math:`0 \log 0 = 0`). The first is the k-support norm of Argyriou, Foygel and Srebro (2012, their
Prop. 2.1, written with our m); the second is our derivation from the same optimality conditions. At k = n
every coordinate is capped and :math:`\Omega_n(\mathbf y) = \sum_i y_i \log y_i`, the negative Shannon
entropy; at k = 1 no coordinate is capped and :math:`\Omega_1(\mathbf y) = T \log T` with
:math:`T = \sum_i y_i` (zero on the whole simplex).
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, check_finite_output, check_int, plain

__all__ = ["ksupport_negentropy", "ksupport_norm_squared"]


def _capped_count(a, k):
    """(m, T_m, nu) for a sorted decreasingly (a >= 0): the smallest m in 0..k-1 with a[m] <= T_m/(k-m)
    (0-based a[m] is a_[m+1]); T_m = sum_{i >= m} a[i] (suffix sums, no cancellation)."""
    n = a.shape[0]
    suffix = np.concatenate((np.cumsum(a[::-1])[::-1], [0.0]))  # suffix[m] = sum_{i >= m} a[i]
    m_all = np.arange(k)
    nu = suffix[m_all] / (k - m_all)
    nxt = np.where(m_all < n, a[np.minimum(m_all, n - 1)], 0.0)
    ok = np.flatnonzero(nxt <= nu)
    # the condition holds at m = k - 1 at the latest: a[k-1] <= a[k-1] + T_k (a >= 0)
    m = int(ok[0]) if ok.size else k - 1
    return m, float(suffix[m]), float(nu[m])


def _prepare(y, k, func, nonnegative):
    y = as_float_array(y, "y", func=func, ndim=1, min_size=1)
    k = check_int(k, "k", func=func, minimum=1, maximum=y.shape[0])
    if nonnegative and np.any(y < 0.0):
        i = int(np.flatnonzero(y < 0.0)[0])
        raise ValueError(
            f"`y` of {func} must be non-negative (the k-support negentropy is +inf outside the non-negative "
            f"orthant); got y[{i}] = {plain(y[i])!r}."
        )
    return y, k


def _z_of(a, order, m, nu, k):
    """The minimiser z in P(1_k): 1 on the m capped coordinates, a_i/nu elsewhere; when nu = 0 (every
    uncapped a_i is 0) the value does not depend on z off the capped set, and the k - m remaining units
    are spread evenly over the n - m uncapped coordinates (each <= 1 since k <= n)."""
    n = a.shape[0]
    z = np.zeros(n)
    rest = order[m:]
    if nu > 0.0:
        z[rest] = np.minimum(1.0, a[rest] / nu)
    else:
        z[rest] = (k - m) / (n - m)
    z[order[:m]] = 1.0
    return z


def ksupport_norm_squared(y, k, *, return_z=False):
    r"""Half the squared k-support norm, :math:`f_\varphi^*(\mathbf y, \mathbf 1_k)` for :math:`\varphi(x) = x^2/2`.

    .. math::

        \tfrac12\|\mathbf y\|_{(k)}^2 = \frac12 \min_{\mathbf z \in [0,1]^n,\ \langle \mathbf z, \mathbf 1\rangle = k}
        \ \sum_{i=1}^n \frac{y_i^2}{z_i}

    (thesis chapter 7, Prop. 7.3 with :math:`\varphi = x^2/2` and the paragraph on k-support norms after it;
    by Prop. 7.4 it is also the biconjugate of :math:`\tfrac12\|\mathbf y\|^2` restricted to k-sparse
    vectors). Closed form in O(n log n): see the module docstring.

    Parameters
    ----------
    y : array_like, shape (n,)
        Finite reals, n >= 1.
    k : int
        1 <= k <= n. At k = n the value is :math:`\|\mathbf y\|^2/2`; at k = 1, :math:`\|\mathbf y\|_1^2/2`.
    return_z : bool, keyword-only
        Also return the minimiser :math:`\mathbf z` (unique where :math:`\mathbf y` has more than k - 1
        non-zeros among the uncapped entries; otherwise the value does not depend on the choice).

    Returns
    -------
    value : float
    z : ndarray, shape (n,)
        Only with ``return_z=True``.

    Raises
    ------
    ValueError
        Bad ``y`` or ``k``; :class:`theory.NonFiniteError` (a ValueError) if the value overflows.

    Examples
    --------
    >>> ksupport_norm_squared([3.0, 1.0, 1.0], 2)   # m = 1 capped: 9/2 + (1 + 1)^2 / 2
    6.5
    >>> ksupport_norm_squared([1.0, 1.0, 1.0], 1)   # ||y||_1^2 / 2
    4.5
    """
    func = "theory.topk.ksupport_norm_squared"
    y, k = _prepare(y, k, func, nonnegative=False)
    a_all = np.abs(y)
    order = np.argsort(-a_all, kind="stable")
    a = a_all[order]
    m, tail, nu = _capped_count(a, k)
    with np.errstate(over="ignore"):
        value = 0.5 * float(np.sum(a[:m] ** 2)) + tail * (tail / (2.0 * (k - m)))
    check_finite_output(np.array([value]), "the k-support norm", func=func, hint="Rescale `y`.")
    if return_z:
        return value, _z_of(a_all, order, m, nu, k)
    return value


def ksupport_negentropy(y, k, *, return_z=False):
    r"""The k-support negentropy of App. 7.B.1, :math:`f_\varphi^*(\mathbf y, \mathbf 1_k)` for :math:`\varphi(x) = e^{x-1}`.

    .. math::

        \Omega_k(\mathbf y) = \min_{\mathbf z \in [0,1]^n,\ \langle \mathbf z, \mathbf 1\rangle = k}
        \ \sum_{i=1}^n y_i \log\frac{y_i}{z_i}, \qquad \mathbf y \ge 0

    (thesis chapter 7, App. 7.B.1: Prop. 7.3 with :math:`\varphi^*(t) = t\log t`, whose perspective is
    :math:`z\varphi^*(y/z) = y\log(y/z)`; by Prop. 7.4, with :math:`\inf\varphi = 0`, it is the convex envelope
    of the negative entropy restricted to k-sparse vectors). Closed form in O(n log n): with m the
    number of coordinates where the minimiser is capped at 1 and :math:`T_m` the sum of the others,
    :math:`\Omega_k(\mathbf y) = \sum_{i\le m} y_{[i]}\log y_{[i]} + T_m\log(T_m/(k-m))` (module docstring).

    On the simplex (:math:`\sum_i y_i = 1`) the value is :math:`-\log k` wherever
    :math:`\max_i y_i \le 1/k` (no coordinate capped): a flat minimum over the capped simplex
    :math:`P(\mathbf 1_k/k)`, the shape of Fig. 7.9. At k = n it is :math:`\sum_i y_i\log y_i`.

    Parameters
    ----------
    y : array_like, shape (n,)
        Finite, non-negative reals, n >= 1 (outside the non-negative orthant the conjugate is +inf, and
        a ValueError says so).
    k : int
        1 <= k <= n.
    return_z : bool, keyword-only
        Also return the minimiser :math:`\mathbf z \in P(\mathbf 1_k)`.

    Returns
    -------
    value : float
    z : ndarray, shape (n,)
        Only with ``return_z=True``.

    Raises
    ------
    ValueError
        Bad ``y`` (negative entries included) or ``k``; :class:`theory.NonFiniteError` (a ValueError) if the
        value overflows.

    Examples
    --------
    >>> round(ksupport_negentropy([0.4, 0.35, 0.25], 2), 12) == round(-float(np.log(2.0)), 12)  # max <= 1/k
    True
    >>> float(ksupport_negentropy([0.7, 0.2, 0.1], 2))  # m = 1: 0.7 log 0.7 + 0.3 log 0.3
    -0.6108643020548935
    """
    func = "theory.topk.ksupport_negentropy"
    y, k = _prepare(y, k, func, nonnegative=True)
    order = np.argsort(-y, kind="stable")
    a = y[order]
    m, tail, nu = _capped_count(a, k)
    head = a[:m]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        xlogx = np.where(head > 0.0, head * np.log(np.where(head > 0.0, head, 1.0)), 0.0)
        value = float(np.sum(xlogx)) + (float(tail * np.log(tail / (k - m))) if tail > 0.0 else 0.0)
    check_finite_output(np.array([value]), "the k-support negentropy", func=func, hint="Rescale `y`.")
    if return_z:
        return value, _z_of(y, order, m, nu, k)
    return value
