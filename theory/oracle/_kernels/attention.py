"""Oracle kernels: attention as implementations compute it (theory.sinkhorn; the sinkformers chapter of Sander's
thesis): Sinkhorn at a fixed number of normalisations and a temperature (``sinkhorn_iterations``), and batched,
multi-head, masked SoftMax or Sinkhorn attention (``attention_heads``)."""

from __future__ import annotations

import math

import numpy as np

from ...experiments.config import Choice, Int, Real
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _guard, _rng, _tag, _validated
from .sinkhorn import MARGINALS, _with_marginals

#: the built-in numbers of normalisations: 0 (K^0 itself), 1 (the row SoftMax), 3 and 21 (the Sinkformers' range,
#: Section 5.6), and the built-in temperatures
ITERATIONS = (0, 1, 3, 21)
TEMPERATURES = (0.1, 1.0, 10.0)
#: K^0 = exp(C / eps) itself (n_iter = 0) overflows beyond this (exp(709.78) is float64's largest)
MAX_EXPONENT = 700.0
#: the built-in Gaussian logits of sinkhorn_iterations: (n, scale) -> seed; any other pair uses _ITER_OTHER_SEED
_ITER_SEEDS = {(8, 1.0): 121, (30, 1.0): 122, (8, 5.0): 123, (1, 1.0): 124}
_ITER_OTHER_SEED = 129


def _check_iter_size(n: int, n_iter: int) -> None:
    """Refuse what the reference (the package's log-domain Sinkhorn, about 600 n^2 operations per normalisation)
    and the rule cannot take, naming ``n`` or ``n_iter``."""
    _guard("sinkhorn_iterations", "n", n, nbytes=8.0 * 8 * n * n, ops=600.0 * n * n)
    _guard("sinkhorn_iterations", "n_iter", n_iter, ops=(n_iter + 1) * (600.0 * n * n + 2000.0))


def _iter_case(n: int, scale: float, n_iter: int, eps: float, marginals: str = "ones") -> Case:
    seed = _ITER_SEEDS.get((n, scale), _ITER_OTHER_SEED)
    C = scale * _rng(seed).standard_normal((n, n))
    case = Case(f"gauss_n{n}_scale{_tag(scale)}_iter{n_iter}_eps{_tag(eps)}",
                {"n": n, "seed": seed, "law": f"C_ij ~ N(0, {scale ** 2:g})", "n_iter": n_iter, "eps": eps},
                {"C": C, "n_iter": n_iter, "eps": eps})
    return _with_marginals(case, marginals)


def _iter_generate(n: int, scale: float, n_iter: int, eps: float, marginals: str) -> list[Case]:
    """Gaussian logits at the user's (n, scale, n_iter, eps, marginals): the code path of the built-in grid."""
    _check_iter_size(n, n_iter)
    return _validated("sinkhorn_iterations", [_iter_case(n, scale, n_iter, eps, marginals)])


def _iter_cases() -> list[Case]:
    cases = [_iter_case(8, 1.0, l, e) for l in ITERATIONS for e in TEMPERATURES]
    cases += [_iter_case(30, 1.0, 3, 1.0), _iter_case(30, 1.0, 21, 0.1), _iter_case(30, 1.0, 0, 10.0)]
    cases += [_iter_case(1, 1.0, l, 0.1) for l in (0, 1, 21)]                         # n = 1: K = [[1]] from l = 1
    cases += [_iter_case(8, 5.0, l, e) for l, e in ((1, 0.1), (3, 0.1), (21, 0.1), (0, 1.0))]  # C / eps spread ~ 300
    cases += [_iter_case(8, 1.0, l, 1.0, "uniform") for l in (0, 3)] + [_iter_case(30, 1.0, 21, 0.1, "uniform")]

    def add(name, C, n_iter, eps, **params):
        cases.append(Case(name, {**params, "n_iter": n_iter, "eps": eps, "marginals": "ones"},
                          {"C": np.asarray(C, dtype=np.float64), "n_iter": n_iter, "eps": eps, "marginals": "ones"}))

    r = _rng(125)
    a, b = r.standard_normal(6), r.standard_normal(6)
    add("separable_n6_iter3_eps0.1", a[:, None] + b[None, :], 3, 0.1, n=6, seed=125,
        law="C_ij = a_i + b_j (every entry 1/n from the second normalisation on)")
    add("constant_n5_iter21_eps0.1", np.full((5, 5), -3.0), 21, 0.1, n=5, law="constant logits (ties everywhere)")
    add("offset_1e6_n6_iter3_eps1", 1e6 + _rng(126).standard_normal((6, 6)), 3, 1.0, n=6, seed=126,
        law="N(0, 1) + 1e6 (a shift: the result is that of N(0, 1), but C / eps rounds by eps 1e6)")
    return cases


