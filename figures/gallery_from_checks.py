"""The gallery figures that the checks draw (``scaling`` Fig. 7, ``topk`` Fig. 7.1,
``resnet-node`` Fig. 3(c)).

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
    "resnet-node__fig-3c.png": "checks/test_resnet_node_experiments.py::test_fig3c_adjoint_gradient_errors",
}


def main():
    for name, test in FIGURES.items():
        code = pytest.main(["-q", "-p", "no:cacheprovider", "--no-claims-report", test])
        if code != 0:
            sys.exit(f"{test} failed (exit {code}); {name} not copied")
        print(Path("figures/out") / name, to_gallery(Path("figures/out") / name) or "")


if __name__ == "__main__":
    main()
