"""Reference kernels and numerical claim checks for deep residual networks.

Subpackages are named after the mathematical object they implement (``theory.resnet``, ...).
The claim machinery lives in :mod:`theory.claims`, :mod:`theory.rates`, :mod:`theory.report`
and :mod:`theory.plots`; the command-line entry point is ``theory.cli``.
"""

__version__ = "0.1.0"

from ._errors import NonFiniteError  # noqa: E402  (raised by every kernel API on overflow)
from ._numba_cache import invalidate_stale as _invalidate_stale_kernels  # noqa: E402
from ._openmp import share_openmp_runtime  # noqa: E402  (imports Numba only when called)

# a changed kernel source must not leave other modules' compiled copies in use, in whichever folder Numba caches
# them; with no writable cache folder the kernels run uncached (one warning) instead of failing to import
_invalidate_stale_kernels()

__all__ = ["NonFiniteError", "__version__", "share_openmp_runtime"]

# Subpackages load on first access (``import theory; theory.isotonic``), as SciPy's do, so that
# ``import theory`` and the ``theory`` command stay fast and Numba loads only when a kernel is used.
_SUBMODULES = frozenset({
    "backends", "claims", "cli", "experiments", "fbm", "generalization", "icl", "implicit", "isotonic",
    "linear", "momentum", "oracle", "papers", "pl", "plots", "rates", "report", "resnet", "scaling", "signature",
    "sinkhorn", "sweep", "topk", "two_timescale",
})


def __getattr__(name):
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"theory.{name}")
    raise AttributeError(f"module 'theory' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES)
