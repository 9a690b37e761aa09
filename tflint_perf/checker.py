"""Checking (and fixing) one file: a pure function of the file and the settings.

``process_file`` returns everything the report needs as plain data, so it can run in a worker
process or be served from a cache without the command line noticing.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Set

from tflint_perf.config import Settings
from tflint_perf.diagnostics import Diagnostic
from tflint_perf.discovery import relative_to_root
from tflint_perf.engine import InternalError, ParseError, check_text
from tflint_perf.fixer import fix_text
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
        source = SourceFile.decode(data)
        try:
            write_atomically(path, source.encode(result.fixed_text), data)
        except WriteError as problem:
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
    result.text = text
    codes: Set[str] = settings.codes_for(relative_to_root(path, settings))

    def check(current: str) -> List[Diagnostic]:
        return check_text(current, name, settings, codes)

    try:
        if not mode.fixing:
            result.diagnostics = check(text)
            return result
        outcome = fix_text(text, check, mode.unsafe)
    except ParseError as problem:
        result.errors.append(str(problem))
        return result
    except InternalError as problem:
        result.internal_errors.append(f"internal error in tflint-perf: {problem} (please report this)")
        return result
    if outcome.reverted:
        result.internal_errors.append(outcome.reverted + " (please report this)")
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


def _position(d: Diagnostic):
    return (d.location.row, d.location.column, d.code)
