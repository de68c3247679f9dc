"""Negative controls of the figure checks of chapter 4 (checks/test_momentum_figures.py): each reruns the
measurement with the figure's defining ingredient broken and asserts that the verdict fails."""

import dataclasses

import theory.experiments.momentum.fig41_erratum as fig41_erratum
import theory.experiments.momentum.lista as lista
import theory.experiments.momentum.memory_depth as memory_depth
import theory.experiments.momentum.prop415 as prop415
import theory.experiments.momentum.reversible as reversible
import theory.experiments.momentum.rings as rings


def test_fig45_control_gamma_zero_is_a_resnet_and_fails():
    """gamma = 0 turns the Momentum ResNet into a ResNet: the rings are not separated."""
    cfg = dataclasses.replace(rings.RINGS_PRESETS["check"], gamma=0.0, momentum_epochs=500, resnet_epochs=50,
                              train_per_ring=100)
    result = rings.measure_rings(cfg)
    assert result.momentum < rings.RINGS_MOMENTUM_MIN
    assert rings.rings_verdict(result).status == "fail"


def test_fig410_control_gamma_near_one_fails():
    """gamma = 0.999 freezes the Momentum ResNet near x = 0 (velocity barely fed): it cannot match LISTA."""
    cfg = dataclasses.replace(lista.LISTA_PRESETS["check"], gamma=0.999, depths=(2, 4), iterations=10)
    result = lista.measure_lista(cfg)
    verdict = lista.lista_verdict(result)
    assert verdict.status == "fail" and verdict.measured["momentum_over_lista"] > 1.0


def test_fig411_control_lambda_one_fails():
    """lambda = 1 gives A = -I, a rotation by pi: a first-order linear flow reaches it, the paradox disappears."""
    cfg = dataclasses.replace(prop415.PROP415_PRESETS["check"], lambdas=(0.5, 1.0))
    result = prop415.measure_prop415(cfg)
    assert result.to_measured()["n_first_order_representable"] == 1
    assert prop415.prop415_verdict(result).status == "fail"


def test_table41_control_gamma_near_zero_fails():
    """gamma -> 0 makes the Momentum ResNet a ResNet: the inverse (4.3) divides by gamma at every layer and the
    round-off of the forward pass is amplified by gamma^-N."""
    cfg = dataclasses.replace(reversible.REVERSIBLE_PRESETS["check"], gamma=1e-3)
    result = reversible.measure_reversible(cfg)
    assert result.momentum_error > 1e-10
    assert reversible.reversible_verdict(result).status == "fail"


def test_fig42_control_stored_activations_fail():
    """Storing the Momentum ResNet's activations (backprop) instead of rebuilding them makes its memory grow."""
    cfg = dataclasses.replace(memory_depth.FIG42_PRESETS["check"], method="backprop", depths=(1, 201))
    result = memory_depth.measure_fig42(cfg)
    verdict = memory_depth.fig42_verdict(result)
    assert verdict.status == "fail" and verdict.measured["momentum_growth"] > memory_depth.FIG42_FLAT_MAX


def test_fig41_erratum_control_gamma_zero_fails():
    """gamma = 0 makes the second model a ResNet: near the ODE it cannot fit -x^3 either, so the corrected half
    fails and with it the erratum record."""
    cfg = dataclasses.replace(fig41_erratum.FIG41_ERRATUM_PRESETS["check"], gamma=0.0, seeds=(0, 1), iterations=600)
    verdict = fig41_erratum.fig41_erratum_verdict(fig41_erratum.measure_fig41_erratum(cfg))
    assert verdict.status == "fail" and verdict.parts[1].status == "fail"


def test_fig41_erratum_control_untrained_printed_form_holds_and_fails_the_record():
    """One Adam iteration leaves the unit-step ResNet at its starting map, an order-preserving one near the floor or
    above it: the printed form then holds, and an erratum record whose printed form holds fails."""
    cfg = dataclasses.replace(fig41_erratum.FIG41_ERRATUM_PRESETS["check"], seeds=(0, 1), iterations=1)
    verdict = fig41_erratum.fig41_erratum_verdict(fig41_erratum.measure_fig41_erratum(cfg))
    assert verdict.status == "fail"
