"""Where pipelines are consumed and what for.

The interpreter's part (``ConsumerRecognition``) records a ``Consumption`` wherever a pipeline value
reaches a consumer: ``model.fit`` / ``evaluate`` / ``predict`` (and ``validation_data``), a ``for``
loop (through ``enumerate``, ``zip``, ``tqdm``), ``iter()`` (inspection when ``next(iter(ds))``
peeks), TF1 iterators, ``experimental_distribute_dataset`` (for what the loops over its result do), one-off passes (``adapt``, ``save``,
``list``, ``TFRecordWriter.write``, ``tfds.as_numpy``) and inspections (``element_spec``, a loop that
only prints or plots, a loop over ``take(n)``). A consumption of a helper's parameter goes into the
helper's summary instead, for its callers to substitute.

The analysis' part (``ConsumptionQueries``) answers rules: which consumptions hold an op, whether a
consumer makes a single pass, what a loop is for (``loop_purpose``: the names its body calls) and what
a pipeline is built for (``built_for``: the names of the function, class and variable building it).
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Dict, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument, int_literal, keyword_argument, keyword_value
from tflint_perf.analysis.loops import breaks_after_first
from tflint_perf.analysis.model import FunctionInfo, ModuleModel, lambda_parameter_names
from tflint_perf.analysis.names import assigned_name, dotted_text, name_uses
from tflint_perf.analysis.pipelines.syntax import only_looked_at
from tflint_perf.analysis.pipelines.summaries import substitute
from tflint_perf.analysis.pipelines.values import (
    Consumption,
    Env,
    FunctionRef,
    Pipeline,
    State,
    Summary,
    TupleValue,
    Value,
    join,
)
from tflint_perf.analysis.purpose import Purpose, purpose_of_builder, purpose_of_names
from tflint_perf.text.walk import owning_statements, walk

ITERATOR_METHODS = frozenset({"make_one_shot_iterator", "make_initializable_iterator"})
# Consumers that read a pipeline once, to set something up or to write it out: never a hot path.
# `ds.get_single_element()` reads the one element a pipeline holds (a serving request's parsed batch,
# t2t's `serving_input_fn`; a whole set batched into one tensor): a single read, nothing to overlap.
ONE_OFF_METHODS = frozenset({"adapt", "save", "as_numpy_iterator", "get_single_element"})
# `iterator.make_initializer(ds)`: a reinitializable TF1 iterator (`Iterator.from_structure`) switched to
# `ds`, read per step through `get_next()` in the session loop.
INITIALIZER_METHODS = frozenset({"make_initializer"})
# `writer.write(ds)` (tf.data.experimental.TFRecordWriter), `model.adapt(ds)`: methods taking a pipeline once.
# `index.index_from_dataset(candidates.map(tower))` (TensorFlow Recommenders' BruteForce and ScaNN) reads
# the candidates once to build a retrieval index. (Its `Streaming` layer keeps the pipeline and scans it
# per query; users meet that one inside a metric, below, not by hand.)
ONE_OFF_ARGUMENT_METHODS = frozenset({"adapt", "write", "index_from_dataset"})
INSPECTION_ATTRIBUTES = frozenset({"element_spec", "output_shapes", "output_types"})
ONE_OFF_FUNCTIONS = frozenset({"list", "tuple", "tf.data.experimental.save", "np.array", "numpy.array", "tfds.as_numpy",
                               "tf.data.experimental.get_single_element"})
ITERATOR_FUNCTIONS = frozenset({"tf.data.make_one_shot_iterator", "tf.data.make_initializable_iterator"})
# TF 1.x eager execution's Python iterator over a Dataset (`for x, y in tfe.Iterator(ds):`), what `iter(ds)`
# is in TF 2: read as `iter()` is.
EAGER_ITERATORS = frozenset({"tf.contrib.eager.Iterator"})
MODEL_CONSUMERS = frozenset({"fit", "evaluate", "predict"})
_MODEL_PURPOSES = {"fit": Purpose.TRAINING, "evaluate": Purpose.EVALUATION, "predict": Purpose.INFERENCE}
# KerasTuner (`keras_tuner`, formerly `kerastuner`): `tuner.search(train, validation_data=val, epochs=5)`.
_TUNER_MODULES = ("keras_tuner.", "kerastuner.")
DISTRIBUTE_METHODS = frozenset({"experimental_distribute_dataset"})
# `estimator.train(input_fn=f)`: Estimator calls `f` and reads the pipeline it returns once per training
# step. (`evaluate`/`predict` read theirs for evaluation and inference: not recorded, as a framework's.)
ESTIMATOR_TRAIN_METHODS = frozenset({"train"})
# `tf.estimator.TrainSpec(input_fn=f)` is handed to `train_and_evaluate`, which trains on `f`'s pipeline.
TRAIN_SPEC_APIS = frozenset({"tf.estimator.TrainSpec", "tf.compat.v1.estimator.TrainSpec"})
# A `fit` of at most this many steps in all is a smoke run (ml-design-patterns' `steps_per_epoch=1, epochs=3`
# autoencoder check, the training job being elsewhere). Its first step traces the model, which outweighs
# what a prefetch or a parallel map could save over the rest. Kept below `FEW_CALLS`: a tutorial's ten-step
# fit (tensorflow/docs segmentation, sample weights) is labelled as training.
_SMOKE_STEPS = 5
# Calls that only look at data: a loop made of these is inspection, not training.
_INSPECTION_CALLS = frozenset(
    {
        "print", "display", "len", "str", "int", "float", "repr", "range", "list", "enumerate", "zip",
        "numpy", "decode", "astype", "format", "imshow", "title", "axis", "subplot", "figure", "show",
        "xlabel", "ylabel", "plot", "set_title", "append", "shape", "tf.print", "tf.shape", "items",
    }
)

# Calls that print or format what they are given: the names of their arguments (`num_train_steps`) say
# nothing of what the loop does.
_REPORTING_CALLS = frozenset({"print", "tf.print", "pprint", "format"})

# `time.sleep(5)` in a loop over a pipeline: each batch is paced for someone to look at (a TensorBoard
# image summary, a plot); nothing that trains or evaluates waits on purpose.
_PACING_CALLS = frozenset({"time.sleep"})


class ConsumerRecognition:
    """The interpreter's recording of consumptions (a part of ``BodyInterpreter``, which evaluates).

    Each ``_consumed_by_...`` hook is asked where the interpreter meets that kind of call, and returns
    True when the call is a consumer (recorded when what it consumes holds a pipeline): its result is
    then unknown.
    """

    model: ModuleModel
    analysis: Any  # the PipelineAnalysis
    consumptions: List[Consumption]
    param_consumptions: List[Consumption]
    env: Env
    function: Optional[FunctionInfo]
    summaries_read: Dict[FunctionInfo, Optional[Summary]]

    eval: Callable[[cst.BaseExpression], Value]  # BodyInterpreter's

    def _consumed_by_method_call(self, call: cst.Call, method: str, receiver: Value, args: List[Value]) -> bool:
        """``ds.save(path)``, ``layer.adapt(ds)``, ``ds.make_one_shot_iterator()``, ``model.fit(ds)``,
        ``strategy.experimental_distribute_dataset(ds)``."""
        if call in self.analysis.numpy_loop_reads:
            return True  # `for batch in ds.as_numpy_iterator()`: the loop reads `ds` (`eval_loop_iterable`)
        if isinstance(receiver, Pipeline) and method in ONE_OFF_METHODS:
            self.consume(call, "one-off", f"{method}()", receiver, Purpose.ONE_OFF)
            return True
        if method in ONE_OFF_ARGUMENT_METHODS and args and isinstance(args[0], Pipeline):
            for value in [args[0], *self._zipped_inputs(args[0])]:
                self.consume(call, "one-off", f"{method}()", value, Purpose.ONE_OFF)
            return True
        if self._consumed_by_metric(call, dotted_text(call.func) or method, args):
            return True
        if isinstance(receiver, Pipeline) and method == "__iter__":
            # `next(ds.__iter__())`, `it = ds.__iter__()`: the iterator `iter(ds)` makes, spelled out
            self._consume_python_iterator(call, receiver, "__iter__()")
            return True
        if isinstance(receiver, Pipeline) and method in ITERATOR_METHODS:
            self.consume(call, "iterator", f"{method}()", receiver, self._tf1_iterator_purpose(call, Purpose.TRAINING))
            return True
        if method in INITIALIZER_METHODS and args and call.args:
            # The pipeline's own name says which of training and evaluation the iterator is switched to.
            named = purpose_of_builder([(dotted_text(call.args[0].value) or "").rsplit(".", 1)[-1]])
            purpose = named if named in (Purpose.EVALUATION, Purpose.INSPECTION) else Purpose.TRAINING
            self.consume(call, "iterator", f"{method}()", args[0], self._tf1_iterator_purpose(call, purpose))
            return True
        if method in MODEL_CONSUMERS:
            self._consume_model_call(call, method)
            return True
        if method == "search" and self._is_tuner(call):
            self._consume_model_call(call, "fit")  # each trial fits a model on the data, as `fit` does
            return True
        if method in DISTRIBUTE_METHODS and args:
            self.consume(call, "distribute", method, args[0], self._distributed_purpose(call))
            return True
        if method in ESTIMATOR_TRAIN_METHODS and self._consume_input_fn(call, f"{dotted_text(call.func) or method}()", args):
            return True
        return False

    def _distributed_purpose(self, call: cst.Call) -> Purpose:
        """What ``dist = strategy.experimental_distribute_dataset(ds)`` is for: training, unless every loop
        over ``dist`` in the same scope says otherwise (tensorflow/docs distribute/input: `for index,
        inputs in dist_dataset: strategy.run(predict, ...)` demonstrates distributed prediction)."""
        site = self.model.site_of(call)
        statement = site.statement if site is not None else None
        if statement is None or len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
            return Purpose.TRAINING
        assign = statement.body[0]
        if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
            return Purpose.TRAINING
        name = assign.targets[0].target.value
        purposes = []
        for loop, calls in self.analysis._loop_calls.items():
            if not (isinstance(loop, cst.For) and isinstance(loop.iter, cst.Name) and loop.iter.value == name):
                continue
            inside = self.model.site_of(calls[0]) if calls else None
            if inside is None or inside.function is not site.function:
                continue
            # The loop reads this assignment's value (a notebook rebinds `dist_dataset` cell after cell).
            bindings = self.model.reaching(name, site.function, inside.place)
            if bindings and all(binding.value is call for binding in bindings):
                purposes.append(self.analysis.loop_purpose(loop))
        if purposes and all(p in (Purpose.EVALUATION, Purpose.INFERENCE, Purpose.INSPECTION) for p in purposes):
            return purposes[0]
        return Purpose.TRAINING

    def _consumed_by_metric(self, call: cst.Call, name: str, args: List[Value]) -> bool:
        """``tfrs.metrics.FactorizedTopK(candidates=movies.batch(128).map(tower))``: a metric scans the
        pipeline it is given each time it is computed; that is evaluation, not the training input.
        ``name``: the callee as resolved or spelled (a metrics module of a library not tracked)."""
        if not _is_metric_api(name) or not any(_holds_pipeline(value) for value in args):
            return False
        for value in args:
            self.consume(call, "metric", f"{name.rsplit('.', 1)[-1]}()", value, Purpose.EVALUATION)
        return True

    def _consume_input_fn(self, call: cst.Call, description: str, args: List[Value]) -> bool:
        """``estimator.train(input_fn=train_input_fn)``, ``TrainSpec(input_fn=...)``: the pipeline the
        input function returns (a def, a factory's returned closure, a lambda) is read per training step.
        A positional argument counts only when it is a function that returns a pipeline. ``args``: the
        call's arguments as already evaluated."""
        arg = argument(call, "input_fn", 0)
        if arg is None:
            return False
        value = args[list(call.args).index(arg)]
        returned = self._input_fn_returns(arg.value, value)
        if returned is None and arg.keyword is not None and isinstance(value, FunctionRef):
            # TF1's `return dataset.make_one_shot_iterator().get_next()`: what the input function's own
            # iterators read, the Estimator reads per training step (``trains_whatever_the_path``)
            self.analysis.estimator_input_fns.add(value.function)
            return True
        if returned is None or (arg.keyword is None and not _holds_pipeline(returned)):
            return False
        self.consume(call, "estimator", description, returned, Purpose.TRAINING)
        return True

    def _input_fn_returns(self, node: cst.BaseExpression, value: Value) -> Value:
        """What calling the input function ``node`` (evaluated to ``value``) returns: its summary's
        result, parameters unbound; a lambda's body."""
        if isinstance(node, cst.Lambda):
            saved = self.env
            self.env = {**saved, **{name: None for name in lambda_parameter_names(node)}}
            try:
                return self.eval(node.body)
            finally:
                self.env = saved
        function = value.function if isinstance(value, FunctionRef) else None
        if function is None and self.model.session is not None:
            resolved = self.model.effects.resolve_callable(node, self.function)
            function = resolved if isinstance(resolved, FunctionInfo) else None
        if function is None:
            return None
        summary = self.analysis.summary_for(function)
        self.summaries_read[function] = summary  # a dependency, as for a call of it
        return substitute(summary.returns, function, {}) if summary is not None else None

    def _consumed_by_builtin_call(self, call: cst.Call, name: str) -> bool:
        """``iter(ds)`` (a peek when ``next`` takes it), ``list(ds)``."""
        if name == "iter" and call.args:
            self._consume_python_iterator(call, self.eval(call.args[0].value), "iter()")
            return True
        if name in ONE_OFF_FUNCTIONS and call.args:
            self.consume(call, "one-off", f"{name}()", self.eval(call.args[0].value), Purpose.ONE_OFF)
            return True
        if name == "print" and self.function is None:
            # `print(train)` at module level: the pipeline's structure looked at, like `element_spec`
            # (a helper printing the pipeline it returns says nothing of what its callers do with it)
            for arg in call.args:
                value = self.eval(arg.value)
                if isinstance(arg.value, cst.Name) and isinstance(value, Pipeline) and self._only_looked_at(arg.value):
                    self.consume(call, "inspection", "print()", value, Purpose.INSPECTION)
            return True
        return False

    def _consume_python_iterator(self, call: cst.Call, value: Value, description: str) -> None:
        """``iter(ds)`` or TF 1.x eager's ``tfe.Iterator(ds)``: read for training unless ``next`` only peeks,
        a demonstration reads a few elements, or a loop over it collects them."""
        peek = call in self.analysis._peeked
        reads = self.analysis.iterator_reads
        purpose = Purpose.INSPECTION if peek else reads.few_reads(call, tf1=False)
        if purpose is None and self._collects(reads.loop_over_iterator(call)):
            purpose = Purpose.ONE_OFF  # `it = iter(ds)`, then `for x in it: data.append(load(x))`
        self.consume(call, "iter", description, value, purpose or Purpose.TRAINING)

    def _consumed_by_api_call(self, call: cst.Call, api: str, args: List[Value]) -> bool:
        """``tf.data.experimental.save(ds, path)``, ``tfds.as_numpy(ds)``, ``tf.data.make_one_shot_iterator(ds)``,
        ``tfe.Iterator(ds)``."""
        if api in EAGER_ITERATORS and args:
            self._consume_python_iterator(call, args[0], f"{dotted_text(call.func) or api}()")
            return True
        if api in ONE_OFF_FUNCTIONS and call in self.analysis.numpy_loop_reads:
            return True  # `for batch in tfds.as_numpy(ds)`: the loop reads `ds`
        if api in ONE_OFF_FUNCTIONS and args:
            self.consume(call, "one-off", f"{api.rsplit('.', 1)[-1]}()", args[0], Purpose.ONE_OFF)
            return True
        if api in TRAIN_SPEC_APIS and self._consume_input_fn(call, api.rsplit(".", 1)[-1] + "()", args):
            return True
        if self._consumed_by_metric(call, api, args):
            return True
        if api in ITERATOR_FUNCTIONS and args:
            self.consume(call, "iterator", api.rsplit(".", 1)[-1] + "()", args[0],
                         self._tf1_iterator_purpose(call, Purpose.TRAINING))
            return True
        return False

    def _tf1_iterator_purpose(self, call: cst.Call, purpose: Purpose) -> Purpose:
        """A TF1 iterator is read by the module's session runs: a demonstration's few steps
        (``for it in range(10): sess.run(train_op)``) are not training worth a finding, nor runs in
        loops that each say they evaluate or generate (``IteratorReads.looped_runs_purpose``)."""
        if purpose is not Purpose.TRAINING:
            return purpose
        reads = self.analysis.iterator_reads
        return reads.few_reads(call, tf1=True) or reads.looped_runs_purpose or purpose

    def _consume_inspected_attribute(self, node: cst.Attribute, value: Value) -> None:
        """``ds.element_spec``: a look at the pipeline's structure."""
        if node.attr.value in INSPECTION_ATTRIBUTES and isinstance(value, Pipeline) and (
                not isinstance(node.value, cst.Name) or self._only_looked_at(node.value)):
            self.consume(node, "inspection", node.attr.value, value, Purpose.INSPECTION)

    def _only_looked_at(self, name: cst.Name) -> bool:
        """The pipeline ``name`` holds has no use but being printed or its structure read: then that is
        its purpose. Any other read (`train_loop(dataset)` from a library out of sight, a `return`,
        another module importing it) may be its training, which a look beside it must not hide."""
        scope = self.function.node if self.function is not None else self.model.module
        known = self.analysis._looked_at
        if (scope, name.value) not in known:
            known[scope, name.value] = only_looked_at(scope, name.value, INSPECTION_ATTRIBUTES)
        if not known[scope, name.value] and not (self.function is None and self._looked_at_until_rebound(name)):
            return False
        session = self.model.session
        return self.function is not None or session is None or not session.importers(self.model, [name.value])

    def _looked_at_until_rebound(self, name: cst.Name) -> bool:
        """At module level (a notebook's cells), the pipeline ``name`` holds here is only looked at before
        a later top-level statement binds ``name`` to something else: tensorflow/text's image captioning
        builds ``train_ds = prepare_dataset(...)``, reads its ``element_spec``, then trains on ``train_ds =
        load_dataset(...)``; the reads after the rebinding are another pipeline's."""
        body = list(self.model.module.body)
        owners = owning_statements(body, {id(name)})
        if owners is None:
            return False
        at = owners[id(name)]
        start = next((i for i in range(at, -1, -1) if _binds(body[i], name.value)), None)
        end = next((i for i in range(at + 1, len(body)) if _binds(body[i], name.value, afresh=True)), None)
        if start is None or end is None:
            return False
        return only_looked_at(cst.Module(body=body[start:end]), name.value, INSPECTION_ATTRIBUTES)

    def _is_tuner(self, call: cst.Call) -> bool:
        """``tuner.search(...)`` where every binding of ``tuner`` reaching the call makes a KerasTuner tuner
        (``kt.BayesianOptimization(build_model, ...)``, ``keras_tuner.Hyperband(...)``)."""
        site = self.model.site_of(call)
        if not isinstance(call.func, cst.Attribute) or site is None:
            return False
        made = self.model.reaching_calls(call.func.value, site)
        return bool(made) and all((self.model.call_name(tuner) or "").startswith(_TUNER_MODULES) for tuner in made)

    def _consume_model_call(self, call: cst.Call, method: str) -> None:
        description = f"{dotted_text(call.func) or method}()"
        x_arg = argument(call, "x", 0)
        purpose = _MODEL_PURPOSES[method]
        if method == "fit" and smoke_run(self.model, call):
            purpose = Purpose.ONE_OFF  # a smoke run of a few steps: what it reads is never waited on for long
        # `_eval_looped`: `x=ds.as_numpy_iterator()` reads `ds` batch by batch (`numpy_loop_reads`)
        if x_arg is not None:
            self.consume(call, "model", description, self._eval_looped(x_arg.value), purpose, method)
        if method == "fit":
            validation = keyword_argument(call, "validation_data")
            if validation is not None:
                self.consume(call, "model", description, self._eval_looped(validation.value), Purpose.EVALUATION,
                             "validation")

    def eval_loop_iterable(self, loop: cst.For) -> Value:
        """What a ``for`` loop iterates. ``for x in tfe.Iterator(ds):`` and ``for x in iter(ds):`` read ``ds``
        through the loop alone, as ``for x in ds:`` does, so what the loop's body does decides what for
        (``_consume_by_loop`` evaluates the argument): not the training read a bare ``iter(ds)`` is."""
        target = loop.iter
        if isinstance(target, cst.Call) and (self.model.call_name(target) in EAGER_ITERATORS
                                             or (isinstance(target.func, cst.Name) and target.func.value == "iter")):
            return None
        return self._eval_looped(target)

    def _eval_looped(self, node: cst.BaseExpression) -> Value:
        """A loop's iterable (or what ``zip``/``enumerate`` there wraps): for ``ds.as_numpy_iterator()``
        and ``tfds.as_numpy(ds)``, the pipeline ``ds`` whose elements the loop reads."""
        if isinstance(node, cst.Call) and node in self.analysis.numpy_loop_reads:
            self.eval(node)  # its arguments' own effects
            return self.eval(numpy_view_of(self.model, node))
        return self.eval(node)

    def _consume_by_loop(self, loop: cst.For, iterated: Value) -> None:
        target = loop.iter
        value = iterated
        # `for i, batch in enumerate(ds)` / `zip(ds_a, ds_b)` / `tqdm(ds)` iterate the pipeline.
        if isinstance(target, cst.Call) and isinstance(target.func, (cst.Name, cst.Attribute)):
            wrapper = (dotted_text(target.func) or "").rsplit(".", 1)[-1]
            if self.model.call_name(target) in EAGER_ITERATORS:
                wrapper = "iter"
            if wrapper in ("enumerate", "zip", "tqdm", "trange", "iter") and target.args:
                value = None
                for arg in target.args:
                    if arg.keyword is None:
                        item = self._eval_looped(arg.value)
                        # `zip(sentences, ds)`: a list beside the pipeline is no pipeline, and joining
                        # it would lose the one there is
                        value = join(value, item) if isinstance(item, Pipeline) else value
        if not isinstance(value, Pipeline):
            return
        if self._is_inspection_loop(loop, value):
            self.consume(loop, "for", "for loop", value, Purpose.INSPECTION)
        elif self._collects(loop):
            self.consume(loop, "for", "for loop", value, Purpose.ONE_OFF)
        else:
            self.consume(loop, "for", "for loop", value, self.analysis.loop_purpose(loop))

    def _collects(self, loop: Optional[cst.For]) -> bool:
        """A single pass that reads the pipeline into a list (``IteratorReads.collecting_pass``) and
        trains on nothing as it goes (``losses.append(train_step(x))`` is a training loop)."""
        return (loop is not None and self.analysis.iterator_reads.collecting_pass(loop)
                and self.analysis.loop_purpose(loop) is not Purpose.TRAINING)

    def _is_inspection_loop(self, loop: cst.For, value: Pipeline) -> bool:
        if all(ends_with_literal_take(state) for state in value.states):
            return True
        if breaks_after_first(loop):
            return True  # `for x, y in ds: print(x.shape); break`: the first element looked at
        calls = self.analysis._loop_calls.get(loop, [])
        # `item[1].numpy()`: a method of a subscript has no dotted name, but its own name says what it does
        names = [self.model.call_name(call) or dotted_text(call.func) or _method_name(call) for call in calls]
        if any(name in _PACING_CALLS for name in names):
            return True  # a loop that waits for a person each batch (writes an image summary, then sleeps)
        for name in names:
            leaf = name.rsplit(".", 1)[-1]
            if not (name in _INSPECTION_CALLS or leaf in _INSPECTION_CALLS or name.startswith(("plt.", "matplotlib."))):
                return False
        return True

    def consume(self, node: cst.CSTNode, kind: str, description: str, value: Value, purpose: Purpose,
                role: str = "", distributed: Optional[bool] = None) -> None:
        if isinstance(value, TupleValue):
            for item in value.items:
                self.consume(node, kind, description, item, purpose, role, distributed)
            return
        if not isinstance(value, Pipeline):
            return
        real = frozenset(state for state in value.states if state.is_real)
        symbolic = frozenset(state for state in value.states if not state.is_real)
        if distributed is None:  # a helper's consumption applied at a call keeps what its own module saw
            distributed = self._through_strategy(node, kind)
        if real:
            self.consumptions.append(Consumption(node, kind, description, real, purpose, role, distributed=distributed))
        if symbolic:
            self.param_consumptions.append(
                Consumption(node, kind, description, symbolic, purpose, role, distributed=distributed))

    def _through_strategy(self, node: cst.CSTNode, kind: str) -> bool:
        """A tf.distribute strategy reads what ``node`` consumes (``analysis/distribution.py``)."""
        if kind == "distribute":
            return True
        site = self.model.site_of(node) if kind in ("model", "estimator") and isinstance(node, cst.Call) else None
        scopes = self.model.strategy_scopes  # type: ignore[attr-defined]
        if site is None:
            return False
        if kind == "model":
            return scopes.model_distributes(site)
        return scopes.estimator_distributes(site, spec=self.model.call_name(node) in TRAIN_SPEC_APIS)

    def _zipped_inputs(self, value: Pipeline) -> List[Value]:
        """``Dataset.zip((titles, titles.map(tower)))`` starts a pipeline of its own; a one-off pass over
        it (``index.index_from_dataset(zip(...))``) reads the zipped pipelines once too, ops and all.
        (Only there: for every consumer, zipped inputs that other consumers read for training or
        inspection would change which consumptions decide, a wider change left for its own tests.)"""
        inputs: List[Value] = []
        for state in value.states:
            source = state.source.node
            if (state.is_real and isinstance(source, cst.Call)
                    and self.model.call_name(source) == "tf.data.Dataset.zip"):
                inputs.extend(self.eval(arg.value) for arg in source.args if arg.keyword is None)
        return inputs


class ConsumptionQueries:
    """``PipelineAnalysis``'s questions about consumptions (a part of it, so that rules ask one object)."""

    model: ModuleModel
    consumptions: List[Consumption]
    _loop_calls: Dict[cst.CSTNode, List[cst.Call]]
    # consumptions_of's index: the consumptions it was built from, and id(op call) -> those holding it.
    _loop_purposes: Dict[cst.CSTNode, Purpose]
    _consumers_by_op: Optional[Tuple[List[Consumption], Dict[int, List[Consumption]]]] = None

    scope_of: Callable[[cst.Call], Optional[FunctionInfo]]  # PipelineAnalysis's
    every_epoch: Callable[[Consumption], bool]  # PipelineIntent's

    def consumptions_for(self, purposes) -> List[Consumption]:
        """The consumptions whose purpose is one of ``purposes``; with training, the evaluation a model
        waits on every epoch too (``PipelineIntent.every_epoch``)."""
        trains = Purpose.TRAINING in purposes
        return [c for c in self.consumptions if c.purpose in purposes or (trains and self.every_epoch(c))]

    def only_consumed_outside(self, call: cst.Call, purposes) -> bool:
        """The pipelines holding op ``call`` are consumed here, and never for one of ``purposes``
        (an `adapt()`, a plot of `take(9)`, `evaluate`): a finding about them is not worth a user's time."""
        consumptions = self.consumptions_of(call)
        return bool(consumptions) and all(c.purpose not in purposes for c in consumptions)

    def consumptions_of(self, call: cst.Call) -> List[Consumption]:
        """The consumptions of pipelines that include the op ``call``."""
        # Asked for many ops of a module (every rule about an op): indexed once per list of consumptions
        # rather than scanning every state's ops per question. The list is rebuilt by the property, so the
        # index is kept while it holds the same consumptions (by identity).
        consumptions = self.consumptions
        indexed = self._consumers_by_op
        if indexed is None or len(indexed[0]) != len(consumptions) or not all(map(operator.is_, indexed[0], consumptions)):
            by_op: Dict[int, List[Consumption]] = {}
            for consumption in consumptions:
                calls = {id(op.call): None for state in consumption.states for op in state.ops}
                for key in calls:
                    by_op.setdefault(key, []).append(consumption)
            indexed = self._consumers_by_op = (consumptions, by_op)
        return list(indexed[1].get(id(call), ()))

    def iterated_once(self, consumption: Consumption) -> bool:
        """True when the consumer provably makes a single pass (``fit`` with one epoch,
        ``evaluate``, a ``for`` loop or ``iter()`` not inside another loop, a one-shot iterator),
        not counting a ``repeat()`` in the pipeline itself. False when unsure."""
        node = consumption.node
        if consumption.kind == "for":
            sites = [site for site in map(self.model.site_of, self._loop_calls.get(node, [])) if site is not None]
            if not sites:
                return False
            site = sites[0]
            outer = site.loops[: site.loops.index(node)] if node in site.loops else site.loops
            return not outer and not self.model.call_graph.loops_reaching(site.function)
        site = self.model.site_of(node) if isinstance(node, cst.Call) else None
        if site is None or site.loops or self.model.call_graph.loops_reaching(site.function):
            return False
        if consumption.kind == "model":
            if consumption.role in ("evaluate", "predict"):
                return True
            if _method_name(node) == "search":  # type: ignore[arg-type]
                return False  # a tuner's search fits a model per trial: many passes, whatever `epochs` says
            epochs = argument(node, "epochs", 3)  # type: ignore[arg-type]
            return epochs is None or _written_one(self.model, epochs.value, site)
        if consumption.kind == "iter":
            return True
        return consumption.kind == "iterator" and consumption.description.startswith("make_one_shot_iterator")

    def loop_purpose(self, loop: cst.CSTNode) -> Purpose:
        """What a loop over a pipeline is for, from what its body calls and passes on."""
        # Asked again in each round of the fixpoint (and by the intent queries): read the body once.
        known = self._loop_purposes.get(loop)
        if known is None:
            known = self._loop_purposes[loop] = self._read_loop_purpose(loop)
        return known

    def _read_loop_purpose(self, loop: cst.CSTNode) -> Purpose:
        names: List[str] = []
        for call in self._loop_calls.get(loop, []):
            name = self.model.call_name(call) or dotted_text(call.func) or ""
            names.append(name)
            if _reports(call, name):
                continue  # `print('step {}'.format(num_train_steps))`: what a loop prints says nothing of what it does
            names.extend(dotted_text(arg.value) or "" for arg in call.args)
        names.extend(n for n in (_with_item_names(loop)) if n)
        return purpose_of_names(name.rsplit(".", 1)[-1] for name in names if name)

    def built_for(self, call: cst.Call) -> Purpose:
        """What the function (and class) building the pipeline at ``call``, then the variable it is
        assigned to, say it is for: `eval_input_fn`, `dataset_to_numpy_util`, `val_ds = ...` are not
        training. A helper's name outranks the variable names inside it."""
        function = self.scope_of(call)
        enclosing = function.enclosing_names() if function is not None else []
        around = purpose_of_builder(enclosing)
        if around in (Purpose.EVALUATION, Purpose.INSPECTION):
            return around
        return purpose_of_builder(_assigned_names(self.model.site_of(call)) + enclosing)


# `ds.as_numpy_iterator()`, `tfds.as_numpy(ds)`: NumPy views of a pipeline's elements.
_NUMPY_VIEW_METHODS = frozenset({"as_numpy_iterator"})
_NUMPY_VIEW_FUNCTIONS = frozenset({"tfds.as_numpy"})


def numpy_view_of(model: ModuleModel, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The pipeline expression a NumPy view call reads: ``ds`` in ``ds.as_numpy_iterator()`` and
    ``tfds.as_numpy(ds)``; None for any other call."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in _NUMPY_VIEW_METHODS and not call.args:
        return call.func.value
    if model.call_name(call) in _NUMPY_VIEW_FUNCTIONS and call.args and call.args[0].keyword is None:
        return call.args[0].value
    return None


def smoke_run(model: ModuleModel, fit: cst.Call) -> bool:
    """``fit`` runs a few steps in all (``fits_briefly``), and once: in no loop, in a function no loop calls."""
    site = model.site_of(fit)
    return (site is not None and not site.loops and not model.call_graph.loops_reaching(site.function)  # type: ignore[attr-defined]
            and fits_briefly(fit, model.step_loops.fixed_integer))  # type: ignore[attr-defined]


def fits_briefly(fit: cst.Call, known: Callable[[cst.BaseExpression], Optional[int]]) -> bool:
    """``model.fit(ds, steps_per_epoch=1, epochs=3)``: a run of at most ``_SMOKE_STEPS`` steps in all, as
    counts the source shows (``known``: a literal, a module constant) say; a smoke test that the model
    and its input fit together, the training configuration being elsewhere. Its input, and the
    validation it runs after each of its few epochs, are waited on a few times: no hot path."""
    steps = keyword_value(fit, "steps_per_epoch")
    steps_count = known(steps) if steps is not None else None
    epochs_arg = argument(fit, "epochs", 3)
    epochs = known(epochs_arg.value) if epochs_arg is not None else 1  # Keras' default
    if steps_count is None or epochs is None or steps_count <= 0:
        return False
    initial = keyword_value(fit, "initial_epoch")
    if initial is not None:
        return False  # `epochs` is then the index to stop at, the run's length unseen here
    return steps_count * epochs <= _SMOKE_STEPS


def _written_one(model: ModuleModel, expr: cst.BaseExpression, site) -> bool:
    """``expr`` is 1 as the source writes it: the literal, or a module constant no local or parameter
    shadows where it is read (`EPOCHS = 1`, TensorFlowOnSpark's segmentation); not a parameter's default
    or what callers pass, which a run may change."""
    known = model.integer_values.integer(expr, site)  # type: ignore[attr-defined]
    return known is not None and known.value == 1 and (known.origin == "" or known.origin.startswith("constant"))


def _binds(statement: cst.CSTNode, name: str, afresh: bool = False) -> bool:
    """``name = ...`` as a whole top-level line; with ``afresh``, a value that does not read ``name``
    (``train_ds = load_dataset(path)``, not ``train_ds = train_ds.batch(32)``)."""
    if not isinstance(statement, cst.SimpleStatementLine) or assigned_name(statement) != name:
        return False
    return not afresh or name_uses(statement.body[0].value, name) == 0  # type: ignore[union-attr]


def _method_name(call: cst.Call) -> str:
    """``numpy`` for ``batch[0].numpy()``: the called method's own name, whatever it is called on."""
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else ""


def _reports(call: cst.Call, name: str) -> bool:
    """A call that prints, formats or logs its arguments (``print``, ``str.format``, ``logging.info``)."""
    if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, (cst.SimpleString, cst.ConcatenatedString)):
        return True  # `'step {}'.format(...)`
    return name in _REPORTING_CALLS or name.startswith(("logging.", "absl.logging.", "tf.compat.v1.logging.", "tf.logging."))


def _assigned_names(site) -> List[str]:
    """`val_ds = raw_val_ds.map(f)`: the names the statement holding a call assigns (its own purpose
    as the author named it)."""
    statement = site.statement if site is not None else None
    if statement is None:
        return []
    names: List[str] = []
    for small in statement.body:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                text = dotted_text(target.target)
                if text is not None:
                    names.append(text.rsplit(".", 1)[-1])
    return names


def _with_item_names(loop: cst.CSTNode) -> List[str]:
    """`with tf.GradientTape() as tape:` inside a loop body: its context managers' names (in no
    particular order: ``purpose_of_names`` reads them as a set)."""
    found = _WithItemNames()
    walk(loop, found)  # not `node.children`, which rebuilds every node it lists
    return found.names


class _WithItemNames(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: List[str] = []

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if isinstance(item.item, cst.Call):
                self.names.append(dotted_text(item.item.func) or "")


def _is_metric_api(api: str) -> bool:
    """A class or function of a `metrics` module (`tf.keras.metrics.AUC`, `tfrs.metrics.FactorizedTopK`)."""
    return "metrics" in api.split(".")[:-1]


def _holds_pipeline(value: Value) -> bool:
    if isinstance(value, TupleValue):
        return any(_holds_pipeline(item) for item in value.items)
    return isinstance(value, Pipeline)


def ends_with_literal_take(state: State) -> bool:
    """The state's last op is `take(n)` with a literal `n`: a preview."""
    if not state.ops or state.ops[-1].name != "take":
        return False
    count = argument(state.ops[-1].call, "count", 0)
    return count is not None and int_literal(count.value) is not None
