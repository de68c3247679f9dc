"""The figures and tables of `resnet-node`, declared for `theory reproduce` (theory.experiments.register_figure)."""
