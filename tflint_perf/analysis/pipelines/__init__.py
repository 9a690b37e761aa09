"""The tf.data pipeline model (``model.pipelines``): which values are Datasets, which ops they carry,
where they are consumed and what for.

``PipelineAnalysis`` is the one object rules and other analyses ask; its parts live in this package:

- ``values``: the interpreter's values (a Dataset is a set of states: a source plus its ops) and how
  two branches join;
- ``interpreter``: one function body (or the module body) interpreted, statement by statement;
  ``sources``: where pipelines start; ``summaries``: a helper's summary applied at a call;
  ``syntax``: what the interpreter reads off LibCST nodes;
- ``fixpoint``: the rounds that recompute every function's summary until none changes, replaying
  interpretations whose inputs did not change;
- ``consumption``: where pipelines are consumed and what for (``loop_purpose``, ``built_for``,
  ``iterated_once``);
- ``across_modules``: importers' consumptions of pipelines built here, other modules' summaries;
- ``reads``: how often an iterator over a pipeline is read (``iter(ds)`` read by a demonstration's
  ten steps, a TF1 iterator behind session runs of a few iterations);
- ``intent``: what a pipeline is for where its consumer says too little (evaluation every epoch, a
  pipeline returned to a consumer out of sight: ``every_epoch``, ``purpose_unseen``, ``serves``; what trains
  whatever the names say: ``named_for``, ``trains_whatever_the_path``);
- ``predicates``: what rules ask about one state or map function (``ends_prefetched``, ``does_work``,
  ``synthetic``, ``replays_one_element``, ``runs_per_batch``, ``cheap_per_batch``, ``cached_after``,
  ``first_on_zip``, ``cheap_batch_map``); ``map_functions``: what a map function costs (``is_trivial_function``,
  ``only_moves_values``).
"""

from __future__ import annotations

from functools import cached_property
from typing import Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from tflint_perf.analysis.loops import calls_under
from tflint_perf.analysis.model import ClassInfo, FunctionInfo, ModuleModel
from tflint_perf.analysis.pipelines.across_modules import AcrossModules
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.pipelines.consumption import ConsumptionQueries, numpy_view_of
from tflint_perf.analysis.pipelines.fixpoint import Fixpoint
from tflint_perf.analysis.pipelines.intent import PipelineIntent
from tflint_perf.analysis.pipelines.predicates import StatePredicates
from tflint_perf.analysis.pipelines.reads import IteratorReads
from tflint_perf.analysis.pipelines.sources import SOURCES, is_tfds_as_dataset
from tflint_perf.analysis.pipelines.values import Consumption, Env, Op, State, Summary, Value
from tflint_perf.analysis.purpose import Purpose


class PipelineAnalysis(AcrossModules, Fixpoint, ConsumptionQueries, PipelineIntent, StatePredicates):
    """Pipelines, their ops and their consumers for one module."""

    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._own_consumptions: List[Consumption] = []
        self._own_states: Dict[State, None] = {}
        self._from_importers: Optional[Tuple[List[Consumption], Dict[State, None]]] = None
        self._consumed_in: Dict[cst.CSTNode, Tuple["PipelineAnalysis", Consumption]] = {}
        self._summaries: Dict[FunctionInfo, Summary] = {}
        self._class_attrs: Dict[Tuple[ClassInfo, str], Value] = {}
        # Each real pipeline state a `Dataset.zip` reads, with the zip calls that read it.
        self.zipped_into: Dict[State, Set[cst.Call]] = {}
        # The `Dataset.zip` calls every zipped part of which is a real pipeline (see `_note_zipped`).
        self.zips_seen_whole: Set[cst.Call] = set()
        self._closures: Dict[FunctionInfo, Env] = {}
        self._dataset_classes = {
            cls for cls in model.classes.values()
            if any(model.resolve(base.value) == "tf.data.Dataset" for base in cls.node.bases)
        }
        self._loop_calls: Dict[cst.CSTNode, List[cst.Call]] = {}
        self._loop_purposes: Dict[cst.CSTNode, Purpose] = {}
        self._peeked: set = set()  # calls that are the argument of `next(...)`
        # Input functions an Estimator trains on that return an iterator's tensors, not a pipeline.
        self.estimator_input_fns: Set[FunctionInfo] = set()
        self._looked_at: Dict[Tuple[cst.CSTNode, str], bool] = {}  # (scope, name): only printed or inspected
        for site in model.calls:
            for loop in site.loops:
                self._loop_calls.setdefault(loop, []).append(site.node)
            node = site.node
            if isinstance(node.func, cst.Name) and node.func.value == "next" and node.args:
                self._peeked.add(node.args[0].value)
        self._peeked.update(_printed_iterators(model))
        # Read by the consumption walk: a NumPy view a loop iterates goes to the loop body element by element,
        # one a Keras model is handed goes to its steps batch by batch.
        self.numpy_loop_reads = _numpy_loop_reads(model, self._loop_calls) | _numpy_model_reads(model)
        if self._mentions_datasets():
            if model.session is None:
                self._run()
            else:
                with model.session.building(model, "pipelines"):
                    self._run()

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

    @cached_property
    def iterator_reads(self) -> IteratorReads:
        """How often iterators over this module's pipelines are read (a demonstration's few steps)."""
        return IteratorReads(self.model)

    def scope_of(self, call: cst.Call) -> Optional[FunctionInfo]:
        """The function a call sits in (None at module level)."""
        site = self.model.site_of(call)
        return site.function if site is not None else None

    def _mentions_datasets(self) -> bool:
        """Whether interpreting is worth it: a module that calls no source, defines no Dataset subclass
        and calls no other module's pipeline helper has no pipeline."""
        for site in self.model.calls:
            name = self.model.call_name(site.node)
            if name is not None and (name in SOURCES or name.startswith("tfds.")):
                return True
            if isinstance(site.node.func, cst.Attribute) and site.node.func.attr.value == "as_dataset" \
                    and is_tfds_as_dataset(site.node):
                return True  # a tfds builder passed in: `builder.as_dataset(split=..., as_supervised=True)`
        return bool(self._dataset_classes) or self._calls_imported_pipeline_functions()


