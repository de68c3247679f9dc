"""Momentum ResNets on image datasets: the CIFAR, ImageNet and hymenoptera experiments of chapter 4 (Figs. 4.6-4.9, 4.12, Table 4.2)."""
