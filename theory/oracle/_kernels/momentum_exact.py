"""Oracle kernels: momentum_exact (filled in by its module)."""

from __future__ import annotations
