"""Findings as rules produce them (on CST nodes) and diagnostics as users see them (with positions)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Tuple

if TYPE_CHECKING:  # only annotations: reading diagnostics (a cached result) needs no LibCST
    import libcst as cst

SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True)
class NodeEdit:
    """An edit anchored on a node: insert ``content`` before/after it, or replace it.

    With ``indented``, every line break in ``content`` is followed by the indentation of the line
    the edit is on (content written as if that line started at column 0). An insertion after a
    node that starts with a line break goes after a comment ending that line, never before it.
    """

    node: cst.CSTNode
    where: str  # "before" | "after" | "replace" | "delete-line" (the node and the rest of its lines, when alone on them)
    content: str
    indented: bool = False


@dataclass(frozen=True)
class FixPlan:
    applicability: str  # SAFE | UNSAFE
    message: str
    edits: Tuple[NodeEdit, ...]
    imports: Tuple[str, ...] = ()  # whole import statements the edits rely on
    # The same fix broken over lines, used instead of ``edits`` when these would make a line longer
    # than the file allows (tflint_perf/text/layout.py).
    wrapped: Optional[Tuple[NodeEdit, ...]] = None


@dataclass(frozen=True)
class Finding:
    """What a rule reports: a node range, a message, maybe a fix. Positions come later."""

    code: str
    name: str
    message: str
    start: cst.CSTNode
    end: cst.CSTNode
    fix: Optional[FixPlan] = None


@dataclass(frozen=True)
class Location:
    row: int  # 1-based
    column: int  # 1-based, in characters


@dataclass(frozen=True)
class Edit:
    """A text edit on the decoded source: replace ``text[start:end]`` with ``content``."""

    start: int
    end: int
    content: str
    location: Location
    end_location: Location


@dataclass(frozen=True)
class Fix:
    applicability: str
    message: str
    edits: Tuple[Edit, ...]
    imports: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    message: str
    filename: str
    location: Location
    end_location: Location
    fix: Optional[Fix] = None
    cell: Optional[int] = field(default=None, compare=False)
    # For a notebook finding (rows counted in its cell): where it is in the .ipynb file's own
    # text, for the formats that annotate files (github, sarif).
    file_location: Optional[Location] = field(default=None, compare=False)
    file_end_location: Optional[Location] = field(default=None, compare=False)


IO_ERROR = ("TFP001", "io-error")
SYNTAX_ERROR = ("TFP002", "syntax-error")
INPUT_ERROR_CODES = frozenset({IO_ERROR[0], SYNTAX_ERROR[0]})


def input_error(kind: Tuple[str, str], message: str, filename: str, row: int = 1, column: int = 1,
                cell: Optional[int] = None) -> Diagnostic:
    """A diagnostic for a file (or a notebook cell) that could not be read or parsed."""
    location = Location(row, column)
    return Diagnostic(kind[0], kind[1], message, filename, location, location, cell=cell)
