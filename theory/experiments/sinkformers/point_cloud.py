r"""Point Cloud Transformer and Point Cloud Sinkformer on ModelNet 40 (thesis, chapter 5, §5.6.1, Table 5.1, rows
"Point Cloud Transformer" and "Point Cloud Sinkformer"; Appendix 5.C.1).

The model is Guo et al.'s (2021) classification PCT in its published form: an input embedding of two LBR
(``Conv1d(1)`` + BatchNorm + ReLU), a neighbour embedding of sample-and-group layers (farthest point sampling,
k nearest neighbours, the features ``[f_j - f_c, f_c]`` of each group through two LBR and a max pool over the
group), two LBR, four stacked offset-attention layers, the concatenation of their outputs and of the last
neighbour-embedding features, an LBR to a global width, max and average pooling concatenated, and an LBRD head
(LeakyReLU(0.2) and dropout 0.5, as PCT's head) to 40 classes.

Offset-attention (PCT, Eq. (9)-(10) of Guo et al.) on features ``F`` (b, c, n): ``E = (W F)^T (W F)`` with the
query and the key maps sharing one weight ``W`` (c/4 x c, no bias) and no 1/sqrt(d) scaling, as in PCT's code;
``A = normalise(E)``; ``F_sa = V A`` (``F_sa[:, j] = sum_i V[:, i] A[i, j]``: the aggregation runs over the
*first* axis of ``A``); ``F_out = F + LBR(F - F_sa)``.

**Normalisation convention.** ``A = sinkhorn_log(E, n_iter)`` (:func:`.models.sinkhorn_log`, the log-domain
Sinkhorn of Appendix 5.B that :class:`.models.Attention` uses): iteration ``l = 0, 1, ...`` normalises the last
axis when ``l`` is even and the first when ``l`` is odd. Hence

* ``n_iter = 1`` is the plain SoftMax over the last axis (``torch.softmax(E, -1)``, the ``K^1`` of
  :class:`.models.Attention`);
* ``n_iter = 2`` is PCT's own normalisation, a SoftMax over the last axis followed by an l1 normalisation over
  the first (the aggregation axis), up to the ``1e-9`` PCT adds to the l1 denominator: **this is the Point Cloud
  Transformer**;
* an even ``n_iter > 2`` is a **Point Cloud Sinkformer**: more Sinkhorn iterations, the last one over the
  aggregation axis, so that every output is still a convex combination of the values as in PCT (the analogue
  of §5.6.1's odd counts, which keep the aggregation axis of :class:`.models.Attention` stochastic).

Farthest point sampling starts at the point farthest from the cloud's centroid (not at index 0 as in
PointNet++'s kernel), so that the sampled sequence and hence the logits do not depend on the order of the input
points (up to float round-off and exact distance ties).

Where PCT's paper and its released code differ, this module follows the paper for the pooling (max and average
pooling concatenated, so the head's first layer takes ``2 * global_dim`` inputs: 3.40 M parameters at the
published widths, against 2.88 M for the released code's max pooling alone) and the released code for the
grouping (k nearest neighbours of each sampled centre, no ball query) and the shared query/key weight.

Training (:func:`modelnet_pct`): SGD with momentum and weight decay, the learning rate divided by 10 at each
milestone (Appendix 5.C.1: "SGD ... 300 epochs. The initial learning rate is 10^{-4} and is decayed by a factor 10
after 250 epochs", batch 32, 1024 points) or a cosine schedule (PCT's own recipe: lr 0.01 cosine over 250
epochs); cross-entropy with optional label smoothing; optional PCT augmentation (per-shape random anisotropic
scaling in [2/3, 3/2] and translation in [-0.2, 0.2]). The test accuracy of each run is taken at the last epoch.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ...claims import Verdict, threshold_verdict
from ..config import Bool, Choice, Config, Int, Ints, OrNone, Real, Seeds, field
from .training import _datasets, _points, _torch

__all__ = ["PointCloudTransformer", "OffsetAttention", "farthest_point_sample", "knn", "sample_and_group",
           "ModelNetPCTConfig", "ModelNetPCTResult", "modelnet_pct", "table51_pct_verdict", "table51_pct_figure",
           "MODELNET_PCT_PRESETS", "TABLE51_PCT_TOL"]


def _module_base():
    return _torch().nn.Module


# ------------------------------------------------------------------------------------------ grouping

def farthest_point_sample(xyz, m: int):
    """Indices (b, m) of ``m`` points of ``xyz`` (b, n, 3) chosen by farthest point sampling, starting at the
    point farthest from the centroid (order independent); deterministic, no gradient."""
    torch = _torch()
    b, n, _ = xyz.shape
    if not 1 <= m <= n:
        raise ValueError(f"farthest_point_sample: `m` must be in [1, {n}]; got {m}")
    with torch.no_grad():
        pts = xyz.detach()
        idx = torch.empty(b, m, dtype=torch.long, device=xyz.device)
        far = ((pts - pts.mean(dim=1, keepdim=True)) ** 2).sum(-1).argmax(-1)
        dist = torch.full((b, n), math.inf, dtype=pts.dtype, device=xyz.device)
        batch = torch.arange(b, device=xyz.device)
        for s in range(m):
            idx[:, s] = far
            centre = pts[batch, far][:, None, :]
            dist = torch.minimum(dist, ((pts - centre) ** 2).sum(-1))
            far = dist.argmax(-1)
    return idx


def knn(k: int, xyz, centres):
    """Indices (b, m, k) of the ``k`` nearest points of ``xyz`` (b, n, 3) to each of ``centres`` (b, m, 3)."""
    torch = _torch()
    with torch.no_grad():
        d = torch.cdist(centres.detach(), xyz.detach())
        return d.topk(k, dim=-1, largest=False).indices


def _gather(x, idx):
    """x (b, n, c), idx (b, ...) -> (b, ..., c)."""
    b = x.shape[0]
    flat = idx.reshape(b, -1)
    out = x.gather(1, flat[..., None].expand(-1, -1, x.shape[-1]))
    return out.reshape(*idx.shape, x.shape[-1])


def sample_and_group(m: int, k: int, xyz, feats):
    """PCT's sample-and-group: ``m`` centres by farthest point sampling, their ``k`` nearest neighbours, and
    the grouped features ``[f_j - f_c, f_c]``: returns new positions (b, m, 3) and features (b, m, k, 2c)."""
    idx = farthest_point_sample(xyz, m)
    new_xyz = _gather(xyz, idx)
    centre = _gather(feats, idx)
    grouped = _gather(feats, knn(k, xyz, new_xyz))
    torch = _torch()
    return new_xyz, torch.cat([grouped - centre[:, :, None, :], centre[:, :, None, :].expand_as(grouped)], dim=-1)


# ------------------------------------------------------------------------------------------ model

_CLASSES = {}


def _build():
    """Define the torch modules on first use (importing this module does not import torch)."""
    if _CLASSES:
        return _CLASSES
    def _lbr(c_in, c_out):
        nn = _torch().nn
        return [nn.Conv1d(c_in, c_out, 1, bias=False), nn.BatchNorm1d(c_out), nn.ReLU()]

    class _Local(_module_base()):
        """Two LBR on each group's features and a max pool over the group (PCT's ``Local_op``)."""

        def __init__(self, c_in, c_out):
            super().__init__()
            self.net = _torch().nn.Sequential(*_lbr(c_in, c_out), *_lbr(c_out, c_out))

        def forward(self, x):  # (b, m, k, c) -> (b, c_out, m)
            b, m, k, c = x.shape
            y = self.net(x.reshape(b * m, k, c).transpose(1, 2))  # (b m, c_out, k)
            return y.max(dim=-1).values.reshape(b, m, -1).transpose(1, 2)

    class OffsetAttention(_module_base()):
        """PCT's offset-attention layer (``SA_Layer``) with the normalisation ``sinkhorn_log(E, n_iter)`` (see the
        module's docstring: ``n_iter = 2`` is PCT's SoftMax + l1, ``1`` the plain SoftMax)."""

        def __init__(self, channels: int, n_iter: int):
            super().__init__()
            nn = _torch().nn
            if channels % 4:
                raise ValueError(f"OffsetAttention: `channels` ({channels}) must be divisible by 4")
            self.n_iter = n_iter
            self.qk = nn.Conv1d(channels, channels // 4, 1, bias=False)  # q_conv and k_conv share this weight
            self.v = nn.Conv1d(channels, channels, 1)
            self.trans = nn.Conv1d(channels, channels, 1)
            self.norm = nn.BatchNorm1d(channels)
            self.act = nn.ReLU()
            self.record = False
            self.recorded = []

        def attention(self, x):
            """The normalised attention A (b, n, n) of features x (b, c, n)."""
            from .models import sinkhorn_log

            q = self.qk(x)
            return sinkhorn_log(q.transpose(1, 2) @ q, self.n_iter)

        def forward(self, x):
            a = self.attention(x)
            if self.record:
                self.recorded.append(a.detach())
            x_r = self.v(x) @ a
            return x + self.act(self.norm(self.trans(x - x_r)))

    class PointCloudTransformer(_module_base()):
        """Guo et al.'s PCT classifier (see the module docstring); every offset-attention normalised by
        ``sinkhorn_log(., n_iter)`` (2: PCT itself).

        Parameters
        ----------
        n_classes : int
        embed : int
            Width of the input embedding (PCT: 64).
        widths : tuple of int
            Output width of each sample-and-group layer (PCT: 128, 256; the first's input is 2 * embed).
        samples : tuple of int
            Centres of each sample-and-group layer (PCT: 512, 256).
        k : int
            Neighbours per group (PCT: 32).
        global_dim : int
            Width of the LBR after the concatenation (PCT: 1024).
        head : tuple of int
            Widths of the LBRD head (PCT: 512, 256).
        n_iter : int
            Sinkhorn iterations of the attention normalisation.
        layers : int
            Offset-attention layers (PCT: 4).
        dropout : float
            Dropout of the head (PCT: 0.5).
        """

        def __init__(self, n_classes=40, *, embed=64, widths=(128, 256), samples=(512, 256), k=32, global_dim=1024,
                     head=(512, 256), n_iter=2, layers=4, dropout=0.5):
            super().__init__()
            nn = _torch().nn
            if len(widths) != len(samples) or not widths:
                raise ValueError("PointCloudTransformer: `widths` and `samples` must have the same positive length")
            self.samples, self.k = tuple(samples), k
            self.embed = nn.Sequential(*_lbr(3, embed), *_lbr(embed, embed))
            c, locs = embed, []
            for w in widths:
                locs.append(_Local(2 * c, w))
                c = w
            self.local = nn.ModuleList(locs)
            self.pre = nn.Sequential(*_lbr(c, c), *_lbr(c, c))
            self.sa = nn.ModuleList(OffsetAttention(c, n_iter) for _ in range(layers))
            self.fuse = nn.Sequential(nn.Conv1d(c * (layers + 1), global_dim, 1, bias=False), nn.BatchNorm1d(global_dim),
                                      nn.LeakyReLU(0.2))
            mods, h = [], 2 * global_dim
            for w in head:
                mods += [nn.Linear(h, w, bias=False), nn.BatchNorm1d(w), nn.LeakyReLU(0.2), nn.Dropout(dropout)]
                h = w
            self.head = nn.Sequential(*mods, nn.Linear(h, n_classes))

        def attentions(self):
            return list(self.sa)

        def forward(self, points):
            """Logits (b, n_classes) of point clouds (b, n, 3)."""
            torch = _torch()
            xyz = points
            f = self.embed(points.transpose(1, 2)).transpose(1, 2)  # (b, n, embed)
            for m, local in zip(self.samples, self.local):
                xyz, grouped = sample_and_group(min(m, xyz.shape[1]), min(self.k, xyz.shape[1]), xyz, f)
                f = local(grouped).transpose(1, 2)  # (b, m, w)
            x = f.transpose(1, 2)
            feats = []
            y = self.pre(x)
            for sa in self.sa:
                y = sa(y)
                feats.append(y)
            g = self.fuse(torch.cat(feats + [x], dim=1))
            g = torch.cat([g.max(dim=-1).values, g.mean(dim=-1)], dim=1)
            return self.head(g)

    for cls in (_Local, OffsetAttention, PointCloudTransformer):
        cls.__qualname__ = cls.__name__  # pickled by name through the module's __getattr__
        _CLASSES[cls.__name__] = cls
    return _CLASSES


def __getattr__(name):
    """``OffsetAttention`` and ``PointCloudTransformer`` (torch modules, built on first access)."""
    if name in ("_Local", "OffsetAttention", "PointCloudTransformer"):
        return _build()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ------------------------------------------------------------------------------------------ experiment

@dataclass(frozen=True)
class ModelNetPCTConfig(Config):
    """A Point Cloud Transformer and a Point Cloud Sinkformer on ModelNet 40 (thesis §5.6.1, Table 5.1, Appendix
    5.C.1): one model per Sinkhorn iteration count and seed, trained by SGD; the final test accuracy of each."""

    data: str | None = _datasets.data_field("ModelNet40")
    n_points: int = field(Int(low=1), 32, "Points of each shape (the loader's first rows, in a seeded random order, "
                          "centred and scaled to [-1, 1]); the document uses 1024.")
    embed: int = field(Int(low=1), 16, "Width of the input embedding (PCT: 64).")
    widths: tuple = field(Ints(low=4, min_len=1), (16, 16), "Output widths of the sample-and-group layers (PCT: 128, "
                          "256); the last is the attention width, divisible by 4.")
    samples: tuple = field(Ints(low=1, min_len=1), (16, 8), "Centres sampled by each sample-and-group layer "
                           "(PCT: 512, 256), at most n_points, non-increasing.")
    k: int = field(Int(low=1), 8, "Neighbours per group (PCT: 32), at most n_points.")
    global_dim: int = field(Int(low=1), 64, "Width after the concatenation of the attention layers (PCT: 1024).")
    head: tuple = field(Ints(low=1, min_len=0), (32, 16), "Widths of the LBRD head (PCT: 512, 256).")
    dropout: float = field(Real(0, 1, closed="left"), 0.5, "Dropout of the head (PCT: 0.5).")
    n_iters: tuple = field(Ints(low=1, min_len=2, increasing=True), (2, 22), "Sinkhorn iterations of the models: "
                           "the first is 2, PCT's SoftMax + l1 (the Point Cloud Transformer); the others, even, "
                           "Point Cloud Sinkformers (the last is the one Table 5.1 compares).")
    epochs: int = field(Int(low=1), 6, "Training epochs.")
    batch: int = field(Int(low=2), 32, "Batch size (at least 2, for BatchNorm).")
    lr: float = field(Real(0, closed="neither"), 0.01, "Initial learning rate (SGD).")
    lr_sinkformer: float | None = field(OrNone(Real(0, closed="neither"), "lr"), None, "Initial learning rate of "
                                        "the Sinkformers (None: lr); a negative control passes a vanishing one.")
    momentum: float = field(Real(0, 1, closed="left"), 0.9, "SGD momentum (not stated in the document; PCT's code).")
    weight_decay: float = field(Real(0), 5e-4, "SGD weight decay (not stated in the document; PCT's code).")
    schedule: str = field(Choice("step", "cosine"), "cosine", '"step": the learning rate divided by 10 at each of '
                          'milestones (Appendix 5.C.1); "cosine": cosine annealing to 0 over the epochs (PCT).')
    milestones: tuple = field(Ints(low=1, min_len=0, increasing=True), (), "Epochs after which the learning rate "
                              'is divided by 10 (schedule "step").')
    label_smoothing: float = field(Real(0, 1, closed="left"), 0.0, "Label smoothing of the cross-entropy (PCT's "
                                   "code: 0.2).")
    augment: bool = field(Bool(), False, "PCT's augmentation: per-shape random scaling in [2/3, 3/2] per axis and "
                          "translation in [-0.2, 0.2].")
    n_train: int | None = field(OrNone(Int(low=1), "all"), 512, "Training shapes used (a seeded random subset).")
    n_test: int | None = field(OrNone(Int(low=1), "all"), 256, "Test shapes used (a seeded random subset).")
    seeds: tuple = field(Seeds(min_len=1, distinct=True), (0, 1, 2, 3), "Seeds of torch, one run of each model "
                         "per seed (Table 5.1: 4 runs).")
    device: str = field(Choice("cpu", "cuda"), "cpu", "Where the models are trained (the data and the seeded "
                        "shuffles stay on the CPU).")

    def check(self):
        if self.n_iters[0] != 2:
            raise self.invalid("n_iters", "start with 2 (PCT's SoftMax + l1 normalisation, the Point Cloud "
                                          "Transformer)")
        if any(k % 2 for k in self.n_iters[1:]):
            raise self.invalid("n_iters", "hold even counts after the first (the last normalisation over the "
                                          "aggregation axis)")
        if len(self.samples) != len(self.widths):
            raise self.invalid("samples", "have as many entries as widths")
        if self.widths[-1] % 4:
            raise self.invalid("widths", "end with a width divisible by 4 (the query/key width is a quarter)")
        if any(b > a for a, b in zip((self.n_points,) + self.samples, self.samples)):
            raise self.invalid("samples", "be non-increasing and at most n_points")
        if self.k > self.n_points:
            raise self.invalid("k", "be at most n_points")


@dataclass(frozen=True)
class ModelNetPCTResult:
    """``curves[n_iter][i]`` the learning curves (``train_acc``, ``test_acc``, ``train_loss``, ``seconds`` per
    epoch) of seed ``i``."""

    n_iters: tuple
    seeds: tuple
    curves: dict

    def final_test(self, n_iter):
        return [float(c["test_acc"][-1]) for c in self.curves[n_iter]]

    def to_measured(self):
        """``test_acc_{best,median,mean,worst}.transformer`` (n_iter 2) and ``.sinkformer`` (the largest count),
        the same per count as ``.n_iter_<k>``, and ``gain_median`` / ``gain_mean`` / ``gain_best`` (Sinkformer minus
        Transformer)."""
        out = {}
        names = {self.n_iters[0]: "transformer", self.n_iters[-1]: "sinkformer"}
        for k in self.n_iters:
            acc = np.asarray(self.final_test(k))
            for stat, fn in (("best", np.max), ("median", np.median), ("mean", np.mean), ("worst", np.min)):
                out[f"test_acc_{stat}.n_iter_{k}"] = float(fn(acc))
                if k in names:
                    out[f"test_acc_{stat}.{names[k]}"] = float(fn(acc))
        for stat in ("median", "mean", "best"):
            out[f"gain_{stat}"] = out[f"test_acc_{stat}.sinkformer"] - out[f"test_acc_{stat}.transformer"]
        return out


def _augment(x, gen):
    """PCT's translate_pointcloud: per shape, scale each axis by U[2/3, 3/2] and shift it by U[-0.2, 0.2]."""
    torch = _torch()
    b = x.shape[0]
    scale = 2.0 / 3.0 + (3.0 / 2.0 - 2.0 / 3.0) * torch.rand(b, 1, 3, generator=gen)
    shift = -0.2 + 0.4 * torch.rand(b, 1, 3, generator=gen)
    return x * scale + shift


def _fit_sgd(model, xtr, ytr, xte, yte, config, lr, seed):
    """SGD (momentum, weight decay) with a step or cosine schedule, batches of ``config.batch`` (the last
    incomplete one dropped, as PCT's loader, so that BatchNorm never sees one shape); per-epoch train and test
    accuracy on the whole sets in eval mode, train loss and seconds."""
    torch = _torch()
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=config.momentum, weight_decay=config.weight_decay)
    if config.schedule == "cosine":
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=config.epochs)
    else:
        sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=list(config.milestones), gamma=0.1)
    xtr_t, ytr_t = torch.as_tensor(xtr), torch.as_tensor(ytr)
    xte_t, yte_t = torch.as_tensor(xte), torch.as_tensor(yte)
    dev = torch.device(config.device)
    model.to(dev)

    def accuracy(x, y):
        model.eval()
        with torch.no_grad():
            correct = sum(int((model(x[i:i + 64].to(dev)).argmax(-1).cpu() == y[i:i + 64]).sum())
                          for i in range(0, len(y), 64))
        model.train()
        return correct / len(y)

    batch = min(config.batch, len(ytr_t))
    curves = {"train_acc": [], "test_acc": [], "train_loss": [], "seconds": []}
    for _ in range(config.epochs):
        t0, total, count = time.perf_counter(), 0.0, 0
        perm = torch.randperm(len(ytr_t), generator=gen)
        for i in range(0, len(perm) - batch + 1, batch):
            idx = perm[i:i + batch]
            x = xtr_t[idx]
            if config.augment:
                x = _augment(x, gen)
            loss = torch.nn.functional.cross_entropy(model(x.to(dev)), ytr_t[idx].to(dev),
                                                     label_smoothing=config.label_smoothing)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total, count = total + float(loss.detach()) * len(idx), count + len(idx)
        sched.step()
        curves["seconds"].append(time.perf_counter() - t0)
        curves["train_loss"].append(total / max(count, 1))
        curves["train_acc"].append(accuracy(xtr_t, ytr_t))
        curves["test_acc"].append(accuracy(xte_t, yte_t))
    return {k: np.asarray(v, dtype=float) for k, v in curves.items()}


