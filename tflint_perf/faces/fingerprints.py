"""Fingerprints that follow a finding, not its line number, for the reports CI servers keep between runs.

GitLab's code-quality widget and GitHub's code scanning compare a merge request's findings with the
target branch's by fingerprint: a fingerprint that contained the line number would make every
finding below an inserted line look fixed and new again. So a fingerprint is made of the rule, the
file, and the flagged source text with its whitespace collapsed (re-indenting a block keeps it),
plus which occurrence it is among findings with the same three, counted in source order (two
identical ``.batch(32)`` lines in one file stay apart, and keep their fingerprints when a line is
inserted above both).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Dict, List, Sequence, Tuple

from tflint_perf.text.diagnostics import Diagnostic


@dataclass(frozen=True)
class Fingerprint:
    content: str  # the hash of rule, file and flagged text, 32 hex digits
    occurrence: int  # 1 for the first finding with that hash, in source order

    @property
    def unique(self) -> str:
        """One string for both: what GitLab's ``fingerprint`` needs (unique within a report)."""
        return hashlib.sha256(f"{self.content}:{self.occurrence}".encode("ascii")).hexdigest()[:32]


def flagged_text(d: Diagnostic, sources: Dict[str, str]) -> str:
    """The flagged rows of the source, whitespace collapsed. A notebook's result keeps no source
    text (its rows are counted in cells), so there the message stands for it: messages name the
    code they flag and never a line number."""
    lines = sources.get(d.filename, "").splitlines()
    first, last = d.location.row, max(d.location.row, d.end_location.row)
    if d.cell is not None or not 0 < first <= len(lines):
        return " ".join(d.message.split())
    return " ".join(" ".join(lines[first - 1:last]).split())


def fingerprints(diagnostics: Sequence[Diagnostic], sources: Dict[str, str]) -> List[Fingerprint]:
    """One fingerprint for each diagnostic, in order; ``diagnostics`` in source order per file (as
    the CLI sorts them), so that occurrences are counted top to bottom."""
    seen: Dict[Tuple[str, str, str], int] = {}
    prints = []
    for d in diagnostics:
        basis = (d.code, d.filename.replace("\\", "/"), flagged_text(d, sources))
        seen[basis] = seen.get(basis, 0) + 1
        content = hashlib.sha256(json.dumps(basis).encode("utf-8")).hexdigest()[:32]
        prints.append(Fingerprint(content, seen[basis]))
    return prints
