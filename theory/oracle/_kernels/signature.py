"""Oracle kernels: truncated signatures and the signature kernel (thesis (Marion), chapter 5; factorial normalization)."""

from __future__ import annotations

import math

import numpy as np

from ...experiments.config import Choice, Int, Real
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _guard, _rng, _tag, _validated

#: the built-in random-walk cases of `signature`: (n points, dimension d, depth) -> (seed, step scale)
_SIG_ROWS = {(2, 3, 6): (1, 0.5), (10, 2, 5): (2, 0.3), (100, 3, 4): (3, 0.1), (1000, 3, 6): (4, 0.01),
             (50, 1, 8): (5, 0.2), (20, 5, 3): (6, 0.4)}
#: the seed of the walks at any other (n, d, depth)
_OTHER_SEED = 11
#: the deepest level theory.signature.signature returns (level k is an array of k axes: NumPy's limit)
_MAX_DEPTH = 64


def _walk_name(prefix: str, rows: dict, n: int, d: int, depth: int, scale: float) -> str:
    """The built-in name, suffixed ``_scale{scale}`` off the built-in scale of (n, d, depth)."""
    row = rows.get((n, d, depth))
    return f"{prefix}_n{n}_d{d}_depth{depth}" + ("" if row is not None and row[1] == scale else f"_scale{_tag(scale)}")


def _walk_case(n: int, d: int, depth: int, scale: float) -> Case:
    """A random walk of n points in R^d with N(0, scale^2) steps, seeded by (n, d, depth)."""
    seed = _SIG_ROWS.get((n, d, depth), (_OTHER_SEED,))[0]
    X = np.cumsum(_rng(seed).standard_normal((n, d)) * scale, axis=0)
    return Case(_walk_name("walk", _SIG_ROWS, n, d, depth, scale),
                {"n": n, "d": d, "depth": depth, "seed": seed, "law": f"random walk, N(0, {scale}^2) steps"},
                {"path": X, "depth": depth})


def _signature_generate(n: int, d: int, depth: int, scale: float) -> list[Case]:
    """The random walk at the user's (n, d, depth, scale): the code path of the built-in walks."""
    _guard("signature", "n", n, nbytes=8.0 * 4 * n * d, ops=0.0)
    return _validated("signature", [_walk_case(n, d, depth, scale)])


def _signature_cases() -> list[Case]:
    cases = [_walk_case(n, d, depth, scale) for (n, d, depth), (_, scale) in _SIG_ROWS.items()]
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


_LEVELS = Convention(
    "the levels' normalisation",
    "factorial: level k is k! times the iterated integral (thesis (Marion), Definition 5.4), so that a segment "
    "of increment b has level k equal to b^(x)k (Example 5.5)",
    "the standard signature of iisignature, esig, signatory and roughpy: level k is the iterated integral itself, "
    "b^(x)k / k! for a segment",
    "multiply level k of a standard signature by k! (every d^k entries of it)")
_LEVEL0 = Convention(
    "level 0",
    "included: sig[0] = 1, the constant level",
    "iisignature.sig and signatory.signature return levels 1..depth only",
    "prepend 1 (and for depth = 0 return [1.0])")
_PATH = Convention(
    "the path",
    "the points as given, joined by straight segments: no time coordinate added, no basepoint, no lead-lag",
    "signatory's basepoint=True prepends the origin; the time-augmented path of the chapter (Prop. 5.2, "
    "theory.signature.time_augment) adds a time coordinate",
    "pass the path unchanged (basepoint=False); to check an augmented signature, augment before the call and "
    "compare on the augmented path")
_SIGNATURE_CONVENTIONS = (
    _LEVELS, _LEVEL0,
    Convention("the order of the entries",
               "levels 0, 1, ..., depth one after the other, level k flattened in C order over (i_1, ..., i_k), "
               "i.e. the words in lexicographic order",
               "iisignature and signatory use the same order; a list of level tensors (theory.signature.signature) "
               "is one array per level",
               "np.concatenate([np.ravel(level) for level in levels])"),
    _PATH)


