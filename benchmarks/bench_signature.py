"""Speed of ``theory.signature`` against pysiglib 4.0 (and iisignature 0.24) over a grid, values checked first.

Cases, over path lengths n = 1e2, 1e3, 1e4, 1e5 points, channels d = 2, 3, 8, 16 and depths N = 2, 4, 6, 8:

* **signature, one path**: ``theory.signature.signature(path, N, "standard")`` (a list of levels) against
  ``pysiglib.sig(path, N)`` (one flat array, the same standard normalization a^k/k!), both on one thread;
* **signature, a batch of 256 paths**: ``theory.signature.signature_batch(paths, N, "standard", n_threads=T)``
  against ``pysiglib.sig(paths, N, n_jobs=T)``, T = :data:`THREADS` threads on both sides;
* **kernel of two paths**: ``theory.signature.kernel(x, y, N)`` (the chapter's truncated kernel, factorial
  levels: sum_k (k!)^2 <S_k(x), S_k(y)> with the standard levels S_k) against two ``pysiglib.sig`` calls and the
  factorial-weighted dot product (pysiglib's own ``sig_kernel`` solves the PDE of the untruncated kernel, a
  different quantity), one thread.

Before any timing, every case's values are compared: each level of ours against pysiglib's, the largest
difference divided by the level's largest entry (for the batch, the largest over its 256 paths; the worst
path alone is printed too), against :data:`TOL` (1e-14), a cell over it is named in the summary; the kernel
relative to the sum of the absolute values of its terms, sum_k (k!)^2 <|S_k(x)|, |S_k(y)|> (the terms cancel,
and that sum is the scale of any rounding of them). Paths are Gaussian random walks with steps of standard
deviation 1/sqrt(n) (levels of order 1 at every length). A last table compares both libraries with an
extended-precision reference at the longest paths (the float64 floor of the 1e-14 agreement).

Cells skipped (and said so in the table): a signature of more than :data:`MAX_ENTRIES` entries (d = 16,
N = 8 has 4.6e9), and cells whose work, n x (entries) per path, exceeds :data:`MAX_CELL_WORK` (one call
over about a second); the batch runs at n <= 1e4 and at most :data:`MAX_BATCH_WORK` entry-segments in all
(256 x 1e5 points would be minutes per call), and not where 256 signatures exceed 1e8 entries.

Timing: ours and the anchor alternately (ours, anchor, anchor, ours, ...), each sample the mean of enough
calls to last :data:`SAMPLE_TIME`; the reported time is the minimum over the samples, ratio = anchor / ours
(> 1: ours faster), and the spread is the range of the per-pair ratios. The machine is shared: ratios
measured in the same run are meaningful, absolute times less so; the load average is printed at the start
and the end. ``--quick`` runs a few cells only. Writes the tables to stdout and to
benchmarks/out/bench_signature.md; ``python benchmarks/publish.py signature`` publishes them with the machine.

Floor of a cell that misses the target (ratio < 1.2): ``floor`` is a lower bound on any Horner evaluation on
this machine, measured in the same run: the d^N multiply-adds of the top level per segment at the measured
vector peak of one thread (``FLOOR_NOTE``), times the number of segments; ours/floor is printed so a reader
sees how far the kernel is from it, and so which cost (arithmetic, or the overhead of short levels) stops it.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import fmt_time, format_table, load_average, machine_info  # noqa: E402

import theory.signature as S  # noqa: E402

LENGTHS = (100, 1_000, 10_000, 100_000)
CHANNELS = (2, 3, 8, 16)
DEPTHS = (2, 4, 6, 8)
BATCH = 256
THREADS = 2
TOL = 1e-14
TARGET = 1.2
MAX_ENTRIES = 20_000_000
MAX_CELL_WORK = 2e9          # n x entries of one call
MAX_BATCH_WORK = 4e9         # batch x n x entries of one call
MAX_BATCH_LENGTH = 10_000
SAMPLE_TIME = 0.05
FLOOR_NOTE = ("floor: the multiply-adds no Horner evaluation avoids, d^N a segment for the top level alone (each new "
              "entry is the old one plus a product), at this machine's measured vector peak of one thread (a "
              "loop of eight independent FMAs per loaded entry, in cache); the batch floor divides by the threads")


def _size(d, depth):
    return (d ** (depth + 1) - 1) // (d - 1)


def _walk(rng, shape):
    n = shape[-2]
    return np.cumsum(rng.standard_normal(shape) / math.sqrt(n), axis=-2)


def _flat_std(levels):
    """Our standard levels 1..N (last axes) as pysiglib's flat layout (row-major words, level by level)."""
    lead = levels[0].shape
    return np.concatenate([lv.reshape(lead + (-1,)) for lv in levels[1:]], axis=-1)


