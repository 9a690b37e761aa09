"""The server's conversions, on their own: positions in the client's units and minimal text edits."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st
from lsprotocol import types

from tflint_perf.faces.server.convert import Page, minimal_edits
from tflint_perf.text.diagnostics import Location

TEXT = "import tensorflow as tf\r\nname = '𝔼é'; ds = ds.map(f)\rlast"


def test_positions_in_each_encoding() -> None:
    # `ds` on row 2 comes after one astral character (two UTF-16 units, four UTF-8 bytes) and an é.
    column = TEXT.splitlines()[1].index("ds") + 1
    assert Page(TEXT, types.PositionEncodingKind.Utf32).at_location(Location(2, column)) == types.Position(1, 13)
    assert Page(TEXT, types.PositionEncodingKind.Utf16).at_location(Location(2, column)) == types.Position(1, 14)
    assert Page(TEXT, types.PositionEncodingKind.Utf8).at_location(Location(2, column)) == types.Position(1, 17)
    # A lone \r ends a line, as the protocol says; the text's end is a place too.
    assert Page(TEXT).at_offset(len(TEXT)) == types.Position(2, 4)
    for encoding in (types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf32):
        page = Page(TEXT, encoding)
        for offset in range(len(TEXT) + 1):
            if TEXT[offset - 1:offset + 1] != "\r\n":  # not between the two characters of one line break
                assert page.offset(page.at_offset(offset)) == offset


def apply(text: str, edits) -> str:
    page = Page(text, types.PositionEncodingKind.Utf32)
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:page.offset(edit.range.start)] + edit.new_text + text[page.offset(edit.range.end):]
    return text


def test_an_insertion_is_one_small_edit() -> None:
    before = "a = 1\r\nds = ds.map(f)\r\nb = 2\r\n"
    after = before.replace("map(f)", "map(f, num_parallel_calls=tf.data.AUTOTUNE)")
    edits = minimal_edits(before, after, Page(before, types.PositionEncodingKind.Utf32))
    assert [(e.range.start, e.range.end, e.new_text) for e in edits] == [
        (types.Position(1, 13), types.Position(1, 13), ", num_parallel_calls=tf.data.AUTOTUNE")]


lines = st.lists(st.sampled_from(["x = 1", "ds = ds.map(f)", "# é𝔼", "", "  y", "\r", "\n", "\r\n"]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(lines, lines, st.sampled_from(["\n", "\r\n", "\r"]))
def test_minimal_edits_turn_one_text_into_the_other(first, second, newline) -> None:
    before, after = newline.join(first), newline.join(second)
    assert apply(before, minimal_edits(before, after, Page(before, types.PositionEncodingKind.Utf32))) == after