register(Kernel(
    name="signature",
    module="theory.signature",
    signature="fn(path, depth) -> sig   (levels 0..depth of the factorial-normalized signature (level k = k! times "
              "the iterated integral), each level row-major, concatenated; path (n, d), piecewise linear)",
    make_cases=_signature_cases,
    reference=_signature_ref,
    tolerance=_signature_tol,
    rule="max|sig - sig_ref| <= 16 n (depth + 1) eps max(1, TV)^depth, TV the path's total variation",
    why="level k has norm at most TV^k in this normalization; each of the n - 1 segment products (Chen's "
        "relation) adds at most depth + 1 rounded terms of that size per entry",
    arguments=(
        Argument("path", "(n, d)", "float64", "the points of a piecewise-linear path, n >= 2 (no time axis added)"),
        Argument("depth", "scalar", "int", f"the truncation level N, 0 <= N <= {_MAX_DEPTH}"),
    ),
    returns=(Argument("sig", "(1 + d + d^2 + ... + d^depth,)", "float64",
                      "levels 0..depth concatenated, level k flattened row-major over (i_1, ..., i_k)"),),
    conventions=_SIGNATURE_CONVENTIONS,
    parameters=(
        Parameter("n", Int(low=2), 100, "the number of points of the random walk (built-in: 2 to 1000)"),
        Parameter("d", Int(low=1), 3, "the dimension (built-in: 1, 2, 3, 5)"),
        Parameter("depth", Int(0, _MAX_DEPTH), 4, "the truncation level (built-in: 3 to 8)"),
        Parameter("scale", Real(0.0, math.inf), 0.1, "the standard deviation of each step (built-in: 0.01 to 0.5); "
                  "the tolerance grows like max(1, TV)^depth"),
    ),
    generate=_signature_generate,
))


#: the built-in cases of `signature_kernel`: (n points, dimension d, depth) -> (seed, step scale)
_KERNEL_ROWS = {(2, 2, 10): (7, 0.6), (30, 3, 5): (8, 0.2), (200, 2, 6): (9, 0.05), (1000, 3, 6): (10, 0.01)}
#: the largest depth theory.signature.kernel accepts
_MAX_KERNEL_DEPTH = 98


def _walks_case(n: int, d: int, depth: int, scale: float) -> Case:
    """Two random walks of n points in R^d with N(0, scale^2) steps, seeded by (n, d, depth)."""
    seed = _KERNEL_ROWS.get((n, d, depth), (_OTHER_SEED,))[0]
    r = _rng(seed)
    X = np.cumsum(r.standard_normal((n, d)) * scale, axis=0)
    Y = np.cumsum(r.standard_normal((n, d)) * scale, axis=0)
    return Case(_walk_name("walks", _KERNEL_ROWS, n, d, depth, scale), {"n": n, "d": d, "depth": depth, "seed": seed},
                {"path_x": X, "path_y": Y, "depth": depth})


def _kernel_generate(n: int, d: int, depth: int, scale: float) -> list[Case]:
    """The two random walks at the user's (n, d, depth, scale): the code path of the built-in cases."""
    _guard("signature_kernel", "n", n, nbytes=8.0 * 8 * n * d, ops=0.0)
    return _validated("signature_kernel", [_walks_case(n, d, depth, scale)])


