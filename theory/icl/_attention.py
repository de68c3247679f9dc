r"""Linear attention on AR tokens, chapter 6 of the thesis, Eqs. (6.4) and (6.6), Lemma 6.6.

Hermitian product linear in its first argument: :math:`\langle\alpha|\beta\rangle_{\mathbb C}=\beta^*\alpha`.

* :func:`augmented_forward`: Eq. (6.4), one head with skip connection on the augmented tokens,
  :math:`\mathcal T_\theta(e_{1:T})=\big(e_T+\sum_{t=1}^T(e_t^*Ae_T)\,Be_t\big)_{1:d}`.
* :func:`attention_forward`: Eq. (6.6), H heads read at position T-1 with positional encoding P,
  :math:`\mathcal T_\theta(e_{1:T})=\sum_h\sum_{t=1}^TP_{T-1,t}\,\big((A^he_{T-1})^*e_t\big)\,B^he_t`.
* :func:`diagonal_forward`: Lemma 6.6, the same under Assumptions 6.2 and 2 on :math:`s_t=\lambda^{t-1}`:
  coordinate i is :math:`\sum_tP_{T-1,t}\sum_jC_{ij}\lambda_j^{t-T+1}\lambda_i^{t-1}` with
  :math:`\mathbf C=\mathbf B^\top\mathbf A`.
* :func:`gd_construction` and :func:`gd_step_prediction`: Eq. (6.8) and one gradient step on the inner
  loss (6.5) from :math:`W_0=0`, :math:`-\eta\nabla_WL(0)s_T=\eta\sum_{t=1}^{T-1}s_{t+1}s_t^*s_T` (Prop. 6.4).
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, check_int, check_interval

__all__ = ["augmented_forward", "attention_forward", "diagonal_forward", "gd_construction", "gd_step_prediction",
           "block_parameters"]


def _numeric(x, name, func, ndim):
    x = np.asarray(x)
    if x.dtype == object or x.dtype.kind not in "biufc":
        raise TypeError(f"`{name}` of {func} must be a numeric array; got dtype {x.dtype}")
    if x.ndim != ndim:
        raise ValueError(f"`{name}` of {func} must have {ndim} dimension(s); got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"`{name}` of {func} must be finite; got NaN or inf")
    return x


def augmented_forward(A, B, e):
    r"""Eq. (6.4): :math:`(e_T+\sum_t(e_t^*Ae_T)Be_t)_{1:d}` for tokens ``e`` of shape (T, 3d), A, B of shape (3d, 3d)."""
    func = "theory.icl.augmented_forward"
    e = _numeric(e, "e", func, 2)
    T, D = e.shape
    if T < 1 or D % 3 or D == 0:
        raise ValueError(f"`e` of {func} must have shape (T, 3d) with T >= 1; got {e.shape}")
    A = _numeric(A, "A", func, 2)
    B = _numeric(B, "B", func, 2)
    for name, M in (("A", A), ("B", B)):
        if M.shape != (D, D):
            raise ValueError(f"`{name}` of {func} must have shape ({D}, {D}) to match `e`; got {M.shape}")
    q = A @ e[-1]
    weights = e.conj() @ q
    out = e[-1] + (weights[:, None] * (e @ B.T)).sum(axis=0)
    return out[: D // 3]


def attention_forward(A, B, P, s):
    r"""Eq. (6.6): :math:`\sum_h\sum_{t=1}^TP_{T-1,t}((A^hs_{T-1})^*s_t)B^hs_t` for tokens ``s`` (T, d), T >= 2.

    Parameters
    ----------
    A, B : array_like, shape (H, d, d)
        The heads' :math:`A^h=W_K^{h\top}W_Q^h` and :math:`B^h=W_O^hW_V^h`.
    P : array_like, shape (Tmax, Tmax) or (T,)
        The positional encoding (row T-1, 1-based, is used) or that row itself.
    s : array_like, shape (T, d)
    """
    func = "theory.icl.attention_forward"
    s = _numeric(s, "s", func, 2)
    T, d = s.shape
    if T < 2:
        raise ValueError(f"`s` of {func} must hold T >= 2 tokens (the output is read at position T-1); got T = {T}")
    A = _numeric(A, "A", func, 3)
    B = _numeric(B, "B", func, 3)
    if A.shape[1:] != (d, d) or B.shape != A.shape:
        raise ValueError(f"`A` and `B` of {func} must both have shape (H, {d}, {d}); got {A.shape} and {B.shape}")
    P = np.asarray(P)
    p = _row(P, T, func)
    q = np.einsum("hij,j->hi", A, s[T - 2])  # A^h s_{T-1}
    w = np.einsum("hi,ti->ht", q.conj(), s)  # (A^h s_{T-1})^* s_t
    v = np.einsum("hij,tj->hti", B, s)
    return np.einsum("t,ht,hti->i", p, w, v)


def _row(P, T, func):
    P = as_float_array(P, "P", func=func, ndim=(1, 2))
    if P.ndim == 1:
        if P.shape[0] != T:
            raise ValueError(f"`P` of {func}, given as a row, must have length T = {T}; got {P.shape[0]}")
        return P
    if P.shape[0] != P.shape[1] or P.shape[0] < T:
        raise ValueError(f"`P` of {func} must be a square (Tmax, Tmax) matrix with Tmax >= T = {T}; got {P.shape}")
    return P[T - 2, :T]


def diagonal_forward(Amat, Bmat, p, lam):
    r"""Lemma 6.6: the output of (6.6) under Assumptions 6.2 and 2 on :math:`s_t=\lambda^{t-1}`, t = 1..T.

    Parameters
    ----------
    Amat, Bmat : array_like, shape (H, d)
        Rows :math:`a_h`, :math:`b_h` (the diagonals of the heads).
    p : array_like, shape (T,)
        The row :math:`P_{T-1,1:T}`, T >= 2.
    lam : array_like, shape (d,)
        The context diagonal, on the unit circle.
    """
    func = "theory.icl.diagonal_forward"
    Amat = as_float_array(Amat, "Amat", func=func, ndim=2)
    Bmat = as_float_array(Bmat, "Bmat", func=func, ndim=2, shape=Amat.shape)
    p = as_float_array(p, "p", func=func, ndim=1)
    T = p.shape[0]
    if T < 2:
        raise ValueError(f"`p` of {func} must have length T >= 2; got {T}")
    lam = _numeric(lam, "lam", func, 1).astype(complex)
    if lam.shape[0] != Amat.shape[1]:
        raise ValueError(f"`lam` of {func} must have length d = {Amat.shape[1]} (from `Amat`); got {lam.shape[0]}")
    if np.max(np.abs(np.abs(lam) - 1)) > 1e-10:
        raise ValueError(f"`lam` of {func} must lie on the unit circle (Assumption 6.2)")
    C = Bmat.T @ Amat
    t = np.arange(1, T + 1)
    key = lam[None, :] ** (t - T + 1)[:, None]  # (T, d): λ_j^{t-T+1}
    val = lam[None, :] ** (t - 1)[:, None]
    return np.einsum("t,ij,tj,ti->i", p, C, key, val)


def block_parameters(a, b, d):
    r"""The matrices A, B of Assumption 1 (§6.4) from :math:`a=(a_1,..,a_4)`, :math:`b=(b_1,b_2)`: blocks
    :math:`A_{22}=a_1I, A_{23}=a_2I, A_{32}=a_3I, A_{33}=a_4I`, :math:`B_{12}=b_1I, B_{13}=b_2I`, shape (3d, 3d)."""
    func = "theory.icl.block_parameters"
    a = as_float_array(a, "a", func=func, shape=(4,))
    b = as_float_array(b, "b", func=func, shape=(2,))
    d = check_int(d, "d", func=func, minimum=1)
    I = np.eye(d)
    A = np.zeros((3 * d, 3 * d))
    B = np.zeros((3 * d, 3 * d))
    A[d:2 * d, d:2 * d], A[d:2 * d, 2 * d:] = a[0] * I, a[1] * I
    A[2 * d:, d:2 * d], A[2 * d:, 2 * d:] = a[2] * I, a[3] * I
    B[:d, d:2 * d], B[:d, 2 * d:] = b[0] * I, b[1] * I
    return A, B


def gd_construction(d, eta):
    r"""Eq. (6.8): A with only block (3, 2) equal to :math:`I_d`, B with only block (1, 2) equal to :math:`\eta I_d`."""
    func = "theory.icl.gd_construction"
    eta = check_interval(eta, "eta", -np.inf, np.inf, func=func)
    return block_parameters([0.0, 0.0, 1.0, 0.0], [eta, 0.0], d)


def gd_step_prediction(s, eta):
    r""":math:`(W_0-\eta\nabla_WL(W_0))s_T` at :math:`W_0=0` for the inner loss (6.5),
    :math:`L(W)=\frac12\sum_{t=1}^{T-1}\|s_{t+1}-Ws_t\|^2`: that is :math:`\eta\sum_{t=1}^{T-1}s_{t+1}(s_t^*s_T)`."""
    func = "theory.icl.gd_step_prediction"
    s = _numeric(s, "s", func, 2)
    eta = check_interval(eta, "eta", -np.inf, np.inf, func=func)
    grad = -np.einsum("ti,tj->ij", s[1:], s[:-1].conj())
    return -eta * grad @ s[-1]
