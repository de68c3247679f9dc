"""Speed of ``theory.signature`` against iisignature (the ``bench`` extra), in the same run.

Cases (the speed issue's sizes): the truncated signature of a path of 1000 points in R^3 at depth 6,
and the truncated signature kernel of two such paths. Anchors: ``iisignature.sig(path, 6)`` and
``pysiglib.sig(path, 6)`` (standard normalization, levels 1..6; ours is converted, level k / k!, and
compared to 1e-12 of each level's largest entry before timing) and, for the kernel, two anchor
signatures plus the factorial-weighted dot product (the chapter's truncated kernel). pysiglib's own
``sig_kernel`` solves the Goursat PDE of the untruncated kernel in the standard normalization, a different
quantity, so it is not timed. pysiglib is optional (skipped with a note when absent).

Timing: both sides alternately (ours, anchor, anchor, ours, ...) for ``REPEATS`` repeats, each a
:func:`_harness.time_call`; the reported time is the minimum over repeats and rounds of the per-call time,
and ratio = anchor / ours (> 1: ours faster). The minimum, not the median: on a loaded machine a call of a
few milliseconds is often preempted, which inflated the medians of the longer calls (the kernel) by 2-4x. The machine is shared with other jobs: ratios measured in
the same run are meaningful, absolute times less so. Writes a markdown table to stdout and to
benchmarks/out/bench_signature.md.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import fmt_time, format_table, load_average, machine_info, time_call  # noqa: E402

import theory.signature as S  # noqa: E402

REPEATS = 5
N_POINTS, DIM, DEPTH = 1000, 3, 6


def main():
    try:
        import iisignature
    except ImportError:
        print("iisignature is not installed (pip install wheel; pip install --no-build-isolation iisignature==0.24)")
        return 1
    rng = np.random.default_rng(0)
    X = np.cumsum(rng.standard_normal((N_POINTS, DIM)) * 0.01, axis=0)
    Y = np.cumsum(rng.standard_normal((N_POINTS, DIM)) * 0.01, axis=0)

    ours_sig = np.concatenate([s.ravel() for s in S.to_standard(S.signature(X, DEPTH))])[1:]
    ref_sig = iisignature.sig(X, DEPTH)
    # error relative to the largest entry of each level (single entries can be sums that cancel)
    err, pos = 0.0, 0
    for k in range(1, DEPTH + 1):
        sl = slice(pos, pos + DIM ** k)
        err = max(err, float(np.max(np.abs(ours_sig[sl] - ref_sig[sl])) / np.max(np.abs(ref_sig[sl]))))
        pos += DIM ** k
    assert err < 1e-12, f"signatures differ: max relative error {err}"

    weights = np.concatenate([np.full(DIM ** k, float(math.factorial(k)) ** 2) for k in range(1, DEPTH + 1)])

    def ii_kernel():
        return 1.0 + float(np.dot(iisignature.sig(X, DEPTH) * weights, iisignature.sig(Y, DEPTH)))

    kerr = abs(S.kernel(X, Y, DEPTH) - ii_kernel()) / abs(ii_kernel())
    assert kerr < 1e-12, f"kernels differ: relative error {kerr}"

    cases = [("signature, 1000 x 3, depth 6", "iisignature", lambda: S.signature(X, DEPTH),
              lambda: iisignature.sig(X, DEPTH)),
             ("kernel of two paths, 1000 x 3, depth 6", "iisignature", lambda: S.kernel(X, Y, DEPTH), ii_kernel)]
    try:
        import pysiglib
    except ImportError:
        pysiglib = None
        print("pysiglib is not installed: its rows are skipped (pip install pysiglib==4.0.0)")
    if pysiglib is not None:
        ps = np.asarray(pysiglib.sig(X, DEPTH))
        perr = float(np.max(np.abs(ps - ref_sig)) / np.max(np.abs(ref_sig)))
        assert perr < 1e-12, f"pysiglib differs from iisignature: {perr}"

        def ps_kernel():
            return 1.0 + float(np.dot(np.asarray(pysiglib.sig(X, DEPTH)) * weights, np.asarray(pysiglib.sig(Y, DEPTH))))

        assert abs(S.kernel(X, Y, DEPTH) - ps_kernel()) / abs(ps_kernel()) < 1e-12
        cases += [("signature, 1000 x 3, depth 6", f"pysiglib {pysiglib.__version__}", lambda: S.signature(X, DEPTH),
                   lambda: pysiglib.sig(X, DEPTH)),
                  ("kernel of two paths, 1000 x 3, depth 6", f"pysiglib {pysiglib.__version__}",
                   lambda: S.kernel(X, Y, DEPTH), ps_kernel)]
    rows = []
    for name, anchor_name, ours, anchor in cases:
        t_ours, t_anchor = [], []
        first = time_call(ours, min_time=0.2).first_call
        for r in range(REPEATS):
            order = (ours, anchor) if r % 2 == 0 else (anchor, ours)
            for fn in order:
                t = time_call(fn, min_time=0.3).min
                (t_ours if fn is ours else t_anchor).append(t)
        ratios = [a / o for a, o in zip(t_anchor, t_ours)]
        rows.append([name, anchor_name, fmt_time(min(t_ours)), fmt_time(min(t_anchor)), f"{min(t_anchor) / min(t_ours):.2f}",
                     f"{min(ratios):.2f}..{max(ratios):.2f}", fmt_time(first)])
    info = machine_info()
    table = format_table(["case", "anchor", "theory (min)", "anchor (min)", "ratio", "ratio spread",
                          "first call (JIT/cache)"], rows,
                         title=f"theory.signature vs iisignature {iisignature.version()} and pysiglib "
                               f"(values equal: signature err. rel. to each level's max {err:.1e}, kernel {kerr:.1e}); "
                               f"load average {load_average()}; {info.get('cpu', '')}")
    print(table)
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    (out / "bench_signature.md").write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
