"""How the oracle calls the user's function: under ``torch.no_grad()`` unless the kernel is a gradient kernel, and
with a memory cap per case, watched while the function runs.

A function that builds what it does not need (an autograd graph over 20,000 Sinkhorn iterations held 6 GB until
the process was killed) is stopped and its case reported as ``ERROR``, naming the cap and the memory reached,
instead of taking the machine down.
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading

__all__ = ["MEMORY_CAP", "MEMORY_CAP_FACTOR", "MEMORY_UNITS", "MemoryCapExceeded", "case_memory_cap", "check_memory_cap", "parse_memory_cap",
           "resident_bytes", "user_call"]

#: The least growth of the process's resident memory during one call of the user's function at which the oracle
#: stops the case (2 GiB). The built-in cases' inputs take at most 1.3 MB (resnet_forward at N = 10^4), and an
#: implementation's working memory (a few copies of them, a library's first-call allocations: PyTorch's
#: allocator and thread pools, a JIT compilation) stays below a few hundred MiB; a call that grows the process by gigabytes holds
#: something the computation does not need, e.g. an autograd graph across the iterations.
MEMORY_CAP = 2 * 2**30

#: The cap of a case is at least this multiple of the bytes of its inputs and reference outputs, so that the
#: cases generated at large parameters (``--param``, up to theory._validation.MAX_BYTES per array) leave room
#: for the copies a straightforward implementation makes (a list of states stacked into an array, a conversion
#: to tensors and back).
MEMORY_CAP_FACTOR = 16

#: how often the watchdog reads the resident memory, in seconds
_POLL = 0.005

#: how long the watchdog waits before raising again in a function that caught the first interruption
_REPEAT = 0.1


class MemoryCapExceeded(BaseException):
    """Raised inside the user's function when the process's resident memory grew by more than the case's cap.

    A BaseException, so that the function's own ``except Exception`` does not swallow it. ``cap`` and
    ``reached`` (the growth measured, in bytes) are numbers.
    """

    def __init__(self, cap: float, reached: int):
        super().__init__(cap, reached)
        self.cap = cap
        self.reached = reached

    def __str__(self) -> str:
        from theory._validation import format_bytes

        return (f"stopped: the process's resident memory grew by {format_bytes(self.reached)} during the call, above "
                f"this case's memory cap of {format_bytes(self.cap)} (default: theory.oracle.MEMORY_CAP, or "
                f"MEMORY_CAP_FACTOR times the case's arrays; set it with memory_cap= or --memory-cap): does the "
                f"function keep what it no longer needs, e.g. an autograd graph across iterations?")


def resident_bytes() -> int | None:
    """The process's resident memory in bytes: /proc/self/statm on Linux; elsewhere the peak resident size of
    ``resource.getrusage`` (which never decreases, so that a growth is still seen); None where neither exists."""
    try:
        with open("/proc/self/statm", "rb") as f:
            import os

            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) * (1 if sys.platform == "darwin" else 1024)  # bytes on macOS, KiB on Linux and the BSDs


def check_memory_cap(memory_cap):
    """``memory_cap`` of :func:`theory.oracle.verify` validated: None (the rule of :func:`case_memory_cap`), a
    positive number of bytes, or ``math.inf`` (no cap). :class:`OracleInputError` naming it otherwise."""
    from ._core import OracleInputError

    if memory_cap is None:
        return None
    if isinstance(memory_cap, bool) or not isinstance(memory_cap, (int, float)):
        raise OracleInputError(f"`memory_cap` must be a number of bytes (or None for the default rule, math.inf for "
                               f"no cap); got {type(memory_cap).__name__}")
    if not memory_cap > 0:  # NaN too
        raise OracleInputError(f"`memory_cap` must be positive (bytes; math.inf for no cap); got {memory_cap!r}")
    return float(memory_cap)


#: the units ``--memory-cap`` accepts after a number (a bare number is bytes)
MEMORY_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
                "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def parse_memory_cap(text: str) -> float:
    """``--memory-cap`` as bytes: a number with an optional unit of :data:`MEMORY_UNITS` (``2GiB``, ``500 MB``,
    ``1e9``), or ``inf`` / ``none`` for no cap. :class:`OracleInputError` naming the option otherwise."""
    import re

    from ._core import OracleInputError

    raw = str(text).strip()
    if raw.lower() in ("inf", "none"):
        return math.inf
    m = re.fullmatch(r"([0-9.eE+-]+)\s*([A-Za-z]*)", raw)
    units = {u.lower(): f for u, f in MEMORY_UNITS.items()}
    try:
        value = float(m.group(1)) * units[m.group(2).lower() or "b"] if m else math.nan
    except (ValueError, KeyError):
        value = math.nan
    if not value > 0 or not math.isfinite(value):
        raise OracleInputError(f"--memory-cap expects a positive size in bytes with an optional unit "
                               f"({', '.join(MEMORY_UNITS)}; e.g. 4GiB), or inf for no cap; got {text!r}")
    return value


def case_memory_cap(memory_cap, nbytes: int) -> float:
    """The cap of one case: ``memory_cap`` when given, otherwise max(:data:`MEMORY_CAP`, :data:`MEMORY_CAP_FACTOR`
    times ``nbytes``, the bytes of the case's inputs and reference outputs)."""
    if memory_cap is not None:
        return float(memory_cap)
    return float(max(MEMORY_CAP, MEMORY_CAP_FACTOR * int(nbytes)))


def _set_async_exc(thread_id: int, exc) -> bool:
    """Raise ``exc`` (a class, or None to clear a pending one) in the thread ``thread_id`` at its next bytecode."""
    try:
        import ctypes

        set_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except (ImportError, AttributeError):  # not CPython: the growth is still seen when the call returns
        return False
    set_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)
    set_exc.restype = ctypes.c_int
    return set_exc(thread_id, exc) == 1 if exc is not None else (set_exc(thread_id, ctypes.py_object()) >= 0)


