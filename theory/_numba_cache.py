"""Keep Numba's on-disk kernel cache of the package in step with its sources, wherever Numba keeps it.

Numba's cache (``cache=True``) keys a compiled function on the content of the file that defines it. A kernel
that inlines or calls a function of another module (``theory.resnet`` inlines the tanh of ``theory._tanh``,
``theory.momentum`` calls the residuals of ``theory.resnet``, the soft-sort row kernels call the radix sort and
the isotonic pass) is not recompiled when only that other module changes: after a ``git pull`` or a branch
switch it would run the old code without a word. This module keeps one signature of the package's sources
(``numba-sources.txt``) in every folder where Numba may cache the kernels of a source folder of the package and,
where that signature is not the current one, deletes the cached kernels (``*.nbi``, ``*.nbc``) of that folder,
so that they are compiled afresh from the current sources.

Where Numba caches. For a kernel defined in the file ``D/m.py``, Numba 0.68 takes the first of these folders
that it can create and write a file in (``numba.core.caching``: its locators in the order of
``CacheImpl._locator_classes``):

1. ``$NUMBA_CACHE_DIR/<sub>`` when ``NUMBA_CACHE_DIR`` is set (``UserProvidedCacheLocator``);
2. ``D/__pycache__`` (``InTreeCacheLocator``);
3. ``<user cache>/<sub>``, the user cache folder ``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``
   (``~/Library/Caches/numba`` on macOS; Windows: the local application data folder) (``UserWideCacheLocator``),

with ``<sub> = <name of D>_<SHA-1 of the absolute path of D>``. The folder used can change from one run to
the next (the variable set or not, a ``__pycache__`` made read-only), so each of the three is checked on
every import, not only the one in use now; the one Numba will use gets the signature even before it holds a
kernel, so that the kernels compiled next are not taken for stale ones. When none of the three is writable
for a folder holding kernels, Numba would refuse every ``cache=True`` kernel of it ("cannot cache function
...: no locator available") and with it the import of every module that defines one; the kernels of such a
folder then run uncached (compiled afresh in each process) and one :class:`KernelCacheWarning` says so.

The signature also names the BLAS library the kernels link by name (:mod:`theory._blas`: NumPy's bundled
OpenBLAS, or none), so that a kernel compiled against one choice is not loaded under the other.

Cost: one ``stat`` per source file, and per source folder the signature file read and one writability probe
of the folder in use (a few milliseconds at import, without importing Numba); the sources that use Numba are
read only when a file's size or time has changed, and the caches are dropped only when one of those has a new
content. A package imported from a zip archive is not covered (Numba's ``ZipCacheLocator``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(os.path.dirname(os.path.abspath(__file__)))  # not resolved: Numba hashes the path as imported
STAMP_NAME = "numba-sources.txt"
#: a source that imports Numba (at any indentation): only these can define or inline kernels, so only their
#: content enters the signature (a module that merely names Numba, as the report does, keeps the cache)
_USES_NUMBA = re.compile(rb"^[ \t]*(?:from|import)[ \t]+numba\b", re.MULTILINE)

__all__ = ["KernelCacheWarning", "cache_folders", "invalidate_stale"]


class KernelCacheWarning(UserWarning):
    """No folder is writable for Numba's cache of some kernels: they are compiled afresh in each process."""


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
        if _USES_NUMBA.search(data):
            h.update(str(p.relative_to(ROOT)).encode() + b"\0" + data + b"\0")
    return h.hexdigest()


def _numba_cache_dir() -> str:
    """``NUMBA_CACHE_DIR`` as Numba reads it: its loaded configuration if Numba is imported, else the
    environment (or a ``.numba_config.yaml`` in the working folder, read by Numba's own configuration)."""
    config = sys.modules.get("numba.core.config")
    if config is None and os.path.isfile(".numba_config.yaml"):
        from numba.core import config
    if config is not None:
        return str(getattr(config, "CACHE_DIR", "") or "")
    return os.environ.get("NUMBA_CACHE_DIR", "")


