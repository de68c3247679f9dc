"""Reconstruction and adjoint-gradient errors of Euler and Heun ResNets, smooth vs i.i.d. weights.

The rates of Props. 3-6 of ``resnet-node`` together: f(x, theta) = theta tanh(x), d = 4, five
weight draws per depth, the same setups and ladders as the checks of those propositions. (The
reduced Figure 3(c) itself is the claim ``resnet-node/fig-3c``.) Writes
figures/out/resnet-node__adjoint-rates.png (copied to figures/gallery/ by ``theory plots --gallery``).

Run time: about 5 s on 2 cores.
"""

import numpy as np

from theory.plots import plot_rate, save_figure, to_gallery
from theory.rates import fit_rate
from theory.resnet.errors import error_table

SEEDS = range(5)
FLOOR = 1e-13  # round-off of N reverse steps; points below are dropped and drawn open
LADDERS = {
    ("euler", "smooth"): 2 ** np.arange(4, 12),
    ("euler", "iid"): 2 ** np.arange(4, 12),
    ("heun", "smooth"): 2 ** np.arange(3, 10),
    ("heun", "iid"): 2 ** np.arange(8, 15),  # the asymptotic regime starts near N = 256
}
PROVED = {  # (reconstruction, gradient) slopes the propositions prove
    ("euler", "smooth"): (-1, -2), ("euler", "iid"): (-1, -2),
    ("heun", "smooth"): (-2, -3), ("heun", "iid"): (-1, -2),
}


def main():
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 6.0), layout="constrained")
    fig.suptitle("resnet-node/prop-3 ... prop-6: Euler and Heun, smooth and i.i.d. weights; "
                 "dashed: slope guides of the proved rates (faster is allowed)", fontsize=10)
    colors = {("euler", "smooth"): "C0", ("euler", "iid"): "C1", ("heun", "smooth"): "C2", ("heun", "iid"): "C3"}
    for (scheme, weights), grid in LADDERS.items():
        rec, grad = error_table(scheme, weights, grid, SEEDS)
        for ax, errors, proved in zip(axes, (rec, grad), PROVED[scheme, weights]):
            fit = fit_rate(grid, errors, floor=FLOOR)
            label = f"{scheme.capitalize()}, {'i.i.d.' if weights == 'iid' else 'smooth'}"
            plot_rate(fit, ax=ax, label=label, color=colors[scheme, weights], expected_slope=proved,
                      expected_label=f"slope {proved}, proved")
    axes[0].set_ylabel(r"$\max_n \|x_n - \tilde x_n\|$")
    axes[0].set_title("resnet-node/prop-3, prop-5: reconstruction of the activations")
    axes[1].set_ylabel(r"$\max_n \|\tilde\nabla_{\theta_n} L - \nabla_{\theta_n} L\|_F$")
    axes[1].set_title("resnet-node/prop-4, prop-6: adjoint parameter gradient")
    for ax in axes:
        ax.set_xlabel("depth N")
        ax.legend(fontsize=7.5, frameon=False, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    path = save_figure(fig, "resnet-node/adjoint-rates")
    print(path, to_gallery(path) or "")


if __name__ == "__main__":
    main()
