"""Right-hand sides of the generalization bounds of chapter 4 of the thesis (Marion).

Each calculator validates its constants at the door (radii and Lipschitz constants positive and finite,
n a positive integer above the statement's threshold, delta in (0, 1)), then evaluates the printed
formula in float64; a value beyond the float64 range raises :class:`~theory.NonFiniteError` instead of
returning inf.

* Prop. 4.2: ||F_theta(x)|| <= R_X + M R_Theta exp(K_f R_Theta) and
  ||F_theta(x) - F_theta'(x)|| <= 2 M K_f R_Theta exp(2 K_f R_Theta) ||theta - theta'||_{1,inf} (printed);
  the proof gives the constant C = M (K_f R_Theta exp(K_f R_Theta) + 1) exp(K_f R_Theta), which is at most
  the printed one only when K_f R_Theta exp(K_f R_Theta) >= 1 (:func:`prop_4_2_lipschitz_proof`).
* Prop. 4.3: log N(eps) <= m log(16 m R_Theta / eps) + m^2 K_Theta log 4 / eps.
* Thm 4.4: gap <= B sqrt((m+1) log(R_Theta m n) / n) + B m sqrt(K_Theta) / n^(1/4) + B sqrt(log(1/delta) / n),
  B = 6 K_l K_f exp(K_f R_Theta) (R_X + M R_Theta exp(K_f R_Theta) + R_Y), n >= 9 max(m^-2 R_Theta^-2, 1).
* Cor. 4.5: gap <= B (d+1) sqrt(log(R_W d n) / n) + B sqrt(log(1/delta) / n),
  B = 6 sqrt 2 K_l K_sigma exp(K_sigma R_W) (R_X + M R_W exp(K_sigma R_W) + R_Y).
* Prop. 4.6: ||F_W(x)|| <= R_X exp(K_sigma R_W), Lipschitz constant R_X exp(2 K_sigma R_W) / R_W.
* Prop. 4.7: log N(eps) <= d^2 log(16 d^2 R_W / eps) + d^4 K_W log 4 / eps.
* Thm 4.8 (4.13): gap <= B (d+1) sqrt(log(R_W d n) / n) + B d^2 sqrt(K_W) / n^(1/4) + B sqrt(log(1/delta) / n),
  B = 6 sqrt 2 K_l max(exp(K_sigma R_W) / R_W, 1) (R_X exp(K_sigma R_W) + R_Y), n >= 9 R_W^-1 max(d^-4 R_W^-1, 1).
* Cor. 4.9 (4.14): the spectral complexity of Bartlett et al. is at most 2 R e^R sqrt(L) when L >= R.
"""

from __future__ import annotations

import math

import numpy as np

from theory._validation import check_int, check_interval, finite_value

__all__ = ["prop_4_2_output_bound", "prop_4_2_lipschitz_printed", "prop_4_2_lipschitz_proof",
           "prop_4_3_log_covering", "theorem_4_4_constant", "theorem_4_4_gap", "corollary_4_5_constant",
           "corollary_4_5_gap", "prop_4_6_output_bound", "prop_4_6_lipschitz", "prop_4_7_log_covering",
           "theorem_4_8_constant", "theorem_4_8_gap", "corollary_4_9_complexity_bound"]

_PKG = "theory.generalization."

#: largest accepted dimension m, d or depth L: every integer up to it is exact in float64
_MAX_DIM = 2**53


def _pos(v, name, func, closed=False):
    """``v`` as a float in (0, inf) (``closed``: [0, inf)), finite."""
    return check_interval(v, name, 0.0, np.inf, func=func, closed="left" if closed else "neither")


def _dim(k, name, func):
    return check_int(k, name, func=func, minimum=1, maximum=_MAX_DIM)


def _size(n, func):
    """The sample size n >= 1 (any Python int: the formulas use it as a float, refused beyond 1e308)."""
    n = check_int(n, "n", func=func, minimum=1)
    if n > 10**308:
        raise ValueError(f"`n` of {func} must be at most 1e308 (a float64); got an integer of {len(str(n))} digits.")
    return n


def _threshold(compute):
    """A sample-size threshold, inf when it overflows float64 (no n then satisfies it)."""
    try:
        return compute()
    except (OverflowError, ZeroDivisionError):
        return math.inf


