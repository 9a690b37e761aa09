"""The tf.data pipeline model: which values are Datasets, which ops they carry, where they are consumed.

A small abstract interpreter runs over each function body (and the module body). A Dataset value
is a set of possible *states* (may-analysis: an op added on one branch gives two states); a state
is a source plus the ops applied to it, in order. Same-file helpers are summarised: what they
return (in terms of their parameters, so ``def augment(ds): return ds.map(f)`` appends ``map`` to
whatever the caller passes) and which parameters they consume. Summaries are recomputed until they
stop changing, so helpers calling helpers are followed; a body whose inputs (the summaries and class
attributes it reads, the environment it starts from) did not change is not interpreted again, its
previous outputs are replayed. Anything the interpreter cannot see (imported helpers, unknown
receivers) is *unknown*, and unknown is never a Dataset: a pandas ``.map``, a Spark RDD or the
builtin ``map`` never start a pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, FrozenSet, Generic, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union

import libcst as cst

from tflint_perf.analysis.arguments import (
    argument,
    bool_literal,
    int_literal,
    keyword_argument,
    keyword_value,
    string_keyword,
)
from tflint_perf.analysis.model import module_name
from tflint_perf.analysis.model import ClassInfo, FunctionInfo, ModuleModel
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.purpose import Purpose, purpose_of_builder, purpose_of_names
from tflint_perf.analysis.pipeline_values import (
    MAX_OPS,
    ClassRef,
    Collection,
    Consumption,
    Env,
    FunctionRef,
    Op,
    Pipeline,
    Source,
    State,
    Summary,
    TfdsBuilder,
    TupleValue,
    Value,
    join,
    join_envs,
    same_env,
)

SOURCES = frozenset(
    {
        "tf.data.Dataset.from_tensor_slices",
        "tf.data.Dataset.from_tensors",
        "tf.data.Dataset.from_generator",
        "tf.data.Dataset.range",
        "tf.data.Dataset.list_files",
        "tf.data.Dataset.zip",
        "tf.data.Dataset.sample_from_datasets",
        "tf.data.Dataset.choose_from_datasets",
        "tf.data.Dataset.load",
        "tf.data.Dataset.random",
        "tf.data.Dataset.counter",
        "tf.data.TFRecordDataset",
        "tf.data.TextLineDataset",
        "tf.data.FixedLengthRecordDataset",
        "tf.data.experimental.make_csv_dataset",
        "tf.data.experimental.CsvDataset",
        "tf.data.experimental.make_batched_features_dataset",
        "keras.utils.image_dataset_from_directory",
        "keras.utils.text_dataset_from_directory",
        "keras.utils.audio_dataset_from_directory",
        "keras.utils.timeseries_dataset_from_array",
    }
)
# Dataset methods that return a Dataset.
DATASET_METHODS = frozenset(
    {
        "apply", "batch", "bucket_by_sequence_length", "cache", "concatenate", "enumerate", "filter",
        "flat_map", "group_by_window", "ignore_errors", "interleave", "map", "padded_batch", "prefetch",
        "ragged_batch", "rebatch", "rejection_resample", "repeat", "scan", "shard", "shuffle", "skip",
        "snapshot", "sparse_batch", "take", "take_while", "unbatch", "unique", "window", "with_options",
        "map_with_legacy_function", "filter_with_legacy_function", "distribute",
    }
)
# Keras loaders whose dataset ends in `prefetch(AUTOTUNE)` already (keras/utils/*_dataset_utils.py).
PREFETCHED_SOURCES = frozenset(
    {
        "keras.utils.image_dataset_from_directory",
        "keras.utils.text_dataset_from_directory",
        "keras.utils.audio_dataset_from_directory",
        "keras.utils.timeseries_dataset_from_array",
    }
)
# Ops that may follow a prefetch without undoing it.
PREFETCH_TRANSPARENT = frozenset({"with_options", "repeat", "take", "skip", "rebatch"})
DEVICE_PREFETCH = frozenset({"tf.data.experimental.prefetch_to_device", "tf.data.experimental.copy_to_device"})
# Sources that slice arrays already in memory, and ops that only regroup or reorder elements: a
# pipeline made of nothing else does no work a prefetch could overlap with the training step.
# (`Dataset.range` is left out: in real code it stands in for a source whose work follows in a map.)
IN_MEMORY_SOURCES = frozenset({"tf.data.Dataset.from_tensor_slices", "tf.data.Dataset.from_tensors"})
REGROUPING_OPS = frozenset(
    {"batch", "padded_batch", "shuffle", "repeat", "cache", "take", "skip", "enumerate", "unbatch", "rebatch",
     "with_options", "shard", "prefetch", "concatenate"}
)
ITERATOR_METHODS = frozenset({"make_one_shot_iterator", "make_initializable_iterator"})
# Consumers that read a pipeline once, to set something up or to write it out: never a hot path.
ONE_OFF_METHODS = frozenset({"adapt", "save", "as_numpy_iterator"})
# `writer.write(ds)` (tf.data.experimental.TFRecordWriter), `model.adapt(ds)`: methods taking a pipeline once.
ONE_OFF_ARGUMENT_METHODS = frozenset({"adapt", "write"})
INSPECTION_ATTRIBUTES = frozenset({"element_spec", "output_shapes", "output_types"})
ONE_OFF_FUNCTIONS = frozenset({"list", "tuple", "tf.data.experimental.save", "np.array", "numpy.array", "tfds.as_numpy"})
ITERATOR_FUNCTIONS = frozenset({"tf.data.make_one_shot_iterator", "tf.data.make_initializable_iterator"})
MODEL_CONSUMERS = frozenset({"fit", "evaluate", "predict"})
_MODEL_PURPOSES = {"fit": Purpose.TRAINING, "evaluate": Purpose.EVALUATION, "predict": Purpose.INFERENCE}
DISTRIBUTE_METHODS = frozenset({"experimental_distribute_dataset"})
# Calls that only look at data: a loop made of these is inspection, not training.
_INSPECTION_CALLS = frozenset(
    {
        "print", "display", "len", "str", "int", "float", "repr", "range", "list", "enumerate", "zip",
        "numpy", "decode", "astype", "format", "imshow", "title", "axis", "subplot", "figure", "show",
        "xlabel", "ylabel", "plot", "set_title", "append", "shape", "tf.print", "tf.shape", "items",
    }
)
_MAX_ROUNDS = 5
_MAX_REPEATED_LOOPS = 4


_Found = TypeVar("_Found")


class _FirstInstanceOf(Generic[_Found]):
    """An if/elif chain of ``isinstance`` tests, decided once per node type and then looked up.

    The answer depends only on the node's type, so it is cached by type. That matters because
    LibCST's node classes are ABCs: every failed ``isinstance`` against one runs ABCMeta's check,
    and the interpreter asks tens of thousands of times per file.
    """

    def __init__(self, cases: Sequence[Tuple[Tuple[type, ...], _Found]], default: _Found) -> None:
        self._cases = cases
        self._default = default
        self._by_type: Dict[type, _Found] = {}

    def find(self, node: object) -> _Found:
        """What the first case ``node`` is an instance of maps to; the default if none."""
        node_type = type(node)
        try:
            return self._by_type[node_type]
        except KeyError:
            found = next((value for types, value in self._cases if issubclass(node_type, types)), self._default)
            self._by_type[node_type] = found
            return found


class PipelineAnalysis:
    """Pipelines, their ops and their consumers for one module."""

    # Replay interpretations whose inputs are unchanged (see _run). Off only in tests, which check
    # that it changes nothing.
    replay_unchanged = True

    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._own_consumptions: List[Consumption] = []
        self._own_states: Dict[State, None] = {}
        self._from_importers: Optional[Tuple[List[Consumption], Dict[State, None]]] = None
        self._summaries: Dict[FunctionInfo, Summary] = {}
        self._class_attrs: Dict[Tuple[ClassInfo, str], Value] = {}
        self._closures: Dict[FunctionInfo, Env] = {}
        self._dataset_classes = {
            cls for cls in model.classes.values()
            if any(model.resolve(base.value) == "tf.data.Dataset" for base in cls.node.bases)
        }
        self._call_sites = {site.node: site for site in model.calls}
        self._loop_calls: Dict[cst.CSTNode, List[cst.Call]] = {}
        self._peeked: set = set()  # calls that are the argument of `next(...)`
        for site in model.calls:
            for loop in site.loops:
                self._loop_calls.setdefault(loop, []).append(site.node)
            node = site.node
            if isinstance(node.func, cst.Name) and node.func.value == "next" and node.args:
                self._peeked.add(node.args[0].value)
        if self._mentions_datasets():
            if model.session is None:
                self._run()
            else:
                with model.session.building(model, "pipelines"):
                    self._run()

    # -- across modules --------------------------------------------------------------------------
    @property
    def consumptions(self) -> List[Consumption]:
        """Where this module's pipelines are iterated, and what for; in a project session also where
        its importers iterate pipelines built (or extended) here."""
        return self._own_consumptions + self._importers_part()[0]

    @property
    def _real_states(self) -> Dict[State, None]:
        return self._importers_part()[1]

    def _importers_part(self) -> Tuple[List[Consumption], Dict[State, None]]:
        """The importers' consumptions of pipelines built here, and every concrete state (own first)."""
        if self._from_importers is None:
            consumptions: List[Consumption] = []
            states = self._own_states
            session = self.model.session
            if session is not None:
                consumptions, theirs = self._take_from_importers(session)
                if theirs:
                    states = {**self._own_states, **theirs}
            self._from_importers = (consumptions, states)
        return self._from_importers

    def _take_from_importers(self, session) -> Tuple[List[Consumption], Dict[State, None]]:
        consumptions: List[Consumption] = []
        states: Dict[State, None] = {}
        # What importers can take from here: module-level functions (or classes, for methods) that
        # return a pipeline or consume one they are given.
        exported = [function.class_info.name if function.class_info is not None else function.name
                    for function, summary in self._summaries.items()
                    if function.parent is None and (summary.returns is not None or summary.consumptions)]
        if not exported:
            return consumptions, states
        for importer in session.importers(self.model, exported):
            theirs = session.analysis(importer, "pipelines")
            if theirs is None:
                continue
            where = module_name(importer)
            for consumption in theirs._own_consumptions:
                mine = frozenset(state for state in consumption.states if self._touches(state))
                if mine:
                    consumptions.append(replace(consumption, states=mine, elsewhere=where))
                    states.update(dict.fromkeys(mine))
        return consumptions, states

    def _touches(self, state: State) -> bool:
        """Part of the state (its source or an op) is this module's code."""
        owns = self.model.owns
        return owns(state.source.node) or any(owns(op.call) for op in state.ops)

    def summary_for(self, function: FunctionInfo) -> Optional[Summary]:
        """A function's summary, from its own module's analysis when it is defined elsewhere (None:
        unknown, as for an import cycle)."""
        owner = function.model
        if owner is None or owner is self.model:
            return self._effective_summary(function)
        session = self.model.session
        theirs = session.analysis(owner, "pipelines") if session is not None else None
        return theirs._effective_summary(function) if theirs is not None else None

    # -- queries for rules ---------------------------------------------------------------------
    def states(self) -> List[State]:
        """Every concrete pipeline state seen anywhere in the module."""
        return list(self._real_states)

    def ops(self, *names: str) -> Iterator[Tuple[Op, List[State]]]:
        """Each distinct op call with one of ``names``, with the concrete states that contain it."""
        by_call: Dict[cst.Call, Tuple[Op, List[State]]] = {}
        for state in self._real_states:
            for op in state.ops:
                if op.name in names:
                    by_call.setdefault(op.call, (op, []))[1].append(state)
        return iter(by_call.values())

    def consumptions_for(self, purposes) -> List[Consumption]:
        """The consumptions whose purpose is one of ``purposes``."""
        return [c for c in self.consumptions if c.purpose in purposes]

    def only_consumed_outside(self, call: cst.Call, purposes) -> bool:
        """The pipelines holding op ``call`` are consumed here, and never for one of ``purposes``
        (an `adapt()`, a plot of `take(9)`, `evaluate`): a finding about them is not worth a user's time."""
        consumptions = self.consumptions_of(call)
        return bool(consumptions) and all(c.purpose not in purposes for c in consumptions)

    def ends_prefetched(self, state: State) -> bool:
        """The state's last real transformation is a prefetch (or it never left a prefetched source)."""
        for op in reversed(state.ops):
            if op.name == "prefetch" or (op.name == "apply" and self._is_device_prefetch(op.call)):
                return True
            if op.name not in PREFETCH_TRANSPARENT:
                return False
        return state.source.prefetched

    def does_work(self, state: State) -> bool:
        """False when the state only slices in-memory tensors and regroups them (`from_tensor_slices
        ((x, y)).shuffle(n).batch(32)`): there is nothing for a prefetch to overlap."""
        source = state.source
        if source.kind != "call" or not isinstance(source.node, cst.Call):
            return True
        if self.model.call_name(source.node) not in IN_MEMORY_SOURCES:
            return True
        return any(op.name not in REGROUPING_OPS for op in state.ops)

    def replays_one_element(self, state: State, call: cst.Call) -> bool:
        """The op ``call`` sees one element repeated: `Dataset.range(1).repeat()` or
        `from_tensors(x).repeat()`, the idiom for synthetic input (benchmarks, fake data)."""
        source = state.source
        if source.kind != "call" or not isinstance(source.node, cst.Call):
            return False
        name = self.model.call_name(source.node)
        one = name == "tf.data.Dataset.from_tensors" or (
            name == "tf.data.Dataset.range" and len(source.node.args) == 1 and int_literal(source.node.args[0].value) == 1
        )
        return one and all(op.name == "repeat" for op in state.ops_before(call))

    def _is_device_prefetch(self, call: cst.Call) -> bool:
        transformation = call.args[0].value if call.args else None
        return isinstance(transformation, cst.Call) and self.model.call_name(transformation) in DEVICE_PREFETCH

    def consumptions_of(self, call: cst.Call) -> List[Consumption]:
        """The consumptions of pipelines that include the op ``call``."""
        return [c for c in self.consumptions if any(any(op.call is call for op in s.ops) for s in c.states)]

    def iterated_once(self, consumption: Consumption) -> bool:
        """True when the consumer provably makes a single pass (``fit`` with one epoch,
        ``evaluate``, a ``for`` loop or ``iter()`` not inside another loop, a one-shot iterator),
        not counting a ``repeat()`` in the pipeline itself. False when unsure."""
        node = consumption.node
        if consumption.kind == "for":
            sites = [self._call_sites[c] for c in self._loop_calls.get(node, []) if c in self._call_sites]
            if not sites:
                return False
            site = sites[0]
            outer = site.loops[: site.loops.index(node)] if node in site.loops else site.loops
            return not outer and not self.model.call_graph.loops_reaching(site.function)
        site = self._call_sites.get(node) if isinstance(node, cst.Call) else None
        if site is None or site.loops or self.model.call_graph.loops_reaching(site.function):
            return False
        if consumption.kind == "model":
            if consumption.role in ("evaluate", "predict"):
                return True
            epochs = argument(node, "epochs", 3)  # type: ignore[arg-type]
            return epochs is None or (int_literal(epochs.value) == 1)
        if consumption.kind == "iter":
            return True
        return consumption.kind == "iterator" and consumption.description.startswith("make_one_shot_iterator")

    def loop_purpose(self, loop: cst.CSTNode) -> Purpose:
        """What a loop over a pipeline is for, from what its body calls and passes on."""
        names: List[str] = []
        for call in self._loop_calls.get(loop, []):
            names.append(self.model.call_name(call) or dotted_text(call.func) or "")
            names.extend(dotted_text(arg.value) or "" for arg in call.args)
        names.extend(n for n in (_with_item_names(loop)) if n)
        return purpose_of_names(name.rsplit(".", 1)[-1] for name in names if name)

    def built_for(self, call: cst.Call) -> Purpose:
        """What the function (and class) building the pipeline at ``call``, then the variable it is
        assigned to, say it is for: `eval_input_fn`, `dataset_to_numpy_util`, `val_ds = ...` are not
        training. A helper's name outranks the variable names inside it."""
        function = self.scope_of(call)
        enclosing: List[str] = []
        while function is not None:
            enclosing.append(function.name)
            if function.class_info is not None:
                enclosing.append(function.class_info.name)
            function = function.parent
        around = purpose_of_builder(enclosing)
        if around in (Purpose.EVALUATION, Purpose.INSPECTION):
            return around
        return purpose_of_builder(_assigned_names(self._call_sites.get(call)) + enclosing)

    def scope_of(self, call: cst.Call) -> Optional[FunctionInfo]:
        """The function a call sits in (None at module level)."""
        site = self._call_sites.get(call)
        return site.function if site is not None else None

    # -- driver ---------------------------------------------------------------------------------
    def _mentions_datasets(self) -> bool:
        for site in self.model.calls:
            name = self.model.call_name(site.node)
            if name is not None and (name in SOURCES or name.startswith("tfds.")):
                return True
        return bool(self._dataset_classes) or self._calls_imported_pipeline_functions()

    def _calls_imported_pipeline_functions(self) -> bool:
        """In a project session: a call of another module's function that returns or consumes pipelines."""
        session = self.model.session
        if session is None or self.model.path is None:
            return False
        candidates: Dict[str, bool] = {}
        for site in self.model.calls:
            func = site.node.func
            root = dotted_text(func)
            local = root.split(".")[0] if root is not None else None
            if local is None or local not in self.model.raw_imports:
                continue
            if local not in candidates:
                module, level, name = self.model.raw_imports[local]
                target = session.project.resolve(self.model.path, module, level, name)
                candidates[local] = target is not None and session.project.mentions_pipelines(target[0])
            if not candidates[local]:
                continue
            target = self.model.effects.resolve_callable(func, site.function)
            if isinstance(target, FunctionInfo) and target.model is not self.model and self.summary_for(target) is not None:
                return True
        return False

    def _run(self) -> None:
        # Rounds, as in a plain fixpoint: each interprets the module body, then every function, against
        # the previous round's summaries and the class attributes as they stand, until nothing changes.
        # An interpretation is a deterministic function of what it reads (see _Interpretation), so one
        # whose inputs are equal to last round's is not repeated: its record is replayed instead. The
        # confirming round, and any function untouched by what changed, then costs a few comparisons.
        previous_runs: Dict[Optional[FunctionInfo], _Interpretation] = {}
        runs: List[_Interpretation] = []
        for _ in range(_MAX_ROUNDS):
            previous = (dict(self._summaries), dict(self._class_attrs))
            module_run = self._interpret(None, {}, previous_runs.get(None))
            runs = [module_run]
            summaries: Dict[FunctionInfo, Summary] = {}
            for function in self.model.functions:
                run = self._interpret(function, module_run.result, previous_runs.get(function))
                runs.append(run)
                summaries[function] = run.result  # type: ignore[assignment]
            self._summaries = summaries
            previous_runs = {run.function: run for run in runs}
            if previous == (self._summaries, self._class_attrs):
                break
        # The last round's outputs, in the order that round produced them.
        unique: Dict[Tuple[cst.CSTNode, FrozenSet[State]], Consumption] = {}
        for run in runs:
            self._own_states.update(run.real_states)  # a state seen again keeps its first place
            for consumption in run.consumptions:
                unique.setdefault((consumption.node, consumption.states), consumption)
        self._own_consumptions = list(unique.values())

    def _interpret(self, function: Optional[FunctionInfo], module_env: Env,
                   previous: Optional["_Interpretation"]) -> "_Interpretation":
        """Interpret the module body (``function`` None) or a function, or replay ``previous``,
        last round's interpretation of it, when what it would read is unchanged."""
        closure = self._closures.get(function) if function is not None else None
        if previous is not None and self.replay_unchanged and previous.inputs_unchanged(self, module_env, closure):
            self._class_attrs.update(previous.class_attrs_written)
            self._closures.update(previous.closures_written)
            return previous
        if function is None:
            run = _Run(self, None, {})
            result: Union[Env, Summary] = run.run_module()
        else:
            env = dict(module_env)
            env.update(closure or {})
            run = _Run(self, function, env)
            result = run.run_function()
        if previous is not None and previous.result == result:
            # Keep last round's equal object: the runs that read it then compare by identity.
            result = previous.result
        return _Interpretation(
            function=function,
            module_env=module_env,
            closure=closure,
            summaries_read=run.summaries_read,
            class_attrs_read=run.class_attrs_read,
            result=result,
            consumptions=run.consumptions,
            real_states=run.real_states,
            class_attrs_written={key: self._class_attrs.get(key) for key in run.class_attrs_written},
            closures_written=run.closures_written,
        )

    def _effective_summary(self, function: FunctionInfo) -> Optional[Summary]:
        """The summary ``apply`` uses for ``function``: None for none at all and for one that
        returns nothing known and consumes nothing, since applying that has no effect either."""
        summary = self._summaries.get(function)
        if summary is not None and summary.returns is None and not summary.consumptions:
            return None
        return summary


