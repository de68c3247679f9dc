"""Claim checks of RNNs as kernel methods (thesis (Marion), chapter 5; paper key ``rnn-kernel``).

Each check runs the registered experiment of its claim at the "check" preset
(``experiment(name).run("check")``, once per module for the experiments shared by several claims) and records
the verdict the registry gives for the claim (``verdict_for(claim.id)``), so that ``theory run CLAIM-ID``
reproduces the record. Thesis numbering is primary.
"""

import pytest

import theory.experiments.rnn_kernel as ex
from theory.experiments import experiment


def _verdict(claim, name, result):
    """The verdict that experiment ``name`` gives for ``claim`` on ``result`` (``verdict_for(claim.id)``)."""
    return experiment(name).verdict_for(claim.id)(result)


def _run(claim, name):
    """Run experiment ``name`` at its "check" preset; return the result and the verdict the claim records."""
    result = experiment(name).run("check")
    return result, _verdict(claim, name, result)


@pytest.fixture(scope="module")
def signature_result():
    return experiment("rnn_kernel.signature").run("check")


@pytest.fixture(scope="module")
def euler_result():
    return experiment("rnn_kernel.prop51").run("check")


@pytest.fixture(scope="module")
def thm511_result():
    return experiment("rnn_kernel.thm511").run("check")


@pytest.fixture(scope="module")
def taylor_result():
    return experiment("rnn_kernel.prop59").run("check")


@pytest.fixture(scope="module")
def activation_result():
    return experiment("rnn_kernel.activations").run("check")


@pytest.fixture(scope="module")
def lambda_result():
    return experiment("rnn_kernel.prop510").run("check")


@pytest.fixture(scope="module")
def ex513_result():
    return experiment("rnn_kernel.ex513").run("check")


@pytest.fixture(scope="module")
def rademacher_result():
    return experiment("rnn_kernel.rademacher").run("check")


@pytest.mark.claim("rnn-kernel/ex-5.5", kind="identity",
                   title="Signature of a straight segment of increment b in the factorial normalization: level k "
                         "is b^(x)k (d = 3, depth 6)")
def test_ex55_segment(claim, signature_result):
    claim.record(_verdict(claim, "rnn_kernel.signature", signature_result))  # verdict_for gives ex55_segment_verdict


@pytest.mark.claim("rnn-kernel/prop-5.21", kind="identity",
                   title="Chen's relation in the factorial normalization: S(X) = S(X|[0,u]) x S(X|[u,1]) with "
                         "binomial weights C(k, j) (random walks in R^3, depth 6, relative to the largest entry)")
def test_prop521_chen(claim, signature_result):
    claim.record(_verdict(claim, "rnn_kernel.signature", signature_result))  # verdict_for gives prop521_chen_verdict


@pytest.mark.claim("rnn-kernel/ex-5.5/kernel", kind="identity",
                   title="Signature kernel of two segments a, b in the factorial normalization is "
                         "sum_k <a,b>^k = 1/(1 - <a,b>) (truncated at depth 6: the partial sum of the series)")
def test_ex55_kernel(claim, signature_result):
    claim.record(_verdict(claim, "rnn_kernel.signature", signature_result))  # verdict_for gives ex55_kernel_verdict


@pytest.mark.claim("rnn-kernel/prop-5.6", kind="bound",
                   title="Time-augmented paths with X_0 = 0, TV <= L: ||X_bar^k|| <= ((1+L)/2)^k and "
                         "||S(X_bar)|| <= 2/(1-L) (L = 0.1, 0.5, 0.9; levels <= 6)")
def test_prop56(claim):
    _, verdict = _run(claim, "rnn_kernel.prop56")
    claim.record(verdict)


@pytest.mark.claim("rnn-kernel/prop-5.1", kind="rate",
                   title="Residual RNN (5.1) vs the ODE (5.3): max_j ||H_{j/T} - h_j|| = O(1/T) (tanh, e = 3, "
                         "spiral of TV 0.45 < L = 0.5)")
