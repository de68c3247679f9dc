r"""The computations of paper key ``resnet-node`` on the PyTorch backend (:mod:`theory.backends`).

Residual networks with step 1/N and the perceptron residual :math:`f(x, \theta) = V\tanh(Wx + b)`
(the family :func:`theory.resnet.mlp`, one layer's parameters packed as ``(V.ravel(), W.ravel(), b)``),
for S independent networks at once (one per seed: every tensor has a leading axis S, and each
layer is one batched matrix product, so the seeds of a figure share the device's kernel launches):

* forward passes, Euler (Eq. (1) of the paper, thesis Eq. (2.1)):
  :math:`x_{n+1} = x_n + \tfrac1N f(x_n, \theta_n)`, and Heun (Eq. (8), the HeunNet):
  :math:`y_n = x_n + \tfrac1N f(x_n, \theta_n)`,
  :math:`x_{n+1} = x_n + \tfrac1{2N}(f(x_n, \theta_n) + f(y_n, \theta_{n+1}))`;
* the exact gradient (``method="backprop"``), by autograd through the stored graph;
* the memory-free adjoint gradient (``method="adjoint"``): from :math:`x_N` alone, the reverse-time
  scheme (Eq. (6) for Euler, Eq. (9) for Heun; thesis Eqs. (2.6), (2.9)) reconstructs
  :math:`\tilde x_n` from :math:`\tilde x_{n+1}`, and the vector-Jacobian product of the forward
  step n is taken at :math:`\tilde x_n` (Eq. (7)) — one autograd call per step, nothing stored.
  This is the recursion of the NumPy kernels of :func:`theory.resnet.gradient` (same formulas,
  same order of the steps): in float64 on the same draws the two agree to 1e-10 (measured at
  small sizes in ``tests/test_backends_resnet_node.py``: at most a few 1e-15 on the gradients);
* the training steps of Figures 3(c) and 4 (:func:`train_digits`, :func:`train_moons`), with the
  same data, initialisation and optimiser formulas as the NumPy code of the package.

dtype. float64 by default. float32 is accepted by :func:`train_moons` (Figure 4 measures test
errors: a float32 run may flip the class of a test point near the decision boundary, so its figures
agree with float64 up to such flips, not to a fixed tolerance; measured at the test's small size,
15 Adam steps: identical test errors, final training losses within 1e-7 (6e-8)). The adjoint-error
experiments (Figure 3(c)) refuse float32: the errors they measure go down to 1e-7 relative (the
HeunNet at depth 128 of the check of ``resnet_node.fig3c``; 3e-8 on the digits), the size of
float32's rounding of the gradients themselves (unit round-off 6e-8).
"""

from __future__ import annotations

import numpy as np

from theory._validation import format_bytes
from theory.backends import Backend

__all__ = ["mlp_residual", "forward_last", "gradient", "softmax_cross_entropy", "logistic_head",
           "train_digits", "train_moons", "test_error_moons", "memory_needed", "check_memory", "to_numpy"]

#: host memory one call may use on a CPU device (device memory: half of what CUDA reports free)
_CPU_BUDGET = 2**32


def _torch():
    import torch

    return torch


def _budget(b: Backend):
    if b.device.startswith("cuda"):
        free, _ = _torch().cuda.mem_get_info(b.torch_device)
        return 0.5 * free
    return float(_CPU_BUDGET)


def memory_needed(S, K, B, d, m, itemsize=8):
    """Bytes of one backprop gradient: the parameters and their gradient (S K P each), and the
    autograd graph of K Heun steps (about 6 (B d + B m) per step and seed)."""
    P = 2 * d * m + m
    return itemsize * S * (3 * K * P + 2 * K * 6 * B * (d + m))


def check_memory(b: Backend, S, K, B, d, m, what):
    """Refuse, naming the size needed, a computation above the device's budget."""
    itemsize = 8 if b.dtype == "float64" else 4
    need = memory_needed(S, K, B, d, m, itemsize)
    budget = _budget(b)
    if need > budget:
        raise ValueError(f"{what}: {S} networks of depth {K} (batch {B}, d = {d}, width {m}) need about "
                         f"{format_bytes(need)} on {b.device}, above the {format_bytes(budget)} available; "
                         "run fewer seeds at once or a smaller batch")


def mlp_residual(x, th, d, m):
    r""":math:`f(x, \theta) = V\tanh(Wx + b)` for S networks: x (S, B, d), th (S, P) packed as
    ``(V.ravel(), W.ravel(), b)`` with V (d, m), W (m, d), b (m,); returns (S, B, d)."""
    torch = _torch()
    S = th.shape[0]
    V = th[:, : d * m].reshape(S, d, m)
    W = th[:, d * m: 2 * d * m].reshape(S, m, d)
    bias = th[:, 2 * d * m:]
    hidden = torch.tanh(torch.baddbmm(bias.unsqueeze(1), x, W.transpose(1, 2)))
    return torch.bmm(hidden, V.transpose(1, 2))


def _euler_step(x, th, h, d, m):
    return x + h * mlp_residual(x, th, d, m)


