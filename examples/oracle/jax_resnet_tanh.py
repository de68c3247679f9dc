"""Adapter: a JAX tanh Euler ResNet fn(x, weights) with its own step 1/N as the oracle's resnet_forward; other
residuals and Heun are refused (select the cases with --case euler_tanh_N10 ...).

The oracle passes the step h in `step` (1/N in the document's cases, 1 in euler_*_step_1). A function with its
own step h0 = 1/N maps onto any h by the step convention of `theory oracle show resnet_forward`: with c = h/h0,
x + h tanh(theta x) = c (z + h0 tanh((c theta) z)) for x = c z, so the trajectory is c * fn(x0 / c, c * theta)."""

import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np


def adapt(fn):
    def call(x0, theta, residual, scheme, step):
        if residual != "tanh" or scheme != "euler":
            raise NotImplementedError(f"only residual='tanh', scheme='euler' (got {residual!r}, {scheme!r})")
        c = step * theta.shape[0]  # h / h0 with h0 = 1/N, the function's own step
        if c == 1.0:
            return np.asarray(fn(jnp.asarray(x0), jnp.asarray(theta)))
        return c * np.asarray(fn(jnp.asarray(x0 / c), jnp.asarray(c * theta)))
    return call
