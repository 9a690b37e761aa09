"""Suppression comments: ``# noqa[: CODES]`` on a line, ``# tflint-perf: noqa[: CODES]`` for a file."""

from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple

from tflint_perf.text.source import LineIndex

_LINE = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE = re.compile(
    r"#\s*(?P<tool>tflint-perf|flake8)\s*:\s*noqa(?:\s*:\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_CODES = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
_ANY_DIRECTIVE = re.compile(r"noqa", re.IGNORECASE)  # in every directive: without it, no need to tokenize

ALL = None  # a blanket suppression


class Suppressions:
    def __init__(self, text: str) -> None:
        self.lines: Dict[int, Optional[FrozenSet[str]]] = {}
        self.file_codes: Optional[FrozenSet[str]] = frozenset()
        self._file_blanket = False
        # The same, from `# tflint-perf: noqa` only: the directives flake8 does not know about.
        self.own_file_codes: FrozenSet[str] = frozenset()
        self._own_file_blanket = False
        self._text = text
        self._continued: Optional[Dict[int, int]] = None
        if not _ANY_DIRECTIVE.search(text):
            return
        for row, comment, own_line in _comments(text):
            file_match = _FILE.search(comment)
            if file_match and own_line:
                codes = file_match.group("codes")
                own = file_match.group("tool").lower() == "tflint-perf"
                if codes is None:
                    self._file_blanket = True
                    self._own_file_blanket = self._own_file_blanket or own
                else:
                    self.file_codes = (self.file_codes or frozenset()) | _parse(codes)
                    if own:
                        self.own_file_codes |= _parse(codes)
                continue
            match = _LINE.search(comment)
            if match:
                codes = match.group("codes")
                if codes is None:
                    self.lines[row] = ALL
                elif row not in self.lines or self.lines[row] is not ALL:
                    self.lines[row] = (self.lines.get(row) or frozenset()) | _parse(codes)

    def suppressed(self, code: str, row: int) -> bool:
        if self._file_blanket or (self.file_codes and code in self.file_codes):
            return True
        if row in self.lines:
            codes = self.lines[row]
            if codes is ALL or code in codes:  # type: ignore[operator]
                return True
        if self.lines:
            # A line that ends inside a multi-line string (or with a backslash) cannot hold a comment:
            # its `# noqa` goes on the line where the statement can take one, as with ruff and flake8.
            if self._continued is None:
                self._continued = comment_rows(self._text)
            target = self._continued.get(row)
            if target is not None and target in self.lines:
                codes = self.lines[target]
                return codes is ALL or code in codes  # type: ignore[operator]
        return False

    def suppressed_by_own_directive(self, code: str) -> bool:
        """Whether a file-level ``# tflint-perf: noqa`` suppresses ``code`` (for the flake8 plugin,
        where flake8 applies ``# noqa`` and ``# flake8: noqa`` itself)."""
        return self._own_file_blanket or code in self.own_file_codes


def _parse(codes: str) -> FrozenSet[str]:
    return frozenset(code.upper() for code in _CODES.findall(codes))


def _comments(text: str) -> Iterator[Tuple[int, str, bool]]:
    """(row, comment text, whether the comment is alone on its line)."""
    # Rows count "\r\n", "\r" and "\n" alike, as LibCST's positions do (newline=None), and nothing
    # else (str.splitlines would also split at form feeds).
    try:
        found = [
            (token.start[0], token.string, not token.line[: token.start[1]].strip())
            for token in tokenize.generate_tokens(io.StringIO(text, newline=None).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):
        found = []
        for row, line in enumerate(io.StringIO(text, newline=None).read().split("\n"), start=1):
            if "#" in line:
                index = line.index("#")
                found.append((row, line[index:], not line[:index].strip()))
    yield from found


def comment_rows(text: str) -> Dict[int, int]:
    """Row -> the row where a comment about it can go, for the rows that cannot take one: a row
    that ends inside a multi-line string (its comment goes after the string's end) or with a
    backslash continuation (after the continued line). Rows not in the map take their own comment.
    """
    mapping: Dict[int, int] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text, newline=None).readline))
    except (tokenize.TokenError, SyntaxError):
        return mapping
    fstring_starts: List[int] = []
    previous_end: Optional[int] = None  # the end row of the last token, when no line break followed
    for token in tokens:
        kind = token.type
        if kind in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            previous_end = None
            continue
        if kind in (tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            continue
        start, end = token.start[0], token.end[0]
        if previous_end is not None and start > previous_end:  # a backslash continuation
            for row in range(previous_end, start):
                mapping.setdefault(row, start)
        if tokenize.tok_name.get(kind) == "FSTRING_START":  # Python 3.12+: an f-string is many tokens
            fstring_starts.append(start)
        elif tokenize.tok_name.get(kind) == "FSTRING_END" and fstring_starts:
            first = fstring_starts.pop()
            for row in range(first, end):
                mapping[row] = end
        elif end > start:  # a multi-line string
            for row in range(start, end):
                mapping[row] = end
        previous_end = end
    # Follow chains: a string that ends on a line continued by a backslash, and so on.
    for row in sorted(mapping, reverse=True):
        target = mapping[row]
        while target in mapping and mapping[target] != target:
            target = mapping[target]
        mapping[row] = target
    return mapping


def add_noqa(text: str, rows: Dict[int, Iterable[str]]) -> Tuple[str, int]:
    """``text`` with ``# noqa: CODES`` for the codes reported on each row, and how many lines changed.

    A row that cannot take a comment has it where the statement can (``comment_rows``). An existing
    ``# noqa: X`` gets the new codes added to its list; a blanket ``# noqa`` is left alone; another
    comment keeps its place and gets the directive after it. Line endings and everything else are
    kept, so running it again changes nothing.
    """
    moved = comment_rows(text)
    wanted: Dict[int, set] = {}
    for row, codes in rows.items():
        wanted.setdefault(moved.get(row, row), set()).update(code.upper() for code in codes)
    comments = {row: comment for row, comment, _ in _comments(text)}
    index = LineIndex(text)
    edits: List[Tuple[int, int, str]] = []
    for row, codes in sorted(wanted.items()):
        if row - 1 >= len(index.starts):
            continue
        line = index.line(row)
        line_start = index.starts[row - 1]
        comment = comments.get(row)
        match = _LINE.search(comment) if comment else None
        if match is not None:
            present = match.group("codes")
            if present is None:
                continue  # a blanket `# noqa` already covers every code
            missing = sorted(codes - _parse(present))
            if not missing:
                continue
            at = line_start + line.rindex(comment) + match.end("codes")
            edits.append((at, at, ", " + ", ".join(missing)))
        else:
            end = line_start + len(line.rstrip())
            edits.append((end, line_start + len(line), f"  # noqa: {', '.join(sorted(codes))}"))
    for start, end, content in reversed(edits):
        text = text[:start] + content + text[end:]
    return text, len(edits)
