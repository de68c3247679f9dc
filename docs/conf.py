"""Sphinx configuration of the ``theory`` documentation (``make docs``).

The paper pages, the gallery and the benchmark page are generated at build time from
``reports/claims.json``, ``figures/out/`` and ``benchmarks/results/`` by the local extension
``_ext/theory_docs.py``: no measured figure is typed into the documentation by hand.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))
sys.path.insert(0, os.path.dirname(HERE))

import theory  # noqa: E402

project = "theory"
author = "the theory authors"
copyright = "2026, the theory authors"
release = theory.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.doctest",
    "sphinx-mathjax-offline",   # MathJax 3 shipped with the site: formulas render without network
    "myst_parser",
    "theory_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_generated/**/_fragments"]
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

templates_path = ["_templates"]
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

html_theme = "pydata_sphinx_theme"
html_title = f"theory {release}"
html_static_path = ["_static"]
html_js_files = ["render_probe.js"]
html_css_files = ["theory.css"]
# the paper pages' claim tables need the width of the page
html_sidebars = {"_generated/papers/*": []}
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_end": ["navbar-icon-links"],
    "secondary_sidebar_items": {"_generated/papers/*": []},
}

nitpicky = True
# Types named in docstrings that live outside the project; the reference links to what it documents.
# Cross-references written in the docstrings (:func:, :class:, :data:, :exc:, :mod:) must resolve;
# the words of NumPy-style parameter types ("array of shape (n, d)", "int >= 1") are not references.
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|numba|matplotlib|torch|jax|dask|collections|typing|os|pathlib)\..*"),
    (r"py:class", r"(?!theory\.).*"),
]

# `make docs` runs the examples of the pages (the `{doctest}` blocks of the how-tos); the examples
# in the docstrings are run by `pytest --doctest-modules theory` (part of `make test`).
doctest_test_doctest_blocks = ""
