"""The steps of the tflint-perf GitHub Action (action.yml at the repository root).

A script beside the action rather than a module of the package: the action may install another
version of tflint-perf than its own (the ``version`` input), and these steps must work with it. It
uses the standard library only, runs on every runner (Linux, macOS, Windows) with the Python that
installs and runs tflint-perf, and reads its inputs as action.yml hands them over: ``INPUT_<NAME>``
(upper case, a hyphen spelled ``_``: bash drops a variable named ``INPUT_SARIF-FILE`` from the
environment of what it runs), and the variables GitHub sets: ``GITHUB_ACTION_PATH``,
``GITHUB_STEP_SUMMARY``.

    python run.py install   # pip install the version asked for (default: the action's own checkout)
    python run.py check     # findings as annotations; SARIF and the fix diff when asked; tflint-perf's exit code
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from typing import List


def read_input(name: str) -> str:
    """An input's value (``sarif-file``: ``INPUT_SARIF_FILE``)."""
    return os.environ.get("INPUT_" + name.replace("-", "_").upper(), "").strip()


def requirement() -> str:
    """What pip installs: the action's own checkout unless ``version`` says otherwise; a bare
    version number means that release, anything else (``tflint-perf>=0.4``, a URL, a path) is given
    to pip as written."""
    version = read_input("version")
    if not version:
        return os.environ["GITHUB_ACTION_PATH"]
    return f"tflint-perf=={version}" if version[0].isdigit() else version


def install() -> int:
    return subprocess.call([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", requirement()])


def tflint_perf(*arguments: str) -> List[str]:
    # The interpreter that installed it, not whatever `tflint-perf` comes first on PATH.
    return [sys.executable, "-m", "tflint_perf", "check", *shlex.split(read_input("args")), *arguments]


def check() -> int:
    paths = shlex.split(read_input("paths")) or ["."]
    sarif_file = read_input("sarif-file")
    if sarif_file:
        # A run of its own (one run writes one format); --exit-zero: the exit code is the next run's.
        # It fills the results cache, so the annotating run below reads its results back.
        written = subprocess.call(tflint_perf("--output-format", "sarif", "--output-file", sarif_file, "--exit-zero", *paths))
        if written != 0:
            return written
    sys.stdout.flush()
    # `::warning file=...` lines on stdout: the runner turns them into the pull request's annotations.
    code = subprocess.call(tflint_perf("--output-format", "github", *paths))
    if read_input("fix").lower() == "true":
        write_summary(fix_diff(paths))
    return code


def fix_diff(paths: List[str]) -> str:
    """The diff the fixes would make, as Markdown for the job summary."""
    shown = subprocess.run(tflint_perf("--diff", *paths), capture_output=True, text=True)
    if shown.returncode not in (0, 1):  # 1: there is a diff; anything else is an error, shown as it came
        return f"## tflint-perf fixes\n\n`tflint-perf --diff` failed:\n\n```\n{shown.stderr}\n```\n"
    if not shown.stdout:
        return "## tflint-perf fixes\n\nNo fixes available.\n"
    fence = "````" if "```" in shown.stdout else "```"
    return (f"## tflint-perf fixes\n\n{shown.stderr.strip()} Run `tflint-perf check --fix` to apply them:\n\n"
            f"{fence}diff\n{shown.stdout}{fence}\n")


def write_summary(markdown: str) -> None:
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:  # set on every GitHub runner; absent when the script is run by hand
        with open(summary, "a", encoding="utf-8") as out:
            out.write(markdown)
    else:
        sys.stdout.write(markdown)


if __name__ == "__main__":
    steps = {"install": install, "check": check}
    if len(sys.argv) != 2 or sys.argv[1] not in steps:
        sys.exit(f"usage: {os.path.basename(sys.argv[0])} {{{'|'.join(steps)}}}")
    sys.exit(steps[sys.argv[1]]())
