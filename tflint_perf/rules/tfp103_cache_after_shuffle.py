"""TFP103 cache-after-shuffle: ``cache()`` downstream of ``shuffle()`` or of a random ``map``."""

from __future__ import annotations

from typing import Iterable, Optional, Sequence

import libcst as cst

from tflint_perf.analysis.pipelines.values import Op, State, maximal
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.fixes.chain_edits import move_before
from tflint_perf.text.diagnostics import UNSAFE, Finding, FixPlan
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid, call_method_span

# Ops that may sit between the first random op and the cache without the move changing what is cached.
_MOVABLE_PAST = frozenset({"batch", "padded_batch", "ragged_batch", "unbatch", "prefetch", "with_options"})
_TF = "import tensorflow as tf\n"


class CacheAfterShuffle(Rule):
    code = "TFP103"
    name = "cache-after-shuffle"
    summary = "`cache()` after `shuffle()` or a random `map` replays the first epoch's order or augmentation"
    fix_availability = "sometimes"

    what_it_does = """
Checks for `Dataset.cache()` downstream of a `shuffle()` that reshuffles each epoch (the default),
or downstream of a `map` whose function is random: it calls `tf.random.*` ops, `tf.image.random_*`,
`tf.nn.dropout`, Keras `Random*` preprocessing layers or a `tf.random.Generator`, directly or
through same-file helpers. Randomness is judged from the function's body, never from its name;
`stateless_*` ops with a fixed seed are deterministic and do not count.

This is a correctness bug in the performance family: the pipeline is as fast either way, but it
silently stops doing what it was written to do.

The bug is in the order of the ops, whatever the consumer does, so a pipeline returned to a
caller out of sight (an `input_fn` for Estimator, `make_train_dataset(files)` for a trainer in
another package) is reported too. Not reported: `shuffle(..., reshuffle_each_iteration=False)` (a
fixed order on purpose, as in the "shuffle once, then `take`/`skip` a fixed split" idiom), a
shuffle-only cache followed by another reshuffling `shuffle()` or `shuffle_and_repeat` (in the
same function or a helper the pipeline goes through; one path that reshuffles is enough, as in
the reference ImageNet input functions that shuffle files and reshuffle records under the same
`if is_training:`), a cache under a guard that never runs in this project (`if cache:` on a parameter
whose default is False and that no call in the project passes a true value for, as a trainer's
`generate_ds(..., cache_data=False)` none of whose callers sets it), a cache after an endless `repeat()` (no count, `None` or `-1`, and no `take(n)` after it: its first pass never
ends, so it never replays anything and the shuffle before it reshuffles on every pass), pipelines that are provably iterated once (`fit` with one epoch, `evaluate`,
a single loop over the data, with no `repeat()` after the cache), pipelines consumed only for
evaluation, inference or inspection (their order does not matter), and, with no consumer in sight,
pipelines whose names say evaluation or inspection (`make_eval_dataset`, `val_ds = ...`).
"""
    why_bad = """
`cache()` stores the elements of the first pass and replays them on every later pass. Whatever
was random upstream is frozen: after a `shuffle()` every epoch sees the first epoch's order, and
after a random augmentation `map` every epoch sees the same augmented images. The `Dataset.cache`
documentation says it plainly: "cache will produce exactly the same elements during each
iteration through the dataset. If you wish to randomize the iteration order, make sure to call
shuffle after calling cache." Training then loses the regularisation the shuffle or the
augmentation was there to give, with no error and no slowdown to notice.

Caching before the first random transformation keeps the speed-up (the expensive deterministic
work, such as reading and decoding, is still cached) and restores fresh randomness every epoch.
"""
    example = """
import tensorflow as tf

ds = tf.data.TFRecordDataset(files).map(parse).shuffle(10_000).cache().batch(64)
ds = images.map(random_augment).cache()
"""
    use_instead = """
import tensorflow as tf

ds = tf.data.TFRecordDataset(files).map(parse).cache().shuffle(10_000).batch(64)
ds = images.cache().map(random_augment)
"""
    fix_safety = """
The fix moves `cache(...)` to just before the first random transformation. It is **unsafe** on
purpose: it changes the element order and the augmentation of epochs after the first, which is
what the code meant to do, but it is a change in behaviour (runs stop being reproducible in the
frozen way they were). The same elements are cached, so memory use is unchanged. The fix is
offered only when the edit is unambiguous: the ops are in one method chain, or in straight-line
`ds = ds.op(...)` statements of one block, without comments on the statements that move; and
only batching or prefetching sits between the random op and the cache (moving the cache past a
deterministic `map` would stop caching that map's work). Otherwise the finding has no fix.
"""
    references = (
        "[`tf.data.Dataset.cache`](https://www.tensorflow.org/api_docs/python/tf/data/Dataset#cache)",
        "[tf.data performance guide: Caching](https://www.tensorflow.org/guide/data_performance#caching)",
        "[`tf.data.Dataset.shuffle`](https://www.tensorflow.org/api_docs/python/tf/data/Dataset#shuffle)",
    )

    valid = (
        # TF Text's GLUE tutorial: the cache sits after an endless `repeat()`, so its first pass never ends
        # and nothing is ever replayed; each pass through the shuffle reshuffles.
        Valid(
            _TF + "def load(examples, batch_size, training):\n    ds = tf.data.Dataset.from_tensor_slices(examples)\n"
            "    if training:\n        ds = ds.shuffle(1000)\n        ds = ds.repeat()\n"
            "    ds = ds.batch(batch_size).map(preprocess)\n    return ds.cache().prefetch(tf.data.AUTOTUNE)\n\n"
            "model.fit(load(train, 32, True), epochs=3, steps_per_epoch=100)\n"
        ),
        # `repeat(-1)`, `repeat(count=None)` and `shuffle_and_repeat(n, -1)` repeat forever as `repeat()` does
        # (a count of -1 through a constant too): the cache after them never completes a pass.
        Valid(
            _TF + "ds = tf.data.TFRecordDataset(files).map(parse).shuffle(10000).repeat(-1).batch(64).cache()\n"
            "model.fit(ds, epochs=10, steps_per_epoch=1000)\n"
        ),
        Valid(
            _TF + "ds = tf.data.TFRecordDataset(files).map(parse).shuffle(10000).repeat(count=None).cache()\n"
            "model.fit(ds, epochs=10, steps_per_epoch=1000)\n"
        ),
        Valid(
            _TF + "FOREVER = -1\nds = tf.data.TFRecordDataset(files).map(parse)\n"
            "ds = ds.apply(tf.data.experimental.shuffle_and_repeat(10000, FOREVER)).batch(64).cache()\n"
            "model.fit(ds, epochs=10, steps_per_epoch=1000)\n"
        ),
        # A same-file helper reshuffles after the cache.
        Valid(
            _TF + "def finish(ds):\n    return ds.shuffle(1000).batch(32)\n\n"
            "ds = tf.data.TFRecordDataset(files).shuffle(100).cache()\nmodel.fit(finish(ds), epochs=5)\n"
        ),
        # tensorflow/tpu mask_rcnn dataloader: semi-fake data replays its first batch on purpose.
        Valid(
            _TF + "ds = tf.data.TFRecordDataset(files).shuffle(1024).map(parse).batch(8)\n"
            "if use_fake_data:\n    ds = ds.take(1).cache().repeat()\nmodel.fit(ds, epochs=3)\n"
        ),
        Valid(_TF + "ds = tf.data.Dataset.range(100).cache().shuffle(100).batch(10)\nmodel.fit(ds, epochs=5)\n"),
        # A fixed split: the shuffle happens once on purpose.
        Valid(
            _TF + "ds = tf.data.Dataset.range(100).shuffle(100, reshuffle_each_iteration=False)\n"
            "train = ds.skip(20).cache().batch(10)\nmodel.fit(train, epochs=5)\n"
        ),
        # A deterministic map whose function's name sounds random.
        Valid(
            _TF + "def random_crop_like(x):\n    return tf.image.central_crop(x, 0.8)\n\n"
            "ds = tf.data.Dataset.from_tensor_slices(images).map(random_crop_like).cache()\nmodel.fit(ds, epochs=5)\n"
        ),
        # stateless_* with a fixed seed is the same every epoch.
        Valid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(images)\n"
            "ds = ds.map(lambda x: tf.image.stateless_random_flip_left_right(x, seed=(1, 2))).cache()\n"
            "model.fit(ds, epochs=5)\n"
        ),
        # Iterated once: nothing is replayed.
        Valid(_TF + "ds = tf.data.Dataset.range(100).shuffle(100).cache().batch(10)\nmodel.evaluate(ds)\n"),
        # Reshuffled after the cache.
        Valid(_TF + "ds = tf.data.Dataset.range(100).shuffle(100).cache().shuffle(100)\nmodel.fit(ds, epochs=5)\n"),
        # Not a Dataset.
        Valid(_TF + "import functools\ncache = Cache()\nitems = shuffle(cache).cache()\n"),
        # Built for evaluation and returned: the order of evaluation data does not matter.
        Valid(_TF + "def make_eval_dataset(files):\n    return tf.data.TFRecordDataset(files).shuffle(100).cache().batch(8)\n"),
        # tensorflow/tpu ImageNet input: files shuffled, cached, records reshuffled, under `if is_training:`.
        Valid(
            _TF + "def input_fn(files, is_training):\n    ds = tf.data.Dataset.from_tensor_slices(files)\n"
            "    if is_training:\n        ds = ds.shuffle(1024)\n    ds = ds.interleave(tf.data.TFRecordDataset).cache()\n"
            "    if is_training:\n        ds = ds.apply(tf.data.experimental.shuffle_and_repeat(16384))\n"
            "    return ds.batch(64)\n"
        ),
    )
    invalid = (
        # A finite count: the cache completes its pass of two repeats and replays it every epoch.
        Invalid(
            _TF + "ds = tf.data.TFRecordDataset(files).map(parse).shuffle(10000).repeat(2).batch(64).cache()\n"
            "model.fit(ds, epochs=10)\n",
            fixed=None,
        ),
        # An endless repeat cut short by `take`: the cache completes and replays the first order.
        Invalid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(x).shuffle(1000).repeat().take(5000).batch(32).cache()\n"
            "model.fit(ds, epochs=10)\n"
        ),
        Invalid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(x).map(parse).shuffle(1000).cache().batch(32)\n"
            "model.fit(ds, epochs=10)\n",
            fixed=_TF + "ds = tf.data.Dataset.from_tensor_slices(x).map(parse).cache().shuffle(1000).batch(32)\n"
            "model.fit(ds, epochs=10)\n",
            unsafe=True,
        ),
        Invalid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(x).map(parse).shuffle(1000).cache().batch(32)\n"
            "model.fit(ds, epochs=10)\n",
            fixed=None,
        ),
        Invalid(
            _TF + "def augment(image, label):\n    image = tf.image.random_flip_left_right(image)\n    return image, label\n\n"
            "def make(files):\n    ds = tf.data.TFRecordDataset(files)\n    ds = ds.map(augment)\n    ds = ds.batch(64)\n"
            "    ds = ds.cache()\n    return ds.prefetch(1)\n",
            fixed=_TF + "def augment(image, label):\n    image = tf.image.random_flip_left_right(image)\n    return image, label\n\n"
            "def make(files):\n    ds = tf.data.TFRecordDataset(files)\n    ds = ds.cache()\n    ds = ds.map(augment)\n"
            "    ds = ds.batch(64)\n    return ds.prefetch(1)\n",
            unsafe=True,
        ),
        Invalid(
            _TF + "ds = tf.data.TFRecordDataset(files).shuffle(256)\nds = ds.cache('/tmp/c').repeat()\n",
            fixed=_TF + "ds = tf.data.TFRecordDataset(files).cache('/tmp/c').shuffle(256)\nds = ds.repeat()\n",
            unsafe=True,
        ),
        # A deterministic map between the shuffle and the cache: moving the cache would stop caching it.
        Invalid(
            _TF + "ds = tf.data.Dataset.list_files('*.jpg').shuffle(100).map(tf.io.read_file).cache()\n"
            "for x in ds.repeat(3):\n    step(x)\n",
            unsafe=True,
            fixed=None,
        ),
        # A training input function returned to Estimator: reported although no consumer is in sight.
        Invalid(
            _TF + "def train_input_fn(files):\n    ds = tf.data.TFRecordDataset(files).shuffle(10000).cache()\n"
            "    return ds.repeat().batch(64)\n",
            fixed=_TF + "def train_input_fn(files):\n    ds = tf.data.TFRecordDataset(files).cache().shuffle(10000)\n"
            "    return ds.repeat().batch(64)\n",
            unsafe=True,
        ),
        # On one branch only: reported, no single place to move the cache to.
        Invalid(
            _TF + "ds = tf.data.Dataset.range(100)\nif training:\n    ds = ds.shuffle(100)\nds = ds.cache().batch(10)\n"
            "model.fit(ds, epochs=3)\n",
            unsafe=True,
            fixed=None,
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        pipelines = context.model.pipelines
        for op, states in pipelines.ops("cache"):
            cache = op.call
            states = maximal(states)
            firsts = [self._first_random(context, state, cache) for state in states]
            if not any(firsts):
                continue
            if self._only_reshuffled(context, states, firsts, cache) or self._iterated_once(context, states, cache):
                continue
            if not self._for_training(context, states, cache):
                continue  # `make_eval_dataset`, `val_ds = ...`, consumed only by evaluation or a preview
            if all(pipelines.never_ends_before(state, cache) for state, first in zip(states, firsts) if first):
                continue  # `shuffle().repeat()...cache()`: the cache never completes a pass, nothing is replayed
            if all(_replays_a_sample(state, cache) for state in states):
                continue  # `take(1).cache().repeat()`: fake data that replays one batch on purpose
            random_op = next(first for first in firsts if first is not None)
            if random_op.name == "shuffle":
                message = ("`cache()` after `shuffle()` freezes the first epoch's order: every later epoch replays "
                           "it; cache before shuffling")
            else:
                message = ("`cache()` after a random `map` freezes the first epoch's augmentation: every later epoch "
                           "replays it; cache before the random map")
            fix = self._fix(context, states, firsts, cache)
            yield self.finding(message, call_method_span(cache), cache, fix)

    # -- what is random -------------------------------------------------------------------------
    def _first_random(self, context: RuleContext, state: State, cache: cst.Call) -> Optional[Op]:
        return next((op for op in state.ops_before(cache) if self._is_random(context, op)), None)

    def _is_random(self, context: RuleContext, op: Op) -> bool:
        return context.model.pipelines.randomises(op)

    def _only_reshuffled(self, context, states: Sequence[State], firsts, cache: cst.Call) -> bool:
        """Only shuffles are frozen, and a shuffle after the cache (here or in a helper the pipeline
        goes through) restores per-epoch order. One path that reshuffles is enough: the reference
        ImageNet input functions shuffle files and reshuffle records under the same `if is_training:`,
        and the paths that take one branch and not the other never run."""
        pipelines = context.model.pipelines
        reshuffled = False
        for state, first in zip(states, firsts):
            if first is None:
                continue
            if any(pipelines.randomises(op) and not pipelines.reshuffles(op) for op in state.ops_before(cache)):
                return False  # a random map: a later shuffle reorders the frozen augmentation, nothing more
            reshuffled = reshuffled or any(pipelines.reshuffles(op) for op in state.ops_after(cache))
        return reshuffled

    def _for_training(self, context: RuleContext, states: Sequence[State], cache: cst.Call) -> bool:
        """A frozen order or augmentation matters only to training: silent when every consumer in
        sight evaluates, predicts, inspects or passes once, or, with none in sight, when the pipeline's
        names and content say evaluation or inspection."""
        pipelines = context.model.pipelines
        consumptions = pipelines.consumptions_of(cache)
        if consumptions:
            return any(c.purpose in (Purpose.TRAINING, Purpose.UNKNOWN) for c in consumptions)
        return pipelines.purpose_unseen(cache, states) not in (Purpose.EVALUATION, Purpose.INSPECTION)

    def _iterated_once(self, context: RuleContext, states: Sequence[State], cache: cst.Call) -> bool:
        pipelines = context.model.pipelines
        if any(any(op.name == "repeat" for op in state.ops_after(cache)) for state in states):
            return False
        consumptions = pipelines.consumptions_of(cache)
        return bool(consumptions) and all(pipelines.iterated_once(c) for c in consumptions)

    # -- the fix --------------------------------------------------------------------------------
    def _fix(self, context: RuleContext, states, firsts, cache: cst.Call) -> Optional[FixPlan]:
        if any(first is None for first in firsts) or len({first.call for first in firsts}) != 1:
            return None
        first = firsts[0].call
        spans = {state.ops[_index(state, first): _index(state, cache) + 1] for state in states}
        if len(spans) != 1:
            return None
        between = next(iter(spans))[1:-1]
        if any(op.name not in _MOVABLE_PAST and not self._is_random(context, op) for op in between):
            return None  # e.g. a deterministic map: moving the cache before it would stop caching its work
        edits = move_before(context.model, cache, first)
        if edits is None:
            return None
        return FixPlan(UNSAFE, "Move `cache()` before the first random transformation", edits)


def _index(state: State, call: cst.Call) -> int:
    return next(i for i, op in enumerate(state.ops) if op.call is call)


def _replays_a_sample(state: State, cache: cst.Call) -> bool:
    """`ds.take(k).cache().repeat()`: the idiom for semi-fake input (a benchmark replaying its first
    batches), where a frozen order is the point."""
    before = state.ops_before(cache)
    return bool(before) and before[-1].name == "take" and any(op.name == "repeat" for op in state.ops_after(cache))
