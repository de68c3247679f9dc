"""Validation helpers shared by the ``resnet-node`` experiment modules."""

from __future__ import annotations


def _require(config, cls, func):
    if not isinstance(config, cls):
        raise TypeError(f"`config` of theory.experiments.resnet_node.{func} must be a {cls.__name__}; "
                        f"got {type(config).__name__}")


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


def backend_fields(where_torch: str, dtype_doc: str = "Floating-point type (float32 only on the torch backend)."):
    """The declared ``backend``, ``device`` and ``dtype`` fields of a config with an array backend
    (:mod:`theory.backends`); the rules between them (a CUDA device or float32 only on the torch backend)
    are :func:`theory.backends.validate_fields`, called in the config's ``check``."""
    from theory.backends import BACKENDS, DTYPES

    from ..config import Choice, Custom, field

    def _device(value):
        if not isinstance(value, str):
            raise TypeError("not a string")
        kind, sep, index = value.partition(":")
        if kind not in ("cpu", "cuda") or (sep and (kind != "cuda" or not index.isdigit())):
            raise ValueError("not a device")

    device = Custom(_device, "'cpu', 'cuda' or 'cuda:N'", type_name="str", parse=str.strip,
                    invalid=[(3, TypeError), ("tpu", ValueError)], boundary=["cpu"])
    return (field(Choice(*BACKENDS), "numpy", f"Array backend: {where_torch}"),
            field(device, "cpu", "Device of the torch backend (``\"cpu\"`` on the NumPy backend)."),
            field(Choice(*DTYPES), "float64", dtype_doc))
