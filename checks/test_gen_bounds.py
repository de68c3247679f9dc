"""Claim checks of the generalization bounds (thesis (Marion), chapter 4; paper key ``gen-bounds``).

Each check runs the registered experiment of its claim at the "check" preset
(``experiment(name).run("check")``) and records the verdict the registry gives for the claim
(``verdict_for(claim.id)``), so that ``theory run CLAIM-ID`` reproduces the record.
"""

import pytest

import theory.experiments.gen_bounds as ex
from theory.experiments import experiment


def _verdict(claim, name, result):
    """The verdict that experiment ``name`` gives for ``claim`` on ``result`` (``verdict_for(claim.id)``)."""
    return experiment(name).verdict_for(claim.id)(result)


def _run(claim, name):
    """Run experiment ``name`` at its "check" preset; return the result and the verdict the claim records."""
    result = experiment(name).run("check")
    return result, _verdict(claim, name, result)


@pytest.fixture(scope="module")
def prop42_result():
    return experiment("gen_bounds.prop42").run("check")


@pytest.mark.claim("gen-bounds/prop-4.2", kind="bound",
                   title="Prop. 4.2 (with the constant of its proof): ||F_theta(x)|| <= R_X + M R e^(K_f R) and "
                         "||F_theta(x) - F_theta'(x)|| <= M (K_f R e^(K_f R) + 1) e^(K_f R) ||theta - theta'||_(1,inf) "
                         "(d = 2, maps (1 + K_f tanh(h_j)) e_i, K_f = 0.05..2, R_Theta = 0.5..2, time-dependent theta)",
                   aliases=("marion-thesis/prop-4.2",))
def test_prop42(claim, prop42_result):
    claim.record(_verdict(claim, "gen_bounds.prop42", prop42_result), figure=ex.prop42_figure(prop42_result))


@pytest.mark.claim("gen-bounds/prop-4.2/erratum", kind="erratum", wrong_in="statement",
                   title="Prop. 4.2 prints the Lipschitz constant 2 M K_f R e^(2 K_f R), which needs K_f R e^(K_f R) "
                         ">= 1 (an assumption K_f, R >= 1 used in its proof's last step, not in the statement): at "
                         "K_f = 0.05, R = 0.5 the measured constant is 9x the printed one. Corrected: "
                         "M (K_f R e^(K_f R) + 1) e^(K_f R)", aliases=("marion-thesis/prop-4.2",))
def test_prop42_erratum(claim, prop42_result):
    claim.record(_verdict(claim, "gen_bounds.prop42", prop42_result))  # verdict_for gives prop42_erratum_verdict


@pytest.mark.claim("gen-bounds/prop-4.3", kind="bound",
                   title="Prop. 4.3: the covering of its proof (kinks every eps/(2K), slopes +-K) puts every K-Lipschitz "
                         "function of (1,inf)-norm <= R within eps of a centre, with log #centres <= m log(16 m R/eps) "
                         "+ m^2 K log 4 / eps (m = 1..3, 300 random functions)", aliases=("marion-thesis/prop-4.3",))
def test_prop43(claim):
    _, verdict = _run(claim, "gen_bounds.prop43")
    claim.record(verdict)


@pytest.mark.claim("gen-bounds/prop-4.6", kind="bound",
                   title="Prop. 4.6: the ResNet (4.10) (tanh) satisfies ||F_W(x)|| <= R_X e^(R_W) and is "
                         "R_X e^(2 R_W)/R_W-Lipschitz in ||.||_(1,1,inf), at every depth L = 1..1000",
                   aliases=("marion-thesis/prop-4.6",))
def test_prop46(claim):
    _, verdict = _run(claim, "gen_bounds.prop46")
    claim.record(verdict)


@pytest.mark.claim("gen-bounds/prop-4.7", kind="identity",
                   title="Prop. 4.7 (proof): the piecewise-affine map phi is linear, preserves ||.||_(1,1,inf) and "
                         "sends K_W to the Lipschitz constant of the path, so Prop. 4.3's covering bound applies",
                   aliases=("marion-thesis/prop-4.7",))
