"""What a small function returns, written as one expression: the function's body inlined.

A choice between two values is often written with a helper: AutoAugment's ``_check_bbox_area``
picks ``lambda: _adjust_bbox_boundaries(min_y, max_y)`` or ``lambda: (min_y, max_y)``, where the
local ``_adjust_bbox_boundaries(min_coord, max_coord)`` sets ``max_coord = tf.maximum(max_coord,
0.0 + delta)`` and ``min_coord = tf.minimum(min_coord, 1.0 - delta)`` and returns both; KerasCV's
RandomShear picks the parameterless ``negative`` or ``positive``, each ``x1 = tl_x; x2 = br_x;
return x1, x2``. A rule that judges the chosen values (cheap, element-wise, of one shape) judges
the expression the call evaluates to: the ``return`` after at most a few plain ``name = value``
lines, each name replaced by its value and each parameter by what the call passes for it.

Only what can be read with certainty is inlined: straight-line bodies of a few assignments to bare
names (no ``global``, no augmented assignment, no branches, no loops), parameters bound plainly
(no ``*args``, defaults only when they are literals), no ``self``, no nested scopes (a lambda or a
comprehension in the body), and free names that mean at the call the same thing as in the body.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.loops import names_read
from tflint_perf.analysis.model import FunctionInfo, ModuleModel

_MAX_STATEMENTS = 5  # a helper of a few lines; anything longer is not "a value"
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.Name)  # Name: True, False, None only


def returned_expression(model: ModuleModel, function: FunctionInfo, call: Optional[cst.Call] = None,
                        caller: Optional[FunctionInfo] = None,
                        hidden: Tuple[str, ...] = ()) -> Optional[cst.BaseExpression]:
    """The expression ``call`` of ``function`` evaluates to, seen from ``caller`` (the function
    the call is in; ``hidden``: names a lambda around the call binds), or for ``call=None`` what
    the parameterless ``function`` returns. None when the body is not a few plain assignments and
    one ``return``, or when the inlined expression could mean something else at the call."""
    node = function.node
    if node.decorators or node.asynchronous is not None or function.binds_self:
        return None
    values = _bound_parameters(function, call)
    if values is None:
        return None
    statements = _statements(node)
    if statements is None:
        return None
    *assignments, last = statements
    if not isinstance(last, cst.Return) or last.value is None:
        return None
    for small in assignments:
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)):
            return None
        value = _substituted(small.value, values)
        if value is None:
            return None
        values[small.targets[0].target.value] = value  # a later line reads the new value
    result = _substituted(last.value, values)
    if result is None or not _same_free_names(model, function, last.value, assignments, caller, hidden):
        return None
    return result


def _bound_parameters(function: FunctionInfo, call: Optional[cst.Call]) -> Optional[Dict[str, cst.BaseExpression]]:
    """Each parameter's value at the call: the argument passed for it, else its literal default."""
    params = function.node.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        return None
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    if call is None:
        return {} if not every else None
    if any(arg.star for arg in call.args):
        return None
    values: Dict[str, cst.BaseExpression] = {}
    positional = function.positional_parameters
    keyword_only = {p.name.value for p in params.kwonly_params}
    for index, arg in enumerate(a for a in call.args if a.keyword is None):
        if index >= len(positional):
            return None
        values[positional[index]] = arg.value
    for arg in call.args:
        if arg.keyword is None:
            continue
        name = arg.keyword.value
        if name in values or (name not in positional and name not in keyword_only):
            return None
        values[name] = arg.value
    for param in every:
        name = param.name.value
        if name in values:
            continue
        default = param.default
        if default is None or not _literal(default):
            return None
        values[name] = default
    return values


def _literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False", "None")
    return isinstance(expr, _LITERALS)


def _statements(node: cst.FunctionDef):
    """The body's small statements (a leading docstring left out), or None when it has compound
    statements or more than a few lines."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else [node.body]
    smalls = []
    for statement in body:
        if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return None
        smalls.extend(statement.body)
    if smalls and isinstance(smalls[0], cst.Expr) and isinstance(smalls[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        smalls = smalls[1:]
    if not smalls or len(smalls) > _MAX_STATEMENTS:
        return None
    return smalls


class _Substitute(cst.CSTTransformer):
    """Replaces the names that read a bound value; attribute names and keywords are not reads."""

    def __init__(self, values: Dict[str, cst.BaseExpression]) -> None:
        super().__init__()
        self.values = values
        self.nested = False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        return updated.with_changes(attr=original.attr)  # `x.min_coord` keeps its attribute name

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)  # `f(min_coord=...)` keeps its keyword

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.nested = True
        return False

    def visit_ListComp(self, node) -> bool:
        self.nested = True
        return False

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        value = self.values.get(original.value)
        if value is None:
            return updated
        # Parenthesised so that `a - b` passed for `x` stays one operand of `x * 2`.
        needs_parens = not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer,
                                              cst.Float, cst.SimpleString, cst.Tuple))
        return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if needs_parens and not value.lpar else value


def _substituted(expr: cst.BaseExpression, values: Dict[str, cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    if not values:
        return expr
    transformer = _Substitute(values)
    result = expr.visit(transformer)
    return None if transformer.nested else result  # type: ignore[return-value]


def _same_free_names(model: ModuleModel, function: FunctionInfo, returned: cst.BaseExpression, assignments,
                     caller: Optional[FunctionInfo], hidden: Tuple[str, ...]) -> bool:
    """The names the body reads but does not bind (``delta`` of the enclosing function, ``tf``)
    resolve at the call to the scope they resolve to in the body."""
    params = function.node.params
    own = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    own.update(small.targets[0].target.value for small in assignments)
    read = set(names_read(returned))
    for small in assignments:
        read.update(names_read(small.value))
    for name in read - own:
        if name in hidden:
            return False
        if model.scope_bindings(name, function)[0] is not model.scope_bindings(name, caller)[0]:
            return False
    return True
