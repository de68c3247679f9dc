"""The oracle's machinery: kernels with their cases and tolerance rules, verification, export.

A :class:`Kernel` names one function of the package as other implementations see it: the keyword
arguments it is called with, the outputs it returns, a deterministic list of :class:`Case` objects
(inputs plus the parameters that generated them), the float64 reference (the package's own kernel)
and the tolerance rule that follows from the problem's conditioning.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import os
import time
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Case", "Kernel", "Argument", "Convention", "Parameter", "OracleInputError", "VerifyResult", "CaseRow",
           "FORMAT_VERSION", "register", "kernel", "kernels", "verify", "export", "load_vectors", "load_adapter",
           "load_function", "show", "select_cases", "cases_at", "INCONCLUSIVE_FRACTION", "ROUNDING_BAND", "VERDICTS"]

#: version of the exported vectors' layout; a reader refuses a newer one
FORMAT_VERSION = 1

EPS = {"float64": float(np.finfo(np.float64).eps), "float32": float(np.finfo(np.float32).eps)}

#: A case whose tolerance exceeds this fraction of an output's scale (the largest magnitude max|ref| of that
#: output's reference entries) decides nothing: its rule cannot tell an error of 1 % of the output from
#: rounding, so an implementation off by a few percent would pass. Such a case is ``inconclusive`` (not
#: ``pass``) unless its error exceeds the tolerance, which is a decisive ``FAIL``. An output whose reference
#: is exactly 0 everywhere has no scale (no relative error can be stated): its tolerance alone judges it.
#: Statistical kernels (samplers) are judged by their tests and are not affected.
INCONCLUSIVE_FRACTION = 1e-2

#: The band of relative errors (error / output scale, in units of a precision's machine epsilon) that one
#: rounding in that precision explains: a rounded value has a relative error of at most eps/2, and of at
#: least eps/100 for all but about 2 % of values; a few roundings, or one amplified by a modest
#: conditioning, reach several eps, up to the upper end. The diagnosis of a FAIL compares the error with
#: this band for float32 (and with the case's own tolerance rule evaluated at float32's and float64's eps).
ROUNDING_BAND = (1e-2, 10.0)


class OracleInputError(ValueError):
    """The oracle cannot run: a bad module path, adapter, vectors folder or kernel name (exit code 2)."""


@dataclasses.dataclass(frozen=True)
class Case:
    """One test case: ``inputs`` (keyword name -> array or Python scalar) and the ``params`` that made it.

    ``reference`` holds the package's float64 outputs once they are computed (a case generator that checks
    each case against the package's own limits computes them anyway); verification then reuses them instead of
    computing them a second time. It is not part of the case's identity.
    """

    name: str
    params: Mapping[str, Any]
    inputs: Mapping[str, Any]
    reference: tuple | None = dataclasses.field(default=None, compare=False, repr=False)


@dataclasses.dataclass(frozen=True)
class Argument:
    """One argument of the user's function, or one output: its ``name``, ``shape`` (in the letters of the
    kernel's signature, e.g. ``"(N, d, d)"``, or ``"scalar"``), ``dtype`` (``"float64"``, ``"int"``, ``"bool"``,
    ``"str"``, ``"numpy Generator"``) and ``meaning`` (one line)."""

    name: str
    shape: str
    dtype: str
    meaning: str


@dataclasses.dataclass(frozen=True)
class Convention:
    """A convention the kernel fixes and that other implementations vary on.

    ``topic`` what it is about (a step size, an activation slope, a normalisation), ``ours`` the kernel's
    choice (and where the document makes it), ``alternatives`` the choices common elsewhere, ``mapping`` how
    to map an alternative onto the kernel's (the adapter line to write), and ``parameter`` the argument of
    the user's function that selects it when the kernel takes it as a parameter ("" when it is fixed).
    """

    topic: str
    ours: str
    alternatives: str
    mapping: str
    parameter: str = ""


@dataclasses.dataclass(frozen=True)
class Parameter:
    """A parameter of a kernel's generated cases that the user may set (``--param NAME=V1,V2``).

    ``constraint`` is its domain (a ``theory.experiments.config.Constraint``: validation, parsing and
    the words of the docs come from it), ``default`` the value used when the user sets other parameters
    only, ``doc`` one line.
    """

    name: str
    constraint: Any
    default: Any
    doc: str


@dataclasses.dataclass(frozen=True)
class Kernel:
    """One kernel as the oracle presents it.

    Attributes
    ----------
    name : str
        The oracle's name (``theory oracle list`` prints them).
    signature : str
        How the user's function is called and what it returns, e.g. ``"fn(y, w, increasing) -> x"``.
    make_cases : callable
        ``make_cases() -> list[Case]``, deterministic (explicit seeds).
    reference : callable
        ``reference(**inputs) -> tuple of arrays`` in the order of ``outputs``: the package's kernel.
    tolerance : callable
        ``tolerance(inputs, reference_outputs, eps) -> tuple of floats``: the absolute bound on
        ``max |got - reference|`` of each output, with ``eps`` the unit roundoff of the mode.
    rule, why : str
        The tolerance rule as a formula, and why it follows from the problem's conditioning.
    arguments, returns : tuple of Argument
        The user's function's keyword arguments and its outputs, with shapes and dtypes (``theory oracle
        show`` prints them). ``returns`` is required: it declares the outputs once.
    conventions : tuple of Convention
        The conventions other implementations vary on, with the mapping onto the kernel's.
    parameters : tuple of Parameter
        The parameters of the generated cases a user may choose; ``generate(**values)`` returns the cases at
        one value of each (see :func:`cases_at`).
    gradient : bool
        The user's function computes derivatives (autograd in user code): it is called with gradients
        enabled; every other kernel's function is called under ``torch.no_grad()`` when torch is imported.
    trajectory : tuple of str
        The outputs that are forward trajectories: axis 0 the depth, row 0 the input x_0, the last row the
        network's output. ``verify(..., outputs="last")`` compares the last row of these with what the
        function returns (a model that returns its last state only).
    """

    name: str
    signature: str
    make_cases: Callable[[], list[Case]]
    reference: Callable[..., tuple]
    tolerance: Callable[[Mapping[str, Any], tuple, float], tuple]
    rule: str
    why: str
    module: str = ""
    #: statistical kernels (random samplers): ``prepare(inputs) -> call arguments`` (e.g. a seed into a
    #: Generator), ``shape(inputs) -> expected output shape`` and ``judge(inputs, reference, draws, alpha)
    #: -> (verdict, statistic, p_value, critical, message)``; ``tolerance`` is then unused
    prepare: Callable[[Mapping[str, Any]], dict] | None = None
    shape: Callable[[Mapping[str, Any]], tuple] | None = None
    judge: Callable[..., tuple] | None = None
    #: the package's own implementation in the oracle's calling convention (default: ``reference``)
    own: Callable[..., Any] | None = None
    arguments: tuple = ()
    returns: tuple = ()
    conventions: tuple = ()
    parameters: tuple = ()
    generate: Callable[..., list[Case]] | None = None
    gradient: bool = False
    trajectory: tuple = ()

    def __post_init__(self) -> None:
        names = tuple(a.name for a in self.returns)
        if not names or len(set(names)) != len(names):
            raise ValueError(f"kernel {self.name!r}: `returns` must declare its outputs once each (distinct "
                             f"names, at least one); got {list(names)}")
        stray = [t for t in self.trajectory if t not in names]
        if stray:
            raise ValueError(f"kernel {self.name!r}: `trajectory` names {stray}, which `returns` does not declare")

    @property
    def outputs(self) -> tuple[str, ...]:
        """Names of the returned arrays, from ``returns`` (a single output is returned bare; several as a tuple
        in this order)."""
        return tuple(a.name for a in self.returns)

    @property
    def implementation(self) -> Callable[..., Any]:
        return self.own if self.own is not None else self.reference

    def cases(self) -> list[Case]:
        return _cached_cases(self)


_CASES: dict[str, list[Case]] = {}


def _cached_cases(k: Kernel) -> list[Case]:
    if k.name not in _CASES:
        cases = k.make_cases()
        names = [c.name for c in cases]
        if len(set(names)) != len(names):
            raise RuntimeError(f"kernel {k.name}: duplicate case names")
        _CASES[k.name] = cases
    return _CASES[k.name]


_REGISTRY: dict[str, Kernel] = {}


def register(k: Kernel) -> Kernel:
    if k.name in _REGISTRY:
        raise ValueError(f"kernel {k.name!r} is already registered")
    _REGISTRY[k.name] = k
    return k


def kernels() -> list[str]:
    """The names of the oracle's kernels, in registration order."""
    return list(_REGISTRY)


