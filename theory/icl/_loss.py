r"""Population losses of chapter 6 of the thesis in closed form, from exact torus expectations.

Non-augmented model (6.6) under Assumptions 6.2 and 2 (Lemma 6.6), one context length T, the row
:math:`p=(P_{T-1,1},\dots,P_{T-1,T})` and :math:`\mathbf C=\mathbf B^\top\mathbf A`:

.. math:: l_T(\mathbf C,p)=\mathbb E_\lambda\Big\|\sum_{t=1}^Tp_t\,\mathbf C\lambda^{t-T+1}\odot\lambda^{t-1}-\lambda^T\Big\|^2 ,

and the loss (6.3) is :math:`\ell=\sum_{T=2}^{T_{\max}}l_T(\mathbf B^\top\mathbf A,P_{T-1})`. Coordinate i of the
error is a Laurent polynomial in the independent phases (d of them for :math:`\mathcal C_U`, δ = d/2 for
:math:`\mathcal C_O`, where :math:`\lambda_{2i}=\bar\lambda_{2i-1}`), so :math:`l_T` is the sum of the squared
merged coefficients (see :mod:`theory.icl._torus`): :func:`expected_loss` evaluates it exactly, in float64,
with its gradient; :func:`expected_loss_exact` in rational arithmetic.

For unitary contexts the merge gives the closed form (:func:`quadratic_loss`; Prop. 6.8 of the thesis as
corrected here: the printed statement lacks the :math:`-\|\mathbf C\|_F^2` inside the bracket)

.. math:: l_T(\mathbf C,p)=\|p\|^2\|\mathbf C\|_F^2+p_{T-1}^2\big(S(\mathbf C^\top\mathbf C)-\|\mathbf C\|_F^2\big)
          -2\,\mathrm{Tr}(\mathbf C)\,p_T+d ,

:math:`S` the sum of all entries: the monomials of the terms :math:`t=T-1` do not depend on j, so they merge
into one coefficient :math:`p_{T-1}\sum_jC_{ij}` per coordinate, which is counted once, not twice.

Augmented model (6.4) under Assumption 1 (Lemma 6.13, Prop. 6.5 = Prop. 6.14): :func:`augmented_loss` with
parameters :math:`a=(a_1,..,a_4)`, :math:`b=(b_1,b_2)`; :func:`eta_star` gives the exact optimal step
:math:`a_3b_1` as a fraction.

Positional-encoding-only problem (6.7), Prop. 6.12: :func:`pe_moment`, :func:`pe_hessian`, :func:`pe_loss`.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from .._validation import as_float_array, check_choice, check_finite_output, check_int, check_interval
from . import _kernels
from ._processes import S0_CONVENTIONS
from ._torus import group_monomials

__all__ = ["CONTEXTS", "expected_loss", "expected_loss_exact", "quadratic_loss", "printed_quadratic_loss",
           "quadratic_loss_gradient", "population_loss", "augmented_loss", "augmented_loss_exact", "augmented_ray_loss", "eta_star",
           "eta_star_printed", "augmented_min_loss", "pe_moment", "pe_hessian", "pe_hessian_printed", "pe_loss"]

CONTEXTS = ("unitary", "orthogonal")


# ------------------------------------------------------------------------------ monomial structures

def _var_sign(k, context):
    if context == "unitary":
        return k, 1
    return k // 2, (1 if k % 2 == 0 else -1)


@functools.lru_cache(maxsize=256)
def _structure(d, T, context):
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


def _check_context(context, func):
    return check_choice(context, "context", CONTEXTS, func=func)


def _check_Cp(C, p, func, allow_complex=False):
    if allow_complex and np.iscomplexobj(np.asarray(C)):
        Cc = np.asarray(C, complex)
        if Cc.ndim != 2 or Cc.shape[0] != Cc.shape[1] or Cc.shape[0] == 0:
            raise ValueError(f"`C` of {func} must be a square (d, d) matrix; got shape {Cc.shape}")
        if not np.all(np.isfinite(Cc)):
            raise ValueError(f"`C` of {func} must be finite; got NaN or inf")
        C = Cc
    else:
        C = as_float_array(C, "C", func=func, ndim=2)
        if C.shape[0] != C.shape[1] or C.shape[0] == 0:
            raise ValueError(f"`C` of {func} must be a square (d, d) matrix; got shape {C.shape}")
    p = as_float_array(p, "p", func=func, ndim=1)
    if p.shape[0] < 2:
        raise ValueError(f"`p` of {func} must have length T >= 2 (the row P_(T-1, 1..T)); got length {p.shape[0]}")
    return C, p


def expected_loss(C, p, context="unitary", *, return_gradient=False):
    r"""Exact :math:`l_T(\mathbf C,p)` of the model (6.6) under Assumptions 6.2 and 2 (context length T = len(p)).

    Computed by merging the monomials of each output coordinate (exact expectation, not sampling); the
    unitary case agrees with :func:`quadratic_loss` (Prop. 6.8 as corrected).

    Parameters
    ----------
    C : array_like, shape (d, d)
        :math:`\mathbf C=\mathbf B^\top\mathbf A`; real, or complex (then no gradient).
    p : array_like, shape (T,)
        The row :math:`P_{T-1,1:T}`, T >= 2.
    context : {"unitary", "orthogonal"}
        :math:`\mathcal C_U` (d i.i.d. phases) or :math:`\mathcal C_O` (d even, conjugate pairs).
    return_gradient : bool
        Also return :math:`(\partial l/\partial\mathbf C,\partial l/\partial p)` (real C only).

    Examples
    --------
    >>> float(expected_loss([[0.5, 0.5], [0.5, 0.5]], [-1.0, 2.0], "orthogonal"))  # Lemma 6.10, T = 2
    0.0
    """
    func = "theory.icl.expected_loss"
    context = _check_context(context, func)
    C, p = _check_Cp(C, p, func, allow_complex=not return_gradient)
    d, T = C.shape[0], p.shape[0]
    if context == "orthogonal" and d % 2:
        raise ValueError(f"`C` of {func} must have even size d = 2δ for context='orthogonal'; got d = {d}")
    gid, target, n = _structure(d, T, context)
    if np.iscomplexobj(C):
        coef = np.zeros(n, complex)
        np.add.at(coef, gid.reshape(-1), (p[None, :, None] * C[:, None, :]).reshape(-1))
        coef[target] -= 1.0
        return float(np.sum(coef.real ** 2 + coef.imag ** 2))
    loss, gp, gC = _kernels.grouped_loss_grad(p, C, gid, target, n, return_gradient)
    check_finite_output(np.array([loss]), "the loss", func=func, hint="Use smaller `C` or `p`.")
    return (loss, gC, gp) if return_gradient else loss


def expected_loss_exact(C, p, context="unitary"):
    r""":math:`l_T(\mathbf C,p)` in exact rational arithmetic: entries of ``C`` and ``p`` as ints or
    :class:`fractions.Fraction` (floats are converted exactly); returns a ``Fraction``.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> expected_loss_exact([[F(1, 2), F(1, 2)], [F(1, 2), F(1, 2)]], [0, -1, 2], "orthogonal")
    Fraction(0, 1)
    """
    func = "theory.icl.expected_loss_exact"
    context = _check_context(context, func)
    try:
        Cf = [[Fraction(x) for x in row] for row in C]
        pf = [Fraction(x) for x in p]
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`C` and `p` of {func} must hold ints, Fractions or finite floats ({exc})") from None
    d, T = len(Cf), len(pf)
    if d == 0 or any(len(r) != d for r in Cf):
        raise ValueError(f"`C` of {func} must be a square (d, d) matrix")
    if T < 2:
        raise ValueError(f"`p` of {func} must have length T >= 2; got {T}")
    if context == "orthogonal" and d % 2:
        raise ValueError(f"`C` of {func} must have even size d = 2δ for context='orthogonal'; got d = {d}")
    gid, target, n = _structure(d, T, context)
    coef = [Fraction(0)] * n
    for i in range(d):
        for t in range(T):
            for j in range(d):
                coef[gid[i, t, j]] += pf[t] * Cf[i][j]
        coef[target[i]] -= 1
    return sum((c * c for c in coef), Fraction(0))


def quadratic_loss(C, p):
    r"""Closed form of :math:`l_T` for unitary contexts (Prop. 6.8 of the thesis, as corrected):
    :math:`\|p\|^2\|\mathbf C\|_F^2+p_{T-1}^2(S(\mathbf C^\top\mathbf C)-\|\mathbf C\|_F^2)-2\,\mathrm{Re\,Tr}(\mathbf C)p_T+d`,
    with :math:`S(\mathbf C^\top\mathbf C)=\|\mathbf C\mathbf 1\|^2`."""
    C, p = _check_Cp(C, p, "theory.icl.quadratic_loss", allow_complex=True)
    fro = float(np.sum(np.abs(C) ** 2))
    S = float(np.sum(np.abs(C.sum(axis=1)) ** 2))
    return float(p @ p * fro + p[-2] ** 2 * (S - fro) - 2.0 * np.trace(C).real * p[-1] + C.shape[0])


def printed_quadratic_loss(C, p):
    r"""Prop. 6.8 as printed in the thesis: :math:`\|p\|^2\|\mathbf C\|_F^2+p_{T-1}^2S(\mathbf C^\top\mathbf C)
    -2\mathrm{Tr}(\mathbf C)p_T+d` (it exceeds the exact loss by :math:`p_{T-1}^2\|\mathbf C\|_F^2`)."""
    C, p = _check_Cp(C, p, "theory.icl.printed_quadratic_loss", allow_complex=True)
    fro = float(np.sum(np.abs(C) ** 2))
    S = float(np.sum(np.abs(C.sum(axis=1)) ** 2))
    return float(p @ p * fro + p[-2] ** 2 * S - 2.0 * np.trace(C).real * p[-1] + C.shape[0])


def quadratic_loss_gradient(C, p):
    r"""Gradient of :func:`quadratic_loss` (real C):
    :math:`\partial_{\mathbf C}=2\|p\|^2\mathbf C+2p_{T-1}^2(\mathbf C\mathbf 1\mathbf 1^\top-\mathbf C)-2p_TI`,
    :math:`\partial_p=2\|\mathbf C\|_F^2p+2p_{T-1}(S-\|\mathbf C\|_F^2)e_{T-1}-2\mathrm{Tr}(\mathbf C)e_T`."""
    C, p = _check_Cp(C, p, "theory.icl.quadratic_loss_gradient")
    d = C.shape[0]
    fro = float(np.sum(C ** 2))
    row = C.sum(axis=1)
    S = float(row @ row)
    gC = 2 * (p @ p) * C + 2 * p[-2] ** 2 * (np.outer(row, np.ones(d)) - C) - 2 * p[-1] * np.eye(d)
    gp = 2 * fro * p
    gp[-2] += 2 * p[-2] * (S - fro)
    gp[-1] -= 2 * np.trace(C)
    return gC, gp


def population_loss(Amat, Bmat, P, Tmax=None, context="unitary", *, return_gradient=False):
    r"""The loss (6.3) of the model (6.6) under Assumptions 6.2 and 2:
    :math:`\ell(\mathbf A,\mathbf B,P)=\sum_{T=2}^{T_{\max}}l_T(\mathbf B^\top\mathbf A,P_{T-1,1:T})`.

    Parameters
    ----------
    Amat, Bmat : array_like, shape (H, d)
        Head diagonals stacked by rows (:math:`\mathbf A_{h,j}=a_h^j`).
    P : array_like, shape (Tmax, Tmax)
        Positional encoding; rows 1..Tmax-1 (1-based) and entries t <= T of row T-1 are used.
    Tmax : int, optional
        Largest context length, 2 <= Tmax <= P.shape[0]; default P.shape[0].
    context : {"unitary", "orthogonal"}
    return_gradient : bool
        Also return the gradients with respect to Amat, Bmat and P (zero on unused entries of P).
    """
    func = "theory.icl.population_loss"
    context = _check_context(context, func)
    Amat = as_float_array(Amat, "Amat", func=func, ndim=2)
    Bmat = as_float_array(Bmat, "Bmat", func=func, ndim=2)
    if Bmat.shape != Amat.shape:
        raise ValueError(f"`Bmat` of {func} must have the shape of `Amat`, (H, d) = {Amat.shape}; got {Bmat.shape}")
    P = as_float_array(P, "P", func=func, ndim=2)
    if P.shape[0] != P.shape[1] or P.shape[0] < 2:
        raise ValueError(f"`P` of {func} must be a square (Tmax, Tmax) matrix with Tmax >= 2; got {P.shape}")
    Tmax = P.shape[0] if Tmax is None else check_int(Tmax, "Tmax", func=func, minimum=2, maximum=P.shape[0])
    d = Amat.shape[1]
    if context == "orthogonal" and d % 2:
        raise ValueError(f"`Amat` of {func} must have an even number of columns d = 2δ for context='orthogonal'; "
                         f"got d = {d}")
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
    check_finite_output(np.array([total]), "the loss", func=func, hint="Use smaller parameters.")
    if not return_gradient:
        return total
    return total, Bmat @ gC, Amat @ gC.T, gP


# ------------------------------------------------------------------------------ augmented model (6.4)

@functools.lru_cache(maxsize=256)
def _aug_structure(d, T, s0):
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


def _aug_args(a, b, d, Tmax, s0, func):
    a = as_float_array(a, "a", func=func, shape=(4,))
    b = as_float_array(b, "b", func=func, shape=(2,))
    d = check_int(d, "d", func=func, minimum=1)
    Tmax = check_int(Tmax, "Tmax", func=func, minimum=2)
    check_choice(s0, "s0", S0_CONVENTIONS, func=func)
    return a, b, d, Tmax


def augmented_loss(a, b, d, Tmax, s0="inverse", *, return_gradient=False):
    r"""Exact loss (6.3) of the augmented model (6.4) under Assumptions 6.2 (unitary contexts) and 1
    (Lemma 6.13 of the thesis): parameters :math:`a=(a_1,a_2,a_3,a_4)`, :math:`b=(b_1,b_2)`.

    Parameters
    ----------
    a : array_like, shape (4,)
    b : array_like, shape (2,)
    d : int
        Token dimension, >= 1.
    Tmax : int
        Largest context length, >= 2 (the loss sums T = 2..Tmax).
    s0 : {"inverse", "zero"}
        The augmented token :math:`e_1=(0,s_1,s_0)` with :math:`s_0=W^{-1}s_1` (the thesis's computation in the
        proof of Prop. 6.5) or :math:`s_0=0`.
    return_gradient : bool
        Also return the gradients with respect to a and b.
    """
    func = "theory.icl.augmented_loss"
    a, b, d, Tmax = _aug_args(a, b, d, Tmax, s0, func)
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
    check_finite_output(np.array([loss]), "the loss", func=func)
    return (loss, ga, gb) if return_gradient else loss


def augmented_loss_exact(a, b, d, Tmax, s0="inverse"):
    """:func:`augmented_loss` in exact rational arithmetic (ints, Fractions or floats converted exactly)."""
    func = "theory.icl.augmented_loss_exact"
    af = [Fraction(x) for x in a]
    bf = [Fraction(x) for x in b]
    if len(af) != 4 or len(bf) != 2:
        raise ValueError(f"`a` and `b` of {func} must have lengths 4 and 2; got {len(af)} and {len(bf)}")
    d = check_int(d, "d", func=func, minimum=1)
    Tmax = check_int(Tmax, "Tmax", func=func, minimum=2)
    check_choice(s0, "s0", S0_CONVENTIONS, func=func)
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


def augmented_ray_loss(eta, d, T, s0="inverse"):
    r"""Exact loss of the augmented model at one context length T along the ray :math:`a_3b_1=\eta` (the other
    parameters 0): :math:`d\,(\eta^2\sum_gn_g^2-2\eta\sum_gn_g\delta_g+1)` from integer moment counts. With
    ``s0="inverse"`` this is :math:`d(\eta^2(T^2+(d-1)T)-2\eta T+1)` (proof of Prop. 6.5)."""
    func = "theory.icl.augmented_ray_loss"
    eta = check_interval(eta, "eta", -np.inf, np.inf, func=func)
    d = check_int(d, "d", func=func, minimum=1)
    T = check_int(T, "T", func=func, minimum=2)
    check_choice(s0, "s0", S0_CONVENTIONS, func=func)
    a, b, c = _ray_counts(d, T, s0)
    return float(d * (eta * eta * b - 2.0 * eta * a + c))


def eta_star(d, Tmax, s0="inverse"):
    r"""The exact minimiser :math:`\eta^*` of the augmented loss along :math:`a_3b_1=\eta` (other parameters 0),
    a ``Fraction`` computed from integer moment counts (:math:`\mathbb E[z^a\bar z^b]=\delta_{ab}`).

    With ``s0="inverse"`` it equals Prop. 6.5's
    :math:`\sum_{T=2}^{T_{\max}}T/\sum_{T=2}^{T_{\max}}(T^2+(d-1)T)`; with ``s0="zero"`` (every context sum loses
    its t = 1 term) it is :math:`\sum_T(T-1)/\sum_T((T-1)^2+(d-1)(T-1))`.

    Examples
    --------
    >>> eta_star(2, 4), eta_star(2, 4, "zero")
    (Fraction(9, 38), Fraction(3, 10))
    """
    func = "theory.icl.eta_star"
    d = check_int(d, "d", func=func, minimum=1)
    Tmax = check_int(Tmax, "Tmax", func=func, minimum=2)
    check_choice(s0, "s0", S0_CONVENTIONS, func=func)
    num, den, _ = _eta_counts(d, Tmax, s0)
    return Fraction(num, den)


def augmented_min_loss(d, Tmax, s0="inverse"):
    r"""The loss at :math:`\eta^*` (a ``Fraction``): :math:`\sum\delta-(\sum n\delta)^2/\sum n^2` over merged
    monomials; for ``s0="inverse"`` it is :math:`d[(T_{\max}-1)-(\sum_TT)^2/\sum_T(T^2+(d-1)T)]`."""
    func = "theory.icl.augmented_min_loss"
    d = check_int(d, "d", func=func, minimum=1)
    Tmax = check_int(Tmax, "Tmax", func=func, minimum=2)
    check_choice(s0, "s0", S0_CONVENTIONS, func=func)
    num, den, const = _eta_counts(d, Tmax, s0)
    return Fraction(const) - Fraction(num * num, den)


def eta_star_printed(d, Tmax):
    r"""Prop. 6.5's formula :math:`\sum_{T=2}^{T_{\max}}T/\sum_{T=2}^{T_{\max}}(T^2+(d-1)T)` as a ``Fraction``."""
    func = "theory.icl.eta_star_printed"
    d = check_int(d, "d", func=func, minimum=1)
    Tmax = check_int(Tmax, "Tmax", func=func, minimum=2)
    Ts = range(2, Tmax + 1)
    return Fraction(sum(Ts), sum(T * T + (d - 1) * T for T in Ts))


