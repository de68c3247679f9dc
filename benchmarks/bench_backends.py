"""Speed of the PyTorch backend of the scale experiments against straightforward PyTorch loops and NumPy.

Usage::

    python benchmarks/bench_backends.py                       # CPU, reduced sizes (default)
    python benchmarks/bench_backends.py --device cuda --size paper   # one GPU, the papers' sizes

Two workloads of paper key ``scaling``, each timed in the same run, repeats interleaved, min of repeats:

Figure 7 grid
    res-3 with fGn weights over a (H, beta) grid, log10 ||h_L - h_0||/||h_0|| averaged over inputs
    and weight draws (``scaling.fig7_grid``). Rows: (a) the baseline, a straightforward PyTorch
    script as a user would write it: fGn weights by Davies-Harte on the device, then one batched loop
    over the layers for every (H, draw) and beta, no renormalisation, hidden panel only; (b) the
    torch backend with ``draws_on="device"`` and the hidden panel only (the baseline's work); (c) the
    torch backend with both panels; (d) the NumPy/Numba backend (same grid, host draws; CPU only).
    Paper size: 51 H x 70 beta, 5 draws, 64 inputs, L = 1000, d = 40.

Figure 2 with explicit matrices
    ||h_L||/||h_0|| of res-3 at beta = 1/2 with explicit i.i.d. N(0, 1/d) matrices drawn layer by
    layer (``scaling.fig2_explicit``). Rows: (a) the baseline loop (per-layer ``torch.randn`` from one
    Generator, forward only); (b) the torch backend, device draws, hidden states only; (c) both
    ratios (the backward pass draws the weights again); (d) NumPy. Paper size: 10^4 runs, L = 1000,
    d = 100.

Also printed: the agreement of the torch backend (float64, host draws) with the NumPy one on the
benchmark's grid, and beta*(H) / the quartiles of each run. On a CPU, PyTorch runs with one
intra-op thread (the Numba kernels are single-threaded too; on a shared machine more threads
spin-wait). Writes a markdown table to stdout and benchmarks/out/bench_backends.{md,json}, and the
phase diagram of the torch run to benchmarks/out/bench_backends_fig7.png.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import format_table, load_average, machine_info  # noqa: E402

SIZES = {
    # reduced: a few seconds per row on one CPU core
    "cpu": {"fig7": dict(nh=6, nb=10, draws=2, n_inputs=16, L=200, d=20),
            "fig2": dict(runs=400, d=30, L=200, chunk=400)},
    # the papers' sizes (Table 3 for Figure 7; Section 2.3 for Figure 2), for one GPU
    "paper": {"fig7": dict(nh=51, nb=70, draws=5, n_inputs=64, L=1000, d=40),
              "fig2": dict(runs=10_000, d=100, L=1000, chunk=2500)},
}


def _grids(nh, nb):
    return (tuple(float(x) for x in np.round(np.linspace(0.05, 0.97, nh), 10)),
            tuple(float(x) for x in np.round(np.linspace(0.2, 1.3, nb), 10)))


# ----------------------------------------------------------------------------- the baselines


def baseline_fig7(hurst, beta, *, L, d, draws, n_inputs, device, dtype, seed=0):
    """The straightforward script: (nH, nB) mean log10 ||h_L - h_0||/||h_0||."""
    import torch

    dev, dt = torch.device(device), getattr(torch, dtype)
    gen = torch.Generator(device=dev).manual_seed(seed)
    Hs = torch.tensor(hurst, dtype=torch.float64, device=dev)
    nh, nb, G = len(hurst), len(beta), len(hurst) * draws

    def fgn(count):
        k = torch.arange(L + 1, device=dev, dtype=torch.float64)
        h2 = 2 * Hs[:, None]
        g = 0.5 * ((k + 1) ** h2 - 2 * k ** h2 + (k - 1).abs() ** h2)
        lam = torch.fft.fft(torch.cat([g, g[:, 1:L].flip(-1)], dim=-1)).real.clamp_min(0)
        z = torch.randn(nh, (count + 1) // 2, 2 * L, 2, device=dev, dtype=torch.float64, generator=gen)
        x = torch.fft.fft(torch.sqrt(lam / (2 * L))[:, None, :] * torch.complex(z[..., 0], z[..., 1]))[..., :L]
        return torch.cat([x.real, x.imag], dim=1)[:, :count].to(dt)

    V = fgn(draws * d * d).reshape(nh, draws, d, d, L).permute(0, 1, 4, 2, 3).reshape(G, L, d, d) / math.sqrt(d)
    W = fgn(draws * d * d).reshape(nh, draws, d, d, L).permute(0, 1, 4, 2, 3).reshape(G, L, d, d) / math.sqrt(d)
    h0 = torch.randn(G, 1, n_inputs, d, device=dev, dtype=torch.float64, generator=gen).to(dt)
    al = (float(L) ** -torch.tensor(beta, dtype=torch.float64, device=dev)).to(dt).repeat_interleave(n_inputs)
    h = h0.expand(G, nb, n_inputs, d).reshape(G, nb * n_inputs, d).contiguous()
    for k in range(L):
        u = torch.relu(torch.bmm(h, W[:, k].transpose(1, 2)))
        h = h + al[None, :, None] * torch.bmm(u, V[:, k].transpose(1, 2))
    r = torch.log10(torch.linalg.vector_norm(h.reshape(G, nb, n_inputs, d) - h0, dim=-1)
                    / torch.linalg.vector_norm(h0, dim=-1))
    return r.reshape(nh, draws, nb, n_inputs).mean(dim=(1, 3)).to(torch.float64).cpu().numpy()


def baseline_fig2(*, runs, d, L, chunk, device, dtype, seed=0):
    """The straightforward script: ||h_L||/||h_0|| per run."""
    import torch

    dev, dt = torch.device(device), getattr(torch, dtype)
    gen = torch.Generator(device=dev).manual_seed(seed)
    alpha, s, out = L ** -0.5, d ** -0.5, []
    for start in range(0, runs, chunk):
        R = min(chunk, runs - start)
        h0 = torch.randn(R, d, 1, device=dev, dtype=dt, generator=gen)
        h = h0.clone()
        for _ in range(L):
            W = torch.randn(R, d, d, device=dev, dtype=dt, generator=gen) * s
            V = torch.randn(R, d, d, device=dev, dtype=dt, generator=gen) * s
            h = h + alpha * torch.bmm(V, torch.relu(torch.bmm(W, h)))
        out.append((h.norm(dim=(1, 2)) / h0.norm(dim=(1, 2))).to(torch.float64).cpu())
    return torch.cat(out).numpy()


# ----------------------------------------------------------------------------- the run


def _crit(beta, grid):
    from theory.scaling.phase import critical_beta

    return np.array([critical_beta(beta, row) for row in grid])


def run(device="cpu", size="cpu", dtype="float64", repeats=3):
    import torch

    from theory.backends import resolve
    from theory.experiments import experiment

    backend = resolve("torch", device, dtype)
    if device == "cpu":
        torch.set_num_threads(1)
    f7, f2 = SIZES[size]["fig7"], SIZES[size]["fig2"]
    hurst, beta = _grids(f7["nh"], f7["nb"])
    g7 = dict(hurst=hurst, beta=beta, L=f7["L"], d=f7["d"], draws=f7["draws"], n_inputs=f7["n_inputs"])
    e7, e2 = experiment("scaling.fig7_grid"), experiment("scaling.fig2_explicit")
    g2 = dict(runs=f2["runs"], d=f2["d"], L=f2["L"], chunk=f2["chunk"])
    dev = dict(backend="torch", device=device, dtype=dtype, draws_on="device")
    jobs = {
        ("fig7", "baseline"): lambda: baseline_fig7(hurst, beta, device=device, dtype=dtype, **{k: f7[k] for k in
                                                    ("L", "d", "draws", "n_inputs")}),
        ("fig7", "torch, hidden"): lambda: e7.run("check", **g7, **dev, gradients=False),
        ("fig7", "torch, both panels"): lambda: e7.run("check", **g7, **dev),
        ("fig2", "baseline"): lambda: baseline_fig2(device=device, dtype=dtype, **g2),
        ("fig2", "torch, h"): lambda: e2.run("check", **g2, **dev, gradients=False),
        ("fig2", "torch, h and p"): lambda: e2.run("check", **g2, **dev),
    }
    if size == "cpu":
        jobs[("fig7", "numpy, hidden")] = lambda: e7.run("check", **g7, gradients=False)
        jobs[("fig7", "numpy, both panels")] = lambda: e7.run("check", **g7)
        jobs[("fig2", "numpy, h")] = lambda: e2.run("check", **g2, gradients=False)
        jobs[("fig2", "numpy, h and p")] = lambda: e2.run("check", **g2)
    for fn in jobs.values():  # warm-up: JIT, FFT plans, CUDA context
        fn() if size == "cpu" else None
    times = {k: [] for k in jobs}
    results = {}
    for _ in range(repeats):
        for key, fn in jobs.items():
            backend.synchronize()
            t = time.perf_counter()
            results[key] = fn()
            backend.synchronize()
            times[key].append(time.perf_counter() - t)
    best = {k: min(v) for k, v in times.items()}
    rows, table = [], []
    for key in jobs:
        fig, name = key
        base = best[(fig, "baseline")]
        r = results[key]
        if fig == "fig7":
            grid = r if isinstance(r, np.ndarray) else r.hidden.mean(axis=-1)
            bs = _crit(beta, grid)
            what = "beta*(H) hidden at H = " + ", ".join(f"{h:.2f}: {b:.3f}" for h, b in
                                                        list(zip(hurst, bs))[:: max(1, len(hurst) // 5)])
        else:
            h = r if isinstance(r, np.ndarray) else r.h
            q = np.quantile(h, [0.25, 0.5, 0.75])
            what = f"quartiles of ||h_L||/||h_0||: {q[0]:.4f} / {q[1]:.4f} / {q[2]:.4f}"
        rows.append({"figure": fig, "run": name, "seconds": best[key], "baseline_over_this": base / best[key],
                     "result": what})
        table.append([fig, name, f"{best[key]:.3f}", f"{base / best[key]:.2f}", what])
    # exactness on the benchmark's grid: torch float64 on the NumPy draws vs NumPy
    agree = {}
    if size == "cpu":
        a = e7.run("check", **g7)
        b = e7.run("check", **g7, backend="torch", device=device)
        agree["fig7_grid"] = float(max(np.max(np.abs(a.hidden - b.hidden)), np.max(np.abs(a.gradient - b.gradient))))
        a, b = e2.run("check", **g2), e2.run("check", **g2, backend="torch", device=device)
        agree["fig2_explicit"] = float(max(np.max(np.abs(a.h - b.h)), np.max(np.abs(a.p - b.p))))
    info = machine_info()
    device_name = torch.cuda.get_device_name(backend.torch_device) if device.startswith("cuda") else "CPU"
    head = (f"bench_backends: device {device} ({device_name}), {dtype}, sizes {size}: fig7 {f7}, fig2 {f2}; "
            f"torch {torch.__version__}, threads {torch.get_num_threads()}; load average {load_average()}; "
            f"min of {repeats} interleaved repeats")
    md = [head, "", "| figure | run | seconds | baseline / this | result |", "|---|---|---:|---:|---|"]
    md += [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} |" for r in table]
    if agree:
        md += ["", "torch (float64, host draws) vs NumPy on this grid, max abs difference: "
               + ", ".join(f"{k} {v:.2e}" for k, v in agree.items())]
    text = "\n".join(md)
    print(format_table(["figure", "run", "seconds", "baseline/this", "result"], table, title=head))
    if agree:
        print(md[-1])
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    suffix = "" if (device, size) == ("cpu", "cpu") else f"_{device.replace(':', '')}_{size}"
    (out / f"bench_backends{suffix}.md").write_text(text + "\n", encoding="utf-8")
    (out / f"bench_backends{suffix}.json").write_text(json.dumps(
        {"device": device, "device_name": device_name, "dtype": dtype, "size": size, "rows": rows,
         "agreement": agree, "machine": info, "load_average": load_average()}, indent=1, default=str) + "\n",
        encoding="utf-8")
    _figure(results[("fig7", "torch, both panels")], out / f"bench_backends_fig7{suffix}.png", device_name)
    return rows


def _figure(result, path, device_name):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    c = result.config
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for ax, q, crit in ((axes[0], "hidden", result.critical_hidden), (axes[1], "gradient", result.critical_gradient)):
        grid = getattr(result, q).mean(axis=-1)  # (nH, nB)
        lim = 3.0  # colours clipped at ratios 10^-3 and 10^3; the boundary is the white band
        im = ax.pcolormesh(c.hurst, c.beta, grid.T, cmap="RdBu_r", vmin=-lim, vmax=lim, shading="nearest")
        H = np.array(c.hurst)
        ax.plot(H, np.maximum(H, 0.5), "k--", label="max(H, 1/2), predicted")
        ax.plot(H, crit, "o-", color="gold", ms=3, label="beta*(H), measured (zero crossing)")
        ax.set_xlabel("Hurst index H")
        ax.set_ylabel("beta")
        ax.set_title(f"{'hidden: log10 |h_L - h_0|/|h_0|' if q == 'hidden' else 'gradient: log10 |p_0 - p_L|/|p_L|'}",
                     fontsize=9)
        fig.colorbar(im, ax=ax, extend="both", label="log10 ratio (mean over draws and inputs)")
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(f"scaling/fig-7 grid (torch backend, {device_name}): L = {c.L}, d = {c.d}, "
                 f"{len(c.hurst)} x {len(c.beta)}, {c.draws} draws x {c.n_inputs} inputs", fontsize=10)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--size", choices=sorted(SIZES), default="cpu")
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    try:
        run(a.device, a.size, a.dtype, a.repeats)
    except ValueError as exc:
        print(f"bench_backends: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
