"""Oracle kernels: top-k operators (topk Section 7.4): mask, magnitude (the thesis operator and the rescaled variant
of the public code) and their Jacobians."""

from __future__ import annotations

import math

import numpy as np

from ...experiments.config import Bool, Choice, Int, OrNone, Real
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _rng

#: the seeds of the generic cases at the built-in sizes (any other n uses _OTHER_SEED)
_SEEDS = {5: 21, 100: 22}
_OTHER_SEED = 27
#: the regularisation of the partial and smooth regimes (the hard regime's is a quarter of the smallest gap of x)
_REGIMES = {"partial": 1.0, "smooth": 1e3}
_P_TAGS = {2.0: "p2", 4.0 / 3.0: "p4_3"}


def _p_tag(p: float) -> str:
    return _P_TAGS.get(p, f"p{p:.6g}")


def _reg_tag(reg: float) -> str:
    return next((name for name, value in _REGIMES.items() if value == reg), f"reg{reg:.6g}")


def _check_size(n: int, kernel: str) -> None:
    """The tolerance rule takes the n x n Jacobian (theory.topk.jacobian): refuse what it cannot hold."""
    from ..._validation import check_memory, check_work

    func = f"the oracle's {kernel} cases"
    check_memory(8 * 4 * n * n, "n", n, func=func, hint="The reference and the tolerance rule build n x n Jacobians.")
    check_work(50.0 * n * n, "n", n, func=func)


