r"""Declared config fields: each parameter of an experiment is stated once, with its constraint.

A config is a frozen dataclass deriving from :class:`Config` whose fields are made by :func:`field`, each with
a constraint of the small vocabulary below and a one-line description::

    @dataclass(frozen=True)
    class Fig7Config(Config):
        depth: int = field(Int(low=1), 1000, "Number of residual layers L.")
        hursts: tuple = field(Reals(0, 1, closed="neither", min_len=2), (0.2, 0.8), "Hurst indices of the weights.")
        seed: int = field(Seed(), 0, "Seed of numpy's default_rng.")

From that one declaration:

* construction validates every field (:meth:`Config.__post_init__`): a value of the wrong kind is a
  ``TypeError``, a value out of range a ``ValueError``, each message naming the field and the class
  (```depth` of Fig7Config must be an integer >= 1; got 0.``); a config's rules between fields go in its
  :meth:`Config.check`;
* NumPy scalars become Python scalars, integers given to a real field become floats and lists or arrays
  given to a tuple field become tuples, so that two equal configs compare, hash and cache alike;
* the class docstring gets its numpydoc ``Attributes`` section (type, description, constraint, default);
* ``theory run --set NAME=TEXT`` and ``theory sweep --grid NAME=...`` parse text with
  :meth:`Constraint.parse` (``1e3`` for an integer, ``0.1|0.5`` or ``0.1:0.9:5`` for a tuple, ``none``
  where ``None`` is allowed);
* the generic test of every registered experiment tries :meth:`Constraint.invalid` and
  :meth:`Constraint.boundary` values of every field;
* the count limit of :meth:`theory.experiments.Experiment.config_for` applies to every integer field but
  the :class:`Seed` fields.

The vocabulary: :class:`Int`, :class:`Seed`, :class:`Seeds`, :class:`Real`, :class:`Bool`, :class:`Choice`, :class:`Ints`,
:class:`Reals`, :class:`Choices`, :class:`OrNone` and, for what none of them says, :class:`Custom`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "Config", "field", "constraint_of", "Constraint", "Int", "Seed", "Seeds", "Real", "Bool", "Choice", "Tuple", "Ints",
    "Reals",
    "Choices", "OrNone", "Custom",
]

_MISSING = dataclasses.MISSING

#: the most values one range ``start:stop:count`` gives, on the command line and in a sweep's grid
MAX_RANGE = 10**6


def _is_bool(v) -> bool:
    return isinstance(v, (bool, np.bool_))


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not _is_bool(v)


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not _is_bool(v)


def _g(x: float) -> str:
    """A bound as the messages print it: integers without a decimal point, infinities as inf."""
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


class Constraint:
    """What one config field accepts.

    Subclasses define ``_check`` (the value, or its normal form, or an exception naming the field),
    ``describe`` (the rule in words, completing "must be ..."), ``parse`` (a value from text),
    ``invalid`` and ``boundary`` (values for the generic test), and ``type_name`` (the type in
    the docstring).
    """

    type_name = "object"

    def validate(self, value: Any, name: str, owner: str) -> Any:
        """``value`` in its normal form, or a TypeError (wrong kind) / ValueError (wrong value) whose message
        names field ``name`` of class ``owner``."""
        return self._check(value, name, owner)

    def _check(self, value, name, owner):  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover
        raise NotImplementedError

    def parse(self, text: str, name: str) -> Any:
        """The value typed as ``text`` on a command line (``theory run --set``), not yet validated."""
        raise ValueError(f"`{name}` cannot be set from the command line ({self.describe()})")

    def invalid(self) -> list[tuple[Any, type]]:
        """Values this constraint refuses, each with the exception type it raises."""
        return [(object(), TypeError)]

    def boundary(self) -> list[Any]:
        """Valid values at the edges of the domain."""
        return []

    @property
    def scalar(self) -> bool:
        """Whether a sweep may vary the field as one axis value (numbers, booleans, choices)."""
        return False

    @property
    def counts(self) -> bool:
        """Whether the field's integers are counts (of layers, samples or steps), bounded by the count limit of
        ``Experiment.config_for``; seeds are not."""
        return False

    def _fail(self, exc: type, value, name, owner):
        raise exc(f"`{name}` of {owner} must be {self.describe()}; got {value!r}.")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"


def _parse_number(text: str, name: str, integer: bool):
    t = text.strip()
    try:
        value = float(t)
    except ValueError:
        what = "an integer" if integer else "a number"
        raise ValueError(f"`{name}` must be {what}; got {t!r}") from None
    if integer:
        if not math.isfinite(value) or not value.is_integer():
            raise ValueError(f"`{name}` must be an integer; got {t!r}")
        # exact for integer literals of any size, 1e3-style text through the float
        try:
            return int(t)
        except ValueError:
            return int(value)
    return value


class Int(Constraint):
    """An integer (Python or NumPy, not a bool) in ``[low, high]``; ``high=None`` for no upper limit."""

    type_name = "int"

    def __init__(self, low: int | None = 0, high: int | None = None):
        self.low, self.high = low, high

    def describe(self) -> str:
        if self.low is not None and self.high is not None:
            return f"an integer in [{self.low}, {self.high}]"
        if self.low is not None:
            return f"an integer >= {self.low}"
        if self.high is not None:
            return f"an integer <= {self.high}"
        return "an integer"

    def _check(self, value, name, owner):
        if not _is_int(value):
            self._fail(TypeError, value, name, owner)
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            self._fail(ValueError, value, name, owner)
        return int(value)

    def parse(self, text, name):
        return _parse_number(text, name, True)

    def invalid(self):
        out = [(1.5, TypeError), (True, TypeError), ("1", TypeError)]
        if self.low is not None:
            out.append((self.low - 1, ValueError))
        if self.high is not None:
            out.append((self.high + 1, ValueError))
        return out

    def boundary(self):
        return [v for v in (self.low, self.high) if v is not None] or [0]

    @property
    def scalar(self):
        return True

    @property
    def counts(self):
        return True


class Seed(Int):
    """A seed of ``numpy.random.default_rng``: an integer >= 0 that counts nothing (no count limit)."""

    def __init__(self):
        super().__init__(0, None)

    @property
    def counts(self):
        return False

    def __repr__(self):
        return "Seed()"


_CLOSED = {"both": (True, True), "neither": (False, False), "left": (True, False), "right": (False, True)}


class Real(Constraint):
    """A finite real number (not a bool) between ``low`` and ``high``.

    ``closed`` says which ends belong to the interval: ``"both"`` (default), ``"neither"``, ``"left"`` or
    ``"right"``; an infinite end is always open. Integers are accepted and stored as floats.
    """

    type_name = "float"

    def __init__(self, low: float = -math.inf, high: float = math.inf, closed: str = "both"):
        if closed not in _CLOSED:
            raise ValueError(f"`closed` of Real must be one of {tuple(_CLOSED)}; got {closed!r}")
        self.low, self.high, self.closed = float(low), float(high), closed

    def _ends(self):
        left, right = _CLOSED[self.closed]
        return left and math.isfinite(self.low), right and math.isfinite(self.high)

    def describe(self) -> str:
        left, right = self._ends()
        if self.low == -math.inf and self.high == math.inf:
            return "a finite number"
        if self.high == math.inf:
            return f"a finite number {'>=' if left else '>'} {_g(self.low)}"
        if self.low == -math.inf:
            return f"a finite number {'<=' if right else '<'} {_g(self.high)}"
        return f"a finite number in {'[' if left else '('}{_g(self.low)}, {_g(self.high)}{']' if right else ')'}"

    def contains(self, x: float) -> bool:
        left, right = self._ends()
        return (math.isfinite(x) and (x >= self.low if left else x > self.low)
                and (x <= self.high if right else x < self.high))

    def _check(self, value, name, owner):
        if not _is_real(value):
            self._fail(TypeError, value, name, owner)
        x = float(value)
        if not self.contains(x):
            self._fail(ValueError, value, name, owner)
        return x

    def parse(self, text, name):
        return _parse_number(text, name, False)

    def invalid(self):
        out = [("1", TypeError), (True, TypeError), (math.nan, ValueError), (math.inf, ValueError)]
        left, right = self._ends()
        if math.isfinite(self.low):
            out.append((self.low if not left else self.low - max(1.0, abs(self.low)), ValueError))
        if math.isfinite(self.high):
            out.append((self.high if not right else self.high + max(1.0, abs(self.high)), ValueError))
        return out

    def boundary(self):
        left, right = self._ends()
        out = []
        for end, closed, toward in ((self.low, left, math.inf), (self.high, right, -math.inf)):
            if math.isfinite(end):
                out.append(end if closed else float(np.nextafter(end, toward)))
        return out or [0.0]

    @property
    def scalar(self):
        return True


class Bool(Constraint):
    """``True`` or ``False`` (a NumPy bool too)."""

    type_name = "bool"

    def describe(self):
        return "True or False"

    def _check(self, value, name, owner):
        if not _is_bool(value):
            self._fail(TypeError, value, name, owner)
        return bool(value)

    def parse(self, text, name):
        low = text.strip().lower()
        if low not in ("true", "false", "1", "0"):
            raise ValueError(f"`{name}` must be true or false; got {text.strip()!r}")
        return low in ("true", "1")

    def invalid(self):
        return [(1, TypeError), ("true", TypeError)]

    def boundary(self):
        return [False, True]

    @property
    def scalar(self):
        return True


class Choice(Constraint):
    """One of the given values (strings, numbers or ``None``), compared with ``==``."""

    def __init__(self, *options):
        if not options:
            raise ValueError("Choice needs at least one option")
        self.options = tuple(options)

    @property
    def type_name(self):
        kinds = {type(o).__name__ for o in self.options if o is not None}
        return "str" if kinds == {"str"} else " or ".join(sorted(kinds)) or "None"

    def describe(self):
        return f"one of {self.options!r}"

    def _check(self, value, name, owner):
        for option in self.options:
            if _is_bool(value) != _is_bool(option):
                continue
            if type(value) is type(option) or (_is_real(value) and _is_real(option)):
                try:
                    if value == option:
                        return option
                except (TypeError, ValueError):  # an array compared with a string
                    pass
        self._fail(ValueError, value, name, owner)

    def parse(self, text, name):
        t = text.strip()
        for option in self.options:
            if str(option) == t or (option is None and t.lower() == "none"):
                return option
        for option in self.options:
            if _is_real(option):
                try:
                    if float(t) == option:
                        return option
                except ValueError:
                    pass
        return t

    def invalid(self):
        bad = "not-" + "-".join(str(o) for o in self.options)
        return [(bad, ValueError)]

    def boundary(self):
        return list(self.options)

    @property
    def scalar(self):
        return True


class Tuple(Constraint):
    """A tuple of at least ``min_len`` (and at most ``max_len``) items, each satisfying the constraint ``item``
    (strictly increasing, or distinct, on request); :class:`Ints`, :class:`Reals` and :class:`Choices` are its
    common cases."""

    def __init__(self, item: Constraint, min_len: int = 1, max_len: int | None = None, increasing: bool = False,
                 distinct: bool = False):
        self.item, self.min_len, self.max_len = item, int(min_len), max_len
        self.increasing, self.distinct = bool(increasing), bool(distinct)

    @property
    def type_name(self):
        return f"tuple of {self.item.type_name}"

    def describe(self):
        size = f"at least {self.min_len}" if self.max_len is None else (
            f"{self.min_len}" if self.max_len == self.min_len else f"{self.min_len} to {self.max_len}")
        order = " strictly increasing" if self.increasing else " distinct" if self.distinct else ""
        return f"a tuple of {size}{order} {self._plural()}"

    def _plural(self):
        text = self.item.describe()
        for single, plural in (("an integer", "integers"), ("a finite number", "finite numbers"),
                               ("one of", "each one of")):
            if text.startswith(single):
                return plural + text[len(single):]
        return f"values, each {text}"

    def _check(self, value, name, owner):
        if isinstance(value, np.ndarray) and value.ndim == 1:
            value = tuple(value.tolist())
        elif isinstance(value, list):
            value = tuple(value)
        if not isinstance(value, tuple):
            self._fail(TypeError, value, name, owner)
        if len(value) < self.min_len or (self.max_len is not None and len(value) > self.max_len):
            self._fail(ValueError, value, name, owner)
        out = []
        for v in value:
            try:
                out.append(self.item.validate(v, name, owner))
            except TypeError:
                self._fail(TypeError, value, name, owner)
            except ValueError:
                self._fail(ValueError, value, name, owner)
        out = tuple(out)
        if self.increasing and any(b <= a for a, b in zip(out, out[1:])):
            self._fail(ValueError, value, name, owner)
        if self.distinct and len(set(out)) != len(out):
            self._fail(ValueError, value, name, owner)
        return out

    def parse(self, text, name):
        t = text.strip()
        if t.count(":") == 2 and isinstance(self.item, (Int, Real)):
            start, stop, count = t.split(":")
            n = _parse_number(count, name, True)
            if n < 1:
                raise ValueError(f"`{name}`: the count of the range {t!r} must be >= 1")
            if n > MAX_RANGE:
                raise ValueError(f"`{name}`: the count of the range {t!r} must be at most {MAX_RANGE} "
                                 "(theory.experiments.config.MAX_RANGE)")
            a, b = _parse_number(start, name, False), _parse_number(stop, name, False)
            values = np.linspace(a, b, n) if n > 1 else np.array([a])
            if isinstance(self.item, Int):
                ints = [int(v) for v in np.rint(values)]
                if len(set(ints)) < len(ints):
                    raise ValueError(f"`{name}`: the range {t!r} repeats integers once rounded ({ints})")
                return tuple(ints)
            return tuple(float(v) for v in values)
        return tuple(self.item.parse(v, name) for v in t.split("|") if v.strip())

    def invalid(self):
        out = [(3, TypeError), ("1|2", TypeError)]
        if self.min_len > 0:
            out.append(((), ValueError))
        item_bad = [v for v, e in self.item.invalid() if e is ValueError]
        if item_bad and self.boundary():
            good = self.boundary()[0]
            out.append(((item_bad[0],) + good[1:], ValueError))
        return out

    def boundary(self):
        edges = self.item.boundary()
        n = max(self.min_len, 1)
        if self.increasing or self.distinct:
            if isinstance(self.item, Int):
                start = edges[0]
                values = tuple(start + i for i in range(n))
            elif isinstance(self.item, Real) and len(edges) >= 2 and n <= 2:
                values = tuple(edges[:n]) if n == 2 else (edges[0],)
            elif isinstance(self.item, Real) and len(edges) >= 2:
                values = tuple(float(v) for v in np.linspace(edges[0], edges[1], n + 2)[1:-1])
            elif isinstance(self.item, Real):
                values = tuple(edges[0] + (i if edges[0] >= 0 or edges[0] == 0.0 else -i) * 1.0 for i in range(n))
                values = tuple(sorted(values))
            else:
                opts = self.item.boundary()
                if len(opts) < n:
                    return []
                values = tuple(opts[:n])
            try:
                return [self.validate(values, "x", "boundary")]
            except (TypeError, ValueError):
                return []
        return [tuple([edges[0]] * n)] + ([tuple([edges[-1]] * n)] if len(edges) > 1 else [])


class Ints(Tuple):
    """A tuple of integers in ``[low, high]``: ``Ints(low=1, min_len=5, increasing=True)``."""

    def __init__(self, low: int | None = 0, high: int | None = None, *, min_len: int = 1, max_len: int | None = None,
                 increasing: bool = False, distinct: bool = False):
        super().__init__(Int(low, high), min_len, max_len, increasing, distinct)

    @property
    def counts(self):
        return True


class Seeds(Ints):
    """A tuple of seeds (integers >= 0, distinct on request), one run per seed: not counts."""

    def __init__(self, *, min_len: int = 1, max_len: int | None = None, distinct: bool = False):
        super().__init__(0, None, min_len=min_len, max_len=max_len, distinct=distinct)

    @property
    def counts(self):
        return False

    def __repr__(self):
        return f"Seeds(min_len={self.min_len}, max_len={self.max_len}, distinct={self.distinct})"


class Reals(Tuple):
    """A tuple of finite reals in the interval of :class:`Real` (same ``low``, ``high``, ``closed``)."""

    def __init__(self, low: float = -math.inf, high: float = math.inf, closed: str = "both", *, min_len: int = 1,
                 max_len: int | None = None, increasing: bool = False, distinct: bool = False):
        super().__init__(Real(low, high, closed), min_len, max_len, increasing, distinct)


class Choices(Tuple):
    """A tuple of options of a :class:`Choice`: ``Choices("relu", "tanh", min_len=1, distinct=True)``."""

    def __init__(self, *options, min_len: int = 1, max_len: int | None = None, distinct: bool = False):
        super().__init__(Choice(*options), min_len, max_len, False, distinct)


class OrNone(Constraint):
    """``None`` (with the meaning given) or a value of ``inner``: ``OrNone(Int(low=1), "the limit")``."""

    def __init__(self, inner: Constraint, meaning: str = ""):
        self.inner, self.meaning = inner, meaning

    @property
    def type_name(self):
        return f"{self.inner.type_name} or None"

    def describe(self):
        return f"None or {self.inner.describe()}"

    def validate(self, value, name, owner):
        if value is None:
            return None
        try:
            return self.inner.validate(value, name, owner)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"`{name}` of {owner} must be {self.describe()}; got {value!r}.") from None

    def parse(self, text, name):
        return None if text.strip().lower() == "none" else self.inner.parse(text, name)

    def invalid(self):
        return self.inner.invalid()

    def boundary(self):
        return [None] + self.inner.boundary()

    @property
    def scalar(self):
        return self.inner.scalar

    @property
    def counts(self):
        return self.inner.counts


class Custom(Constraint):
    """A rule none of the others says: ``check(value)`` returns the value (or its normal form) or raises
    TypeError/ValueError with the reason; ``description`` completes "must be ...". ``parse`` (optional)
    reads text; ``invalid`` and ``boundary`` (optional) feed the generic test; ``scalar`` lets a sweep vary the
    field as one axis, ``counts`` puts its integers under the count limit."""

    def __init__(self, check: Callable[[Any], Any], description: str, *, type_name: str = "object",
                 parse: Callable[[str], Any] | None = None, invalid: Sequence = (), boundary: Sequence = (),
                 scalar: bool = False, counts: bool = False):
        self._rule, self.description, self.type_name = check, description, type_name
        self._parser, self._invalid, self._boundary = parse, list(invalid), list(boundary)
        self._scalar, self._counts = bool(scalar), bool(counts)

    @property
    def scalar(self):
        return self._scalar

    @property
    def counts(self):
        return self._counts

    def describe(self):
        return self.description

    def _check(self, value, name, owner):
        try:
            out = self._rule(value)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"`{name}` of {owner} must be {self.description}; got {value!r}.") from None
        return value if out is None else out

    def parse(self, text, name):
        if self._parser is None:
            return super().parse(text, name)
        return self._parser(text)

    def invalid(self):
        return list(self._invalid)

    def boundary(self):
        return list(self._boundary)


# ------------------------------------------------------------------------------------------------ fields

_KEY = "theory.constraint"
_DOC = "theory.doc"


def field(constraint: Constraint, default: Any = _MISSING, doc: str = "", **kwargs) -> Any:
    """A dataclass field with its constraint and its one-line description.

    Parameters
    ----------
    constraint : Constraint
        What the field accepts.
    default : optional
        Its default value (validated with every config made).
    doc : str
        What the field is, in a sentence (the docstring's Attributes entry; the constraint and the default
        are added).
    **kwargs
        Passed to ``dataclasses.field`` (``default_factory``, ``repr``, ``compare``).
    """
    if not isinstance(constraint, Constraint):
        raise TypeError(f"`constraint` of theory.experiments.config.field must be a Constraint; got {constraint!r}")
    metadata = {**kwargs.pop("metadata", {}), _KEY: constraint, _DOC: doc}
    return dataclasses.field(default=default, metadata=metadata, **kwargs)


def constraint_of(config_type: type, name: str) -> Constraint | None:
    """The declared constraint of field ``name`` of a config class, or None where none is declared."""
    for f in dataclasses.fields(config_type):
        if f.name == name:
            return f.metadata.get(_KEY)
    raise ValueError(f"{config_type.__name__} has no field {name!r}")


def _attributes(fields) -> str:
    """The numpydoc Attributes section of a config class, from (name, field) pairs."""
    lines = ["Attributes", "----------"]
    for name, f in fields:
        c = f.metadata.get(_KEY)
        if c is None:
            lines.append(name)
            continue
        lines.append(f"{name} : {c.type_name}")
        doc = " ".join(f.metadata.get(_DOC, "").split())
        rule = c.describe()
        text = (doc + " " if doc else "") + f"Must be {rule}"
        if f.default is not _MISSING:
            text += f"; default {f.default!r}"
        lines.append(f"    {text}.")
    return "\n".join(lines)


class Config:
    """Base of the experiments' configs: validates the declared fields, then runs ``check``.

    A subclass is a ``@dataclass(frozen=True)`` whose fields are made by :func:`field`. Its docstring (the
    first paragraphs: what the config describes) gets the Attributes section generated from the fields.
    """

    def __post_init__(self) -> None:
        owner = type(self).__name__
        for f in dataclasses.fields(self):
            c = f.metadata.get(_KEY)
            if c is None:
                continue
            value = getattr(self, f.name)
            normal = c.validate(value, f.name, owner)
            if normal is not value:
                object.__setattr__(self, f.name, normal)
        try:
            self.check()
        except ValueError as exc:
            exc.between_fields = True  # the generic test tells these from a field's own refusal
            raise

    def check(self) -> None:
        """Rules between fields (``n_min <= n_max``); raise with ``self.invalid(...)``. The default checks nothing."""

    def invalid(self, name: str, must: str) -> ValueError:
        """The ValueError of a rule between fields: ```name` of Class must <must>; got <value>.``"""
        return ValueError(f"`{name}` of {type(self).__name__} must {must}; got {getattr(self, name)!r}.")

    @classmethod
    def declared(cls) -> dict[str, Constraint]:
        """Field name -> constraint, for the fields that declare one."""
        return {f.name: f.metadata[_KEY] for f in dataclasses.fields(cls) if _KEY in f.metadata}

    @classmethod
    def parse(cls, name: str, text: str) -> Any:
        """The value of field ``name`` typed as ``text`` (``theory run --set``), validated."""
        c = constraint_of(cls, name)
        if c is None:
            raise ValueError(f"`{name}` of {cls.__name__} declares no constraint and cannot be parsed")
        return c.validate(c.parse(text, name), name, cls.__name__)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # The dataclass decorator runs after this hook, but the class body already holds the Field objects
        # made by `field` (and the bases are dataclasses): the Attributes section is written from those.
        entries = {}
        for base in reversed(cls.__mro__[1:]):
            if dataclasses.is_dataclass(base):
                entries.update({f.name: f for f in dataclasses.fields(base)})
        for name in cls.__dict__.get("__annotations__", {}):
            value = cls.__dict__.get(name, _MISSING)
            entries[name] = value if isinstance(value, dataclasses.Field) else _Plain(name, value)
        if any(_KEY in getattr(f, "metadata", {}) for f in entries.values()):
            import inspect

            head = inspect.cleandoc(cls.__doc__ or "").rstrip()
            cls.__doc__ = (head + "\n\n" if head else "") + _attributes(entries.items()) + "\n"


class _Plain:
    """A field without a declaration, as the docstring generator sees it."""

    def __init__(self, name, default):
        self.name, self.default, self.metadata = name, default, {}


# documented, and pickled, under the package that exports them
for _name in __all__:
    globals()[_name].__module__ = "theory.experiments"
del _name
