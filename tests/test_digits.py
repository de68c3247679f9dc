"""scikit-learn's digits, read from scikit-learn's data file for every experiment that trains on them."""

import hashlib
import json
import subprocess
import sys

import numpy as np
import pytest

from _data import needs_digits, run_with_sklearn
from theory.experiments import _digits


def _table(n=_digits.N_IMAGES, cols=_digits.N_PIXELS + 1, fill=3):
    rows = []
    for i in range(n):
        row = [fill] * (cols - 1) + [i % _digits.N_CLASSES]
        rows.append(",".join(str(v) for v in row))
    return "\n".join(rows)


@needs_digits
def test_the_arrays():
    X, y = _digits.load_digits_arrays("a test")
    assert X.shape == (_digits.N_IMAGES, _digits.N_PIXELS) and X.dtype == np.float64
    assert y.shape == (_digits.N_IMAGES,) and y.dtype == np.int64
    assert X.min() == 0.0 and X.max() == 16.0 and set(np.unique(y)) == set(range(_digits.N_CLASSES))
    X[0, 0] = -1.0  # a caller's copy: the next call is unaffected
    assert _digits.load_digits_arrays("a test")[0][0, 0] == 0.0


@needs_digits
def test_the_same_arrays_as_scikit_learn():
    """scikit-learn's own loader, run in a child process (it would load a second OpenMP runtime here)."""
    out = run_with_sklearn("""
        import hashlib, json, numpy as np
        from sklearn.datasets import load_digits
        X, y = load_digits(return_X_y=True)
        print(json.dumps([hashlib.sha256(np.ascontiguousarray(X, dtype=np.float64).tobytes()).hexdigest(),
                          hashlib.sha256(np.ascontiguousarray(y, dtype=np.int64).tobytes()).hexdigest()]))
    """)
    X, y = _digits.load_digits_arrays("a test")
    assert json.loads(out) == [hashlib.sha256(X.tobytes()).hexdigest(), hashlib.sha256(y.tobytes()).hexdigest()]


def test_loading_keeps_scikit_learn_out_of_the_process():
    code = ("import sys; from theory.experiments import _digits; "
            "_digits.sklearn_available() and _digits.load_digits_arrays('a test'); print('sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "False"


def test_parse_checks_what_it_reads():
    X, y = _digits.parse_digits(_table())
    assert X.shape == (_digits.N_IMAGES, _digits.N_PIXELS) and np.all(X == 3.0)
    assert np.array_equal(y, np.arange(_digits.N_IMAGES) % 10)
    with pytest.raises(ValueError, match="must hold 1797 rows of 65 values"):
        _digits.parse_digits(_table(n=10))
    with pytest.raises(ValueError, match="must hold 1797 rows of 65 values"):
        _digits.parse_digits(_table(cols=64))
    with pytest.raises(ValueError, match="pixel values must lie in 0 ... 16"):
        _digits.parse_digits(_table(fill=17))
    with pytest.raises(ValueError, match="integers only"):
        _digits.parse_digits(_table().replace("3,", "3.5,", 1))
    with pytest.raises(ValueError, match="not a CSV table of numbers"):
        _digits.parse_digits(_table().replace("3,", "x,", 1), source="f.csv")


def test_one_error_naming_the_experiment_where_scikit_learn_is_missing(monkeypatch):
    from theory.experiments.scaling._train import FIG9_PRESETS, _data
    from theory.experiments.implicit_reg.table1_digits import digits_data as table1_data
    from theory.experiments.resnet_node.digits import FIG3C_DIGITS_PRESETS
    from theory.experiments.resnet_node.digits import digits_data as fig3c_data
    from theory.experiments.topk.pruning import load_digits_split

    monkeypatch.setattr(_digits, "_data_file", lambda: None)
    table1_data.cache_clear()
    calls = {"scaling.fig9": lambda: _data(FIG9_PRESETS["check"]),
             "implicit_reg.table1_digits": lambda: table1_data(1000, 12345),
             "resnet_node.fig3c_digits": lambda: fig3c_data(FIG3C_DIGITS_PRESETS["check"], 0),
             "topk.pruning": lambda: load_digits_split(0)}
    for name, call in calls.items():
        with pytest.raises(ModuleNotFoundError, match=rf"theory.experiments.{name}( \(digits\))? needs scikit-learn"):
            call()
    table1_data.cache_clear()
