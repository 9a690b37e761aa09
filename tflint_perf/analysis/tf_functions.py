"""The module's ``tf.function``s: how each is made, with which options, and where it is called.

A ``TfFunction`` is a same-file ``def`` decorated with ``@tf.function`` / ``@tf.function(...)``, or
a name bound (every binding) to ``tf.function(f, ...)``. ``options`` are the keywords given to
``tf.function``. ``call_sites`` are the same-file calls that reach it: ``step(x)`` for a
module-level or nested def or a wrapped name, ``self.step(x)`` for a decorated method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

import libcst as cst

from tflint_perf.analysis.model import CallSite, FunctionInfo, ModuleModel

# Options that make a tf.function accept shapes it has not seen without tracing again.
SHAPE_RELAXING = frozenset({"input_signature", "reduce_retracing", "experimental_relax_shapes"})


@dataclass(eq=False)
class TfFunction:
    name: str  # how callers spell it: the def's name or the wrapped name
    function: Optional[FunctionInfo]  # the def (None for a wrapped callable not defined here)
    maker: cst.CSTNode  # the decorator expression (`tf.function` or `tf.function(...)`) or the wrapping call
    options: Dict[str, cst.BaseExpression] = field(default_factory=dict)
    call_sites: List[CallSite] = field(default_factory=list)

    @property
    def relaxes_shapes(self) -> bool:
        for key in SHAPE_RELAXING:
            value = self.options.get(key)
            if value is not None and not (isinstance(value, cst.Name) and value.value in ("False", "None")):
                return True
        return False


def find_tf_functions(model: ModuleModel) -> List[TfFunction]:
    found: List[TfFunction] = []
    by_function: Dict[FunctionInfo, TfFunction] = {}
    for function in model.functions:
        for decorator in function.node.decorators:
            expr = decorator.decorator
            name = model.call_name(expr) if isinstance(expr, cst.Call) else model.resolve(expr)
            if name == "tf.function":
                tf_function = TfFunction(function.name, function, expr, _options(expr))
                found.append(tf_function)
                by_function[function] = tf_function
                break
    wrapped: Dict[str, TfFunction] = {}
    for site in model.calls:
        if model.call_name(site.node) != "tf.function" or not site.node.args or site.node.args[0].keyword is not None:
            continue
        statement = site.statement
        small = statement.body[0] if statement is not None and len(statement.body) == 1 else None
        if not isinstance(small, cst.Assign) or small.value is not site.node or len(small.targets) != 1:
            continue
        target = small.targets[0].target
        if not isinstance(target, cst.Name):
            continue
        _scope, bindings = model.scope_bindings(target.value, site.function)
        if not all(b.kind == "assign" and b.value is site.node for b in bindings):
            continue
        inner = model.effects.resolve_callable(site.node.args[0].value, site.function)
        tf_function = TfFunction(
            target.value, inner if isinstance(inner, FunctionInfo) else None, site.node, _options(site.node, wrapper=True)
        )
        found.append(tf_function)
        wrapped[target.value] = tf_function
    for site in model.calls:
        func = site.node.func
        if isinstance(func, cst.Name):
            if func.value in wrapped:
                _scope, bindings = model.scope_bindings(func.value, site.function)
                if bindings and all(b.value is wrapped[func.value].maker for b in bindings):
                    wrapped[func.value].call_sites.append(site)
                continue
            target = model.lookup_function(func.value, site.function)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            target = model.effects.resolve_callable(func, site.function)
        else:
            continue
        if isinstance(target, FunctionInfo) and target in by_function:
            by_function[target].call_sites.append(site)
    return found


def _options(expr: cst.CSTNode, wrapper: bool = False) -> Dict[str, cst.BaseExpression]:
    if not isinstance(expr, cst.Call):
        return {}
    options = {arg.keyword.value: arg.value for arg in expr.args if arg.keyword is not None}
    positional = [arg for arg in expr.args if arg.keyword is None]
    if len(positional) > (1 if wrapper else 0):
        options["input_signature"] = positional[-1].value  # tf.function(f, signature): read as given
    return options
