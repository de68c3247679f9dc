"""The contract harness over every package: each of the fourteen kernel packages has a bad-input fuzz
module with its completeness assertion (every public callable has a spec or a stated exclusion), and
every spec's function computes float32 input in float64 (:func:`_fuzz.twin`)."""

import importlib
import pkgutil

import pytest

import theory
from _fuzz import Spec, twin

#: package -> the fuzz module(s) of tests/ holding its specs and its completeness test
FUZZ_MODULES = {
    "fbm": ["test_fuzz_fbm"],
    "generalization": ["test_fuzz_generalization"],
    "icl": ["test_fuzz_icl"],
    "implicit": ["test_fuzz_implicit_pl"],
    "isotonic": ["test_fuzz_topk_isotonic"],
    "linear": ["test_fuzz_linear"],
    "momentum": ["test_fuzz_momentum"],
    "pl": ["test_fuzz_implicit_pl"],
    "resnet": ["test_fuzz_resnet"],
    "scaling": ["test_fuzz_scaling"],
    "signature": ["test_fuzz_signature"],
    "sinkhorn": ["test_fuzz_sinkhorn"],
    "topk": ["test_fuzz_topk_isotonic"],
    "two_timescale": ["test_fuzz_two_timescale"],
}

#: public subpackages that are not kernel packages, with the reason
NOT_KERNELS = {
    "experiments": "experiment configs and measurements; their fields are validated by the config tests",
    "backends": "the PyTorch twins of experiments, tested against the NumPy experiments (tests/test_backends*.py)",
    "oracle": "the comparison harness; its own tests (tests/test_oracle.py) feed it bad implementations",
}


def _subpackages():
    return {m.name for m in pkgutil.iter_modules(theory.__path__) if m.ispkg and not m.name.startswith("_")}


def test_every_kernel_package_has_a_fuzz_module_with_a_completeness_test():
    assert _subpackages() == set(FUZZ_MODULES) | set(NOT_KERNELS)
    assert len(FUZZ_MODULES) == 14
    for package, modules in FUZZ_MODULES.items():
        for name in modules:
            module = importlib.import_module(name)
            assert any(t.startswith("test_every_public") for t in vars(module)), (
                f"{name} has no completeness test (test_every_public_...)")


def _specs():
    seen = {}
    for name in sorted({m for ms in FUZZ_MODULES.values() for m in ms}):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:  # reported by the completeness test above
            continue
        for key, spec in (getattr(module, "SPECS", None) or {}).items():
            if isinstance(spec, Spec):
                seen[f"{name.removeprefix('test_fuzz_')}:{key}"] = spec
    return seen


SPECS = _specs()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_float32_input_is_computed_in_float64(name):
    twin(SPECS[name])