def _value(func, compute):
    """``compute()`` as a finite float, or :class:`NonFiniteError` when the formula leaves the float64 range."""
    return float(finite_value(compute, func=func, what="the bound",
                              hint="its constants are too large (exp(K R) overflows beyond K R = 709.78) or "
                                   "delta is below about 1e-308"))


def prop_4_2_output_bound(R_X, M, K_f, R_theta):
    r"""Output bound of Prop. 4.2: :math:`\|F_\theta(x)\| \le R_X + M R_\Theta \exp(K_f R_\Theta)`.

    For the parameterized ODE (4.5), :math:`dH = \sum_i \theta_i(t) f_i(H)\,dt`, with maps f_i bounded by M and
    K_f-Lipschitz, inputs of norm at most R_X and :math:`\|\theta\|_{1,\infty} \le R_\Theta` (4.6).

    Parameters
    ----------
    R_X : float
        Bound on the input norm, R_X > 0.
    M : float
        Bound on the maps f_i, M >= 0.
    K_f : float
        Lipschitz constant of the maps, K_f > 0.
    R_theta : float
        Bound R_Theta > 0 on the (1, inf)-norm of the parameters.

    Returns
    -------
    float
        R_X + M R_Theta exp(K_f R_Theta).

    Raises
    ------
    TypeError
        An argument that is not a real number.
    ValueError
        An argument outside its range, NaN or infinite.
    NonFiniteError
        The bound overflows float64.
    """
    f = _PKG + "prop_4_2_output_bound"
    R_X, M, K_f, R = _pos(R_X, "R_X", f), _pos(M, "M", f, True), _pos(K_f, "K_f", f), _pos(R_theta, "R_theta", f)
    return _value(f, lambda: R_X + M * R * math.exp(K_f * R))


def prop_4_2_lipschitz_printed(M, K_f, R_theta):
    r"""Lipschitz constant printed in Prop. 4.2: :math:`2 M K_f R_\Theta \exp(2 K_f R_\Theta)`.

    The printed statement reads :math:`\|F_\theta(x) - F_{\theta'}(x)\| \le 2 M K_f R_\Theta
    \exp(2 K_f R_\Theta) \|\theta - \theta'\|_{1,\infty}`; it is at least the constant of the proof
    (:func:`prop_4_2_lipschitz_proof`) only when :math:`K_f R_\Theta e^{K_f R_\Theta} \ge 1` (ERRATA.md).

    Parameters
    ----------
    M : float
        Bound on the maps f_i, M >= 0.
    K_f : float
        Lipschitz constant of the maps, K_f > 0.
    R_theta : float
        Bound R_Theta > 0 on the (1, inf)-norm of the parameters.

    Returns
    -------
    float
        2 M K_f R_Theta exp(2 K_f R_Theta).

    Raises
    ------
    TypeError
        An argument that is not a real number.
    ValueError
        An argument outside its range, NaN or infinite.
    NonFiniteError
        The constant overflows float64.
    """
    f = _PKG + "prop_4_2_lipschitz_printed"
    M, K_f, R = _pos(M, "M", f, True), _pos(K_f, "K_f", f), _pos(R_theta, "R_theta", f)
    return _value(f, lambda: 2 * M * K_f * R * math.exp(2 * K_f * R))


def prop_4_2_lipschitz_proof(M, K_f, R_theta):
    r"""Lipschitz constant established by the proof of Prop. 4.2 (Gronwall):
    :math:`C = M (K_f R_\Theta e^{K_f R_\Theta} + 1) e^{K_f R_\Theta}`, valid for every K_f > 0, R_Theta > 0.

    Parameters
    ----------
    M : float
        Bound on the maps f_i, M >= 0.
    K_f : float
        Lipschitz constant of the maps, K_f > 0.
    R_theta : float
        Bound R_Theta > 0 on the (1, inf)-norm of the parameters.

    Returns
    -------
    float
        M (K_f R_Theta exp(K_f R_Theta) + 1) exp(K_f R_Theta).

    Raises
    ------
    TypeError
        An argument that is not a real number.
    ValueError
        An argument outside its range, NaN or infinite.
    NonFiniteError
        The constant overflows float64.
    """
    f = _PKG + "prop_4_2_lipschitz_proof"
    M, K_f, R = _pos(M, "M", f, True), _pos(K_f, "K_f", f), _pos(R_theta, "R_theta", f)

    def compute():
        e = math.exp(K_f * R)
        return M * (K_f * R * e + 1) * e

    return _value(f, compute)


