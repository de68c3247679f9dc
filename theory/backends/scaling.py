r"""The scale computations of paper key ``scaling`` on either backend (:mod:`theory.backends`).

:func:`phase_grid`
    The (Hurst index, beta) grid of log10 ratios of res-3 with fractional Gaussian noise weights
    (Figure 7 of "Scaling ResNets in the Large-depth Regime", thesis Figure 2.7):
    :math:`h_{k+1} = h_k + L^{-\beta} V_{k+1}\mathrm{ReLU}(W_{k+1} h_k)`, per cell the mean over the
    inputs of :math:`\log_{10}\|h_L - h_0\|/\|h_0\|` and of :math:`\log_{10}\|p_0 - p_L\|/\|p_L\|`.
    The NumPy backend is :func:`theory.scaling.phase.phase_diagram`. The torch backend runs every
    (H, draw) pair and every beta of a chunk as one batch: per layer two batched matrix products
    (the weights of a draw are shared by its betas), with the renormalisation and log-norm
    bookkeeping of the NumPy kernels (exact for the positively homogeneous layer; every
    :data:`RENORM_EVERY` layers instead of every layer, log norms summed in float64), so the
    explosion side cannot overflow, in float32 either. The gradient pass keeps the signs of
    :math:`W_{k+1} h_k` (one byte per entry) and runs the co-state recursion backwards.

:func:`explicit_res3_ratios`
    Figure 2 (thesis Figure 2.2) with explicit i.i.d. :math:`\mathcal N(0, 1/d)` matrices: for each run
    :math:`\|h_L\|/\|h_0\|` and :math:`\|p_0\|/\|p_L\|` (p the back-propagated co-state, from a
    Gaussian :math:`p_L`). The weights of layer k of chunk c come from a generator seeded by
    (seed, c, k), so the backward pass draws them again instead of storing them (at 10^4 runs,
    L = 1000, d = 100 they would take 1.6 TB).
"""

from __future__ import annotations

import math

import numpy as np

from theory._validation import format_bytes
from theory.backends import Backend

__all__ = ["phase_grid", "phase_grid_plan", "explicit_res3_ratios", "fgn_torch"]

_LN10 = math.log(10.0)
#: the torch backend renormalises the states every this many layers (the NumPy kernels: every layer).
#: Exact in exact arithmetic (the layer is positively homogeneous); a state grows by at most a factor
#: 1 + alpha ||V_k|| ||W_k|| per layer, so 8 layers stay far inside float32's range, and the kernels
#: of the other layers are the two matrix products only (what a plain loop costs)
RENORM_EVERY = 8
#: host memory a torch chunk may use on a CPU device (device memory: half of what CUDA reports free)
_CPU_BUDGET = 2**31


def _budget(b: Backend, memory):
    if memory is not None:
        return float(memory)
    if b.device.startswith("cuda"):
        import torch

        free, _ = torch.cuda.mem_get_info(b.torch_device)
        return 0.5 * free
    return float(_CPU_BUDGET)


