r"""The AR(1) processes of chapter 6 of the thesis (§6.3, Assumption 6.2) and their token encodings
(private; validated by :mod:`theory.icl._api`).

Tokens follow :math:`s_{t+1}=Ws_t` from :math:`s_1=\mathbf 1_d`. Under Assumption 6.2 the context matrices
commute and are, up to a unitary change of basis, diagonal: :math:`W=\mathrm{diag}(\lambda)` with

* unitary contexts :math:`\mathcal C_U`: :math:`\lambda_1,\dots,\lambda_d` i.i.d. uniform on the unit circle;
* orthogonal contexts :math:`\mathcal C_O`: :math:`d=2\delta` and
  :math:`\lambda=(\lambda_1,\bar\lambda_1,\dots,\lambda_\delta,\bar\lambda_\delta)` with δ i.i.d. uniform phases
  (the real form is the block-diagonal rotation matrix).

Then :math:`s_t=\lambda^{t-1}` entrywise. The augmented tokens of §6.4 are :math:`e_t=(0,s_t,s_{t-1})`; the
value of :math:`s_0` is a convention (``s0="zero"``: :math:`s_0=0`, the convention under which Prop. 6.4's
construction is one gradient step exactly; ``s0="inverse"``: :math:`s_0=W^{-1}s_1`, the convention under which
the constants of Prop. 6.5 hold exactly, see :func:`theory.icl.eta_star`).
"""

from __future__ import annotations

import numpy as np

S0_CONVENTIONS = ("zero", "inverse")


def unitary_contexts(d, size, rng):
    """``(*size, d)`` i.i.d. uniform phases on the unit circle (``size`` a tuple, ``rng`` a Generator)."""
    return np.exp(2j * np.pi * rng.random(size + (d,)))


def orthogonal_contexts(delta, size, rng):
    """``(*size, 2 delta)`` diagonals (λ1, conj λ1, ..., λδ, conj λδ) with uniform phases."""
    half = np.exp(2j * np.pi * rng.random(size + (delta,)))
    out = np.empty(size + (2 * delta,), complex)
    out[..., 0::2] = half
    out[..., 1::2] = half.conj()
    return out


def rotation_blocks(lam):
    """The block-diagonal rotations of a validated orthogonal-context diagonal ``lam``."""
    d = lam.size
    W = np.zeros((d, d))
    for i in range(d // 2):
        c, s = lam[2 * i].real, lam[2 * i].imag
        W[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, -s], [s, c]]
    return W


def haar_orthogonal(d, size, rng):
    """QR of a Gaussian matrix with the sign fix (Haar measure on O(d)), shape ``(*size, d, d)``."""
    G = rng.standard_normal(size + (d, d))
    Q, R = np.linalg.qr(G)
    signs = np.sign(np.diagonal(R, axis1=-2, axis2=-1))
    signs[signs == 0] = 1.0
    return Q * signs[..., None, :]


def ar_sequence(W, T, s1):
    """Tokens s_1..s_T of s_{t+1} = W s_t; ``W`` a validated matrix (real or complex) or diagonal (made
    complex), ``s1`` a validated start vector or None (the ones vector)."""
    if W.ndim == 1:
        W = W.astype(complex)
    d = W.shape[0]
    if s1 is None:
        s = np.ones(d, complex if np.iscomplexobj(W) else float)
    else:
        s = s1.astype(complex if (np.iscomplexobj(W) or np.iscomplexobj(s1)) else float)
    out = np.empty((T, d), complex if (np.iscomplexobj(W) or np.iscomplexobj(s)) else float)
    out[0] = s
    for t in range(1, T):
        out[t] = W * out[t - 1] if W.ndim == 1 else W @ out[t - 1]
    return out


def augmented_tokens(s, s0, W, complex_out):
    """e_t = (0, s_t, s_{t-1}), shape (T, 3d); ``W`` validated (only read for s0 = 'inverse')."""
    T, d = s.shape
    e = np.zeros((T, 3 * d), complex if complex_out else float)
    e[:, d:2 * d] = s
    e[1:, 2 * d:] = s[:-1]
    if s0 == "inverse":
        e[0, 2 * d:] = (W.conj() * s[0]) if W.ndim == 1 else W.conj().T @ s[0]
    return e