def test_prop47(claim):
    _, verdict = _run(claim, "gen_bounds.prop47")
    claim.record(verdict)


@pytest.mark.claim("gen-bounds/cor-4.9", kind="bound",
                   title="Cor. 4.9 (proof): the spectral complexity of (4.10) with reference I is <= 2 R e^R sqrt(L) "
                         "for L >= R (d = 5, i.i.d. and smooth W, L = 10..1000)", aliases=("marion-thesis/cor-4.9",))
def test_cor49(claim):
    _, verdict = _run(claim, "gen_bounds.cor49")
    claim.record(verdict)


@pytest.mark.claim("gen-bounds/sec-4.4.1", kind="rate",
                   title="Sec. 4.4.1: K_W = L max ||W_(k+1) - W_k||_inf is O(1) for smooth (RBF Gaussian process) "
                         "initialisation and O(L) for i.i.d. initialisation (d = 8, L = 50..800)",
                   aliases=("marion-thesis/sec-4.4.1",))
def test_sec441_kw_rates(claim):
    result, verdict = _run(claim, "gen_bounds.kw_rates")
    claim.record(verdict, figure=ex.kw_rates_figure(result))


@pytest.mark.claim("gen-bounds/thm-4.8", kind="bound",
                   title="Thm 4.8 (4.13): the (1 - delta) quantile of the uniform deviation |R - R_n| over 100 members "
                         "of the class (d = 2, L = 10, R_W = K_W = 1, loss ||a - b||) stays below the bound, n = 100..1600",
                   aliases=("marion-thesis/thm-4.8",))
def test_thm48(claim):
    _, verdict = _run(claim, "gen_bounds.thm48")
    claim.record(verdict)


@pytest.mark.claim("gen-bounds/fig-4.1", kind="qualitative",
                   title="Fig. 4.1 (reduced: synthetic 10-class data, d = 16, L = 30, A and B fixed, 2 data seeds): the "
                         "weight-difference penalty lowers max ||W_(k+1) - W_k||_inf and the generalization gap "
                         "(lambda = 0, 0.01, 0.1), and across trainings the gap rises with that maximum; the per-epoch "
                         "correlation of Fig. 4.1a is reported (its sign varies with the seed at this size)",
                   aliases=("marion-thesis/fig-4.1",))
def test_fig41(claim):
    result, verdict = _run(claim, "gen_bounds.fig41")
    claim.record(verdict, figure=ex.fig41_figure(result))


@pytest.mark.claim("gen-bounds/cor-4.5", kind="bound",
                   title="Cor. 4.5: the (1 - delta) quantile of the uniform deviation |R - R_n| over 100 neural ODEs (4.8) "
                         "(d = 2, tanh, ||W||_(1,1) = 1, loss ||a - b||) stays below the bound, n = 100..1600",
                   aliases=("marion-thesis/cor-4.5",))
def test_cor45(claim):
    _, verdict = _run(claim, "gen_bounds.cor45")  # verdict_for gives thm48_verdict
    claim.record(verdict)


@pytest.mark.claim("gen-bounds/sec-4.4.2", kind="bound",
                   title="Sec. 4.4.2: prod_k ||I + W_k/L||_F >= (sqrt(d) - R/L)^L, so Golowich et al.'s Frobenius "
                         "product grows like d^(L/2) with the depth (d = 4, R = 2, L = 5..80)",
                   aliases=("marion-thesis/sec-4.4.2",))
def test_sec442_golowich(claim):
    _, verdict = _run(claim, "gen_bounds.golowich")
    claim.record(verdict)


@pytest.mark.claim("gen-bounds/thm-4.4", kind="bound",
                   title="Thm 4.4: the (1 - delta) quantile of the uniform deviation |R - R_n| over 40 time-dependent "
                         "parameterized ODEs (4.5) (d = 2, tanh maps, R_Theta = K_Theta = 1, loss ||a - b||) stays below "
                         "the bound, n = 100..1600", aliases=("marion-thesis/thm-4.4",))
def test_thm44(claim):
    _, verdict = _run(claim, "gen_bounds.thm44")  # verdict_for gives thm48_verdict
    claim.record(verdict)
