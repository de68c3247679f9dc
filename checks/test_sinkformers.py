"""Checks of M. E. Sander's thesis, chapter 5 ("Sinkformers", paper key ``sinkformers``), composed from
theory.experiments.sinkformers: Prop. 5.1 (invariance of Sinkhorn's limit to the cost), permutation
equivariance of the attention fields, Prop. 5.3 (the K^0 and K^∞ fields are Wasserstein gradients: T = -n∇E,
energy decreasing along the flow) and Prop. 5.4 (the SoftMax field is not: its Jacobian is not symmetric).
"""

from __future__ import annotations

import numpy as np
import pytest

from theory.experiments import experiment
from theory.experiments import sinkformers as ex
from theory.plots import new_axes, save_figure


def _run(claim, name):
    """Run experiment ``name`` at its "check" preset (``theory run CLAIM-ID`` reruns the same); return the result
    and the verdict the registry gives for the claim (``verdict_for(claim.id)``)."""
    exp = experiment(name)
    result = exp.run("check")
    return result, exp.verdict_for(claim.id)(result)


@pytest.mark.claim("sinkformers/prop-5.1", kind="identity", aliases=("sander-thesis/prop-5.1",),
                   title="Prop. 5.1 (thesis ch. 5): Sinkhorn(C + f_i + g_j) = Sinkhorn(C), so the dot-product and the L2 "
                         "costs give the same K^∞; the row SoftMax is unchanged by f_i but not by g_j")
def test_prop51(claim):
    claim.record(_run(claim, "sinkformers.prop51")[1])


@pytest.mark.claim("sinkformers/sec-5.3/equivariance", kind="identity", aliases=("sander-thesis/sec-1.1.6",),
                   title="§5.3 and §1.1.6 (thesis): unmasked attention is permutation equivariant, T(X_σ) = T(X)_σ, "
                         "for K^0, the SoftMax K^1 and Sinkhorn's K^∞")
def test_equivariance(claim):
    claim.record(_run(claim, "sinkformers.equivariance")[1])


def _prop53_figure(result, config):
    ax = new_axes()
    steps = np.arange(config.flow_steps + 1)
    for kind, label in (("kernel", "$E^0$ (kernel $K^0$)"), ("sinkhorn", r"$E^\infty$ (Sinkhorn $K^\infty$)")):
        ax.plot(steps, result.energy_paths[kind], lw=1.6, label=label)
    ax.set_xlabel(f"Euler step ($X \\leftarrow X + {config.flow_step:g}\\,T(X)$)")
    ax.set_ylabel("energy at the empirical measure")
    ax.set_title("sinkformers/prop-5.3: energies along the flow (first draw)", fontsize=10)
    ax.legend()
    return save_figure(ax, "sinkformers/prop-5.3")


@pytest.mark.claim("sinkformers/prop-5.3", kind="identity", aliases=("sander-thesis/prop-5.3", "sander-thesis/prop-1.4"),
                   title="Prop. 5.3 (thesis ch. 5), Assumption 5.2: T^0 = -n∇E^0 and T^∞ = -n∇E^∞ at the empirical "
                         "measure (finite differences), and E^0, E^∞ decrease along the Euler flow of the fields")
def test_prop53(claim):
    result, verdict = _run(claim, "sinkformers.prop53")
    claim.record(verdict, figure=_prop53_figure(result, experiment("sinkformers.prop53").config_for("check")))


def _prop54_figure(result):
    ax = new_axes()
    kinds = ("kernel", "sinkhorn", "softmax")
    vals = [result.asymmetry[k] for k in kinds]
    ax.bar(["$K^0$ (kernel)", r"$K^\infty$ (Sinkhorn)", "$K^1$ (SoftMax)"], vals, color=["C0", "C1", "C3"])
    ax.set_yscale("log")
    ax.axhline(ex.PROP54_TOL["symmetric"], color="k", ls="--", lw=1, label="symmetric if below (threshold)")
    ax.axhline(ex.PROP54_TOL["asymmetric"], color="0.4", ls=":", lw=1, label="asymmetric if above (threshold)")
    ax.set_ylabel(r"$\|J - J^\top\|_F / \|J\|_F$")
    ax.set_title("sinkformers/prop-5.4: asymmetry of the Jacobian of T", fontsize=10)
    ax.legend(fontsize=8)
    return save_figure(ax, "sinkformers/prop-5.4")


