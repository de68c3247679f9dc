"""Reduced reproductions of Figures 1 and 2 of ``implicit-reg`` (Section 5.1, Appendix E).

Figure 1 (large-depth limit): GELU, n = 20, q = d = d' = 8, m = 16, A = B = I frozen, GD with lr 0.05
(residual weights L lr) to flow time 5 (the paper's 500 steps of lr L x 1e-2), three seeds.
Left: max_{k, t <= T} ||Z_{k+1}(t) - Z_k(t)|| against L for T = 1.25, 2.5, 5. Right: the L^2(ds)
distance of the depth embedding Z^L(T) to Z^{1024}(T) (the paper: L = 2^14).
Figure 2 (long-time limit): GELU, n = 5, m = 32, L = 64 (the paper's depth), lr 0.1 to flow time 400
(the paper's 80 000 steps of 5e-3): one entry of V_k and of W_k against k at eight training times
(lighter = later), and the loss.

The runs are those of the ``"check"`` presets of theory.experiments.implicit_reg.section5 (the settings and
seeds of the checks). Writes
figures/out/implicit-reg__fig-1__reduced.png and implicit-reg__fig-2__reduced.png (copied to
figures/gallery/ by ``theory plots --gallery``). Prints wall and CPU seconds.

Run time: about 6 s on 2 cores.
"""

import time

from theory.experiments.implicit_reg import section5 as exp
from theory.plots import save_figure, subplots, to_gallery

FIG2_DEPTH = 64


def figure_1():
    result = exp.measure_fig1(exp.PRESETS["fig1"]["check"])
    left, right = result.left, result.right
    _, fig, axes = subplots(ncols=2, figsize=(11, 4.6))
    for ax, table, ylabel, title in (
        (axes[0], left, r"$\max_{k,\,t\leq T}\ \|Z_{k+1}(t) - Z_k(t)\|$", "successive weights: 1/L"),
        (axes[1], right, r"$\|\mathcal{Z}^L(T) - \mathcal{Z}^{1024}(T)\|_{L^2(ds)}$",
         "distance to the deep reference: 1/L"),
    ):
        fits = exp.panel_fits(result.grid, table)
        exp.plot_fig1_panel(ax, fits, ylabel, title, times=result.times)
        ax.legend(frameon=False, fontsize=7, loc="lower left")
    fig.suptitle("implicit-reg Figure 1 (reduced): GELU, n = 20, d = 8, m = 16, 3 seeds; T = training time")
    return save_figure(fig, "implicit-reg/fig-1/reduced")


def figure_2():
    return exp.fig2_figure(FIG2_DEPTH, "implicit-reg/fig-2/reduced")


def main():
    wall, cpu = time.perf_counter(), time.process_time()
    paths = [figure_1(), figure_2()]
    for path in paths:
        print(path, to_gallery(path) or "")
    print(f"Figures 1 and 2 (reduced): {time.perf_counter() - wall:.1f} s wall, "
          f"{time.process_time() - cpu:.1f} s CPU")


if __name__ == "__main__":
    main()
