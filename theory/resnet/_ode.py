r"""The neural ODE that smoothly interpolates a residual network (``resnet-node`` Definition 1).

Given N + 1 parameter slices theta_0 .. theta_N, on each cell s in [n/N, (n+1)/N] the vector field is

* weight interpolation:   phi(x, s) = f(x, (n + 1 - N s) theta_n + (N s - n) theta_{n+1}),
* residual interpolation: phi(x, s) = (n + 1 - N s) f(x, theta_n) + (N s - n) f(x, theta_{n+1}),

so that phi(., n/N) = f(., theta_n). Both are smooth inside each cell and only continuous across
cells, so the ODE dx/ds = phi(x, s) is integrated cell by cell with SciPy's DOP853 at tight tolerance
(a single adaptive solve would step across the kinks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from .. import _residual_kernels
from .._errors import NonFiniteError
from .._residuals import ode_work, resolve_residual
from .._validation import as_float_array, check_choice, check_finite_output, check_int, check_interval, check_work

__all__ = ["ODESolution", "interpolating_ode"]

def _lipschitz_estimate(res, theta, d):
    """:meth:`Residual.lipschitz_x`, or inf where the weights are too large to compute it."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            L = res.lipschitz_x(theta, d)
    except np.linalg.LinAlgError:
        return float("inf")
    return L if np.isfinite(L) else float("inf")


@dataclass(frozen=True)
class ODESolution:
    """Solution of the interpolating neural ODE on the grid s = n/N.

    Attributes
    ----------
    s : ndarray, shape (N + 1,)
        The grid n/N.
    x : ndarray, shape (N + 1, d)
        x(n/N).
    lipschitz : float
        L, a global bound on the Lipschitz constant of x -> phi(x, s) over all s, from the residual
        family (:meth:`Residual.lipschitz_x`, valid between slices for both interpolations).
    curvature : float
        sup over the sampled s of ||d^2x/ds^2|| = ||d_s phi + d_x phi [phi]|| along the trajectory:
        the constant C_N of Proposition 1 restricted to the trajectory, which is all its proof uses.
    nfev : int
        Right-hand-side evaluations.
    """

    s: np.ndarray
    x: np.ndarray
    lipschitz: float
    curvature: float
    nfev: int

    def prop1_bound(self) -> float:
        r"""Proposition 1's bound (e^L - 1) C_N / (2 N L), or C_N / (2N) when L = 0."""
        N = self.s.size - 1
        L, C = self.lipschitz, self.curvature
        if L == 0.0:
            return C / (2 * N)
        return float(np.expm1(L) * C / (2 * N * L))


