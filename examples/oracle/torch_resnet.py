"""A short residual network with a step h written in plain PyTorch (Euler and Heun schemes), whose
gradient comes from torch.autograd; it shows `theory oracle verify` on PyTorch code.

    theory oracle verify resnet_gradient examples.oracle.torch_resnet:gradient \
        --adapter examples/oracle/torch_tensors.py
    theory oracle verify resnet_forward examples.oracle.torch_resnet:forward \
        --adapter examples/oracle/torch_tensors.py
    theory oracle verify resnet_reverse examples.oracle.torch_resnet:reverse \
        --adapter examples/oracle/torch_tensors.py
    theory oracle verify resnet_gradient_adjoint examples.oracle.torch_resnet:adjoint_gradient \
        --adapter examples/oracle/torch_tensors.py

Layers: f(x, W) = W x ("linear"), tanh(W x) ("tanh"), W tanh(x) ("tanh_out"), W ("bias", W in R^d) or
V tanh(A x + b) ("mlp", W = (V.ravel(), A.ravel(), b) with V (d, m), A (m, d)). Euler:
x_{n+1} = x_n + h f(x_n, W_n) with N weight matrices. Heun (N + 1 matrices, W_n at depth n/N):
y = x_n + h f(x_n, W_n), x_{n+1} = x_n + (h/2)(f(x_n, W_n) + f(y, W_{n+1})). The step h is the oracle's
`step` argument (1/N in the document's cases, 1/(N+1) or 1 in the others). The computation runs in the
dtype of the given tensors (float64 or float32).
"""

import torch


def _f(residual, x, W):
    if residual == "linear":
        return W @ x
    if residual == "tanh":
        return torch.tanh(W @ x)
    if residual == "tanh_out":
        return W @ torch.tanh(x)
    if residual == "bias":
        return W
    if residual == "mlp":
        d = x.shape[-1]
        m = W.shape[-1] // (2 * d + 1)
        return W[: d * m].reshape(d, m) @ torch.tanh(W[d * m: 2 * d * m].reshape(m, d) @ x + W[2 * d * m:])
    raise ValueError(f"unknown residual {residual!r}")


def _depth(theta, scheme):
    if scheme not in ("euler", "heun"):
        raise ValueError(f"unknown scheme {scheme!r}")
    return theta.shape[0] - (1 if scheme == "heun" else 0)


def _layer(x, theta, n, residual, scheme, step):
    """Layer n: x_n -> x_{n+1}."""
    k1 = _f(residual, x, theta[n])
    if scheme == "euler":
        return x + step * k1
    y = x + step * k1
    return x + (step / 2) * (k1 + _f(residual, y, theta[n + 1]))


def forward(x0, theta, residual, scheme, step):
    """The trajectory x_0, ..., x_N as a tensor (N + 1, d), with step h = ``step``."""
    xs = [x0]
    for n in range(_depth(theta, scheme)):
        xs.append(_layer(xs[-1], theta, n, residual, scheme, step))
    return torch.stack(xs)


def reverse(xN, theta, residual, scheme, step):
    """The reverse-time reconstruction (Euler: x_n = x_{n+1} - h f(x_{n+1}, W_n); Heun: y = x_{n+1} - h f(x_{n+1},
    W_{n+1}), x_n = x_{n+1} - (h/2)(f(x_{n+1}, W_{n+1}) + f(y, W_n))), returned in forward order (N + 1, d)."""
    xs = [xN]
    for n in range(_depth(theta, scheme) - 1, -1, -1):
        x = xs[-1]
        if scheme == "euler":
            xs.append(x - step * _f(residual, x, theta[n]))
        else:
            k1 = _f(residual, x, theta[n + 1])
            y = x - step * k1
            xs.append(x - (step / 2) * (k1 + _f(residual, y, theta[n])))
    return torch.stack(xs[::-1])


def gradient(x0, theta, y, residual, scheme, step):
    """(dL/dtheta, dL/dx0) of L = 1/2 ||x_N - y||^2, by reverse-mode autodiff."""
    x0 = x0.detach().requires_grad_(True)
    theta = theta.detach().requires_grad_(True)
    loss = 0.5 * torch.sum((forward(x0, theta, residual, scheme, step)[-1] - y) ** 2)
    g_theta, g_x0 = torch.autograd.grad(loss, (theta, x0))
    return g_theta, g_x0


def adjoint_gradient(x0, theta, y, residual, scheme, step):
    """The memory-free adjoint: x_N forward without storing, the states rebuilt by :func:`reverse`, and the
    vector-Jacobian products of each layer taken by autograd at the rebuilt states (resnet-node Eq. (7))."""
    with torch.no_grad():
        xN = forward(x0, theta, residual, scheme, step)[-1]
        rebuilt = reverse(xN, theta, residual, scheme, step)
    g_x = xN - y
    g_theta = torch.zeros_like(theta)
    for n in range(_depth(theta, scheme) - 1, -1, -1):
        x = rebuilt[n].detach().requires_grad_(True)
        th = theta.detach().requires_grad_(True)
        dx, dth = torch.autograd.grad(_layer(x, th, n, residual, scheme, step), (x, th), g_x)
        g_x, g_theta = dx, g_theta + dth
    return g_theta, g_x
