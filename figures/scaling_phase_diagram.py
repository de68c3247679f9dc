"""Figure 7 of ``scaling`` (reduced): the phase diagram of res-3 over the scaling exponent beta and
the Hurst index H of the weights, drawn from the sweep cache.

Runs ``theory sweep scaling.fig7_cell`` on a 12 x 10 grid with the "check" preset (L = 200, d = 20;
cached in reports/sweeps/scaling.fig7_cell/, so a second run only redraws) and draws the log10 RMS
ratios of the hidden states and of the gradients as heatmaps, with the measured zero contour and the
paper's boundary beta = max(H, 1/2). Writes figures/out/scaling__fig-7__phase.png (copied to
figures/gallery/ by ``theory plots --gallery``).

Run time: about 15 s on 2 cores the first time, 2 s from the cache.
"""

from theory.plots import to_gallery
from theory.sweep import plot_sweep, sweep

GRID = "beta=0.2:1.3:12,hurst=0.05:0.97:10"


def main():
    result = sweep("scaling.fig7_cell", GRID, preset="check", workers=2)
    if result.failures:
        raise SystemExit(f"{len(result.failures)} cells failed: {result.failures[:3]}")
    path = plot_sweep(result, ["hidden", "gradient"], "figures/out/scaling__fig-7__phase.png")
    print(path, to_gallery(path) or "")


if __name__ == "__main__":
    main()
