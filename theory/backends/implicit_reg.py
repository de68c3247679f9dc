r"""Full-batch gradient descent of the residual network of paper key ``implicit-reg`` on either backend
(:mod:`theory.backends`), several runs at once.

The network is model (3) of "Implicit regularization of deep residual networks towards neural ODEs"
(Marion, Wu, Sander, Biau, ICLR 2024; chapter 3 of Marion's and Sander's theses):
:math:`h_0 = A x`, :math:`h_{k+1} = h_k + \frac{1}{L\sqrt m} V_{k+1}\sigma(W_{k+1}h_k/\sqrt q)`,
:math:`F(x) = B h_L`, loss :math:`\ell = \frac1n\sum_i\|F(x_i) - y_i\|^2`, trained by the Euler steps of
the depth-scaled gradient flow, Eq. (4): :math:`Z_k \leftarrow Z_k - \eta L\,\partial_{Z_k}\ell`
(and :math:`A, B \leftarrow \cdot - \eta\,\partial\ell` when they are trained). The NumPy backend is
:func:`theory.implicit.train` (``method="gd"``), one run at a time.

:func:`gd_runs` runs R networks of the same shapes (R seeds, each with its own data and
initialisation) as one batch: per layer three batched matrix products forward and three backward
(the backpropagation of Eqs. (13)-(15), with the transpose the printed Eq. (13) omits), and the weight
gradients of all layers as one batched product after the backward sweep. The diagnostics that the
experiments of Section 5.1 read between steps (the largest successive difference
:math:`\max_k \|Z_{k+1} - Z_k\|`, sum of Frobenius norms) are computed on the device; the weights
at the recorded steps come back to the host.

Precision. The weights are kept in float64 in both modes; with ``dtype="float32"`` the forward and
backward passes run in float32 and their gradients are added to the float64 weights (mixed precision).
The successive differences and second differences of the weights, which the figures read, are
differences of nearly equal matrices (tied initialisation): computed from float32 weights they would
lose most of their digits. Measured against the NumPy backend on the same draws, on the "check" presets
of ``implicit_reg.fig1`` (100 steps) and ``fig2`` (4000 steps): float64 agrees to 1.7e-13 or better;
float32 to 1.9e-6 absolute on Figure 1's distances (values 1e-3 to 0.2), 1.3e-6 on Figure 2's losses,
8e-8 on its roughness ratios and 3.3e-5 on L max_k ||Z_{k+1} - Z_k|| (values near 100: 3e-7
relative). The stated tolerance :data:`theory.backends.FLOAT32_ATOL` = 2e-5 absolute is tested at small
sizes in tests/test_backends.py; at the check sizes it holds for every figure except the last one
(read it as 3e-7 relative there). ``implicit_reg.table1_digits``
refuses float32: the roughness of nearly tied weights that its verdict reads moved by up to half its
value there. Use float64 for anything compared with a statement.

Memory. A run stores its states h_0..h_L (n q each) and per layer the activations, the derivatives
and the co-states (2 n m + n q): :func:`run_bytes`. Runs are split into groups that fit the budget
(half the free CUDA memory, or 2 GiB on a CPU); a single run that does not fit is refused with the
size it needs.
"""

from __future__ import annotations

import math

import numpy as np

from theory._validation import format_bytes
from theory.backends import Backend

__all__ = ["gd_runs", "run_bytes", "successive_differences"]

_CPU_BUDGET = 2**31
#: layers whose activation derivatives are computed together after the forward sweep (bounds the
#: temporaries of the batched sigma' to this many layers)
_DERIV_BLOCK = 256


def run_bytes(L, n, q, m, dtype="float64"):
    """Bytes one run of :func:`gd_runs` keeps on the device during a gradient evaluation, in ``dtype``: the
    states (L + 1) n q, activations L n m and co-states L n q, each twice (per layer, then stacked for the
    batched weight gradients), the derivatives L n m, the weights' working copies and gradients 2 L q m;
    and the float64 weights and their updates (4 L q m entries)."""
    item = 8 if dtype == "float64" else 4
    return item * (2 * (L + 1) * n * q + 3 * L * n * m + 2 * L * n * q + 2 * L * q * m) + 8 * 4 * L * q * m


def _budget(b: Backend, memory):
    if memory is not None:
        return float(memory)
    if b.device.startswith("cuda"):
        import torch

        free, _ = torch.cuda.mem_get_info(b.torch_device)
        return 0.5 * free
    return float(_CPU_BUDGET)


def _sigma(torch, activation, u):
    if activation == "tanh":
        return torch.tanh(u)
    if activation == "gelu":
        return torch.nn.functional.gelu(u)  # the exact x Phi(x), as the NumPy kernels
    if activation == "sin":
        return torch.sin(u)
    if activation == "relu":
        return torch.relu(u)
    if activation == "identity":
        return u
    raise ValueError(f"`activation` must be one of tanh, gelu, sin, relu, identity; got {activation!r}")


