"""What the safety limits cost a normal file: the nesting scan and the analysis thread.

    python benchmarks/limits_overhead.py [--runs 5] [DIRECTORY ...]

For every ``.py`` file that mentions TensorFlow or Keras under the given directories (default: the
fixtures, this package, and the installed ``keras`` and ``tensorflow`` packages' sources when they
are installed; found without importing them), it times, in-process and as the median of ``--runs``:

- ``limits.check_limits`` (the size check and the nesting scan that run before every parse),
- ``libcst.parse_module`` (the parse they protect),
- ``engine.check_text`` (the whole check, which runs on a ``limits.run_deep`` thread),

and, separately, the fixed cost of ``run_deep`` (starting and joining the thread, raising and
restoring the recursion limit) against a plain call. The figures are in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, List

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import libcst as cst  # noqa: E402

from tflint_perf.checking.config import Settings  # noqa: E402
from tflint_perf.checking.engine import check_text  # noqa: E402
from tflint_perf.text.limits import check_limits, nesting_depth, run_deep  # noqa: E402
from tflint_perf.text.prefilter import may_have_findings  # noqa: E402


def median_seconds(function: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def default_directories() -> List[Path]:
    directories = [REPO / "fixtures", REPO / "tflint_perf"]
    for name in ("keras", "tensorflow"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            directories.append(Path(list(spec.submodule_search_locations)[0]))
    return directories


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directories", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-files", type=int, default=200, help="an even sample of at most this many files")
    args = parser.parse_args()
    files = [p for d in (args.directories or default_directories()) for p in sorted(d.rglob("*.py"))]
    texts = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if may_have_findings(text):
            texts.append((path, text))
    step = max(1, len(texts) // args.max_files)
    texts = texts[::step]

    scan = parse = check = 0.0
    characters = 0
    worst = (0.0, "")
    for path, text in texts:
        characters += len(text)
        scan_time = median_seconds(lambda: check_limits(text), args.runs)
        parse_time = median_seconds(lambda: cst.parse_module(text), max(1, args.runs // 2))
        check_time = median_seconds(lambda: check_text(text, path.name, Settings()), max(1, args.runs // 2))
        scan, parse, check = scan + scan_time, parse + parse_time, check + check_time
        worst = max(worst, (scan_time / check_time, f"{path} (depth {nesting_depth(text)})"))
    print(f"files: {len(texts)} mentioning TensorFlow/Keras, {characters / 1e6:.1f} M characters")
    print(f"check_limits (size + nesting scan): {scan:8.3f} s  {scan / characters * 1e9:6.1f} ns/char")
    print(f"libcst.parse_module:                {parse:8.3f} s  {parse / characters * 1e9:6.1f} ns/char")
    print(f"engine.check_text (whole check):    {check:8.3f} s  {check / characters * 1e9:6.1f} ns/char")
    print(f"scan / parse: {scan / parse:.1%}   scan / check: {scan / check:.1%}")
    print(f"largest share of one file's check: {worst[0]:.1%} for {worst[1]}")

    calls = 2000
    plain = median_seconds(lambda: [(lambda: None)() for _ in range(calls)], args.runs) / calls
    deep = median_seconds(lambda: [run_deep(lambda: None) for _ in range(calls)], args.runs) / calls
    per_file = check / len(texts) if texts else float("nan")
    print(f"run_deep fixed cost: {(deep - plain) * 1e6:.0f} us per call "
          f"({(deep - plain) / per_file:.2%} of the mean check_text time per file)")


if __name__ == "__main__":
    main()
