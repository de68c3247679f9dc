r"""Training of res-1 and res-3 by Adam, batched over many networks, on either array backend: the
computation of Figures 8 and 9 of paper key ``scaling`` (Marion, Fermanian, Biau, Vert, "Scaling
ResNets in the Large-depth Regime", Section 4.2; thesis Figures 2.8 and 2.9).

:func:`train`
    G networks at once (the setups of Figure 8, or the (H, beta, learning rate) cells of Figure 9),
    each with its own weights, scaling factor :math:`\alpha = L^{-\beta}` and learning rate, on the
    same data. The residual stack is

    * res-3: :math:`h_k = h_{k-1} + \alpha V_k\,\mathrm{ReLU}(W_k h_{k-1})`,
    * res-1: :math:`h_k = h_{k-1} + \alpha V_k\,\mathrm{ReLU}(h_{k-1})`,

    with a fixed read-out B (d, C): the mean squared loss :math:`\frac1{2n}\sum_i(\langle B, h_L\rangle
    - y_i)^2` (C = 1) or the mean cross-entropy of the logits :math:`B^\top h_L` (C classes). The
    gradients are the back-propagation of :mod:`theory.scaling.training` written with batched matrix
    products: with :math:`p_k = \partial\ell/\partial h_k`, :math:`z_k = W_k h_{k-1}`,
    :math:`D_k = \mathrm{diag}(1\{z_k > 0\})`,

    .. math::
        \frac{\partial\ell}{\partial V_k} = \alpha\, p_k\,\mathrm{ReLU}(z_k)^\top,\quad
        u_k = \alpha D_k V_k^\top p_k,\quad \frac{\partial\ell}{\partial W_k} = u_k h_{k-1}^\top,\quad
        p_{k-1} = p_k + W_k^\top u_k

    (res-1: :math:`\partial\ell/\partial V_k = \alpha p_k\mathrm{ReLU}(h_{k-1})^\top`,
    :math:`p_{k-1} = p_k + \alpha\,\mathrm{diag}(1\{h_{k-1} > 0\}) V_k^\top p_k`), summed over the
    samples of the batch. Adam: :math:`m \leftarrow 0.9m + 0.1g`, :math:`v \leftarrow 0.999v + 0.001g^2`,
    :math:`\theta \leftarrow \theta - \eta_t \hat m/(\sqrt{\hat v} + 10^{-8})` with the bias corrections
    :math:`\hat m = m/(1 - 0.9^t)`, :math:`\hat v = v/(1 - 0.999^t)`.

    The same code runs on NumPy arrays (``backend="numpy"``) and on torch tensors (CPU or CUDA): the
    states of the L layers of a batch are kept (L + 1 arrays of shape (G, n, d)) and the pre-activations
    recomputed in the backward pass. In float64 the two agree to round-off (1e-10 on the losses,
    weights and the figures' statistics at the test sizes). In float32 each step's round-off (6e-8
    relative) is carried on by Adam, whose update is a ratio of moving averages, so the difference
    grows with the number of steps. Measured against float64 on the same draws (largest absolute
    difference over losses, weights, paths, exponents, accuracies): 8e-7 at the test sizes (a few
    tens of steps); 2.2e-5 at Figure 8's check preset (L = 200, 70 steps); 2.2e-6 for Figure 9 at
    L = 100, d = 16, 16 steps (equal accuracies). Not measured at the paper's sizes (500 steps at
    L = 1000): use float64 for anything compared with a statement.

Memory: (L + 1) n d states, 4 P L d^2 weights, moments and gradients per network (P = 2 for res-3, 1 for
res-1); :func:`networks_per_chunk` gives how many networks fit a budget.
"""

from __future__ import annotations

import math

import numpy as np

from theory._validation import format_bytes
from theory.backends import Backend

__all__ = ["train", "networks_per_chunk", "ARCHS", "LOSSES"]

ARCHS = ("res1", "res3")
LOSSES = ("mse", "xent")
_CPU_BUDGET = 2**31


