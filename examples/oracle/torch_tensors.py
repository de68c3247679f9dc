"""Adapter: a PyTorch function as an oracle kernel. NumPy arrays become torch tensors of the same dtype
(float64, or float32 under --dtype float32); strings and numbers pass unchanged; returned tensors are
read back by the oracle.

    theory oracle verify resnet_gradient examples.oracle.torch_resnet:gradient \
        --adapter examples/oracle/torch_tensors.py [--dtype float32]
"""

import numpy as np
import torch


def adapt(fn):
    def call(**inputs):
        return fn(**{k: torch.from_numpy(np.ascontiguousarray(v)) if isinstance(v, np.ndarray) else v
                     for k, v in inputs.items()})
    return call
