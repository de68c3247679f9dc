"""Log-log time against n for the sorting-based kernels: ``theory.topk.topk_mask`` against ``np.sort`` and
``theory.isotonic.isotonic_regression`` against SciPy (and scikit-learn when it ran), from the result
dictionaries of :mod:`bench_topk` and :mod:`bench_isotonic`. Medians with their interquartile ranges."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_sorting"]


def _series(runs, key):
    n = np.array([r["n"] for r in runs], dtype=float)
    med = np.array([r[key]["median"] for r in runs])
    lo = np.array([r[key]["q1"] for r in runs])
    hi = np.array([r[key]["q3"] for r in runs])
    return n, med, np.vstack([med - lo, hi - med])


def plot_sorting(topk_scaling, isotonic, path):
    """Two panels (either may be None: the panel says so); saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 10, "axes.titlesize": 10.5, "legend.fontsize": 8.5})
    fig, axes = plt.subplots(1, 2, figsize=(11.0, 4.3), constrained_layout=True)
    ax = axes[0]
    if topk_scaling is not None:
        runs = topk_scaling["runs"]
        k = topk_scaling["params"]["k"]
        for key, label, color in (("theory", "topk_mask (p = 2, λ = 1)", "#1f5fa8"), ("sort", "np.sort", "0.35")):
            n, med, err = _series(runs, key)
            ax.errorbar(n, med, yerr=err, marker="o", color=color, capsize=3, label=label)
        ax.set_title(f"top-k mask, k = {k}: partial sort (slope {topk_scaling['slope']:.2f}) "
                     f"vs full sort ({topk_scaling['sort_slope']:.2f})")
        ax.legend(frameon=False, loc="upper left")
    else:
        ax.text(0.5, 0.5, "topk benchmark not run", ha="center", transform=ax.transAxes)
    ax = axes[1]
    if isotonic is not None:
        for weighted, style in ((False, "-"), (True, "--")):
            runs = [r for r in isotonic["runs"] if r["weighted"] == weighted]
            tag = "weighted" if weighted else "unweighted"
            for key, label, color in (("theory", "theory", "#1f5fa8"), ("scipy", "SciPy", "#c0392b")):
                n, med, err = _series(runs, key)
                ax.errorbar(n, med, yerr=err, marker="o", linestyle=style, color=color, capsize=3,
                            label=f"{label}, {tag}")
            sk = [r for r in runs if r.get("sklearn")]
            if sk:
                n = np.array([r["n"] for r in sk], dtype=float)
                med = np.array([r["sklearn"]["timing"]["median"] for r in sk])
                ax.plot(n, med, marker="s", linestyle=style, color="#7f8c8d", label=f"scikit-learn, {tag}")
        ax.set_title("isotonic regression, squared loss (identical blocks)")
        ax.legend(frameon=False, loc="upper left", ncol=1)
    else:
        ax.text(0.5, 0.5, "isotonic benchmark not run", ha="center", transform=ax.transAxes)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel("median time per call (s)")
        ax.grid(True, which="major", alpha=0.35)
    fig.savefig(path, dpi=160)
    plt.close(fig)
    return path
