r"""Numba kernels of the scaled ResNets of ``scaling`` (Marion et al., model (4), Table 1).

Private: float64 C-contiguous arrays and plain scalars only, no validation, no defaults, no
allocation. The validated interface is :mod:`theory.scaling._api`.

One layer, with :math:`\alpha = \alpha_L` and the weights of layer k + 1 at index k:

.. math:: h_{k+1} = h_k + \alpha\, V_{k+1}\, \sigma(z_k), \qquad
          z_k = h_k \ \text{(res-1)}, \quad z_k = W_{k+1} h_k \ \text{(res-2, res-3)},

with res-3 called with ``act = RELU``. Shapes: ``V``, ``W`` are ``(L, d, d)`` (``W`` unused and
possibly empty for res-1); a batch of states is ``(B, d)``; a stored trajectory is
``(L + 1, B, d)``. Every batch row goes through the same scalar loops as a single input, so a batch
equals the stack of single calls bit for bit.

Activations (``act`` codes) and the derivative convention (the left derivative at the kink, as in
PyTorch: ReLU'(0) = 0, leaky'(0) = s):

====  ==========  =====================  ======================
code  name        sigma(x)               sigma'(x)
====  ==========  =====================  ======================
0     relu        max(x, 0)              1{x > 0}
1     leaky_relu  x_+ + s x_-            1{x > 0} + s 1{x <= 0}
2     identity    x                      1
3     tanh        tanh x                 1 - tanh(x)^2
====  ==========  =====================  ======================

NaN propagates through every activation and derivative (``relu(nan)`` is nan, not 0), so an
overflow inside a product W h is never hidden; the API checks every output for finiteness.
Kernels that renormalise return a status: ``OK``; ``ZERO_NORM`` (a state or co-state became exactly
zero); ``NON_FINITE`` (it overflowed).
"""

import numpy as np
from numba import njit

from .._tanh import tanh

RES1, RES2, RES3 = 0, 1, 2
RELU, LEAKY_RELU, IDENTITY, TANH = 0, 1, 2, 3
OK, ZERO_NORM, NON_FINITE = 0, 1, 2

# Compilation flags shared with theory.resnet: error_model="numpy" (IEEE inf/nan instead of a Python
# ZeroDivisionError), fastmath={"contract"} only (fused multiply-add; NaN/inf semantics kept).
_JIT = {"cache": True, "error_model": "numpy", "fastmath": {"contract"}}


@njit(**_JIT, inline="always")
def _sigma(act, slope, x):
    """sigma(x) for the activation code ``act`` (NaN in, NaN out)."""
    if act == RELU:
        return 0.0 if x <= 0.0 else x
    if act == LEAKY_RELU:
        return slope * x if x <= 0.0 else x
    if act == IDENTITY:
        return x
    return tanh(x)


@njit(**_JIT, inline="always")
def _dsigma(act, slope, x):
    """sigma'(x), left derivative at 0 (NaN in, NaN out)."""
    if act == IDENTITY:
        return 1.0
    if act == TANH:
        t = tanh(x)
        return 1.0 - t * t
    if x > 0.0:
        return 1.0
    if x <= 0.0:
        return 0.0 if act == RELU else slope
    return x  # NaN


@njit(**_JIT, inline="always")
def _preactivation(arch, k, W, hb, z):
    """z = h (res-1) or z = W_{k+1} h (res-2, res-3), by row dot products."""
    d = hb.shape[0]
    if arch == RES1:
        for j in range(d):
            z[j] = hb[j]
    else:
        Wk = W[k]
        for i in range(d):
            s = 0.0
            for j in range(d):
                s += Wk[i, j] * hb[j]
            z[i] = s


@njit(**_JIT, inline="always")
def _renormalise(x):
    """Divide x by its Euclidean norm in place; return (status, log norm). Scaled: no overflow."""
    m = 0.0
    for i in range(x.shape[0]):
        a = abs(x[i])
        if not (a <= m):  # also catches NaN
            m = a
    if not (m < np.inf):
        return NON_FINITE, 0.0
    if m == 0.0:
        return ZERO_NORM, 0.0
    ss = 0.0
    for i in range(x.shape[0]):
        r = x[i] / m
        ss += r * r
    nrm = m * np.sqrt(ss)
    for i in range(x.shape[0]):
        x[i] /= nrm
    return OK, np.log(nrm)


