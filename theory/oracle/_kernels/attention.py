"""Oracle kernels: attention (filled in by its module)."""

from __future__ import annotations
