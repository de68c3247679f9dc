"""Public API of depth-N residual networks with step 1/N (``resnet-node``).

Layer n maps x_{n-1} to x_n. Euler (Eq. (1)) uses N parameter slices theta_0 .. theta_{N-1}; Heun
(Eq. (8), the HeunNet) uses N + 1 slices theta_0 .. theta_N. Every function accepts one input of
shape (d,) or a batch of shape (B, d).
"""

from __future__ import annotations

import numpy as np

from .. import _alloc
from .._errors import NonFiniteError
from .._residual_kernels import TANH, scratch_shape
from .._residuals import resolve_residual
from .._validation import as_float_array, check_choice, check_finite_output, check_int, check_memory, check_work
from ._kernels import (_backprop_checkpointed, _batch_checkpoints, _batch_path, _euler_batch, checkpoint_segment,
                       euler_backprop_stored, euler_forward_store)
from ._schemes import KERNELS, resolve_scheme

__all__ = ["forward", "reverse", "gradient", "final_state"]

_OVERFLOW_HINT = "Reduce the weights or the input, or increase the depth N."


class _Problem:
    """Validated inputs of one call: arrays as float64 C-contiguous copies, batch-shaped."""

    def __init__(self, func, x, x_name, theta, residual, scheme, depth=None, *, max_work=None, passes=1,
                 trajectory=True):
        self.func = func
        self.scheme = resolve_scheme(scheme, func)
        self.residual = resolve_residual(residual, func)
        x = as_float_array(x, x_name, func=func, ndim=(1, 2))
        if x.shape[-1] < 1 or x.size == 0:
            raise ValueError(f"`{x_name}` of {func} must have d >= 1 and at least one row; got shape {x.shape}.")
        self.single = x.ndim == 1
        self.x = x.reshape(1, -1) if self.single else x
        self.B, self.d = self.x.shape
        pshape = self.residual.param_shape(self.d)
        # finiteness of theta is tested by the kernels as they stream it (see check_theta)
        theta = as_float_array(theta, "theta", func=func, finite=False)
        if theta.shape[1:] != pshape or theta.ndim != 1 + len(pshape):
            want = "(K, " + ", ".join(str(p) for p in pshape) + ")"
            raise ValueError(
                f"`theta` of {func} must have shape {want} for the {self.residual.name!r} residual with "
                f"d = {self.d} from `{x_name}`; got {theta.shape}."
            )
        n_slices = theta.shape[0]
        N = self.scheme.depth(n_slices)
        need = f"N + {self.scheme.extra_slices}" if self.scheme.extra_slices else "N"
        if N < 1:
            raise ValueError(
                f"`theta` of {func} must hold {need} >= {1 + self.scheme.extra_slices} parameter slices for the "
                f"{self.scheme.name!r} scheme (depth N >= 1); got {n_slices}."
            )
        if depth is not None:
            depth = check_int(depth, "depth", func=func, minimum=1)
            if depth != N:
                raise ValueError(
                    f"`theta` of {func} must hold {need} = {depth + self.scheme.extra_slices} slices for depth "
                    f"N = {depth} with the {self.scheme.name!r} scheme; got {n_slices}."
                )
        self.N = N
        self.theta = np.ascontiguousarray(theta.reshape(n_slices, -1))
        self.theta_shape = theta.shape
        m = self.residual.width
        self.m = m
        # cost and memory, estimated up front (Python arithmetic, once per call: the kernels are untouched)
        per_row = 2 * (2 * self.d * m + m) if m else (2 * self.d * self.d if len(pshape) == 2 else self.d)
        steps = N * (2 if self.scheme.extra_slices else 1)
        ops = passes * steps * self.B * per_row
        if trajectory:
            check_memory(8 * (N + 1) * self.B * self.d, "theta" if N >= self.B else x_name,
                         N if N >= self.B else self.B, func=func,
                         hint=f"The trajectory has shape ({N + 1}, {self.B}, {self.d}).")
        check_work(ops, "theta" if N >= self.B else x_name, N if N >= self.B else self.B, func=func,
                   max_work=max_work, hint=f"Depth N = {N}, batch B = {self.B}, d = {self.d}.")
        self.work = np.empty(scratch_shape(self.d, self.B, m))

    def check_theta(self, n_bad):
        """Raise as input validation would have, if the kernel counted non-finite entries of theta."""
        if n_bad:
            raise ValueError(f"`theta` of {self.func} must be finite; got NaN or inf.")

    def buffers(self, k):
        return [np.empty((self.B, self.d)) for _ in range(k)]

    def heun_buffers(self):
        return np.empty((2, self.B, self.d)), np.empty((self.B, self.d))

    def shape_traj(self, traj):
        return traj[:, 0, :] if self.single else traj

    def shape_x(self, x):
        return x[0] if self.single else x


def _transposed_trajectory(p: _Problem):
    """Whether the Euler kernels write this problem's trajectory as (N + 1, d, B): a batch of the
    linear or tanh family at small d, whose loop vectorises along the batch (the API returns the
    transposed view, of shape (N + 1, B, d))."""
    return p.scheme.name == "euler" and bool(_batch_path(p.residual.code, p.B, p.d))


def _run_trajectory(p: _Problem, which: int, start):
    if _transposed_trajectory(p):
        store = _alloc.empty((p.N + 1, p.d, p.B))
        reverse = which == 1
        store[p.N if reverse else 0] = start.T
        bad, out_bad = _euler_batch(p.residual.code, p.theta, store, reverse, True)
        traj = store.transpose(0, 2, 1)
    else:
        traj = _alloc.empty((p.N + 1, p.B, p.d))
        kernel = KERNELS[p.scheme.name][which]
        if p.scheme.name == "euler":
            (fbuf,) = p.buffers(1)
            # the Euler kernels also count the trajectory's non-finite entries as they write them
            bad, out_bad = kernel(p.residual.code, p.m, start, p.theta, traj, fbuf, p.work)
        else:
            k1, k2 = p.heun_buffers()
            bad = kernel(p.residual.code, p.m, start, p.theta, traj, k1, k2, p.work)
            out_bad = -1  # not counted: read the trajectory
    p.check_theta(bad)
    if out_bad:
        check_finite_output(traj, "the trajectory", func=p.func, hint=_OVERFLOW_HINT)
    return p.shape_traj(traj)


def forward(x0, theta, residual, scheme="euler", *, depth=None, max_work=None):
    r"""Trajectory of a depth-N residual network with step 1/N.

    Euler (``resnet-node`` Eq. (1)): :math:`x_{n+1} = x_n + \tfrac1N f(x_n, \theta_n)`.
    Heun (Eq. (8)): :math:`y_n = x_n + \tfrac1N f(x_n,\theta_n)`,
    :math:`x_{n+1} = x_n + \tfrac1{2N}(f(x_n,\theta_n) + f(y_n,\theta_{n+1}))`.

    Parameters
    ----------
    x0 : array_like, shape (d,) or (B, d)
        Input, or a batch of inputs.
    theta : array_like, shape ``(K, *P)``
        Parameter slices: K = N for Euler, K = N + 1 for Heun. P is (d, d) for ``"linear"``,
        ``"tanh"`` and ``"tanh_out"``, (d,) for ``"bias"`` and ``"bias_sq"``, (2dm + m,) for
        ``mlp(m)``.
    residual : str or Residual
        ``"linear"`` (theta x), ``"tanh"`` (tanh(theta x)), ``"tanh_out"`` (theta tanh x),
        ``"bias"``, ``"bias_sq"``, or :func:`theory.resnet.mlp` (V tanh(W x + b)).
    scheme : {"euler", "heun"}
    depth : int, optional
        Expected depth N; when given, the number of slices is checked against it (useful to catch
        a Heun call with N slices instead of N + 1).
    max_work : float, optional
        Budget in floating-point operations (default ``theory._validation.MAX_WORK``, 1e11): the
        cost, about N B (2 d^2) per pass (N B 2 (2 d m + m) for ``mlp(m)``, twice that for Heun), is
        estimated up front and a larger call is refused with the estimate. A trajectory above 16 GiB
        (``MAX_BYTES``) is refused too.

    Returns
    -------
    ndarray, shape (N + 1, d) or (N + 1, B, d)
        x_0, ..., x_N. For a batch of the linear or tanh family at small d (d <= 32, Euler) the
        array is the transposed view of an (N + 1, d, B) C-contiguous array, the layout in which
        the kernel writes it (``np.ascontiguousarray`` gives a row-major copy where one is needed).

    Raises
    ------
    TypeError, ValueError
        Wrong kinds, shapes, non-finite input, unknown names, N < 1.
    theory.NonFiniteError
        The trajectory overflowed.

    Notes
    -----
    Claims: ``resnet-node/prop-1``, ``prop-3`` to ``prop-6``, ``fig-1``.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.resnet import forward
    >>> theta = np.full((4, 1, 1), 0.5)           # f(x) = x / 2, depth 4
    >>> forward([1.0], theta, "linear")[-1]        # (1 + 1/8)^4
    array([1.60180664])
    """
    p = _Problem("theory.resnet.forward", x0, "x0", theta, residual, scheme, depth, max_work=max_work)
    return _run_trajectory(p, 0, p.x)