@dataclass(eq=False)
class _Interpretation:
    """One interpretation of the module body (``function`` None) or of a function, in one round.

    Its inputs are all it reads of the analysis' shared state: the environment it starts from
    (the module's, plus the closure for a nested function), the summaries it applies, and the
    class attributes it reads or joins into, as they were before its first access (nothing else
    writes them while it runs). Its outputs are its result (the module's environment or the
    function's summary), the consumptions and concrete states it finds, in order, and the class
    attributes and closures it leaves behind. Equal inputs give equal outputs, so replaying the
    outputs is the same as interpreting again.
    """

    function: Optional[FunctionInfo]
    module_env: Env
    closure: Optional[Env]
    summaries_read: Dict[FunctionInfo, Optional[Summary]]
    class_attrs_read: Dict[Tuple[ClassInfo, str], Value]
    result: Union[Env, Summary]
    consumptions: List[Consumption]
    real_states: Dict[State, None]
    class_attrs_written: Dict[Tuple[ClassInfo, str], Value]
    closures_written: Dict[FunctionInfo, Env]

    def inputs_unchanged(self, analysis: PipelineAnalysis, module_env: Env, closure: Optional[Env]) -> bool:
        # `is` first: unchanged results are kept as the same objects (see PipelineAnalysis._interpret).
        if not (module_env is self.module_env or module_env == self.module_env):
            return False
        if not (closure is self.closure or closure == self.closure):
            return False
        for function, summary in self.summaries_read.items():
            current = analysis.summary_for(function)
            if not (current is summary or current == summary):
                return False
        class_attrs = analysis._class_attrs
        return all(class_attrs.get(key) == value for key, value in self.class_attrs_read.items())