def kernel(name: str) -> Kernel:
    """The kernel called ``name``; :class:`OracleInputError` lists the known ones otherwise."""
    if isinstance(name, Kernel):
        return name
    if name not in _REGISTRY:
        raise OracleInputError(f"unknown kernel {name!r}; known: {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def select_cases(k: Kernel, patterns, cases: list | None = None) -> list:
    """The cases of ``k`` (or of the list ``cases`` of Case or (Case, stored) pairs) whose names match one of
    ``patterns`` (exact names or shell globs: ``*``, ``?``, ``[...]``), in the kernel's order; a pattern that
    matches nothing is an :class:`OracleInputError` listing the case names."""
    import fnmatch

    pool = list(k.cases()) if cases is None else list(cases)
    names = [(c[0] if isinstance(c, tuple) else c).name for c in pool]
    patterns = [str(p) for p in patterns]
    unmatched = [p for p in patterns if not fnmatch.filter(names, p)]
    if unmatched:
        raise OracleInputError(f"kernel {k.name} has no case matching {', '.join(unmatched)} (its cases: "
                               f"{', '.join(names)})")
    return [c for c, name in zip(pool, names) if any(fnmatch.fnmatchcase(name, p) for p in patterns)]


def cases_at(k: Kernel, params: Mapping[str, Any]) -> list[Case]:
    """The cases of ``k`` generated at the user's parameter values.

    ``params`` maps parameter names of ``k.parameters`` to a value or a sequence of values (a string from the
    command line, ``"0.3,0.7"``, is parsed by the parameter's constraint); the cases are generated at every
    combination, the unnamed parameters at their defaults, in the order the values are given.

    Raises
    ------
    OracleInputError
        The kernel generates no cases at chosen parameters, a name it does not declare, or a value outside
        the parameter's domain (the message names the parameter and the domain).
    """
    import itertools

    if k.generate is None or not k.parameters:
        raise OracleInputError(f"kernel {k.name} has no parameters to choose: its cases are fixed "
                               f"(kernels with parameters: {', '.join(n for n in kernels() if _REGISTRY[n].parameters)})")
    declared = {p.name: p for p in k.parameters}
    unknown = [name for name in params if name not in declared]
    if unknown:
        raise OracleInputError(f"kernel {k.name} has no parameter {', '.join(map(repr, unknown))}; its parameters: "
                               + "; ".join(f"{p.name} ({p.constraint.describe()})" for p in k.parameters))
    axes = []
    for p in k.parameters:
        given = params.get(p.name, (p.default,))
        if isinstance(given, str):
            try:
                given = [p.constraint.parse(t.strip(), p.name) for t in given.split(",") if t.strip()]
            except (TypeError, ValueError) as exc:
                raise OracleInputError(f"--param {p.name}: {exc}") from None
        elif not isinstance(given, (list, tuple)):
            given = (given,)
        if not given:
            raise OracleInputError(f"parameter {p.name!r} of kernel {k.name} was given no value")
        values = []
        for v in given:
            try:
                values.append(p.constraint.validate(v, p.name, f"the kernel {k.name}"))
            except (TypeError, ValueError) as exc:
                raise OracleInputError(f"{exc} ({p.doc})") from None
        axes.append(values)
    out, seen = [], set()
    for combo in itertools.product(*axes):
        try:
            generated = k.generate(**{p.name: v for p, v in zip(k.parameters, combo)})
        except (TypeError, ValueError) as exc:  # the generator's own limits (memory, work, a joint constraint)
            from theory._validation import WORK_REMEDY

            text = str(exc).replace(WORK_REMEDY, "the oracle's budget is fixed: choose a smaller")
            raise OracleInputError(f"kernel {k.name} at {dict(zip(declared, combo))}: {text}") from None
        for c in generated:
            if c.name not in seen:
                seen.add(c.name)
                out.append(c)
    return out


def show(name) -> str:
    """What an implementer needs to call a kernel: the call, each argument and output with its shape and
    dtype, the conventions (with the common alternatives and how to map them), the tolerance rule and why,
    the parameters a user may choose, and the case names (``theory oracle show KERNEL`` prints it)."""
    import textwrap

    k = kernel(name)

    def wrap(text, indent):
        return textwrap.fill(" ".join(str(text).split()), width=100, initial_indent=indent,
                             subsequent_indent=indent)

    lines = [f"{k.name}  (the package's {k.module or 'kernel'})", "", "call", wrap(k.signature, "  ")]
    for title, items in (("arguments", k.arguments), ("returns", k.returns)):
        if items:
            lines += ["", title]
            width = max(len(a.name) for a in items)
            shape = max(len(a.shape) for a in items)
            dtype = max(len(a.dtype) for a in items)
            for a in items:
                lines.append(f"  {a.name:<{width}}  {a.shape:<{shape}}  {a.dtype:<{dtype}}  {a.meaning}")
    if k.conventions:
        lines += ["", "conventions"]
        for c in k.conventions:
            lines.append(wrap(f"- {c.topic}" + (f" (argument `{c.parameter}`)" if c.parameter else ""), "  "))
            lines.append(wrap(f"ours: {c.ours}", "      "))
            lines.append(wrap(f"elsewhere: {c.alternatives}", "      "))
            lines.append(wrap(f"to map: {c.mapping}", "      "))
    lines += ["", "tolerance", wrap(k.rule, "  "), wrap(f"why: {k.why}", "  ")]
    if k.parameters:
        lines += ["", "parameters (theory oracle verify ... --param NAME=V1,V2; Python: verify(..., params={NAME: [V1, V2]}))"]
        for p in k.parameters:
            lines.append(wrap(f"{p.name}: {p.constraint.describe()}; default {p.default!r}; {p.doc}", "  "))
    names = [c.name for c in k.cases()]
    lines += ["", f"cases ({len(names)}; select with --case NAME or a glob such as --case '{_glob_hint(names)}')",
              wrap(", ".join(names), "  ")]
    return "\n".join(lines)


def _glob_hint(names) -> str:
    """A glob matching some of ``names`` (the common prefix of the first two, or the first name)."""
    if len(names) >= 2:
        import os.path

        prefix = os.path.commonprefix(names[:2])
        if prefix:
            return prefix + "*"
    return names[0] if names else "*"


# ----------------------------------------------------------------------------------------------
# inputs in a given precision


def _fits_float32(value) -> bool:
    a = np.asarray(value)
    if a.dtype.kind != "f":
        return True
    m = np.abs(a[a != 0])
    return m.size == 0 or (float(m.max()) <= float(np.finfo(np.float32).max)
                           and float(m.min()) >= float(np.finfo(np.float32).tiny))


def _in_dtype(inputs: Mapping[str, Any], dtype: str) -> dict:
    """Copies of the inputs; float arrays and floats rounded to float32 in float32 mode."""
    out = {}
    for key, value in inputs.items():
        if isinstance(value, np.ndarray):
            value = value.copy()
            if value.dtype.kind == "f" and dtype == "float32":
                value = value.astype(np.float32)
        elif isinstance(value, float) and dtype == "float32":
            value = float(np.float32(value))
        out[key] = value
    return out


def _upcast(inputs: Mapping[str, Any]) -> dict:
    return {k: (v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype.kind == "f" else v)
            for k, v in inputs.items()}


def reference_outputs(k: Kernel, inputs: Mapping[str, Any], dtype: str = "float64") -> tuple:
    """The package's outputs on the inputs as the mode presents them (float32 mode: the rounded inputs)."""
    given = _upcast(_in_dtype(inputs, dtype))
    out = k.reference(**given)
    return tuple(np.asarray(o, dtype=np.float64) for o in out)


def _reference_for(k: Kernel, case: Case, dtype: str = "float64") -> tuple:
    """:func:`reference_outputs` of a case; the package's own refusal (a size beyond its limits, a value its
    kernel cannot take, at parameters the user chose) is an :class:`OracleInputError` naming the case."""
    if dtype == "float64" and case.reference is not None:
        return case.reference
    try:
        return reference_outputs(k, case.inputs, dtype)
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise OracleInputError(f"the package's reference cannot compute case {case.name} of {k.name} "
                               f"({json.dumps(_jsonable(case.params), sort_keys=True, default=str)}) in {dtype} "
                               f"mode: {type(exc).__name__}: {exc}") from None


# ----------------------------------------------------------------------------------------------
# verification


@dataclasses.dataclass(frozen=True)
class CaseRow:
    """One line of the verification table.

    ``verdict`` is ``"pass"``, ``"FAIL"``, ``"inconclusive"`` (every error within a tolerance too wide
    to decide, see :data:`INCONCLUSIVE_FRACTION`), ``"ERROR"`` or ``"skip"``. ``max_abs``, ``max_rel``,
    ``tol`` and ``scale`` (max|ref| of that output) are those of the output named in ``output`` (of a
    kernel with several outputs): the one with the largest error relative to its tolerance, or, for an
    inconclusive row, the one whose tolerance is the largest fraction of its scale. A FAIL row's
    ``diagnosis`` says which rounding its error is consistent with (``_diagnose``) and ``message``
    says it in words.
    """

    case: str
    verdict: str
    max_abs: float = math.nan
    max_rel: float = math.nan
    tol: float = math.nan
    output: str = ""
    message: str = ""
    scale: float = math.nan
    diagnosis: str = ""


#: every verdict a row can have; those of a case that was compared with the reference, and of one that the
#: comparison decided
VERDICTS = ("pass", "FAIL", "inconclusive", "ERROR", "skip")
_COMPARED = ("pass", "FAIL", "inconclusive")
_DECIDED = ("pass", "FAIL")


@dataclasses.dataclass
class VerifyResult:
    """The outcome of :func:`verify`: ``ok``, the table rows, and the first failing case's inputs."""

    kernel: str
    dtype: str
    rows: list[CaseRow]
    first_failure: dict | None = None
    seconds_user: float = 0.0
    seconds_total: float = 0.0

    def count(self, verdict: str) -> int:
        """How many rows have this verdict, one of :data:`VERDICTS`.

        Raises
        ------
        OracleInputError
            ``verdict`` is not one of :data:`VERDICTS` (a misspelt verdict would count 0 silently).
        """
        if verdict not in VERDICTS:
            raise OracleInputError(f"verdict must be one of {', '.join(VERDICTS)}; got {verdict!r}")
        return sum(r.verdict == verdict for r in self.rows)

    @property
    def counts(self) -> dict[str, int]:
        """The number of rows of each verdict of :data:`VERDICTS`."""
        return {v: self.count(v) for v in VERDICTS}

    @property
    def compared(self) -> int:
        """How many cases were compared (passed, failed or inconclusive); skipped and unchecked cases are not."""
        return sum(r.verdict in _COMPARED for r in self.rows)

    @property
    def decided(self) -> int:
        """How many compared cases the comparison decided (passed or failed; not the inconclusive ones)."""
        return sum(r.verdict in _DECIDED for r in self.rows)

    @property
    def inconclusive(self) -> list[CaseRow]:
        """The rows whose tolerance was too wide to decide (every error within it)."""
        return [r for r in self.rows if r.verdict == "inconclusive"]

    @property
    def ok(self) -> bool:
        """No case disagrees or could not be checked, and at least one case passed: a run that decided
        nothing (every case skipped, none selected, or every compared case inconclusive) is never a success."""
        return self.count("pass") > 0 and all(r.verdict in ("pass", "inconclusive", "skip") for r in self.rows)

    @property
    def exit_code(self) -> int:
        """0 the cases decided agree (inconclusive ones aside), 1 a case disagrees, 2 a case could not be
        checked (raised, exited, was interrupted, returned a bad output) or nothing was decided (no case
        compared, or every compared case inconclusive)."""
        if any(r.verdict == "ERROR" for r in self.rows) or self.decided == 0:
            return 2
        return 0 if self.ok else 1

    @property
    def failures(self) -> list[CaseRow]:
        return [r for r in self.rows if r.verdict in ("FAIL", "ERROR")]

    def table(self) -> str:
        """The table: case, max abs error, max rel error, tolerance, verdict."""
        width = max([len(r.case) for r in self.rows] + [4])
        if kernel(self.kernel).judge is not None:  # a sampler: |statistic|, p-value, critical value
            lines = [f"{'case':<{width}}  {'max |stat|':>11}  {'min p':>11}  {'critical':>9}  verdict"]
        else:
            lines = [f"{'case':<{width}}  {'max abs err':>11}  {'max rel err':>11}  {'tolerance':>9}  verdict"]
        for r in self.rows:
            def f(v):
                return f"{v:11.3e}" if math.isfinite(v) else f"{'-':>11}"
            tail = f"  ({r.output})" if r.verdict in ("FAIL", "inconclusive") and r.output else ""
            tail += f"  {r.message}" if r.message else ""
            tol = f"{r.tol:9.2e}" if math.isfinite(r.tol) else f"{'-':>9}"
            lines.append(f"{r.case:<{width}}  {f(r.max_abs)}  {f(r.max_rel)}  {tol}  {r.verdict}{tail}")
        return "\n".join(lines)

    def summary(self) -> str:
        n = len(self.rows)
        c = self.counts
        text = f"{self.kernel} ({self.dtype}): {c['pass']} of {n - c['skip']} cases pass"
        if c["inconclusive"]:
            text += (f", {c['inconclusive']} inconclusive (a tolerance above {INCONCLUSIVE_FRACTION:g} of the "
                     f"output's scale: those cases decide nothing)")
        if c["skip"]:
            text += f", {c['skip']} skipped"
        if c["FAIL"]:
            text += f"; {c['FAIL']} disagree"
        if c["ERROR"]:
            text += f"; {c['ERROR']} could not be checked (the function raised or returned a bad output)"
        if self.compared == 0 and not c["ERROR"]:
            text += "; nothing was compared (" + ("every selected case was skipped" if n else "no case selected") + \
                    "), which is not a success"
        elif self.decided == 0 and not c["ERROR"]:
            text += "; nothing was decided (every compared case is inconclusive), which is not a success"
        return text

    def report(self) -> str:
        """Table, summary and the first failing case's inputs (what the command prints)."""
        parts = [self.table(), self.summary()]
        if self.first_failure is not None:
            parts.append(_describe_failure(self.first_failure))
        return "\n".join(parts)

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "dtype": self.dtype, "ok": self.ok, "exit_code": self.exit_code,
                "counts": self.counts, "inconclusive_fraction": INCONCLUSIVE_FRACTION,
                "rows": [{k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                          for k, v in dataclasses.asdict(r).items()} for r in self.rows],
                "first_failure": None if self.first_failure is None else {
                    "case": self.first_failure["case"], "params": self.first_failure["params"],
                    "message": self.first_failure["message"]},
                "seconds_user": self.seconds_user, "seconds_total": self.seconds_total}


