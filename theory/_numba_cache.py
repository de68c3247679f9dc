"""Discard Numba's on-disk kernel cache when any kernel source of the package has changed.

Numba's cache (``cache=True``) keys a compiled function on the modification time of the file that defines
it. A kernel that inlines or calls a function of another module (``theory.momentum`` calls the residuals of
``theory.resnet``, the soft-sort row kernels call the radix sort and the isotonic pass) is not recompiled
when only that other module changes: after a ``git pull`` or a branch switch it would run the old code
without a word. This module keeps one signature of the package's sources beside the cache
(``theory/__pycache__/numba-sources.txt``) and, when it changes, deletes every cached kernel
(``*.nbi``, ``*.nbc``) of the package, so that they are compiled afresh from the current sources.

The signature also names the BLAS library the kernels link by name (:mod:`theory._blas`: NumPy's bundled
OpenBLAS, or none), so that a kernel compiled against one choice is not loaded under the other.

Cost: one ``stat`` per source file at import (about a millisecond); the sources that use Numba are read only
when a file's size or time has changed, and the caches are dropped only when one of those has a new content.
A package installed read-only is left as it is.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent
STAMP = ROOT / "__pycache__" / "numba-sources.txt"


def _sources():
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def _blas_token() -> str:
    """The file name of NumPy's bundled OpenBLAS that :mod:`theory._blas` links (found without importing
    NumPy), or an empty string."""
    import importlib.util

    spec = importlib.util.find_spec("numpy")
    if spec is None or spec.origin is None:
        return ""
    libs = Path(spec.origin).resolve().parent.parent / "numpy.libs"
    found = sorted(libs.glob("libscipy_openblas64_*.so")) if libs.is_dir() else []
    return found[0].name if found else ""


def _quick_signature(files) -> str:
    h = hashlib.sha256()
    h.update(f"blas:{_blas_token()}\n".encode())
    for p in files:
        st = p.stat()
        h.update(f"{p.relative_to(ROOT)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _content_signature(files) -> str:
    h = hashlib.sha256()
    h.update(f"blas:{_blas_token()}\n".encode())
    for p in files:
        data = p.read_bytes()
        if b"numba" in data:
            h.update(str(p.relative_to(ROOT)).encode() + b"\0" + data + b"\0")
    return h.hexdigest()


def invalidate_stale() -> bool:
    """Drop the package's cached kernels if a source using Numba changed since they were compiled; returns
    whether they were dropped. Never raises: on any file-system error the cache is left untouched."""
    try:
        files = _sources()
        quick = _quick_signature(files)
        old = STAMP.read_text().split() if STAMP.exists() else []
        if old[:1] == [quick]:
            return False
        content = _content_signature(files)
        dropped = False
        if old[1:2] != [content]:
            for cached in ROOT.rglob("__pycache__/*.nb[ic]"):
                cached.unlink(missing_ok=True)
                dropped = True
        STAMP.parent.mkdir(exist_ok=True)
        tmp = STAMP.with_suffix(f".{id(files)}.tmp")
        tmp.write_text(f"{quick}\n{content}\n")
        tmp.replace(STAMP)
        return dropped
    except OSError:
        return False
