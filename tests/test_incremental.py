"""The incremental re-parse (``text/incremental.py``) against LibCST's full parse of the same text.

A spliced tree that differed from the full parse in any node would make every rule see another module
without a sign of it, so the property is checked on real files (the fixtures, this repository's own
modules) under random edits of the kinds an editor makes and of kinds that break the text; and each way
out to the full parse has an example.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import FIXTURES, REPO
from tflint_perf.checking.config import Settings
from tflint_perf.checking.engine import check_text
from tflint_perf.text.incremental import Buffer, ParsedText, reparse
from tflint_perf.text.parsing import ParseError, parse
from tflint_perf.text.positions import locate

SOURCES: List[Path] = sorted(FIXTURES.glob("*.py")) + sorted((REPO / "tflint_perf" / "checking").glob("*.py"))

SNIPPETS = ["x", "\n", " ", "    ", "\t", "(", ")", "'", '"""', "#", "# note\n", "\n\n", "else:\n", "    y = 1\n",
            "def added():\n    return 1\n", ":", "\\\n", "if flag:\n", "@decorated\n", ";", "pass\n", "\r\n",
            "    # indented comment\n", "class C:\n    pass\n", ""]


def _full(text: str) -> Optional[cst.Module]:
    try:
        return parse(text)
    except ParseError:
        return None


def _reparsed(previous: ParsedText, text: str) -> Optional[ParsedText]:
    try:
        return reparse(previous, text, parse)
    except ParseError:
        return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SOURCES), st.lists(st.tuples(st.floats(0, 1), st.sampled_from([0, 0, 1, 4, 30]),
                                                     st.sampled_from(SNIPPETS)), min_size=1, max_size=6))
def test_a_splice_is_the_full_parse(source: Path, edits) -> None:
    text = source.read_text()
    previous = ParsedText(text, parse(text))
    for where, width, snippet in edits:
        start = int(where * len(text))
        new = text[:start] + snippet + text[start + width:]
        full = _full(new)
        got = _reparsed(previous, new)
        assert (got is None) == (full is None), "the re-parse fails exactly when the full parse does"
        if full is None:
            continue
        assert got.module.deep_equals(full)
        assert got.module.code == full.code
        if got.starts is not None:
            assert got.starts == ParsedText(new, full).starts
        previous, text = got, new


def _module(lines: int) -> str:
    blocks = [f"def step_{n}(images):\n    images = images * {n}\n    return images\n\n\n" for n in range(lines)]
    return "import tensorflow as tf\n\n\n" + "".join(blocks) + "MODEL = step_3\n"


def test_an_edit_in_one_function_keeps_every_other_statement() -> None:
    text = _module(10)
    before = ParsedText(text, parse(text))
    edited = text.replace("images * 5", "images * 50")
    after = reparse(before, edited, parse)
    assert after.reused == len(before.module.body) - 3  # the function and one statement either side
    kept = [s for s in after.module.body if any(s is old for old in before.module.body)]
    assert len(kept) == after.reused
    assert after.module.deep_equals(parse(edited))


def _edited_both_ways(text: str, edit):
    """The edited text re-parsed from ``text``'s parse, and parsed whole; they fail together."""
    new = edit(text)
    full = _full(new)
    got = _reparsed(ParsedText(text, parse(text)), new)
    assert (got is None) == (full is None), "the re-parse fails exactly when the full parse does"
    return got, full


@pytest.mark.parametrize("edit", [
    lambda t: "# a new first line\n" + t,  # the header
    lambda t: t.replace("images * 0", "images * 9"),  # the first indented block decides the indentation
    lambda t: t.replace("    images = images * 5", "\timages = images * 5"),  # inconsistent indentation
    lambda t: t.replace("\n", "\r\n", 1),  # the newline the module is detected with
    lambda t: t[:-1],  # no final newline
])
def test_what_decides_the_whole_module_is_parsed_whole(edit) -> None:
    got, full = _edited_both_ways(_module(10), edit)
    if got is not None:
        assert got.reused == 0
        assert got.module.deep_equals(full)