class _NP:
    """The few array operations of :func:`train`, on NumPy."""

    def __init__(self, backend):
        self.b = backend

    def asarray(self, x):
        return np.array(x, dtype=float)

    def zeros_like(self, x):
        return np.zeros_like(x)

    def swap(self, x):
        return np.swapaxes(x, -1, -2)

    def exp(self, x):
        return np.exp(x)

    def log(self, x):
        return np.log(x)

    def amax(self, x):
        return np.max(x, axis=-1, keepdims=True)

    def argmax(self, x):
        return np.argmax(x, axis=-1)

    def host(self, x):
        return np.array(x, dtype=float)

    def take(self, x, idx):
        return x[idx]

    def onehot(self, labels, C):
        return np.eye(C)[np.asarray(labels)]


class _TORCH(_NP):
    def __init__(self, backend):
        import torch

        self.t = torch
        self.b = backend
        self.dev, self.dt = backend.torch_device, backend.torch_dtype

    def asarray(self, x):
        return self.t.as_tensor(np.array(x, dtype=float)).to(self.dev, self.dt)

    def zeros_like(self, x):
        return self.t.zeros_like(x)

    def swap(self, x):
        return x.transpose(-1, -2)

    def exp(self, x):
        return self.t.exp(x)

    def log(self, x):
        return self.t.log(x)

    def amax(self, x):
        return x.amax(dim=-1, keepdim=True)

    def argmax(self, x):
        return x.argmax(dim=-1)

    def host(self, x):
        return x.to(self.t.float64).cpu().numpy()

    def take(self, x, idx):
        return x[self.t.as_tensor(np.asarray(idx), device=self.dev)]

    def onehot(self, labels, C):
        return self.asarray(np.eye(C)[np.asarray(labels)])


def _ops(backend: Backend):
    return _TORCH(backend) if backend.is_torch else _NP(backend)


