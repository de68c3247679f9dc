"""Models and empirical quantities of chapter 4 of the thesis (Marion).

* :func:`parameterized_ode`: (4.5), dH = sum_i theta_i(t) f_i(H) dt, F_theta(x) = H_1, by the classical
  Runge-Kutta scheme on a uniform grid of [0, 1], theta given at the grid points and its midpoints.
* :func:`resnet_forward`: (4.10), H_{k+1} = H_k + W_{k+1} sigma(H_k) / L, F_W(x) = H_L.
* Norms: ||theta||_{1,inf} (4.6) on a grid, ||W||_{1,1,inf} (4.11), K_W = L max_k ||W_{k+1} - W_k||_inf (4.12).
* :func:`spectral_complexity`: (prod_k ||I + W_k / L||) (sum_k ||W_k^T||_{2,1}^(2/3) / (L^(2/3)
  ||I + W_k / L||^(2/3)))^(3/2), the quantity of the proof of Cor. 4.9 (reference matrices I).
* :func:`smooth_weights` / :func:`iid_weights`: the initialisations of Section 4.4.1, W_{k,ij} = f_ij(k/L)/sqrt(d)
  with f_ij i.i.d. Gaussian processes of RBF kernel, or i.i.d. N(0, 1/d).
"""

from __future__ import annotations

import functools

import numpy as np

from theory._validation import as_float_array, as_generator, check_choice, check_int, check_interval

__all__ = ["ACTIVATIONS", "parameterized_ode", "neural_ode", "resnet_forward", "norm_1_inf", "norm_11inf", "weight_lipschitz",
           "spectral_complexity", "smooth_weights", "iid_weights"]

ACTIVATIONS = {"tanh": np.tanh, "relu": lambda z: np.maximum(z, 0.0), "identity": lambda z: z}


def parameterized_ode(x, theta, fields, steps=None):
    """F_theta(x) of (4.5) for a batch x (shape (b, d)).

    ``theta``: shape (2 S + 1, m): theta at t = 0, 1/(2S), ..., 1 (grid and midpoints of S RK4 steps);
    ``fields``: callable h (b, d) -> (m, b, d), the maps f_1..f_m.
    """
    f = "parameterized_ode"
    x = as_float_array(x, "x", func=f, ndim=2)
    theta = as_float_array(theta, "theta", func=f, ndim=2)
    if theta.shape[0] < 3 or theta.shape[0] % 2 == 0:
        raise ValueError(f"`theta` of {f} must have an odd number >= 3 of rows (grid and midpoints); got {theta.shape}.")
    if not callable(fields):
        raise TypeError(f"`fields` of {f} must be callable h -> (m, b, d); got {type(fields).__name__}.")
    S = (theta.shape[0] - 1) // 2
    dt = 1.0 / S

    def rhs(h, th):
        return np.einsum("i,ibd->bd", th, fields(h))

    h = x.copy()
    for s in range(S):
        t0, tm, t1 = theta[2 * s], theta[2 * s + 1], theta[2 * s + 2]
        k1 = rhs(h, t0)
        k2 = rhs(h + 0.5 * dt * k1, tm)
        k3 = rhs(h + 0.5 * dt * k2, tm)
        k4 = rhs(h + dt * k3, t1)
        h = h + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return h


def neural_ode(x, W, activation="tanh", steps=50):
    """F_W(x) = H_1 of the time-independent neural ODE (4.8), dH = W sigma(H) dt, H_0 = x (RK4, ``steps`` steps)."""
    f = "neural_ode"
    x = as_float_array(x, "x", func=f, ndim=2)
    W = as_float_array(W, "W", func=f, ndim=2)
    if W.shape != (x.shape[1], x.shape[1]):
        raise ValueError(f"`W` of {f} must have shape (d, d) with d = x.shape[1] = {x.shape[1]}; got {W.shape}.")
    act = ACTIVATIONS[check_choice(activation, "activation", ACTIVATIONS, func=f)]
    steps = check_int(steps, "steps", func=f, minimum=1)
    dt = 1.0 / steps
    h = x.copy()
    for _ in range(steps):
        k1 = act(h) @ W.T
        k2 = act(h + 0.5 * dt * k1) @ W.T
        k3 = act(h + 0.5 * dt * k2) @ W.T
        k4 = act(h + dt * k3) @ W.T
        h = h + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return h


