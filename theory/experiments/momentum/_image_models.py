"""One PyTorch (Momentum) ResNet for images, its memory-free backpropagation, and the training loop of the
image experiments of chapter 4 of Sander's thesis (Sec. 4.5.2 and App. 4.D).

The network is a stem, stages of residual blocks and a linear head. The first block of each stage changes the
resolution and the number of channels (an ordinary residual block with a projection shortcut); the others are
residual functions ``f`` of unchanged shape, iterated as

* ``"resnet"``: x <- x + f(x) (Eq. (4.1));
* ``"momentum"``: v <- gamma v + (1 - gamma) f(x), x <- x + v (Eq. (4.2)), with v_0 = 0 or v_0 = f(x_0), reset
  at each stage (the drop-in replacement of Sec. 4.5.2: every residual block of unchanged shape becomes a
  momentum step);
* ``"revnet"``: the channels split in halves (x1, x2), x1 <- x1 + F(x2), x2 <- x2 + G(x1) (Eq. (4.4)), F and G
  of half width, with the number of blocks adjusted to the ResNet's parameter count (Sec. 4.5.2).

With ``memory_free`` the momentum steps of a stage run under one autograd function that stores only the
stage's output (x_N, v_N) and rebuilds the activations backwards with the inverse (4.3) while backpropagating
(App. 4.E): the memory saving of Sec. 4.3.2, measured in Fig. 4.7.
"""

from __future__ import annotations

import math
import time

import numpy as np

__all__ = ["ImageResNet", "residual_function", "saved_activation_bytes", "count_parameters", "prepare_images",
           "train_classifier", "evaluate", "ODENet"]


def _torch():
    import torch

    return torch


def residual_function(channels: int, bottleneck: bool):
    """A pre-activation residual function of unchanged shape: BN-ReLU-conv3x3 twice, or the bottleneck
    BN-ReLU-conv1x1 (channels/4), BN-ReLU-conv3x3, BN-ReLU-conv1x1 back to ``channels``."""
    import torch.nn as nn

    if bottleneck:
        mid = max(1, channels // 4)
        return nn.Sequential(nn.BatchNorm2d(channels), nn.ReLU(), nn.Conv2d(channels, mid, 1, bias=False),
                             nn.BatchNorm2d(mid), nn.ReLU(), nn.Conv2d(mid, mid, 3, padding=1, bias=False),
                             nn.BatchNorm2d(mid), nn.ReLU(), nn.Conv2d(mid, channels, 1, bias=False))
    return nn.Sequential(nn.BatchNorm2d(channels), nn.ReLU(), nn.Conv2d(channels, channels, 3, padding=1, bias=False),
                         nn.BatchNorm2d(channels), nn.ReLU(), nn.Conv2d(channels, channels, 3, padding=1, bias=False))


class _NoStatUpdate:
    """Recompute f in the backward pass with batch statistics but without updating BN's running statistics."""

    def __init__(self, module):
        self.bns = [m for m in module.modules() if hasattr(m, "momentum") and hasattr(m, "running_mean")]

    def __enter__(self):
        self.saved = [b.momentum for b in self.bns]
        for b in self.bns:
            b.momentum = 0.0

    def __exit__(self, *exc):
        for b, m in zip(self.bns, self.saved):
            b.momentum = m


def _memory_free_function():
    torch = _torch()

    class MomentumStage(torch.autograd.Function):
        """Momentum steps (4.2) storing only (x_N, v_N); backward inverts (4.3) step by step (App. 4.E)."""

        @staticmethod
        def forward(ctx, x, v, gamma, fs, *params):
            with torch.no_grad():
                for f in fs:
                    v = gamma * v + (1 - gamma) * f(x)
                    x = x + v
            ctx.gamma, ctx.fs = gamma, fs
            ctx.save_for_backward(x, v)
            return x, v

        @staticmethod
        def backward(ctx, gx, gv):
            x, v = ctx.saved_tensors
            gamma, fs = ctx.gamma, ctx.fs
            grads = {id(p): torch.zeros_like(p) for f in fs for p in f.parameters()}
            for f in reversed(fs):
                with torch.no_grad():
                    x_prev = x - v
                with torch.enable_grad(), _NoStatUpdate(f):
                    xp = x_prev.detach().requires_grad_()
                    fx = f(xp)
                    g = gx + gv
                    params = list(f.parameters())
                    out = torch.autograd.grad(fx, [xp] + params, (1 - gamma) * g)
                with torch.no_grad():
                    v = (v - (1 - gamma) * fx) / gamma
                    x = x_prev
                gx = gx + out[0]
                gv = gamma * g
                for p, gp in zip(params, out[1:]):
                    grads[id(p)] += gp
            return (gx, gv, None, None) + tuple(grads[id(p)] for f in fs for p in f.parameters())

    return MomentumStage


class ImageResNet:
    """Factory of the network: ``ImageResNet(...)`` returns a ``torch.nn.Module``.

    Parameters
    ----------
    arch : {"resnet", "momentum", "revnet"}
        The iteration of the residual functions of unchanged shape (module docstring).
    blocks : tuple of int
        Blocks per stage (the first of each stage is the transition). ResNet-101: (3, 4, 23, 3) bottlenecks;
        ResNet-152: (3, 8, 36, 3); the CIFAR ResNet-1202 of Fig. 4.7: (200, 200, 200) basic blocks.
    width : int
        Channels of the first stage (doubled at each further stage; x4 at the output of bottleneck stages).
    in_channels, n_classes : int
        Input channels and classes.
    bottleneck : bool
        Bottleneck residual functions (ResNet-101/152) or basic ones.
    gamma : float
        Momentum term in [0, 1] of the ``"momentum"`` architecture.
    v0 : {"zero", "f"}
        Initial velocity of each stage: 0 or f(x_0) (Table 4.2).
    memory_free : bool
        Memory-free backpropagation of the momentum steps (needs gamma > 0).
    stem : {"cifar", "imagenet"}
        3x3 convolution, or 7x7 stride-2 convolution and max pooling.
    """

    def __new__(cls, arch="momentum", blocks=(2, 2, 2), width=16, in_channels=3, n_classes=10, bottleneck=False,
                gamma=0.9, v0="zero", memory_free=False, stem="cifar"):
        import torch.nn as nn

        torch = _torch()
        if arch not in ("resnet", "momentum", "revnet"):
            raise ValueError(f"`arch` must be 'resnet', 'momentum' or 'revnet'; got {arch!r}")
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"`gamma` must be in [0, 1]; got {gamma}")
        if memory_free and arch == "momentum" and gamma <= 0:
            raise ValueError("`memory_free` needs gamma > 0 (the inverse (4.3) divides by gamma)")
        expansion = 4 if bottleneck else 1
        Stage = _memory_free_function()

        class Transition(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                if bottleneck:
                    mid = max(1, cout // 4)
                    self.f = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, mid, 1, bias=False),
                                           nn.BatchNorm2d(mid), nn.ReLU(),
                                           nn.Conv2d(mid, mid, 3, stride=stride, padding=1, bias=False),
                                           nn.BatchNorm2d(mid), nn.ReLU(), nn.Conv2d(mid, cout, 1, bias=False))
                else:
                    self.f = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(),
                                           nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                                           nn.BatchNorm2d(cout), nn.ReLU(),
                                           nn.Conv2d(cout, cout, 3, padding=1, bias=False))
                self.short = (nn.Identity() if (cin, stride) == (cout, 1)
                              else nn.Conv2d(cin, cout, 1, stride=stride, bias=False))

            def forward(self, x):
                return self.short(x) + self.f(x)

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.arch, self.gamma, self.v0, self.memory_free = arch, float(gamma), v0, memory_free
                if stem == "cifar":
                    self.stem = nn.Conv2d(in_channels, width, 3, padding=1, bias=False)
                else:
                    self.stem = nn.Sequential(nn.Conv2d(in_channels, width, 7, stride=2, padding=3, bias=False),
                                              nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
                self.transitions, self.stages = nn.ModuleList(), nn.ModuleList()
                cin = width
                for s, k in enumerate(blocks):
                    cout = width * 2 ** s * expansion
                    self.transitions.append(Transition(cin, cout, 1 if s == 0 else 2))
                    if arch == "revnet":
                        fs = [residual_function(cout // 2, bottleneck) for _ in range(4 * (k - 1))]
                    else:
                        fs = [residual_function(cout, bottleneck) for _ in range(k - 1)]
                    self.stages.append(nn.ModuleList(fs))
                    cin = cout
                self.head = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                          nn.Linear(cin, n_classes))

            def forward(self, x, gamma=None):
                g = self.gamma if gamma is None else float(gamma)
                x = self.stem(x)
                for tr, fs in zip(self.transitions, self.stages):
                    x = tr(x)
                    if self.arch == "resnet":
                        for f in fs:
                            x = x + f(x)
                    elif self.arch == "revnet":
                        x1, x2 = torch.chunk(x, 2, dim=1)
                        for F, G in zip(fs[0::2], fs[1::2]):
                            x1 = x1 + F(x2)
                            x2 = x2 + G(x1)
                        x = torch.cat([x1, x2], dim=1)
                    elif len(fs):
                        v = torch.zeros_like(x) if self.v0 == "zero" else fs[0](x)
                        if self.memory_free and self.training and torch.is_grad_enabled() and g > 0:
                            params = [p for f in fs for p in f.parameters()]
                            x, v = Stage.apply(x, v, g, list(fs), *params)
                        else:
                            for f in fs:
                                v = g * v + (1 - g) * f(x)
                                x = x + v
                return self.head(x)

        return Net()


def count_parameters(model) -> int:
    """Number of trainable parameters."""
    return int(sum(p.numel() for p in model.parameters() if p.requires_grad))


def saved_activation_bytes(model, batch: int, image: tuple, seed: int = 0) -> int:
    """Bytes of the tensors stored for backpropagation by one training forward pass on ``batch`` random images of
    shape ``image`` (C, H, W): every tensor autograd saves (``torch.autograd.graph.saved_tensors_hooks``),
    counted once by storage, parameters excluded. The activation memory of one training step, which the
    profiler of Fig. 4.7 measures on top of the (batch-independent) parameters."""
    torch = _torch()
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn((batch,) + tuple(image), generator=gen)
    param_ptrs = {p.data_ptr() for p in model.parameters()}
    seen: dict = {}

    def pack(t):
        try:
            ptr = t.untyped_storage().data_ptr()
            nbytes = t.untyped_storage().nbytes()
        except (RuntimeError, NotImplementedError):
            ptr, nbytes = id(t), t.numel() * t.element_size()
        if ptr not in param_ptrs:
            seen[ptr] = max(seen.get(ptr, 0), nbytes)
        return t

    model.train()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(x)
    del out
    return int(sum(seen.values()))


def prepare_images(x, image_size=None):
    """uint8 images (n, H, W) or (n, H, W, C) to a float32 tensor (n, C, H, W) scaled to [0, 1], per-channel
    standardised with the statistics of ``x`` itself, optionally resized (bilinear) to ``image_size``."""
    torch = _torch()
    arr = np.asarray(x)
    if arr.ndim == 3:
        arr = arr[..., None]
    if arr.ndim != 4:
        raise ValueError(f"`x` must be images (n, H, W) or (n, H, W, C); got shape {arr.shape}")
    t = torch.from_numpy(arr.astype(np.float32) / 255.0).permute(0, 3, 1, 2).contiguous()
    if image_size is not None and tuple(t.shape[-2:]) != (image_size, image_size):
        t = torch.nn.functional.interpolate(t, size=(image_size, image_size), mode="bilinear", align_corners=False)
    return t


def _standardise(train, test):
    mean = train.mean(dim=(0, 2, 3), keepdim=True)
    std = train.std(dim=(0, 2, 3), keepdim=True).clamp_min(1e-6)
    return (train - mean) / std, (test - mean) / std


def evaluate(model, x, y, batch=256, gamma=None):
    """(test loss, test accuracy) of ``model`` on tensors x, y in eval mode (``gamma`` overrides the momentum)."""
    torch = _torch()
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            kw = {} if gamma is None else {"gamma": gamma}
            out = model(x[i:i + batch], **kw)
            loss += float(torch.nn.functional.cross_entropy(out, y[i:i + batch], reduction="sum"))
            correct += int((out.argmax(1) == y[i:i + batch]).sum())
    return loss / len(x), correct / len(x)


def _augment(xb, gen):
    """Random crop with 4-pixel padding and horizontal flip (the standard CIFAR preprocessing of PyTorch)."""
    torch = _torch()
    n, _, h, w = xb.shape
    pad = torch.nn.functional.pad(xb, (4, 4, 4, 4), mode="reflect")
    i, j = torch.randint(0, 9, (2,), generator=gen).tolist()
    xb = pad[:, :, i:i + h, j:j + w]
    flip = torch.rand(n, generator=gen) < 0.5
    return torch.where(flip[:, None, None, None], xb.flip(3), xb)


def train_classifier(model, x_train, y_train, x_test, y_test, *, epochs, batch, lr, momentum=0.9, weight_decay=5e-4,
                     milestones=(), seed=0, augment=False, eval_every=1, max_steps=None, gamma_eval=None,
                     device="cpu"):
    """SGD with momentum, step decay by 10 at ``milestones`` (epochs), weight decay; returns per evaluation
    (epoch, wall time of training so far, test loss, test accuracy) as a dict of lists.

    ``eval_every`` counts epochs; ``max_steps`` stops early (counting optimiser steps, for the 120 iterations of
    Fig. 4.9). Inputs are standardised with the training set's statistics.
    """
    torch = _torch()
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    x_train, x_test = _standardise(x_train, x_test)
    model.to(device)
    x_train, y_train, x_test, y_test = (t.to(device) for t in (x_train, y_train, x_test, y_test))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=list(milestones), gamma=0.1)
    hist = {"epoch": [], "time": [], "loss": [], "accuracy": []}
    elapsed, steps = 0.0, 0
    for epoch in range(1, epochs + 1):
        model.train()
        perm = torch.randperm(len(x_train), generator=gen)
        t0 = time.perf_counter()
        for i in range(0, len(x_train), batch):
            idx = perm[i:i + batch]
            if len(idx) < 2:  # BatchNorm needs two samples
                continue
            idx = idx.to(device)
            xb = x_train[idx]
            if augment:
                xb = _augment(xb, gen)
            loss = torch.nn.functional.cross_entropy(model(xb), y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
            if max_steps is not None and steps >= max_steps:
                break
        elapsed += time.perf_counter() - t0
        sched.step()
        done = max_steps is not None and steps >= max_steps
        if epoch % eval_every == 0 or epoch == epochs or done:
            l, a = evaluate(model, x_test, y_test, gamma=gamma_eval)
            for k, val in zip(hist, (epoch, elapsed, l, a)):
                hist[k].append(val)
        if done:
            break
    hist["x_test"], hist["y_test"] = x_test, y_test
    return hist


class ODENet:
    """Factory of the continuous model of Fig. 4.9: a down-sampling convolution to ``channels`` channels, ``n_blocks``
    ODE blocks integrated on [0, 1] by ``steps`` fixed Runge-Kutta-4 steps, pooling and a linear head.

    ``order=1``: x' = f(x) (Eq. (4.5)); ``order=2``: eps x'' + x' = f(x) with v_0 = 0 (Eq. (4.6));
    ``n_blocks=0``: the baseline without ODE blocks. f is BN-ReLU-conv3x3-BN-ReLU-conv3x3, one per block.
    """

    def __new__(cls, channels=16, n_blocks=10, order=1, eps=1.0, steps=4, in_channels=3, n_classes=10):
        import torch.nn as nn

        torch = _torch()
        if order not in (1, 2):
            raise ValueError(f"`order` must be 1 or 2; got {order!r}")

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.down = nn.Sequential(nn.Conv2d(in_channels, channels, 3, padding=1, bias=False),
                                          nn.BatchNorm2d(channels), nn.ReLU(),
                                          nn.Conv2d(channels, channels, 4, stride=2, padding=1, bias=False))
                self.fs = nn.ModuleList(residual_function(channels, False) for _ in range(n_blocks))
                self.head = nn.Sequential(nn.BatchNorm2d(channels), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                          nn.Flatten(), nn.Linear(channels, n_classes))

            def rhs(self, f, z):
                if order == 1:
                    return f(z)
                x, v = z
                return v, (f(x) - v) / eps

            def forward(self, x, gamma=None):
                x = self.down(x)
                h = 1.0 / steps
                for f in self.fs:
                    z = x if order == 1 else (x, torch.zeros_like(x))
                    for _ in range(steps):
                        if order == 1:
                            k1 = self.rhs(f, z)
                            k2 = self.rhs(f, z + h / 2 * k1)
                            k3 = self.rhs(f, z + h / 2 * k2)
                            k4 = self.rhs(f, z + h * k3)
                            z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
                        else:
                            add = lambda a, b, s: (a[0] + s * b[0], a[1] + s * b[1])  # noqa: E731
                            k1 = self.rhs(f, z)
                            k2 = self.rhs(f, add(z, k1, h / 2))
                            k3 = self.rhs(f, add(z, k2, h / 2))
                            k4 = self.rhs(f, add(z, k3, h))
                            z = (z[0] + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
                                 z[1] + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]))
                    x = z if order == 1 else z[0]
                return self.head(x)

        return Net()


