"""Between the engine's places and the protocol's: positions, diagnostics, text edits.

The engine counts rows from 1 and columns from 1 in characters (code points); the protocol counts
both from 0, columns in the units the client negotiated (UTF-16 unless it asked for UTF-8 or
UTF-32). Lines end at ``\\n``, ``\\r\\n`` or ``\\r``, as both the engine (``LineIndex``) and the
protocol say (never at the other breaks ``str.splitlines`` knows).
"""

from __future__ import annotations

import difflib
from typing import List, Optional, Tuple

from lsprotocol import types

from tflint_perf.faces.output import DOCS_URL
from tflint_perf.text.diagnostics import INPUT_ERROR_CODES, Diagnostic, Location
from tflint_perf.text.source import LineIndex

SOURCE = "tflint-perf"
CONFIG_ERROR_CODE = "TFP000"


class Page:
    """One text's positions in the client's units."""

    def __init__(self, text: str, encoding: str = types.PositionEncodingKind.Utf16) -> None:
        self.text = text
        self.index = LineIndex(text)
        self.encoding = encoding

    def _units(self, chunk: str) -> int:
        if self.encoding == types.PositionEncodingKind.Utf8:
            return len(chunk.encode("utf-8", "surrogatepass"))
        if self.encoding == types.PositionEncodingKind.Utf32:
            return len(chunk)
        return len(chunk) + sum(1 for char in chunk if ord(char) > 0xFFFF)

    def position(self, row: int, column: int) -> types.Position:
        """A 1-based row and 0-based column in characters, in the client's units."""
        if row > len(self.index.starts):
            row, column = len(self.index.starts), len(self.index.line(len(self.index.starts)))
        line = self.index.line(row)
        return types.Position(line=row - 1, character=self._units(line[:column]))

    def at_location(self, location: Location) -> types.Position:
        return self.position(location.row, location.column - 1)

    def at_offset(self, offset: int) -> types.Position:
        return self.position(*self.index.position(min(offset, len(self.text))))

    def offset(self, position: types.Position) -> int:
        """The offset of a client position (past the end of a line: its end)."""
        row = position.line + 1
        if row > len(self.index.starts):
            return len(self.text)
        line = self.index.line(row).rstrip("\r\n")
        units = 0
        for column, char in enumerate(line):
            if units >= position.character:
                return self.index.starts[row - 1] + column
            units += self._units(char)
        return self.index.starts[row - 1] + len(line)

    def row_of(self, position: types.Position) -> int:
        return position.line + 1


def to_lsp(diagnostic: Diagnostic, page: Page) -> types.Diagnostic:
    """An engine diagnostic as the protocol's: code, link to the rule's page, severity, tags, and
    what code actions need to find it again (``data``: the rule's name and whether a fix exists)."""
    code = diagnostic.code
    error = code in INPUT_ERROR_CODES or code == CONFIG_ERROR_CODE
    tags = [types.DiagnosticTag.Deprecated] if diagnostic.name.startswith("deprecated-") else None
    return types.Diagnostic(
        range=types.Range(start=page.at_location(diagnostic.location), end=page.at_location(diagnostic.end_location)),
        message=diagnostic.message,
        severity=types.DiagnosticSeverity.Error if error else types.DiagnosticSeverity.Warning,
        code=code,
        code_description=None if code == CONFIG_ERROR_CODE else types.CodeDescription(href=DOCS_URL.format(code=code)),
        source=SOURCE,
        tags=tags,
        data={"name": diagnostic.name, "fixable": diagnostic.fix is not None},
    )


def config_error(message: str) -> types.Diagnostic:
    start = types.Position(line=0, character=0)
    return types.Diagnostic(range=types.Range(start=start, end=start), severity=types.DiagnosticSeverity.Error,
                            code=CONFIG_ERROR_CODE, source=SOURCE,
                            message=f"tflint-perf configuration error, no TFP checks ran: {message}")


def minimal_edits(before: str, after: str, page: Optional[Page] = None) -> List[types.TextEdit]:
    """The smallest text edits that turn ``before`` into ``after``: the changed lines, each block
    narrowed to the characters that differ (the rest of the buffer, cursor and folds, untouched)."""
    page = page or Page(before)
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    old_starts = _starts(old)
    new_starts = _starts(new)
    edits = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        start, end = old_starts[i1], old_starts[i2]
        content = after[new_starts[j1]:new_starts[j2]]
        start, end, content = _narrow(before, start, end, content)
        edits.append(types.TextEdit(range=types.Range(start=page.at_offset(start), end=page.at_offset(end)),
                                    new_text=content))
    return edits


def _starts(lines: List[str]) -> List[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def _narrow(text: str, start: int, end: int, content: str) -> Tuple[int, int, str]:
    old = text[start:end]
    prefix = 0
    while prefix < min(len(old), len(content)) and old[prefix] == content[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(content)) - prefix and old[-1 - suffix] == content[-1 - suffix]:
        suffix += 1
    # Never split a \r\n pair: an edit ending between them would leave a lone \r behind.
    while prefix and text[start + prefix - 1] == "\r" and start + prefix < len(text) and text[start + prefix] == "\n":
        prefix -= 1
    while suffix and text[end - suffix] == "\n" and text[end - suffix - 1:end - suffix] == "\r":
        suffix -= 1
    return start + prefix, end - suffix, content[prefix:len(content) - suffix]