def resnet_forward(x, W, activation="tanh"):
    """F_W(x) of (4.10) for x of shape (b, d) and W of shape (L, d, d)."""
    f = "resnet_forward"
    x = as_float_array(x, "x", func=f, ndim=2)
    W = as_float_array(W, "W", func=f, ndim=3)
    if W.shape[1] != W.shape[2] or W.shape[1] != x.shape[1]:
        raise ValueError(f"`W` of {f} must have shape (L, d, d) with d = x.shape[1] = {x.shape[1]}; got {W.shape}.")
    act = ACTIVATIONS[check_choice(activation, "activation", ACTIVATIONS, func=f)]
    L = W.shape[0]
    h = x.copy()
    for k in range(L):
        h = h + act(h) @ W[k].T / L
    return h


def norm_1_inf(theta):
    """||theta||_{1,inf} = ``max_t sum_i |theta_i(t)|`` (4.6) over the rows of ``theta`` (shape (T, m))."""
    theta = as_float_array(theta, "theta", func="norm_1_inf", ndim=2)
    return float(np.abs(theta).sum(axis=1).max())


def norm_11inf(W):
    """||W||_{1,1,inf} = ``max_k sum_ij |W_kij|`` (4.11)."""
    W = as_float_array(W, "W", func="norm_11inf", ndim=3)
    return float(np.abs(W).sum(axis=(1, 2)).max())


def weight_lipschitz(W):
    """K_W = L max_k ||W_{k+1} - W_k||_inf, the smallest K_W with W in (4.12) (0 for L = 1)."""
    W = as_float_array(W, "W", func="weight_lipschitz", ndim=3)
    if W.shape[0] < 2:
        return 0.0
    return float(W.shape[0] * np.abs(np.diff(W, axis=0)).max())


def spectral_complexity(W):
    """The spectral complexity of (4.10) with reference matrices I (proof of Cor. 4.9)."""
    W = as_float_array(W, "W", func="spectral_complexity", ndim=3)
    L, d, _ = W.shape
    Mk = np.eye(d)[None] + W / L
    s = np.linalg.norm(Mk, ord=2, axis=(1, 2))
    two_one = np.linalg.norm(np.transpose(W, (0, 2, 1)), axis=1).sum(axis=1)  # sum of column norms of W_k^T
    return float(np.prod(s) * np.sum(two_one ** (2 / 3) / (L ** (2 / 3) * s ** (2 / 3))) ** 1.5)


def smooth_weights(L, d, bandwidth=0.1, rng=None):
    """W_{k,ij} = f_ij(k / L) / sqrt(d), f_ij i.i.d. centred Gaussian processes with kernel
    exp(-(s - t)^2 / (2 bandwidth^2)), k = 1..L (Section 4.4.1)."""
    f = "smooth_weights"
    L = check_int(L, "L", func=f, minimum=1)
    d = check_int(d, "d", func=f, minimum=1)
    bw = check_interval(bandwidth, "bandwidth", 0.0, np.inf, func=f)
    rng = as_generator(rng, func=f)
    root = _rbf_root(L, bw)
    return (root @ rng.standard_normal((L, d * d))).reshape(L, d, d) / np.sqrt(d)


@functools.lru_cache(maxsize=16)
def _rbf_root(L, bw):
    """A square root R R^T = C of the RBF covariance at t = k/L (eigendecomposition, clipped), read-only."""
    t = np.arange(1, L + 1) / L
    C = np.exp(-0.5 * ((t[:, None] - t[None, :]) / bw) ** 2)
    lam, Q = np.linalg.eigh(C)
    root = Q * np.sqrt(np.clip(lam, 0, None))
    root.flags.writeable = False
    return root


def iid_weights(L, d, rng=None):
    """W_{k,ij} i.i.d. N(0, 1/d) (the standard initialisation of Section 4.4.1)."""
    L = check_int(L, "L", func="iid_weights", minimum=1)
    d = check_int(d, "d", func="iid_weights", minimum=1)
    rng = as_generator(rng, func="iid_weights")
    return rng.standard_normal((L, d, d)) / np.sqrt(d)