_LOOP_WRAPPERS = frozenset({"enumerate", "zip", "tqdm", "trange"})


def _numpy_loop_reads(model: ModuleModel, loop_calls: Dict[cst.CSTNode, List[cst.Call]]) -> Set[cst.Call]:
    """The NumPy views of a pipeline that a ``for`` loop iterates, directly or through ``enumerate`` /
    ``zip`` (``for step, batch in zip(range(500), data_train.as_numpy_iterator()):``): each element goes
    to the loop's body as it is made, so the body (a JAX or PyTorch step, a collecting pass) says what
    the pipeline is for, as for ``for batch in ds``; not the one-off read a view taken whole is."""
    found: Set[cst.Call] = set()
    for loop in loop_calls:
        if not isinstance(loop, cst.For):
            continue
        candidates = [loop.iter]
        if isinstance(loop.iter, cst.Call) and (dotted_text(loop.iter.func) or "").rsplit(".", 1)[-1] in _LOOP_WRAPPERS:
            candidates.extend(arg.value for arg in loop.iter.args if arg.keyword is None)
        for node in candidates:
            if isinstance(node, cst.Call) and numpy_view_of(model, node) is not None:
                found.add(node)
    return found


_MODEL_CONSUMERS = frozenset({"fit", "evaluate", "predict"})


def _numpy_model_reads(model: ModuleModel) -> Set[cst.Call]:
    """The NumPy views of a pipeline a Keras model reads: ``model.fit(x=ds.repeat().as_numpy_iterator(),
    steps_per_epoch=10, epochs=150)`` (trekhleb's text generation) trains on ``ds`` batch by batch, as
    ``model.fit(ds)`` would; not the one-off read a view taken whole is."""
    found: Set[cst.Call] = set()
    for site in model.calls:
        func = site.node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _MODEL_CONSUMERS):
            continue
        for arg in site.node.args:
            if (arg.keyword is None or arg.keyword.value in ("x", "validation_data")) and isinstance(arg.value, cst.Call) \
                    and numpy_view_of(model, arg.value) is not None:
                found.add(arg.value)
    return found


def _printed_iterators(model: ModuleModel) -> List[cst.Call]:
    """``it = iter(ds)`` calls whose iterator is read only by ``next(it)`` calls printed on the spot
    (``print([next(it).numpy() for _ in range(5)])``): a look at a few elements, like ``next(iter(ds))``."""
    nexts: Dict[Tuple[Optional[FunctionInfo], str], List[cst.Call]] = {}
    printed: set = set()
    for site in model.calls:
        node = site.node
        if not isinstance(node.func, cst.Name):
            continue
        if node.func.value == "next" and node.args and isinstance(node.args[0].value, cst.Name):
            nexts.setdefault((site.function, node.args[0].value.value), []).append(node)
        elif node.func.value == "print":
            for arg in node.args:
                printed.update(calls_under(arg))
    found: List[cst.Call] = []
    for site in model.calls:
        node, statement = site.node, site.statement
        if not (isinstance(node.func, cst.Name) and node.func.value == "iter" and statement is not None):
            continue
        small = statement.body[0] if len(statement.body) == 1 else None
        if not (isinstance(small, cst.Assign) and small.value is node and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)):
            continue
        uses = nexts.get((site.function, small.targets[0].target.value), [])
        if uses and all(use in printed for use in uses):
            found.append(node)
    return found


