"""A fingerprint of the source code an experiment runs, so that a cached result is never served after that code changed.

The package's version string stays the same between releases, while the code behind a cached measurement may not:
a kernel fixed, a result class given a field, a seed drawn in another order. :func:`fingerprint` therefore hashes the
source of the experiment's own modules (a user's module outside the package included) and of every module of the
package that they import, directly or through others, found by reading their ``import`` statements (those inside
functions included) without importing anything. Each package's ``__init__`` on the way counts too, since importing
a module runs it.

What it does not see: a change in NumPy, SciPy or Numba (their versions are recorded in a report's machine line,
not in the fingerprint) and data files read at run time.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["fingerprint", "module_sources", "modules_of"]

_PACKAGE = "theory"
_ROOT = Path(__file__).resolve().parent


def _path(module: str) -> Path | None:
    """The source file of ``module``: of this package (a module or a package's ``__init__``) found on disk, of
    another only if it is imported and has a ``.py`` file; else None."""
    parts = module.split(".")
    if parts[0] != _PACKAGE:
        origin = getattr(sys.modules.get(module), "__file__", None)
        return Path(origin) if isinstance(origin, str) and origin.endswith(".py") and Path(origin).is_file() else None
    base = _ROOT.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _imports(module: str, path: Path, tree: ast.AST) -> set[str]:
    """The names of this package's modules that ``module`` (its source parsed as ``tree``) may import."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    package = package or module
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                if node.level - 1 >= len(parts):
                    continue
                base = ".".join(parts[:len(parts) - (node.level - 1)])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return {name for name in found if name.split(".")[0] == _PACKAGE}


def _source(module: str) -> tuple[str, frozenset[str]] | None:
    """(SHA-256 of the source bytes, the package modules it imports) of ``module``, or None if it has no file.

    Read again whenever the file's modification time or size changes, so that a module edited in a running
    session (and reloaded) gets its new fingerprint."""
    path = _path(module)
    if path is None:
        return None
    stat = path.stat()
    return _parsed(module, path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4096)
def _parsed(module: str, path: Path, mtime_ns: int, size: int) -> tuple[str, frozenset[str]]:
    data = path.read_bytes()
    try:
        tree = ast.parse(data, filename=str(path))
    except SyntaxError:  # a module that does not parse counts by its bytes alone
        return hashlib.sha256(data).hexdigest(), frozenset()
    return hashlib.sha256(data).hexdigest(), frozenset(_imports(module, path, tree))


def module_sources(roots: Iterable[str]) -> dict[str, str]:
    """Module name -> SHA-256 of its source, for ``roots`` and every module of the package they import.

    Parameters
    ----------
    roots : iterable of str
        Dotted module names. One outside the package counts by its own file (if imported and written in
        Python), with the package modules it imports; what it imports from elsewhere is not followed.

    Returns
    -------
    dict of str to str
        Sorted by module name.
    """
    seen: dict[str, str] = {}
    stack = [name for root in roots for name in (*_parents(root), root)]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        entry = _source(name)
        if entry is None:
            continue
        seen[name] = entry[0]
        for imported in entry[1]:
            if imported not in seen:
                stack.extend(p for p in (*_parents(imported), imported) if p not in seen)
    return dict(sorted(seen.items()))


def modules_of(*objects: Callable | type | None) -> tuple[str, ...]:
    """The modules defining ``objects`` (functions, classes, ``functools.partial`` objects; None skipped)."""
    names = []
    for obj in objects:
        while isinstance(obj, functools.partial):
            obj = obj.func
        module = getattr(obj, "__module__", None)
        if isinstance(module, str):
            names.append(module)
    return tuple(dict.fromkeys(names))


def fingerprint(sources: dict[str, str]) -> str:
    """One SHA-256 (24 hex digits) of a :func:`module_sources` map."""
    text = "".join(f"{name}\0{digest}\n" for name, digest in sorted(sources.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
