"""scikit-learn's digits, loaded once for the three experiments that train on them."""

import numpy as np
import pytest

from theory.experiments import _digits

pytest.importorskip("sklearn", reason="the digits ship with scikit-learn (pip install 'theory[gpu]')")


def test_the_arrays():
    X, y = _digits.load_digits_arrays("a test")
    assert X.shape == (_digits.N_IMAGES, _digits.N_PIXELS) and X.dtype == np.float64
    assert y.shape == (_digits.N_IMAGES,) and y.dtype == np.int64
    assert X.min() == 0.0 and X.max() == 16.0 and set(np.unique(y)) == set(range(_digits.N_CLASSES))


def test_one_error_naming_the_experiment_where_scikit_learn_is_missing(monkeypatch):
    from theory.experiments.scaling._train import FIG9_PRESETS, _data
    from theory.experiments.implicit_reg.table1_digits import digits_data as table1_data
    from theory.experiments.resnet_node.digits import FIG3C_DIGITS_PRESETS
    from theory.experiments.resnet_node.digits import digits_data as fig3c_data

    monkeypatch.setattr(_digits, "sklearn_available", lambda: False)
    table1_data.cache_clear()
    calls = {"scaling.fig9": lambda: _data(FIG9_PRESETS["check"]),
             "implicit_reg.table1_digits": lambda: table1_data(1000, 12345),
             "resnet_node.fig3c_digits": lambda: fig3c_data(FIG3C_DIGITS_PRESETS["check"], 0)}
    for name, call in calls.items():
        with pytest.raises(ModuleNotFoundError, match=f"theory.experiments.{name} needs scikit-learn"):
            call()
