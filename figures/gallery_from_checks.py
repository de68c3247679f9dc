"""Copy the gallery figures that the checks draw (``scaling`` Fig. 7, ``topk`` Fig. 7.1,
``resnet-node`` Fig. 3(c)).

Runs the check that draws each figure (without writing a claims report) and copies its PNG from
figures/out/ to figures/gallery/. Run from the repository root, as `theory plots` does.
"""

import shutil
import sys
from pathlib import Path

import pytest

FIGURES = {
    "scaling__fig-7.png": "checks/test_scaling_limits.py::test_fig7",
    "topk__fig-7.1.png": "checks/test_topk.py::test_fig71",
    "resnet-node__fig-3c.png": "checks/test_resnet_node_experiments.py::test_fig3c_adjoint_gradient_errors",
}


def main():
    Path("figures/gallery").mkdir(parents=True, exist_ok=True)
    for name, test in FIGURES.items():
        code = pytest.main(["-q", "-p", "no:cacheprovider", "--no-claims-report", test])
        if code != 0:
            sys.exit(f"{test} failed (exit {code}); {name} not copied")
        shutil.copy(Path("figures/out") / name, Path("figures/gallery") / name)
        print(f"figures/gallery/{name}")


if __name__ == "__main__":
    main()