def _kernel_cases() -> list[Case]:
    return [_walks_case(n, d, depth, scale) for (n, d, depth), (_, scale) in _KERNEL_ROWS.items()]


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
    make_cases=_kernel_cases,
    reference=_kernel_ref,
    tolerance=_kernel_tol,
    rule="|k - k_ref| <= 32 (n_x + n_y) (depth + 1)^2 eps (max(1, TV_x) max(1, TV_y))^depth",
    why="the kernel is a sum over depth + 1 levels of inner products of two signatures, each entry within the "
        "signature rule; Cauchy-Schwarz bounds level k's inner product by (TV_x TV_y)^k",
    arguments=(
        Argument("path_x", "(n_x, d)", "float64", "the points of the first piecewise-linear path, n_x >= 2"),
        Argument("path_y", "(n_y, d)", "float64", "the points of the second path (same d)"),
        Argument("depth", "scalar", "int", f"the truncation level N, 0 <= N <= {_MAX_KERNEL_DEPTH}"),
    ),
    returns=(Argument("k", "scalar", "float64", "sum_{k=0..depth} <X^k, Y^k>, a float or a 0-d array"),),
    conventions=(
        Convention("the levels' normalisation",
                   "the factorial levels of the signature kernel (level k = k! times the iterated integral, thesis "
                   "(Marion), Definition 5.4 and Section 5.2.2): in standard levels S^k, k = sum_k (k!)^2 "
                   "<S^k(X), S^k(Y)>",
                   "the truncated kernel of standard signatures (sum_k <S^k(X), S^k(Y)>, iisignature or signatory "
                   "signatures); the untruncated PDE signature kernel of the sigkernel package (standard levels, "
                   "all depths)",
                   "weight level k's inner product of standard signatures by (k!)^2; the PDE kernel has no exact "
                   "mapping (it sums every level with weight 1)"),
        Convention("level 0",
                   "included: it adds 1 (<1, 1>)",
                   "a kernel of iisignature.sig outputs starts at level 1",
                   "add 1"),
        Convention("the paths",
                   "as given (no time augmentation, no basepoint); the chapter's K(X, Y) = <S(X bar), S(Y bar)> is "
                   "this kernel of the time-augmented paths (theory.signature.time_augment)",
                   "time augmentation inside the kernel (sigkernel's and many pipelines' default preprocessing)",
                   "pass the paths unchanged; check an augmented kernel by augmenting before the call"),
    ),
    parameters=(
        Parameter("n", Int(low=2), 30, "the number of points of each random walk (built-in: 2 to 1000)"),
        Parameter("d", Int(low=1), 3, "the dimension (built-in: 2, 3)"),
        Parameter("depth", Int(0, _MAX_KERNEL_DEPTH), 5, "the truncation level (built-in: 5, 6, 10)"),
        Parameter("scale", Real(0.0, math.inf), 0.2, "the standard deviation of each step (built-in: 0.01 to 0.6)"),
    ),
    generate=_kernel_generate,
))


# in-context AR learning (theory.icl, thesis chapter 6): the exact population losses


#: the built-in cases of `icl_expected_loss`: (context, d, T) -> seed; any other triple uses _ICL_OTHER_SEED
_ICL_SEEDS = {("unitary", 1, 2): 71, ("unitary", 3, 5): 72, ("unitary", 10, 15): 73, ("orthogonal", 2, 3): 74,
              ("orthogonal", 4, 6): 75, ("orthogonal", 10, 15): 76}
_ICL_OTHER_SEED = 78


def _icl_case(d: int, T: int, context: str) -> Case:
    """C ~ N(0, 1/d) entries and p ~ N(0, 1), seeded by (context, d, T); named ``{context}_d{d}_T{T}``."""
    if context == "orthogonal" and d % 2:
        raise ValueError(f"`d` must be even for context='orthogonal' (the phases come in conjugate pairs); got d = {d}")
    seed = _ICL_SEEDS.get((context, d, T), _ICL_OTHER_SEED)
    r = _rng(seed)
    return Case(f"{context}_d{d}_T{T}", {"seed": seed, "d": d, "T": T, "context": context,
                                         "law": "C ~ N(0, 1/d), p ~ N(0, 1)"},
                {"C": r.standard_normal((d, d)) / np.sqrt(d), "p": r.standard_normal(T), "context": context})


def _icl_generate(d: int, T: int, context: str) -> list[Case]:
    """The case at the user's (d, T, context): the code path of the built-in random cases (the package's own
    limits on d^2 T (1500 + 80 d) operations apply)."""
    _guard("icl_expected_loss", "T", T, nbytes=8.0 * 4 * (d * d + T), ops=0.0)
    return _validated("icl_expected_loss", [_icl_case(d, T, context)])


