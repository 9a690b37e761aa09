"""A helper's summary applied where it is called: what the call returns and consumes, in the caller's
terms.

A summary (``values.Summary``) says what a function returns and which of its parameters it consumes,
in terms of ``param`` sources; applying it binds the call's arguments to those parameters and
substitutes the caller's pipelines for them, so ``augment(ds)`` returns ``ds`` with ``augment``'s ops
appended. A same-file function's summary comes from this module's fixpoint; a method called through
``self``, and (in a project session) a function or method of another first-party module, the same
way through ``PipelineAnalysis.summary_for``.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.classes import method_of
from tflint_perf.analysis.model import ClassInfo, FunctionInfo, ModuleModel
from tflint_perf.analysis.pipelines.syntax import is_static, parameters
from tflint_perf.analysis.pipelines.values import (
    MAX_OPS,
    Collection,
    Pipeline,
    State,
    Summary,
    TupleValue,
    Value,
    join,
)


class SummaryApplication:
    """The interpreter's application of summaries (a part of ``BodyInterpreter``, which evaluates the
    arguments and records what the summary consumes)."""

    model: ModuleModel
    analysis: Any  # the PipelineAnalysis
    function: Optional[FunctionInfo]
    summaries_read: Dict[FunctionInfo, Optional[Summary]]

    eval: Callable[[cst.BaseExpression], Value]  # BodyInterpreter's
    consume: Callable[..., None]  # ConsumerRecognition's
    _note_states: Callable[[Value], None]  # BodyInterpreter's
    note_combined: Callable[[Value], None]  # BodyInterpreter's
    _class_attr: Callable[[Tuple[ClassInfo, str]], Value]  # BodyInterpreter's
    class_attrs_written: Dict[Tuple[ClassInfo, str], None]  # BodyInterpreter's

    def apply(self, function: FunctionInfo, call: cst.Call, skip_first: bool = False) -> Value:
        """What calling ``function`` at ``call`` returns, its consumptions recorded in the caller's terms.
        The arguments are evaluated even without a summary: they may build or consume pipelines."""
        return self._apply_bound(function, call, skip_first)[0]

    def _apply_bound(self, function: FunctionInfo, call: cst.Call, skip_first: bool) -> Tuple[Value, Dict[int, Value]]:
        """``apply``'s result, and the values bound to ``function``'s parameters at ``call``."""
        summary = self.analysis.summary_for(function)
        self.summaries_read[function] = summary  # the same all round: summaries change between rounds
        bound = self._bind_arguments(function, call, skip_first)
        if summary is None:
            return None, bound
        for consumption in summary.consumptions:
            value = substitute(Pipeline(consumption.states), function, bound)
            self.consume(consumption.node, consumption.kind, consumption.description, value, consumption.purpose,
                         consumption.role, distributed=consumption.distributed)
        if summary.combined:
            self.note_combined(substitute(Pipeline(frozenset(summary.combined)), function, bound))
        result = substitute(summary.returns, function, bound)
        self._note_states(result)
        return result, bound

    def construct(self, cls: ClassInfo, call: cst.Call) -> Value:
        """``SkipGramModel(dataset, ...)``, an object of a same-file class made: its ``__init__`` applied,
        and the pipelines it keeps from its parameters (``self.dataset = dataset``) kept in the caller's
        terms too, so the methods reading ``self.dataset`` (``self.dataset.make_initializable_iterator()``
        in ``build_graph``) read the caller's pipeline. The object itself is no pipeline."""
        init = cls.methods.get("__init__")
        if init is None:
            for arg in call.args:
                self.eval(arg.value)
            return None
        _, bound = self._apply_bound(init, call, skip_first=True)
        if not any(isinstance(value, Pipeline) for value in bound.values()):
            return None
        for attribute in cls.attributes:
            key = (cls, attribute)
            kept = self._class_attr(key)
            if not isinstance(kept, Pipeline):
                continue
            actual = substitute(kept, init, bound)
            if isinstance(actual, Pipeline) and not actual.states <= kept.states:
                self.analysis._class_attrs[key] = join(kept, actual)
                self.class_attrs_written[key] = None
                self._note_states(actual)
        return None

    def _apply_elsewhere(self, call: cst.Call) -> Value:
        """A call of a function of another first-party module (``make_dataset()``, ``data.load(ds)``,
        ``loader.dataset()`` on an object of an imported class), applied through its own summary."""
        if self.model.session is None:
            for arg in call.args:
                self.eval(arg.value)
            return None
        target = self.model.effects.resolve_callable(call.func, self.function)
        if target is None and isinstance(call.func, cst.Attribute):
            target = inherited_method(self.model, call.func, self.function)
        if not isinstance(target, FunctionInfo) or target.model is self.model:
            for arg in call.args:
                self.eval(arg.value)
            return None
        return self.apply(target, call, skip_first=target.class_info is not None and target.parent is None)

    def _bind_arguments(self, function: FunctionInfo, call: cst.Call, skip_first: bool) -> Dict[int, Value]:
        params = parameters(function)
        offset = 1 if skip_first and not is_static(function) else 0
        names = [p.name.value for p in params]
        bound: Dict[int, Value] = {}
        position = offset
        for arg in call.args:
            value = self.eval(arg.value)
            if arg.star:
                return bound
            if arg.keyword is not None:
                if arg.keyword.value in names:
                    bound[names.index(arg.keyword.value)] = value
            else:
                bound[position] = value
                position += 1
        return bound


def substitute(value: Value, function: FunctionInfo, bound: Dict[int, Value]) -> Value:
    """``value`` (a summary's, in terms of ``function``'s parameters) with the pipelines bound to those
    parameters at a call put in: each bound state extended by the ops the helper applies. A parameter
    bound to no pipeline drops its states (the helper's result is then not a pipeline from there)."""
    if isinstance(value, Pipeline):
        states = set()
        for state in value.states:
            source = state.source
            if source.kind == "param" and source.function is function:
                actual = bound.get(source.index)
                if isinstance(actual, Pipeline):
                    for prefix in actual.states:
                        states.add(State(prefix.source, (prefix.ops + state.ops)[-MAX_OPS:]))
            else:
                states.add(state)
        return Pipeline(frozenset(states)) if states else None
    if isinstance(value, TupleValue):
        return TupleValue(tuple(substitute(item, function, bound) for item in value.items))
    if isinstance(value, Collection):
        substituted = substitute(Pipeline(value.states), function, bound)
        return Collection(substituted.states) if isinstance(substituted, Pipeline) else None
    return value


def inherited_method(model: ModuleModel, func: cst.Attribute, scope: Optional[FunctionInfo]) -> Optional[FunctionInfo]:
    """``train_generator.to_dataset(...)`` on an object of a same-file class that inherits the method
    from another first-party module's class (bert4keras' examples subclass ``DataGenerator``, whose
    ``to_dataset`` builds the pipeline they fit on)."""
    cls = model.effects.class_of_object(func.value, scope)  # type: ignore[attr-defined]
    if cls is None or func.attr.value in cls.methods:
        return None
    return method_of(model, cls, func.attr.value)
