"""Training the 1/L ResNet (4.10) of chapter 4 of the thesis (Marion) for the experiment of Figure 4.1.

Model: H_0 = A x, H_{k+1} = H_k + W_{k+1} relu(H_k) / L, logits = B H_L, cross-entropy loss, A and B fixed
(Figure 4.1b) or not trained here; W trained with Adam (exact gradients by backpropagation), optionally with the
penalty lambda (sum_k ||W_{k+1} - W_k||_F^2)^(1/2) of Section 4.4.3 (square root of the sum, not squared).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from theory._validation import as_float_array, as_generator, check_int, check_interval

__all__ = ["resnet_logits", "cross_entropy", "loss_and_gradient", "difference_penalty", "TrainingRecord",
           "train_resnet"]


def _forward(X, A, W):
    L = W.shape[0]
    H = np.empty((L + 1, X.shape[0], W.shape[1]))
    H[0] = X @ A.T
    for k in range(L):
        H[k + 1] = H[k] + np.maximum(H[k], 0.0) @ W[k].T / L
    return H


def resnet_logits(X, A, W, B):
    """B H_L for the inputs X (n, p), A (d, p), W (L, d, d), B (c, d)."""
    return _forward(X, A, W)[-1] @ B.T


def cross_entropy(logits, y):
    """Mean cross-entropy of integer labels y under softmax(logits)."""
    z = logits - logits.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1))
    return float(np.mean(lse - z[np.arange(y.size), y]))


def difference_penalty(W):
    """(sum_k ||W_{k+1} - W_k||_F^2)^(1/2) and its gradient in W."""
    D = np.diff(W, axis=0)
    val = float(np.sqrt(np.sum(D * D)))
    g = np.zeros_like(W)
    if val > 0:
        g[1:] += D / val
        g[:-1] -= D / val
    return val, g


def loss_and_gradient(X, y, A, W, B, lam=0.0):
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
        pen, gp = difference_penalty(W)
        loss += lam * pen
        gW += lam * gp
    return loss, gW


@dataclasses.dataclass(frozen=True)
class TrainingRecord:
    """Per epoch: train and test cross-entropy, max_k ||W_{k+1} - W_k||_inf (the x-axis of Figure 4.1a)."""

    train_loss: np.ndarray
    test_loss: np.ndarray
    max_diff: np.ndarray
    W: np.ndarray

    @property
    def gap(self):
        return self.test_loss - self.train_loss


def train_resnet(Xtr, ytr, Xte, yte, A, W0, B, *, epochs=10, batch=128, lr=0.02, lam=0.0, rng=None):
    """Adam (default betas) on W only, mini-batches of ``batch``; records after every epoch."""
    f = "train_resnet"
    Xtr = as_float_array(Xtr, "Xtr", func=f, ndim=2)
    Xte = as_float_array(Xte, "Xte", func=f, ndim=2)
    A = as_float_array(A, "A", func=f, ndim=2)
    B = as_float_array(B, "B", func=f, ndim=2)
    W = as_float_array(W0, "W0", func=f, ndim=3, copy=True)
    ytr = np.asarray(ytr, dtype=np.int64)
    yte = np.asarray(yte, dtype=np.int64)
    epochs = check_int(epochs, "epochs", func=f, minimum=1)
    batch = check_int(batch, "batch", func=f, minimum=1)
    lr = check_interval(lr, "lr", 0.0, np.inf, func=f)
    lam = check_interval(lam, "lam", 0.0, np.inf, func=f, closed="left")
    rng = as_generator(rng, func=f)
    if A.shape[1] != Xtr.shape[1] or W.shape[1] != A.shape[0] or B.shape[1] != A.shape[0]:
        raise ValueError(f"`A`, `W0`, `B` of {f} must have shapes (d, p), (L, d, d), (c, d) with p = Xtr.shape[1].")
    m = np.zeros_like(W)
    v = np.zeros_like(W)
    b1, b2, t = 0.9, 0.999, 0
    tr, te, md = [], [], []
    for _ in range(epochs):
        order = rng.permutation(ytr.size)
        for s in range(0, ytr.size, batch):
            idx = order[s:s + batch]
            _, g = loss_and_gradient(Xtr[idx], ytr[idx], A, W, B, lam)
            t += 1
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            W -= lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + 1e-8)
        tr.append(cross_entropy(resnet_logits(Xtr, A, W, B), ytr))
        te.append(cross_entropy(resnet_logits(Xte, A, W, B), yte))
        md.append(float(np.abs(np.diff(W, axis=0)).max()))
    return TrainingRecord(np.array(tr), np.array(te), np.array(md), W)
