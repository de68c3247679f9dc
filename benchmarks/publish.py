"""Run the standalone benchmark scripts and publish each one's output in ``benchmarks/results/``.

Usage::

    python benchmarks/publish.py                 # every script below (about 15 minutes on 2 cores)
    python benchmarks/publish.py resnet icl      # some of them, by name

Each script prints its own tables (timings against its anchor, measured in the same run); this
runs it in a fresh interpreter, keeps what it printed verbatim, and writes
``benchmarks/results/<name>.md`` with the machine it ran on (and copies the script's plots beside
it). The documentation's benchmark page is built from those files, so that no measured figure is
typed by hand; the README's speed table quotes them (``tests/test_readme_speed.py`` checks it).
A script that fails is reported and not published; the exit code is then 1.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _harness import machine_info, publish  # noqa: E402

OUT = HERE / "out"

#: name -> (title, script and arguments, plots the script writes under benchmarks/out/)
SCRIPTS = {
    "resnet": ("ResNet kernels over the size grid (forward and gradient against a NumPy loop, "
               "PyTorch CPU eager and the floors; one BLAS thread)", ["bench_resnet.py"], ("resnet_grid.png",)),
    "resnet-targets": ("ResNet kernels at the target cells of the size grid and its lowest cells (forward and "
                       "gradient against a NumPy loop, PyTorch CPU eager and the floors; one BLAS thread)",
                       ["bench_resnet.py", "--out", "benchmarks/out/resnet_targets.json", "--cells",
                        "16,1,10000;16,64,10000;64,256,100;64,256,10000;256,1,100;256,16,100;256,16,10000;"
                        "256,256,10000;4,256,100;4,256,10000;16,256,100;16,256,10000"], ("resnet_targets.png",)),
    "kernels": ("Kernels against their anchors: ResNet compile time, forward and adjoint memory; linear flows; "
                "fBm; isotonic regression; top-k; implicit-reg", ["run.py"], ("resnet_memory.png", "sorting.png")),
    "momentum": ("Momentum ResNets and Sinkhorn attention", ["bench_momentum.py"], ()),
    "signature": ("Truncated signatures and the signature kernel", ["bench_signature.py"], ()),
    "icl": ("Exact expectations of in-context AR learning against Monte Carlo", ["bench_icl.py"], ()),
    "two-timescale": ("Two-timescale network: one gradient step", ["bench_two_timescale.py"], ()),
    "softsort": ("Soft sort, soft rank and top-k against torchsort", ["bench_softsort.py"], ("bench_softsort.png",)),
    "backends": ("Scale experiments: NumPy and PyTorch backends on the CPU", ["bench_backends.py"],
                 ("bench_backends_fig7.png",)),
    "sweep": ("Parameter sweeps: per-task overhead and speed-up", ["bench_sweep.py"], ()),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"scripts to run: {', '.join(SCRIPTS)} (default: all)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in SCRIPTS]
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(SCRIPTS)}")
    failed = []
    for name in args.names or list(SCRIPTS):
        title, command, plots = SCRIPTS[name]
        script = HERE / command[0]
        if not script.exists():
            print(f"{name}: {command[0]} does not exist, skipped")
            continue
        info = machine_info()  # the load average at the start of this script
        started = time.perf_counter()
        print(f"== {name}: python benchmarks/{' '.join(command)}", flush=True)
        run = subprocess.run([sys.executable, str(script), *command[1:]], capture_output=True, text=True,
                             cwd=HERE.parent)
        print(run.stdout)
        if run.returncode != 0:
            print(run.stderr[-4000:], file=sys.stderr)
            print(f"{name}: FAILED (exit {run.returncode}); not published", file=sys.stderr)
            failed.append(name)
            continue
        images = tuple(OUT / p for p in plots if (OUT / p).exists())
        path = publish(name, title, f"python benchmarks/{' '.join(command)}", run.stdout, info=info, images=images)
        print(f"{name}: published {path.relative_to(HERE.parent)} ({time.perf_counter() - started:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
