"""Checking (and fixing) one file: a pure function of the file and the settings.

``process_file`` returns everything the report needs as plain data, so it can run in a worker
process or be served from a cache without the command line noticing.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, List, Optional, Set

from tflint_perf.config import Settings
from tflint_perf.diagnostics import Diagnostic
from tflint_perf.discovery import relative_to_root
from tflint_perf.engine import InternalError, ParseError, check_text
from tflint_perf.fixer import FixOutcome, fix_text
from tflint_perf.notebook import NOTEBOOK_SUFFIX, Notebook, NotebookError
from tflint_perf.prefilter import may_have_findings
from tflint_perf.source import SourceError, SourceFile
from tflint_perf.writer import WriteError, write_atomically


@dataclass(frozen=True)
class Mode:
    fix: bool = False  # apply fixes
    diff: bool = False  # compute fixes, write nothing
    unsafe: bool = False  # include unsafe fixes

    @property
    def fixing(self) -> bool:
        return self.fix or self.diff


@dataclass
class FileResult:
    name: str
    diagnostics: List[Diagnostic] = field(default_factory=list)
    fixed: List[Diagnostic] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # the input's fault: reported, exit 1
    internal_errors: List[str] = field(default_factory=list)  # ours: reported, exit 2
    notes: List[str] = field(default_factory=list)
    diff: Optional[str] = None
    text: Optional[str] = None  # the checked text, for snippets in the output
    fixed_text: Optional[str] = None  # set when fixes changed the text


def process_file(path: Path, name: str, settings: Settings, mode: Mode, explicit: bool) -> FileResult:
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        return FileResult(name, errors=["is a directory"])
    except FileNotFoundError:
        return FileResult(name, errors=["no such file or directory"])
    except OSError as problem:
        return FileResult(name, errors=[f"cannot read file: {problem.strerror or problem}"])
    result = process_bytes(data, name, path, settings, mode, explicit)
    if result.fixed_text is not None and mode.fix and not mode.diff:
        try:
            write_atomically(path, SourceFile.decode(data).encode_fixed(data, result.fixed_text), data)
        except (SourceError, WriteError) as problem:
            result.errors.append(str(problem))
            result.diagnostics = sorted(result.diagnostics + result.fixed, key=_position)
            result.fixed = []
            result.fixed_text = None
    return result


def process_bytes(data: bytes, name: str, path: Path, settings: Settings, mode: Mode, explicit: bool) -> FileResult:
    result = FileResult(name)
    try:
        source = SourceFile.decode(data)
    except SourceError as problem:
        result.errors.append(str(problem))
        return result
    text = source.text
    if not text.strip():
        if explicit:
            result.notes.append("file is empty, nothing to check")
        return result
    codes: Set[str] = settings.codes_for(relative_to_root(path, settings))
    if path.suffix == NOTEBOOK_SUFFIX:
        return _process_notebook(result, text, settings, codes, mode, explicit, path)
    result.text = text
    outcome = _check(result, text, settings, codes, mode, path=path)
    if outcome is not None:
        result.diagnostics = outcome.remaining
        result.fixed = outcome.fixed
        if outcome.text != text:
            result.fixed_text = outcome.text
            if mode.diff:
                result.diff = "".join(
                    difflib.unified_diff(
                        text.splitlines(keepends=True),
                        outcome.text.splitlines(keepends=True),
                        fromfile=f"a/{name}",
                        tofile=f"b/{name}",
                    )
                )
    return result


def _check(result: FileResult, text: str, settings: Settings, codes: Set[str], mode: Mode,
           describe: Callable[[ParseError], str] = str, path: Optional[Path] = None) -> Optional[FixOutcome]:
    """Check (and with ``mode.fixing`` fix) a module text; None, with the problem in ``result``, when
    it cannot be checked."""

    def check(current: str) -> List[Diagnostic]:
        return check_text(current, result.name, settings, codes, path=path, project_root=settings.root)

    try:
        if not mode.fixing:
            return FixOutcome(text, remaining=check(text))
        outcome = fix_text(text, check, mode.unsafe)
    except ParseError as problem:
        result.errors.append(describe(problem))
        return None
    except InternalError as problem:
        result.internal_errors.append(f"internal error in tflint-perf: {problem} (please report this)")
        return None
    if outcome.reverted:
        result.internal_errors.append(outcome.reverted + " (please report this)")
    return outcome


def _process_notebook(result: FileResult, text: str, settings: Settings, codes: Set[str], mode: Mode,
                      explicit: bool, path: Optional[Path] = None) -> FileResult:
    """A notebook's code cells are checked as one module; findings and fixes go back to their cells.

    ``result.text`` stays None: the output's source snippets are rows of a file, not of a cell.
    """
    if not may_have_findings(text):
        return result
    try:
        notebook = Notebook(text)
    except NotebookError as problem:
        result.errors.append(str(problem))
        return result
    if not notebook.is_python:
        if explicit:
            result.notes.append(f"a {notebook.language} notebook, not Python: nothing to check")
        return result
    outcome = _check(result, notebook.module, settings, codes, mode, describe=notebook.describe_parse_error, path=path)
    if outcome is None:
        return result
    result.diagnostics = notebook.in_cells(outcome.remaining, outcome.text)
    result.fixed = notebook.in_cells(outcome.fixed, notebook.module)
    if outcome.text != notebook.module:
        try:
            sources = notebook.changed_sources(outcome.text)
            result.fixed_text = notebook.with_sources(sources)
        except NotebookError as problem:
            result.internal_errors.append(f"{problem} (please report this)")
            unfixed = _check(result, notebook.module, settings, codes, Mode(), path=path)
            result.diagnostics = notebook.in_cells(unfixed.remaining, notebook.module) if unfixed else []
            result.fixed = []
            return result
        if mode.diff:
            result.diff = notebook.diff(sources, result.name)
    return result


def _position(d: Diagnostic):
    return (d.location.row, d.location.column, d.code)
