r"""Momentum ResNets and their linear second-order limit (Sander's thesis, chapter 4).

Discrete model, Eq. (4.2) of the thesis: with a momentum term gamma in [0, 1],

    v_{n+1} = gamma v_n + (1 - gamma) f(x_n, theta_n),    x_{n+1} = x_n + v_{n+1},

and its inverse, Eq. (4.3): x_n = x_{n+1} - v_{n+1}, v_n = (v_{n+1} - (1 - gamma) f(x_n, theta_n)) / gamma.

Continuous linear model, Eq. (4.7): eps x'' + x' = theta x on [0, 1] with x(0) = x_0, x'(0) = 0,
whose time-1 map is Psi_eps(theta) (Prop. 4.3). The scalar range of Psi_eps is [lambda_eps, +inf)
(Sec. 4.4.3), and Thm 4.4 characterises the matrices D, diagonalizable over C, with D = Psi_eps(theta)
for a real theta.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import scipy.linalg
import scipy.optimize

from .. import _alloc
from .._finite import all_finite
from .._validation import as_float_array, check_finite_output, check_interval, check_memory
from ..resnet._residuals import resolve_residual
from . import _kernels

__all__ = ["forward", "inverse", "gradient", "psi", "psi_series", "lambda_eps", "representable", "preimage", "residual_f"]

_HINT = "Reduce the weights or the input."


def _prepare(func, x, x_name, v, v_name, theta, residual, gamma, *, inverse=False, gamma_open=None,
             finite_theta=True, depth=None):
    res = resolve_residual(residual, func)
    x = as_float_array(x, x_name, func=func, ndim=(1, 2))
    if x.shape[-1] < 1 or x.size == 0:
        raise ValueError(f"`{x_name}` of {func} must have d >= 1 and at least one row; got shape {x.shape}.")
    single = x.ndim == 1
    xb = np.ascontiguousarray(x.reshape(1, -1) if single else x)
    B, d = xb.shape
    if gamma_open is None:
        gamma_open = inverse
    if gamma_open:
        gamma = check_interval(gamma, "gamma", 0.0, 1.0, func=func, closed="right")
    else:
        gamma = check_interval(gamma, "gamma", 0.0, 1.0, func=func, closed="both")
    pshape = res.param_shape(d)
    theta = as_float_array(theta, "theta", func=func, finite=finite_theta)
    if theta.ndim != 1 + len(pshape) or theta.shape[1:] != pshape or theta.shape[0] < 1:
        want = "(N, " + ", ".join(str(p) for p in pshape) + ")"
        raise ValueError(f"`theta` of {func} must have shape {want} with N >= 1 for the {res.name!r} residual "
                         f"with d = {d} from `{x_name}`; got {theta.shape}.")
    N = theta.shape[0]
    if depth is not None:
        if isinstance(depth, (bool, np.bool_)) or not isinstance(depth, (int, np.integer)) or depth < 1:
            raise ValueError(f"`depth` of {func} must be a positive integer (the number of layers sharing the "
                             f"single slice of `theta`); got {depth!r}.")
        if N != 1:
            raise ValueError(f"`depth` of {func} ties the weights: `theta` must then hold one slice, shape (1, "
                             f"{', '.join(str(p) for p in pshape)}); got {theta.shape}.")
        N = int(depth)
    check_memory(16 * (N + 1) * B * d, "theta", N, func=func, hint=f"Two trajectories of shape ({N + 1}, {B}, {d}).")
    th = np.ascontiguousarray(theta.reshape(theta.shape[0], -1))
    if not finite_theta and isinstance(v, str) and not all_finite(th[0]):
        raise ValueError(f"`theta` of {func} must be finite; got NaN or inf in layer 0.")
    work = np.empty((3 + d + 2 * B, max(res.width, d)))  # the scratch layout of theory.resnet._kernels
    fbuf = np.empty((B, d))
    if isinstance(v, str) and not inverse:
        if v != "f":
            raise ValueError(f"`{v_name}` of {func} must be an array, None (zero) or 'f' (v0 = f(x0, theta_0)); "
                             f"got {v!r}.")
        vb = np.empty((B, d))
        _kernels._residual_eval(res.code, res.width, xb, th[0], vb, work)
    elif v is None and not inverse:
        vb = np.zeros((B, d))
    else:
        vv = as_float_array(v, v_name, func=func, ndim=(x.ndim,))
        if vv.shape != x.shape:
            raise ValueError(f"`{v_name}` of {func} must have the shape of `{x_name}`, {x.shape}; got {vv.shape}.")
        vb = np.ascontiguousarray(vv.reshape(B, d))
    return res, xb, vb, th, gamma, single, work, fbuf, N


def _run(kernel, func, x, x_name, v, v_name, theta, residual, gamma, inverse, depth):
    res, xb, vb, th, gamma, single, work, fbuf, N = _prepare(func, x, x_name, v, v_name, theta, residual, gamma,
                                                             inverse=inverse, finite_theta=False, depth=depth)
    B, d = xb.shape
    xs = _alloc.empty((N + 1, B, d))  # written once by the kernel: huge-page aligned, fewer page faults
    vs = _alloc.empty((N + 1, B, d))
    nonfinite = np.zeros(1, dtype=np.int64)
    bad = kernel(res.code, res.width, xb, vb, th, gamma, xs, vs, fbuf, work, True, nonfinite)
    if bad >= 0:
        raise ValueError(f"`theta` of {func} must be finite; got NaN or inf in layer {bad}.")
    if nonfinite[0]:  # counted by the kernel as it wrote them; the messages name what overflowed
        check_finite_output(xs, "the positions", func=func, hint=_HINT)
        check_finite_output(vs, "the velocities", func=func, hint=_HINT)
    if single:
        return xs[:, 0, :], vs[:, 0, :]
    return xs, vs


def forward(x0, v0, theta, residual, gamma, *, depth=None):
    r"""Trajectory of a Momentum ResNet, Eq. (4.2) of the thesis (chapter 4).

    :math:`v_{n+1} = \gamma v_n + (1-\gamma) f(x_n, \theta_n)`, :math:`x_{n+1} = x_n + v_{n+1}`;
    gamma = 0 is the ResNet (4.1) and gamma = 1 leaves v constant.

    Parameters
    ----------
    x0 : array_like, shape (d,) or (B, d)
    v0 : array_like of the shape of x0, None (zero velocity) or ``"f"`` (v0 = f(x0, theta_0), the
        initial velocity of Prop. 4.2)
    theta : array_like, shape ``(N, *P)``
        One parameter slice per layer, in the layouts of :mod:`theory.resnet` (P = (d, d) for
        ``"linear"``, ``"tanh"``, ``"tanh_out"``; (2dm + m,) for :func:`theory.resnet.mlp`).
    residual : str or theory.resnet.Residual
    gamma : float in [0, 1]
    depth : int, optional
        Tied weights (as in Fig. 4.1 and Sec. 4.3.2 of the thesis): ``theta`` holds one slice, shape ``(1, *P)``,
        shared by ``depth`` layers. Default: N = theta.shape[0] layers.

    Returns
    -------
    (xs, vs) : two arrays of shape (N + 1, d) or (N + 1, B, d)

    Examples
    --------
    >>> import numpy as np
    >>> xs, vs = forward([1.0], None, np.full((2, 1, 1), -1.0), "linear", 0.5)
    >>> xs[:, 0].tolist(), vs[:, 0].tolist()
    ([1.0, 0.5, 0.0], [0.0, -0.5, -0.5])
    """
    return _run(_kernels.momentum_forward, "theory.momentum.forward", x0, "x0", v0, "v0", theta, residual, gamma,
                False, depth)


def inverse(xN, vN, theta, residual, gamma, *, depth=None):
    r"""Reconstruct a Momentum ResNet's trajectory from its output, Eq. (4.3) of the thesis.

    :math:`x_n = x_{n+1} - v_{n+1}`, then :math:`v_n = (v_{n+1} - (1-\gamma) f(x_n,\theta_n))/\gamma`
    for n = N-1, ..., 0. In floating point the division by gamma multiplies the rounding errors by up
    to gamma^{-N} (the thesis avoids it with exact fixed-point multiplication, App. 4.C); gamma = 0 has
    no inverse and is refused.

    ``depth`` ties the weights as in :func:`forward`.

    Returns
    -------
    (xs, vs) : two arrays of shape (N + 1, d) or (N + 1, B, d), with xs[N] = xN, vs[N] = vN.
    """
    return _run(_kernels.momentum_inverse, "theory.momentum.inverse", xN, "xN", vN, "vN", theta, residual, gamma,
                True, depth)


def gradient(x0, v0, theta, residual, gamma, y, method="backprop"):
    r"""Loss L = 1/2 sum_b ||x_N[b] - y[b]||^2 of a Momentum ResNet and its gradients.

    ``method="backprop"`` stores the trajectory of (4.2) (memory growing like N B d) and backpropagates
    through it; ``method="memory_free"`` keeps only (x_N, v_N) and rebuilds each (x_n, v_n) backwards
    with the inverse (4.3) while backpropagating (the memory-free training of Sec. 4.3.2 and App. 4.E of
    the thesis): its memory does not grow with N. In floating point the rebuilt activations carry the
    rounding errors of (4.3), amplified by up to gamma^{-N}; gamma = 0 is refused for that method.

    Parameters
    ----------
    x0, v0, theta, residual, gamma
        As in :func:`forward` (v0 an array or None; the gradient treats it as an input).
    y : array_like of the shape of x0
        Targets.
    method : {"backprop", "memory_free"}

    Returns
    -------
    (loss, dtheta, dx0, dv0) : float and arrays of the shapes of theta, x0 and x0.
    """
    func = "theory.momentum.gradient"
    if method not in ("backprop", "memory_free"):
        raise ValueError(f"`method` of {func} must be 'backprop' or 'memory_free'; got {method!r}.")
    if isinstance(v0, str):
        raise ValueError(f"`v0` of {func} must be an array or None; got {v0!r}.")
    res, xb, vb, th, gamma, single, work, fbuf, _ = _prepare(func, x0, "x0", v0, "v0", theta, residual, gamma,
                                                             gamma_open=method == "memory_free")
    x_in = np.asarray(x0)
    yy = as_float_array(y, "y", func=func, shape=x_in.shape)
    yb = np.ascontiguousarray(yy.reshape(xb.shape))
    N, (B, d) = th.shape[0], xb.shape
    gtheta = np.zeros_like(th)
    tmp, jx = np.empty((B, d)), np.empty((B, d))
    if method == "backprop":
        xs = _alloc.empty((N + 1, B, d))
        vs = _alloc.empty((N + 1, B, d))
        _kernels.momentum_forward(res.code, res.width, xb, vb, th, gamma, xs, vs, fbuf, work, False,
                                  np.zeros(1, dtype=np.int64))
        xN, vN = xs[N], vs[N]
        check_finite_output(xN, "the output", func=func, hint=_HINT)
        gx = xN - yb
        gv = np.zeros((B, d))
        loss = 0.5 * float(np.sum(gx * gx))
        _kernels.momentum_backprop(res.code, res.width, xs, th, gamma, gx, gv, gtheta, tmp, jx, work)
    else:
        x, v = xb.copy(), vb.copy()
        _kernels.momentum_last(res.code, res.width, x, v, th, gamma, fbuf, work)
        check_finite_output(x, "the output", func=func, hint=_HINT)
        gx = x - yb
        gv = np.zeros((B, d))
        loss = 0.5 * float(np.sum(gx * gx))
        _kernels.momentum_memory_free(res.code, res.width, x, v, th, gamma, gx, gv, gtheta, tmp, jx, fbuf, work)
    for arr, what in ((gtheta, "dtheta"), (gx, "dx0"), (gv, "dv0")):
        check_finite_output(arr, what, func=func, hint=_HINT)
    shape = x_in.shape
    return loss, gtheta.reshape(np.shape(theta)), gx.reshape(shape), gv.reshape(shape)


def residual_f(x, theta_n, residual):
    """f(x, theta_n) of one layer for the families of :mod:`theory.resnet` (x of shape (d,) or (B, d))."""
    func = "theory.momentum.residual_f"
    res = resolve_residual(residual, func)
    x = as_float_array(x, "x", func=func, ndim=(1, 2))
    xb = np.ascontiguousarray(x.reshape(1, -1) if x.ndim == 1 else x)
    B, d = xb.shape
    th = as_float_array(theta_n, "theta_n", func=func, shape=res.param_shape(d))
    out = np.empty((B, d))
    _kernels._residual_eval(res.code, res.width, xb, np.ascontiguousarray(th.reshape(-1)), out,
                            np.empty((3 + d + B, max(res.width, d))))
    return out[0] if x.ndim == 1 else out


# ------------------------------------------------------------------ the linear second-order model

def _check_eps(eps, func, *, positive=False):
    return check_interval(eps, "eps", 0.0, math.inf, func=func, closed="neither" if positive else "left")


def _square(D, name, func):
    D = as_float_array(D, name, func=func, ndim=(2,))
    if D.shape[0] != D.shape[1] or D.shape[0] < 1:
        raise ValueError(f"`{name}` of {func} must be a square matrix (d, d) with d >= 1; got shape {D.shape}.")
    return D


def psi(theta, eps):
    r"""Psi_eps(theta), the time-1 map of eps x'' + x' = theta x, x'(0) = 0 (Prop. 4.3 of the thesis, ch. 4).

    Computed as the top-left d x d block of exp([[0, I], [theta/eps, -I/eps]]) (the phase-space form
    of Eq. (4.7) used in the proof of Prop. 4.3); eps = 0 gives exp(theta), the first-order model (4.8).
    The series of Prop. 4.3 is :func:`psi_series`.

    Parameters
    ----------
    theta : array_like, shape (d, d)
    eps : float >= 0

    Examples
    --------
    >>> import numpy as np
    >>> round(float(psi([[-np.pi ** 2 - 0.25]], 1.0)[0, 0]), 12) == round(-float(np.exp(-0.5)), 12)
    True
    """
    func = "theory.momentum.psi"
    th = _square(theta, "theta", func)
    eps = _check_eps(eps, func)
    d = th.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        if eps == 0.0:
            out = scipy.linalg.expm(th)
        else:
            A = np.zeros((2 * d, 2 * d))
            A[:d, d:] = np.eye(d)
            A[d:, :d] = th / eps
            A[d:, d:] = -np.eye(d) / eps
            out = scipy.linalg.expm(A)[:d, :d]
    return check_finite_output(np.ascontiguousarray(out), "Psi_eps(theta)", func=func,
                               hint="Reduce the norm of theta or increase eps.")


def psi_series(theta, eps, terms=80):
    r"""The series of Prop. 4.3: e^{-1/(2 eps)} sum_n (1/(2n)! + 1/(2 eps (2n+1)!)) M^n, M = theta/eps + I/(4 eps^2).

    An independent evaluation of :func:`psi` for eps > 0 of moderate size (the terms grow like
    ||M||^n / (2n)!, so small eps loses accuracy to cancellation).
    """
    func = "theory.momentum.psi_series"
    th = _square(theta, "theta", func)
    eps = _check_eps(eps, func, positive=True)
    if not isinstance(terms, int) or terms < 1:
        raise ValueError(f"`terms` of {func} must be a positive integer; got {terms!r}.")
    d = th.shape[0]
    M = th / eps + np.eye(d) / (4 * eps * eps)
    total = np.zeros((d, d))
    P = np.eye(d)
    f2n = 1.0  # (2n)!
    with np.errstate(over="ignore", invalid="ignore"):
        for n in range(terms):
            if n:
                P = P @ M
                f2n *= (2 * n - 1) * (2 * n)
            total += (1.0 / f2n + 1.0 / (2 * eps * f2n * (2 * n + 1))) * P
        out = math.exp(-0.5 / eps) * total
    return check_finite_output(out, "the series", func=func, hint="Reduce theta or the number of terms.")


def _G(alpha, eps):
    """G_eps(alpha) = e^{-1/(2 eps)} (cos alpha + sin alpha / (2 eps alpha)) = f_eps(-alpha^2)."""
    return math.exp(-0.5 / eps) * (math.cos(alpha) + math.sin(alpha) / (2 * eps * alpha))


def lambda_eps(eps):
    r"""(lambda_eps, alpha*): the minimum of G_eps(alpha) = e^{-1/(2eps)}(cos a + sin a / (2 eps a)) and its argmin.

    Sec. 4.4.3 and the proof of Thm 4.4 (thesis, ch. 4): Psi_eps maps the real line onto
    [lambda_eps, +inf). The minimum lies at the first critical point after pi, the root in
    (pi, 3 pi / 2) of G'(a) = 0, i.e. of a^2 sin a (2 eps) = a cos a - sin a; it is attained at the
    real theta* = -eps alpha*^2 - 1/(4 eps). eps must be > 0 (for eps = 0, exp(R) = (0, inf) has no
    minimum).
    """
    func = "theory.momentum.lambda_eps"
    eps = _check_eps(eps, func, positive=True)

    def dG(a):
        return -math.sin(a) + (a * math.cos(a) - math.sin(a)) / (2 * eps * a * a)

    alpha = scipy.optimize.brentq(dG, math.pi, 1.5 * math.pi, xtol=1e-15, rtol=4 * np.finfo(float).eps,
                                  maxiter=200)
    return _G(alpha, eps), alpha


# f_eps(z) = Psi_eps(eps z - 1/(4 eps)) = F_eps(sqrt z), F_eps(s) = e^{-1/(2eps)} (cosh s + sinh s / (2 eps s))

def _F(s, eps):
    """F_eps(s), written as (e^{s-c}(1 + 1/(2 eps s)) + e^{-s-c}(1 - 1/(2 eps s))) / 2 with c = 1/(2 eps),
    which stays finite for large s and small eps; inf where it leaves the float range."""
    c = 0.5 / eps
    s = complex(s)
    if abs(s) < 1e-8:
        return complex(math.exp(-c) * (1 + 1 / (2 * eps)))
    if abs(s.real) - c > 700:
        return complex(math.inf, 0.0)
    k = 1.0 / (2 * eps * s)
    return 0.5 * (cmath.exp(s - c) * (1 + k) + cmath.exp(-s - c) * (1 - k))


def _dF(s, eps):
    """F_eps'(s) in the same stable form."""
    c = 0.5 / eps
    s = complex(s)
    if abs(s) < 1e-8:
        return s * math.exp(-c) * (1 + 1 / (6 * eps))
    if abs(s.real) - c > 700:
        return complex(math.inf, 0.0)
    k1 = 1.0 / (2 * eps * s)
    k2 = k1 / s
    return 0.5 * (cmath.exp(s - c) * (1 + k1 - k2) + cmath.exp(-s - c) * (-1 + k1 + k2))


