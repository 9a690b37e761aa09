"""Checking (and fixing) one file: a pure function of the file and the settings.

``process_file`` returns everything the report needs as plain data, so it can run in a worker
process or be served from a cache without the command line noticing.
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from pathlib import Path
from typing import List, Optional, Set, Tuple

from tflint_perf.checking.config import Settings
from tflint_perf.checking.results import FileResult, Mode  # noqa: F401 - defined apart: the cache reads them without LibCST
from tflint_perf.text.diagnostics import INPUT_ERROR_CODES, IO_ERROR, SYNTAX_ERROR, Diagnostic, Location, input_error
from tflint_perf.checking.discovery import relative_to_root
from tflint_perf.checking.engine import check_text
from tflint_perf.text.parsing import InternalError, ParseError, parse
from tflint_perf.checking.workspace import workspace_for
from tflint_perf.fixes.fixer import FixOutcome, fix_text
from tflint_perf.text.noqa import Suppressions
from tflint_perf.text.notebook import NOTEBOOK_SUFFIX, Notebook, NotebookError, load_document
from tflint_perf.text.prefilter import may_have_findings
from tflint_perf.text.source import SourceError, SourceFile
from tflint_perf.fixes.writer import WriteError, write_atomically


def unreadable(name: str, path: Path, settings: Settings, message: str) -> FileResult:
    """The result for a file that cannot be read: a TFP001 finding at its start, when selected."""
    result = FileResult(name)
    _report(result, settings.codes_for(relative_to_root(path, settings)), IO_ERROR, message)
    return result


def process_file(path: Path, name: str, settings: Settings, mode: Mode, explicit: bool) -> FileResult:
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        return unreadable(name, path, settings, "is a directory")
    except FileNotFoundError:
        return unreadable(name, path, settings, "no such file or directory")
    except OSError as problem:
        return unreadable(name, path, settings, f"cannot read file: {problem.strerror or problem}")
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
    codes: Set[str] = settings.codes_for(relative_to_root(path, settings))
    try:
        source = SourceFile.decode(data)
    except SourceError as problem:
        _report(result, codes, IO_ERROR, str(problem), problem.row, problem.column)
        return result
    return process_text(source.text, name, path, settings, mode, explicit, result)


def process_text(text: str, name: str, path: Path, settings: Settings, mode: Mode, explicit: bool = True,
                 result: Optional[FileResult] = None, in_project: bool = True) -> FileResult:
    """``process_bytes`` for a text already decoded (an editor's buffer: the language server).
    ``in_project=False`` checks the text alone, with no module of a project around it (an editor's
    untitled buffer: ``path`` is only its name)."""
    result = result if result is not None else FileResult(name)
    codes: Set[str] = settings.codes_for(relative_to_root(path, settings))
    if not text.strip():
        if explicit:
            result.notes.append("file is empty, nothing to check")
        return result
    if path.suffix == NOTEBOOK_SUFFIX:
        return _process_notebook(result, text, settings, codes, mode, explicit, path if in_project else None)
    result.text = text
    outcome = _check(result, text, settings, codes, mode, path if in_project else None)
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


def _report(result: FileResult, codes: Set[str], kind: Tuple[str, str], message: str, row: int = 1,
            column: int = 1, text: Optional[str] = None, cell: Optional[int] = None,
            in_cell: Optional[Location] = None, file_location: Optional[Location] = None) -> None:
    """Add a TFP001/TFP002 finding, unless its code is not selected or ``# noqa`` in ``text`` (the
    source it is on) suppresses it. ``in_cell``: its position in the cell, when ``row``/``column``
    are counted in the cell's Python text."""
    if kind[0] not in codes or text is not None and Suppressions(text).suppressed(kind[0], row):
        return
    diagnostic = input_error(kind, message, result.name, row, column, cell)
    if in_cell is not None or file_location is not None:
        location = in_cell or diagnostic.location
        diagnostic = replace(diagnostic, location=location, end_location=location,
                             file_location=file_location, file_end_location=file_location)
    result.diagnostics.append(diagnostic)


def _syntax_message(problem: ParseError) -> str:
    return f"SyntaxError: {problem.reason}" if problem.row is not None else problem.reason


def _check(result: FileResult, text: str, settings: Settings, codes: Set[str], mode: Mode,
           path: Optional[Path] = None) -> Optional[FixOutcome]:
    """Check (and with ``mode.fixing`` fix) a module text; None, with the problem in ``result``, when
    it cannot be checked."""
    try:
        return _run(result, text, settings, codes, mode, path)
    except ParseError as problem:
        _report(result, codes, SYNTAX_ERROR, _syntax_message(problem), problem.row or 1, problem.column or 1, text)
        return None