def _topk_generic(n: int, k=None, p: float = 2.0, reg=None) -> list[tuple[str, dict, dict]]:
    """(name, params, inputs) of the generic cases at size n: x ~ N(0, 1), k = max(1, n // 4) unless given, and
    either the three regimes (reg None: hard, a quarter of the smallest gap of x, partial 1, smooth 1e3) or the
    one reg given. The built-in cases at n = 5, 100 and the cases at the user's parameters come from here."""
    default_k = max(1, n // 4)
    k = default_k if k is None else k
    if not 1 <= k <= n - 1:
        raise ValueError(f"`k` must lie in [1, n - 1] = [1, {n - 1}] at n = {n}; got {k}")
    seed = _SEEDS.get(n, _OTHER_SEED)
    x = _rng(seed).standard_normal(n)
    if reg is None:
        gaps = np.diff(np.sort(x))
        regimes = (("hard", 0.25 * float(gaps.min())),) + tuple(_REGIMES.items())
    else:
        regimes = ((_reg_tag(reg), reg),)
    ktag = "" if k == default_k else f"_k{k}"
    return [(f"{regime}_{_p_tag(p)}_n{n}{ktag}", {"seed": seed, "law": "standard normal", "n": n, "k": k,
                                                  "regime": regime, "p": p, "reg": r},
             {"x": x, "k": k, "reg": float(r), "p": p}) for regime, r in regimes]


def _topk_inputs() -> list[tuple[str, dict, dict]]:
    """(name, params, inputs) shared by the three top-k kernels; each regime of the operators."""
    out = []
    for p in (2.0, 4.0 / 3.0):
        ptag = _p_tag(p)
        for n in _SEEDS:
            out += _topk_generic(n, None, p, None)
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


def _with(rows, **extra):
    """``rows`` as cases whose inputs (and params) carry the convention arguments ``extra``, the name suffixed
    ``_rescaled`` where rescale is True."""
    cases = []
    for name, params, inputs in rows:
        suffix = "_rescaled" if extra.get("rescale") else ""
        cases.append(Case(name + suffix, {**params, **extra}, {**inputs, **extra}))
    return cases


def _mask_cases():
    return _with(_topk_inputs() + _topk_ties())


def _magnitude_cases():
    rows = _topk_inputs() + _topk_ties()
    return _with(rows, rescale=False) + _with(rows, rescale=True)  # every case also rescaled: NAME_rescaled


def _generated(name, make):
    """The generator of the cases of kernel ``name`` at the user's parameters: the rows of _topk_generic (the code
    path of the built-in cases), the size checked first and every reference and tolerance computed once, so that
    a value the operator refuses (an output below the float64 range, a reg that no rescaling brings into range,
    an infinite Jacobian) is a named error before any verification."""
    def generate(n, k, p, reg, **conventions):
        from .._core import kernel

        _check_size(n, name)
        cases = make(_topk_generic(n, k, p, reg), **conventions)
        own = kernel(name)
        for c in cases:
            ref = tuple(np.asarray(o, dtype=np.float64) for o in own.reference(**c.inputs))
            own.tolerance(c.inputs, ref, 2.0 ** -52)
        return cases
    return generate


def _q_minus_1(p):
    return 1.0 / (p - 1.0)  # q - 1 with q = p/(p-1)


def _topk_value_tolerance(mode):
    def tol(inputs, ref, eps):
        from theory.topk import jacobian

        x, p, reg = inputs["x"], inputs["p"], inputs["reg"]
        kw = {"rescale": bool(inputs.get("rescale", False))} if mode == "magnitude" else {}
        s = float(np.max(np.abs(x)))
        if p == 2.0 and s > 0:
            # homogeneity at p = 2: mask(c x; c reg) = mask(x; reg), magnitude(c x; reg) = c magnitude(x; reg)
            # (also rescaled: (1 + reg) times it), so ||J|| max|x| is computed on x / max|x| (the Jacobian itself
            # overflows for max|x| near 1e-300)
            J = jacobian(x / s, inputs["k"], reg / s if mode == "mask" else reg, p, mode=mode, **kw)
            amplified = float(np.max(np.sum(np.abs(J), axis=1))) * (1.0 if mode == "mask" else s)
        else:
            J = jacobian(x, inputs["k"], reg, p, mode=mode, **kw)
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

_X = Argument("x", "(n,)", "float64", "the scores, n >= 2")
_K = Argument("k", "scalar", "int", "how many entries are selected, 1 <= k <= n - 1")
_REG = Argument("reg", "scalar", "float64", "lambda > 0, the weight of the regulariser R(y) = (lambda/p) ||y||_p^p")
_P = Argument("p", "scalar", "float64", "the exponent of the regulariser, p in (1, inf): 2 and 4/3 in the built-in cases")
_RESCALE = Argument("rescale", "scalar", "bool", "False: the thesis operator topkmag_R; True: the rescaled variant "
                    "y + reg sign(y)|y|^(p-1) of the public code")


def _params(doc_n):
    return (
        Parameter("n", Int(low=2), 100, doc_n),
        Parameter("k", OrNone(Int(low=1), "max(1, n // 4)"), None,
                  "how many entries are selected (None: max(1, n // 4), the built-in choice; another k is in the "
                  "case name, _k{k}); at most n - 1"),
        Parameter("p", Real(1.0, math.inf, closed="neither"), 2.0,
                  "the exponent of the regulariser (the built-in cases: 2 and 4/3; other p are named p{p})"),
        Parameter("reg", OrNone(Real(0.0, math.inf, closed="neither"), "the three regimes"), None,
                  "lambda (None: the three regimes of the built-in cases, hard = a quarter of the smallest gap of x, "
                  "partial = 1 and smooth = 1000; another value is named reg{reg})"),
    )


def _reg_convention(mode: str) -> Convention:
    """The regulariser's convention; the mask's temperature mapping is mask(x; reg) = mask(x / reg; 1)."""
    mask = mode == "mask"
    return Convention(
        "the regulariser and its weight",
        "argmax over the permutahedron P(1_k) of <y, x> - R(y), R(y) = (lambda/p) ||y||_p^p with lambda = reg (topk "
        "Section 7.4, R = (1/p)||.||_p^p scaled as in the Example of Section 7.5); p = 2 sparse and differentiable "
        "almost everywhere, p = 4/3 differentiable everywhere",
        ("code that divides the scores by a temperature tau and applies the unit regulariser; " if mask else "")
        + "an entropic (KL) or optimal-transport soft top-k (Cuturi et al., Xie et al.) is another operator, never "
        "sparse",
        ("a temperature tau: pass tau = reg (mask(x; reg) = mask(x / reg; 1)); " if mask else "")
        + "an entropic operator has no mapping: it fails these cases")


def _k_convention(mode: str) -> Convention:
    mask = mode == "mask"
    return Convention(
        "what is selected, and ties",
        f"the k largest {'entries' if mask else 'magnitudes |x_i|'} (topk Section 7.4); tied inputs get equal "
        "outputs whatever the order among them; k in [1, n - 1] (k = n is the identity, refused)",
        "torch.topk / jax.lax.top_k return the values and indices of the k largest (a hard operator)"
        + ("; a bottom-k selects the smallest" if mask else ""),
        ("a hard top-k as a mask, y = zeros(n); y[indices] = 1, agrees where the regime is hard (the cases hard_*); "
         "a bottom-k: call it with -x" if mask else
         "a hard top-k in magnitude, y = zeros(n); y[i] = x[i] at the indices of the k largest |x|, is the limit of "
         "the rescaled variant: it agrees where reg is negligible against the gaps of |x| (the cases "
         "hard_*_rescaled), not in the partial and smooth regimes"))


register(Kernel(
    name="topk_mask",
    module="theory.topk",
    signature="fn(x, k, reg, p) -> y   (regularised top-k mask, y in [0, 1]^n, sum y = k)",
    make_cases=_mask_cases,
    reference=lambda x, k, reg, p: (__import__("theory.topk", fromlist=["topk_mask"]).topk_mask(x, k, reg, p),),
    tolerance=_topk_value_tolerance("mask"),
    rule="max|y - y_ref| <= 4 max(1, q-1) n eps (max|y_ref| + ||J(x)||_inf max|x|), q = p/(p-1)",
    why=_TOPK_WHY,
    arguments=(_X, _K, _REG, _P),
    returns=(Argument("y", "(n,)", "float64", "the relaxed mask, y in [0, 1]^n with sum y = k"),),
    conventions=(
        _reg_convention("mask"), _k_convention("mask"),
        Convention("the output", "the relaxed mask itself, y = argmax_{y in P(1_k)} <y, x> - R(y) (not x * mask)",
                   "code returning the masked scores x * mask, or (values, indices)",
                   "return the mask: divide the masked scores by x where x != 0, or scatter ones at the indices"),
    ),
    parameters=_params("the size of the generic cases {regime}_{p}_n{n} (the built-in ones at n = 5 and 100)"),
    generate=_generated("topk_mask", lambda rows: _with(rows)),
))


def _magnitude_ref(x, k, reg, p, rescale):
    from theory.topk import topk_magnitude

    return (topk_magnitude(x, k, reg, p, rescale=bool(rescale)),)


register(Kernel(
    name="topk_magnitude",
    module="theory.topk",
    signature="fn(x, k, reg, p, rescale) -> y   (regularised top-k in magnitude: the thesis operator, or with "
              "rescale=True the rescaled variant of the public code)",
    make_cases=_magnitude_cases,
    reference=_magnitude_ref,
    tolerance=_topk_value_tolerance("magnitude"),
    rule="max|y - y_ref| <= 4 max(1, q-1) n eps (max|y_ref| + ||J(x)||_inf max|x|), q = p/(p-1)",
    why=_TOPK_WHY + "; the rescaled variant has its own Jacobian (its rows times 1 + reg (p-1)|y|^(p-2))",
    arguments=(_X, _K, _REG, _P, _RESCALE),
    returns=(Argument("y", "(n,)", "float64", "the relaxed top-k in magnitude, sign(y_i) in {0, sign(x_i)}"),),
    conventions=(
        Convention("the operator: the thesis topkmag_R or the rescaled variant",
                   "rescale=False (every case not named *_rescaled): the thesis operator topkmag_R(x) = "
                   "y_{phi,R}(x, 1_k) with phi(x) = x^2/2 (topk Eq. (7.4), Proposition 7.2): |y_i| = g with "
                   "g + reg g^(p-1) = |x_i| for a singleton among the k largest (|x_i|/(1 + reg) at p = 2, the "
                   "Example of Section 7.5), tending to 0 as reg grows",
                   "public code returns the rescaled variant sign(x)(|y| + |x| - |u|) = y + reg sign(y)|y|^(p-1) "
                   "((1 + reg) y at p = 2), equal to |x_i| on a singleton (the hard topkmag there): the cases "
                   "*_rescaled (rescale=True)",
                   "pass `rescale` through; code with the rescaled variant only: at p = 2 divide its output by "
                   "1 + reg where rescale is False, at other p solve y + reg sign(y)|y|^(p-1) = z entrywise for y; "
                   "code with the thesis operator only: return y + reg sign(y)|y|^(p-1) where rescale is True",
                   parameter="rescale"),
        _reg_convention("magnitude"), _k_convention("magnitude"),
        Convention("magnitude, not a mask times x",
                   "the phi(x) = x^2/2 operator of topk Section 7.4 on x itself (sign kept)",
                   "a relaxed top-k mask of |x| multiplied by x (the alternative the thesis discusses in its "
                   "experiments, 'Advantage of the non-linearity'): another operator, equal to the rescaled variant "
                   "in the hard regime only",
                   "none: x * topk_mask(|x|) fails the partial and smooth regimes and the thesis operator's hard "
                   "cases; it agrees with hard_*_rescaled only"),
    ),
    parameters=_params("the size of the generic cases {regime}_{p}_n{n} (the built-in ones at n = 5 and 100)")
    + (Parameter("rescale", Bool(), False, "the operator: False the thesis topkmag_R, True the rescaled variant "
                 "(case names end in _rescaled)"),),
    generate=_generated("topk_magnitude", lambda rows, rescale: _with(rows, rescale=rescale)),
))


def _jacobian_rows(rows, mode, rescale):
    """The Jacobian's cases of ``rows`` in one mode: named {mode}_{row}[_rescaled]."""
    if rescale and mode != "magnitude":
        raise ValueError("`rescale` applies to mode='magnitude' only (the mask has no rescaled variant)")
    tag = "_rescaled" if rescale else ""
    return [Case(f"{mode}_{name}{tag}", {**params, "mode": mode, "rescale": rescale},
                 {**inputs, "mode": mode, "rescale": rescale}) for name, params, inputs in rows]


def _jacobian_cases():
    rows = _topk_inputs()
    # the mask's Jacobian at 1e-300 is of order 1/reg = 1e300 and overflows inside theory.topk
    cases = _jacobian_rows([r for r in rows if r[0] != "tiny_1e-300_p2_n10"], "mask", False)
    cases += _jacobian_rows(rows, "magnitude", False)
    # the rescaled variant, except at 1e-300 with p = 4/3, where the rule's factor 1 + max|x|^(p-1)/reg is 1e100
    # (reg = 1e-200): a tolerance of 1e87 on entries of order 1 decides nothing
    return cases + _jacobian_rows([r for r in rows if r[0] != "tiny_1e-300_p4_3_n10"], "magnitude", True)


def _jacobian_ref(x, k, reg, p, mode, rescale):
    from theory.topk import jacobian

    return (jacobian(x, k, reg, p, mode=mode, rescale=bool(rescale)),)


register(Kernel(
    name="topk_jacobian",
    gradient=True,
    module="theory.topk",
    signature="fn(x, k, reg, p, mode, rescale) -> J   (n x n Jacobian of topk_mask (mode='mask') or topk_magnitude "
              "(rescale=True: of its rescaled variant))",
    make_cases=_jacobian_cases,
    reference=_jacobian_ref,
    tolerance=_jacobian_tolerance,
    rule="max|J - J_ref| <= 8 max(1, q-1) n eps max|J_ref| (1 + max|x|^(p-1)/reg)",
    why="the Jacobian is piecewise smooth: constant on each pooling pattern for p = 2 (entries 1/reg times block "
        "averages, rounded once per block sum), and for p = 4/3 a power of (x - u)/reg whose relative change under an "
        "input rounding is (q-1) eps max|x|^(p-1)/reg. Exact ties are left out: there the Jacobian jumps and any "
        "element of the Clarke subdifferential is a correct answer",
    arguments=(_X, _K, _REG, _P,
               Argument("mode", "scalar", "str", "'mask' (topk_mask) or 'magnitude' (topk_magnitude)"),
               Argument("rescale", "scalar", "bool", "mode='magnitude' only: True for the rescaled variant "
                        "(always False with mode='mask')")),
    returns=(Argument("J", "(n, n)", "float64", "J[i, j] = d y_i / d x_j"),),
    conventions=(
        Convention("the layout", "J[i, j] = d y_i / d x_j: row i is the gradient of output i (Proposition 7.8, "
                   "corrected as in ERRATA.md)",
                   "torch.autograd.functional.jacobian and jax.jacrev / jax.jacfwd use the same layout; stacking "
                   "the JVPs J e_j as rows gives the transpose",
                   "stacked JVPs: return their transpose (np.stack([jvp(e_j) for j]).T); stacked VJPs e_i^T J: "
                   "return them as they are"),
        Convention("the operator differentiated",
                   "mode='mask' topk_mask; mode='magnitude' the thesis topkmag_R (rescale=False) or the rescaled "
                   "variant (rescale=True, cases magnitude_*_rescaled), whose rows are those of topkmag_R times "
                   "1 + reg (p-1)|y|^(p-2)",
                   "public code differentiates its rescaled variant", "pass `rescale` through (see topk_magnitude)",
                   parameter="rescale"),
        Convention("kinks and signs",
                   "at a kink the Jacobian of the piece selected by the sort and the pooled block (an element of the "
                   "Clarke Jacobian); sign(0) = +1 in the magnitude mode; exact ties are not among the cases",
                   "autodiff through a sort or a PAV solver picks a piece by its own tie-breaking",
                   "none needed: off the kinks every correct Jacobian agrees"),
        _reg_convention("mask"),
    ),
    parameters=_params("the size of the generic cases {mode}_{regime}_{p}_n{n} (the built-in ones at n = 5 and 100)")
    + (Parameter("mode", Choice("mask", "magnitude"), "mask", "the operator differentiated"),
       Parameter("rescale", Bool(), False, "mode='magnitude' only: the rescaled variant (names end in _rescaled)")),
    generate=_generated("topk_jacobian", lambda rows, mode, rescale: _jacobian_rows(rows, mode, rescale)),
))