@njit(**_JIT)
def _forward(arch, act, slope, alpha, V, W, h, traj, logs, logn, z, normalize):
    r"""Run the L layers on the batch ``h`` (B, d) in place: h_0 on entry, h_L on exit.

    ``traj`` is ``(L + 1, B, d)`` to store h_0 .. h_L (row 0 is written from ``h``), or
    ``(0, B, d)`` to store nothing. ``z`` is ``(d,)`` scratch.

    With ``normalize`` true each new state is divided by its norm and ``logs`` (B,) accumulates
    log ||h_{k+1}|| / ||h_k|| as computed on the renormalised states; ``logn`` (L + 1, B) or (0, B)
    stores ``logs`` after every layer. This is exact in exact arithmetic for positively 1-homogeneous
    layers (g(c h) = c g(h), c > 0): res-2/res-3 and res-1 with relu, leaky_relu or identity.
    Returns a status code (``OK``, ``ZERO_NORM``, ``NON_FINITE``); without normalisation always ``OK``.
    """
    L = V.shape[0]
    B, d = h.shape
    store = traj.shape[0] == L + 1
    store_log = logn.shape[0] == L + 1
    if store:
        for b in range(B):
            for i in range(d):
                traj[0, b, i] = h[b, i]
    if store_log:
        for b in range(B):
            logn[0, b] = logs[b]
    for k in range(L):
        Vk = V[k]
        for b in range(B):
            hb = h[b]
            _preactivation(arch, k, W, hb, z)
            for j in range(d):
                z[j] = _sigma(act, slope, z[j])
            for i in range(d):
                s = 0.0
                for j in range(d):
                    s += Vk[i, j] * z[j]
                hb[i] += alpha * s
            if normalize:
                status, lg = _renormalise(hb)
                if status != OK:
                    return status
                logs[b] += lg
        if store:
            for b in range(B):
                for i in range(d):
                    traj[k + 1, b, i] = h[b, i]
        if store_log:
            for b in range(B):
                logn[k + 1, b] = logs[b]
    return OK


@njit(**_JIT)
def _backward(arch, act, slope, alpha, V, W, hs, p, ps, logs, dz, u, w, normalize):
    r"""Backpropagate co-states: p_k = p_{k+1} + alpha (d_h g(h_k, theta_{k+1}))^T V_{k+1}^T p_{k+1}.

    ``hs`` (L + 1, B, d) holds the linearisation points h_0 .. h_L (h_L unused); ``p`` (B, d) holds
    p_L on entry and p_0 on exit; ``ps`` is ``(L + 1, B, d)`` to store p_0 .. p_L, or ``(0, B, d)``.
    For res-1, d_h g = diag(sigma'(h)); for res-2/res-3, d_h g = diag(sigma'(W h)) W, so the update is
    p += alpha W^T (sigma'(W h) * (V^T p)). ``dz``, ``u``, ``w`` are ``(d,)`` scratch.
    With ``normalize`` the co-state is renormalised after every layer and ``logs`` (B,) accumulates
    the log norm growth (the recursion is linear in p). Returns a status code.
    """
    L = V.shape[0]
    B, d = p.shape
    store = ps.shape[0] == L + 1
    if store:
        for b in range(B):
            for i in range(d):
                ps[L, b, i] = p[b, i]
    for k in range(L - 1, -1, -1):
        Vk = V[k]
        for b in range(B):
            pb = p[b]
            _preactivation(arch, k, W, hs[k, b], dz)
            for j in range(d):
                dz[j] = _dsigma(act, slope, dz[j])
                u[j] = 0.0
            for i in range(d):  # u = V^T p, row by row (an axpy per row of V)
                pi = pb[i]
                for j in range(d):
                    u[j] += Vk[i, j] * pi
            for j in range(d):
                u[j] *= dz[j]
            if arch == RES1:
                for j in range(d):
                    pb[j] += alpha * u[j]
            else:
                Wk = W[k]
                for j in range(d):
                    w[j] = 0.0
                for i in range(d):  # w = W^T u
                    ui = u[i]
                    for j in range(d):
                        w[j] += Wk[i, j] * ui
                for j in range(d):
                    pb[j] += alpha * w[j]
            if normalize:
                status, lg = _renormalise(pb)
                if status != OK:
                    return status
                logs[b] += lg
        if store:
            for b in range(B):
                for i in range(d):
                    ps[k, b, i] = p[b, i]
    return OK


@njit(**_JIT)
def _jacobian(arch, act, slope, alpha, V, W, h, J, M, T, z, dz):
    r"""Forward-mode Jacobians J = dh_L/dh_0 for every row of the batch ``h`` (B, d).

    Tangent recursion (``scaling`` Eq. (9)) applied to the identity:
    J_0 = I, J_{k+1} = J_k + alpha V_{k+1} d_h g(h_k, theta_{k+1}) J_k, with the states advanced by
    the same arithmetic as :func:`_forward` (so the masks sigma'(z_k) are those of the forward pass).
    ``J`` is ``(B, d, d)`` output; ``M``, ``T`` are ``(d, d)`` scratch, ``z``, ``dz`` ``(d,)``.
    Matrix products use BLAS (np.dot). ``h`` is overwritten with h_L.
    """
    L = V.shape[0]
    B, d = h.shape
    for b in range(B):
        Jb = J[b]
        hb = h[b]
        for i in range(d):
            for j in range(d):
                Jb[i, j] = 0.0
            Jb[i, i] = 1.0
        for k in range(L):
            Vk = V[k]
            _preactivation(arch, k, W, hb, z)
            for i in range(d):
                dz[i] = _dsigma(act, slope, z[i])
                z[i] = _sigma(act, slope, z[i])
            if arch == RES1:
                for i in range(d):
                    for j in range(d):
                        M[i, j] = dz[i] * Jb[i, j]
            else:
                np.dot(W[k], Jb, M)
                for i in range(d):
                    for j in range(d):
                        M[i, j] *= dz[i]
            np.dot(Vk, M, T)
            for i in range(d):
                for j in range(d):
                    Jb[i, j] += alpha * T[i, j]
            for i in range(d):
                s = 0.0
                for j in range(d):
                    s += Vk[i, j] * z[j]
                hb[i] += alpha * s
