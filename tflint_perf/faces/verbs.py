"""The ``check`` verbs beyond checking, as ruff has them: ``--show-files``, ``--add-noqa``,
``--fix-only``'s summary, ``--statistics``, ``--watch`` (colour on a terminal: ``output.colour_enabled``).

cli.py parses the flags and calls in here; each verb is one function.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, Optional, Sequence, Set, TextIO, Tuple

from tflint_perf.checking.config import Settings, with_project_version
from tflint_perf.text.diagnostics import Diagnostic
from tflint_perf.checking.discovery import relative_to_root
from tflint_perf.checking.engine import check_text
from tflint_perf.text.parsing import InternalError, ParseError
from tflint_perf.text.noqa import add_noqa as add_noqa_to_text
from tflint_perf.text.notebook import NOTEBOOK_SUFFIX, Notebook, NotebookError
from tflint_perf.faces.output import paint, plural
from tflint_perf.rules import rules_by_code
from tflint_perf.text.source import SourceError, SourceFile
from tflint_perf.fixes.writer import WriteError, write_atomically

Gathered = Sequence[Tuple[str, Optional[Path], bool]]  # (argument, file or None when missing, explicit)
STATISTICS_FORMATS = ("concise", "full", "json")
WATCH_INSTALL = "pip install 'tflint-perf[watch]' (or: pip install 'watchfiles>=0.20')"
WATCHED_SUFFIXES = (".py", ".pyi", ".ipynb", "pyproject.toml")


# -- --show-files ----------------------------------------------------------------------------------
def show_files(gathered: Gathered) -> int:
    """Like ruff's --show-files: every file that would be checked, sorted, one absolute path a line."""
    files = sorted({str(path.resolve()) for raw, path, _ in gathered if path is not None and raw != "-"})
    for file in files:
        print(file)
    missing = [raw for raw, path, _ in gathered if path is None and raw != "-"]
    for raw in missing:
        print(f"{raw}: error: no such file or directory", file=sys.stderr)
    return 1 if missing else 0


# -- --add-noqa ------------------------------------------------------------------------------------
def add_noqa(gathered: Gathered, settings: Settings, display: Callable[[Path], str]) -> int:
    """Add ``# noqa: CODES`` to every line with findings, merging with an existing ``# noqa: X``.

    Like ruff's --add-noqa: only the findings that ``check`` would report get one, so a second run
    adds nothing; a notebook gets it in the cell's source. Exit 0, or 1 when a file could not be
    read, parsed or written (named on stderr and left untouched).
    """
    added = 0
    failed = False
    for raw, path, _ in gathered:
        if raw == "-":
            print("tflint-perf: error: --add-noqa cannot rewrite stdin", file=sys.stderr)
            return 2
        if path is None:
            print(f"{raw}: error: no such file or directory", file=sys.stderr)
            failed = True
            continue
        name = display(path)
        try:
            added += _add_noqa_to_file(path, name, settings)
        except (OSError, SourceError, ParseError, NotebookError, WriteError) as problem:
            reason = problem.strerror if isinstance(problem, OSError) and problem.strerror else problem
            print(f"{name}: error: {reason}", file=sys.stderr)
            failed = True
        except InternalError as problem:
            print(f"{name}: error: internal error in tflint-perf: {problem} (please report this)", file=sys.stderr)
            return 2
    print(f"Added {plural(added, 'noqa directive')}.", file=sys.stderr)
    return 1 if failed else 0


def _add_noqa_to_file(path: Path, name: str, settings: Settings) -> int:
    data = path.read_bytes()
    source = SourceFile.decode(data)
    if not source.text.strip():
        return 0
    settings = with_project_version(settings, path)
    codes = settings.codes_for(relative_to_root(path, settings))
    if path.suffix == NOTEBOOK_SUFFIX:
        notebook = Notebook(source.text)
        if not notebook.is_python:
            return 0
        module, count = _with_noqa(notebook.module, name, settings, codes)
        if not count:
            return 0
        text = notebook.with_sources(notebook.changed_sources(module))
    else:
        text, count = _with_noqa(source.text, name, settings, codes)
        if not count:
            return 0
    write_atomically(path, source.encode_fixed(data, text), data)
    return count


