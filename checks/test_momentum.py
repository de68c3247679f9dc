"""Claim checks of Momentum ResNets (Sander's thesis, chapter 4; paper key ``momentum``).

Each check builds its config from a preset of :mod:`theory.experiments.momentum`, measures, and
records the verdict computed there.
"""

import pytest

import theory.experiments.momentum as ex


@pytest.mark.claim("momentum/eq-4.3", kind="identity",
                   title="The inverse (4.3) reconstructs every layer of the forward pass (4.2) to round-off: error "
                         "<= N x the spread of one ulp of the output through the inverse (float64; linear, tanh, "
                         "tanh_out, mlp residuals; gamma 0.9, 0.99; N up to 100)",
                   aliases=("sander-thesis/eq-4.3",))
def test_eq43_inversion(claim):
    result = ex.measure_inversion(ex.INVERSION_PRESETS["check"])
    claim.record(ex.inversion_verdict(result))


@pytest.mark.claim("momentum/prop-4.3", kind="rate",
                   title="Psi_eps(theta) (Prop. 4.3) equals its series and is the limit, at rate 1/N, of depth-N "
                         "Momentum ResNets with gamma = 1 - 1/(N eps), residual theta x / N, v0 = 0",
                   aliases=("sander-thesis/prop-4.3",))
def test_prop43_psi(claim):
    result = ex.measure_psi(ex.PSI_PRESETS["check"])
    figure = ex.psi_figure(result)
    claim.record(ex.psi_verdict(result), figure=figure)


@pytest.mark.claim("momentum/thm-4.4", kind="identity",
                   title="Thm 4.4 (diagonalizable D): D with every real eigenvalue below lambda_eps of even "
                         "multiplicity is reached, Psi_eps(preimage(D)) = D; a single eigenvalue below lambda_eps "
                         "is refused", aliases=("sander-thesis/thm-4.4",))
def test_thm44_representable(claim):
    cfg = ex.REPRESENTABLE_PRESETS["check"]
    result = ex.measure_representable(cfg)
    verdict = ex.representable_verdict(result, expected_constructed=cfg.trials * len(cfg.eps_values))
    claim.record(verdict, figure=ex.representable_figure())


@pytest.mark.claim("momentum/fig-4.4/erratum", kind="erratum", wrong_in="statement",
                   title="Fig. 4.4 caption: lambda_eps is 'close to -1 when eps >= 2'; measured lambda_2 = -0.781 "
                         "(gap 0.22). Corrected: -1 < lambda_eps < -exp(-1/(2 eps)), strictly decreasing, so "
                         "1 + lambda_eps = O(1/eps); within 0.1 of -1 only from eps of about 5",
                   aliases=("sander-thesis/fig-4.4",))
def test_fig44_lambda_erratum(claim):
    result = ex.measure_lambda(ex.LAMBDA_PRESETS["check"])
    figure = ex.lambda_figure(result)
    claim.record(ex.lambda_verdict(result), figure=figure, measured=result)


@pytest.mark.claim("momentum/sec-4.3.2", kind="bound",
                   title="Memory-free backpropagation (activations rebuilt by (4.3)) has working memory flat in the "
                         "depth N (gamma = 1 - 1/(50 N), as in Fig. 4.2), storing them grows like N; same gradients",
                   aliases=("sander-thesis/sec-4.3.2", "sander-thesis/fig-4.2"))
def test_sec432_memory(claim):
    result = ex.measure_memory(ex.MEMORY_PRESETS["check"])
    figure = ex.memory_figure(result)
    claim.record(ex.memory_verdict(result), figure=figure)


@pytest.mark.claim("momentum/prop-4.2", kind="identity",
                   title="Prop. 4.2 (autonomous f = V tanh(Wx + b)): the solution of x' = f(x) solves "
                         "eps x'' + x' = eps J_f(x) f(x) + f(x) from (x0, f(x0)) (ODE solver, rtol 1e-11)",
                   aliases=("sander-thesis/prop-4.2",))
