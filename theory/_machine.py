"""One line naming the machine a result was measured on (CPU, cores, memory, versions)."""

from __future__ import annotations

import os
import platform

__all__ = ["cpu_model", "machine_line"]


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` where it exists, else :func:`platform.processor`)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory() -> str:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return "? GiB"
    return f"{pages * size / 2**30:.0f} GiB"


def machine_line() -> str:
    """``"<cpu>, <n> cores, <memory>; Linux x86_64; Python 3.11.9, NumPy 2.1, SciPy 1.14[, torch 2.5]"``."""
    import sys

    import numpy as np
    import scipy

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    versions = [f"Python {platform.python_version()}", f"NumPy {np.__version__}", f"SciPy {scipy.__version__}"]
    if "torch" in sys.modules:
        versions.append(f"torch {sys.modules['torch'].__version__}")
    return (f"{cpu_model()}, {cores} cores, {_memory()}; {platform.system()} {platform.machine()}; "
            + ", ".join(versions))