def interpolating_ode(x0, theta, residual, interpolation="weights", *, rtol=1e-12, atol=1e-12, samples=8,
                      max_work=None):
    r"""Solve the neural ODE that interpolates a residual network (Definition 1).

    Parameters
    ----------
    x0 : array_like, shape (d,)
    theta : array_like, shape ``(N + 1, *P)``
        Slices theta_0 .. theta_N (the last cell needs theta_N); the Euler network of depth N uses
        the first N of them.
    residual : str or Residual
        As in :func:`theory.resnet.forward`.
    interpolation : {"weights", "residuals"}
    rtol, atol : float
        DOP853 tolerances on each cell: rtol in [100 eps, 1) (SciPy's floor, eps = 2.2e-16),
        atol > 0.
    samples : int
        Intervals per cell; ||d^2x/ds^2|| is evaluated at their samples + 1 end points by
        fourth-order central differences of phi along the direction (phi, 1).
    max_work : float, optional
        Budget in floating-point operations (default 1e11). The cost is estimated up front from N,
        ``samples`` and the Lipschitz constant L of the field (an explicit solver needs about L / 4
        steps: large weights make the ODE stiff), each evaluation counted at least 2e4 operations
        (its Python overhead); a larger call is refused with the estimate.

    Returns
    -------
    ODESolution

    Notes
    -----
    Claim ``resnet-node/prop-1``: ||x_n - x(n/N)|| <= (e^L - 1) C_N / (2 N L).

    Examples
    --------
    >>> import numpy as np
    >>> from theory.resnet import interpolating_ode
    >>> N = 4
    >>> theta = np.arange(N + 1.0)[:, None]        # f(x, theta_n) = n, residuals interpolated: phi = N s
    >>> sol = interpolating_ode([0.0], theta, "bias", "residuals")
    >>> round(float(sol.x[-1, 0]), 12), round(sol.curvature, 9)
    (2.0, 4.0)
    """
    func = "theory.resnet.interpolating_ode"
    res = resolve_residual(residual, func)
    check_choice(interpolation, "interpolation", ("weights", "residuals"), func=func)
    rtol = check_interval(rtol, "rtol", 100 * np.finfo(float).eps, 1.0, func=func, closed="left")
    atol = check_interval(atol, "atol", 0.0, np.inf, func=func)
    samples = check_int(samples, "samples", func=func, minimum=1)
    x0 = as_float_array(x0, "x0", func=func, ndim=1, min_size=1)
    d = x0.size
    pshape = res.param_shape(d)
    theta = as_float_array(theta, "theta", func=func)
    if theta.shape[1:] != pshape or theta.ndim != 1 + len(pshape) or theta.shape[0] < 2:
        want = "(N + 1, " + ", ".join(str(p) for p in pshape) + ") with N >= 1"
        raise ValueError(f"`theta` of {func} must have shape {want}; got {theta.shape}.")
    N = theta.shape[0] - 1
    L_est = _lipschitz_estimate(res, theta, d)
    name, value = ("samples", samples) if samples > 30 else ("theta", f"array of shape {theta.shape}")
    check_work(ode_work(N, L_est, samples, res, d), name, value, func=func, max_work=max_work,
               hint=f"N = {N} cells, {samples} curvature samples per cell, Lipschitz constant about {L_est:.3g}.")
    flat = np.ascontiguousarray(theta.reshape(N + 1, -1))
    work = np.empty(_residual_kernels.scratch_shape(d, 1, res.width, blocks=1))
    xb = np.empty((1, d))
    out = np.empty((1, d))
    weights = interpolation == "weights"

    def f(x, th):
        xb[0] = x
        _residual_kernels.residual(res.code, res.width, xb, th, out, work, True)
        return out[0].copy()

    def phi(n, s, x):
        w = N * s - n  # weight of theta_{n+1}; the cell's formula, also used slightly outside the cell
        if weights:
            return f(x, (1.0 - w) * flat[n] + w * flat[n + 1])
        a = f(x, flat[n])
        b = f(x, flat[n + 1])
        return (1.0 - w) * a + w * b

    xs = np.empty((N + 1, d))
    xs[0] = x0
    nfev = 0
    curvature = 0.0
    # fourth-order central differences along (phi, 1): truncation O(h^4), round-off O(eps / h)
    h = 1e-3 / N
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below, by name
        for n in range(N):
            s0, s1 = n / N, (n + 1) / N
            sol = solve_ivp(lambda s, x, n=n: phi(n, s, x), (s0, s1), xs[n], method="DOP853",
                            rtol=rtol, atol=atol, dense_output=True)
            if not sol.success:
                if not np.all(np.isfinite(sol.y)):
                    raise NonFiniteError(f"{func}: the ODE solution overflowed to NaN or inf on cell {n}; reduce "
                                         f"`x0` or `theta`.")
                raise ValueError(f"`theta` of {func}: DOP853 failed on cell {n} ({sol.message}); the field is "
                                 f"too stiff or too large for an explicit solver: reduce `theta` or `x0`.")
            nfev += sol.nfev
            xs[n + 1] = sol.y[:, -1]
            if not np.all(np.isfinite(xs[n + 1])):
                break
            for s in np.linspace(s0, s1, samples + 1):
                x = sol.sol(s)
                v = phi(n, s, x)
                acc = (8 * (phi(n, s + h, x + h * v) - phi(n, s - h, x - h * v))
                       - (phi(n, s + 2 * h, x + 2 * h * v) - phi(n, s - 2 * h, x - 2 * h * v))) / (12 * h)
                curvature = max(curvature, float(np.linalg.norm(acc)))
    check_finite_output(xs, "the ODE solution", func=func, hint="Reduce `x0` or `theta`.")
    check_finite_output(np.asarray([curvature]), "the curvature sup ||d^2x/ds^2||", func=func,
                        hint="Reduce `x0` or `theta`.")
    return ODESolution(np.arange(N + 1) / N, xs, res.lipschitz_x(theta, d), curvature, nfev)
