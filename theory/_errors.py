"""Exceptions of the toolkit (kept free of heavy imports, so that ``import theory`` stays light)."""


class NonFiniteError(ValueError, FloatingPointError):
    """A computation overflowed to NaN or inf; the message says what and what to change."""
