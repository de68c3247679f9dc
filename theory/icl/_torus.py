r"""Exact expectations of Laurent polynomials in independent uniform unit-circle variables.

For :math:`z_1,\dots,z_m` i.i.d. uniform on the unit circle, :math:`\mathbb E[z^a\bar z^b]=\delta_{ab}`
coordinate by coordinate, so that a Laurent polynomial :math:`f(z)=\sum_\alpha c_\alpha z^\alpha`
(:math:`\alpha\in\mathbb Z^m`) has

.. math:: \mathbb E|f(z)|^2=\sum_{\alpha}\Big|\sum_{\beta=\alpha}c_\beta\Big|^2 ,

the sum of the squared moduli of the coefficients once the terms sharing a monomial are merged. Every
population loss of chapter 6 of the thesis (Eqs. (6.3), (6.9), Props. 6.5, 6.8, 6.11) is of this form. The
functions here merge the monomials once (integer exponents, :func:`numpy.unique`) and then sum; with
:class:`fractions.Fraction` or integer coefficients the result is an exact rational.
"""

from __future__ import annotations

import numbers
from fractions import Fraction

import numpy as np

from .._validation import plain

__all__ = ["torus_moment", "group_monomials", "expected_abs2"]


def torus_moment(a, b):
    r"""Exact :math:`\mathbb E\big[\prod_k z_k^{a_k}\bar z_k^{b_k}\big]` for i.i.d. uniform unit-circle
    :math:`z_k`: 1 if ``a == b`` entrywise, else 0 (an int).

    Parameters
    ----------
    a, b : int or sequence of int
        Non-negative exponents of the variables and of their conjugates (same length).

    Examples
    --------
    >>> torus_moment([2, 1], [2, 1]), torus_moment(3, 1)
    (1, 0)
    """
    a = np.atleast_1d(np.asarray(a))
    b = np.atleast_1d(np.asarray(b))
    for name, v in (("a", a), ("b", b)):
        if v.dtype.kind not in "iu" or (v.size and v.min() < 0):
            raise ValueError(f"`{name}` of theory.icl.torus_moment must hold non-negative integers; got {v.tolist()}")
    if a.shape != b.shape:
        raise ValueError(f"`a` and `b` of theory.icl.torus_moment must have the same length; got {a.shape} and {b.shape}")
    return int(np.array_equal(a, b))


def group_monomials(exponents):
    """Merge equal monomials: ``(ids, n_groups)`` with ``ids[k]`` the group of row ``k`` of ``exponents``.

    Parameters
    ----------
    exponents : array_like of int, shape (n_terms, m)
        Exponent vectors :math:`\\alpha\\in\\mathbb Z^m` of the terms.
    """
    e = np.asarray(exponents)
    if e.ndim != 2 or e.dtype.kind not in "iu":
        raise ValueError(f"`exponents` of theory.icl.group_monomials must be a 2-d integer array; got "
                         f"{e.dtype} of shape {e.shape}")
    if e.shape[0] == 0:
        return np.zeros(0, np.int64), 0
    if e.shape[1] == 0:
        return np.zeros(e.shape[0], np.int64), 1
    order = np.lexsort(e.T[::-1])
    s = e[order]
    new = np.empty(e.shape[0], bool)
    new[0] = True
    new[1:] = np.any(s[1:] != s[:-1], axis=1)
    ids = np.empty(e.shape[0], np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids, int(ids.max()) + 1


def expected_abs2(coefficients, exponents):
    r"""Exact :math:`\mathbb E|\sum_k c_kz^{\alpha_k}|^2` over i.i.d. uniform unit-circle :math:`z`.

    Parameters
    ----------
    coefficients : sequence of numbers, length n_terms
        Real or complex floats, ints or :class:`fractions.Fraction` (then the result is an exact
        ``Fraction``; ints give an int).
    exponents : array_like of int, shape (n_terms, m)

    Returns
    -------
    float, complex-free; Fraction or int for exact coefficients.

    Examples
    --------
    >>> from fractions import Fraction
    >>> expected_abs2([Fraction(1, 2), Fraction(1, 3), -1], [[1, 0], [1, 0], [0, -1]])  # |5/6|^2 + 1
    Fraction(61, 36)
    """
    coeffs = list(coefficients)
    e = np.asarray(exponents)
    if e.ndim != 2 or len(coeffs) != e.shape[0]:
        raise ValueError(f"`exponents` of theory.icl.expected_abs2 must have shape (len(coefficients), m) = "
                         f"({len(coeffs)}, m); got {e.shape}")
    exact = all(isinstance(c, (numbers.Rational, Fraction)) and not isinstance(c, bool) for c in coeffs)
    ids, n = group_monomials(e)
    if exact:
        sums = [Fraction(0)] * n
        for k, c in zip(ids, coeffs):
            sums[k] += c
        total = sum((s * s for s in sums), Fraction(0))
        return int(total) if all(isinstance(c, numbers.Integral) for c in coeffs) else total
    try:
        c = np.asarray(coeffs, dtype=complex)
    except (TypeError, ValueError):
        raise TypeError(f"`coefficients` of theory.icl.expected_abs2 must be numbers; got "
                        f"{[plain(x) for x in coeffs[:3]]}...") from None
    if not np.all(np.isfinite(c)):
        raise ValueError("`coefficients` of theory.icl.expected_abs2 must be finite; got NaN or inf")
    sums = np.zeros(n, complex)
    np.add.at(sums, ids, c)
    return float(np.sum(sums.real ** 2 + sums.imag ** 2))
