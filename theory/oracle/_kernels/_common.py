"""What the oracle's kernel modules share."""

from __future__ import annotations

import dataclasses

import numpy as np

from .._core import Case


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _guard(kernel: str, name: str, value, *, nbytes: float = 0.0, ops: float = 0.0, hint: str = "") -> None:
    """Refuse cases at the user's parameters above the memory or the work that the reference and the tolerance
    rule can take (theory._validation.MAX_BYTES, MAX_WORK), naming the parameter ``name``."""
    from ..._validation import check_memory, check_work

    func = f"the oracle's {kernel} cases"
    check_memory(nbytes, name, value, func=func, hint=hint)
    check_work(ops, name, value, func=func, hint=hint)


def _tag(x: float) -> str:
    """A number as a case name shows it: ``%g`` where that is exact (0.01, 0.5, 1), the full repr otherwise, so
    that two values never share a name (cases at the user's parameters are told apart by their names)."""
    short = f"{x:g}"
    return short if float(short) == x else repr(float(x))


def _validated(kernel: str, cases: list[Case]) -> list[Case]:
    """``cases`` after computing each one's float64 reference and tolerance once: a value the package refuses
    (an overflow, no convergence, a size above its own limits) is a named error before any verification. The
    references are kept in the cases (``Case.reference``), so verification does not compute them again."""
    from .._core import kernel as lookup, reference_outputs

    k = lookup(kernel)
    out = []
    for c in cases:
        try:
            ref = reference_outputs(k, c.inputs)
            k.tolerance(c.inputs, ref, float(np.finfo(np.float64).eps))
        except (ValueError, TypeError, ArithmeticError) as exc:  # NonFiniteError, an overflowing bound
            raise ValueError(f"case {c.name}: the package's reference refuses it: {exc}") from None
        out.append(dataclasses.replace(c, reference=ref))
    return out
