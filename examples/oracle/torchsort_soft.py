"""Adapter: torchsort's soft_sort / soft_rank (0.1.10) as the oracle's soft_sort / soft_rank(x, reg, p, descending).

    theory oracle verify soft_sort torchsort:soft_sort --adapter examples/oracle/torchsort_soft.py \
        --case partial_p2_n100_asc --case affine_p2_n100_desc ...

torchsort works on a batch (1, n) of a torch tensor, sorts and ranks increasingly, and its "l2"
regularisation strength is the oracle's reg: torchsort.soft_sort(x[None], "l2", s) equals
theory.topk.soft_sort(x, reg=s, descending=False). Descending order is the reversed output for
the sort and the ranks of -x for the rank. It implements p = 2 only: other p are refused (the
oracle reports those cases as errors; select the p = 2 cases with --case).
"""

import numpy as np
import torch


def adapt(fn):
    rank = getattr(fn, "__name__", "") == "soft_rank"

    def call(x, reg, p, descending):
        if p != 2.0:
            raise NotImplementedError(f"torchsort implements p = 2 ('l2') only, got p = {p}")
        t = torch.from_numpy(np.ascontiguousarray(x))[None]
        if rank and descending:
            t = -t
        y = fn(t, regularization="l2", regularization_strength=float(reg))[0]
        if not rank and descending:
            y = torch.flip(y, dims=(0,))
        return y.detach().numpy()
    return call
