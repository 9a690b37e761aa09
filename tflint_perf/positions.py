"""Where nodes are in the text: LibCST's ``PositionProvider`` ranges, at a fraction of the cost.

``MetadataWrapper.resolve(PositionProvider)`` generates the module's code with a state that splits
every token on newlines and builds two ``CodePosition`` objects per node, and then (inside
``resolve``) walks the whole tree once more with an empty batch of visitors. Here the code is
generated once with a state that only counts characters; a node's range is kept as two offsets and
turned into (line, column) when asked for. The ranges are the ones ``PositionProvider`` gives
(the same ``record_syntactic_position`` hooks decide them); ``tests/test_positions.py`` compares
the two on real code.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Mapping, Optional, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange

from tflint_perf.source import LineIndex


class _OffsetCodegenState(CodegenState):
    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self.ranges: Dict[cst.CSTNode, Tuple[int, int]] = {}
        self.popped = ""
        self._starts: List[int] = []

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        # The offset stays where it was, as PositionProvider's line and column do.
        if self.tokens:
            self.popped = self.tokens.pop()

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if node not in self.ranges:  # a syntactic range recorded inside wins
            self.ranges[node] = (start, self.offset)

    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None, end_node: Optional[cst.CSTNode] = None
    ) -> "_Record":
        return _Record(self, node, start_node, end_node)


class _Record:
    """The context manager LibCST's codegen wraps a node's syntactic part in (a class: cheaper than a generator)."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _OffsetCodegenState, node: cst.CSTNode, start_node: Optional[cst.CSTNode],
                 end_node: Optional[cst.CSTNode]) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node
        self.start = 0

    def __enter__(self) -> None:
        self.start = self.state.offset

    def __exit__(self, *exc: object) -> None:
        ranges = self.state.ranges
        start = ranges[self.start_node][0] if self.start_node is not None else self.start
        end = ranges[self.end_node][1] if self.end_node is not None else self.state.offset
        ranges[self.node] = (start, end)


class Positions(Mapping[cst.CSTNode, CodeRange]):
    """Node → ``CodeRange`` (1-based lines, 0-based columns), as ``PositionProvider`` has them."""

    def __init__(self, module: cst.Module) -> None:
        state = _OffsetCodegenState(module)
        module._codegen(state)
        self._ranges = state.ranges
        self._index = LineIndex("".join(state.tokens) + state.popped)

    def offsets(self, node: cst.CSTNode) -> Tuple[int, int]:
        """Start and end of ``node`` as offsets into the module's text."""
        return self._ranges[node]

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        start, end = self._ranges[node]
        return CodeRange(CodePosition(*self._index.position(start)), CodePosition(*self._index.position(end)))

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._ranges)

    def __len__(self) -> int:
        return len(self._ranges)
