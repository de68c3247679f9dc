"""The reference oracle: check another implementation (NumPy, SciPy, PyTorch, JAX, ...) against the
package's float64 kernels, case by case, with a stated tolerance rule per kernel.

>>> from theory.oracle import verify, kernels
>>> "isotonic_regression" in kernels()
True

From a test suite::

    result = verify("isotonic_regression", my_isotonic, adapter=lambda fn: lambda y, w, increasing: fn(y, w))
    assert result.ok, result.report()

The command ``theory oracle list | export DIR | verify KERNEL module:function`` does the same from a shell.
"""

from ._kernels import ALPHA, fbm_power, fgn_power
from ._core import (FORMAT_VERSION, Case, CaseRow, Kernel, OracleInputError, VerifyResult, export, kernel,
                    kernels, load_adapter, load_function, load_vectors, reference_outputs, verify)

__all__ = ["ALPHA", "fbm_power", "fgn_power", "FORMAT_VERSION", "Case", "CaseRow", "Kernel", "OracleInputError", "VerifyResult", "export", "kernel",
           "kernels", "load_adapter", "load_function", "load_vectors", "reference_outputs", "verify"]
