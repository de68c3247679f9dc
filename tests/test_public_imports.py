"""Who may import what: checks, figures, benchmarks and examples use only public names of ``theory``; inside the
package, no subpackage imports another one's private module (shared pieces live in ``theory/_<name>.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "theory"


def _private(parts) -> bool:
    return any(p.startswith("_") and not p.startswith("__") for p in parts)


def _theory_imports(path: Path):
    """(line, module, names) of every import of a ``theory`` module in ``path``; relative imports resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = None
    if PACKAGE in path.parents:
        package = path.relative_to(ROOT).with_suffix("").parts
        package = package[:-1] if package[-1] != "__init__" else package[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "theory":
                    yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if package is None:
                    continue
                base = list(package[: len(package) - node.level + 1])
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] == "theory":
                yield node.lineno, module, tuple(a.name for a in node.names)


#: private names a benchmark may time, each with its reason (a benchmark's floor or reference is the code under the
#: public door, which no public name reaches by design)
BENCHMARK_PRIVATE = {
    "benchmarks/bench_fbm.py": ("the eigenvalue cache is cleared to time a cold first call of fgn",
                                {"theory.fbm._api", "_fbm_api._weights"}),
    "benchmarks/bench_linear.py": ("the kernel with preallocated buffers, the floor beneath the validating door",
                                   {"theory.linear._kernels"}),
    "benchmarks/bench_topk.py": ("the full-solve reference the fast path is compared with for equality",
                                 {"theory.topk._api._forward"}),
    "benchmarks/oracle_power.py": ("the power page's driver lives beside the planted samplers, private by design: "
                                   "they are wrong on purpose", {"theory.oracle._defects"}),
}


def _outside_files():
    for folder in ("checks", "figures", "benchmarks", "examples"):
        yield from sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", list(_outside_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_checks_figures_benchmarks_use_public_names_only(path):
    bad = []
    for line, module, names in _theory_imports(path):
        parts = module.split(".")[1:]
        if _private(parts) or any(n.startswith("_") for n in names):
            bad.append(f"line {line}: {module}" + "".join(f" {module}.{n}" for n in names))
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                mod = a.name if isinstance(node, ast.Import) else f"{node.module}.{a.name}"
                if (mod or "").startswith("theory"):
                    aliases.add(a.asname or a.name.split(".")[0])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            bad.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    allowed = BENCHMARK_PRIVATE.get(path.relative_to(ROOT).as_posix(), ("", set()))[1]
    bad = [b for b in bad if not any(a in b for a in allowed)]
    assert not bad, bad


def _package_files():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", _package_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_subpackage_reads_another_ones_private_modules(path):
    own = path.relative_to(ROOT).parts[1] if len(path.relative_to(ROOT).parts) > 2 else None
    bad = []
    for line, module, names in _theory_imports(path):
        parts = module.split(".")
        if len(parts) >= 3 and parts[1] != own and _private(parts[2:]):
            bad.append(f"line {line}: {module}")
        if len(parts) >= 2 and parts[1] != own and not parts[1].startswith("_"):
            bad += [f"line {line}: {module}.{n}" for n in names if n.startswith("_") and not n.startswith("__")]
    assert not bad, bad


def _unit(module: str) -> str:
    """The unit a circle is counted between: a subpackage or top-level module of theory (an experiments package
    for theory.experiments)."""
    parts = module.split(".")
    return ".".join(parts[:3] if parts[1:2] == ["experiments"] and len(parts) > 2 else parts[:2])


def test_no_import_circle_between_the_packages_modules():
    """No chain of imports, at import time or inside functions, leads from a subpackage back to itself through
    another one (cli <-> sweep, oracle._core <-> oracle._kernels were two; explicit lists replace them)."""
    graph: dict[str, set[str]] = {}
    known = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__") for p in _package_files()}
    for path in _package_files():
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for _, module, names in _theory_imports(path):
            for target in [module] + [f"{module}.{n}" for n in names]:
                if target in known and _unit(target) != _unit(name):
                    graph.setdefault(_unit(name), set()).add(_unit(target))
    circles = []

    def walk(node, path):
        for nxt in graph.get(node, ()):
            if nxt == path[0]:
                circles.append(" -> ".join(path + [nxt]))
            elif nxt not in path and len(path) < 8:
                walk(nxt, path + [nxt])

    for start in graph:
        walk(start, [start])
    assert not circles, circles[:5]