class _Run:
    """Interprets one function body (or the module body)."""

    def __init__(self, analysis: PipelineAnalysis, function: Optional[FunctionInfo], env: Env) -> None:
        self.analysis = analysis
        self.model = analysis.model
        self.function = function
        self.env = env
        self.returns: Value = None
        self.param_consumptions: List[Consumption] = []
        self._loop_depth = 0
        # What this interpretation reads and produces: see _Interpretation.
        self.summaries_read: Dict[FunctionInfo, Optional[Summary]] = {}
        self.class_attrs_read: Dict[Tuple[ClassInfo, str], Value] = {}
        self.class_attrs_written: Dict[Tuple[ClassInfo, str], None] = {}
        self.closures_written: Dict[FunctionInfo, Env] = {}
        self.consumptions: List[Consumption] = []
        self.real_states: Dict[State, None] = {}

    # -- entry points ---------------------------------------------------------------------------
    def run_module(self) -> Env:
        for name, function in self.model.module_functions.items():
            self.env[name] = FunctionRef(function)
        for name, cls in self.model.classes.items():
            self.env[name] = ClassRef(cls)
        self.run_block(self.model.module.body)
        return self.env

    def run_function(self) -> Summary:
        assert self.function is not None
        for index, param in enumerate(_parameters(self.function)):
            if index == 0 and self.function.is_method and not _is_static(self.function):
                self.env[param.name.value] = None  # self / cls
                continue
            self.env[param.name.value] = Pipeline(
                frozenset({State(Source(param, "param", index, self.function))})
            )
        body = self.function.node.body
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        self.run_block(statements)  # type: ignore[arg-type]
        return Summary(self.returns, tuple(self.param_consumptions))

    def _loop_passes(self) -> int:
        """How often to interpret the loop being entered: twice (a second iteration sees what the
        first assigned), once when nested deeper than _MAX_REPEATED_LOOPS (each level doubling the
        work of those inside it would be exponential)."""
        self._loop_depth += 1
        return 2 if self._loop_depth <= _MAX_REPEATED_LOOPS else 1

    # -- statements -----------------------------------------------------------------------------
    def run_block(self, statements: Sequence[cst.CSTNode]) -> None:
        for statement in statements:
            self.run_statement(statement)

    def _branch(self, statements: Sequence[cst.CSTNode], env: Env) -> Env:
        saved = self.env
        self.env = dict(env)
        self.run_block(statements)
        result = self.env
        self.env = saved
        return result

    def run_statement(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self.run_small(small)
        elif isinstance(node, cst.If):
            self.eval(node.test)
            then_env = self._branch(_block(node.body), self.env)
            else_env = self._branch(_block(node.orelse), self.env) if node.orelse else self.env
            self.env = join_envs(then_env, else_env)
        elif isinstance(node, cst.Else):
            self.run_block(_block(node.body))
        elif isinstance(node, cst.For):
            iterated = self.eval(node.iter)
            self._consume_by_loop(node, iterated)
            element = _element_of(iterated)
            self._run_loop(node, lambda env: self._bind_target_env(node.target, element, env))
        elif isinstance(node, cst.While):
            self.eval(node.test)
            self._run_loop(node, lambda env: env)
        elif isinstance(node, (cst.Try, cst.TryStar)):
            before = self.env
            after_body = self._branch(_block(node.body), before)
            merged = join_envs(before, after_body)
            outcomes = [after_body]
            for handler in node.handlers:
                outcomes.append(self._branch(_block(handler.body), merged))
            if node.orelse:
                outcomes[0] = self._branch(_block(node.orelse.body), after_body)
            env = outcomes[0]
            for outcome in outcomes[1:]:
                env = join_envs(env, outcome)
            self.env = env
            if node.finalbody:
                self.run_block(_block(node.finalbody.body))
        elif isinstance(node, cst.With):
            for item in node.items:
                self.eval(item.item)
                if item.asname is not None:
                    self.assign(item.asname.name, None)
            self.run_block(_block(node.body))
        elif isinstance(node, cst.FunctionDef):
            info = self.model.function_info(node)
            if info is not None:
                self.env[node.name.value] = FunctionRef(info)
                if self.function is not None:
                    closure = dict(self.env)
                    self.analysis._closures[info] = closure
                    self.closures_written[info] = closure
        elif isinstance(node, cst.ClassDef):
            cls = self.model.classes.get(node.name.value)
            self.env[node.name.value] = ClassRef(cls) if cls is not None and cls.node is node else None
        elif isinstance(node, cst.Match):
            self.eval(node.subject)
            before = self.env
            env = before
            for case in node.cases:
                env = join_envs(env, self._branch(_block(case.body), before))
            self.env = env

    def run_small(self, node: cst.BaseSmallStatement) -> None:
        if isinstance(node, cst.Expr):
            self.eval(node.value)
        elif isinstance(node, cst.Assign):
            value = self.eval(node.value)
            for target in node.targets:
                self.assign(target.target, value)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.eval(node.value))
        elif isinstance(node, cst.AugAssign):
            self.eval(node.value)
            self.assign(node.target, None)
        elif isinstance(node, cst.Return):
            value = self.eval(node.value) if node.value is not None else None
            self.returns = join(self.returns, value)

    def assign(self, target: cst.BaseExpression, value: Value) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            items = value.items if isinstance(value, TupleValue) and len(value.items) == len(elements) else None
            for index, element in enumerate(elements):
                inner = element.value
                if isinstance(element, cst.StarredElement):
                    self.assign(inner, None)
                else:
                    self.assign(inner, items[index] if items is not None else None)
        elif isinstance(target, cst.Attribute) and _is_self(target.value):
            cls = self._class()
            if cls is not None:
                key = (cls, target.attr.value)
                # Recorded as an input too: the joined value depends on what was there.
                self.analysis._class_attrs[key] = join(self._class_attr(key), value)
                self.class_attrs_written[key] = None
                self._note_states(value)

    def _run_loop(self, node: Union[cst.For, cst.While], entry_of: Callable[[Env], Env]) -> None:
        """The loop body from ``entry_of(env)`` (the target bound, for a ``for``), iterated until the
        environment settles or the passes run out; then the ``else`` block."""
        before = self.env
        env = dict(before)
        for _ in range(self._loop_passes()):
            after = join_envs(before, self._branch(_block(node.body), entry_of(env)))
            env, settled = after, same_env(env, after)
            if settled:
                break
        self._loop_depth -= 1
        self.env = env
        if node.orelse:
            self.run_statement(node.orelse)

    def _bind_target_env(self, target: cst.BaseExpression, value: Value, env: Env) -> Env:
        saved = self.env
        self.env = dict(env)
        self.assign(target, value)
        result = self.env
        self.env = saved
        return result

    # -- expressions ----------------------------------------------------------------------------
    def eval(self, node: cst.BaseExpression) -> Value:
        value = self._eval(node)
        self._note_states(value)
        return value

    def _note_states(self, value: Value) -> None:
        if isinstance(value, Pipeline):
            for state in value.states:
                if state.is_real:
                    self.real_states[state] = None

    def _class_attr(self, key: Tuple[ClassInfo, str]) -> Value:
        value = self.analysis._class_attrs.get(key)
        self.class_attrs_read.setdefault(key, value)  # the first access sees the value from before the run
        return value

    def _eval(self, node: cst.BaseExpression) -> Value:
        return _EXPRESSION_EVALUATORS.find(node)(self, node)

    def _eval_name(self, node: cst.Name) -> Value:
        return self.env.get(node.value)

    def _eval_attribute(self, node: cst.Attribute) -> Value:
        if _is_self(node.value):
            cls = self._class()
            if cls is not None:
                return self._class_attr((cls, node.attr.value))
            return None
        value = self.eval(node.value)
        if node.attr.value in INSPECTION_ATTRIBUTES and isinstance(value, Pipeline):
            self.consume(node, "inspection", node.attr.value, value, Purpose.INSPECTION)
        return None

    def _eval_sequence(self, node: Union[cst.Tuple, cst.List]) -> Value:
        items = []
        for element in node.elements:
            items.append(self.eval(element.value) if not isinstance(element, cst.StarredElement) else None)
        return TupleValue(tuple(items))

    def _eval_subscript(self, node: cst.Subscript) -> Value:
        container = self.eval(node.value)
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                self.eval(element.slice.value)
        if isinstance(container, Collection):
            return Pipeline(container.states)
        if isinstance(container, TupleValue) and len(node.slice) == 1:
            index_node = node.slice[0].slice
            if isinstance(index_node, cst.Index):
                index = int_literal(index_node.value)
                if index is not None and -len(container.items) <= index < len(container.items):
                    return container.items[index]
        return None

    def _eval_if_exp(self, node: cst.IfExp) -> Value:
        self.eval(node.test)
        return join(self.eval(node.body), self.eval(node.orelse))

    def _eval_lambda(self, node: cst.Lambda) -> Value:
        # Pipelines built inside a lambda (an interleave's per-file dataset) are still pipelines.
        saved = self.env
        self.env = dict(saved)
        for param in _lambda_parameters(node):
            self.env[param] = None
        self.eval(node.body)
        self.env = saved
        return None

    def _eval_parts(self, node: cst.BaseExpression) -> Value:
        """Operators, comprehensions, displays...: evaluate the expressions inside, for what they
        consume and build; the whole is unknown, except an assignment expression's value."""
        for child in node.children:
            kind = _CHILD_KINDS.find(child)
            if kind is _EXPRESSION:
                self.eval(child)  # type: ignore[arg-type]
            elif kind is _HOLDS_EXPRESSIONS:
                for grandchild in child.children:
                    if _CHILD_KINDS.find(grandchild) is _EXPRESSION:
                        self.eval(grandchild)  # type: ignore[arg-type]
        if isinstance(node, cst.NamedExpr):
            value = self.eval(node.value)
            self.assign(node.target, value)
            return value
        return None

    def _eval_other(self, node: cst.BaseExpression) -> Value:
        return None  # constants, f-string parts, `yield`...: nothing to evaluate

    def eval_call(self, call: cst.Call) -> Value:
        func = call.func
        api = self.model.call_name(call)
        if api is not None:
            return self._api_call(api, call)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = self.eval(func.value)
            args = [self.eval(arg.value) for arg in call.args]
            if isinstance(receiver, Pipeline) and method in DATASET_METHODS:
                return Pipeline(frozenset(state.extended(Op(method, call)) for state in receiver.states))
            if isinstance(receiver, Pipeline) and method in ONE_OFF_METHODS:
                self.consume(call, "one-off", f"{method}()", receiver, Purpose.ONE_OFF)
                return None
            if method in ONE_OFF_ARGUMENT_METHODS and args and isinstance(args[0], Pipeline):
                self.consume(call, "one-off", f"{method}()", args[0], Purpose.ONE_OFF)
                return None
            if isinstance(receiver, Pipeline) and method in ITERATOR_METHODS:
                self.consume(call, "iterator", f"{method}()", receiver, Purpose.TRAINING)
                return None
            if isinstance(receiver, TfdsBuilder) and method == "as_dataset":
                return _split_value(call)
            if isinstance(receiver, Collection) and method == "get":
                return Pipeline(receiver.states)
            if method in MODEL_CONSUMERS:
                self._consume_model_call(call, method, args)
                return None
            if method in DISTRIBUTE_METHODS and args:
                self.consume(call, "distribute", method, args[0], Purpose.TRAINING)
                return None
            if _is_self(func.value):
                cls = self._class()
                if cls is not None and method in cls.methods:
                    return self.apply(cls.methods[method], call, skip_first=True)
                return None
            return self._apply_elsewhere(call) if self.model.session is not None else None
        callee = self.eval(func) if not isinstance(func, cst.Name) else self.env.get(func.value)
        if isinstance(func, cst.Name) and func.value == "iter" and call.args:
            value = self.eval(call.args[0].value)
            peek = call in self.analysis._peeked
            self.consume(call, "iter", "iter()", value, Purpose.INSPECTION if peek else Purpose.TRAINING)
            return None
        if isinstance(func, cst.Name) and func.value in ONE_OFF_FUNCTIONS and call.args:
            self.consume(call, "one-off", f"{func.value}()", self.eval(call.args[0].value), Purpose.ONE_OFF)
            return None
        if isinstance(callee, FunctionRef):
            return self.apply(callee.function, call)
        if callee is None and isinstance(func, cst.Name) and func.value in self.model.raw_imports:
            return self._apply_elsewhere(call)
        if isinstance(callee, ClassRef) and callee.cls in self.analysis._dataset_classes:
            for arg in call.args:
                self.eval(arg.value)
            return Pipeline(frozenset({State(Source(call))}))
        for arg in call.args:
            self.eval(arg.value)
        return None

    def _api_call(self, api: str, call: cst.Call) -> Value:
        args = [self.eval(arg.value) for arg in call.args]
        if api in SOURCES:
            prefetched = api in PREFETCHED_SOURCES or (api == "tf.data.Dataset.zip" and self._all_prefetched(args))
            if api.startswith("keras.utils.") and string_keyword(call, "subset") == "both":
                return TupleValue(tuple(
                    Pipeline(frozenset({State(Source(call, index=i, prefetched=prefetched))})) for i in range(2)
                ))
            return Pipeline(frozenset({State(Source(call, prefetched=prefetched))}))
        if api in ONE_OFF_FUNCTIONS and args:
            self.consume(call, "one-off", f"{api.rsplit('.', 1)[-1]}()", args[0], Purpose.ONE_OFF)
            return None
        if api == "tfds.load":
            value = _split_value(call)
            if bool_literal(keyword_value(call, "with_info")):
                return TupleValue((value, None))
            return value
        if api == "tfds.builder":
            return TfdsBuilder(call)
        if api in ITERATOR_FUNCTIONS and args:
            self.consume(call, "iterator", api.rsplit(".", 1)[-1] + "()", args[0], Purpose.TRAINING)
        return None

    def _all_prefetched(self, args: List[Value]) -> bool:
        """`Dataset.zip((a, b))` / `zip(a, b)`: every zipped pipeline ends in `prefetch`."""
        items: List[Value] = []
        for arg in args:
            items.extend(arg.items if isinstance(arg, TupleValue) else [arg])
        pipelines = [item for item in items if isinstance(item, Pipeline)]
        return bool(pipelines) and len(pipelines) == len(items) and all(
            self.analysis.ends_prefetched(state) for pipeline in pipelines for state in pipeline.states
        )

    def _consume_model_call(self, call: cst.Call, method: str, args: List[Value]) -> None:
        description = f"{dotted_text(call.func) or method}()"
        x_arg = argument(call, "x", 0)
        if x_arg is not None:
            self.consume(call, "model", description, self.eval(x_arg.value), _MODEL_PURPOSES[method], method)
        if method == "fit":
            validation = keyword_argument(call, "validation_data")
            if validation is not None:
                self.consume(call, "model", description, self.eval(validation.value), Purpose.EVALUATION, "validation")

    def _consume_by_loop(self, loop: cst.For, iterated: Value) -> None:
        target = loop.iter
        value = iterated
        # `for i, batch in enumerate(ds)` / `zip(ds_a, ds_b)` / `tqdm(ds)` iterate the pipeline.
        if isinstance(target, cst.Call) and isinstance(target.func, (cst.Name, cst.Attribute)):
            wrapper = (dotted_text(target.func) or "").rsplit(".", 1)[-1]
            if wrapper in ("enumerate", "zip", "tqdm", "trange", "iter") and target.args:
                value = None
                for arg in target.args:
                    if arg.keyword is None:
                        value = join(value, self.eval(arg.value))
        if not isinstance(value, Pipeline):
            return
        if self._is_inspection_loop(loop, value):
            self.consume(loop, "for", "for loop", value, Purpose.INSPECTION)
        else:
            self.consume(loop, "for", "for loop", value, self.analysis.loop_purpose(loop))

    def _is_inspection_loop(self, loop: cst.For, value: Pipeline) -> bool:
        if all(_ends_with_literal_take(state) for state in value.states):
            return True
        body = _block(loop.body)
        if body and isinstance(body[-1], cst.SimpleStatementLine) and isinstance(body[-1].body[-1], cst.Break):
            return True
        calls = self.analysis._loop_calls.get(loop, [])
        for call in calls:
            name = self.model.call_name(call) or dotted_text(call.func) or ""
            leaf = name.rsplit(".", 1)[-1]
            if not (name in _INSPECTION_CALLS or leaf in _INSPECTION_CALLS or name.startswith(("plt.", "matplotlib."))):
                return False
        return True

    def consume(self, node: cst.CSTNode, kind: str, description: str, value: Value, purpose: Purpose,
                role: str = "") -> None:
        if isinstance(value, TupleValue):
            for item in value.items:
                self.consume(node, kind, description, item, purpose, role)
            return
        if not isinstance(value, Pipeline):
            return
        real = frozenset(state for state in value.states if state.is_real)
        symbolic = frozenset(state for state in value.states if not state.is_real)
        if real:
            self.consumptions.append(Consumption(node, kind, description, real, purpose, role))
        if symbolic:
            self.param_consumptions.append(Consumption(node, kind, description, symbolic, purpose, role))

    # -- same-file calls ------------------------------------------------------------------------
    def apply(self, function: FunctionInfo, call: cst.Call, skip_first: bool = False) -> Value:
        summary = self.analysis.summary_for(function)
        self.summaries_read[function] = summary  # the same all round: summaries change between rounds
        bound = self._bind_arguments(function, call, skip_first)
        if summary is None:
            return None
        for consumption in summary.consumptions:
            value = _substitute(Pipeline(consumption.states), function, bound)
            self.consume(consumption.node, consumption.kind, consumption.description, value, consumption.purpose,
                         consumption.role)
        result = _substitute(summary.returns, function, bound)
        self._note_states(result)
        return result

    def _apply_elsewhere(self, call: cst.Call) -> Value:
        """A call of a function of another first-party module (``make_dataset()``, ``data.load(ds)``,
        ``loader.dataset()`` on an object of an imported class), applied through its own summary."""
        if self.model.session is None:
            for arg in call.args:
                self.eval(arg.value)
            return None
        target = self.model.effects.resolve_callable(call.func, self.function)
        if not isinstance(target, FunctionInfo) or target.model is self.model:
            for arg in call.args:
                self.eval(arg.value)
            return None
        return self.apply(target, call, skip_first=target.class_info is not None and target.parent is None)

    def _bind_arguments(self, function: FunctionInfo, call: cst.Call, skip_first: bool) -> Dict[int, Value]:
        params = _parameters(function)
        offset = 1 if skip_first and not _is_static(function) else 0
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

    def _class(self) -> Optional[ClassInfo]:
        current = self.function
        while current is not None:
            if current.class_info is not None:
                return current.class_info
            current = current.parent
        return None


