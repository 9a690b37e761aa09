"""What a pipeline is for where its consumer says too little: evaluation the model waits on every
epoch, and pipelines whose consumer is out of sight.

- *Evaluation every epoch* (``every_epoch``). ``fit(..., validation_data=val_ds, epochs=10)`` and a
  ``for x, y in test_ds:`` loop inside a training loop run the evaluation pipeline once per epoch; the
  accelerator waits for it as it does for the training data, so a rule about any pipeline a model waits
  on (a missing prefetch, a sequential map) counts it with training. Evaluation run once (``evaluate``,
  ``fit`` for one epoch) does not, nor evaluation an ``if (epoch + 1) % 5 == 0:`` runs every Nth epoch
  (``StepLoops.every_nth``, N known and at least 2); the same guard on a loop of steps (``if step % 500
  == 0:``) still evaluates about once an epoch or more, and counts. Nor validation read rarely
  (``validates_rarely``: a few batches, at most 1,000 elements where a map before a written batch size
  works per element) or by a smoke run (``consumption.smoke_run``: a ``fit`` of at most five steps in all); ``reads_one_batch`` says when a
  pass reads a single batch, which a prefetch cannot overlap with anything.
- *Built here, consumed elsewhere* (``purpose_unseen``). An ``input_fn``, ``make_train_dataset(files)``
  or an input reader's method returns its pipeline to Estimator, a trainer, a notebook or another
  package. What it is for is read off the pipeline itself: evaluation or inspection names around it
  (``eval_input_fn``, ``val_ds``, ``make_test_dataset``) or a ``take(n)`` preview say it is not training;
  a reshuffle, a ``repeat()`` or a random ``map`` say it is; anything else says nothing.

``serves`` puts both together for a rule that reports an op of a pipeline.
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, List, Optional, Sequence

import libcst as cst

from tflint_perf.analysis.arguments import argument, int_literal, keyword_argument, keyword_value
from tflint_perf.analysis.loops import FEW_CALLS, counts_epochs
from tflint_perf.analysis.dead_code import never_called
from tflint_perf.analysis.model import ModuleModel
from tflint_perf.analysis.names import assigned_name, dotted_text, name_uses
from tflint_perf.analysis.pipelines.consumption import ends_with_literal_take, smoke_run
from tflint_perf.analysis.pipelines.sources import DATASET_METHODS
from tflint_perf.analysis.pipelines.values import Consumption, Op, State
from tflint_perf.analysis.purpose import Purpose

# What a loop over a pipeline nested in a training loop may be for and still run every epoch: an
# evaluation loop (`test_step`, metric updates), or one whose body does not say.
_NESTED_EVALUATION = frozenset({Purpose.EVALUATION, Purpose.UNKNOWN})
# Validation run at most this many times in a whole `fit` (`validation_freq=2` over 6 epochs) waits on
# its pipeline too seldom for a finding about that pipeline's speed to be worth a user's time.
_FEW_VALIDATION_RUNS = 3
# Elements a `fit` may read from its validation pipeline per epoch and still validate rarely: ten batches
# of a hundred. Two batches of 100 (dragen1860's FashionMNIST) are; ten of 1,000 images decoded and
# resized (adventuresinML's TF 2.0 notebooks) are as much input work as a good part of a training epoch.
_FEW_VALIDATION_ELEMENTS = 1_000
# How many callers up an `if epoch % N == 0:` around a call of the evaluating function is looked for.
_CALLER_DEPTH = 3


def validates_rarely(fit: cst.Call, known: Callable[[cst.BaseExpression], Optional[int]],
                     batch_size: Optional[int] = None) -> bool:
    """``fit`` reads its validation pipeline too little for its speed to matter: ``validation_steps=2``
    (two batches per epoch; with the pipeline's ``batch_size`` written out after a map, at most
    ``_FEW_VALIDATION_ELEMENTS`` elements: ten batches of 1,000 decoded images are real work every epoch), or ``validation_freq=2``
    over ``epochs=6`` (three times in the whole run). Only counts the source shows (``known``: a literal, a
    module constant) say so; without ``validation_freq`` (or with 1) the pipeline runs every epoch and stays a hot path."""
    steps = keyword_value(fit, "validation_steps")
    steps_count = known(steps) if steps is not None else None
    if steps_count is not None and 0 < steps_count <= FEW_CALLS and (
            batch_size is None or steps_count * batch_size <= _FEW_VALIDATION_ELEMENTS):
        return True
    frequency = keyword_value(fit, "validation_freq")
    epochs_arg = argument(fit, "epochs", 3)
    epochs = known(epochs_arg.value) if epochs_arg is not None else 1  # Keras' default
    if frequency is None or epochs is None:
        return False
    if isinstance(frequency, (cst.List, cst.Tuple)):  # `validation_freq=[1, 5, 10]`: those epochs
        chosen = [known(element.value) for element in frequency.elements]
        if any(epoch is None for epoch in chosen):
            return False
        runs = sum(1 for epoch in chosen if epoch <= epochs)  # type: ignore[operator]
    else:
        every = known(frequency)
        if every is None or every <= 1:
            return False  # every epoch, as without `validation_freq`: a hot path however few the epochs
        runs = epochs // every
    return runs <= _FEW_VALIDATION_RUNS


class PipelineIntent:
    """``PipelineAnalysis``'s questions about what a pipeline is for (a part of it)."""

    model: ModuleModel
    _loop_calls: Dict[cst.CSTNode, List[cst.Call]]

    # ConsumptionQueries' and StatePredicates' (parts of PipelineAnalysis too)
    consumptions: List[Consumption]
    consumptions_of: Callable[[cst.Call], List[Consumption]]
    iterated_once: Callable[[Consumption], bool]
    loop_purpose: Callable[[cst.CSTNode], Purpose]
    built_for: Callable[[cst.Call], Purpose]
    consumed_in: Callable[[Consumption], Optional[tuple]]  # AcrossModules'
    randomises: Callable[[Op], bool]

    def every_epoch(self, consumption: Consumption) -> bool:
        """Evaluation that runs once per training epoch: ``fit``'s ``validation_data`` over several
        epochs, or an ``evaluate`` or an evaluation loop (or one whose body does not say) inside a loop
        that trains."""
        if consumption.kind == "model" and consumption.role == "validation":
            fit: cst.Call = consumption.node  # type: ignore[assignment]
            if consumption.elsewhere:  # another module's fit: its loops and constants are not ours to see
                epochs = argument(fit, "epochs", 3)
                return epochs is not None and int_literal(epochs.value) != 1 and not validates_rarely(fit, int_literal)
            known = self.model.step_loops.fixed_integer  # type: ignore[attr-defined]
            return not self.iterated_once(consumption) and not validates_rarely(fit, known, _batch_size(consumption, known)) \
                and not smoke_run(self.model, fit)
        there = self.consumed_in(consumption)
        if there is not None:
            # `for features in valid_dataset:` in train.py's epoch loop, over `generate_datasets()` of
            # prepare_data.py: the importer sees the loops around its own consumers.
            return there[0].every_epoch(there[1])  # type: ignore[attr-defined]
        if consumption.kind == "iterator" and consumption.purpose is Purpose.EVALUATION:
            # TF1's reinitializable iterator switched to the validation pipeline by `sess.run(val_init_op)`
            # inside the epoch loop: each such run starts a pass the session then reads, step by step.
            return any(self._in_training_loop(run) and self._pass_follows(run)
                       for run in self._initializer_runs(consumption.node))
        nested = (consumption.kind == "model" and consumption.role == "evaluate") or (
            consumption.kind == "for" and consumption.purpose in _NESTED_EVALUATION)
        return nested and self._in_training_loop(consumption.node)

    def _in_training_loop(self, node: cst.CSTNode) -> bool:
        """``node`` runs once per iteration of a loop that trains: `for epoch in ...: model.fit(train,
        epochs=1); model.evaluate(val_ds)`, or a test loop there; not `for model in models: model.fit(train,
        epochs=5); model.evaluate(test)`, once per trained model. Nor what an `if epoch % 5 == 0:` runs
        every fifth epoch (`StepLoops.every_nth`): periodic work."""
        return any(
            self.loop_purpose(outer) is Purpose.TRAINING and not self._fits_several_epochs(outer)
            and not self._runs_periodically(outer, node)
            for outer in self._loops_around(node)
        )

    def _initializer_runs(self, node: cst.CSTNode) -> List[cst.Call]:
        """The session runs of the initializer ``val_init_op = iterator.make_initializer(val_ds)`` makes at
        ``node``: calls ``x.run(val_init_op)`` in the same scope."""
        site = self.model.site_of(node) if isinstance(node, cst.Call) else None
        name = assigned_name(site.statement) if site is not None and site.statement is not None else None
        if site is None or name is None or "." in name:
            return []
        runs = []
        for other in self.model.calls:
            func, args = other.node.func, other.node.args
            if isinstance(func, cst.Attribute) and func.attr.value == "run" and args and args[0].keyword is None \
                    and isinstance(args[0].value, cst.Name) and args[0].value.value == name \
                    and (other.function is site.function or site.function is None):
                runs.append(other.node)
        return runs

    def _pass_follows(self, run: cst.Call) -> bool:
        """After ``sess.run(val_init_op)`` a loop of the same block runs the session (`for j in
        trange(val_img_cnt): sess.run(...)`, `while True:` until the pass ends): the pipeline is read step
        by step. One ``print(sess.run(loss))`` after it reads a single batch, which the step waits for
        however the pipeline ends (as ``reads_one_batch`` for ``fit``'s validation)."""
        site = self.model.site_of(run)
        if site is None:
            return False
        blocks, loops = site.place.blocks, site.loops
        return any(
            other.function is site.function and other.place.order > site.place.order
            and other.place.blocks[: len(blocks)] == blocks
            and len(other.loops) > len(loops) and other.loops[: len(loops)] == loops
            and isinstance(other.node.func, cst.Attribute) and other.node.func.attr.value == "run"
            for other in self.model.calls
        )

    def reads_one_batch(self, consumption: Consumption) -> bool:
        """Each pass of ``fit``'s validation reads a single batch: ``validation_steps=1``, or every
        pipeline ends with ``take(1)`` of batches (``dataset_batched.skip(1).take(1)``), counts the source
        shows. The step waits for that batch however the pipeline ends: a prefetch has nothing to overlap."""
        if not (consumption.kind == "model" and consumption.role == "validation") or consumption.elsewhere:
            return False
        known = self.model.step_loops.fixed_integer  # type: ignore[attr-defined]
        steps = keyword_value(consumption.node, "validation_steps")  # type: ignore[arg-type]
        if steps is not None and known(steps) == 1:
            return True
        return bool(consumption.states) and all(_ends_with_one_batch(state, known) for state in consumption.states)

    def _runs_periodically(self, loop: cst.CSTNode, node: cst.CSTNode) -> bool:
        """``loop`` counts epochs and the consumer ``node`` (a loop, or a call such as `evaluate`) runs only
        every Nth of them: under an ``if`` on the loop's counter there, or in a function every call of
        which from ``loop`` is under one (`if (epoch + 1) % 5 == 0: test(model, test_ds)`).

        The same guard on a loop whose iterations are steps (`for step, (x, y) in enumerate(db)`, `if step
        % 500 == 0:`) still runs the evaluation about every epoch, or more often: not periodic here."""
        if not self._counts_epochs(loop):
            return False
        position = self._position(node)
        if position is None:
            return False
        statement, function, loops = position
        return self._gated(loop, statement, function, loops, 0)

    def _counts_epochs(self, loop: cst.CSTNode) -> bool:
        """Each iteration of ``loop`` is an epoch: its bound or counter says so (``for epoch in range(n)``,
        ``loops.counts_epochs``), or its body holds a loop over a pipeline that trains (a whole pass)."""
        if counts_epochs(loop):  # type: ignore[arg-type]
            return True
        return any(c.kind == "for" and c.purpose is Purpose.TRAINING and c.node is not loop
                   and loop in (self._position(c.node) or (None, None, ()))[2] for c in self.consumptions)

    def _gated(self, loop: cst.CSTNode, statement: Optional[cst.CSTNode], function, loops, depth: int) -> bool:
        step_loops = self.model.step_loops  # type: ignore[attr-defined]
        if loop in loops:
            return statement is not None and step_loops.every_nth(loop, statement, function) is not None
        if function is None or depth >= _CALLER_DEPTH:
            return False
        call_graph = self.model.call_graph  # type: ignore[attr-defined]
        reaching = [site for site in call_graph.callers(function)
                    if loop in site.loops or loop in call_graph.loops_reaching(site.function)]
        return bool(reaching) and all(
            self._gated(loop, site.statement, site.function, site.loops, depth + 1) for site in reaching)

    def _position(self, node: cst.CSTNode):
        """The statement a consumer is (a ``for`` loop) or is in (a call), its function and the loops
        around it in that function, outermost first; None when the collector did not record it."""
        if isinstance(node, cst.Call):
            site = self.model.site_of(node)
            return None if site is None else (site.statement, site.function, site.loops)
        sites = [site for site in map(self.model.site_of, self._loop_calls.get(node, [])) if site is not None]
        if not sites or node not in sites[0].loops:
            return None
        site = sites[0]
        return node, site.function, site.loops[: site.loops.index(node)]

    def _fits_several_epochs(self, loop: cst.CSTNode) -> bool:
        """The loop trains through ``fit`` calls that each run several epochs (``epochs=8``, ``epochs=epochs``),
        not one (``epochs=1``, the default, or ``initial_epoch=e, epochs=e + 1``): each iteration trains a
        whole run (repeated runs, a model per configuration), and what it evaluates runs once per run."""
        fits = [call for call in self._loop_calls.get(loop, [])
                if (dotted_text(call.func) or "").rsplit(".", 1)[-1] == "fit"]
        return bool(fits) and all(_several_epochs(call) for call in fits)

    def trains_whatever_the_path(self, consumption: Consumption) -> bool:
        """The consumer visibly trains, so a module named for evaluation, inference or visualisation
        (``files.path_purpose``) trains on what it reads: a Keras ``fit`` (``efficient_serving.ipynb``
        fits the model it serves; `serving_function.ipynb` validates every epoch of that fit on the pipeline
        it passes as ``validation_data``), an Estimator's training on what an input function returns
        (``estimator.train(input_fn=...)``, ``TrainSpec(input_fn=...)``: the babyweight trainer under
        ``model_evaluation_pipeline/trainer/``), or a TF1 iterator read by session runs that fetch a train op in a loop
        (word2vec's ``04_word2vec_visualize.py`` trains 100,000 steps before it exports embeddings)."""
        if consumption.fits or (consumption.kind == "model" and consumption.role == "validation"):
            return True
        if consumption.kind == "estimator" and consumption.purpose is Purpose.TRAINING:
            return True
        if consumption.kind == "iterator" and consumption.purpose is Purpose.TRAINING and not consumption.elsewhere:
            site = self.model.site_of(consumption.node) if isinstance(consumption.node, cst.Call) else None
            if site is not None and site.function in self.estimator_input_fns:  # type: ignore[attr-defined]
                return True  # TF1 `input_fn` returning `make_one_shot_iterator().get_next()` to `TrainSpec`
        return (consumption.kind == "iterator" and consumption.purpose is Purpose.TRAINING
                and not consumption.elsewhere and self.iterator_reads.session_trains)  # type: ignore[attr-defined]

    def evaluated_every_epoch(self, call: cst.Call) -> bool:
        """Some pipeline holding op ``call`` is evaluation the model waits on every epoch."""
        return any(self.every_epoch(c) for c in self.consumptions_of(call))

    def purpose_unseen(self, call: cst.Call, states: Sequence[State]) -> Purpose:
        """What pipelines holding op ``call`` are built for, from their names and content alone: for a
        pipeline returned to a caller out of sight (an ``input_fn``, a ``make_train_dataset``)."""
        named = self.built_for(call)
        if named in (Purpose.EVALUATION, Purpose.INSPECTION):
            return named  # `eval_input_fn`, `val_ds = ...`, `dataset_to_numpy_util`
        if states and all(ends_with_literal_take(state) for state in states):
            return Purpose.INSPECTION  # `ds.map(parse).take(3)`: a preview
        if any(op.name == "repeat" or self.randomises(op) for state in states for op in state.ops):
            return Purpose.TRAINING
        return named

    def serves(self, call: cst.Call, states: Sequence[State], purposes: FrozenSet[Purpose],
               filename: Optional[str] = None) -> bool:
        """A finding about op ``call`` is worth a user's time for a rule about ``purposes``: some
        pipeline holding it is consumed for one of them (evaluation every epoch counting with
        training), or no consumer is in sight and its names and content do not say otherwise."""
        if self.discarded(call):
            return False  # `dataset.map(augment)` on a line of its own: nothing ever runs it
        consumptions = self.consumptions_of(call)
        if never_called(self.model, self.scope_of(call)) and (  # type: ignore[attr-defined]
                consumptions or self.purpose_unseen(call, states) is not Purpose.TRAINING):
            # Built in a function nothing around names: dead code. But a training pipeline it returns
            # unconsumed (`make_train_dataset`, a shuffled `input_fn`) is for a caller out of sight: a notebook,
            # a user, a framework.
            return False
        if not consumptions and self.unread(call, filename):
            return False  # `aug_ds = train_ds.map(augment)`, never read again: a demonstration, dead code
        if Purpose.TRAINING in purposes and any(self.every_epoch(c) for c in consumptions):
            return True
        if consumptions:
            if all(c.purpose not in purposes for c in consumptions):
                return False  # evaluation, inspection, a one-off pass, a loop that does not train
            return self.named_for(call, purposes)
        return self.purpose_unseen(call, states) in purposes | {Purpose.UNKNOWN}

    def discarded(self, call: cst.Call) -> bool:
        """The pipeline op ``call`` makes is thrown away where it is made: its statement is the op
        alone, or a chain of Dataset methods on it, its result neither bound, passed nor returned
        (`dataset.map(_training_augmentation_fn)` on a line of its own, the augmentation never
        applied: Dataset methods return a new pipeline and leave their receiver as it was)."""
        site = self.model.site_of(call)
        statement = site.statement if site is not None else None
        return statement is not None and any(
            isinstance(small, cst.Expr) and _on_spine(small.value, call) for small in statement.body)

    def unread(self, call: cst.Call, filename: Optional[str] = None) -> bool:
        """The pipeline op ``call`` makes is bound to a name that nothing reads afterwards nor returns:
        ``aug_ds = train_ds.map(augment)`` in a notebook cell, a loading recipe's ``housing =
        tf.data.TextLineDataset(path).map(parse)``, and no other line of its function (or module) names
        ``aug_ds`` again. A pipeline only runs when something iterates it, so a finding there changes
        nothing. A name a function declares ``global`` is the module's. At module level, a notebook
        (``filename``) is imported by nobody; a Python module's name is unread only where the project
        session shows no importer taking it (``from data import train_ds``); checked alone, it may be."""
        site = self.model.site_of(call)
        statement = site.statement if site is not None else None
        name = assigned_name(statement) if statement is not None else None
        if name is None or not _on_spine(statement.body[0].value, call):  # type: ignore[union-attr]
            return False
        function = site.function  # type: ignore[union-attr]
        if function is not None and function.declares_global:
            return False
        scope = function.node.body if function is not None else self.model.module  # the body: `ds` may be a parameter
        if name_uses(scope, name, reads_only=True) > name_uses(statement, name, reads_only=True):
            return False  # read elsewhere in its scope
        if function is not None or (filename or "").endswith(".ipynb"):
            return True
        session = self.model.session
        return session is not None and not session.importers(self.model, [name])

    def named_for(self, call: cst.Call, purposes: FrozenSet[Purpose]) -> bool:
        """The names around the pipeline holding op ``call`` (``built_for``) allow one of ``purposes``,
        or, for training, a Keras ``fit`` trains on it whatever it is named: tensorflow/similarity's
        linear evaluation fits a classifier head on ``eval_train_ds`` for ten epochs."""
        if self.built_for(call) in purposes | {Purpose.UNKNOWN}:
            return True
        return Purpose.TRAINING in purposes and any(c.fits for c in self.consumptions_of(call))

    def _loops_around(self, node: cst.CSTNode) -> List[cst.CSTNode]:
        """The loops around a consumer (a loop, or a call such as `evaluate`): in its own function, and
        in this module's callers of it."""
        site = self.model.site_of(node) if isinstance(node, cst.Call) else None
        if site is None:
            sites = [site for site in map(self.model.site_of, self._loop_calls.get(node, [])) if site is not None]
            if not sites:
                return []
            site = sites[0]
        outer: List[cst.CSTNode] = list(site.loops[: site.loops.index(node)]) if node in site.loops else list(site.loops)
        outer.extend(self.model.call_graph.loops_reaching(site.function))  # type: ignore[attr-defined]
        return outer


