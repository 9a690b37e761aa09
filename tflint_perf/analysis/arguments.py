"""A call's arguments as the analysis asks for them: by parameter name or position, and literals."""

from __future__ import annotations

from typing import Optional

import libcst as cst


def keyword_argument(call: cst.Call, name: str) -> Optional[cst.Arg]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def argument(call: cst.Call, name: str, position: Optional[int]) -> Optional[cst.Arg]:
    """The argument bound to parameter ``name`` (keyword or positional), if visibly passed."""
    found = keyword_argument(call, name)
    if found is not None or position is None:
        return found
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[position] if position < len(positional) else None


def has_star_args(call: cst.Call) -> bool:
    return any(arg.star for arg in call.args)


def int_literal(node: cst.BaseExpression) -> Optional[int]:
    if isinstance(node, cst.Integer):
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:
            return None
    return None


def signed_int_literal(node: cst.BaseExpression) -> Optional[int]:
    """``int_literal``, or its negation written ``-1``: a value an API gives a meaning to
    (``batch_size=-1``: everything at once), never a size."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        value = int_literal(node.expression)
        return -value if value is not None else None
    return int_literal(node)


def string_literal(node: Optional[cst.BaseExpression]) -> Optional[str]:
    """The text of a plain string literal (``'mode'``); None for bytes, f-strings, anything else."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def bool_literal(node: Optional[cst.BaseExpression]) -> Optional[bool]:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def keyword_value(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    arg = keyword_argument(call, name)
    return arg.value if arg is not None else None


def string_keyword(call: cst.Call, name: str) -> Optional[str]:
    return string_literal(keyword_value(call, name))
