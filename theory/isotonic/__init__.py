"""Weighted isotonic regression by pool adjacent violators (paper key ``topk``, Section 7.5).

Public name: :func:`isotonic_regression` (p = 2; the p-norm regularised pooling for other p is not
implemented yet and raises :class:`NotImplementedError`).
"""

from ._api import isotonic_regression

__all__ = ["isotonic_regression"]
