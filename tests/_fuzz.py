"""Bad-input fuzzing of public functions: one valid small call per function, with up to three of its
arguments replaced by malformed or extreme values (wrong types, NaN, inf, magnitudes near 1e-300
and 1e300, zero, negative and huge sizes, every accepted ``rng`` form).

The contract asserted for every call (:func:`run_contract`):

* it raises our ``TypeError`` or ``ValueError`` (``NonFiniteError`` included) and the message names
  an argument of the function in backticks (or reports an overflow, for ``NonFiniteError``); or
* it returns finite values (every float array or float inside the result, recursively), of the
  documented shape when the spec gives a ``check``;
* the arguments are not modified;
* it finishes within ``TIMEOUT`` seconds (a refused huge size must be refused up front).

Each test module lists its specs as ``{public name: Spec}`` and asserts that every callable of the
subpackages' ``__all__`` has one (a module's explicit exclusion list names the others and why).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import re
import signal

import numpy as np
from hypothesis import event as _event
from hypothesis import Phase, given, settings
from hypothesis.control import currently_in_test_context
from hypothesis import strategies as st

from theory._errors import NonFiniteError

#: seconds one call may take before the contract fails (valid calls take milliseconds)
TIMEOUT = 20

HUGE_INTS = [10**12, 2**62, 10**30]
SIZES = [-(10**12), -1, 0, 1, *HUGE_INTS]
MAGNITUDES = [0.0, -0.0, 5e-324, 1e-300, -1e-300, 1e300, -1e300, 1.7e308, math.nan, math.inf, -math.inf]
FACTORS = [0.0, -1.0, 1e-300, 1e-150, 1e150, 1e300, -1e300]
RNGS_OK = [None, 0, 7, np.int64(3)]
RNGS_BAD = [-1, 1.5, "seed", True, [1.0]]


GENERIC = [None, True, "x", "", [], [[1.0, 2.0]], (), {}, 1j, object(), np.zeros((2, 0)), np.ones((1, 1, 1, 1)),
           np.array(["a"]), np.random.default_rng(0), print]


def forms(value):
    """Replacements for one valid argument ``value``, chosen from its kind, then values of every
    wrong kind (:data:`GENERIC`)."""
    if isinstance(value, np.random.Generator):
        out = RNGS_OK + RNGS_BAD + [np.random.SeedSequence(1)]
    elif isinstance(value, (bool, np.bool_)):
        out = [0, 1, "yes", np.bool_(True)]
    elif isinstance(value, (int, np.integer)):
        out = SIZES + [2.5, float(value), np.int32(value), math.nan]
    elif isinstance(value, float):
        out = MAGNITUDES + [np.float32(value), int(value) if math.isfinite(value) else 1]
    elif isinstance(value, str):
        out = ["bogus", value.upper(), 3]
    elif isinstance(value, np.ndarray):
        arr = np.asarray(value, dtype=np.float64)
        out = [arr * f for f in FACTORS] + [arr.astype(np.float32), arr.tolist(), arr[None], arr.ravel()[:0]]
        if arr.ndim:
            out += [arr[..., :-1], arr[:1], np.moveaxis(arr, 0, -1).copy()]
        if arr.size:
            for bad in (math.nan, math.inf):
                out.append(arr.copy())
                out[-1].flat[0] = bad
    elif isinstance(value, (tuple, list)):
        out = [type(value)(), type(value)(value[:1]), type(value)(list(value) * 3), [None], [-1], [10**12],
               [math.nan], ["x"]]
    else:
        out = []
    return out + GENERIC


def mutate(value):
    """A strategy drawing one of :func:`forms` of ``value``."""
    return st.sampled_from(forms(value))


@dataclasses.dataclass
class Spec:
    """How to fuzz one public callable.

    valid(draw) -> dict of keyword arguments of a small valid call (drawn, so that sizes and values
    vary); check(out, kwargs) asserts the documented shape of a successful call; ``examples`` bounds
    the number of calls; ``nan_ok`` names result fields allowed to hold NaN (documented as such)."""

    func: object
    valid: object
    check: object = None
    examples: int = 40
    nan_ok: tuple = ()
    fixed: tuple = ()  # arguments never mutated (e.g. a callable handed in)


def _names(func):
    target = func.__init__ if inspect.isclass(func) else func
    return {p for p in inspect.signature(target).parameters if p != "self"}


def _snapshot(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, tuple, dict)):
        return copy.deepcopy(value)
    return value


def _same(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
            a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a is b or a == b


def assert_finite(out, path="result", nan_ok=()):
    """Every float inside ``out`` (arrays, scalars, containers, dataclass fields) is finite."""
    if path.rsplit(".", 1)[-1] in nan_ok:
        return
    if isinstance(out, np.ndarray):
        if out.dtype.kind in "fc":
            assert np.all(np.isfinite(out)), f"{path} holds NaN or inf"
    elif isinstance(out, (float, np.floating)):
        assert math.isfinite(out), f"{path} = {out}"
    elif isinstance(out, (list, tuple)):
        for i, v in enumerate(out):
            assert_finite(v, f"{path}[{i}]", nan_ok)
    elif isinstance(out, dict):
        for k, v in out.items():
            assert_finite(v, f"{path}.{k}", nan_ok)
    elif dataclasses.is_dataclass(out) and not isinstance(out, type):
        for f in dataclasses.fields(out):
            assert_finite(getattr(out, f.name), f"{path}.{f.name}", nan_ok)


def event(text):
    if currently_in_test_context():
        _event(text)


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout(f"call ran longer than {TIMEOUT} s")


def run_contract(spec, kwargs):
    """Call ``spec.func(**kwargs)`` and assert the contract of the module docstring."""
    names = _names(spec.func)
    before = {k: _snapshot(v) for k, v in kwargs.items()}
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT)
    try:
        out = spec.func(**kwargs)
    except NonFiniteError as exc:
        event(f"{spec.func.__name__}: NonFiniteError")
        assert "`" in str(exc) or "overflow" in str(exc) or "NaN" in str(exc), repr(exc)
    except (TypeError, ValueError) as exc:
        event(f"{spec.func.__name__}: {type(exc).__name__}")
        assert type(exc) in (TypeError, ValueError), repr(exc)
        tokens = re.findall(r"`([^`]+)`", str(exc))
        named = {re.split(r"[.\[ =(]", t)[0] for t in tokens}
        assert named & names, f"message names none of {sorted(names)}: {exc!r}"
    else:
        event(f"{spec.func.__name__}: ran")
        assert_finite(out, nan_ok=spec.nan_ok)
        if spec.check is not None:
            spec.check(out, before)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    for k, v in before.items():
        assert _same(v, kwargs[k]), f"argument `{k}` was modified"


def fuzz(spec):
    """Run ``spec``'s Hypothesis fuzz test (called from a parametrised pytest test)."""

    @settings(max_examples=spec.examples)
    @given(st.data())
    def inner(data):
        kwargs = spec.valid(data.draw)
        free = [k for k in kwargs if k not in spec.fixed]
        n = data.draw(st.integers(0, min(3, len(free))), label="how many replaced")
        for k in data.draw(st.permutations(free), label="order")[:n]:
            kwargs[k] = data.draw(mutate(kwargs[k]), label=k)
        run_contract(spec, kwargs)

    inner()


