"""Suppression comments: ``# noqa[: CODES]`` on a line, ``# tflint-perf: noqa[: CODES]`` for a file."""

from __future__ import annotations

import io
import re
import tokenize
from typing import Dict, FrozenSet, Iterator, Optional, Tuple

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