def _model(config: ModelNetPCTConfig, n_iter: int):
    return _build()["PointCloudTransformer"](40, embed=config.embed, widths=config.widths, samples=config.samples, k=config.k,
                                 global_dim=config.global_dim, head=config.head, n_iter=n_iter,
                                 dropout=config.dropout)


def modelnet_pct(config: ModelNetPCTConfig) -> ModelNetPCTResult:
    """Train the Point Cloud Transformer (``n_iter = 2``) and the Point Cloud Sinkformer(s) on ModelNet 40, one
    run per seed (Table 5.1); raises :class:`theory.datasets.DatasetMissing` without the data."""
    torch = _torch()
    xtr, ytr, xte, yte = _points(config.data, config.n_train, config.n_test, config.n_points, config.seeds[0])
    curves = {k: [] for k in config.n_iters}
    for seed in config.seeds:
        for k in config.n_iters:
            torch.manual_seed(seed)
            model = _model(config, k)
            lr = config.lr if k == config.n_iters[0] or config.lr_sinkformer is None else config.lr_sinkformer
            curves[k].append(_fit_sgd(model, xtr, ytr, xte, yte, config, lr, seed))
    return ModelNetPCTResult(tuple(config.n_iters), tuple(config.seeds), curves)


#: Table 5.1's Point Cloud rows: the Sinkformer's median AND mean final test accuracies over the runs are at least
#: the Transformer's (gains >= 0). No tolerance: §5.6.1 reads "the Sinkformer has a slightly better median
#: accuracy" and §1.3.2 (the thesis's summary of chapter 5) "on the ModelNet 40 3D shape classification task,
#: Sinkformers outperform classical Transformers in terms of both mean and median accuracy (... Guo et al., 2021)";
#: the best accuracy, "narrowly achieved for the Transformer" (§5.6.1), is printed but not judged.
TABLE51_PCT_TOL = {"gain_median": 0.0, "gain_mean": 0.0}


def table51_pct_verdict(result: ModelNetPCTResult, tol=TABLE51_PCT_TOL) -> Verdict:
    """Table 5.1 (§5.6.1, Point Cloud rows): the Point Cloud Sinkformer (the largest iteration count) has a median
    and a mean final test accuracy over the runs at least the Point Cloud Transformer's (PCT's SoftMax + l1)."""
    return threshold_verdict("qualitative", result, {"gain_median_min": tol["gain_median"],
                                                     "gain_mean_min": tol["gain_mean"]},
                             context=f"Point Cloud Sinkformer n_iter {result.n_iters[-1]} against the Point Cloud "
                                     f"Transformer (n_iter 2), final test accuracy over {len(result.seeds)} run(s)")


MODELNET_PCT_PRESETS = {
    # ours: a tiny PCT (32 points, widths 16) trained for 6 epochs on 512 / 256 shapes with PCT's own optimiser
    # (SGD lr 0.01, momentum 0.9, weight decay 5e-4, cosine); 4 seeds as Table 5.1
    "check": ModelNetPCTConfig(),
    # the document's (Appendix 5.C.1): 1024 points, batch 32, SGD, 300 epochs, lr 1e-4 divided by 10 after 250,
    # 4 runs; the published PCT widths (64; 128, 256; 1024; 512, 256; k 32; 512 and 256 centres); the momentum,
    # weight decay, label smoothing 0.2 and augmentation are PCT's code's (the document does not state them);
    # the Sinkformer's 22 iterations are ours (the document gives no count for PCT)
    "paper": ModelNetPCTConfig(n_points=1024, embed=64, widths=(128, 256), samples=(512, 256), k=32,
                               global_dim=1024, head=(512, 256), n_iters=(2, 22), epochs=300, batch=32, lr=1e-4,
                               schedule="step", milestones=(250,), label_smoothing=0.2, augment=True, n_train=None,
                               n_test=None, seeds=(0, 1, 2, 3), device="cuda"),
}


