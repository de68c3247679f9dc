"""While Numba compiles, the commands say so (theory._compile_notice): one line at the first compilation, the count
and the time at the end; nothing when every kernel comes from the cache."""

from __future__ import annotations

import io

import numpy as np
from numba import njit

from theory._compile_notice import HEADER, notice


def test_a_compilation_is_announced_and_counted():
    stream = io.StringIO()
    with notice(stream, live=False) as listener:
        @njit
        def inner(x):
            return x + 1.0

        @njit
        def outer(x):
            return inner(x) * 2.0

        outer(1.0)
        outer(np.ones(2))
    lines = [line for line in stream.getvalue().splitlines() if line]
    assert lines[0] == HEADER and listener.count == 2  # outer for two signatures; inner inside outer not counted
    assert lines[-1].startswith("compiled 2 Numba kernels in ") and lines[-1].endswith("load them from the cache")


def test_nothing_is_printed_when_nothing_compiles():
    stream = io.StringIO()

    @njit
    def f(x):
        return x

    f(1.0)
    with notice(stream, live=True):
        f(2.0)
    assert stream.getvalue() == ""


def test_the_live_counter_updates_in_place():
    stream = io.StringIO()
    with notice(stream, live=True):
        njit(lambda x: x * 3.0)(1.0)
    text = stream.getvalue().lstrip("\n")
    assert text.startswith(HEADER + "\r" + HEADER + ": 1 compiled") and text.endswith("from the cache\n")
