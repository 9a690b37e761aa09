"""Where pipelines start: the tf.data, Keras and tfds calls that make a Dataset, and the Dataset
methods that make another.

A source is a ``tf.data.Dataset`` constructor (``from_tensor_slices``, ``TFRecordDataset``, ``zip``...),
a Keras loader (``image_dataset_from_directory``: prefetched already, one pipeline per subset with
``subset="both"``), ``tfds.load`` / ``builder.as_dataset`` (one pipeline, a tuple of them for a list
of splits, as many as the names a split the call does not spell out is unpacked into, a collection
without ``split=``), or a same-file ``tf.data.Dataset`` subclass (recognised by
``BodyInterpreter`` through the class it calls).
"""

from __future__ import annotations

from typing import Any, Callable, List

import libcst as cst

from tflint_perf.analysis.arguments import bool_literal, keyword_value, string_keyword
from tflint_perf.analysis.model import ModuleModel
from tflint_perf.analysis.pipelines.values import Collection, Pipeline, Source, State, TfdsBuilder, TupleValue, Value

# Loaders that batch and whose dataset ends in `prefetch(AUTOTUNE)` already: Keras' (keras/utils/
# *_dataset_utils.py) and tf.data's own readers of CSV and Example files (`prefetch_buffer_size`
# defaults to AUTOTUNE in `make_csv_dataset` and `make_batched_features_dataset`).
PREFETCHED_SOURCES = frozenset(
    {
        "keras.utils.image_dataset_from_directory",
        "keras.utils.text_dataset_from_directory",
        "keras.utils.audio_dataset_from_directory",
        "keras.utils.timeseries_dataset_from_array",
        "tf.data.experimental.make_csv_dataset",
        "tf.data.experimental.make_batched_features_dataset",
    }
)
# Calls that start a pipeline.
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
    }
) | PREFETCHED_SOURCES
# Sources that read other pipelines: each element comes from one of the pipelines they are given.
COMBINATORS = frozenset(
    {"tf.data.Dataset.zip", "tf.data.Dataset.sample_from_datasets", "tf.data.Dataset.choose_from_datasets"}
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


class SourceRecognition:
    """The interpreter's evaluation of API calls (a part of ``BodyInterpreter``): a source makes a
    pipeline; a consumer API is recorded (``ConsumerRecognition``); anything else is unknown."""

    analysis: Any  # the PipelineAnalysis
    model: ModuleModel

    eval: Callable[[cst.BaseExpression], Value]  # BodyInterpreter's
    note_combined: Callable[[Value], None]  # BodyInterpreter's
    _consumed_by_api_call: Callable[[cst.Call, str, List[Value]], bool]  # ConsumerRecognition's

    def _eval_api_call(self, api: str, call: cst.Call) -> Value:
        args = [self.eval(arg.value) for arg in call.args]
        if api in SOURCES:
            if api in COMBINATORS:
                for value in args:
                    self.note_combined(value)
            if api == "tf.data.Dataset.zip":
                self._note_zipped(args, call)
            prefetched = api in PREFETCHED_SOURCES or (api == "tf.data.Dataset.zip" and self._all_prefetched(args))
            if api.startswith("keras.utils.") and string_keyword(call, "subset") == "both":
                return TupleValue(tuple(
                    Pipeline(frozenset({State(Source(call, index=i, prefetched=prefetched))})) for i in range(2)
                ))
            return Pipeline(frozenset({State(Source(call, prefetched=prefetched))}))
        if self._consumed_by_api_call(call, api, args):
            return None
        if api == "tfds.load":
            value = split_value(call, self.model)
            if bool_literal(keyword_value(call, "with_info")):
                return TupleValue((value, None))
            return value
        if api == "tfds.builder":
            return TfdsBuilder(call)
        return None

    def _note_zipped(self, args: List[Value], call: cst.Call) -> None:
        """Which zip reads each real zipped pipeline (`zip((sources, targets)).filter(...).cache()`), and
        the zips every part of which is such a pipeline: a part passed in as a parameter, or one the
        interpreter does not follow, may decode images, so a zip with one is judged as unknown work."""
        items = _zipped_items(args)
        for item in items:
            if isinstance(item, Pipeline):
                for state in item.states:
                    if state.is_real:
                        self.analysis.zipped_into.setdefault(state, set()).add(call)
        if items and all(isinstance(item, Pipeline) and all(state.is_real for state in item.states) for item in items):
            self.analysis.zips_seen_whole.add(call)

    def _all_prefetched(self, args: List[Value]) -> bool:
        """`Dataset.zip((a, b))` / `zip(a, b)`: some zipped pipeline ends in `prefetch` (a pick-only map
        after it is no more work), and each of the others does too, or does no work, or makes up its elements (`zip((noise_ds, images_ds))` with
        `noise_ds = from_tensors(0).repeat().map(random_noise)`): the expensive side is prefetched."""
        items = _zipped_items(args)
        pipelines = [item for item in items if isinstance(item, Pipeline)]
        if not pipelines or len(pipelines) != len(items):
            return False
        analysis = self.analysis
        # Per state: `images_ds` may be fake data on one branch (`from_tensors(zeros).repeat()`) and a
        # prefetched reader on the other.
        states = [state for p in pipelines for state in p.states]
        prefetched = [analysis.ends_prefetched(state) for state in states]
        return any(prefetched) and all(
            done or not analysis.does_work(state) or analysis.synthetic(state) for done, state in zip(prefetched, states)
        )


def _zipped_items(args: List[Value]) -> List[Value]:
    """The datasets a `Dataset.zip` pairs: the items of `zip((a, b))`, or the arguments of `zip(a, b)`."""
    items: List[Value] = []
    for arg in args:
        if isinstance(arg, Collection):  # `zip(tuple(datasets))` of a list built by `append`: each state a part
            items.extend(Pipeline(frozenset({state})) for state in arg.states)
        else:
            items.extend(arg.items if isinstance(arg, TupleValue) else [arg])
    return items


# Keywords only `tfds` `DatasetBuilder.as_dataset` takes along with `split=`.
_TFDS_AS_DATASET_KEYWORDS = frozenset({"as_supervised", "shuffle_files", "read_config", "decoders"})


def is_tfds_as_dataset(call: cst.Call) -> bool:
    """``builder.as_dataset(split=..., shuffle_files=..., as_supervised=True)`` on a builder passed in
    as a parameter (SimCLR's ``build_input_fn(builder, is_training)``): the signature says tfds."""
    keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    return "split" in keywords and bool(keywords & _TFDS_AS_DATASET_KEYWORDS)


def split_value(call: cst.Call, model: ModuleModel) -> Value:
    """What ``tfds.load`` / ``builder.as_dataset`` return, decided by ``split=`` and ``batch_size=``."""
    batch_size = keyword_value(call, "batch_size")
    size = None
    if batch_size is not None:
        size = model.integer_values.signed(batch_size, model.site_of(call))  # type: ignore[attr-defined]
    if size is not None and size.value < 0:
        return None  # batch_size=-1 (or `ALL = -1`) returns whole tensors, not a Dataset
    split = keyword_value(call, "split")
    if split is None:
        return Collection(frozenset({State(Source(call))}))
    if isinstance(split, (cst.List, cst.Tuple)):
        return TupleValue(
            tuple(Pipeline(frozenset({State(Source(call, index=i))})) for i in range(len(split.elements)))
        )
    # A split the call does not spell out may be one name or a list of them: unpacking decides.
    # A batch size not read (`batch_size=args.batch`) may be -1, and whole tensors unpack too
    # (`x, y = tfds.load(..., as_supervised=True, batch_size=n)`): then no unpacking into pipelines.
    unread = not isinstance(split, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.BinaryOperation))
    unpackable = unread and (batch_size is None or size is not None)
    return Pipeline(frozenset({State(Source(call, split_unread=unpackable))}))