def _short(value) -> str:
    if isinstance(value, np.ndarray):
        with np.printoptions(precision=17, threshold=12, edgeitems=3, linewidth=100):
            return f"array shape {value.shape} {value.dtype}: " + " ".join(repr(value).split())
    return repr(value)


def _describe_failure(f: dict) -> str:
    lines = [f"first failing case: {f['case']}  (generated by {json.dumps(f['params'], sort_keys=True)})"]
    lines.append(f"  {f['message']}")
    for key, value in f["inputs"].items():
        lines.append(f"  input {key} = {_short(value)}")
    if f.get("got") is not None:
        lines.append(f"  expected {f['output']} = {_short(f['expected'])}")
        lines.append(f"  got      {f['output']} = {_short(f['got'])}")
    return "\n".join(lines)


def _as_outputs(k: Kernel, value) -> tuple:
    n = len(k.outputs)
    if n == 1:
        if isinstance(value, (tuple, list)) and len(value) >= 1 and not np.isscalar(value[0]):
            value = value[0]  # e.g. our own (x, blocks): the first item is the output
        return (value,)
    if not isinstance(value, (tuple, list)) or len(value) < n:
        raise _BadOutput(f"expected a tuple of {n} arrays ({', '.join(k.outputs)}), got {type(value).__name__}")
    return tuple(value[:n])