def test_prop51_rate(claim, euler_result):
    claim.record(_verdict(claim, "rnn_kernel.prop51", euler_result), figure=ex.prop51_figure(euler_result))


@pytest.mark.claim("rnn-kernel/prop-5.1/bound", kind="bound",
                   title="Residual RNN (5.1) vs the ODE (5.3): T max_j ||H_{j/T} - h_j|| <= c1 of Prop. 5.1")
def test_prop51_bound(claim, euler_result):
    claim.record(_verdict(claim, "rnn_kernel.prop51", euler_result))  # verdict_for gives prop51_bound_verdict


@pytest.mark.claim("rnn-kernel/prop-5.2", kind="identity",
                   title="The CDE (5.4) with the field (5.5) reproduces the ODE (5.3) in its first e coordinates "
                         "and X in the last d (RK4 on both, round-off)")
def test_prop52(claim):
    _, verdict = _run(claim, "rnn_kernel.prop52")  # the cde_gap of rnn_kernel.prop51 (it does not depend on Ts)
    claim.record(verdict)


@pytest.mark.claim("rnn-kernel/prop-5.9", kind="bound",
                   title="Step-N expansion of the CDE (5.4): ||H_1 - H^N_1|| <= (d+1)^(N+1)/(N+1)! Lambda_{N+1} "
                         "(Lambda sampled on the ball of radius M + L, a lower estimate; tanh and logistic, e = 2, "
                         "N = 1..6)")
def test_prop59_bound(claim, taylor_result):
    claim.record(_verdict(claim, "rnn_kernel.prop59", taylor_result))


@pytest.mark.claim("rnn-kernel/fig-5.1", kind="rate",
                   title="Figure 5.1a (reduced: 8 random RNNs per activation, TV = L = 0.5 < 1): the step-N "
                         "expansion error decays at least geometrically, log(error ratio per order) <= -1")
def test_fig51_decay(claim, taylor_result):
    # verdict_for gives prop59_rate_verdict
    claim.record(_verdict(claim, "rnn_kernel.prop59", taylor_result), figure=ex.prop59_figure(taylor_result),
                 measured=taylor_result)


@pytest.mark.claim("rnn-kernel/lemma-5.19", kind="bound",
                   title="Logistic: sup|sigma^(n)| <= 2^(n-1) n! for n = 1..16 (exact sups; the n = 0 case is the "
                         "erratum)")
def test_lemma519(claim, activation_result):
    claim.record(_verdict(claim, "rnn_kernel.activations", activation_result),
                 figure=ex.activations_figure(activation_result))


@pytest.mark.claim("rnn-kernel/lemma-5.19/erratum", kind="erratum", wrong_in="statement",
                   title="Lemma 5.19 says sup|sigma^(n)| <= 2^(n-1) n! 'for any n >= 0': false at n = 0 "
                         "(sup sigma = 1 > 1/2). Corrected: n >= 1 (and sup sigma = 1 at n = 0)",
                   aliases=("marion-thesis/lemma-5.19",))
def test_lemma519_erratum(claim, activation_result):
    # verdict_for gives lemma519_erratum_verdict
    claim.record(_verdict(claim, "rnn_kernel.activations", activation_result))


@pytest.mark.claim("rnn-kernel/lemma-5.20", kind="bound",
                   title="tanh: sup|tanh^(n)| <= 4^n n! for n = 0..16 (exact sups)")
def test_lemma520(claim, activation_result):
    claim.record(_verdict(claim, "rnn_kernel.activations", activation_result))  # verdict_for gives lemma520_verdict


@pytest.mark.claim("rnn-kernel/prop-5.10", kind="bound",
                   title="Prop. 5.10 corrected: Lambda_N(F_RNN) <= (2/(1-L)) sqrt(2) a (8 a^2 ||W||_F/(1-L))^(N-1) "
                         "N! under (5.11) (logistic a = 2, tanh a = 4; Lambda sampled, N = 1..5)")
