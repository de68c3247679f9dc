"""Suite-wide configuration: Hypothesis profiles and the fixtures several test modules share.

``ci`` (default): derandomised, no example database, no deadline (JIT compiles), reproduction blob
printed. ``explore``: random and longer, for local hunting; select with HYPOTHESIS_PROFILE=explore.

Determinism of the ``ci`` profile: Hypothesis (6.13x and later) also draws numbers it finds as
literals in the source of the project's modules that happen to be imported at that moment. The
draws of a check would then depend on the source text of unrelated modules and on which tests ran
before it (a subset run and a full run would measure different instances), and its time-limited
collection on the machine's load. Under ``ci`` that pool is kept empty, so that a check draws the
same instances whatever else is imported; ``explore`` keeps it.
"""

import importlib.util
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("explore", deadline=None, max_examples=1000, print_blob=True)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


def _without_source_constants() -> bool:
    """Empty Hypothesis's pool of constants taken from the project's source (an internal of Hypothesis;
    a no-op, reported as False, where the internal does not exist)."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover
        return False
    if not hasattr(providers, "_get_local_constants") or not hasattr(providers, "Constants"):
        return False
    empty = providers.Constants()
    providers._get_local_constants = lambda: empty
    return True


SOURCE_CONSTANTS_OFF = PROFILE == "ci" and _without_source_constants()

# One OpenMP runtime per process (theory._openmp): Numba's threading layer is started before any test module is
# imported, so that PyTorch's import reuses the system's GNU OpenMP instead of loading its own copy beside it.
# tests/test_openmp_runtime.py checks that one runtime is loaded.
from theory._openmp import share_openmp_runtime  # noqa: E402

share_openmp_runtime()


@pytest.fixture
def torch_one_thread():
    """One PyTorch intra-op thread for the test (the tensors of the backend tests are tiny, and several
    threads on a shared CPU spin-wait); a no-op without PyTorch."""
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