class _BadOutput(Exception):
    pass


def _to_numpy(value, name: str, shape: tuple) -> np.ndarray:
    if hasattr(value, "detach"):  # torch tensors
        value = value.detach().cpu().numpy()
    try:
        a = np.asarray(value)
    except Exception as exc:  # noqa: BLE001 - any foreign object
        raise _BadOutput(f"output {name} is not convertible to an array ({type(value).__name__}: {exc})") from None
    if a.dtype.kind not in "fiu":
        raise _BadOutput(f"output {name} has dtype {a.dtype}; expected a real floating array")
    if a.shape != shape:
        raise _BadOutput(f"output {name} has shape {a.shape}; expected {shape}")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        bad = int(np.flatnonzero(~np.isfinite(a.ravel()))[0])
        raise _BadOutput(f"output {name} holds a non-finite value ({float(a.ravel()[bad])!r} at flat index {bad})")
    return a


def _float_dtype(value):
    """The NumPy floating dtype of a returned array (NumPy, torch, JAX, ...), None for anything else."""
    if not hasattr(value, "dtype"):
        return None
    if hasattr(value, "detach"):  # torch: its dtype is not a NumPy dtype
        value = value.detach().cpu().numpy()
    try:
        t = np.dtype(value.dtype)
    except TypeError:
        return None
    return t if t.kind == "f" else None