# What `_Run._eval` does with each kind of expression: the first entry the node is an instance of.
_EXPRESSION_EVALUATORS: "_FirstInstanceOf[Callable[[_Run, Any], Value]]" = _FirstInstanceOf(
    [
        ((cst.Name,), _Run._eval_name),
        ((cst.Call,), _Run.eval_call),
        ((cst.Attribute,), _Run._eval_attribute),
        ((cst.Tuple, cst.List), _Run._eval_sequence),
        ((cst.Subscript,), _Run._eval_subscript),
        ((cst.IfExp,), _Run._eval_if_exp),
        ((cst.Lambda,), _Run._eval_lambda),
        (
            (cst.BaseComp, cst.BooleanOperation, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.Dict,
             cst.Set, cst.Await, cst.FormattedString, cst.StarredElement, cst.NamedExpr),
            _Run._eval_parts,
        ),
    ],
    _Run._eval_other,
)
# The children `_Run._eval_parts` looks at: expressions, and the parts that hold expressions.
_EXPRESSION = "expression"
_HOLDS_EXPRESSIONS = "holds expressions"
_CHILD_KINDS: "_FirstInstanceOf[Optional[str]]" = _FirstInstanceOf(
    [
        ((cst.BaseExpression,), _EXPRESSION),
        ((cst.DictElement, cst.Element, cst.CompFor, cst.ComparisonTarget, cst.FormattedStringExpression),
         _HOLDS_EXPRESSIONS),
    ],
    None,
)


