"""Claim checks of Momentum ResNets (Sander's thesis, chapter 4; paper key ``momentum``).

Each check runs the registered experiment of its claim at the "check" preset
(``experiment(name).run("check")``) and records the verdict the registry gives for the claim
(``verdict_for(claim.id)``), so that ``theory run CLAIM-ID`` reproduces the record.
"""

import pytest

import theory.experiments.momentum as ex
from theory.experiments import experiment


def _run(claim, name):
    """Run experiment ``name`` at its "check" preset; return the result and the verdict the claim records."""
    exp = experiment(name)
    result = exp.run("check")
    return result, exp.verdict_for(claim.id)(result)


@pytest.mark.claim("momentum/eq-4.3", kind="identity",
                   title="The inverse (4.3) reconstructs every layer of the forward pass (4.2) to round-off: error "
                         "<= N x the spread of one ulp of the output through the inverse (float64; linear, tanh, "
                         "tanh_out, mlp residuals; gamma 0.9, 0.99; N up to 100)",
                   aliases=("sander-thesis/eq-4.3",))
def test_eq43_inversion(claim):
    _, verdict = _run(claim, "momentum.inversion")
    claim.record(verdict)


@pytest.mark.claim("momentum/prop-4.3", kind="rate",
                   title="Psi_eps(theta) (Prop. 4.3) equals its series and is the limit, at rate 1/N, of depth-N "
                         "Momentum ResNets with gamma = 1 - 1/(N eps), residual theta x / N, v0 = 0",
                   aliases=("sander-thesis/prop-4.3",))
def test_prop43_psi(claim):
    result, verdict = _run(claim, "momentum.psi")
    claim.record(verdict, figure=ex.psi_figure(result))


@pytest.mark.claim("momentum/thm-4.4", kind="identity",
                   title="Thm 4.4 (diagonalizable D), on maps built independently of the library's criterion: "
                         "f_eps(X) for real X assembled as in the proof (an eigenvalue below lambda_eps doubled, or "
                         "a single one in (lambda_eps, 0)) and for random real X have their eigenvalues below "
                         "lambda_eps paired and are reached, Psi_eps(preimage(D)) = D; D with a single eigenvalue "
                         "below lambda_eps is refused", aliases=("sander-thesis/thm-4.4",))
def test_thm44_representable(claim):
    # the verdict expects every proof-built map reconstructed: n_expected = trials x len(eps_values) of the config
    _, verdict = _run(claim, "momentum.representable")
    claim.record(verdict, figure=ex.representable_figure())


@pytest.mark.claim("momentum/fig-4.4/erratum", kind="erratum", wrong_in="statement",
                   title="Fig. 4.4 caption: lambda_eps is 'close to -1 when eps >= 2'; measured lambda_2 = -0.781 "
                         "(gap 0.22). Corrected: -1 < lambda_eps < -exp(-1/(2 eps)), strictly decreasing, so "
                         "1 + lambda_eps = O(1/eps); within 0.1 of -1 only from eps of about 5",
                   aliases=("sander-thesis/fig-4.4",))
def test_fig44_lambda_erratum(claim):
    result, verdict = _run(claim, "momentum.lambda_table")
    claim.record(verdict, figure=ex.lambda_figure(result), measured=result)


@pytest.mark.claim("momentum/sec-4.3.2", kind="qualitative",
                   title="Memory-free backpropagation (activations rebuilt by (4.3)) has working memory flat in the "
                         "depth N (gamma = 1 - 1/(50 N), as in Fig. 4.2), storing them grows like N; same gradients",
                   aliases=("sander-thesis/sec-4.3.2", "sander-thesis/fig-4.2"))
def test_sec432_memory(claim):
    result, verdict = _run(claim, "momentum.memory")
    claim.record(verdict, figure=ex.memory_figure(result))


