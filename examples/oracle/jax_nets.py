"""A deep linear ResNet product and a tanh Euler ResNet written in JAX, to show `theory oracle verify` on JAX code.

    theory oracle verify linear_product examples.oracle.jax_nets:product --adapter examples/oracle/jax_linear_product.py
"""

import jax
import jax.numpy as jnp


def product(layers):
    """Pi = (I + W_N/N) ... (I + W_1/N), layers (N, d, d)."""
    N, d, _ = layers.shape

    def step(P, w):
        return (jnp.eye(d) + w / N) @ P, None

    P, _ = jax.lax.scan(step, jnp.eye(d, dtype=layers.dtype), layers)
    return P


def euler_tanh(x, weights):
    """x_{n+1} = x_n + tanh(W_n x_n)/N, returning the whole trajectory."""
    N = weights.shape[0]

    def step(h, w):
        h = h + jnp.tanh(w @ h) / N
        return h, h

    _, traj = jax.lax.scan(step, x, weights)
    return jnp.concatenate([x[None], traj])
