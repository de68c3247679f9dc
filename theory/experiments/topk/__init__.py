r"""Experiments of paper key ``topk`` (M. E. Sander's thesis, chapter 7, "Fast, differentiable and sparse top-k").

Every claim's measurement, as library functions: a frozen config (validated, every field documented), presets
``"check"`` (what ``pytest checks/`` runs) and ``"paper"`` (the thesis' own sizes where it gives them, else a
larger sweep), a pure ``measure`` function and the verdict beside it. The submodules:

* :mod:`~theory.experiments.topk.operators`: Prop. 7.8 at p = 2 (and its erratum), Prop. 7.2 against the LP,
  the hard and affine regimes (§7.5, §7.7), Fig. 7.1.
* :mod:`~theory.experiments.topk.conjugates`: Props. 7.1, 7.3, 7.4 (and its erratum).
* :mod:`~theory.experiments.topk.solvers`: PAV against Dykstra and dual ascent (§7.5, App. 7.A.8), Algorithm 7.7
  (rate, corrected, erratum).
* :mod:`~theory.experiments.topk.magnitude`: the magnitude example and bounds of §7.5, hard regimes and Prop. 7.8
  for p != 2, sparsity (§7.4), Prop. 7.8's domain (erratum).
* :mod:`~theory.experiments.topk.losses`: the smooth top-k loss of §7.6 (and its erratum), Prop. 7.2's duality,
  Eqs. (7.2)/(7.4).
* :mod:`~theory.experiments.topk.soft`: soft sort and soft rank (§7.3).
* :mod:`~theory.experiments.topk.reductions`: Props. 7.5, 7.6, Figs. 7.3, 7.8, 7.9, App. 7.B.1.
* :mod:`~theory.experiments.topk.permutohedron` (Fig. 7.2), :mod:`~theory.experiments.topk.runtime` (Fig. 7.4),
  :mod:`~theory.experiments.topk.pruning` (Fig. 7.5), :mod:`~theory.experiments.topk.smooth_loss` (Fig. 7.6),
  :mod:`~theory.experiments.topk.moe` (Fig. 7.7), and :mod:`~theory.experiments.topk.figures`, the declarations
  of every figure of the chapter (:func:`theory.experiments.register_figure`).

Every name of the submodules is available here (``from theory.experiments import topk as ex; ex.prop75``), and
each experiment is registered as ``"topk.<name>"`` (:func:`theory.experiments.experiment`).
"""

from __future__ import annotations

import math

from .. import register
from . import conjugates, losses, magnitude, operators, reductions, soft, solvers
from ._common import ErratumOutcome, Outcome, erratum_outcome_verdict
from .conjugates import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
from .magnitude import *  # noqa: F401,F403
from .operators import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .soft import *  # noqa: F401,F403
from .solvers import *  # noqa: F401,F403

__all__ = (["Outcome", "ErratumOutcome", "erratum_outcome_verdict"] + conjugates.__all__ + losses.__all__
           + magnitude.__all__ + operators.__all__ + reductions.__all__ + soft.__all__ + solvers.__all__)


def _identity_summary(out):
    r = out.result
    return {"max_abs_err": float(r.max_abs_err), "max_rel_err": float(r.max_rel_err), "n_instances": int(r.n_instances)}


def _bound_summary(out):
    r = out.result if isinstance(out, Outcome) else out
    summary = {"ratio": float(r.ratio), "n_instances": int(r.n_instances)}
    if isinstance(out, Outcome) and "ratio_any_reg" in out.extras:
        summary["ratio_any_reg"] = float(out.extras["ratio_any_reg"])
    return summary


def _erratum_summary(out):
    return {"printed_holds": float(out.printed.status == "pass"), "corrected_holds": float(out.corrected.status == "pass")}


def _numbers(result):
    """The plain numbers among a result's measured figures."""
    return {k: float(v) for k, v in result.to_measured().items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v))}


def _prop78_summary(r):
    return _identity_summary(operators.prop78_outcome(r.cases)) if r.cases else {"n_instances": 0}


_I, _B, _E, _N = _identity_summary, _bound_summary, _erratum_summary, _numbers
_op, _cj, _sv, _mg, _ls, _sf, _rd = operators, conjugates, solvers, magnitude, losses, soft, reductions

