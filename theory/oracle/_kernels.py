"""The oracle's kernels: cases (generic and hard), the float64 reference and the tolerance rule of each."""

from __future__ import annotations

import numpy as np
from numba import njit

from .._validation import check_choice, check_finite_output, check_int, check_interval, check_memory, check_work
from ._core import Case, Kernel, register


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------------------------
# isotonic regression (p = 2)


def _isotonic_cases() -> list[Case]:
    cases = []

    def add(name, y, w=None, increasing=True, **params):
        y = np.asarray(y, dtype=np.float64)
        w = np.ones_like(y) if w is None else np.asarray(w, dtype=np.float64)
        cases.append(Case(name, {"n": int(y.size), "increasing": increasing, **params},
                          {"y": y, "w": w, "increasing": bool(increasing)}))

    for n, seed in ((10, 1), (100, 2), (1000, 3)):
        r = _rng(seed)
        add(f"random_n{n}", r.standard_normal(n) + np.linspace(0, 2, n), seed=seed, law="normal + linear trend")
        r = _rng(seed + 10)
        add(f"weighted_n{n}", r.standard_normal(n) + np.linspace(0, 2, n), r.uniform(0.1, 10.0, n),
            seed=seed + 10, law="normal + trend, weights uniform(0.1, 10)")
        r = _rng(seed + 20)
        add(f"decreasing_n{n}", r.standard_normal(n) - np.linspace(0, 2, n), r.uniform(0.1, 10.0, n),
            increasing=False, seed=seed + 20, law="normal - trend, weights uniform(0.1, 10)")
    add("n1", [3.25], seed=None, law="a single point")
    add("n2_violating", [2.0, 1.0], [1.0, 3.0], seed=None, law="one violation")
    add("sorted_n50", np.arange(50.0) / 7, seed=None, law="already increasing")
    add("reversed_n200", -np.arange(200.0) / 3, _rng(4).uniform(0.5, 2, 200), seed=4, law="all decreasing: one block")
    add("constant_n30", np.full(30, -1.5), seed=None, law="constant")
    r = _rng(5)
    add("ties_n300", r.integers(0, 5, 300).astype(float), seed=5, law="integers 0..4 (many ties)")
    r = _rng(6)
    add("ties_weighted_n300", r.integers(-3, 3, 300).astype(float), r.integers(1, 4, 300).astype(float),
        increasing=False, seed=6, law="integers -3..2, integer weights 1..3")
    r = _rng(7)
    add("huge_1e300_n50", 1e300 * (r.standard_normal(50) + np.linspace(0, 1, 50)), r.uniform(0.5, 2, 50),
        seed=7, law="normal * 1e300")
    r = _rng(8)
    add("tiny_1e-300_n50", 1e-300 * (r.standard_normal(50) + np.linspace(0, 1, 50)), r.uniform(0.5, 2, 50),
        seed=8, law="normal * 1e-300")
    r = _rng(9)
    add("nearly_singular_weights_n100", r.standard_normal(100),
        10.0 ** r.uniform(-12, 12, 100), seed=9, law="normal; weights 10^uniform(-12, 12)")
    r = _rng(11)
    add("random_walk_n10000", np.cumsum(r.standard_normal(10_000)), r.uniform(0.5, 2, 10_000), seed=11,
        law="random walk (long blocks)")
    return cases


def _isotonic_reference(y, w, increasing):
    from theory.isotonic import isotonic_regression

    x, _ = isotonic_regression(y, w, increasing=increasing)
    return (x,)


def _isotonic_tolerance(inputs, ref, eps):
    y = inputs["y"]
    return (4.0 * y.size * eps * float(np.max(np.abs(y))),)


register(Kernel(
    name="isotonic_regression",
    module="theory.isotonic",
    signature="fn(y, w, increasing) -> x   (weighted least squares, p = 2; w > 0; x nondecreasing if increasing)",
    outputs=("x",),
    make_cases=_isotonic_cases,
    reference=_isotonic_reference,
    tolerance=_isotonic_tolerance,
    rule="max|x - x_ref| <= 4 n eps max|y|",
    why="each fitted value is a weighted mean of a block of responses: a running weighted sum of at most n "
        "terms rounds by at most n eps max|y| whatever the weights (they cancel in the ratio), and the fit is "
        "a continuous function of y, so a different pooling decision at a near-tie moves it by the same order",
))


# ----------------------------------------------------------------------------------------------
# top-k operators (topk Section 7.4): mask, magnitude and their Jacobians