def prop_4_3_log_covering(m, R_theta, K_theta, eps):
    r"""Log covering number of Prop. 4.3: :math:`\log N(\varepsilon) \le m \log(16 m R_\Theta / \varepsilon)
    + m^2 K_\Theta \log(4) / \varepsilon`, for the K_Theta-Lipschitz parameter functions
    :math:`[0, 1] \to \mathbb{R}^m` of (1, inf)-norm at most R_Theta.

    Parameters
    ----------
    m : int
        Number of parameter functions, 1 <= m <= 2**53.
    R_theta : float
        Radius R_Theta > 0.
    K_theta : float
        Lipschitz constant K_Theta >= 0.
    eps : float
        Covering radius eps > 0.

    Returns
    -------
    float
        The right-hand side (may be negative when eps exceeds 16 m R_Theta).

    Raises
    ------
    TypeError
        ``m`` not an integer, another argument not a real number.
    ValueError
        An argument outside its range, NaN or infinite.
    NonFiniteError
        The bound overflows float64.
    """
    f = _PKG + "prop_4_3_log_covering"
    m = _dim(m, "m", f)
    R, K, eps = _pos(R_theta, "R_theta", f), _pos(K_theta, "K_theta", f, True), _pos(eps, "eps", f)
    return _log_covering(f, m, R, K, eps)


def _log_covering(f, m, R, K, eps):
    return _value(f, lambda: m * math.log(16 * m * R / eps) + m * m * K * math.log(4) / eps)


def theorem_4_4_constant(K_l, K_f, R_theta, R_X, R_Y, M):
    r"""Constant B of Thm 4.4: :math:`B = 6 K_\ell K_f e^{K_f R_\Theta} (R_X + M R_\Theta e^{K_f R_\Theta} + R_Y)`
    (the printed R_V read as R_Y, the bound on the targets).

    Parameters
    ----------
    K_l : float
        Lipschitz constant of the loss, K_l > 0.
    K_f : float
        Lipschitz constant of the maps f_i, K_f > 0.
    R_theta : float
        Bound R_Theta > 0 on the (1, inf)-norm of the parameters.
    R_X, R_Y : float
        Bounds on the inputs and the targets, > 0.
    M : float
        Bound on the maps f_i, M >= 0.

    Returns
    -------
    float
        B.

    Raises
    ------
    TypeError
        An argument that is not a real number.
    ValueError
        An argument outside its range, NaN or infinite.
    NonFiniteError
        B overflows float64.
    """
    f = _PKG + "theorem_4_4_constant"
    K_l, K_f, R = _pos(K_l, "K_l", f), _pos(K_f, "K_f", f), _pos(R_theta, "R_theta", f)
    R_X, R_Y, M = _pos(R_X, "R_X", f), _pos(R_Y, "R_Y", f), _pos(M, "M", f, True)

    def compute():
        e = math.exp(K_f * R)
        return 6 * K_l * K_f * e * (R_X + M * R * e + R_Y)

    return _value(f, compute)


def _n_delta(n, delta, func):
    n = _size(n, func)
    delta = check_interval(delta, "delta", 0.0, 1.0, func=func)
    return n, delta


