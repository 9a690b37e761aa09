"""``tflint_perf.text.positions`` against LibCST's ``PositionProvider``: the same range for every node."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from tests.test_walk import CORPUS
from tflint_perf.text import positions as positions_module
from tflint_perf.text.positions import Positions, locate

VARIANTS = {
    "as is": lambda text: text,
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "no final newline": lambda text: text.rstrip("\n"),
    "unicode before": lambda text: "ξ = 'ünïcödé 😀'  # wide characters count as one column\n" + text,
}


# Every text in every variant, except the largest (whole source files): those as they are. The
# variants' edge cases (CRLF, no final newline, wide characters) are as well covered by the hundreds
# of small texts, and the large ones x4 were most of the suite's time.
LARGE = 8000
CASES = [(index, variant) for index, text in enumerate(CORPUS) for variant in VARIANTS
         if len(text) <= LARGE or variant == "as is"]


@pytest.mark.parametrize("index,variant", CASES)
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


# -- locate: only the statements that hold the nodes asked for -------------------------------------------
def _code_nodes(module: cst.Module):
    """Nodes a finding or a fix can be anchored on (names, calls, literals, arguments, statements)."""
    kinds = (cst.Name, cst.Call, cst.Attribute, cst.Integer, cst.Arg, cst.SimpleStatementLine, cst.BaseCompoundStatement)
    found, stack = [], [module]
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            found.append(node)
        stack.extend(node.children)
    return found


def _whole_module_forbidden(monkeypatch):
    def refuse(module):
        raise AssertionError("fell back to generating the whole module")

    monkeypatch.setattr(positions_module, "_whole_module", refuse)


@pytest.mark.parametrize("index,variant", CASES)
def test_locate_gives_the_whole_modules_offsets_from_only_the_statements_it_needs(index, variant, monkeypatch):
    text = VARIANTS[variant](CORPUS[index])
    module = cst.parse_module(text)
    everything = Positions(module)
    nodes = _code_nodes(module)
    _whole_module_forbidden(monkeypatch)
    for sample in (nodes, nodes[::7], nodes[-1:]):
        found = locate(module, text, sample)
        assert all(found[id(node)] == everything.offsets(node) for node in sample)
    if len(module.body) > 1:  # one node: only its own top-level statement is generated
        assert len(locate(module, text, nodes[-1:])) < len(everything)


def _offsets_agree(text: str, tree=None) -> None:
    module = cst.parse_module(text)
    everything = Positions(module)
    nodes = _code_nodes(module)
    found = locate(module, text, nodes, tree)
    assert all(found[id(node)] == everything.offsets(node) for node in nodes)


@pytest.mark.parametrize(
    "text",
    [
        "import tensorflow as tf\n@(\n    tf.function\n)\ndef f(x):\n    return x\n",  # `@` a line above its name
        "import tensorflow as tf\nx = tf.constant(1)",  # no final newline
        "import tensorflow as tf\n\x0c\nx = tf.constant(1)\n",  # a form feed: a line break to str.splitlines only
        "import tensorflow as tf\rx = tf.constant(1)\r\ry = 2\r",  # old Mac line ends
        "# header\n\n# leading\n@tf.function\n# between\n@other\n\ndef f():\n    pass\n# footer\n",
        "x = 1; y = f(\n  2\n); z = 3\nif x: a(); b()\nclass C: pass\n",
        "x = '''\nline\n'''\ny = (\n1)\n",
        "print('a' \\\n  'b')\n",
        "async def f():\n    pass\n\n\nasync def g():\n    await f()\n",
    ],
)
def test_locate_on_unusual_layouts(text):
    _offsets_agree(text)


def test_locate_falls_back_when_the_tree_it_is_given_does_not_fit():
    text = "import tensorflow as tf\nx = tf.constant(1)\n\ny = x + 1\n"
    _offsets_agree(text, ast.parse("a = 1\nb = 2\n"))  # another text's tree
    _offsets_agree(text, ast.parse("\n\n" + text))  # the right statements on the wrong lines
    _offsets_agree(text, ast.parse(text + "z = 3\n"))  # one statement more


def test_locate_falls_back_when_python_cannot_parse_what_libcst_can(monkeypatch):
    def refuse(*args, **kwargs):
        raise SyntaxError("syntax newer than this Python")

    monkeypatch.setattr(ast, "parse", refuse)
    _offsets_agree("import tensorflow as tf\nx = tf.constant(1)\n")


def test_nodes_in_whitespace_fall_back_to_the_whole_module():
    text = "x = f(a, b)\n"
    module = cst.parse_module(text)
    comma = module.body[0].body[0].value.args[0].comma
    assert locate(module, text, [comma])[id(comma)] == Positions(module).offsets(comma)
