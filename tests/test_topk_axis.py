"""The ``axis`` argument of the theory.topk operators (soft sort and rank of ``topk`` §7.3, the top-k
mask and magnitude of §7.4, their derivatives of Proposition 7.8): along any axis the result equals the
last-axis result on the moved array bit for bit, tangents and cotangents have the shape of x, the
Jacobian matrices are indexed by the other axes of x, and bad axes give errors naming ``axis``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.exceptions import AxisError

import theory.topk as topk
from theory.isotonic import ConvergenceWarning

SHAPES = [(4, 5), (3, 4, 5)]
AXES = [0, 1, -1, -2]
P_SOME = (2.0, 1.5)


def _x(shape, seed=0):
    X = np.round(np.random.default_rng(seed).standard_normal(shape), 1)  # ties included
    return X


def _last(X, axis):
    return np.moveaxis(X, axis, -1)


def _back(Y, axis):
    return np.moveaxis(Y, -1, axis)


def _same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a, b)  # bit for bit (no tolerance)


# every value operator: (name, call(x, **kw)); k = 2 keeps 1 <= k <= n - 1 for every axis length >= 3
VALUES = {
    "soft_sort": lambda x, p, **kw: topk.soft_sort(x, 0.3, p, **kw),
    "soft_sort_asc": lambda x, p, **kw: topk.soft_sort(x, 0.3, p, False, **kw),
    "soft_rank": lambda x, p, **kw: topk.soft_rank(x, 0.3, p, **kw),
    "soft_rank_asc": lambda x, p, **kw: topk.soft_rank(x, 0.3, p, False, **kw),
    "topk_mask": lambda x, p, **kw: topk.topk_mask(x, 2, 0.3, p, **kw),
    "topk_magnitude": lambda x, p, **kw: topk.topk_magnitude(x, 2, 0.3, p, **kw),
    "topk_magnitude_rescale": lambda x, p, **kw: topk.topk_magnitude(x, 2, 0.3, p, rescale=True, **kw),
}

# every product: (name, call(x, v, **kw))
PRODUCTS = {
    "soft_sort_jvp": lambda x, v, p, **kw: topk.soft_sort_jvp(x, v, 0.3, p, **kw),
    "soft_rank_jvp": lambda x, v, p, **kw: topk.soft_rank_jvp(x, v, 0.3, p, False, **kw),
    "jvp_mask": lambda x, v, p, **kw: topk.jvp(x, 2, v, 0.3, p, **kw),
    "vjp_mask": lambda x, v, p, **kw: topk.vjp(x, 2, v, 0.3, p, **kw),
    "jvp_magnitude": lambda x, v, p, **kw: topk.jvp(x, 2, v, 0.3, p, "magnitude", **kw),
    "vjp_magnitude_rescale": lambda x, v, p, **kw: topk.vjp(x, 2, v, 0.3, p, "magnitude", rescale=True, **kw),
}


def _quiet(f, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return f(*args, **kw)


@pytest.mark.parametrize("p", P_SOME)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_along_axis_equal_last_axis_on_moved_array(name, axis, shape, p):
    f = VALUES[name]
    X = _x(shape)
    Y = _quiet(f, X, p, axis=axis)
    assert Y.shape == X.shape and Y.flags.c_contiguous
    _same(Y, _back(_quiet(f, np.ascontiguousarray(_last(X, axis)), p), axis))
    if axis == -1:  # the default, unchanged
        _same(Y, _quiet(f, X, p))


@pytest.mark.parametrize("p", P_SOME)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_along_axis_equal_last_axis_on_moved_arrays(name, axis, shape, p):
    f = PRODUCTS[name]
    X = _x(shape)
    V = np.random.default_rng(1).standard_normal(shape)  # the tangent/cotangent has the shape of x
    G = _quiet(f, X, V, p, axis=axis)
    assert G.shape == X.shape
    _same(G, _back(_quiet(f, np.ascontiguousarray(_last(X, axis)), np.ascontiguousarray(_last(V, axis)), p), axis))


@pytest.mark.parametrize("p", P_SOME)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("which", ["sort", "rank"])
def test_with_jacobian_along_axis(which, axis, shape, p):
    fj = topk.soft_sort_with_jacobian if which == "sort" else topk.soft_rank_with_jacobian
    f = topk.soft_sort if which == "sort" else topk.soft_rank
    X = _x(shape)
    V = np.random.default_rng(1).standard_normal(shape)
    Xm, Vm = np.ascontiguousarray(_last(X, axis)), np.ascontiguousarray(_last(V, axis))
    y, jac = _quiet(fj, X, 0.3, p, axis=axis)
    ym, jacm = _quiet(fj, Xm, 0.3, p)
    assert jac.shape == X.shape
    _same(y, _back(ym, axis))
    _same(y, _quiet(f, X, 0.3, p, axis=axis))
    _same(jac.jvp(V), _back(jacm.jvp(Vm), axis))
    _same(jac.vjp(V), _back(jacm.vjp(Vm), axis))
    D = jac.todense()  # one matrix per problem, indexed by the other axes of x
    assert D.shape == Xm.shape + (Xm.shape[-1],)
    _same(D, jacm.todense())
    with pytest.raises(ValueError, match=r"`tangent`.*shape"):
        jac.jvp(Vm if Vm.shape != X.shape else V[..., :-1])


@pytest.mark.parametrize("p", P_SOME)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("mode", ["mask", "magnitude"])
def test_jacobian_along_axis_is_indexed_by_the_other_axes(mode, axis, shape, p):
    X = _x(shape)
    Xm = np.ascontiguousarray(_last(X, axis))
    J = _quiet(topk.jacobian, X, 2, 0.3, p, mode, axis=axis)
    n = X.shape[axis]
    assert J.shape == Xm.shape + (n,)
    _same(J, _quiet(topk.jacobian, Xm, 2, 0.3, p, mode))
    # the matrices agree with the products along the same axis
    V = np.random.default_rng(1).standard_normal(shape)
    G = _quiet(topk.jvp, X, 2, V, 0.3, p, mode, axis=axis)
    np.testing.assert_allclose(np.einsum("...ij,...j->...i", J, _last(V, axis)), _last(G, axis),
                               rtol=1e-12, atol=1e-12)


def test_one_dimensional_x_accepts_axis_0_and_minus_1():
    x = [3.0, 1.0, 2.0, 0.5]
    for ax in (0, -1, np.int64(0)):
        _same(topk.soft_sort(x, 0.5, axis=ax), topk.soft_sort(x, 0.5))
        _same(topk.topk_mask(x, 2, 0.5, axis=ax), topk.topk_mask(x, 2, 0.5))
        _same(topk.jacobian(x, 2, 0.5, axis=ax), topk.jacobian(x, 2, 0.5))


def test_fortran_and_noncontiguous_inputs():
    X = np.asfortranarray(_x((5, 6)))
    _same(topk.soft_rank(X, 0.3, axis=0), topk.soft_rank(np.ascontiguousarray(X.T), 0.3).T.copy())
    Xs = _x((6, 8))[:, ::2]
    _same(topk.topk_mask(Xs, 2, 0.3, axis=0), np.ascontiguousarray(topk.topk_mask(Xs.T.copy(), 2, 0.3).T))


def test_inputs_not_modified():
    X = _x((4, 5))
    V = np.random.default_rng(1).standard_normal((4, 5))
    X0, V0 = X.copy(), V.copy()
    topk.soft_sort_jvp(X, V, 0.3, axis=0)
    topk.vjp(X, 2, V, 0.3, axis=0)
    _, jac = topk.soft_sort_with_jacobian(X, 0.3, axis=0)
    jac.vjp(V)
    _same(X, X0)
    _same(V, V0)


ALL = {
    "soft_sort": lambda X, axis: topk.soft_sort(X, axis=axis),
    "soft_rank": lambda X, axis: topk.soft_rank(X, axis=axis),
    "soft_sort_jvp": lambda X, axis: topk.soft_sort_jvp(X, X, axis=axis),
    "soft_rank_jvp": lambda X, axis: topk.soft_rank_jvp(X, X, axis=axis),
    "soft_sort_with_jacobian": lambda X, axis: topk.soft_sort_with_jacobian(X, axis=axis),
    "soft_rank_with_jacobian": lambda X, axis: topk.soft_rank_with_jacobian(X, axis=axis),
    "topk_mask": lambda X, axis: topk.topk_mask(X, 1, axis=axis),
    "topk_magnitude": lambda X, axis: topk.topk_magnitude(X, 1, axis=axis),
    "jacobian": lambda X, axis: topk.jacobian(X, 1, axis=axis),
    "jvp": lambda X, axis: topk.jvp(X, 1, X, axis=axis),
    "vjp": lambda X, axis: topk.vjp(X, 1, X, axis=axis),
}


@pytest.mark.parametrize("name", sorted(ALL))
@pytest.mark.parametrize("axis", [2, -3, 10**18, -10**18])
def test_axis_out_of_range_is_an_axis_error(name, axis):
    with pytest.raises(AxisError, match=rf"`axis` of theory\.topk\.{name}.*\[-2, 1\].*got {axis}"):
        ALL[name](_x((3, 4)), axis)
    assert issubclass(AxisError, ValueError)  # numpy's error for a bad axis, a ValueError


@pytest.mark.parametrize("name", sorted(ALL))
@pytest.mark.parametrize("axis", [1.0, 0.5, True, np.bool_(False), "0", None, [0], np.float64(1.0)])
def test_axis_not_an_integer_is_a_type_error(name, axis):
    with pytest.raises(TypeError, match=rf"`axis` of theory\.topk\.{name} must be an integer"):
        ALL[name](_x((3, 4)), axis)


def test_axis_is_keyword_only():
    with pytest.raises(TypeError):
        topk.soft_sort(_x((3, 4)), 1.0, 2.0, True, 0)
    with pytest.raises(TypeError):
        topk.topk_mask(_x((3, 4)), 1, 1.0, 2.0, 0)


def test_axis_errors_of_vectors_and_rows_name_the_argument():
    X = _x((3, 4))
    with pytest.raises(ValueError, match=r"`tangent` of theory\.topk\.soft_sort_jvp must have shape \(3, 4\)"):
        topk.soft_sort_jvp(X, X.T, axis=0)
    with pytest.raises(ValueError, match=r"`cotangent` of theory\.topk\.vjp must have shape \(3, 4\)"):
        topk.vjp(X, 1, X[:, :2], axis=0)
    Xn = X.copy()
    Xn[1, 2] = np.nan  # the problem along axis 0 at index 2 of the other axis
    with pytest.raises(ValueError, match=r"`x` of theory\.topk\.soft_rank must be finite; row 2"):
        topk.soft_rank(Xn, axis=0)
    with pytest.raises(ValueError, match=r"`k` of theory\.topk\.topk_mask must be <= 2"):
        topk.topk_mask(X, 3, axis=0)  # 3 entries along axis 0
    with pytest.raises(ValueError, match=r"`x`"):
        topk.soft_sort(1.5, axis=0)  # a 0-D x is refused as x
