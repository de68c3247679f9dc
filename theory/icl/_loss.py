r"""Population losses of chapter 6 of the thesis in closed form, from exact torus expectations (private;
validated by :mod:`theory.icl._api`).

Non-augmented model (6.6) under Assumptions 6.2 and 2 (Lemma 6.6), one context length T, the row
:math:`p=(P_{T-1,1},\dots,P_{T-1,T})` and :math:`\mathbf C=\mathbf B^\top\mathbf A`:

.. math:: l_T(\mathbf C,p)=\mathbb E_\lambda\Big\|\sum_{t=1}^Tp_t\,\mathbf C\lambda^{t-T+1}\odot\lambda^{t-1}-\lambda^T\Big\|^2 ,

and the loss (6.3) is :math:`\ell=\sum_{T=2}^{T_{\max}}l_T(\mathbf B^\top\mathbf A,P_{T-1})`. Coordinate i of the
error is a Laurent polynomial in the independent phases (d of them for :math:`\mathcal C_U`, δ = d/2 for
:math:`\mathcal C_O`, where :math:`\lambda_{2i}=\bar\lambda_{2i-1}`), so :math:`l_T` is the sum of the squared
merged coefficients (see :mod:`theory.icl._torus`): :func:`_structure` merges the monomials once per
(d, T, context), and the losses sum the squared merged coefficients, in float64 (the Numba kernel
:func:`theory.icl._kernels.grouped_loss_grad`) or in rational arithmetic.

Augmented model (6.4) under Assumption 1 (Lemma 6.13, Prop. 6.5 = Prop. 6.14): :func:`_aug_structure` counts
the terms :math:`a_kb_l` per merged monomial; :func:`_ray_counts` the integer moments along the ray
:math:`a_3b_1=\eta`. Positional-encoding-only problem (6.7), Prop. 6.12: :func:`pe_hessian`.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from . import _kernels
from ._torus import group_monomials

CONTEXTS = ("unitary", "orthogonal")


# ------------------------------------------------------------------------------ monomial structures

def _var_sign(k, context):
    if context == "unitary":
        return k, 1
    return k // 2, (1 if k % 2 == 0 else -1)


#: Largest structures kept in the caches, in bytes (each cache holds at most 256 of them, so at most 512 MiB);
#: larger ones are rebuilt at each call rather than kept.
_CACHE_BYTES = 2**21


def _structure(d, T, context):
    """Group ids (d, T, d), target ids (d,), number of groups, for the model (6.6) at context length T (cached
    up to :data:`_CACHE_BYTES`)."""
    if 8 * d * d * T <= _CACHE_BYTES:
        return _structure_cached(d, T, context)
    return _build_structure(d, T, context)


def _build_structure(d, T, context):
    """Group ids (d, T, d), target ids (d,), number of groups, for the model (6.6) at context length T."""
    m = d if context == "unitary" else d // 2
    gid = np.empty((d, T, d), np.int64)
    target = np.empty(d, np.int64)
    offset = 0
    for i in range(d):
        vi, si = _var_sign(i, context)
        rows = np.zeros((T * d + 1, m), np.int64)
        for t in range(1, T + 1):
            for j in range(d):
                vj, sj = _var_sign(j, context)
                r = rows[(t - 1) * d + j]
                r[vj] += sj * (t - T + 1)
                r[vi] += si * (t - 1)
        rows[-1, vi] += si * T
        inv, _ = group_monomials(rows)
        gid[i] = inv[:-1].reshape(T, d) + offset
        target[i] = inv[-1] + offset
        offset += int(inv.max()) + 1
    gid.setflags(write=False)
    target.setflags(write=False)
    return gid, target, offset


_structure_cached = functools.lru_cache(maxsize=256)(_build_structure)


def expected_loss(C, p, context, return_gradient):
    """l_T(C, p): ``(loss, gC, gp)`` or the loss (C real or complex, then no gradient)."""
    d, T = C.shape[0], p.shape[0]
    gid, target, n = _structure(d, T, context)
    if np.iscomplexobj(C):
        coef = np.zeros(n, complex)
        np.add.at(coef, gid.reshape(-1), (p[None, :, None] * C[:, None, :]).reshape(-1))
        coef[target] -= 1.0
        return float(np.sum(coef.real ** 2 + coef.imag ** 2))
    loss, gp, gC = _kernels.grouped_loss_grad(p, C, gid, target, n, return_gradient)
    return (loss, gC, gp) if return_gradient else loss


def expected_loss_exact(Cf, pf, context):
    """l_T(C, p) from lists of Python ints and Fractions (rows of C, entries of p): a Fraction."""
    d, T = len(Cf), len(pf)
    gid, target, n = _structure(d, T, context)
    gid = gid.tolist()
    coef = [Fraction(0)] * n
    for i in range(d):
        for t in range(T):
            for j in range(d):
                coef[gid[i][t][j]] += pf[t] * Cf[i][j]
        coef[int(target[i])] -= 1
    return sum((c * c for c in coef), Fraction(0))


def quadratic_loss(C, p):
    """Prop. 6.8 as corrected (C real or complex)."""
    fro = float(np.sum(np.abs(C) ** 2))
    S = float(np.sum(np.abs(C.sum(axis=1)) ** 2))
    return float(p @ p * fro + p[-2] ** 2 * (S - fro) - 2.0 * np.trace(C).real * p[-1] + C.shape[0])


def printed_quadratic_loss(C, p):
    """Prop. 6.8 as printed (C real or complex)."""
    fro = float(np.sum(np.abs(C) ** 2))
    S = float(np.sum(np.abs(C.sum(axis=1)) ** 2))
    return float(p @ p * fro + p[-2] ** 2 * S - 2.0 * np.trace(C).real * p[-1] + C.shape[0])


def quadratic_loss_gradient(C, p):
    """Gradient of :func:`quadratic_loss` (C real): ``(gC, gp)``."""
    d = C.shape[0]
    fro = float(np.sum(C ** 2))
    row = C.sum(axis=1)
    S = float(row @ row)
    gC = 2 * (p @ p) * C + 2 * p[-2] ** 2 * (np.outer(row, np.ones(d)) - C) - 2 * p[-1] * np.eye(d)
    gp = 2 * fro * p
    gp[-2] += 2 * p[-2] * (S - fro)
    gp[-1] -= 2 * np.trace(C)
    return gC, gp


def population_loss(Amat, Bmat, P, Tmax, context, return_gradient):
    """The loss (6.3): the total, or ``(total, gA, gB, gP)``."""
    d = Amat.shape[1]
    C = Bmat.T @ Amat
    total = 0.0
    gC = np.zeros_like(C)
    gP = np.zeros_like(P)
    for T in range(2, Tmax + 1):
        gid, target, n = _structure(d, T, context)
        loss, gp, gc = _kernels.grouped_loss_grad(np.ascontiguousarray(P[T - 2, :T]), C, gid, target, n,
                                                  return_gradient)
        total += loss
        if return_gradient:
            gC += gc
            gP[T - 2, :T] = gp
    if not return_gradient:
        return total
    return total, Bmat @ gC, Amat @ gC.T, gP


# ------------------------------------------------------------------------------ augmented model (6.4)

def _aug_structure(d, T, s0):
    """Counts N (n_groups, 4, 2) of the terms a_k b_l per merged monomial, and the target indicator (n_groups,)
    (cached up to :data:`_CACHE_BYTES`: at most 8 d^2 T + d groups of 72 bytes)."""
    if 72 * (8 * d * d * T + d) <= _CACHE_BYTES:
        return _aug_structure_cached(d, T, s0)
    return _build_aug_structure(d, T, s0)


def _build_aug_structure(d, T, s0):
    """Counts N (n_groups, 4, 2) of the terms a_k b_l per merged monomial, and the target indicator (n_groups,)."""
    counts = []
    targets = []
    for i in range(d):
        rows, kl = [], []
        for t in range(1, T + 1):
            qexp = (T - t, T - 1 - t, T - t + 1, T - t)  # s_t^* s_T, s_t^* s_{T-1}, s_{t-1}^* s_T, s_{t-1}^* s_{T-1}
            rexp = (t - 1, t - 2)  # (s_t)_i, (s_{t-1})_i
            for k in range(4):
                if s0 == "zero" and t == 1 and k >= 2:
                    continue
                for l in range(2):
                    if s0 == "zero" and t == 1 and l == 1:
                        continue
                    for j in range(d):
                        r = np.zeros(d, np.int64)
                        r[j] += qexp[k]
                        r[i] += rexp[l]
                        rows.append(r)
                        kl.append((k, l))
        tgt = np.zeros(d, np.int64)
        tgt[i] = T
        rows.append(tgt)
        inv, n = group_monomials(np.array(rows))
        N = np.zeros((n, 4, 2), np.int64)
        for g, (k, l) in zip(inv[:-1], kl):
            N[g, k, l] += 1
        ind = np.zeros(n, np.int64)
        ind[inv[-1]] = 1
        counts.append(N)
        targets.append(ind)
    N = np.concatenate(counts)
    ind = np.concatenate(targets)
    N.setflags(write=False)
    ind.setflags(write=False)
    return N, ind


_aug_structure_cached = functools.lru_cache(maxsize=256)(_build_aug_structure)


def augmented_loss(a, b, d, Tmax, s0, return_gradient):
    """Loss (6.3) of the augmented model under Assumption 1: the loss, or ``(loss, ga, gb)``."""
    w = np.outer(a, b)
    loss = 0.0
    ga, gb = np.zeros(4), np.zeros(2)
    for T in range(2, Tmax + 1):
        N, ind = _aug_structure(d, T, s0)
        coef = np.einsum("gkl,kl->g", N, w) - ind
        loss += float(coef @ coef)
        if return_gradient:
            G = 2.0 * np.einsum("g,gkl->kl", coef, N)
            ga += G @ b
            gb += G.T @ a
    return (loss, ga, gb) if return_gradient else loss


def augmented_loss_exact(af, bf, d, Tmax, s0):
    """:func:`augmented_loss` from lists of Python ints and Fractions: a Fraction."""
    total = Fraction(0)
    for T in range(2, Tmax + 1):
        N, ind = _aug_structure(d, T, s0)
        for g in range(N.shape[0]):
            c = -int(ind[g]) + sum(int(N[g, k, l]) * af[k] * bf[l] for k in range(4) for l in range(2) if N[g, k, l])
            total += c * c
    return total


@functools.lru_cache(maxsize=4096)
def _ray_counts(d, T, s0):
    """Integer moment counts of one context length along the ray a_3 b_1 = η (other parameters 0), output
    coordinate 1 (all coordinates alike for unitary contexts): (Σ n_g δ_g, Σ n_g², Σ δ_g) over merged monomials,
    n_g the number of terms λ_j^(T-t+1) λ_1^(t-1) in monomial g and δ_g = [g is λ_1^T]."""
    t = np.arange(1, T + 1)
    if s0 == "zero":  # the term s_0^* s_T vanishes at t = 1
        t = t[1:]
    rows = np.zeros((t.size * d + 1, d), np.int64)
    for j in range(d):
        block = rows[j * t.size:(j + 1) * t.size]
        block[:, j] += T - t + 1
        block[:, 0] += t - 1
    rows[-1, 0] = T
    inv, n_groups = group_monomials(rows)
    n = np.bincount(inv[:-1], minlength=n_groups)
    return int(n[inv[-1]]), int(np.dot(n, n)), 1


def _eta_counts(d, Tmax, s0):
    num, den, const = 0, 0, 0
    for T in range(2, Tmax + 1):
        a, b, c = _ray_counts(d, T, s0)
        num, den, const = num + d * a, den + d * b, const + d * c
    return num, den, const


def augmented_ray_loss(eta, d, T, s0):
    """d (η² Σ n² - 2 η Σ nδ + Σ δ) at one context length."""
    a, b, c = _ray_counts(d, T, s0)
    return float(d * (eta * eta * b - 2.0 * eta * a + c))


def eta_star(d, Tmax, s0):
    """The exact minimiser along the ray, a Fraction."""
    num, den, _ = _eta_counts(d, Tmax, s0)
    return Fraction(num, den)


def augmented_min_loss(d, Tmax, s0):
    """The loss at η*, a Fraction."""
    num, den, const = _eta_counts(d, Tmax, s0)
    return Fraction(const) - Fraction(num * num, den)


def eta_star_printed(d, Tmax):
    """Prop. 6.5's Σ T / Σ (T² + (d-1) T) over T = 2..Tmax, from the closed forms of the two power sums
    (exact integers: no loop over T)."""
    s1 = Tmax * (Tmax + 1) // 2 - 1  # Σ_{T=2}^{Tmax} T
    s2 = Tmax * (Tmax + 1) * (2 * Tmax + 1) // 6 - 1  # Σ_{T=2}^{Tmax} T²
    return Fraction(s1, s2 + (d - 1) * s1)


# ------------------------------------------------------------------------------ PE-only problem (6.7)

def pe_moment(k, mu):
    """(e^{ix} - 1)/(ix), x = 4πk/μ (1 at k = 0); ``k`` an integer ndarray."""
    x = 4.0 * np.pi * k / mu
    out = np.ones(k.shape, complex)
    nz = k != 0
    out[nz] = np.expm1(1j * x[nz]) / (1j * x[nz])
    return out if out.ndim else complex(out)


def pe_hessian(T, mu):
    """H_{t,t'} = sinc(4 (t' - t)/μ) (NumPy's normalised sinc)."""
    k = np.arange(T)[None, :] - np.arange(T)[:, None]
    return np.sinc(4.0 * k / mu)


def pe_hessian_printed(T, mu):
    """sin(4k)/(4k) as printed (1 on the diagonal)."""
    k = (np.arange(T)[None, :] - np.arange(T)[:, None]).astype(float)
    out = np.ones((T, T))
    nz = k != 0
    out[nz] = mu / (4 * np.pi * k[nz]) * np.sin(4 * k[nz]) * np.pi / mu
    return out


def pe_loss(p, mu):
    """(p - e_T)ᵀ H (p - e_T)."""
    q = p.copy()
    q[-1] -= 1.0
    return float(q @ pe_hessian(p.shape[0], mu) @ q)
