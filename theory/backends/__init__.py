r"""Array backends of the scale experiments: NumPy/Numba (default) or PyTorch on a CPU or a CUDA device.

Only the measure functions of the scale experiments use this layer (``scaling.fig1``, ``fig2``,
``fig2_explicit``, ``fig3``, ``fig45``, ``fig7``, ``fig7_cell``, ``fig7_grid``, ``fig8``, ``fig9``;
``implicit_reg.fig1``, ``fig2``, ``table1_digits``; ``resnet_node.fig3c``, ``fig3c_digits``, ``fig4``:
``theory run --list`` prints them); the kernels of the package and the claim checks stay NumPy/Numba
in float64. An experiment that supports a backend has the
config fields ``backend``, ``device``, ``dtype`` (and ``draws_on`` where the random draws can be
made on the device), validated by :func:`resolve`:

``backend``
    ``"numpy"`` (the package's own kernels; ``device`` must be ``"cpu"`` and ``dtype``
    ``"float64"``) or ``"torch"`` (PyTorch, installed by the ``gpu`` extra).
``device``
    ``"cpu"``, ``"cuda"`` or ``"cuda:N"``. A CUDA device where PyTorch sees none is refused.
``dtype``
    ``"float64"`` (default) or ``"float32"``. float16 and bfloat16 are refused: the measured
    figures need at least float32.

Agreement. In float64 the PyTorch backend computes the same recursions as the NumPy kernels on the
same draws (``draws_on="host"``: drawn by the seeded NumPy Generator of the config, then moved to the
device), in another order of summation: the results agree to 1e-10 (absolute, on log10 ratios of
order 1; ``tests/test_backends.py`` measures it). In float32 the unit round-off is 6e-8 instead of
1.1e-16; over L = 1000 layers the rounding of the state accumulates, and on the identity side the
hidden ratio ``r = ||h_L - h_0||/||h_0||`` is a difference of nearly equal vectors (likewise for the
gradients), so a small ratio loses digits in proportion to 1/r. Measured against the NumPy backend
on the same draws at L = 1000 (d = 10, 20, 40; beta from 0.2 to 1.3; H = 0.1, 0.5, 0.9): at most
8.9e-6 on log10 ratios >= 0 and at most 5.3e-7/r below (1.5e-4 at r = 0.0036); at L <= 60, 5e-7
(float64 on the same grid: at most 1.9e-13).
The stated tolerance is :func:`float32_tolerance`: :data:`FLOAT32_ATOL` = 2e-5 times max(1, 1/r),
absolute on log10 r, up to L = 1000 (tested there). That is far below the scatter over weight draws
of Figure 7's cells (0.01 to 0.1), so float32 maps the phase diagram faithfully; use float64 for
anything compared with a statement to more digits, and re-measure before relying on float32 at
larger L. The log norms of the renormalised states are accumulated in float64 in both modes (a
float32 sum over 1000 layers alone would cost 1e-4 on the explosion side).

With ``draws_on="device"`` the random draws are made by a seeded ``torch.Generator`` on the device
(no transfer of the weights, which dominates at the papers' sizes): the results are reproducible
for a seed on one kind of device, and equal in law, not draw for draw, to the NumPy backend's.
"""

from __future__ import annotations

import dataclasses
import importlib.util

__all__ = ["BACKENDS", "DTYPES", "DRAWS_ON", "FLOAT64_ATOL", "FLOAT32_ATOL", "Backend", "float32_tolerance", "resolve",
           "torch_available", "validate_fields"]

#: backend names accepted by :func:`resolve`
BACKENDS = ("numpy", "torch")
#: floating-point types accepted by :func:`resolve` (half precisions are refused)
DTYPES = ("float64", "float32")
#: where the random draws of an experiment are made: by NumPy on the host, or by torch on the device
DRAWS_ON = ("host", "device")
#: agreement of the torch backend with the NumPy one in float64, absolute, on log10 ratios (tested)
FLOAT64_ATOL = 1e-10
#: stated agreement in float32, absolute, on log10 ratios >= 0, up to L = 1000 (measured 8.9e-6; see
#: float32_tolerance)
FLOAT32_ATOL = 2e-5