def test_prop42_second_order(claim):
    result = ex.measure_prop42(ex.PROP42_PRESETS["check"])
    claim.record(ex.prop42_verdict(result))


@pytest.mark.claim("momentum/thm-4.4/lambda", kind="identity",
                   title="Psi_eps maps the real line onto [lambda_eps, inf): the minimum of theta -> Psi_eps(theta), "
                         "scanned with the block exponential, equals lambda_eps = min_a G_eps(a)",
                   aliases=("sander-thesis/thm-4.4",))
def test_thm44_lambda_range(claim):
    result = ex.measure_lambda_range(ex.LAMBDA_RANGE_PRESETS["check"])
    claim.record(ex.lambda_range_verdict(result))


@pytest.mark.claim("momentum/prop-4.1", kind="bound",
                   title="Prop. 4.1: at a fixed point of a tied-weight RevNet with invertible Jacobians A, B, "
                         "J(A, B) = [[I, A], [B, I + BA]] has an eigenvalue != 1 of modulus >= 1 (2000 Gaussian "
                         "pairs, d = 4); its spectrum is the roots of l^2 - (2 + mu) l + 1, mu in Sp(AB)",
                   aliases=("sander-thesis/prop-4.1",))
def test_prop41_revnet_fixed_points(claim):
    result = ex.measure_prop41(ex.PROP41_PRESETS["check"])
    claim.record(ex.prop41_verdict(result))


@pytest.mark.claim("momentum/sec-4.3.2/bits", kind="bound",
                   title="Sec. 4.3.2: with exact multiplication by gamma (App. 4.C) the inverse is bit exact and the "
                         "buffer holds about N log2(1/gamma) ~ N (1 - gamma) / ln 2 bits per coordinate",
                   aliases=("sander-thesis/sec-4.3.2",))
def test_sec432_bits(claim):
    result = ex.measure_bits(ex.BITS_PRESETS["check"])
    claim.record(ex.bits_verdict(result))


@pytest.mark.claim("momentum/prop-4.11", kind="identity",
                   title="Prop. 4.11 with v0 = 0: theta = eps(-pi^2 - 1/(4 eps^2)) gives x(1) = -exp(-1/(2 eps)) x0; "
                         "so each x -> lambda x, -1 < lambda < 0, is reached at eps = -1/(2 ln|lambda|) (remark after "
                         "Prop. 4.2; eps depends on lambda)", aliases=("sander-thesis/prop-4.11",))
def test_prop411_negative_scalings(claim):
    result = ex.measure_prop411(ex.PROP411_PRESETS["check"])
    claim.record(ex.prop411_verdict(result))


@pytest.mark.claim("momentum/lemma-4.5", kind="identity",
                   title="Lemma 4.5: f_eps is onto C; every random target w (and 0, -0.5, -1, -3, -30, non-real "
                         "preimages below lambda_eps) has z with f_eps(z) = w, checked through Psi_eps",
                   aliases=("sander-thesis/lemma-4.5",))
def test_lemma45_surjective(claim):
    result = ex.measure_lemma45(ex.LEMMA45_PRESETS["check"])
    claim.record(ex.lemma45_verdict(result))


@pytest.mark.claim("momentum/lemma-4.6", kind="identity",
                   title="Lemma 4.6: the zeros of G_eps' (G_eps(z) = f_eps(-z^2)) in the box |Re z| < 12.5 pi, "
                         "|Im z| < 4 are all real (argument principle = count of real sign changes), so "
                         "f_eps' != 0 off the real axis", aliases=("sander-thesis/lemma-4.6",))
def test_lemma46_real_zeros(claim):
    result = ex.measure_lemma46(ex.LEMMA46_PRESETS["check"])
    claim.record(ex.lemma46_verdict(result))


