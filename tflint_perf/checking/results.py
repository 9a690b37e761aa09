"""What checking one file produces, as plain data: ``FileResult`` and the ``Mode`` it ran in.

Apart from ``checker.py`` so that the results cache, the runner and the command line can read and
report cached results without importing the engine (and LibCST, and the rules): a warm run needs
nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from tflint_perf.text.diagnostics import INPUT_ERROR_CODES, Diagnostic


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
    # Findings, with a file that cannot be read or parsed among them (TFP001, TFP002).
    diagnostics: List[Diagnostic] = field(default_factory=list)
    fixed: List[Diagnostic] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)  # a fix that cannot be written: reported, exit 1
    internal_errors: List[str] = field(default_factory=list)  # ours: reported, exit 2
    notes: List[str] = field(default_factory=list)
    diff: Optional[str] = None
    text: Optional[str] = None  # the checked text, for snippets in the output
    fixed_text: Optional[str] = None  # set when fixes changed the text

    @property
    def input_errors(self) -> List[Diagnostic]:
        """The findings that say the file (or a notebook cell) could not be read or parsed."""
        return [d for d in self.diagnostics if d.code in INPUT_ERROR_CODES]
