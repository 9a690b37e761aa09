"""``tflint_perf.positions`` against LibCST's ``PositionProvider``: the same range for every node."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from tests.test_walk import CORPUS
from tflint_perf.positions import Positions

VARIANTS = {
    "as is": lambda text: text,
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "no final newline": lambda text: text.rstrip("\n"),
    "unicode before": lambda text: "ξ = 'ünïcödé 😀'  # wide characters count as one column\n" + text,
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_positions_are_position_providers(index, variant):
    module = cst.parse_module(VARIANTS[variant](CORPUS[index]))
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module)
    assert len(positions) == len(expected)
    assert all(positions[node] == expected[node] for node in expected)


def test_offsets_point_into_the_text():
    text = "import tensorflow as tf\r\nds = tf.data.Dataset.range(3)\r\n"
    module = cst.parse_module(text)
    call = module.body[1].body[0].value
    start, end = Positions(module).offsets(call)
    assert text[start:end] == "tf.data.Dataset.range(3)"
