"""Applying fixes: text edits on the decoded source, repeated until nothing changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, List, Sequence, Tuple

from tflint_perf.text.diagnostics import SAFE, Diagnostic, Edit
from tflint_perf.text.parsing import ParseError, parse

MAX_PASSES = 10


@dataclass
class FixOutcome:
    text: str
    fixed: List[Diagnostic] = field(default_factory=list)
    remaining: List[Diagnostic] = field(default_factory=list)
    reverted: str = ""  # why a pass was thrown away, if one was


def applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    return diagnostic.fix is not None and (diagnostic.fix.applicability == SAFE or unsafe)


def fix_text(text: str, check: Callable[[str], List[Diagnostic]], unsafe: bool) -> FixOutcome:
    """Apply every applicable fix, re-checking after each pass so nested fixes are not lost.

    A pass whose result does not parse is thrown away (and reported), never written.
    """
    outcome = FixOutcome(text)
    diagnostics = check(text)
    for _ in range(MAX_PASSES):
        candidates = [d for d in diagnostics if applicable(d, unsafe)]
        if not candidates:
            break
        new_text, applied = apply_fixes(text, candidates)
        if new_text == text:
            break
        try:
            parse(new_text)
        except ParseError as error:
            outcome.reverted = f"a fix produced code that does not parse ({error}); it was not applied"
            break
        outcome.fixed.extend(applied)
        text = new_text
        diagnostics = check(text)
    outcome.text = text
    outcome.remaining = diagnostics
    return outcome


def apply_fixes(text: str, diagnostics: Sequence[Diagnostic]) -> Tuple[str, List[Diagnostic]]:
    """Apply the fixes whose edits do not overlap an earlier one; the rest wait for the next pass.

    Identical edits (two fixes adding the same import) are applied once.
    """
    chosen: List[Edit] = []
    applied: List[Diagnostic] = []
    for diagnostic in sorted(diagnostics, key=lambda d: (d.location.row, d.location.column)):
        assert diagnostic.fix is not None
        edits = [e for e in diagnostic.fix.edits if e not in chosen]
        if any(_overlaps(edit, other) for edit in edits for other in chosen):
            continue
        chosen.extend(edits)
        applied.append(diagnostic)
    for edit in sorted(chosen, key=lambda e: (e.start, e.end), reverse=True):
        text = text[: edit.start] + edit.content + text[edit.end:]
    return text, applied


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start == a.end and b.start == b.end:
        return a.start == b.start  # two insertions at one point: order would be arbitrary
    return a.start < b.end and b.start < a.end or (a.start == a.end and b.start < a.start < b.end) or (
        b.start == b.end and a.start < b.start < a.end
    )
