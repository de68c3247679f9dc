r"""Linear attention on AR tokens, chapter 6 of the thesis, Eqs. (6.4) and (6.6), Lemma 6.6 (private;
validated by :mod:`theory.icl._api`).

Hermitian product linear in its first argument: :math:`\langle\alpha|\beta\rangle_{\mathbb C}=\beta^*\alpha`.
"""

from __future__ import annotations

import numpy as np


def augmented_forward(A, B, e):
    r"""Eq. (6.4): :math:`(e_T+\sum_t(e_t^*Ae_T)Be_t)_{1:d}`."""
    D = e.shape[1]
    q = A @ e[-1]
    weights = e.conj() @ q
    out = e[-1] + (weights[:, None] * (e @ B.T)).sum(axis=0)
    return out[: D // 3]


def attention_forward(A, B, p, s):
    r"""Eq. (6.6): :math:`\sum_h\sum_tp_t((A^hs_{T-1})^*s_t)B^hs_t` with the row ``p`` of P."""
    T = s.shape[0]
    q = np.einsum("hij,j->hi", A, s[T - 2])  # A^h s_{T-1}
    w = np.einsum("hi,ti->ht", q.conj(), s)  # (A^h s_{T-1})^* s_t
    v = np.einsum("hij,tj->hti", B, s)
    return np.einsum("t,ht,hti->i", p, w, v)


def diagonal_forward(Amat, Bmat, p, lam):
    r"""Lemma 6.6: coordinate i is :math:`\sum_tp_t\sum_jC_{ij}\lambda_j^{t-T+1}\lambda_i^{t-1}`."""
    T = p.shape[0]
    C = Bmat.T @ Amat
    t = np.arange(1, T + 1)
    key = lam[None, :] ** (t - T + 1)[:, None]  # (T, d): λ_j^{t-T+1}
    val = lam[None, :] ** (t - 1)[:, None]
    return np.einsum("t,ij,tj,ti->i", p, C, key, val)


def block_parameters(a, b, d):
    r"""A, B of Assumption 1 (§6.4), shape (3d, 3d)."""
    I = np.eye(d)
    A = np.zeros((3 * d, 3 * d))
    B = np.zeros((3 * d, 3 * d))
    A[d:2 * d, d:2 * d], A[d:2 * d, 2 * d:] = a[0] * I, a[1] * I
    A[2 * d:, d:2 * d], A[2 * d:, 2 * d:] = a[2] * I, a[3] * I
    B[:d, d:2 * d], B[:d, 2 * d:] = b[0] * I, b[1] * I
    return A, B


def gd_step_prediction(s, eta):
    r""":math:`\eta\sum_{t=1}^{T-1}s_{t+1}(s_t^*s_T)`, computed as :math:`-\eta\,(-\sum_ts_{t+1}s_t^*)s_T`."""
    grad = -np.einsum("ti,tj->ij", s[1:], s[:-1].conj())
    return -eta * grad @ s[-1]
