"""Oracle kernels: top-k operators (topk Section 7.4): mask, magnitude and their Jacobians."""

from __future__ import annotations

import numpy as np

from .._core import Case, Kernel, register
from ._common import _rng


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
