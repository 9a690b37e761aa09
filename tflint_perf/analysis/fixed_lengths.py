"""Pipelines whose sequences all have one length though no TensorFlow shape says so.

A map pads every sequence in Python to at least a length (`if len(ids) < seq_length: ids = ids +
[0] * (seq_length - len(ids))`, in the function a `tf.py_function` calls back) and a later `filter`
keeps the elements whose every part is at most that length (`tf.size(x) <= max_length`), the two
lengths being the same value (one constant, or parameters defaulting to it): every element then has
exactly that length, a `padded_batch` pads nothing, and its batches have one shape (dragen1860's
translation tutorials). The ops may be in another module of the project than the one asking, as when
a helper module builds the pipeline that a training script iterates.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Sequence, Union

import libcst as cst

from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.model import FunctionInfo, ModuleModel

_PYTHON_CALLBACKS = frozenset({"tf.py_function", "tf.numpy_function", "tf.compat.v1.py_func", "tf.py_func"})
_LOGICAL_AND = frozenset({"tf.logical_and", "tf.math.logical_and"})
_SIZE = frozenset({"tf.size", "tf.shape"})
_IMPORT_DEPTH = 3  # how many imports away the module holding the ops may be


def one_length(model: ModuleModel, ops: Sequence, transparent: FrozenSet[str]) -> bool:
    """The elements after ``ops`` (a state's ops up to a `padded_batch`) all have one length: the
    last `filter` bounds every part by a length that a `map` before it pads every part to, with only
    ``transparent`` ops (which neither change nor look at lengths) around them."""
    bound: Optional[str] = None
    for op in reversed(ops):
        if op.name == "filter" and bound is None:
            owner = _owner(model, op.call)
            bound = _filter_bound(owner, op.call) if owner is not None else None
            if bound is None:
                return False
        elif op.name == "map" and bound is not None:
            owner = _owner(model, op.call)
            return owner is not None and _pads_to(owner, op.call, bound)
        elif op.name not in transparent:
            return False
    return False


def _owner(model: ModuleModel, node: cst.CSTNode) -> Optional[ModuleModel]:
    """The module whose tree holds ``node``: this one, or one it imports (a few imports away)."""
    if model.owns(node):
        return model
    session = model.session
    if session is None:
        return None
    frontier, seen = [model], {id(model)}
    for _ in range(_IMPORT_DEPTH):
        following = []
        for current in frontier:
            for other in session.imported(current):
                if id(other) in seen:
                    continue
                seen.add(id(other))
                if other.owns(node):
                    return other
                following.append(other)
        frontier = following
    return None


def _function(model: ModuleModel, call: cst.Call, keyword: str) -> Optional[Union[FunctionInfo, cst.Lambda]]:
    arg = argument(call, keyword, 0)
    site = model.site_of(call)
    if arg is None or site is None:
        return None
    return model.effects.resolve_callable(arg.value, site.function, place=site.place)  # type: ignore[attr-defined]


def _returned(function: Union[FunctionInfo, cst.Lambda]) -> Optional[cst.BaseExpression]:
    """What a lambda or a one-`return` function returns."""
    if isinstance(function, cst.Lambda):
        return function.body
    returns = function.returns
    return returns[0].node.value if len(returns) == 1 else None


def _parameters(function: Union[FunctionInfo, cst.Lambda]) -> Dict[str, Optional[cst.BaseExpression]]:
    """Each positional parameter's name and default."""
    params = function.params if isinstance(function, cst.Lambda) else function.node.params
    return {p.name.value: p.default for p in [*params.posonly_params, *params.params]}


def _length_text(model: ModuleModel, expr: cst.BaseExpression, defaults: Dict[str, Optional[cst.BaseExpression]]) -> str:
    """A length as the code spells it, a parameter read as its default (`max_length=MAX_SEQ_LENGTH`)."""
    if isinstance(expr, cst.Name) and defaults.get(expr.value) is not None:
        expr = defaults[expr.value]  # type: ignore[assignment]
    return model.module.code_for_node(expr)


def _filter_bound(model: ModuleModel, call: cst.Call) -> Optional[str]:
    """The one length a filter bounds every part of the element by (`tf.logical_and(tf.size(x) <=
    max_length, tf.size(y) <= max_length)`), or None."""
    function = _function(model, call, "predicate")
    body = _returned(function) if function is not None else None
    if body is None:
        return None
    params = _parameters(function)  # type: ignore[arg-type]
    bounded: Dict[str, str] = {}
    stack: List[cst.BaseExpression] = [body]
    while stack:
        expr = stack.pop()
        if isinstance(expr, cst.Call) and model.call_name(expr) in _LOGICAL_AND:
            stack.extend(arg.value for arg in expr.args)
            continue
        if not (isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1
                and isinstance(expr.comparisons[0].operator, cst.LessThanEqual)):
            return None
        part = _sized(model, expr.left)
        if part is None or part not in params:
            return None
        limit = expr.comparisons[0].comparator
        bounded[part] = _length_text(model, limit, params)
    parts = {name for name, default in params.items() if default is None}  # the element's parts
    lengths = set(bounded.values())
    return lengths.pop() if set(bounded) == parts and len(lengths) == 1 else None


def _sized(model: ModuleModel, expr: cst.BaseExpression) -> Optional[str]:
    """The name whose size `tf.size(x)` (or `tf.shape(x)[0]`) measures."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Call):
        expr = expr.value
    if isinstance(expr, cst.Call) and model.call_name(expr) in _SIZE and expr.args \
            and isinstance(expr.args[0].value, cst.Name):
        return expr.args[0].value.value
    return None


def _pads_to(model: ModuleModel, call: cst.Call, bound: str) -> bool:
    """The map's function (or the Python function its `tf.py_function` calls back) returns names each
    padded to at least ``bound`` (`if len(ids) < seq_length: ids = ids + ...`)."""
    function = _function(model, call, "map_func")
    body = _returned(function) if function is not None else None
    if isinstance(body, cst.Call) and model.call_name(body) in _PYTHON_CALLBACKS and body.args:
        site = model.site_of(body)
        function = model.effects.resolve_callable(  # type: ignore[attr-defined]
            body.args[0].value, site.function if site is not None else None)
        body = _returned(function) if isinstance(function, FunctionInfo) else None
    if not isinstance(function, FunctionInfo) or body is None:
        return False
    names = [e.value for e in body.elements] if isinstance(body, (cst.Tuple, cst.List)) else [body]
    if not names or not all(isinstance(name, cst.Name) for name in names):
        return False
    padded = _padded_names(model, function, bound)
    return all(name.value in padded for name in names)  # type: ignore[union-attr]


def _padded_names(model: ModuleModel, function: FunctionInfo, bound: str) -> FrozenSet[str]:
    """Names the function's body pads up to ``bound``: `if len(v) < L:` whose body rebinds `v`."""
    defaults = _parameters(function)
    found = set()
    statements = function.node.body.body if isinstance(function.node.body, cst.IndentedBlock) else []
    for statement in statements:
        if not isinstance(statement, cst.If) or statement.orelse is not None:
            continue
        test = statement.test
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.LessThan)
                and isinstance(test.left, cst.Call) and isinstance(test.left.func, cst.Name)
                and test.left.func.value == "len" and len(test.left.args) == 1
                and isinstance(test.left.args[0].value, cst.Name)):
            continue
        name = test.left.args[0].value.value
        if _length_text(model, test.comparisons[0].comparator, defaults) != bound:
            continue
        if any(isinstance(small, cst.Assign) and any(
                isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets)
               for line in statement.body.body if isinstance(line, cst.SimpleStatementLine) for small in line.body):
            found.add(name)
    return frozenset(found)
