"""Oracle kernels: sinkhorn attention (theory.sinkhorn; the sinkformers chapter of Sander's thesis): the doubly stochastic limit and the three attention fields (kernel K^0 / n, row SoftMax K^1, Sinkhorn K^infinity)."""

from __future__ import annotations

import math

import numpy as np

from ...experiments.config import Choice, Int, Real
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _guard, _rng, _tag, _validated


#: the column-sum error at which the reference stops (theory.sinkhorn.sinkhorn's default); a user's limit
#: must be as converged
SINKHORN_TOL = 1e-13
#: the marginals of the limit: "ones", K 1 = K^T 1 = 1 (the thesis's K^infinity), or "uniform", the transport
#: plan P = K / n between the uniform probability vectors (what optimal-transport libraries return)
MARGINALS = ("ones", "uniform")
#: the built-in Gaussian logits of `sinkhorn`: (n, scale) -> seed; any other pair uses _OTHER_SEED
_GAUSS_SEEDS = {(2, 1.0): 101, (5, 1.0): 102, (30, 1.0): 103, (200, 1.0): 104, (50, 5.0): 105}
_OTHER_SEED = 109


def _sized(kernel: str, n: int) -> None:
    """Refuse an n x n problem above what the reference and the tolerance rule take: a few float64 n x n
    matrices, the Sinkhorn iterations and the eigenvalues of K K^T (about 10 n^3 operations)."""
    _guard(kernel, "n", n, nbytes=8.0 * 8 * n * n, ops=10.0 * n ** 3,
           hint="The tolerance rule takes the eigenvalues of an n x n matrix.")


def _with_marginals(case: Case, marginals: str) -> Case:
    """``case`` with the argument ``marginals``; the plan's cases are named ``{name}_uniform``."""
    suffix = "" if marginals == "ones" else f"_{marginals}"
    return Case(case.name + suffix, {**case.params, "marginals": marginals}, {**case.inputs, "marginals": marginals})


def _gauss_case(n: int, scale: float, marginals: str = "ones") -> Case:
    seed = _GAUSS_SEEDS.get((n, scale), _OTHER_SEED)
    regime = ("slow mixing (gap ~ 0.03)" if (n, scale) == (50, 5.0) else
              "generic" if scale <= 1 else "spread logits (slower mixing)")
    case = Case(f"gauss_n{n}_scale{_tag(scale)}", {"n": n, "seed": seed, "law": f"C_ij ~ N(0, {scale ** 2:g})",
                                                "regime": regime},
                {"C": scale * _rng(seed).standard_normal((n, n))})
    return _with_marginals(case, marginals)


def _sinkhorn_generate(n: int, scale: float, marginals: str) -> list[Case]:
    """Gaussian logits at the user's (n, scale) with the given marginals: the code path of the built-in ones."""
    _sized("sinkhorn", n)
    return _validated("sinkhorn", [_gauss_case(n, scale, marginals)])


def _sinkhorn_matrix_cases():
    cases = [_gauss_case(n, scale) for n, scale in _GAUSS_SEEDS]

    def add(name, C, **params):
        cases.append(Case(name, params, {"C": np.asarray(C, dtype=np.float64), "marginals": "ones"}))

    add("n1", [[0.3]], n=1, law="a single logit (K = [[1]])")
    r = _rng(106)
    a, b = r.standard_normal(8), r.standard_normal(8)
    add("separable_n8", a[:, None] + b[None, :], n=8, seed=106, law="C_ij = a_i + b_j (limit: all entries 1/n)")
    A = _rng(107).standard_normal((10, 10))
    add("symmetric_n10", (A + A.T) / 2, n=10, seed=107, law="symmetric C")
    add("constant_n6", np.full((6, 6), 7.5), n=6, law="constant logits (ties everywhere)")
    add("huge_offset_n6", 1e300 + _rng(108).standard_normal((6, 6)), n=6, seed=108,
        law="N(0, 1) + 1e300 (rounds to a constant: the limit is uniform)")
    plans = [c for c in cases if c.name.startswith("gauss_") or c.name in ("n1", "separable_n8")]
    return cases + [_with_marginals(Case(c.name, {k: v for k, v in c.params.items() if k != "marginals"},
                                         {"C": c.inputs["C"]}), "uniform") for c in plans]


def _gap(K):
    """1 - sigma_2(K) for a doubly stochastic K (sigma_1 = 1): the spectral gap of the scaling problem."""
    if K.shape[0] == 1:
        return 1.0
    s2 = np.linalg.eigvalsh(K @ K.T)  # squared singular values, increasing
    return max(float(1.0 - np.sqrt(max(s2[-2], 0.0))), 1e-300)


