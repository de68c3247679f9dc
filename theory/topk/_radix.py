r"""Stable least-significant-digit radix argsort of float64 keys (Numba): the sort of the quadratic
soft sort and soft rank (:mod:`theory.topk._batch`).

Method. Each finite float64 is mapped to an unsigned 64-bit key whose unsigned order is the numeric
order: the sign bit of a non-negative number is set, every bit of a negative number is flipped
(IEEE-754 sign-magnitude to offset binary). Negative zero is given the key of positive zero, so -0.0
and +0.0 are equal keys, as they are equal numbers for NumPy's comparison sorts. For a decreasing
sort the keys are complemented. The keys are then sorted by counting sort on six digits of 11 bits
(bits 0-10, 11-21, ..., 55-63; eight digits of 8 bits below 4096 entries, see :func:`digit_bits`),
least significant first. Each pass places the entries of one digit
value in their order of arrival, so each pass is stable and so is the whole sort: equal keys keep
increasing index order. The permutation is therefore exactly ``np.argsort(x, kind="stable")`` (for
a decreasing sort, ``np.argsort(-x, kind="stable")``: decreasing values, ties by increasing index),
ties and signed zeros included. NaN is outside the contract (the callers check finiteness first).

Cost. One pass over x builds the six digit histograms (6 x 2048 counters); a digit shared by every
entry (one non-empty bucket, e.g. the top digit of positive numbers of similar magnitude) is skipped;
every other digit is one pass that moves (key, index) pairs, 16 bytes read and 16 written per entry,
into 2048 buckets whose write positions stay in the level-2 cache. Time O(6 n + 6 x 2048) with no
comparison, against O(n log n) comparisons for a merge sort (measured on one core at n = 10^6: two
to four times faster than NumPy's default, vectorised, unstable argsort, more against its stable one;
at n = 1000 on par with the former and slower than the latter, so short single rows are left to
NumPy by the callers); memory four arrays of n words, which
the caller provides and can reuse as scratch afterwards (the permutation and the sorted keys end in
the first two, whatever the number of passes). :func:`key_value` turns a sorted key back into its
value (exactly; a negative zero reads back as +0.0).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["key_value", "radix_argsort", "radix_argsort_into"]

_JIT = {"cache": True, "error_model": "numpy", "fastmath": False}

#: digit width of long arrays: six passes of 11 bits (66 >= 64), 2048 buckets
BITS = 11
#: arrays shorter than this use 8-bit digits (:func:`digit_bits`)
_SMALL = 4096
_SIGN = np.uint64(1 << 63)


@intrinsic
def _f2u(typingctx, v):
    """The bits of a float64 as a uint64 (a register bitcast)."""
    if v != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.uint64(types.float64), codegen


@intrinsic
def _u2f(typingctx, b):
    """The float64 with the bits of a uint64 (a register bitcast)."""
    if b != types.uint64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.uint64), codegen


@njit(**_JIT)
def order_key(v, descending):
    """The uint64 key of the float64 ``v``: increasing in v (decreasing when ``descending``); -0.0 and
    +0.0 share the key of +0.0."""
    b = _f2u(v + 0.0)  # -0.0 + 0.0 = +0.0; every other finite value is unchanged
    # without branches (random signs would mispredict): negative -> ~b, non-negative -> b | sign;
    # descending complements
    flip = (np.uint64(0) - (b >> np.uint64(63))) | _SIGN
    if descending:
        flip = ~flip
    return b ^ flip


@njit(**_JIT)
def key_value(k, descending):
    """The float64 whose :func:`order_key` is ``k`` (the inverse map; zero reads back as +0.0)."""
    if descending:
        k = ~k
    if k & _SIGN:
        return _u2f(k & ~_SIGN)
    return _u2f(~k)


@njit(**_JIT)
def digit_bits(n):
    """The digit width for n entries: 11 bits (six passes, 2048 buckets) from n = 4096 on; below, 8
    bits (eight passes, 256 buckets), whose histograms (16 KiB) cost less to clear and scan than
    the entries' passes save."""
    return 11 if n >= _SMALL else 8


