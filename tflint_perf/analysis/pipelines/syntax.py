"""What the pipeline interpreter reads off LibCST nodes: the statements of a block, a function's
parameters, ``self``, and a dispatch on node types that stays fast.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Generic, List, Sequence, Tuple, TypeVar

import libcst as cst

from tflint_perf.analysis.model import FunctionInfo
from tflint_perf.analysis.names import assigned_name, dotted_text, name_uses, parameter_names, rooted_at

_Found = TypeVar("_Found")


class FirstInstanceOf(Generic[_Found]):
    """An if/elif chain of ``isinstance`` tests, decided once per node type and then looked up.

    The answer depends only on the node's type, so it is cached by type. That matters because
    LibCST's node classes are ABCs: every failed ``isinstance`` against one runs ABCMeta's check,
    and the interpreter asks tens of thousands of times per file.
    """

    def __init__(self, cases: Sequence[Tuple[Tuple[type, ...], _Found]], default: _Found) -> None:
        self._cases = cases
        self._default = default
        self._by_type: Dict[type, _Found] = {}

    def find(self, node: object) -> _Found:
        """What the first case ``node`` is an instance of maps to; the default if none."""
        node_type = type(node)
        try:
            return self._by_type[node_type]
        except KeyError:
            found = next((value for types, value in self._cases if issubclass(node_type, types)), self._default)
            self._by_type[node_type] = found
            return found


def block_statements(body: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """The statements a block (or a one-line suite, an ``else``, an ``elif``) runs, in order."""
    if isinstance(body, cst.IndentedBlock):
        return body.body
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=body.body)]
    if isinstance(body, (cst.Else, cst.If)):
        return [body]
    if hasattr(body, "body"):
        return block_statements(body.body)  # type: ignore[attr-defined]
    return []


def parameters(function: FunctionInfo) -> List[cst.Param]:
    """Positional and keyword parameters in order: the indices a summary's ``param`` sources use."""
    params = function.node.params
    return list(params.posonly_params) + list(params.params) + list(params.kwonly_params)


def is_static(function: FunctionInfo) -> bool:
    return any(dotted_text(d.decorator) == "staticmethod" for d in function.node.decorators)


def is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def only_looked_at(scope: cst.CSTNode, name: str, attributes: FrozenSet[str]) -> bool:
    """Every read of ``name`` in ``scope`` looks at the pipeline and nothing more: ``print(name)``,
    ``name.element_spec`` (an attribute of ``attributes``), or its own rebuilding
    (``name = name.batch(32)``). Any other read (an argument of another call, a ``return``, a loop,
    another name bound on it, a function reading the global) may train on it, out of sight."""
    looked = 0
    stack: List[cst.CSTNode] = [scope]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.Lambda)) and name in parameter_names(node.params):
            continue  # there `name` is another value, as in `name_uses`
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "print":
            looked += sum(isinstance(arg.value, cst.Name) and arg.value.value == name for arg in node.args)
        elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == name:
            looked += node.attr.value in attributes
        elif isinstance(node, cst.SimpleStatementLine) and assigned_name(node) == name:
            looked += 1 + rooted_at(node.body[0].value, name)  # type: ignore[union-attr]
        stack.extend(node.children)
    return looked == name_uses(scope, name)
