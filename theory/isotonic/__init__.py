"""Weighted isotonic regression by pool adjacent violators (paper key ``topk``, Section 7.5).

Public names: :func:`isotonic_regression` (p = 2 weighted least squares, SciPy's blocks bit for bit;
p != 2 the p-norm regularised pooling of Eqs. (7.5)-(7.6), a closed-form cubic per block for p = 4/3
and a safeguarded root finder for other p) and :class:`ConvergenceWarning`.
"""

from ._api import ConvergenceWarning, isotonic_regression

__all__ = ["ConvergenceWarning", "isotonic_regression"]