def _release_free_memory() -> None:
    """Return the memory the process has freed to the system (glibc's ``malloc_trim``) before a baseline is read.

    Memory freed by earlier work (a training run's tensors) stays resident in the allocator's arenas, and a call
    that then allocates reuses it without growing the resident size: the watch would not see that call's own
    growth. Trimming first makes the growth measured the call's. A no-op where glibc is absent.
    """
    try:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        if name and sys.platform.startswith("linux"):
            ctypes.CDLL(name).malloc_trim(0)
    except (OSError, AttributeError):
        pass


class _Watch:
    """A thread that reads the resident memory every :data:`_POLL` s while the user's function runs and raises
    :class:`MemoryCapExceeded` in it when the growth exceeds ``cap``.

    The exception is delivered between Python bytecodes: a function allocating in a Python loop is stopped
    within a few milliseconds; one long call into C (a single huge allocation) is stopped when it returns.
    """

    def __init__(self, cap: float):
        self.cap = cap
        if math.isfinite(cap):
            _release_free_memory()
        self.baseline = resident_bytes()
        self.peak = 0
        self.exceeded = False
        self._active = False
        self._stop = threading.Event()
        self._thread = None
        self._target = threading.get_ident()

    def _growth(self) -> int:
        now = resident_bytes()
        grown = 0 if now is None or self.baseline is None else now - self.baseline
        self.peak = max(self.peak, grown)
        return grown

    def _run(self) -> None:
        import time

        last = -math.inf
        while self._active and not self._stop.wait(_POLL):
            if self._growth() > self.cap and self._active:
                self.exceeded = True
                now = time.monotonic()
                if now - last >= _REPEAT:  # again if the function caught it and goes on growing
                    _set_async_exc(self._target, MemoryCapExceeded)
                    last = now

    def __enter__(self):
        if self.baseline is not None and math.isfinite(self.cap):
            self._active = True
            self._thread = threading.Thread(target=self._run, name="theory-oracle-memory-cap", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        # an interruption the watchdog raised may be delivered anywhere in here: each step is idempotent and the
        # sequence is redone until the watchdog has ended and no interruption is pending, so that none ever
        # reaches the oracle's own code after the call
        while True:
            try:
                self._active = False
                self._stop.set()
                if self._thread is not None:
                    self._thread.join()
                    _set_async_exc(self._target, None)
                break
            except MemoryCapExceeded:
                self.exceeded = True
        if math.isfinite(self.cap) and self._growth() > self.cap:
            self.exceeded = True  # grown inside one call into C, or the function swallowed the interruption
        return False

    def error(self) -> MemoryCapExceeded:
        """The exception stating the cap and the growth reached (a number each)."""
        return MemoryCapExceeded(self.cap, self.peak)


@contextlib.contextmanager
def user_call(gradient: bool, cap: float):
    """The context of one call of the user's function: ``torch.no_grad()`` when torch is already imported (by the
    user's code: the oracle never imports it) and the kernel is not a gradient kernel, and the memory watch.
    Yields the :class:`_Watch`; after the block, ``watch.exceeded`` says whether the cap was passed."""
    torch = sys.modules.get("torch")
    grad = contextlib.nullcontext() if gradient or torch is None or not hasattr(torch, "no_grad") else torch.no_grad()
    watch = _Watch(cap)
    with grad, watch:
        yield watch
