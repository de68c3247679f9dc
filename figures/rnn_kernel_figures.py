"""Figures of the ``rnn-kernel`` paper key (thesis (Marion), chapter 5), from the package only.

* ``rnn-kernel__fig-5.1.png``: Figure 5.1a reduced (step-N expansion error of random RNNs on a spiral,
  against the bound (5.9) of Prop. 5.9);
* ``rnn-kernel__prop-5.1.png``: the Euler error of the residual RNN (5.1), rate 1/T;
* ``rnn-kernel__lemma-5.19.png``: the derivative sups of the logistic and tanh against Lemmas 5.19-5.20.

``python figures/rnn_kernel_figures.py [check|paper]`` (default ``check``: about 5 s on 2 cores; ``paper``:
Figure 5.1's 10^3 RNNs, several minutes). Output in figures/out/.
"""

import sys

import theory.experiments.rnn_kernel as ex


def main(preset="check"):
    print(ex.prop59_figure(ex.measure_prop59(ex.TAYLOR_PRESETS[preset])))
    print(ex.prop51_figure(ex.measure_prop51(ex.EULER_PRESETS[preset])))
    print(ex.activations_figure(ex.measure_activations(ex.ACTIVATION_PRESETS[preset])))


if __name__ == "__main__":
    main(*sys.argv[1:2])