def _user_cache_dir() -> str:
    """Numba's user-wide cache folder, ``AppDirs(appname="numba", appauthor=False).user_cache_dir``
    (``numba.misc.appdirs``), computed without importing Numba except on Windows."""
    if sys.platform == "win32" or "numba.misc.appdirs" in sys.modules:
        from numba.misc.appdirs import AppDirs

        return AppDirs(appname="numba", appauthor=False).user_cache_dir
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Caches"), "numba")
    return os.path.join(os.getenv("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "numba")


def cache_folders(directory) -> list[Path]:
    """The folders where Numba may cache the kernels defined in the files of ``directory``, in the order in
    which Numba tries them.

    Parameters
    ----------
    directory : str or os.PathLike
        A source folder of the package (as the modules in it are imported; made absolute).

    Returns
    -------
    list of pathlib.Path
        ``$NUMBA_CACHE_DIR/<sub>`` (only when set), ``directory/__pycache__`` and ``<user cache>/<sub>``, with
        ``<sub> = <name of directory>_<SHA-1 of its absolute path>`` (Numba's
        ``_CacheLocator.get_suitable_cache_subpath``); a folder named twice is listed once.
    """
    return _cache_folders(directory, _numba_cache_dir(), _user_cache_dir())


def _cache_folders(directory, custom: str, user: str) -> list[Path]:
    d = os.path.abspath(os.fspath(directory))
    sub = f"{os.path.basename(d)}_{hashlib.sha1(d.encode()).hexdigest()}"
    found = ([os.path.join(custom, sub)] if custom else []) + [os.path.join(d, "__pycache__"), os.path.join(user, sub)]
    out: list[Path] = []
    for f in found:
        p = Path(os.path.abspath(f))
        if p not in out:
            out.append(p)
    return out


def _writable(folder: Path) -> bool:
    """Whether Numba can cache in ``folder``: what its ``_CacheLocator.ensure_cache_path`` tries (create
    the folder, then a file in it), without importing ``tempfile`` at every import of the package."""
    probe = folder / f".probe-{os.getpid()}-{id(folder):x}"
    try:
        os.makedirs(folder, exist_ok=True)
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
        return True
    except OSError:
        return False


def _read_stamp(folder: Path) -> list[str]:
    try:
        return (folder / STAMP_NAME).read_text().split()
    except (OSError, UnicodeDecodeError):
        return []


def _write_stamp(folder: Path, quick: str, content: str) -> None:
    from ._files import write_atomic  # only when a stamp changes: keeps tempfile out of the import

    write_atomic(folder / STAMP_NAME, f"{quick}\n{content}\n")


def _drop(folder: Path) -> tuple[bool, bool]:
    """Delete the cached kernels in ``folder``; returns (whether any was deleted, whether all were)."""
    any_dropped, complete = False, True
    for cached in folder.glob("*.nb[ic]"):
        try:
            cached.unlink(missing_ok=True)
            any_dropped = True
        except OSError:
            complete = False
    return any_dropped, complete


def _run_uncached(folders: frozenset) -> None:
    """Make Numba compile the ``cache=True`` kernels defined in ``folders`` without its on-disk cache.

    Numba's ``Dispatcher.enable_caching`` (called by ``njit(cache=True)``) is wrapped so that, for a function
    defined in one of ``folders``, the dispatcher keeps the ``NullCache`` it has without ``cache=True``,
    instead of raising ``RuntimeError("cannot cache function ...: no locator available")``; every other
    function is cached as Numba does it.
    """
    import inspect

    from numba.core import caching, dispatcher

    enable = dispatcher.Dispatcher.enable_caching
    previous = getattr(enable, "_theory_uncached", frozenset())
    enable = getattr(enable, "__wrapped__", enable) if previous else enable
    folders = frozenset(folders) | previous

    @functools.wraps(enable)
    def enable_caching(self):
        try:
            where = os.path.dirname(os.path.abspath(inspect.getfile(self.py_func)))
        except TypeError:  # no source file (a built-in or a function made at run time)
            where = None
        if where in folders:
            self._cache = caching.NullCache()
        else:
            enable(self)

    enable_caching._theory_uncached = folders
    dispatcher.Dispatcher.enable_caching = enable_caching


def invalidate_stale() -> bool:
    """Drop the package's cached kernels wherever Numba may keep them if a source using Numba changed since
    they were compiled, and run uncached the kernels that have no writable cache folder.

    For each source folder ``D`` of the package and each folder ``F`` of :func:`cache_folders` ``(D)``: when
    ``F`` exists and its ``numba-sources.txt`` names neither the current (size, time) signature nor the current
    content signature of the package's Numba sources, the ``*.nbi`` and ``*.nbc`` files of ``F`` are deleted and
    the signature is rewritten; the first ``F`` Numba can write in is given the signature before it holds a
    kernel. When no ``F`` is writable and ``D`` holds a kernel, the kernels of ``D`` run uncached
    (:func:`_run_uncached`) and one :class:`KernelCacheWarning` names the folders tried.

    Returns
    -------
    bool
        Whether any cached kernel was deleted.

    Warns
    -----
    KernelCacheWarning
        When some kernel folder has no writable cache folder (once per call).

    Notes
    -----
    Never raises on a file-system error: a folder that cannot be read or written is left as it is (Numba does
    not use a folder it cannot write in either).
    """
    try:
        files = _sources()
        quick = _quick_signature(files)
    except OSError:
        return False
    by_folder: dict[Path, list[Path]] = {}
    for p in files:
        by_folder.setdefault(p.parent, []).append(p)

    @functools.cache
    def content() -> str:
        return _content_signature(files)

    @functools.cache
    def has_kernels(d: Path) -> bool:
        try:
            return any(_USES_NUMBA.search(p.read_bytes()) for p in by_folder[d])
        except OSError:
            return True

    try:
        custom, user = _numba_cache_dir(), _user_cache_dir()
    except Exception:  # a Numba configuration that cannot be read: Numba itself fails on it, not this import
        return False
    dropped = False
    homeless: list[Path] = []
    for d in sorted(by_folder):
        selected = None
        for f in _cache_folders(d, custom, user):
            try:
                exists = f.is_dir()
                old = _read_stamp(f) if exists else []
                current = old[:1] == [quick]
                if exists and not current and old[1:2] != [content()]:
                    gone, complete = _drop(f)
                    dropped |= gone
                    if not complete:
                        continue  # a kernel that could not be deleted: the stale signature stays
                if selected is None and (exists or has_kernels(d)) and _writable(f):
                    selected = f
                if not current and (exists or f == selected) and f.is_dir():
                    _write_stamp(f, quick, content())
            except OSError:
                continue
        if selected is None and has_kernels(d):
            homeless.append(d)
    if homeless:
        try:
            _run_uncached(frozenset(str(d) for d in homeless))
        except ImportError:  # no Numba: no kernel can run anyway
            return dropped
        tried = (f"NUMBA_CACHE_DIR={custom}, " if custom else "") + f"the package's __pycache__ folders, {user}"
        warnings.warn(
            f"theory: no writable folder for Numba's kernel cache (tried {tried}): the kernels of "
            f"{len(homeless)} package folder(s) are compiled afresh in every process; set NUMBA_CACHE_DIR to a "
            "writable folder to keep them",
            KernelCacheWarning,
            stacklevel=3,
        )
    return dropped
