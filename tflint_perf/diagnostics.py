"""Findings as rules produce them (on CST nodes) and diagnostics as users see them (with positions)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

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
    where: str  # "before" | "after" | "replace"
    content: str
    indented: bool = False


@dataclass(frozen=True)
class FixPlan:
    applicability: str  # SAFE | UNSAFE
    message: str
    edits: Tuple[NodeEdit, ...]
    imports: Tuple[str, ...] = ()  # whole import statements the edits rely on
    # The same fix broken over lines, used instead of ``edits`` when these would make a line longer
    # than the file allows (tflint_perf/layout.py).
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
