"""A script run from the folder that holds a checkout named ``theory`` imports that folder as a namespace package;
the first submodule it imports says so in one line, with the fix, instead of failing later on a missing name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("statement", ["import theory.sweep", "import theory.resnet", "import theory.experiments",
                                       "from theory.papers import PAPERS", "import theory.claims"])
def test_a_checkout_named_theory_in_the_current_folder_is_named(tmp_path, statement):
    (tmp_path / "theory").symlink_to(ROOT, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", statement], cwd=tmp_path, capture_output=True, text=True, env=env)
    if done.returncode == 0:  # the package is not installed (no finder maps theory's submodules): nothing shadows
        pytest.skip("theory is importable only from the checkout here")
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("theory._errors.ShadowedPackageError: `import theory` found ")
    assert "a folder named theory without __init__.py" in last and "run the script from another folder" in last


def test_the_package_itself_passes_the_check():
    from theory._errors import check_package

    check_package()