def _f_real(x, eps):
    """f_eps(x) for real x (x >= 0: F(sqrt x); x < 0: G(sqrt(-x)))."""
    if x >= 0:
        return _F(math.sqrt(x), eps).real
    return _G(math.sqrt(-x), eps)


def _solve_real(t, eps, lam, alpha):
    """The real z >= -alpha^2 with f_eps(z) = t >= lambda_eps (f_eps increases there)."""
    lo = -alpha * alpha
    if t <= lam:
        return lo
    hi = 1.0
    while _f_real(hi, eps) < t:
        hi *= 2.0
        if hi > 1e12:
            raise ValueError(f"an eigenvalue {t} is too large to be represented in float64 at eps = {eps}.")
    return scipy.optimize.brentq(lambda z: _f_real(z, eps) - t, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)


def _solve_complex(w, eps, need_nonreal):
    """A complex z with f_eps(z) = w (Lemma 4.5: f_eps is onto C), non-real when ``need_nonreal``."""
    c = 0.5 / eps
    target = complex(w)
    # cosh dominates F_eps for large |s|: start from acosh(w e^c) (its logarithmic form when e^c overflows)
    base = cmath.acosh(target * math.exp(c)) if c < 700 else cmath.log(2 * target) + c
    starts = [base, base + 0.3j, base + 0.3]
    for r in (0.5, 1.0, 2.0, 4.0):
        for k in (1, 3):
            starts.append(complex(r, k * math.pi))
    tol = 1e-13 * max(1.0, abs(target))
    for s in starts:
        if abs(s) < 1e-6:
            s += 0.1 + 0.1j
        for _ in range(200):
            Fs = _F(s, eps) - target
            if abs(Fs) <= tol:
                break
            dF = _dF(s, eps)
            if dF == 0 or not cmath.isfinite(dF) or not cmath.isfinite(Fs):
                break
            step = Fs / dF
            if abs(step) > 2.0:
                step *= 2.0 / abs(step)
            s = s - step
        if cmath.isfinite(_F(s, eps)) and abs(_F(s, eps) - target) <= tol:
            z = s * s
            if not need_nonreal or abs(z.imag) > 1e-6:
                return z
    raise ValueError(f"no complex preimage of {w} under f_eps was found at eps = {eps}.")


