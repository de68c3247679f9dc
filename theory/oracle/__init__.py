"""The reference oracle: check another implementation (NumPy, SciPy, PyTorch, JAX, ...) against the
package's float64 kernels, case by case, with a stated tolerance rule per kernel.

>>> from theory.oracle import verify, kernels
>>> "isotonic_regression" in kernels()
True

From a test suite::

    result = verify("isotonic_regression", my_isotonic, adapter=lambda fn: lambda y, w, increasing: fn(y, w))
    assert result.ok, result.report()

The command ``theory oracle list | show KERNEL | export DIR | verify KERNEL module:function`` does the same from a
shell; ``show`` prints a kernel's call, shapes, dtypes, conventions, tolerance rule and case names.
"""

from ._kernels import ALPHA, fbm_power, fgn_power
from ._core import (FORMAT_VERSION, INCONCLUSIVE_FRACTION, ROUNDING_BAND, VERDICTS, Argument, Case, CaseRow,
                    Convention, Kernel, OracleInputError, Parameter, VerifyResult, cases_at, export, kernel, kernels,
                    load_adapter, load_function, load_vectors, reference_outputs, select_cases, show, verify)

__all__ = ["ALPHA", "fbm_power", "fgn_power", "FORMAT_VERSION", "INCONCLUSIVE_FRACTION", "ROUNDING_BAND", "VERDICTS",
           "Argument", "Case", "CaseRow", "Convention", "Kernel", "OracleInputError", "Parameter", "VerifyResult",
           "cases_at", "export", "kernel", "kernels", "load_adapter", "load_function", "load_vectors",
           "reference_outputs", "select_cases", "show", "verify"]

# the sampler battery's power against planted defects (theory/oracle/_defects.py)
from ._defects import PowerRow, power_table  # noqa: E402

__all__ += ["PowerRow", "power_table"]

# class-based code and memory: the states of an nn.Module's blocks, last-state outputs, the memory cap per case
from ._core import OUTPUTS  # noqa: E402
from ._guard import MEMORY_CAP, MEMORY_CAP_FACTOR, MEMORY_UNITS, MemoryCapExceeded, parse_memory_cap  # noqa: E402
from ._torch import record_states  # noqa: E402

__all__ += ["OUTPUTS", "MEMORY_CAP", "MEMORY_CAP_FACTOR", "MEMORY_UNITS", "MemoryCapExceeded", "parse_memory_cap",
            "record_states"]
