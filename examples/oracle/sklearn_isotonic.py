"""Adapter: scikit-learn's isotonic regression as the oracle's isotonic_regression(y, w, increasing) -> x.

    theory oracle verify isotonic_regression sklearn.isotonic:isotonic_regression \
        --adapter examples/oracle/sklearn_isotonic.py
"""


def adapt(fn):
    return lambda y, w, increasing: fn(y, sample_weight=w, increasing=increasing)
