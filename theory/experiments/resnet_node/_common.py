"""Validation helpers shared by the ``resnet-node`` experiment modules."""

from __future__ import annotations

import math

import numpy as np


def _require(config, cls, func):
    if not isinstance(config, cls):
        raise TypeError(f"`config` of theory.experiments.resnet_node.{func} must be a {cls.__name__}; "
                        f"got {type(config).__name__}")


def _check_int(value, name, where, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"`{name}` of {where} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _check_float(value, name, where, low, high, *, closed_low=True, closed_high=True):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"`{name}` of {where} must be a number; got {value!r}")
    value = float(value)
    ok = math.isfinite(value) and (value >= low if closed_low else value > low) and (
        value <= high if closed_high else value < high)
    if not ok:
        brackets = ("[" if closed_low else "(") + f"{low:g}, {high:g}" + ("]" if closed_high else ")")
        raise ValueError(f"`{name}` of {where} must lie in {brackets}; got {value!r}")
    return value


def _check_ints(values, name, where, minimum, *, increasing=False, min_len=1):
    if not isinstance(values, tuple) or len(values) < min_len:
        raise ValueError(f"`{name}` of {where} must be a tuple of at least {min_len} integers; got {values!r}")
    for v in values:
        _check_int(v, name, where, minimum)
    if increasing and any(b <= a for a, b in zip(values, values[1:])):
        raise ValueError(f"`{name}` of {where} must be strictly increasing; got {values!r}")



def _check_floats(values, name, where, low, high, *, min_len=1):
    if not isinstance(values, tuple) or len(values) < min_len:
        raise ValueError(f"`{name}` of {where} must be a tuple of at least {min_len} numbers; got {values!r}")
    for v in values:
        _check_float(v, name, where, low, high)


def _check_choice(value, name, where, choices):
    if value not in choices:
        raise ValueError(f"`{name}` of {where} must be one of {list(choices)}; got {value!r}")


def require_float64(backend, where):
    """Refuse float32 for an experiment that measures adjoint errors down to 1e-7 relative."""
    if backend.dtype != "float64":
        raise ValueError(f"`dtype` of {where} must be 'float64': the adjoint errors it measures reach 1e-7 "
                         f"relative, the size of float32's rounding of the gradients; got {backend.dtype!r}")


def torch_gradient_pair(backend, x0, theta, y, scheme, d, m):
    """Exact and adjoint gradients in theta of 1/2 ||x_N - y||^2 (one network, NumPy arrays in and
    out) on the torch backend (:func:`theory.backends.resnet_node.gradient`)."""
    import torch

    from theory.backends import resnet_node as tb

    dev, dt = backend.torch_device, backend.torch_dtype
    x = torch.as_tensor(x0, dtype=dt, device=dev).unsqueeze(0)
    th = torch.as_tensor(theta, dtype=dt, device=dev).unsqueeze(0)
    with torch.no_grad():
        xN = tb.forward_last(x, th, scheme, d, m)
    g = xN - torch.as_tensor(y, dtype=dt, device=dev).unsqueeze(0)
    exact, _ = tb.gradient(x, th, g, scheme, "backprop", d, m)
    approx, _ = tb.gradient(x, th, g, scheme, "adjoint", d, m, xN=xN)
    return tb.to_numpy(exact[0]), tb.to_numpy(approx[0])
