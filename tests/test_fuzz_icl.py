"""Bad-input fuzzing of every public function of theory.icl (contract of tests/_fuzz.py).

Complex arguments (documented as accepted: tokens, contexts, C) are given as nested lists when complex, so that
the ndarray forms of tests/_fuzz.py (which are real) stay for the real ones."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import strategies as st

import theory.icl as icl_pkg
from _fuzz import Spec, fuzz, public_callables, seed, sweep

#: classes of the public API that are not called with user input
EXCLUDED = {"FlowResult": "the result container (frozen dataclass) returned by gradient_flow, fuzzed through it"}


# ------------------------------------------------------------------------------------------ valid calls

def _d(draw, low=1, high=3, label="d"):
    return draw(st.integers(low, high), label=label)


def _maybe_complex(draw, rng, shape, scale=1.0):
    """A real ndarray, or a complex one given as a nested list."""
    x = scale * rng.standard_normal(shape)
    if draw(st.booleans(), label="complex"):
        return (x + 1j * scale * rng.standard_normal(shape)).tolist()
    return x


def _context(draw, rng, d, matrix=None):
    """A unitary context of size d: a diagonal (complex list) or an orthogonal matrix (real ndarray)."""
    if matrix if matrix is not None else draw(st.booleans(), label="matrix"):
        Q, R = np.linalg.qr(rng.standard_normal((d, d)))
        return Q * np.sign(np.diag(R))
    return np.exp(2j * np.pi * rng.random(d)).tolist()


def _Cp(draw, real=False):
    rng = seed(draw)
    d, T = _d(draw), draw(st.integers(2, 5), label="T")
    C = rng.standard_normal((d, d)) if real else _maybe_complex(draw, rng, (d, d))
    return {"C": C, "p": rng.standard_normal(T)}


def _expected_loss(draw):
    rng = seed(draw)
    context = draw(st.sampled_from(["unitary", "orthogonal"]), label="context")
    d = 2 * _d(draw, 1, 2) if context == "orthogonal" else _d(draw)
    grad = draw(st.booleans(), label="return_gradient")
    C = rng.standard_normal((d, d)) if grad else _maybe_complex(draw, rng, (d, d))
    return {"C": C, "p": rng.standard_normal(draw(st.integers(2, 5), label="T")), "context": context,
            "return_gradient": grad}


def _exact(draw):
    rng = seed(draw)
    context = draw(st.sampled_from(["unitary", "orthogonal"]), label="context")
    d = 2 if context == "orthogonal" else _d(draw, 1, 2)
    T = draw(st.integers(2, 4), label="T")
    kind = draw(st.sampled_from(["float", "int", "fraction"]), label="kind")
    if kind == "float":
        C, p = rng.standard_normal((d, d)), rng.standard_normal(T)
    elif kind == "int":
        dtype = draw(st.sampled_from([np.int8, np.int64, np.uint64, np.bool_]), label="dtype")
        C, p = rng.integers(0, 2, (d, d)).astype(dtype), rng.integers(0, 2, T).astype(dtype)
    else:
        C = [[Fraction(int(rng.integers(-5, 5)), int(rng.integers(1, 5))) for _ in range(d)] for _ in range(d)]
        p = [Fraction(int(rng.integers(-5, 5)), int(rng.integers(1, 5))) for _ in range(T)]
    return {"C": C, "p": p, "context": context}


def _heads(draw, names=("Amat", "Bmat", "P")):
    rng = seed(draw)
    context = draw(st.sampled_from(["unitary", "orthogonal"]), label="context")
    d = 2 if context == "orthogonal" else _d(draw, 1, 2)
    H, Tmax = _d(draw, 1, 2, "H"), draw(st.integers(2, 4), label="Tmax")
    kw = {names[0]: 0.3 * rng.standard_normal((H, d)), names[1]: 0.3 * rng.standard_normal((H, d)),
          names[2]: 0.3 * rng.standard_normal((Tmax, Tmax)), "context": context}
    if draw(st.booleans(), label="Tmax given"):
        kw["Tmax"] = draw(st.integers(2, Tmax), label="Tmax")
    return kw


def _ab(draw):
    rng = seed(draw)
    return {"a": rng.standard_normal(4), "b": rng.standard_normal(2), "d": _d(draw),
            "Tmax": draw(st.integers(2, 4), label="Tmax"), "s0": draw(st.sampled_from(["inverse", "zero"]))}


def _ab_exact(draw):
    kw = _ab(draw)
    if draw(st.booleans(), label="integer b"):
        kw["b"] = np.array([1, 2], draw(st.sampled_from([np.int8, np.int64, np.uint32, np.bool_]), label="dtype"))
    kw["d"] = _d(draw, 1, 2)
    kw["Tmax"] = draw(st.integers(2, 3), label="Tmax")
    return kw


def _tokens(draw, T_low=1):
    rng = seed(draw)
    d = _d(draw)
    T = draw(st.integers(T_low, 5), label="T")
    return rng, d, T, _maybe_complex(draw, rng, (T, d))


def _augmented_tokens(draw):
    rng, d, T, s = _tokens(draw)
    s0 = draw(st.sampled_from(["zero", "inverse"]), label="s0")
    kw = {"s": s, "s0": s0}
    if s0 == "inverse" or draw(st.booleans(), label="W given"):
        kw["W"] = _context(draw, rng, d)
    return kw


def _augmented_forward(draw):
    rng = seed(draw)
    d, T = _d(draw, 1, 2), draw(st.integers(1, 4), label="T")
    return {"A": rng.standard_normal((3 * d, 3 * d)), "B": rng.standard_normal((3 * d, 3 * d)),
            "e": _maybe_complex(draw, rng, (T, 3 * d))}


def _attention_forward(draw):
    rng, d, T, s = _tokens(draw, T_low=2)
    H = _d(draw, 1, 2, "H")
    P = rng.standard_normal((T + draw(st.integers(0, 2)), ) * 2) if draw(st.booleans()) else rng.standard_normal(T)
    return {"A": rng.standard_normal((H, d, d)), "B": rng.standard_normal((H, d, d)), "P": P, "s": s}


def _diagonal_forward(draw):
    rng = seed(draw)
    H, d, T = _d(draw, 1, 2, "H"), _d(draw), draw(st.integers(2, 5), label="T")
    return {"Amat": rng.standard_normal((H, d)), "Bmat": rng.standard_normal((H, d)),
            "p": rng.standard_normal(T), "lam": np.exp(2j * np.pi * rng.random(d)).tolist()}


def _ar_sequence(draw):
    rng = seed(draw)
    d = _d(draw)
    kw = {"W": _context(draw, rng, d), "T": draw(st.integers(1, 6), label="T")}
    if draw(st.booleans(), label="s1 given"):
        kw["s1"] = _maybe_complex(draw, rng, (d,))
    return kw


def _gradient_flow(draw):
    kw = _heads(draw, ("Amat0", "Bmat0", "P0"))
    kw.update(lr=draw(st.sampled_from([0.01, 0.05]), label="lr"), steps=draw(st.integers(0, 20), label="steps"),
              tol=draw(st.sampled_from([0.0, 1e-3]), label="tol"), train_P=draw(st.booleans(), label="train_P"))
    return kw


def _size(draw):
    return draw(st.sampled_from([(), 2, (2, 1)]), label="size")


def _rng(draw):
    return np.random.default_rng(draw(st.integers(0, 9), label="rng seed"))


def _lead(size):
    return () if size == () else tuple(np.atleast_1d(size).tolist())


def _shape(want):
    def check(out, kw):
        expected = want(kw)
        assert np.shape(out) == expected, f"shape {np.shape(out)}, expected {expected}"
    return check


def _d_of(kw, key):
    return np.shape(np.asarray(kw[key]))[-1]


# ------------------------------------------------------------------------------------------ specs

SPECS = {
    # processes
    "unitary_contexts": Spec(icl_pkg.unitary_contexts, lambda draw: {"d": _d(draw), "size": _size(draw),
                                                                     "rng": _rng(draw)},
                             check=_shape(lambda kw: _lead(kw["size"]) + (kw["d"],))),
    "orthogonal_contexts": Spec(icl_pkg.orthogonal_contexts,
                                lambda draw: {"delta": _d(draw, label="delta"), "size": _size(draw), "rng": _rng(draw)},
                                check=_shape(lambda kw: _lead(kw["size"]) + (2 * kw["delta"],))),
    "haar_orthogonal": Spec(icl_pkg.haar_orthogonal, lambda draw: {"d": _d(draw), "size": _size(draw),
                                                                   "rng": _rng(draw)},
                            check=_shape(lambda kw: _lead(kw["size"]) + (kw["d"], kw["d"]))),
    "rotation_blocks": Spec(icl_pkg.rotation_blocks, lambda draw: {"lam": icl_pkg.orthogonal_contexts(
        _d(draw, label="delta"), rng=_rng(draw)).tolist()},
        check=_shape(lambda kw: (len(kw["lam"]),) * 2)),
    "ar_sequence": Spec(icl_pkg.ar_sequence, _ar_sequence,
                        check=_shape(lambda kw: (kw["T"], np.shape(np.asarray(kw["W"]))[0]))),
    "augmented_tokens": Spec(icl_pkg.augmented_tokens, _augmented_tokens,
                             check=_shape(lambda kw: (len(kw["s"]), 3 * _d_of(kw, "s")))),
    # attention
    "augmented_forward": Spec(icl_pkg.augmented_forward, _augmented_forward,
                              check=_shape(lambda kw: (_d_of(kw, "e") // 3,))),
    "attention_forward": Spec(icl_pkg.attention_forward, _attention_forward,
                              check=_shape(lambda kw: (_d_of(kw, "s"),))),
    "diagonal_forward": Spec(icl_pkg.diagonal_forward, _diagonal_forward,
                             check=_shape(lambda kw: (np.shape(kw["Amat"])[1],))),
    "block_parameters": Spec(icl_pkg.block_parameters, lambda draw: {k: v for k, v in _ab(draw).items() if k in "abd"},
                             check=lambda out, kw: out[0].shape == (3 * kw["d"],) * 2
                             or pytest.fail(str(out[0].shape))),
    "gd_construction": Spec(icl_pkg.gd_construction, lambda draw: {"d": _d(draw), "eta": draw(st.floats(-2.0, 2.0))},
                            check=lambda out, kw: out[1].shape == (3 * kw["d"],) * 2 or pytest.fail(str(out[1].shape))),
    "gd_step_prediction": Spec(icl_pkg.gd_step_prediction,
                               lambda draw: (lambda t: {"s": t[3], "eta": draw(st.floats(-2.0, 2.0))})(_tokens(draw)),
                               check=_shape(lambda kw: (_d_of(kw, "s"),))),
    # exact moments
    "torus_moment": Spec(icl_pkg.torus_moment, lambda draw: (lambda a: {
        "a": a, "b": a if draw(st.booleans(), label="equal") else a[::-1]})(
        draw(st.lists(st.integers(0, 4), min_size=1, max_size=3), label="a"))),
    "group_monomials": Spec(icl_pkg.group_monomials, lambda draw: {
        "exponents": seed(draw).integers(-2, 3, size=(draw(st.integers(1, 6)), draw(st.integers(1, 3))))}),
    "expected_abs2": Spec(icl_pkg.expected_abs2, lambda draw: (lambda rng, n: {
        "coefficients": draw(st.sampled_from([
            rng.standard_normal(n).tolist(), [int(x) for x in rng.integers(-3, 4, n)],
            [Fraction(int(x), 3) for x in rng.integers(-3, 4, n)], (rng.standard_normal(n) + 1j).tolist()]),
            label="coefficients"),
        "exponents": rng.integers(-1, 2, size=(n, 2))})(seed(draw), draw(st.integers(1, 5), label="n"))),
    # losses
    "expected_loss": Spec(icl_pkg.expected_loss, _expected_loss),
    "expected_loss_exact": Spec(icl_pkg.expected_loss_exact, _exact, examples=30),
    "quadratic_loss": Spec(icl_pkg.quadratic_loss, _Cp),
    "printed_quadratic_loss": Spec(icl_pkg.printed_quadratic_loss, _Cp),
    "quadratic_loss_gradient": Spec(icl_pkg.quadratic_loss_gradient, lambda draw: _Cp(draw, real=True),
                                    check=lambda out, kw: out[1].shape == np.shape(kw["p"]) or pytest.fail("shape")),
    "population_loss": Spec(icl_pkg.population_loss,
                            lambda draw: {**_heads(draw), "return_gradient": draw(st.booleans(), label="grad")}),
    "augmented_loss": Spec(icl_pkg.augmented_loss, lambda draw: {**_ab(draw), "return_gradient": draw(st.booleans())}),
    "augmented_loss_exact": Spec(icl_pkg.augmented_loss_exact, _ab_exact, examples=30),
    "augmented_ray_loss": Spec(icl_pkg.augmented_ray_loss, lambda draw: {
        "eta": draw(st.floats(-1.0, 1.0)), "d": _d(draw), "T": draw(st.integers(2, 6)),
        "s0": draw(st.sampled_from(["inverse", "zero"]))}),
    "eta_star": Spec(icl_pkg.eta_star, lambda draw: {"d": _d(draw), "Tmax": draw(st.integers(2, 8)),
                                                     "s0": draw(st.sampled_from(["inverse", "zero"]))}),
    "augmented_min_loss": Spec(icl_pkg.augmented_min_loss, lambda draw: {
        "d": _d(draw), "Tmax": draw(st.integers(2, 8)), "s0": draw(st.sampled_from(["inverse", "zero"]))}),
    "eta_star_printed": Spec(icl_pkg.eta_star_printed, lambda draw: {"d": _d(draw), "Tmax": draw(st.integers(2, 8))}),
    "pe_moment": Spec(icl_pkg.pe_moment, lambda draw: {
        "k": draw(st.sampled_from([3, np.arange(-3, 4), np.array([[0, 1], [2, -5]], np.int32)]), label="k"),
        "mu": draw(st.floats(1.0, 50.0))},
        check=_shape(lambda kw: np.shape(kw["k"]))),
    "pe_hessian": Spec(icl_pkg.pe_hessian, lambda draw: {"T": draw(st.integers(1, 8)),
                                                         "mu": draw(st.floats(1.0, 50.0))},
                       check=_shape(lambda kw: (kw["T"], kw["T"]))),
    "pe_hessian_printed": Spec(icl_pkg.pe_hessian_printed, lambda draw: {
        "T": draw(st.integers(1, 8)), "mu": draw(st.floats(1.0, 50.0))}, check=_shape(lambda kw: (kw["T"], kw["T"]))),
    "pe_loss": Spec(icl_pkg.pe_loss, lambda draw: {"p": seed(draw).standard_normal(draw(st.integers(1, 6))),
                                                   "mu": draw(st.floats(1.0, 50.0))}),
    # training
    "gradient_flow": Spec(icl_pkg.gradient_flow, _gradient_flow, examples=30,
                          check=lambda out, kw: out.losses.shape == (out.steps + 1,) or pytest.fail("losses")),
    "scalar_flow": Spec(icl_pkg.scalar_flow, lambda draw: {
        "a0": draw(st.floats(-2.0, 2.0)), "b0": draw(st.floats(-2.0, 2.0)), "p0": draw(st.floats(-2.0, 2.0)),
        "t_end": draw(st.floats(0.1, 5.0)), "n_steps": draw(st.integers(1, 50))},
        check=_shape(lambda kw: (kw["n_steps"] + 1, 3))),
}


def test_every_public_function_is_fuzzed():
    assert not set(SPECS) & set(EXCLUDED)
    assert public_callables(icl_pkg) == set(SPECS) | set(EXCLUDED), sorted(
        public_callables(icl_pkg) ^ (set(SPECS) | set(EXCLUDED)))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_fuzz(name):
    fuzz(SPECS[name])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_sweep(name):
    sweep(SPECS[name])
