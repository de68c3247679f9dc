"""The package keeps Numba's cached kernels in step with its sources wherever Numba caches them, and runs
uncached when no cache folder is writable (theory._numba_cache).

Most tests run a copy of the package in a subprocess, with two probe kernels added to it: ``run`` in
``theory/linear/_probe_user.py`` calls ``scale`` of ``theory/_probe_const.py``, which multiplies by the
module constant ``SCALE`` (frozen into the compiled code). Numba keys the cached ``run`` on its own file only,
so a new ``SCALE`` reaches it only if the package drops the cache. The tests run as any user, root included,
so a folder is made unwritable by putting a regular file where it (or a folder above it) should be: creating
it then fails for everyone.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import theory._numba_cache as c

_CONST = '''from numba import njit

SCALE = {scale}


@njit(cache=True)
def scale(x):
    return SCALE * x
'''

_USER = '''from numba import njit

from .._probe_const import scale


@njit(cache=True)
def run(x):
    return scale(x) + 1.0
'''

_PROBE = "from theory.linear._probe_user import run; print(run(1.0))"


def _copy_package(tmp_path: Path) -> Path:
    src = Path(importlib.import_module("theory").__file__).parent
    dst = tmp_path / "theory"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    (dst / "_probe_const.py").write_text(_CONST.format(scale=2.0))
    (dst / "linear" / "_probe_user.py").write_text(_USER)
    return dst


def _set_scale(pkg: Path, value: float) -> None:
    (pkg / "_probe_const.py").write_text(_CONST.format(scale=value))


def _block_in_tree(pkg: Path) -> None:
    """Put a regular file where every ``__pycache__`` folder of the package would be."""
    for d in {p.parent for p in pkg.rglob("*.py")}:
        shutil.rmtree(d / "__pycache__", ignore_errors=True)
        (d / "__pycache__").write_text("")


def _env(tmp_path: Path, numba_cache_dir: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYTHONPATH=str(tmp_path), HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    if numba_cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(numba_cache_dir)
    return env


def _run(tmp_path, code, env=None):
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env or _env(tmp_path),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "KernelCacheWarning" not in out.stderr, out.stderr
    return out.stdout.strip()


def _kernels(folder: Path) -> dict:
    return {p.name: p.stat().st_mtime_ns for p in folder.rglob("*.nb[ic]")}


def test_changed_kernel_source_drops_every_cached_kernel(tmp_path):
    pkg = _copy_package(tmp_path)
    probe = "import theory, theory._numba_cache as c; print(c.ROOT)"
    assert _run(tmp_path, probe) == str(pkg)
    # a cached kernel of one module, and a source another module imports from
    cached = pkg / "momentum" / "__pycache__" / "_kernels.fake-1.py311.nbi"
    assert cached.parent.is_dir()  # the folder Numba will use is stamped before it holds a kernel
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
    named = pkg / "report.py"  # names Numba (a version look-up) without importing it: keeps the cache too
    assert b"numba" in named.read_bytes() and not c._USES_NUMBA.search(named.read_bytes())
    named.write_text(named.read_text() + "\n# changed\n")
    _run(tmp_path, check)
    assert cached.exists()


def test_user_wide_cache_is_dropped_when_a_source_changes(tmp_path):
    # the package's __pycache__ folders cannot be written: Numba caches in the user-wide folder
    pkg = _copy_package(tmp_path)
    _block_in_tree(pkg)
    assert _run(tmp_path, _PROBE) == "3.0"
    user = tmp_path / "xdg" / "numba"
    cached = _kernels(user)
    assert any(name.startswith("_probe_user.run") for name in cached)
    assert _run(tmp_path, _PROBE) == "3.0"
    assert _kernels(user) == cached  # nothing changed: the cached kernels are used, not compiled again
    _set_scale(pkg, 5.0)  # the module `run` calls changes, `run`'s own file does not
    assert _run(tmp_path, _PROBE) == "6.0"


def test_numba_cache_dir_is_kept_in_step_when_unused_during_a_change(tmp_path):
    pkg = _copy_package(tmp_path)
    custom = tmp_path / "numba-cache"
    assert _run(tmp_path, _PROBE, _env(tmp_path, custom)) == "3.0"
    assert any(name.startswith("_probe_user.run") for name in _kernels(custom))
    assert not _kernels(pkg)  # NUMBA_CACHE_DIR comes before the package's __pycache__
    _set_scale(pkg, 5.0)
    assert _run(tmp_path, _PROBE, _env(tmp_path, custom)) == "6.0"
    _set_scale(pkg, 7.0)  # changed while the kernels are cached in the package's __pycache__
    assert _run(tmp_path, _PROBE) == "8.0"
    assert _run(tmp_path, _PROBE, _env(tmp_path, custom)) == "8.0"  # the folder not used then is stale


def test_no_writable_cache_folder_runs_uncached_with_one_warning(tmp_path):
    pkg = _copy_package(tmp_path)
    _block_in_tree(pkg)
    (tmp_path / "file").write_text("")
    env = _env(tmp_path, tmp_path / "file" / "numba")
    env.update(HOME=str(tmp_path / "file"), XDG_CACHE_HOME=str(tmp_path / "file" / "xdg"))
    code = _PROBE + "; import theory.linear as L, numpy as np; print(L.product(np.zeros((2, 2, 2)))[0, 0])"
    for scale, expected in ((2.0, "3.0"), (5.0, "6.0")):  # compiled afresh each time: nothing stale is served
        _set_scale(pkg, scale)
        out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [expected, "1.0"]
        warned = [line for line in out.stderr.splitlines() if "KernelCacheWarning" in line]
        assert len(warned) == 1, out.stderr
        assert "compiled afresh in every process" in warned[0] and "NUMBA_CACHE_DIR" in warned[0]
    assert not _kernels(tmp_path)
    # a command that imports a kernel module at start-up: exit 2 (no report yet), not a traceback
    out = subprocess.run([sys.executable, "-m", "theory.cli", "report"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.count("KernelCacheWarning") == 1, out.stderr


def test_cache_folders_are_numbas_own_locations(tmp_path, monkeypatch):
    from numba.core import caching, config

    from theory._finite import _any_nonfinite

    py_func = _any_nonfinite.py_func
    py_file = py_func.__code__.co_filename
    assert [k.__name__ for k in caching.CacheImpl._locator_classes] == [
        "UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator", "IPythonCacheLocator",
        "ZipCacheLocator"]  # the last two never apply to a source file of the package
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "custom"))
    expected = [Path(k(py_func, py_file).get_cache_path())
                for k in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator)]
    assert c.cache_folders(Path(py_file).parent) == expected
    monkeypatch.setattr(config, "CACHE_DIR", "")
    assert c.cache_folders(Path(py_file).parent) == expected[1:]
    # the user-wide folder computed without Numba's appdirs (what `import theory` does) is the same
    from numba.misc.appdirs import AppDirs

    monkeypatch.delitem(sys.modules, "numba.misc.appdirs")
    assert c._user_cache_dir() == AppDirs(appname="numba", appauthor=False).user_cache_dir


def test_missing_package_folder_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(c, "ROOT", tmp_path / "nowhere")
    assert c.invalidate_stale() is False
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("blocked", [False, True])
def test_run_uncached_leaves_other_functions_cached(tmp_path, blocked):
    # the wrapped `enable_caching` gives a NullCache only to functions defined in the folders named
    pkg = _copy_package(tmp_path)
    (tmp_path / "mine.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return x + 1\n")
    folders = f"{{{str(pkg / 'linear')!r}}}" if blocked else "set()"
    code = ("import theory._numba_cache as c; from numba.core import caching; c._run_uncached(frozenset("
            f"{folders})); import mine, theory.linear._probe_user as p; "
            "print(type(mine.f._cache).__name__, type(p.run._cache).__name__)")
    assert _run(tmp_path, code).split() == ["FunctionCache", "NullCache" if blocked else "FunctionCache"]