def _iter_ref(C, n_iter, eps, marginals):
    """K^{n_iter} of exp(C / eps): the package's sinkhorn(C / eps, n_iter) (exp(C / eps) itself at n_iter = 0);
    exp(C / eps) is exp((C / eps) / 1), so the package's temperature-1 Sinkhorn on C / eps is the definition."""
    from theory.sinkhorn import sinkhorn

    if not (isinstance(eps, float) and 0.0 < eps < math.inf):
        raise ValueError(f"`eps` must be a positive finite number; got {eps!r}")
    with np.errstate(over="ignore", divide="ignore"):
        L = C / eps
    if not np.all(np.isfinite(L)):
        raise ValueError(f"`eps` = {eps!r}: C / eps overflows (max|C| = {np.max(np.abs(C)):.3g})")
    if n_iter == 0:
        if np.max(L) > MAX_EXPONENT:
            raise ValueError(f"`n_iter` = 0: K^0 = exp(C / eps) overflows (max C / eps = {np.max(L):.3g} > "
                             f"{MAX_EXPONENT:g})")
        K = np.exp(L)
    else:
        K = sinkhorn(L, n_iter=n_iter)
    return (K / C.shape[0] if marginals == "uniform" else K,)


def _iter_tol(inputs, ref, eps):
    C, l, temp = inputs["C"], inputs["n_iter"], inputs["eps"]
    n = C.shape[0]
    return (4.0 * (l + 1) * (n + 2) * eps * (1.0 + float(np.max(np.abs(C))) / temp) * float(np.max(ref[0])),)


_ITER_RULE = ("max|K - K_ref| <= 4 (n_iter + 1) (n + 2) eps (1 + max|C| / eps_T) max K_ref, eps_T the temperature "
              "(argument `eps`), eps the unit roundoff")
_ITER_WHY = ("log K^l = C / eps_T + f 1^T + 1 g^T with potentials f (rows) and g (columns); each normalisation "
             "recomputes one potential as minus a log-sum-exp of n terms, a 1-Lipschitz function (sup norm) of the "
             "other potential rounded by about (n + 2) eps (1 + max|C| / eps_T): the terms of size max|C| / eps_T "
             "(also the rounding of C / eps_T) and a sum of n exponentials. So after l normalisations the errors of "
             "f and g add up to at most l such roundings (no contraction, no spectral gap, is needed for a fixed l), "
             "and log K^l is off by (2 l + 1) of them at most, relative to K")

_TEMPERATURE = Convention(
    "the temperature",
    "K^0 = exp(C / eps) with the temperature eps > 0 an argument (eps = 1 is Eq. (5.3)); the package's "
    "theory.sinkhorn.sinkhorn takes the logits only, so the reference is sinkhorn(C / eps, n_iter) "
    "(exp(C / eps) = exp((C / eps) / 1))",
    "optimal-transport code takes a cost M and a regularisation reg, exp(-M / reg) (POT's ot.sinkhorn, OTT-JAX's "
    "epsilon); attention code writes softmax(C / tau)",
    "M = -C (or max C - C) and reg = eps; tau = eps",
    parameter="eps")
_COUNT = Convention(
    "what an iteration is",
    "n_iter counts normalisations, rows first: 1 is the row SoftMax K^1, 2 a row and a column normalisation, an "
    "odd count ends on rows (row sums exactly 1), an even count >= 2 on columns (Eq. (5.3); n_iter = 0 returns "
    "K^0 = exp(C / eps) unnormalised)",
    "code counting a row-and-column pair as one iteration (POT's numItermax: one update of u then of v); code "
    "normalising columns first",
    "k pairs are n_iter = 2 k (an odd n_iter is k pairs and a final row step); columns first: pass C.T and "
    "transpose the result back (rows first on C is columns first on C^T, transposed); POT: stopThr = 0 so that "
    "every iteration runs",
    parameter="n_iter")