def _sinkhorn_ref(C, marginals):
    from theory.sinkhorn import sinkhorn

    K = sinkhorn(C, tol=SINKHORN_TOL)
    return (K / C.shape[0] if marginals == "uniform" else K,)


def _spread(C):
    return float(np.max(C) - np.min(C))


def _sinkhorn_tol(inputs, ref, eps):
    C, K = inputs["C"], ref[0]
    n = C.shape[0]
    gap = _gap(n * K if inputs["marginals"] == "uniform" else K)  # the gap of the doubly stochastic matrix
    return ((8.0 * (n + 2) * eps * (1.0 + _spread(C)) + 4.0 * SINKHORN_TOL) * float(np.max(K)) / gap,)


_SINKHORN_WHY = ("the limit is K = exp(C + f 1^T + 1 g^T) with potentials f, g fixing unit row and column sums; a "
                 "perturbation dC (rounding: about n eps (1 + spread(C)) in the log domain, the log-sum-exps of "
                 "n terms of size spread(C)) changes log K by dC plus the change of the potentials, which solve a "
                 "linear system whose smallest nonzero eigenvalue is the spectral gap 1 - sigma_2(K); so |dK| <= "
                 "(|dC| + 2|dC|/gap) max K. Stopping at a column-sum error tau leaves the iterate within about "
                 "tau/gap of the limit, tau = 1e-13 for the reference and for the implementation under test")

_MARGINALS = Convention(
    "the marginals",
    "marginals 'ones': K 1 = K^T 1 = 1, the doubly stochastic K^infinity = Sinkhorn(C) of Eq. (5.3); 'uniform': "
    "the transport plan P = K / n between the uniform probability vectors, P 1 = P^T 1 = 1/n (the cases named "
    "*_uniform)",
    "POT's ot.sinkhorn(a, b, M, reg) and OTT-JAX's Sinkhorn return the plan, with marginals a = b = 1/n for "
    "uniform weights",
    "return what the argument asks: a plan for 'uniform', n times the plan for 'ones'",
    parameter="marginals")
_CONVERGED = Convention(
    "iterations",
    "the limit: Eq. (5.3) iterated until every column sum is within 1e-13 of its marginal after a row step (the "
    "doubly stochastic scaling of a positive matrix is unique: the order of the normalisations does not matter)",
    "a fixed small number of iterations (Sinkformers use 3 to 21, Section 5.6); POT's defaults stopThr = 1e-9, "
    "numItermax = 1000",
    "iterate to convergence: stopThr = 1e-14 with a large numItermax (1e6) in POT; 'sinkhorn_log' where the "
    "logits spread widely")

register(Kernel(
    name="sinkhorn",
    module="theory.sinkhorn",
    signature="fn(C, marginals) -> K   (Sinkhorn's limit of exp(C), rows normalised first: unit row and column "
              "sums ('ones'), or the transport plan K / n ('uniform'); converged to column sums within 1e-13)",
    make_cases=_sinkhorn_matrix_cases,
    reference=_sinkhorn_ref,
    tolerance=_sinkhorn_tol,
    rule="max|K - K_ref| <= (8 (n + 2) eps (1 + spread(C)) + 4e-13) max K_ref / (1 - sigma_2(K_ref)), "
         "spread = max C - min C (marginals 'uniform': sigma_2 of n K_ref)",
    why=_SINKHORN_WHY,
    arguments=(
        Argument("C", "(n, n)", "float64", "the logits (K^0 = exp(C)); max C - min C <= 1e300"),
        Argument("marginals", "scalar", "str", "'ones': K 1 = K^T 1 = 1; 'uniform': the plan, K 1 = K^T 1 = 1/n"),
    ),
    returns=(Argument("K", "(n, n)", "float64", "Sinkhorn(C) (marginals 'ones') or Sinkhorn(C) / n ('uniform')"),),
    conventions=(
        _MARGINALS,
        Convention("logits, not costs",
                   "K^0 = exp(C): the logits C themselves, temperature 1 (Eq. (5.3)); more mass where C is larger",
                   "optimal-transport libraries scale exp(-M / reg) for a cost M and a regularisation reg "
                   "(POT's ot.sinkhorn(a, b, M, reg), OTT-JAX's epsilon)",
                   "M = -C and reg = 1; adding a constant (or any f_i + g_j) to C changes nothing (Prop. 5.1), so "
                   "M = C.max() - C keeps exp(-M) in range (examples/oracle/pot_sinkhorn.py)"),
        _CONVERGED,
    ),
    parameters=(
        Parameter("n", Int(low=1), 30, "the size of the Gaussian logits (built-in: 2, 5, 30, 50, 200)"),
        Parameter("scale", Real(0.0, math.inf), 1.0, "their standard deviation (built-in: 1, 5); larger spreads "
                  "mix slower: the gap, and with it the tolerance, follows"),
        Parameter("marginals", Choice(*MARGINALS), "ones", "the marginals of the returned matrix (built-in: both)"),
    ),
    generate=_sinkhorn_generate,
))