def _dsigma(torch, activation, u):
    if activation == "tanh":
        t = torch.tanh(u)
        return 1.0 - t * t
    if activation == "gelu":
        return 0.5 * (1.0 + torch.erf(u * 0.7071067811865476)) + u * 0.3989422804014327 * torch.exp(-0.5 * u * u)
    if activation == "sin":
        return torch.cos(u)
    if activation == "relu":
        return (u > 0).to(u.dtype)  # sigma'(0) = 0, as the NumPy kernels
    return torch.ones_like(u)


def successive_differences(V, W):
    r""":math:`\|V_{k+1} - V_k\|_F + \|W_{k+1} - W_k\|_F` for k = 1..L-1, on tensors of layout
    (L, R, ., .); shape (L - 1, R)."""
    import torch

    dv = torch.linalg.matrix_norm(V[1:] - V[:-1])
    dw = torch.linalg.matrix_norm(W[1:] - W[:-1])
    return dv + dw


def _loss_grad(torch, activation, X, Y, A, V, W, B, n):
    """Loss per run (float64, shape (R,)) and gradients (gA, gV, gW, gB) in the compute dtype, layout
    (L, R, ., .) for V, W. X (R, n, d), Y (R, n, d'), A (R, q, d), B (R, d', q)."""
    L, R, q, m = V.shape
    step = 1.0 / (L * math.sqrt(m))
    c_w = 1.0 / (L * math.sqrt(m * q))
    Ws = W * (1.0 / math.sqrt(q))
    h = torch.bmm(X, A.transpose(1, 2))
    hs, Us, Ss = [h], [], []
    for k in range(L):
        u = torch.bmm(h, Ws[k].transpose(1, 2))
        s = _sigma(torch, activation, u)
        h = torch.baddbmm(h, s, V[k].transpose(1, 2), alpha=step)
        hs.append(h)
        Us.append(u)
        Ss.append(s)
    res = torch.bmm(h, B.transpose(1, 2)) - Y
    loss = (res.to(torch.float64) ** 2).sum(dim=(1, 2)) / n
    P = torch.bmm(res, B) * (2.0 / n)
    U = torch.stack(Us)
    del Us
    for k0 in range(0, L, _DERIV_BLOCK):  # D = c_w sigma'(U), in place of U
        U[k0:k0 + _DERIV_BLOCK] = _dsigma(torch, activation, U[k0:k0 + _DERIV_BLOCK]) * c_w
    D = U
    Ps = [None] * L
    for k in range(L - 1, -1, -1):
        Ps[k] = P  # p_{k+1}
        g = D[k].mul_(torch.bmm(P, V[k]))  # G_k, in place of D_k (not needed again)
        P = torch.baddbmm(P, g, W[k])
    G = D
    flat = L * R
    Pk = torch.stack(Ps).reshape(flat, -1, q)
    del Ps
    S = torch.stack(Ss).reshape(flat, -1, m)
    del Ss
    gV = torch.bmm(Pk.transpose(1, 2), S).reshape(L, R, q, m) * step
    H = torch.stack(hs[:-1]).reshape(flat, -1, q)
    gW = torch.bmm(G.reshape(flat, -1, m).transpose(1, 2), H).reshape(L, R, m, q)
    gA = torch.bmm(P.transpose(1, 2), X)
    gB = torch.bmm(res.transpose(1, 2), h) * (2.0 / n)
    return loss, gA, gV, gW, gB