@njit(**_JIT)
def radix_argsort_into(x, descending, keys, order, k_tmp, i_tmp, bits=0):
    """Stable argsort of the float64 array ``x``, increasing (decreasing when ``descending``; ties by
    increasing index), into caller-provided buffers of length n = x.shape[0]: ``keys`` (uint64)
    receives the sorted keys, ``order`` (intp) the permutation; ``k_tmp`` (uint64) and ``i_tmp``
    (intp) are scratch, free again on return. ``x`` is only read. ``bits``: the digit width, 1 to
    16 (0: :func:`digit_bits` of n)."""
    n = x.shape[0]
    if n == 0:
        return
    if bits <= 0:
        bits = digit_bits(n)
    ndig = (64 + bits - 1) // bits
    radix = 1 << bits
    mask = np.uint64(radix - 1)
    counts = np.zeros((ndig, radix), dtype=np.intp)
    for i in range(n):
        k = order_key(x[i], descending)
        for d in range(ndig):
            counts[d, np.intp((k >> np.uint64(bits * d)) & mask)] += 1
    k_first = order_key(x[0], descending)
    active = np.zeros(ndig, dtype=np.bool_)
    npass = 0
    for d in range(ndig):
        if counts[d, np.intp((k_first >> np.uint64(bits * d)) & mask)] != n:
            active[d] = True  # a digit shared by every entry would be an identity pass
            npass += 1
    if npass == 0:  # every key equal (or n = 1): the identity
        for i in range(n):
            keys[i] = k_first
            order[i] = i
        return
    # the passes alternate between the two buffer pairs; start so that the last one writes keys/order
    if npass % 2 == 1:
        dst_k, dst_i, src_k, src_i = keys, order, k_tmp, i_tmp
    else:
        dst_k, dst_i, src_k, src_i = k_tmp, i_tmp, keys, order
    first = True
    for d in range(ndig):
        if not active[d]:
            continue
        shift = np.uint64(bits * d)
        pos = 0
        for j in range(radix):  # exclusive prefix sums: the first slot of each bucket
            c = counts[d, j]
            counts[d, j] = pos
            pos += c
        if first:  # the first pass reads x itself, in index order
            for i in range(n):
                k = order_key(x[i], descending)
                j = np.intp((k >> shift) & mask)
                p = counts[d, j]
                counts[d, j] = p + 1
                dst_k[p] = k
                dst_i[p] = i
            first = False
        else:
            for i in range(n):
                k = src_k[i]
                j = np.intp((k >> shift) & mask)
                p = counts[d, j]
                counts[d, j] = p + 1
                dst_k[p] = k
                dst_i[p] = src_i[i]
        dst_k, dst_i, src_k, src_i = src_k, src_i, dst_k, dst_i


@njit(**_JIT)
def _radix_argsort(x, descending, bits=0):
    n = x.shape[0]
    keys = np.empty(n, dtype=np.uint64)
    order = np.empty(n, dtype=np.intp)
    radix_argsort_into(x, descending, keys, order, np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.intp), bits)
    return order, keys


@njit(**_JIT)
def _values(keys, descending):
    out = np.empty(keys.shape[0])
    for i in range(keys.shape[0]):
        out[i] = key_value(keys[i], descending)
    return out


def radix_argsort(x, descending=False, return_values=False):
    """``np.argsort(x, kind="stable")`` (``descending``: ``np.argsort(-x, kind="stable")``) of a finite
    1-D float64 array by :func:`radix_argsort_into`; with ``return_values`` also the sorted values
    (``x[order]``, except that a negative zero reads back as +0.0). Private helper: no validation
    beyond the conversion to a contiguous float64 array."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"`x` of radix_argsort must be 1-D; got shape {x.shape}.")
    order, keys = _radix_argsort(x, bool(descending))
    return (order, _values(keys, bool(descending))) if return_values else order