def theorem_4_4_gap(n, delta, m, K_theta, R_theta, B):
    r"""Right-hand side of Thm 4.4 minus the empirical risk: with probability at least 1 - delta,

    .. math::

        \mathcal{R}(\theta) - \widehat{\mathcal{R}}_n(\theta) \le B \sqrt{\frac{(m+1) \log(R_\Theta m n)}{n}}
        + \frac{B m \sqrt{K_\Theta}}{n^{1/4}} + B \sqrt{\frac{\log(1/\delta)}{n}},

    for n >= 9 max(m^-2 R_Theta^-2, 1).

    Parameters
    ----------
    n : int
        Sample size, n >= 9 max(m^-2 R_Theta^-2, 1).
    delta : float
        Confidence level, in (0, 1).
    m : int
        Number of parameter functions, 1 <= m <= 2**53.
    K_theta : float
        Lipschitz constant K_Theta >= 0 of the parameters.
    R_theta : float
        Radius R_Theta > 0.
    B : float
        The constant of :func:`theorem_4_4_constant`, B > 0.

    Returns
    -------
    float
        The bound on the generalization gap.

    Raises
    ------
    TypeError
        ``n`` or ``m`` not an integer, another argument not a real number.
    ValueError
        An argument outside its range, NaN or infinite; ``n`` below the theorem's threshold (it does not apply).
    NonFiniteError
        The bound overflows float64.
    """
    f = _PKG + "theorem_4_4_gap"
    n, delta = _n_delta(n, delta, f)
    m = _dim(m, "m", f)
    K, R, B = _pos(K_theta, "K_theta", f, True), _pos(R_theta, "R_theta", f), _pos(B, "B", f)
    need = _threshold(lambda: 9 * max(1 / (m * R) ** 2, 1.0))
    if n < need:
        raise ValueError(f"`n` of {f} must be >= 9 max(m^-2 R_theta^-2, 1) = {need:g}; got {n}.")
    return _value(f, lambda: (B * math.sqrt((m + 1) * math.log(R * m * n) / n) + B * m * math.sqrt(K) / n ** 0.25
                              + B * math.sqrt(math.log(1 / delta) / n)))


def corollary_4_5_constant(K_l, K_sigma, R_W, R_X, R_Y, M):
    r"""Constant B of Cor. 4.5 (neural ODEs (4.8)):
    :math:`B = 6 \sqrt{2} K_\ell K_\sigma e^{K_\sigma R_W} (R_X + M R_W e^{K_\sigma R_W} + R_Y)`.

    Parameters
    ----------
    K_l : float
        Lipschitz constant of the loss, K_l > 0.
    K_sigma : float
        Lipschitz constant of the activation, K_sigma > 0.
    R_W : float
        Bound on the (1, 1)-norm of the weights, R_W > 0.
    R_X, R_Y : float
        Bounds on the inputs and the targets, > 0.
    M : float
        Bound on the activation, M >= 0.

    Returns
    -------
    float
        B.

    Raises
    ------
    TypeError
        An argument that is not a real number.
    ValueError
        An argument outside its range, NaN or infinite.
    NonFiniteError
        B overflows float64.
    """
    f = _PKG + "corollary_4_5_constant"
    K_l, K_s, R = _pos(K_l, "K_l", f), _pos(K_sigma, "K_sigma", f), _pos(R_W, "R_W", f)
    R_X, R_Y, M = _pos(R_X, "R_X", f), _pos(R_Y, "R_Y", f), _pos(M, "M", f, True)

    def compute():
        e = math.exp(K_s * R)
        return 6 * math.sqrt(2) * K_l * K_s * e * (R_X + M * R * e + R_Y)

    return _value(f, compute)


def corollary_4_5_gap(n, delta, d, R_W, B):
    r"""Right-hand side of Cor. 4.5: :math:`B (d+1) \sqrt{\log(R_W d n) / n} + B \sqrt{\log(1/\delta) / n}`.

    Requires both the corollary's n >= 9 R_W^-1 max(d^-4 R_W^-1, 1) and Thm 4.4's n >= 9 max(d^-4 R_W^-2, 1)
    (the corollary is Thm 4.4 with m = d^2; its printed condition alone allows n = 1 at R_W = 9, d = 1).

    Parameters
    ----------
    n : int
        Sample size, above both thresholds.
    delta : float
        Confidence level, in (0, 1).
    d : int
        Width, 1 <= d <= 2**53.
    R_W : float
        Bound on the weights, R_W > 0.
    B : float
        The constant of :func:`corollary_4_5_constant`, B > 0.

    Returns
    -------
    float
        The bound on the generalization gap.

    Raises
    ------
    TypeError
        ``n`` or ``d`` not an integer, another argument not a real number.
    ValueError
        An argument outside its range, NaN or infinite; ``n`` below a threshold.
    NonFiniteError
        The bound overflows float64.
    """
    f = _PKG + "corollary_4_5_gap"
    n, delta = _n_delta(n, delta, f)
    d = _dim(d, "d", f)
    R, B = _pos(R_W, "R_W", f), _pos(B, "B", f)
    need = _threshold(lambda: max(9 / R * max(1 / (d ** 4 * R), 1.0), 9 * max(1 / (d ** 4 * R * R), 1.0)))
    if n < need:
        raise ValueError(f"`n` of {f} must be >= {need:g} (Cor. 4.5 and Thm 4.4 conditions); got {n}.")
    return _value(f, lambda: B * (d + 1) * math.sqrt(math.log(R * d * n) / n) + B * math.sqrt(math.log(1 / delta) / n))