def _on_spine(expression: cst.BaseExpression, call: cst.Call) -> bool:
    """``call`` is ``expression`` or the receiver of a chain of Dataset methods ending there: the
    value ``expression`` makes is the pipeline ``call`` is part of."""
    while isinstance(expression, cst.Call):
        if expression is call:
            return True
        func = expression.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in DATASET_METHODS):
            return False
        expression = func.value
    return False


def _ends_with_one_batch(state: State, known: Callable[[cst.BaseExpression], Optional[int]]) -> bool:
    """The state's last op is ``take(1)`` (a literal or a constant) after a ``batch``: one batch."""
    if not state.ops or state.ops[-1].name != "take":
        return False
    count = argument(state.ops[-1].call, "count", 0)
    return (count is not None and known(count.value) == 1
            and any(op.name in ("batch", "padded_batch") for op in state.ops[:-1]))


_PER_ELEMENT_OPS = frozenset({"map", "flat_map", "interleave", "filter"})


def _batch_size(consumption: Consumption, known: Callable[[cst.BaseExpression], Optional[int]]) -> Optional[int]:
    """The largest batch size the consumed pipelines' last ``batch`` ops write out (a literal, a module
    constant), counted only where a map or another per-element op comes before that batch: each element of
    each batch is work then. A map after the batch runs once per batch (three batches of 5,000 in-memory
    images cast and scaled are three calls), and batching in-memory slices is no work. None otherwise."""
    sizes = []
    for state in consumption.states:
        positions = [index for index, op in enumerate(state.ops) if op.name in ("batch", "padded_batch")]
        if not positions or not any(op.name in _PER_ELEMENT_OPS for op in state.ops[: positions[-1]]):
            continue
        size = argument(state.ops[positions[-1]].call, "batch_size", 0)
        value = known(size.value) if size is not None else None
        if value is not None:
            sizes.append(value)
    return max(sizes) if sizes else None


def _several_epochs(fit: cst.Call) -> bool:
    """``model.fit(...)`` runs more than one epoch per call: ``epochs`` given (Keras' fourth positional)
    and not the literal 1, and no ``initial_epoch`` (which makes ``epochs`` the index to stop at)."""
    if keyword_argument(fit, "initial_epoch") is not None:
        return False
    epochs = argument(fit, "epochs", 3)
    return epochs is not None and int_literal(epochs.value) != 1