@pytest.mark.claim("sinkformers/prop-5.4", kind="identity", aliases=("sander-thesis/prop-5.4", "sander-thesis/prop-1.4"),
                   title="Prop. 5.4 (thesis ch. 5): the SoftMax field T^1 is not a gradient (its Jacobian is not "
                         "symmetric), while the K^0 and K^∞ fields are (symmetric Jacobians), Assumption 5.2")
def test_prop54(claim):
    result, verdict = _run(claim, "sinkformers.prop54")
    claim.record(verdict, figure=_prop54_figure(result))


def _thm55_figure(result):
    from theory.plots import subplots

    _, fig, (ax0, ax1) = subplots(ncols=2, figsize=(10.0, 4.0))
    ax0.semilogx(result.eps, result.slopes, "o-", label=r"measured slope of $\bar T^\infty_\varepsilon(x)$ vs $x$")
    ax0.axhline(result.printed_limit, color="C3", ls="--", label=r"printed limit $-\nabla\rho/\rho$")
    ax0.axhline(result.corrected_limit, color="C2", ls=":", label=r"corrected $-\frac{1}{2}\nabla\rho/\rho$")
    ax0.set_xlabel(r"bandwidth $\varepsilon$")
    ax0.set_ylabel("slope in x")
    ax0.set_ylim(0.0, 1.1)
    ax0.legend(fontsize=8)
    for fit, lim, color, name in ((result.fit_printed, result.printed_limit, "C3", "printed"),
                                  (result.fit_corrected, result.corrected_limit, "C2", "corrected")):
        err = np.abs(result.slopes - lim)
        ax1.loglog(result.eps, err, "o", color=color, label=f"|slope − {name} limit| (fit slope {fit.slope:.2f})")
        ax1.loglog(result.eps, np.exp(fit.intercept) * result.eps ** fit.slope, "-", color=color, lw=0.8)
    ax1.loglog(result.eps, result.eps / 8, "k:", lw=1, label="slope 1, predicted (guide)")
    ax1.set_xlabel(r"bandwidth $\varepsilon$")
    ax1.set_ylabel("error")
    from matplotlib.ticker import NullFormatter

    for ax in (ax0, ax1):
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax1.legend(fontsize=8)
    fig.suptitle("sinkformers/thm-5.5/erratum: μ = N(0, 1), Assumption 5.2, d = 1", fontsize=10)
    return save_figure(fig, "sinkformers/thm-5.5/erratum")


@pytest.mark.claim("sinkformers/thm-5.5/erratum", kind="erratum", wrong_in="statement",
                   aliases=("sander-thesis/thm-5.5",),
                   title="Thm. 5.5 (thesis ch. 5): the centred Sinkformer field tends to -½∇ρ/ρ at rate O(ε), not to the "
                         "printed -∇ρ/ρ; the PDE (5.8) is ∂ρ/∂t = ½Δρ (μ = N(0, 1), d = 1)")
def test_thm55_erratum(claim):
    result, verdict = _run(claim, "sinkformers.thm55_erratum")  # thm55_verdict = thm55_erratum
    claim.record(verdict, figure=_thm55_figure(result), measured=result)


def _prop56_figure(result):
    from matplotlib.ticker import NullFormatter

    ax = new_axes()
    for fit, err, color, name in ((result.fit_printed, result.err_printed, "C3", r"printed, $W_K^{-1}$"),
                                  (result.fit_corrected, result.err_corrected, "C2", r"corrected, $W_K^{-\top}$")):
        ax.loglog(result.eps, err, "o", color=color, label=f"{name} (fit slope {fit.slope:.2f})")
        ax.loglog(result.eps, np.exp(fit.intercept) * result.eps ** fit.slope, "-", color=color, lw=0.8)
    ax.loglog(result.eps, result.err_corrected[-1] * result.eps / result.eps[-1], "k:", lw=1,
              label="slope 1, predicted (guide)")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(r"bandwidth $\varepsilon$")
    ax.set_ylabel(r"max$_x|\bar T^1_\varepsilon(x) - $limit$(x)|$ / max|limit|")
    ax.set_title("sinkformers/prop-5.6/erratum: μ = N(0, I₂), non-symmetric $W_K$", fontsize=10)
    ax.legend(fontsize=8)
    return save_figure(ax, "sinkformers/prop-5.6/erratum")


