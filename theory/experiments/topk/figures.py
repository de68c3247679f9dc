"""The figures and tables of `topk`, declared for `theory reproduce` (theory.experiments.register_figure)."""
