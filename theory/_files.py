"""Files users keep (the claims report, sweep caches, oracle exports): atomic writes and a lock.

:func:`write_atomic` writes the whole content to a temporary file in the destination's folder, flushes
and fsyncs it, and renames it over the destination with :func:`os.replace` (atomic on POSIX and
Windows within one file system), so that a reader sees either the old file or the new one, never a
half-written file, whatever stops the writer (a full disk, a file-size limit, a kill).

:func:`locked` is an inter-process lock on a lock file (``fcntl.flock`` on POSIX, ``msvcrt.locking``
on Windows), held across a read-modify-write such as merging this run's claim records into the
report on disk, so that two concurrent runs keep both their records.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

from ._errors import check_package

check_package()  # a folder named theory imported instead of the package stops here, in one line

__all__ = ["LockTimeout", "locked", "write_atomic", "write_atomic_many", "fsync_directory", "check_writable_file",
           "find_root"]


def find_root(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest directory at or above ``start`` (default: the cwd) holding ``checks/``: the checkout whose
    ``reports/`` and ``sweeps/`` the commands write (None outside a checkout)."""
    start = Path(start or os.getcwd()).resolve()
    for directory in (start, *start.parents):
        if (directory / "checks").is_dir():
            return directory
    return None


class LockTimeout(OSError):
    """The lock file stayed held by another process for longer than the timeout."""


def fsync_directory(directory: str | os.PathLike) -> None:
    """Flush a directory's entries (a rename into it) to disk, where the platform allows it."""
    if os.name != "posix":  # pragma: no cover - Windows has no directory fsync
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _staged(path: Path, data: bytes) -> str:
    """A fsynced temporary file beside ``path`` holding ``data``, with the permissions ``path`` has
    (or those of a new file); returns its name."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():  # keep the permissions a user gave the file
            mode = path.stat().st_mode & 0o7777
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        with contextlib.suppress(OSError):
            os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def write_atomic_many(files, *, encoding: str = "utf-8") -> list[Path]:
    """Replace several files of one folder together: every content is written and fsynced to a
    temporary file first, and only then are they renamed over their destinations, in order.

    A failure while writing (a full disk, a file-size limit, a kill) leaves every destination as it
    was; only the renames, which do not write data, come after the first destination changed.

    Parameters
    ----------
    files : mapping or iterable of (path, bytes or str)
        Destinations and their whole new contents, renamed in this order.
    encoding : str
        Encoding of ``str`` contents.

    Returns
    -------
    list of pathlib.Path

    Raises
    ------
    OSError
        When a content cannot be written in full; no temporary file is left behind.
    """
    items = list(files.items() if hasattr(files, "items") else files)
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in items:
            path = Path(path)
            staged.append((_staged(path, data.encode(encoding) if isinstance(data, str) else data), path))
        for i, (tmp, path) in enumerate(staged):
            os.replace(tmp, path)
            staged[i] = ("", path)
    except BaseException:
        for tmp, _ in staged:
            if tmp:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        raise
    for directory in {path.parent for _, path in staged}:
        fsync_directory(directory)
    return [path for _, path in staged]


def write_atomic(path: str | os.PathLike, data: bytes | str, *, encoding: str = "utf-8") -> Path:
    """Replace the file ``path`` by ``data`` atomically (temporary file, fsync, :func:`os.replace`).

    Parameters
    ----------
    path : path
        Destination; its folder must exist.
    data : bytes or str
        The whole new content (``str`` is encoded with ``encoding``).
    encoding : str
        Encoding of a ``str``.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    OSError
        When the content cannot be written in full; the destination is then unchanged and no
        temporary file is left behind.
    """
    return write_atomic_many([(path, data)], encoding=encoding)[0]


@contextlib.contextmanager
def locked(lock_path: str | os.PathLike, *, timeout: float = 600.0, poll: float = 0.05):
    """Hold an exclusive inter-process lock on ``lock_path`` (created if needed) inside the block.

    Parameters
    ----------
    lock_path : path
        The lock file; its folder must exist. The file is left in place (removing it would let a
        third process lock a new file while a second still holds the old one).
    timeout : float
        Seconds to wait for another holder before raising :class:`LockTimeout`.
    poll : float
        Seconds between attempts.

    Raises
    ------
    LockTimeout
        When the lock is still held by another process after ``timeout`` seconds.
    OSError
        When the lock file cannot be opened.
    """
    lock_path = Path(lock_path)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        deadline = time.monotonic() + timeout
        while not _try_lock(fd):
            if time.monotonic() > deadline:
                raise LockTimeout(f"{lock_path} is still locked by another process after {timeout:g} s")
            time.sleep(poll)
        try:
            yield lock_path
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


if os.name == "posix":
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

else:  # pragma: no cover - Windows
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


def check_writable_file(path: str | os.PathLike, name: str, *, overwrite: bool = True) -> Path:
    """Refuse, before any work, an output path that cannot be written: a folder, a missing or
    unwritable parent folder, or (``overwrite=False``) an existing file.

    Parameters
    ----------
    path : path
        The output file.
    name : str
        How the user gave it (``--json``), for the message.
    overwrite : bool
        Whether an existing file may be replaced.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        Naming ``name`` and the reason.
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{name} {path} is a folder, not a file")
    if path.exists() and not overwrite:
        raise ValueError(f"{name} {path} exists already; remove it or choose another path")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{name} {path}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{name} {path}: the folder {parent} is not writable")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{name} {path} is not writable")
    return path
