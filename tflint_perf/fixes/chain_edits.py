"""Fix edits that move one op of a method chain earlier: ``ds.a().b().c()`` to ``ds.c().a().b()``.

Used to move a ``tf.data`` op before another (``cache()`` before the first random op). The edit is
offered only where it is unambiguous:

- both ops in one method chain: the chain is rebuilt, and in a multi-line chain every comment
  stays on the line of the op it was written for (a trailing comment belongs to the line before
  the next dot, a full-line comment to the line after it);
- or in straight-line ``ds = ds.op(...)`` statements of one block, assigning one name: the op is
  inserted before the target op and removed from its own statement; when it was alone on its line
  (``ds = ds.cache()``) the lines rotate by one instead, which needs them free of comments.
"""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from tflint_perf.analysis.model import CallSite, ModuleModel
from tflint_perf.analysis.names import assigned_name, method_spine, rooted_at
from tflint_perf.text.diagnostics import NodeEdit
from tflint_perf.fixes.building import chain_break, code_in_block


def move_before(model: ModuleModel, moved: cst.Call, first: cst.Call) -> Optional[Tuple[NodeEdit, ...]]:
    """Edits that move the method call ``moved`` (with its arguments) to just before ``first``,
    an earlier op of the same pipeline; None when no unambiguous edit exists."""
    if not isinstance(first.func, cst.Attribute) or not isinstance(moved.func, cst.Attribute) or moved.lpar:
        return None
    return _chain_edits(model, first, moved) or _statement_edits(model, first, moved)


def _moved_suffix(model: ModuleModel, moved: cst.Call) -> str:
    """``.cache(args)`` (the moved op) as written, without any line break before the dot."""
    code = model.module.code_for_node(moved)
    func = model.module.code_for_node(moved.func)
    return "." + moved.func.attr.value + code[len(func):].lstrip()  # type: ignore[union-attr]


def _chain_edits(model: ModuleModel, first: cst.Call, moved: cst.Call) -> Optional[Tuple[NodeEdit, ...]]:
    """Both ops in one method chain: rebuild the chain with ``moved`` before ``first``.

    In a multi-line chain a trailing comment belongs to the line before the next dot and a
    full-line comment to the line after it, so the whitespace before each moved dot is split and
    re-joined to keep every comment on the line of the op it was written for.
    """
    site = model.site_of(moved)
    top = _chain_top(site.statement) if site is not None else None
    spine = method_spine(top) if top is not None else []
    if not any(node is moved for node in spine) or not any(node is first for node in spine):
        return None
    moved_index = next(i for i, node in enumerate(spine) if node is moved)
    first_index = next(i for i, node in enumerate(spine) if node is first)
    if first_index <= moved_index:
        return None
    ops = spine[moved_index: first_index + 1]  # moved, O_k, ..., O_1, first (outermost first)
    after = spine[moved_index - 1] if moved_index > 0 else None
    after = after if isinstance(after, cst.Call) and isinstance(after.func, cst.Attribute) else None
    if any(not isinstance(op, cst.Call) or not isinstance(op.func, cst.Attribute) or op.lpar for op in ops):
        return None
    dot = {id(op): op.func.dot for op in ops + ([after] if after is not None else [])}  # type: ignore[union-attr]
    dot_moved, dot_first = dot[id(moved)], dot[id(first)]
    if after is not None:
        dot_after = dot[id(after)]
        dots = _rejoin(dot_first, dot_moved), _rejoin(dot_after, dot_first), _rejoin(dot_moved, dot_after)
    else:
        if _trailing_comment(dot_moved):
            return None  # the comment of the op before the moved one would end up on another line
        dots = _rejoin(dot_first, dot_moved), _rejoin(dot_moved, dot_first), None
    if any(d is None for d in dots[:2]) or (after is not None and dots[2] is None):
        return None
    new_moved_dot, new_first_dot, new_after_dot = dots
    before_first = first.func.value  # type: ignore[union-attr]
    rebuilt: cst.BaseExpression = moved.with_changes(
        func=moved.func.with_changes(value=before_first, dot=new_moved_dot)  # type: ignore[union-attr]
    )
    for op in reversed(ops[1:]):  # first, O_1, ..., O_k
        changes = {"value": rebuilt}
        if op is first:
            changes["dot"] = new_first_dot
        rebuilt = op.with_changes(func=op.func.with_changes(**changes))  # type: ignore[union-attr]
    replaced: cst.Call = moved
    if after is not None:
        after_func = after.func.with_changes(value=rebuilt, dot=new_after_dot)  # type: ignore[union-attr]
        rebuilt = after.with_changes(func=after_func)
        replaced = after
    # A node's position excludes its own parentheses, so its replacement must too.
    text = code_in_block(model, rebuilt.with_changes(lpar=[], rpar=[]), site.place.blocks if site is not None else ())
    return (NodeEdit(replaced, "replace", text),)


def _chain_top(statement: Optional[cst.SimpleStatementLine]) -> Optional[cst.BaseExpression]:
    if statement is None or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, (cst.Assign, cst.Expr, cst.Return, cst.AnnAssign, cst.AugAssign)):
        return small.value
    return None


def _trailing_comment(dot: cst.Dot) -> bool:
    ws = dot.whitespace_before
    return isinstance(ws, cst.ParenthesizedWhitespace) and ws.first_line.comment is not None


def _rejoin(trail_from: cst.Dot, lead_from: cst.Dot) -> Optional[cst.Dot]:
    """A dot whose line break carries the trailing comment of ``trail_from``'s and the full-line
    comments and indentation of ``lead_from``'s. None when one breaks the line and the other does not."""
    trail, lead = trail_from.whitespace_before, lead_from.whitespace_before
    if isinstance(trail, cst.ParenthesizedWhitespace) and isinstance(lead, cst.ParenthesizedWhitespace):
        return lead_from.with_changes(whitespace_before=lead.with_changes(first_line=trail.first_line))
    if isinstance(trail, cst.SimpleWhitespace) and isinstance(lead, cst.SimpleWhitespace):
        return lead_from
    return None


def _statement_edits(model: ModuleModel, first: cst.Call, moved: cst.Call) -> Optional[Tuple[NodeEdit, ...]]:
    """The ops in straight-line ``ds = ds.op(...)`` statements of one block."""
    first_site, moved_site = model.site_of(first), model.site_of(moved)
    if first_site is None or moved_site is None or first_site.function is not moved_site.function:
        return None
    statements = _statements_between(model, first_site, moved_site)
    if statements is None:
        return None
    name = assigned_name(statements[0])
    first_assign = statements[0].body[0]
    if name is None or not any(node is first for node in method_spine(first_assign.value)):  # type: ignore[attr-defined]
        return None
    for statement in statements[1:]:
        if assigned_name(statement) != name or not rooted_at(statement.body[0].value, name):  # type: ignore
            return None
    suffix = _moved_suffix(model, moved)
    before_first = first.func.value  # type: ignore[union-attr]
    moved_assign = statements[-1].body[0]
    sole_op = moved_assign.value is moved and _is_name(moved.func.value, name)  # type: ignore[attr-defined,union-attr]
    if not sole_op:
        # `ds = ds.cache().batch(2)`: drop `.cache()` there and insert it before `first`;
        # no line moves, so comments stay where they are.
        receiver = moved.func.value  # type: ignore[union-attr]
        # One op per line: the cache gets a line of its own before `first`'s.
        suffix = chain_break(model, first, first_site.place.blocks) + suffix
        return (
            NodeEdit(before_first, "after", suffix),
            NodeEdit(moved, "replace", code_in_block(model, receiver, moved_site.place.blocks)),
        )
    # `ds = ds.cache()` on its own line: the lines from `first`'s down to it rotate by one.
    if any(_has_comment(s) for s in statements[1:]) or _has_trailing_comment(statements[0]):
        return None
    before_text = model.module.code_for_node(before_first)
    if "\n" in before_text or "\r" in before_text:
        return None
    texts = [f"{name} = {before_text}{suffix}"]
    blocks = first_site.place.blocks
    texts.append(code_in_block(model, first_assign.deep_replace(before_first, cst.Name(name)), blocks))
    texts.extend(code_in_block(model, s.body[0], blocks) for s in statements[1:-1])
    return tuple(NodeEdit(s.body[0], "replace", text) for s, text in zip(statements, texts))


def _statements_between(model: ModuleModel, first_site: CallSite, moved_site: CallSite):
    first_line, moved_line = first_site.statement, moved_site.statement
    if first_line is None or moved_line is None or first_site.place.blocks != moved_site.place.blocks:
        return None
    body = first_site.place.blocks[-1].body if first_site.place.blocks else model.module.body
    if not isinstance(body, (list, tuple)):
        return None
    indexes = [i for i, s in enumerate(body) if s is first_line or s is moved_line]
    if len(indexes) != 2:
        return None
    statements = list(body[indexes[0]: indexes[1] + 1])
    if statements[0] is not first_line or not all(isinstance(s, cst.SimpleStatementLine) for s in statements):
        return None
    return statements


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def _has_trailing_comment(statement: cst.SimpleStatementLine) -> bool:
    return statement.trailing_whitespace.comment is not None


def _has_comment(statement: cst.SimpleStatementLine) -> bool:
    return _has_trailing_comment(statement) or any(line.comment is not None for line in statement.leading_lines)
