"""Claim checks of Momentum ResNets (Sander's thesis, chapter 4; paper key ``momentum``).

Each check builds its config from a preset of :mod:`theory.experiments.momentum`, measures, and
records the verdict computed there.
"""

import pytest

import theory.experiments.momentum as ex


@pytest.mark.claim("momentum/eq-4.3", kind="qualitative",
                   title="The inverse (4.3) reconstructs every layer of the forward pass (4.2) to round-off: error "
                         "<= N x the spread of one ulp of the output through the inverse (float64; linear, tanh, "
                         "tanh_out, mlp residuals; gamma 0.9, 0.99; N up to 100)",
                   aliases=("sander-thesis/eq-4.3",))
def test_eq43_inversion(claim):
    result = ex.measure_inversion(ex.INVERSION_PRESETS["check"])
    verdict = ex.inversion_verdict(result)
    claim.qualitative(verdict.passed, result, verdict.message)


@pytest.mark.claim("momentum/prop-4.3", kind="qualitative",
                   title="Psi_eps(theta) (Prop. 4.3) equals its series and is the limit, at rate 1/N, of depth-N "
                         "Momentum ResNets with gamma = 1 - 1/(N eps), residual theta x / N, v0 = 0",
                   aliases=("sander-thesis/prop-4.3",))
def test_prop43_psi(claim):
    result = ex.measure_psi(ex.PSI_PRESETS["check"])
    verdict = ex.psi_verdict(result)
    figure = ex.psi_figure(result)
    claim.qualitative(verdict.passed, result, verdict.message, figure)


@pytest.mark.claim("momentum/thm-4.4", kind="qualitative",
                   title="Thm 4.4 (diagonalizable D): D with every real eigenvalue below lambda_eps of even "
                         "multiplicity is reached, Psi_eps(preimage(D)) = D; a single eigenvalue below lambda_eps "
                         "is refused", aliases=("sander-thesis/thm-4.4",))
def test_thm44_representable(claim):
    cfg = ex.REPRESENTABLE_PRESETS["check"]
    result = ex.measure_representable(cfg)
    verdict = ex.representable_verdict(result, expected_constructed=cfg.trials * len(cfg.eps_values))
    figure = ex.representable_figure()
    claim.qualitative(verdict.passed, result, verdict.message, figure)


@pytest.mark.claim("momentum/fig-4.4/erratum", kind="erratum", wrong_in="statement",
                   title="Fig. 4.4 caption: lambda_eps is 'close to -1 when eps >= 2'; measured lambda_2 = -0.781 "
                         "(gap 0.22). Corrected: -1 < lambda_eps < -exp(-1/(2 eps)), strictly decreasing, so "
                         "1 + lambda_eps = O(1/eps); within 0.1 of -1 only from eps of about 5",
                   aliases=("sander-thesis/fig-4.4",))
def test_fig44_lambda_erratum(claim):
    result = ex.measure_lambda(ex.LAMBDA_PRESETS["check"])
    figure = ex.lambda_figure(result)
    claim.erratum(ex.lambda_printed_verdict(result), result,
                  {"printed": "|1 + lambda_eps| <= 0.1 for eps >= 2"}, figure,
                  corrected=ex.lambda_corrected_verdict(result))


@pytest.mark.claim("momentum/sec-4.3.2", kind="qualitative",
                   title="Memory-free backpropagation (activations rebuilt by (4.3)) has working memory flat in the "
                         "depth N (gamma = 1 - 1/(50 N), as in Fig. 4.2), storing them grows like N; same gradients",
                   aliases=("sander-thesis/sec-4.3.2", "sander-thesis/fig-4.2"))
def test_sec432_memory(claim):
    result = ex.measure_memory(ex.MEMORY_PRESETS["check"])
    verdict = ex.memory_verdict(result)
    figure = ex.memory_figure(result)
    claim.qualitative(verdict.passed, result, verdict.message, figure)


@pytest.mark.claim("momentum/prop-4.2", kind="qualitative",
                   title="Prop. 4.2 (autonomous f = V tanh(Wx + b)): the solution of x' = f(x) solves "
                         "eps x'' + x' = eps J_f(x) f(x) + f(x) from (x0, f(x0)) (ODE solver, rtol 1e-11)",
                   aliases=("sander-thesis/prop-4.2",))
def test_prop42_second_order(claim):
    result = ex.measure_prop42(ex.PROP42_PRESETS["check"])
    verdict = ex.prop42_verdict(result)
    claim.qualitative(verdict.passed, result, verdict.message)


@pytest.mark.claim("momentum/thm-4.4/lambda", kind="qualitative",
                   title="Psi_eps maps the real line onto [lambda_eps, inf): the minimum of theta -> Psi_eps(theta), "
                         "scanned with the block exponential, equals lambda_eps = min_a G_eps(a)",
                   aliases=("sander-thesis/thm-4.4",))
def test_thm44_lambda_range(claim):
    result = ex.measure_lambda_range(ex.LAMBDA_RANGE_PRESETS["check"])
    verdict = ex.lambda_range_verdict(result)
    claim.qualitative(verdict.passed, result, verdict.message)


@pytest.mark.claim("momentum/prop-4.1", kind="qualitative",
                   title="Prop. 4.1: at a fixed point of a tied-weight RevNet with invertible Jacobians A, B, "
                         "J(A, B) = [[I, A], [B, I + BA]] has an eigenvalue != 1 of modulus >= 1 (2000 Gaussian "
                         "pairs, d = 4); its spectrum is the roots of l^2 - (2 + mu) l + 1, mu in Sp(AB)",
                   aliases=("sander-thesis/prop-4.1",))
def test_prop41_revnet_fixed_points(claim):
    result = ex.measure_prop41(ex.PROP41_PRESETS["check"])
    verdict = ex.prop41_verdict(result)
    claim.qualitative(verdict.passed, result, verdict.message)


@pytest.mark.claim("momentum/sec-4.3.2/bits", kind="qualitative",
                   title="Sec. 4.3.2: with exact multiplication by gamma (App. 4.C) the inverse is bit exact and the "
                         "buffer holds about N log2(1/gamma) ~ N (1 - gamma) / ln 2 bits per coordinate",
                   aliases=("sander-thesis/sec-4.3.2",))
def test_sec432_bits(claim):
    result = ex.measure_bits(ex.BITS_PRESETS["check"])
    verdict = ex.bits_verdict(result)
    claim.qualitative(verdict.passed, result, verdict.message)


@pytest.mark.claim("momentum/prop-4.11", kind="qualitative",
                   title="Prop. 4.11 with v0 = 0: theta = eps(-pi^2 - 1/(4 eps^2)) gives x(1) = -exp(-1/(2 eps)) x0; "
                         "so each x -> lambda x, -1 < lambda < 0, is reached at eps = -1/(2 ln|lambda|) (remark after "
                         "Prop. 4.2; eps depends on lambda)", aliases=("sander-thesis/prop-4.11",))
def test_prop411_negative_scalings(claim):
    result = ex.measure_prop411(ex.PROP411_PRESETS["check"])
    verdict = ex.prop411_verdict(result)
    claim.qualitative(verdict.passed, result, verdict.message)
