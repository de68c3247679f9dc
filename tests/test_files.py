"""theory._files: atomic replacement (the destination is the old file or the new one, never a part),
the inter-process lock, and the up-front check of an output path."""

import multiprocessing
import os
import stat
import time

import pytest

from theory._files import LockTimeout, check_writable_file, locked, write_atomic, write_atomic_many


def test_write_atomic_replaces_and_keeps_permissions(tmp_path):
    path = tmp_path / "a.txt"
    write_atomic(path, "one")
    assert path.read_text() == "one"
    os.chmod(path, 0o640)
    write_atomic(path, b"two")
    assert path.read_bytes() == b"two"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_write_atomic_many_leaves_every_destination_when_a_content_fails(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write_atomic_many([(a, "old a"), (b, "old b")])

    class Boom(str):  # fails while the second content is encoded, after the first was staged
        def encode(self, encoding="utf-8", errors="strict"):
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_atomic_many([(a, "new a"), (b, Boom("new b"))])
    assert (a.read_text(), b.read_text()) == ("old a", "old b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def _hold(path, seconds, ready):
    with locked(path):
        ready.set()
        time.sleep(seconds)


def test_lock_excludes_another_process_and_times_out(tmp_path):
    lock = tmp_path / ".lock"
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    holder = ctx.Process(target=_hold, args=(lock, 3.0, ready))
    holder.start()
    try:
        assert ready.wait(60)
        start = time.monotonic()
        with pytest.raises(LockTimeout, match="still locked"):
            with locked(lock, timeout=0.3):
                pass
        assert time.monotonic() - start < 2.5
        with locked(lock, timeout=60):  # granted once the holder lets go, about 3 s after it took it
            assert time.monotonic() - start > 1.5
    finally:
        holder.join(60)


@pytest.mark.parametrize("case, message", [
    ("folder", "is a folder"), ("missing", "does not exist"), ("exists", "exists already")])
def test_check_writable_file_refuses_up_front(tmp_path, case, message):
    path = {"folder": tmp_path, "missing": tmp_path / "no" / "x.json", "exists": tmp_path / "x.json"}[case]
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(ValueError, match=f"--json .*{message}"):
        check_writable_file(path, "--json", overwrite=case != "exists")
    assert check_writable_file(tmp_path / "y.json", "--json") == tmp_path / "y.json"