def _substitute(value: Value, function: FunctionInfo, bound: Dict[int, Value]) -> Value:
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
        return TupleValue(tuple(_substitute(item, function, bound) for item in value.items))
    if isinstance(value, Collection):
        substituted = _substitute(Pipeline(value.states), function, bound)
        return Collection(substituted.states) if isinstance(substituted, Pipeline) else None
    return value


_HEAVY_NODES = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation,
                cst.Lambda, cst.ListComp, cst.DictComp, cst.GeneratorExp, cst.SetComp, cst.Await)


def is_trivial_function(expr: cst.BaseExpression, model: Optional[ModuleModel] = None,
                        scope: Optional[FunctionInfo] = None) -> bool:
    """A map function that only picks, slices and regroups its arguments (`lambda x, y: x`,
    `lambda w: (w[:-1], w[1:])`, or a same-file `def split_input_target(chunk)` that returns
    `chunk[:-1], chunk[1:]`): no call, no arithmetic, so running it on several elements at once gains
    nothing measurable."""
    if isinstance(expr, cst.Lambda):
        return _only_regroups(expr.body)
    if isinstance(expr, cst.Name) and model is not None:
        function = model.lookup_function(expr.value, scope)
        if function is None or function.node.decorators:
            return False
        body = function.node.body
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
                small = statement.body[0]
                if isinstance(small, cst.Assign) and _only_regroups(small.value):
                    continue
                if isinstance(small, cst.Return) and small.value is not None and _only_regroups(small.value):
                    continue
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
                    continue  # a docstring
            return False
        return bool(statements)
    return False


