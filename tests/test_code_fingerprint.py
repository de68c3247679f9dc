"""theory._code_fingerprint: which modules an experiment's cache depends on, and that an edit changes it."""

import hashlib
import importlib
import os
import sys

from theory._code_fingerprint import fingerprint, module_sources, modules_of
from theory.experiments import experiment


def test_an_experiment_depends_on_the_kernels_it_imports_and_on_every_package_init_on_the_way():
    exp = experiment("scaling.fig7_cell")
    sources = module_sources(modules_of(exp.measure, exp.summary, exp.config))
    assert {"theory", "theory.experiments", "theory.experiments.scaling", "theory.scaling",
            "theory.scaling._kernels", "theory.fbm._kernels"} <= set(sources)
    assert not [name for name in sources if not name.startswith("theory")]   # NumPy, Numba: not hashed
    path = importlib.util.find_spec("theory.scaling._kernels").origin
    with open(path, "rb") as fh:
        assert sources["theory.scaling._kernels"] == hashlib.sha256(fh.read()).hexdigest()
    assert list(sources) == sorted(sources) and len(fingerprint(sources)) == 24


def test_a_module_outside_the_package_counts_by_its_file_and_an_edit_changes_the_fingerprint(tmp_path, monkeypatch):
    module = tmp_path / "my_experiment_module.py"
    module.write_text("from theory import rates\n\ndef measure(config):\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("my_experiment_module")
    try:
        first = module_sources(modules_of(mod.measure))
        assert {"my_experiment_module", "theory", "theory.rates"} <= set(first)
        module.write_text("from theory import rates\n\ndef measure(config):\n    return 2  # another result\n")
        stat = module.stat()
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
        second = module_sources(modules_of(mod.measure))
        assert second["my_experiment_module"] != first["my_experiment_module"]
        assert fingerprint(second) != fingerprint(first)
        assert {k: v for k, v in second.items() if k != "my_experiment_module"} == \
               {k: v for k, v in first.items() if k != "my_experiment_module"}
    finally:
        sys.modules.pop("my_experiment_module", None)


def test_relative_imports_and_partials_resolve():
    import functools

    from theory.experiments.scaling import figures

    sources = module_sources(modules_of(functools.partial(figures.__dict__[next(
        name for name, obj in vars(figures).items() if callable(obj) and getattr(obj, "__module__", "") ==
        figures.__name__)]), None))
    assert "theory.experiments.scaling.figures" in sources and "theory.experiments.scaling" in sources
    assert modules_of(None, 3) == ()