def table51_pct_figure(result: ModelNetPCTResult, claim_id="sinkformers/table-5.1/pct"):
    """Table 5.1's Point Cloud rows: best, median, mean and worst test accuracy over the runs, printed / measured
    (the Sinkformer: the largest iteration count)."""
    from .figures import _STATS, TABLE51, _table

    m = result.to_measured()
    rows = ("Point Cloud Transformer", "Point Cloud Sinkformer")
    cells = [[f"{v:.1f} / {100 * m[f'test_acc_{s}.{model}']:.1f}" for v, s in zip(TABLE51[row], _STATS)]
             for row, model in zip(rows, ("transformer", "sinkformer"))]
    return _table(list(rows), [f"{s} (printed / measured, %)" for s in _STATS], cells, claim_id,
                  f"ModelNet 40 (Sinkformer: {result.n_iters[-1]} iterations, Transformer: PCT's SoftMax + l1; "
                  f"{len(result.seeds)} run(s))", (10.0, 1.8))


def _summary(r):
    return {k: float(v) for k, v in r.to_measured().items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _register():
    from .. import register

    register("sinkformers.modelnet_pct", config=ModelNetPCTConfig, presets=MODELNET_PCT_PRESETS,
             measure=modelnet_pct, verdict=table51_pct_verdict, claims=("sinkformers/table-5.1/pct",),
             summary=_summary)


_register()