def sweep(spec):
    """Every form of :func:`forms` for every argument, one at a time, on one drawn valid call: the
    deterministic part of the fuzzing (every extreme is tried at least once)."""

    @settings(max_examples=1, phases=[Phase.generate])
    @given(st.data())
    def inner(data):
        base = spec.valid(data.draw)
        for k in base:
            if k in spec.fixed:
                continue
            for value in forms(base[k]):
                kwargs = copy.deepcopy(base)
                kwargs[k] = value
                run_contract(spec, kwargs)

    inner()


def public_callables(module):
    """Names of the callables in ``module.__all__`` (functions and classes)."""
    return {n for n in module.__all__ if callable(getattr(module, n))}


def seed(draw):
    """A drawn seed for building valid arrays."""
    return np.random.default_rng(draw(st.integers(0, 2**16), label="seed"))


def _to_float32(value):
    """``value`` with every float64 array and float scalar inside it (lists, tuples, dicts) as float32."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value.astype(np.float32)
    if isinstance(value, float) and not isinstance(value, bool):
        return np.float32(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_float32(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_float32(v) for k, v in value.items()}
    return value


def _widened(value):
    """The float64 values of :func:`_to_float32` of ``value`` (the float32 twin's exact float64 copy)."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value.astype(np.float32).astype(np.float64)
    if isinstance(value, float) and not isinstance(value, bool):
        return float(np.float32(value))
    if isinstance(value, (list, tuple)):
        return type(value)(_widened(v) for v in value)
    if isinstance(value, dict):
        return {k: _widened(v) for k, v in value.items()}
    return value


def _equal_results(a, b, path="result"):
    """Assert that two results are equal bit for bit (arrays, scalars, containers, dataclasses); fields
named ``seconds`` (wall-clock timings, or timings handed in and stored as given) are not compared."""
    if ".seconds" in path:
        return
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape, f"{path}: shapes {a.shape} and {b.shape}"
        assert a.dtype == b.dtype, f"{path}: dtypes {a.dtype} (float32 input) and {b.dtype} (float64 input)"
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), f"{path} differs"
    elif isinstance(a, (float, np.floating)) or isinstance(b, (float, np.floating)):
        assert type(a) is type(b), f"{path}: types {type(a).__name__} and {type(b).__name__}"
        assert a == b or (math.isnan(a) and math.isnan(b)), f"{path}: {a!r} != {b!r}"
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{path}: {type(a).__name__} of {len(a)} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _equal_results(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f"{path}: keys differ"
        for k in a:
            _equal_results(a[k], b[k], f"{path}.{k}")
    elif dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), f"{path}: types differ"
        for f in dataclasses.fields(a):
            _equal_results(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")


def twin(spec, examples=5):
    """Float32 input is computed in float64: a valid call whose float arrays and scalars are given as
    float32 returns exactly what the call with the same values in float64 returns (same dtypes, same
    bits), or both raise the same exception type."""

    @settings(max_examples=examples)
    @given(st.data())
    def inner(data):
        base = spec.valid(data.draw)
        single = {k: (v if k in spec.fixed else _to_float32(v)) for k, v in copy.deepcopy(base).items()}
        double = {k: (v if k in spec.fixed else _widened(v)) for k, v in copy.deepcopy(base).items()}
        outcomes = []
        for kwargs in (single, double):
            try:
                outcomes.append(("ok", spec.func(**kwargs)))
            except (TypeError, ValueError) as exc:
                outcomes.append((type(exc).__name__, str(exc)))
        (kind32, out32), (kind64, out64) = outcomes
        assert kind32 == kind64, f"float32 input: {kind32} {out32 if kind32 != 'ok' else ''}; float64: {kind64}"
        if kind32 == "ok":
            _equal_results(out32, out64)

    inner()
