"""Checks of M. E. Sander's thesis, chapter 7 (paper key ``topk``) beyond checks/test_topk.py: the LMO (Prop. 7.1), the
conjugate of f_phi (Prop. 7.3), exactness of PAV against two independent solvers (§7.5, App. 7.A.8),
Dykstra's algorithm (Algorithm 7.7, corrected, its rate, and the printed form), the approximation error of
the magnitude operator (Example of §7.5, App. 7.A.6), the domain p > 1 of Prop. 7.8, and the smooth top-k
loss of §7.6. Each test runs its claim's registered experiment (theory.experiments.topk) at its "check" preset,
records the verdict the registry gives for the claim (``theory run CLAIM-ID`` reruns it) and draws its figure. The
Hypothesis hunts over the same families of instances live in tests/test_controls_topk_hunts.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from theory.experiments import experiment
from theory.experiments import topk as ex
from theory.plots import new_axes, save_figure


def run_check(name, claim):
    """(result, verdict): experiment ``name`` at its "check" preset and the verdict it gives for ``claim``."""
    exp = experiment(name)
    result = exp.run("check")
    return result, exp.verdict_for(claim.id)(result)

# --------------------------------------------------------------------------- Proposition 7.1 (LMO)


@pytest.mark.claim("topk/prop-7.1", kind="identity",
                   title="LMO over the permutahedron: max_{y∈P(w)}⟨x,y⟩ = Σ w_i x_[i], attained at w_rank(x) "
                         "(brute force over all 5! vertices)")
def test_prop71_lmo(claim):
    _, verdict = run_check("topk.prop71", claim)
    claim.record(verdict)


# --------------------------------------------------------------------------- Proposition 7.3 (conjugate)


@pytest.mark.claim("topk/prop-7.3", kind="identity",
                   title="Conjugate of f_φ, φ = x²/2, w = 1_k: f*_φ(y) = ½ min_{z∈P(1_k)} Σ y_i²/z_i (the squared "
                         "k-support norm; theory.topk.ksupport_norm_squared), against the z-program's KKT root, the "
                         "direct conjugate and Argyriou et al.'s closed form")
def test_prop73_conjugate(claim):
    _, verdict = run_check("topk.prop73", claim)
    claim.record(verdict)


# --------------------------------------------------------------------------- §7.5: PAV is exact


@pytest.mark.claim("topk/sec-7.5/pav", kind="identity",
                   title="PAV solves the isotonic problem (7.5) exactly: it agrees with Dykstra's projections "
                         "(p = 2, mask and magnitude) and dual block coordinate ascent (p ∈ {2, 4/3, 1.5, 3}; p ≠ 2 on tie-free x)")
def test_pav_exact(claim):
    result, verdict = run_check("topk.sec75_pav", claim)
    claim.record(verdict, measured=result.extras)


@pytest.mark.claim("topk/app-7.A.8", kind="identity",
                   title="Dual block coordinate ascent (odd, then even multipliers) and Dykstra's projections "
                         "produce the same primal iterates in the Euclidean case (p = 2)")
def test_dual_ascent_is_dykstra(claim):
    _, verdict = run_check("topk.app7a8", claim)
    claim.record(verdict)


# --------------------------------------------------------------------------- Algorithm 7.7 (Dykstra)


def _alg77_rate_figure(result):
    ax = new_axes()
    for (reg, (grid, errors)), color in zip(result.curves.items(), ("C0", "C1")):
        rho = result.measured[f"reg={reg:g}"]["rho"]
        for row in errors:
            ax.semilogy(grid, np.maximum(row, ex.DYK_FLOOR), "o", color=color, alpha=0.5, ms=3)
        gm = np.exp(np.mean(np.log(np.maximum(errors, ex.DYK_FLOOR)), axis=0))
        ax.semilogy(grid, gm[0] * rho ** (grid - grid[0]), "-", color=color,
                    label=f"λ = {reg:g}: fit ρ = {rho:.4f} per iteration")
    ax.set_xscale("log")
    ax.set_xlabel("Dykstra iterations t (one C₁ and one C₂ projection)")
    ax.set_ylabel(r"$\max_i |y^t_i - y^\star_i|$ (PAV reference)")
    cfg = result.config
    ax.set_title(f"Dykstra (Alg. 7.7 corrected), n = {cfg.n}, k = {cfg.k}, {len(cfg.seeds)} seeds", fontsize=10)
    ax.legend()
    return save_figure(ax.figure, "topk/alg-7.7/rate")


@pytest.mark.claim("topk/alg-7.7/rate", kind="rate",
                   title="Dykstra's projections (corrected Algorithm 7.7) converge linearly to the PAV solution; "
                         "fast when blocks are short (λ = 0.1), slow when long (λ = 1), n = 400, k = 28")
def test_alg77_rate(claim):
    result, verdict = run_check("topk.alg77_rate", claim)
    figure = _alg77_rate_figure(result)
    claim.record(verdict, figure=figure, measured=result)


@pytest.mark.claim("topk/alg-7.7", kind="identity",
                   title="Dykstra's projections started at s − λ1_k (the corrected Algorithm 7.7) converge to the "
                         "PAV solution (mask and magnitude)")
def test_alg77_corrected(claim):
    result, verdict = run_check("topk.alg77", claim)
    claim.record(verdict, measured=result.extras)


@pytest.mark.claim("topk/alg-7.7/erratum", kind="erratum", wrong_in="formula",
                   title="Algorithm 7.7 as printed (linear term ⟨·,w⟩ in both half-steps, v⁰ = s) does not converge "
                         "to v*: it converges to the projection of s − 2λw (relaxed mask for 2·1_k, summing to 2k); "
                         "corrected (v⁰ = s − λw, plain projections) it converges to v* on the same instances")
def test_alg77_erratum(claim):
    result, verdict = run_check("topk.alg77_erratum", claim)
    claim.record(verdict, measured=result)


# --------------------------------------------------------------------------- Example of §7.5 (p = 2, magnitude)


@pytest.mark.claim("topk/sec-7.5/bound", kind="bound",
                   title="Example of §7.5 / App. 7.A.6 (p = 2): ‖topkmag_R(x) − topkmag(x)‖_∞ ≤ λ‖x‖_∞ when λ is "
                         "small enough (all PAV blocks singletons: λ < |x|_[k]/|x|_[k+1] − 1)")
def test_magnitude_error_bound(claim):
    result, verdict = run_check("topk.sec75_bound", claim)
    claim.record(verdict, measured=result.extras)


@pytest.mark.claim("topk/sec-7.5/example", kind="identity",
                   title="Example of §7.5 (p = 2): topkmag_R(x) = topkmag(x)/(1+λ) exactly iff λ ≤ |x|_[k]/|x|_[k+1] − 1 "
                         "(equal at the threshold, different 0.1% beyond)")
def test_magnitude_exact_regime(claim):
    result, verdict = run_check("topk.sec75_example", claim)
    claim.record(verdict, measured=result.extras)


# --------------------------------------------------------------------------- Proposition 7.8: p > 1, not p > 0


@pytest.mark.claim("topk/prop-7.8/p-domain/erratum", kind="erratum", wrong_in="statement",
                   title="Prop. 7.8 is stated for p > 0; for p ∈ (0, 1] the regularised top-k mask is the hard "
                         "(discontinuous) one, so not differentiable: the statement needs p > 1 (where the same "
                         "family is continuous)")
def test_prop78_p_domain_erratum(claim):
    result, verdict = run_check("topk.prop78_p_domain_erratum", claim)
    claim.record(verdict, measured=result)


# --------------------------------------------------------------------------- §7.6: smooth top-k loss


@pytest.mark.claim("topk/sec-7.6", kind="identity",
                   title="Smooth top-k loss with t ∈ P(1_k), L = f_R(x) + R(t) − ⟨x,t⟩: gradient y*(x) − t (finite "
                         "differences), L ≥ 0, L = 0 at t = y*(x)")
def test_fy_loss(claim):
    result, verdict = run_check("topk.sec76", claim)
    claim.record(verdict, measured=result.extras)


@pytest.mark.claim("topk/sec-7.6/erratum", kind="erratum", wrong_in="formula",
                   title="The printed smooth top-k loss f_R(x,1_k) − ⟨x,t⟩ with one-hot t is called a Fenchel-Young "
                         "loss, but for k > 1 it is unbounded below: ℓ(x − c1) = ℓ(x) − c(k−1); corrected "
                         "(t ∈ P(1_k), + R(t)) it is ≥ 0 and shift invariant on the same inputs")
def test_fy_erratum(claim):
    result, verdict = run_check("topk.sec76_erratum", claim)
    claim.record(verdict, measured=result)


# --------------------------------------------------------------------------- Proposition 7.4 (biconjugate)


@pytest.mark.claim("topk/prop-7.4", kind="identity",
                   title="Biconjugate: for φ = x²/2 (convex, min φ = 0), the biconjugate of Σφ*(y_i) + δ_{S_k}(y) is "
                         "f*_φ(y, 1_k) (the squared k-support norm / 2)")
def test_prop74_biconjugate(claim):
    result, verdict = run_check("topk.prop74", claim)
    claim.record(verdict, measured=result.extras)


@pytest.mark.claim("topk/prop-7.4/erratum", kind="erratum", wrong_in="statement",
                   title="Prop. 7.4 assumes only φ convex; with φ = x²/2 + 1 (convex) the biconjugate is "
                         "f*_φ(y, 1_k) − (n − k): the proof drops the φ*(0) terms; corrected: Φ_k** = f*_φ(·, 1_k) − "
                         "(n − k) inf φ (the printed form iff inf φ = 0)")
def test_prop74_erratum(claim):
    result, verdict = run_check("topk.prop74_erratum", claim)
    claim.record(verdict, measured=result)


# --------------------------------------------------------------------------- hard regimes and bound, any p


@pytest.mark.claim("topk/sec-7.5/hard/pnorm", kind="identity",
                   title="Hard regimes for p ∈ {4/3, 1.5, 3}: mask = hard mask iff λ ≤ x_[k] − x_[k+1] (same for all p); "
                         "magnitude = sign(x)g, g + λg^{p−1} = |x_i| on the top-k, iff |x|_[k+1] + λ|x|_[k+1]^{p−1} ≤ |x|_[k]")
def test_hard_regime_pnorm(claim):
    result, verdict = run_check("topk.sec75_hard_pnorm", claim)
    claim.record(verdict, measured=result.extras)


@pytest.mark.claim("topk/sec-7.5/bound/pnorm", kind="bound",
                   title="In the hard regime, ‖topkmag_R(x) − topkmag(x)‖_∞ ≤ λ|x|_[1]^{p−1} for p ∈ {4/3, 1.5, 3} "
                         "(the p = 2 bound λ‖x‖_∞ of §7.5 generalised; derived)")
def test_magnitude_bound_pnorm(claim):
    _, verdict = run_check("topk.sec75_bound_pnorm", claim)
    claim.record(verdict)


# --------------------------------------------------------------------------- Proposition 7.8 for p != 2


@pytest.mark.claim("topk/prop-7.8/pnorm", kind="identity",
                   title="Prop. 7.8 for p ∈ {4/3, 1.5} (weights |γ − s_j|^{q−2}, λ^{q−1}w_j in the magnitude case): the "
                         "operator Jacobian equals central differences and is symmetric positive semi-definite")
def test_prop78_pnorm(claim):
    result, verdict = run_check("topk.prop78_pnorm", claim)
    claim.record(verdict, measured=result.extras)


# --------------------------------------------------------------------------- sparsity (§7.4)


@pytest.mark.claim("topk/sec-7.4/sparsity", kind="identity",
                   title="Relaxed top-k outputs keep at least k nonzeros (mask in P(1_k); magnitude sign-consistent with "
                         "|y| ≤ |x|) and the mask has exact zeros below the affine regime, p ∈ {2, 4/3}")
def test_sparsity(claim):
    _, verdict = run_check("topk.sec74_sparsity", claim)
    claim.record(verdict)


# --------------------------------------------------------------------------- Proposition 7.2: zero duality gap


@pytest.mark.claim("topk/prop-7.2/duality", kind="identity",
                   title="Prop. 7.2: max_y ⟨y,x⟩ − f*_φ(y,1_k) − R(y) = min_u R*(x − u) + f_φ(u,1_k), attained at y* and "
                         "u* = x − ∇R(y*) (mask and magnitude, p ∈ {2, 4/3}); weak duality around u*")
def test_prop72_duality(claim):
    result, verdict = run_check("topk.prop72_duality", claim)
    claim.record(verdict, measured=result.extras)


# --------------------------------------------------------------------------- Eqs. (7.2) and (7.4): LP forms


@pytest.mark.claim("topk/eq-7.2", kind="identity",
                   title="Eqs. (7.2)/(7.4): topkmask(x) is the LP argmax over P(1_k) = {y ∈ [0,1]^n, Σy = k}, and "
                         "x ∘ argmax_{P(1_k)}⟨x²/2, y⟩ (chain rule (7.3), φ = x²/2) is topkmag(x)")
def test_eq72_lp(claim):
    _, verdict = run_check("topk.eq72", claim)
    claim.record(verdict)


# --------------------------------------------------------------------------- §7.3 soft sort and soft rank


@pytest.mark.claim("topk/sec-7.3/soft-sort", kind="identity",
                   title="Soft sort/rank (§7.3 LPs over P(x) and P(ρ), p-norm regularised, Props. 7.2/7.5): isotonic "
                         "reduction = SLSQP over the permutahedron; hard sort/rank exactly iff λ ≤ the derived threshold")
def test_soft_sort_rank(claim):
    # one identity: LP errors against 0 (tolerance SOFT_LP_ATOL) and the 0/1 regime table against the
    # prediction (a single mismatch is an error of 1)
    result, verdict = run_check("topk.sec73_soft_sort", claim)
    claim.record(verdict, measured=result.extras)