def _with_noqa(text: str, name: str, settings: Settings, codes: Set[str]) -> Tuple[str, int]:
    rows: Dict[int, Set[str]] = {}
    for diagnostic in check_text(text, name, settings, codes):
        rows.setdefault(diagnostic.location.row, set()).add(diagnostic.code)
    return add_noqa_to_text(text, rows) if rows else (text, 0)


# -- --fix-only ------------------------------------------------------------------------------------
def fix_only_summary(fixed: int, remaining: Sequence[Diagnostic], unsafe: bool) -> str:
    """ruff's --fix-only summary: what was fixed, and what --unsafe-fixes would add."""
    more = 0 if unsafe else sum(1 for d in remaining if d.fix is not None and d.fix.applicability == "unsafe")
    if fixed:
        hint = f" ({more} additional {'fix' if more == 1 else 'fixes'} available with --unsafe-fixes)" if more else ""
        return f"Fixed {plural(fixed)}{hint}."
    hint = f" ({plural(more, 'fix')} available with --unsafe-fixes)" if more else ""
    return f"No errors fixed{hint}."


# -- --statistics ----------------------------------------------------------------------------------
def write_statistics(diagnostics: Sequence[Diagnostic], out: TextIO, unsafe: bool, fmt: str) -> None:
    """ruff's --statistics: one row per rule (count, code, fixable marker, name), most frequent first;
    with --output-format json, the same rows as a JSON array."""
    counts = Counter(d.code for d in diagnostics)
    fixable = {d.code for d in diagnostics if d.fix is not None and (d.fix.applicability == "safe" or unsafe)}
    rules = rules_by_code()
    rows = [
        {"code": code, "name": rules[code].name if code in rules else "", "count": count, "fixable": code in fixable}
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    if fmt == "json":
        json.dump(rows, out, indent=2)
        out.write("\n")
        return
    if not rows:
        return
    count_width = max(len(str(row["count"])) for row in rows)
    code_width = max(len(row["code"]) for row in rows)
    any_fixable = any(row["fixable"] for row in rows)
    for row in rows:
        marker = ("[*] " if row["fixable"] else "[ ] ") if any_fixable else ""
        code = paint(f"{row['code']:<{code_width}}", "code")
        out.write(f"{row['count']:>{count_width}}\t{code}\t{marker}{row['name']}\n")


# -- --watch ---------------------------------------------------------------------------------------
def watch(args: argparse.Namespace, check: Callable[[argparse.Namespace], int]) -> int:
    """Check, then check again whenever a Python file, notebook or pyproject.toml under the paths
    changes, until interrupted (exit 0). Needs the optional ``watchfiles`` package."""
    try:
        import watchfiles
    except ImportError:
        print(f"tflint-perf: error: --watch needs the watchfiles package: {WATCH_INSTALL}", file=sys.stderr)
        return 2
    paths = list(args.paths or ["."])
    if "-" in paths:
        print("tflint-perf: error: --watch cannot watch stdin", file=sys.stderr)
        return 2
    missing = [raw for raw in paths if not Path(raw).exists()]
    if missing:
        print(f"tflint-perf: error: --watch: no such file or directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    args.watch = False  # the checks below are plain checks

    def once(changed: Optional[Sequence[str]] = None) -> None:
        if changed is not None:
            from tflint_perf.checking.workspace import refresh_workspaces

            # The workspaces live on: only the changed files and the modules around them are analysed again.
            refresh_workspaces(Path(path) for path in changed)
        check(args)
        sys.stdout.flush()
        print("Watching for file changes.", file=sys.stderr, flush=True)

    print("Starting linter in watch mode...", file=sys.stderr, flush=True)
    once()
    changes = watchfiles.watch(
        *paths,
        watch_filter=lambda change, path: path.endswith(WATCHED_SUFFIXES),
        raise_interrupt=False,
    )
    for batch in changes:
        print("File change detected...", file=sys.stderr, flush=True)
        once([path for _, path in batch])
    return 0
