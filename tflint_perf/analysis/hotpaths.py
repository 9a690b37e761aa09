"""Hot paths: code that TensorFlow runs for every element or every step.

A function is hot when it is
- passed to ``Dataset.map`` / ``filter`` / ``flat_map`` / ``interleave`` of a real pipeline (run for
  every element, as a graph);
- a ``tf.function``: decorated (functions and methods, with or without arguments) or wrapped
  (``tf.function(fn)``, ``tf.function(self.step)``);
- passed to ``tf.map_fn`` / ``tf.vectorized_map`` (run for every element of a tensor; what it is for is
  what the names around the call say: ``_detokenize_tensor`` maps over a model's outputs);
- ``call`` / ``train_step`` / ``test_step`` / ``predict_step`` of a Keras ``Layer`` or ``Model``
  subclass (Keras traces them into a graph), a ``LearningRateSchedule.__call__``, a ``Loss.call``,
  a ``Metric.update_state``;
- TF1 graph code: what a function builds before creating the session whose training ``sess.run`` it
  reaches in a loop (``analysis/tf1_graph.py``): those ops run every step;
- or a same-file function that a hot function calls, or passes to a TensorFlow op such as
  ``tf.cond`` (a few levels deep).

In a project session the roots may be functions of other first-party modules (``ds.map(augment.flip)``),
and a module also takes the roots its importers found among its own functions: a function
mapped or wrapped in ``tf.function`` in ``input_pipeline.py`` is hot in ``augment.py`` too.

A function decorated with ``@tf.py_function(...)`` / ``@tf.numpy_function(...)`` is reached but not
hot: its body is Python, run through a callback. Those are recorded separately.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Dict, FrozenSet, List, Optional, Tuple, Union

import libcst as cst

from tflint_perf.analysis.effects import PYTHON_CALLBACKS, nodes_within
from tflint_perf.analysis.model import CallSite, ClassInfo, FunctionInfo, ModuleModel
from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.debugging import never_runs
from tflint_perf.analysis.model import module_name
from tflint_perf.analysis.files import path_purpose
from tflint_perf.analysis.keras_models import MODEL_CLASSES, derives_from
from tflint_perf.analysis.mode_branches import branch_purpose
from tflint_perf.analysis.names import name_uses
from tflint_perf.analysis.pipelines.values import maximal
from tflint_perf.analysis.purpose import Purpose, purpose_of_builder
from tflint_perf.analysis.tf1_graph import graph_builders
from tflint_perf.analysis.tf_functions import tf_function_decorator, wrapped_by

Callable = Union[FunctionInfo, cst.Lambda]

DATASET_FUNCTION_OPS = {
    "map": "map_func",
    "filter": "predicate",
    "flat_map": "map_func",
    "interleave": "map_func",
    "map_with_legacy_function": "map_func",
    "filter_with_legacy_function": "predicate",
}
ELEMENT_MAPS = frozenset({"tf.map_fn", "tf.vectorized_map"})
KERAS_GRAPH_METHODS = frozenset({"call", "train_step", "test_step", "predict_step"})
# Other Keras objects whose methods Keras traces into the training step: a learning-rate schedule is
# called with the step, a loss on every batch, a metric updated on every batch.
_TRACED_METHODS = (
    (frozenset({"keras.optimizers.schedules.LearningRateSchedule"}), ("__call__",), "a learning-rate schedule"),
    (frozenset({"keras.losses.Loss"}), ("call",), "a loss"),
    (frozenset({"keras.metrics.Metric"}), ("update_state",), "a metric"),
)
_KERAS_BASES = MODEL_CLASSES | frozenset({"keras.layers.Layer"})
_MAX_DEPTH = 4


@dataclass(frozen=True)
class HotContext:
    kind: str  # "dataset" | "tf.function" | "element-map" | "keras"
    description: str  # how a message names it: "a function passed to `Dataset.map`"
    root: Callable
    # True when the root's parameters are tensors: the elements of a Dataset or of tf.map_fn.
    tensor_elements: bool = False
    # What the code that makes the root hot is for, when another module's names or path say so
    # (`_get_detections` inside `evaluate`, `eval/coco.py`): a per-step cost there is not training's.
    purpose: Purpose = Purpose.UNKNOWN


class HotPaths:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._hot: Dict[Callable, HotContext] = {}
        self._python: Dict[FunctionInfo, HotContext] = {}
        self._roots: List[Tuple[Callable, HotContext]] = []
        self._from_importers_done = model.session is None
        self._name_counts: Optional[Counter] = None
        self._find_roots()
        self._reach(list(self._roots))
        # What this module's own code makes hot, before anything its importers add: what another module reads.
        self.own_hot: Dict[Callable, HotContext] = dict(self._hot)
        self.own_python: Dict[FunctionInfo, HotContext] = dict(self._python)

    # -- queries --------------------------------------------------------------------------------
    def context_of(self, function: Optional[Callable]) -> Optional[HotContext]:
        self._take_importers_roots()
        return self._hot.get(function) if function is not None else None

    def context_of_site(self, site: CallSite) -> Optional[HotContext]:
        """Why the code at a call site runs per element or per step, or None if it does not."""
        self._take_importers_roots()
        for lam in reversed(site.lambdas):
            if lam in self._hot:
                return self._hot[lam]
        return self.context_of(site.function)

    def python_callback_functions(self) -> Dict[FunctionInfo, HotContext]:
        """Functions decorated with ``@tf.py_function(...)`` (or numpy_function) reached from hot code."""
        self._take_importers_roots()
        return dict(self._python)

    def element_parameters(self, site: CallSite) -> FrozenSet[str]:
        """Parameters holding tensors at a call site: those of a Dataset / map_fn function around it."""
        self._take_importers_roots()
        names = set()
        for function in (*site.lambdas, site.function):
            context = self._hot.get(function) if function is not None else None
            if context is not None and context.tensor_elements and context.root is function:
                names.update(parameter_names(function))
        return frozenset(names)

    # -- roots ----------------------------------------------------------------------------------
    def _find_roots(self) -> None:
        model = self.model
        resolve = model.effects.resolve_callable
        pipelines = model.pipelines
        for op, states in pipelines.ops(*DATASET_FUNCTION_OPS):
            arg = argument(op.call, DATASET_FUNCTION_OPS[op.name], 0)
            target = resolve(arg.value, pipelines.scope_of(op.call)) if arg is not None else None
            if target is not None:
                description = f"a function passed to `Dataset.{op.name}`"
                purpose = _consumed_for(pipelines, op.call, states)
                site = model.site_of(op.call)
                if purpose is Purpose.UNKNOWN and site is not None:
                    # `if mode != 'infer': <training pipeline> else: <this map>`: one pass over the inputs.
                    purpose = branch_purpose(site, model.module)
                self._add_root(target, HotContext("dataset", description, target, True, purpose))
        for function in model.functions:
            if tf_function_decorator(model, function) is not None:
                purpose = Purpose.ONE_OFF if self._only_called_at_top_level(function) else Purpose.UNKNOWN
                description = f"the `tf.function` `{function.name}`"
                self._add_root(function, HotContext("tf.function", description, function, purpose=purpose))
        for site in model.calls:
            name = model.call_name(site.node)
            wrapped_function = wrapped_by(model, site.node)
            if wrapped_function is not None:
                if site.function is not None and _is_decorator_of(site.node, site.function):
                    continue
                target = resolve(wrapped_function, site.function)
                if target is not None:
                    description = f"{_callable_name(target)} wrapped in `tf.function`"
                    self._add_root(target, HotContext("tf.function", description, target))
            elif name in ELEMENT_MAPS:
                arg = argument(site.node, "fn", 0)
                target = resolve(arg.value, site.function) if arg is not None else None
                if target is not None:
                    leaf = name.rsplit(".", 1)[-1]
                    # Per element of a tensor, for whatever the code calling the map is for: a map in
                    # `_detokenize_tensor` turns a model's outputs into text (inference), not training.
                    purpose = _purpose_around(site.function, model) if site.function is not None else Purpose.UNKNOWN
                    if site.function is not None and self._only_called_at_top_level(site.function, live_callers=False):
                        purpose = Purpose.ONE_OFF  # in a function only code that never runs calls (`if False:`)
                    self._add_root(target, HotContext("element-map", f"a function passed to `tf.{leaf}`", target, True,
                                                      purpose=purpose))
        if model.imports.imports_framework:
            for builder, owner in graph_builders(model):
                description = f"TF1 graph code that `{owner.name}` builds and its training `sess.run` runs every step"
                self._add_root(builder, HotContext("tf1-graph", description, builder))
        for cls in model.classes.values():
            if self._is_keras_class(cls):
                for method_name in sorted(KERAS_GRAPH_METHODS & set(cls.methods)):
                    method = cls.methods[method_name]
                    description = f"`{cls.name}.{method_name}`, which Keras runs as a graph"
                    self._add_root(method, HotContext("keras", description, method))
            for bases, methods, what in _TRACED_METHODS:
                if derives_from(self.model, cls, bases.__contains__):
                    for method_name in methods:
                        if method_name in cls.methods:
                            method = cls.methods[method_name]
                            description = f"`{cls.name}.{method_name}` of {what}, which Keras runs every step"
                            self._add_root(method, HotContext("keras", description, method))

    def _add_root(self, target: Callable, context: HotContext) -> None:
        if isinstance(target, FunctionInfo) and self._is_python_callback(target):
            if target not in self._python or _outranks(context, self._python[target]):
                self._python[target] = context
            return
        if target not in self._hot:
            self._hot[target] = context
            self._roots.append((target, context))
        elif _outranks(context, self._hot[target]):
            # Mapped over a previewed pipeline and over one that trains: the training use decides.
            self._roots = [(t, context if t is target else c) for t, c in self._roots]
            self._hot[target] = context

    def _take_importers_roots(self) -> None:
        """This module's functions that its importers run per element or per step."""
        if self._from_importers_done:
            return
        self._from_importers_done = True
        session = self.model.session
        frontier: List[Tuple[Callable, HotContext]] = []
        names = [*self.model.module_functions, *self.model.classes]
        for importer in session.importers(self.model, names):
            theirs = session.analysis(importer, "hot_paths")
            if theirs is None:
                continue
            where = module_name(importer)
            for function, context in list(theirs.own_hot.items()) + list(theirs.own_python.items()):
                if not isinstance(function, FunctionInfo) or function.model is not self.model:
                    continue
                here = replace(context, description=f"{context.description} (in `{where}`)",
                               purpose=_purpose_around(context.root, importer))
                if function in theirs.own_python:
                    self._python.setdefault(function, here)
                elif function not in self._hot:
                    self._hot[function] = here
                    frontier.append((function, here))
        self._reach(frontier)

    # -- reach ----------------------------------------------------------------------------------
    def _reach(self, frontier: List[Tuple[Callable, HotContext]]) -> None:
        for _ in range(_MAX_DEPTH):
            next_frontier: List[Tuple[Callable, HotContext]] = []
            for function, context in frontier:
                for callee in self._callees(function):
                    if self._is_python_callback(callee):
                        if callee not in self._python or _outranks(context, self._python[callee]):
                            self._python[callee] = context
                    elif callee not in self._hot or _outranks(context, self._hot[callee]):
                        self._hot[callee] = context
                        next_frontier.append((callee, context))
            frontier = next_frontier

    def _callees(self, function: Callable) -> List[FunctionInfo]:
        model = function.model if isinstance(function, FunctionInfo) and function.model is not None else self.model
        found = list(model.call_graph.callees(function))
        scope = function if isinstance(function, FunctionInfo) else None
        # Functions handed to TensorFlow ops in hot code (tf.cond branches, tf.while_loop bodies) run there too.
        for site in model.calls_in(function):
            name = model.call_name(site.node)
            if name is None or not name.startswith("tf.") or name in PYTHON_CALLBACKS or name == "tf.function":
                continue
            for arg in site.node.args:
                target = model.effects.resolve_callable(arg.value, scope or site.function)
                if isinstance(target, FunctionInfo) and target not in found:
                    found.append(target)
        return found

    # -- helpers --------------------------------------------------------------------------------
    def _only_called_at_top_level(self, function: FunctionInfo, live_callers: bool = True) -> bool:
        """A module-level `tf.function` that its module only calls from top-level statements outside
        any loop, or from code that never runs (`if False:`), and names nowhere else (not passed on, not
        imported elsewhere): a guide's `tf_wrapper(tf.constant(1.0))`, run a few times, not a step.
        Without ``live_callers``: every call of it is in code that never runs (and it may be any function)."""
        model = self.model
        if function.parent is not None or function.is_method:
            return False
        callers = model.call_graph.callers(function)
        live = [site for site in callers if not never_runs(model, site.place, site.function)]
        if not callers or (live and not live_callers) or any(
                site.function is not None or site.loops or site.lambdas for site in live):
            return False
        if model.session is not None and model.session.importers(model, [function.name]):
            return False
        span = _binding_span(model.module, function)
        if span is None:
            if self._name_counts is None:
                self._name_counts = Counter(node.value for node in nodes_within(model.module, cst.Name))
            return self._name_counts[function.name] == len(callers) + 1  # the calls and the `def`
        # A notebook that defines `f` again in a later cell: only the uses before that count.
        return sum(name_uses(statement, function.name) for statement in span) == len(callers) + 1  # calls and `def`

    def _is_python_callback(self, function: FunctionInfo) -> bool:
        model = function.model or self.model
        return any(
            isinstance(d.decorator, cst.Call) and model.call_name(d.decorator) in PYTHON_CALLBACKS
            for d in function.node.decorators
        )

    def _is_keras_class(self, cls: ClassInfo) -> bool:
        return derives_from(self.model, cls, lambda name: name in _KERAS_BASES or name.startswith("keras.layers."))


