"""Adapter: SciPy's isotonic regression as the oracle's isotonic_regression(y, w, increasing) -> x.

    theory oracle verify isotonic_regression scipy.optimize:isotonic_regression \
        --adapter examples/oracle/scipy_isotonic.py
"""


def adapt(fn):
    return lambda y, w, increasing: fn(y, weights=w, increasing=increasing).x