def _topk_inputs() -> list[tuple[str, dict, dict]]:
    """(name, params, inputs) shared by the three top-k kernels; each regime of the operators."""
    out = []
    for p, ptag in ((2.0, "p2"), (4.0 / 3.0, "p4_3")):
        for n, seed in ((5, 21), (100, 22)):
            k = max(1, n // 4)
            x = _rng(seed).standard_normal(n)
            gaps = np.diff(np.sort(x))
            for regime, reg in (("hard", 0.25 * float(gaps.min())), ("partial", 1.0), ("smooth", 1e3)):
                out.append((f"{regime}_{ptag}_n{n}", {"seed": seed, "law": "standard normal", "n": n, "k": k,
                                                      "regime": regime, "p": p, "reg": reg},
                            {"x": x, "k": k, "reg": float(reg), "p": p}))
        r = _rng(23)
        out.append((f"k1_{ptag}_n20", {"seed": 23, "n": 20, "k": 1, "p": p, "reg": 0.5},
                    {"x": r.standard_normal(20), "k": 1, "reg": 0.5, "p": p}))
        out.append((f"k_n_minus_1_{ptag}_n20", {"seed": 24, "n": 20, "k": 19, "p": p, "reg": 0.5},
                    {"x": _rng(24).standard_normal(20), "k": 19, "reg": 0.5, "p": p}))
        out.append((f"n2_{ptag}", {"n": 2, "k": 1, "p": p, "reg": 1.0},
                    {"x": np.array([0.3, -0.2]), "k": 1, "reg": 1.0, "p": p}))
        out.append((f"huge_1e300_{ptag}_n10", {"seed": 25, "n": 10, "k": 3, "p": p, "reg": "1e300 (p=2)"},
                    {"x": 1e300 * _rng(25).standard_normal(10), "k": 3, "reg": 1e300 if p == 2 else 1e300 ** (1 / 3),
                     "p": p}))
        # reg scaled as the magnitude operator's law y(c x; reg c^(2-p)) = c y(x; reg) prescribes (for p = 2 a
        # tiny reg: the hard regime); a larger reg would push the outputs below the float64 range, which the
        # kernel refuses
        out.append((f"tiny_1e-300_{ptag}_n10", {"seed": 26, "n": 10, "k": 3, "p": p,
                                                "reg": "1e-300 (p=2), 1e-300^(2-p) otherwise"},
                    {"x": 1e-300 * _rng(26).standard_normal(10), "k": 3,
                     "reg": 1e-300 if p == 2 else 1e-300 ** (2 - p), "p": p}))
    return out


def _topk_ties() -> list[tuple[str, dict, dict]]:
    out = []
    for p, ptag in ((2.0, "p2"), (4.0 / 3.0, "p4_3")):
        x = np.array([1.0, 1.0, 1.0, 0.5, 0.5, -0.25, 1.0, 0.5])
        out.append((f"ties_{ptag}", {"n": 8, "k": 2, "p": p, "reg": 0.1, "law": "repeated values"},
                    {"x": x, "k": 2, "reg": 0.1, "p": p}))
        out.append((f"ties_at_kth_{ptag}", {"n": 6, "k": 3, "p": p, "reg": 1e-3, "law": "3rd = 4th largest"},
                    {"x": np.array([3.0, 2.0, 1.0, 1.0, 0.0, -1.0]), "k": 3, "reg": 1e-3, "p": p}))
    return out


def _topk_cases(mode=None, ties=True):
    def make():
        rows = _topk_inputs() + (_topk_ties() if ties else [])
        cases = []
        for name, params, inputs in rows:
            inputs = dict(inputs)
            if mode is not None:
                inputs["mode"] = mode
                params = {**params, "mode": mode}
            cases.append(Case(name, params, inputs))
        return cases
    return make


def _q_minus_1(p):
    return 1.0 / (p - 1.0)  # q - 1 with q = p/(p-1)


def _topk_value_tolerance(mode):
    def tol(inputs, ref, eps):
        from theory.topk import jacobian

        x, p, reg = inputs["x"], inputs["p"], inputs["reg"]
        s = float(np.max(np.abs(x)))
        if p == 2.0 and s > 0:
            # homogeneity at p = 2: mask(c x; c reg) = mask(x; reg), magnitude(c x; reg) = c magnitude(x; reg),
            # so ||J|| max|x| is computed on x / max|x| (the Jacobian itself overflows for max|x| near 1e-300)
            J = jacobian(x / s, inputs["k"], reg / s if mode == "mask" else reg, p, mode=mode)
            amplified = float(np.max(np.sum(np.abs(J), axis=1))) * (1.0 if mode == "mask" else s)
        else:
            J = jacobian(x, inputs["k"], reg, p, mode=mode)
            amplified = float(np.max(np.sum(np.abs(J), axis=1))) * s
        return (4.0 * max(1.0, _q_minus_1(p)) * x.size * eps * (float(np.max(np.abs(ref[0]))) + amplified),)
    return tol


def _jacobian_tolerance(inputs, ref, eps):
    x, p, reg = inputs["x"], inputs["p"], inputs["reg"]
    scale = float(np.max(np.abs(ref[0])))
    return (8.0 * max(1.0, _q_minus_1(p)) * x.size * eps * scale * (1.0 + float(np.max(np.abs(x))) ** (p - 1) / reg),)


_TOPK_WHY = ("p = 2: the operator is a Euclidean projection of x/reg, so an input rounding of eps max|x| moves it by "
             "at most ||J||_inf eps max|x| (J its Jacobian, the condition number in absolute terms); the pooled values "
             "are means of at most n terms, hence the factor n. p = 4/3: y = reg^(1-q) |x-u|^(q-1) adds the factor "
             "q - 1 = 3 of the power. Ties and a tie at the k-th entry are included for the values (the operator is "
             "continuous there); hard, partial and smooth regimes each appear")

register(Kernel(
    name="topk_mask",
    module="theory.topk",
    signature="fn(x, k, reg, p) -> y   (regularised top-k mask, y in [0, 1]^n, sum y = k)",
    outputs=("y",),
    make_cases=_topk_cases(),
    reference=lambda x, k, reg, p: (__import__("theory.topk", fromlist=["topk_mask"]).topk_mask(x, k, reg, p),),
    tolerance=_topk_value_tolerance("mask"),
    rule="max|y - y_ref| <= 4 max(1, q-1) n eps (max|y_ref| + ||J(x)||_inf max|x|), q = p/(p-1)",
    why=_TOPK_WHY,
))

register(Kernel(
    name="topk_magnitude",
    module="theory.topk",
    signature="fn(x, k, reg, p) -> y   (regularised top-k in magnitude, the thesis operator)",
    outputs=("y",),
    make_cases=_topk_cases(),
    reference=lambda x, k, reg, p: (__import__("theory.topk", fromlist=["topk_magnitude"]).topk_magnitude(x, k, reg, p),),
    tolerance=_topk_value_tolerance("magnitude"),
    rule="max|y - y_ref| <= 4 max(1, q-1) n eps (max|y_ref| + ||J(x)||_inf max|x|), q = p/(p-1)",
    why=_TOPK_WHY,
))


def _jacobian_cases():
    rows = _topk_inputs()
    cases = []
    for mode in ("mask", "magnitude"):
        for name, params, inputs in rows:
            if mode == "mask" and name == "tiny_1e-300_p2_n10":
                continue  # the mask's Jacobian is of order 1/reg = 1e300 and overflows inside theory.topk
            cases.append(Case(f"{mode}_{name}", {**params, "mode": mode}, {**inputs, "mode": mode}))
    return cases


register(Kernel(
    name="topk_jacobian",
    module="theory.topk",
    signature="fn(x, k, reg, p, mode) -> J   (n x n Jacobian of topk_mask (mode='mask') or topk_magnitude)",
    outputs=("J",),
    make_cases=_jacobian_cases,
    reference=lambda x, k, reg, p, mode: (__import__("theory.topk", fromlist=["jacobian"]).jacobian(x, k, reg, p, mode=mode),),
    tolerance=_jacobian_tolerance,
    rule="max|J - J_ref| <= 8 max(1, q-1) n eps max|J_ref| (1 + max|x|^(p-1)/reg)",
    why="the Jacobian is piecewise smooth: constant on each pooling pattern for p = 2 (entries 1/reg times block "
        "averages, rounded once per block sum), and for p = 4/3 a power of (x - u)/reg whose relative change under an "
        "input rounding is (q-1) eps max|x|^(p-1)/reg. Exact ties are left out: there the Jacobian jumps and any "
        "element of the Clarke subdifferential is a correct answer",
))


# ----------------------------------------------------------------------------------------------
# depth-N residual networks (theory.resnet): forward, reverse, gradient; Euler and Heun


def _resnet_rows(long=False):
    rows = []
    d = 4
    for scheme in ("euler", "heun"):
        for residual in ("linear", "tanh", "tanh_out"):
            for N, seed in ((1, 31), (10, 32), (100, 33)):
                r = _rng(seed)
                slices = N + 1 if scheme == "heun" else N
                theta = r.standard_normal((slices, d, d)) / np.sqrt(d)
                x0 = r.standard_normal(d)
                rows.append((f"{scheme}_{residual}_N{N}",
                             {"seed": seed, "N": N, "d": d, "scheme": scheme, "residual": residual,
                              "law": "theta ~ N(0, 1/d), x0 ~ N(0, 1)"},
                             {"x0": x0, "theta": theta, "residual": residual, "scheme": scheme}))
            if long:
                N, seed = 10_000, 34
                r = _rng(seed)
                slices = N + 1 if scheme == "heun" else N
                s = np.linspace(0, 1, slices)[:, None, None]
                theta = np.cos(2 * np.pi * s) * r.standard_normal((1, d, d)) / np.sqrt(d)
                rows.append((f"{scheme}_{residual}_N10000",
                             {"seed": seed, "N": N, "d": d, "scheme": scheme, "residual": residual,
                              "law": "theta_n = cos(2 pi n/N) A, A ~ N(0, 1/d) (smooth in depth)"},
                             {"x0": r.standard_normal(d), "theta": theta, "residual": residual, "scheme": scheme}))
    r = _rng(35)
    rows.append(("euler_tanh_out_large_theta_N50",
                 {"seed": 35, "N": 50, "d": 4, "scheme": "euler", "residual": "tanh_out", "law": "theta ~ N(0, 9/d)"},
                 {"x0": r.standard_normal(4), "theta": 3 * r.standard_normal((50, 4, 4)) / 2, "residual": "tanh_out",
                  "scheme": "euler"}))
    return rows


def _lipschitz_sum(theta):
    """Lambda = mean over layers of ||theta_n||_inf: the flow amplifies errors by at most exp(Lambda)."""
    return float(np.mean(np.max(np.sum(np.abs(theta), axis=-1), axis=-1)))


def _resnet_traj_tolerance(inputs, ref, eps):
    theta = inputs["theta"]
    N, d = theta.shape[0], theta.shape[-1]
    return (4.0 * (N + d) * eps * float(np.max(np.abs(ref[0]))) * np.exp(_lipschitz_sum(theta)),)


_RESNET_WHY = ("each layer rounds x_n + f(x_n, theta_n)/N (a d-term dot product and an addition) by about "
               "(d + 1) eps max|x|, and the discrete flow amplifies an error made at layer n by at most "
               "prod (1 + Lip_m/N) <= exp(Lambda) with Lip_m <= ||theta_m||_inf for the linear, tanh and tanh_out "
               "residuals; N layers add up to N of these")


def _resnet_forward_ref(x0, theta, residual, scheme):
    from theory.resnet import forward

    return (forward(x0, theta, residual, scheme),)


register(Kernel(
    name="resnet_forward",
    module="theory.resnet",
    signature="fn(x0, theta, residual, scheme) -> x   (trajectory (N+1, d); theta (N, d, d), (N+1, d, d) for heun)",
    outputs=("x",),
    make_cases=lambda: [Case(*row) for row in _resnet_rows(long=True)],
    reference=_resnet_forward_ref,
    tolerance=_resnet_traj_tolerance,
    rule="max|x - x_ref| <= 4 (N + d) eps max|x_ref| exp(Lambda), Lambda = mean_n ||theta_n||_inf",
    why=_RESNET_WHY,
))


def _reverse_cases():
    from theory.resnet import forward

    cases = []
    for name, params, inputs in _resnet_rows(long=False):
        xN = forward(inputs["x0"], inputs["theta"], inputs["residual"], inputs["scheme"])[-1]
        cases.append(Case(name, {**params, "xN": "forward(x0, theta)[-1]"},
                          {"xN": xN, "theta": inputs["theta"], "residual": inputs["residual"],
                           "scheme": inputs["scheme"]}))
    return cases


def _resnet_reverse_ref(xN, theta, residual, scheme):
    from theory.resnet import reverse

    return (reverse(xN, theta, residual, scheme),)


register(Kernel(
    name="resnet_reverse",
    module="theory.resnet",
    signature="fn(xN, theta, residual, scheme) -> x   (the reverse-time reconstruction, (N+1, d))",
    outputs=("x",),
    make_cases=_reverse_cases,
    reference=_resnet_reverse_ref,
    tolerance=_resnet_traj_tolerance,
    rule="max|x - x_ref| <= 4 (N + d) eps max|x_ref| exp(Lambda), Lambda = mean_n ||theta_n||_inf",
    why=_RESNET_WHY + " (backwards in depth)",
))


def _gradient_cases():
    cases = []
    for name, params, inputs in _resnet_rows(long=False):
        r = _rng(params["seed"] + 100)
        cases.append(Case(name, {**params, "y": "N(0, 1), seed + 100"},
                          {"x0": inputs["x0"], "theta": inputs["theta"], "y": r.standard_normal(4),
                           "residual": inputs["residual"], "scheme": inputs["scheme"]}))
    return cases


def _resnet_gradient_ref(x0, theta, y, residual, scheme):
    from theory.resnet import gradient

    return tuple(gradient(x0, theta, y, residual, scheme, method="backprop"))


def _resnet_gradient_tolerance(inputs, ref, eps):
    from theory.resnet import forward

    theta = inputs["theta"]
    N, d = theta.shape[0], theta.shape[-1]
    x = forward(inputs["x0"], theta, inputs["residual"], inputs["scheme"])
    amp = np.exp(2.0 * _lipschitz_sum(theta))
    r = float(np.max(np.abs(x[-1] - inputs["y"])))
    scale = max(1.0, float(np.max(np.abs(x))))
    base = 8.0 * (N + d) * eps * amp
    return (base * (float(np.max(np.abs(ref[0]))) + r * scale / N), base * (float(np.max(np.abs(ref[1]))) + r))


register(Kernel(
    name="resnet_gradient",
    module="theory.resnet",
    signature="fn(x0, theta, y, residual, scheme) -> (grad_theta, grad_x0)   (of 1/2 ||x_N - y||^2, exact backprop)",
    outputs=("grad_theta", "grad_x0"),
    make_cases=_gradient_cases,
    reference=_resnet_gradient_ref,
    tolerance=_resnet_gradient_tolerance,
    rule="max|g - g_ref| <= 8 (N + d) eps exp(2 Lambda) (max|g_ref| + |x_N - y|_inf max(1, max|x|)/N) "
         "(grad_x0: without the 1/N and max|x|)",
    why=_RESNET_WHY + "; the backward pass propagates the residual x_N - y through the transposed layer Jacobians "
        "(another factor exp(Lambda)) and each parameter gradient is an outer product with x_n scaled by 1/N",
))


def _adjoint_cases():
    cases = _gradient_cases()
    r = _rng(36)
    for scheme in ("euler", "heun"):
        N = 2000
        slices = N + 1 if scheme == "heun" else N
        s = np.linspace(0, 1, slices)[:, None, None]
        theta = np.cos(2 * np.pi * s) * r.standard_normal((1, 4, 4)) / 2
        cases.append(Case(f"{scheme}_tanh_N2000", {"seed": 36, "N": N, "d": 4, "scheme": scheme, "residual": "tanh",
                                                   "law": "theta_n = cos(2 pi n/N) A, A ~ N(0, 1/d) (smooth in depth)",
                                                   "y": "N(0, 1)"},
                          {"x0": r.standard_normal(4), "theta": theta, "y": r.standard_normal(4), "residual": "tanh",
                           "scheme": scheme}))
    return cases


def _resnet_adjoint_ref(x0, theta, y, residual, scheme):
    from theory.resnet import gradient

    return tuple(gradient(x0, theta, y, residual, scheme, method="adjoint"))


def _resnet_adjoint_tolerance(inputs, ref, eps):
    g_theta, g_x0 = _resnet_gradient_tolerance(inputs, ref, eps)
    amp = np.exp(_lipschitz_sum(inputs["theta"]))  # the reverse-time reconstruction: one more flow
    return (g_theta * amp, g_x0 * amp)


register(Kernel(
    name="resnet_gradient_adjoint",
    module="theory.resnet",
    signature="fn(x0, theta, y, residual, scheme) -> (grad_theta, grad_x0)   (the memory-free adjoint: x_N "
              "forward, then x_n rebuilt by the reverse-time scheme while backpropagating)",
    outputs=("grad_theta", "grad_x0"),
    make_cases=_adjoint_cases,
    reference=_resnet_adjoint_ref,
    tolerance=_resnet_adjoint_tolerance,
    rule="the resnet_gradient rule times exp(Lambda): "
         "max|g - g_ref| <= 8 (N + d) eps exp(3 Lambda) (max|g_ref| + |x_N - y|_inf max(1, max|x|)/N)",
    why=_RESNET_WHY + "; the adjoint reconstructs x_n backwards from x_N (the reverse scheme, another factor "
        "exp(Lambda) on the rounding errors) before backpropagating along the reconstruction. The adjoint differs "
        "from the exact gradient by O(1/N^2) per Euler slice and O(Delta_theta/N^2 + 1/N^3) per Heun slice (Prop. 4 "
        "and 6 of the resnet-node paper), far above this rounding rule at small N: an exact backprop fails these "
        "vectors and an adjoint fails resnet_gradient's",
))


# ----------------------------------------------------------------------------------------------
# the deep linear ResNet (theory.linear)


def _linear_rows():
    rows = []
    for N, d, seed in ((1, 1, 41), (1, 3, 42), (10, 3, 43), (100, 5, 44), (1000, 3, 45)):
        r = _rng(seed)
        theta = r.standard_normal((N, d, d))
        A = r.standard_normal((d, d))
        Sigma = A @ A.T / d + 0.1 * np.eye(d)
        rows.append((f"random_N{N}_d{d}", {"seed": seed, "N": N, "d": d,
                                            "law": "theta ~ N(0,1); Sigma = A A^T/d + 0.1 I; B ~ N(0,1)"},
                     {"theta": theta, "Sigma": Sigma, "B": r.standard_normal((d, d))}))
    r = _rng(46)
    Q, _ = np.linalg.qr(r.standard_normal((4, 4)))
    Sigma = Q @ np.diag([1.0, 1e-4, 1e-8, 1e-12]) @ Q.T
    rows.append(("nearly_singular_Sigma_N20_d4", {"seed": 46, "N": 20, "d": 4, "law": "Sigma eigenvalues 1..1e-12"},
                 {"theta": r.standard_normal((20, 4, 4)), "Sigma": (Sigma + Sigma.T) / 2, "B": r.standard_normal((4, 4))}))
    r = _rng(47)
    rows.append(("zero_theta_N50_d3", {"seed": 47, "N": 50, "d": 3, "law": "theta = 0 (Pi = I)"},
                 {"theta": np.zeros((50, 3, 3)), "Sigma": np.eye(3), "B": r.standard_normal((3, 3))}))
    r = _rng(48)
    rows.append(("large_theta_N10_d3", {"seed": 48, "N": 10, "d": 3, "law": "theta ~ N(0, 100)"},
                 {"theta": 10 * r.standard_normal((10, 3, 3)), "Sigma": np.eye(3), "B": r.standard_normal((3, 3))}))
    return rows


def _linear_growth(theta):
    N = theta.shape[0]
    norms = np.max(np.sum(np.abs(theta), axis=-1), axis=-1)
    return float(np.exp(np.sum(np.log1p(norms / N))))  # prod (1 + ||theta_n||_inf / N) >= every partial product


def _linear_product_tol(inputs, ref, eps):
    theta = inputs["theta"]
    N, d = theta.shape[0], theta.shape[-1]
    return (4.0 * (N + d) * eps * _linear_growth(theta),)


def _linear_loss_tol(inputs, ref, eps):
    theta, Sigma, B = inputs["theta"], inputs["Sigma"], inputs["B"]
    N, d = theta.shape[0], theta.shape[-1]
    M = _linear_growth(theta) + float(np.max(np.sum(np.abs(B), axis=-1)))
    return (8.0 * (N + d) * eps * d * d * float(np.max(np.abs(Sigma))) * M * M,)


def _linear_gradient_tol(inputs, ref, eps):
    theta, Sigma, B = inputs["theta"], inputs["Sigma"], inputs["B"]
    N, d = theta.shape[0], theta.shape[-1]
    P = _linear_growth(theta)
    M = P + float(np.max(np.sum(np.abs(B), axis=-1)))
    return (8.0 * (N + d) * eps * (2.0 / N) * d * d * float(np.max(np.abs(Sigma))) * P * P * M,)


_LINEAR_WHY = ("every partial product of the layers I + theta_n/N is bounded by P = prod(1 + ||theta_n||_inf/N); a "
               "product of N matrices rounds by about (N + d) eps P (d-term dot products, N factors); the loss is a "
               "quadratic form in Pi - B (|Pi - B| <= M = P + ||B||_inf) and the gradient "
               "(2/N) Pi_after^T (Pi - B) Sigma Pi_before^T a product of three such factors")


def _linear_ref(name):
    def ref(**inputs):
        import theory.linear as L

        if name == "product":
            return (L.product(inputs["theta"]),)
        return (np.asarray(getattr(L, name)(inputs["theta"], inputs["Sigma"], inputs["B"])),)
    return ref


register(Kernel(
    name="linear_product",
    module="theory.linear",
    signature="fn(theta) -> Pi   (Pi = (I + theta_N/N) ... (I + theta_1/N), theta (N, d, d), theta[0] = theta_1)",
    outputs=("Pi",),
    make_cases=lambda: [Case(n, p, {"theta": i["theta"]}) for n, p, i in _linear_rows()],
    reference=_linear_ref("product"),
    tolerance=_linear_product_tol,
    rule="max|Pi - Pi_ref| <= 4 (N + d) eps P, P = prod_n (1 + ||theta_n||_inf / N)",
    why=_LINEAR_WHY,
))

register(Kernel(
    name="linear_loss",
    module="theory.linear",
    signature="fn(theta, Sigma, B) -> loss   (Tr((Pi - B) Sigma (Pi - B)^T), a 0-d array or float)",
    outputs=("loss",),
    make_cases=lambda: [Case(*row) for row in _linear_rows()],
    reference=_linear_ref("loss"),
    tolerance=_linear_loss_tol,
    rule="|loss - loss_ref| <= 8 (N + d) eps d^2 max|Sigma| M^2, M = P + ||B||_inf",
    why=_LINEAR_WHY,
))

register(Kernel(
    name="linear_gradient",
    module="theory.linear",
    signature="fn(theta, Sigma, B) -> grad   ((N, d, d): the true gradient of the loss, factor 2 included)",
    outputs=("grad",),
    make_cases=lambda: [Case(*row) for row in _linear_rows()],
    reference=_linear_ref("gradient"),
    tolerance=_linear_gradient_tol,
    rule="max|g - g_ref| <= 8 (N + d) eps (2/N) d^2 max|Sigma| P^2 M",
    why=_LINEAR_WHY,
))


# ----------------------------------------------------------------------------------------------
# random samplers, verified statistically: fractional Gaussian noise (theory.fbm.fgn)

#: false-alarm rate of a statistical case: two statistics, each two-sided at ALPHA/2 (Bonferroni)
ALPHA = 0.01
_FGN_DRAWS = 1000


def _fgn_cases():
    cases = []
    for hurst, seed in ((0.5, 51), (0.2, 52), (0.75, 53), (0.95, 54)):
        n = 64
        cases.append(Case(f"fgn_H{hurst}_n{n}", {"n": n, "hurst": hurst, "draws": _FGN_DRAWS, "seed": seed},
                          {"n": n, "hurst": hurst, "size": _FGN_DRAWS, "seed": seed}))
    return cases


def _fgn_cov(n, hurst):
    from scipy.linalg import toeplitz

    from theory.fbm import autocovariance

    return toeplitz(autocovariance(np.arange(n), hurst))


def _fgn_statistics_moments(C, draws):
    """Mean and standard deviation of the two standardized statistics when the whitened draws have covariance C
    (C = I under the null): A = (sum z^2 - M n)/sqrt(2 M n), B = sum_m z_m^T K z_m / sqrt(M (n - 1))."""
    n = C.shape[0]
    K = (np.eye(n, k=1) + np.eye(n, k=-1)) / 2
    KC = K @ C
    meanA = draws * (np.trace(C) - n) / np.sqrt(2 * draws * n)
    sdA = np.sqrt(2 * draws * np.sum(C * C.T) / (2 * draws * n))
    meanB = draws * np.trace(KC) / np.sqrt(draws * (n - 1))
    sdB = np.sqrt(draws * 2 * np.sum(KC * KC.T) / (draws * (n - 1)))
    return (meanA, sdA), (meanB, sdB)


def _power(moments, crit):
    from scipy.stats import norm

    p = 1.0
    for mean, sd in moments:
        p *= norm.cdf(crit, mean, sd) - norm.cdf(-crit, mean, sd)  # accept both (independence approximation)
    return 1.0 - p


#: the alternatives of :func:`fgn_power` and :func:`fbm_power`
FGN_ALTERNATIVES = ("H+0.05", "H-0.05", "white")
FBM_ALTERNATIVES = ("H+0.05", "H-0.05", "brownian", "unscaled")


def _check_power_args(n, hurst, draws, alternative, choices, func):
    """The arguments of the power functions, validated; the n x n covariances (a handful of them, and
    a Cholesky factor and an inverse at about n^3 operations each) checked against the limits."""
    n = check_int(n, "n", func=func, minimum=2)
    hurst = check_interval(hurst, "hurst", 0.0, 1.0, func=func)
    draws = check_int(draws, "draws", func=func, minimum=1, maximum=2**53)
    alternative = check_choice(alternative, "alternative", choices, func=func)
    check_memory(8 * 8 * n * n, "n", n, func=func, hint="The test holds about eight n x n covariance matrices.")
    check_work(4 * n**3, "n", n, func=func, hint="A Cholesky factor, an inverse and two products of n x n matrices.")
    return n, hurst, draws, alternative


def _whitened_power(G, G1, draws, func):
    """The power of the two statistics for the null covariance G against the alternative G1."""
    from scipy.stats import norm

    try:
        Linv = np.linalg.inv(np.linalg.cholesky(G))
    except np.linalg.LinAlgError:
        raise ValueError(f"`hurst` and `n` of {func} give a covariance that is numerically singular (its "
                         f"Cholesky factorisation fails); use a smaller `n` or a `hurst` further from 1.") from None
    power = _power(_fgn_statistics_moments(Linv @ G1 @ Linv.T, draws), norm.isf(ALPHA / 4))
    return float(check_finite_output(np.float64(power), "the power", func=func))


def fgn_power(n, hurst, draws, alternative):
    r"""Power of the oracle's fGn test (the ``fgn`` kernel) against ``alternative``.

    The draws are whitened by the exact covariance :math:`G` of fGn(H), so that under an alternative of
    covariance :math:`G_1` the whitened draws have covariance :math:`C=L^{-1}G_1L^{-\top}` (:math:`LL^\top=G`).
    The variance statistic :math:`A=(\sum z^2-Mn)/\sqrt{2Mn}` and the lag-1 statistic
    :math:`B=\sum_mz_m^\top Kz_m/\sqrt{M(n-1)}` (:math:`K` half the first off-diagonals) are taken as
    independent normals with the means and variances they have under :math:`C`; the power is the
    probability that one of them leaves :math:`\pm z_{1-\alpha/4}` (:data:`ALPHA` = 0.01).

    Parameters
    ----------
    n : int >= 2
        Length of each draw.
    hurst : float in (0, 1)
        Hurst index H of the null.
    draws : int >= 1
        Number M of independent draws.
    alternative : {"H+0.05", "H-0.05", "white"}
        fGn with H shifted by +0.05 or -0.05 (clipped to [0.01, 0.99]), or white noise (i.i.d. N(0, 1)).

    Returns
    -------
    float
        The power, in [0, 1].

    Raises
    ------
    TypeError
        ``n`` or ``draws`` not an integer, ``hurst`` not a real number, ``alternative`` not a string.
    ValueError
        ``n`` < 2, ``draws`` < 1, ``hurst`` outside (0, 1), ``alternative`` not one of the three names
        (any other string used to be taken for "H-0.05"); n above the memory or work limit.
    """
    func = "theory.oracle.fgn_power"
    n, hurst, draws, alternative = _check_power_args(n, hurst, draws, alternative, FGN_ALTERNATIVES, func)
    G = _fgn_cov(n, hurst)
    if alternative == "white":
        G1 = np.eye(n)
    else:
        G1 = _fgn_cov(n, min(0.99, max(0.01, hurst + (0.05 if alternative == "H+0.05" else -0.05))))
    return _whitened_power(G, G1, draws, func)


def _fgn_judge(inputs, ref, got):
    from scipy.linalg import solve_triangular
    from scipy.stats import chi2, norm

    G = ref[0]
    n, M = G.shape[0], got.shape[0]
    L = np.linalg.cholesky(G)
    Z = solve_triangular(L, got.T, lower=True).T          # whitened draws: i.i.d. N(0, 1) under the null
    ss = float(np.sum(Z * Z))
    pA = 2 * min(chi2.sf(ss, M * n), chi2.cdf(ss, M * n))  # exact: sum z^2 ~ chi^2(M n)
    u = np.sum(Z[:, 1:] * Z[:, :-1], axis=1)               # lag-1 products; var(sum) = M (n - 1) exactly
    B = float(np.sum(u)) / np.sqrt(M * (n - 1))
    pB = 2 * norm.sf(abs(B))
    p = min(pA, pB)
    A = (ss - M * n) / np.sqrt(2 * M * n)
    crit = float(norm.isf(ALPHA / 4))
    verdict = "pass" if p >= ALPHA / 2 else "FAIL"
    msg = (f"variance statistic {A:+.2f} (p = {pA:.2g}), lag-1 statistic {B:+.2f} (p = {pB:.2g}); "
           f"reject when either p < {ALPHA / 2:g}")
    if verdict == "FAIL":
        msg += f": the draws do not have fGn(H={inputs['hurst']})'s covariance"
    return verdict, max(abs(A), abs(B)), p, crit, msg


register(Kernel(
    name="fgn",
    module="theory.fbm",
    signature="fn(n, hurst, size, rng) -> draws   ((size, n) unit-variance fGn; rng a numpy Generator)",
    outputs=("draws",),
    make_cases=_fgn_cases,
    reference=lambda n, hurst, size, seed: (_fgn_cov(n, hurst),),
    tolerance=lambda inputs, ref, eps: (np.inf,),
    rule=f"statistical: {_FGN_DRAWS} draws whitened by the exact covariance; false alarms <= {ALPHA:.0%}",
    why=f"draws X (M x n) are whitened, Z = L^-1 X with L L^T the exact Toeplitz covariance of fGn(H); under the "
        f"null Z is i.i.d. N(0, 1), so sum Z^2 ~ chi^2(M n) exactly (the variance test) and the lag-1 sum "
        f"sum_m sum_i Z_mi Z_m,i+1 has mean 0 and variance M (n - 1) (normal by the CLT over M draws). Each test is "
        f"two-sided at {ALPHA / 2:g}: false-alarm rate <= {ALPHA:g}. Power (M = {_FGN_DRAWS}, n = 64): against white "
        f"noise in place of fGn and against H shifted by 0.05 it is stated per case by `theory.oracle.fgn_power` "
        f"(>= 0.99 for every case here against H + 0.05 and H - 0.05, and against white noise except at H = 0.5, "
        f"where white noise is fGn)",
    prepare=lambda inputs: {"n": int(inputs["n"]), "hurst": float(inputs["hurst"]), "size": int(inputs["size"]),
                            "rng": np.random.default_rng(int(inputs["seed"]))},
    shape=lambda inputs: (int(inputs["size"]), int(inputs["n"])),
    judge=_fgn_judge,
    own=lambda n, hurst, size, rng: __import__("theory.fbm", fromlist=["fgn"]).fgn(n, hurst, size=size, rng=rng),
))


# ----------------------------------------------------------------------------------------------
# soft sort and soft rank (topk Sections 7.3-7.5)


def _soft_cases():
    cases = []
    for p, ptag in ((2.0, "p2"), (4.0 / 3.0, "p4_3")):
        for n, seed in ((5, 61), (100, 62)):
            x = _rng(seed).standard_normal(n)
            for regime, reg in (("hard", 1e-3), ("partial", 1.0), ("affine", 1e3)):
                for desc in (True, False):
                    tag = "desc" if desc else "asc"
                    cases.append(Case(f"{regime}_{ptag}_n{n}_{tag}",
                                      {"seed": seed, "n": n, "p": p, "reg": reg, "regime": regime, "descending": desc},
                                      {"x": x, "reg": reg, "p": p, "descending": desc}))
        cases.append(Case(f"n1_{ptag}", {"n": 1, "p": p}, {"x": np.array([0.7]), "reg": 1.0, "p": p,
                                                          "descending": True}))
        cases.append(Case(f"ties_{ptag}", {"n": 7, "p": p, "law": "repeated values"},
                          {"x": np.array([1.0, 1.0, 0.5, 0.5, 0.5, -2.0, 1.0]), "reg": 0.3, "p": p,
                           "descending": True}))
    return cases


def _soft_tolerance(which):
    def tol(inputs, ref, eps):
        from theory.topk import soft_rank_jvp, soft_sort_jvp

        jvp = soft_sort_jvp if which == "sort" else soft_rank_jvp
        x = inputs["x"]
        n = x.size
        J = np.array([jvp(x, e, inputs["reg"], inputs["p"], inputs["descending"]) for e in np.eye(n)]).T
        cond = float(np.max(np.sum(np.abs(J), axis=1)))
        return (4.0 * max(1.0, _q_minus_1(inputs["p"])) * n * eps
                * (float(np.max(np.abs(ref[0]))) + cond * float(np.max(np.abs(x)))),)
    return tol


for _which in ("sort", "rank"):
    def _soft_ref(x, reg, p, descending, _which=_which):
        import theory.topk as T

        return ((T.soft_sort if _which == "sort" else T.soft_rank)(x, reg, p, descending),)

    register(Kernel(
        name=f"soft_{_which}",
        module="theory.topk",
        signature=f"fn(x, reg, p, descending) -> y   (p-norm regularised soft {_which}, topk Section 7.3)",
        outputs=("y",),
        make_cases=_soft_cases,
        reference=_soft_ref,
        tolerance=_soft_tolerance(_which),
        rule="max|y - y_ref| <= 4 max(1, q-1) n eps (max|y_ref| + ||J(x)||_inf max|x|), q = p/(p-1)",
        why="a projection onto the permutahedron (p = 2) or its p-norm analogue: pooled values are means of at "
            "most n terms and an input rounding of eps max|x| moves the output by ||J||_inf eps max|x| (J its "
            "Jacobian, from the package's Jacobian-vector products); p = 4/3 adds the power's factor q - 1 = 3",
    ))


# ----------------------------------------------------------------------------------------------
# scaled ResNets at initialisation (theory.scaling.forward)


def _scaling_cases():
    cases = []
    d = 4
    for arch, activations in (("res1", ("relu", "tanh", "leaky_relu", "identity")), ("res2", ("relu", "tanh")),
                              ("res3", ("relu",))):
        for activation in activations:
            for L, beta, seed in ((1, 0.5, 71), (100, 0.5, 72), (1000, 1.0, 73)):
                r = _rng(seed)
                V = r.standard_normal((L, d, d)) / np.sqrt(d)
                W = None if arch == "res1" else r.standard_normal((L, d, d)) / np.sqrt(d)
                inputs = {"h0": r.standard_normal(d), "V": V, "beta": beta, "arch": arch, "activation": activation}
                if W is not None:
                    inputs["W"] = W
                else:
                    inputs["W"] = np.zeros((0,))  # res1 has no W: an empty array stands for None
                cases.append(Case(f"{arch}_{activation}_L{L}_beta{beta}",
                                  {"seed": seed, "L": L, "d": d, "beta": beta, "arch": arch, "activation": activation,
                                   "law": "V, W ~ N(0, 1/d) entries, h0 ~ N(0, 1)"}, inputs))
    return cases


def _scaling_ref(h0, V, W, beta, arch, activation):
    from theory.scaling import forward

    return (forward(h0, V, None if W.size == 0 else W, beta, arch, activation),)


def _activation_slope(activation, z):
    if activation == "relu":
        return (z > 0).astype(float)
    if activation == "leaky_relu":
        return np.where(z > 0, 1.0, 0.8)  # the package's default negative slope
    if activation == "tanh":
        return 1.0 - np.tanh(z) ** 2
    return np.ones_like(z)


def _scaling_tol(inputs, ref, eps):
    """Amplification max_l ||d h_L / d h_l||_inf from the layer Jacobians I + L^-beta V_l diag(sigma') W_l along
    the reference trajectory, accumulated from the top."""
    V, W, beta, h = inputs["V"], inputs["W"], inputs["beta"], ref[0]
    L, d = V.shape[0], V.shape[-1]
    alpha = L ** (-beta)
    A = np.eye(d)
    amp = 1.0
    for l in range(L - 1, -1, -1):
        if W.size == 0:
            J = np.eye(d) + alpha * V[l] * _activation_slope(inputs["activation"], h[l])[None, :]
        else:
            J = np.eye(d) + alpha * (V[l] * _activation_slope(inputs["activation"], W[l] @ h[l])[None, :]) @ W[l]
        A = A @ J
        amp = max(amp, float(np.max(np.sum(np.abs(A), axis=1))))
    return (4.0 * (L + 2 * d) * eps * float(np.max(np.abs(h))) * amp,)


register(Kernel(
    name="scaling_forward",
    module="theory.scaling",
    signature="fn(h0, V, W, beta, arch, activation) -> h   ((L+1, d); W empty (shape (0,)) for res1, meaning none)",
    outputs=("h",),
    make_cases=_scaling_cases,
    reference=_scaling_ref,
    tolerance=_scaling_tol,
    rule="max|h - h_ref| <= 4 (L + 2d) eps max|h_ref| max_l ||d h_L / d h_l||_inf",
    why="each layer h + L^-beta V sigma(W h) rounds two d-term dot products and an addition (about 2d eps "
        "max|h|), and an error made at layer l reaches the output multiplied by the Jacobian of the remaining "
        "layers, the product of I + L^-beta V_k diag(sigma'(W_k h_k)) W_k along the reference trajectory (its "
        "largest infinity norm over l is the condition number used; the worst-case product of layer Lipschitz "
        "constants would be exp(L^(1-beta) ||V|| ||W||), astronomically loose for beta = 1/2)",
))


# ----------------------------------------------------------------------------------------------
# Hermite coefficients of activations (theory.pl.hermite_coefficient)


def _hermite_cases():
    from theory.pl import ACTIVATIONS

    return [Case(f"{a}_r{r}", {"activation": a, "r": r}, {"activation": a, "r": r})
            for a in ACTIVATIONS for r in (0, 1, 2, 3, 5, 10, 25, 60)]


register(Kernel(
    name="hermite_coefficient",
    module="theory.pl",
    signature="fn(activation, r) -> eta   (E[sigma(Z) He_r(Z)] / sqrt(r!), Z ~ N(0, 1); a float or 0-d array)",
    outputs=("eta",),
    make_cases=_hermite_cases,
    reference=lambda activation, r: (np.asarray(__import__("theory.pl", fromlist=["hermite_coefficient"])
                                                .hermite_coefficient(activation, r)),),
    tolerance=lambda inputs, ref, eps: (max(2e-12, 64.0 * eps),),
    rule="|eta - eta_ref| <= max(2e-12, 64 eps)",
    why="a well-conditioned integral (|eta_r| <= ||sigma||_L2(gauss)); the reference is accurate to 1e-12 "
        "absolute (closed forms or quadrature split at the kinks), so the bound is that accuracy twice; plain "
        "Gauss-Hermite quadrature of a kinked activation (ReLU) misses it at high r",
))


# ----------------------------------------------------------------------------------------------
# the scaling weight laws (theory.scaling.weights), verified statistically like fgn


#: smooth law: eigen-directions of the RBF Gram matrix kept for whitening (eigenvalue above this times the largest)
_SMOOTH_KEEP = 1e-6
#: smooth law: the sampler's covariance may differ from the RBF kernel by this much per entry (its pivoted Cholesky)
_SMOOTH_ENTRY_TOL = 1e-12


def _weights_cases():
    cases = []
    for law, hurst, seed in (("gaussian", None, 81), ("fbm", 0.3, 82), ("fbm", 0.5, 83), ("fbm", 0.9, 84),
                             ("uniform", None, 85), ("rademacher", None, 86), ("smooth", None, 87)):
        L, d = 64, 32  # d^2 = 1024 independent entry sequences of length L
        inputs = {"L": L, "d": d, "law": law, "hurst": 0.5 if hurst is None else hurst, "seed": seed}
        cases.append(Case(f"{law}" + ("" if hurst is None else f"_H{hurst}") + f"_L{L}_d{d}",
                          {"L": L, "d": d, "law": law, "hurst": hurst, "seed": seed}, inputs))
    return cases


def _rbf_gram(L):
    from theory.scaling import SMOOTH_LENGTHSCALE

    s = np.arange(1, L + 1) / L
    z = (s[:, None] - s[None, :]) / SMOOTH_LENGTHSCALE
    return np.exp(-0.5 * z * z)


def _weights_reference(L, d, law, hurst, seed):
    if law == "smooth":
        return (_rbf_gram(L),)
    return (_fgn_cov(L, hurst if law == "fbm" else 0.5),)


def _variance_lag1(Z):
    """p-values of the exact chi-square variance test and the lag-1 test on whitened draws Z (M, n)."""
    from scipy.stats import chi2, norm

    M, n = Z.shape
    ss = float(np.sum(Z * Z))
    pA = 2 * min(chi2.sf(ss, M * n), chi2.cdf(ss, M * n))
    A = (ss - M * n) / np.sqrt(2 * M * n)
    if n < 2:
        return A, pA, 0.0, 1.0
    B = float(np.sum(Z[:, 1:] * Z[:, :-1])) / np.sqrt(M * (n - 1))
    return A, pA, B, float(2 * norm.sf(abs(B)))


def _weights_judge(inputs, ref, got):
    """Three tests, each at ALPHA/3 (false alarms <= ALPHA): the variance and lag-1 statistics of the entry sequences
    whitened by the law's covariance across layers, and the marginal law (Kolmogorov-Smirnov for the continuous
    laws, the support {-1, +1} and a binomial test of the signs for Rademacher). The smooth law's Gram matrix is
    numerically singular: its sequences are whitened on the eigen-directions above 1e-6 of the largest, and the
    energy in the others must stay below 1.5 times its expectation (plus the sampler's allowed 1e-12 per entry)."""
    from scipy.stats import binomtest, kstest, uniform as unif

    L, d, law = int(inputs["L"]), int(inputs["d"]), str(inputs["law"])
    X = np.sqrt(d) * got.reshape(L, d * d).T  # (d^2, L): each entry's sequence across layers
    M = X.shape[0]
    G = ref[0]
    level = ALPHA / 3
    notes = []
    if law == "smooth":
        lam, U = np.linalg.eigh(G)
        keep = lam > _SMOOTH_KEEP * lam[-1]
        Y = X @ U
        Z = Y[:, keep] / np.sqrt(lam[keep])
        energy = float(np.sum(Y[:, ~keep] ** 2))
        allowed = 1.5 * M * float(np.sum(np.clip(lam[~keep], 0, None))) + M * L * L * _SMOOTH_ENTRY_TOL
        if not energy <= allowed:
            return ("FAIL", np.inf, 0.0, np.inf,
                    f"energy {energy:.3g} outside the RBF kernel's numerical range (allowed {allowed:.3g}): the "
                    f"sequences are not smooth across layers")
    else:
        from scipy.linalg import solve_triangular

        Z = solve_triangular(np.linalg.cholesky(G), X.T, lower=True).T
    A, pA, B, pB = _variance_lag1(Z)
    if law == "rademacher":
        if not np.all(np.abs(np.abs(X) - 1.0) <= 1e-12):
            bad = float(X.ravel()[np.argmax(np.abs(np.abs(X.ravel()) - 1.0))])
            return "FAIL", np.inf, 0.0, np.inf, f"an entry of sqrt(d) V is {bad:.6g}, not +-1"
        pC = binomtest(int(np.sum(X > 0)), X.size, 0.5).pvalue
        notes.append(f"signs: {int(np.sum(X > 0))} of {X.size} positive (p = {pC:.2g})")
    elif law == "uniform":
        pC = kstest(X.ravel(), unif(loc=-np.sqrt(3.0), scale=2 * np.sqrt(3.0)).cdf).pvalue
        notes.append(f"KS against U(-sqrt 3, sqrt 3): p = {pC:.2g}")
    else:
        pC = kstest(Z.ravel(), "norm").pvalue
        notes.append(f"KS of the whitened draws against N(0, 1): p = {pC:.2g}")
    p = min(pA, pB, pC)
    from scipy.stats import norm

    crit = float(norm.isf(level / 2))
    verdict = "pass" if p >= level else "FAIL"
    msg = (f"variance statistic {A:+.2f} (p = {pA:.2g}), lag-1 statistic {B:+.2f} (p = {pB:.2g}), {notes[0]}; "
           f"reject when a p < {level:.3g}")
    if verdict == "FAIL":
        msg += f": the draws do not follow the {law} law"
    return verdict, max(abs(A), abs(B)), p, crit, msg


def _weights_own(L, d, law, hurst, rng):
    from theory.scaling import weights

    return weights(L, d, law, hurst if law == "fbm" else None, rng)


register(Kernel(
    name="scaling_weights",
    module="theory.scaling",
    signature="fn(L, d, law, hurst, rng) -> V   ((L, d, d); law 'gaussian', 'uniform', 'rademacher', 'smooth' (RBF, "
              "length-scale 0.1, V_k at s = k/L) or 'fbm' (hurst given as 0.5 for the other laws, ignore it))",
    outputs=("V",),
    make_cases=_weights_cases,
    reference=_weights_reference,
    tolerance=lambda inputs, ref, eps: (np.inf,),
    rule="statistical: the d^2 = 1024 entry sequences of sqrt(d) V across layers, whitened by the law's covariance, "
         "plus the marginal law; false alarms <= 1%",
    why="each entry sequence of sqrt(d) V has unit variance and the law's covariance across layers: I for the "
        "i.i.d. laws, fGn(H)'s Toeplitz matrix for fbm, the RBF Gram matrix exp(-(s-s')^2/(2 0.1^2)) at s = k/L for "
        "smooth; the d^2 sequences are independent. Three tests at 1/300 each (Bonferroni): the exact chi-square "
        "variance test and the lag-1 test of the whitened sequences, and the marginal law (KS against N(0, 1) of "
        "the whitened draws, KS against U(-sqrt 3, sqrt 3) for uniform, support +-1 and a binomial sign test for "
        "Rademacher). The smooth law is whitened on the Gram matrix's eigen-directions above 1e-6 of its largest "
        "eigenvalue; the energy in the others must stay below 1.5 times its expectation (exceeded with probability "
        "below 1e-20 for 1024 sequences). Power: against i.i.d. N(0, 1) in place of fbm(H = 0.3 or 0.9) or of the "
        "smooth law, against N(0, 1) in place of uniform (Kolmogorov distance 0.03, 4 times the test's critical "
        "0.007 at 65536 entries) and against any continuous law in place of Rademacher, it is above 0.99",
    prepare=lambda inputs: {"L": int(inputs["L"]), "d": int(inputs["d"]), "law": str(inputs["law"]),
                            "hurst": float(inputs["hurst"]), "rng": np.random.default_rng(int(inputs["seed"]))},
    shape=lambda inputs: (int(inputs["L"]), int(inputs["d"]), int(inputs["d"])),
    judge=_weights_judge,
    own=_weights_own,
))


# ----------------------------------------------------------------------------------------------
# fractional Brownian motion paths (theory.fbm.fbm), verified statistically like fgn


def _fbm_cases():
    cases = []
    for hurst, length, seed in ((0.5, 1.0, 141), (0.3, 1.0, 142), (0.8, 1.0, 143), (0.8, 10.0, 145), (0.95, 1.0, 146)):
        n = 64
        cases.append(Case(f"fbm_H{hurst}_n{n}_T{length:g}", {"n": n, "hurst": hurst, "length": length,
                                                             "draws": _FGN_DRAWS, "seed": seed},
                          {"n": n, "hurst": hurst, "length": length, "size": _FGN_DRAWS, "seed": seed}))
    return cases


def _fbm_cov(n, hurst, length):
    t = np.arange(1, n + 1) * (length / n)
    h2 = 2.0 * hurst
    return 0.5 * (t[:, None] ** h2 + t[None, :] ** h2 - np.abs(t[:, None] - t[None, :]) ** h2)


def fbm_power(n, hurst, length, draws, alternative):
    r"""Power of the oracle's fBm-path test (the ``fbm`` kernel) against ``alternative``.

    As :func:`fgn_power`, with :math:`G` the covariance :math:`\frac12(t_i^{2H}+t_j^{2H}-|t_i-t_j|^{2H})`
    of fBm at the times :math:`t_i=i\,\mathrm{length}/n`, i = 1..n (the path's value at 0 is tested apart).

    Parameters
    ----------
    n : int >= 2
        Number of steps of each path.
    hurst : float in (0, 1)
        Hurst index H of the null.
    length : float > 0
        The paths' time horizon.
    draws : int >= 1
        Number M of independent paths.
    alternative : {"H+0.05", "H-0.05", "brownian", "unscaled"}
        fBm with H shifted by +0.05 or -0.05 (clipped to [0.01, 0.99]), Brownian motion (H = 1/2), or
        increments of unit variance (a path on [0, n] instead of [0, length]).

    Returns
    -------
    float
        The power, in [0, 1].

    Raises
    ------
    TypeError
        ``n`` or ``draws`` not an integer, ``hurst`` or ``length`` not a real number, ``alternative``
        not a string.
    ValueError
        ``n`` < 2, ``draws`` < 1, ``hurst`` outside (0, 1), ``length`` not positive and finite,
        ``alternative`` not one of the four names (any other string used to be taken for "H-0.05");
        n above the memory or work limit.
    """
    func = "theory.oracle.fbm_power"
    n, hurst, draws, alternative = _check_power_args(n, hurst, draws, alternative, FBM_ALTERNATIVES, func)
    length = check_interval(length, "length", 0.0, np.inf, func=func)
    G = _fbm_cov(n, hurst, length)
    if alternative == "brownian":
        G1 = _fbm_cov(n, 0.5, length)
    elif alternative == "unscaled":
        G1 = _fbm_cov(n, hurst, float(n))
    else:
        G1 = _fbm_cov(n, min(0.99, max(0.01, hurst + (0.05 if alternative == "H+0.05" else -0.05))), length)
    return _whitened_power(G, G1, draws, func)


def _fbm_judge(inputs, ref, got):
    if not np.all(got[:, 0] == 0.0):
        bad = float(got[np.flatnonzero(got[:, 0] != 0.0)[0], 0])
        return "FAIL", np.inf, 0.0, np.inf, f"a path starts at {bad!r}, not at B(0) = 0"
    verdict, stat, p, crit, msg = _fgn_judge(inputs, ref, got[:, 1:])
    return verdict, stat, p, crit, msg.replace("fGn(", "fBm(")


register(Kernel(
    name="fbm",
    module="theory.fbm",
    signature="fn(n, hurst, size, length, rng) -> paths   ((size, n + 1) fBm at times 0, length/n, ..., length; "
              "rng a numpy Generator)",
    outputs=("paths",),
    make_cases=_fbm_cases,
    reference=lambda n, hurst, length, size, seed: (_fbm_cov(n, hurst, length),),
    tolerance=lambda inputs, ref, eps: (np.inf,),
    rule=f"statistical: B(0) = 0 exactly, and {_FGN_DRAWS} paths whitened by the exact covariance; false alarms "
         f"<= {ALPHA:.0%}",
    why="B(t_1..t_n) at t_j = j length/n is centred Gaussian with covariance (t_i^2H + t_j^2H - |t_i - t_j|^2H)/2; "
        "the paths are whitened by its Cholesky factor and go through the fgn test (exact chi-square variance "
        "test and lag-1 test, each two-sided at 0.005). Power (M = 1000, n = 64), stated by "
        "`theory.oracle.fbm_power`: >= 0.99 against H + 0.05, H - 0.05, unscaled increments (a path on [0, n]), and "
        "Brownian motion in place of fBm (H != 1/2)",
    prepare=lambda inputs: {"n": int(inputs["n"]), "hurst": float(inputs["hurst"]), "size": int(inputs["size"]),
                            "length": float(inputs["length"]), "rng": np.random.default_rng(int(inputs["seed"]))},
    shape=lambda inputs: (int(inputs["size"]), int(inputs["n"]) + 1),
    judge=_fbm_judge,
    own=lambda n, hurst, size, length, rng: __import__("theory.fbm", fromlist=["fbm"]).fbm(n, hurst, size=size,
                                                                                          length=length, rng=rng),
))


# ----------------------------------------------------------------------------------------------
# the residual network of implicit-reg (theory.implicit): forward and loss gradient


def _implicit_cases():
    cases = []
    for activation in ("tanh", "relu", "gelu", "sin", "identity"):
        for L, n, d, q, m, seed in ((1, 3, 2, 4, 3, 91), (10, 5, 3, 6, 5, 92), (200, 4, 2, 5, 4, 93)):
            r = _rng(seed)
            inputs = {"X": r.standard_normal((n, d)), "Y": r.standard_normal((n, 2)),
                      "A": r.standard_normal((q, d)) / np.sqrt(d), "V": r.standard_normal((L, q, m)),
                      "W": r.standard_normal((L, m, q)), "B": r.standard_normal((2, q)) / np.sqrt(q),
                      "activation": activation}
            cases.append(Case(f"{activation}_L{L}_q{q}_m{m}",
                              {"seed": seed, "L": L, "n": n, "d": d, "q": q, "m": m, "activation": activation,
                               "law": "entries N(0,1) (A, B scaled by 1/sqrt(fan-in)); X, Y ~ N(0,1)"}, inputs))
    return cases


def _implicit_growth(V, W):
    L, q, m = V.shape
    nV = np.max(np.sum(np.abs(V), axis=-1), axis=-1)
    nW = np.max(np.sum(np.abs(W), axis=-1), axis=-1)
    return float(np.exp(np.sum(np.log1p(nV * nW / (L * np.sqrt(m * q))))))


def _implicit_forward_ref(X, Y, A, V, W, B, activation):
    from theory.implicit import forward

    h, F = forward(X, {"A": A, "V": V, "W": W, "B": B}, activation)
    return (h, F)


def _implicit_forward_tol(inputs, ref, eps):
    V, W, B = inputs["V"], inputs["W"], inputs["B"]
    L, q, m = V.shape
    base = 4.0 * (L + m + q + inputs["X"].shape[1]) * eps * _implicit_growth(V, W) * float(np.max(np.abs(ref[0])))
    return (base, base * float(np.max(np.sum(np.abs(B), axis=-1))))


def _implicit_gradient_ref(X, Y, A, V, W, B, activation):
    from theory.implicit import loss_and_gradient

    loss, g = loss_and_gradient(X, Y, {"A": A, "V": V, "W": W, "B": B}, activation)
    return (np.asarray(loss), g.A, g.V, g.W, g.B)


def _implicit_gradient_tol(inputs, ref, eps):
    from theory.implicit import forward

    X, Y, V, W, B = inputs["X"], inputs["Y"], inputs["V"], inputs["W"], inputs["B"]
    L, q, m = V.shape
    h, F = forward(X, {"A": inputs["A"], "V": V, "W": W, "B": B}, inputs["activation"])
    G = _implicit_growth(V, W)
    nB = float(np.max(np.sum(np.abs(B), axis=-1)))
    R = float(np.max(np.abs(F - Y)))
    S = max(1.0, float(np.max(np.abs(h))), float(np.max(np.abs(X))))
    base = 8.0 * (L + m + q + X.shape[0] + X.shape[1]) * eps * G * G
    loss_tol = base * (float(ref[0]) + R * nB * S)
    return (loss_tol,) + tuple(base * (float(np.max(np.abs(g))) + 2.0 * R * nB * S * S) for g in ref[1:])


_IMPLICIT_WHY = ("layer k adds V_k sigma(W_k h / sqrt q) / (L sqrt m): two dot products of m and q terms, and a "
                 "Lipschitz constant of at most 1 + ||V_k|| ||W_k|| / (L sqrt(m q)) (the activations are "
                 "1-Lipschitz), so errors grow by at most G = prod_k of these; the backward pass multiplies by G again "
                 "and scales the residual F - Y by ||B|| and the states")

register(Kernel(
    name="implicit_forward",
    module="theory.implicit",
    signature="fn(X, Y, A, V, W, B, activation) -> (h, F)   (h (L+1, n, q), F (n, d'); Y unused)",
    outputs=("h", "F"),
    make_cases=_implicit_cases,
    reference=_implicit_forward_ref,
    tolerance=_implicit_forward_tol,
    rule="max|h - h_ref| <= 4 (L + m + q + d) eps G max|h_ref| (F: times ||B||_inf), "
         "G = prod_k (1 + ||V_k||_inf ||W_k||_inf / (L sqrt(m q)))",
    why=_IMPLICIT_WHY,
))

register(Kernel(
    name="implicit_gradient",
    module="theory.implicit",
    signature="fn(X, Y, A, V, W, B, activation) -> (loss, dA, dV, dW, dB)   (loss (1/n) sum ||F(x_i) - y_i||^2)",
    outputs=("loss", "dA", "dV", "dW", "dB"),
    make_cases=_implicit_cases,
    reference=_implicit_gradient_ref,
    tolerance=_implicit_gradient_tol,
    rule="max|g - g_ref| <= 8 (L + m + q + n + d) eps G^2 (max|g_ref| + 2 |F - Y|_inf ||B||_inf S^2), "
         "S = max(1, max|h|, max|X|) (loss: S instead of 2 S^2)",
    why=_IMPLICIT_WHY,
))


# ----------------------------------------------------------------------------------------------
# truncated signatures and the signature kernel (thesis (Marion), chapter 5; factorial normalization)


def _signature_cases() -> list[Case]:
    cases = []
    for n, d, depth, seed, scale in ((2, 3, 6, 1, 0.5), (10, 2, 5, 2, 0.3), (100, 3, 4, 3, 0.1),
                                     (1000, 3, 6, 4, 0.01), (50, 1, 8, 5, 0.2), (20, 5, 3, 6, 0.4)):
        X = np.cumsum(_rng(seed).standard_normal((n, d)) * scale, axis=0)
        cases.append(Case(f"walk_n{n}_d{d}_depth{depth}", {"n": n, "d": d, "depth": depth, "seed": seed,
                                                           "law": f"random walk, N(0, {scale}^2) steps"},
                          {"path": X, "depth": depth}))
    cases.append(Case("constant_path", {"n": 5, "d": 2, "depth": 4, "law": "all points equal"},
                      {"path": np.ones((5, 2)), "depth": 4}))
    cases.append(Case("depth0", {"n": 3, "d": 2, "depth": 0, "law": "level 0 only"},
                      {"path": np.arange(6.0).reshape(3, 2), "depth": 0}))
    return cases


def _signature_ref(path, depth):
    from theory.signature import signature

    return (np.concatenate([np.ravel(s) for s in signature(path, depth)]),)


def _tv(path):
    return float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum())


