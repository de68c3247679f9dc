r"""Experiments of ``implicit-reg`` (Marion, Wu, Sander, Biau, "Implicit regularization of deep residual
networks towards neural ODEs", ICLR 2024; chapter 3 of Marion's and of Sander's theses number the same
statements 3.x).

Every claim's measurement, as pure functions with a frozen config (presets ``"check"``: what
``pytest checks/`` runs; ``"paper"``: the paper's sizes), a ``measure`` function and its verdict:

* :mod:`.core`: Propositions 2 and 3, Theorem 4 and the ReLU counter-example of Appendix D;
* :mod:`.section5`: the experiments of Section 5 (Figures 1 and 2, Table 1, the horizon of Section 5.1),
  the backpropagation formulas (13), (15) and the adjoint (44), the bound (B.5) and Appendix D's gradient;
* :mod:`.general`: Lemmas 18 and 20, Propositions 7, 8 and 11 (the general model (12), Appendix A);
* :mod:`.pl`: Lemma 21, Proposition 5 and Theorem 6 (the PL condition, Section 4);
* :mod:`.supplement`: Theorem 14, reduced Figures 3 and 4, and the search of Proposition 5's ball;
* :mod:`.table1_digits`: the message of Table 1 on scikit-learn's digits (model (3) with 64 inputs);
* :mod:`.figures`: the declarations of Figures 1-4 and Table 1 for ``theory reproduce``.

Each module registers its experiments under ``"implicit_reg.<name>"`` (:func:`theory.experiments.experiment`).
The names of :mod:`.supplement` are re-exported here.
"""

from . import core, general, pl, searches, section5, supplement, table1_digits  # noqa: F401  (registration)
from . import proof_b5, proof_b6  # noqa: F401  (registration: the proof chains of Prop. 5 and Thm 6)
from .supplement import *  # noqa: F401,F403
from .supplement import PRESETS, __all__ as _supplement_all  # noqa: F401

from . import figures  # noqa: E402,F401  (the figure declarations of theory reproduce)

__all__ = ["core", "section5", "general", "pl", "supplement", "table1_digits", *_supplement_all]
