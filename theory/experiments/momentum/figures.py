"""The figures and tables of `momentum`, declared for `theory reproduce` (theory.experiments.register_figure)."""
