"""Same-machine A/B timing of two checkouts of theory: did a change make any kernel slower?

Usage::

    git worktree add /tmp/theory-base <commit>           # the reference checkout
    python benchmarks/bench_ab.py --base /tmp/theory-base  # against this checkout; --rounds 3 by default

Each round runs the cells of ``_ab_cells.py`` (representative calls of the resnet, momentum, implicit,
topk, isotonic and fbm kernels, through public names) in a fresh interpreter for each tree, the base and the
head alternating, so that a drift of the machine's speed reaches both; a cell's time is its minimum over
repeats and rounds. The table gives head/base per cell and flags a cell more than ``--tolerance`` (5 %)
slower. Compilation is excluded (each cell is called once before it is timed). Exit code 1 when a cell is
flagged.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _harness import machine_line  # noqa: E402


def _commit(tree: Path) -> str:
    out = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "?"


def _round(tree: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, str(HERE / "_ab_cells.py")], env=env, capture_output=True, text=True,
                         cwd=str(tree))
    if out.returncode != 0:
        raise SystemExit(f"the cells failed in {tree}:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, type=Path, help="the reference checkout (a git worktree)")
    parser.add_argument("--head", default=ROOT, type=Path, help="the checkout under test (default: this one)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per tree (default 3)")
    parser.add_argument("--tolerance", type=float, default=0.05, help="flag a cell slower by more (default 0.05)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    if not (args.base / "theory" / "__init__.py").is_file():
        parser.error(f"--base {args.base} is not a checkout of theory")
    runs = {"base": [], "head": []}
    for _ in range(args.rounds):
        runs["head"].append(_round(args.head))
        runs["base"].append(_round(args.base))
    lines = [f"base {_commit(args.base)} against head {_commit(args.head)}, {args.rounds} alternating rounds, "
             f"minimum over repeats and rounds", "",
             f"{'cell':34s} {'base':>12s} {'head':>12s} {'head/base':>10s}  flag"]
    flagged = 0
    for cell in runs["head"][0]:
        b = [r[cell] for r in runs["base"] if r.get(cell) is not None]
        h = [r[cell] for r in runs["head"] if r.get(cell) is not None]
        if not b or not h:
            lines.append(f"{cell:34s} {'n/a':>12s} {'n/a':>12s} {'':>10s}  (missing in one tree)")
            continue
        ratio = min(h) / min(b)
        slow = ratio > 1.0 + args.tolerance
        flagged += slow
        lines.append(f"{cell:34s} {min(b) * 1e3:9.4f} ms {min(h) * 1e3:9.4f} ms {ratio:10.3f}  "
                     f"{'SLOWER' if slow else ''}")
    lines += ["", f"{flagged} of {len(runs['head'][0])} cells slower than base by more than "
              f"{args.tolerance:.0%}; machine: {machine_line()}"]
    print("\n".join(lines))
    return 1 if flagged else 0


if __name__ == "__main__":
    raise SystemExit(main())