@pytest.mark.claim("momentum/prop-4.2", kind="identity",
                   title="Prop. 4.2 (autonomous f = V tanh(Wx + b)): the solution of x' = f(x) solves "
                         "eps x'' + x' = eps J_f(x) f(x) + f(x) from (x0, f(x0)) (ODE solver, rtol 1e-11)",
                   aliases=("sander-thesis/prop-4.2",))
def test_prop42_second_order(claim):
    claim.record(_run(claim, "momentum.prop42")[1])


@pytest.mark.claim("momentum/thm-4.4/lambda", kind="identity",
                   title="Psi_eps maps the real line onto [lambda_eps, inf): the minimum of theta -> Psi_eps(theta), "
                         "scanned with the block exponential, equals lambda_eps = min_a G_eps(a)",
                   aliases=("sander-thesis/thm-4.4",))
def test_thm44_lambda_range(claim):
    claim.record(_run(claim, "momentum.lambda_range")[1])


@pytest.mark.claim("momentum/prop-4.1", kind="bound",
                   title="Prop. 4.1: at a fixed point of a tied-weight RevNet step with invertible Jacobians A, B, "
                         "the complex-step Jacobian of the step is J(A, B) = [[I, A], [B, I + BA]], which has an "
                         "eigenvalue != 1 of modulus >= 1 (500 Gaussian pairs, d = 4, and a worst-case search over "
                         "d <= 8, the scales and conditioning of A and B, AB -> -t I); its spectrum is the roots of "
                         "l^2 - (2 + mu) l + 1, mu in Sp(AB)",
                   aliases=("sander-thesis/prop-4.1",))
def test_prop41_revnet_fixed_points(claim):
    claim.record(_run(claim, "momentum.prop41")[1])


@pytest.mark.claim("momentum/sec-4.3.2/bits", kind="bound",
                   title="Sec. 4.3.2: with exact multiplication by gamma (App. 4.C) the inverse is bit exact and the "
                         "buffer holds about N log2(1/gamma) ~ N (1 - gamma) / ln 2 bits per coordinate, at most "
                         "N log2(1/gamma) + log2(1/(1 - gamma)) + 1 (random weights and a worst-case search over N, "
                         "gamma, d, the grid and the scales)",
                   aliases=("sander-thesis/sec-4.3.2",))
def test_sec432_bits(claim):
    claim.record(_run(claim, "momentum.bits")[1])


@pytest.mark.claim("momentum/prop-4.11", kind="identity",
                   title="Prop. 4.11 with v0 = 0: theta = eps(-pi^2 - 1/(4 eps^2)) gives x(1) = -exp(-1/(2 eps)) x0; "
                         "so each x -> lambda x, -1 < lambda < 0, is reached at eps = -1/(2 ln|lambda|) (remark after "
                         "Prop. 4.2; eps depends on lambda)", aliases=("sander-thesis/prop-4.11",))
def test_prop411_negative_scalings(claim):
    claim.record(_run(claim, "momentum.prop411")[1])


@pytest.mark.claim("momentum/lemma-4.5", kind="identity",
                   title="Lemma 4.5: f_eps is onto C; every random target w (and 0, -0.5, -1, -3, -30, non-real "
                         "preimages below lambda_eps) has z with f_eps(z) = w, checked through Psi_eps",
                   aliases=("sander-thesis/lemma-4.5",))
def test_lemma45_surjective(claim):
    claim.record(_run(claim, "momentum.lemma45")[1])


@pytest.mark.claim("momentum/lemma-4.6", kind="identity",
                   title="Lemma 4.6: the zeros of G_eps' (G_eps(z) = f_eps(-z^2)) in the box |Re z| < 12.5 pi, "
                         "|Im z| < 4 are all real (argument principle = count of real sign changes), so "
                         "f_eps' != 0 off the real axis", aliases=("sander-thesis/lemma-4.6",))
def test_lemma46_real_zeros(claim):
    claim.record(_run(claim, "momentum.lemma46")[1])