def _compare(k: Kernel, case: Case, got: tuple, ref: tuple, eps: float, given: Mapping, *, dtype: str = "float64",
             narrow: tuple = ()) -> CaseRow:
    """The row of one compared case: each output against its tolerance.

    ``FAIL`` when an output's error exceeds its tolerance (decisive, however wide the tolerance), with the
    rounding diagnosis of ``_diagnose`` (``narrow``: the float dtypes narrower than the mode that the
    function returned); otherwise ``inconclusive`` when an output's tolerance exceeds
    :data:`INCONCLUSIVE_FRACTION` of its scale max|ref| (an output whose reference is 0 everywhere has no
    scale and is judged by its tolerance alone); otherwise ``pass``.
    """
    inputs = _upcast(given)
    tols = k.tolerance(inputs, ref, eps)
    per = []  # (index, name, err, rel, tol, scale, err / tol, tol / scale) per output
    for i, (name, g, r, tol) in enumerate(zip(k.outputs, got, ref, tols)):
        tol = float(tol)
        err = float(np.max(np.abs(g - r))) if r.size else 0.0
        scale = float(np.max(np.abs(r))) if r.size else 0.0
        rel = err / scale if scale > 0 else (0.0 if err == 0 else math.inf)
        ratio = err / tol if tol > 0 else (0.0 if err == 0 else math.inf)
        width = tol / scale if scale > 0 else 0.0
        per.append((i, name, err, rel, tol, scale, ratio, width))
    worst = per[0]
    for p in per[1:]:
        if p[6] > worst[6]:
            worst = p
    several = len(k.outputs) > 1
    undecided = [p for p in per if p[7] > INCONCLUSIVE_FRACTION]
    if not worst[6] <= 1.0:
        i, name, err, rel, tol, scale = worst[:6]
        tol32, tol64 = (tol, math.nan) if dtype == "float32" else (float(k.tolerance(inputs, ref, EPS["float32"])[i]), tol)
        key, text = _diagnose(err, scale, tol32, tol64, dtype, narrow)
        return CaseRow(case.name, "FAIL", err, rel, tol, name if several else "", text, scale, key)
    if undecided:
        i, name, err, rel, tol, scale, ratio, width = max(undecided, key=lambda p: p[7])
        text = (f"tolerance {tol:.2e} = {width:.3g} x max|{name}_ref| ({scale:.2e}), above {INCONCLUSIVE_FRACTION:g}: "
                f"cannot tell an error of {100 * INCONCLUSIVE_FRACTION:g} % of {name} from rounding")
        others = [p[1] for p in undecided if p[1] != name]
        if others:
            text += f" (nor of {', '.join(others)})"
        return CaseRow(case.name, "inconclusive", err, rel, tol, name if several else "", text, scale)
    i, name, err, rel, tol, scale = worst[:6]
    return CaseRow(case.name, "pass", err, rel, tol, name if several else "", "", scale)


def _times(err: float, tol: float) -> str:
    """``err / tol`` as the diagnosis prints it (``inf`` for a zero tolerance)."""
    return f"{err / tol:.3g}" if tol > 0 else "inf"


def _diagnose(err: float, scale: float, tol32: float, tol64: float, dtype: str, narrow=()) -> tuple[str, str]:
    """Which rounding the error of a failing output is consistent with: ``(key, sentence)``.

    The relative error ``err / scale`` is compared with float32's machine epsilon through
    :data:`ROUNDING_BAND` ``(lo, hi)``, and ``err`` with the case's own rule at float32's eps (``tol32``)
    and float64's (``tol64``, the tolerance of float64 mode). Keys:

    - ``"not precision"``: above ``hi`` eps32 and above ``tol32``: beyond any float32 rounding the rule
      allows, so a wrong constant or formula;
    - ``"float32 arithmetic or formula"``: above ``hi`` eps32 but within ``tol32``: float32 arithmetic
      throughout (roundings amplified by the conditioning) explains it, and so would a wrong constant;
    - ``"float32 rounding"``: between ``lo`` and ``hi`` eps32: a float32 value or constant inside the
      computation (in float32 mode: a float32 algorithm less accurate than the rule);
    - ``"float64 rounding"`` (float64 mode): below ``lo`` eps32 and within ``hi`` times ``tol64``: a
      float64 computation less accurate than the rule allows;
    - ``"neither precision"``: below ``lo`` eps32 and above that: a small wrong term or a loss of accuracy;
    - ``"zero reference"``: the reference is 0 everywhere, no relative comparison exists.

    A returned dtype narrower than the mode (``narrow``) is named in the sentence.
    """
    lo, hi = ROUNDING_BAND
    returned = f"; returned {', '.join(narrow)} in {dtype} mode" if narrow else ""
    if not scale > 0:
        return "zero reference", (f"the reference output is 0 everywhere: an absolute error of {err:.2e}, which no "
                                  f"relative rounding explains{returned}")
    rel = err / scale
    r32, r64 = rel / EPS["float32"], rel / EPS["float64"]
    figures = f"error {rel:.2g} relative = {r32:.2g} eps32 = {r64:.3g} eps64"
    if r32 > hi:
        if err <= tol32:
            return "float32 arithmetic or formula", (
                f"above float32 rounding ({figures}) but within this case's float32 tolerance {tol32:.2e}: float32 "
                f"arithmetic throughout (roundings amplified by the conditioning), or a wrong constant or formula"
                f"{returned}")
        return "not precision", (f"far above float32 rounding ({figures}; {_times(err, tol32)} x this case's float32 "
                                 f"tolerance): a wrong constant or formula, not precision{returned}")
    if r32 >= lo:
        if dtype == "float32":
            return "float32 rounding", (f"consistent with float32 rounding ({figures}) but above the float32 rule: a "
                                        f"float32 algorithm less accurate than the rule allows, or a small wrong term"
                                        f"{returned}")
        return "float32 rounding", (f"consistent with float32 rounding ({figures}): a float32 value or constant inside "
                                    f"the computation{returned}")
    if dtype == "float64" and err <= hi * tol64:
        return "float64 rounding", (f"far below float32 rounding, consistent with float64 rounding ({figures}; "
                                    f"{_times(err, tol64)} x the tolerance): a float64 computation less accurate than the "
                                    f"rule allows (another algorithm or order of operations), not float32{returned}")
    return "neither precision", (f"between float64 and float32 rounding ({figures}): neither precision explains it; "
                                 f"a small wrong term or constant, or a loss of accuracy (cancellation){returned}")


