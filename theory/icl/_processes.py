r"""The AR(1) processes of chapter 6 of the thesis (§6.3, Assumption 6.2) and their token encodings.

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

from .._validation import as_float_array, as_generator, check_choice, check_int

__all__ = ["unitary_contexts", "orthogonal_contexts", "haar_orthogonal", "ar_sequence", "augmented_tokens",
           "rotation_blocks", "S0_CONVENTIONS"]

S0_CONVENTIONS = ("zero", "inverse")


def unitary_contexts(d, size=(), rng=None):
    r"""Draw :math:`\lambda\in\mathcal U^d` with i.i.d. uniform phases (the diagonals of :math:`\mathcal C_U`).

    Returns
    -------
    complex ndarray, shape (*size, d)
    """
    func = "theory.icl.unitary_contexts"
    d = check_int(d, "d", func=func, minimum=1)
    rng = as_generator(rng, func=func)
    size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    return np.exp(2j * np.pi * rng.random(size + (d,)))


def orthogonal_contexts(delta, size=(), rng=None):
    r"""Draw the diagonal :math:`(\lambda_1,\bar\lambda_1,\dots,\lambda_\delta,\bar\lambda_\delta)` of
    :math:`\mathcal C_O` (δ i.i.d. uniform phases, d = 2δ).

    Returns
    -------
    complex ndarray, shape (*size, 2*delta)
    """
    func = "theory.icl.orthogonal_contexts"
    delta = check_int(delta, "delta", func=func, minimum=1)
    rng = as_generator(rng, func=func)
    size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    half = np.exp(2j * np.pi * rng.random(size + (delta,)))
    out = np.empty(size + (2 * delta,), complex)
    out[..., 0::2] = half
    out[..., 1::2] = half.conj()
    return out


def rotation_blocks(lam):
    r"""The real orthogonal matrix of an orthogonal context: block-diagonal rotations :math:`R_{\theta_i}`
    with :math:`\lambda_{2i-1}=e^{i\theta_i}` (similar to :math:`\mathrm{diag}(\lambda)`)."""
    lam = np.asarray(lam)
    if lam.ndim != 1 or lam.size % 2 or not np.allclose(lam[1::2], lam[0::2].conj()) or not np.allclose(np.abs(lam), 1):
        raise ValueError("`lam` of theory.icl.rotation_blocks must be (λ1, conj λ1, ..., λδ, conj λδ) on the unit circle")
    d = lam.size
    W = np.zeros((d, d))
    for i in range(d // 2):
        c, s = lam[2 * i].real, lam[2 * i].imag
        W[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, -s], [s, c]]
    return W


def haar_orthogonal(d, size=(), rng=None):
    """Haar-distributed orthogonal matrices (QR of a Gaussian matrix with the sign fix), shape ``(*size, d, d)``."""
    func = "theory.icl.haar_orthogonal"
    d = check_int(d, "d", func=func, minimum=1)
    rng = as_generator(rng, func=func)
    size = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    G = rng.standard_normal(size + (d, d))
    Q, R = np.linalg.qr(G)
    signs = np.sign(np.diagonal(R, axis1=-2, axis2=-1))
    signs[signs == 0] = 1.0
    return Q * signs[..., None, :]


def _check_context(W, func, unitary_tol=1e-10):
    W = np.asarray(W)
    if W.dtype == object or W.dtype.kind not in "biufc":
        raise TypeError(f"`W` of {func} must be a numeric array; got dtype {W.dtype}")
    if not np.all(np.isfinite(W)):
        raise ValueError(f"`W` of {func} must be finite; got NaN or inf")
    if W.ndim == 1:  # a diagonal context
        if W.size == 0:
            raise ValueError(f"`W` of {func} must have at least one entry")
        dev = float(np.max(np.abs(np.abs(W) - 1.0)))
        if dev > unitary_tol:
            raise ValueError(f"`W` of {func} (a diagonal) must lie on the unit circle (Assumption 6.2, §6.3); "
                             f"max ||λ_i| - 1| = {dev:.3g}")
        return W.astype(complex)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] == 0:
        raise ValueError(f"`W` of {func} must be a square (d, d) matrix or a diagonal of shape (d,); got {W.shape}")
    dev = float(np.max(np.abs(W.conj().T @ W - np.eye(W.shape[0]))))
    if dev > unitary_tol:
        raise ValueError(f"`W` of {func} must be unitary (or orthogonal), W*W = I (§6.3); max |W*W - I| = {dev:.3g}")
    return W


def ar_sequence(W, T, s1=None):
    r"""The tokens :math:`s_1,\dots,s_T` of :math:`s_{t+1}=Ws_t`, shape (T, d).

    Parameters
    ----------
    W : array_like, shape (d, d) or (d,)
        A unitary (or orthogonal) context matrix, or the diagonal λ of a commuting one; non-unitary input
        raises (the chapter's processes are norm preserving).
    T : int
        Context length, >= 1.
    s1 : array_like, shape (d,), optional
        Start token; default :math:`\mathbf 1_d` (§6.3).
    """
    func = "theory.icl.ar_sequence"
    W = _check_context(W, func)
    T = check_int(T, "T", func=func, minimum=1)
    d = W.shape[0]
    if s1 is None:
        s = np.ones(d, complex if np.iscomplexobj(W) else float)
    else:
        s = np.asarray(s1)
        if s.shape != (d,) or s.dtype.kind not in "biufc" or not np.all(np.isfinite(s)):
            raise ValueError(f"`s1` of {func} must be a finite vector of shape ({d},) matching `W`; got {s.shape}")
        s = s.astype(complex if (np.iscomplexobj(W) or np.iscomplexobj(s)) else float)
    out = np.empty((T, d), complex if (np.iscomplexobj(W) or np.iscomplexobj(s)) else float)
    out[0] = s
    for t in range(1, T):
        out[t] = W * out[t - 1] if W.ndim == 1 else W @ out[t - 1]
    return out


def augmented_tokens(s, s0="zero", W=None):
    r"""The augmented tokens :math:`e_t=(0,s_t,s_{t-1})\in\mathbb C^{3d}` of §6.4, shape (T, 3d).

    Parameters
    ----------
    s : array_like, shape (T, d)
        The tokens :math:`s_1,\dots,s_T`.
    s0 : {"zero", "inverse"}
        :math:`s_0=0`, or :math:`s_0=W^{-1}s_1` (then ``W`` is required).
    W : array_like, optional
        The context (matrix or diagonal), for ``s0="inverse"``.
    """
    func = "theory.icl.augmented_tokens"
    s = np.asarray(s)
    if s.ndim != 2 or s.shape[0] < 1 or s.dtype.kind not in "biufc":
        raise ValueError(f"`s` of {func} must be a numeric array of shape (T, d) with T >= 1; got {s.shape}")
    check_choice(s0, "s0", S0_CONVENTIONS, func=func)
    T, d = s.shape
    e = np.zeros((T, 3 * d), complex if np.iscomplexobj(s) or (W is not None and np.iscomplexobj(W)) else float)
    e[:, d:2 * d] = s
    e[1:, 2 * d:] = s[:-1]
    if s0 == "inverse":
        if W is None:
            raise ValueError(f"`W` of {func} is required with s0='inverse' (s_0 = W^-1 s_1)")
        W = _check_context(W, func)
        if W.shape[0] != d:
            raise ValueError(f"`W` of {func} must be of size d = {d} (from `s`); got {W.shape}")
        e[0, 2 * d:] = (W.conj() * s[0]) if W.ndim == 1 else W.conj().T @ s[0]
    return e


def _as_real(x, name, func, **kw):
    return as_float_array(x, name, func=func, **kw)