def test_prop510(claim, lambda_result):
    claim.record(_verdict(claim, "rnn_kernel.prop510", lambda_result))


@pytest.mark.claim("rnn-kernel/prop-5.10/erratum", kind="erratum", wrong_in="statement",
                   title="Prop. 5.10's Lambda_N <= sqrt(2) a (8a^2||W||_F/(1-L))^(N-1) N! fails at N = 1 "
                         "(Lambda_1 >= (2/(1-L)) sigma(b)); Lemma 5.24 counts 2/(1-L) k times in J^k, it appears "
                         "once. Corrected: multiply by 2/(1-L)",
                   aliases=("marion-thesis/prop-5.10", "marion-thesis/lemma-5.24"))
def test_prop510_erratum(claim, lambda_result):
    # verdict_for gives prop510_erratum_verdict
    claim.record(_verdict(claim, "rnn_kernel.prop510", lambda_result), measured=lambda_result)


@pytest.mark.claim("rnn-kernel/ex-5.13", kind="bound",
                   title="Example 5.13 corrected: logistic RNNs with ||W||_F <= K_W < (1-L)/(32(d+1)), e <= 4: "
                         "||xi_alpha|| <= 4 sqrt(2) (d+1) K_psi / (1-L-32(d+1)K_W) (alpha truncated at depth 6)")
def test_ex513(claim, ex513_result):
    claim.record(_verdict(claim, "rnn_kernel.ex513", ex513_result))


@pytest.mark.claim("rnn-kernel/ex-5.13/erratum", kind="erratum", wrong_in="statement",
                   title="Example 5.13's B = sqrt(2) K_psi (1-L)/(1-L-32 d K_W) is exceeded (large bias: the "
                         "first level of alpha alone is (2/(1-L)) K_psi sigma(b)); corrected "
                         "B = 4 sqrt(2) d K_psi/(1-L-32 d K_W) from Thm 5.11 and the corrected Prop. 5.10",
                   aliases=("marion-thesis/ex-5.13",))
def test_ex513_erratum(claim, ex513_result):
    # verdict_for gives ex513_erratum_verdict
    claim.record(_verdict(claim, "rnn_kernel.ex513", ex513_result), measured=ex513_result)


@pytest.mark.claim("rnn-kernel/thm-5.11", kind="rate",
                   title="RNN vs its RKHS element: ||z_T - <alpha, S(X_bar)>|| = O(1/T) for the identity activation "
                         "(linear case of Prop. 5.10) and tanh, logistic inside (5.11) (where (A2) holds by Prop. 5.10); "
                         "psi = identity; alpha, S truncated at depth 8")
def test_thm511_rate(claim, thm511_result):
    claim.record(_verdict(claim, "rnn_kernel.thm511", thm511_result))


@pytest.mark.claim("rnn-kernel/thm-5.11/bound", kind="bound",
                   title="Thm 5.11: T ||z_T - <alpha, S(X_bar)>|| <= ||psi||_op c1 (identity, tanh and logistic; the "
                         "levels above the truncation estimated from above), and over a search of the hypotheses")
def test_thm511_bound(claim, thm511_result):
    claim.record(_verdict(claim, "rnn_kernel.thm511", thm511_result))  # verdict_for gives thm511_bound_verdict


@pytest.mark.claim("rnn-kernel/thm-5.11/relu", kind="rate",
                   proxy="ReLU is not smooth: outside (A2) by design. The record checks the failure the smoothness "
                         "hypothesis predicts (where the trajectory crosses a kink the a.e. expansion converges to the "
                         "linear RNN of the pattern at 0, error O(1), and (5.12) fails), and the linear case inside "
                         "one region; it does not verify Thm 5.11",
                   title="Thm 5.11 without smoothness (ReLU, expected failure): crossing a kink, the expansion's error "
                         "tends to ||H_1 - H^D_1|| > 0 and T error / c1 exceeds 1; inside one linear region, O(1/T) and "
                         "(5.12) hold")
