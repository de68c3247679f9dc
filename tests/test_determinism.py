"""The ci profile draws the same instances whatever modules are imported (no constants from the source)."""

import sys
import types

from hypothesis import given, settings
from hypothesis import strategies as st

import conftest


def _draws():
    seen = []

    @settings(max_examples=40)
    @given(st.floats(-1e6, 1e6))
    def collect(x):
        seen.append(x)

    collect()
    return seen


def test_draws_do_not_depend_on_the_source_of_imported_modules(tmp_path, monkeypatch):
    assert conftest.SOURCE_CONSTANTS_OFF
    before = _draws()
    # a new local module full of distinctive literals, imported between two identical tests
    path = tmp_path / "theory_literals_probe.py"
    path.write_text("VALUES = [" + ", ".join(f"{0.123456 * i:.6f}" for i in range(1, 200)) + "]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__("theory_literals_probe")
    assert isinstance(module, types.ModuleType)
    after = _draws()
    assert before == after
    sys.modules.pop("theory_literals_probe", None)