@pytest.mark.claim("momentum/lemma-4.6/erratum", kind="erratum", wrong_in="proof",
                   title="Proof of Lemma 4.6 (thesis App. 4.A.3.3): G_eps(z) is printed e^{-1/(2eps)}(cos z + "
                         "sin z / (2 eps)); f_eps(-z^2) is e^{-1/(2eps)}(cos z + sin z / (2 eps z))",
                   aliases=("sander-thesis/lemma-4.6",))
def test_lemma46_erratum(claim):
    result = ex.measure_lemma46(ex.LEMMA46_PRESETS["check"])
    claim.record(ex.lemma46_erratum(result), measured=result)


@pytest.mark.claim("momentum/prop-4.8", kind="rate",
                   title="Prop. 4.8: x'' + x'/eps = f(x) tends uniformly on [0, 2] to x'' = f(x) as eps grows "
                         "(f = V tanh(Wx + b), d = 2; sup error decreasing, fitted exponent about -1)",
                   aliases=("sander-thesis/prop-4.8",))
def test_prop48_large_eps(claim):
    result = ex.measure_prop48(ex.PROP48_PRESETS["check"])
    claim.record(ex.prop48_verdict(result))


@pytest.mark.claim("momentum/prop-4.9", kind="identity",
                   title="Prop. 4.9: x'' + x' = 0 from (x0, (h(x0) - x0)/(1 - 1/e)) reaches h(x0) at t = 1 "
                         "(h = sin(3Ax), d = 3); Momentum ResNets with a zero residual reach it at rate 1/N",
                   aliases=("sander-thesis/prop-4.9",))
def test_prop49_free_velocity(claim):
    result = ex.measure_prop49(ex.PROP49_PRESETS["check"])
    claim.record(ex.prop49_verdict(result))


@pytest.mark.claim("momentum/prop-4.10", kind="bound",
                   title="Prop. 4.10 (v0 = 0, d = 1, autonomous): for random residuals no x0 > 0 has "
                         "phi_1(x0) <= -x0 and x0 <= phi_1(-x0) (largest margin < 0)",
                   aliases=("sander-thesis/prop-4.10",))
def test_prop410_obstruction(claim):
    result = ex.measure_prop410(ex.PROP410_PRESETS["check"])
    claim.record(ex.prop410_verdict(result))


@pytest.mark.claim("momentum/thm-4.14", kind="identity",
                   title="Thm 4.14 (d = 1): x' = (ln a) x maps x to a x at t = 1; adding s x^2 exp(-x^2) makes "
                         "the time-1 map nonlinear (so a linear time-1 map forces a linear f)",
                   aliases=("sander-thesis/thm-4.14",))
def test_thm414_linearity(claim):
    result = ex.measure_thm414(ex.THM414_PRESETS["check"])
    claim.record(ex.thm414_verdict(result))


@pytest.mark.claim("momentum/thm-4.7", kind="identity",
                   title="Thm 4.7 (general case): f_eps maps J_k(z) to J_k(f_eps(z)) where f_eps'(z) != 0 (two "
                         "blocks J_k(lambda < lambda_eps), one J_k(lambda > lambda_eps)) and J_2k(x_eps) to two "
                         "blocks J_k(lambda_eps); rank profiles of (Psi - lambda I)^j", aliases=("sander-thesis/thm-4.7",))
def test_thm47_jordan(claim):
    result = ex.measure_thm47(ex.THM47_PRESETS["check"])
    claim.record(ex.thm47_verdict(result))


@pytest.mark.claim("momentum/fig-4.1", kind="bound",
                   title="Fig. 4.1 (reduced, ODE limit): trained on x -> -x^3 with tied weights over the horizon 15 "
                         "(step 1/4), the ResNet flow stays at the order-preserving error floor while the Momentum "
                         "ResNet flow (gamma = 0.9) goes below 0.3 x that floor, in every seed",
                   aliases=("sander-thesis/fig-4.1",))
def test_fig41_dynamics(claim):
    result = ex.measure_fig41(ex.FIG41_PRESETS["check"])
    figure = ex.fig41_figure(result)
    claim.record(ex.fig41_verdict(result), figure=figure)