def verify(kernel_name, fn, *, vectors=None, adapter=None, dtype="float64", cases=None, params=None, outputs="all",
           memory_cap=None) -> VerifyResult:
    """Call ``fn`` on every case of a kernel and compare with the float64 reference.

    Parameters
    ----------
    kernel_name : str or Kernel
        A name from ``theory oracle list``.
    fn : callable
        The implementation under test, called as ``fn(**inputs)`` (after ``adapter``).
    vectors : path, optional
        A folder written by :func:`export`; default: the cases generated in memory (the same ones).
    adapter : callable or path, optional
        ``adapt(fn) -> callable`` taking the oracle's keyword arguments, or a Python file defining ``adapt``.
    dtype : "float64" or "float32"
        float32 mode rounds the float inputs to float32, compares with the reference on the rounded
        inputs and applies the kernel's rule with float32's unit roundoff; cases outside float32's range
        are skipped.
    cases : iterable of str, optional
        Only the cases with these names or matching these shell globs (``"fgn_H0.5*"``).
    params : dict, optional
        Cases generated at the user's parameter values instead of the built-in ones: parameter name ->
        value or list of values (every combination; see :func:`cases_at` and ``theory oracle show``). Not
        with ``vectors``.
    outputs : "all" or "last"
        ``"last"``: ``fn`` returns the last state only of each trajectory output (``Kernel.trajectory``, e.g.
        x_N of shape (d,) for ``resnet_forward``), compared with the last row of the reference under the
        trajectory's tolerance rule (a bound on every row, so on the last one). Only for kernels with
        trajectory outputs.
    memory_cap : float, optional
        The growth of the process's resident memory, in bytes, at which a call of ``fn`` is stopped and its
        case reported as ``ERROR`` naming the cap and the memory reached; ``math.inf`` for no cap. Default:
        max(:data:`~theory.oracle.MEMORY_CAP` = 2 GiB, :data:`~theory.oracle.MEMORY_CAP_FACTOR` = 16 times the
        bytes of the case's inputs and reference outputs). ``fn`` runs under ``torch.no_grad()`` when torch is
        imported, unless the kernel is a gradient kernel (``Kernel.gradient``).

    Returns
    -------
    VerifyResult
        ``.ok``, ``.exit_code`` (0, 1 disagree, 2 could not be checked), ``.table()``, ``.report()``.
        An exception raised by ``fn``, SystemExit (a call of ``sys.exit``) and KeyboardInterrupt included,
        is an ``ERROR`` of its case (after a KeyboardInterrupt the remaining cases are not run); a run
        that compared no case (every case skipped, or none selected) is not ``ok`` and has exit code 2.
        A case whose tolerance exceeds :data:`INCONCLUSIVE_FRACTION` of an output's scale is
        ``inconclusive`` unless its error exceeds the tolerance (then ``FAIL``); inconclusive cases alone
        never give exit code 1, and a run in which every compared case is inconclusive decided nothing:
        not ``ok``, exit code 2.

    Raises
    ------
    OracleInputError
        An unknown kernel or case, a bad dtype, a function that is not callable, an adapter that fails,
        a vectors folder that is missing, modified or newer, ``outputs`` not "all" or "last" (or "last" for a
        kernel without trajectory outputs), a ``memory_cap`` that is not a positive number.
    """
    from ._guard import MemoryCapExceeded as _MemoryCap, check_memory_cap

    start = time.perf_counter()
    if dtype not in EPS:
        raise OracleInputError(f"dtype must be 'float64' or 'float32', got {dtype!r}")
    k = kernel(kernel_name)
    if outputs not in OUTPUTS:
        raise OracleInputError(f"`outputs` must be one of {', '.join(map(repr, OUTPUTS))}; got {outputs!r}")
    if outputs == "last" and not k.trajectory:
        raise OracleInputError(f"`outputs`='last': kernel {k.name} has no trajectory output (kernels with one: "
                               f"{', '.join(n for n in kernels() if _REGISTRY[n].trajectory)})")
    memory_cap = check_memory_cap(memory_cap)
    if adapter is not None:
        adapt = load_adapter(adapter) if isinstance(adapter, (str, Path)) else adapter
        try:
            fn = adapt(fn)
        except (Exception, SystemExit, KeyboardInterrupt) as exc:  # noqa: BLE001 - the user's adapter
            raise OracleInputError(f"the adapter raised {_raised(exc)}") from exc
    if not callable(fn):
        raise OracleInputError(f"the function under test is not callable ({type(fn).__name__})")
    if params is not None and vectors is not None:
        raise OracleInputError("`params` and `vectors` exclude each other: stored vectors hold the built-in cases")
    if vectors is not None:
        loaded = load_vectors(vectors, k.name)
    elif params is not None:
        if not isinstance(params, Mapping):
            raise OracleInputError(f"`params` must be a dict of parameter name -> values; got {type(params).__name__}")
        loaded = [(c, None) for c in cases_at(k, params)]
    else:
        loaded = [(c, None) for c in k.cases()]
    if cases is not None:
        if isinstance(cases, str):
            cases = [cases]
        loaded = select_cases(k, cases, loaded)
    eps = EPS[dtype]
    rows, first, user = [], None, 0.0
    for index, (case, stored) in enumerate(loaded):
        if rows and rows[-1].message.startswith(_INTERRUPTED):  # a KeyboardInterrupt ends the run
            rows += [CaseRow(c.name, "skip", message=f"not run: {_INTERRUPTED} in case {rows[-1].case}")
                     for c, _ in loaded[index:]]
            break
        if dtype == "float32" and not all(_fits_float32(v) for v in case.inputs.values()):
            rows.append(CaseRow(case.name, "skip", message="inputs outside float32's range"))
            continue
        if k.judge is not None:
            t0 = time.perf_counter()
            row, called = _verify_statistical(k, case, fn, stored, memory_cap)
            user += called - t0
            rows.append(row)
            if row.verdict in ("FAIL", "ERROR") and first is None:
                first = {"case": case.name, "params": dict(case.params), "inputs": dict(case.inputs),
                         "message": f"case {case.name}: {row.message}", "got": None}
            continue
        given = _in_dtype(case.inputs, dtype)
        if stored is not None:
            ref = stored[dtype]
        else:
            ref = _reference_for(k, case, dtype)
        full, kc = ref, k
        if outputs == "last":  # the last row of each trajectory, under the tolerance of the whole trajectory
            kc = _last_rows(k, full)
            ref = tuple(r[-1] if name in k.trajectory else r for name, r in zip(k.outputs, full))
        t0 = time.perf_counter()
        try:
            raw = _call_user(k, case, fn, _in_dtype(case.inputs, dtype), full, memory_cap)
            user += time.perf_counter() - t0
            got = tuple(_to_numpy(v, name, r.shape)
                        for v, name, r in zip(_as_outputs(k, raw), k.outputs, ref))
        except _BadOutput as exc:
            text = str(exc)
            if outputs == "all" and k.trajectory and _last_only(k, raw, full):
                text += " (the last state only? pass outputs='last', --outputs last)"
            msg = f"case {case.name}: {text}"
            rows.append(CaseRow(case.name, "ERROR", message=text))
        except (Exception, SystemExit, KeyboardInterrupt, _MemoryCap) as exc:  # noqa: BLE001 - the user's code
            # may raise anything; sys.exit() or an interrupt inside the function under test is an error of this case, never a
            # silent end of the run (which the command would report with the exit status the function chose)
            user += time.perf_counter() - t0
            if isinstance(exc, _MemoryCap):  # the function was stopped at the case's memory cap
                msg = f"case {case.name}: {exc}"
                rows.append(CaseRow(case.name, "ERROR", message=str(exc)))
            else:
                msg = f"case {case.name}: the function raised {_raised(exc)}"
                if isinstance(exc, KeyboardInterrupt):
                    msg += "; the remaining cases are not run"
                rows.append(CaseRow(case.name, "ERROR", message=_error_message(exc)))
        else:
            narrow = tuple(sorted({str(t) for t in map(_float_dtype, _as_outputs(k, raw))
                                   if t is not None and t.itemsize < np.dtype(dtype).itemsize}))
            row = _compare(kc, case, got, ref, eps, given, dtype=dtype, narrow=narrow)
            rows.append(row)
            if row.verdict == "FAIL" and first is None:
                i = k.outputs.index(row.output) if row.output else 0
                of = f" of {row.output}" if row.output else ""
                first = {"case": case.name, "params": dict(case.params), "inputs": given,
                         "message": f"case {case.name}: max abs error{of} {row.max_abs:.3e} > tolerance {row.tol:.3e} "
                                    f"(rule: {k.rule}); {row.message}",
                         "output": k.outputs[i], "expected": ref[i], "got": got[i]}
            continue
        if first is None:
            first = {"case": case.name, "params": dict(case.params), "inputs": given, "message": msg, "got": None}
    return VerifyResult(k.name, dtype, rows, first, user, time.perf_counter() - start)


