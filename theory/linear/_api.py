"""Public API of the deep linear ResNet (``resnet-node`` Section 3.2; thesis Section 2.3.2).

Layers act as x -> (I + theta_n / N) x for n = 1 .. N, so the network computes Pi x with
Pi = (I + theta_N / N) ... (I + theta_1 / N). ``theta[0]`` is theta_1.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array, check_bool, check_finite_output
from . import _kernels

__all__ = ["data_moments", "gradient", "loss", "partial_products", "product"]


def _theta(theta, func, name="theta"):
    theta = as_float_array(theta, name, func=func, ndim=3)
    N, d, e = theta.shape
    if N < 1 or d < 1 or d != e:
        raise ValueError(f"`{name}` of {func} must have shape (N, d, d) with N, d >= 1; got {theta.shape}.")
    return theta


def _sigma_b(Sigma, B, d, func):
    Sigma = as_float_array(Sigma, "Sigma", func=func, shape=(d, d))
    B = as_float_array(B, "B", func=func, shape=(d, d))
    scale = np.abs(Sigma).max()
    scaled = Sigma / scale if scale > 0 else Sigma  # relative asymmetry, computed without overflow
    asym = np.abs(scaled - scaled.T).max()
    if asym > 1e-12:
        raise ValueError(f"`Sigma` of {func} must be symmetric; got a relative asymmetry of {asym:.3g}.")
    if np.linalg.eigvalsh(Sigma).min() <= 0.0:
        raise ValueError(f"`Sigma` of {func} must be positive definite; smallest eigenvalue "
                         f"{np.linalg.eigvalsh(Sigma).min():.3g}.")
    return Sigma, B


def product(theta):
    r"""End-to-end matrix :math:`\Pi = (I + \theta_N/N) \cdots (I + \theta_1/N)`.

    Parameters
    ----------
    theta : array_like, shape (N, d, d)
        theta[n - 1] is the paper's theta_n.

    Returns
    -------
    ndarray, shape (d, d)

    Notes
    -----
    The thesis' order (layer 1 acts first). The paper prints the reverse order; see ERRATA.md and
    claim ``resnet-node/prop-2/erratum``.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.linear import product
    >>> product(np.full((2, 1, 1), 2.0))       # (1 + 2/2)^2
    array([[4.]])
    """
    theta = _theta(theta, "theory.linear.product")
    N, d, _ = theta.shape
    before, _ = _partial(theta)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        Pi = (np.eye(d) + theta[N - 1] / N) @ before[N - 1]
    return check_finite_output(Pi, "the product", func="theory.linear.product", hint=_HINT)


def _partial(theta):
    N, d, _ = theta.shape
    before, after = np.empty((N, d, d)), np.empty((N, d, d))
    _kernels.prefix_suffix(theta, before, after, np.empty((d, d)))
    return before, after


def partial_products(theta):
    r"""Products of the layers before and after each layer, for all layers in O(N d^3).

    Returns
    -------
    before : ndarray, shape (N, d, d)
        ``before[n - 1]`` = :math:`\Pi_{n:} = (I + \theta_{n-1}/N) \cdots (I + \theta_1/N)`.
    after : ndarray, shape (N, d, d)
        ``after[n - 1]`` = :math:`\Pi_{:n} = (I + \theta_N/N) \cdots (I + \theta_{n+1}/N)`.

    So that Pi = after[n] (I + theta[n] / N) before[n] for every n.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.linear import partial_products, product
    >>> theta = np.random.default_rng(0).standard_normal((5, 2, 2))
    >>> before, after = partial_products(theta)
    >>> bool(np.allclose(after[2] @ (np.eye(2) + theta[2] / 5) @ before[2], product(theta)))
    True
    """
    theta = _theta(theta, "theory.linear.partial_products")
    before, after = _partial(theta)
    check_finite_output(before, "the products", func="theory.linear.partial_products")
    check_finite_output(after, "the products", func="theory.linear.partial_products")
    return before, after


def data_moments(X, Y):
    r"""Reduce data pairs (x_k, y_k) to (Sigma, B) of the loss ||Pi - B||^2_Sigma.

    .. math:: \Sigma = \tfrac1n \sum_k x_k x_k^\top, \qquad B = \Big(\tfrac1n \sum_k y_k x_k^\top\Big)\Sigma^{-1},

    so that :math:`\tfrac1n\sum_k \|\Pi x_k - y_k\|^2 = \|\Pi - B\|_\Sigma^2 - \|B\|_\Sigma^2 + \tfrac1n\sum_k\|y_k\|^2`
    (the two losses differ by a constant, so their gradients are equal).

    Parameters
    ----------
    X, Y : array_like, shape (n, d)
        Inputs and targets; X must have rank d.

    Returns
    -------
    Sigma, B : ndarray, shape (d, d)
    """
    func = "theory.linear.data_moments"
    X = as_float_array(X, "X", func=func, ndim=2, min_size=1)
    Y = as_float_array(Y, "Y", func=func, shape=X.shape)
    n = X.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        Sigma = X.T @ X / n
        C = Y.T @ X / n
    check_finite_output(Sigma, "X^T X / n", func=func, hint="Rescale `X`.")
    check_finite_output(C, "Y^T X / n", func=func, hint="Rescale `X` or `Y`.")
    if np.linalg.matrix_rank(Sigma) < X.shape[1]:
        raise ValueError(f"`X` of {func} must have rank d = {X.shape[1]} (Sigma must be invertible); "
                         f"got rank {np.linalg.matrix_rank(Sigma)}.")
    B = np.linalg.solve(Sigma, C.T).T  # C Sigma^{-1}, Sigma symmetric
    check_finite_output(B, "B", func=func)
    return Sigma, B


def loss(theta, Sigma, B):
    r""":math:`\|\Pi - B\|_\Sigma^2 = \operatorname{Tr}((\Pi - B)\Sigma(\Pi - B)^\top)` (Eq. (5)).

    Examples
    --------
    >>> import numpy as np
    >>> from theory.linear import loss
    >>> loss(np.zeros((3, 2, 2)), np.eye(2), 2 * np.eye(2))
    2.0
    """
    return _gradient(theta, Sigma, B, "theory.linear.loss")[1]


def gradient(theta, Sigma, B, *, return_loss=False):
    r"""Exact gradient of the loss :math:`\|\Pi - B\|_\Sigma^2` with respect to every layer.

    .. math:: \nabla_n = \tfrac{2}{N}\, \Pi_{:n}^\top (\Pi - B)\, \Sigma\, \Pi_{n:}^\top,

    with :math:`\Pi_{:n}` the product of the layers after n and :math:`\Pi_{n:}` of those before,
    computed for all layers at once by prefix and suffix products in O(N d^3).

    Returns
    -------
    grad : ndarray, shape (N, d, d)
    loss : float, only with ``return_loss=True``

    Notes
    -----
    The documents print :math:`N\nabla_n` without the factor 2 (see ERRATA.md,
    ``resnet-node/prop-2/erratum``).
    """
    return_loss = check_bool(return_loss, "return_loss", func="theory.linear.gradient")
    grad, value = _gradient(theta, Sigma, B, "theory.linear.gradient")
    return (grad, value) if return_loss else grad


def _gradient(theta, Sigma, B, func):
    theta = _theta(theta, func)
    N, d, _ = theta.shape
    Sigma, B = _sigma_b(Sigma, B, d, func)
    before, grad = np.empty((N, d, d)), np.empty((N, d, d))
    value = _kernels.gradient(theta, Sigma, B, before, grad, *(np.empty((d, d)) for _ in range(5)))
    check_finite_output(np.array([value]), "the loss", func=func, hint=_HINT)
    check_finite_output(grad, "the gradient", func=func, hint=_HINT)
    return grad, float(value)


_HINT = "Reduce the weights, Sigma or B."
