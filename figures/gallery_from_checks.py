"""The figures that the checks draw (``scaling`` Fig. 7, ``topk`` Fig. 7.1), for the gallery.

Runs the check that draws each figure (without writing a claims report) into figures/out/; with
``theory plots --gallery`` its PNG is also copied to figures/gallery/.

Run time: about 10 s on 2 cores.
"""

import sys
from pathlib import Path

import pytest

from theory.plots import to_gallery

FIGURES = {
    "scaling__fig-7.png": "checks/test_scaling_limits.py::test_fig7",
    "topk__fig-7.1.png": "checks/test_topk.py::test_fig71",
}


def main():
    for name, test in FIGURES.items():
        code = pytest.main(["-q", "-p", "no:cacheprovider", "--no-claims-report", test])
        if code != 0:
            sys.exit(f"{test} failed (exit {code}); {name} not copied")
        print(Path("figures/out") / name, to_gallery(Path("figures/out") / name) or "")


if __name__ == "__main__":
    main()
