"""TFP106 unvectorized-map: an element-wise ``map`` just before ``batch`` runs once per element."""

from __future__ import annotations

from typing import Iterable, Optional, Tuple

from tflint_perf.analysis.arguments import argument, has_star_args
from tflint_perf.analysis.elementwise import EXACT, per_batch
from tflint_perf.analysis.pipelines.values import Op, maximal
from tflint_perf.analysis.files import path_purpose
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.fixes.chain_edits import move_before
from tflint_perf.text.diagnostics import SAFE, Finding, FixPlan
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid, call_method_span

_TF = "import tensorflow as tf\n\n"
# dragen1860/TensorFlow-2.x-Tutorials, 01-TF2.0-Overview/fc_train.py (`{decorator}` on the map function).
_FC_TRAIN = (
    "import tensorflow as tf\nfrom tensorflow.keras import datasets\n\ndef mnist_dataset():\n"
    "    (x, y), _ = datasets.mnist.load_data()\n    ds = tf.data.Dataset.from_tensor_slices((x, y))\n"
    "    ds = ds.map(prepare_mnist_features_and_labels)\n    ds = ds.take(20000).shuffle(20000).batch(100)\n"
    "    return ds\n\n{decorator}\ndef prepare_mnist_features_and_labels(x, y):\n"
    "    x = tf.cast(x, tf.float32) / 255.0\n    y = tf.cast(y, tf.int64)\n    return x, y\n\n"
    "for epoch in range(20):\n    for step, (x, y) in enumerate(mnist_dataset()):\n        train_step(x, y)\n"
)
# tensorflow/similarity examples/unsupervised_hello_world.ipynb: the linear evaluation fits a classifier
# head on `eval_train_ds` (`{helper}`: what `img_scaling` returns; `{consumer}`: what reads the pipeline).
_SIMILARITY_EVAL = (
    "import tensorflow as tf\n\ndef img_scaling(img):\n    return {helper}\n\n"
    "eval_train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).repeat().shuffle(1024)\n"
    "eval_train_ds = eval_train_ds.map(lambda x, y: (img_scaling(x), y), tf.data.AUTOTUNE)\n"
    "eval_train_ds = eval_train_ds.batch(512)\n{consumer}\n"
)
# tensorflow/neural-structured-learning g3doc/tutorials/adversarial_keras_cnn_mnist.ipynb (`{store}`: what
# the image feature becomes).
_NSL_NORMALIZE = (
    "import tensorflow as tf\nimport tensorflow_datasets as tfds\nIMAGE_INPUT_NAME = 'image'\nLABEL_INPUT_NAME = 'label'\n\n"
    "def normalize(features):\n  features[IMAGE_INPUT_NAME] = {store}\n  return features\n\n"
    "def convert_to_tuples(features):\n  return features[IMAGE_INPUT_NAME], features[LABEL_INPUT_NAME]\n\n"
    "datasets = tfds.load('mnist')\ntrain_dataset = datasets['train']\n"
    "train_dataset = train_dataset.map(normalize).shuffle(10000).batch(32).map(convert_to_tuples)\n"
    "model.fit(train_dataset, epochs=5)\n"
)
_PREPROCESS = 'tf.keras.applications.imagenet_utils.preprocess_input(img, data_format=None, mode="torch")'
_BATCHES = frozenset({"batch", "padded_batch"})
# Ops an element-wise, deterministic map commutes with: they reorder, repeat or drop elements
# without looking at them. `cache` is not among them: a map before it runs only in the first epoch.
_VALUE_BLIND = frozenset({"shuffle", "repeat", "take", "skip", "shard", "prefetch", "with_options"})


_CGAN_CONVERT = (
    "import tensorflow as tf\nimport tensorflow_datasets as tfds\n"
    "dataset = tfds.load('fashion_mnist', split='train')\n"
    "def convert(row):\n    image = tf.image.convert_image_dtype(row['image'], tf.float32)\n"
    "    label = tf.expand_dims(tf.cast(row['label'], tf.float32), axis={axis})\n    return image, label\n"
    "dataset = dataset.map(convert).batch(32).prefetch(1)\nmodel.fit(dataset, epochs=50)\n"
)
_CGAN_CONVERT_FIXED = _CGAN_CONVERT.format(axis="-1").replace("dataset.map(convert).batch(32)", "dataset.batch(32).map(convert)")


class UnvectorizedMap(Rule):
    code = "TFP106"
    name = "unvectorized-map"
    summary = "An element-wise `map` just before `batch` pays tf.data's per-element overhead; batch first"
    fix_availability = "sometimes"

    what_it_does = """
Checks for `Dataset.map(f)` followed by `batch(...)` or `padded_batch(...)`, directly or across ops
that do not look at values (`shuffle`, `repeat`, `take`, `skip`, `shard`, `prefetch`), where `f`
is element-wise over its inputs, so it could run once per batch after `batch`. Element-wise is
decided from `f`'s body (a lambda, or a same-file `def` made of assignments and a `return`, also a
`@tf.function` without an `input_signature`; it may
return a dict of features, or the tabular `(features_dict, label)`, and build the dict with
`{k: f(v) for k, v in features.items()}`, or replace features of the element's dict in place
and return it: `features[IMAGE] = tf.cast(features[IMAGE], tf.float32) / 255.0`, keys written as
strings or as module constants bound to one), on an
allow-list: Python arithmetic and comparisons, `tf.cast`, element-wise `tf.math` ops
(`abs`, `maximum`, `clip_by_value`, `sqrt`, `exp`, `tanh`...), `tf.nn.relu` and friends,
`tf.where`, `tf.image.convert_image_dtype` (a cast and a scale), `tf.expand_dims` on the last axis
(`axis=-1`: the same new axis on an element and on a batch), Keras' `preprocess_input` (each channel scaled and shifted by constants), and a same-file
helper of one input made of those (`lambda x, y: (img_scaling(x), y)`). Each output must be computed from one input (or one `["key"]` of a dict element) and
numeric constants.

Not reported: functions that decode, resize, parse, slice, reshape, reduce or use random ops per
element (none of them is on the allow-list), a function combining two inputs (`x * w`: once
batched, their shapes may broadcast differently), a function that only passes its inputs on
(nothing to vectorize), a `cache()` after the map, between it and the batch or after the batch with no
`repeat` before it (the map then runs in the first epoch only), pipelines consumed only for evaluation or inspection, or named for evaluation (`val_ds`) with no `fit`
training on them, and test files.
"""
    why_bad = """
tf.data schedules a map function once per element; for a cheap element-wise function the
scheduling costs far more than the arithmetic (the performance guide gives about 10 microseconds
of overhead per call). Batching first and mapping the same function over the batch runs it once
per batch, as one vectorized kernel: the guide's "Vectorizing mapping" section. Measured on
200,000 scalars with `x * 2 + 1` and batches of 256: well over 10x faster (see
docs/benchmarks.md).
"""
    example = """
import tensorflow as tf

ds = tf.data.Dataset.from_tensor_slices((images, labels))
ds = ds.map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y)).batch(64)
"""
    use_instead = """
import tensorflow as tf

ds = tf.data.Dataset.from_tensor_slices((images, labels))
ds = ds.batch(64).map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y))
"""
    fix_safety = """
The fix moves `batch(...)` (with its arguments) before the `map`, in one method chain or in
straight-line `ds = ds.op(...)` statements. It is **safe**: the function is element-wise with
exactly rounded ops only, so every value is bit-for-bit the same and `drop_remainder` means the
same thing. No fix is offered for `padded_batch` (the function would then also run on the
padding: `x + 1` turns padded zeros into ones), for transcendental ops (`exp`, `tanh`, `pow`: a
vectorized kernel may round the last bit differently), or when the edit would be ambiguous (the
ops on different branches, comments between them).
"""
    references = (
        "[tf.data performance guide: Vectorizing mapping](https://www.tensorflow.org/guide/data_performance#vectorizing_mapping)",
        "[`tf.data.Dataset.map`](https://www.tensorflow.org/api_docs/python/tf/data/Dataset#map)",
    )

    valid = (
        # A constant stored in the element is one value per batch once batched; a resize is no element-wise op.
        Valid(_NSL_NORMALIZE.format(store="1.0")),
        Valid(_NSL_NORMALIZE.format(store="tf.image.resize(features[IMAGE_INPUT_NAME], (32, 32))")),
        # Decodes and resizes per element: images differ in size before the resize.
        Valid(
            _TF + "def load(path, label):\n    image = tf.io.decode_jpeg(tf.io.read_file(path))\n"
            "    return tf.image.resize(image, (224, 224)), label\n\n"
            "ds = tf.data.Dataset.from_tensor_slices((paths, labels)).map(load).batch(32)\nmodel.fit(ds, epochs=3)\n"
        ),
        # Random per element.
        Valid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v + tf.random.normal([])).batch(32)\n"
            "model.fit(ds)\n"
        ),
        # Parses records one by one.
        Valid(
            _TF + "ds = tf.data.TFRecordDataset(files).map(lambda r: tf.io.parse_single_example(r, spec)).batch(32)\n"
            "model.fit(ds)\n"
        ),
        # Two inputs in one operation: their shapes may broadcast differently once batched.
        Valid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices((x, w)).map(lambda a, b: a * b).batch(32)\nmodel.fit(ds)\n"
        ),
        # Slicing and reducing are not element-wise over the batch.
        Valid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v[0] - tf.reduce_mean(v)).batch(32)\n"
            "model.fit(ds)\n"
        ),
        # A reshape to a fixed per-element shape is not element-wise over a batch.
        Valid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: tf.reshape(v, [28, 28, 1]) / 255.0).batch(32)\n"
            "model.fit(ds)\n"
        ),
        # Only picks inputs: nothing to vectorize.
        Valid(_TF + "ds = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (b, a)).batch(32)\nmodel.fit(ds)\n"),
        # Cached between: the map runs in the first epoch only.
        Valid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v * 2).cache().batch(32)\nmodel.fit(ds)\n"
        ),
        # sonnet's simple_mnist.py: shuffled and batched, then cached: the map still runs in the first epoch only.
        Valid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v * 2).shuffle(1000).batch(32).cache()\n"
            "model.fit(ds, epochs=5)\n"
        ),
        # A filter between: it looks at the values.
        Valid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v * 2).filter(keep).batch(32)\nmodel.fit(ds)\n"
        ),
        # Evaluation only.
        Valid(_TF + "ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v * 2).batch(32)\nmodel.evaluate(ds)\n"),
        # A same-file helper that is not element-wise (a resize per image), or named for evaluation and only
        # evaluated on (tensorflow/similarity's `eval_test_ds`).
        Valid(_SIMILARITY_EVAL.format(helper="tf.image.resize(img, (224, 224))", consumer="model.fit(eval_train_ds, epochs=10)")),
        Valid(_SIMILARITY_EVAL.format(helper=_PREPROCESS, consumer="model.evaluate(eval_train_ds)")),
        # Tabular features, but split into tokens per row: not element-wise over a batch.
        Valid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices((dict(df), labels))\n"
            "ds = ds.map(lambda x, y: ({'text': tf.strings.split(x['text']), 'age': x['age'] / 100.0}, y)).batch(64)\n"
            "model.fit(ds)\n"
        ),
        # Every feature scaled by a per-feature constant looked up by key: not followed, silent.
        Valid(
            _TF + "def scale(features, label):\n    features = {k: v / SCALES[k] for k, v in features.items()}\n"
            "    return features, label\n\n"
            "ds = tf.data.Dataset.from_tensor_slices((dict(df), labels)).map(scale).batch(64)\nmodel.fit(ds)\n"
        ),
        # A free name that is not a number (an array: its rank may broadcast differently).
        Valid(
            _TF + "mean = np.load('mean.npy')\n"
            "ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v - mean).batch(32)\nmodel.fit(ds)\n"
        ),
        # A `tf.function` whose `input_signature` fixes one element's shape would refuse a batch.
        Valid(_FC_TRAIN.format(decorator="@tf.function(input_signature=[tf.TensorSpec([28, 28], tf.uint8), "
                                         "tf.TensorSpec([], tf.uint8)])")),
        # A new axis counted from the front lands before the batch's axis once batched: not batch-safe.
        Valid(_CGAN_CONVERT.format(axis="0")),
    )
    invalid = (
        # A `repeat` before the cache: the first pass never ends, the map runs on every element of every epoch.
        Invalid(_TF + "ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v * 2).repeat().batch(32).cache()\n"
                "model.fit(ds, steps_per_epoch=100, epochs=5)\n"),
        # Packt's Hands-On NN with TF 2.0, Chapter09/tf2/cgan.py: `convert_image_dtype` (a cast and a scale) of
        # each image and a cast label given a last axis, right before `batch`.
        Invalid(_CGAN_CONVERT.format(axis="-1"), fixed=_CGAN_CONVERT_FIXED),
        # tensorflow/neural-structured-learning's MNIST tutorials: one feature of the dict element, named by a
        # module constant, cast and scaled in place; the label is passed on as it is.
        Invalid(_NSL_NORMALIZE.format(store="tf.cast(\n      features[IMAGE_INPUT_NAME], dtype=tf.float32) / 255.0")),
        # Keras' `preprocess_input` scales each channel by constants, through a same-file helper; the fit
        # trains on the pipeline whatever its name says.
        Invalid(
            _SIMILARITY_EVAL.format(helper=_PREPROCESS, consumer="model.fit(eval_train_ds, epochs=10)"),
            fixed=_SIMILARITY_EVAL.format(helper=_PREPROCESS, consumer="model.fit(eval_train_ds, epochs=10)").replace(
                "eval_train_ds = eval_train_ds.map(lambda x, y: (img_scaling(x), y), tf.data.AUTOTUNE)\n"
                "eval_train_ds = eval_train_ds.batch(512)\n",
                "eval_train_ds = eval_train_ds.batch(512)\n"
                "eval_train_ds = eval_train_ds.map(lambda x, y: (img_scaling(x), y), tf.data.AUTOTUNE)\n"),
        ),
        # dragen1860/TensorFlow-2.x-Tutorials 01-TF2.0-Overview/fc_train.py: a `tf.function` that casts and
        # scales, mapped per element; `take` and `shuffle` before the batch do not look at values.
        Invalid(_FC_TRAIN.format(decorator="@tf.function")),
        Invalid(
            _TF + "ds = tf.data.Dataset.range(200_000).map(lambda x: x * 2 + 1).batch(256)\nmodel.fit(ds, epochs=2)\n",
            fixed=_TF + "ds = tf.data.Dataset.range(200_000).batch(256).map(lambda x: x * 2 + 1)\nmodel.fit(ds, epochs=2)\n",
        ),
        Invalid(
            _TF + "SCALE = 255.0\n\ndef normalize(image, label):\n    image = tf.cast(image, tf.float32)\n"
            "    image -= 0.5\n    return image / SCALE, label\n\n"
            "def make(x, y):\n    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1000)\n"
            "    ds = ds.map(normalize, num_parallel_calls=tf.data.AUTOTUNE)\n    ds = ds.batch(64, drop_remainder=True)\n"
            "    return ds.prefetch(1)\n",
            fixed=_TF + "SCALE = 255.0\n\ndef normalize(image, label):\n    image = tf.cast(image, tf.float32)\n"
            "    image -= 0.5\n    return image / SCALE, label\n\n"
            "def make(x, y):\n    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1000)\n"
            "    ds = ds.batch(64, drop_remainder=True)\n    ds = ds.map(normalize, num_parallel_calls=tf.data.AUTOTUNE)\n"
            "    return ds.prefetch(1)\n",
        ),
        # Across a shuffle: reported; moving the batch before the map would shuffle batches, so no fix.
        Invalid(
            "import tensorflow as tf\nimport tensorflow_datasets as tfds\n\ndef scale(image, label):\n    return tf.cast(image, tf.float32) / 255.0, label\n\n"
            "mnist_train = tfds.load('mnist', split='train', as_supervised=True)\n"
            "train = mnist_train.map(scale).shuffle(10_000).batch(64)\nmodel.fit(train, epochs=5)\n",
            fixed=None,
        ),
        # padded_batch: the function would also run on the padding. Reported, no fix.
        Invalid(
            _TF + "ds = tf.data.Dataset.from_generator(gen, output_types=tf.int32).map(lambda t: t + 1).padded_batch(32)\n"
            "for batch in ds:\n    train_step(batch)\n",
            fixed=None,
        ),
        # The tabular shape: a dict of features and a label from a DataFrame, each feature scaled.
        Invalid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices((dict(df), labels))\n"
            "ds = ds.map(lambda x, y: ({'age': x['age'] / 100.0, 'fare': x['fare']}, y)).batch(64)\nmodel.fit(ds)\n",
            fixed=_TF + "ds = tf.data.Dataset.from_tensor_slices((dict(df), labels))\n"
            "ds = ds.batch(64).map(lambda x, y: ({'age': x['age'] / 100.0, 'fare': x['fare']}, y))\nmodel.fit(ds)\n",
        ),
        # A def casting every feature of the dict the same way.
        Invalid(
            _TF + "def to_float(features, label):\n    features = {k: tf.cast(v, tf.float32) for k, v in features.items()}\n"
            "    return features, label\n\n"
            "ds = tf.data.Dataset.from_tensor_slices((dict(df), labels)).map(to_float).batch(64)\nmodel.fit(ds)\n",
            fixed=_TF + "def to_float(features, label):\n    features = {k: tf.cast(v, tf.float32) for k, v in features.items()}\n"
            "    return features, label\n\n"
            "ds = tf.data.Dataset.from_tensor_slices((dict(df), labels)).batch(64).map(to_float)\nmodel.fit(ds)\n",
        ),
        # A dict element and a transcendental op: reported, no fix (last-bit rounding may differ).
        Invalid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(features)\n"
            "ds = ds.map(lambda d: {'x': tf.math.log1p(d['x']), 'y': d['y']}).batch(128)\nmodel.fit(ds)\n",
            fixed=None,
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        if context.is_test_code or path_purpose(context.filename) is not Purpose.UNKNOWN:
            return
        model = context.model
        pipelines = model.pipelines
        for op, states in pipelines.ops("map"):
            call = op.call
            if has_star_args(call) or pipelines.only_consumed_outside(call, self.purposes):
                continue
            if not pipelines.named_for(call, self.purposes):
                continue  # `make_eval_dataset`, `val_ds = ...`, unless a `fit` trains on it
            following = [_next_batch(state.ops_after(call)) for state in maximal(states)]
            if not following or any(after is None for after in following):
                continue
            if pipelines.cached_for_every_reader(states, call):
                continue  # `map(scale).shuffle(n).batch(32).cache()`: the map runs in the first epoch only
            batches = {after[0].call for after in following}
            adjacent = all(after[1] for after in following)
            function = argument(call, "map_func", 0)
            if function is None:
                continue
            scope = pipelines.scope_of(call)
            target = model.effects.resolve_callable(function.value, scope)
            if target is None:
                continue
            kind = per_batch(model, target, scope)
            if kind is None:
                continue
            batch = next(iter(batches))
            name = following[0][0].name
            between = "" if adjacent else " (the ops in between do not look at values)"
            message = (
                f"`map` of an element-wise function before `{name}` runs once per element; "
                f"`{name}` first and map once per batch{between}"
            )
            fix = None
            if len(batches) == 1 and adjacent and name == "batch" and kind == EXACT:
                edits = move_before(model, batch, call)
                if edits is not None:
                    fix = FixPlan(SAFE, "Batch before the map", edits)
            yield self.finding(message, call_method_span(call), call, fix)


def _next_batch(ops) -> Optional[Tuple[Op, bool]]:
    """The batching op the elements reach next, crossing only value-blind ops, and whether it is
    the very next op; None when another op comes first."""
    for index, op in enumerate(ops):
        if op.name in _BATCHES:
            return op, index == 0
        if op.name not in _VALUE_BLIND:
            return None
    return None