def _signature_tol(inputs, ref, eps):
    path, depth = inputs["path"], int(inputs["depth"])
    return (16.0 * path.shape[0] * (depth + 1) * eps * max(1.0, _tv(path)) ** depth,)


register(Kernel(
    name="signature",
    module="theory.signature",
    signature="fn(path, depth) -> sig   (levels 0..depth of the factorial-normalized signature (level k = k! times "
              "the iterated integral), each level row-major, concatenated; path (n, d), piecewise linear)",
    outputs=("sig",),
    make_cases=_signature_cases,
    reference=_signature_ref,
    tolerance=_signature_tol,
    rule="max|sig - sig_ref| <= 16 n (depth + 1) eps max(1, TV)^depth, TV the path's total variation",
    why="level k has norm at most TV^k in this normalization; each of the n - 1 segment products (Chen's "
        "relation) adds at most depth + 1 rounded terms of that size per entry",
))


def _kernel_cases() -> list[Case]:
    cases = []
    for n, d, depth, seed, scale in ((2, 2, 10, 7, 0.6), (30, 3, 5, 8, 0.2), (200, 2, 6, 9, 0.05),
                                     (1000, 3, 6, 10, 0.01)):
        r = _rng(seed)
        X = np.cumsum(r.standard_normal((n, d)) * scale, axis=0)
        Y = np.cumsum(r.standard_normal((n, d)) * scale, axis=0)
        cases.append(Case(f"walks_n{n}_d{d}_depth{depth}", {"n": n, "d": d, "depth": depth, "seed": seed},
                          {"path_x": X, "path_y": Y, "depth": depth}))
    return cases


