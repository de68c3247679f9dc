"""Speed and exactness of ``theory.fbm`` against the ``fbm`` package, the FFT floor and dense Cholesky.

One path (``bench_single``)
    One unit-variance fGn path of n = 2**16 at H = 0.75 through the public :func:`theory.fbm.fgn`
    against the ``fbm`` package 0.3.0 (``fbm.FBM(n, H, length=n, method="daviesharte").fgn()``;
    ``length = n`` makes its scale (length/n)^H equal to 1). Its embedding row is the wrong
    zero-middle one, but at H = 0.75 the eigenvalues stay non-negative, so it does not fall back to
    Hosking: the benchmark records its warnings and its ``method`` after the calls and says so. The
    package draws from the global ``np.random`` (seeded here with ``np.random.seed``). Both cache the
    eigenvalues across calls on the same object / the same (n, H); the first call of each is timed
    alone (for ours: the eigenvalue cache cleared, Numba kernel already loaded; a fresh interpreter
    with an empty Numba cache is timed by ``bench_compile``). Reported ratio: fbm median / ours
    median, warm. Target >= 20.

Batch (``bench_batch``)
    4096 paths of n = 1024 at H = 0.75 in one call, against the floor: drawing the same number of
    standard normals (2n per path) with ``rng.standard_normal`` plus one ``np.fft.rfft`` /
    ``np.fft.irfft`` pair of the embedding size 2n on that batch. Reported ratio: ours / floor.
    Target <= 2.

Exactness (``bench_exactness``)
    At n = 64 and H in {0.5, 0.9, 0.95, 0.99}: max_ij |C_ij - T_ij| and the variance error
    mean_i C_ii - 1 of the sample covariance C = X^T X / m (known zero mean) against the Toeplitz
    covariance T, for ours, the ``fbm`` package (daviesharte requested; whether it warned and fell
    back to Hosking is recorded, with its time), a dense Cholesky sampler in NumPy and ``fracbm``'s
    method re-implemented in NumPy (zero-middle row, negative eigenvalues clipped silently). The Monte-Carlo
    standard error is printed beside each number: sqrt(2/m) per entry at most (Isserlis: the standard
    error of C_ij is sqrt((1 + T_ij^2)/m)), and the largest standardised error max |C_ij - T_ij| / se_ij,
    about 3.6 for an exact sampler at n = 64 (2080 distinct entries). The ``fbm`` package's Hosking fallback is pure Python,
    O(n^2) per path (~2.5 ms at n = 64), so its sample count is capped by a time budget per H.
    Beside it, the minimum eigenvalue of the zero-middle row [gamma(0..n-1), 0, gamma(n-1..1)] used by
    the ``fbm`` package, ``fracbm`` and the ``scaling`` experiment code, and of the standard row
    [gamma(0..n), gamma(n-1..1)], at n = 64 and 1024, computed directly with one rfft.

All draws of ours and of the Cholesky sampler come from ``numpy.random.default_rng(seed)``. Public
names only, except ``theory.fbm._api._weights.cache_clear`` to time a cold eigenvalue cache.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from _harness import cold_first_call, format_table, fmt_time, time_call
from theory.fbm import autocovariance, fgn
from theory.fbm import _api as _fbm_api

__all__ = ["FULL", "QUICK", "bench_batch", "bench_compile", "bench_exactness", "bench_single",
           "eigen_table", "run"]

FULL = {
    "single": dict(n=2**16, hurst=0.75, target=20.0),
    "batch": dict(paths=4096, n=1024, hurst=0.75, target=2.0),
    "exactness": dict(n=64, hursts=(0.5, 0.9, 0.95, 0.99), samples=20_000, fbm_budget_s=15.0),
    "eigen": dict(ns=(64, 1024), hursts=(0.5, 0.9, 0.95, 0.99)),
}
QUICK = {
    "single": dict(n=2**12, hurst=0.75, target=20.0),
    "batch": dict(paths=256, n=256, hurst=0.75, target=2.0),
    "exactness": dict(n=16, hursts=(0.5, 0.95), samples=2_000, fbm_budget_s=1.0),
    "eigen": dict(ns=(64, 1024), hursts=(0.5, 0.9, 0.95, 0.99)),
}


def _fbm_package():
    """The ``fbm`` package module, or None when it is not installed."""
    try:
        import fbm as fbm_package  # the PyPI package (crflynn/fbm), not theory.fbm
    except ImportError:
        return None
    return fbm_package


def _ratio_range(slow, fast):
    """Conservative spread of slow.median / fast.median: q1/q3 .. q3/q1."""
    return [slow.q1 / fast.q3, slow.q3 / fast.q1]


def bench_single(*, n=2**16, hurst=0.75, seed=0, target=20.0, warmup=2, min_time=0.5, max_rounds=200,
                 min_rounds=5):
    """One fGn path: theory.fbm.fgn against fbm.FBM(...).fgn() (daviesharte)."""
    kw = dict(warmup=warmup, min_time=min_time, max_rounds=max_rounds, min_rounds=min_rounds)
    rng = np.random.default_rng(seed)
    fgn(8, 0.5, rng=rng)  # load the Numba kernel (first call of the process) outside the timing
    _fbm_api._weights.cache_clear()
    t_ours = time_call(lambda: fgn(n, hurst, rng=rng), **kw)  # first_call: cold eigenvalue cache
    result = {
        "name": f"fgn one path, n = {n}, H = {hurst}",
        "kind": "speed",
        "params": {"n": n, "hurst": hurst, "seed": seed},
        "theory": t_ours.as_dict(),
        "target": target,
        "ratio_definition": "fbm package median / theory median (warm); first-call ratio beside",
    }
    pkg = _fbm_package()
    if pkg is None:
        result.update(skipped="the `fbm` package is not installed (pip install fbm==0.3.0, or .[bench])",
                      ratio=None, target_met=None)
        return result
    np.random.seed(seed)
    f = pkg.FBM(n, float(hurst), length=n, method="daviesharte")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t_pkg = time_call(f.fgn, **kw)
    fell_back = f.method != "daviesharte"
    x = f.fgn()
    result.update(
        fbm_package=t_pkg.as_dict(),
        fbm_version=getattr(pkg, "__version__", "0.3.0"),
        fbm_method_after=f.method,
        fbm_warnings=[str(w.message) for w in caught],
        fbm_fell_back=fell_back,
        fbm_sample_var=float(np.var(x)),
        ratio=t_pkg.median / t_ours.median,
        ratio_range=_ratio_range(t_pkg, t_ours),
        first_call_ratio=t_pkg.first_call / t_ours.first_call,
        target_met=bool(t_pkg.median / t_ours.median >= target) and not fell_back,
    )
    return result


def bench_batch(*, paths=4096, n=1024, hurst=0.75, seed=0, target=2.0, warmup=2, min_time=0.5, max_rounds=200,
                min_rounds=5):
    """A batch of fGn paths against drawing the normals plus one rfft/irfft pair of size 2n."""
    kw = dict(warmup=warmup, min_time=min_time, max_rounds=max_rounds, min_rounds=min_rounds)
    rng = np.random.default_rng(seed)
    fgn(n, hurst, size=1, rng=rng)  # warm the eigenvalue cache for (n, H)

    def floor():
        z = rng.standard_normal((paths, 2 * n))
        return np.fft.irfft(np.fft.rfft(z, axis=-1), n=2 * n, axis=-1)

    def draw_only():
        return rng.standard_normal((paths, 2 * n))

    t_ours = time_call(lambda: fgn(n, hurst, size=paths, rng=rng), **kw)
    t_floor = time_call(floor, **kw)
    t_draw = time_call(draw_only, **kw)
    ratio = t_ours.median / t_floor.median
    return {
        "name": f"fgn batch, {paths} paths x n = {n}, H = {hurst}",
        "kind": "speed",
        "params": {"paths": paths, "n": n, "hurst": hurst, "seed": seed, "normals_per_path": 2 * n},
        "theory": t_ours.as_dict(),
        "floor": t_floor.as_dict(),
        "draw_only": t_draw.as_dict(),
        "floor_definition": f"rng.standard_normal(({paths}, {2 * n})) + np.fft.rfft + np.fft.irfft (n = {2 * n})",
        "ratio": ratio,
        "ratio_range": [t_ours.q1 / t_floor.q3, t_ours.q3 / t_floor.q1],
        "ratio_definition": "theory median / floor median",
        "target": target,
        "target_met": bool(ratio <= target),
    }


def _cov_errors(X, T):
    """max |C - T|, mean(diag C) - 1 and max |C_ij - T_ij| / se_ij, C = X^T X / m (known zero mean),
    se_ij = sqrt((T_ii T_jj + T_ij^2) / m) (Isserlis)."""
    m = X.shape[0]
    C = X.T @ X / m
    z = np.abs(C - T) / np.sqrt((1.0 + T**2) / m)
    return float(np.max(np.abs(C - T))), float(np.mean(np.diag(C)) - 1.0), float(z.max())


def typical_max_z(n):
    """Median of the largest |standard normal| among the n(n+1)/2 distinct entries, were they
    independent: the guide for the 'max z' column of an exact sampler."""
    from scipy.stats import norm

    k = n * (n + 1) // 2
    return float(norm.ppf((1.0 + 0.5 ** (1.0 / k)) / 2.0))


def _se(T, m):
    """Standard errors: the largest entry-wise sqrt((T_ii T_jj + T_ij^2)/m) and that of mean(diag C),
    sqrt(2 sum_ij T_ij^2 / n^2 / m) (Isserlis: Cov(X_i^2, X_j^2) = 2 T_ij^2)."""
    n = T.shape[0]
    entry = float(np.sqrt((1.0 + T**2).max() / m))
    var = float(math.sqrt(2.0 * np.sum(T**2) / n**2 / m))
    return entry, var


def zero_middle_clipped_sampler(n, hurst, m, rng):
    """``fracbm`` 0.3.0's Davies-Harte, re-implemented in NumPy: the zero-middle row, its negative
    eigenvalues clipped to 0 silently, then the same exact-in-law FFT construction as ours (so the
    only difference from theory.fbm.fgn is the row and the clipping). Shape (m, n)."""
    g = autocovariance(np.arange(n), hurst)
    lam = np.maximum(np.fft.rfft(np.concatenate([g, [0.0], g[:0:-1]])).real, 0.0)
    w = np.sqrt(lam * n)
    w[[0, n]] *= math.sqrt(2.0)
    z = rng.standard_normal((m, 2 * n))
    spec = np.empty((m, n + 1), dtype=np.complex128)
    spec[:, 1:n] = (z[:, 2:n + 1] + 1j * z[:, n + 1:]) * w[1:n]
    spec[:, 0], spec[:, n] = z[:, 0] * w[0], z[:, 1] * w[n]
    return np.fft.irfft(spec, n=2 * n, axis=-1)[:, :n]


def bench_exactness(*, n=64, hursts=(0.5, 0.9, 0.95, 0.99), samples=20_000, fbm_budget_s=15.0, seed=0):
    """Covariance errors of ours, the fbm package and dense Cholesky; see the module docstring."""
    from scipy.linalg import toeplitz

    pkg = _fbm_package()
    rows = []
    for hurst in hursts:
        T = toeplitz(autocovariance(np.arange(n), hurst))
        entry = {"hurst": hurst}
        # ours
        rng = np.random.default_rng([seed, int(hurst * 1000)])
        t0 = time.perf_counter()
        X = fgn(n, hurst, size=samples, rng=rng)
        secs = time.perf_counter() - t0
        err, verr, zmax = _cov_errors(X, T)
        se, se_var = _se(T, samples)
        entry["theory"] = {"samples": samples, "seconds": secs, "max_cov_err": err, "var_err": verr,
                           "max_z": zmax, "se_entry": se, "se_var": se_var}
        # dense Cholesky (numpy): factorisation included in the time
        rng = np.random.default_rng([seed + 1, int(hurst * 1000)])
        t0 = time.perf_counter()
        L = np.linalg.cholesky(T)
        X = rng.standard_normal((samples, n)) @ L.T
        secs = time.perf_counter() - t0
        err, verr, zmax = _cov_errors(X, T)
        entry["cholesky"] = {"samples": samples, "seconds": secs, "max_cov_err": err, "var_err": verr,
                             "max_z": zmax, "se_entry": se, "se_var": se_var}
        # the zero-middle row with silent clipping (fracbm's method)
        rng = np.random.default_rng([seed + 2, int(hurst * 1000)])
        t0 = time.perf_counter()
        X = zero_middle_clipped_sampler(n, hurst, samples, rng)
        secs = time.perf_counter() - t0
        err, verr, zmax = _cov_errors(X, T)
        entry["zero_middle_clipped"] = {"samples": samples, "seconds": secs, "max_cov_err": err, "var_err": verr,
                                        "max_z": zmax, "se_entry": se, "se_var": se_var}
        # the fbm package: pilot calls to learn the cost per path, then as many paths as the budget allows
        if pkg is None:
            entry["fbm_package"] = None
        else:
            np.random.seed(seed)
            f = pkg.FBM(n, float(hurst), length=n, method="daviesharte")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                t0 = time.perf_counter()
                pilot = [f.fgn() for _ in range(50)]
                per_path = (time.perf_counter() - t0) / 50
                m = int(min(samples, max(50, fbm_budget_s / per_path)))
                t0 = time.perf_counter()
                rest = [f.fgn() for _ in range(m - 50)]
                secs = (time.perf_counter() - t0) + per_path * 50
            X = np.asarray(pilot + rest)
            err, verr, zmax = _cov_errors(X, T)
            se_m, se_var_m = _se(T, m)
            entry["fbm_package"] = {
                "samples": m, "seconds": secs, "seconds_per_path": secs / m, "max_cov_err": err, "var_err": verr,
                "max_z": zmax,
                "se_entry": se_m, "se_var": se_var_m, "warned": bool(caught),
                "warnings": sorted({str(w.message).strip() for w in caught}), "method_after": f.method,
            }
        rows.append(entry)
    return {"name": f"fGn covariance exactness, n = {n}", "kind": "exactness",
            "params": {"n": n, "hursts": list(hursts), "samples": samples, "fbm_budget_s": fbm_budget_s,
                       "seed": seed},
            "fbm_installed": pkg is not None, "typical_max_z": typical_max_z(n), "rows": rows}


def eigen_table(*, ns=(64, 1024), hursts=(0.5, 0.9, 0.95, 0.99)):
    """Minimum eigenvalue (and min/max) of the circulant of the zero-middle and the standard rows."""
    rows = []
    for n in ns:
        for hurst in hursts:
            g = autocovariance(np.arange(n + 1), hurst)
            standard = np.concatenate([g, g[-2:0:-1]])
            zero_middle = np.concatenate([g[:n], [0.0], g[n - 1:0:-1]])
            entry = {"n": n, "hurst": hurst}
            for name, row in (("zero_middle", zero_middle), ("standard", standard)):
                lam = np.fft.rfft(row).real
                entry[name] = {"min": float(lam.min()), "max": float(lam.max()),
                               "min_over_max": float(lam.min() / lam.max()),
                               "negative": int(np.sum(lam < -1e-10 * lam.max()))}
            rows.append(entry)
    return {"name": "circulant eigenvalues: zero-middle row vs standard row", "kind": "eigenvalues",
            "params": {"ns": list(ns), "hursts": list(hursts)}, "rows": rows}


_COLD = """
import time
import numpy as np
from theory.fbm import fgn
rng = np.random.default_rng(0)
t0 = time.perf_counter()
fgn({n}, {hurst}, rng=rng)
print(time.perf_counter() - t0)
"""


def bench_compile(n=2**16, hurst=0.75):
    """First call in a fresh interpreter with an empty Numba cache: JIT compilation of the
    autocovariance kernel, the eigenvalues of (n, H) and one path."""
    return {"name": "cold first call (fresh interpreter, empty Numba cache)", "kind": "compile",
            "seconds": {f"fgn n = {n}, H = {hurst}": cold_first_call(_COLD.format(n=n, hurst=hurst))}}


# ------------------------------------------------------------------------------------------ printing


def _iqr(t):
    return f"{fmt_time(t['median'])} ({fmt_time(t['iqr'])}, {t['rounds']})"


def print_single(r):
    p, t = r["params"], r["theory"]
    if r.get("skipped"):
        print(f"One path: theory.fbm.fgn n = {p['n']}, H = {p['hurst']}: first call {fmt_time(t['first_call'])}, "
              f"median {_iqr(t)}. fbm package: SKIPPED, {r['skipped']}.\n")
        return
    f = r["fbm_package"]
    rows = [[str(p["n"]), str(p["hurst"]), fmt_time(t["first_call"]), _iqr(t), fmt_time(f["first_call"]), _iqr(f),
             f"{r['ratio']:.1f}x", f"{r['ratio_range'][0]:.1f}-{r['ratio_range'][1]:.1f}",
             f"{r['first_call_ratio']:.1f}x", f">= {r['target']:g}: {'met' if r['target_met'] else 'NOT met'}"]]
    print(format_table(
        ["n", "H", "theory 1st call", "theory median (IQR, rounds)", "fbm 1st call", "fbm median (IQR, rounds)",
         "fbm/theory", "ratio IQR span", "1st-call ratio", "target"],
        rows, title="One fGn path: theory.fbm.fgn vs fbm 0.3.0 FBM(..., method='daviesharte').fgn()",
        align=[">"] * 9 + ["<"]))
    print("  theory 1st call: eigenvalue cache cleared (Numba kernel already loaded); fbm 1st call: a new FBM "
          "object (it computes its eigenvalues on the first call and keeps them).")
    state = "FELL BACK to " + r["fbm_method_after"] if r["fbm_fell_back"] else "stayed on daviesharte"
    print(f"  fbm package: {state}; warnings: {len(r['fbm_warnings'])}; sample variance of one path "
          f"{r['fbm_sample_var']:.3f} (unit-variance fGn, length = n).")
    print()


def print_batch(r):
    p, t, fl, d = r["params"], r["theory"], r["floor"], r["draw_only"]
    rows = [[str(p["paths"]), str(p["n"]), str(p["hurst"]), fmt_time(t["first_call"]), _iqr(t), _iqr(fl), _iqr(d),
             f"{r['ratio']:.2f}", f"{r['ratio_range'][0]:.2f}-{r['ratio_range'][1]:.2f}",
             f"<= {r['target']:g}: {'met' if r['target_met'] else 'NOT met'}"]]
    print(format_table(
        ["paths", "n", "H", "theory 1st call", "theory median (IQR, rounds)", "floor median (IQR, rounds)",
         "draw only", "theory/floor", "ratio IQR span", "target"],
        rows, title="Batched fGn: theory.fbm.fgn(n, H, size=paths) vs the floor", align=[">"] * 9 + ["<"]))
    print(f"  floor = {r['floor_definition']}; 'draw only' = the normals alone. Ours draws the same "
          f"{p['normals_per_path']} normals per path and does one irfft (no forward FFT), plus the weighting, "
          "the copy of the first n columns and the finiteness check.")
    print()


def _pm(e, key, se_key):
    return f"{e[key]:+.4f} ({e[se_key]:.4f})" if key == "var_err" else f"{e[key]:.4f} ({e[se_key]:.4f})"


def print_exactness(r):
    rows = []
    for e in r["rows"]:
        for label, key in (("theory.fbm.fgn", "theory"), ("fbm 0.3.0", "fbm_package"), ("Cholesky (numpy)", "cholesky"),
                           ("zero-middle + clip", "zero_middle_clipped")):
            s = e[key]
            if s is None:
                rows.append([f"{e['hurst']}", label, "skipped: fbm not installed", "", "", "", "", ""])
                continue
            if key == "fbm_package":
                how = (f"warned, fell back to {s['method_after']}" if s["method_after"] != "daviesharte"
                       else ("warned" if s["warned"] else "daviesharte, no warning"))
            else:
                how = "-"
            rows.append([f"{e['hurst']}", label, str(s["samples"]), _pm(s, "max_cov_err", "se_entry"),
                         f"{s['max_z']:.2f}", _pm(s, "var_err", "se_var"), f"{fmt_time(s['seconds'])} ({fmt_time(s['seconds'] / s['samples'])}/path)",
                         how])
    p = r["params"]
    print(format_table(
        ["H", "sampler", "paths", "max|C - T| (se/entry)", "max z", "mean var - 1 (se)", "time (per path)",
         "fbm method"],
        rows, title=f"Exactness at n = {p['n']}: sample covariance C = X^T X / paths vs Toeplitz T",
        align=[">", "<", ">", ">", ">", ">", ">", "<"]))
    print("  'zero-middle + clip' = fracbm 0.3.0's Davies-Harte (wrong row, negative eigenvalues set to 0 "
          "silently), re-implemented in NumPy.")
    print("  se/entry = sqrt(max_ij (1 + T_ij^2) / paths) = sqrt(2 / paths), the largest entry-wise Monte-Carlo "
          "standard error; max z = max_ij |C_ij - T_ij| / sqrt((1 + T_ij^2) / paths).")
    print(f"  For an exact sampler max z is about {r['typical_max_z']:.1f} (median of the largest of "
          f"{p['n'] * (p['n'] + 1) // 2} independent |N(0, 1)|; the entries are correlated, so a guide only). "
          f"The fbm package's paths are capped by a budget of {p['fbm_budget_s']:g} s per H.")
    print()


def print_eigen(r):
    rows = []
    for e in r["rows"]:
        z, s = e["zero_middle"], e["standard"]
        rows.append([str(e["n"]), str(e["hurst"]), f"{z['min']:.3e}", f"{z['min_over_max']:.2e}", str(z["negative"]),
                     f"{s['min']:.3e}", f"{s['min_over_max']:.2e}", str(s["negative"])])
    print(format_table(
        ["n", "H", "zero-middle min eig", "min/max", "# negative", "standard min eig", "min/max", "# negative"],
        rows, title="Circulant eigenvalues: zero-middle row [g(0..n-1), 0, g(n-1..1)] (fbm, fracbm, scaling "
                    "code) vs standard row [g(0..n), g(n-1..1)]", align=[">"] * 8))
    print("  '# negative' counts eigenvalues below -1e-10 x max (theory.fbm's error threshold) out of n + 1.")
    print()


def print_compile(r):
    for name, secs in r["seconds"].items():
        print(f"Cold first call, {name}: {fmt_time(secs)} (fresh interpreter, empty Numba cache: JIT compile of "
              "the autocovariance kernel + eigenvalues + one path).")
    print()


def run(*, quick=False, timing=None):
    """Every theory.fbm benchmark of a configuration; prints the tables, returns the results."""
    cfg = QUICK if quick else FULL
    timing = timing or {}
    if quick:
        print("theory.fbm, quick mode: small sizes; the targets are set for the full sizes.\n")
    compile_result = bench_compile(cfg["single"]["n"], cfg["single"]["hurst"])
    print_compile(compile_result)
    single = bench_single(**cfg["single"], **timing)
    print_single(single)
    batch = bench_batch(**cfg["batch"], **timing)
    print_batch(batch)
    eigen = eigen_table(**cfg["eigen"])
    print_eigen(eigen)
    exact = bench_exactness(**cfg["exactness"])
    print_exactness(exact)
    return [compile_result, single, batch, eigen, exact]
