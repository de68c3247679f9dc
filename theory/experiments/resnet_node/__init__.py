r"""Experiments of ``resnet-node`` (Sander, Ablin, Peyré, NeurIPS 2022, "Do Residual Neural Networks
discretize Neural ODEs?"; chapter 2 of Sander's thesis) as pure library functions.

Every claim of the paper key has its measurement here: a frozen config (validated on
construction), named presets (``"check"``: exactly what ``pytest checks/`` runs; ``"paper"``: the
documents' sizes where they give them, a larger setting for sweeps otherwise), a ``measure``
function returning a result, and the verdict beside it. All are registered by name
(``theory.experiments.experiment("resnet_node.fig3c")``). The submodules:

* :mod:`~theory.experiments.resnet_node.ode`: Prop. 1, a ResNet against its interpolating ODE;
* :mod:`~theory.experiments.resnet_node.adjoint`: the memory-free adjoint method, Props. 3-6 and
  Figure 3(c);
* :mod:`~theory.experiments.resnet_node.linear`: the deep linear ResNet, Section 3.2, Assumption 1,
  Prop. 2, Th. 1, Lemmas 1-2 and Figure 2;
* :mod:`~theory.experiments.resnet_node.trained`: the training experiments, Figures 1 and 4;
* :mod:`~theory.experiments.resnet_node.digits`: Figure 3(c) on networks trained on scikit-learn's
  digits (a scale experiment of the PyTorch backend);
* :mod:`~theory.experiments.resnet_node.images`: the convolutional ResNets on CIFAR-10 and ImageNet,
  Figures 3(a), 3(b), 4 and Tables 1-2 (PyTorch; the datasets of :mod:`theory.datasets`);
* :mod:`~theory.experiments.resnet_node.tied_depth`: Figure 3(a) on a stand-in, tied-weight residual
  networks on scikit-learn's digits;
* :mod:`~theory.experiments.resnet_node.drawing`: the figures and tables in the documents' layout, and
  :mod:`~theory.experiments.resnet_node.figures` their declarations for ``theory reproduce``.

Their public names are re-exported here.

Every bound (Prop. 1, Assumption 1, the five conclusions of Prop. 2, Lemma 1, the leading terms of Props. 3
and 5) searches its hypothesis set inside its measurement for the instance maximising LHS/RHS
(:func:`theory.worst_case.search_worst_case` over a declared box: :data:`PROP1_BOX`, :data:`LINEAR_BOX`,
:data:`PROP3_BOX`, :data:`PROP5_BOX`; budget and seed are the config fields ``search_budget`` and
``search_seed``), and the searches of Prop. 1 and Assumption 1 also run Hypothesis
(:mod:`~theory.experiments.resnet_node._search`, settings :data:`SEARCH_SETTINGS`), so that the
``"check"`` preset of every registered experiment is what its check records.
"""

from __future__ import annotations

from . import adjoint, digits, drawing, images, linear, ode, tied_depth, trained
from .adjoint import *  # noqa: F401,F403
from .adjoint import __all__ as _adjoint_all
from .digits import *  # noqa: F401,F403
from .digits import __all__ as _digits_all
from .linear import *  # noqa: F401,F403
from .linear import __all__ as _linear_all
from .ode import *  # noqa: F401,F403
from .ode import __all__ as _ode_all
from .trained import *  # noqa: F401,F403
from .trained import __all__ as _trained_all
from ._search import SEARCH_SETTINGS

#: presets by claim (the registry holds the same per experiment name)
PRESETS = {"assumption-1": linear.ASSUMPTION1_PRESETS, "assumption-1/erratum": linear.ERRATUM_PRESETS,
           "fig-3c": adjoint.FIG3C_PRESETS, "fig-1": trained.FIG1_PRESETS, "fig-4": trained.FIG4_PRESETS}

__all__ = ["PRESETS", "SEARCH_SETTINGS", "adjoint", "digits", "drawing", "images", "linear", "ode", "tied_depth",
           "trained", *_adjoint_all, *_digits_all, *_linear_all, *_ode_all, *_trained_all]

from . import figures  # noqa: E402,F401  (the figure declarations of theory reproduce)
