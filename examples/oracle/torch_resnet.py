"""A short residual network with step 1/N written in plain PyTorch (Euler and Heun schemes), whose
gradient comes from torch.autograd; it shows `theory oracle verify` on PyTorch code.

    theory oracle verify resnet_gradient examples.oracle.torch_resnet:gradient \
        --adapter examples/oracle/torch_tensors.py
    theory oracle verify resnet_forward examples.oracle.torch_resnet:forward \
        --adapter examples/oracle/torch_tensors.py

Layers: f(x, W) = W x ("linear"), tanh(W x) ("tanh") or W tanh(x) ("tanh_out"). Euler:
x_{n+1} = x_n + f(x_n, W_n)/N with N weight matrices. Heun (N + 1 matrices, W_n at depth n/N):
y = x_n + f(x_n, W_n)/N, x_{n+1} = x_n + (f(x_n, W_n) + f(y, W_{n+1}))/(2N). The computation runs in
the dtype of the given tensors (float64 or float32).
"""

import torch


def _f(residual, x, W):
    if residual == "linear":
        return W @ x
    if residual == "tanh":
        return torch.tanh(W @ x)
    if residual == "tanh_out":
        return W @ torch.tanh(x)
    raise ValueError(f"unknown residual {residual!r}")


def forward(x0, theta, residual, scheme):
    """The trajectory x_0, ..., x_N as a tensor (N + 1, d)."""
    N = theta.shape[0] - (1 if scheme == "heun" else 0)
    xs = [x0]
    for n in range(N):
        x = xs[-1]
        k1 = _f(residual, x, theta[n])
        if scheme == "euler":
            xs.append(x + k1 / N)
        elif scheme == "heun":
            y = x + k1 / N
            xs.append(x + (k1 + _f(residual, y, theta[n + 1])) / (2 * N))
        else:
            raise ValueError(f"unknown scheme {scheme!r}")
    return torch.stack(xs)


def gradient(x0, theta, y, residual, scheme):
    """(dL/dtheta, dL/dx0) of L = 1/2 ||x_N - y||^2, by reverse-mode autodiff."""
    x0 = x0.detach().requires_grad_(True)
    theta = theta.detach().requires_grad_(True)
    loss = 0.5 * torch.sum((forward(x0, theta, residual, scheme)[-1] - y) ** 2)
    g_theta, g_x0 = torch.autograd.grad(loss, (theta, x0))
    return g_theta, g_x0