#: the values of ``verify(..., outputs=)``: every output as declared, or the last state of each trajectory output
OUTPUTS = ("all", "last")


def _last_rows(k: Kernel, full: tuple) -> Kernel:
    """``k`` as it judges the last rows of its trajectory outputs: the tolerance evaluated on the whole reference
    trajectory ``full`` (a bound on every row, hence on the last)."""
    return dataclasses.replace(k, tolerance=lambda inputs, _last, eps: k.tolerance(inputs, full, eps))


def _last_only(k: Kernel, raw, full: tuple) -> bool:
    """Whether ``raw`` has the shapes of the last rows of ``k``'s trajectory outputs (a model returning x_N)."""
    try:
        values = _as_outputs(k, raw)
    except _BadOutput:
        return False
    return all(tuple(getattr(v, "shape", np.shape(v))) == (r.shape[1:] if name in k.trajectory else r.shape)
               for v, name, r in zip(values, k.outputs, full))


def _call_user(k: Kernel, case: Case, fn, arguments: Mapping, ref: tuple, memory_cap, out_bytes: int = 0):
    """``fn(**arguments)`` under ``torch.no_grad()`` (unless ``k.gradient``) and the case's memory cap
    (:mod:`theory.oracle._guard`: the cap counts the bytes of the inputs, of ``ref`` and ``out_bytes``); a call
    that passed the cap raises :class:`~theory.oracle.MemoryCapExceeded` with the figures."""
    from ._guard import MemoryCapExceeded as _MemoryCap, case_memory_cap, user_call

    nbytes = sum(v.nbytes for v in case.inputs.values() if isinstance(v, np.ndarray))
    nbytes += sum(np.asarray(r).nbytes for r in ref) + int(out_bytes)
    try:
        with user_call(k.gradient, case_memory_cap(memory_cap, nbytes)) as watch:
            raw = fn(**arguments)
    except (Exception, SystemExit, KeyboardInterrupt, _MemoryCap):  # noqa: BLE001 - the user's code
        if watch.exceeded:
            raise watch.error() from None
        raise
    if watch.exceeded:  # the function caught the interruption, or grew inside one call into C
        raise watch.error()
    return raw


#: how the message of a case that a KeyboardInterrupt stopped begins (the remaining cases are not run)
_INTERRUPTED = "interrupted (KeyboardInterrupt)"


#: how to install the libraries the example implementations and adapters of examples/oracle/ use (none is a
#: dependency of theory: an implementer has them already)
_INSTALL = {"jax": "pip install 'jax[cpu]'", "torch": "pip install 'theory[oracle]' (the CPU build of torch 2.13)",
            "torchsort": "pip install --no-build-isolation torchsort==0.1.10 (after torch)",
            "sklearn": "pip install 'theory[oracle]' (scikit-learn)", "fbm": "pip install 'theory[oracle]' (fbm)",
            "fracbm": "pip install 'theory[oracle]' (fracbm)"}


def _raised(exc: BaseException) -> str:
    """``exc`` as the report names it: its type and message; for SystemExit the status it asked for; for a missing
    library the line that installs it."""
    if isinstance(exc, ModuleNotFoundError) and (exc.name or "").partition(".")[0] in _INSTALL:
        return f"{type(exc).__name__}: {exc}; install it with `{_INSTALL[exc.name.partition('.')[0]]}`"
    if isinstance(exc, SystemExit):
        return f"SystemExit({exc.code!r}) (sys.exit was called)"
    if isinstance(exc, KeyboardInterrupt):
        return f"KeyboardInterrupt{': ' + str(exc) if str(exc) else ''}"
    return f"{type(exc).__name__}: {exc}"