def _level_error(ours, ref, d, depth, per_path=True):
    """Largest |ours - ref| over each level divided by that level's largest |ref|: per path (rows of a batch
    separately) when ``per_path``, else the level's largest entry over the whole batch."""
    ours = np.atleast_2d(ours)
    ref = np.atleast_2d(ref)
    err, pos = 0.0, 0
    for k in range(1, depth + 1):
        sl = slice(pos, pos + d ** k)
        if per_path:
            scale = np.max(np.abs(ref[:, sl]), axis=1)
            diff = np.max(np.abs(ours[:, sl] - ref[:, sl]), axis=1)
            err = max(err, float(np.max(diff / np.where(scale > 0, scale, 1.0))))
        else:
            scale = float(np.max(np.abs(ref[:, sl])))
            err = max(err, float(np.max(np.abs(ours[:, sl] - ref[:, sl]))) / (scale if scale > 0 else 1.0))
        pos += d ** k
    return err


def _sample(fn, target=SAMPLE_TIME):
    t0 = time.perf_counter()
    fn()
    t = time.perf_counter() - t0
    reps = max(1, int(target / max(t, 1e-7)))
    if reps == 1:
        return t
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def compare(ours, anchor, rounds):
    """Minimum times and the per-pair ratio range, ours and the anchor alternating (after one warm-up each)."""
    ours()
    anchor()
    t_o, t_a = [], []
    for r in range(rounds):
        if r % 2 == 0:
            t_o.append(_sample(ours))
            t_a.append(_sample(anchor))
        else:
            t_a.append(_sample(anchor))
            t_o.append(_sample(ours))
    ratios = [a / o for a, o in zip(t_a, t_o)]
    return min(t_o), min(t_a), min(ratios), max(ratios)


def _rounds(estimate):
    return 7 if estimate < 0.05 else (5 if estimate < 0.3 else 3)


_FMA_NS = None


def _fma_time():
    """Seconds per multiply-add at this machine's measured vector peak: eight independent fused multiply-adds per
    loaded and stored entry, on arrays that stay in the first-level cache (one thread; see FLOOR_NOTE)."""
    global _FMA_NS
    if _FMA_NS is None:
        from numba import njit

        @njit(fastmath={"contract"})
        def peak(t, x, c, reps):
            for _ in range(reps):
                for q in range(t.shape[0]):
                    t[q] += ((c[0] * x[0, q] + c[1] * x[1, q]) + (c[2] * x[2, q] + c[3] * x[3, q])
                             + (c[4] * x[4, q] + c[5] * x[5, q]) + (c[6] * x[6, q] + c[7] * x[7, q]))

        t, x, c = np.zeros(512), np.ones((8, 512)), np.full(8, 1e-9)
        peak(t, x, c, 1)
        reps = 20000
        best = min(_sample(lambda: peak(t, x, c, reps), 0.05) for _ in range(5))
        _FMA_NS = best / (reps * 512 * 8)
    return _FMA_NS


def _floor(d, depth, n_points):
    """Seconds of the top level's multiply-adds alone, d^N per segment, at the measured peak (FLOOR_NOTE)."""
    return (n_points - 1) * d ** depth * _fma_time()


ACCURACY_CELLS = ((10_000, 2, 8), (100_000, 2, 4), (100_000, 3, 4))