@pytest.mark.claim("momentum/lemma-4.6/erratum", kind="erratum", wrong_in="proof",
                   title="Proof of Lemma 4.6 (thesis App. 4.A.3.3): G_eps(z) is printed e^{-1/(2eps)}(cos z + "
                         "sin z / (2 eps)); f_eps(-z^2) is e^{-1/(2eps)}(cos z + sin z / (2 eps z))",
                   aliases=("sander-thesis/lemma-4.6",))
def test_lemma46_erratum(claim):
    result, verdict = _run(claim, "momentum.lemma46")  # verdict_for gives lemma46_erratum
    claim.record(verdict, measured=result)


@pytest.mark.claim("momentum/prop-4.8", kind="rate",
                   title="Prop. 4.8: x'' + x'/eps = f(x) tends uniformly on [0, 2] to x'' = f(x) as eps grows "
                         "(f = V tanh(Wx + b), d = 2; sup error decreasing, fitted exponent about -1)",
                   aliases=("sander-thesis/prop-4.8",))
def test_prop48_large_eps(claim):
    claim.record(_run(claim, "momentum.prop48")[1])


@pytest.mark.claim("momentum/prop-4.9", kind="identity",
                   title="Prop. 4.9: x'' + x' = 0 from (x0, (h(x0) - x0)/(1 - 1/e)) reaches h(x0) at t = 1 "
                         "(h = sin(3Ax), d = 3); Momentum ResNets with a zero residual reach it at rate 1/N",
                   aliases=("sander-thesis/prop-4.9",))
def test_prop49_free_velocity(claim):
    claim.record(_run(claim, "momentum.prop49")[1])


@pytest.mark.claim("momentum/prop-4.10", kind="bound",
                   title="Prop. 4.10 (v0 = 0, d = 1, autonomous): for random residuals and over a worst-case "
                         "search (eps up to 1e3, restoring fields plus random ones) no x0 > 0 has phi_1(x0) <= -x0 "
                         "and x0 <= phi_1(-x0) (largest margin < 0, min(-phi_1(x0), phi_1(-x0)) / x0 <= 1)",
                   aliases=("sander-thesis/prop-4.10",))
def test_prop410_obstruction(claim):
    claim.record(_run(claim, "momentum.prop410")[1])


@pytest.mark.claim("momentum/thm-4.14", kind="identity",
                   title="Thm 4.14 (d = 1): x' = (ln a) x maps x to a x at t = 1; adding s x^2 exp(-x^2) makes "
                         "the time-1 map nonlinear (so a linear time-1 map forces a linear f)",
                   aliases=("sander-thesis/thm-4.14",))
def test_thm414_linearity(claim):
    claim.record(_run(claim, "momentum.thm414")[1])


@pytest.mark.claim("momentum/thm-4.7", kind="identity",
                   title="Thm 4.7 (general case): f_eps maps J_k(z) to J_k(f_eps(z)) where f_eps'(z) != 0 (two "
                         "blocks J_k(lambda < lambda_eps), one J_k(lambda > lambda_eps)) and J_2k(x_eps) to two "
                         "blocks J_k(lambda_eps); rank profiles of (Psi - lambda I)^j", aliases=("sander-thesis/thm-4.7",))
def test_thm47_jordan(claim):
    claim.record(_run(claim, "momentum.thm47")[1])


@pytest.mark.claim("momentum/fig-4.1", kind="qualitative",
                   title="Fig. 4.1 (reduced, ODE limit): trained on x -> -x^3 with tied weights over the horizon 15 "
                         "(step 1/4), the ResNet flow stays at the order-preserving error floor while the Momentum "
                         "ResNet flow (gamma = 0.9) goes below 0.3 x that floor, in every seed",
                   aliases=("sander-thesis/fig-4.1",))
def test_fig41_dynamics(claim):
    result, verdict = _run(claim, "momentum.fig41")
    claim.record(verdict, figure=ex.fig41_figure(result))
