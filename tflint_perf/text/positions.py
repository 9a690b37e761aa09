"""Where nodes are in the text: LibCST's ``PositionProvider`` ranges, at a fraction of the cost.

``MetadataWrapper.resolve(PositionProvider)`` generates the module's code with a state that splits
every token on newlines and builds two ``CodePosition`` objects per node, and then (inside
``resolve``) walks the whole tree once more with an empty batch of visitors. Here the code is
generated once with a state that only counts characters; a node's range is kept as two offsets and
turned into (line, column) when asked for. The ranges are the ones ``PositionProvider`` gives
(the same ``record_syntactic_position`` hooks decide them); ``tests/test_positions.py`` compares
the two on real code.

Only the statements that hold a finding need their code generated at all: :func:`locate` finds
where each top-level statement starts from Python's own ``ast`` (several times cheaper than
generating the module's code), generates only the statements it needs, each from its known start,
and checks that each one's code is the text found there; anything unexpected falls back to
generating the whole module.
"""

from __future__ import annotations

import ast
import warnings
from typing import Collection, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange

from tflint_perf.text.walk import owning_statements
from tflint_perf.text.source import LineIndex


Offsets = Dict[int, Tuple[int, int]]  # id(node) -> (start, end) in the text; ids: CSTNode's __hash__ is slow


class _OffsetCodegenState(CodegenState):
    def __init__(self, module: cst.Module, offset: int = 0) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = offset
        self.ranges: Offsets = {}
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
        key = id(node)
        if key not in self.ranges:  # a syntactic range recorded inside wins
            self.ranges[key] = (start, self.offset)

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
        start = ranges[id(self.start_node)][0] if self.start_node is not None else self.start
        end = ranges[id(self.end_node)][1] if self.end_node is not None else self.state.offset
        ranges[id(self.node)] = (start, end)


class Positions(Mapping[cst.CSTNode, CodeRange]):
    """Node → ``CodeRange`` (1-based lines, 0-based columns), as ``PositionProvider`` has them."""

    def __init__(self, module: cst.Module) -> None:
        state = _OffsetCodegenState(module)
        module._codegen(state)
        self._ranges = state.ranges
        self._index = LineIndex("".join(state.tokens) + state.popped)
        self._module = module

    def offsets(self, node: cst.CSTNode) -> Tuple[int, int]:
        """Start and end of ``node`` as offsets into the module's text."""
        return self._ranges[id(node)]

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        start, end = self._ranges[id(node)]
        return CodeRange(CodePosition(*self._index.position(start)), CodePosition(*self._index.position(end)))

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(_nodes_of(self._module, self._ranges))

    def __len__(self) -> int:
        return len(self._ranges)


# Per statement of a buffer's latest tree: id(statement) -> (the statement, its code, its nodes' offsets from
# its own start). An unchanged statement is the same object after an incremental re-parse (text/incremental.py),
# so its offsets are found again by adding where it now starts.
StatementRanges = Dict[int, Tuple[cst.CSTNode, str, Offsets]]


def locate(module: cst.Module, text: str, nodes: Collection[cst.CSTNode], tree: Optional[ast.Module] = None,
           starts: Optional[Sequence[int]] = None, known: Optional[StatementRanges] = None) -> Offsets:
    """``id(node) -> (start, end)`` offsets into ``text`` (the module's source) for at least ``nodes``.

    ``tree`` is ``text``'s ``ast`` when the caller has it (flake8 does); else it is parsed here, unless
    ``starts`` (each top-level statement's start, from an incremental parse) are given. ``known``, kept by
    the caller between the checks of one buffer, remembers the statements generated so far; it is
    pruned to the statements of ``module``.
    """
    if starts is None:
        starts = _statement_starts(module, text, LineIndex(text), tree)
    if starts is None or len(starts) != len(module.body):
        return _whole_module(module)
    wanted = {id(node) for node in nodes}
    remembered = known if known is not None else {}
    ranges: Offsets = {}
    body = module.body
    for position, statement in enumerate(body):
        entry = remembered.get(id(statement))
        if entry is None or entry[0] is not statement or not wanted:
            continue
        here = wanted.intersection(entry[2])
        if here and text.startswith(entry[1], starts[position]):
            start = starts[position]
            for key in here:
                node_start, node_end = entry[2][key]
                ranges[key] = (node_start + start, node_end + start)
            wanted -= here
    owners = owning_statements(body, wanted) if wanted else {}
    if owners is None:
        return _whole_module(module)
    last = len(body) - 1
    for position in sorted(set(owners.values())):
        statement = body[position]
        state = _OffsetCodegenState(module, 0)
        statement._codegen(state)
        code = "".join(state.tokens)
        if position == last and not module.has_trailing_newline and code.endswith(module.default_newline):
            code = code[: -len(module.default_newline)]  # the module's codegen pops it, as here
        if not text.startswith(code, starts[position]):
            return _whole_module(module)
        start = starts[position]
        ranges.update((key, (node_start + start, node_end + start)) for key, (node_start, node_end) in state.ranges.items())
        remembered[id(statement)] = (statement, code, state.ranges)
    if known is not None:
        present = {id(statement): statement for statement in body}
        for key in [key for key, entry in known.items() if present.get(key) is not entry[0]]:
            del known[key]
    return ranges


def statement_starts(module: cst.Module, text: str, tree: Optional[ast.Module] = None) -> Optional[List[int]]:
    """Where each of ``module``'s top-level statements starts in ``text`` (its source), its leading blank
    and comment lines included; None when that cannot be told from Python's ``ast`` of the text."""
    return _statement_starts(module, text, LineIndex(text), tree)


def _whole_module(module: cst.Module) -> Offsets:
    state = _OffsetCodegenState(module)
    module._codegen(state)
    return state.ranges


def _statement_starts(module: cst.Module, text: str, index: LineIndex, tree: Optional[ast.Module]
                      ) -> Optional[List[int]]:
    """Where each top-level statement's code (its leading blank and comment lines included) starts, or
    None when Python's ``ast`` of the text cannot be had or does not line up with the module."""
    if tree is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code are not ours to print
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):  # LibCST accepts what Python may not
                return None
    python = tree.body
    starts: List[int] = []
    position = 0
    for statement in module.body:
        if position >= len(python):
            return None
        first = python[position]
        line = first.lineno
        leading = len(statement.leading_lines)
        if isinstance(statement, cst.SimpleStatementLine):
            position += len(statement.body)
        else:
            position += 1
            decorators: Sequence[cst.Decorator] = getattr(statement, "decorators", ())
            python_decorators = getattr(first, "decorator_list", [])
            if decorators:
                if len(python_decorators) != len(decorators):
                    return None
                line = python_decorators[0].lineno  # its expression's line: the `@` line, or the check fails
                leading += len(decorators[0].leading_lines)
        if line - leading < 1 or line - leading > len(index.starts):
            return None
        starts.append(index.offset(line - leading, 0))
    return starts if position == len(python) else None


def _nodes_of(module: cst.Module, ranges: Offsets) -> List[cst.CSTNode]:
    found: List[cst.CSTNode] = []
    stack: List[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if id(node) in ranges:
            found.append(node)
        stack.extend(node.children)
    return found
