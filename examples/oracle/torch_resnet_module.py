"""A class-based residual network in PyTorch, as public model code is written: an ``nn.Module`` holding an
``nn.ModuleList`` of residual blocks, whose ``forward`` returns the last state only. Two ways to check it:

    # every state, read with forward hooks on the blocks (theory.oracle.record_states)
    theory oracle verify resnet_forward examples.oracle.torch_resnet_module:trajectory \
        --adapter examples/oracle/torch_tensors.py --case '*_linear_*' --case '*_tanh_*'
    # the last state only, compared with the last row of the reference trajectory
    theory oracle verify resnet_forward examples.oracle.torch_resnet_module:last_state \
        --adapter examples/oracle/torch_tensors.py --case '*_linear_*' --case '*_tanh_*' --outputs last

(the cases of the three residual functions it implements; the others raise, an ERROR of their case).

Block n maps x_n to x_{n+1}: Euler x_n + h f(x_n, W_n) (resnet-node Eq. (1)); Heun (the HeunNet, Eq. (8)) with
y = x_n + h f(x_n, W_n), x_n + (h/2)(f(x_n, W_n) + f(y, W_{n+1})), so that block n holds W_n and W_{n+1}.
f(x, W) = W x ("linear"), tanh(W x) ("tanh") or W tanh(x) ("tanh_out"). The weights are parameters of the
blocks, loaded from the oracle's theta; the computation runs in theta's dtype.
"""

import torch
import torch.nn.functional as F
from torch import nn

from theory.oracle import record_states


def _f(residual, x, weight):
    if residual == "linear":
        return F.linear(x, weight)
    if residual == "tanh":
        return torch.tanh(F.linear(x, weight))
    if residual == "tanh_out":
        return F.linear(torch.tanh(x), weight)
    raise ValueError(f"unknown residual {residual!r}")


class Block(nn.Module):
    """One residual block: Euler with the weight W_n, Heun with W_n and W_{n+1}."""

    def __init__(self, weights, residual, step):
        super().__init__()
        self.weights = nn.ParameterList([nn.Parameter(w.clone()) for w in weights])
        self.residual, self.step = residual, step

    def forward(self, x):
        k1 = _f(self.residual, x, self.weights[0])
        if len(self.weights) == 1:
            return x + self.step * k1
        y = x + self.step * k1
        return x + (self.step / 2) * (k1 + _f(self.residual, y, self.weights[1]))


class ResNet(nn.Module):
    """N residual blocks in an ``nn.ModuleList``; ``forward(x)`` returns x_N only."""

    def __init__(self, theta, residual, scheme, step):
        super().__init__()
        if scheme not in ("euler", "heun"):
            raise ValueError(f"unknown scheme {scheme!r}")
        depth = theta.shape[0] - (1 if scheme == "heun" else 0)
        width = 2 if scheme == "heun" else 1
        self.blocks = nn.ModuleList(Block(theta[n:n + width], residual, step) for n in range(depth))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def trajectory(x0, theta, residual, scheme, step):
    """x_0, ..., x_N (N + 1, d): the model run once, its blocks' states recorded by forward hooks."""
    return record_states(ResNet(theta, residual, scheme, step))(x0)


def last_state(x0, theta, residual, scheme, step):
    """x_N (d,): what the model returns (``verify(..., outputs="last")``)."""
    return ResNet(theta, residual, scheme, step)(x0)
