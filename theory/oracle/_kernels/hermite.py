"""Oracle kernels: hermite coefficients of activations (theory.pl.hermite_coefficient)."""

from __future__ import annotations

import numpy as np

from ...experiments.config import Int, Real
from .._core import Argument, Case, Convention, Kernel, Parameter, register
from ._common import _tag, _validated

#: leaky_relu's negative slope in the default cases: theory.pl.hermite_coefficient's default, which is
#: theory.scaling.forward's (tests/test_oracle_show.py checks that they agree)
NEGATIVE_SLOPE = 0.8
#: the slopes of the alternative-convention cases (PyTorch's and JAX's default 0.01, TensorFlow's 0.2)
_OTHER_SLOPES = (0.01, 0.2)
#: the orders of the built-in cases
_ORDERS = (0, 1, 2, 3, 5, 10, 25, 60)
#: the largest order theory.pl.hermite_coefficient accepts (theory.pl.RMAX; tests/test_oracle_show.py checks it)
_RMAX = 300


def _hermite_case(activation: str, r: int, negative_slope: float = NEGATIVE_SLOPE) -> Case:
    """``{activation}_r{r}``, suffixed ``_slope{s}`` for leaky_relu off the default slope (the other activations
    carry the default slope, which they ignore)."""
    leaky = activation == "leaky_relu"
    s = float(negative_slope) if leaky else NEGATIVE_SLOPE
    params = {"activation": activation, "r": r, **({"negative_slope": s} if leaky else {})}
    name = f"{activation}_r{r}" + (f"_slope{_tag(s)}" if leaky and s != NEGATIVE_SLOPE else "")
    return Case(name, params, {"activation": activation, "r": r, "negative_slope": s})


def _hermite_generate(r: int, negative_slope: float) -> list[Case]:
    """Every activation at order r (leaky_relu at ``negative_slope``): the code path of the built-in cases."""
    from theory.pl import ACTIVATIONS

    return _validated("hermite_coefficient", [_hermite_case(a, r, negative_slope) for a in ACTIVATIONS])


def _hermite_cases():
    from theory.pl import ACTIVATIONS

    cases = [_hermite_case(a, r) for a in ACTIVATIONS for r in _ORDERS]
    return cases + [_hermite_case("leaky_relu", r, s) for s in _OTHER_SLOPES for r in _ORDERS]


def _hermite_ref(activation, r, negative_slope):
    from theory.pl import hermite_coefficient

    return (np.asarray(hermite_coefficient(activation, r, negative_slope=negative_slope)),)


register(Kernel(
    name="hermite_coefficient",
    module="theory.pl",
    signature="fn(activation, r, negative_slope) -> eta   (E[sigma(Z) He_r(Z)] / sqrt(r!), Z ~ N(0, 1); a float "
              "or 0-d array; negative_slope: leaky_relu's)",
    make_cases=_hermite_cases,
    reference=_hermite_ref,
    tolerance=lambda inputs, ref, eps: (max(2e-12, 64.0 * eps),),
    rule="|eta - eta_ref| <= max(2e-12, 64 eps)",
    why="a well-conditioned integral (|eta_r| <= ||sigma||_L2(gauss)); the reference is accurate to 1e-12 "
        "absolute (closed forms or quadrature split at the kinks), so the bound is that accuracy twice; plain "
        "Gauss-Hermite quadrature of a kinked activation (ReLU) misses it at high r",
    arguments=(
        Argument("activation", "scalar", "str", "sigma: 'gelu', 'identity', 'leaky_relu', 'relu', 'sin' or 'tanh'"),
        Argument("r", "scalar", "int", f"the order, 0 <= r <= {_RMAX}"),
        Argument("negative_slope", "scalar", "float", "leaky_relu's slope s in x_+ + s min(x, 0) (given to every "
                 "case; only leaky_relu uses it)"),
    ),
    returns=(Argument("eta", "scalar", "float64", "eta_r(sigma), a float or a 0-d array"),),
    conventions=(
        Convention("the Hermite polynomials and their normalisation",
                   "the probabilists' He_r (weight exp(-x^2/2): He_0 = 1, He_1 = x, He_2 = x^2 - 1), divided by "
                   "sqrt(r!) so that He_r/sqrt(r!) is orthonormal for N(0, 1) (implicit-reg Section B, Lemma 21)",
                   "the physicists' H_r of numpy.polynomial.hermite and scipy.special.eval_hermite (weight "
                   "exp(-x^2), H_2 = 4x^2 - 2); the unnormalised moment E[sigma(Z) He_r(Z)]; the coefficient c_r of "
                   "sigma = sum_r c_r He_r (numpy.polynomial.hermite_e), c_r = E[sigma(Z) He_r(Z)] / r!",
                   "He_r(x) = 2^(-r/2) H_r(x / sqrt(2)) (scipy.special.eval_hermitenorm(r, x)); divide the moment by "
                   "sqrt(r!); multiply c_r by sqrt(r!)"),
        Convention("GELU",
                   "the exact x Phi(x), Phi the standard normal distribution function",
                   "jax.nn.gelu defaults to the tanh approximation (approximate=True); torch.nn.GELU's default is "
                   "exact, approximate='tanh' is not",
                   "use the exact form: jax.nn.gelu(x, approximate=False), torch.nn.GELU(approximate='none')"),
        Convention("leaky ReLU's negative slope",
                   "x_+ + s min(x, 0) with s the argument `negative_slope`: 0.8 in the default cases (as "
                   "theory.scaling.forward), and cases at 0.01 and 0.2",
                   "torch.nn.LeakyReLU and jax.nn.leaky_relu default to 0.01, tf.nn.leaky_relu to 0.2",
                   "pass negative_slope to the activation (never the library's default)",
                   parameter="negative_slope"),
    ),
    parameters=(
        Parameter("r", Int(0, _RMAX), 10, f"the order of every activation's case (built-in: "
                  f"{', '.join(map(str, _ORDERS))})"),
        Parameter("negative_slope", Real(-1.0, 1.0), NEGATIVE_SLOPE, "the slope of the leaky_relu case (built-in: "
                  "0.8, 0.01, 0.2); the other activations ignore it"),
    ),
    generate=_hermite_generate,
))