@pytest.mark.claim("sinkformers/prop-5.6/erratum", kind="erratum", wrong_in="statement",
                   aliases=("sander-thesis/prop-5.6",),
                   title="Prop. 5.6 (thesis ch. 5): the centred L2 self-attention field tends to "
                         "-W_Qᵀ W_K^{-T} ∇ρ/ρ(W_K^{-1}W_Q x) at rate O(ε); the printed W_K^{-1} (no transpose) fails for "
                         "non-symmetric W_K (μ = N(0, I₂), Assumption 5.2)")
def test_prop56_erratum(claim):
    result, verdict = _run(claim, "sinkformers.prop56_erratum")  # prop56_verdict = prop56_erratum
    claim.record(verdict, figure=_prop56_figure(result), measured=result)


@pytest.mark.claim("sinkformers/thm-5.5", kind="rate", aliases=("sander-thesis/thm-5.5",),
                   title="Thm. 5.5 (thesis ch. 5) as corrected: the centred Sinkformer field tends to -½∇ρ/ρ at rate O(ε) "
                         "(|slope(ε) - ½| ~ ε; μ = N(0, 1), d = 1, Assumption 5.2); PDE ∂ρ/∂t = ½Δρ")
def test_thm55(claim):
    result, verdict = _run(claim, "sinkformers.thm55_erratum")  # thm55_rate_verdict
    claim.record(verdict, measured={"slopes": [float(s) for s in result.slopes],
                                                           "corrected_limit": result.corrected_limit})


@pytest.mark.claim("sinkformers/prop-5.6", kind="rate", aliases=("sander-thesis/prop-5.6",),
                   title="Prop. 5.6 (thesis ch. 5) as corrected: the centred L2 self-attention field tends to "
                         "-W_Qᵀ W_K^{-T} ∇ρ/ρ(W_K^{-1}W_Q x) at rate O(ε) (μ = N(0, I₂), non-symmetric W_K)")
def test_prop56(claim):
    result, verdict = _run(claim, "sinkformers.prop56_erratum")  # prop56_rate_verdict
    claim.record(verdict, measured={"err_corrected": [float(e) for e in result.err_corrected],
                                                            "quadrature_gap": result.quadrature_gap})


@pytest.mark.claim("sinkformers/prop-5.3/normalisation/erratum", kind="erratum", wrong_in="proof",
                   aliases=("sander-thesis/prop-5.3",),
                   title="§5.4 and the proof of Prop. 5.3 (thesis ch. 5) at μ = (1/n)Σδ: k^1, k^∞ of Eq. (5.5) are nK^1, "
                         "nK^∞ (printed: K^1, K^∞) and -∇_W F^0(x_i) = (1/n)Σ_j K^0_ij W_V x_j (printed: no 1/n); "
                         "Prop. 5.3 itself holds")
def test_normalisation_erratum(claim):
    result, verdict = _run(claim, "sinkformers.normalisation_erratum")  # normalisation_verdict = _erratum
    claim.record(verdict, measured=result)