#: the built-in token clouds of `sinkhorn_attention` (d = 4, m = 3): (n, scale) -> seed; others use _ATT_OTHER_SEED
_ATT_SEEDS = {(1, 1.0): 111, (5, 1.0): 112, (30, 1.0): 113, (200, 1.0): 114, (20, 2.5): 115}
_ATT_OTHER_SEED = 117
_ATT_D, _ATT_M = 4, 3
#: the attention kinds (theory.sinkhorn.KINDS): K^0 / n, the row SoftMax K^1, Sinkhorn's K^infinity
_KINDS = ("kernel", "softmax", "sinkhorn")


def _cloud(n: int, d: int, m: int, scale: float) -> tuple[str, dict, dict]:
    """(name, params, inputs) of n tokens X ~ N(0, scale^2) with WQ, WK (m, d) and WV (d, d) ~ N(0, 1/d)."""
    seed = _ATT_SEEDS.get((n, scale), _ATT_OTHER_SEED)
    r = _rng(seed)
    name = (f"n{n}" + ("" if d == _ATT_D else f"_d{d}") + ("" if m == _ATT_M else f"_m{m}")
            + ("" if scale == 1.0 else f"_large_logits_x{_tag(scale)}" if scale > 1 else f"_x{_tag(scale)}"))
    return (name, {"seed": seed, "n": n, "d": d, "m": m, "law": f"X ~ N(0, {scale ** 2:g}); W ~ N(0, 1/d)"},
            {"X": scale * r.standard_normal((n, d)), "WQ": r.standard_normal((m, d)) / np.sqrt(d),
             "WK": r.standard_normal((m, d)) / np.sqrt(d), "WV": r.standard_normal((d, d)) / np.sqrt(d)})


def _attention_of(rows, marginals: str = "ones") -> list[Case]:
    """The three kinds of each row; the sinkhorn kind with the given marginals (named ``..._uniform`` for the
    plan), the other kinds with 'ones' (their matrices are not Sinkhorn's)."""
    out = []
    for name, params, inputs in rows:
        for kind in _KINDS:
            case = Case(f"{kind}_{name}", {**params, "kind": kind}, {**inputs, "kind": kind})
            out.append(_with_marginals(case, marginals if kind == "sinkhorn" else "ones"))
    return out


def _attention_generate(n: int, d: int, m: int, scale: float, marginals: str) -> list[Case]:
    """The three kinds on a token cloud at the user's (n, d, m, scale): the code path of the built-in clouds."""
    _sized("sinkhorn_attention", n)
    _guard("sinkhorn_attention", "d", d, nbytes=8.0 * 4 * (n + m + d) * d, ops=4.0 * n * (n + d) * (m + d))
    return _validated("sinkhorn_attention", _attention_of([_cloud(n, d, m, scale)], marginals))


def _attention_cases():
    d = _ATT_D
    rows = [_cloud(n, d, _ATT_M, scale) for n, scale in _ATT_SEEDS]
    r = _rng(116)
    WQ = r.standard_normal((d, d)) / np.sqrt(d)
    rows.append(("assumption_5_2_n12", {"seed": 116, "n": 12, "d": d, "m": d,
                                        "law": "WK = WQ, WV = -WQ^T WK (symmetric: the energy's gradient field)"},
                 {"X": r.standard_normal((12, d)), "WQ": WQ, "WK": WQ, "WV": -WQ.T @ WQ}))
    x = r.standard_normal(d)
    rows.append(("identical_tokens_n7", {"seed": 116, "n": 7, "d": d, "m": _ATT_M, "law": "seven copies of one token"},
                 {"X": np.tile(x, (7, 1)), "WQ": r.standard_normal((_ATT_M, d)), "WK": r.standard_normal((_ATT_M, d)),
                  "WV": r.standard_normal((d, d))}))
    plans = [c for c in _attention_of(rows, "uniform") if c.inputs["marginals"] == "uniform"]
    return _attention_of(rows) + plans


def _attention_ref(X, WQ, WK, WV, kind, marginals):
    from theory.sinkhorn import attention

    T = attention(X, WQ, WK, WV, kind, tol=SINKHORN_TOL)
    return (T / X.shape[0] if kind == "sinkhorn" and marginals == "uniform" else T,)


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
    plan = 1.0 / n if kind == "sinkhorn" and inputs["marginals"] == "uniform" else 1.0  # T and its error scale alike
    return (plan * (8.0 * eps * S * ((n + m + d) + (m + d) * g * Cabs) + conv),)


