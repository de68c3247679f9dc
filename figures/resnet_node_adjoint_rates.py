"""Reconstruction and adjoint-gradient errors of Euler and Heun ResNets, smooth vs i.i.d. weights.

The rates of Props. 3-6 of ``resnet-node`` together: f(x, theta) = theta tanh(x), d = 4, five
weight draws per depth, the ``"check"`` presets of
:func:`theory.experiments.resnet_node.adjoint_rates` (the setups and ladders of the checks of
those propositions). (The reduced Figure 3(c) itself is the claim ``resnet-node/fig-3c``.) Writes
figures/out/resnet-node__adjoint-rates.png (copied to figures/gallery/ by ``theory plots --gallery``).

Run time: about 5 s on 2 cores.
"""

from theory.experiments import resnet_node as rn
from theory.plots import plot_rate, save_figure, to_gallery


def main():
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 6.0), layout="constrained")
    fig.suptitle("resnet-node/adjoint-rates (prop-3 ... prop-6): Euler and Heun, smooth and i.i.d. weights\n"
                 "dashed: slope guides of the proved rates (faster is allowed)", fontsize=10)
    colors = {("euler", "smooth"): "C0", ("euler", "iid"): "C1", ("heun", "smooth"): "C2", ("heun", "iid"): "C3"}
    for (scheme, weights), presets in rn.ADJOINT_PRESETS.items():
        result = rn.adjoint_rates(presets["check"])
        for ax, prop in zip(axes, result.fits):  # reconstruction first, then the gradient
            label = f"{scheme.capitalize()}, {'i.i.d.' if weights == 'iid' else 'smooth'}"
            proved = rn.ADJOINT_PROVED[prop, weights]
            plot_rate(result.fits[prop], ax=ax, label=label, color=colors[scheme, weights], expected_slope=proved,
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