def _only_regroups(node: cst.CSTNode) -> bool:
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, _HEAVY_NODES):
            if isinstance(current, cst.UnaryOperation) and isinstance(current.operator, cst.Minus) and isinstance(
                current.expression, (cst.Integer, cst.Float)
            ):
                continue  # `w[-1]`: a negative index
            return False
        stack.extend(current.children)
    return True


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
    """`with tf.GradientTape() as tape:` inside a loop body: its context managers' names."""
    names: List[str] = []
    stack = [loop]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.With):
            for item in node.items:
                if isinstance(item.item, cst.Call):
                    names.append(dotted_text(item.item.func) or "")
        stack.extend(node.children)
    return names


def _split_value(call: cst.Call) -> Value:
    """What ``tfds.load`` / ``builder.as_dataset`` return, decided by ``split=`` and ``batch_size=``."""
    batch_size = keyword_value(call, "batch_size")
    if isinstance(batch_size, cst.UnaryOperation):
        return None  # batch_size=-1 returns whole tensors, not a Dataset
    split = keyword_value(call, "split")
    if split is None:
        return Collection(frozenset({State(Source(call))}))
    if isinstance(split, (cst.List, cst.Tuple)):
        return TupleValue(
            tuple(Pipeline(frozenset({State(Source(call, index=i))})) for i in range(len(split.elements)))
        )
    return Pipeline(frozenset({State(Source(call))}))


