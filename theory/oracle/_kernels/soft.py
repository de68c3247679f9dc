"""Oracle kernels: soft sort and soft rank (topk Sections 7.3-7.5)."""

from __future__ import annotations

import math

import numpy as np

from ...experiments.config import Int, OrNone, Real
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _rng
from .topk import _p_tag, _q_minus_1

#: the seeds of the generic cases at the built-in sizes (any other n uses _OTHER_SEED)
_SEEDS = {5: 61, 100: 62}
_OTHER_SEED = 63
#: the three regimes of the built-in cases, by their regularisation
_REGIMES = {"hard": 1e-3, "partial": 1.0, "affine": 1e3}


def _soft_generic(n: int, p: float = 2.0, reg=None) -> list[Case]:
    """The generic cases at size n: x ~ N(0, 1), the three regimes (reg None) or the one reg given, each in both
    orders. The built-in cases at n = 5, 100 and the cases at the user's parameters come from here."""
    seed = _SEEDS.get(n, _OTHER_SEED)
    x = _rng(seed).standard_normal(n)
    if reg is None:
        regimes = tuple(_REGIMES.items())
    else:
        regimes = ((next((name for name, value in _REGIMES.items() if value == reg), f"reg{reg:.6g}"), reg),)
    cases = []
    for regime, r in regimes:
        for desc in (True, False):
            tag = "desc" if desc else "asc"
            cases.append(Case(f"{regime}_{_p_tag(p)}_n{n}_{tag}",
                              {"seed": seed, "n": n, "p": p, "reg": r, "regime": regime, "descending": desc},
                              {"x": x, "reg": r, "p": p, "descending": desc}))
    return cases


def _soft_cases():
    cases = []
    for p in (2.0, 4.0 / 3.0):
        ptag = _p_tag(p)
        for n in _SEEDS:
            cases += _soft_generic(n, p, None)
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


def _generator(name):
    """The cases of kernel ``name`` at the user's (n, p, reg): the size checked against what the tolerance rule's
    n x n Jacobian needs, every reference and tolerance computed once (a value the operator refuses is a named
    error before any verification)."""
    def generate(n, p, reg):
        from ..._validation import check_memory, check_work
        from .._core import kernel

        func = f"the oracle's {name} cases"
        check_memory(8 * 3 * n * n, "n", n, func=func, hint="The tolerance rule builds the n x n Jacobian.")
        check_work(100.0 * n * n, "n", n, func=func)
        own = kernel(name)
        cases = _soft_generic(n, p, reg)
        for c in cases:
            ref = tuple(np.asarray(o, dtype=np.float64) for o in own.reference(**c.inputs))
            own.tolerance(c.inputs, ref, 2.0 ** -52)
        return cases
    return generate


_PARAMETERS = (
    Parameter("n", Int(low=1), 100, "the size of the generic cases {regime}_{p}_n{n}_{asc|desc} (the built-in ones "
              "at n = 5 and 100)"),
    Parameter("p", Real(1.0, math.inf, closed="neither"), 2.0,
              "the exponent of the regulariser (the built-in cases: 2 and 4/3; other p are named p{p})"),
    Parameter("reg", OrNone(Real(0.0, math.inf, closed="neither"), "the three regimes"), None,
              "lambda (None: the three regimes of the built-in cases, hard = 1e-3, partial = 1, affine = 1000; "
              "another value is named reg{reg})"),
)

_COMMON_CONVENTIONS = (
    Convention("the regulariser and its weight",
               "argmax over the permutahedron of a linear term minus R(y) = (lambda/p)||y||_p^p, lambda = reg "
               "(topk Sections 7.3-7.4, the phi = identity case of Proposition 7.2); at p = 2 the Euclidean "
               "projection of rho/reg onto P(x) (sort) or of -x/reg onto P(rho) (rank): Blondel et al. (2020)'s "
               "quadratic operators",
               "torchsort and google-research fast-soft-sort: regularization='l2' with regularization_strength equal "
               "to reg (p = 2 only); their 'kl' (entropic) regularisation is another operator",
               "pass regularization='l2', regularization_strength=reg (examples/oracle/torchsort_soft.py); 'kl' has "
               "no mapping"),
    Convention("the order",
               "descending=True: the largest first (sort) and rank 1 for the largest entry (rank), rho = (n, ..., 1) "
               "(topk Section 7.3); descending=False the increasing order",
               "torchsort and fast-soft-sort sort and rank increasingly by default (rank 1 for the smallest)",
               "sort: flip their increasing output where descending is True; rank: their rank of -x where "
               "descending is True"),
    Convention("the shape", "one vector x of shape (n,) in, one vector (n,) out",
               "torchsort works on a batch (B, n) of torch tensors",
               "call with x[None] and return row 0 (examples/oracle/torchsort_soft.py)"),
)

for _which in ("sort", "rank"):
    def _soft_ref(x, reg, p, descending, _which=_which):
        import theory.topk as T

        return ((T.soft_sort if _which == "sort" else T.soft_rank)(x, reg, p, descending),)

    register(Kernel(
        name=f"soft_{_which}",
        module="theory.topk",
        signature=f"fn(x, reg, p, descending) -> y   (p-norm regularised soft {_which}, topk Section 7.3)",
        make_cases=_soft_cases,
        reference=_soft_ref,
        tolerance=_soft_tolerance(_which),
        rule="max|y - y_ref| <= 4 max(1, q-1) n eps (max|y_ref| + ||J(x)||_inf max|x|), q = p/(p-1)",
        why="a projection onto the permutahedron (p = 2) or its p-norm analogue: pooled values are means of at "
            "most n terms and an input rounding of eps max|x| moves the output by ||J||_inf eps max|x| (J its "
            "Jacobian, from the package's Jacobian-vector products); p = 4/3 adds the power's factor q - 1 = 3",
        arguments=(
            Argument("x", "(n,)", "float64", "the values, n >= 1"),
            Argument("reg", "scalar", "float64", "lambda > 0, the weight of R(y) = (lambda/p)||y||_p^p"),
            Argument("p", "scalar", "float64", "the exponent, p in (1, inf): 2 and 4/3 in the built-in cases"),
            Argument("descending", "scalar", "bool", "True: largest first / rank 1 for the largest"),
        ),
        returns=(Argument("y", "(n,)", "float64",
                          "the soft sorted values" if _which == "sort" else
                          "the soft ranks, in the order of x, summing to n(n+1)/2"),),
        conventions=_COMMON_CONVENTIONS,
        parameters=_PARAMETERS,
        generate=_generator(f"soft_{_which}"),
    ))