def _heun_step(x, th_a, th_b, h, d, m):
    f1 = mlp_residual(x, th_a, d, m)
    y = x + h * f1
    return x + (0.5 * h) * (f1 + mlp_residual(y, th_b, d, m))


def _depth(theta, scheme):
    return theta.shape[1] - (1 if scheme == "heun" else 0)


def forward_last(x0, theta, scheme, d, m):
    """x_N of S networks: x0 (S, B, d), theta (S, K, P) with K = N (Euler) or N + 1 (Heun)."""
    N = _depth(theta, scheme)
    x = x0
    for n in range(N):
        if scheme == "euler":
            x = _euler_step(x, theta[:, n], 1.0 / N, d, m)
        else:
            x = _heun_step(x, theta[:, n], theta[:, n + 1], 1.0 / N, d, m)
    return x


def gradient(x0, theta, grad_xN, scheme, method, d, m, *, xN=None):
    r"""Gradient in theta and x0 of a loss l(x_N) whose gradient at x_N is ``grad_xN`` (S, B, d).

    ``method="backprop"``: autograd through the forward pass (exact). ``method="adjoint"``: the
    memory-free recursion of :func:`theory.resnet.gradient` (reverse step, then the step's
    vector-Jacobian product at the reconstructed state). ``xN`` (the output, if already computed)
    is used by the adjoint as its starting point. Returns ``(grad_theta, grad_x0)``.
    """
    torch = _torch()
    N = _depth(theta, scheme)
    if method == "backprop":
        with torch.enable_grad():
            th = theta.detach().requires_grad_(True)
            x = x0.detach().requires_grad_(True)
            out = forward_last(x, th, scheme, d, m)
            gth, gx = torch.autograd.grad(out, (th, x), grad_outputs=grad_xN)
        return gth, gx
    if method != "adjoint":
        raise ValueError(f"`method` of theory.backends.resnet_node.gradient must be 'backprop' or 'adjoint'; "
                         f"got {method!r}")
    with torch.no_grad():
        x = forward_last(x0, theta, scheme, d, m) if xN is None else xN
    g = grad_xN
    gtheta = torch.zeros_like(theta)
    for n in range(N - 1, -1, -1):
        with torch.no_grad():  # reverse-time step: Eq. (6), or Eq. (9) with the slices swapped
            if scheme == "euler":
                x = _euler_step(x, theta[:, n], -1.0 / N, d, m)
            else:
                x = _heun_step(x, theta[:, n + 1], theta[:, n], -1.0 / N, d, m)
        with torch.enable_grad():
            xs = x.detach().requires_grad_(True)
            if scheme == "euler":
                tha = theta[:, n].detach().requires_grad_(True)
                out = _euler_step(xs, tha, 1.0 / N, d, m)
                gx, ga = torch.autograd.grad(out, (xs, tha), grad_outputs=g)
                gtheta[:, n] += ga
            else:
                tha = theta[:, n].detach().requires_grad_(True)
                thb = theta[:, n + 1].detach().requires_grad_(True)
                out = _heun_step(xs, tha, thb, 1.0 / N, d, m)
                gx, ga, gb = torch.autograd.grad(out, (xs, tha, thb), grad_outputs=g)
                gtheta[:, n] += ga
                gtheta[:, n + 1] += gb
        g = gx
    return gtheta, g


# ------------------------------------------------------------------------------------------- heads


def softmax_cross_entropy(xN, Wh, ch, labels):
    r"""Mean cross-entropy of the linear head :math:`z = x_N W_h^\top + c_h` for S networks, and its
    gradients: :math:`\partial_z \ell = (\mathrm{softmax}(z) - e_y) / B`.

    xN (S, B, d), Wh (S, C, d), ch (S, C), labels (S, B) int64. Returns (loss (S,), grad_xN,
    grad_Wh, grad_ch) (float64 losses)."""
    torch = _torch()
    B = xN.shape[1]
    z = torch.baddbmm(ch.unsqueeze(1), xN, Wh.transpose(1, 2))
    logp = torch.log_softmax(z, dim=-1)
    loss = -torch.gather(logp, 2, labels.unsqueeze(-1)).squeeze(-1).mean(dim=1)
    dz = torch.exp(logp)
    dz.scatter_add_(2, labels.unsqueeze(-1), -torch.ones_like(dz[..., :1]))
    dz = dz / B
    return loss, torch.bmm(dz, Wh), torch.bmm(dz.transpose(1, 2), xN), dz.sum(dim=1)


def logistic_head(xN, w, c, labels):
    r"""Mean logistic loss of :math:`z = x_N w + c` (S networks; labels in {0, 1}, float) and its
    gradients, as :func:`theory.resnet.training.logistic_head`: :math:`\partial_z\ell = (\sigma(z) - y)/B`."""
    torch = _torch()
    B = xN.shape[1]
    z = torch.bmm(xN, w.unsqueeze(-1)).squeeze(-1) + c.unsqueeze(-1)
    loss = (torch.logaddexp(torch.zeros_like(z), z) - labels * z).mean(dim=1)
    dz = (torch.sigmoid(z) - labels) / B
    return loss, dz.unsqueeze(-1) * w.unsqueeze(1), torch.bmm(xN.transpose(1, 2), dz.unsqueeze(-1)).squeeze(-1), \
        dz.sum(dim=1)