def _binding_span(module: cst.Module, function: FunctionInfo) -> Optional[List[cst.BaseStatement]]:
    """The top-level statements from a module-level `def` up to the next that binds its name again
    (a guide's next `@tf.function def f`); None when nothing rebinds it."""
    body = list(module.body)
    if function.node not in body:
        return None
    start = body.index(function.node)
    for index in range(start + 1, len(body)):
        if _rebinds(body[index], function.name):
            return body[start:index]
    return None


def _rebinds(statement: cst.BaseStatement, name: str) -> bool:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return statement.name.value == name
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assign) and any(
                isinstance(target.target, cst.Name) and target.target.value == name for target in small.targets
            ):
                return True
    return False


def _outranks(context: HotContext, earlier: HotContext) -> bool:
    """A root found again where its work may matter, after a use that only previews or runs once."""
    quiet = (Purpose.INSPECTION, Purpose.ONE_OFF)
    if earlier.purpose is Purpose.EVALUATION:  # mapped in a mode switch's inference branch and in its training one
        return context.purpose in (Purpose.UNKNOWN, Purpose.TRAINING)
    return earlier.purpose in quiet and context.purpose not in quiet


def _consumed_for(pipelines, call: cst.Call, states) -> Purpose:
    """What the pipelines holding a `map` / `filter` op are consumed for, when every consumer in sight
    only looks at them or reads them once (`for x in ds.take(2): show(x)`, `adapt`): such a root runs
    per element, but no training or evaluation waits on it; and a one-off pass too where a `cache()`
    after the op keeps its results (`map(py_function(encode)).filter(...).cache()`): it runs once per
    element in the whole run, not on every epoch. Unknown otherwise."""
    if pipelines.cached_for_every_reader(states, call):
        return Purpose.ONE_OFF
    whole = maximal(states)  # not the prefixes the interpreter met on the way (`ds` before its `.cache()`)
    purposes = {consumption.purpose for consumption in pipelines.consumptions_of(call)}
    if not purposes and whole and pipelines.consumptions and all(pipelines.never_read(state) for state in whole):
        # The module shows where its pipelines are read, and this one is read nowhere (a notebook's
        # `val_dataset` built and never used): the root runs no more than once.
        return Purpose.ONE_OFF
    if not purposes or not purposes <= {Purpose.INSPECTION, Purpose.ONE_OFF}:
        return Purpose.UNKNOWN  # no consumer in sight, or one that trains, evaluates or says nothing
    return Purpose.INSPECTION if Purpose.INSPECTION in purposes else Purpose.ONE_OFF


