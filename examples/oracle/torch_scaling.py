"""A scaled ResNet at initialisation (scaling, model (4) and Table 1) in plain PyTorch, for
`theory oracle verify scaling_forward`:

    theory oracle verify scaling_forward examples.oracle.torch_scaling:forward \
        --adapter examples/oracle/torch_tensors.py

h_{k+1} = h_k + L^-beta V_k sigma(W_k h_k) (res1: sigma(h_k)), the matrices applied with
torch.nn.functional.linear (weight untransposed, no bias). leaky_relu's negative slope is the oracle's
`slope`: PyTorch's default (negative_slope=0.01) fails every leaky case at another slope. The computation runs
in the dtype of the given tensors (float64 or float32).
"""

import torch
import torch.nn.functional as F


def forward(h0, V, W, beta, arch, activation, slope, negative_slope=None):
    """The states h_0, ..., h_L as a tensor (L + 1, d); ``negative_slope`` overrides ``slope`` (a fixed default)."""
    s = slope if negative_slope is None else negative_slope
    sigma = {"relu": F.relu, "tanh": torch.tanh, "identity": lambda z: z,
             "leaky_relu": lambda z: F.leaky_relu(z, negative_slope=s)}[activation]
    L = V.shape[0]
    hs = [h0]
    for k in range(L):
        h = hs[-1]
        g = sigma(h) if arch == "res1" else sigma(F.linear(h, W[k]))  # res1 has no W (an empty tensor)
        hs.append(h + L ** (-beta) * F.linear(g, V[k]))
    return torch.stack(hs)
