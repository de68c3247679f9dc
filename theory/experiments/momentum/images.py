"""Momentum ResNets on image datasets: the CIFAR, ImageNet and hymenoptera experiments of chapter 4 of Sander's
thesis (Sec. 4.5.2, App. 4.D and 4.F): Figs. 4.6-4.9, 4.12 and Table 4.2.

Registered as ``"momentum.<name>"``, all on the one network of :mod:`._image_models`:

* ``momentum.cifar`` (``momentum/table-4.2``, ``momentum/fig-4.12``): ResNet, Momentum ResNet with v_0 = 0 and
  with v_0 = f(x_0), trained on CIFAR-10 and CIFAR-100 over several seeds; final test accuracies and the
  learning curves (test error and loss per epoch).
* ``momentum.imagenet`` (``momentum/fig-4.6/imagenet``): the same measurement on ImageNet, with a RevNet.
* ``momentum.gamma`` (``momentum/fig-4.6``, ``momentum/fig-4.7/accuracy``): Momentum ResNets trained at several
  gamma_train, re-evaluated (and optionally refitted) at other gamma_test; the memory of each gamma.
* ``momentum.gamma_digits`` (``momentum/fig-4.6/digits``): the same on scikit-learn's 8x8 digits (a proxy).
* ``momentum.memory_batch`` (``momentum/fig-4.7``): the activation memory of one training step against the batch
  size, ResNet against memory-free Momentum ResNet, at the document's depths (CIFAR-10, 1202; ImageNet, 152).
* ``momentum.finetune`` (``momentum/fig-4.8``): fine-tuning on hymenoptera, accuracy against wall time, batch 2
  for the ResNet-152 and 4 for the Momentum ResNet-152.
* ``momentum.ode_channels`` (``momentum/fig-4.9``): first- against second-order ODE blocks on CIFAR-10 as the
  number of channels varies, with the baseline without ODE blocks.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from theory.claims import Verdict, threshold_verdict
from theory.datasets import data_field

from .. import Printed, register, register_figure
from ..config import Bool, Choice, Choices, Config, Int, Ints, OrNone, Real, Reals, Seed, Seeds, field
from . import _image_models as im

__all__ = ["AccuracyConfig", "AccuracyResult", "measure_accuracy", "table_verdict", "curves_verdict",
           "imagenet_verdict", "table_figure", "curves_figure", "imagenet_figure",
           "GammaConfig", "GammaResult", "measure_gamma", "gamma_verdict", "gamma_memory_verdict", "gamma_figure",
           "gamma_memory_figure",
           "MemoryBatchConfig", "MemoryBatchResult", "measure_memory_batch", "memory_batch_verdict",
           "memory_batch_figure",
           "FinetuneConfig", "FinetuneResult", "measure_finetune", "finetune_verdict", "finetune_figure",
           "ODEConfig", "ODEResult", "measure_ode", "ode_verdict", "ode_figure",
           "CIFAR_PRESETS", "IMAGENET_PRESETS", "GAMMA_PRESETS", "GAMMA_DIGITS_PRESETS", "MEMORY_BATCH_PRESETS",
           "FINETUNE_PRESETS", "ODE_PRESETS"]

_CLASSES = {"cifar-10": 10, "cifar-100": 100, "imagenet": 1000, "hymenoptera": 2, "digits": 10}
_MODELS = ("resnet", "momentum_v0_zero", "momentum_v0_f", "revnet")
_MODEL_NAMES = {"resnet": "ResNet", "momentum_v0_zero": "Momentum ResNet, v0 = 0",
                "momentum_v0_f": "Momentum ResNet, v0 = f(x0)", "revnet": "RevNet"}


def _load(name, data, seed, n_train, n_test, image_size):
    """Tensors (x_train, y_train, x_test, y_test) of dataset ``name`` (``"digits"``: scikit-learn's), subsampled at
    random to ``n_train`` / ``n_test`` (None: all), resized to ``image_size`` (None: as stored)."""
    import torch

    if name == "digits":
        xtr, ytr, xte, yte = im.digits_images(seed, n_train or 1200, n_test or 597)
    else:
        import theory.datasets

        xtr, ytr, xte, yte = theory.datasets.load(name, data)[:4]
    rng = np.random.default_rng(seed)
    out = []
    for x, y, n in ((xtr, ytr, n_train), (xte, yte, n_test)):
        y = np.asarray(y, dtype=np.int64)
        idx = np.arange(len(y)) if n is None or n >= len(y) else np.sort(rng.choice(len(y), n, replace=False))
        if isinstance(x, np.ndarray) and x.dtype != object:
            xt = im.prepare_images(x[idx], image_size)
        else:  # images of several sizes (hymenoptera): resize each
            if image_size is None:
                raise ValueError(f"`image_size` must be set for {name}, whose images differ in size")
            xt = torch.cat([im.prepare_images(np.asarray(x[i])[None], image_size) for i in idx])
        out += [xt, torch.from_numpy(y[idx])]
    return tuple(out)


def _se(values):
    v = np.asarray(values, dtype=float)
    return float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else 0.0


# --------------------------------------------------------------------- accuracy: Table 4.2, Figs. 4.12, 4.6


@dataclasses.dataclass(frozen=True)
class AccuracyConfig(Config):
    """ResNets, Momentum ResNets (and RevNets) trained on image datasets, several seeds each (Table 4.2)."""

    datasets: tuple = field(Choices("cifar-10", "cifar-100", "imagenet", distinct=True), ("cifar-10", "cifar-100"),
                            "Datasets, each trained from scratch.")
    models: tuple = field(Choices(*_MODELS, distinct=True), ("resnet", "momentum_v0_zero", "momentum_v0_f"),
                          "Models (the first, the ResNet, is the reference of the comparisons).")
    seeds: tuple = field(Seeds(distinct=True), (0, 1), "One training run per seed and model.")
    blocks: tuple = field(Ints(low=1), (2, 2, 2), "Blocks per stage (ResNet-101: 3, 4, 23, 3 bottlenecks).")
    width: int = field(Int(low=2), 8, "Channels of the first stage (even, for the RevNet's halves).")
    bottleneck: bool = field(Bool(), False, "Bottleneck residual functions.")
    stem: str = field(Choice("cifar", "imagenet"), "cifar", "3x3 stem, or the ImageNet 7x7 stride-2 stem and pooling.")
    gamma: float = field(Real(0, 1, closed="right"), 0.9, "Momentum term of the Momentum ResNets (Sec. 4.5.2: 0.9).")
    memory_free: bool = field(Bool(), False, "Memory-free backpropagation of the momentum steps (same gradients).")
    epochs: int = field(Int(low=1), 2, "Training epochs.")
    batch: int = field(Int(low=2), 32, "Batch size.")
    lr: float = field(Real(0, closed="neither"), 0.05, "Initial learning rate of SGD (momentum 0.9).")
    milestones: tuple = field(Ints(low=1, min_len=0, increasing=True), (), "Epochs at which the rate is divided by 10.")
    weight_decay: float = field(Real(0), 5e-4, "Weight decay.")
    augment: bool = field(Bool(), False, "Random crops (4-pixel padding) and horizontal flips.")
    n_train: int | None = field(OrNone(Int(low=2), "the whole training set"), 400, "Training images (a random "
                                "subset).")
    n_test: int | None = field(OrNone(Int(low=1), "the whole test set"), 400, "Test images (a random subset).")
    image_size: int | None = field(OrNone(Int(low=4), "as stored"), None, "Side the images are resized to.")
    device: str = field(Choice("cpu", "cuda"), "cpu", "Torch device of the training.")
    data: str | None = data_field("CIFAR-10, CIFAR-100 or ImageNet")

    def check(self):
        if self.models[0] != "resnet":
            raise self.invalid("models", "start with 'resnet', the reference of the comparisons")
        if "revnet" in self.models and self.width % 2:
            raise self.invalid("width", "be even when a RevNet is trained")


@dataclasses.dataclass(frozen=True)
class AccuracyResult:
    """Per dataset and model: the learning curves of every seed (epochs, test loss, test accuracy)."""

    datasets: tuple
    models: tuple
    seeds: tuple
    curves: dict  # (dataset, model) -> list over seeds of {"epoch", "loss", "accuracy"} lists
    parameters: dict  # model -> parameter count (of the first dataset's network)

    def final(self, ds, model):
        return [c["accuracy"][-1] for c in self.curves[ds, model]]

    def final_loss(self, ds, model):
        return [c["loss"][-1] for c in self.curves[ds, model]]

    def to_measured(self):
        return {f"{ds}.{m}.accuracy": float(np.mean(self.final(ds, m))) for ds in self.datasets for m in self.models}


def _build(name, cfg, n_classes, in_channels=3):
    arch = {"resnet": "resnet", "revnet": "revnet"}.get(name, "momentum")
    return im.ImageResNet(arch, blocks=cfg.blocks, width=cfg.width, in_channels=in_channels, n_classes=n_classes,
                          bottleneck=cfg.bottleneck, gamma=cfg.gamma,
                          v0="f" if name == "momentum_v0_f" else "zero",
                          memory_free=cfg.memory_free and arch == "momentum" and cfg.gamma > 0, stem=cfg.stem)


def measure_accuracy(cfg: AccuracyConfig) -> AccuracyResult:
    """Train every model on every dataset once per seed (SGD of App. 4.D) and record the test curves."""
    import torch

    curves, params = {}, {}
    for ds in cfg.datasets:
        xtr, ytr, xte, yte = _load(ds, cfg.data, 0, cfg.n_train, cfg.n_test, cfg.image_size)
        for m in cfg.models:
            runs = []
            for s in cfg.seeds:
                torch.manual_seed(s)
                net = _build(m, cfg, _CLASSES[ds], xtr.shape[1])
                params.setdefault(m, im.count_parameters(net))
                h = im.train_classifier(net, xtr, ytr, xte, yte, epochs=cfg.epochs, batch=cfg.batch, lr=cfg.lr,
                                        weight_decay=cfg.weight_decay, milestones=cfg.milestones, seed=s,
                                        augment=cfg.augment, device=cfg.device)
                runs.append({k: list(h[k]) for k in ("epoch", "loss", "accuracy")})
            curves[ds, m] = runs
    return AccuracyResult(tuple(cfg.datasets), tuple(cfg.models), tuple(cfg.seeds), curves, params)


def _gap_measures(result, datasets):
    """Gaps |mean(model) - mean(ResNet)| of the final test accuracy and their tolerance max(0.01, 3 SE)."""
    measured, expected = {}, {}
    for ds in datasets:
        ref = result.final(ds, "resnet")
        measured[f"{ds}.resnet.accuracy"] = float(np.mean(ref))
        expected[f"{ds}.resnet.accuracy_min"] = 1.5 / _CLASSES[ds]
        for m in result.models[1:]:
            acc = result.final(ds, m)
            gap = abs(float(np.mean(acc)) - float(np.mean(ref)))
            tol = max(0.01, 3.0 * math.hypot(_se(acc), _se(ref)))
            measured[f"{ds}.{m}.accuracy"] = float(np.mean(acc))
            measured[f"{ds}.{m}.gap"] = gap
            expected[f"{ds}.{m}.gap_max"] = tol
    return measured, expected


TABLE_CRITERION = ("on CIFAR-10 and CIFAR-100, each Momentum ResNet's mean final test accuracy over the seeds is "
                   "within max(0.01, 3 standard errors of the difference) of the ResNet's, and the ResNet's is at "
                   "least 1.5 x chance (the runs learned)")


def table_verdict(result: AccuracyResult) -> Verdict:
    """Table 4.2: Momentum ResNets (v_0 = 0, v_0 = f(x_0)) match the ResNet's test accuracy (``TABLE_CRITERION``)."""
    measured, expected = _gap_measures(result, [d for d in result.datasets if d.startswith("cifar")])
    for ds in result.datasets:
        for m in result.models:
            measured[f"{ds}.{m}.std"] = float(np.std(result.final(ds, m), ddof=1)) if len(result.seeds) > 1 else 0.0
    return threshold_verdict("qualitative", measured, expected,
                             context=f"{len(result.seeds)} seeds per model; {TABLE_CRITERION}")


CURVES_CRITERION = ("on CIFAR-10, each Momentum ResNet's final test error is within max(0.01, 3 standard errors) of "
                    "the ResNet's and its final test loss within 10% (relative) of the ResNet's, and every model's "
                    "final test error is below its error after the first epoch")


def curves_verdict(result: AccuracyResult) -> Verdict:
    """Fig. 4.12: the learning curves of the Momentum ResNets-101 follow the ResNet-101's (``CURVES_CRITERION``)."""
    ds = "cifar-10"
    measured, expected = _gap_measures(result, [ds])
    ref_loss = float(np.mean(result.final_loss(ds, "resnet")))
    for m in result.models:
        first = float(np.mean([1 - c["accuracy"][0] for c in result.curves[ds, m]]))
        last = float(np.mean([1 - c["accuracy"][-1] for c in result.curves[ds, m]]))
        measured[f"{ds}.{m}.error_drop"] = first - last
        expected[f"{ds}.{m}.error_drop_above"] = 0.0
        if m != "resnet":
            measured[f"{ds}.{m}.loss_rel_gap"] = abs(float(np.mean(result.final_loss(ds, m))) - ref_loss) / ref_loss
            expected[f"{ds}.{m}.loss_rel_gap_max"] = 0.10
    return threshold_verdict("qualitative", measured, expected, context=CURVES_CRITERION)


IMAGENET_CRITERION = ("on ImageNet, each invertible model's (Momentum ResNets, RevNet) final top-1 test error is "
                      "within 0.02 of the ResNet-101's (the document: 22% against 23%), and the ResNet's accuracy is "
                      "at least 1.5 x chance")


def imagenet_verdict(result: AccuracyResult) -> Verdict:
    """Fig. 4.6, lower row: invertible models of depth 101 reach the ResNet-101's top-1 error to within 0.02."""
    ds = "imagenet"
    ref = float(np.mean(result.final(ds, "resnet")))
    measured = {f"{ds}.resnet.error": 1 - ref}
    expected = {f"{ds}.resnet.error_max": 1 - 1.5 / _CLASSES[ds]}
    for m in result.models[1:]:
        err = 1 - float(np.mean(result.final(ds, m)))
        measured[f"{ds}.{m}.error"] = err
        measured[f"{ds}.{m}.gap"] = abs(err - (1 - ref))
        expected[f"{ds}.{m}.gap_max"] = 0.02
    return threshold_verdict("qualitative", measured, expected, context=IMAGENET_CRITERION)


def table_figure(result: AccuracyResult, claim_id: str = "momentum/table-4.2"):
    """Table 4.2 as a table: mean +- standard deviation of the test accuracy (%) per model and dataset."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1, figsize=(6.4, 1.2 + 0.35 * len(result.models)))
    ax = axes[0]
    ax.axis("off")
    rows = []
    for m in result.models:
        row = [_MODEL_NAMES[m]]
        for ds in result.datasets:
            a = 100 * np.asarray(result.final(ds, m))
            row.append(f"{a.mean():.2f} ± {a.std(ddof=1) if len(a) > 1 else 0.0:.2f}")
        rows.append(row)
    tab = ax.table(cellText=rows, colLabels=["Model"] + [d.upper() for d in result.datasets], loc="center")
    tab.scale(1, 1.4)
    ax.set_title(f"Test accuracy (%) over {len(result.seeds)} runs per model", fontsize=9)
    return save_figure(fig, claim_id)


def _curve_mean(runs, key):
    n = min(len(c[key]) for c in runs)
    return np.asarray(runs[0]["epoch"][:n]), np.mean([c[key][:n] for c in runs], axis=0)


def curves_figure(result: AccuracyResult, claim_id: str = "momentum/fig-4.12", dataset: str = "cifar-10"):
    """Fig. 4.12: test error (left) and test loss (right) against the epoch, one line per model."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(2, figsize=(8.0, 3.2))
    for m in result.models:
        ep, acc = _curve_mean(result.curves[dataset, m], "accuracy")
        _, loss = _curve_mean(result.curves[dataset, m], "loss")
        axes[0].plot(ep, 100 * (1 - acc), label=_MODEL_NAMES[m])
        axes[1].plot(ep, loss, label=_MODEL_NAMES[m])
    axes[0].set(xlabel="epoch", ylabel="test error (%)")
    axes[1].set(xlabel="epoch", ylabel="test loss")
    axes[0].legend(fontsize=7)
    return save_figure(fig, claim_id)


def imagenet_figure(result: AccuracyResult, claim_id: str = "momentum/fig-4.6/imagenet"):
    """Fig. 4.6, lower row: top-1 test error (single crop) on ImageNet against the epoch, one line per model."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1)
    for m in result.models:
        ep, acc = _curve_mean(result.curves["imagenet", m], "accuracy")
        axes[0].plot(ep, 100 * (1 - acc), label=_MODEL_NAMES[m])
    axes[0].set(xlabel="epoch", ylabel="top-1 error (%)")
    axes[0].legend(fontsize=7)
    return save_figure(fig, claim_id)


CIFAR_PRESETS = {
    "check": AccuracyConfig(),
    # App. 4.D: ResNet-101 (bottlenecks 3, 4, 23, 3), batch 128, SGD momentum 0.9, 220 epochs, lr 0.01 divided by
    # 10 at epoch 180, weight decay 5e-4, standard augmentation; Table 4.2: 10 runs per model
    "paper": AccuracyConfig(seeds=tuple(range(10)), blocks=(3, 4, 23, 3), width=64, bottleneck=True, epochs=220,
                            batch=128, lr=0.01, milestones=(180,), augment=True, n_train=None, n_test=None,
                            device="cuda"),
}

IMAGENET_PRESETS = {
    "check": AccuracyConfig(datasets=("imagenet",), models=_MODELS, seeds=(0,), stem="imagenet", image_size=32,
                            epochs=1),
    # App. 4.D: batch 256, SGD momentum 0.9, 100 epochs, lr 0.1 divided by 10 every 30 epochs, weight decay 1e-4,
    # 224 x 224 crops; the RevNet-101 has twice the (half-width) residual functions, for the ResNet's parameter count
    "paper": AccuracyConfig(datasets=("imagenet",), models=_MODELS, seeds=(0,), blocks=(3, 4, 23, 3), width=64,
                            bottleneck=True, stem="imagenet", epochs=100, batch=256, lr=0.1, milestones=(30, 60, 90),
                            weight_decay=1e-4, augment=True, n_train=None, n_test=None, image_size=224,
                            device="cuda"),
}


# ------------------------------------------------------------------------------ gamma: Figs. 4.6 and 4.7


@dataclasses.dataclass(frozen=True)
class GammaConfig(Config):
    """Momentum ResNets trained at gamma_train, evaluated (and optionally refitted) at gamma_test (Fig. 4.6)."""

    dataset: str = field(Choice("cifar-10", "digits"), "cifar-10", 'The data ("digits": scikit-learn\'s 8x8 digits, '
                         "the proxy).")
    gammas_train: tuple = field(Reals(0, 1, min_len=2, increasing=True), (0.0, 0.5, 0.9), "Momentum at train time.")
    eval_from: tuple = field(Reals(0, 1, min_len=0), (0.0, 0.9), "The gamma_train whose models are re-evaluated at "
                             "every gamma_test (the document: 0 and 1).")
    gammas_test: tuple = field(Reals(0, 1, increasing=True), (0.0, 0.5, 0.9), "Momentum at test time.")
    refit_epochs: int = field(Int(low=0), 0, "Epochs of refit at gamma_test (the document: 20; 0: no refit).")
    seed: int = field(Seed(), 0, "Seed of the data split and "
                      "the training.")
    blocks: tuple = field(Ints(low=1), (2, 4, 4), "Blocks per stage (Momentum ResNet-101: 3, 4, 23, 3 bottlenecks).")
    width: int = field(Int(low=1), 8, "Channels of the first stage.")
    bottleneck: bool = field(Bool(), False, "Bottleneck residual functions.")
    epochs: int = field(Int(low=1), 2, "Training epochs.")
    batch: int = field(Int(low=2), 32, "Batch size.")
    lr: float = field(Real(0, closed="neither"), 0.05, "Initial learning rate of SGD (momentum 0.9).")
    milestones: tuple = field(Ints(low=1, min_len=0, increasing=True), (), "Epochs at which the rate is divided by 10.")
    weight_decay: float = field(Real(0), 5e-4, "Weight decay.")
    augment: bool = field(Bool(), False, "Random crops and horizontal flips.")
    n_train: int | None = field(OrNone(Int(low=2), "the whole training set"), 400, "Training images.")
    n_test: int | None = field(OrNone(Int(low=1), "the whole test set"), 400, "Test images.")
    memory_batch: int = field(Int(low=1), 8, "Batch at which the activation memory of Fig. 4.7 is measured.")
    memory_free: bool = field(Bool(), True, "Measure the memory of the memory-free backpropagation (gamma > 0); "
                              "False: the activations are stored (a negative control of Fig. 4.7).")
    buffer: bool = field(Bool(), True, "Count the exact-reversal buffer, N log2(1/gamma) bits per coordinate "
                         "(Sec. 4.3.2); False: a negative control of Fig. 4.7.")
    device: str = field(Choice("cpu", "cuda"), "cpu", "Torch device of the training.")
    data: str | None = data_field("CIFAR-10")

    def check(self):
        missing = [g for g in self.eval_from if g not in self.gammas_train]
        if missing:
            raise self.invalid("eval_from", f"list values of gammas_train; {missing} are not")


@dataclasses.dataclass(frozen=True)
class GammaResult:
    """From-scratch accuracy per gamma_train; accuracy at each gamma_test of the eval_from models, without and
    with refit; memory per gamma_train (stored activations, and those plus the exact-reversal buffer)."""

    gammas_train: tuple
    gammas_test: tuple
    eval_from: tuple
    scratch: tuple  # accuracy per gamma_train
    no_refit: dict  # gamma_train -> tuple over gammas_test
    refit: dict  # gamma_train -> tuple over gammas_test (empty without refit)
    activation_bytes: tuple  # per gamma_train, memory-free (gamma > 0) or stored activations (gamma = 0)
    buffer_bytes: tuple  # per gamma_train, N log2(1/gamma) bits per coordinate (Sec. 4.3.2)
    refit_epochs: int

    @property
    def memory_bytes(self):
        return tuple(a + b for a, b in zip(self.activation_bytes, self.buffer_bytes))

    def to_measured(self):
        out = {f"scratch.gamma={g:g}": a for g, a in zip(self.gammas_train, self.scratch)}
        for g, accs in self.no_refit.items():
            out.update({f"no_refit.train={g:g}.test={t:g}": a for t, a in zip(self.gammas_test, accs)})
        return out


def measure_gamma(cfg: GammaConfig) -> GammaResult:
    """Train a Momentum ResNet (v_0 = 0) at every gamma_train; re-evaluate the eval_from ones at every gamma_test
    and, with ``refit_epochs``, refit them there from their trained weights; measure each gamma's memory."""
    import copy

    import torch

    xtr, ytr, xte, yte = _load(cfg.dataset, cfg.data, cfg.seed, cfg.n_train, cfg.n_test, None)
    n_classes = _CLASSES[cfg.dataset]
    kw = dict(epochs=cfg.epochs, batch=cfg.batch, lr=cfg.lr, weight_decay=cfg.weight_decay,
              milestones=cfg.milestones, seed=cfg.seed, augment=cfg.augment, device=cfg.device)
    scratch, no_refit, refit, act, buf = [], {}, {}, [], []
    for g in cfg.gammas_train:
        torch.manual_seed(cfg.seed)
        net = im.ImageResNet("momentum", blocks=cfg.blocks, width=cfg.width, in_channels=xtr.shape[1],
                             n_classes=n_classes, bottleneck=cfg.bottleneck, gamma=g)
        h = im.train_classifier(net, xtr, ytr, xte, yte, **kw)
        scratch.append(h["accuracy"][-1])
        if g in cfg.eval_from:
            no_refit[g] = tuple(im.evaluate(net, h["x_test"], h["y_test"], gamma=t)[1] for t in cfg.gammas_test)
            if cfg.refit_epochs:
                accs = []
                for t in cfg.gammas_test:
                    twin = copy.deepcopy(net)
                    twin.gamma = float(t)
                    accs.append(im.train_classifier(twin, xtr, ytr, xte, yte,
                                                    **{**kw, "epochs": cfg.refit_epochs})["accuracy"][-1])
                refit[g] = tuple(accs)
        mem_net = im.ImageResNet("momentum", blocks=cfg.blocks, width=cfg.width, in_channels=xtr.shape[1],
                                 n_classes=n_classes, bottleneck=cfg.bottleneck, gamma=g,
                                 memory_free=cfg.memory_free and g > 0)
        act.append(im.saved_activation_bytes(mem_net, cfg.memory_batch, tuple(xtr.shape[1:])))
        # buffer of exact reversal: per momentum layer, log2(1/gamma) bits per coordinate of its activation
        bits = 0.0
        if g > 0 and cfg.buffer:
            side = xtr.shape[-1]
            for s, k in enumerate(cfg.blocks):
                coords = cfg.memory_batch * cfg.width * 2 ** s * (4 if cfg.bottleneck else 1) * (side // 2 ** s) ** 2
                bits += coords * (k - 1) * math.log2(1.0 / g)
        buf.append(bits / 8.0 if g > 0 else 0.0)
    return GammaResult(tuple(cfg.gammas_train), tuple(cfg.gammas_test), tuple(cfg.eval_from), tuple(scratch),
                       no_refit, refit, tuple(act), tuple(buf), cfg.refit_epochs)


GAMMA_CRITERION = ("models trained at each gamma_train of eval_from and evaluated at any gamma_test without further "
                   "training lose at most 0.03 of test accuracy against their own gamma_train; after refitting (when "
                   "refit_epochs > 0) each is within 0.03 of the best from-scratch accuracy; and the from-scratch "
                   "accuracies over gamma_train span at most 0.03")


def gamma_verdict(result: GammaResult) -> Verdict:
    """Fig. 4.6, upper row (Sec. 4.5.2: "the test accuracy never decreases by more than 3%"): ``GAMMA_CRITERION``."""
    scratch = dict(zip(result.gammas_train, result.scratch))
    measured = {"scratch_spread": float(max(result.scratch) - min(result.scratch))}
    expected = {"scratch_spread_max": 0.03}
    for g, accs in result.no_refit.items():
        measured[f"drop_no_refit.train={g:g}"] = float(scratch[g] - min(accs))
        expected[f"drop_no_refit.train={g:g}_max"] = 0.03
    for g, accs in result.refit.items():
        measured[f"refit_gap.train={g:g}"] = float(max(result.scratch) - min(accs))
        expected[f"refit_gap.train={g:g}_max"] = 0.03
    return threshold_verdict("qualitative", measured, expected, context=GAMMA_CRITERION)


GAMMA_MEMORY_CRITERION = ("the memory of one training step (stored activations of the memory-free Momentum ResNet "
                          "plus the exact-reversal buffer of N log2(1/gamma) bits per coordinate) decreases strictly "
                          "as gamma grows over the gammas > 0, while the final test accuracy at the largest gamma "
                          "(least memory) is within 0.03 of the best accuracy over gamma")


def gamma_memory_verdict(result: GammaResult) -> Verdict:
    """Fig. 4.7, lower row: less memory at larger gamma without losing accuracy (``GAMMA_MEMORY_CRITERION``)."""
    pos = [i for i, g in enumerate(result.gammas_train) if g > 0]
    mem = [result.memory_bytes[i] for i in pos]
    measured = {"memory_increase_steps": int(sum(b >= a for a, b in zip(mem, mem[1:]))),
                "accuracy_gap_least_memory": float(max(result.scratch) - result.scratch[pos[-1]]) if pos else math.nan}
    return threshold_verdict("qualitative", measured, {"memory_increase_steps_max": 0,
                                                       "accuracy_gap_least_memory_max": 0.03},
                             context=GAMMA_MEMORY_CRITERION)


def gamma_figure(result: GammaResult, claim_id: str = "momentum/fig-4.6"):
    """Fig. 4.6, upper row: final test accuracy against gamma_train (from scratch), and against gamma_test for the
    eval_from models without refit and, when refitted, with refit."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(2, figsize=(8.0, 3.2))
    axes[0].plot(result.gammas_train, 100 * np.asarray(result.scratch), "o-", color="k", label="trained at gamma")
    axes[0].set(xlabel="gamma_train", ylabel="test accuracy (%)", title="from scratch")
    for g, accs in result.no_refit.items():
        axes[1].plot(result.gammas_test, 100 * np.asarray(accs), "o-", label=f"gamma_train = {g:g}, no refit")
    for g, accs in result.refit.items():
        axes[1].plot(result.gammas_test, 100 * np.asarray(accs), "s--",
                     label=f"gamma_train = {g:g}, refit {result.refit_epochs} epochs")
    axes[1].set(xlabel="gamma_test", ylabel="test accuracy (%)", title="evaluated at gamma_test")
    axes[1].legend(fontsize=7)
    lo = min([min(result.scratch)] + [min(a) for a in (*result.no_refit.values(), *result.refit.values())])
    for ax in axes:
        ax.set_ylim(100 * lo - 2, 100.5)
    return save_figure(fig, claim_id)


def gamma_memory_figure(result: GammaResult, claim_id: str = "momentum/fig-4.7/accuracy"):
    """Fig. 4.7, lower row: final test accuracy against the memory of one training step, one point per gamma."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1)
    mem = np.asarray(result.memory_bytes) / 2 ** 20
    order = np.argsort(mem)
    axes[0].plot(mem[order], 100 * np.asarray(result.scratch)[order], "o-")
    for m, a, g in zip(mem, result.scratch, result.gammas_train):
        axes[0].annotate(f"gamma={g:g}", (m, 100 * a), fontsize=7)
    axes[0].set(xlabel="memory (MiB)", ylabel="final test accuracy (%)")
    return save_figure(fig, claim_id)


GAMMA_PRESETS = {
    "check": GammaConfig(),
    # Sec. 4.5.2 / App. 4.D: Momentum ResNet-101 on CIFAR-10, 220 epochs, refit 20 epochs at gamma_test
    "paper": GammaConfig(gammas_train=(0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0), eval_from=(0.0, 1.0),
                         gammas_test=(0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0), refit_epochs=20, blocks=(3, 4, 23, 3),
                         width=64, bottleneck=True, epochs=220, batch=128, lr=0.01, milestones=(180,), augment=True,
                         n_train=None, n_test=None, memory_batch=128, device="cuda"),
}

GAMMA_DIGITS_PRESETS = {
    # Sec. 4.5.2: "We also evaluate Momentum ResNets trained with gamma_train = 0 and gamma_train = 1 with no
    # further training": the re-evaluated models are those of gamma_train = 0 and 1 (was 0 and 0.9)
    "check": GammaConfig(dataset="digits", gammas_train=(0.0, 0.5, 0.9, 1.0), eval_from=(0.0, 1.0),
                         gammas_test=(0.0, 0.5, 0.9), blocks=(1, 6), width=8, epochs=8, batch=32, lr=0.05,
                         n_train=1000, n_test=597),
    "paper": GammaConfig(dataset="digits", gammas_train=(0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0), eval_from=(0.0, 1.0),
                         gammas_test=(0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0), refit_epochs=20, blocks=(1, 12, 12),
                         width=16, epochs=60, batch=64, lr=0.05, milestones=(45,), n_train=1200, n_test=597),
}


# -------------------------------------------------------------------------- memory against batch: Fig. 4.7


@dataclasses.dataclass(frozen=True)
class MemoryBatchConfig(Config):
    """Activation memory of one training step against the batch size, ResNet against Momentum ResNet (Fig. 4.7)."""

    setups: tuple = field(Choices("cifar", "imagenet", distinct=True), ("cifar",), 'Setups: "cifar" (32 x 32 x 3, '
                          "basic blocks ``cifar_blocks``), \"imagenet\" (224 x 224 x 3, bottlenecks "
                          "``imagenet_blocks``).")
    batches: tuple = field(Ints(low=1, min_len=3, increasing=True), (2, 4, 8, 16), "Batch sizes.")
    cifar_blocks: tuple = field(Ints(low=1), (18, 18, 18), "Blocks per stage of the CIFAR network (depth 6 n + 2).")
    cifar_width: int = field(Int(low=1), 16, "Channels of the first stage of the CIFAR network.")
    imagenet_blocks: tuple = field(Ints(low=1), (3, 8, 36, 3), "Bottlenecks per stage of the ImageNet network "
                                   "(ResNet-152).")
    imagenet_width: int = field(Int(low=1), 64, "Channels of the first stage of the ImageNet network.")
    imagenet_size: int = field(Int(low=32), 224, "Side of the ImageNet crops.")
    gamma: float = field(Real(0, 1, closed="right"), 0.9, "Momentum term (> 0: the memory-free backpropagation).")
    memory_free: bool = field(Bool(), True, "Memory-free backpropagation of the momentum steps (False: the "
                              "Momentum ResNet stores its activations like the ResNet; a negative control).")
    seed: int = field(Int(low=0), 0, "Seed of the weights and random inputs.")


@dataclasses.dataclass(frozen=True)
class MemoryBatchResult:
    """Per setup: bytes stored for backpropagation per batch size, ResNet and Momentum ResNet."""

    setups: tuple
    batches: tuple
    resnet: dict  # setup -> tuple of bytes
    momentum: dict
    depth: dict  # setup -> depth

    def slopes(self, setup):
        b = np.asarray(self.batches, float)
        return (float(np.polyfit(b, self.resnet[setup], 1)[0]), float(np.polyfit(b, self.momentum[setup], 1)[0]))

    def to_measured(self):
        return {f"{s}.{k}": [int(v) for v in getattr(self, k)[s]] for s in self.setups for k in ("resnet", "momentum")}


def measure_memory_batch(cfg: MemoryBatchConfig) -> MemoryBatchResult:
    """Bytes of the tensors one training forward pass stores for backpropagation
    (:func:`._image_models.saved_activation_bytes`), random inputs of the document's shapes."""
    import torch

    res, mom, depth = {}, {}, {}
    for s in cfg.setups:
        if s == "cifar":
            kw = dict(blocks=cfg.cifar_blocks, width=cfg.cifar_width, bottleneck=False, stem="cifar", n_classes=10)
            image = (3, 32, 32)
            depth[s] = 2 * sum(cfg.cifar_blocks) + 2
        else:
            kw = dict(blocks=cfg.imagenet_blocks, width=cfg.imagenet_width, bottleneck=True, stem="imagenet",
                      n_classes=1000)
            image = (3, cfg.imagenet_size, cfg.imagenet_size)
            depth[s] = 3 * sum(cfg.imagenet_blocks) + 2
        out = []
        for arch in ("resnet", "momentum"):
            torch.manual_seed(cfg.seed)
            net = im.ImageResNet(arch, gamma=cfg.gamma, memory_free=cfg.memory_free and cfg.gamma > 0, **kw)
            out.append(tuple(im.saved_activation_bytes(net, b, image, cfg.seed) for b in cfg.batches))
        res[s], mom[s] = out
    return MemoryBatchResult(tuple(cfg.setups), tuple(cfg.batches), res, mom, depth)


MEMORY_BATCH_CRITERION = ("at every setup, the memory grows affinely with the batch size for both networks (R^2 of the "
                          "line >= 0.999) and the Momentum ResNet's memory per sample (slope) is at most half the "
                          "ResNet's")


def memory_batch_verdict(result: MemoryBatchResult) -> Verdict:
    """Fig. 4.7, upper row: ``MEMORY_BATCH_CRITERION``."""
    b = np.asarray(result.batches, float)
    measured, expected = {}, {}
    for s in result.setups:
        sr, sm = result.slopes(s)
        measured[f"{s}.slope_ratio"] = sm / sr
        expected[f"{s}.slope_ratio_max"] = 0.5
        for k in ("resnet", "momentum"):
            y = np.asarray(getattr(result, k)[s], float)
            fit = np.polyval(np.polyfit(b, y, 1), b)
            measured[f"{s}.{k}.r2"] = float(1 - ((y - fit) ** 2).sum() / ((y - y.mean()) ** 2).sum())
            expected[f"{s}.{k}.r2_min"] = 0.999
            measured[f"{s}.{k}.bytes_per_sample"] = float(np.polyfit(b, y, 1)[0])
    return threshold_verdict("qualitative", measured, expected,
                             context=f"depths {result.depth}; {MEMORY_BATCH_CRITERION}")


def memory_batch_figure(result: MemoryBatchResult, claim_id: str = "momentum/fig-4.7"):
    """Fig. 4.7, upper row: memory (MiB) against the batch size, ResNet and Momentum ResNet, one panel per setup."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(len(result.setups), figsize=(4.0 * len(result.setups), 3.2))
    for ax, s in zip(axes, result.setups):
        ax.plot(result.batches, np.asarray(result.resnet[s]) / 2 ** 20, "o-", label="ResNet")
        ax.plot(result.batches, np.asarray(result.momentum[s]) / 2 ** 20, "s-", label="Momentum ResNet")
        ax.set(xlabel="batch size", ylabel="memory (MiB)",
               title=f"{'CIFAR-10' if s == 'cifar' else 'ImageNet'}, depth {result.depth[s]}")
        ax.legend(fontsize=7)
    return save_figure(fig, claim_id)


MEMORY_BATCH_PRESETS = {
    "check": MemoryBatchConfig(),
    # Sec. 4.5.2: ImageNet at depth 152, CIFAR-10 at depth 1201 (here 6 x 200 + 2 = 1202, basic blocks)
    "paper": MemoryBatchConfig(setups=("cifar", "imagenet"), batches=(4, 8, 16, 32), cifar_blocks=(200, 200, 200)),
}


# ------------------------------------------------------------------------------ fine-tuning: Fig. 4.8


@dataclasses.dataclass(frozen=True)
class FinetuneConfig(Config):
    """Fine-tuning a ResNet and a Momentum ResNet on hymenoptera, accuracy against wall time (Fig. 4.8)."""

    blocks: tuple = field(Ints(low=1), (2, 2, 2), "Bottlenecks per stage (ResNet-152: 3, 8, 36, 3).")
    width: int = field(Int(low=1), 8, "Channels of the first stage.")
    image_size: int = field(Int(low=8), 64, "Side the images are resized to (the document: 500).")
    batch_resnet: int = field(Int(low=2), 2, "Batch of the ResNet (the document: 2, as memory permits).")
    batch_momentum: int = field(Int(low=2), 4, "Batch of the Momentum ResNet (the document: 4).")
    gamma: float = field(Real(0, 1, closed="right"), 0.9, "Momentum term.")
    epochs: int = field(Int(low=1), 2, "Fine-tuning epochs.")
    lr: float = field(Real(0, closed="neither"), 1e-3, "Learning rate of SGD (momentum 0.9).")
    n_train: int | None = field(OrNone(Int(low=2), "the whole training set"), 40, "Training images.")
    n_test: int | None = field(OrNone(Int(low=1), "the whole validation set"), 40, "Validation images.")
    init: str | None = field(OrNone(Choice("imagenet"), "random weights"), None, '"imagenet": weights pre-trained '
                             "on ImageNet, read from ``<data>/momentum-pretrained/resnet152.pt`` (a state dict of "
                             "this module's network); None: random weights.")
    seed: int = field(Int(low=0), 0, "Seed.")
    device: str = field(Choice("cpu", "cuda"), "cpu", "Torch device.")
    data: str | None = data_field("hymenoptera")


@dataclasses.dataclass(frozen=True)
class FinetuneResult:
    """Per model: (wall time, validation accuracy) after each epoch."""

    time: dict
    accuracy: dict

    def to_measured(self):
        return {f"{m}.final_accuracy": a[-1] for m, a in self.accuracy.items()}


def measure_finetune(cfg: FinetuneConfig) -> FinetuneResult:
    """Fine-tune the whole network, ResNet at ``batch_resnet`` and memory-free Momentum ResNet at
    ``batch_momentum``, recording the validation accuracy and wall time after every epoch."""
    import os

    import torch

    xtr, ytr, xte, yte = _load("hymenoptera", cfg.data, cfg.seed, cfg.n_train, cfg.n_test, cfg.image_size)
    times, accs = {}, {}
    for arch, b in (("resnet", cfg.batch_resnet), ("momentum", cfg.batch_momentum)):
        torch.manual_seed(cfg.seed)
        net = im.ImageResNet(arch, blocks=cfg.blocks, width=cfg.width, bottleneck=True, stem="imagenet",
                             n_classes=1000 if cfg.init else 2, gamma=cfg.gamma, memory_free=arch == "momentum")
        if cfg.init == "imagenet":
            import theory.datasets

            path = os.path.join(str(theory.datasets.data_root(cfg.data)), "momentum-pretrained", "resnet152.pt")
            net.load_state_dict(torch.load(path, map_location="cpu"))
            net.head[-1] = torch.nn.Linear(net.head[-1].in_features, 2)
        h = im.train_classifier(net, xtr, ytr, xte, yte, epochs=cfg.epochs, batch=b, lr=cfg.lr, weight_decay=0.0,
                                seed=cfg.seed, device=cfg.device)
        times[arch], accs[arch] = tuple(h["time"]), tuple(h["accuracy"])
    return FinetuneResult(times, accs)


FINETUNE_CRITERION = ("the Momentum ResNet (batch 4) reaches the best validation accuracy of the ResNet (batch 2) in "
                      "at most 0.75 of the wall time the ResNet needs to reach it (the document: up to twice as fast)")


def finetune_verdict(result: FinetuneResult) -> Verdict:
    """Fig. 4.8: ``FINETUNE_CRITERION`` (time ratio inf when the Momentum ResNet never reaches it)."""
    target = max(result.accuracy["resnet"])
    t_res = next(t for t, a in zip(result.time["resnet"], result.accuracy["resnet"]) if a >= target)
    t_mom = next((t for t, a in zip(result.time["momentum"], result.accuracy["momentum"]) if a >= target), math.inf)
    return threshold_verdict("qualitative", {"time_ratio": t_mom / t_res, "resnet_best_accuracy": target,
                                             "momentum_best_accuracy": max(result.accuracy["momentum"])},
                             {"time_ratio_max": 0.75}, context=FINETUNE_CRITERION)


def finetune_figure(result: FinetuneResult, claim_id: str = "momentum/fig-4.8"):
    """Fig. 4.8: validation accuracy against wall time, ResNet (batch 2) and Momentum ResNet (batch 4)."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1)
    for m, lab in (("resnet", "ResNet-152, batch 2"), ("momentum", "Momentum ResNet-152, batch 4")):
        axes[0].plot(result.time[m], 100 * np.asarray(result.accuracy[m]), "o-", label=lab)
    axes[0].set(xlabel="time (s)", ylabel="accuracy (%)")
    axes[0].legend(fontsize=7)
    return save_figure(fig, claim_id)


FINETUNE_PRESETS = {
    "check": FinetuneConfig(),
    # Sec. 4.5.2: ResNet-152 / Momentum ResNet-152 (gamma 0.9) pre-trained on ImageNet, 500 x 500 images, batch 2
    # and 4, the whole network fine-tuned; the epochs and learning rate are not stated (25 and 1e-3 here)
    "paper": FinetuneConfig(blocks=(3, 8, 36, 3), width=64, image_size=500, epochs=25, n_train=None, n_test=None,
                            init="imagenet", device="cuda"),
}


# -------------------------------------------------------------------------- ODE blocks: Fig. 4.9


@dataclasses.dataclass(frozen=True)
class ODEConfig(Config):
    """First- against second-order ODE blocks on CIFAR-10, as the number of channels varies (Fig. 4.9)."""

    channels: tuple = field(Ints(low=1, min_len=2, increasing=True), (2, 4, 8), "Numbers of channels.")
    n_blocks: int = field(Int(low=1), 10, "ODE blocks (the document: 10).")
    steps: int = field(Int(low=1), 2, "Fixed Runge-Kutta-4 steps per block on [0, 1] (the document: odeint).")
    eps: float = field(Real(0, closed="neither"), 1.0, "eps of the second-order blocks (not stated in the document).")
    iterations: int = field(Int(low=1), 120, "Training iterations (the caption: 120).")
    epochs: int = field(Int(low=1), 120, "At most this many epochs (App. 4.D: 120).")
    batch: int = field(Int(low=2), 128, "Batch size.")
    lr: float = field(Real(0, closed="neither"), 0.1, "Initial learning rate (App. 4.D: 0.1).")
    milestone: int = field(Int(low=1), 60, "Epoch at which the rate is divided by 10 (App. 4.D: 60).")
    n_train: int | None = field(OrNone(Int(low=2), "the whole training set"), 400, "Training images.")
    n_test: int | None = field(OrNone(Int(low=1), "the whole test set"), 400, "Test images.")
    seed: int = field(Int(low=0), 0, "Seed.")
    device: str = field(Choice("cpu", "cuda"), "cpu", "Torch device.")
    data: str | None = data_field("CIFAR-10")


@dataclasses.dataclass(frozen=True)
class ODEResult:
    """Final test accuracy per number of channels: first order, second order, and no ODE block."""

    channels: tuple
    first: tuple
    second: tuple
    baseline: tuple

    def to_measured(self):
        return {f"{k}.c={c}": a for k in ("first", "second", "baseline")
                for c, a in zip(self.channels, getattr(self, k))}


def measure_ode(cfg: ODEConfig) -> ODEResult:
    """Train the three models of :class:`._image_models.ODENet` at every number of channels."""
    import torch

    xtr, ytr, xte, yte = _load("cifar-10", cfg.data, cfg.seed, cfg.n_train, cfg.n_test, None)
    out = {1: [], 2: [], 0: []}
    for c in cfg.channels:
        for order in (1, 2, 0):
            torch.manual_seed(cfg.seed)
            net = im.ODENet(c, n_blocks=0 if order == 0 else cfg.n_blocks, order=max(order, 1), eps=cfg.eps,
                            steps=cfg.steps)
            h = im.train_classifier(net, xtr, ytr, xte, yte, epochs=cfg.epochs, batch=cfg.batch, lr=cfg.lr,
                                    milestones=(cfg.milestone,), seed=cfg.seed, max_steps=cfg.iterations,
                                    device=cfg.device)
            out[order].append(h["accuracy"][-1])
    return ODEResult(tuple(cfg.channels), tuple(out[1]), tuple(out[2]), tuple(out[0]))


ODE_CRITERION = ("at the smallest number of channels, the second-order (momentum) ODE net's final test accuracy "
                 "exceeds the first-order one's by at least 0.02")


def ode_verdict(result: ODEResult) -> Verdict:
    """Fig. 4.9: ``ODE_CRITERION``."""
    return threshold_verdict("qualitative", {"advantage_smallest": float(result.second[0] - result.first[0]),
                                             "first_smallest": result.first[0], "second_smallest": result.second[0]},
                             {"advantage_smallest_min": 0.02}, context=ODE_CRITERION)


def ode_figure(result: ODEResult, claim_id: str = "momentum/fig-4.9"):
    """Fig. 4.9: final test accuracy against the number of channels, with and without momentum, and the baseline."""
    from theory.plots import save_figure, subplots

    _, fig, axes = subplots(1)
    ax = axes[0]
    ax.plot(result.channels, 100 * np.asarray(result.second), "o-", label="ODE Net with momentum (4.6)")
    ax.plot(result.channels, 100 * np.asarray(result.first), "s-", label="ODE Net (4.5)")
    ax.plot(result.channels, 100 * np.asarray(result.baseline), "k--", label="no ODE block")
    ax.set(xlabel="number of channels", ylabel="test accuracy (%)")
    ax.set_xscale("log", base=2)
    ax.legend(fontsize=7)
    return save_figure(fig, claim_id)


ODE_PRESETS = {
    "check": ODEConfig(),
    # App. 4.D: batch 128, SGD momentum 0.9, lr 0.1 divided by 10 at 60, "120 epochs" (the caption: 120 iterations)
    "paper": ODEConfig(channels=(2, 4, 8, 16, 32, 64), steps=8, iterations=10 ** 9, epochs=120, n_train=None,
                       n_test=None, device="cuda"),
}


# --------------------------------------------------------------------------------------- registrations


def _acc_summary(r):
    return {f"{ds}.{m}.accuracy": float(np.mean(r.final(ds, m))) for ds in r.datasets for m in r.models}


register("momentum.cifar", config=AccuracyConfig, presets=CIFAR_PRESETS, measure=measure_accuracy,
         verdict=table_verdict, claims={"momentum/table-4.2": table_verdict, "momentum/fig-4.12": curves_verdict},
         summary=_acc_summary)
register("momentum.imagenet", config=AccuracyConfig, presets=IMAGENET_PRESETS, measure=measure_accuracy,
         verdict=imagenet_verdict, claims=("momentum/fig-4.6/imagenet",), summary=_acc_summary)
register("momentum.gamma", config=GammaConfig, presets=GAMMA_PRESETS, measure=measure_gamma, verdict=gamma_verdict,
         claims={"momentum/fig-4.6": gamma_verdict, "momentum/fig-4.7/accuracy": gamma_memory_verdict},
         summary=lambda r: {**r.to_measured(), **{f"memory_MiB.gamma={g:g}": m / 2 ** 20
                                                  for g, m in zip(r.gammas_train, r.memory_bytes)}})
register("momentum.gamma_digits", config=GammaConfig, presets=GAMMA_DIGITS_PRESETS, measure=measure_gamma,
         verdict=gamma_verdict, claims=("momentum/fig-4.6/digits",), summary=lambda r: r.to_measured())
register("momentum.memory_batch", config=MemoryBatchConfig, presets=MEMORY_BATCH_PRESETS,
         measure=measure_memory_batch, verdict=memory_batch_verdict, claims=("momentum/fig-4.7",),
         summary=lambda r: {f"{s}.slope_ratio": r.slopes(s)[1] / r.slopes(s)[0] for s in r.setups})
register("momentum.finetune", config=FinetuneConfig, presets=FINETUNE_PRESETS, measure=measure_finetune,
         verdict=finetune_verdict, claims=("momentum/fig-4.8",), summary=lambda r: r.to_measured())
register("momentum.ode_channels", config=ODEConfig, presets=ODE_PRESETS, measure=measure_ode, verdict=ode_verdict,
         claims=("momentum/fig-4.9",), summary=lambda r: r.to_measured())


# ------------------------------------------------------------------------------------ figure declarations

_T42 = "Table 4.2"
register_figure(
    "momentum", "table-4.2", "Test accuracy on CIFAR-10 and CIFAR-100 of a ResNet-101 and two Momentum ResNets-101, "
    "10 runs per model", claims=("momentum/table-4.2",), experiment="momentum.cifar", draw=table_figure,
    criterion=TABLE_CRITERION, data="cifar-10",
    printed=tuple(Printed(f"{_MODEL_NAMES[m]}, {ds.upper()}, mean test accuracy (%)", v, f"{_T42}, row "
                          f"{_MODEL_NAMES[m]}, column {ds.upper()}", measured=f"{ds}.{m}.accuracy",
                          note=f"± {sd} over 10 runs; measured as a fraction")
                  for m, ds, v, sd in (("momentum_v0_zero", "cifar-10", 95.1, 0.13),
                                       ("momentum_v0_zero", "cifar-100", 76.39, 0.18),
                                       ("momentum_v0_f", "cifar-10", 95.18, 0.06),
                                       ("momentum_v0_f", "cifar-100", 76.38, 0.42),
                                       ("resnet", "cifar-10", 95.15, 0.12), ("resnet", "cifar-100", 76.86, 0.25))),
    preset_note="also needs cifar-100; 10 runs x 3 models x 2 datasets x 220 epochs = 13 200 epochs of a ResNet-101 "
                "(42.5 M parameters): about a week on one V100-class GPU, years on this CPU (one epoch, measured: "
                "about 4.3 h single-threaded); the check preset is a (2, 2, 2)-block basic network on 400 images, 2 "
                "epochs, 2 seeds")
register_figure(
    "momentum", "fig-4.12", "Learning curves on CIFAR-10: test error and test loss of a ResNet-101 and two Momentum "
    "ResNets-101 (the caption says 'as a function of depth'; the appendix calls them learning curves, drawn here "
    "against the epoch)", claims=("momentum/fig-4.12",), experiment="momentum.cifar",
    draw=curves_figure, criterion=CURVES_CRITERION, data="cifar-10",
    printed=(Printed("test error and test loss curves", None, "Fig. 4.12", note="curves only, no printed number"),),
    preset_note="the paper preset is Table 4.2's (10 seeds, 220 epochs); the figure averages the seeds")
register_figure(
    "momentum", "fig-4.6", "Robustness of the final CIFAR-10 accuracy of Momentum ResNets-101 to gamma: trained at "
    "gamma_train, evaluated at gamma_test, optionally refitted for 20 epochs", claims=("momentum/fig-4.6",),
    experiment="momentum.gamma", draw=gamma_figure, criterion=GAMMA_CRITERION, data="cifar-10",
    printed=(Printed("largest accuracy drop without refit (fraction)", 0.03, "Sec. 4.5.2, text ('never decreases by "
                     "more than 3%')", measured="drop_no_refit.train=0"),),
    preset_note="the gamma grid is read off no printed number (7 values in [0, 1] here); under Eq. (4.2) with v0 = 0, "
                "gamma = 1 drops every residual function of unchanged shape; 7 x 220 + 2 x 7 x 20 = 1 820 epochs of a "
                "ResNet-101: about a GPU-day")
register_figure(
    "momentum", "fig-4.6/digits", "Fig. 4.6's gamma robustness on scikit-learn's 8x8 digits with a small Momentum "
    "ResNet", claims=("momentum/fig-4.6/digits",), experiment="momentum.gamma_digits", draw=gamma_figure,
    criterion=GAMMA_CRITERION, substitute="scikit-learn's 8x8 digits (1797 images) and a 2-stage basic Momentum "
                                          "ResNet of width 8 for CIFAR-10 and the Momentum ResNet-101",
    printed=(Printed("largest accuracy drop without refit (fraction)", 0.03, "Sec. 4.5.2, text",
                     measured="drop_no_refit.train=0"),),
    preset_note="the paper preset keeps Fig. 4.6's gamma grid and 20-epoch refits on a 3-stage width-16 network, 60 "
                "epochs: about an hour on this CPU (estimated from the check preset)")
register_figure(
    "momentum", "fig-4.6/imagenet", "Top-1 error on ImageNet (single crop) of a ResNet-101, two Momentum ResNets-101 "
    "and a RevNet-101 of the same parameter count", claims=("momentum/fig-4.6/imagenet",),
    experiment="momentum.imagenet", draw=imagenet_figure, criterion=IMAGENET_CRITERION, data="imagenet",
    printed=(Printed("ResNet-101 final top-1 error (%)", 22.0, "caption of Fig. 4.6", measured="imagenet.resnet.error",
                     note="the caption says 'test accuracy is 22%', meaning the error; measured as a fraction"),
             Printed("invertible models' final top-1 error (%)", 23.0, "caption of Fig. 4.6",
                     measured="imagenet.momentum_v0_zero.error", note="measured as a fraction")),
    preset_note="4 models x 100 epochs of a depth-101 network on ImageNet: weeks on one GPU; the loader here holds "
                "the resized images in memory, so the whole of ImageNet needs a streaming loader (not written); the "
                "images are resized to 224 x 224, not randomly cropped")
register_figure(
    "momentum", "fig-4.7", "Memory of one training step against the batch size, ResNet and Momentum ResNet "
    "(CIFAR-10 at depth 1202, ImageNet at depth 152)", claims=("momentum/fig-4.7",), experiment="momentum.memory_batch",
    draw=memory_batch_figure, criterion=MEMORY_BATCH_CRITERION,
    printed=(Printed("memory against batch size", None, "Fig. 4.7, upper row", measured="cifar.slope_ratio",
                     note="curves only; measured: ratio of the memory per sample, Momentum / ResNet"),),
    preset_note="the check preset is CIFAR-10 at depth 110; the paper preset's batches (4 to 32) are this machine's "
                "(the document's are only drawn); memory is the bytes autograd stores for the backward pass "
                "(activations), parameters excluded, where the document's profiler counts the process")
register_figure(
    "momentum", "fig-4.7/accuracy", "Final CIFAR-10 test accuracy of Momentum ResNets-101 against the memory of one "
    "training step (set by gamma)", claims=("momentum/fig-4.7/accuracy",), experiment="momentum.gamma",
    draw=gamma_memory_figure, criterion=GAMMA_MEMORY_CRITERION, data="cifar-10",
    printed=(Printed("accuracy against memory", None, "Fig. 4.7, lower row", note="curve only"),),
    preset_note="the run of Fig. 4.6 (momentum.gamma); memory = stored activations of the memory-free network plus "
                "the exact-reversal buffer, N log2(1/gamma) bits per coordinate (Sec. 4.3.2)")
register_figure(
    "momentum", "fig-4.8", "Fine-tuning on hymenoptera: accuracy against time of a ResNet-152 (batch 2) and a "
    "Momentum ResNet-152 (batch 4)", claims=("momentum/fig-4.8",), experiment="momentum.finetune",
    draw=finetune_figure, criterion=FINETUNE_CRITERION, data="hymenoptera",
    printed=(Printed("batch size of the ResNet-152 within 3 GB", 2, "Sec. 4.5.2, text", measured="config.batch_resnet"),
             Printed("batch size of the Momentum ResNet-152 within 3 GB", 4, "Sec. 4.5.2, text", measured="config.batch_momentum"),
             Printed("speed-up of the Momentum ResNet", 2.0, "Sec. 4.5.2, text ('can be twice as fast')",
                     measured="time_ratio",
                     note="measured: time ratio Momentum / ResNet to the ResNet's best accuracy")),
    preset_note="needs ImageNet-pre-trained ResNet-152 weights in this module's layout (no torchvision here); the "
                "epochs (25) and learning rate (1e-3) of the fine-tuning are not stated; minutes on a GPU, about 35 "
                "hours on this CPU (a ResNet-152 step at batch 2 and 224 x 224: 3.7 s measured)")
register_figure(
    "momentum", "fig-4.9", "Accuracy on CIFAR-10 of ODE nets with first- and second-order blocks against the number of "
    "channels, and without ODE block", claims=("momentum/fig-4.9",), experiment="momentum.ode_channels",
    draw=ode_figure, criterion=ODE_CRITERION, data="cifar-10",
    printed=(Printed("training iterations", 120, "caption of Fig. 4.9",
                     note="App. 4.D says 120 epochs; the paper preset trains 120 epochs", measured="config.iterations"),),
    preset_note="fixed-step RK4 (8 steps per block) instead of the adaptive odeint; eps = 1 (not stated); 6 channel "
                "counts x 3 models x 120 epochs: about 1 GPU-day")
