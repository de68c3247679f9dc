"""Tests of :mod:`theory.experiments.rnn_kernel.robustness` (Figs. 5.2-5.3 of the thesis (Marion), chapter 5): the
torch RKHS norm against the NumPy one of :mod:`theory.signature`, and the negative controls of the checks in
checks/test_rnn_kernel_figures.py (each breaks the penalty and asserts that the verdict fails)."""

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import theory.signature as S  # noqa: E402
import theory.experiments.rnn_kernel.robustness as rb  # noqa: E402


@pytest.mark.parametrize("seed,e,L,depth", [(0, 4, 0.5, 4), (1, 6, 0.05, 3), (2, 3, 0.9, 5)])
def test_star_products_and_rkhs_norm_match_numpy(seed, e, L, depth):
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    d = 2
    s = 1 / np.sqrt(e)
    U, V, b = rng.uniform(-s, s, (e, e)), rng.uniform(-s, s, (e, d)), rng.uniform(-s, s, e)
    h0, psi = rng.uniform(-1, 1, e), rng.uniform(-1, 1, e)
    hb = np.concatenate([h0, np.zeros(d)])
    ref = S.star_products(U, V, b, L, depth, "tanh", hbar0=hb)
    got = rb.star_products_torch(*(torch.tensor(a) for a in (U, V, b)), L, depth, torch.tensor(hb))
    for r, g in zip(ref, got):
        assert g.shape == r.shape
        np.testing.assert_allclose(g.numpy(), r, rtol=0, atol=1e-10 * max(1.0, np.abs(r).max()))
    norm = S.rkhs_norm(S.rkhs_coefficients(psi, ref, hbar0=hb))
    t = rb.rkhs_norm_torch(*(torch.tensor(a) for a in (psi, U, V, b)), L, depth, torch.tensor(h0))
    assert abs(float(t.detach()) - norm) <= 1e-10 * max(1.0, norm)


def test_rkhs_norm_gradient_matches_finite_differences():
    rng = np.random.default_rng(3)
    e, d, L, N = 4, 2, 0.5, 3
    U, V, b = rng.normal(size=(e, e)) / 2, rng.normal(size=(e, d)) / 2, rng.normal(size=e) / 2
    h0, psi = rng.normal(size=e), rng.normal(size=e)
    hb = np.concatenate([h0, np.zeros(d)])
    Ut = torch.tensor(U, requires_grad=True)
    rb.rkhs_norm_torch(torch.tensor(psi), Ut, torch.tensor(V), torch.tensor(b), L, N, torch.tensor(h0)).backward()
    f = lambda U_: S.rkhs_norm(S.rkhs_coefficients(psi, S.star_products(U_, V, b, L, N, "tanh", hbar0=hb),  # noqa
                                                   hbar0=hb))
    h = 1e-6
    for i, j in [(0, 1), (2, 3)]:
        Up, Um = U.copy(), U.copy()
        Up[i, j] += h
        Um[i, j] -= h
        assert abs((f(Up) - f(Um)) / (2 * h) - float(Ut.grad[i, j])) <= 1e-6 * max(1.0, abs(float(Ut.grad[i, j])))


_SMALL = dataclasses.replace(rb.ROBUSTNESS_PRESETS["check"], epochs=40, n_test=100, pgd_steps=3, eps=(0.0, 0.4, 1.0),
                             record_every=10)


def test_fig53_control_no_penalty_fails():
    """lambda = 0: the 'penalised' RNN is the unpenalised one (same data and initialisation), its RKHS norm is not
    lower (ratio 1)."""
    result = rb.measure_robustness(dataclasses.replace(_SMALL, lam=0.0))
    verdict = rb.fig53_verdict(result)
    assert verdict.status == "fail" and verdict.measured["rkhs_ratio"] == pytest.approx(1.0)


def test_fig52_control_rewarded_rkhs_norm_fails():
    """lambda = -1e-4 rewards a large RKHS norm: the 'penalised' RNN is less robust than the plain one."""
    result = rb.measure_robustness(dataclasses.replace(_SMALL, lam=-1e-4))
    verdict = rb.fig52_verdict(result)
    assert verdict.status == "fail" and verdict.measured["min_adv_gain"] < 0
