"""Compile once, before the check groups start, the Numba kernels that several check files share.

``theory check`` runs the check files in parallel pytest processes (:mod:`theory._check_pool`), and each process
compiles the kernels its checks call on first use. On an empty cache (a fresh clone, or a change of a kernel's
source) a kernel called by check files of two groups is compiled twice, once in each process, at the same time:
the Euler and Heun residual networks and the momentum networks, whose entry points take 5 to 15 s each, cost
about a minute of CPU time twice. Here each such family is compiled once, the families spread over the processes
by their compilation time, before any group starts: the groups then load these kernels from Numba's cache.

Each entry of :data:`SHARED` compiles its family through the public functions, with tiny inputs of the kinds the
check files share (one input, a wide batch), so that the kernels and signatures compiled are the ones the checks
call; a check needing another kernel compiles it as before. The kernels are compiled only when :func:`cold` finds one of them missing from the cache, so a run
on a warm cache costs nothing here.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Callable

import numpy as np

__all__ = ["SharedFamily", "SHARED", "cold", "parts", "compile_part"]


@dataclasses.dataclass(frozen=True)
class SharedFamily:
    """Kernels shared by several check files, compiled together.

    Attributes
    ----------
    name : str
        The family, as the terminal shows it.
    seconds : float
        Its compilation time on one core, measured on an empty cache (AMD EPYC, 2 cores): the weight by which
        :func:`parts` balances the processes.
    probes : tuple of str
        ``module:function`` of kernels the family compiles; the family is cold when one of them has no valid
        entry in Numba's cache.
    compile : callable
        Calls the public functions that compile the family.
    """

    name: str
    seconds: float
    probes: tuple[str, ...]
    compile: Callable[[], None]


def _resnet(scheme: str) -> Callable[[], None]:
    def run() -> None:
        import theory.resnet as R

        rng = np.random.default_rng(0)
        K = 6 + R.SCHEMES[scheme].extra_slices
        tanh, mlp = R.RESIDUALS["tanh"], R.mlp(3)
        # one input and a batch wider than the vectorised small-d batch loop (which no check file shares)
        for B, d in ((1, 3), (3, 40)):
            theta = 0.1 * rng.standard_normal((K,) + tanh.param_shape(d))
            x = rng.standard_normal((B, d))
            R.forward(x, theta, tanh, scheme)
            R.reverse(x, theta, tanh, scheme)
            R.final_state(x, theta, tanh, scheme)
        theta = 0.1 * rng.standard_normal((K,) + mlp.param_shape(3))
        x, y = rng.standard_normal((2, 1, 3))
        for method in ("backprop", "adjoint"):
            R.gradient(x, theta, y, mlp, scheme, method)
    return run


def _momentum() -> None:
    import theory.momentum as M
    import theory.resnet as R

    rng = np.random.default_rng(0)
    res = R.RESIDUALS["tanh"]
    theta = 0.1 * rng.standard_normal((6,) + res.param_shape(3))
    x, y = rng.standard_normal((2, 1, 3))
    xs, vs = M.forward(x, None, theta, res, 0.9)
    M.inverse(xs[-1], vs[-1], theta, res, 0.9)
    for method in ("backprop", "memory_free"):
        M.gradient(x, None, theta, res, 0.9, y, method)


def _linear() -> None:
    import theory.isotonic as I
    import theory.linear as L

    rng = np.random.default_rng(0)
    theta = rng.standard_normal((4, 3, 3))
    A = rng.standard_normal((3, 3))
    L.gradient(theta, A @ A.T + np.eye(3), rng.standard_normal((3, 3)), return_loss=True)
    y = rng.standard_normal(20)
    I.isotonic_regression(y)
    I.isotonic_regression(y, p=3.0)


#: The shared families, heaviest first (seconds: compilation on an empty cache, one core).
SHARED: tuple[SharedFamily, ...] = (
    SharedFamily("residual networks, Euler", 60.0, ("theory.resnet._kernels:euler_forward",
                                                     "theory.resnet._kernels:euler_backprop"), _resnet("euler")),
    SharedFamily("residual networks, Heun", 50.0, ("theory.resnet._kernels:heun_forward",
                                                    "theory.resnet._kernels:heun_backprop"), _resnet("heun")),
    SharedFamily("momentum networks", 27.0, ("theory.momentum._kernels:momentum_forward",
                                             "theory.momentum._kernels:momentum_memory_free"), _momentum),
    SharedFamily("deep linear networks, PAV", 15.0, ("theory.linear._kernels:gradient",
                                                     "theory._pav:_pav_general"), _linear),
)


def _cached(probe: str) -> bool:
    """Whether the kernel ``module:function`` has a valid entry in Numba's cache (False when unsure)."""
    module, _, name = probe.partition(":")
    try:
        dispatcher = getattr(importlib.import_module(module), name)
        # Numba's index of the kernel's cached signatures; empty when the file is missing or its source changed
        return bool(dispatcher._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - another Numba version's internals: compile as if cold
        return False


def cold(families: tuple[SharedFamily, ...] = SHARED) -> list[SharedFamily]:
    """The families of ``families`` with a kernel missing from Numba's cache."""
    return [f for f in families if not all(_cached(p) for p in f.probes)]


def parts(families: list[SharedFamily], n: int) -> list[list[SharedFamily]]:
    """``families`` in at most ``n`` parts of about equal compilation time (heaviest first, each to the lightest).

    Examples
    --------
    >>> [[f.name for f in p] for p in parts(list(SHARED), 2)]
    [['residual networks, Euler', 'deep linear networks, PAV'], ['residual networks, Heun', 'momentum networks']]
    """
    if n < 1:
        raise ValueError(f"`n` must be at least 1; got {n}")
    out: list[list[SharedFamily]] = [[] for _ in range(min(n, len(families)))]
    loads = [0.0] * len(out)
    for f in sorted(families, key=lambda f: -f.seconds):
        i = min(range(len(out)), key=lambda k: (loads[k], k))
        out[i].append(f)
        loads[i] += f.seconds
    return [p for p in out if p]


def compile_part(names: list[str]) -> int:
    """Compile the families named (entries of :data:`SHARED`); 0 on success, 1 when one failed (reported on
    stderr: the checks then compile what is missing, and their own failure says what is wrong)."""
    by_name = {f.name: f for f in SHARED}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ValueError(f"unknown shared kernel families {unknown}; known: {sorted(by_name)}")
    code = 0
    for n in names:
        try:
            by_name[n].compile()
        except Exception as exc:  # noqa: BLE001 - reported; the checks will meet it again
            print(f"theory._shared_kernels: compiling {n!r} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            code = 1
    return code


if __name__ == "__main__":  # python -m theory._shared_kernels NAME ...
    sys.exit(compile_part(sys.argv[1:]))