def _kernel_ref(path_x, path_y, depth):
    from theory.signature import kernel

    return (np.array(kernel(path_x, path_y, depth)),)


def _kernel_tol(inputs, ref, eps):
    X, Y, depth = inputs["path_x"], inputs["path_y"], int(inputs["depth"])
    g = max(1.0, _tv(X)) * max(1.0, _tv(Y))
    return (32.0 * (X.shape[0] + Y.shape[0]) * (depth + 1) ** 2 * eps * g ** depth,)


register(Kernel(
    name="signature_kernel",
    module="theory.signature",
    signature="fn(path_x, path_y, depth) -> k   (sum over levels 0..depth of <X^k, Y^k>, factorial "
              "normalization, paths as given (no time augmentation))",
    outputs=("k",),
    make_cases=_kernel_cases,
    reference=_kernel_ref,
    tolerance=_kernel_tol,
    rule="|k - k_ref| <= 32 (n_x + n_y) (depth + 1)^2 eps (max(1, TV_x) max(1, TV_y))^depth",
    why="the kernel is a sum over depth + 1 levels of inner products of two signatures, each entry within the "
        "signature rule; Cauchy-Schwarz bounds level k's inner product by (TV_x TV_y)^k",
))


# in-context AR learning (theory.icl, thesis chapter 6): the exact population losses


