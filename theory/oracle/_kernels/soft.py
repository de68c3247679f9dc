"""Oracle kernels: soft sort and soft rank (topk Sections 7.3-7.5)."""

from __future__ import annotations

import numpy as np

from .._core import Case, Kernel, register
from ._common import _rng
from .topk import _q_minus_1


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
