"""Keras layers: which constructor argument is a layer's width, and which layers are output layers.

An output layer's width is fixed by the task (classes, targets, an image's channels), so width
rules must leave it alone. A layer counts as an output layer when
- it is the last layer of a ``Sequential([...])`` list or of a run of ``model.add(...)`` calls
  (activation, dropout, normalisation and reshape layers after it do not count);
- its result flows to the ``outputs`` of ``Model(inputs, outputs)``, through names, pass-through
  layers, TensorFlow ops and same-file helpers;
- its result is what a function (a subclassed model's ``call``, a ``build_head(x)`` helper)
  returns: the caller may use it as an output, and when unsure the answer is "output";
- it has a softmax or sigmoid activation, or its result goes into a ``Softmax`` or
  ``Activation("softmax"/"sigmoid")`` layer or ``tf.nn.softmax``.
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterable, List, Optional, Set, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument, bool_literal, has_star_args, int_literal, keyword_argument, keyword_value
from tflint_perf.analysis.keras_models import FUNCTIONAL_MODEL_CLASSES, SEQUENTIAL_MODEL_CLASSES
from tflint_perf.analysis.model import FunctionInfo, ModuleModel, Place
from tflint_perf.analysis.names import dotted_text

# Layer name -> (parameter holding its width, position of that parameter).
WIDTH_PARAMETERS = {
    "Dense": ("units", 0),
    "EinsumDense": ("output_shape", 1),
    **{name: ("filters", 0) for name in (
        "Conv1D", "Conv2D", "Conv3D", "Convolution1D", "Convolution2D", "Convolution3D",
        "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose", "Convolution2DTranspose",
        "Convolution3DTranspose", "SeparableConv1D", "SeparableConv2D", "SeparableConvolution1D",
        "SeparableConvolution2D",
    )},
    **{name: ("units", 0) for name in ("LSTM", "GRU", "SimpleRNN", "CuDNNLSTM", "CuDNNGRU")},
    "Embedding": ("output_dim", 1),
    "MultiHeadAttention": ("key_dim", 1),
}
# Layers that keep the width of the layer before them: the layer before is what sets the output width.
PASS_THROUGH = frozenset(
    {
        "Activation", "Softmax", "ReLU", "LeakyReLU", "ELU", "PReLU", "ThresholdedReLU", "Dropout",
        "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "AlphaDropout", "GaussianDropout",
        "GaussianNoise", "BatchNormalization", "LayerNormalization", "GroupNormalization",
        "UnitNormalization", "Reshape", "Flatten", "Permute", "Lambda", "Concatenate", "Add", "Average",
        "Maximum", "Minimum", "Multiply", "Subtract", "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D",
    }
)
# Layers whose width is the width of the layer they wrap: marking one marks the wrapped layer.
WRAPPERS = frozenset({"TimeDistributed", "Bidirectional"})
HEAD_ACTIVATIONS = frozenset({"softmax", "sigmoid", "log_softmax"})
HEAD_FUNCTIONS = frozenset(
    {
        "tf.nn.softmax", "tf.nn.log_softmax", "tf.nn.sigmoid", "tf.sigmoid", "tf.math.sigmoid",
        "tf.math.softmax", "keras.activations.softmax", "keras.activations.sigmoid",
        "keras.activations.log_softmax", "keras.ops.softmax", "keras.ops.sigmoid",
    }
)
# Calls whose result derives from their tensor arguments (followed backwards to the layers producing them).
_OP_PREFIXES = ("tf.", "keras.ops.", "keras.activations.", "keras.backend.", "keras.layers.")
_MAX_DEPTH = 12


class LayerAnalysis:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model

    # -- queries --------------------------------------------------------------------------------
    def layer_name(self, call: cst.Call) -> Optional[str]:
        """``Dense`` for a call constructing ``keras.layers.Dense`` (any spelling), else None."""
        name = self.model.call_name(call)
        if name is None or not name.startswith("keras.layers."):
            return None
        leaf = name.rsplit(".", 1)[-1]
        return leaf if leaf[:1].isupper() else None

    def width_expression(self, call: cst.Call) -> Optional[Tuple[str, str, cst.BaseExpression]]:
        """(layer, parameter, expression) for a layer's width as written: `Dense(100)`, `Dense(HIDDEN)`,
        `Dense(units=FLAGS.hidden)`; the value behind a name is for analysis/constants.py to follow."""
        layer = self.layer_name(call)
        if layer not in WIDTH_PARAMETERS or has_star_args(call):
            return None
        parameter, position = WIDTH_PARAMETERS[layer]
        arg = argument(call, parameter, position)
        if arg is None:
            return None
        value = arg.value
        if layer == "EinsumDense" and isinstance(value, (cst.Tuple, cst.List)) and value.elements:
            value = value.elements[-1].value
        return layer, parameter, value

    def is_output_layer(self, call: cst.Call) -> bool:
        return call in self._outputs or self._has_head_activation(call)

    def runs_at_batch_one(self, call: cst.Call) -> bool:
        """A stateful RNN built for batch 1 (`LSTM(256, stateful=True, batch_input_shape=[1, None, 64])`
        or `batch_size=1`): generation one sequence at a time, whose multiplies are matrix-vector products."""
        if not bool_literal(keyword_value(call, "stateful")):
            return False
        shape = keyword_value(call, "batch_input_shape") or keyword_value(call, "batch_shape")
        if isinstance(shape, (cst.List, cst.Tuple)) and shape.elements:
            return int_literal(shape.elements[0].value) == 1
        size = keyword_value(call, "batch_size")
        return size is not None and int_literal(size) == 1

    def is_reshaped(self, call: cst.Call) -> bool:
        """A layer whose output a `Reshape` follows: its width is the product of the new shape, not a choice."""
        _ = self._outputs
        return call in self._reshaped

    # -- output layers --------------------------------------------------------------------------
    @cached_property
    def _outputs(self) -> Set[cst.Call]:
        self._marked: Set[cst.Call] = set()
        self._reshaped: Set[cst.Call] = set()
        model = self.model
        adds: dict = {}
        for site in model.calls:
            call = site.node
            name = model.call_name(call)
            where = (site.function, site.place, site.lambdas)
            if name in FUNCTIONAL_MODEL_CLASSES or (_is_super_init(call) and keyword_argument(call, "outputs") is not None):
                outputs = argument(call, "outputs", 1 if name in FUNCTIONAL_MODEL_CLASSES else None)
                if outputs is not None:
                    self._trace(outputs.value, *where, 0)
            elif name in SEQUENTIAL_MODEL_CLASSES:
                layers = argument(call, "layers", 0)
                if layers is not None:
                    items = self._sequence_items(layers.value, *where)
                    self._mark_last_of_sequence(items, *where)
                    self._note_reshaped_items(items, *where)
            elif name in HEAD_FUNCTIONS:
                for arg in call.args[:1]:
                    self._trace(arg.value, *where, 0)
            elif isinstance(call.func, cst.Call) and self.layer_name(call.func) == "Reshape" and call.args:
                self._reshaped.update(self._producers(call.args[0].value, *where))
            elif isinstance(call.func, cst.Call) and self._is_head_layer(call.func):
                for arg in call.args[:1]:
                    self._trace(arg.value, *where, 0)
            elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "add" and call.args:
                key = (site.function, dotted_text(call.func.value))
                adds.setdefault(key, []).append(site)
        for sites in adds.values():
            outer = min(len(site.place.blocks) for site in sites)
            for site in reversed(sites):
                if not self._mark_last_of_sequence([site.node.args[0].value], site.function, site.place, site.lambdas):
                    continue
                if len(site.place.blocks) == outer:
                    break  # not on a branch: the adds before it are certainly hidden layers
        for function in model.functions:
            for ret in function.returns:
                if ret.node.value is not None:
                    self._trace(ret.node.value, function, ret.place, (), 0, returned=True)
        return self._marked

    def _sequence_items(self, expr: cst.BaseExpression, scope, place, lambdas) -> List[cst.BaseExpression]:
        if isinstance(expr, (cst.List, cst.Tuple)):
            return [el.value for el in expr.elements]
        if isinstance(expr, cst.Name):
            items: List[cst.BaseExpression] = []
            for binding in self.model.reaching(expr.value, scope, place, lambdas) or []:
                if binding.kind == "assign" and isinstance(binding.value, (cst.List, cst.Tuple)):
                    items = [el.value for el in binding.value.elements]
            return items
        self._mark_all_within(expr)  # a comprehension or a call: cannot tell the last layer
        return []

    def _mark_last_of_sequence(self, items: List[cst.BaseExpression], scope, place, lambdas) -> bool:
        """Mark the last width-setting layer of ``items``; False if every item passes its width through."""
        for item in reversed(items):
            constructors = self._constructors(item, scope, place, lambdas, applied=False)
            if not constructors:
                self._mark_all_within(item)
                return True
            self._mark(constructors)
            if not all(self.layer_name(c) in PASS_THROUGH for c in constructors):
                return True
        return False

    def _note_reshaped_items(self, items: List[cst.BaseExpression], scope, place, lambdas) -> None:
        for item, following in zip(items, items[1:]):
            if any(self.layer_name(c) == "Reshape" for c in self._constructors(following, scope, place, lambdas, applied=False)):
                self._reshaped.update(self._constructors(item, scope, place, lambdas, applied=False))

    def _producers(self, tensor: cst.BaseExpression, scope, place, lambdas) -> List[cst.Call]:
        """The layer constructors whose application yields ``tensor`` (`Dense(n)(x)`, or a name bound to it)."""
        if isinstance(tensor, cst.Call):
            return self._constructors(tensor.func, scope, place, lambdas, applied=True)
        if isinstance(tensor, cst.Name):
            return [
                constructor
                for binding in self.model.reaching(tensor.value, scope, place, lambdas) or []
                if binding.kind == "assign" and isinstance(binding.value, cst.Call)
                for constructor in self._constructors(binding.value.func, binding.scope, binding.place, (), applied=True)
            ]
        return []

    def _mark(self, constructors: List[cst.Call]) -> None:
        for constructor in constructors:
            if self.layer_name(constructor) in WRAPPERS:
                self._mark_all_within(constructor)
            self._marked.add(constructor)

    def _trace(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
               lambdas: Tuple[cst.Lambda, ...], depth: int, returned: bool = False) -> None:
        """Mark the layers whose result ``expr`` (an output tensor) is, following it backwards."""
        if depth > _MAX_DEPTH:
            return
        again = lambda e: self._trace(e, scope, place, lambdas, depth + 1, returned)  # noqa: E731
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            for element in expr.elements:
                again(element.value)
        elif isinstance(expr, cst.Dict):
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    again(element.value)
        elif isinstance(expr, (cst.Subscript, cst.Attribute)) and not _is_self_attribute(expr):
            again(expr.value)
        elif isinstance(expr, cst.BinaryOperation):
            again(expr.left)
            again(expr.right)
        elif isinstance(expr, cst.IfExp):
            again(expr.body)
            again(expr.orelse)
        elif isinstance(expr, cst.Name):
            for binding in self.model.reaching(expr.value, scope, place, lambdas) or []:
                if binding.kind in ("assign", "unpack") and binding.value is not None:
                    self._trace(binding.value, binding.scope, binding.place, (), depth + 1, returned)
        elif isinstance(expr, cst.Call):
            self._trace_call(expr, scope, place, lambdas, depth, returned)

    def _trace_call(self, call: cst.Call, scope, place, lambdas, depth: int, returned: bool) -> None:
        constructors = self._constructors(call.func, scope, place, lambdas, applied=True)
        if constructors:
            self._mark(constructors)
            if any(self.layer_name(c) in PASS_THROUGH for c in constructors):
                for arg in call.args:
                    if arg.keyword is None:
                        self._trace(arg.value, scope, place, lambdas, depth + 1, returned)
            return
        if returned and self.layer_name(call) is not None:
            self._marked.add(call)  # a helper returning a layer object: its caller decides
            return
        name = self.model.call_name(call)
        if name is not None:
            if name.startswith(_OP_PREFIXES):
                for arg in call.args:
                    if arg.keyword is None:
                        self._trace(arg.value, scope, place, lambdas, depth + 1, returned)
            return
        callee = self.model.call_graph.callee(call)
        if callee is not None:
            for ret in callee.returns:
                if ret.node.value is not None:
                    self._trace(ret.node.value, callee, ret.place, (), depth + 1, returned)

    def _constructors(self, expr: cst.BaseExpression, scope, place, lambdas, applied: bool) -> List[cst.Call]:
        """The layer constructor calls an expression denotes: ``Dense(8)``, a name bound to one,
        ``self.head`` assigned one in any method."""
        if isinstance(expr, cst.Call):
            return [expr] if self.layer_name(expr) is not None else []
        values: Iterable[Optional[cst.BaseExpression]] = ()
        if isinstance(expr, cst.Name):
            bindings = self.model.reaching(expr.value, scope, place, lambdas) or []
            values = [b.value for b in bindings if b.kind == "assign"]
        elif _is_self_attribute(expr) and scope is not None:
            owner = scope.owner
            values = owner.attributes.get(expr.attr.value, []) if owner is not None else []  # type: ignore[union-attr]
        return [v for v in values if isinstance(v, cst.Call) and self.layer_name(v) is not None]

    def _mark_all_within(self, node: cst.CSTNode) -> None:
        stack: List[cst.CSTNode] = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.Call) and self.layer_name(current) is not None:
                self._marked.add(current)
            stack.extend(current.children)

    def _is_head_layer(self, call: cst.Call) -> bool:
        layer = self.layer_name(call)
        if layer == "Softmax":
            return True
        if layer == "Activation":
            arg = argument(call, "activation", 0)
            return arg is not None and self._is_head_activation(arg.value)
        return False

    def _has_head_activation(self, call: cst.Call) -> bool:
        arg = keyword_argument(call, "activation")
        return arg is not None and self._is_head_activation(arg.value)

    def _is_head_activation(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.SimpleString):
            return str(value.evaluated_value).lower() in HEAD_ACTIVATIONS
        return self.model.resolve(value) in HEAD_FUNCTIONS


def _is_super_init(call: cst.Call) -> bool:
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value == "__init__"
        and isinstance(func.value, cst.Call)
        and isinstance(func.value.func, cst.Name)
        and func.value.func.value == "super"
    )


def _is_self_attribute(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"