def digits_images(seed: int, n_train: int, n_test: int):
    """scikit-learn's 8x8 digits as uint8 images (values 0..16 scaled by 15), split at random: the stand-in of the
    CIFAR proxies; returns (x_train (n,8,8), y_train, x_test, y_test)."""
    from .._digits import load_digits_arrays

    X, y = load_digits_arrays("theory.experiments.momentum (digits)")
    x = np.clip(X.reshape(-1, 8, 8) * 15.0, 0, 255).astype(np.uint8)
    perm = np.random.default_rng(seed).permutation(len(y))
    if n_train + n_test > len(y):
        raise ValueError(f"`n_train` + `n_test` must be at most {len(y)} for digits; got {n_train + n_test}")
    tr, te = perm[:n_train], perm[n_train:n_train + n_test]
    return x[tr], y[tr], x[te], y[te]


def gamma_memory_bytes(activation_bytes_per_layer: float, n_layers: int, gamma: float) -> float:
    """Bytes of the information buffer of exact reversal (Sec. 4.3.2): about log2(1/gamma) bits per coordinate and
    layer, so N log2(1/gamma) / 8 bytes per coordinate of one layer's activation (float32: 4 bytes each)."""
    if gamma <= 0:
        return math.inf
    coords = activation_bytes_per_layer / 4.0
    return coords * n_layers * math.log2(1.0 / gamma) / 8.0
