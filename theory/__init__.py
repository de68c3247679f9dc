"""Reference kernels and numerical claim checks for deep residual networks.

Subpackages are named after the mathematical object they implement (``theory.resnet``, ...).
The claim machinery lives in :mod:`theory.claims`, :mod:`theory.rates`, :mod:`theory.report`
and :mod:`theory.plots`; the command-line entry point is :mod:`theory.cli`.
"""

__version__ = "0.1.0"

from ._errors import NonFiniteError  # noqa: E402  (raised by every kernel API on overflow)

__all__ = ["NonFiniteError", "__version__"]