_ITER_MARGINALS = Convention(
    "the marginals",
    "marginals 'ones': the normalisations make unit row (column) sums, the matrix K^l of Eq. (5.3); 'uniform': "
    "K^l / n, the plan between the uniform probability vectors (the cases named *_uniform)",
    "POT's ot.sinkhorn(a, b, M, reg) returns the plan with a = b = 1/n",
    "return K^l / n for 'uniform' and K^l for 'ones'",
    parameter="marginals")

register(Kernel(
    name="sinkhorn_iterations",
    module="theory.sinkhorn",
    signature="fn(C, n_iter, eps, marginals) -> K   (K^{n_iter} of K^0 = exp(C / eps): n_iter normalisations, "
              "rows first; K^{n_iter} / n for marginals 'uniform')",
    make_cases=_iter_cases,
    reference=_iter_ref,
    tolerance=_iter_tol,
    rule=_ITER_RULE,
    why=_ITER_WHY,
    arguments=(
        Argument("C", "(n, n)", "float64", "the logits"),
        Argument("n_iter", "scalar", "int", "the number of normalisations (0: K^0; built-in 0, 1, 3, 21)"),
        Argument("eps", "scalar", "float64", "the temperature: K^0 = exp(C / eps) (built-in 0.1, 1, 10)"),
        Argument("marginals", "scalar", "str", "'ones' (unit sums) or 'uniform' (K^{n_iter} / n)"),
    ),
    returns=(Argument("K", "(n, n)", "float64", "K^{n_iter} (marginals 'ones') or K^{n_iter} / n ('uniform')"),),
    conventions=(
        _TEMPERATURE, _COUNT, _ITER_MARGINALS,
        Convention("logits, not costs",
                   "K^0 = exp(C / eps): more mass where C is larger (Eq. (5.3))",
                   "costs M with exp(-M / reg)",
                   "M = -C; a constant added to C changes nothing once n_iter >= 1"),
    ),
    parameters=(
        Parameter("n", Int(low=1), 8, "the size of the Gaussian logits (built-in: 1, 8, 30)"),
        Parameter("scale", Real(0.0, math.inf), 1.0, "their standard deviation (built-in: 1, 5)"),
        Parameter("n_iter", Int(low=0), 3, "the number of normalisations (built-in: 0, 1, 3, 21)"),
        Parameter("eps", Real(0.0, math.inf, closed="neither"), 1.0, "the temperature (built-in: 0.1, 1, 10); "
                  "n_iter = 0 refuses max C / eps > 700 (exp overflows)"),
        Parameter("marginals", Choice(*MARGINALS), "ones", "the marginals (built-in: both)"),
    ),
    generate=_iter_generate,
))


# ============================================================================================== attention_heads

#: the attention kinds of attention_heads and the masks of its generated cases
HEAD_KINDS = ("softmax", "sinkhorn")
MASKS = ("none", "causal", "padding")
#: below the smallest kept logit, a masked one is set this far: exp(x) = 0 exactly in float64 for x < -745.2, so
#: each masked term of the row's sum and of the output is exactly 0 (the reduction of _masked_softmax)
_MASK_DROP = 800.0
#: the built-in token batches: (B, n, d, h, d_h, scale) -> seed; any other tuple uses _HEADS_OTHER_SEED
_HEADS_SEEDS = {(2, 6, 8, 2, 4, 1.0): 131, (1, 1, 4, 2, 2, 1.0): 132, (3, 10, 6, 1, 6, 1.0): 133,
                (2, 12, 8, 4, 2, 1.0): 134, (2, 8, 4, 2, 3, 4.0): 135, (1, 5, 3, 3, 1, 1.0): 136}
_HEADS_OTHER_SEED = 139