def _thm55_general_figure(result):
    from matplotlib.ticker import NullFormatter

    ax = new_axes()
    rows = ((result.fit_corrected, result.err_corrected, "C2", r"$B_\varepsilon$ vs corrected $\frac{1}{2}W_VS^{-1}\nabla\log\rho$"),
            (result.fit_printed, result.err_printed, "C3", r"$B_\varepsilon$ vs printed $W_VS^{-1}\nabla\log\rho$"),
            (result.fit_swapped, result.err_swapped, "C4", r"$B_\varepsilon$ vs swapped $\frac{1}{2}S^{-1}W_V\nabla\log\rho$"),
            (result.fit_first_sinkhorn, result.err_first_sinkhorn, "C0", r"$\varepsilon T^\infty_\varepsilon$ vs $W_Vx$"))
    for fit, err, color, name in rows:
        ax.loglog(result.eps, err, "o", color=color, label=f"{name} (fit slope {fit.slope:.2f})")
        ax.loglog(result.eps, np.exp(fit.intercept) * result.eps ** fit.slope, "-", color=color, lw=0.8)
    ax.loglog(result.eps, result.err_corrected[-1] * result.eps / result.eps[-1], "k:", lw=1,
              label="slope 1, predicted (guide)")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(r"bandwidth $\varepsilon$")
    ax.set_ylabel("relative error")
    ax.set_title("sinkformers/thm-5.5/general: μ = N(0, Σ) in d = 2, generic $W_V$", fontsize=10)
    ax.legend(fontsize=7)
    return save_figure(ax, "sinkformers/thm-5.5/general")


@pytest.mark.claim("sinkformers/thm-5.5/general", kind="rate", aliases=("sander-thesis/thm-5.5",),
                   title="Thm. 5.5, general value matrix (end of its proof, thesis ch. 5), as corrected: T̄^∞_ε tends to "
                         "½ W_V (W_Qᵀ W_K)⁻¹ ∇ρ/ρ at rate O(ε) (μ = N(0, Σ), d = 2, generic W_V, non-symmetric W_K); "
                         "the printed factor 1 and the swapped order S⁻¹W_V do not")
def test_thm55_general(claim):
    result, verdict = _run(claim, "sinkformers.thm55_general")
    claim.record(verdict, figure=_thm55_general_figure(result),
                 measured={k: v for k, v in result.to_measured().items() if k.startswith(("err_", "rate_printed"))})


@pytest.mark.claim("sinkformers/thm-5.5/densities", kind="rate", aliases=("sander-thesis/thm-5.5",),
                   title="Thm. 5.5 (thesis ch. 5) as corrected, three densities (Gaussian, flat-topped two-Gaussian "
                         "mixture, compact C³ bump (1 - z²/4)⁴) in d = 1 and d = 2 (mixed by a random √Σ), Assumption 5.2: "
                         "||T̄^∞_ε + ½∇ρ/ρ|| / ||½∇ρ/ρ|| decays at least like ε^0.85 in every case")
def test_thm55_densities(claim):
    result, verdict = _run(claim, "sinkformers.thm55_densities")
    claim.record(verdict, measured={k: v for k, v in result.to_measured().items() if k.endswith("_errors")})


@pytest.mark.claim("sinkformers/sec-5.5/first-order", kind="rate", aliases=("sander-thesis/sec-5.5",),
                   title="§5.5 (thesis ch. 5): εT^∞_ε(x) → W_V x (generic W_V) and, under Assumption 5.2, εT^1_ε(x) → "
                         "-W_Qᵀ W_Q x for the L2 self-attention, both at rate O(ε) (μ = N(0, Σ), d = 2)")
def test_first_order_limits(claim):
    result, verdict = _run(claim, "sinkformers.thm55_general")  # first_order_verdict
    claim.record(verdict, measured={k: v for k, v in result.to_measured().items()
                                                           if k.startswith(("eps", "l2_eps", "err_eps"))})


@pytest.mark.claim("sinkformers/fig-5.1", kind="qualitative", aliases=("sander-thesis/fig-5.1", "sander-thesis/fig-1.12"),
                   title="Fig. 5.1 (thesis ch. 5), two clouds of 10 queries and 10 keys (two key clusters): one entry of "
                         "K^0 dominates, the SoftMax K^1 ignores a key cluster (column sums < 1e-3), Sinkhorn's K^∞ is "
                         "doubly stochastic and involves every key (4 draws)")
def test_fig51(claim):
    result, verdict = _run(claim, "sinkformers.fig51")
    claim.record(verdict, figure=ex.fig51_figure(result))