def _icl_rows():
    rows = []
    for context, d, T, seed in (("unitary", 1, 2, 71), ("unitary", 3, 5, 72), ("unitary", 10, 15, 73),
                                ("orthogonal", 2, 3, 74), ("orthogonal", 4, 6, 75), ("orthogonal", 10, 15, 76)):
        r = _rng(seed)
        rows.append((f"{context}_d{d}_T{T}", {"seed": seed, "d": d, "T": T, "context": context,
                                              "law": "C ~ N(0, 1/d), p ~ N(0, 1)"},
                     {"C": r.standard_normal((d, d)) / np.sqrt(d), "p": r.standard_normal(T), "context": context}))
    r = _rng(77)
    rows.append(("unitary_large_C_d3_T4", {"seed": 77, "d": 3, "T": 4, "context": "unitary", "law": "C ~ N(0, 1e6)"},
                 {"C": 1e3 * r.standard_normal((3, 3)), "p": r.standard_normal(4), "context": "unitary"}))
    return rows


def _icl_scale(C, p):
    # |each merged coefficient| <= S = max_i sum_t sum_j |p_t C_ij| + 1
    return float(np.max(np.abs(C).sum(axis=1)) * np.abs(p).sum()) + 1.0


def _icl_loss_tol(inputs, ref, eps):
    C, p = inputs["C"], inputs["p"]
    d, T = C.shape[0], p.shape[0]
    S = _icl_scale(C, p)
    base = 8.0 * (T * d + d) * eps * S
    return (base * d * S, base * 2.0 * float(np.abs(p).sum()), base * 2.0 * float(np.max(np.abs(C).sum(axis=1))) * d)


