"""Adapter: a JAX tanh Euler ResNet fn(x, weights) as the oracle's resnet_forward; other residuals and Heun are refused
(select the cases with --case euler_tanh_N10 ...)."""

import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np


def adapt(fn):
    def call(x0, theta, residual, scheme):
        if residual != "tanh" or scheme != "euler":
            raise NotImplementedError(f"only residual='tanh', scheme='euler' (got {residual!r}, {scheme!r})")
        return np.asarray(fn(jnp.asarray(x0), jnp.asarray(theta)))
    return call