def _ends_with_literal_take(state: State) -> bool:
    if not state.ops or state.ops[-1].name != "take":
        return False
    count = argument(state.ops[-1].call, "count", 0)
    return count is not None and int_literal(count.value) is not None


def _element_of(value: Value) -> Value:
    """The loop variable's value when iterating ``value`` (``for ds in (train_ds, val_ds)``)."""
    if isinstance(value, TupleValue):
        element: Value = None
        for item in value.items:
            element = join(element, item)
        return element
    return None


def _parameters(function: FunctionInfo) -> List[cst.Param]:
    params = function.node.params
    return list(params.posonly_params) + list(params.params) + list(params.kwonly_params)


def _lambda_parameters(node: cst.Lambda) -> List[str]:
    params = node.params
    names = [p.name.value for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params)]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.append(star.name.value)
    return names


def _is_static(function: FunctionInfo) -> bool:
    return any(dotted_text(d.decorator) == "staticmethod" for d in function.node.decorators)


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _block(body: cst.CSTNode) -> Sequence[cst.CSTNode]:
    if isinstance(body, cst.IndentedBlock):
        return body.body
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=body.body)]
    if isinstance(body, (cst.Else, cst.If)):
        return [body]
    if hasattr(body, "body"):
        return _block(body.body)  # type: ignore[attr-defined]
    return []