def _icl_loss_ref(C, p, context):
    from theory.icl import expected_loss

    loss, gC, gp = expected_loss(C, p, context, return_gradient=True)
    return (np.asarray(loss), gC, gp)


register(Kernel(
    name="icl_expected_loss",
    module="theory.icl",
    signature="fn(C, p, context) -> (loss, dC, dp)   (exact E||sum_t p_t C lambda^(t-T+1) * lambda^(t-1) - lambda^T||^2 "
              "over unitary or orthogonal (conjugate-pair) contexts, and its gradient)",
    outputs=("loss", "dC", "dp"),
    make_cases=lambda: [Case(*row) for row in _icl_rows()],
    reference=_icl_loss_ref,
    tolerance=_icl_loss_tol,
    rule="|loss - ref| <= 8 (T d + d) eps d S^2; gradients: 8 (T d + d) eps S 2 ||p||_1 (dC), "
         "8 (T d + d) eps S 2 d max_i ||C_i||_1 (dp); S = max_i sum_(t,j) |p_t C_ij| + 1",
    why=("the loss is a sum over merged monomials of squared coefficients, each a sum of at most T d products "
         "p_t C_ij minus 0 or 1 and bounded by S; rounding each coefficient costs (T d) eps S, squaring and summing "
         "the d coordinates' coefficients multiplies by 2 d S; the gradient entries are sums of 2 coef p_t or "
         "2 coef C_ij"),
))


# ----------------------------------------------------------------------------------------------
# Sinkhorn attention (theory.sinkhorn; the sinkformers chapter of Sander's thesis): the doubly stochastic limit
# and the three attention fields (kernel K^0 / n, row SoftMax K^1, Sinkhorn K^infinity)

#: the column-sum error at which the reference stops (theory.sinkhorn.sinkhorn's default); a user's limit
#: must be as converged
SINKHORN_TOL = 1e-13


