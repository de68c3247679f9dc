"""Matrix products of the Numba kernels through NumPy's own BLAS.

Numba's ``np.dot`` calls the BLAS that SciPy ships (``scipy.linalg.cython_blas``). NumPy's wheels ship
their own OpenBLAS, a separate build; on the development machine (AMD EPYC, NumPy 2.4 with OpenBLAS
0.3.31, SciPy 1.17 with OpenBLAS 0.3.30) NumPy's is up to 10 % faster on the products of a ResNet layer
whose weights stream from memory (x (16, 256) times theta_n^T (256, 256): 84 against 94 microseconds a
layer; ``benchmarks/bench_resnet.py``). So that a kernel is never slower than the NumPy loop it is
measured against merely for calling a slower BLAS, :func:`gemm_nt` calls NumPy's OpenBLAS by its
exported name (``scipy_cblas_dgemm64_``, the 64-bit-integer CBLAS interface of the ``scipy-openblas64``
build NumPy's wheels bundle) where that library is found, and Numba's ``np.dot`` otherwise (NumPy built
against another BLAS). Both compute the same product with one rounding per multiply-add in the
library's blocking order; on the development machine their results are equal bit for bit.

The library is located once, at import, in NumPy's ``numpy.libs`` folder, and made visible to the
Numba linker by name (``llvmlite.binding.load_library_permanently``: the same file NumPy has loaded,
so one library instance and one thread pool serve both). The kernels call it by symbol name, so their
on-disk cache stays valid across processes; :mod:`theory._numba_cache` drops that cache when the choice
of library changes (:data:`LIBRARY` is part of its signature).
"""

from __future__ import annotations

import glob
import os

import numpy as np
from numba import njit, types

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


def _find_numpy_openblas():
    folder = os.path.join(os.path.dirname(os.path.abspath(np.__file__)), os.pardir, "numpy.libs")
    found = sorted(glob.glob(os.path.join(folder, "libscipy_openblas64_*.so")))
    if not found:
        return None
    try:
        import ctypes

        import llvmlite.binding as llvm

        path = os.path.realpath(found[0])
        if not hasattr(ctypes.CDLL(path), "scipy_cblas_dgemm64_"):
            return None
        llvm.load_library_permanently(path)
    except (OSError, RuntimeError, ImportError):  # pragma: no cover - depends on the NumPy build
        return None
    return path


#: Path of NumPy's bundled OpenBLAS used by :func:`gemm_nt`, or None (then Numba's ``np.dot``).
LIBRARY = _find_numpy_openblas()

if LIBRARY is not None:
    # cblas_dgemm(order, transA, transB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc): the enums are C
    # ints, the sizes 64-bit (ILP64); the three array pointers are passed as 64-bit integers, which the
    # x86-64 and AArch64 calling conventions pass exactly as pointers.
    _dgemm = types.ExternalFunction(
        "scipy_cblas_dgemm64_",
        types.void(types.intc, types.intc, types.intc, types.int64, types.int64, types.int64, types.float64,
                   types.uintp, types.int64, types.uintp, types.int64, types.float64, types.uintp, types.int64))

    @njit(cache=True, inline="always")
    def _ld(a):
        # the leading dimension of a row-major matrix with unit column stride: its row stride, at least 1
        return max(1, a.strides[0] // 8)

    @njit(cache=True)
    def _gemm(trans_a, trans_b, a, b, out):
        # out (M, N) = op(a) op(b), op = transpose where asked; K is the inner dimension of op(a)
        M, N = out.shape
        K = a.shape[0] if trans_a else a.shape[1]
        _dgemm(_ROW_MAJOR, _TRANS if trans_a else _NO_TRANS, _TRANS if trans_b else _NO_TRANS, M, N, K, 1.0,
               a.ctypes.data, _ld(a), b.ctypes.data, _ld(b), 0.0, out.ctypes.data, _ld(out))

    @njit(cache=True, inline="always")
    def gemm_nt(a, b, out):
        """out = a @ b.T for float64 matrices a (M, K), b (N, K), out (M, N), each row-major with unit
        column stride (rows may be spaced further apart, as in a slice of rows) (NumPy's BLAS)."""
        _gemm(False, True, a, b, out)

    @njit(cache=True, inline="always")
    def gemm_nn(a, b, out):
        """out = a @ b for float64 matrices a (M, K), b (K, N), out (M, N), as :func:`gemm_nt`."""
        _gemm(False, False, a, b, out)

    @njit(cache=True, inline="always")
    def gemm_tn(a, b, out):
        """out = a.T @ b for float64 matrices a (K, M), b (K, N), out (M, N), as :func:`gemm_nt`."""
        _gemm(True, False, a, b, out)
else:  # pragma: no cover - NumPy built against another BLAS

    @njit(cache=True)
    def gemm_nt(a, b, out):
        """out = a @ b.T (Numba's np.dot)."""
        np.dot(a, b.T, out)

    @njit(cache=True)
    def gemm_nn(a, b, out):
        """out = a @ b (Numba's np.dot)."""
        np.dot(a, b, out)

    @njit(cache=True)
    def gemm_tn(a, b, out):
        """out = a.T @ b (Numba's np.dot)."""
        np.dot(a.T, b, out)