# ------------------------------------------------------------------------------ PE-only problem (6.7)

def _check_mu(mu, func):
    return check_interval(mu, "mu", 1.0, np.inf, func=func, closed="left")


def pe_moment(k, mu):
    r"""Exact :math:`\mathbb E[\lambda^{2k}]` for :math:`\lambda=e^{i\theta/\mu}`, :math:`\theta\sim\mathcal U(0,2\pi)`:
    :math:`(e^{ix}-1)/(ix)` with :math:`x=4\pi k/\mu` (1 at k = 0). ``k`` an int or integer array."""
    func = "theory.icl.pe_moment"
    mu = _check_mu(mu, func)
    k = np.asarray(k)
    if k.dtype.kind not in "iu":
        raise TypeError(f"`k` of {func} must be an integer or integer array; got dtype {k.dtype}")
    x = 4.0 * np.pi * k / mu
    out = np.ones(k.shape, complex)
    nz = k != 0
    out[nz] = np.expm1(1j * x[nz]) / (1j * x[nz])
    return out if out.ndim else complex(out)


def pe_hessian(T, mu):
    r"""The matrix H of the quadratic form :math:`l(p)=(p-e_T)^\top H(p-e_T)` of (6.7) (Prop. 6.12 with the sine
    argument as corrected): :math:`H_{t,t'}=\frac{\mu}{4\pi(t'-t)}\sin\frac{4\pi(t'-t)}{\mu}`, :math:`H_{tt}=1`.
    The Hessian of l is 2H."""
    func = "theory.icl.pe_hessian"
    T = check_int(T, "T", func=func, minimum=1)
    mu = _check_mu(mu, func)
    k = np.arange(T)[None, :] - np.arange(T)[:, None]
    return np.sinc(4.0 * k / mu)


