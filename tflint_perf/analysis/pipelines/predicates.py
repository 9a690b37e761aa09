"""What rules ask about one pipeline state or map function: does it end prefetched, does it do any work a
prefetch could overlap, does an op see one element replayed, does a map function only regroup.

Each is decided from the state's source and ops as written; none needs the rest of the analysis.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set

import libcst as cst

from tflint_perf.analysis.arguments import argument, int_literal, keyword_argument
from tflint_perf.analysis.generators import draws_only
from tflint_perf.analysis.model import FunctionInfo, ModuleModel
from tflint_perf.analysis.names import assigned_name, name_uses
from tflint_perf.analysis.data_size import DataSizes
from tflint_perf.analysis.pipelines.map_functions import (
    is_trivial_function, only_moves_values, only_reshapes, runs_no_ops,
)
from tflint_perf.analysis.pipelines.sources import PREFETCHED_SOURCES
from tflint_perf.analysis.pipelines.values import Consumption, Op, State, maximal

# Ops that may follow a prefetch without undoing it.
# Ops after a prefetch that leave the costly stages behind it: they only pass elements on, or (`shuffle`)
# draw them from a buffer (dragen1860's Faster R-CNN: `from_generator(coco).batch(1).prefetch(100)
# .shuffle(100)`, the Python generator already overlapped with training).
PREFETCH_TRANSPARENT = frozenset({"with_options", "repeat", "take", "skip", "rebatch", "shuffle"})
DEVICE_PREFETCH = frozenset({"tf.data.experimental.prefetch_to_device", "tf.data.experimental.copy_to_device"})
# `ds.apply(tf.data.experimental.shuffle_and_repeat(n))`: the TF1 spelling of `shuffle(n).repeat()`.
SHUFFLE_TRANSFORMATIONS = frozenset({"tf.data.experimental.shuffle_and_repeat"})
MAP_OPS = frozenset({"map", "map_with_legacy_function"})
# Sources that slice arrays already in memory, and ops that only regroup or reorder elements: a
# pipeline made of nothing else does no work a prefetch could overlap with the training step. (`Dataset.range` is left out: in real code it stands in for a source
# whose work follows in a map.)
IN_MEMORY_SOURCES = frozenset({"tf.data.Dataset.from_tensor_slices", "tf.data.Dataset.from_tensors"})
REGROUPING_OPS = frozenset(
    {"batch", "padded_batch", "shuffle", "repeat", "cache", "take", "skip", "enumerate", "unbatch", "rebatch",
     "with_options", "shard", "prefetch", "concatenate"}
)
# `ds.apply(f)` transformations (tf.contrib.data, tf.data.experimental) that only regroup elements.
_REGROUPING_TRANSFORMATIONS = frozenset(
    {"batch_and_drop_remainder", "padded_batch_and_drop_remainder", "shuffle_and_repeat", "unbatch"}
)
# Ops between a map and a `cache()` through which the cache fills on the first pass and serves every
# later one, so that the map runs once per element (not `repeat`, which never ends the first pass).
_CACHE_TRANSPARENT = frozenset({"filter", "map", "map_with_legacy_function", "prefetch", "with_options", "enumerate",
                                "shuffle", "batch", "padded_batch", "ragged_batch", "unbatch"})
BATCHING_OPS = frozenset({"batch", "padded_batch", "ragged_batch"})
_UNBATCHING_OPS = frozenset({"unbatch", "rebatch", "flat_map", "interleave", "window"})
# Keras loaders that batch their elements themselves unless `batch_size=None` (they end prefetched too).
_BATCHED_SOURCES = PREFETCHED_SOURCES
_ZIP_DEPTH = 2  # zips of zips followed to a cache


class StatePredicates:
    """``PipelineAnalysis``'s questions about one state (a part of it, so that rules ask one object)."""

    model: ModuleModel
    scope_of: Callable[[cst.Call], Optional[FunctionInfo]]  # PipelineAnalysis's
    states: Callable[[], List[State]]  # PipelineAnalysis's
    zipped_into: Dict[State, Set[cst.Call]]  # PipelineAnalysis's
    zips_seen_whole: Set[cst.Call]  # PipelineAnalysis's
    consumptions: List[Consumption]  # ConsumptionQueries'
    consumptions_of: Callable[[cst.Call], List[Consumption]]  # ConsumptionQueries'

    def ends_prefetched(self, state: State) -> bool:
        """The state's last real transformation is a prefetch (or it never left a prefetched source). An
        in-memory `cache()` after the prefetch keeps it in effect: the first pass reads through the
        prefetch buffer, every later one copies the cached elements from memory (tensorflow-without-a-phd's
        TPU tutorial: `prefetch(AUTOTUNE).cache().repeat(n)`); a cache to a file reads the disk again."""
        for op in reversed(state.ops):
            if op.name == "prefetch" or (op.name == "apply" and self._is_device_prefetch(op.call)):
                return True
            if op.name not in PREFETCH_TRANSPARENT and not self._picks(op) and not self._reshapes_batch(op, state) \
                    and not _in_memory_cache(op):
                return False
        return state.source.prefetched

    def _picks(self, op: Op) -> bool:
        """A `map` that only selects parts of the structure it is given (`map(lambda x: x['images'])`
        after a provider's prefetch, `lambda x, y: (x, y[0])`): its function runs no TensorFlow op at all,
        so the elements come straight from the prefetch buffer. A slice (`inks[:, :100]`) or a reshape is
        an op run in step with the consumer: not a pick."""
        if op.name not in MAP_OPS:
            return False
        function = argument(op.call, "map_func", 0)
        if function is None:
            return False
        if isinstance(function.value, cst.Lambda) and _selects(function.value.body):
            return True
        # `def stack_features(features, label)` copying dict entries under new keys: no op either
        return runs_no_ops(function.value, self.model, self.scope_of(op.call))

    def _reshapes_batch(self, op: Op, state: State) -> bool:
        """A `map` over whole batches whose function only reshapes them (big_transfer's `reshape_for_keras`
        after `get_data`'s prefetch): metadata, no value copied, so the prefetch before it is in effect the
        last. A slice of each batch (handson-ml2's `crop_long_sketches`) copies: an op in step with the
        consumer."""
        if op.name not in MAP_OPS or not self.runs_per_batch(state, op.call):
            return False
        function = argument(op.call, "map_func", 0)
        return function is not None and only_reshapes(function.value, self.model, self.scope_of(op.call))

    def does_work(self, state: State, depth: int = 0) -> bool:
        """False when the state only slices in-memory tensors and regroups them (`from_tensor_slices
        ((x, y)).shuffle(n).batch(32)`), or when a generator makes up its elements (`from_generator(random_vectors)`): there is nothing for a prefetch to overlap.
        Over a toy dataset (``DataSizes.is_toy_dataset``: scikit-learn's digits, Iris, a few thousand
        points), maps that only pick or do element-wise arithmetic are no work either: a pass over
        the whole set is a megabyte of cheap ops. A `Dataset.zip` does work when a zipped part does, or
        when a part is one the analysis cannot see (a parameter: `zip((images, labels))` in `train(images)`)."""
        source = state.source
        if source.kind != "call" or not isinstance(source.node, cst.Call):
            return True
        name = self.model.call_name(source.node)
        if name == "tf.data.Dataset.from_generator" and draws_only(self.model, source.node, self.scope_of(source.node)):
            return False  # `from_generator(random_vectors)`: made-up elements, nothing to overlap
        if name == "tf.data.Dataset.zip":
            parts = self._zipped_parts(state)
            if not parts or depth >= _ZIP_DEPTH or any(self.does_work(part, depth + 1) for part in parts):
                return True
            return any(not self._regroups(op) and not self.cheap_per_batch(state, op.call) for op in state.ops)
        if name not in IN_MEMORY_SOURCES and not DataSizes(self.model).is_named_toy_source(source.node):
            return True  # `tfds.load('iris')`, 150 rows, is read into memory in microseconds too
        if self.draws_noise(state):
            return False  # `from_tensors(0).repeat().map(lambda _: tf.random.normal([bs, nd]))`
        return any(not self._regroups(op) and not self.cheap_per_batch(state, op.call)
                   and not self.cheap_on_toy_set(state, op) for op in state.ops)

    def _zipped_parts(self, state: State) -> Optional[List[State]]:
        """The pipelines a `Dataset.zip` source pairs (`zip((images, labels))`): the longest states
        zipped into it; None when one of its parts is not a pipeline the analysis sees (a parameter,
        another module's dataset), which may be any work."""
        zip_call = state.source.node
        if zip_call not in self.zips_seen_whole:
            return None
        return maximal([other for other in self.states() if zip_call in self.zipped_into.get(other, ())])

    def cheap_on_toy_set(self, state: State, op: Op) -> bool:
        """The op is a map that only picks, casts, scales or one-hot encodes (`lambda z: tf.one_hot(z, 10)`)
        over the elements of a toy dataset (``_toy_source``): microseconds for the whole set, nothing to
        overlap or parallelise."""
        return self._cheap_map(op) and self._toy_source(state)

    def cheap_before_cache(self, states: List[State], op: Op) -> bool:
        """The op is a map that only picks, casts, scales, one-hot encodes or resizes, and every pipeline
        holding it is cached after it (``cached_for_every_reader``): it runs once per element in the whole
        run, for microseconds each (`map(lambda x, y: (tf.cast(x, tf.float32) / 255., y)).cache()` over
        MNIST), nothing to parallelise."""
        return self._cheap_map(op, resizing=True) and self.cached_for_every_reader(states, op.call)

    def cached_for_every_reader(self, states: List[State], call: cst.Call) -> bool:
        """Every pipeline holding the op ``call`` that a consumer reads is cached after it
        (``cached_after``); with no consumer in sight, every whole pipeline (not the prefixes met on the
        way, `ds` before its `.cache()`). A prefix read uncached (`fit(ds)`, then `ds.cache()` for an
        evaluation) runs the op on every pass."""
        read = [state for consumption in self.consumptions_of(call) for state in consumption.states
                if any(op.call is call for op in state.ops)]
        whole = read or maximal(states)
        return bool(whole) and all(self.cached_after(state, call) for state in whole)

    def _toy_source(self, state: State) -> bool:
        """The state slices in-memory data the code shows to be a toy dataset (``TOY_DATASET`` numbers
        at most): `from_tensor_slices(digits[0][:1437])` after `digits = load_digits(return_X_y=True)`,
        or loads a catalogue set its name shows to be one (`tfds.load('iris')`)."""
        source = state.source.node
        if isinstance(source, cst.Call) and DataSizes(self.model).is_named_toy_source(source):
            return True  # `tfds.load('iris', split='train')`
        # Not `from_tensors(x).repeat()`: one element replayed for ever, whatever its size.
        slices = isinstance(source, cst.Call) and self.model.call_name(source) == "tf.data.Dataset.from_tensor_slices"
        data = argument(source, "tensors", 0) if slices else None
        if data is None:
            return False
        site = self.model.site_of(source)
        return site is not None and DataSizes(self.model).is_toy_dataset(data.value, site.function, site.place)

    def _cheap_map(self, op: Op, resizing: bool = False) -> bool:
        """A map whose function only picks or reshapes (`lambda z: tf.one_hot(z, 10)`), or casts, scales
        and one-hot encodes (with ``resizing``, resizes too): on a toy dataset's elements, microseconds in all."""
        if op.name not in MAP_OPS:
            return False
        function = argument(op.call, "map_func", 0)
        scope = self.scope_of(op.call)
        return function is not None and (is_trivial_function(function.value, self.model, scope) or only_moves_values(
            function.value, self.model, scope, arithmetic=True, resizing=resizing))

    def draws_noise(self, state: State) -> bool:
        """The state makes up its elements (``synthetic``) and its maps only draw random vectors or
        batches of them (`lambda _: tf.random.normal([bs, noise_dims])`: GAN noise): a few microseconds
        per element and no input to read, nothing for a prefetch to overlap. A draw of rank 3 or more
        (`[bs, 224, 224, 3]`, fake images for a benchmark) is as much work as some decoding: not noise."""
        maps = [op for op in state.ops if op.name in MAP_OPS]
        if not maps or not self.synthetic(state):
            return False
        for op in maps:
            function = argument(op.call, "map_func", 0)
            if function is None or not _draws_small_noise(function.value, self.model, self.scope_of(op.call)):
                return False
        return True

    def cheap_per_batch(self, state: State, call: cst.Call) -> bool:
        """The op ``call`` is a map over the batches of in-memory arrays, the batches the consumer gets,
        whose function only moves values around or does element-wise arithmetic on them
        (`from_tensor_slices((x, y)).shuffle(n).batch(128).map(preprocess)` where `preprocess` casts,
        scales, reshapes and one-hot encodes the batch): microseconds per batch, nothing to parallelise
        and next to nothing to overlap. Decoding, image ops, `py_function` are work; so is a map after a
        `batch` that only chunks a sequence (`batch(seq_len + 1).map(split).shuffle(n).batch(64)`: it
        runs once per training example)."""
        if not self._in_memory(state):
            return False
        return self.cheap_batch_map(state, call)

    def _in_memory(self, state: State, depth: int = 0) -> bool:
        """The state slices arrays in memory, or zips pipelines that all do (`zip((source, target))`)."""
        source = state.source
        if source.kind != "call" or not isinstance(source.node, cst.Call):
            return False
        name = self.model.call_name(source.node)
        if name == "tf.data.Dataset.zip" and depth < _ZIP_DEPTH:
            parts = self._zipped_parts(state)
            return bool(parts) and all(self._in_memory(part, depth + 1) for part in parts)
        return name in IN_MEMORY_SOURCES

    def cheap_batch_map(self, state: State, call: cst.Call) -> bool:
        """The op ``call`` is a map over the batches the consumer gets, from any source, whose function
        only moves values around or does element-wise arithmetic on them (a TFDS read batched, then
        `tf.cast(img, tf.float32) / 255.`; `tf.where(mask, label, -1.)` after `padded_batch`; a batch
        padded to its full size): it runs once per batch for microseconds, nothing worth running on
        several batches at once. A map after a `batch` that only chunks a sequence (`batch(seq_len + 1)
        .map(split).shuffle(n).batch(64)`) runs once per training example: not per batch."""
        if call not in {op.call for op in state.ops if op.name in MAP_OPS}:
            return False
        if any(op.name in BATCHING_OPS | _UNBATCHING_OPS for op in state.ops_after(call)):
            return False
        function = self._map_function(call)
        return function is not None and self.runs_per_batch(state, call) and \
            only_moves_values(function, self.model, self.scope_of(call), arithmetic=True)

    def _map_function(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The function a map runs: its argument, or, for a name whose one binding reaching the map is
        `functools.partial(f, head_name=...)` with settings bound by keyword, ``f`` (what it computes)."""
        function = argument(call, "map_func", 0)
        if function is None or not isinstance(function.value, cst.Name):
            return function.value if function is not None else None
        site = self.model.site_of(call)
        bindings = self.model.reaching(function.value.value, site.function, site.place, site.lambdas) \
            if site is not None else None
        if bindings and len(bindings) == 1 and bindings[0].kind == "assign":
            bound = bindings[0].value
            if isinstance(bound, cst.Call) and self.model.call_name(bound) == "functools.partial" and bound.args \
                    and bound.args[0].keyword is None and all(arg.keyword is not None for arg in bound.args[1:]):
                return bound.args[0].value
        return function.value

    def _regroups(self, op: Op) -> bool:
        """A regrouping op, also spelled `apply(tf.contrib.data.batch_and_drop_remainder(n))` (TF1)."""
        if op.name in REGROUPING_OPS:
            return True
        transformation = argument(op.call, "transformation_func", 0) if op.name == "apply" else None
        if transformation is None or not isinstance(transformation.value, cst.Call):
            return False
        name = self.model.call_name(transformation.value) or ""
        return name.rsplit(".", 1)[-1] in _REGROUPING_TRANSFORMATIONS and name.startswith(("tf.contrib.data.", "tf.data."))

    def cached_after(self, state: State, call: cst.Call) -> bool:
        """A `cache()` follows the op ``call`` with nothing between that keeps the cache from filling in
        the first pass (`map(encode).filter(short).cache()`): from the second epoch on the cache serves
        the results, so the op's function runs once per element in the whole run. A `repeat` before
        the cache leaves the op running on every pass."""
        return self._cached_in(state.ops_after(call), state, 0)

    def _cached_in(self, ops, state: State, depth: int) -> bool:
        for op in ops:
            if op.name == "cache":
                return True
            if op.name not in _CACHE_TRANSPARENT:
                return False
        # The state ends here: read only by a `Dataset.zip` whose pairs are cached
        # (`zip((sources, targets)).filter(short).cache()`), its ops run once per element too.
        zips = self.zipped_into.get(state)
        if not zips or depth >= _ZIP_DEPTH or any(state in c.states for c in self.consumptions):
            return False
        zipped = maximal([other for other in self.states() if any(other.source.node is z for z in zips)])
        return bool(zipped) and all(self._cached_in(other.ops, other, depth + 1) for other in zipped)

    def never_read(self, state: State) -> bool:
        """The pipeline is bound to a module-level name that nothing reads afterwards but its own
        rebuilding (`val_dataset = val_examples.map(encode)`, `val_dataset = val_dataset.filter(...)`,
        then no loop, `fit` or function ever names `val_dataset`), in a module no other imports it
        from: its ops never run."""
        site = self.model.site_of(state.last_call) if isinstance(state.last_call, cst.Call) else None
        statement = site.statement if site is not None else None
        if site is None or site.function is not None or site.lambdas or statement is None:
            return False
        name = assigned_name(statement)
        if name is None or name in ("_", "__"):
            return False
        session = self.model.session
        if session is not None and session.importers(self.model, [name]):
            return False
        rebuilt = 0
        for line in self.model.module.body:
            if isinstance(line, cst.SimpleStatementLine) and assigned_name(line) == name:
                rebuilt += 1 + name_uses(line.body[0].value, name)  # type: ignore[union-attr]
        return rebuilt == name_uses(self.model.module, name)

    def synthetic(self, state: State) -> bool:
        """The state makes up its elements from one replayed element: `from_tensors(0).repeat()
        .map(lambda _: tf.random.normal([n, d]))`, noise for a GAN or fake data, with no input to read."""
        return self._one_element(state.source) and any(op.name == "repeat" for op in state.ops) and all(
            op.name in MAP_OPS | {"repeat", "batch"} for op in state.ops)

    def runs_per_batch(self, state: State, call: cst.Call) -> bool:
        """The op ``call`` sees whole batches: a `batch` comes before it (and no `unbatch` after that),
        or the source is a Keras loader that batches (`timeseries_dataset_from_array(..., batch_size=32)`)."""
        for op in reversed(state.ops_before(call)):
            if op.name in BATCHING_OPS:
                return True
            if op.name in {"unbatch", "flat_map", "interleave", "rebatch"}:
                return False
        source = state.source
        if source.kind != "call" or not isinstance(source.node, cst.Call):
            return False
        if self.model.call_name(source.node) == "tf.data.Dataset.zip":
            # `zip((sources.batch(16), targets.batch(16))).map(concat_halves)`: pairs of batches
            parts = self._zipped_parts(state)
            return bool(parts) and all(self._ends_batched(part) for part in parts)
        if self.model.call_name(source.node) not in _BATCHED_SOURCES:
            return False
        size = keyword_argument(source.node, "batch_size")
        return size is None or not (isinstance(size.value, cst.Name) and size.value.value == "None")

    def _ends_batched(self, state: State) -> bool:
        """A `batch` is the state's last op but for reorderings (`batch(16).repeat()`)."""
        for op in reversed(state.ops):
            if op.name in BATCHING_OPS:
                return True
            if op.name not in PREFETCH_TRANSPARENT | {"prefetch"}:
                return False
        return False

    def first_on_zip(self, state: State, call: cst.Call) -> bool:
        """The op ``call`` is the first on a `Dataset.zip` of pipelines: its function sees the zipped
        elements side by side (`zip(tuple(parts)).map(lambda *windows: tf.stack(windows))` stacks one
        window of each part into a batch)."""
        source = state.source
        return not state.ops_before(call) and source.kind == "call" and isinstance(source.node, cst.Call) \
            and self.model.call_name(source.node) == "tf.data.Dataset.zip"

    def replays_one_element(self, state: State, call: cst.Call) -> bool:
        """The op ``call`` sees one element repeated: `Dataset.range(1).repeat()` or
        `from_tensors(x).repeat()`, the idiom for synthetic input (benchmarks, fake data)."""
        return self._one_element(state.source) and all(op.name == "repeat" for op in state.ops_before(call))

    def _one_element(self, source) -> bool:
        if source.kind != "call" or not isinstance(source.node, cst.Call):
            return False
        name = self.model.call_name(source.node)
        return name == "tf.data.Dataset.from_tensors" or (
            name == "tf.data.Dataset.range" and len(source.node.args) == 1 and int_literal(source.node.args[0].value) == 1
        )

    def never_ends_before(self, state: State, call: cst.Call) -> bool:
        """What reaches the op ``call`` never ends: an endless `repeat()` (no count, `None` or `-1`) or
        `shuffle_and_repeat` with no count sits before it, with no `take(n)` after it that cuts it short.
        A `cache()` there never completes its first pass, so it never replays anything."""
        endless = False
        for op in state.ops_before(call):
            if op.name == "repeat":
                endless = self.repeats_endlessly(op.call, 0)
            elif op.name == "apply" and op.call.args and isinstance(op.call.args[0].value, cst.Call) \
                    and self.model.call_name(op.call.args[0].value) in SHUFFLE_TRANSFORMATIONS:
                endless = self.repeats_endlessly(op.call.args[0].value, 1)
            elif op.name == "take":
                endless = False
        return endless

    def repeats_endlessly(self, call: cst.Call, position: int) -> bool:
        """The `count` of a `repeat(count)` or `shuffle_and_repeat(buffer_size, count)` (at ``position``)
        repeats forever: not passed, `None`, or `-1` ("if count is None or -1", TensorFlow's docs), written
        there or through a constant (`REPEAT_FOREVER = -1`)."""
        count = argument(call, "count", position)
        if count is None or (isinstance(count.value, cst.Name) and count.value.value == "None"):
            return True
        known = self.model.integer_values.signed(count.value, self.model.site_of(call))  # type: ignore[attr-defined]
        return known is not None and known.value == -1

    def reshuffles(self, op: Op) -> bool:
        """The op shuffles anew on every pass: `shuffle(n)` (not `reshuffle_each_iteration=False`, a
        fixed order on purpose) or `apply(shuffle_and_repeat(n))`."""
        if op.name == "shuffle":
            reshuffle = argument(op.call, "reshuffle_each_iteration", 2)
            return not (reshuffle is not None and isinstance(reshuffle.value, cst.Name) and reshuffle.value.value == "False")
        if op.name == "apply" and op.call.args:
            transformation = op.call.args[0].value
            return isinstance(transformation, cst.Call) and self.model.call_name(transformation) in SHUFFLE_TRANSFORMATIONS
        return False

    def randomises(self, op: Op) -> bool:
        """The op makes each pass differ from the last: a reshuffle, or a `map` whose function is random
        (judged from its body through ``model.effects``, never from its name)."""
        if op.name in MAP_OPS:
            function = argument(op.call, "map_func", 0)
            if function is None:
                return False
            scope = self.scope_of(op.call)
            return self.model.effects.of_expression(function.value, scope).random  # type: ignore[attr-defined]
        return self.reshuffles(op)

    def _is_device_prefetch(self, call: cst.Call) -> bool:
        transformation = call.args[0].value if call.args else None
        return isinstance(transformation, cst.Call) and self.model.call_name(transformation) in DEVICE_PREFETCH


def _in_memory_cache(op: Op) -> bool:
    """``cache()`` or ``cache("")``: the elements kept in memory, not in a file."""
    if op.name != "cache":
        return False
    filename = argument(op.call, "filename", 0)
    return filename is None or (isinstance(filename.value, cst.SimpleString) and filename.value.evaluated_value == "")


def _selects(node: cst.BaseExpression) -> bool:
    """Names, items picked by a literal key or index (`x['images']`, `y[0]`), and tuples, lists or dicts
    of them: a structure rearranged without running an op."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Subscript):
        return len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and isinstance(
            node.slice[0].slice.value, (cst.SimpleString, cst.Integer)) and _selects(node.value)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(isinstance(e, cst.Element) and _selects(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and _selects(e.value)
                   for e in node.elements)
    return False


# Random draws whose result is the element (`tf.random_normal` canonicalises to `tf.random.normal`).
_NOISE_DRAWS = frozenset({"tf.random.normal", "tf.random.uniform", "tf.random.truncated_normal"})
_NOISE_RANK = 2  # a batch of vectors at most


def _draws_small_noise(expr: cst.BaseExpression, model: ModuleModel, scope: Optional[FunctionInfo]) -> bool:
    """A map function (a lambda or a same-file def) whose every call is a random draw (``_NOISE_DRAWS``)
    of a shape written as a list or tuple of at most ``_NOISE_RANK`` dimensions, with arithmetic on the
    draws at most (`tf.random.uniform([bs, nd], -1., 1.) * scale`)."""
    function = model.effects.resolve_callable(expr, scope, local_only=True)  # type: ignore[attr-defined]
    if function is None:
        return False
    node = function.node if isinstance(function, FunctionInfo) else function
    if isinstance(node, cst.FunctionDef) and node.decorators:
        return False
    draws = 0
    stack: List[cst.CSTNode] = [node.body]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Lambda, cst.FunctionDef, cst.For, cst.While, cst.If)):
            return False  # nested functions, loops and branches: more than one draw of a known shape
        if isinstance(current, cst.Call):
            if model.call_name(current) not in _NOISE_DRAWS:
                return False
            shape = argument(current, "shape", 0)
            if shape is None or not isinstance(shape.value, (cst.List, cst.Tuple)) \
                    or len(shape.value.elements) > _NOISE_RANK:
                return False
            draws += 1
        stack.extend(current.children)
    return draws > 0