for _name, _cfg, _presets, _measure, _verdict, _claims, _summary in (
    ("prop78", _op.JacobianConfig, _op.JACOBIAN_PRESETS, _op.jacobian_cases, _op.prop78_verdict, ("topk/prop-7.8",),
     _prop78_summary),
    ("prop78_psd", _op.JacobianConfig, _op.JACOBIAN_PSD_PRESETS, _op.jacobian_cases, _op.prop78_psd_verdict,
     ("topk/prop-7.8/symmetric-psd",), lambda r: _op.prop78_psd_outcome(r.cases).extras if r.cases else {}),
    ("prop78_erratum", _op.JacobianConfig, _op.JACOBIAN_PRESETS, _op.prop78_erratum, erratum_outcome_verdict,
     ("topk/prop-7.8/erratum",), _E),
    ("prop72", _op.Prop72Config, _op.PROP72_PRESETS, _op.prop72, _op.prop72_verdict, ("topk/prop-7.2",), _I),
    ("sec75_hard", _op.RegimeConfig, _op.REGIME_PRESETS["hard"], _op.regimes, _op.regime_verdict,
     ("topk/sec-7.5/hard",), _I),
    ("sec77_affine", _op.RegimeConfig, _op.REGIME_PRESETS["affine"], _op.regimes, _op.regime_verdict,
     ("topk/sec-7.7/affine",), _I),
    ("fig71", _op.Fig71Config, _op.FIG71_PRESETS, _op.fig71, _op.fig71_verdict, ("topk/fig-7.1",), _N),
    ("fig71_smooth", _op.Fig71Config, _op.FIG71_PRESETS, _op.fig71_smooth, _op.fig71_smooth_verdict,
     ("topk/fig-7.1/smooth",), lambda r: {"slope": float(r.fit.slope), "r2": float(r.fit.r2)}),
    ("prop71", _cj.LmoConfig, _cj.PROP71_PRESETS, _cj.prop71, _cj.prop71_verdict, ("topk/prop-7.1",), _I),
    ("prop73", _cj.Prop73Config, _cj.PROP73_PRESETS, _cj.prop73, _cj.prop73_verdict, ("topk/prop-7.3",), _I),
    ("prop74", _cj.Prop74Config, _cj.PROP74_PRESETS, _cj.prop74, _cj.prop74_verdict, ("topk/prop-7.4",), _I),
    ("prop74_erratum", _cj.Prop74Config, _cj.PROP74_ERRATUM_PRESETS, _cj.prop74_erratum, erratum_outcome_verdict,
     ("topk/prop-7.4/erratum",), _E),
    ("sec75_pav", _sv.PavConfig, _sv.PAV_PRESETS, _sv.pav, _sv.pav_verdict, ("topk/sec-7.5/pav",), _I),
    ("app7a8", _sv.DualDykstraConfig, _sv.APP7A8_PRESETS, _sv.app7a8, _sv.app7a8_verdict, ("topk/app-7.A.8",), _I),
    ("alg77_rate", _sv.Alg77RateConfig, _sv.ALG77_RATE_PRESETS, _sv.alg77_rate, _sv.alg77_rate_verdict,
     ("topk/alg-7.7/rate",),
     lambda r: {f"rho_{k}": float(m["rho"]) for k, m in r.measured.items()}),
    ("alg77", _sv.Alg77Config, _sv.ALG77_PRESETS, _sv.alg77, _sv.alg77_verdict, ("topk/alg-7.7",), _I),
    ("alg77_erratum", _sv.Alg77Config, _sv.ALG77_PRESETS, _sv.alg77_erratum, erratum_outcome_verdict,
     ("topk/alg-7.7/erratum",), _E),
    ("sec75_bound", _mg.MagnitudeBoundConfig, _mg.MAGNITUDE_BOUND_PRESETS, _mg.magnitude_bound,
     _mg.magnitude_bound_verdict, ("topk/sec-7.5/bound",), _B),
    ("sec75_bound_pnorm", _mg.MagnitudeBoundConfig, _mg.MAGNITUDE_BOUND_P_PRESETS, _mg.magnitude_bound,
     _mg.magnitude_bound_verdict, ("topk/sec-7.5/bound/pnorm",), _B),
    ("sec75_example", _mg.ExampleConfig, _mg.EXAMPLE_PRESETS, _mg.magnitude_example, _mg.magnitude_example_verdict,
     ("topk/sec-7.5/example",), _I),
    ("sec75_hard_pnorm", _mg.HardPConfig, _mg.HARD_P_PRESETS, _mg.hard_regime_p, _mg.hard_regime_p_verdict,
     ("topk/sec-7.5/hard/pnorm",), _I),
    ("prop78_pnorm", _mg.JacobianPConfig, _mg.PROP78_PNORM_PRESETS, _mg.prop78_pnorm, _mg.prop78_pnorm_verdict,
     ("topk/prop-7.8/pnorm",), _I),
    ("sec74_sparsity", _mg.SparsityConfig, _mg.SPARSITY_PRESETS, _mg.sparsity, _mg.sparsity_verdict,
     ("topk/sec-7.4/sparsity",), _I),
    ("prop78_p_domain_erratum", _mg.PDomainConfig, _mg.P_DOMAIN_PRESETS, _mg.p_domain_erratum,
     erratum_outcome_verdict, ("topk/prop-7.8/p-domain/erratum",), _E),
    ("sec76", _ls.FyConfig, _ls.FY_PRESETS, _ls.fy_loss, _ls.fy_verdict, ("topk/sec-7.6",), _I),
    ("sec76_erratum", _ls.FyErratumConfig, _ls.FY_ERRATUM_PRESETS, _ls.fy_erratum, erratum_outcome_verdict,
     ("topk/sec-7.6/erratum",), _E),
    ("prop72_duality", _ls.DualityConfig, _ls.DUALITY_PRESETS, _ls.duality, _ls.duality_verdict,
     ("topk/prop-7.2/duality",), _I),
    ("eq72", _ls.LpConfig, _ls.LP_PRESETS, _ls.lp_forms, _ls.lp_forms_verdict, ("topk/eq-7.2",), _I),
    ("sec73_soft_sort", _sf.SoftConfig, _sf.SOFT_PRESETS, _sf.soft_sort_rank, _sf.soft_sort_rank_verdict,
     ("topk/sec-7.3/soft-sort",), _I),
    ("prop75", _rd.ReductionConfig, _rd.PROP75_PRESETS, _rd.prop75, _rd.prop75_verdict, ("topk/prop-7.5",), _N),
    ("prop76", _rd.ReductionConfig, _rd.PROP76_PRESETS, _rd.prop76, _rd.prop76_verdict, ("topk/prop-7.6",), _N),
    ("fig73", _rd.Fig73Config, _rd.FIG73_PRESETS, _rd.fig73, _rd.fig73_verdict, ("topk/fig-7.3",),
     lambda r: {"zero_mismatch": float(sum(r.zero_mismatch.values()))}),
    ("fig78", _rd.Fig78Config, _rd.FIG78_PRESETS, _rd.fig78, _rd.fig78_verdict, ("topk/fig-7.8",),
     lambda r: {f"entry_slope_p={k}": float(a) for k, (a, _) in r.slopes.items()}),
    ("app7b1", _rd.App7B1Config, _rd.APP7B1_PRESETS, _rd.app7b1, _rd.app7b1_verdict, ("topk/app-7.B.1",), _N),
    ("fig79", _rd.Fig79Config, _rd.FIG79_PRESETS, _rd.fig79, _rd.fig79_verdict, ("topk/fig-7.9",), _N),
):
    register(f"topk.{_name}", config=_cfg, presets=_presets, measure=_measure, verdict=_verdict, claims=_claims,
             summary=_summary)

