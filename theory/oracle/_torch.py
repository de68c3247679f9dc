"""Adapters for class-based PyTorch code: the states of a model's residual blocks, read with forward hooks.

The trajectory kernels (``resnet_forward``, ``momentum_forward``, ``scaling_forward``, ``implicit_forward``)
ask for every state x_0, ..., x_N, while a public ``torch.nn.Module`` returns the last one only.
:func:`record_states` wraps such a model: it calls the model once with forward hooks on its blocks and
returns the stacked trajectory, x_0 (the input of the first block) followed by the output of every block
call, in the layout these kernels return (axis 0 the depth). A model whose output alone is to be checked
needs no helper: ``verify(..., outputs="last")`` compares the last row of each trajectory output
(:attr:`theory.oracle.Kernel.trajectory`) with what the function returns.

torch is not a dependency of theory: it is imported when a helper is called, and its absence is an
:class:`~theory.oracle.OracleInputError` naming the line that installs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._core import _INSTALL, OracleInputError

__all__ = ["record_states"]


def _torch():
    try:
        import torch
    except ImportError:
        raise OracleInputError(f"record_states needs PyTorch, which is not installed; install it with "
                               f"`{_INSTALL['torch']}`") from None
    return torch


def _containers(torch, module) -> dict[str, Any]:
    """The direct children of ``module`` that hold a sequence of blocks (nn.ModuleList or nn.Sequential)."""
    return {name: child for name, child in module.named_children()
            if isinstance(child, (torch.nn.ModuleList, torch.nn.Sequential))}


def _blocks(torch, module, blocks) -> list:
    """The residual blocks of ``module`` named by ``blocks`` (see :func:`record_states`)."""
    if not isinstance(module, torch.nn.Module):
        raise OracleInputError(f"`module` must be a torch.nn.Module; got {type(module).__name__}")
    if blocks is None:
        if isinstance(module, (torch.nn.Sequential, torch.nn.ModuleList)):
            found = list(module)
        else:
            holders = _containers(torch, module)
            if len(holders) != 1:
                which = (f"it has several ({', '.join(holders)})" if holders else
                         "it has no nn.ModuleList or nn.Sequential attribute")
                raise OracleInputError(f"`blocks`: cannot tell which children of {type(module).__name__} are the "
                                       f"residual blocks ({which}); name the attribute, e.g. blocks=\"layers\", or "
                                       f"pass the list of blocks")
            found = list(next(iter(holders.values())))
    elif isinstance(blocks, str):
        obj = module
        for part in blocks.split("."):
            if not hasattr(obj, part):
                raise OracleInputError(f"`blocks`: {type(module).__name__} has no attribute {blocks!r} (its "
                                       f"children: {', '.join(n for n, _ in module.named_children()) or 'none'})")
            obj = getattr(obj, part)
        if isinstance(obj, torch.nn.Module) and not isinstance(obj, (torch.nn.ModuleList, torch.nn.Sequential)):
            raise OracleInputError(f"`blocks`: {blocks!r} is a single {type(obj).__name__}, not a sequence of blocks "
                                   f"(an nn.ModuleList, an nn.Sequential or a list of modules)")
        try:
            found = list(obj)
        except TypeError:
            raise OracleInputError(f"`blocks`: {blocks!r} is a {type(obj).__name__}, not a sequence of blocks") from None
    else:
        try:
            found = list(blocks)
        except TypeError:
            raise OracleInputError(f"`blocks` must be None, an attribute name or a sequence of modules; got "
                                   f"{type(blocks).__name__}") from None
    if not found:
        raise OracleInputError("`blocks`: the sequence of blocks is empty; a trajectory needs at least one block")
    bad = [i for i, b in enumerate(found) if not isinstance(b, torch.nn.Module)]
    if bad:
        raise OracleInputError(f"`blocks`: item {bad[0]} is a {type(found[bad[0]]).__name__}, not a torch.nn.Module")
    return found


def _state(torch, value, what: str):
    """A block's state as a tensor or a tuple of tensors (a momentum block passes (x, v))."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, torch.Tensor) for v in value):
        return tuple(value)
    raise OracleInputError(f"record_states: {what} is a {type(value).__name__}; a block's state must be a tensor or a "
                           f"tuple of tensors (e.g. (x, v))")


