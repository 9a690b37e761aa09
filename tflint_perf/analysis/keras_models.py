"""Keras models as values: whether an expression holds one, which Keras it comes from, and the one
constructor that built it. ``model.keras_models``.

An expression counts as a model only when the analysis can see where it comes from: a call of a Keras
model class or loader, a same-file subclass of a model class, a same-file function whose every
``return`` is a model, or a name / ``self.attr`` whose every reaching assignment is one of those.
Anything else (an imported helper's result, an unresolved call) is unknown, and rules stay silent.

Two questions, asked by different rules, take different evidence:

- ``is_model`` / ``builds_model`` (the loop rules, TFP203 and TFP205) also accept a parameter that
  every same-file caller passes a model for, a Keras callback's ``self.model``, a ``keras_hub``
  preset and a method returning a model (``self._build()``): a ``predict`` in a loop is worth
  reporting whoever built the model.
- ``origin`` (TFP208, TFP209, TFP402) says which Keras: ``"tf.keras"`` (``tensorflow.keras``,
  ``tf_keras``, ``tf.compat.v1.keras``) or ``"keras"`` (the standalone package, whose version the
  linter cannot know). It follows only what names that package: a constructor or loader, a subclass,
  a same-file factory, assignments.

``derives_from`` is the one base-class walk: Keras model classes here, every Keras class the hot
paths care about (layers, losses, metrics, schedules) in ``analysis/hotpaths.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument, int_literal
from tflint_perf.analysis.classes import attribute_values, method_of
from tflint_perf.analysis.data_size import DataSizes
from tflint_perf.analysis.layer_cost import declared_input, stack_cost
from tflint_perf.analysis.model import Binding, CallSite, ClassInfo, FunctionInfo, ModuleModel, Place
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.unpacking import Source, unpacked_sources
from tflint_perf.analysis import rows
from tflint_perf.analysis.rows import Rows

# Canonical names. A call of a model class builds a model; a subclass of one is a model class.
FUNCTIONAL_MODEL_CLASSES = frozenset({"keras.Model", "keras.models.Model"})
SEQUENTIAL_MODEL_CLASSES = frozenset({"keras.Sequential", "keras.models.Sequential"})
MODEL_CLASSES = FUNCTIONAL_MODEL_CLASSES | SEQUENTIAL_MODEL_CLASSES
# Functions that return a model they load, copy or rebuild.
MODEL_LOADERS = frozenset({
    "keras.models.load_model", "keras.saving.load_model", "keras.models.clone_model",
    "keras.models.model_from_json", "keras.models.model_from_config",
})
# What `builds_model` accepts by name (with `keras.applications.*` models).
MODEL_CONSTRUCTORS = MODEL_CLASSES | MODEL_LOADERS
# What `origin` accepts by name: also `model_from_yaml`, which `builds_model` has never known.
ORIGIN_MODEL_FACTORIES = MODEL_CONSTRUCTORS | frozenset({"keras.models.model_from_yaml"})
_APPLICATIONS = "keras.applications."
_CALLBACK_BASES = frozenset({"keras.callbacks.Callback"})
_HUB_PACKAGES = frozenset({"keras_hub", "keras_nlp", "keras_cv"})
# Layers that cost little per example: a short stack of them (Dense layers not too wide) is a small MLP.
_CHEAP_LAYERS = frozenset({
    "Dense", "Dropout", "Flatten", "InputLayer", "Input", "Activation", "ReLU", "BatchNormalization",
    "LayerNormalization", "Normalization", "Rescaling", "Reshape",
})
# A small MLP: at most this many layers. A small convnet may hold more (normalisation and activation
# around each convolution), up to _STACK_LAYERS.
_MLP_LAYERS = 8
_STACK_LAYERS = 24
_SMALL_CONVOLUTION_LAYERS = frozenset({
    "Conv1D", "Conv2D", "Convolution1D", "Convolution2D", "SeparableConv1D", "SeparableConv2D", "DepthwiseConv2D",
})
_POOLING_LAYERS = frozenset({
    "MaxPooling1D", "MaxPooling2D", "MaxPool1D", "MaxPool2D", "AveragePooling1D", "AveragePooling2D", "AvgPool2D",
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D", "ZeroPadding2D",
})
_SMALL_CONVOLUTIONS = 6
_SMALL_FILTERS = 64
SMALL_INPUT = 32 * 32 * 3  # numbers of one example: an MNIST digit (784), a CIFAR image (3,072)
# Multiply-adds of one example's forward pass (``layer_cost.stack_cost``, an upper bound): the classic
# MNIST convnet (3 x 3 convolutions of 32 and 64 filters, pooling, a Dense head) costs about 15 million;
# a step of 32 such examples, forward and backward, is about 3 GFLOP: a millisecond or less on a GPU.
# Six 64-filter convolutions on a whole 32 x 32 CIFAR image cost about 190 million: a step of milliseconds.
_SMALL_CONVNET_COST = 20_000_000
# How deep a walk follows assignments, returns, callers and base classes before it gives up (unknown).
_MAX_DEPTH = 6


def derives_from(model: ModuleModel, cls: ClassInfo, is_base: Callable[[str], bool], depth: int = 0) -> bool:
    """``cls`` subclasses a class whose canonical name ``is_base`` accepts, directly or through
    same-file classes."""
    return _first_base(model, cls, is_base, depth) is not None


def _first_base(model: ModuleModel, cls: ClassInfo, is_base: Callable[[str], bool],
                depth: int) -> Optional[cst.BaseExpression]:
    """The first base expression, depth first through same-file parents, whose canonical name
    ``is_base`` accepts: the one that says which package the class comes from."""
    if depth > _MAX_DEPTH:
        return None
    for base in cls.node.bases:
        name = model.resolve(base.value)
        if name is not None and is_base(name):
            return base.value
        if isinstance(base.value, cst.Name) and base.value.value in model.classes:
            parent = model.classes[base.value.value]
            if parent is not cls:
                found = _first_base(model, parent, is_base, depth + 1)
                if found is not None:
                    return found
    return None


class KerasModels:
    """Is an expression a Keras model, which Keras, which constructor built it (the module's docstring
    says what evidence each question takes)."""

    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._returns: Dict[FunctionInfo, bool] = {}

    # -- is it a model (the loop rules) ------------------------------------------------------------
    def is_model_site(self, expr: cst.BaseExpression, site: CallSite) -> bool:
        return self.is_model(expr, site.function, site.place)

    def is_model(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place, depth: int = 0) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Call):
            return self.builds_model(expr, depth)
        if _is_self(expr) and scope is not None and scope.binds_self and scope.owner is not None:
            return self.is_model_class(scope.owner)  # `self.predict(obs)` in a method of a model subclass
        if isinstance(expr, cst.Name):
            bindings = self.model.reaching(expr.value, scope, place)
            if scope is not None and self.model.scope_bindings(expr.value, scope)[0] is None:
                bindings = self.model.call_graph.globals_when_run(expr.value, scope)  # a global, read when the function runs
            if not bindings:
                return False
            return all(self._binding_is_model(b, depth + 1) for b in bindings)
        if isinstance(expr, cst.Attribute) and _is_self(expr.value):
            owner = scope.owner if scope is not None else None
            if owner is not None and expr.attr.value == "model" and self._is_callback_class(owner):
                return True  # Keras sets a callback's `self.model` to the model being trained
            # assigned in the class's own methods or its same-file bases' (`self.q_model` of the agent base)
            values = attribute_values(self.model, owner, expr.attr.value) if owner is not None else []
            return bool(values) and all(isinstance(v, cst.Call) and self.builds_model(v, depth + 1) for v in values)
        return False

    def defines_own(self, expr: cst.BaseExpression, site: CallSite, method: str) -> bool:
        """Every class the receiver ``expr`` can be is one of the project's that defines ``method``
        itself or in a first-party base (``classes.method_of``): ``model.predict(x)`` on a ``QNetwork``
        whose ``def predict(self, inputs): return tf.argmax(self(inputs), -1)`` calls the model directly
        runs that method, not Keras'. The receiver: ``self`` in a method, a name every reaching binding
        of which constructs such a class (``model = QNetwork()``), ``self.net`` assigned only such calls."""
        classes = self._instance_classes(expr, site.function, site.place)
        return bool(classes) and all(method_of(self.model, cls, method) is not None for cls in classes)

    def _instance_classes(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place) -> List[ClassInfo]:
        """The project classes ``expr`` is an instance of, when the code shows every one; else []."""
        if _is_self(expr):
            return [scope.owner] if scope is not None and scope.binds_self and scope.owner is not None else []
        if isinstance(expr, cst.Name):
            values = [b.value if b.kind == "assign" else None for b in self.model.reaching(expr.value, scope, place) or []]
        elif isinstance(expr, cst.Attribute) and _is_self(expr.value) and scope is not None and scope.owner is not None:
            values = attribute_values(self.model, scope.owner, expr.attr.value)
        else:
            return []
        found: List[ClassInfo] = []
        for value in values:
            func = value.func if isinstance(value, cst.Call) else None
            cls = self.model.classes.get(func.value) if isinstance(func, cst.Name) else None
            if cls is None and func is not None:
                foreign = self.model.foreign(func)
                cls = foreign if isinstance(foreign, ClassInfo) else None
            if cls is None:
                return []
            found.append(cls)
        return found

    def builds_model(self, call: cst.Call, depth: int = 0) -> bool:
        """The call returns a new (or loaded) Keras model."""
        model = self.model
        name = model.call_name(call)
        if name is not None:
            return name in MODEL_CONSTRUCTORS or _is_application_model(name)
        if self._is_hub_preset(call):
            return True
        if isinstance(call.func, cst.Name) and call.func.value in model.classes:
            return self.is_model_class(model.classes[call.func.value])
        foreign = model.foreign(call.func)
        if isinstance(foreign, ClassInfo):
            # `VGG16([32, 32, 3])` with `class VGG16(models.Model)` in the project's `network.py`
            return derives_from(foreign.model or model, foreign, MODEL_CLASSES.__contains__, depth)
        if isinstance(foreign, FunctionInfo) and foreign.model is not None and foreign.model is not model:
            # `gan.generator(inputs, image_size)`, the project's `lib/gan.py` building a `Model(...)`
            return foreign.model.keras_models.returns_model(foreign)  # type: ignore[attr-defined]
        target = model.call_graph.callee(call)
        return target is not None and self.returns_model(target, depth + 1)

    def returns_model(self, function: FunctionInfo, depth: int = 0) -> bool:
        """Every ``return`` of a same-file function gives a Keras model (and there is one). The answer
        does not depend on who asks, so it is worked out once with a whole depth budget of its own (a
        builder calling a builder, asked from deep in a chain, must not be remembered as no model);
        the memo doubles as the recursion guard."""
        if function not in self._returns:
            self._returns[function] = False  # recursion guard
            values = [r.node.value for r in function.returns]
            self._returns[function] = bool(values) and all(
                v is not None and self.is_model(v, function, r.place, 0)
                for v, r in zip(values, function.returns)
            )
        return self._returns[function]

    def is_model_class(self, cls: ClassInfo, depth: int = 0) -> bool:
        return derives_from(self.model, cls, MODEL_CLASSES.__contains__, depth)

    def _binding_is_model(self, binding: Binding, depth: int) -> bool:
        if binding.kind == "assign" and binding.value is not None:
            return self.is_model(binding.value, binding.scope, binding.place, depth)
        if binding.kind == "param" and binding.scope is not None:
            return self._argument_is_model(binding.scope, binding.name, depth)
        if binding.kind == "unpack":
            # `generator, discriminator, adversarial = models`, the caller's `models = (generator, ...)`
            sources = unpacked_sources(self.model, binding)
            return bool(sources) and all(self._source_is_model(s, depth + 1) for s in sources or ())
        return False

    def _source_is_model(self, source: Source, depth: int) -> bool:
        models = self if source.model is self.model else source.model.keras_models  # type: ignore[attr-defined]
        return models.is_model(source.expr, source.scope, source.place, depth)

    def _argument_is_model(self, function: FunctionInfo, param: str, depth: int) -> bool:
        """Every same-file call of ``function`` passes a Keras model for ``param`` (and there is one)."""
        if depth > _MAX_DEPTH:
            return False
        callers = self.model.call_graph.callers(function)
        if not callers:
            return False
        positional = function.positional_parameters
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

    # -- which Keras ----------------------------------------------------------------------------------
    def origin(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
               lambdas: Tuple[cst.Lambda, ...] = ()) -> Optional[str]:
        """``"tf.keras"`` or ``"keras"`` when ``expr`` is certainly a Keras model, else None."""
        origins = self._origins(expr, scope, place, lambdas, 0)
        if not origins or None in origins or len(set(origins)) != 1:
            return None
        return origins[0]

    def _origins(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                 lambdas: Tuple[cst.Lambda, ...], depth: int) -> List[Optional[str]]:
        """The Keras of every model ``expr`` may hold; None for any source that is not known to be one."""
        if depth > _MAX_DEPTH:
            return [None]
        model = self.model
        if isinstance(expr, cst.Call):
            name = model.call_name(expr)
            if name is not None and (name in ORIGIN_MODEL_FACTORIES or _is_application_module_member(name)):
                return [self._keras_of(expr.func)]
            if isinstance(expr.func, cst.Name):
                function = model.lookup_function(expr.func.value, scope)
                cls = model.classes.get(expr.func.value)
                if cls is not None and function is None:
                    base = _first_base(model, cls, MODEL_CLASSES.__contains__, depth + 1)
                    return [self._keras_of(base) if base is not None else None]
                if function is not None:
                    return self._returned_origins(function, depth)
            foreign = model.foreign(expr.func, scope)
            if isinstance(foreign, FunctionInfo) and foreign.model is not None and foreign.model is not model:
                # `model = ShuffleNet(input_shape=...)`, the project's `shufflenet.py` returning `Model(...)`
                return foreign.model.keras_models._returned_origins(foreign, depth)  # type: ignore[attr-defined]
            return [None]
        if isinstance(expr, cst.Name):
            bindings = model.reaching(expr.value, scope, place, lambdas)
            if not bindings:
                return [None]
            found = []
            for binding in bindings:
                found += self._binding_origins(binding, depth)
            return found
        if isinstance(expr, cst.Attribute) and _is_self(expr.value) and scope is not None and scope.owner is not None:
            values = scope.owner.attributes.get(expr.attr.value)
            if not values:
                return [None]
            found = []
            for value in values:
                # Assigned in some method: followed as if at module level, so a name there is unknown.
                found += [None] if isinstance(value, cst.Name) else self._origins(value, None, _AFTER_EVERYTHING, (), depth + 1)
            return found
        return [None]

    def _returned_origins(self, function: FunctionInfo, depth: int) -> List[Optional[str]]:
        """The Keras of every model a function of this module returns (None for a bare ``return``)."""
        if not function.returns or any(ret.node.value is None for ret in function.returns):
            return [None]
        found: List[Optional[str]] = []
        for ret in function.returns:
            found += self._origins(ret.node.value, function, ret.place, (), depth + 1)
        return found

    def _binding_origins(self, binding: Binding, depth: int) -> List[Optional[str]]:
        if binding.kind != "assign" or binding.value is None:
            return [None]
        return self._origins(binding.value, binding.scope, binding.place, (), depth + 1)

    def _keras_of(self, node: cst.BaseExpression) -> Optional[str]:
        """Which Keras the name ``node`` is imported from, by the module it is imported from."""
        full = self.model.imports.qualified_chain(node)
        if full is None:
            return None
        if full.startswith(("tensorflow", "tf_keras")):
            return "tf.keras"
        if full.startswith("keras"):
            return "keras"
        return None

    # -- the constructor ------------------------------------------------------------------------------
    def constructor(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                    lambdas: Tuple[cst.Lambda, ...] = ()) -> Optional[cst.Call]:
        """The one model-class call a name is bound to where it is used, else None."""
        if not isinstance(expr, cst.Name):
            return None
        bindings = self.model.reaching(expr.value, scope, place, lambdas)
        if not bindings or len(bindings) != 1:
            return None
        value = bindings[0].value
        if bindings[0].kind != "assign" or not isinstance(value, cst.Call):
            return None
        return value if self.model.call_name(value) in MODEL_CLASSES else None

    # -- what a compiled model is fitted on ---------------------------------------------------------------
    def later_fits(self, receiver: cst.BaseExpression, site: CallSite) -> List[CallSite]:
        """The ``<receiver>.fit(...)`` calls after ``site`` (a ``compile``) in the same function, or at
        module level (a notebook's later cells), on the model the name holds at ``site``: reached by the
        same bindings, so a name rebound to another model in between is not followed. When the function
        is a factory that returns that model (every ``return`` returns the name, so bound), the fits of
        the model each same-file caller assigns its result to count too: TF Addons' tutorials build
        and compile in ``create_model(opt)``, then ``model = create_model(sgd)`` and ``model.fit(...)``."""
        if not isinstance(receiver, cst.Name):
            return []
        bound = self.model.reaching(receiver.value, site.function, site.place, site.lambdas)
        if not bound:
            return []
        found = self._fits_after(receiver.value, bound, site)
        if site.function is not None and self._returns_only(site.function, receiver.value, bound):
            for call, binding in self._assigned_results(site.function):
                found.extend(self._fits_after(binding.name, [binding], call))
        return found

    def _fits_after(self, name: str, bound: List[Binding], site: CallSite) -> List[CallSite]:
        """``<name>.fit(...)`` after ``site`` in its function, on the model ``bound`` gives the name."""
        model = self.model
        found = []
        for other in model.calls_in(site.function) if site.function is not None else model.calls:
            call = other.node
            if other.function is not site.function or other.place.order <= site.place.order:
                continue
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "fit"
                    and isinstance(call.func.value, cst.Name) and call.func.value.value == name):
                continue
            if model.reaching(name, other.function, other.place, other.lambdas) == bound:
                found.append(other)
        return found

    def _returns_only(self, function: FunctionInfo, name: str, bound: List[Binding]) -> bool:
        """Every ``return`` of ``function`` returns ``name`` as ``bound`` gives it (at least one does)."""
        returns = function.returns
        return bool(returns) and all(
            isinstance(ret.node.value, cst.Name) and ret.node.value.value == name
            and self.model.reaching(name, function, ret.place) == bound for ret in returns)

    def _assigned_results(self, function: FunctionInfo) -> List[Tuple[CallSite, Binding]]:
        """The same-file calls of ``function`` by its name whose result is assigned to a name
        (``model = create_model(sgd)``), with that binding."""
        model = self.model
        found = []
        for other in model.calls:
            call = other.node
            if not isinstance(call.func, cst.Name) or call.func.value != function.name:
                continue
            if model.lookup_function(call.func.value, other.function, other.place) is not function:
                continue
            for binding in model.bindings.get(other.function, {}).values():
                found.extend((other, b) for b in binding if b.kind == "assign" and b.value is call)
        return found

    def fit_rows(self, fit: CallSite) -> str:
        """How many rows a ``fit`` is given (``rows.ONE``, ``FEW``, ``MANY`` or ``UNKNOWN``): ``x[:64]``
        is a few, a tf.data pipeline or ``series[:7000]`` many."""
        x = argument(fit.node, "x", 0)
        return Rows(self.model).of(x.value, fit) if x is not None else rows.UNKNOWN

    def fits_toy_set(self, fit: CallSite) -> bool:
        """The ``fit``'s inputs are drawn from a dataset the code shows to be a toy (``DataSizes.
        is_toy_dataset``, the answer TFP101 and TFP102 take: ``make_circles(1000)``, 40 points of an
        ``np.arange``, Iris): a few dozen steps an epoch, seconds of training whatever runs them."""
        x = argument(fit.node, "x", 0)
        return x is not None and DataSizes(self.model).is_toy_dataset(x.value, fit.function, fit.place)

    def is_small_mlp(self, constructor: cst.Call) -> bool:
        """``Sequential([...])`` of at most 8 layers, all cheap per example (Dense of at most 1024 units
        given as literals, Dropout, normalisation, reshaping), with at least one hidden Dense layer: a
        model whose step costs less than the Python work around it."""
        stack = self._small_stack(constructor)
        return stack is not None and not stack.convolutions and stack.dense >= 2 and stack.layers <= _MLP_LAYERS

    def is_small_linear(self, constructor: cst.Call) -> bool:
        """As ``is_small_mlp`` with one Dense layer: a linear or logistic regression (``Flatten``,
        ``Dense(10)``). Cheaper still per step, but in real code it is as often a demonstration on a
        few thousand points as a model trained for thousands of steps: the data decides."""
        stack = self._small_stack(constructor)
        return stack is not None and not stack.convolutions and stack.dense == 1 and stack.layers <= _MLP_LAYERS

    def is_small_convnet(self, constructor: cst.Call) -> bool:
        """A ``Sequential`` convnet whose step is as small as a small MLP's: it declares a small input (at
        most ``SMALL_INPUT`` numbers an example: an MNIST digit, a CIFAR image) and holds at most
        ``_SMALL_CONVOLUTIONS`` convolutions of at most ``_SMALL_FILTERS`` filters (given as literals), with
        pooling, padding and the MLP's cheap layers around them (TF Model Optimization's one-conv MNIST
        classifier, a depthwise-separable CIFAR net of 8 to 32 channels), and one example costs at most
        ``_SMALL_CONVNET_COST`` multiply-adds (``layer_cost.stack_cost``: six wide convolutions on a whole
        CIFAR image are milliseconds a step). A convnet whose input the code does not declare may run on
        224 x 224 images: not small."""
        stack = self._small_stack(constructor)
        if stack is None or not 0 < stack.convolutions <= _SMALL_CONVOLUTIONS or stack.input_shape is None:
            return False
        numbers = 1
        for size in stack.input_shape:
            numbers *= size
        cost = stack_cost(stack.input_shape, stack.calls) if numbers <= SMALL_INPUT else None
        return cost is not None and cost <= _SMALL_CONVNET_COST

    def _small_stack(self, constructor: cst.Call) -> Optional["_Stack"]:
        """What a ``Sequential`` of at most ``_STACK_LAYERS`` layers, each cheap per example or a small
        convolution or pooling, holds; None for any other model."""
        if self.model.call_name(constructor) not in SEQUENTIAL_MODEL_CLASSES or not constructor.args:
            return None
        items = constructor.args[0].value
        if constructor.args[0].keyword not in (None,) and constructor.args[0].keyword.value != "layers":
            return None
        if not isinstance(items, (cst.List, cst.Tuple)) or not items.elements or len(items.elements) > _STACK_LAYERS:
            return None
        layers = self.model.layers
        stack = _Stack(len(items.elements))
        for index, element in enumerate(items.elements):
            value = element.value
            if isinstance(element, cst.StarredElement) or not isinstance(value, cst.Call):
                return None
            if index == 0:
                stack.input_shape = declared_input(value, self.model.call_name(value))
            if self.model.call_name(value) == "keras.Input":
                continue
            name = layers.layer_name(value)
            stack.calls.append((name or "", value))
            if name in _SMALL_CONVOLUTION_LAYERS:
                stack.convolutions += 1
                width = layers.width_expression(value)
                if width is None and name != "DepthwiseConv2D":
                    return None
                filters = int_literal(width[2]) if width is not None else 0
                if filters is None or filters > _SMALL_FILTERS:
                    return None
                continue
            if name in _POOLING_LAYERS:
                continue
            if name not in _CHEAP_LAYERS:
                return None
            if name == "Dense":
                stack.dense += 1
                width = layers.width_expression(value)
                units = int_literal(width[2]) if width is not None else None
                if units is None or units > 1024:
                    return None
        return stack


@dataclass
class _Stack:
    """A small ``Sequential``'s layers: how many, Dense and convolution layers, each layer (its class
    name and call, ``keras.Input`` left out), and the shape of one example its first layer declares
    (None when it declares none)."""
    layers: int
    dense: int = 0
    convolutions: int = 0
    calls: List[Tuple[str, cst.Call]] = field(default_factory=list)
    input_shape: Optional[List[int]] = None


# A place after every statement of the module: where a `self.attr` assignment is followed from.
_AFTER_EVERYTHING = Place(1 << 30, ())


def _is_application_model(name: str) -> bool:
    """``keras.applications.ResNet50``, ``keras.applications.resnet50.ResNet50``: a class name."""
    if not name.startswith(_APPLICATIONS):
        return False
    leaf = name.rsplit(".", 1)[-1]
    return leaf[:1].isupper()


def _is_application_module_member(name: str) -> bool:
    """``keras.applications.resnet50.ResNet50``: anything inside an application's module (what
    ``origin`` has always accepted; ``keras.applications.ResNet50`` is not one)."""
    return name.startswith(_APPLICATIONS) and name.count(".") >= 3


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"
