r"""Explicit res-3 networks over depths and scalings on either backend: Figures 1, 3, 4 and 5 of paper key
``scaling`` (Marion, Fermanian, Biau, Vert, "Scaling ResNets in the Large-depth Regime", Sections 2-3;
thesis Figures 2.1 and 2.3 to 2.5).

:func:`log_ratios`
    For S weight draws :math:`(V, W, h_0, p_L)` of res-3,
    :math:`h_k = h_{k-1} + L^{-\beta} V_k\,\mathrm{ReLU}(W_k h_{k-1})`, the natural logarithms of
    :math:`\|h_L - h_0\|/\|h_0\|` (``"h"``) or :math:`\|p_0 - p_L\|/\|p_L\|` (``"p"``) at several depths
    L and exponents beta, where the depth-L network of a draw uses its first L layers (the NumPy
    backend: :func:`theory.scaling.log_norm_ratio` and :func:`theory.scaling.log_gradient_ratio`, one
    network at a time). On the torch backend every draw of a chunk and every beta of a depth run as
    one batch of matrix products (the recursion of :func:`theory.backends.scaling.phase_grid`,
    renormalised, log norms summed in float64). Agreement: 1e-10 in float64 on the log ratios at the
    test sizes; float32 as stated in :mod:`theory.backends`.
"""

from __future__ import annotations

import math

import numpy as np

from theory.backends import Backend

__all__ = ["log_ratios"]


def log_ratios(V, W, h0, pL, plan, *, quantity, backend: Backend, memory=None):
    """``{(L, beta): ln ratios (S,)}`` for ``plan`` = ((L, (beta, ...)), ...) (each L at most the
    number of layers of V), weights V, W (S, Lmax, d, d), inputs h0 and co-states pL (S, d); the
    ``quantity`` is ``"h"`` (hidden states) or ``"p"`` (gradients). The draws are chunked to fit
    ``memory`` bytes (default: half the free CUDA memory, 2 GiB on a CPU)."""
    if quantity not in ("h", "p"):
        raise ValueError(f"`quantity` of theory.backends.scaling_figs.log_ratios must be 'h' or 'p'; got {quantity!r}")
    S, Lmax, d, _ = V.shape
    out = {}
    if not backend.is_torch:
        from theory.scaling import log_gradient_ratio, log_norm_ratio

        for L, betas in plan:
            for b in betas:
                vals = np.empty(S)
                for s in range(S):
                    if quantity == "h":
                        vals[s] = log_norm_ratio(h0[s], V[s, :L], W[s, :L], beta=b, arch="res3")
                    else:
                        vals[s] = log_gradient_ratio(h0[s], V[s, :L], W[s, :L], pL[s], beta=b, arch="res3")
                out[(L, b)] = vals
        return out
    import torch

    from theory.backends.scaling import _budget, _torch_cells, phase_grid_plan

    nb = max(len(bs) for _, bs in plan)
    gchunk, _, _ = phase_grid_plan(1, nb, L=Lmax, d=d, n_seeds=S, n_inputs=1, gradients=quantity == "p",
                                   dtype=backend.dtype, memory=_budget(backend, memory))
    dev, dt = backend.torch_device, backend.torch_dtype
    for L, betas in plan:
        for b in betas:
            out[(L, b)] = np.empty(S)
    for s0 in range(0, S, gchunk):
        s1 = min(S, s0 + gchunk)
        Vd = torch.as_tensor(np.ascontiguousarray(V[s0:s1])).to(dev, dt)
        Wd = torch.as_tensor(np.ascontiguousarray(W[s0:s1])).to(dev, dt)
        hd = torch.as_tensor(np.asarray(h0[s0:s1], dtype=float)[:, None, :]).to(dev, dt)
        pd = torch.as_tensor(np.asarray(pL[s0:s1], dtype=float)[:, None, :]).to(dev, dt)
        for L, betas in plan:
            alphas = [float(L) ** (-float(b)) for b in betas]
            hid, grad = _torch_cells(backend, Vd[:, :L], Wd[:, :L], hd, pd, alphas, quantity == "p")
            vals = (hid if quantity == "h" else grad) * math.log(10.0)
            for j, b in enumerate(betas):
                out[(L, b)][s0:s1] = vals[:, j]
        del Vd, Wd
    return out


def exact_law_log_norms(L, d, beta, runs, seed, *, backend: Backend):
    r""":math:`\ln(\|h_L\|/\|h_0\|)` of ``runs`` res-3 networks with Gaussian weights, exactly in law:
    the two-dimensional Markov chain of :func:`theory.scaling.statistics.fast_norms` (component
    :math:`a` of the unit state along :math:`h_0`, norm :math:`b` of its orthogonal part, log norm s):
    per layer :math:`c = L^{-\beta}\sqrt{\chi^2_M}/d` with :math:`M \sim \mathrm{Bin}(d, 1/2)`,
    :math:`a \leftarrow a + c\xi_0`, :math:`b \leftarrow \sqrt{(b + c\xi_1)^2 + c^2\chi^2_{d-2}}`, then
    renormalised. The NumPy backend is ``fast_norms(L, d, beta, runs, rng=default_rng(seed))``; the
    torch backend takes the same draws from the same Generator, in the same order, and runs the
    recursion on the device (the draws, O(runs) per layer, are the cost of this sampler on either
    backend: Figure 2 at 10^4 runs takes about a second on a CPU). Returns an ndarray (runs,).
    """
    rng = np.random.default_rng(seed)
    if not backend.is_torch:
        from theory.scaling.statistics import fast_norms

        return fast_norms(L, d, beta, runs, rng=rng).log_norm_ratio
    import torch

    from theory._errors import NonFiniteError

    if d < 3:
        raise ValueError(f"`d` of theory.backends.scaling_figs.exact_law_log_norms must be >= 3; got {d!r}")
    dev, dt = backend.torch_device, backend.torch_dtype
    alpha = float(L) ** (-float(beta))
    a = torch.ones(runs, device=dev, dtype=dt)
    b = torch.zeros(runs, device=dev, dtype=dt)
    s = torch.zeros(runs, device=dev, dtype=torch.float64)
    for _ in range(L):
        m = rng.binomial(d, 0.5, runs)
        r2 = rng.gamma(m / 2.0, 2.0)
        xi = rng.standard_normal((2, runs))
        rest = rng.chisquare(d - 2, runs)
        x = torch.as_tensor(np.stack([alpha * np.sqrt(r2) / d, xi[0], xi[1], rest])).to(dev, dt)
        c = x[0]
        a = a + c * x[1]
        b = torch.sqrt((b + c * x[2]) ** 2 + c * c * x[3])
        n = torch.sqrt(a * a + b * b)
        a, b = a / n, b / n
        s += torch.log(n).to(torch.float64)
    if not bool(torch.all(torch.isfinite(s))):
        raise NonFiniteError("theory.backends.scaling_figs.exact_law_log_norms: a norm became zero or non-finite")
    return s.cpu().numpy()