def record_states(module, *, blocks=None) -> Callable[..., Any]:
    """A function that runs ``module`` and returns the states of its residual blocks, stacked.

    ``record_states(model)(*args, **kwargs)`` calls ``model(*args, **kwargs)`` once with forward hooks on
    the blocks and returns ``torch.stack([x_0, x_1, ..., x_N])``: x_0 the input of the first block call,
    x_n the output of the n-th block call, in call order (a block called twice appears twice). That is the
    layout of the trajectory outputs of ``resnet_forward`` (``x``, (N+1, d)) and ``scaling_forward``
    (``h``, (L+1, d)); a block whose state is a tuple, such as a momentum block taking and returning
    ``(x, v)``, gives a tuple of stacked trajectories, ``(xs, vs)`` of ``momentum_forward``. The model's
    own return value is discarded; the hooks are removed after each call, so that the model is left as it
    was.

    Parameters
    ----------
    module : torch.nn.Module
        The model. Its forward must run its blocks one after the other, each mapping the state to the
        next (resnet-node Eq. (1): x_{n+1} = x_n + h f(x_n, theta_n)).
    blocks : None, str or sequence of torch.nn.Module
        Which children are the blocks. None: the items of ``module`` itself if it is an ``nn.Sequential``
        or ``nn.ModuleList``, otherwise of its only ``nn.ModuleList`` / ``nn.Sequential`` child; a string:
        the attribute holding them (dotted for a nested one, ``"body.layers"``); a sequence: those modules.

    Returns
    -------
    callable
        ``states(*args, **kwargs) -> tensor`` (or a tuple of tensors), stacked along a new axis 0.
        A batch dimension of the model stays where it is: a model called on ``x0[None]`` gives
        (N+1, 1, d), which the caller reshapes (``states(x0[None])[:, 0]``).

    Raises
    ------
    OracleInputError
        torch is not installed (the message names ``pip install 'theory[oracle]'``); ``module`` is not an
        ``nn.Module``; ``blocks`` names no attribute, an empty sequence, a non-module, or (None) the model
        has no or several block containers. When the returned function runs: no block was called, or a
        block's input or output is neither a tensor nor a tuple of tensors, or its input and output
        differ in structure (the oracle reports the case as ERROR with the message).

    Examples
    --------
    A class-based ResNet checked against ``resnet_forward`` (``examples/oracle/torch_resnet_module.py``)::

        def trajectory(x0, theta, residual, scheme, step):
            return record_states(ResNet(theta, residual, scheme, step))(x0)
    """
    torch = _torch()
    found = _blocks(torch, module, blocks)
    unique = list({id(b): b for b in found}.values())  # a block listed twice is hooked once

    def states(*args, **kwargs):
        recorded: list = []
        first: list = []

        def pre(block, inputs):
            if not first:
                first.append((type(block).__name__, inputs))

        def post(block, inputs, output):
            recorded.append(_state(torch, output, f"the output of block call {len(recorded)} ({type(block).__name__})"))

        handles = []
        try:
            for b in unique:
                handles.append(b.register_forward_pre_hook(pre))
                handles.append(b.register_forward_hook(post))
            module(*args, **kwargs)
        finally:
            for h in handles:
                h.remove()
        if not recorded:
            raise OracleInputError(f"record_states: {type(module).__name__}'s forward called none of its "
                                   f"{len(unique)} blocks; name the blocks its forward runs with `blocks=`")
        n = len(recorded[0]) if isinstance(recorded[0], tuple) else 1
        name, inputs = first[0]
        if len(inputs) < n:
            raise OracleInputError(f"record_states: the first block ({name}) takes {len(inputs)} positional "
                                   f"argument(s) and returns {n} tensor(s); a residual block maps a state to a "
                                   f"state of the same structure, passed positionally")
        # the state is the first n positional arguments (further ones, e.g. a step, are not state)
        x0 = _state(torch, inputs[0] if n == 1 else inputs[:n], f"the input of the first block ({name})")
        rows = [s if isinstance(s, tuple) else (s,) for s in [x0] + recorded]
        if any(len(r) != n for r in rows):
            raise OracleInputError(f"record_states: the blocks' outputs differ in structure ({n} tensor(s) first, "
                                   f"then {sorted({len(r) for r in rows})}); each block must return the state")
        stacked = tuple(torch.stack([r[i] for r in rows]) for i in range(n))
        return stacked if isinstance(recorded[0], tuple) else stacked[0]

    return states