register(Kernel(
    name="sinkhorn_attention",
    module="theory.sinkhorn",
    signature="fn(X, WQ, WK, WV, kind, marginals) -> T   ((n, d); T_i = sum_j A_ij WV x_j with C = (X WQ^T)(X "
              "WK^T)^T and A = exp(C)/n (kind 'kernel'), the row SoftMax of C ('softmax') or Sinkhorn's limit "
              "('sinkhorn'; its plan K/n with marginals 'uniform'))",
    make_cases=_attention_cases,
    reference=_attention_ref,
    tolerance=_attention_tol,
    rule="max|T - T_ref| <= 8 eps max_i sum_j A_ij v_j ((n + m + d) + (m + d) g |C|max) (+ 4e-13 n max v / gap for "
         "'sinkhorn'); v_j = max_k (|X||WV|^T)_jk, g = 1 kernel, 2 softmax, 1 + 2/gap sinkhorn, "
         "|C|max = max (|X||WQ|^T)(|X||WK|^T)^T; divided by n for the plan (marginals 'uniform')",
    why="a logit is a sum of m d products, rounded by about (m + d) eps |C|max; the kernel exp(C) turns that into a "
        "relative error of the same size per entry, the row SoftMax into at most twice it (numerator and "
        "normaliser), Sinkhorn's limit into (1 + 2/gap) times it (the potentials, see the sinkhorn kernel); the "
        "product with the values X WV^T adds n + d rounding terms of size max|X||WV|^T",
    arguments=(
        Argument("X", "(n, d)", "float64", "the tokens x_1, ..., x_n as rows"),
        Argument("WQ", "(m, d)", "float64", "the query matrix (queries X WQ^T)"),
        Argument("WK", "(m, d)", "float64", "the key matrix (keys X WK^T)"),
        Argument("WV", "(d, d)", "float64", "the value matrix (values X WV^T)"),
        Argument("kind", "scalar", "str", "'kernel' (A = exp(C)/n), 'softmax' (the row SoftMax) or 'sinkhorn'"),
        Argument("marginals", "scalar", "str", "Sinkhorn's marginals, 'ones' or 'uniform' (the plan); the other "
                 "kinds get 'ones' and ignore it"),
    ),
    returns=(Argument("T", "(n, d)", "float64", "T_i = sum_j A_ij WV x_j at every token (no residual)"),),
    conventions=(
        Convention("the logits' scale",
                   "C = (X WQ^T)(X WK^T)^T, C_ij = (WQ x_i)^T WK x_j, with no 1/sqrt(m) (Eq. (5.1))",
                   "scaled dot-product attention divides by sqrt(m) (Vaswani et al.; "
                   "torch.nn.functional.scaled_dot_product_attention, torch.nn.MultiheadAttention)",
                   "pass scale=1.0 to scaled_dot_product_attention, or WQ * sqrt(m) to code that divides"),
        Convention("queries, keys and the normalised axis",
                   "tokens are the rows of X; row i of A (query i) is normalised over the keys j: A's rows sum to "
                   "1 for 'softmax' (a softmax over the last axis of C)",
                   "tokens as the columns of a (d, n) array; a softmax over the queries (axis 0)",
                   "pass X.T to column-token code and transpose T back; softmax(C, dim=-1)"),
        Convention("the output",
                   "the field T_i = sum_j A_ij WV x_j of Eq. (5.1) and (5.4): one head, values X WV^T with WV as a "
                   "bias-free torch.nn.Linear weight, no output projection, no residual",
                   "torch.nn.MultiheadAttention adds an output projection and biases; a Transformer block returns "
                   "x_i + T_i",
                   "one head, out_proj the identity, no biases (bias=False); return T, not X + T"),
        Convention("the kernel's 1/n",
                   "kind 'kernel': A = exp(C)/n, K^0 against the empirical measure mu = (1/n) sum_j delta_(x_j) "
                   "(T^0 of Section 5.4)",
                   "unnormalised attention exp(C) V",
                   "divide exp(C) by n"),
        _MARGINALS,
        _CONVERGED,
    ),
    parameters=(
        Parameter("n", Int(low=1), 30, "the number of tokens (built-in: 1, 5, 20, 30, 200)"),
        Parameter("d", Int(low=1), _ATT_D, "the token dimension (built-in: 4)"),
        Parameter("m", Int(low=1), _ATT_M, "the query/key dimension (built-in: 3)"),
        Parameter("scale", Real(0.0, math.inf), 1.0, "the tokens' standard deviation (built-in: 1, 2.5); the "
                  "logits grow like scale^2, and kind 'kernel' refuses max C > 700 (exp overflows)"),
        Parameter("marginals", Choice(*MARGINALS), "ones", "the marginals of the 'sinkhorn' case (built-in: both)"),
    ),
    generate=_attention_generate,
))
