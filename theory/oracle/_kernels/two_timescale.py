"""Oracle kernels: two_timescale (filled in by its module)."""

from __future__ import annotations