def networks_per_chunk(arch, L, d, batch, *, dtype="float64", memory, n_eval=0):
    """How many networks :func:`train` may run at once in ``memory`` bytes: per network the weights,
    Adam's two moments, the gradients and the temporaries of the update (7 P L d^2), the L + 1 states
    of a batch plus the temporaries of one layer, trained input and read-out layers of up to 64 inputs
    and 10 outputs, and the evaluation of ``n_eval`` samples (4 n_eval d). ValueError naming the size
    when one network does not fit."""
    item = 8 if dtype == "float64" else 4
    P = 2 if arch == "res3" else 1
    per = item * (7 * P * L * d * d + (L + 8) * batch * d + 7 * d * (64 + 10) + 4 * n_eval * d)
    if per > memory:
        raise ValueError(f"`L` = {L} (d = {d}, batch = {batch}) of theory.backends.scaling_train.train: one "
                         f"network needs {format_bytes(per)}, above the {format_bytes(memory)} available; "
                         "reduce L, d or the batch")
    return int(memory // per)


def budget(backend: Backend, memory=None):
    """Bytes a chunk of networks may use: ``memory`` if given, else half the free CUDA memory, or 2 GiB
    on a CPU."""
    if memory is not None:
        return float(memory)
    if backend.is_torch and backend.device.startswith("cuda"):
        import torch

        free, _ = torch.cuda.mem_get_info(backend.torch_device)
        return 0.5 * free
    return float(_CPU_BUDGET)


def _forward(o, arch, theta, alpha, h, keep=True):
    """States h_0..h_L (list of (G, n, d)) of the stack; with ``keep=False`` only [h_L] (evaluation:
    the states of a whole data set for every network would not fit)."""
    L = theta[0].shape[1]
    hs = [h]
    for k in range(L):
        Vk = theta[0][:, k]
        if arch == "res3":
            z = h @ o.swap(theta[1][:, k])
        else:
            z = h
        h = h + alpha * ((z * (z > 0)) @ o.swap(Vk))
        if keep:
            hs.append(h)
    return hs if keep else [h]


def _head(o, loss, hL, B, y, onehot):
    """(loss (G,), p_L (G, n, d), logits (G, n, C), d loss / d logits (G, n, C)) of the read-out
    B (G or 1, d, C)."""
    out = hL @ B  # (G, n, C)
    n = hL.shape[1]
    if loss == "mse":
        res = out[..., 0] - y
        val = 0.5 * (res * res).sum(-1) / n
        dout = res[..., None] / n
    else:
        m = o.amax(out)
        e = o.exp(out - m)
        s = e.sum(-1)[..., None]
        lse = (m + o.log(s))[..., 0]
        val = (lse - (out * onehot).sum(-1)).sum(-1) / n
        dout = (e / s - onehot) / n
    return val, dout @ o.swap(B), out, dout


def _backward(o, arch, theta, alpha, hs, p, want_p0=False):
    """Gradients (tuple like theta, each (G, L, d, d)) from p_L, by back-propagation (and p_0 last
    with ``want_p0``)."""
    L = theta[0].shape[1]
    grads = tuple(o.zeros_like(t) for t in theta)
    for k in range(L - 1, -1, -1):
        hk = hs[k]
        Vk = theta[0][:, k]
        if arch == "res3":
            Wk = theta[1][:, k]
            z = hk @ o.swap(Wk)
            grads[0][:, k] = alpha * (o.swap(p) @ (z * (z > 0)))
            u = alpha * (p @ Vk) * (z > 0)
            grads[1][:, k] = o.swap(u) @ hk
            p = p + u @ Wk
        else:
            grads[0][:, k] = alpha * (o.swap(p) @ (hk * (hk > 0)))
            p = p + alpha * (p @ Vk) * (hk > 0)
    return grads + (p,) if want_p0 else grads


def _inputs(o, H, A, G):
    """h_0 of the G networks, (G, n, d): H (n, d) itself, or H A^T with the input layer A (G or 1, d, n_in)."""
    x = o.asarray(H)
    if A is not None:
        if A.shape[0] == G:
            return x @ o.swap(A)
        x = x @ o.swap(A[0])
    return x.expand((G,) + tuple(x.shape)) if isinstance(o, _TORCH) else np.broadcast_to(x, (G,) + x.shape)


def evaluate(o, arch, theta, alpha, H, A, B, y, loss, n_classes):
    """(loss (G,), accuracy (G,) or None) of every network on the inputs H; the accuracy (cross-entropy
    only) is the fraction of samples whose largest logit is the label."""
    G = theta[0].shape[0]
    hL = _forward(o, arch, theta, alpha, _inputs(o, H, A, G), keep=False)[-1]
    onehot = o.onehot(y, n_classes) if loss == "xent" else None
    yy = o.asarray(y) if loss == "mse" else None
    val, _, out, _ = _head(o, loss, hL, B, yy, onehot)
    if loss != "xent":
        return o.host(val), None
    hit = o.host((o.argmax(out) == _labels(o, y)) * 1.0)
    return o.host(val), hit.mean(-1)


def _labels(o, y):
    if isinstance(o, _TORCH):
        return o.t.as_tensor(np.asarray(y), device=o.dev)
    return np.asarray(y)


def train(arch, theta, alphas, lrs, H, B, y, *, steps, backend: Backend, loss="mse", n_classes=1,
          batches=None, lr_factors=None, noise=None, record_every=0, record=None, evaluate_on=(), A=None,
          train_io=False):
    r"""Train G networks by Adam (module docstring) and return their final weights and loss curves.

    Parameters
    ----------
    arch : {"res1", "res3"}
    theta : tuple of arrays (G, L, d, d)
        Initial weights: (V, W) for res-3, (V,) for res-1 (NumPy arrays; moved to the device).
    alphas, lrs : arrays (G,)
        Scaling factor :math:`L^{-\beta}` and learning rate of each network.
    H : array (n, d), or (n, n_in) with ``A``
        Inputs of the stack (shared by the G networks), or raw inputs mapped by the input layer A.
    B : array (d, C)
        Read-out (the same initial value for every network).
    y : array (n,)
        Targets (``loss="mse"``) or class labels in 0..C-1 (``loss="xent"``).
    steps : int
        Adam steps.
    batches : list of index arrays, optional
        The samples of each step (mini-batches); default the full batch at every step.
    lr_factors : array (steps,), optional
        Learning-rate multiplier of each step (a schedule); default 1.
    noise : callable, optional
        ``noise(t)`` returns None or a tuple like ``theta`` of NumPy arrays (G, L, d, d) added to the
        weights after step t (drawn on the host, so that both backends add the same).
    record_every : int
        If > 0, ``record(t, theta_host)`` is called at t = 0, every ``record_every`` steps and at the end.
    evaluate_on : sequence of (H, y)
        Data sets (e.g. a test set) on which the trained networks are evaluated (:func:`evaluate`).
    A : array (d, n_in), optional
        Input layer, :math:`h_0 = A x`.
    train_io : bool
        Also train A and B (each network its own copy, by the same Adam): the gradients are
        :math:`\partial\ell/\partial B = h_L\,(\partial\ell/\partial\text{logits})^\top` and
        :math:`\partial\ell/\partial A = p_0 x^\top`. Otherwise they stay fixed.

    Returns
    -------
    theta : tuple of NumPy arrays (G, L, d, d)
        Trained weights.
    losses : ndarray (steps + 1, G)
        The batch loss before each step, then the full-data loss after the last.
    evaluations : list of (loss (G,), accuracy (G,) or None)
        One per entry of ``evaluate_on``, after training.
    """
    o = _ops(backend)
    G = theta[0].shape[0]
    P = len(theta)
    rep = G if train_io else 1
    params = [o.asarray(t) for t in theta]
    Ad = None if A is None else o.asarray(np.repeat(np.asarray(A, dtype=float)[None], rep, axis=0))
    Bd = o.asarray(np.repeat(np.asarray(B, dtype=float)[None], rep, axis=0))
    if train_io:
        if Ad is None:
            raise ValueError("`A` of theory.backends.scaling_train.train is needed with train_io=True")
        params += [Ad, Bd]
    al = o.asarray(np.asarray(alphas, dtype=float).reshape(G, 1, 1))
    lrv = np.asarray(lrs, dtype=float)
    lr = [o.asarray(lrv.reshape((G,) + (1,) * (x.ndim - 1))) for x in params]
    Hh = np.asarray(H, dtype=float)
    yh = np.asarray(y)
    m = [o.zeros_like(t) for t in params]
    v = [o.zeros_like(t) for t in params]
    losses = []
    if record_every:
        record(0, tuple(o.host(t) for t in params[:P]))
    for t in range(1, steps + 1):
        th = tuple(params[:P])
        if train_io:
            Ad, Bd = params[P], params[P + 1]
        idx = None if batches is None else np.asarray(batches[t - 1])
        Hb = Hh if idx is None else Hh[idx]
        yb = yh if idx is None else yh[idx]
        hs = _forward(o, arch, th, al, _inputs(o, Hb, Ad, G))
        onehot = o.onehot(yb, n_classes) if loss == "xent" else None
        val, p, _, dout = _head(o, loss, hs[-1], Bd, o.asarray(yb) if loss == "mse" else None, onehot)
        losses.append(val)
        grads = list(_backward(o, arch, th, al, hs, p, want_p0=train_io))
        if train_io:
            p0 = grads.pop()
            grads += [o.swap(p0) @ o.asarray(Hb), o.swap(hs[-1]) @ dout]
        del hs
        c1, c2 = 1 - 0.9**t, 1 - 0.999**t
        f = 1.0 if lr_factors is None else float(lr_factors[t - 1])
        for x, g, mm, vv, r in zip(params, grads, m, v, lr):
            mm *= 0.9
            mm += 0.1 * g
            vv *= 0.999
            vv += 0.001 * g * g
            x -= (f * r) * (mm / c1) / ((vv / c2) ** 0.5 + 1e-8)  # in place: no second copy of the weights
        del grads
        if noise is not None:
            add = noise(t)
            if add is not None:
                params[:P] = [x + o.asarray(a) for x, a in zip(params[:P], add)]
        if record_every and (t % record_every == 0 or t == steps):
            record(t, tuple(o.host(x) for x in params[:P]))
    th = tuple(params[:P])
    if train_io:
        Ad, Bd = params[P], params[P + 1]
    final, _ = evaluate(o, arch, th, al, Hh, Ad, Bd, yh, loss, n_classes)
    out = np.stack([o.host(x) for x in losses] + [final])
    evals = [evaluate(o, arch, th, al, np.asarray(He, dtype=float), Ad, Bd, np.asarray(ye), loss, n_classes)
             for He, ye in evaluate_on]
    return tuple(o.host(x) for x in th), out, evals
