"""Training the 1/L ResNet (4.10) of chapter 4 of the thesis (Marion) for the experiment of Figure 4.1.

Model: H_0 = A x, H_{k+1} = H_k + W_{k+1} relu(H_k) / L, logits = B H_L, cross-entropy loss, A and B fixed
(Figure 4.1b) or not trained here; W trained with Adam (exact gradients by backpropagation), optionally with the
penalty lambda (sum_k ||W_{k+1} - W_k||_F^2)^(1/2) of Section 4.4.3 (square root of the sum, not squared).

The public functions validate their arguments (float64 arrays of consistent shapes, finite; integer class labels
in 0..c-1; sizes against the memory and work limits of :mod:`theory._validation`, before any loop) and call the
private kernels :func:`_forward`, :func:`_loss_and_gradient` and :func:`_penalty`, which do no validation.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from theory._validation import (as_float_array, as_generator, check_finite_output, check_int, check_interval,
                                check_memory, check_work)

__all__ = ["loss_and_gradient", "difference_penalty", "TrainingRecord", "train_resnet"]

_PKG = "theory.generalization."

#: interpreter work per layer, in operations counted at 1e9 per second: a forward layer is 3 NumPy calls, a
#: forward and backward layer 9; measured about 85-105 us per layer and epoch of :func:`train_resnet` with one
#: mini-batch (a training step and two evaluations) on one core, rounded up
_FORWARD_LAYER_OPS = 2e4
_STEP_LAYER_OPS = 6e4

_OVERFLOW = "Reduce the magnitude of `X`, `A`, `W` or `B`."


# ------------------------------------------------------------------------------------------ kernels


def _forward(X, A, W):
    L = W.shape[0]
    H = np.empty((L + 1, X.shape[0], W.shape[1]))
    H[0] = X @ A.T
    for k in range(L):
        H[k + 1] = H[k] + np.maximum(H[k], 0.0) @ W[k].T / L
    return H


def _logits(X, A, W, B):
    """B H_L for the inputs X (n, p), A (d, p), W (L, d, d), B (c, d)."""
    return _forward(X, A, W)[-1] @ B.T


def _cross_entropy(logits, y):
    """Mean cross-entropy of integer labels y under softmax(logits)."""
    z = logits - logits.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1))
    return float(np.mean(lse - z[np.arange(y.size), y]))


def _penalty(W):
    """(sum_k ||W_{k+1} - W_k||_F^2)^(1/2) and its gradient in W."""
    D = np.diff(W, axis=0)
    val = float(np.sqrt(np.sum(D * D)))
    g = np.zeros_like(W)
    if val > 0:
        g[1:] += D / val
        g[:-1] -= D / val
    return val, g


def _loss_and_gradient(X, y, A, W, B, lam):
    """(cross-entropy + lam * penalty, gradient in W) by backpropagation through (4.10)."""
    L = W.shape[0]
    H = _forward(X, A, W)
    logits = H[-1] @ B.T
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    loss = float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(y.size), y]))
    p[np.arange(y.size), y] -= 1.0
    G = p @ B / y.size
    gW = np.empty_like(W)
    for k in range(L - 1, -1, -1):
        r = np.maximum(H[k], 0.0)
        gW[k] = G.T @ r / L
        G = G + (G @ W[k] / L) * (H[k] > 0)
    if lam > 0:
        pen, gp = _penalty(W)
        loss += lam * pen
        gW += lam * gp
    return loss, gW


# ------------------------------------------------------------------------------------------ validation


def _weights(W, name, func, copy=False):
    W = as_float_array(W, name, func=func, ndim=3, min_size=1, copy=copy)
    if W.shape[1] != W.shape[2]:
        raise ValueError(f"`{name}` of {func} must have shape (L, d, d) (square layers); got {W.shape}.")
    return W


def _maps(A, B, d, w_name, func):
    """A (d, p) and B (c, d), with d from the weights; returns (A, B)."""
    A = as_float_array(A, "A", func=func, ndim=2, min_size=1)
    B = as_float_array(B, "B", func=func, ndim=2, min_size=1)
    if A.shape[0] != d:
        raise ValueError(f"`A` of {func} must have shape (d, p) with d = {w_name}.shape[1] = {d}; got {A.shape}.")
    if B.shape[1] != d:
        raise ValueError(f"`B` of {func} must have shape (c, d) with d = {w_name}.shape[1] = {d}; got {B.shape}.")
    return A, B


def _inputs(X, name, p, func):
    X = as_float_array(X, name, func=func, ndim=2, min_size=1)
    if X.shape[1] != p:
        raise ValueError(f"`{name}` of {func} must have shape (n, p) with p = A.shape[1] = {p}; got {X.shape}.")
    return X


def _labels(y, name, n, c, x_name, func):
    """Integer class labels of shape (n,), each in 0..c-1 (bool, float and string labels refused)."""
    try:
        arr = np.asarray(y)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"`{name}` of {func} must be an array of integer class labels; got {type(y).__name__} "
                        f"({exc}).") from None
    if arr.dtype.kind not in "iu":
        raise TypeError(f"`{name}` of {func} must hold integer class labels; got dtype {arr.dtype}.")
    if arr.shape != (n,):
        raise ValueError(f"`{name}` of {func} must have shape ({n},), one label per row of `{x_name}`; got {arr.shape}.")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= c:
        raise ValueError(f"`{name}` of {func} must hold labels in 0..{c - 1} (c = B.shape[0] = {c} classes); got "
                         f"labels from {lo} to {hi}.")
    return np.asarray(arr, dtype=np.int64)


def _step_ops(n, p, d, c, L):
    """Operations of one loss-and-gradient evaluation on n samples (interpreter work included)."""
    return L * (_STEP_LAYER_OPS + 8.0 * n * d * d) + 2.0 * n * d * (p + 2 * c)


def _forward_ops(n, p, d, c, L):
    return L * (_FORWARD_LAYER_OPS + 2.0 * n * d * d) + 2.0 * n * d * (p + c)


# ------------------------------------------------------------------------------------------ public API


def difference_penalty(W):
    r"""The weight-difference penalty of Section 4.4.3 and its gradient:
    :math:`P(W) = (\sum_{k=1}^{L-1} \|W_{k+1} - W_k\|_F^2)^{1/2}` (the square root of the sum, not squared),
    :math:`\partial P / \partial W_k = ((W_k - W_{k-1}) - (W_{k+1} - W_k)) / P` (terms with W_0, W_{L+1}
    omitted), and the gradient 0 where P = 0.

    Parameters
    ----------
    W : array_like, shape (L, d, d)
        Layer weights, L >= 1, d >= 1, finite.

    Returns
    -------
    value : float
        P(W).
    gradient : ndarray, shape (L, d, d)
        dP/dW, float64.

    Raises
    ------
    TypeError
        ``W`` not a real array.
    ValueError
        ``W`` not of shape (L, d, d), empty, or with NaN or inf.
    NonFiniteError
        The sum of squares overflows float64.
    """
    f = _PKG + "difference_penalty"
    W = _weights(W, "W", f)
    with np.errstate(over="ignore", invalid="ignore"):
        val, g = _penalty(W)
    check_finite_output(np.float64(val), "the penalty", func=f, hint="Reduce the magnitude of `W`.")
    return val, g


def loss_and_gradient(X, y, A, W, B, lam=0.0, *, max_work=None):
    r"""Mean cross-entropy of the ResNet (4.10) with fixed input and output maps, plus the difference penalty,
    and its exact gradient in W by backpropagation.

    :math:`H_0 = A x`, :math:`H_{k+1} = H_k + \frac1L W_{k+1} \mathrm{relu}(H_k)`, logits :math:`B H_L`;
    value :math:`\frac1n \sum_i [\log \sum_j e^{(B H_L)_{ij}} - (B H_L)_{i, y_i}] + \lambda P(W)` with P of
    :func:`difference_penalty`.

    Parameters
    ----------
    X : array_like, shape (n, p)
        Inputs, n >= 1, p >= 1, finite.
    y : array_like of int, shape (n,)
        Class labels in 0..c-1 (integer dtype; bool, float and string labels are refused).
    A : array_like, shape (d, p)
        Input map, finite.
    W : array_like, shape (L, d, d)
        Layer weights, L >= 1, finite.
    B : array_like, shape (c, d)
        Output map (c >= 1 classes), finite.
    lam : float
        Penalty weight lambda >= 0.
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``) for the cost L (6e4 + 8 n d^2) + 2 n d (p + 2c).

    Returns
    -------
    loss : float
        The penalised mean cross-entropy.
    gradient : ndarray, shape (L, d, d)
        Its gradient in W, float64.

    Raises
    ------
    TypeError
        An array that is not real, labels that are not integers, ``lam`` not a real number.
    ValueError
        Inconsistent shapes, NaN or inf, labels outside 0..c-1, ``lam`` < 0, sizes above the memory limit or
        the work budget.
    NonFiniteError
        The logits or the gradient overflow float64.
    """
    f = _PKG + "loss_and_gradient"
    W = _weights(W, "W", f)
    L, d, _ = W.shape
    A, B = _maps(A, B, d, "W", f)
    X = _inputs(X, "X", A.shape[1], f)
    n, p = X.shape
    c = B.shape[0]
    y = _labels(y, "y", n, c, "X", f)
    lam = check_interval(lam, "lam", 0.0, np.inf, func=f, closed="left")
    check_memory(8 * (L + 1) * n * d, "X", X.shape, func=f, hint=f"The hidden states have shape ({L + 1}, {n}, {d}).")
    check_work(_step_ops(n, p, d, c, L), "X", X.shape, func=f, max_work=max_work,
               hint=f"Depth L = {L}, width d = {d}, n = {n} samples.")
    with np.errstate(over="ignore", invalid="ignore"):
        loss, g = _loss_and_gradient(X, y, A, W, B, lam)
    check_finite_output(np.float64(loss), "the loss", func=f, hint=_OVERFLOW)
    check_finite_output(g, "the gradient", func=f, hint=_OVERFLOW)
    return loss, g


@dataclasses.dataclass(frozen=True)
class TrainingRecord:
    """Result of :func:`train_resnet`: per epoch, the train and test cross-entropy and
    max_k ||W_{k+1} - W_k||_inf (the x-axis of Figure 4.1a); the final weights.

    Attributes
    ----------
    train_loss, test_loss : ndarray, shape (epochs,)
        Mean cross-entropy (without the penalty) on the training and test sets after each epoch.
    max_diff : ndarray, shape (epochs,)
        max_k ||W_{k+1} - W_k||_inf after each epoch (0 for L = 1).
    W : ndarray, shape (L, d, d)
        The trained weights.
    """

    train_loss: np.ndarray
    test_loss: np.ndarray
    max_diff: np.ndarray
    W: np.ndarray

    @property
    def gap(self):
        """test_loss - train_loss, per epoch: the generalization gap."""
        return self.test_loss - self.train_loss


def train_resnet(Xtr, ytr, Xte, yte, A, W0, B, *, epochs=10, batch=128, lr=0.02, lam=0.0, rng=None,
                 max_work=None):
    r"""Train the weights W of the ResNet (4.10) (A and B fixed) with Adam on the penalised cross-entropy of
    :func:`loss_and_gradient`, for Figure 4.1; records after every epoch.

    Each epoch visits the training set in a random order (``rng.permutation``) by mini-batches of ``batch``
    samples; Adam with betas (0.9, 0.999), epsilon 1e-8 and bias correction:
    :math:`m \leftarrow \beta_1 m + (1-\beta_1) g`, :math:`v \leftarrow \beta_2 v + (1-\beta_2) g^2`,
    :math:`W \leftarrow W - \mathrm{lr}\, \hat m / (\sqrt{\hat v} + 10^{-8})`.

    Parameters
    ----------
    Xtr : array_like, shape (n_train, p)
        Training inputs, finite.
    ytr : array_like of int, shape (n_train,)
        Training labels in 0..c-1.
    Xte : array_like, shape (n_test, p)
        Test inputs, finite.
    yte : array_like of int, shape (n_test,)
        Test labels in 0..c-1.
    A : array_like, shape (d, p)
        Input map, finite.
    W0 : array_like, shape (L, d, d)
        Initial weights, finite (not modified).
    B : array_like, shape (c, d)
        Output map, finite.
    epochs : int
        Number of epochs, >= 1.
    batch : int
        Mini-batch size, >= 1.
    lr : float
        Adam's learning rate, > 0.
    lam : float
        Penalty weight lambda >= 0.
    rng : numpy.random.Generator or int or None
        Source of the mini-batch orders (``theory._validation.as_generator``).
    max_work : float, optional
        Work budget (default ``theory._validation.MAX_WORK``) for the whole training, estimated up front
        from epochs, the number of mini-batches and the sizes.

    Returns
    -------
    TrainingRecord
        Per-epoch losses and weight differences, and the trained weights.

    Raises
    ------
    TypeError
        An array that is not real, labels that are not integers, a size that is not an integer, a constant
        that is not a real number, ``rng`` of a wrong kind.
    ValueError
        Inconsistent shapes, NaN or inf, labels outside 0..c-1, a size or constant out of range, a training
        above the memory limit or the work budget (``epochs`` is named).
    NonFiniteError
        The training diverged to NaN or inf (reduce ``lr``).
    """
    f = _PKG + "train_resnet"
    W = _weights(W0, "W0", f, copy=True)
    L, d, _ = W.shape
    A, B = _maps(A, B, d, "W0", f)
    p, c = A.shape[1], B.shape[0]
    Xtr = _inputs(Xtr, "Xtr", p, f)
    Xte = _inputs(Xte, "Xte", p, f)
    ytr = _labels(ytr, "ytr", Xtr.shape[0], c, "Xtr", f)
    yte = _labels(yte, "yte", Xte.shape[0], c, "Xte", f)
    epochs = check_int(epochs, "epochs", func=f, minimum=1)
    batch = check_int(batch, "batch", func=f, minimum=1)
    lr = check_interval(lr, "lr", 0.0, np.inf, func=f)
    lam = check_interval(lam, "lam", 0.0, np.inf, func=f, closed="left")
    rng = as_generator(rng, func=f)
    ntr, nte = ytr.size, yte.size
    bs = min(batch, ntr)
    n_steps = math.ceil(ntr / batch)
    check_memory(8 * (L + 1) * max(ntr, nte) * d, "Xtr" if ntr >= nte else "Xte", max(ntr, nte), func=f,
                 hint=f"The hidden states have shape ({L + 1}, n, {d}).")
    per_epoch = (n_steps * _step_ops(bs, p, d, c, L) + 8.0 * L * d * d
                 + _forward_ops(ntr, p, d, c, L) + _forward_ops(nte, p, d, c, L))
    check_work(epochs * per_epoch, "epochs", epochs, func=f, max_work=max_work,
               hint=f"Each epoch takes {n_steps} Adam step(s) over depth L = {L}, width d = {d}, and evaluates "
                    f"{ntr} + {nte} samples.")
    m = np.zeros_like(W)
    v = np.zeros_like(W)
    b1, b2, t = 0.9, 0.999, 0
    tr, te, md = [], [], []
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(epochs):
            order = rng.permutation(ntr)
            for s in range(0, ntr, batch):
                idx = order[s:s + batch]
                _, g = _loss_and_gradient(Xtr[idx], ytr[idx], A, W, B, lam)
                t += 1
                m = b1 * m + (1 - b1) * g
                v = b2 * v + (1 - b2) * g * g
                W -= lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + 1e-8)
            tr.append(_cross_entropy(_logits(Xtr, A, W, B), ytr))
            te.append(_cross_entropy(_logits(Xte, A, W, B), yte))
            md.append(float(np.abs(np.diff(W, axis=0)).max()) if L > 1 else 0.0)
            if not (math.isfinite(tr[-1]) and math.isfinite(te[-1]) and math.isfinite(md[-1])):
                check_finite_output(W, "the weights", func=f, hint="The training diverged: reduce `lr`.")
                check_finite_output(np.array([tr[-1], te[-1], md[-1]]), "the losses or weight differences",
                                    func=f, hint="Reduce `lr`, or the magnitude of the inputs and maps.")
    return TrainingRecord(np.array(tr), np.array(te), np.array(md), W)