def _mask_of(kind: str, B: int, n: int) -> np.ndarray:
    """The boolean mask (True = keep) of a generated case: all True ('none', shape (n, n)), lower-triangular with
    the diagonal ('causal', (n, n)), or batch element b keeping its first n - b keys ('padding', (B, n, n); at
    least one key)."""
    if kind == "none":
        return np.ones((n, n), dtype=bool)
    if kind == "causal":
        return np.tril(np.ones((n, n), dtype=bool))
    keep = np.maximum(n - np.arange(B), 1)
    return np.broadcast_to(np.arange(n)[None, None, :] < keep[:, None, None], (B, n, n)).copy()


def _heads_case(B, n, d, h, d_h, scale, mask, kind, n_iter) -> Case:
    seed = _HEADS_SEEDS.get((B, n, d, h, d_h, scale), _HEADS_OTHER_SEED)
    r = _rng(seed)
    X = scale * r.standard_normal((B, n, d))
    WQ, WK, WV = (r.standard_normal((h, d, d_h)) / np.sqrt(d) for _ in range(3))
    kind_name = kind if kind == "softmax" else f"sinkhorn{n_iter}"
    name = (f"{kind_name}_B{B}_n{n}_d{d}_h{h}_dh{d_h}" + ("" if mask == "none" else f"_{mask}")
            + ("" if scale == 1.0 else f"_large_logits_x{_tag(scale)}" if scale > 1 else f"_x{_tag(scale)}"))
    params = {"seed": seed, "B": B, "n": n, "d": d, "h": h, "d_h": d_h, "mask": mask, "kind": kind,
              "n_iter": n_iter, "law": f"X ~ N(0, {scale ** 2:g}); W ~ N(0, 1/d)"}
    return Case(name, params, {"X": X, "WQ": WQ, "WK": WK, "WV": WV, "mask": _mask_of(mask, B, n), "kind": kind,
                               "n_iter": n_iter})


def _check_heads_size(B, n, d, h, d_h, n_iter) -> None:
    ops = B * h * (4.0 * n * d * d_h + 2.0 * n * n * d_h + (n_iter + 2) * 600.0 * n * n)
    _guard("attention_heads", "n", n, nbytes=8.0 * (8 * B * n * n + 4 * B * n * (d + h * d_h) + 3 * h * d * d_h),
           ops=ops)
    _guard("attention_heads", "B", B, ops=ops)
    _guard("attention_heads", "n_iter", n_iter, ops=ops)


def _heads_generate(B, n, d, h, d_h, scale, mask, kind, n_iter) -> list[Case]:
    """One batch at the user's parameters: the code path of the built-in ones. A mask with kind 'sinkhorn' is
    refused (see the convention on masks)."""
    if kind == "sinkhorn" and mask != "none":
        raise ValueError(f"`mask` = {mask!r} with `kind` = 'sinkhorn': a masked logit makes K^0 = exp(C) zero "
                         f"there, which the package's Sinkhorn does not take (masks are for kind 'softmax')")
    if kind == "softmax" and n_iter != 1:
        raise ValueError(f"`n_iter` = {n_iter} with `kind` = 'softmax': the row SoftMax is one normalisation "
                         f"(n_iter = 1)")
    _check_heads_size(B, n, d, h, d_h, n_iter)
    return _validated("attention_heads", [_heads_case(B, n, d, h, d_h, scale, mask, kind, n_iter)])


def _heads_cases() -> list[Case]:
    cases = []
    for key in _HEADS_SEEDS:
        B, n, d, h, d_h, scale = key
        cases.append(_heads_case(*key, "none", "softmax", 1))
        for l in (3, 21):
            cases.append(_heads_case(*key, "none", "sinkhorn", l))
    for key in [(2, 6, 8, 2, 4, 1.0), (2, 12, 8, 4, 2, 1.0), (2, 8, 4, 2, 3, 4.0)]:
        for mask in ("causal", "padding"):
            cases.append(_heads_case(*key, mask, "softmax", 1))
    cases.append(_heads_case(2, 6, 8, 2, 4, 1.0, "none", "sinkhorn", 1))   # n_iter = 1: the row SoftMax
    return cases