def _chunks(n_groups, nb, per_group_fixed, per_cell, budget, what):
    """(groups per chunk, betas per chunk) fitting ``budget`` bytes, or a ValueError with the size
    (``what`` names the argument, e.g. "`L` = 1000")."""
    need_one = per_group_fixed + per_cell
    if need_one > budget:
        raise ValueError(f"{what} of theory.backends.scaling.phase_grid: one weight draw at one beta needs "
                         f"{format_bytes(need_one)} on the device, above the {format_bytes(budget)} available; "
                         "reduce L, d or n_inputs")
    nbc = int(max(1, min(nb, (budget - per_group_fixed) // per_cell)))
    per_group = per_group_fixed + nbc * per_cell
    return int(max(1, min(n_groups, budget // per_group))), nbc


# ------------------------------------------------------------------------------------------- fGn


def fgn_torch(n, hurst, count, gen, device, dtype):
    """``count`` unit-variance fGn paths of length n of Hurst index ``hurst`` (Davies-Harte, float64
    on ``device`` from the torch Generator ``gen``), shape (count, n), cast to ``dtype``."""
    import torch

    k = torch.arange(n + 1, device=device, dtype=torch.float64)
    h2 = 2.0 * hurst
    g = 0.5 * ((k + 1) ** h2 - 2 * k ** h2 + (k - 1).abs() ** h2)
    row = torch.cat([g, g[1:n].flip(0)])  # length 2n
    lam = torch.fft.fft(row).real
    if float(lam.min()) < -1e-9 * float(lam.abs().max()):  # never for fGn (0 < H < 1); a guard
        raise ValueError(f"`hurst` = {hurst!r}: the circulant embedding has a negative eigenvalue")
    lam = lam.clamp_min(0.0)
    m = 2 * n
    half = (count + 1) // 2
    z = torch.randn(half, m, 2, device=device, dtype=torch.float64, generator=gen)
    x = torch.fft.fft(torch.sqrt(lam / m) * torch.complex(z[..., 0], z[..., 1]))[:, :n]
    return torch.cat([x.real, x.imag], dim=0)[:count].to(dtype)


# ------------------------------------------------------------------------------------------- Figure 7


def _log_dist(torch, s, u, v):
    """log ||e^s u - v|| for rows (as theory.scaling's NumPy version), without overflow."""
    u, v = u.to(torch.float64), v.to(torch.float64)
    pos = s >= 0.0
    lo = torch.exp(-s.abs()).unsqueeze(-1)
    diff = torch.where(pos.unsqueeze(-1), u - lo * v, lo * u - v)
    return torch.where(pos, s, torch.zeros_like(s)) + torch.log(torch.linalg.vector_norm(diff, dim=-1))


def _renorm(torch, x, logs):
    n = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    # float64 accumulator whatever the dtype: a float32 sum of 1000 log steps would lose 1e-4 on
    # the explosion side; checked once after the loop (a check per layer would sync the device)
    logs += torch.log(n.squeeze(-1)).to(torch.float64)
    return x / n


def _finite(torch, logs, what):
    if not bool(torch.all(torch.isfinite(logs))):
        from theory._errors import NonFiniteError

        raise NonFiniteError(f"{what} became zero or overflowed in the torch backend (log norm not finite)")


def _torch_cells(b, V, W, h0, pL, alphas, gradients):
    """Log10 ratios, shape (G, nb) each, for weights V, W (G, L, d, d), inputs h0, pL (G, B, d) and
    the factors ``alphas`` (nb,) (Python floats), on the backend's device."""
    import torch

    G, L, d, _ = V.shape
    B = h0.shape[1]
    nb = len(alphas)
    dt = b.torch_dtype
    al = torch.tensor(alphas, dtype=torch.float64, device=V.device).to(dt).repeat_interleave(B)[None, :, None]
    u0 = h0 / torch.linalg.vector_norm(h0, dim=-1, keepdim=True)
    u0 = u0.repeat(1, nb, 1)  # (G, nb*B, d), row j*B + i: beta j, input i
    h = u0.clone()
    logs = torch.zeros(G, nb * B, dtype=torch.float64, device=V.device)
    masks = torch.empty((L, G, nb * B, d), dtype=torch.bool, device=V.device) if gradients else None
    for k in range(L):
        z = torch.bmm(h, W[:, k].transpose(1, 2))
        if gradients:
            torch.gt(z, 0, out=masks[k])
        h = torch.baddbmm(h, torch.relu(z) * al, V[:, k].transpose(1, 2))
        if k % RENORM_EVERY == RENORM_EVERY - 1 or k == L - 1:
            h = _renorm(torch, h, logs)
    _finite(torch, logs, "a hidden state")
    hidden = (_log_dist(torch, logs, h, u0).reshape(G, nb, B).to(torch.float64).mean(-1) / _LN10).cpu().numpy()
    if not gradients:
        return hidden, None
    r = (pL / torch.linalg.vector_norm(pL, dim=-1, keepdim=True)).repeat(1, nb, 1)
    p = r.clone()
    logp = torch.zeros_like(logs)
    for k in range(L - 1, -1, -1):
        u = torch.bmm(p, V[:, k]) * masks[k] * al
        p = torch.baddbmm(p, u, W[:, k])
        if k % RENORM_EVERY == 0:
            p = _renorm(torch, p, logp)
    _finite(torch, logp, "a co-state p_k")
    grad = (_log_dist(torch, logp, p, r).reshape(G, nb, B).to(torch.float64).mean(-1) / _LN10).cpu().numpy()
    return hidden, grad


def phase_grid_plan(n_hurst, n_beta, *, L, d, n_seeds, n_inputs, gradients, dtype, memory):
    """How :func:`phase_grid` splits a grid on the torch backend: (draws per chunk, betas per chunk,
    bytes per chunk), counting the two weight tensors, the states and, with gradients, one byte per
    (layer, input, beta, coordinate) for the signs. ValueError (naming the size needed) when one
    (H, draw) pair at one beta does not fit ``memory`` bytes."""
    item = 8 if dtype == "float64" else 4
    per_group = 2 * L * d * d * item + 2 * n_inputs * d * item
    per_cell = n_inputs * d * (6 * item + 16 + (L if gradients else 0))
    g, b = _chunks(n_hurst * n_seeds, n_beta, per_group, per_cell, memory, f"`L` = {L} (d = {d})")
    return g, b, g * (per_group + b * per_cell)


def phase_grid(hurst, beta, *, L, d, n_seeds, n_inputs=1, rng, backend: Backend, gradients=True,
               draws_on="host", seed=0, weights_fn=None, memory=None):
    r"""Log10 ratios of res-3 over a (Hurst index, beta) grid, arrays of shape (nH, nB, n_seeds).

    ``hidden[i, j, s]`` is the mean over the ``n_inputs`` inputs of draw s of
    :math:`\log_{10}(\|h_L - h_0\|/\|h_0\|)` at Hurst index ``hurst[i]`` and exponent ``beta[j]``;
    ``gradient`` likewise for :math:`\log_{10}(\|p_0 - p_L\|/\|p_L\|)` (None without ``gradients``).

    With the NumPy backend this is :func:`theory.scaling.phase.phase_diagram` (same arguments). With
    the torch backend and ``draws_on="host"`` the draws are the same (V, W by ``weights_fn`` or
    :func:`theory.scaling.weights`, then h_0, p_L, per Hurst index and draw, from ``rng``) and the
    ratios agree to round-off; with ``draws_on="device"`` the weights are fGn drawn on the device by
    Davies-Harte (:func:`fgn_torch`) from a torch Generator seeded with ``seed``. The grid is split
    into chunks of (H, draw) pairs and betas that fit ``memory`` bytes (default: half the free CUDA
    memory, or 2 GiB on a CPU); a single (draw, beta) that does not fit is refused with its size.
    """
    if not backend.is_torch:
        from theory.scaling.phase import phase_diagram

        pd = phase_diagram(hurst, beta, L=L, d=d, n_seeds=n_seeds, n_inputs=n_inputs, rng=rng,
                           gradients=gradients, weights_fn=weights_fn)
        return pd.hidden, pd.gradient
    import torch

    from theory.scaling import weights

    hs = [float(h) for h in hurst]
    bs = np.asarray(beta, dtype=float)
    if np.any(bs <= 0.0) or np.any(np.diff(bs) <= 0.0):
        raise ValueError(f"`beta` must be positive and strictly increasing; got {bs.tolist()[:8]}")
    alphas = [float(L) ** (-float(x)) for x in bs]
    dev, dt = backend.torch_device, backend.torch_dtype
    n_groups = len(hs) * n_seeds
    gchunk, bchunk, _ = phase_grid_plan(len(hs), bs.size, L=L, d=d, n_seeds=n_seeds, n_inputs=n_inputs,
                                        gradients=gradients, dtype=backend.dtype, memory=_budget(backend, memory))
    hidden = np.empty((len(hs), bs.size, n_seeds))
    grad = np.empty_like(hidden) if gradients else None
    gen = torch.Generator(device=dev).manual_seed(int(seed)) if draws_on == "device" else None
    draw = weights_fn or (lambda L_, d_, H_, g_: weights(L_, d_, "fbm", H_, rng=g_))
    pairs = [(i, s) for i in range(len(hs)) for s in range(n_seeds)]
    for start in range(0, n_groups, gchunk):
        block = pairs[start:start + gchunk]
        Vs, Ws, H0, PL = [], [], [], []
        for i, _ in block:
            if draws_on == "device":
                for out in (Vs, Ws):
                    x = fgn_torch(L, hs[i], d * d, gen, dev, torch.float64)  # (d*d, L)
                    out.append((x.T.reshape(L, d, d) / math.sqrt(d)).to(dt))
                H0.append(torch.randn(n_inputs, d, generator=gen, device=dev, dtype=torch.float64).to(dt))
                PL.append(torch.randn(n_inputs, d, generator=gen, device=dev, dtype=torch.float64).to(dt))
            else:
                Vs.append(torch.as_tensor(np.asarray(draw(L, d, hs[i], rng), dtype=float)).to(dev, dt))
                Ws.append(torch.as_tensor(np.asarray(draw(L, d, hs[i], rng), dtype=float)).to(dev, dt))
                H0.append(torch.as_tensor(rng.standard_normal((n_inputs, d))).to(dev, dt))
                PL.append(torch.as_tensor(rng.standard_normal((n_inputs, d))).to(dev, dt))
        V, W = torch.stack(Vs), torch.stack(Ws)
        h0, pL = torch.stack(H0), torch.stack(PL)
        del Vs, Ws
        for j0 in range(0, bs.size, bchunk):
            hid, gr = _torch_cells(backend, V, W, h0, pL, alphas[j0:j0 + bchunk], gradients)
            for n, (i, s) in enumerate(block):
                hidden[i, j0:j0 + bchunk, s] = hid[n]
                if gradients:
                    grad[i, j0:j0 + bchunk, s] = gr[n]
        del V, W
    return hidden, grad


# ------------------------------------------------------------------------------------------- Figure 2


def _layer_normals(backend, draws_on, seed, chunk, k, shape):
    """The standard normals of layer k of chunk ``chunk``: (W, V) entries, shape ``shape`` each."""
    if draws_on == "device":
        import torch

        g = torch.Generator(device=backend.torch_device).manual_seed(
            int(np.random.SeedSequence([seed, chunk, k]).generate_state(1, np.uint64)[0] >> 1))
        return (torch.randn(shape, generator=g, device=backend.torch_device, dtype=torch.float64),
                torch.randn(shape, generator=g, device=backend.torch_device, dtype=torch.float64))
    g = np.random.default_rng([seed, chunk, k])
    return g.standard_normal(shape), g.standard_normal(shape)


def explicit_res3_ratios(runs, d, L, beta, seed, *, backend: Backend, draws_on="host", chunk=2500,
                         gradients=True):
    r"""(``h``, ``p``): :math:`\|h_L\|/\|h_0\|` and :math:`\|p_0\|/\|p_L\|` of ``runs`` res-3 networks with
    explicit i.i.d. :math:`\mathcal N(0, 1/d)` matrices V, W, ReLU, :math:`\alpha = L^{-\beta}`,
    Gaussian :math:`h_0` and :math:`p_L`; the co-state runs
    :math:`p_k = p_{k+1} + \alpha W_{k+1}^\top D_k V_{k+1}^\top p_{k+1}`, :math:`D_k` the ReLU
    derivative at :math:`W_{k+1} h_k`. Arrays of shape (runs,) (``p`` None without ``gradients``).

    Runs go in chunks of ``chunk``; the inputs of chunk c come from a generator seeded (seed, c, L)
    and the weights of layer k from one seeded (seed, c, k) (NumPy's on the host, or a torch
    Generator on the device with ``draws_on="device"``), so the backward pass draws them again.
    """
    alpha = float(L) ** (-float(beta))
    s = 1.0 / math.sqrt(d)
    R = min(chunk, runs)
    item = 8 if backend.dtype == "float64" else 4
    need = R * (4 * d * d * 8 + 8 * d * item + (L * d if gradients else 0))  # normals, weights, states, signs
    budget = _budget(backend, None) if backend.is_torch else float(2**34)
    if need > budget:
        raise ValueError(f"`chunk` = {chunk} of theory.backends.scaling.explicit_res3_ratios needs "
                         f"{format_bytes(need)} per chunk (d = {d}, L = {L}), above the {format_bytes(budget)} "
                         f"available; use a chunk of at most {max(1, int(budget // (need / R)))} networks")
    hs, ps = [], []
    for c, start in enumerate(range(0, runs, chunk)):
        R = min(chunk, runs - start)
        shape = (R, d, d)
        if backend.is_torch:
            import torch

            dev, dt = backend.torch_device, backend.torch_dtype
            if draws_on == "device":
                g = torch.Generator(device=dev).manual_seed(
                    int(np.random.SeedSequence([seed, c, L]).generate_state(1, np.uint64)[0] >> 1))
                h0 = torch.randn(R, d, generator=g, device=dev, dtype=torch.float64)
                pL = torch.randn(R, d, generator=g, device=dev, dtype=torch.float64)
            else:
                g = np.random.default_rng([seed, c, L])
                h0, pL = (torch.as_tensor(g.standard_normal((R, d))).to(dev) for _ in range(2))
            h0, pL = h0.to(dt), pL.to(dt)

            def layer(k):
                Wn, Vn = _layer_normals(backend, draws_on, seed, c, k, shape)
                return torch.as_tensor(Wn).to(dev, dt) * s, torch.as_tensor(Vn).to(dev, dt) * s

            h = h0.clone()
            masks = torch.empty((L, R, d), dtype=torch.bool, device=dev) if gradients else None
            for k in range(L):
                Wk, Vk = layer(k)
                z = torch.bmm(Wk, h.unsqueeze(-1)).squeeze(-1)
                if gradients:
                    torch.gt(z, 0, out=masks[k])
                h = h + alpha * torch.bmm(Vk, torch.relu(z).unsqueeze(-1)).squeeze(-1)
            nrm = torch.linalg.vector_norm
            hs.append((nrm(h, dim=-1) / nrm(h0, dim=-1)).to(torch.float64).cpu().numpy())
            if gradients:
                p = pL.clone()
                for k in range(L - 1, -1, -1):
                    Wk, Vk = layer(k)
                    u = torch.bmm(Vk.transpose(1, 2), p.unsqueeze(-1)).squeeze(-1) * masks[k]
                    p = p + alpha * torch.bmm(Wk.transpose(1, 2), u.unsqueeze(-1)).squeeze(-1)
                ps.append((nrm(p, dim=-1) / nrm(pL, dim=-1)).to(torch.float64).cpu().numpy())
            continue
        g = np.random.default_rng([seed, c, L])
        h0, pL = g.standard_normal((R, d)), g.standard_normal((R, d))
        h = h0.copy()
        masks = np.empty((L, R, d), dtype=bool) if gradients else None
        for k in range(L):
            Wn, Vn = _layer_normals(backend, "host", seed, c, k, shape)
            z = np.matmul(Wn * s, h[..., None])[..., 0]
            if gradients:
                masks[k] = z > 0
            h = h + alpha * np.matmul(Vn * s, np.maximum(z, 0.0)[..., None])[..., 0]
        hs.append(np.linalg.norm(h, axis=-1) / np.linalg.norm(h0, axis=-1))
        if gradients:
            p = pL.copy()
            for k in range(L - 1, -1, -1):
                Wn, Vn = _layer_normals(backend, "host", seed, c, k, shape)
                u = np.matmul(np.swapaxes(Vn * s, 1, 2), p[..., None])[..., 0] * masks[k]
                p = p + alpha * np.matmul(np.swapaxes(Wn * s, 1, 2), u[..., None])[..., 0]
            ps.append(np.linalg.norm(p, axis=-1) / np.linalg.norm(pL, axis=-1))
    return np.concatenate(hs), (np.concatenate(ps) if gradients else None)
