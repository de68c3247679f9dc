"""The package drops Numba's cached kernels when a kernel source changes (theory._numba_cache)."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path


def _copy_package(tmp_path: Path) -> Path:
    src = Path(importlib.import_module("theory").__file__).parent
    dst = tmp_path / "theory"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _run(tmp_path, code):
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_changed_kernel_source_drops_every_cached_kernel(tmp_path):
    pkg = _copy_package(tmp_path)
    probe = "import theory, theory._numba_cache as c; print(c.ROOT)"
    assert _run(tmp_path, probe) == str(pkg)
    # a cached kernel of one module, and a source another module imports from
    cached = pkg / "momentum" / "__pycache__" / "_kernels.fake-1.py311.nbi"
    cached.parent.mkdir(exist_ok=True)
    cached.write_bytes(b"stale")
    check = "import theory"  # the import runs the check
    _run(tmp_path, check)
    assert cached.exists()  # nothing changed since the stamp: the cache stays
    tanh = pkg / "_tanh.py"
    os.utime(tanh, ns=(tanh.stat().st_atime_ns, tanh.stat().st_mtime_ns + 10**9))  # touched, same content
    _run(tmp_path, check)
    assert cached.exists()
    tanh.write_text(tanh.read_text() + "\n# changed\n")  # a new content of a Numba source
    _run(tmp_path, check)
    assert not cached.exists()
    doc = pkg / "claims.py"  # a source without Numba: a new content keeps the cache
    assert b"numba" not in doc.read_bytes()
    cached.write_bytes(b"fresh")
    doc.write_text(doc.read_text() + "\n# changed\n")
    _run(tmp_path, check)
    assert cached.exists()


def test_read_only_package_is_left_alone(tmp_path, monkeypatch):
    import theory._numba_cache as c

    monkeypatch.setattr(c, "STAMP", tmp_path / "missing" / "dir" / "stamp.txt")
    monkeypatch.setattr(c, "ROOT", tmp_path / "nowhere")
    assert c.invalidate_stale() is False
