"""Keras models and ``tf.function`` objects as values: what a receiver or a called name holds.

- ``KerasModels.is_model(expr, scope, place)``: the expression holds a Keras model: a call to
  ``keras.Sequential`` / ``keras.Model`` / ``keras.models.load_model`` / ``keras.applications.*``,
  an instance of a same-file ``keras.Model`` subclass, a same-file function whose every return is
  one, a name every reaching binding of which is one, ``self.x`` every assignment of which is one,
  a parameter every same-file caller passes one for, a Keras callback's ``self.model``,
  ``keras_hub.models.X.from_preset(...)``. Anything else (a parameter of a function nobody in the
  file calls, an unresolved call) is not known to be a model: rules stay silent.
- ``TfFunctions``: which same-file functions are ``tf.function``s themselves (decorated, or wrapped
  by ``tf.function(fn)`` anywhere in the file), and which function a call calls through a name bound
  to ``tf.function(fn)``.
"""

from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

import libcst as cst

from tflint_perf.analysis.model import Binding, CallSite, ClassInfo, FunctionInfo, ModuleModel, Place
from tflint_perf.analysis.names import dotted_text

MODEL_CONSTRUCTORS = frozenset(
    {
        "keras.Sequential", "keras.models.Sequential", "keras.Model", "keras.models.Model",
        "keras.models.load_model", "keras.saving.load_model", "keras.models.clone_model",
        "keras.models.model_from_json", "keras.models.model_from_config",
    }
)
_CALLBACK_BASES = frozenset({"keras.callbacks.Callback"})
_HUB_PACKAGES = frozenset({"keras_hub", "keras_nlp", "keras_cv"})
_MODEL_BASES = frozenset({"keras.Model", "keras.models.Model", "keras.Sequential", "keras.models.Sequential"})
_MAX_DEPTH = 4


class KerasModels:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._returns: Dict[FunctionInfo, bool] = {}

    def builds_model(self, call: cst.Call, depth: int = 0) -> bool:
        """The call returns a new (or loaded) Keras model."""
        model = self.model
        name = model.call_name(call)
        if name is not None:
            return name in MODEL_CONSTRUCTORS or _is_application(name)
        if self._is_hub_preset(call):
            return True
        if isinstance(call.func, cst.Name) and call.func.value in model.classes:
            return self.is_model_class(model.classes[call.func.value])
        target = model.call_graph.callee(call)
        return target is not None and self.returns_model(target, depth + 1)

    def returns_model(self, function: FunctionInfo, depth: int = 0) -> bool:
        """Every ``return`` of a same-file function gives a Keras model (and there is one)."""
        if depth > _MAX_DEPTH:
            return False
        if function not in self._returns:
            self._returns[function] = False  # recursion guard
            values = [r.node.value for r in function.returns]
            self._returns[function] = bool(values) and all(
                v is not None and self.is_model(v, function, r.place, depth + 1)
                for v, r in zip(values, function.returns)
            )
        return self._returns[function]

    def is_model_class(self, cls: ClassInfo, depth: int = 0) -> bool:
        if depth > _MAX_DEPTH:
            return False
        for base in cls.node.bases:
            name = self.model.resolve(base.value)
            if name in _MODEL_BASES:
                return True
            if isinstance(base.value, cst.Name) and base.value.value in self.model.classes:
                parent = self.model.classes[base.value.value]
                if parent is not cls and self.is_model_class(parent, depth + 1):
                    return True
        return False

    def is_model(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place, depth: int = 0) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Call):
            return self.builds_model(expr, depth)
        if isinstance(expr, cst.Name):
            bindings = self.model.reaching(expr.value, scope, place)
            if not bindings:
                return False
            return all(self._binding_is_model(b, depth + 1) for b in bindings)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            owner = scope.owner if scope is not None else None
            if owner is not None and expr.attr.value == "model" and self._is_callback_class(owner):
                return True  # Keras sets a callback's `self.model` to the model being trained
            values = owner.attributes.get(expr.attr.value, []) if owner is not None else []
            return bool(values) and all(self._attribute_is_model(v, depth + 1) for v in values)
        return False

    def _binding_is_model(self, binding: Binding, depth: int) -> bool:
        if binding.kind == "assign" and binding.value is not None:
            return self.is_model(binding.value, binding.scope, binding.place, depth)
        if binding.kind == "param" and binding.scope is not None:
            return self._argument_is_model(binding.scope, binding.name, depth)
        return False

    def _argument_is_model(self, function: FunctionInfo, param: str, depth: int) -> bool:
        """Every same-file call of ``function`` passes a Keras model for ``param`` (and there is one)."""
        if depth > _MAX_DEPTH:
            return False
        callers = self.model.call_graph.callers(function)
        if not callers:
            return False
        params = function.node.params
        positional = [p.name.value for p in [*params.posonly_params, *params.params]]
        if function.is_method and positional:
            positional = positional[1:]
        for site in callers:
            value: Optional[cst.BaseExpression] = None
            for index, arg in enumerate(site.node.args):
                if arg.star:
                    return False
                if arg.keyword is not None and arg.keyword.value == param:
                    value = arg.value
                elif arg.keyword is None and index < len(positional) and positional[index] == param:
                    value = arg.value
            if value is None or not self.is_model(value, site.function, site.place, depth + 1):
                return False
        return True

    def _is_callback_class(self, cls: ClassInfo) -> bool:
        return any(self.model.resolve(base.value) in _CALLBACK_BASES for base in cls.node.bases)

    def _is_hub_preset(self, call: cst.Call) -> bool:
        """``keras_hub.models.X.from_preset(...)`` (also keras_nlp, keras_cv)."""
        text = dotted_text(call.func) or ""
        root = text.split(".", 1)[0]
        if not text.endswith(".from_preset") or root not in _HUB_PACKAGES or ".models." not in text:
            return False
        bindings = self.model.bindings.get(None, {}).get(root, [])
        return bool(bindings) and all(b.kind == "import" for b in bindings)

    def is_model_site(self, expr: cst.BaseExpression, site: CallSite) -> bool:
        return self.is_model(expr, site.function, site.place)

    def _attribute_is_model(self, value: cst.BaseExpression, depth: int) -> bool:
        if isinstance(value, cst.Call):
            return self.builds_model(value, depth)
        return False


def _is_application(name: str) -> bool:
    """``keras.applications.ResNet50``, ``keras.applications.resnet50.ResNet50``."""
    if not name.startswith("keras.applications."):
        return False
    leaf = name.rsplit(".", 1)[-1]
    return leaf[:1].isupper()


class TfFunctions:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._wrapped: Set[FunctionInfo] = set()
        self._wrapper_of: Dict[cst.Call, FunctionInfo] = {}
        resolve = model.effects.resolve_callable
        for site in model.calls:
            if model.call_name(site.node) == "tf.function" and site.node.args and site.node.args[0].keyword is None:
                target = resolve(site.node.args[0].value, site.function)
                if isinstance(target, FunctionInfo):
                    self._wrapped.add(target)
                    self._wrapper_of[site.node] = target

    def decorator(self, function: FunctionInfo) -> Optional[cst.Decorator]:
        """The ``@tf.function`` / ``@tf.function(...)`` decorator of a function, if any."""
        for decorator in function.node.decorators:
            expr = decorator.decorator
            name = self.model.call_name(expr) if isinstance(expr, cst.Call) else self.model.resolve(expr)
            if name == "tf.function":
                return decorator
        return None

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