def test_a_syntax_error_is_reported_as_by_the_full_parse() -> None:
    text = _module(10)
    before = ParsedText(text, parse(text))
    broken = text.replace("images * 6\n", "images * (6\n")
    with pytest.raises(ParseError) as from_full:
        parse(broken)
    with pytest.raises(ParseError) as from_splice:
        reparse(before, broken, parse)
    assert (from_splice.value.row, from_splice.value.column, from_splice.value.reason) == (
        from_full.value.row, from_full.value.column, from_full.value.reason)


def test_comments_above_a_reparsed_statement_stay_its_leading_lines() -> None:
    text = _module(10).replace("def step_5", "# why step 5 differs\n\ndef step_5")
    before = ParsedText(text, parse(text))
    edited = text.replace("images * 4", "images * 40")
    after = reparse(before, edited, parse)
    assert after.reused > 0
    assert after.module.deep_equals(parse(edited))


def test_an_edit_at_the_end_takes_the_new_footer() -> None:
    text = _module(10)
    before = ParsedText(text, parse(text))
    edited = text + "\n# the end\n"
    after = reparse(before, edited, parse)
    assert after.reused > 0
    assert after.module.deep_equals(parse(edited))


def test_positions_after_a_splice_are_those_of_a_full_parse() -> None:
    text = (FIXTURES / "image_classifier_pipeline.py").read_text()
    buffer = Buffer()
    buffer.parse(text, parse)
    cut = text.rindex("\n\n\n")
    edited = text[:cut] + "\n\n\n_edited = 1" + text[cut:]
    module = buffer.parse(edited, parse)
    assert buffer.last is not None and buffer.last.reused > 0
    nodes = [node for statement in module.body for node in (statement,)]
    full = parse(edited)
    assert [locate(module, edited, [n], starts=buffer.starts_for(module), known=buffer.statement_ranges)[id(n)]
            for n in nodes] == [locate(full, edited, [n])[id(n)] for n in full.body]


def test_a_buffer_checks_each_text_as_a_fresh_check_does() -> None:
    text = (FIXTURES / "image_classifier_pipeline.py").read_text()
    settings = Settings()
    buffer = Buffer()
    for number in range(4):
        cut = text.rindex("\n\n\n")
        text = text[:cut] + f"\n\n\n_edit_{number} = {number}" + text[cut:]
        assert check_text(text, "f.py", settings, buffer=buffer) == check_text(text, "f.py", settings)
    assert buffer.last is not None and buffer.last.reused > 0


EDGES = '''import tensorflow as tf


def one(x):
    return x + 1


a = 1
b = 2
c = 3
    # an indented comment before d: a block ending above it owns it
d = 4
e = 5
f = 6
'''


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("c = 3\n", "def c():\n    return 3\n"),  # a new block takes the indented comment
    lambda t: t.replace("    # an indented", "    \n    # an indented").replace("b = 2\n", "if b:\n    pass\n"),
    lambda t: t.replace("c = 3\n", "@decorated\ndef c():\n    return 3\n"),
    lambda t: t.replace("c = 3\n", "c = 3; cc = 4\n"),
    lambda t: t.replace("c = 3\n", "try:\n    pass\nfinally:\n    pass\n"),
    lambda t: t.replace("c = 3\n", "# a comment, then blank lines\n\n\nc = 3\n"),
    lambda t: t.replace("e = 5\n", "e = 5\n\\\n"),
    lambda t: t.replace("c = 3\n", 'c = "three" b"3"\n'),  # LibCST builds the node, then refuses it
])
def test_edits_at_a_chunk_edge_parse_as_the_full_parse(edit) -> None:
    got, full = _edited_both_ways(EDGES, edit)
    if got is not None:
        assert got.module.deep_equals(full) and got.module.code == full.code
