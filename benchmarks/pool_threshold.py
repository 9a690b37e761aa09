"""Where worker processes start to pay: ``tflint-perf check`` in one process against a pool of two.

``tflint_perf.checking.runner.POOL_MIN_WORK`` is the amount of source (bytes of files that mention
TensorFlow/Keras, the ones that get parsed) below which the runner checks in-process. This times the
whole command line, both ways, on projects of growing size cut from real TensorFlow/Keras sources,
with the threshold forced off so that the pool is used at every size:

    python benchmarks/pool_threshold.py --source /tmp/tflint_perf_lint_speed/tf-tree/keras

(``benchmarks/lint_speed.py`` leaves that copy of the Keras sources behind.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List

RUN = (
    "import sys, tflint_perf.checking.runner as runner; runner.POOL_MIN_WORK = 0; "
    "from tflint_perf.faces.cli import main; sys.exit(main(sys.argv[1:]))"
)


def project(source: Path, target: Path, size: int) -> int:
    """Copy whole files that mention TensorFlow/Keras until ``size`` bytes; the bytes copied."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    total = 0
    for index, path in enumerate(sorted(source.rglob("*.py"))):
        data = path.read_bytes()
        if (b"tensorflow" not in data and b"keras" not in data) or len(data) > size // 2 + 1024:
            continue
        (target / f"f{index}.py").write_bytes(data)
        total += len(data)
        if total >= size:
            break
    return total


def wall(command: List[str], cwd: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, help="a directory of real TensorFlow/Keras sources")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="16,32,64,128,256,512,1024", help="project sizes in KB")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tflint_perf_pool_"))
    print(f"{'marked source':>14} {'files':>6} {'-j 1':>9} {'-j 2':>9} {'-j2/-j1':>8}   (median of {args.runs}; "
          f"load {os.getloadavg()[0]:.2f})")
    try:
        for kb in (int(k) for k in args.sizes.split(",")):
            target = work / f"p{kb}"
            total = project(Path(args.source), target, kb * 1024)
            files = len(list(target.glob("*.py")))
            base = [sys.executable, "-c", RUN, "check", "--no-cache", "--isolated", "--exit-zero", "."]
            serial = wall(base + ["-j", "1"], target, args.runs)
            pooled = wall(base + ["-j", "2"], target, args.runs)
            print(f"{total / 1024:11.0f} KB {files:6d} {serial:8.2f}s {pooled:8.2f}s {pooled / serial:8.2f}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