def prop_4_6_output_bound(R_X, K_sigma, R_W):
    r"""Output bound of Prop. 4.6 for the ResNet (4.10): :math:`\|F_W(x)\| \le R_X \exp(K_\sigma R_W)`.

    Parameters
    ----------
    R_X : float
        Bound on the input norm, R_X > 0.
    K_sigma : float
        Lipschitz constant of the activation (sigma(0) = 0), K_sigma > 0.
    R_W : float
        Bound on ||W||_{1,1,inf} (4.11), R_W > 0.

    Returns
    -------
    float
        R_X exp(K_sigma R_W).

    Raises
    ------
    TypeError
        An argument that is not a real number.
    ValueError
        An argument outside its range, NaN or infinite.
    NonFiniteError
        The bound overflows float64.
    """
    f = _PKG + "prop_4_6_output_bound"
    R_X, K_s, R = _pos(R_X, "R_X", f), _pos(K_sigma, "K_sigma", f), _pos(R_W, "R_W", f)
    return _value(f, lambda: R_X * math.exp(K_s * R))


def prop_4_6_lipschitz(R_X, K_sigma, R_W):
    r"""Lipschitz constant of Prop. 4.6: :math:`\|F_W(x) - F_{W'}(x)\| \le R_X e^{2 K_\sigma R_W} / R_W \,
    \|W - W'\|_{1,1,\infty}`.

    Parameters
    ----------
    R_X : float
        Bound on the input norm, R_X > 0.
    K_sigma : float
        Lipschitz constant of the activation, K_sigma > 0.
    R_W : float
        Bound on ||W||_{1,1,inf}, R_W > 0.

    Returns
    -------
    float
        R_X exp(2 K_sigma R_W) / R_W.

    Raises
    ------
    TypeError
        An argument that is not a real number.
    ValueError
        An argument outside its range, NaN or infinite.
    NonFiniteError
        The constant overflows float64.
    """
    f = _PKG + "prop_4_6_lipschitz"
    R_X, K_s, R = _pos(R_X, "R_X", f), _pos(K_sigma, "K_sigma", f), _pos(R_W, "R_W", f)
    return _value(f, lambda: R_X * math.exp(2 * K_s * R) / R)


def prop_4_7_log_covering(d, R_W, K_W, eps):
    r"""Log covering number of Prop. 4.7: :math:`d^2 \log(16 d^2 R_W / \varepsilon) + d^4 K_W \log(4) / \varepsilon`
    (Prop. 4.3 with m = d^2 through the isometry :func:`~theory.generalization.resnet_to_path`).

    Parameters
    ----------
    d : int
        Width, 1 <= d <= 2**26 (so that m = d^2 <= 2**52).
    R_W : float
        Bound on ||W||_{1,1,inf}, R_W > 0.
    K_W : float
        Bound K_W >= 0 of (4.12).
    eps : float
        Covering radius eps > 0.

    Returns
    -------
    float
        The right-hand side.

    Raises
    ------
    TypeError
        ``d`` not an integer, another argument not a real number.
    ValueError
        An argument outside its range, NaN or infinite.
    NonFiniteError
        The bound overflows float64.
    """
    f = _PKG + "prop_4_7_log_covering"
    d = check_int(d, "d", func=f, minimum=1, maximum=2**26)
    return _log_covering(f, d * d, _pos(R_W, "R_W", f), _pos(K_W, "K_W", f, True), _pos(eps, "eps", f))