def _icl_cases():
    cases = [_icl_case(d, T, context) for context, d, T in _ICL_SEEDS]
    r = _rng(77)
    cases.append(Case("unitary_large_C_d3_T4", {"seed": 77, "d": 3, "T": 4, "context": "unitary",
                                                "law": "C ~ N(0, 1e6)"},
                      {"C": 1e3 * r.standard_normal((3, 3)), "p": r.standard_normal(4), "context": "unitary"}))
    return cases


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
    make_cases=_icl_cases,
    reference=_icl_loss_ref,
    tolerance=_icl_loss_tol,
    rule="|loss - ref| <= 8 (T d + d) eps d S^2; gradients: 8 (T d + d) eps S 2 ||p||_1 (dC), "
         "8 (T d + d) eps S 2 d max_i ||C_i||_1 (dp); S = max_i sum_(t,j) |p_t C_ij| + 1",
    why=("the loss is a sum over merged monomials of squared coefficients, each a sum of at most T d products "
         "p_t C_ij minus 0 or 1 and bounded by S; rounding each coefficient costs (T d) eps S, squaring and summing "
         "the d coordinates' coefficients multiplies by 2 d S; the gradient entries are sums of 2 coef p_t or "
         "2 coef C_ij"),
    arguments=(
        Argument("C", "(d, d)", "float64", "C = B^T A, the heads' diagonals combined (Lemma 6.6)"),
        Argument("p", "(T,)", "float64", "the positional row (P_{T-1,1}, ..., P_{T-1,T}); p[t-1] weights token "
                 "s_t = lambda^(t-1)"),
        Argument("context", "scalar", "str", "'unitary' (d independent phases) or 'orthogonal' (d even, conjugate "
                 "pairs)"),
    ),
    returns=(
        Argument("loss", "scalar", "float64", "l_T(C, p), the exact expectation over the contexts"),
        Argument("dC", "(d, d)", "float64", "d l_T / d C (real C)"),
        Argument("dp", "(T,)", "float64", "d l_T / d p"),
    ),
    conventions=(
        Convention("the expectation",
                   "exact: l_T = E_lambda ||sum_t p_t C lambda^(t-T+1) (.) lambda^(t-1) - lambda^T||^2 over i.i.d. "
                   "uniform phases (Lemma 6.6, loss (6.3) at one T; for unitary contexts Prop. 6.8 as corrected)",
                   "a Monte-Carlo mean over sampled context matrices, as in training (Section 6.6)",
                   "compute the expectation exactly: E[z^a conj(z)^b] = delta_ab merges the monomials of each "
                   "coordinate and l_T is the sum of their squared coefficients (a sampled loss carries a sampling "
                   "error far above the tolerance)"),
        Convention("the loss's scale",
                   "the squared norm summed over the d coordinates: no 1/2, no mean",
                   "torch.nn.MSELoss (the mean over the d coordinates), a 1/2 ||.||^2 loss",
                   "multiply a mean over the coordinates by d and a 1/2 loss by 2, the gradients alike"),
        Convention("the orthogonal contexts' layout",
                   "lambda = (lambda_1, conj(lambda_1), ..., lambda_delta, conj(lambda_delta)): each conjugate pair "
                   "adjacent (Assumption 6.2), d = 2 delta",
                   "the delta phases first and their conjugates after (lambda_1, ..., lambda_delta, conj(lambda_1), "
                   "..., conj(lambda_delta))",
                   "with perm = [0, 2, 4, ..., 1, 3, 5, ...]: call a halves-layout implementation with "
                   "C[np.ix_(perm, perm)] and return its dC[np.ix_(inv, inv)], inv = np.argsort(perm) (the loss "
                   "unchanged)"),
        Convention("the parameters",
                   "C = B^T A (d, d) and the row p of the positional matrix at the second-to-last token (the "
                   "tau = T - 1 of (6.6)), p[0] weighting the first token s_1 = 1_d; gradients with respect to C "
                   "and p",
                   "the heads' diagonals A, B of shape (H, d) (Assumption 2); a row indexed from the last token "
                   "backwards",
                   "pass C = B.T @ A; for code indexing from the last token pass p[::-1] and reverse its dp"),
    ),
    parameters=(
        Parameter("d", Int(low=1), 3, "the dimension (even for context='orthogonal'; built-in: 1 to 10)"),
        Parameter("T", Int(low=2), 5, "the context length (built-in: 2 to 15)"),
        Parameter("context", Choice("unitary", "orthogonal"), "unitary", "the context class C_U or C_O "
                  "(Assumption 6.2)"),
    ),
    generate=_icl_generate,
))