def _heads_check(X, WQ, WK, WV, mask, kind, n_iter):
    """The validated arrays (mask broadcast to (B, n, n)), or a ValueError naming the argument."""
    if X.ndim != 3:
        raise ValueError(f"`X` must have shape (B, n, d); got {X.shape}")
    B, n, d = X.shape
    if WQ.ndim != 3 or WQ.shape[1] != d or WK.shape != WQ.shape or WV.shape != WQ.shape:
        raise ValueError(f"`WQ`, `WK` and `WV` must have the shape (h, d, d_h) with d = {d}; got {WQ.shape}, "
                         f"{WK.shape}, {WV.shape}")
    mask = np.asarray(mask)
    if mask.dtype != bool or mask.shape not in ((n, n), (B, n, n)):
        raise ValueError(f"`mask` must be a boolean array of shape ({n}, {n}) or ({B}, {n}, {n}); got "
                         f"{mask.dtype} {mask.shape}")
    mask = np.broadcast_to(mask, (B, n, n))
    if not np.all(mask.any(axis=-1)):
        b, i = np.argwhere(~mask.any(axis=-1))[0]
        raise ValueError(f"`mask` masks every key of query {i} in batch element {b}: a fully masked row has no "
                         f"attention (refused)")
    if kind not in HEAD_KINDS:
        raise ValueError(f"`kind` must be one of {HEAD_KINDS}; got {kind!r}")
    if kind == "sinkhorn" and not mask.all():
        raise ValueError("`mask` with `kind` = 'sinkhorn': the package's Sinkhorn takes finite logits only")
    if kind == "softmax" and n_iter != 1:
        raise ValueError(f"`n_iter` must be 1 with `kind` = 'softmax'; got {n_iter!r}")
    return mask


def _masked_softmax(C, keep):
    """The row SoftMax of C over the kept keys, by the package's Sinkhorn (one normalisation).

    Proof of the reduction. With a masked logit -inf, exp(-inf) = 0: row i of the masked SoftMax is
    exp(C_ij) 1[keep_ij] / sum_{k kept} exp(C_ik), the SoftMax of C_i over its kept keys (at least one). Here
    each masked logit is replaced by (min of the kept logits) - 800, finite as the package requires; after the
    row normalisation its entry is exp(C'_ij - LSE_i) with C'_ij - LSE_i <= -800 < -745.2, which is exactly 0 in
    float64, and its term of the row's log-sum-exp is exp(<= -800) = 0 exactly too; so the result is the
    restricted SoftMax, rounded as the package rounds an unmasked one."""
    from theory.sinkhorn import sinkhorn

    if keep.all():
        return sinkhorn(C, n_iter=1)
    low = float(np.min(C[keep])) - _MASK_DROP
    return sinkhorn(np.where(keep, C, low), n_iter=1)


def _heads_ref(X, WQ, WK, WV, mask, kind, n_iter):
    """Each batch element b and head k by the package: T_{b,k} = attention(X_b, WQ_k^T, WK_k^T, I_d, kind,
    n_iter) WV_k (the package's values X WV^T with WV = I are the tokens themselves, and A (X WV_k) = (A X) WV_k);
    masked SoftMax through _masked_softmax on logits(X_b, WQ_k^T, WK_k^T); heads concatenated on the last axis."""
    from theory.sinkhorn import attention, logits

    mask = _heads_check(X, WQ, WK, WV, mask, kind, n_iter)
    B, n, d = X.shape
    h, _, d_h = WQ.shape
    out = np.empty((B, n, h * d_h))
    eye = np.eye(d)
    for b in range(B):
        for k in range(h):
            if mask[b].all():
                AX = attention(X[b], WQ[k].T, WK[k].T, eye, kind, n_iter=n_iter if kind == "sinkhorn" else None)
            else:
                AX = _masked_softmax(logits(X[b], WQ[k].T, WK[k].T), mask[b]) @ X[b]
            out[b, :, k * d_h:(k + 1) * d_h] = AX @ WV[k]
    return (out,)