from . import moe, permutohedron, pruning, runtime, smooth_loss  # noqa: E402  (Figs. 7.2, 7.4-7.7)

for _name, _cfg, _presets, _measure, _verdict, _claims in (
    ("fig72", permutohedron.Fig72Config, permutohedron.FIG72_PRESETS, permutohedron.fig72, permutohedron.fig72_verdict,
     ("topk/fig-7.2",)),
    ("fig74", runtime.RuntimeConfig, runtime.RUNTIME_PRESETS, runtime.runtime, runtime.runtime_verdict,
     ("topk/fig-7.4",)),
    ("fig75", pruning.PruningConfig, pruning.PRUNING_PRESETS, pruning.pruning, pruning.pruning_verdict,
     ("topk/fig-7.5",)),
    ("fig75_digits", pruning.PruningConfig, pruning.PRUNING_DIGITS_PRESETS, pruning.pruning, pruning.pruning_verdict,
     ("topk/fig-7.5/digits",)),
    ("fig76", smooth_loss.SmoothLossConfig, smooth_loss.SMOOTH_LOSS_PRESETS, smooth_loss.smooth_loss,
     smooth_loss.smooth_loss_verdict, ("topk/fig-7.6",)),
    ("fig76_digits", smooth_loss.SmoothLossConfig, smooth_loss.SMOOTH_LOSS_DIGITS_PRESETS, smooth_loss.smooth_loss,
     smooth_loss.smooth_loss_verdict, ("topk/fig-7.6/digits",)),
    ("fig77", moe.MoeConfig, moe.MOE_PRESETS, moe.moe, moe.moe_verdict, ("topk/fig-7.7",)),
    ("fig77_synthetic", moe.MoeConfig, moe.MOE_SYNTHETIC_PRESETS, moe.moe, moe.moe_verdict,
     ("topk/fig-7.7/synthetic",)),
):
    register(f"topk.{_name}", config=_cfg, presets=_presets, measure=_measure, verdict=_verdict, claims=_claims,
             summary=_numbers)

from . import figures  # noqa: E402,F401  (the figure declarations of theory reproduce)
