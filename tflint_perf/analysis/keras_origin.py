"""Which Keras a model comes from, the constructor that built it, and what guards a statement.

(``analysis/models.py`` answers the plainer "is this a Keras model" for the loop rules; the two grew in
parallel and should become one module.)

A receiver counts as a model only when the analysis can see where it comes from: a call of a Keras
model constructor or loader (``keras.Sequential``, ``keras.Model``, ``keras.models.load_model``,
``keras.applications.*``), a same-file class derived from one, a same-file function whose every
``return`` is a model, or a name / ``self.attr`` whose every reaching assignment is one of those.
Anything else (a parameter, an imported helper's result) is unknown, and rules stay silent.

``origin`` says which Keras: ``"tf.keras"`` (``tensorflow.keras``, ``tf_keras``, ``tf.compat.v1.keras``)
or ``"keras"`` (the standalone package, whose version the linter cannot know).
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import int_literal
from tflint_perf.analysis.model import Binding, ClassInfo, FunctionInfo, ModuleModel, Place
from tflint_perf.analysis.names import dotted_text

MODEL_CLASSES = frozenset({"keras.Model", "keras.models.Model", "keras.Sequential", "keras.models.Sequential"})
MODEL_FACTORIES = MODEL_CLASSES | frozenset({
    "keras.models.load_model", "keras.saving.load_model", "keras.models.clone_model",
    "keras.models.model_from_json", "keras.models.model_from_config", "keras.models.model_from_yaml",
})
_APPLICATIONS = "keras.applications."
_SEQUENTIAL = frozenset({"keras.Sequential", "keras.models.Sequential"})
_CHEAP_LAYERS = frozenset({
    "Dense", "Dropout", "Flatten", "InputLayer", "Input", "Activation", "ReLU", "BatchNormalization",
    "LayerNormalization", "Normalization", "Rescaling", "Reshape",
})
_MAX_DEPTH = 4
_DEBUG_WORDS = ("debug", "eager", "__debug__", "verbose", "profil", "test")


class KerasOrigins:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model

    def origin(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
               lambdas: Tuple[cst.Lambda, ...] = ()) -> Optional[str]:
        """``"tf.keras"`` or ``"keras"`` when ``expr`` is certainly a Keras model, else None."""
        origins = self._origins(expr, scope, place, lambdas, 0)
        if not origins or None in origins or len(set(origins)) != 1:
            return None
        return origins[0]

    def _origins(self, expr, scope, place, lambdas, depth) -> List[Optional[str]]:
        if depth > _MAX_DEPTH:
            return [None]
        model = self.model
        if isinstance(expr, cst.Call):
            name = model.call_name(expr)
            if name is not None and (name in MODEL_FACTORIES or (name.startswith(_APPLICATIONS) and name.count(".") >= 3)):
                return [self._origin_of_name(expr.func)]
            if isinstance(expr.func, cst.Name):
                cls = model.classes.get(expr.func.value)
                if cls is not None and model.lookup_function(expr.func.value, scope) is None:
                    return [self._class_origin(cls, depth + 1)]
                function = model.lookup_function(expr.func.value, scope)
                if function is not None:
                    values = [ret.node.value for ret in function.returns]
                    if not values or any(value is None for value in values):
                        return [None]
                    found: List[Optional[str]] = []
                    for ret in function.returns:
                        found += self._origins(ret.node.value, function, ret.place, (), depth + 1)
                    return found
            return [None]
        if isinstance(expr, cst.Name):
            bindings = model.reaching(expr.value, scope, place, lambdas)
            if not bindings:
                return [None]
            found = []
            for binding in bindings:
                found += self._binding_origins(binding, depth)
            return found
        if (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"
                and scope is not None and scope.owner is not None):
            values = scope.owner.attributes.get(expr.attr.value)
            if not values:
                return [None]
            found = []
            for value in values:
                # Assigned in some method: follow it from that method's body (names there are its locals).
                found += self._origins(value, None, Place(1 << 30, ()), (), depth + 1) if not isinstance(value, cst.Name) else [None]
            return found
        return [None]

    def constructor(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                    lambdas: Tuple[cst.Lambda, ...] = ()) -> Optional[cst.Call]:
        """The one model-constructor call a name is bound to where it is used, else None."""
        if not isinstance(expr, cst.Name):
            return None
        bindings = self.model.reaching(expr.value, scope, place, lambdas)
        if not bindings or len(bindings) != 1:
            return None
        value = bindings[0].value
        if bindings[0].kind != "assign" or not isinstance(value, cst.Call):
            return None
        return value if self.model.call_name(value) in MODEL_CLASSES else None

    def is_small_mlp(self, constructor: cst.Call) -> bool:
        """``Sequential([...])`` of at most 8 layers, all cheap per example (Dense of at most 1024 units
        given as literals, Dropout, normalisation, reshaping), with at least one hidden Dense layer: a
        model whose step costs less than the Python work around it. A lone Dense layer (a linear or
        logistic regression) is left out: in real code it is a demonstration on a few thousand points."""
        if self.model.call_name(constructor) not in _SEQUENTIAL or not constructor.args:
            return False
        items = constructor.args[0].value
        if constructor.args[0].keyword not in (None,) and constructor.args[0].keyword.value != "layers":
            return False
        if not isinstance(items, (cst.List, cst.Tuple)) or not items.elements or len(items.elements) > 8:
            return False
        layers = self.model.layers
        dense = 0
        for element in items.elements:
            value = element.value
            if isinstance(element, cst.StarredElement) or not isinstance(value, cst.Call):
                return False
            if self.model.call_name(value) == "keras.Input":
                continue
            name = layers.layer_name(value)
            if name not in _CHEAP_LAYERS:
                return False
            if name == "Dense":
                dense += 1
                width = layers.width_expression(value)
                units = int_literal(width[2]) if width is not None else None
                if units is None or units > 1024:
                    return False
        return dense >= 2

    def _binding_origins(self, binding: Binding, depth: int) -> List[Optional[str]]:
        if binding.kind != "assign" or binding.value is None:
            return [None]
        return self._origins(binding.value, binding.scope, binding.place, (), depth + 1)

    def _class_origin(self, cls: ClassInfo, depth: int) -> Optional[str]:
        if depth > _MAX_DEPTH:
            return None
        for base in cls.node.bases:
            name = self.model.resolve(base.value)
            if name in MODEL_CLASSES:
                return self._origin_of_name(base.value)
            if isinstance(base.value, cst.Name) and base.value.value in self.model.classes:
                found = self._class_origin(self.model.classes[base.value.value], depth + 1)
                if found is not None:
                    return found
        return None

    def _origin_of_name(self, node: cst.BaseExpression) -> Optional[str]:
        text = dotted_text(node)
        if text is None:
            return None
        qualified = self.model.imports.qualified(text.split(".")[0]) or ""
        rest = text.partition(".")[2]
        full = f"{qualified}.{rest}" if rest else qualified
        if full.startswith(("tensorflow", "tf_keras")):
            return "tf.keras"
        if full.startswith("keras"):
            return "keras"
        return None


def enclosing_tests(module: cst.Module, place: Place) -> List[cst.BaseExpression]:
    """The conditions of the ``if`` / ``elif`` / ``while`` statements whose body holds ``place``."""
    tests: List[cst.BaseExpression] = []
    statements: List[cst.CSTNode] = list(module.body)
    for block in place.blocks:
        owner = _owner_of(statements, block)
        if owner is None:
            return tests
        node, test = owner
        if test is not None:
            tests.append(test)
        statements = list(block.body) if isinstance(block, cst.IndentedBlock) else []
    return tests


def _owner_of(statements: List[cst.CSTNode], block: cst.CSTNode) -> Optional[Tuple[cst.CSTNode, Optional[cst.BaseExpression]]]:
    for statement in statements:
        stack = [statement]
        while stack:
            node = stack.pop()
            if getattr(node, "body", None) is block:
                return node, node.test if isinstance(node, (cst.If, cst.While)) else None
            for name in ("orelse", "handlers", "finalbody"):
                child = getattr(node, name, None)
                if isinstance(child, (list, tuple)):
                    stack.extend(child)
                elif child is not None:
                    if getattr(child, "body", None) is block or isinstance(child, (cst.If, cst.Else, cst.Finally)):
                        stack.append(child)
    return None


def is_debug_guarded(module: cst.Module, place: Place) -> bool:
    """Inside ``if args.debug:``, ``if __debug__:``, ``if FLAGS.eager:`` and the like: a switch the user
    turns on to debug, not the training configuration."""
    for test in enclosing_tests(module, place):
        text = module.code_for_node(test).lower()
        if any(word in text for word in _DEBUG_WORDS):
            return True
    return False


_TRAINING_METHODS = frozenset({"fit", "fit_generator", "train_on_batch", "apply_gradients", "minimize"})


def module_trains(model: ModuleModel) -> bool:
    """The module trains something: it calls ``fit`` / ``train_on_batch`` / ``apply_gradients`` /
    ``minimize`` or opens a ``tf.GradientTape``. A guide that only demonstrates an API does not."""
    for site in model.calls:
        func = site.node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _TRAINING_METHODS:
            return True
        if model.call_name(site.node) == "tf.GradientTape":
            return True
    return False