def _heads_tol(inputs, ref, eps):
    from theory.sinkhorn import logits

    X, WQ, WK, WV, kind, l = (inputs[k] for k in ("X", "WQ", "WK", "WV", "kind", "n_iter"))
    mask = np.broadcast_to(np.asarray(inputs["mask"]), (X.shape[0], X.shape[1], X.shape[1]))
    B, n, d = X.shape
    h, _, d_h = WQ.shape
    g = 2.0 * (l if kind == "sinkhorn" else 1)
    worst = 0.0
    for b in range(B):
        Xa = np.abs(X[b])
        keep = mask[b]
        for k in range(h):
            C = logits(X[b], WQ[k].T, WK[k].T)
            Cabs = float(np.max(np.where(keep, (Xa @ np.abs(WQ[k])) @ (Xa @ np.abs(WK[k])).T, 0.0)))
            A = _masked_softmax(C, keep) if kind == "softmax" else _iter_ref(C, l, 1.0, "ones")[0]
            v = np.max(Xa @ np.abs(WV[k]), axis=1)  # max_c (|X_b||WV_k|)_jc per token j
            S = float(np.max(A @ v))
            worst = max(worst, S * ((n + d + d_h) + g * ((d + d_h) * Cabs + n + 2)))
    return (8.0 * eps * worst,)


_HEADS_RULE = ("max|Y - Y_ref| <= 8 eps max_{b,k,i} (sum_j A_ij v_j) ((n + d + d_h) + g ((d + d_h) |C|max + n + 2)); "
               "per batch element b and head k: A its attention matrix, v_j = max_c (|X_b||WV_k|)_jc, |C|max = max "
               "over the kept entries of (|X_b||WQ_k|)(|X_b||WK_k|)^T; g = 2 for 'softmax', 2 n_iter for 'sinkhorn'")
_HEADS_WHY = ("a logit is a sum of d_h products of d-term dot products, rounded by about (d + d_h) eps |C|max; the "
              "row SoftMax turns that into a relative error of at most twice it per entry (numerator and the "
              "normaliser, a sum of n terms), n_iter Sinkhorn normalisations into at most 2 n_iter times it (each "
              "recomputes a potential, a 1-Lipschitz log-sum-exp: see sinkhorn_iterations); the product with the "
              "values X_b WV_k adds n + d rounding terms of size max|X_b||WV_k|. Masked entries are exactly 0 and "
              "carry no error; the heads are independent, so the bound is the largest of theirs")

