"""Checks of ``implicit-reg``: Theorem 14 (the general-f version of Theorem 4, Appendix A.5) and reduced
Figures 3 and 4 (Section 5.2, Appendix E). The experiments live in theory.experiments.implicit_reg; each check
runs its claim's registered experiment at the ``"check"`` preset and records the verdict the registry gives the
claim (what ``theory run CLAIM-ID`` prints).
"""

from __future__ import annotations

import numpy as np
import pytest

from theory.experiments.implicit_reg import thm14_fits
from theory.plots import new_axes, plot_rate, save_figure, subplots

from . import _implicit_reg as ir

_FIG_PROXY = ("the figure trains convolutional ResNets with batch normalisation (L = 256) on CIFAR-10 with SGD and "
              "cross-entropy; here the dense model (3), GELU, synthetic Gaussian data, squared loss, full-batch GD")


@pytest.mark.claim("implicit-reg/thm-14", kind="rate", aliases=ir.aliases("thm-3.15"),
                   title="Thm 14 (general f, clipped GD of Eq. (5), smooth init): ||Z^L(T) - Z^2L(T)||_{L^2(ds)} = O(1/L) "
                         "for f = a tanh(Wh), Zh, V(sin(Wh + b) - sin b)")
def test_thm14(claim):
    result, verdict = ir.run("thm14"), ir.verdict(claim, "thm14")
    ax = new_axes()
    for fam, fit in thm14_fits(result).items():
        plot_rate(fit, ax=ax, expected_slope=-1.0 if fam == "gain" else None, label=f"f = {fam}", xlabel="depth L",
                  ylabel=r"$\|\mathcal{Z}^L(T) - \mathcal{Z}^{2L}(T)\|_{L^2(ds)}$", title="implicit-reg/thm-14")
    claim.record(verdict, figure=save_figure(ax.figure, "implicit-reg/thm-14"))


@pytest.mark.claim("implicit-reg/fig-3", kind="qualitative", aliases=ir.aliases("fig-3.3"), proxy=_FIG_PROXY,
                   title="Fig. 3 message (reduced): trained inner-weight entries are smooth across layers from the "
                         "weight-tied init and rough from an i.i.d. init")
def test_fig3(claim):
    result, verdict = ir.run("fig3"), ir.verdict(claim, "fig3")
    _, fig, (a, b) = subplots(ncols=2, figsize=(11, 4))
    k = np.arange(1, result.entries["tied"].shape[0] + 1)
    for j in range(2):
        a.plot(k, result.entries["tied"][:, j], label=f"entry {j + 1}")
        b.plot(k, result.entries["iid"][:, j], label=f"entry {j + 1}")
    a.set_title("implicit-reg/fig-3: weight-tied init (smooth)")
    b.set_title("i.i.d. init (rough)")
    for ax in (a, b):
        ax.set_xlabel("layer k")
        ax.set_ylabel("trained W entry")
        ax.legend(fontsize=7)
    claim.record(verdict, figure=save_figure(fig, "implicit-reg/fig-3"))


@pytest.mark.claim("implicit-reg/fig-4", kind="qualitative", aliases=ir.aliases("fig-3.4"), proxy=_FIG_PROXY,
                   title="Fig. 4 message (reduced): mean_k ||Z_(k+1) - Z_k||_F after training is >= 10x smaller from a "
                         "smooth init than from an i.i.d. one, for both weight matrices")
def test_fig4(claim):
    result, verdict = ir.run("fig4"), ir.verdict(claim, "fig4")
    ax = new_axes()
    x = np.arange(2)
    for off, kind in ((-0.2, "smooth"), (0.2, "iid")):
        v = result.mean_diff[kind]
        ax.bar(x + off, v.mean(axis=0), width=0.4, yerr=v.std(axis=0), label=f"{kind} init")
    ax.set_yscale("log")
    ax.set_xticks(x, ["i = 1 (W)", "i = 2 (V)"])
    ax.set_ylabel(r"mean$_k \|Z_{k+1} - Z_k\|_F$ after training")
    ax.set_title("implicit-reg/fig-4 (5 runs, L = 64)")
    ax.legend()
    claim.record(verdict, figure=save_figure(ax.figure, "implicit-reg/fig-4"))