def _eig_blocks(D, func):
    vals, vecs = np.linalg.eig(D)
    scale = max(1.0, float(np.max(np.abs(vals))))
    cond = np.linalg.cond(vecs)
    if not np.isfinite(cond) or cond > 1e10:
        raise ValueError(f"`D` of {func} must be diagonalizable over C (Thm 4.4 of the thesis, ch. 4, treats "
                         f"that case); its eigenvector matrix has condition number {cond:.3g}.")
    return vals, vecs, scale


def _real_clusters(values, tol):
    values = sorted(values)
    clusters = []
    for x in values:
        if clusters and abs(x - clusters[-1][-1]) <= tol:
            clusters[-1].append(x)
        else:
            clusters.append([x])
    return clusters


def representable(D, eps):
    r"""Whether D = Psi_eps(theta) for a real theta, D diagonalizable over C (Thm 4.4 of the thesis, ch. 4).

    eps > 0: every real eigenvalue of D below lambda_eps has even multiplicity. eps = 0 (first-order
    flows, D = exp(theta), Culver's criterion as quoted in Sec. 4.4.3): D is nonsingular and every
    negative eigenvalue has even multiplicity. Eigenvalues within 1e-8 ``max(1, |Sp D|)`` of each other
    count as equal; a D whose eigenvector matrix has condition number above 1e10 is refused as not
    diagonalizable.
    """
    func = "theory.momentum.representable"
    D = _square(D, "D", func)
    eps = _check_eps(eps, func)
    vals, _, scale = _eig_blocks(D, func)
    tol = 1e-8 * scale
    real = [float(v.real) for v in vals if v.imag == 0.0]
    if eps == 0.0:
        if np.any(np.abs(vals) <= tol):
            return False
        threshold = 0.0
    else:
        threshold = lambda_eps(eps)[0]
    bad = [x for x in real if x < threshold - tol]
    return all(len(c) % 2 == 0 for c in _real_clusters(bad, tol))