def _reference_longdouble(path, depth):
    """Standard signature in extended precision (np.longdouble; 64-bit mantissa on x86-64): Chen's relation
    segment by segment, S <- S (x) exp(delta), every product formed with NumPy outer products (independent of
    both libraries' Horner schemes). Returned flat, levels 1..depth, as float64."""
    X = np.asarray(path, dtype=np.longdouble)
    d = X.shape[1]
    sig = [np.ones((), dtype=np.longdouble)] + [np.zeros((d,) * k, dtype=np.longdouble) for k in range(1, depth + 1)]
    for delta in np.diff(X, axis=0):
        seg = [np.ones((), dtype=np.longdouble)]
        for k in range(1, depth + 1):
            seg.append(np.multiply.outer(seg[-1], delta) / k)
        sig = [sig[0]] + [sum(np.multiply.outer(sig[j], seg[k - j]) for j in range(k + 1)) for k in range(1, depth + 1)]
    return np.concatenate([lv.ravel() for lv in sig[1:]]).astype(np.float64), np.finfo(np.longdouble).eps


def accuracy_table(pysiglib, cells_):
    """Both libraries against the extended-precision reference, each level relative to its largest entry: the
    size of float64 rounding over n segments, which bounds how closely any two float64 results can agree."""
    rows = []
    rng = np.random.default_rng(2)
    for n, d, depth in cells_:
        X = _walk(rng, (n, d))
        ref, eps = _reference_longdouble(X, depth)
        ours = _flat_std(S.signature(X, depth, "standard"))
        theirs = np.asarray(pysiglib.sig(X, depth))
        rows.append([f"{n:>6} x {d:<2}  N={depth}", f"{_level_error(ours, ref, d, depth):.1e}",
                     f"{_level_error(theirs, ref, d, depth):.1e}", f"{_level_error(ours, theirs, d, depth):.1e}",
                     f"{math.sqrt(n) * 2.0 ** -53:.1e}"])
    return format_table(["n x d, depth", "theory - exact", "pysiglib - exact", "theory - pysiglib",
                         "sqrt(n) u"], rows, title=(
        f"accuracy: error relative to each level's largest entry against an extended-precision reference "
        f"(np.longdouble, eps {eps:.1e}; Chen products of segment exponentials), for the longest paths of the grid; "
        f"u = 2^-53: a float64 sum of n rounded terms drifts by about sqrt(n) u"))


def cells(quick):
    if quick:
        return [(1000, 3, 6), (100, 2, 2), (1000, 8, 4), (100, 16, 4)]
    return [(n, d, N) for d in CHANNELS for N in DEPTHS for n in LENGTHS]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few cells only")
    parser.add_argument("--no-batch", action="store_true")
    parser.add_argument("--no-kernel", action="store_true")
    args = parser.parse_args(argv)
    try:
        import pysiglib
    except ImportError:
        print("pysiglib is not installed (pip install pysiglib==4.0.0)")
        return 1
    try:
        import iisignature
    except ImportError:
        iisignature = None
    import numba

    def layer():
        try:
            return numba.threading_layer()
        except ValueError:  # no parallel kernel ran
            return "none used"

    threads = min(THREADS, numba.config.NUMBA_NUM_THREADS)
    load_start = load_average()
    info = machine_info()
    rng = np.random.default_rng(0)
    sig_rows, batch_rows, kern_rows = [], [], []
    worst = {"signature": 0.0, "batch": 0.0, "batch per path": 0.0, "kernel": 0.0}
    missed, over = [], []

    for n, d, depth in cells(args.quick):
        size = _size(d, depth)
        label = f"{n:>6} x {d:<2}  N={depth}"
        if size > MAX_ENTRIES:
            sig_rows.append([label, f"{size:.2g}", "skipped: more than 2e7 entries", "", "", "", "", ""])
            continue
        work = float(n) * size
        if work > MAX_CELL_WORK:
            sig_rows.append([label, f"{size:.2g}", f"skipped: n x entries = {work:.1e} > {MAX_CELL_WORK:.0e}",
                             "", "", "", "", ""])
            continue
        X = _walk(rng, (n, d))
        # values first: ours against pysiglib, each level relative to its largest entry
        ref = np.asarray(pysiglib.sig(X, depth))
        err = _level_error(_flat_std(S.signature(X, depth, "standard")), ref, d, depth)
        worst["signature"] = max(worst["signature"], err)
        if not err <= TOL:
            over.append(f"signature {' '.join(label.split())}: {err:.1e}")
        t0 = time.perf_counter()
        pysiglib.sig(X, depth)
        est = time.perf_counter() - t0
        t_o, t_a, lo, hi = compare(lambda: S.signature(X, depth, "standard"), lambda: pysiglib.sig(X, depth),
                                   _rounds(est))
        ratio = t_a / t_o
        floor = ""
        if ratio < TARGET:
            fl = _floor(d, depth, n)
            floor = f"{fmt_time(fl)} (ours/floor {t_o / fl:.1f})"
            missed.append(("signature", label, ratio))
        sig_rows.append([label, f"{size:.2g}", fmt_time(t_o), fmt_time(t_a), f"{ratio:.2f}", f"{lo:.2f}..{hi:.2f}",
                         f"{err:.1e}", floor])

        if not args.no_kernel:
            Y = _walk(rng, (n, d))
            weights = np.concatenate([np.full(d ** k, float(math.factorial(k)) ** 2) for k in range(1, depth + 1)])

            def ps_kernel():
                return 1.0 + float(np.dot(np.asarray(pysiglib.sig(X, depth)) * weights,
                                          np.asarray(pysiglib.sig(Y, depth))))

            kref = ps_kernel()
            # relative to sum_k (k!)^2 <|S_k(x)|, |S_k(y)|>, the scale of any rounding of the sum (terms cancel)
            kscale = 1.0 + float(np.dot(np.abs(np.asarray(pysiglib.sig(X, depth))) * weights,
                                        np.abs(np.asarray(pysiglib.sig(Y, depth)))))
            kerr = abs(S.kernel(X, Y, depth) - kref) / kscale
            worst["kernel"] = max(worst["kernel"], kerr)
            if not kerr <= TOL:
                over.append(f"kernel {' '.join(label.split())}: {kerr:.1e}")
            t_o, t_a, lo, hi = compare(lambda: S.kernel(X, Y, depth), ps_kernel, _rounds(2 * est))
            ratio = t_a / t_o
            floor = ""
            if ratio < TARGET:
                fl = 2 * _floor(d, depth, n)
                floor = f"{fmt_time(fl)} (ours/floor {t_o / fl:.1f})"
                missed.append(("kernel", label, ratio))
            kern_rows.append([label, f"{size:.2g}", fmt_time(t_o), fmt_time(t_a), f"{ratio:.2f}",
                              f"{lo:.2f}..{hi:.2f}", f"{kerr:.1e}", floor])

        if not args.no_batch:
            bwork = BATCH * work
            if n > MAX_BATCH_LENGTH or bwork > MAX_BATCH_WORK or BATCH * size > 100_000_000:
                why = (f"n > {MAX_BATCH_LENGTH}" if n > MAX_BATCH_LENGTH else
                       "256 signatures > 1e8 entries" if BATCH * size > 100_000_000 else
                       f"256 x n x entries = {bwork:.1e} > {MAX_BATCH_WORK:.0e}")
                batch_rows.append([label, f"{size:.2g}", f"skipped: {why}", "", "", "", "", ""])
                continue
            P = _walk(rng, (BATCH, n, d))
            bref = np.asarray(pysiglib.sig(P, depth, n_jobs=threads))
            bours = _flat_std(S.signature_batch(P, depth, "standard", n_threads=threads))
            berr = _level_error(bours, bref, d, depth, per_path=False)
            worst["batch"] = max(worst["batch"], berr)
            worst["batch per path"] = max(worst["batch per path"], _level_error(bours, bref, d, depth))
            if not berr <= TOL:
                over.append(f"batch {' '.join(label.split())}: {berr:.1e}")
            t0 = time.perf_counter()
            pysiglib.sig(P, depth, n_jobs=threads)
            est = time.perf_counter() - t0
            t_o, t_a, lo, hi = compare(lambda: S.signature_batch(P, depth, "standard", n_threads=threads),
                                       lambda: pysiglib.sig(P, depth, n_jobs=threads), _rounds(est))
            ratio = t_a / t_o
            floor = ""
            if ratio < TARGET:
                fl = BATCH * _floor(d, depth, n) / threads
                floor = f"{fmt_time(fl)} (ours/floor {t_o / fl:.1f})"
                missed.append(("batch", label, ratio))
            batch_rows.append([label, f"{size:.2g}", fmt_time(t_o), fmt_time(t_a), f"{ratio:.2f}",
                               f"{lo:.2f}..{hi:.2f}", f"{berr:.1e}", floor])

    head = ["n x d, depth", "entries", "theory (min)", "pysiglib (min)", "ratio", "ratio spread",
            "err/level max", "floor (where ratio < 1.2)"]
    ver = pysiglib.__version__
    out = []
    out.append(format_table(head, sig_rows, title=(
        f"signature of one path: theory.signature.signature(path, N, 'standard') vs pysiglib {ver} sig(path, N), "
        f"one thread each; load average {load_start} at the start; {info.get('cpu', '')}")))
    if kern_rows:
        out.append(format_table(head, kern_rows, title=(
            f"truncated kernel of two paths: theory.signature.kernel(x, y, N) vs two pysiglib {ver} sig calls and "
            f"the factorial-weighted dot product, one thread each")))
    if batch_rows:
        out.append(format_table(head, batch_rows, title=(
            f"signatures of a batch of {BATCH} paths: signature_batch(paths, N, 'standard', n_threads={threads}) vs "
            f"pysiglib {ver} sig(paths, N, n_jobs={threads}), {threads} threads each")))
    if not args.quick:
        out.append(accuracy_table(pysiglib, ACCURACY_CELLS))
    else:
        out.append(accuracy_table(pysiglib, ((10_000, 2, 4),)))
    if iisignature is not None:
        X = _walk(np.random.default_rng(1), (1000, 3))
        t_o, t_a, lo, hi = compare(lambda: S.signature(X, 6, "standard"), lambda: iisignature.sig(X, 6), 5)
        out.append(format_table(["case", "theory (min)", "iisignature (min)", "ratio", "ratio spread"],
                                [["signature, 1000 x 3, depth 6", fmt_time(t_o), fmt_time(t_a), f"{t_a / t_o:.2f}",
                                  f"{lo:.2f}..{hi:.2f}"]],
                                title=f"against iisignature {iisignature.version()} (one thread)"))
    summary = [f"values: largest difference from pysiglib relative to each level's largest entry "
               f"{worst['signature']:.1e} "
               f"(one path), {worst['batch']:.1e} (batch, the level's largest entry over the 256 paths; "
               f"{worst['batch per path']:.1e} path by path); kernel, relative to its sum of |terms|, "
               f"{worst['kernel']:.1e}; tolerance {TOL:.0e}: " + ("met everywhere." if not over else
                                                                 "over it in " + "; ".join(over) + "."),
               f"target ratio >= {TARGET}: " + ("met in every timed cell." if not missed else
                                               f"missed in {len(missed)} cell(s): " +
                                               "; ".join(f"{c} {' '.join(lab.split())} ({r:.2f})"
                                                         for c, lab, r in missed) + "."),
               FLOOR_NOTE + ".",
               f"load average {load_average()} at the end; threads: one for single paths and kernels, {threads} for "
               f"the batch (numba {numba.__version__}, threading layer {layer()})."]
    text = "\n\n".join(out) + "\n\n" + "\n".join(summary)
    print(text)
    outdir = Path(__file__).resolve().parent / "out"
    outdir.mkdir(exist_ok=True)
    (outdir / "bench_signature.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