def gd_runs(X, Y, params, activation, *, lr, record, backend: Backend, train_outer=False, observe_every=None,
            memory=None, keep_states=True):
    r"""Gradient descent of Eq. (4) for R runs at once; the torch counterpart of R calls of
    :func:`theory.implicit.train` (``method="gd"``) with checkpoints.

    Parameters
    ----------
    X, Y : sequences of R arrays, shapes (n, d) and (n, d')
        The samples of each run (the same n, d, d' for every run).
    params : sequence of R :class:`theory.implicit.Params`
        Starting points (same shapes).
    activation : str
        sigma, one of ``theory.implicit.ACTIVATIONS``.
    lr : float
        The step; the residual weights take L lr (Eq. (4)).
    record : tuple of int
        Increasing step counts at which the weights are returned; the last is the total number of steps.
    backend : Backend
        A resolved torch backend.
    train_outer : bool
        Train A and B too (False keeps them fixed, as in Section 5.1).
    observe_every : int or None
        Also return :math:`\max_k\|Z_{k+1} - Z_k\|` (sum-norm) every this many steps, from step 0.
    memory : float or None
        Device bytes the runs may use (default: half the free CUDA memory, 2 GiB on a CPU).
    keep_states : bool
        Return the weights at the recorded steps (False: only the final ones).

    Returns
    -------
    dict
        ``states``: {step: list of R Params} (float64 NumPy, on the host); ``losses``: array (R, steps + 1),
        the loss before each step and after the last; ``dmax``: array (R, steps // observe_every + 1) or None.

    Raises
    ------
    ValueError
        A single run needs more than ``memory`` bytes (the message gives the size).
    theory.NonFiniteError
        The iteration diverged.
    """
    import torch

    from theory.implicit import Params

    R = len(params)
    where = "theory.backends.implicit_reg.gd_runs"
    record = tuple(record)
    if (not record or any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1 for s in record)
            or any(b <= a for a, b in zip(record, record[1:]))):
        raise ValueError(f"`record` of {where} must be a non-empty increasing tuple of ints >= 1; got {record!r}")
    bad_every = isinstance(observe_every, bool) or not isinstance(observe_every, (int, np.integer))
    if observe_every is not None and (bad_every or observe_every < 1):
        raise ValueError(f"`observe_every` of {where} must be None or an int >= 1; got {observe_every!r}")
    if R < 1 or len(X) != R or len(Y) != R:
        raise ValueError(f"`params` of {where} must hold R >= 1 starting points, one per entry of `X` and `Y`; got "
                         f"{R}, {len(X)}, {len(Y)}")
    record = tuple(int(s) for s in record)
    steps = record[-1]
    L, q, m = params[0].V.shape
    n = int(np.shape(X[0])[0])
    need = run_bytes(L, n, q, m, backend.dtype)
    budget = _budget(backend, memory)
    if need > budget:
        raise ValueError(f"`L` = {L} of {where}: one run (n = {n}, q = {q}, m = {m}) "
                         f"needs {format_bytes(need)} on the device, above the {format_bytes(budget)} available; "
                         "reduce L, n or m")
    group = int(max(1, min(R, budget // need)))
    out = {"states": {s: [None] * R for s in record}, "losses": np.empty((R, steps + 1)),
           "dmax": None if observe_every is None else np.empty((R, steps // observe_every + 1))}
    dev, dt = backend.torch_device, backend.torch_dtype
    f64 = torch.float64
    for r0 in range(0, R, group):
        idx = range(r0, min(R, r0 + group))

        def stack(get, layers=False):
            t = torch.as_tensor(np.stack([np.asarray(get(i), dtype=float) for i in idx]))
            return (t.transpose(0, 1).contiguous() if layers else t).to(dev, f64)

        Xt, Yt = stack(lambda i: X[i]).to(dt), stack(lambda i: Y[i]).to(dt)
        A, B = stack(lambda i: params[i].A), stack(lambda i: params[i].B)
        V, W = stack(lambda i: params[i].V, True), stack(lambda i: params[i].W, True)
        losses = torch.empty((len(idx), steps + 1), dtype=f64, device=dev)
        dmax = []
        for j in range(steps + 1):
            if observe_every is not None and j % observe_every == 0:
                dmax.append(successive_differences(V, W).amax(dim=0))
            if j in out["states"] and (keep_states or j == steps):
                vh, wh = V.transpose(0, 1).cpu().numpy(), W.transpose(0, 1).cpu().numpy()
                ah, bh = A.cpu().numpy(), B.cpu().numpy()
                for a, i in enumerate(idx):
                    out["states"][j][i] = Params(ah[a].copy(), vh[a].copy(), wh[a].copy(), bh[a].copy())
            loss, gA, gV, gW, gB = _loss_grad(torch, activation, Xt, Yt, A.to(dt), V.to(dt), W.to(dt), B.to(dt), n)
            losses[:, j] = loss
            if j == steps:
                break
            V.sub_(gV.to(f64), alpha=lr * L)
            W.sub_(gW.to(f64), alpha=lr * L)
            if train_outer:
                A.sub_(gA.to(f64), alpha=lr)
                B.sub_(gB.to(f64), alpha=lr)
        lh = losses.cpu().numpy()
        if not np.all(np.isfinite(lh)):
            from theory._errors import NonFiniteError

            bad = int(np.argmax(~np.all(np.isfinite(lh), axis=0)))
            raise NonFiniteError(f"theory.backends.implicit_reg.gd_runs: diverged at step {bad} of {steps} with "
                                 f"lr = {lr}; reduce `lr`")
        out["losses"][list(idx)] = lh
        if dmax:
            out["dmax"][list(idx)] = torch.stack(dmax, dim=1).cpu().numpy()
    if not keep_states:
        out["states"] = {steps: out["states"][steps]}
    return out
