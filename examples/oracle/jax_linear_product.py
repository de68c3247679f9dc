"""Adapter: a JAX function of the layers (N, d, d) as the oracle's linear_product(theta) -> Pi (x64 enabled)."""

import jax
jax.config.update("jax_enable_x64", True)   # float64 mode needs x64; without it JAX computes in float32
import jax.numpy as jnp
import numpy as np


def adapt(fn):
    return lambda theta: np.asarray(fn(jnp.asarray(theta)))
