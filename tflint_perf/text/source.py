"""Reading and writing source files without losing a byte: encoding, BOM and line endings."""

from __future__ import annotations

import bisect
import codecs
import io
import re
import tokenize
from dataclasses import dataclass
from typing import List, Tuple

_NEWLINE = re.compile(r"\r\n|\r|\n")


class SourceError(Exception):
    """The file cannot be read as Python source; the message says why, ``row`` and ``column``
    (1-based) where, when the problem is at a place in the file."""

    def __init__(self, message: str, row: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.row = row
        self.column = column


@dataclass(frozen=True)
class SourceFile:
    text: str  # decoded, without the BOM
    encoding: str  # as Python would read it; "utf-8-sig" when there is a BOM

    @classmethod
    def decode(cls, data: bytes) -> "SourceFile":
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as error:
            raise SourceError(f"cannot determine the file's encoding: {error}", _declaration_row(data)) from None
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as error:
            row, column = _byte_position(data, error.start, encoding)
            raise SourceError(f"cannot decode the file as {encoding}: {error}", row, column) from None
        except LookupError as error:
            raise SourceError(f"cannot decode the file as {encoding}: {error}", _declaration_row(data)) from None
        if encoding == "utf-8" and data.startswith(codecs.BOM_UTF8):
            encoding = "utf-8-sig"
        if text.startswith("\ufeff"):
            text = text[1:]
        return cls(text, encoding)

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)

    def encode_fixed(self, original: bytes, text: str) -> bytes:
        """The fixed ``text`` as bytes to write in place of ``original`` (the bytes this was decoded from).

        Raises SourceError rather than change a byte the fix did not touch: some encodings map two
        byte sequences to one character (cp932, for one), and re-encoding would rewrite them.
        """
        try:
            if self.encode(self.text) != original:
                raise SourceError(f"the file's {self.encoding} bytes do not survive decoding and re-encoding; "
                                  "the fix was not written")
            return self.encode(text)
        except UnicodeEncodeError as error:
            raise SourceError(f"the fixed text cannot be written as {self.encoding}: {error}") from None


def _declaration_row(data: bytes) -> int:
    """The row of the encoding declaration (or of the bytes Python could not read without one)."""
    lines = data.splitlines()[:2]
    if len(lines) < 2 or b"coding" in lines[0]:
        return 1
    return 2 if b"coding" in lines[1] or _is_utf8(lines[0]) else 1


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _byte_position(data: bytes, offset: int, encoding: str) -> Tuple[int, int]:
    """(row, column), 1-based, of the character at byte ``offset``; the bytes before it decode."""
    if encoding == "utf-8-sig" and data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]  # the codec counts from after the BOM
    before = data[:offset].decode(encoding, errors="replace")
    row, column = LineIndex(before).position(len(before))
    return row, column + 1


def newline_of(text: str) -> str:
    match = _NEWLINE.search(text)
    return match.group(0) if match else "\n"


class LineIndex:
    """Converts between (1-based row, 0-based column) positions and offsets into the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts: List[int] = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def offset(self, row: int, column: int) -> int:
        return self.starts[row - 1] + column if row - 1 < len(self.starts) else len(self.text)

    def position(self, offset: int) -> Tuple[int, int]:
        row = bisect.bisect_right(self.starts, offset)
        return row, offset - self.starts[row - 1]

    def line(self, row: int) -> str:
        start = self.starts[row - 1]
        end = self.starts[row] if row < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")
