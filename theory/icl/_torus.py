r"""Exact expectations of Laurent polynomials in independent uniform unit-circle variables (private;
validated by :mod:`theory.icl._api`).

For :math:`z_1,\dots,z_m` i.i.d. uniform on the unit circle, :math:`\mathbb E[z^a\bar z^b]=\delta_{ab}`
coordinate by coordinate, so that a Laurent polynomial :math:`f(z)=\sum_\alpha c_\alpha z^\alpha`
(:math:`\alpha\in\mathbb Z^m`) has

.. math:: \mathbb E|f(z)|^2=\sum_{\alpha}\Big|\sum_{\beta=\alpha}c_\beta\Big|^2 ,

the sum of the squared moduli of the coefficients once the terms sharing a monomial are merged. Every
population loss of chapter 6 of the thesis (Eqs. (6.3), (6.9), Props. 6.5, 6.8, 6.11) is of this form. The
functions here merge the monomials once (integer exponents, a lexicographic sort) and then sum; with
Python ints or :class:`fractions.Fraction` coefficients the result is an exact rational.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def group_monomials(e):
    """``(ids, n_groups)`` with ``ids[k]`` the group of row ``k`` of the 2-d integer array ``e``."""
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


def expected_abs2_exact(coeffs, e):
    """Sum of the squared merged coefficients, ``coeffs`` Python ints and Fractions: an exact Fraction."""
    ids, n = group_monomials(e)
    sums = [Fraction(0)] * n
    for k, c in zip(ids.tolist(), coeffs):
        sums[k] += c
    return sum((s * s for s in sums), Fraction(0))


def expected_abs2_float(c, e):
    """Sum of the squared moduli of the merged coefficients, ``c`` a complex128 vector: a float."""
    ids, n = group_monomials(e)
    sums = np.zeros(n, complex)
    np.add.at(sums, ids, c)
    return float(np.sum(sums.real ** 2 + sums.imag ** 2))
