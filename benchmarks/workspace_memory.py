"""What a long-lived workspace holds in memory on a large project, and whether edits make it grow.

    python benchmarks/workspace_memory.py PROJECT_DIR [--edits 50] [--module REL_PATH]

Checks every Python file of the project once through one ``Workspace`` (as the flake8 plugin, ``--watch``
or an editor would keep it), in one process, and prints the resident memory (RSS, from /proc) after
loading, after the whole project, and over a series of in-memory edits of one module (each edit: the
module's text changed, the module and its importers checked again). The workspace's bounds are counts
(``project.index.MAX_MODULES`` models, ``checking.workspace.MAX_RESULTS`` results), so memory must level
off: the figures printed are what docs/performance.md reports.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tflint_perf.checking.config import Settings  # noqa: E402
from tflint_perf.checking.workspace import workspace_for  # noqa: E402
from tflint_perf.text.parsing import InternalError, ParseError  # noqa: E402


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def check(workspace, settings, path: Path) -> int:
    text = workspace.project.text_of(path)
    try:
        return len(workspace.check_text(text, str(path), settings, path=path))
    except (ParseError, InternalError):
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--module", help="the module to edit (relative path); default: the most imported one")
    args = parser.parse_args()
    root = args.project.resolve()
    print(f"python {sys.version.split()[0]}, pid {os.getpid()}, start: {rss_mib():.0f} MiB")
    workspace = workspace_for(root / "pyproject.toml", root)
    settings = Settings(root=root)
    files = [path.resolve() for path in workspace.project.files()]
    print(f"project: {len(files)} files under {root}")
    started = time.perf_counter()
    findings = sum(check(workspace, settings, path) for path in files)
    print(f"whole project checked: {time.perf_counter() - started:.1f} s, {findings} findings, "
          f"RSS {rss_mib():.0f} MiB, held {workspace.memory()}")
    if args.module:
        module = (root / args.module).resolve()
    else:
        module = max(files, key=lambda path: len(workspace.project.importers_of(path)))
    importers = workspace.project.importers_of(module)
    print(f"editing {module.relative_to(root)} ({len(importers)} importers), {args.edits} times")
    original = workspace.project.text_of(module)
    samples = []
    for edit in range(1, args.edits + 1):
        affected = workspace.update(module, original + f"\n# edit {edit}\n")
        started = time.perf_counter()
        for path in sorted(affected):
            check(workspace, settings, path)
        elapsed = time.perf_counter() - started
        if edit in (1, 2, 5, 10) or edit % 25 == 0 or edit == args.edits:
            gc.collect()
            samples.append(rss_mib())
            print(f"  edit {edit:4d}: {len(affected)} modules re-checked in {elapsed * 1000:.0f} ms, "
                  f"RSS {samples[-1]:.0f} MiB, held {workspace.memory()}")
    if len(samples) >= 3:
        print(f"RSS change from the second sample to the last: {samples[-1] - samples[1]:+.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