def preimage(D, eps):
    r"""A real theta with Psi_eps(theta) = D (constructive direction of Thm 4.4 of the thesis, ch. 4).

    Writes D = Q B Q^{-1} with B real block-diagonal (1 x 1 blocks for real eigenvalues, 2 x 2 blocks
    [[a, b], [-b, a]] for a complex pair a +- ib or for a pair of equal real eigenvalues below
    lambda_eps), solves f_eps(z) = lambda per block (f_eps(z) = Psi_eps(eps z - 1/(4 eps)); a real z on
    the increasing branch z >= -alpha*^2 for a real lambda >= lambda_eps, a non-real z otherwise,
    which exists by Lemma 4.5) and returns theta = eps Q X Q^{-1} - I / (4 eps). eps = 0 uses a real
    logarithm instead. Raises ValueError when D is not representable (see :func:`representable`).
    """
    func = "theory.momentum.preimage"
    D = _square(D, "D", func)
    eps = _check_eps(eps, func)
    if not representable(D, eps):
        raise ValueError(f"`D` of {func} is not representable at eps = {eps}: a real eigenvalue below "
                         f"{'0' if eps == 0 else 'lambda_eps'} has odd multiplicity, or D is singular at eps = 0 "
                         f"(Thm 4.4 of the thesis, ch. 4).")
    vals, vecs, scale = _eig_blocks(D, func)
    tol = 1e-8 * scale
    d = D.shape[0]
    if eps > 0:
        lam, alpha = lambda_eps(eps)
        threshold = lam
    else:
        threshold = 0.0
    cols, blocks = [], []

    def solve(w, need_nonreal):
        if eps == 0.0:
            return cmath.log(w)
        return _solve_complex(w, eps, need_nonreal)

    low_real = []
    for k, v in enumerate(vals):
        if v.imag > 0:
            p = vecs[:, k]
            z = solve(complex(v), False)
            cols += [p.real, p.imag]
            blocks.append(np.array([[z.real, z.imag], [-z.imag, z.real]]))
        elif v.imag == 0.0:
            x = float(v.real)
            if x < threshold - tol:
                low_real.append((x, vecs[:, k].real))
            else:
                z = math.log(x) if eps == 0.0 else _solve_real(max(x, threshold), eps, lam, alpha)
                cols.append(vecs[:, k].real)
                blocks.append(np.array([[z]]))
    low_real.sort(key=lambda t: t[0])
    for i in range(0, len(low_real), 2):
        (x1, p1), (x2, p2) = low_real[i], low_real[i + 1]
        z = solve(0.5 * (x1 + x2), True)
        cols += [p1, p2]
        blocks.append(np.array([[z.real, z.imag], [-z.imag, z.real]]))
    Q = np.column_stack(cols)
    X = scipy.linalg.block_diag(*blocks)
    QX = Q @ X
    theta = np.linalg.solve(Q.T, QX.T).T  # Q X Q^{-1}
    if eps > 0:
        theta = eps * theta - np.eye(d) / (4 * eps)
    return check_finite_output(np.ascontiguousarray(theta), "theta", func=func)
