"""The figures and tables of `sinkformers`, declared for `theory reproduce` (theory.experiments.register_figure)."""
