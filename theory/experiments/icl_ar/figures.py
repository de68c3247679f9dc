"""The figures and tables of `icl-ar`, declared for `theory reproduce` (theory.experiments.register_figure)."""