def float32_tolerance(log10_ratio):
    """Stated float32 tolerance on a log10 ratio v (array or number): FLOAT32_ATOL * max(1, 10**-v);
    the factor 1/r is the cancellation in ||h_L - h_0|| (or ||p_0 - p_L||) when the ratio r is small."""
    import numpy as np

    v = np.asarray(log10_ratio, dtype=float)
    return FLOAT32_ATOL * np.maximum(1.0, 10.0 ** np.minimum(-v, 300.0))


def torch_available() -> bool:
    """Whether PyTorch can be imported (without importing it)."""
    return importlib.util.find_spec("torch") is not None


@dataclasses.dataclass(frozen=True)
class Backend:
    """A resolved backend: ``name`` in :data:`BACKENDS`, ``device`` (e.g. ``"cpu"``, ``"cuda:0"``),
    ``dtype`` in :data:`DTYPES`. ``torch_device`` and ``torch_dtype`` give the PyTorch objects."""

    name: str
    device: str = "cpu"
    dtype: str = "float64"

    @property
    def is_torch(self) -> bool:
        return self.name == "torch"

    @property
    def torch_device(self):
        import torch

        return torch.device(self.device)

    @property
    def torch_dtype(self):
        import torch

        return getattr(torch, self.dtype)

    def synchronize(self) -> None:
        """Wait for the device's queued work (a no-op on a CPU), for timings."""
        if self.is_torch and self.device.startswith("cuda"):
            import torch

            torch.cuda.synchronize(self.torch_device)


def _fail(where, name, expected, got):
    raise ValueError(f"`{name}` of {where} must be {expected}; got {got!r}")


def resolve(backend="numpy", device="cpu", dtype="float64", *, where="theory.backends.resolve") -> Backend:
    """Validate a (backend, device, dtype) triple and return the :class:`Backend`.

    Raises
    ------
    TypeError
        A non-string argument.
    ValueError
        An unknown backend; a device other than ``"cpu"`` for the NumPy backend; a device that is
        neither ``"cpu"`` nor ``"cuda"``/``"cuda:N"``; a CUDA device where PyTorch sees none (or
        fewer than N + 1); float16, bfloat16 or any other dtype; float32 with the NumPy backend
        (its kernels are float64); ``"torch"`` without PyTorch installed (``pip install
        'theory[gpu]'``). Each message names the argument.
    """
    for name, value in (("backend", backend), ("device", device), ("dtype", dtype)):
        if not isinstance(value, str):
            raise TypeError(f"`{name}` of {where} must be a string; got {type(value).__name__}")
    if backend not in BACKENDS:
        _fail(where, "backend", f"one of {BACKENDS}", backend)
    if dtype not in DTYPES:
        extra = " (half precision is refused: the measured figures need float32 at least)" \
            if dtype in ("float16", "bfloat16", "half") else ""
        _fail(where, "dtype", f"one of {DTYPES}{extra}", dtype)
    if backend == "numpy":
        if device != "cpu":
            _fail(where, "device", "'cpu' with backend 'numpy' (use backend='torch' for a CUDA device)", device)
        if dtype != "float64":
            _fail(where, "dtype", "'float64' with backend 'numpy' (its kernels are float64)", dtype)
        return Backend("numpy", "cpu", "float64")
    kind, sep, index = device.partition(":")
    if kind not in ("cpu", "cuda") or (sep and (kind != "cuda" or not index.isdigit())):
        _fail(where, "device", "'cpu', 'cuda' or 'cuda:N'", device)
    if not torch_available():
        _fail(where, "backend", "'numpy' here: PyTorch is not installed (pip install 'theory[gpu]')", backend)
    if kind == "cuda":
        import torch

        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        want = int(index) + 1 if sep else 1
        if count < want:
            _fail(where, "device", f"a CUDA device PyTorch can see ({count} visible, torch "
                  f"{torch.__version__}, CUDA build: {torch.version.cuda is not None})", device)
    return Backend("torch", device, dtype)


def validate_fields(config, where: str) -> Backend:
    """:func:`resolve` on the ``backend``, ``device``, ``dtype`` fields of a config (and check its
    ``draws_on`` field, if any, is in :data:`DRAWS_ON` and ``"host"`` for the NumPy backend)."""
    b = resolve(config.backend, config.device, config.dtype, where=where)
    draws_on = getattr(config, "draws_on", "host")
    if draws_on not in DRAWS_ON:
        _fail(where, "draws_on", f"one of {DRAWS_ON}", draws_on)
    if draws_on == "device" and not b.is_torch:
        _fail(where, "draws_on", "'host' with backend 'numpy'", draws_on)
    return b
