"""Re-parsing an edited text by the top-level statements the edit touched (an editor's buffer).

An editor sends a change a few characters wide, and a language server checks the whole buffer again:
parsing a 1,000-line module with LibCST costs about 110 ms, the largest part of a re-check. Here the
previous parse of the same buffer is kept (``ParsedText``: its text, its tree and where each
top-level statement's code starts), the changed region is found from the common prefix and suffix of
the two texts, and only the statements it touches, widened by one statement on each side, are parsed
again. The new statements are spliced into the previous module's ``body``; every other statement stays
the same object, so what is remembered per statement (positions, node ids) stays valid.

Why the splice is the tree a full parse gives: the chunk starts and ends where a top-level statement
started in the previous text, so the tokenizer is there at the start of a line, outside any bracket or
string, on both sides (the text around the chunk is unchanged). Within the chunk, the parse depends on
the module's detected indentation and newline only, which are checked below. Whatever is unusual falls
back to parsing the whole text: the module's first lines (its header, encoding and newline), the
statement holding its first indented block (which decides ``default_indent``), a chunk that does not
parse on its own (a syntax error is then reported as a full parse reports it), a chunk whose trailing
lines would belong to the next statement, and a text without a final newline. ``tests/test_incremental.py``
holds the splice to ``deep_equals`` a full parse over random edits of real files.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import libcst as cst

from tflint_perf.text.positions import StatementRanges, statement_starts

Parser = Callable[[str], cst.Module]


class ParsedText:
    """A text, its tree, and where each of the tree's top-level statements starts in the text."""

    __slots__ = ("text", "module", "_starts", "reused")

    def __init__(self, text: str, module: cst.Module, starts: Optional[List[int]] = None, reused: int = 0) -> None:
        self.text = text
        self.module = module
        self._starts = starts
        self.reused = reused  # statements kept from the previous tree (0 after a full parse)

    @property
    def starts(self) -> Optional[List[int]]:
        """Offsets of each statement's code (its leading blank and comment lines included); None when
        they cannot be had (the text's ``ast`` does not line up with the tree)."""
        if self._starts is None:
            self._starts = statement_starts(self.module, self.text)
            if self._starts is None:
                self._starts = []  # asked once: a full parse is used for this text's successors
        return self._starts or None


def reparse(previous: Optional[ParsedText], text: str, parse: Parser) -> ParsedText:
    """``text`` parsed, reusing ``previous`` (the same buffer's last parse) where the edit left it alone.
    ``parse`` parses a whole text (and raises what it raises); chunks are parsed by it too."""
    if previous is None or previous.text == text:
        return previous if previous is not None else ParsedText(text, parse(text))
    spliced = _splice(previous, text, parse)
    return spliced if spliced is not None else ParsedText(text, parse(text))


def _splice(previous: ParsedText, text: str, parse: Parser) -> Optional[ParsedText]:
    old, module = previous.text, previous.module
    body = module.body
    if not module.has_trailing_newline or not body or not text.endswith(("\n", "\r")):
        return None
    starts = previous.starts
    if starts is None or len(starts) != len(body):
        return None
    prefix, suffix = _common_ends(old, text)
    changed_end = len(old) - suffix  # the changed region is old[prefix:changed_end], text[prefix:len(text) - suffix]
    ends = starts[1:] + [_footer_start(module, old)]
    first = _index_of(ends, prefix) - 1  # one statement before the one holding the change
    last = _index_of(ends, max(changed_end - 1, prefix)) + 2  # one statement after (exclusive)
    first_block = _first_block(body)
    if first <= 0 or first_block is None or first <= first_block:
        return None  # the header, or the statement that decides the indentation
    to_end = last >= len(body)  # the chunk runs to the end of the text, and its footer is the module's
    last = min(last, len(body))
    delta = len(text) - len(old)
    chunk_start, chunk_end = starts[first], len(text) if to_end else starts[last] + delta
    if chunk_end < len(text) - suffix or chunk_start > prefix:
        return None
    try:
        chunk = parse(text[chunk_start:chunk_end])
    except Exception:  # noqa: BLE001 - a chunk that does not parse alone: the whole text decides
        return None
    if (chunk.footer and not to_end) or not chunk.body or not chunk.has_trailing_newline:
        return None
    if _has_block(chunk.body) and chunk.default_indent != module.default_indent:
        return None
    if chunk.default_newline != module.default_newline:
        return None
    new_statements = list(chunk.body)
    if chunk.header:
        new_statements[0] = new_statements[0].with_changes(
            leading_lines=(*chunk.header, *new_statements[0].leading_lines))
    chunk_starts = statement_starts(chunk.with_changes(body=new_statements, header=()), text[chunk_start:chunk_end])
    if chunk_starts is None:
        return None
    new_module = module.with_changes(body=(*body[:first], *new_statements, *body[last:]),
                                     footer=chunk.footer if to_end else module.footer)
    new_starts = starts[:first] + [chunk_start + s for s in chunk_starts] + [s + delta for s in starts[last:]]
    return ParsedText(text, new_module, new_starts, reused=len(body) - (last - first))


def _common_ends(old: str, new: str) -> Tuple[int, int]:
    """Lengths of the common prefix and of the common suffix (not overlapping it) of two texts."""
    limit = min(len(old), len(new))
    low, high = 0, limit  # bisection with slice comparisons: memcmp speed, not a Python loop per character
    while low < high:
        middle = (low + high + 1) // 2
        if old[:middle] == new[:middle]:
            low = middle
        else:
            high = middle - 1
    prefix = low
    low, high = 0, limit - prefix
    while low < high:
        middle = (low + high + 1) // 2
        if old[len(old) - middle:] == new[len(new) - middle:]:
            low = middle
        else:
            high = middle - 1
    return prefix, low


def _index_of(ends: Sequence[int], offset: int) -> int:
    """The index of the statement whose code holds ``offset`` (the first whose end is past it)."""
    low, high = 0, len(ends)
    while low < high:
        middle = (low + high) // 2
        if ends[middle] > offset:
            high = middle
        else:
            low = middle + 1
    return low


def _footer_start(module: cst.Module, text: str) -> int:
    return len(text) - sum(len(module.code_for_node(line)) for line in module.footer)


def _first_block(body: Sequence[cst.BaseStatement]) -> Optional[int]:
    for position, statement in enumerate(body):
        if _has_block((statement,)):
            return position
    return None


def _has_block(statements: Sequence[cst.BaseStatement]) -> bool:
    return any(isinstance(statement, cst.BaseCompoundStatement) for statement in statements)


class Buffer:
    """One file's last parse and the positions remembered for its statements, kept between its checks
    (a language server's open buffer, ``--fix``'s passes) so that the next text is parsed incrementally."""

    __slots__ = ("last", "statement_ranges")

    def __init__(self) -> None:
        self.last: Optional[ParsedText] = None
        self.statement_ranges: StatementRanges = {}

    def parse(self, text: str, parse: Parser) -> cst.Module:
        """``text``'s tree (``parse`` raises what it raises; the last good parse is then kept)."""
        self.last = reparse(self.last, text, parse)
        return self.last.module

    def starts_for(self, module: cst.Module) -> Optional[List[int]]:
        """Where ``module``'s statements start, when it is this buffer's latest tree."""
        return self.last.starts if self.last is not None and self.last.module is module else None