def _sinkhorn_matrix_cases():
    cases = []

    def add(name, C, **params):
        cases.append(Case(name, params, {"C": np.asarray(C, dtype=np.float64)}))

    for n, scale, seed in ((2, 1.0, 101), (5, 1.0, 102), (30, 1.0, 103), (200, 1.0, 104), (50, 5.0, 105)):
        add(f"gauss_n{n}_scale{scale:g}", scale * _rng(seed).standard_normal((n, n)), n=n, seed=seed,
            law=f"C_ij ~ N(0, {scale ** 2:g})", regime="slow mixing (gap ~ 0.03)" if scale > 1 else "generic")
    add("n1", [[0.3]], n=1, law="a single logit (K = [[1]])")
    r = _rng(106)
    a, b = r.standard_normal(8), r.standard_normal(8)
    add("separable_n8", a[:, None] + b[None, :], n=8, seed=106, law="C_ij = a_i + b_j (limit: all entries 1/n)")
    A = _rng(107).standard_normal((10, 10))
    add("symmetric_n10", (A + A.T) / 2, n=10, seed=107, law="symmetric C")
    add("constant_n6", np.full((6, 6), 7.5), n=6, law="constant logits (ties everywhere)")
    add("huge_offset_n6", 1e300 + _rng(108).standard_normal((6, 6)), n=6, seed=108,
        law="N(0, 1) + 1e300 (rounds to a constant: the limit is uniform)")
    return cases


def _gap(K):
    """1 - sigma_2(K) for a doubly stochastic K (sigma_1 = 1): the spectral gap of the scaling problem."""
    if K.shape[0] == 1:
        return 1.0
    s2 = np.linalg.eigvalsh(K @ K.T)  # squared singular values, increasing
    return max(float(1.0 - np.sqrt(max(s2[-2], 0.0))), 1e-300)


def _sinkhorn_ref(C):
    from theory.sinkhorn import sinkhorn

    return (sinkhorn(C, tol=SINKHORN_TOL),)


def _spread(C):
    return float(np.max(C) - np.min(C))


def _sinkhorn_tol(inputs, ref, eps):
    C, K = inputs["C"], ref[0]
    n = C.shape[0]
    gap = _gap(K)
    return ((8.0 * (n + 2) * eps * (1.0 + _spread(C)) + 4.0 * SINKHORN_TOL) * float(np.max(K)) / gap,)


_SINKHORN_WHY = ("the limit is K = exp(C + f 1^T + 1 g^T) with potentials f, g fixing unit row and column sums; a "
                 "perturbation dC (rounding: about n eps (1 + spread(C)) in the log domain, the log-sum-exps of "
                 "n terms of size spread(C)) changes log K by dC plus the change of the potentials, which solve a "
                 "linear system whose smallest nonzero eigenvalue is the spectral gap 1 - sigma_2(K); so |dK| <= "
                 "(|dC| + 2|dC|/gap) max K. Stopping at a column-sum error tau leaves the iterate within about "
                 "tau/gap of the limit, tau = 1e-13 for the reference and for the implementation under test")

register(Kernel(
    name="sinkhorn",
    module="theory.sinkhorn",
    signature="fn(C) -> K   (Sinkhorn's limit of exp(C), rows normalised first: unit row and column sums, "
              "converged to column sums within 1e-13)",
    outputs=("K",),
    make_cases=_sinkhorn_matrix_cases,
    reference=_sinkhorn_ref,
    tolerance=_sinkhorn_tol,
    rule="max|K - K_ref| <= (8 (n + 2) eps (1 + spread(C)) + 4e-13) max K_ref / (1 - sigma_2(K_ref)), "
         "spread = max C - min C",
    why=_SINKHORN_WHY,
))


def _attention_cases():
    cases = []
    m, d = 3, 4
    rows = []
    for n, scale, seed in ((1, 1.0, 111), (5, 1.0, 112), (30, 1.0, 113), (200, 1.0, 114), (20, 2.5, 115)):
        r = _rng(seed)
        rows.append((f"n{n}" + ("" if scale == 1.0 else f"_large_logits_x{scale:g}"),
                     {"seed": seed, "n": n, "d": d, "m": m, "law": f"X ~ N(0, {scale ** 2:g}); W ~ N(0, 1/d)"},
                     {"X": scale * r.standard_normal((n, d)), "WQ": r.standard_normal((m, d)) / np.sqrt(d),
                      "WK": r.standard_normal((m, d)) / np.sqrt(d), "WV": r.standard_normal((d, d)) / np.sqrt(d)}))
    r = _rng(116)
    WQ = r.standard_normal((d, d)) / np.sqrt(d)
    rows.append(("assumption_5_2_n12", {"seed": 116, "n": 12, "d": d, "m": d,
                                        "law": "WK = WQ, WV = -WQ^T WK (symmetric: the energy's gradient field)"},
                 {"X": r.standard_normal((12, d)), "WQ": WQ, "WK": WQ, "WV": -WQ.T @ WQ}))
    x = r.standard_normal(d)
    rows.append(("identical_tokens_n7", {"seed": 116, "n": 7, "d": d, "m": m, "law": "seven copies of one token"},
                 {"X": np.tile(x, (7, 1)), "WQ": r.standard_normal((m, d)), "WK": r.standard_normal((m, d)),
                  "WV": r.standard_normal((d, d))}))
    for name, params, inputs in rows:
        for kind in ("kernel", "softmax", "sinkhorn"):
            cases.append(Case(f"{kind}_{name}", {**params, "kind": kind}, {**inputs, "kind": kind}))
    return cases


def _attention_ref(X, WQ, WK, WV, kind):
    from theory.sinkhorn import attention

    return (attention(X, WQ, WK, WV, kind, tol=SINKHORN_TOL),)


def _attention_tol(inputs, ref, eps):
    from theory.sinkhorn import logits, sinkhorn

    X, WQ, WK, WV, kind = inputs["X"], inputs["WQ"], inputs["WK"], inputs["WV"], inputs["kind"]
    n, d = X.shape
    m = WQ.shape[0]
    C = logits(X, WQ, WK)
    Cabs = float(np.max((np.abs(X) @ np.abs(WQ).T) @ (np.abs(X) @ np.abs(WK).T).T))  # bound on the logits' terms
    Vabs = np.max(np.abs(X) @ np.abs(WV).T, axis=1)  # max_k (|X||WV|^T)_jk per token j
    conv = 0.0
    if kind == "kernel":
        A, g = np.exp(C) / n, 1.0
    elif kind == "softmax":
        A, g = np.exp(C - np.max(C, axis=1, keepdims=True)), 2.0
        A /= A.sum(axis=1, keepdims=True)
    else:
        A = sinkhorn(C, tol=SINKHORN_TOL)
        gap = _gap(A)
        g = 1.0 + 2.0 / gap
        conv = 4.0 * SINKHORN_TOL * n * float(np.max(Vabs)) / gap
    S = float(np.max(A @ Vabs))
    return (8.0 * eps * S * ((n + m + d) + (m + d) * g * Cabs) + conv,)


register(Kernel(
    name="sinkhorn_attention",
    module="theory.sinkhorn",
    signature="fn(X, WQ, WK, WV, kind) -> T   ((n, d); T_i = sum_j A_ij WV x_j with C = (X WQ^T)(X WK^T)^T and "
              "A = exp(C)/n (kind 'kernel'), the row SoftMax of C ('softmax') or Sinkhorn's limit ('sinkhorn'))",
    outputs=("T",),
    make_cases=_attention_cases,
    reference=_attention_ref,
    tolerance=_attention_tol,
    rule="max|T - T_ref| <= 8 eps max_i sum_j A_ij v_j ((n + m + d) + (m + d) g |C|max) (+ 4e-13 n max v / gap for "
         "'sinkhorn'); v_j = max_k (|X||WV|^T)_jk, g = 1 kernel, 2 softmax, 1 + 2/gap sinkhorn, "
         "|C|max = max (|X||WQ|^T)(|X||WK|^T)^T",
    why="a logit is a sum of m d products, rounded by about (m + d) eps |C|max; the kernel exp(C) turns that into a "
        "relative error of the same size per entry, the row SoftMax into at most twice it (numerator and "
        "normaliser), Sinkhorn's limit into (1 + 2/gap) times it (the potentials, see the sinkhorn kernel); the "
        "product with the values X WV^T adds n + d rounding terms of size max|X||WV|^T",
))


# ----------------------------------------------------------------------------------------------
# Momentum ResNets (theory.momentum; Sander's thesis, chapter 4): forward map (4.2), its inverse (4.3), the
# gradient by backpropagation, and the time-1 map Psi_eps of the linear second-order model (Prop. 4.3)


def _momentum_rows():
    rows = []
    d = 3
    for residual in ("linear", "tanh", "tanh_out"):
        for gamma, N, seed in ((0.0, 10, 121), (0.5, 1, 122), (0.5, 10, 123), (0.9, 100, 124), (1.0, 10, 125),
                               (0.99, 1000, 126)):
            r = _rng(seed)
            theta = 2.0 * r.standard_normal((N, d, d)) / (np.sqrt(d) * N)
            x0, v0 = r.standard_normal(d), r.standard_normal(d)
            if N >= 1000:
                v0 = np.zeros(d)  # a unit v0 would carry x_N about v0/(1 - gamma) = 100 away
            rows.append((f"{residual}_gamma{gamma:g}_N{N}",
                         {"seed": seed, "N": N, "d": d, "gamma": gamma, "residual": residual,
                          "law": "theta ~ N(0, 4/(d N^2)), x0 ~ N(0, 1), " + ("v0 = 0" if N >= 1000 else "v0 ~ N(0, 1)")},
                         {"x0": x0, "v0": v0, "theta": theta, "residual": residual, "gamma": gamma}))
    r = _rng(127)
    rows.append(("tanh_gamma0.9_large_theta_N20", {"seed": 127, "N": 20, "d": d, "gamma": 0.9, "residual": "tanh",
                                                    "law": "theta ~ N(0, 4/d) (unscaled), v0 = 0"},
                 {"x0": r.standard_normal(d), "v0": np.zeros(d), "theta": 2.0 * r.standard_normal((20, d, d)) / np.sqrt(d),
                  "residual": "tanh", "gamma": 0.9}))
    rows.append(("linear_gamma0.5_d1_N10", {"N": 10, "d": 1, "gamma": 0.5, "residual": "linear",
                                            "law": "d = 1, theta_n = -1 (oscillating velocity)"},
                 {"x0": np.array([1.0]), "v0": np.array([0.0]), "theta": np.full((10, 1, 1), -1.0),
                  "residual": "linear", "gamma": 0.5}))
    return rows


def _residual_jacobian(residual, x, th):
    if residual == "linear":
        return th
    if residual == "tanh":
        return (1.0 - np.tanh(th @ x) ** 2)[:, None] * th
    return th * (1.0 - np.tanh(x) ** 2)[None, :]  # tanh_out


def _momentum_amplification(xs, theta, residual, gamma, inverse=False, both=False):
    """max over n' of sum_{n <= n'} ||J_{n'-1} ... J_n||_inf, J_n the Jacobian in (x, v) of step n along the
    trajectory xs (of the inverse steps, taken from the top, when ``inverse``): the total growth of one rounding
    error per step up to any later step (all start positions propagated together, one batched product per step).
    ``both``: also the largest single norm max_{n <= n'} ||J_{n'-1} ... J_n||_inf."""
    N, d = theta.shape[0], theta.shape[-1]
    eye = np.eye(d)
    J = np.zeros((N, 2 * d, 2 * d))
    order = range(N - 1, -1, -1) if inverse else range(N)
    for i, n in enumerate(order):
        if inverse:  # step from (x_{n+1}, v_{n+1}) to (x_n, v_n); the residual at x_n
            F = (1.0 - gamma) * _residual_jacobian(residual, xs[n], theta[n]) / gamma
            J[i, :d, :d], J[i, :d, d:] = eye, -eye
            J[i, d:, :d], J[i, d:, d:] = -F, eye / gamma + F
        else:
            F = (1.0 - gamma) * _residual_jacobian(residual, xs[n], theta[n])
            J[i, :d, :d], J[i, :d, d:] = eye + F, gamma * eye
            J[i, d:, :d], J[i, d:, d:] = F, gamma * eye
    total, largest = _products_norms(J)
    return (total, largest) if both else total