register(Kernel(
    name="attention_heads",
    module="theory.sinkhorn",
    signature="fn(X, WQ, WK, WV, mask, kind, n_iter) -> Y   ((B, n, h d_h); head k of batch element b: "
              "A (X_b WV[k]) with logits C = (X_b WQ[k])(X_b WK[k])^T, A the row SoftMax over the kept keys or "
              "n_iter Sinkhorn normalisations; the heads concatenated)",
    make_cases=_heads_cases,
    reference=_heads_ref,
    tolerance=_heads_tol,
    rule=_HEADS_RULE,
    why=_HEADS_WHY,
    arguments=(
        Argument("X", "(B, n, d)", "float64", "B sequences of n tokens (rows)"),
        Argument("WQ", "(h, d, d_h)", "float64", "the query weights: head k's queries X_b @ WQ[k]"),
        Argument("WK", "(h, d, d_h)", "float64", "the key weights: keys X_b @ WK[k]"),
        Argument("WV", "(h, d, d_h)", "float64", "the value weights: values X_b @ WV[k]"),
        Argument("mask", "(n, n) or (B, n, n)", "bool", "True = query i attends to key j; (n, n) for every batch "
                 "element; all True in the unmasked cases and in every 'sinkhorn' case"),
        Argument("kind", "scalar", "str", "'softmax' (the row SoftMax K^1) or 'sinkhorn' (n_iter normalisations)"),
        Argument("n_iter", "scalar", "int", "Sinkhorn's normalisations, rows first (1 for 'softmax'; built-in 3, "
                 "21 and 1)"),
    ),
    returns=(Argument("Y", "(B, n, h d_h)", "float64", "Y[b, i, k d_h:(k + 1) d_h] = head k's output at query i: "
                      "the heads concatenated, no output projection"),),
    conventions=(
        Convention("the layout of the weights",
                   "WQ, WK, WV of shape (h, d, d_h), acting on row tokens: head k's queries are X_b @ WQ[k] "
                   "(d_h = d / h in most built-in cases; any d_h is accepted)",
                   "torch.nn.MultiheadAttention(E, h, bias=False, batch_first=True) holds in_proj_weight (3E, E) "
                   "= [Wq; Wk; Wv] with q = x @ Wq^T, head k the rows k d_h:(k + 1) d_h; the package's "
                   "theory.sinkhorn.attention takes one head's WQ (m, d) with queries X WQ^T",
                   "WQ[k] = Wq[k d_h:(k + 1) d_h].T, i.e. WQ = Wq.reshape(h, d_h, E).transpose(0, 2, 1) (same for "
                   "WK, WV); and Wq = WQ.transpose(0, 2, 1).reshape(h d_h, d); the package's WQ is WQ[k].T"),
        Convention("the logits' scale",
                   "C = (X_b WQ[k])(X_b WK[k])^T with no 1/sqrt(d_h) (Eq. (5.1))",
                   "scaled dot-product attention divides by sqrt(d_h) (torch.nn.MultiheadAttention, "
                   "torch.nn.functional.scaled_dot_product_attention's default)",
                   "scale=1.0 in scaled_dot_product_attention; nn.MultiheadAttention: in_proj_weight's query "
                   "rows times sqrt(d_h) (pass WQ * sqrt(d_h))"),
        Convention("the mask",
                   "a boolean mask, True = keep (query i attends to key j); a masked logit is -inf, so row i is "
                   "the SoftMax over its kept keys; a fully masked row is refused (no case has one, and the "
                   "reference raises); masks only with kind 'softmax': a masked logit makes K^0 = exp(C) zero "
                   "there, which the package's Sinkhorn (finite logits, K^0 > 0) does not take, and Sinkhorn's "
                   "limit with zeros exists only for a pattern with total support (a causal mask's is the "
                   "identity, approached slowly)",
                   "torch.nn.MultiheadAttention's boolean attn_mask is True = masked (the opposite), shape (n, n) "
                   "or (B h, n, n), and returns NaN on a fully masked row; scaled_dot_product_attention's boolean "
                   "attn_mask is True = keep; additive float masks (0 / -inf)",
                   "nn.MultiheadAttention: attn_mask = ~mask, a (B, n, n) mask repeated per head "
                   "(mask.repeat_interleave(h, 0)); scaled_dot_product_attention: attn_mask = mask; additive: "
                   "np.where(mask, 0, -inf)"),
        Convention("the output",
                   "the heads concatenated on the last axis in head order, Y[b, i, k d_h + c] (c < d_h); no output "
                   "projection, no biases, no residual",
                   "torch.nn.MultiheadAttention applies out_proj (an (E, E) linear map with bias) after the "
                   "concatenation and returns (B, n, E) with batch_first=True ((n, B, E) otherwise)",
                   "out_proj.weight = identity, bias=False, batch_first=True; code returning (B, h, n, d_h): "
                   "transpose(0, 2, 1, 3).reshape(B, n, h d_h)"),
        Convention("Sinkhorn's iterations",
                   "kind 'sinkhorn': n_iter normalisations of exp(C), rows first (as in sinkhorn_iterations at "
                   "eps = 1); n_iter = 1 is the row SoftMax",
                   "Sinkformers' code and others count a row-and-column pair as an iteration",
                   "k pairs are n_iter = 2 k",
                   parameter="n_iter"),
    ),
    parameters=(
        Parameter("B", Int(low=1), 2, "the batch size (built-in: 1, 2, 3)"),
        Parameter("n", Int(low=1), 6, "the tokens per sequence (built-in: 1, 5, 6, 8, 10, 12)"),
        Parameter("d", Int(low=1), 8, "the token dimension (built-in: 3, 4, 6, 8)"),
        Parameter("h", Int(low=1), 2, "the number of heads (built-in: 1, 2, 3, 4)"),
        Parameter("d_h", Int(low=1), 4, "the head dimension (built-in: 1 to 6)"),
        Parameter("scale", Real(0.0, math.inf), 1.0, "the tokens' standard deviation (built-in: 1, 4 the large "
                  "logits)"),
        Parameter("mask", Choice(*MASKS), "none", "'none', 'causal' or 'padding' (batch element b keeps its "
                  "first n - b keys); 'softmax' only"),
        Parameter("kind", Choice(*HEAD_KINDS), "softmax", "'softmax' or 'sinkhorn'"),
        Parameter("n_iter", Int(low=1), 1, "Sinkhorn's normalisations (1 for 'softmax')"),
    ),
    generate=_heads_generate,
))
