r"""Loss and parameter gradients of a res-3 network on a batch (Section 4.2 of ``scaling``, Figure 8).

The network of Marion, Fermanian, Biau, Vert (thesis chapter 2, model (1.12) of the thesis'
introduction), :math:`h_k = h_{k-1} + \alpha_L V_k\,\mathrm{ReLU}(W_k h_{k-1})`, k = 1..L,
:math:`\alpha_L = L^{-\beta}`, with a fixed linear read-out :math:`\hat y = \langle b, h_L\rangle` and the
mean squared loss :math:`\ell = \frac1{2n}\sum_i (\hat y_i - y_i)^2`. Backpropagation, with
:math:`p_k = \partial\ell/\partial h_k`, :math:`z_k = W_k h_{k-1}`, :math:`a_k = \mathrm{ReLU}(z_k)`,
:math:`D_k = \mathrm{diag}(1\{z_k > 0\})`:

.. math::
    p_L = (\hat y - y)\,b/n,\quad
    \frac{\partial\ell}{\partial V_k} = \alpha_L \sum_i p_k a_k^\top,\quad
    u_k = \alpha_L D_k V_k^\top p_k,\quad
    \frac{\partial\ell}{\partial W_k} = \sum_i u_k h_{k-1}^\top,\quad
    p_{k-1} = p_k + W_k^\top u_k.

Public name: :func:`loss_and_gradient`. Used by :func:`theory.experiments.scaling.fig8`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._validation import as_float_array
from ._api import _alpha

__all__ = ["loss_and_gradient"]


@njit(cache=True)
def _loss_grad(alpha, V, W, H0, b, y, hs, gV, gW):
    """Forward over (n, d) states into hs (L+1, n, d), then the backward pass into gV, gW (L, d, d).
    Returns the loss (1/(2n)) sum (<b, h_L> - y)^2."""
    L, d, _ = V.shape
    n = H0.shape[0]
    hs[0] = H0
    for k in range(L):
        for i in range(n):
            for r in range(d):
                s = 0.0
                for c in range(d):
                    zc = 0.0
                    for m in range(d):
                        zc += W[k, c, m] * hs[k, i, m]
                    if zc > 0.0:
                        s += V[k, r, c] * zc
                hs[k + 1, i, r] = hs[k, i, r] + alpha * s
    p = np.empty((n, d))
    loss = 0.0
    for i in range(n):
        out = 0.0
        for r in range(d):
            out += b[r] * hs[L, i, r]
        res = out - y[i]
        loss += 0.5 * res * res / n
        for r in range(d):
            p[i, r] = res * b[r] / n
    z = np.empty(d)
    u = np.empty(d)
    for k in range(L - 1, -1, -1):
        for r in range(d):
            for c in range(d):
                gV[k, r, c] = 0.0
                gW[k, r, c] = 0.0
        for i in range(n):
            for c in range(d):
                zc = 0.0
                for m in range(d):
                    zc += W[k, c, m] * hs[k, i, m]
                z[c] = zc
            for c in range(d):
                a = z[c] if z[c] > 0.0 else 0.0
                t = 0.0
                for r in range(d):
                    gV[k, r, c] += alpha * p[i, r] * a
                    t += V[k, r, c] * p[i, r]
                u[c] = alpha * t if z[c] > 0.0 else 0.0
            for c in range(d):
                for m in range(d):
                    gW[k, c, m] += u[c] * hs[k, i, m]
            for m in range(d):
                t = 0.0
                for c in range(d):
                    t += W[k, c, m] * u[c]
                p[i, m] += t
    return loss


def loss_and_gradient(h0, V, W, b, y, beta=1.0):
    r"""Loss and gradients in V and W of res-3 with read-out b on a batch (module docstring).

    Parameters
    ----------
    h0 : array_like, shape (n, d)
        Inputs of the residual stack.
    V, W : array_like, shape (L, d, d)
        Layer weights.
    b : array_like, shape (d,)
        Fixed read-out.
    y : array_like, shape (n,)
        Targets.
    beta : float
        Scaling exponent, :math:`\alpha_L = L^{-\beta}`, beta >= 0.

    Returns
    -------
    loss : float
    grad_V, grad_W : ndarray, shape (L, d, d)

    Raises
    ------
    TypeError, ValueError
        Wrong shapes, non-finite input, beta negative; ``NonFiniteError`` if the states overflow.
    """
    func = "theory.scaling.training.loss_and_gradient"
    H0 = as_float_array(h0, "h0", func=func, ndim=2, copy=True)
    n, d = H0.shape
    Va = as_float_array(V, "V", func=func, ndim=3, copy=True)
    L = Va.shape[0]
    if Va.shape != (L, d, d) or L < 1:
        raise ValueError(f"`V` of {func} must have shape (L, d, d) with L >= 1 and d = {d} from `h0`; got {Va.shape}.")
    Wa = as_float_array(W, "W", func=func, shape=(L, d, d), copy=True)
    ba = as_float_array(b, "b", func=func, shape=(d,), copy=True)
    ya = as_float_array(y, "y", func=func, shape=(n,), copy=True)
    if isinstance(beta, bool) or not isinstance(beta, (int, float, np.integer, np.floating)) or not (
            np.isfinite(beta) and beta >= 0):
        raise ValueError(f"`beta` of {func} must be a finite number >= 0; got {beta!r}.")
    hs = np.empty((L + 1, n, d))
    gV = np.empty((L, d, d))
    gW = np.empty((L, d, d))
    loss = _loss_grad(_alpha(L, float(beta)), Va, Wa, H0, ba, ya, hs, gV, gW)
    if not (np.isfinite(loss) and np.all(np.isfinite(gV)) and np.all(np.isfinite(gW))):
        from .._errors import NonFiniteError
        raise NonFiniteError(f"{func}: the hidden states or gradients overflowed (beta = {beta}, L = {L}); "
                             "take a larger beta or smaller weights.")
    return float(loss), gV, gW