def pe_hessian_printed(T, mu):
    r"""Prop. 6.12 as printed: :math:`\frac{\mu}{4\pi(t'-t)}\sin(4(t'-t))\frac{\pi}{\mu}=\frac{\sin(4(t'-t))}{4(t'-t)}`
    (1 on the diagonal); it does not depend on μ."""
    func = "theory.icl.pe_hessian_printed"
    T = check_int(T, "T", func=func, minimum=1)
    mu = _check_mu(mu, func)
    k = (np.arange(T)[None, :] - np.arange(T)[:, None]).astype(float)
    out = np.ones((T, T))
    nz = k != 0
    out[nz] = mu / (4 * np.pi * k[nz]) * np.sin(4 * k[nz]) * np.pi / mu
    return out


def pe_loss(p, mu):
    r"""Exact :math:`l(p)=\mathbb E|\sum_{t=1}^Tp_t\lambda^{2t-T}-\lambda^T|^2` of (6.7), :math:`\lambda\sim\mathcal W(\mu)`."""
    func = "theory.icl.pe_loss"
    p = as_float_array(p, "p", func=func, ndim=1, min_size=1)
    mu = _check_mu(mu, func)
    q = p.copy()
    q[-1] -= 1.0
    return float(q @ pe_hessian(p.shape[0], mu) @ q)