def theorem_4_8_constant(K_l, K_sigma, R_W, R_X, R_Y):
    r"""Constant B of Thm 4.8: :math:`B = 6 \sqrt{2} K_\ell \max(e^{K_\sigma R_W} / R_W, 1)
    (R_X e^{K_\sigma R_W} + R_Y)`.

    Parameters
    ----------
    K_l : float
        Lipschitz constant of the loss, K_l > 0.
    K_sigma : float
        Lipschitz constant of the activation, K_sigma > 0.
    R_W : float
        Bound on ||W||_{1,1,inf}, R_W > 0.
    R_X, R_Y : float
        Bounds on the inputs and the targets, > 0.

    Returns
    -------
    float
        B.

    Raises
    ------
    TypeError
        An argument that is not a real number.
    ValueError
        An argument outside its range, NaN or infinite.
    NonFiniteError
        B overflows float64.
    """
    f = _PKG + "theorem_4_8_constant"
    K_l, K_s, R = _pos(K_l, "K_l", f), _pos(K_sigma, "K_sigma", f), _pos(R_W, "R_W", f)
    R_X, R_Y = _pos(R_X, "R_X", f), _pos(R_Y, "R_Y", f)

    def compute():
        e = math.exp(K_s * R)
        return 6 * math.sqrt(2) * K_l * max(e / R, 1.0) * (R_X * e + R_Y)

    return _value(f, compute)


def theorem_4_8_gap(n, delta, d, R_W, K_W, B):
    r"""Right-hand side of (4.13) (Thm 4.8) minus the empirical risk:

    .. math::

        B (d+1) \sqrt{\frac{\log(R_W d n)}{n}} + \frac{B d^2 \sqrt{K_W}}{n^{1/4}} + B \sqrt{\frac{\log(1/\delta)}{n}},

    for n >= 9 R_W^-1 max(d^-4 R_W^-1, 1).

    Parameters
    ----------
    n : int
        Sample size, above the theorem's threshold.
    delta : float
        Confidence level, in (0, 1).
    d : int
        Width, 1 <= d <= 2**53.
    R_W : float
        Bound on ||W||_{1,1,inf}, R_W > 0.
    K_W : float
        Bound K_W >= 0 of (4.12).
    B : float
        The constant of :func:`theorem_4_8_constant`, B > 0.

    Returns
    -------
    float
        The bound on the generalization gap.

    Raises
    ------
    TypeError
        ``n`` or ``d`` not an integer, another argument not a real number.
    ValueError
        An argument outside its range, NaN or infinite; ``n`` below the threshold (the theorem does not apply).
    NonFiniteError
        The bound overflows float64.
    """
    f = _PKG + "theorem_4_8_gap"
    n, delta = _n_delta(n, delta, f)
    d = _dim(d, "d", f)
    R, K, B = _pos(R_W, "R_W", f), _pos(K_W, "K_W", f, True), _pos(B, "B", f)
    need = _threshold(lambda: 9 / R * max(1 / (d ** 4 * R), 1.0))
    if n < need:
        raise ValueError(f"`n` of {f} must be >= 9 R_W^-1 max(d^-4 R_W^-1, 1) = {need:g}; got {n}.")
    return _value(f, lambda: (B * (d + 1) * math.sqrt(math.log(R * d * n) / n) + B * d * d * math.sqrt(K) / n ** 0.25
                              + B * math.sqrt(math.log(1 / delta) / n)))


def corollary_4_9_complexity_bound(R, L):
    r"""Bound used for Cor. 4.9 (4.14): the spectral complexity of the ResNet (4.10) with
    :math:`\|W\|_{1,1,\infty} \le R` is at most :math:`2 R e^R \sqrt{L}` when L >= R.

    Parameters
    ----------
    R : float
        Bound on the weights, R > 0.
    L : int
        Depth, R <= L <= 2**53.

    Returns
    -------
    float
        2 R exp(R) sqrt(L).

    Raises
    ------
    TypeError
        ``R`` not a real number, ``L`` not an integer.
    ValueError
        ``R`` not positive and finite, ``L`` below R (then ||I + W_k / L|| >= 1/2 is not guaranteed).
    NonFiniteError
        The bound overflows float64.
    """
    f = _PKG + "corollary_4_9_complexity_bound"
    R = _pos(R, "R", f)
    L = _dim(L, "L", f)
    if L < R:
        raise ValueError(f"`L` of {f} must be >= R = {R:g} (then ||I + W_k / L|| >= 1/2); got {L}.")
    return _value(f, lambda: 2 * R * math.exp(R) * math.sqrt(L))
