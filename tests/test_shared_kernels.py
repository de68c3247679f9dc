"""theory._shared_kernels: the kernel families compiled once before the check groups of a cold ``theory check``."""
import pytest

import theory._shared_kernels as sk


def test_parts_balance_and_keep_every_family():
    fams = [sk.SharedFamily(n, s, (), lambda: None) for n, s in (("a", 5.0), ("b", 4.0), ("c", 3.0), ("d", 2.0))]
    ps = sk.parts(fams, 2)
    assert [[f.name for f in p] for p in ps] == [["a", "d"], ["b", "c"]]
    assert [f.name for f in sk.parts(fams, 1)[0]] == ["a", "b", "c", "d"]
    assert len(sk.parts(fams[:1], 3)) == 1  # no empty part
    assert sk.parts([], 2) == []


def test_parts_refuses_no_process():
    with pytest.raises(ValueError, match="`n`"):
        sk.parts(list(sk.SHARED), 0)


def test_a_probe_that_names_no_kernel_is_cold():
    fam = sk.SharedFamily("x", 1.0, ("theory.no_such_module:f",), lambda: None)
    assert sk.cold((fam,)) == [fam]
    fam = sk.SharedFamily("y", 1.0, ("theory.resnet._kernels:no_such_kernel",), lambda: None)
    assert sk.cold((fam,)) == [fam]


def test_compile_part_refuses_unknown_names():
    with pytest.raises(ValueError, match="unknown shared kernel families"):
        sk.compile_part(["no such family"])


def test_compile_part_reports_a_failure_and_goes_on(monkeypatch, capsys):
    ran = []

    def boom():
        raise RuntimeError("broken")

    monkeypatch.setattr(sk, "SHARED", (sk.SharedFamily("bad", 1.0, (), boom),
                                       sk.SharedFamily("good", 1.0, (), lambda: ran.append(1))))
    assert sk.compile_part(["bad", "good"]) == 1
    assert ran == [1]
    assert "compiling 'bad' failed: RuntimeError: broken" in capsys.readouterr().err


@pytest.mark.parametrize("family", sk.SHARED, ids=lambda f: f.name)
def test_each_family_compiles_its_probes(family):
    # after its calls, none of the family's probes is missing from Numba's cache: a probe the calls do not compile
    # (a renamed kernel, a path the calls no longer take) would leave the family cold on every run
    family.compile()
    assert sk.cold((family,)) == []
