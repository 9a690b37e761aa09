"""Where a fix's text goes on the page: line breaks, indentation, comments and line length.

Rules build edits on nodes; this module turns them into text edits that keep the file's layout:

- a line break a rule wrote as ``\\n`` is written in the file's newline style (CRLF, CR);
- an edit marked ``indented`` continues each of its new lines at the indentation of the line it
  is on (a new argument on its own line under the one before it; a call broken at its bracket);
- an insertion that starts a new line leaves no trailing whitespace on the line it breaks, and one
  after a node (``\\n    .prefetch(...)`` in a chain written one op per line) goes after the
  comment ending that line, so the comment stays with its op;
- a fix whose text would make a line longer than the file allows (its longest line, and at least
  88 characters, ruff's and black's default) uses its ``wrapped`` form, broken at a bracket, when
  the rule offers one. A trailing comment does not count: breaking the code would move the
  comment away from what it says (``ds = ds.map(f)  # a long remark`` gets the keyword in place).
"""

from __future__ import annotations

import re
from typing import List, Sequence, Tuple

MIN_LINE_LIMIT = 88

TextEdit = Tuple[int, int, str]  # (start, end, content) on the text
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BARE_LF = re.compile(r"(?<!\r)\n")


def line_limit(text: str) -> int:
    """The longest line a fix may write: the file's own longest line, at least 88 characters."""
    return max([MIN_LINE_LIMIT, *(len(line) for line in _LINE_BREAK.split(text))])


def place(text: str, begin: int, finish: int, content: str, indented: bool, after: bool, newline: str) -> TextEdit:
    """The text edit for one node edit (see the module docstring)."""
    if indented:
        content = _LINE_BREAK.sub(lambda _: newline + indentation(text, begin), content)
    elif newline != "\n" and "\n" in content:
        content = _BARE_LF.sub(newline, content)  # a rule's "\n" in a CRLF or CR file
    if begin == finish and content.startswith(("\n", "\r")):
        end_of_line = _end_of_line(text, finish)
        rest = text[finish:end_of_line]
        if after and rest.strip().startswith("#"):
            begin = finish = end_of_line  # `.batch(64)  # batches` keeps its comment
        while begin > 0 and text[begin - 1] in " \t":
            begin -= 1  # the line broken here keeps no trailing whitespace
    return begin, finish, content


def indentation(text: str, offset: int) -> str:
    """The leading whitespace of the line holding ``offset``."""
    start = _start_of_line(text, offset)
    line = text[start:_end_of_line(text, start)]
    return line[: len(line) - len(line.lstrip(" \t"))]


def too_long(text: str, edits: Sequence[TextEdit], limit: int) -> bool:
    """Whether applying ``edits`` (non-overlapping) makes a line they touch longer than ``limit``."""
    if not edits:
        return False
    ordered = sorted(edits)
    start = _start_of_line(text, ordered[0][0])
    end = _end_of_line(text, ordered[-1][1])
    pieces: List[str] = []
    position = start
    for begin, finish, content in ordered:
        pieces.append(text[position:begin])
        pieces.append(content)
        position = finish
    pieces.append(text[position:end])
    return any(len(_code(line)) > limit for line in _LINE_BREAK.split("".join(pieces)))


def _start_of_line(text: str, offset: int) -> int:
    return max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1


def _end_of_line(text: str, offset: int) -> int:
    ends = [i for i in (text.find("\n", offset), text.find("\r", offset)) if i >= 0]
    return min(ends) if ends else len(text)


def _code(line: str) -> str:
    """``line`` without its trailing comment (quotes followed within the line only)."""
    quote = ""
    index = 0
    while index < len(line):
        char = line[index]
        if quote:
            if char == "\\":
                index += 1
            elif line.startswith(quote, index):
                index += len(quote) - 1
                quote = ""
        elif char in "'\"":
            quote = line[index: index + 3] if line[index: index + 3] in ("'''", '"""') else char
            index += len(quote) - 1
        elif char == "#":
            return line[:index].rstrip()
        index += 1
    return line
