"""The table of paper keys: the one place a paper key is declared.

Each row names a key of the claim IDs (``resnet-node``), the module of its experiments
(``theory.experiments.resnet_node``, whose checks are ``checks/test_resnet_node*.py``), the document's title
and where it appears, the kernel subpackages its claims use and the benchmark (``make bench``, a name of
``benchmarks/publish.py``) that times them. Every list of keys in the package, the command line, the
documentation and the benchmarks is read from :data:`PAPERS`; adding a paper key is one row here, a module
``theory/experiments/<module>`` and a check module (the docs page "Adding a paper key" lists the pieces).

Examples
--------
>>> paper("icl-ar").module
'icl_ar'
>>> [p.key for p in PAPERS][:3]
['resnet-node', 'scaling', 'implicit-reg']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from theory._errors import check_package as _check_package  # noqa: F401  (a shadowing folder stops here)

__all__ = ["Paper", "PAPERS", "PAPER_KEYS", "paper", "paper_of_module"]

_KEY = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_FIGURE = re.compile(r"(?:fig-[0-9]+(?:\.[0-9]+)?[a-z]?|table-[0-9]+(?:\.[0-9]+)?)")


def _numbered(prefix: str, chapter: int | None, count: int) -> tuple[str, ...]:
    return tuple(f"{prefix}-{chapter}.{i}" if chapter else f"{prefix}-{i}" for i in range(1, count + 1))


@dataclass(frozen=True)
class Paper:
    """One paper key.

    Attributes
    ----------
    key : str
        The first part of its claim IDs, lower case words joined by hyphens (``"two-timescale"``).
    module : str
        Its module under :mod:`theory.experiments`: the key with underscores (``"two_timescale"``).
    title : str
        The document's title.
    source : str
        Where it appears: authors, venue, thesis chapter.
    kernels : tuple of str
        The subpackages of :mod:`theory` whose kernels its claims use, main one first.
    benchmark : str or None
        The name of its benchmark in ``benchmarks/publish.py``, or None where it has none.
    figures : tuple of str
        The document's figures and tables, by its own numbering (``"fig-4.5"``, ``"table-4.2"``; a figure
        whose panels are separate experiments lists each panel, ``"fig-3a"``): the inventory that
        :func:`theory.experiments.figures` is held to (empty where it is not declared yet).
    """

    key: str
    module: str
    title: str
    source: str
    kernels: tuple[str, ...]
    benchmark: str | None
    figures: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not _KEY.fullmatch(self.key):
            raise ValueError(f"`key` of theory.papers.Paper must be lower-case words joined by '-'; got {self.key!r}")
        if self.module != self.key.replace("-", "_"):
            raise ValueError(f"`module` of paper {self.key!r} must be {self.key.replace('-', '_')!r}; "
                             f"got {self.module!r}")
        bad = [f for f in self.figures if not _FIGURE.fullmatch(f)]
        if bad or len(set(self.figures)) != len(self.figures):
            raise ValueError(f"`figures` of paper {self.key!r} must be distinct labels 'fig-N[.M][a-z]' or "
                             f"'table-N[.M]'; got {bad or list(self.figures)}")


PAPERS: tuple[Paper, ...] = (
    Paper("resnet-node", "resnet_node", "Do Residual Neural Networks discretize Neural ODEs?",
          "Sander, Ablin, Peyré, NeurIPS 2022; chapter 2 of M. E. Sander's thesis",
          ("resnet", "linear"), "resnet",
          ("fig-1", "fig-2", "fig-3a", "fig-3b", "fig-3c", "fig-4", "table-1", "table-2")),
    Paper("scaling", "scaling", "Scaling ResNets in the large-depth regime",
          "Marion, Fermanian, Biau, Vert, 2022; chapter 2 of P. Marion's thesis",
          ("scaling", "fbm"), "backends",
          ("fig-1", "fig-2a", "fig-2b", "fig-3", "fig-4", "fig-5", "fig-6", "fig-7", "fig-8", "fig-9", "table-1",
           "table-2", "table-3", "table-4")),
    Paper("implicit-reg", "implicit_reg", "Implicit regularization of deep residual networks towards neural ODEs",
          "Marion, Wu, Sander, Biau, ICLR 2024; chapter 3 of both theses",
          ("implicit", "pl"), "kernels", ("fig-1", "fig-2", "fig-3", "fig-4", "table-1")),
    Paper("momentum", "momentum", "Momentum residual neural networks",
          "chapter 4 of M. E. Sander's thesis", ("momentum",), "momentum",
          _numbered("fig", 4, 12) + _numbered("table", 4, 2)),
    Paper("sinkformers", "sinkformers", "Sinkformers: Transformers with doubly stochastic attention",
          "chapter 5 of M. E. Sander's thesis", ("sinkhorn",), "momentum",
          _numbered("fig", 5, 6) + _numbered("table", 5, 2)),
    Paper("icl-ar", "icl_ar", "In-context autoregressive learning with linear attention",
          "chapter 6 of M. E. Sander's thesis", ("icl",), "icl", _numbered("fig", 6, 10)),
    Paper("topk", "topk", "Fast, differentiable and sparse top-k: a convex analysis perspective",
          "chapter 7 of M. E. Sander's thesis", ("topk", "isotonic"), "softsort",
          _numbered("fig", 7, 9)),
    Paper("gen-bounds", "gen_bounds", "Generalization bounds for neural ODEs and deep residual networks",
          "chapter 4 of P. Marion's thesis", ("generalization",), None, figures=("fig-4.1", "table-4.1")),
    Paper("rnn-kernel", "rnn_kernel", "Framing RNNs as kernel methods: a neural ODE approach",
          "chapter 5 of P. Marion's thesis", ("signature",), "signature",
          figures=("fig-5.1", "fig-5.2", "fig-5.3", "fig-5.4")),
    Paper("two-timescale", "two_timescale",
          "Leveraging the two-timescale regime to demonstrate convergence of neural networks",
          "chapter 6 of P. Marion's thesis", ("two_timescale",), "two-timescale",
          _numbered("fig", 6, 7) + _numbered("table", 6, 2)),
)

#: the keys, in the table's order
PAPER_KEYS: tuple[str, ...] = tuple(p.key for p in PAPERS)

_BY_KEY = {p.key: p for p in PAPERS}
_BY_MODULE = {p.module: p for p in PAPERS}


def paper(key: str) -> Paper:
    """The row of paper key ``key``.

    Raises
    ------
    ValueError
        For an unknown key; the message lists the known ones.
    """
    if key not in _BY_KEY:
        raise ValueError(f"unknown paper key {key!r}; known keys: {', '.join(PAPER_KEYS)}")
    return _BY_KEY[key]


def paper_of_module(module: str) -> Paper:
    """The row whose experiments module is ``module`` (``"icl_ar"``).

    Raises
    ------
    ValueError
        For a module of no paper key.
    """
    if module not in _BY_MODULE:
        raise ValueError(f"no paper key has the experiments module {module!r}; known: {', '.join(_BY_MODULE)}")
    return _BY_MODULE[module]