def test_thm511_relu(claim):
    _, verdict = _run(claim, "rnn_kernel.thm511_relu")
    claim.record(verdict)


@pytest.mark.claim("rnn-kernel/eq-5.14", kind="bound",
                   title="(5.14), sequence to sequence: T max_j ||z_j - (<alpha_l, S_[0,j/T](X_bar)>)_l|| <= ||psi|| c1 "
                         "(identity activation, psi = identity, T = 80; S_[0,j/T] = signature of the stopped path, "
                         "Appendix 5.A.6, to round-off)")
def test_eq514(claim):
    _, verdict = _run(claim, "rnn_kernel.eq514")
    claim.record(verdict)


@pytest.mark.claim("rnn-kernel/sec-5.3.2", kind="bound",
                   title="Stability: |z_T - z'_T| <= 2||psi|| c1/T + ||xi_alpha|| ||S(X_bar) - S(X_bar')|| "
                         "(identity activation, spiral and perturbed spirals, truncated right side)")
def test_sec532_stability(claim):
    _, verdict = _run(claim, "rnn_kernel.stability")
    claim.record(verdict)


@pytest.mark.claim("rnn-kernel/thm-5.12", kind="bound",
                   title="Proof of Thm 5.12: empirical Rademacher complexity of the unit RKHS ball "
                         "(1/n) E sqrt(eps^T K eps) <= 2/((1-L) sqrt(n)) (signature Gram of n random paths)")
def test_thm512_rademacher(claim, rademacher_result):
    claim.record(_verdict(claim, "rnn_kernel.rademacher", rademacher_result))


@pytest.mark.claim("rnn-kernel/thm-5.12/end-to-end", kind="frequency",
                   title="Thm 5.12 end to end: (5.13), P(y != g(x) | D_n) <= R_n + c2/T + 8BK/((1-L) sqrt n) + "
                         "2BK/(1-L) sqrt(log(1/delta)/(2n)), fails on at most delta = 5% of 400 samples D_n (finite "
                         "Theta of 16 identity-activation RNNs, exact ERM, 8-point distribution of paths, logistic loss, "
                         "B the largest ||xi_alpha||)")
def test_thm512_end_to_end(claim):
    _, verdict = _run(claim, "rnn_kernel.generalization")
    claim.record(verdict)


@pytest.mark.claim("rnn-kernel/thm-5.14/end-to-end", kind="frequency",
                   title="Thm 5.14 end to end: (5.15), R(theta_n) <= R_n + c3/T + 4 p c4 B/((1-L) sqrt n) + "
                         "sqrt(2 c5 log(1/delta)/n) with the printed c3, fails on at most delta = 5% of 400 samples D_n "
                         "(finite Theta of 16 identity-activation RNNs with p = 2 outputs per step, exact ERM, 8-path "
                         "distribution, squared loss over T = 40 steps)")
def test_thm514_end_to_end(claim):
    _, verdict = _run(claim, "rnn_kernel.thm514")
    claim.record(verdict)


@pytest.mark.claim("rnn-kernel/thm-5.14/proof/erratum", kind="erratum", wrong_in="proof",
                   title="Proof of Thm 5.14 (5.B.8): sup |R_G - R_S| <= c3/(2T) fails with the printed c3 (a sum, "
                         "linear in ||psi||) at ||psi||_op = 1e4 and holds with the product c3' the proof's "
                         "inequalities give, at every ||psi||_op in 1..1e4")
def test_thm514_proof_erratum(claim):
    _, verdict = _run(claim, "rnn_kernel.thm514_step")
    claim.record(verdict)


@pytest.mark.claim("rnn-kernel/thm-5.12/rate", kind="rate",
                   title="Proof of Thm 5.12: the Rademacher term decays like n^(-1/2)")
def test_thm512_rate(claim, rademacher_result):
    # verdict_for gives rademacher_rate_verdict
    claim.record(_verdict(claim, "rnn_kernel.rademacher", rademacher_result))