def _error_message(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return f"{_INTERRUPTED}: the remaining cases are not run"
    return f"raised {_raised(exc)}"


def _verify_statistical(k: Kernel, case: Case, fn, stored, memory_cap=None) -> tuple[CaseRow, float]:
    """The row of a sampler's case, and the clock when the user's function returned."""
    from ._guard import MemoryCapExceeded as _MemoryCap

    arguments = k.prepare(case.inputs)
    called = time.perf_counter()
    try:
        try:
            draws = _call_user(k, case, fn, arguments, (), memory_cap, 8 * math.prod(k.shape(case.inputs)))
        finally:
            called = time.perf_counter()
        got = _to_numpy(_as_outputs(k, draws)[0], k.outputs[0], k.shape(case.inputs))
    except _BadOutput as exc:
        return CaseRow(case.name, "ERROR", message=str(exc)), called
    except _MemoryCap as exc:
        return CaseRow(case.name, "ERROR", message=str(exc)), called
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # noqa: BLE001 - the user's code may raise anything
        return CaseRow(case.name, "ERROR", message=_error_message(exc)), called
    ref = stored["float64"] if stored is not None else _reference_for(k, case)
    verdict, statistic, p_value, critical, message = k.judge(case.inputs, ref, got)
    return CaseRow(case.name, verdict, statistic, p_value, critical, "", message), called


# ----------------------------------------------------------------------------------------------
# loading the user's code


def load_function(spec: str) -> Callable:
    """``"package.module:function"`` (the attribute may be dotted) -> the callable."""
    import importlib

    module_name, sep, attr = str(spec).partition(":")
    if not sep or not module_name or not attr:
        raise OracleInputError(f"expected module:function (e.g. scipy.optimize:isotonic_regression), got {spec!r}")
    try:
        obj = importlib.import_module(module_name)
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # noqa: BLE001 - whatever the module raises at import
        raise OracleInputError(f"cannot import module {module_name!r}: {_raised(exc)}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise OracleInputError(f"module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise OracleInputError(f"{spec} is not callable ({type(obj).__name__})")
    return obj


def load_adapter(path) -> Callable:
    """The ``adapt`` function of a Python file."""
    import runpy

    path = Path(path)
    if not path.is_file():
        raise OracleInputError(f"adapter file {path} does not exist")
    try:
        namespace = runpy.run_path(str(path), run_name="theory_oracle_adapter")
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # noqa: BLE001 - the user's file
        raise OracleInputError(f"adapter {path} failed to run: {_raised(exc)}") from None
    adapt = namespace.get("adapt")
    if not callable(adapt):
        raise OracleInputError(f"adapter {path} defines no function adapt(fn)")
    return adapt


# ----------------------------------------------------------------------------------------------
# export and import of test vectors

_EPOCH = (1980, 1, 1, 0, 0, 0)


def _npy_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    a = np.asarray(a)
    np.lib.format.write_array(buf, np.ascontiguousarray(a) if a.ndim else a, allow_pickle=False)
    return buf.getvalue()


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """An .npz that ``np.load`` reads, byte-identical for identical arrays (fixed order and timestamps)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        for key in sorted(arrays):
            info = zipfile.ZipInfo(key + ".npy", date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            z.writestr(info, _npy_bytes(arrays[key]))
    return buf.getvalue()


def _kind(value) -> str:
    if isinstance(value, np.ndarray):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    raise TypeError(f"unsupported input type {type(value).__name__}")


def _from_stored(kind: str, a: np.ndarray):
    if kind == "array":
        return a
    if a.shape != ():
        raise OracleInputError(f"a stored {kind} input has shape {a.shape}; expected a scalar")
    return {"bool": bool, "int": int, "float": float, "str": str}[kind](a.item())


def _check_export_folder(directory: Path, files: list[str], overwrite: bool) -> None:
    """Refuse, before any work, a destination that cannot receive the export: a path that is not a
    folder, a folder (or the nearest existing parent of a new one) that cannot be written, or, without
    ``overwrite``, a folder already holding one of the files the export writes."""
    if directory.exists() and not directory.is_dir():
        raise OracleInputError(f"{directory} exists and is not a folder; export writes a folder of files "
                               f"(manifest.json and one .npz per kernel): choose another path")
    parent = directory
    while not parent.exists():  # the folders export would create
        parent = parent.parent
    if not parent.is_dir():
        raise OracleInputError(f"cannot create the folder {directory}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OracleInputError(f"cannot write into {parent}: permission denied")
    if directory.is_dir() and not overwrite:
        present = [f for f in files if (directory / f).exists()]
        if present:
            raise OracleInputError(f"{directory} already holds {', '.join(present)} (test vectors written before?); "
                                   f"choose an empty folder, or replace them with --force (overwrite=True)")


def export(directory, kernel_names=None, *, overwrite=False) -> Path:
    """Write one ``<kernel>.npz`` per kernel and ``manifest.json`` into ``directory``; returns the manifest path.

    Each npz holds ``<case>/in/<name>``, ``<case>/ref/<output>`` (float64 reference) and
    ``<case>/ref32/<output>`` (the reference on the float32-rounded inputs, for float32 mode).
    Two exports of the same version are byte-identical.

    Parameters
    ----------
    directory : path
        The folder to write (created with its parents when missing).
    kernel_names : iterable of str, optional
        Only these kernels (default: every kernel of ``theory oracle list``).
    overwrite : bool
        Replace a ``manifest.json`` or ``<kernel>.npz`` already in ``directory`` (default: refuse).

    Returns
    -------
    pathlib.Path
        The path of ``manifest.json``.

    Raises
    ------
    OracleInputError
        An unknown kernel; ``directory`` not a folder, not writable, or (without ``overwrite``) already
        holding one of the files; checked before any reference is computed.
    OSError
        A file could not be written (a full disk, ...): the files are written to temporary files first
        and renamed into place together, the manifest last, so that an earlier export in ``directory``
        is left as it was.
    """
    import theory

    from theory._files import write_atomic_many

    directory = Path(directory)
    names = list(kernel_names) if kernel_names else kernels()
    ks = [kernel(n) for n in names]
    _check_export_folder(directory, [f"{k.name}.npz" for k in ks] + ["manifest.json"], bool(overwrite))
    files: list[tuple[Path, bytes]] = []
    manifest = {"format": FORMAT_VERSION, "package": "theory", "version": theory.__version__, "kernels": {}}
    for k in ks:
        arrays, entries = {}, []
        for case in k.cases():
            kinds = {}
            for key, value in case.inputs.items():
                kinds[key] = _kind(value)
                arrays[f"{case.name}/in/{key}"] = np.asarray(value)
            for mode, tag in (("float64", "ref"), ("float32", "ref32")):
                if mode == "float32" and not all(_fits_float32(v) for v in case.inputs.values()):
                    continue
                for out_name, value in zip(k.outputs, reference_outputs(k, case.inputs, mode)):
                    arrays[f"{case.name}/{tag}/{out_name}"] = value
            entries.append({"name": case.name, "params": _jsonable(case.params), "inputs": kinds})
        fname = f"{k.name}.npz"
        data = _npz_bytes(arrays)
        files.append((directory / fname, data))
        digest = hashlib.sha256(data).hexdigest()
        manifest["kernels"][k.name] = {
            "signature": k.signature, "outputs": list(k.outputs),
            "tolerance": {"rule": k.rule, "why": k.why, "float32": "the same rule with eps = 2^-23 (float32's "
                          "machine epsilon), against the reference computed on the float32-rounded inputs"},
            "file": fname, "sha256": digest, "cases": entries}
    path = directory / "manifest.json"
    files.append((path, (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode("utf-8")))
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic_many(files)  # every file staged and fsynced, then renamed, the manifest last
    return path


def _jsonable(value):
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def load_vectors(directory, kernel_name: str) -> list[tuple[Case, dict]]:
    """The cases and stored references of one kernel from an exported folder (hash and format checked)."""
    directory = Path(directory)
    mpath = directory / "manifest.json"
    if not mpath.is_file():
        raise OracleInputError(f"no manifest.json in {directory} (write one with `theory oracle export {directory}`)")
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
        fmt = manifest["format"]
    except (ValueError, KeyError, TypeError) as exc:
        raise OracleInputError(f"{mpath} is not a vectors manifest ({type(exc).__name__}: {exc})") from None
    if not isinstance(fmt, int) or fmt > FORMAT_VERSION:
        raise OracleInputError(f"{mpath} has format {fmt!r}, newer than this reader's {FORMAT_VERSION} "
                               f"(written by theory {manifest.get('version', '?')}); upgrade theory")
    entry = manifest.get("kernels", {}).get(kernel_name)
    if entry is None:
        raise OracleInputError(f"{mpath} holds no kernel {kernel_name!r} (it has: "
                               f"{', '.join(manifest.get('kernels', {})) or 'none'})")
    fpath = directory / entry["file"]
    if not fpath.is_file():
        raise OracleInputError(f"{fpath} is missing")
    digest = hashlib.sha256(fpath.read_bytes()).hexdigest()
    if digest != entry["sha256"]:
        raise OracleInputError(f"{fpath} was modified: its SHA-256 is {digest}, the manifest says {entry['sha256']}")
    out = []
    with np.load(fpath, allow_pickle=False) as data:
        keys = set(data.files)
        for c in entry["cases"]:
            name = c["name"]
            try:
                inputs = {key: _from_stored(kind, data[f"{name}/in/{key}"]) for key, kind in c["inputs"].items()}
                refs = {"float64": tuple(data[f"{name}/ref/{o}"] for o in entry["outputs"])}
                if all(f"{name}/ref32/{o}" in keys for o in entry["outputs"]):
                    refs["float32"] = tuple(data[f"{name}/ref32/{o}"] for o in entry["outputs"])
            except KeyError as exc:
                raise OracleInputError(f"{fpath}: case {name} lacks the array {exc}") from None
            out.append((Case(name, c.get("params", {}), inputs), refs))
    return out
