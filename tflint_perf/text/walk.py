"""A read-only traversal that calls a ``CSTVisitor``'s hooks in LibCST's own order, several times faster.

``node.visit(visitor)`` rebuilds every node it passes (``_visit_and_replace_children`` constructs and
validates a copy, even for a read-only ``CSTVisitor``) and looks each hook up by formatting its name,
for every node and every field. The collector only reads, so :func:`walk` reads the fields in place:
in the order LibCST visits them (learned once per node type from LibCST itself), with the hooks looked
up once per node type, and without entering fields whose declared type holds only whitespace,
comments and punctuation, where no statement or expression can be. ``tests/test_walk.py`` checks on
real code that the collector records exactly the same thing either way.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import typing
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple, Type

import libcst as cst

Hook = Optional[Callable[..., object]]

_TRIVIA = (
    cst.BaseParenthesizableWhitespace, cst.EmptyLine, cst.TrailingWhitespace, cst.Newline, cst.Comment,
    cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.BaseBinaryOp, cst.BaseBooleanOp,
    cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket,
    cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.MaybeSentinel, str, bool, type(None),
)


class _Plan:
    __slots__ = ("visit", "leave", "fields", "unseen")

    def __init__(self, visit: Hook, leave: Hook, fields: Tuple[Tuple[str, Hook, Hook], ...], unseen: Tuple[str, ...]):
        self.visit = visit
        self.leave = leave
        self.fields = fields  # (name, visit_<Type>_<name>, leave_<Type>_<name>), in LibCST's order
        self.unseen = unseen  # fields LibCST has not entered yet (it skips some when empty)


_DISPATCH = ("on_visit", "on_leave", "on_visit_attribute", "on_leave_attribute")
_PLANS: Dict[Type[cst.CSTVisitor], Dict[type, _Plan]] = {}
_NODE_TYPES: Dict[type, bool] = {}
_ORDERS: Dict[type, Tuple[Tuple[str, ...], Tuple[str, ...]]] = {}


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """Call ``visitor``'s ``visit_*``/``leave_*`` hooks over ``node``'s tree, as ``node.visit`` would.

    One difference: hooks around a field that holds nothing (None) may be called where LibCST skips
    them, or the reverse.
    """
    if any(getattr(type(visitor), name) is not getattr(cst.CSTVisitor, name) for name in _DISPATCH):
        node.visit(visitor)  # it dispatches by itself: only LibCST's traversal does what it expects
        return
    _walk(node, visitor, _PLANS.setdefault(type(visitor), {}))


def _walk(node: cst.CSTNode, visitor: cst.CSTVisitor, plans: Dict[type, _Plan]) -> None:
    plan = plans.get(type(node))
    if plan is None or (plan.unseen and _holds_any(node, plan.unseen)):
        plan = plans[type(node)] = _plan(type(visitor), node)
    if plan.visit is None or plan.visit(visitor, node) is not False:
        for name, enter, leave in plan.fields:
            if enter is not None:
                enter(visitor, node)
            value = getattr(node, name)
            kind = type(value)
            if kind is tuple or kind is list:
                for child in value:
                    if _NODE_TYPES.get(type(child)) or _is_node_type(type(child)):
                        _walk(child, visitor, plans)
            elif _NODE_TYPES.get(kind) or _is_node_type(kind):
                _walk(value, visitor, plans)
            if leave is not None:
                leave(visitor, node)
    if plan.leave is not None:
        plan.leave(visitor, node)


def owning_statements(statements: Sequence[cst.CSTNode], wanted: Set[int]) -> Optional[Dict[int, int]]:
    """``id(node) -> i`` for every id in ``wanted``: the node lies in ``statements[i]``'s tree. None when
    one is not found (a node in whitespace or punctuation, which this does not enter, or not there)."""
    owners: Dict[int, int] = {}
    remaining = set(wanted)
    for position, statement in enumerate(statements):
        if not remaining:
            break
        stack = [statement]
        while stack:
            node = stack.pop()
            if id(node) in remaining:
                owners[id(node)] = position
                remaining.discard(id(node))
            _push_children(node, _field_order(node)[0], stack)
    return None if remaining else owners


def node_ids(root: cst.CSTNode) -> Set[int]:
    """The ids of every node in ``root``'s tree, whitespace and punctuation included: what
    ``node.children`` gives, read from the fields in place (``children`` rebuilds each node to list them)."""
    ids: Set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        ids.add(id(node))
        _push_children(node, _all_fields(type(node)), stack)
    return ids


def _push_children(node: cst.CSTNode, names: Sequence[str], stack: List[cst.CSTNode]) -> None:
    """Push the nodes that ``node``'s fields ``names`` hold."""
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            stack.extend(child for child in value if _NODE_TYPES.get(type(child)) or _is_node_type(type(child)))
        elif _NODE_TYPES.get(kind) or _is_node_type(kind):
            stack.append(value)


_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _all_fields(kind: type) -> Tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(field.name for field in dataclasses.fields(kind))
    return names


def _is_node_type(kind: type) -> bool:
    # isinstance(x, cst.CSTNode) goes through ABCMeta, and this question is asked for every child.
    is_node = _NODE_TYPES.get(kind)
    if is_node is None:
        is_node = _NODE_TYPES[kind] = issubclass(kind, cst.CSTNode)
    return is_node


def _plan(visitor_type: Type[cst.CSTVisitor], node: cst.CSTNode) -> _Plan:
    kind = type(node).__name__
    order, unseen = _field_order(node)
    fields = tuple(
        (name, getattr(visitor_type, f"visit_{kind}_{name}", None), getattr(visitor_type, f"leave_{kind}_{name}", None))
        for name in order
    )
    visit, leave = getattr(visitor_type, f"visit_{kind}", None), getattr(visitor_type, f"leave_{kind}", None)
    return _Plan(visit, leave, fields, unseen)


def _field_order(node: cst.CSTNode) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """``type(node)``'s fields that can hold code, in the order LibCST enters them; and those it has not
    entered in any instance seen so far (appended last, and learned again when one holds something)."""
    known = _ORDERS.get(type(node))
    if known is None or (known[1] and _holds_any(node, known[1])):
        recorder = _FieldRecorder(node)
        node.visit(recorder)
        code_fields = [field.name for field in dataclasses.fields(node) if not _only_trivia(field.type)]
        entered = [name for name in recorder.fields if name in code_fields]
        previously_unseen = known[1] if known is not None else tuple(code_fields)
        unseen = tuple(name for name in previously_unseen if name not in entered)
        known = _ORDERS[type(node)] = (tuple(entered) + tuple(n for n in code_fields if n not in entered), unseen)
    return known


def _holds_any(node: cst.CSTNode, names: Tuple[str, ...]) -> bool:
    return any(getattr(node, name) is not None for name in names)


def _only_trivia(annotation: object) -> bool:
    """Whether a field declared as ``annotation`` can only hold whitespace, punctuation or plain values."""
    if isinstance(annotation, type):
        return issubclass(annotation, _TRIVIA)
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    if origin is typing.Union or origin in (tuple, list, collections.abc.Sequence):
        arguments = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        return bool(arguments) and all(_only_trivia(a) for a in arguments)
    return False  # a string or anything unexpected: enter it


class _FieldRecorder(cst.CSTVisitor):
    """Visits one node without descending, noting the order in which LibCST enters its fields."""

    def __init__(self, node: cst.CSTNode) -> None:
        super().__init__()
        self.node = node
        self.fields: List[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node is self.node

    def on_leave(self, original_node: cst.CSTNode) -> None:
        pass

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if node is self.node and attribute not in self.fields:
            self.fields.append(attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass
