"""Building fix text that fits the module: its own TensorFlow alias, the imports it needs."""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import libcst as cst

from tflint_perf.analysis.model import ModuleModel
from tflint_perf.text.diagnostics import NodeEdit

TENSORFLOW_IMPORT = "import tensorflow as tf"


# Before TensorFlow 1.13 no `AUTOTUNE` spelling is certain to exist (`tf.data.experimental` arrived in
# 1.12/1.13, `tf.contrib.data.AUTOTUNE` in some 1.x); a buffer of one element exists since 1.4.
_FIRST_WITH_EXPERIMENTAL_AUTOTUNE = (1, 13)


def autotune(model: ModuleModel, settings, site: cst.Call) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """How this module spells ``tf.data.AUTOTUNE`` at ``site``, and any import that spelling needs.

    ``tf.data.experimental.AUTOTUNE`` is used for ``tf.compat.v1`` aliases and a target
    TensorFlow version before 2.4, where ``tf.data.AUTOTUNE`` does not exist; None for a target before
    1.13, where no spelling is certain to exist (a fix writing one would fail when the code runs).
    """
    if settings.target_version is not None and settings.target_version < _FIRST_WITH_EXPERIMENTAL_AUTOTUNE:
        return None
    alias = model.tensorflow_alias()
    old = (alias is not None and (model.imports.qualified(alias) or "").startswith("tensorflow.compat.v1")) or (
        settings.target_version is not None and settings.target_version < (2, 4)
    )
    direct = model.imports.alias_for("tf.data.AUTOTUNE")
    if direct is not None and _bound_before(model, direct, site):
        return direct, ()
    return tensorflow_api(model, "data.experimental.AUTOTUNE" if old else "data.AUTOTUNE", site)


def prefetch_buffer(model: ModuleModel, settings, site: cst.Call) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """What to give ``prefetch`` at ``site``: AUTOTUNE as this module spells it, or a literal buffer
    of one element on a target TensorFlow older than 1.13 (BERT pins 1.11)."""
    if settings.target_version is not None and settings.target_version < _FIRST_WITH_EXPERIMENTAL_AUTOTUNE:
        return "1", ()
    return autotune(model, settings, site)


def tensorflow_api(model: ModuleModel, path: str, site: cst.Call) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """How this module spells ``tf.<path>`` (e.g. ``where``) at ``site``, and any import it needs.

    The module's own name for the API wins (``AUTOTUNE = tf.data.AUTOTUNE``), then its alias for
    TensorFlow (``tf``, ``tf2``), provided the name is bound before ``site`` runs; otherwise
    ``import tensorflow as tf`` is added when the file already uses TensorFlow and ``tf`` is free.
    None when no spelling is safe.
    """
    direct = model.imports.alias_for(f"tf.{path}")
    if direct is not None and _bound_before(model, direct, site):
        return direct, ()
    alias = model.tensorflow_alias()
    if alias is not None:
        return (f"{alias}.{path}", ()) if _bound_before(model, alias, site) else None
    if model.imports.is_bound("tf") or "tf" in model.module_values or "tf" in model.module_functions:
        return None
    if not any((model.imports.qualified(name) or "").startswith("tensorflow") for name in _bound_names(model)):
        return None  # the file does not use TensorFlow itself: do not add a dependency
    return f"tf.{path}", (TENSORFLOW_IMPORT,)


def _bound_before(model: ModuleModel, name: str, site: cst.Call) -> bool:
    """Whether ``name`` is bound by the time ``site`` runs.

    Inside a function it is (module-level names are bound before functions are called, in all
    but contrived code); at module level every binding of the name must come earlier in the file.
    """
    info = model.site_of(site)
    if info is None:
        return False
    if info.function is not None:
        return True
    bindings = model.bindings.get(None, {}).get(name, [])
    return bool(bindings) and all(binding.place.order < info.place.order for binding in bindings)


def _bound_names(model: ModuleModel):
    return list(model.imports._bindings)  # noqa: SLF001 - same package


def add_keyword_argument(call: cst.Call, keyword: str, value: str) -> Optional[NodeEdit]:
    """An edit that passes ``keyword=value`` to ``call`` after its last argument: on a line of its
    own, under the last argument, when the arguments are written one per line."""
    if not call.args:
        return None
    if len(call.args) > 1:
        comma = call.args[-2].comma
        before_last = comma.whitespace_after if isinstance(comma, cst.Comma) else None
    else:
        before_last = call.whitespace_before_args
    if isinstance(before_last, cst.ParenthesizedWhitespace):
        last = call.args[-1]
        if isinstance(last.comma, cst.Comma):  # after the trailing comma, and any comment ending its line
            return NodeEdit(last.comma, "after", f"\n{keyword}={value},", indented=True)
        return NodeEdit(last.value, "after", f",\n{keyword}={value}", indented=True)
    return NodeEdit(call.args[-1].value, "after", f", {keyword}={value}")


def wrapped_keyword_argument(model: ModuleModel, call: cst.Call, keyword: str, value: str,
                             ) -> Optional[Tuple[NodeEdit, ...]]:
    """``keyword=value`` added to a one-line call by breaking it at its brackets, for when the line
    would grow too long: ``f(a, b)`` becomes ``f(\n    a,\n    b,\n    keyword=value,\n)`` (one
    argument per line, the file's indentation unit, a trailing comma: black's and ruff's layout);
    None when the call is not written on one line as ``f(args)``."""
    if not call.args or not _empty(call.whitespace_before_args):
        return None
    last = call.args[-1]
    if isinstance(last.comma, cst.Comma) or not _empty(last.whitespace_after_arg):
        return None
    for arg in call.args:
        code = model.module.code_for_node(arg)  # generated once per argument: it costs a tree walk
        if "\n" in code or "\r" in code:
            return None
    unit = model.module.default_indent
    return (
        *(NodeEdit(arg, "before", f"\n{unit}", indented=True) for arg in call.args),
        NodeEdit(last.value, "after", f",\n{unit}{keyword}={value},\n", indented=True),
    )


def _empty(whitespace) -> bool:
    return isinstance(whitespace, cst.SimpleWhitespace) and whitespace.value == ""


def chain_break(model: ModuleModel, call: cst.Call, blocks: Sequence[cst.CSTNode]) -> str:
    """What comes before a new op added next to ``call``'s in a method chain: the line break and
    indentation before ``call``'s dot when the chain is written one op per line (or its backslash
    continuation), else nothing."""
    if not isinstance(call.func, cst.Attribute):
        return ""
    whitespace = call.func.dot.whitespace_before
    if isinstance(whitespace, cst.ParenthesizedWhitespace):
        indent = block_indent(model, blocks) if whitespace.indent else ""
        return model.module.default_newline + indent + whitespace.last_line.value
    if isinstance(whitespace, cst.SimpleWhitespace) and "\\" in whitespace.value:
        return whitespace.value
    return ""


def append_op(model: ModuleModel, call: cst.Call, op: str) -> NodeEdit:
    """An edit that appends ``op`` (``.prefetch(...)``) after ``call``, the last op of a chain,
    laid out as ``call``'s own op is."""
    site = model.site_of(call)
    return NodeEdit(call, "after", chain_break(model, call, site.place.blocks if site is not None else ()) + op)


def block_indent(model: ModuleModel, blocks: Sequence[cst.CSTNode]) -> str:
    return "".join(
        (block.indent if block.indent is not None else model.module.default_indent)
        for block in blocks
        if isinstance(block, cst.IndentedBlock)
    )


def import_insertion_offset(module: cst.Module, text: str) -> Optional[int]:
    """Where new imports go: after the docstring, ``__future__`` imports and the leading imports.

    None when the module's own rendering does not match the text (no safe place is known).
    """
    insert_after = 0
    for index, statement in enumerate(module.body):
        if isinstance(statement, cst.SimpleStatementLine) and all(
            isinstance(small, (cst.Import, cst.ImportFrom))
            or (index == 0 and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString))
            for small in statement.body
        ):
            insert_after = index + 1
        else:
            break
    before = "".join(module.code_for_node(node) for node in [*module.header, *module.body[:insert_after]])
    if text.startswith(before) and (before.endswith(("\n", "\r")) or not before):
        return len(before)
    return None


def existing_statements(module: cst.Module) -> set:
    return {module.code_for_node(stmt).strip() for stmt in module.body if isinstance(stmt, cst.SimpleStatementLine)}


def code_in_block(model: ModuleModel, node: cst.CSTNode, blocks: Sequence[cst.CSTNode]) -> str:
    """The code for ``node`` as it would read where it sits, inside ``blocks``.

    ``Module.code_for_node`` renders a node as if at module level, so the continuation lines of a
    multi-line expression inside a function would lose the function's indentation. Rendering it
    as the statement of an indented block with the same indentation keeps them.
    """
    indent = block_indent(model, blocks)
    if not indent:
        return model.module.code_for_node(node)
    small = node if isinstance(node, cst.BaseSmallStatement) else cst.Expr(node)  # type: ignore[arg-type]
    statement = cst.SimpleStatementLine(body=[small])
    text = model.module.code_for_node(cst.IndentedBlock(body=[statement], indent=indent))
    newline = model.module.default_newline
    return text[len(newline) + len(indent): -len(newline)]


def remove_argument(model: ModuleModel, call: cst.Call, arg: cst.Arg) -> Optional[NodeEdit]:
    """An edit that drops ``arg`` from ``call``, keeping the call's layout: an argument alone on its line
    goes with its line (and its comment); otherwise the call is rebuilt without it, the argument
    before a removed last one taking over its comma and the whitespace before the parenthesis."""
    site = model.site_of(call)
    if site is None or arg not in call.args:
        return None
    args = list(call.args)
    index = args.index(arg)
    before = call.whitespace_before_args if index == 0 else args[index - 1].comma
    before = before.whitespace_after if isinstance(before, cst.Comma) else before
    after = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else arg.whitespace_after_arg
    if isinstance(before, cst.ParenthesizedWhitespace) and isinstance(after, cst.ParenthesizedWhitespace):
        return NodeEdit(arg, "delete-line", "")  # alone on its line: the line goes, with its comment
    del args[index]
    if args and index == len(args):
        args[-1] = args[-1].with_changes(comma=arg.comma, whitespace_after_arg=arg.whitespace_after_arg)
    return NodeEdit(call, "replace", code_in_block(model, call.with_changes(args=args), site.place.blocks))


def remove_statement(model: ModuleModel, call: cst.Call) -> Optional[NodeEdit]:
    """An edit that removes the expression statement ``call`` is, or None when it is not one.

    A statement alone on its line goes with its line; the only statement of a block becomes
    ``pass``; a statement sharing its line with others (``a; f()``) is not removed.
    """
    site = model.site_of(call)
    line = site.statement if site is not None else None
    if line is None or len(line.body) != 1:
        return None
    small = line.body[0]
    if not isinstance(small, cst.Expr) or small.value is not call:
        return None
    blocks = site.place.blocks
    siblings = blocks[-1].body if blocks and isinstance(blocks[-1], cst.IndentedBlock) else None
    if siblings is not None and len(siblings) == 1:
        return NodeEdit(small, "replace", "pass")
    if not blocks and len(model.module.body) == 1:
        return NodeEdit(small, "replace", "pass")
    return NodeEdit(line, "delete-line", "")
