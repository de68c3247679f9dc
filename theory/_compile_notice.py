"""A line on the terminal while Numba compiles the package's kernels, instead of minutes of silence.

Numba compiles a kernel on its first call and keeps the machine code on disk (``cache=True``), so only the first run
after an install, an upgrade or a change of a kernel's source compiles (about 16 CPU-minutes for every kernel of the
package; one command compiles only the kernels it calls). The commands of :mod:`theory.cli` that call kernels install
:func:`notice` for their run: at the first compilation it writes one line saying what is happening and that later
runs load the kernels from the cache; on a terminal (outside pytest, whose own output would be torn) a counter
follows; at the end a line says how many kernels were compiled and how long it took. A run that finds every kernel
in the cache prints nothing.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

__all__ = ["notice"]

HEADER = ("compiling the Numba kernels this run needs (the first run after an install or a change of the sources; "
          "later runs load them from the cache)")


class _Listener:
    """Counts the top-level compilations (a kernel compiling the kernels it calls counts once)."""

    def __init__(self, stream, live: bool) -> None:
        self.stream, self.live = stream, live
        self.depth = self.count = 0
        self.start: float | None = None  # first compilation
        self.began = 0.0  # the current top-level compilation
        self.seconds = 0.0  # time spent compiling

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: the notice is not worth an error
            pass

    def on_start(self, event) -> None:
        now = time.perf_counter()
        if self.start is None:
            self.start = now
            # inside pytest the line starts after the progress dots of the current module
            self._write(("\n" if "pytest" in sys.modules else "") + HEADER + ("" if self.live else "\n"))
        if self.depth == 0:
            self.began = now
        self.depth += 1

    def on_end(self, event) -> None:
        self.depth = max(self.depth - 1, 0)
        if self.depth == 0:
            self.count += 1
            self.seconds += time.perf_counter() - self.began
            if self.live:
                self._write(f"\r{HEADER}: {self.count} compiled, {self.seconds:.0f} s")

    def notify(self, event) -> None:
        if event.is_start:
            self.on_start(event)
        elif event.is_end:
            self.on_end(event)

    def close(self) -> None:
        if self.start is None:
            return
        self._write(("\n" if self.live else "") + f"compiled {self.count} Numba kernel"
                    f"{'s' if self.count != 1 else ''} in {self.seconds:.0f} s; the next runs load them from the "
                    "cache\n")


@contextlib.contextmanager
def notice(stream=None, *, live: bool | None = None):
    """Within the block, say so on ``stream`` (default stderr) whenever Numba compiles a kernel.

    Parameters
    ----------
    stream : file, optional
        Where the lines go (default ``sys.stderr``).
    live : bool, optional
        Show a counter updated in place (default: when ``stream`` is a terminal and pytest is not running).
    """
    own = None
    if stream is None:  # a copy of the stderr descriptor: pytest's capture of fd 2 during a check must not hide it
        try:
            own = stream = open(os.dup(sys.stderr.fileno()), "w", buffering=1, encoding="utf-8", errors="replace")
        except (AttributeError, OSError, ValueError):
            stream = sys.stderr
    if live is None:
        live = bool(getattr(stream, "isatty", lambda: False)()) and "pytest" not in sys.modules
    try:
        from numba.core import event
    except ImportError:  # pragma: no cover - numba is a dependency
        if own is not None:
            own.close()
        yield
        return
    listener = type("CompileNotice", (_Listener, event.Listener), {})(stream, live)
    event.register("numba:compile", listener)
    try:
        yield listener
    finally:
        event.unregister("numba:compile", listener)
        listener.close()
        if own is not None:
            own.close()