def _finite(t, what, func):
    if not bool(_torch().all(_torch().isfinite(t))):
        from theory._errors import NonFiniteError

        raise NonFiniteError(f"{func}: {what} overflowed to NaN or inf on the torch backend; lower the "
                             "learning rate or the weights")


# ------------------------------------------------------------------------------------------- training


def train_digits(b: Backend, X, labels, theta, Wh, ch, batches, lrs, *, scheme, d, m, momentum, weight_decay):
    r"""SGD with momentum and weight decay (the PyTorch form:
    :math:`g \leftarrow g + \lambda p`, :math:`u \leftarrow \mu u + g`, :math:`p \leftarrow p - \eta u`)
    on the residual slices and the softmax head of S networks, exact gradients (backprop).

    X (n, d) and labels (n,) on the host (the training sets of the S networks stacked), theta
    (S, K, P), Wh (S, C, d), ch (S, C) NumPy float64 (the initial point), ``batches[t]`` (S, b_t)
    row indices into X of step t (row s: network s's mini-batch), ``lrs[t]`` its learning rate.
    Returns the trained [theta, Wh, ch] as tensors on the device."""
    torch = _torch()
    dev, dt = b.torch_device, b.torch_dtype
    Xd = torch.as_tensor(X, dtype=dt, device=dev)
    yd = torch.as_tensor(labels, dtype=torch.int64, device=dev)
    params = [torch.as_tensor(a, dtype=dt, device=dev).clone() for a in (theta, Wh, ch)]
    bufs = [torch.zeros_like(p) for p in params]
    for idx, lr in zip(batches, lrs):
        ii = torch.as_tensor(idx, device=dev)
        x0 = Xd[ii]
        xN = forward_last(x0, params[0], scheme, d, m)
        _, gx, gW, gc = softmax_cross_entropy(xN, params[1], params[2], yd[ii])
        gth, _ = gradient(x0, params[0], gx, scheme, "backprop", d, m)
        for p, u, g in zip(params, bufs, (gth, gW, gc)):
            g = g + weight_decay * p
            u.mul_(momentum).add_(g)
            p.sub_(lr * u)
    _finite(params[0], "the trained weights", "theory.backends.resnet_node.train_digits")
    return params


def train_moons(b: Backend, X, y, theta, w, steps, lr, *, scheme, method, d, m):
    """Full-batch Adam (bias-corrected, epsilon after the square root, as
    :class:`theory.resnet.training.Adam`) on the slices and the logistic head of S networks, with
    the exact or the adjoint gradient. X (S, n, d), y (S, n) in {0, 1}, theta (S, K, P), w (S, d)
    host arrays; the head bias starts at 0. Returns (theta, w, c, final training loss (S,))."""
    torch = _torch()
    dev, dt = b.torch_device, b.torch_dtype
    Xd = torch.as_tensor(X, dtype=dt, device=dev)
    yd = torch.as_tensor(y, dtype=dt, device=dev)
    S, K, P = theta.shape
    size = K * P
    params = torch.cat([torch.as_tensor(theta.reshape(S, -1), dtype=dt, device=dev),
                        torch.as_tensor(w, dtype=dt, device=dev), torch.zeros((S, 1), dtype=dt, device=dev)], dim=1)
    mom = torch.zeros_like(params)
    var = torch.zeros_like(params)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    loss = None
    for t in range(1, steps + 1):
        th = params[:, :size].reshape(S, K, P)
        wv, c = params[:, size:-1], params[:, -1]
        xN = forward_last(Xd, th, scheme, d, m)
        loss, gx, gw, gc = logistic_head(xN, wv, c, yd)
        gth, _ = gradient(Xd, th, gx, scheme, method, d, m, xN=xN)
        grad = torch.cat([gth.reshape(S, -1), gw, gc.unsqueeze(-1)], dim=1)
        mom = beta1 * mom + (1.0 - beta1) * grad
        var = beta2 * var + (1.0 - beta2) * grad * grad
        m_hat = mom / (1.0 - beta1 ** t)
        v_hat = var / (1.0 - beta2 ** t)
        params = params - lr * m_hat / (torch.sqrt(v_hat) + eps)
    _finite(params, "the trained parameters", "theory.backends.resnet_node.train_moons")
    th = params[:, :size].reshape(S, K, P)
    return th, params[:, size:-1], params[:, -1], loss


def test_error_moons(theta, w, c, X, y, scheme, d, m):
    """Fraction of misclassified points (S,) of the trained networks on X (S, n, d), y (S, n)."""
    torch = _torch()
    with torch.no_grad():
        z = torch.bmm(forward_last(X, theta, scheme, d, m), w.unsqueeze(-1)).squeeze(-1) + c.unsqueeze(-1)
        return ((z > 0) != (y == 1)).to(torch.float64).mean(dim=1)


def to_numpy(t) -> np.ndarray:
    """A float64 host copy of a tensor."""
    return t.detach().to("cpu", dtype=_torch().float64).numpy()

