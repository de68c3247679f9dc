"""The power of the oracle's sampler tests (kernels ``fgn`` and ``fbm``) against each planted defect class.

Runs :func:`theory.oracle.power_table` for both kernels at their built-in cases: every planted defect of
``theory/oracle/_defects.py`` (wrong scale, wrong H, a wrong weight at one frequency of the circulant embedding,
clipped negative eigenvalues, increments vs paths, non-Gaussian marginals) through ``theory.oracle.verify`` at
``--runs`` seeds, the package's own sampler at ``--null-runs`` seeds (the false-alarm rate), and the closed-form
power of the Gaussian defects; writes the Markdown page ``docs/howto/oracle_power.md``. Usage::

    python benchmarks/oracle_power.py --out docs/howto/oracle_power.md        # about 35 minutes of one core
    python benchmarks/oracle_power.py --runs 20 --null-runs 20 --kernel fgn   # a quick look, printed

or the two kernels apart, in parallel, then the page from their rows (how the committed page was made)::

    python benchmarks/oracle_power.py --kernel fgn --json fgn.json &
    python benchmarks/oracle_power.py --kernel fbm --json fbm.json
    python benchmarks/oracle_power.py --render fgn.json fbm.json --out docs/howto/oracle_power.md

Each row is printed (to stderr) as it is done. Never part of ``make test``; pytest does not collect this directory.
"""

from __future__ import annotations

import sys

from theory.oracle._defects import main

if __name__ == "__main__":
    sys.exit(main())