@njit(cache=True)
def _products_norms(J):
    """For steps J (N, D, D): (1 + max_k sum_{n <= k} ||J_k ... J_n||_inf, max_{n <= k} ||J_k ... J_n||_inf)."""
    N, D = J.shape[0], J.shape[1]
    P = np.zeros((N, D, D))  # P[n]: the product of the steps since start n
    tmp = np.empty((D, D))
    total = 1.0
    largest = 1.0
    for k in range(N):
        for i in range(D):
            P[k, i, i] = 1.0
        acc = 0.0
        for n in range(k + 1):
            for i in range(D):
                for j in range(D):
                    v = 0.0
                    for m in range(D):
                        v += J[k, i, m] * P[n, m, j]
                    tmp[i, j] = v
            norm = 0.0
            for i in range(D):
                row = 0.0
                for j in range(D):
                    P[n, i, j] = tmp[i, j]
                    row += abs(tmp[i, j])
                norm = max(norm, row)
            acc += norm
            largest = max(largest, norm)
        total = max(total, 1.0 + acc)
    return total, largest


def _momentum_forward_ref(x0, v0, theta, residual, gamma):
    from theory.momentum import forward

    return tuple(forward(x0, v0, theta, residual, gamma))


def _momentum_forward_tol(inputs, ref, eps):
    theta = inputs["theta"]
    N, d = theta.shape[0], theta.shape[-1]
    amp = _momentum_amplification(ref[0], theta, inputs["residual"], inputs["gamma"])
    t = 2.0 * (d + 3) * eps * max(float(np.max(np.abs(ref[0]))), float(np.max(np.abs(ref[1])))) * amp
    return (t, t)


_MOMENTUM_WHY = ("each step v' = gamma v + (1 - gamma) f(x, theta_n), x' = x + v' rounds a d-term dot product and "
                 "three operations, about (d + 3) eps max(|x|, |v|); an error made at step n reaches step n' through the "
                 "product of the step Jacobians [[I + (1-gamma) F, gamma I], [(1-gamma) F, gamma I]] (F = df/dx along "
                 "the reference trajectory); the sum of their infinity norms over the steps n before n', maximised "
                 "over n', is computed per case: the condition number of the discrete flow for one rounding per step")

register(Kernel(
    name="momentum_forward",
    module="theory.momentum",
    signature="fn(x0, v0, theta, residual, gamma) -> (xs, vs)   ((N+1, d) each; v_{n+1} = gamma v_n + (1-gamma) "
              "f(x_n, theta_n), x_{n+1} = x_n + v_{n+1}; no 1/N step)",
    outputs=("xs", "vs"),
    make_cases=lambda: [Case(*row) for row in _momentum_rows()],
    reference=_momentum_forward_ref,
    tolerance=_momentum_forward_tol,
    rule="max|xs - xs_ref|, max|vs - vs_ref| <= 2 (d + 3) eps max(|xs_ref|, |vs_ref|) A, "
         "A = 1 + max_n' sum_{n <= n'} ||J_{n'-1} ... J_n||_inf (step Jacobians along the reference trajectory)",
    why=_MOMENTUM_WHY,
))


def _momentum_inverse_cases():
    from theory.momentum import forward

    cases = []
    for name, params, inputs in _momentum_rows():
        if inputs["gamma"] == 0.0:
            continue  # gamma = 0 has no inverse
        xs, vs = forward(inputs["x0"], inputs["v0"], inputs["theta"], inputs["residual"], inputs["gamma"])
        cases.append(Case(name, {**params, "xN, vN": "momentum forward of (x0, v0)"},
                          {"xN": xs[-1], "vN": vs[-1], "theta": inputs["theta"], "residual": inputs["residual"],
                           "gamma": inputs["gamma"]}))
    return cases


def _momentum_inverse_ref(xN, vN, theta, residual, gamma):
    from theory.momentum import inverse

    return tuple(inverse(xN, vN, theta, residual, gamma))


def _momentum_inverse_tol(inputs, ref, eps):
    theta, gamma = inputs["theta"], inputs["gamma"]
    N, d = theta.shape[0], theta.shape[-1]
    amp = _momentum_amplification(ref[0], theta, inputs["residual"], gamma, inverse=True)
    t = 2.0 * (d + 3) * eps * max(float(np.max(np.abs(ref[0]))), float(np.max(np.abs(ref[1])))) * amp / gamma
    return (t, t)


register(Kernel(
    name="momentum_inverse",
    module="theory.momentum",
    signature="fn(xN, vN, theta, residual, gamma) -> (xs, vs)   (the inverse (4.3): x_n = x_{n+1} - v_{n+1}, "
              "v_n = (v_{n+1} - (1-gamma) f(x_n, theta_n))/gamma; gamma in (0, 1])",
    outputs=("xs", "vs"),
    make_cases=_momentum_inverse_cases,
    reference=_momentum_inverse_ref,
    tolerance=_momentum_inverse_tol,
    rule="max|xs - xs_ref|, max|vs - vs_ref| <= 2 (d + 3) eps max(|xs_ref|, |vs_ref|) A / gamma, A as in "
         "momentum_forward for the inverse-step Jacobians [[I, -I], [-G, I/gamma + G]], G = (1-gamma) F/gamma",
    why="the same count as momentum_forward for the inverse steps, each divided by gamma; the products of the "
        "inverse-step Jacobians grow like gamma^(-N) (their determinant is gamma^(-d) per step): the inverse of a "
        "Momentum ResNet with gamma < 1 is ill-conditioned in floating point, which the tolerance shows (gamma = 0.9, "
        "N = 100 and gamma = 0.99, N = 1000 allow 3e3 to 5e3 times momentum_forward's tolerance on the same case)",
))


def _momentum_gradient_cases():
    cases = []
    for name, params, inputs in _momentum_rows():
        r = _rng(params.get("seed", 128) + 100)
        cases.append(Case(name, {**params, "y": "N(0, 1), seed + 100"}, {**inputs, "y": r.standard_normal(
            inputs["x0"].shape)}))
    return cases


def _momentum_gradient_ref(x0, v0, theta, residual, gamma, y):
    from theory.momentum import gradient

    loss, dtheta, dx0, dv0 = gradient(x0, v0, theta, residual, gamma, y, method="backprop")
    return (np.asarray(loss), dtheta, dx0, dv0)


def _momentum_gradient_tol(inputs, ref, eps):
    from theory.momentum import forward

    theta = inputs["theta"]
    N, d = theta.shape[0], theta.shape[-1]
    xs, vs = forward(inputs["x0"], inputs["v0"], theta, inputs["residual"], inputs["gamma"])
    total, largest = _momentum_amplification(xs, theta, inputs["residual"], inputs["gamma"], both=True)
    r = float(np.max(np.abs(xs[-1] - inputs["y"])))
    S = max(1.0, float(np.max(np.abs(xs))), float(np.max(np.abs(vs))))
    base = 4.0 * (d + 3) * eps * total * (1.0 + largest)
    loss = base * (float(ref[0]) + d * r * S)
    return (loss,) + tuple(base * (float(np.max(np.abs(g))) + r * S) for g in ref[1:])


register(Kernel(
    name="momentum_gradient",
    module="theory.momentum",
    signature="fn(x0, v0, theta, residual, gamma, y) -> (loss, dtheta, dx0, dv0)   (L = 1/2 ||x_N - y||^2 and its "
              "exact gradients)",
    outputs=("loss", "dtheta", "dx0", "dv0"),
    make_cases=_momentum_gradient_cases,
    reference=_momentum_gradient_ref,
    tolerance=_momentum_gradient_tol,
    rule="max|g - g_ref| <= 4 (d + 3) eps A (1 + B) (max|g_ref| + |x_N - y|_inf S), S = max(1, |xs|, |vs|) "
         "(loss: d |x_N - y|_inf S); A as in momentum_forward, B = max_{n <= n'} ||J_{n'-1} ... J_n||_inf",
    why=_MOMENTUM_WHY + "; the backward pass carries the residual x_N - y back through the transposed step "
        "Jacobians: its own roundings add up to A again, and the forward pass's error reaches it amplified by at most "
        "B; each parameter gradient is an outer product with a state",
))


def _psi_cases():
    cases = []

    def add(name, theta, eps, **params):
        cases.append(Case(name, {**params, "eps": eps}, {"theta": np.asarray(theta, dtype=np.float64), "eps": eps}))

    for d, seed in ((1, 131), (2, 132), (4, 133)):
        theta = _rng(seed).standard_normal((d, d))
        for eps in (0.0, 0.05, 0.5, 5.0):
            add(f"d{d}_eps{eps:g}", theta, eps, d=d, seed=seed, law="theta ~ N(0, 1)")
    r = _rng(134)
    add("eps0.01_d3", r.standard_normal((3, 3)), 0.01, d=3, seed=134, law="theta ~ N(0, 1); small eps (stiff)")
    from theory.momentum import lambda_eps

    lam, alpha = lambda_eps(0.5)
    add("at_theta_star_eps0.5", [[-0.5 * alpha ** 2 - 0.5]], 0.5, d=1,
        law="theta* = -eps alpha*^2 - 1/(4 eps): the minimum lambda_eps of Psi (Sec. 4.4.3)")
    add("oscillating_eps1", [[-np.pi ** 2 - 0.25]], 1.0, d=1, law="theta = -pi^2 - 1/4: Psi = -exp(-1/2)")
    Q, _ = np.linalg.qr(_rng(135).standard_normal((3, 3)))
    add("nearly_singular_eps0.5", Q @ np.diag([1.0, 1e-8, 0.0]) @ Q.T, 0.5, d=3, seed=135,
        law="symmetric, eigenvalues 1, 1e-8, 0")
    add("large_theta_eps0.1", 8.0 * _rng(136).standard_normal((3, 3)), 0.1, d=3, seed=136, law="theta ~ N(0, 64)")
    add("zero_eps0.3", np.zeros((2, 2)), 0.3, d=2, law="theta = 0: Psi = I (x stays at x0)")
    return cases


def _psi_ref(theta, eps):
    from theory.momentum import psi

    return (psi(theta, eps),)


def _psi_tol(inputs, ref, eps_m):
    from scipy.linalg import expm

    theta, eps = inputs["theta"], float(inputs["eps"])
    d = theta.shape[0]
    if eps == 0.0:
        A = theta
    else:
        A = np.zeros((2 * d, 2 * d))
        A[:d, d:] = np.eye(d)
        A[d:, :d] = theta / eps
        A[d:, d:] = -np.eye(d) / eps
    # the Frechet derivative of exp at A is E -> int_0^1 e^(sA) E e^((1-s)A) ds: bound its norm by the integral
    s = np.linspace(0.0, 1.0, 17)
    norms = np.array([np.linalg.norm(expm(t * A), 2) for t in s])
    integral = float(np.trapezoid(norms * norms[::-1], s))
    return (16.0 * (2 * d) * eps_m * float(np.linalg.norm(A, 2)) * integral + 4.0 * eps_m * float(np.max(np.abs(ref[0]))),)


register(Kernel(
    name="momentum_psi",
    module="theory.momentum",
    signature="fn(theta, eps) -> Psi   ((d, d): x(1) of eps x'' + x' = theta x, x(0) = x_0, x'(0) = 0, as x(1) = Psi x_0; "
              "eps = 0: exp(theta))",
    outputs=("Psi",),
    make_cases=_psi_cases,
    reference=_psi_ref,
    tolerance=_psi_tol,
    rule="max|Psi - Psi_ref| <= 32 d eps ||A|| int_0^1 ||e^(sA)|| ||e^((1-s)A)|| ds + 4 eps max|Psi_ref| (2-norms, "
         "trapezoid rule on 17 points), A = [[0, I], [theta/eps, -I/eps]] (A = theta for eps = 0)",
    why="Psi_eps(theta) is the top-left block of exp(A) for the phase-space matrix A of the second-order ODE (Prop. "
        "4.3); the derivative of exp at A in the direction E is int_0^1 e^(sA) E e^((1-s)A) ds, so a relative "
        "perturbation of A of size eps (the rounding of theta/eps, or the backward error of a scaling-and-squaring "
        "exponential) moves exp(A) by at most eps ||A|| times the integral; the factor 2d covers the 2d-term "
        "products, the last term the final rounding",
))