def _purpose_around(root: Callable, model: ModuleModel) -> Purpose:
    """What the names around a hot root (its function, the functions and class enclosing it) and its
    module's path say the code is for."""
    if model.path is not None and path_purpose(str(model.path)) is not Purpose.UNKNOWN:
        return path_purpose(str(model.path))
    return purpose_of_builder(root.enclosing_names() if isinstance(root, FunctionInfo) else [])


def python_callback_decorator(model: ModuleModel, function: FunctionInfo) -> Optional[cst.Call]:
    """The ``@tf.py_function(...)`` (or numpy_function) decorator call of a function, if any."""
    for decorator in function.node.decorators:
        if isinstance(decorator.decorator, cst.Call) and model.call_name(decorator.decorator) in PYTHON_CALLBACKS:
            return decorator.decorator
    return None


def _is_decorator_of(call: cst.Call, function: FunctionInfo) -> bool:
    return any(d.decorator is call for d in function.node.decorators)


def _callable_name(target: Callable) -> str:
    return f"`{target.name}`" if isinstance(target, FunctionInfo) else "a lambda"


def parameter_names(function: Callable) -> List[str]:
    """A function's or lambda's parameters as a caller binds them (a method's `self` left out)."""
    params = function.params if isinstance(function, cst.Lambda) else function.node.params
    names = [p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]]
    if isinstance(function, FunctionInfo) and function.binds_self and names:
        names = names[1:]
    return names
