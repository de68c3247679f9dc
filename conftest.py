"""Suite-wide configuration: Hypothesis profiles.

``ci`` (default): derandomised, no example database, no deadline (JIT compiles), reproduction blob
printed. ``explore``: random and longer, for local hunting; select with HYPOTHESIS_PROFILE=explore.
"""

import os

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
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
