"""The module's ``tf.function``s: how each is made, with which options, where it is called, and
which one a call calls.

A ``TfFunction`` (``find_tf_functions``, for TFP207) is a same-file ``def`` decorated with
``@tf.function`` / ``@tf.function(...)``, or a name bound (every binding) to ``tf.function(f, ...)``.
``options`` are the keywords given to ``tf.function``. ``call_sites`` are the same-file calls that
reach it: ``step(x)`` for a module-level or nested def or a wrapped name, ``self.step(x)`` for a
decorated method.

``TfFunctions`` (for TFP204-TFP206) answers per function and per call: whether a same-file function
is a ``tf.function`` itself (decorated, or wrapped by ``tf.function(fn)`` anywhere in the file, bound
to a name or not), and which function a call calls through a name bound to ``tf.function(fn)`` or
through ``tf.function(fn)(x)``. ``tf_function_decorator`` and ``wrapped_by`` are how both, and the
hot paths, recognise the two ways of making one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

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
        decorator = tf_function_decorator(model, function)
        if decorator is not None:
            tf_function = TfFunction(function.name, function, decorator.decorator, _options(decorator.decorator))
            found.append(tf_function)
            by_function[function] = tf_function
    wrapped: Dict[str, TfFunction] = {}
    for site in model.calls:
        wrapped_function = wrapped_by(model, site.node)
        if wrapped_function is None:
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
        inner = model.effects.resolve_callable(wrapped_function, site.function)
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
            target = model.lookup_function(func.value, site.function, site.place)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            target = model.effects.resolve_callable(func, site.function)
        else:
            continue
        if isinstance(target, FunctionInfo) and target in by_function:
            by_function[target].call_sites.append(site)
    return found


def tf_function_decorator(model: ModuleModel, function: FunctionInfo) -> Optional[cst.Decorator]:
    """The ``@tf.function`` / ``@tf.function(...)`` decorator of a function, if any."""
    for decorator in function.node.decorators:
        expr = decorator.decorator
        name = model.call_name(expr) if isinstance(expr, cst.Call) else model.resolve(expr)
        if name == "tf.function":
            return decorator
    return None


def wrapped_by(model: ModuleModel, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The function, as written, that a ``tf.function(fn, ...)`` call wraps; None for any other call
    and for ``tf.function(...)`` given only options (a decorator factory)."""
    if model.call_name(call) != "tf.function" or not call.args or call.args[0].keyword is not None:
        return None
    return call.args[0].value


class TfFunctions:
    """Which same-file functions are ``tf.function``s and which one a call calls; the wrapping calls
    are found once, when it is made."""

    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._wrapped: Set[FunctionInfo] = set()
        self._wrapper_of: Dict[cst.Call, FunctionInfo] = {}
        resolve = model.effects.resolve_callable
        for site in model.calls:
            wrapped_function = wrapped_by(model, site.node)
            if wrapped_function is not None:
                target = resolve(wrapped_function, site.function)
                if isinstance(target, FunctionInfo):
                    self._wrapped.add(target)
                    self._wrapper_of[site.node] = target

    def decorator(self, function: FunctionInfo) -> Optional[cst.Decorator]:
        """The ``@tf.function`` / ``@tf.function(...)`` decorator of a function, if any."""
        return tf_function_decorator(self.model, function)

    def is_tf_function(self, function: FunctionInfo) -> bool:
        """Decorated with ``tf.function``, or wrapped by ``tf.function(fn)`` somewhere in the file."""
        return function in self._wrapped or self.decorator(function) is not None

    def called(self, site: CallSite) -> Optional[Tuple[FunctionInfo, Optional[cst.Call]]]:
        """The ``tf.function`` a call calls: a decorated def (with no wrapper call), or the function
        wrapped by the ``tf.function(fn)`` call a name is bound to (and that call)."""
        model = self.model
        target = model.call_graph.callee(site.node)
        if target is not None:
            return (target, None) if self.decorator(target) is not None else None
        func = site.node.func
        if isinstance(func, cst.Call) and func in self._wrapper_of:
            return self._wrapper_of[func], func  # tf.function(f)(x)
        if isinstance(func, cst.Name):
            bindings = model.reaching(func.value, site.function, site.place, site.lambdas)
            if bindings and all(b.kind == "assign" and b.value in self._wrapper_of for b in bindings):
                values = {b.value for b in bindings}
                if len(values) == 1:
                    wrapper = next(iter(values))
                    return self._wrapper_of[wrapper], wrapper  # type: ignore[index]
        return None


def _options(expr: cst.CSTNode, wrapper: bool = False) -> Dict[str, cst.BaseExpression]:
    if not isinstance(expr, cst.Call):
        return {}
    options = {arg.keyword.value: arg.value for arg in expr.args if arg.keyword is not None}
    positional = [arg for arg in expr.args if arg.keyword is None]
    if len(positional) > (1 if wrapper else 0):
        options["input_signature"] = positional[-1].value  # tf.function(f, signature): read as given
    return options