def reverse(xN, theta, residual, scheme="euler", *, depth=None, max_work=None):
    r"""Memory-free reconstruction of the activations by the reverse-time scheme.

    Euler (Eq. (6)): :math:`\tilde x_N = x_N`, :math:`\tilde x_n = \tilde x_{n+1} - \tfrac1N f(\tilde x_{n+1}, \theta_n)`.
    Heun (Eq. (9)): :math:`\tilde y_n = \tilde x_{n+1} - \tfrac1N f(\tilde x_{n+1},\theta_{n+1})`,
    :math:`\tilde x_n = \tilde x_{n+1} - \tfrac1{2N}(f(\tilde x_{n+1},\theta_{n+1}) + f(\tilde y_n,\theta_n))`.

    Parameters and shapes are those of :func:`forward`, with the output x_N in place of x_0.

    Returns
    -------
    ndarray, shape (N + 1, d) or (N + 1, B, d)
        The reconstructed :math:`\tilde x_0, \dots, \tilde x_N` (the last equals ``xN``); a
        transposed view for a small-d batch, as the output of :func:`forward`.

    Notes
    -----
    The reconstruction is not exact: the error is O(1/N) for Euler (Prop. 3) and
    O(Delta_theta / N + 1/N^2) for Heun (Prop. 5), with Delta_theta the largest squared difference of
    consecutive weights. Claims ``resnet-node/prop-3``, ``prop-5``.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.resnet import forward, reverse
    >>> theta = np.full((4, 1, 1), 0.5)
    >>> x = forward([1.0], theta, "linear")
    >>> float(reverse(x[-1], theta, "linear")[0, 0]) == (7 / 8) ** 4 * (9 / 8) ** 4   # exact in binary
    True
    """
    p = _Problem("theory.resnet.reverse", xN, "xN", theta, residual, scheme, depth, max_work=max_work)
    return _run_trajectory(p, 1, p.x)


def final_state(x0, theta, residual, scheme="euler", *, depth=None, max_work=None):
    """The output x_N of :func:`forward` without storing the trajectory (memory O(B d)).

    Arguments as in :func:`forward`."""
    p = _Problem("theory.resnet.final_state", x0, "x0", theta, residual, scheme, depth, max_work=max_work,
                 trajectory=False)
    x = p.x.copy()
    kernel = KERNELS[p.scheme.name][2]
    if p.scheme.name == "euler":
        (fbuf,) = p.buffers(1)
        bad = kernel(p.residual.code, p.m, x, p.theta, fbuf, p.work)
    else:
        k1, k2 = p.heun_buffers()
        bad = kernel(p.residual.code, p.m, x, p.theta, k1, k2, p.work)
    p.check_theta(bad)
    check_finite_output(x, "the output x_N", func=p.func, hint=_OVERFLOW_HINT)
    return p.shape_x(x)


def gradient(x0, theta, y, residual, scheme="euler", method="backprop", *, depth=None, max_work=None):
    r"""Gradient of :math:`\tfrac12\|x_N - y\|^2` (summed over a batch) in theta and in x0.

    ``method="backprop"`` stores the trajectory and applies the exact backpropagation of Eq. (3)
    (and its HeunNet analogue). ``method="adjoint"`` stores nothing: it computes x_N, then runs the
    reverse-time scheme (Eq. (6) or (9)) and backpropagates along the reconstruction (Eq. (7)), so
    its memory does not grow with N and its result is approximate.

    For Heun, slice theta_n receives two terms: one from step n (through x_n) and one from step
    n - 1 (through y_{n-1}); theta_0 and theta_N receive one each.

    Parameters
    ----------
    x0 : array_like, shape (d,) or (B, d)
    theta : array_like
        As in :func:`forward`.
    y : array_like, same shape as x0
        Target.
    residual, scheme, depth, max_work
        As in :func:`forward` (the cost is about 3 passes for backprop, 5 for the adjoint).
    method : {"backprop", "adjoint"}

    Returns
    -------
    grad_theta : ndarray, shape of theta
    grad_x0 : ndarray, shape of x0

    Notes
    -----
    Errors of the adjoint: O(1/N^2) per Euler slice (Prop. 4), O(Delta_theta/N^2 + 1/N^3) per Heun
    slice (Prop. 6). Claims ``resnet-node/prop-4``, ``prop-6``, ``fig-4``.

    Examples
    --------
    >>> import numpy as np
    >>> from theory.resnet import gradient
    >>> theta = np.full((4, 1, 1), 0.5)
    >>> g_theta, g_x0 = gradient([1.0], theta, [0.0], "linear")
    >>> float(g_x0[0]) == 1.125 ** 8                  # x_N dx_N/dx_0 with x_N = 1.125^4
    True
    """
    func = "theory.resnet.gradient"
    check_choice(method, "method", ("backprop", "adjoint"), func=func)
    # backprop: forward + backward (about 3 passes); adjoint: forward + reverse + backward (about 5)
    p = _Problem(func, x0, "x0", theta, residual, scheme, depth, max_work=max_work,
                 passes=3 if method == "backprop" else 5, trajectory=method == "backprop")
    # a small-d tanh batch is backpropagated from checkpoints (no stored trajectory, no derivatives)
    checkpointed = method == "backprop" and p.residual.code == TANH and _transposed_trajectory(p)
    if method == "backprop" and p.scheme.name == "euler" and p.residual.code == TANH and not checkpointed:
        # the tanh derivatives stored beside the trajectory double its memory
        check_memory(16 * (p.N + 1) * p.B * p.d, "theta" if p.N >= p.B else "x0", p.N if p.N >= p.B else p.B,
                     func=func, hint=f"The trajectory and the stored tanh derivatives have shape "
                                     f"({p.N + 1}, {p.B}, {p.d}) each.")
    target = as_float_array(y, "y", func=func)
    if target.shape != p.shape_x(p.x).shape:
        raise ValueError(f"`y` of {func} must have the shape of `x0`, {p.shape_x(p.x).shape}; got {target.shape}.")
    target = target.reshape(p.B, p.d)
    code, m = p.residual.code, p.m
    gtheta = np.zeros_like(p.theta)
    cot, gx = p.buffers(2)
    fwd, _, last, backprop, adjoint = KERNELS[p.scheme.name]
    heun = p.scheme.name == "heun"
    if method == "backprop":
        traj = _alloc.empty((p.N + 1, p.B, p.d))
        if heun:
            k1, k2 = p.heun_buffers()
            bad = fwd(code, m, p.x, p.theta, traj, k1, k2, p.work)
            out_bad = -1  # not counted by the Heun kernels: read the trajectory
        elif checkpointed:  # checkpoints every seg layers; each segment recomputed backwards
            seg = checkpoint_segment(p.B, p.d)
            ckpt = np.empty(((p.N + seg - 1) // seg, p.d, p.B))
            xT = np.array(p.x.T, order="C")  # a copy (the kernel overwrites it with x_N^T)
            bad, out_bad = _batch_checkpoints(code, p.theta, ckpt, seg, xT)
            traj = xT.T[None]  # x_N only: the rest is not stored
        elif code == TANH:  # derivatives stored by the forward pass: no recomputation backwards
            (fbuf,) = p.buffers(1)
            dact = _alloc.empty((p.N, p.B, p.d))  # the kernels' private layout: for euler_backprop_stored only
            bad, out_bad = euler_forward_store(code, m, p.x, p.theta, traj, dact, fbuf, p.work)
        else:
            (fbuf,) = p.buffers(1)
            bad, out_bad = fwd(code, m, p.x, p.theta, traj, fbuf, p.work)
        p.check_theta(bad)
        if out_bad and checkpointed:  # the checkpointed pass keeps x_N only: its count stands
            raise NonFiniteError(f"{func}: the trajectory overflowed to NaN or inf. {_OVERFLOW_HINT}")
        if out_bad:
            check_finite_output(traj, "the trajectory", func=func, hint=_OVERFLOW_HINT)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below, by name
            g = np.subtract(traj[-1], target, order="C")  # C order: traj may be a transposed view
        check_finite_output(g, "the residual x_N - y", func=func, hint=_OVERFLOW_HINT)
        if heun:
            yb, gy = p.buffers(2)
            backprop(code, m, traj, p.theta, g, gtheta, yb, cot, gy, gx, p.work)
        elif checkpointed:
            _backprop_checkpointed(code, p.theta, ckpt, seg, g, gtheta)
        elif code == TANH:
            euler_backprop_stored(traj, dact, p.theta, g, gtheta, cot, gx, p.work)
        else:
            backprop(code, m, traj, p.theta, g, gtheta, cot, gx, p.work)
    else:
        x = p.x.copy()
        if heun:
            k1, k2 = p.heun_buffers()
            bad = last(code, m, x, p.theta, k1, k2, p.work)
        else:
            (fbuf,) = p.buffers(1)
            bad = last(code, m, x, p.theta, fbuf, p.work)
        p.check_theta(bad)
        check_finite_output(x, "the output x_N", func=func, hint=_OVERFLOW_HINT)
        with np.errstate(over="ignore", invalid="ignore"):
            g = x - target
        check_finite_output(g, "the residual x_N - y", func=func, hint=_OVERFLOW_HINT)
        if heun:
            yb, gy = p.buffers(2)
            adjoint(code, m, x, p.theta, g, gtheta, yb, cot, gy, gx, k1, k2, p.work)
        else:
            adjoint(code, m, x, p.theta, g, gtheta, cot, gx, fbuf, p.work)
    check_finite_output(gtheta, "the parameter gradient", func=func, hint=_OVERFLOW_HINT)
    check_finite_output(g, "the input gradient", func=func, hint=_OVERFLOW_HINT)
    return gtheta.reshape(p.theta_shape), p.shape_x(g)