def _run(result: FileResult, text: str, settings: Settings, codes: Set[str], mode: Mode,
         path: Optional[Path] = None) -> Optional[FixOutcome]:
    """As ``_check``, but a text that does not parse raises ParseError."""

    def check(current: str) -> List[Diagnostic]:
        if path is None:
            return check_text(current, result.name, settings, codes)
        return workspace_for(path, settings.root).check_text(current, result.name, settings, codes, path=path)

    try:
        if SYNTAX_ERROR[0] in codes and not codes - INPUT_ERROR_CODES and may_have_findings(text):
            _parse_for_syntax_errors(text)  # no rule to run, but syntax errors are asked for
        if not mode.fixing:
            return FixOutcome(text, remaining=check(text))
        outcome = fix_text(text, check, mode.unsafe)
    except InternalError as problem:
        result.internal_errors.append(f"internal error in tflint-perf: {problem} (please report this)")
        return None
    if outcome.reverted:
        result.internal_errors.append(outcome.reverted + " (please report this)")
    return outcome


def _parse_for_syntax_errors(text: str) -> None:
    """Parse ``text`` only for its syntax errors (ParseError); anything else the parser raises is
    its bug, an InternalError, as the engine treats it when rules run."""
    try:
        parse(text)
    except ParseError:
        raise
    except Exception as error:  # noqa: BLE001 - reported with the file's name, never a crash
        raise InternalError(f"{type(error).__name__}: {error}") from error


def _process_notebook(result: FileResult, text: str, settings: Settings, codes: Set[str], mode: Mode,
                      explicit: bool, path: Optional[Path] = None) -> FileResult:
    """A notebook's code cells are checked as one module; findings and fixes go back to their cells.

    A cell that does not parse is reported (TFP002, with its cell) and left out; the others are
    still one module. ``result.text`` stays None: the output's source snippets are rows of a file,
    not of a cell.
    """
    try:
        if not may_have_findings(text):
            load_document(text)  # a broken notebook is reported whatever it is about
            return result
        notebook = Notebook(text)
    except NotebookError as problem:
        _report(result, codes, IO_ERROR, str(problem), problem.row, problem.column)
        return result
    if not notebook.is_python:
        if explicit:
            result.notes.append(f"a {notebook.language} notebook, not Python: nothing to check")
        return result
    try:
        outcome = _run(result, notebook.module, settings, codes, mode, path)
    except ParseError:
        outcome = _without_broken_cells(result, notebook, settings, codes, mode, path)
    if outcome is None:
        return result
    errors = result.diagnostics  # the cells that do not parse
    result.diagnostics = sorted(errors + notebook.in_cells(outcome.remaining, outcome.text), key=_position)
    result.fixed = notebook.in_cells(outcome.fixed, notebook.module)
    if outcome.text != notebook.module:
        try:
            sources = notebook.changed_sources(outcome.text)
            result.fixed_text = notebook.with_sources(sources)
        except NotebookError as problem:
            result.internal_errors.append(f"{problem} (please report this)")
            try:
                unfixed = _run(result, notebook.module, settings, codes, Mode(), path)
            except ParseError:
                unfixed = None
            remaining = notebook.in_cells(unfixed.remaining, notebook.module) if unfixed else []
            result.diagnostics = sorted(errors + remaining, key=_position)
            result.fixed = []
            result.fixed_text = None
            return result
        if mode.diff:
            result.diff = notebook.diff(sources, result.name)
    return result


def _without_broken_cells(result: FileResult, notebook: Notebook, settings: Settings, codes: Set[str],
                          mode: Mode, path: Optional[Path] = None) -> Optional[FixOutcome]:
    """Report each cell that does not parse (TFP002) and check the module the other cells make."""
    broken = notebook.cells_that_do_not_parse()
    for cell, problem in broken:
        row, column = problem.row or 1, problem.column or 1
        in_cell = notebook.cell_location(cell, row, column)
        _report(result, codes, SYNTAX_ERROR, _syntax_message(problem), row, column, cell.python, cell.number,
                in_cell, notebook.file_location(cell.number, in_cell))
    notebook.without([cell.number for cell, _ in broken])
    try:
        return _run(result, notebook.module, settings, codes, mode, path)
    except ParseError as problem:  # the cells parse one by one but not together, or the whole is too large
        rows = notebook.rows(notebook.module)
        target = rows[problem.row] if problem.row is not None and 0 < problem.row < len(rows) else None
        if target is None:
            _report(result, codes, SYNTAX_ERROR, _syntax_message(problem))
        else:
            number, row = target
            cell = next(cell for cell in notebook.cells if cell.number == number)
            in_cell = notebook.cell_location(cell, row, problem.column or 1)
            _report(result, codes, SYNTAX_ERROR, _syntax_message(problem), row, problem.column or 1, cell.python,
                    number, in_cell, notebook.file_location(number, in_cell))
        return None


def _position(d: Diagnostic):
    return (d.cell or 0, d.location.row, d.location.column, d.code)
