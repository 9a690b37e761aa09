"""TFP102 sequential-map: ``Dataset.map`` / ``interleave`` without ``num_parallel_calls``."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from tflint_perf.analysis.arguments import argument, has_star_args
from tflint_perf.analysis.files import path_purpose
from tflint_perf.analysis.pipelines.map_functions import is_trivial_function, only_moves_values, runs_no_ops
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.text.diagnostics import SAFE, UNSAFE, Finding, FixPlan
from tflint_perf.fixes.building import add_keyword_argument, autotune, wrapped_keyword_argument
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid, call_method_span, target_version_option

# zzh8829/yolov3-tf2's loader: `{vocab}` is what the parse's `class_table` parameter is given.
_YOLO_PARSE = (
    "import tensorflow as tf\n\nclass Vocabulary:\n    def __init__(self, path):\n        self.path = path\n"
    "    def lookup(self, text):\n        return tf.strings.to_hash_bucket_fast(text, 80)\n\n"
    "def parse_tfrecord(tfrecord, class_table, size):\n    x = tf.io.parse_single_example(tfrecord, FEATURES)\n"
    "    image = tf.image.resize(tf.image.decode_jpeg(x['image/encoded'], channels=3), (size, size))\n"
    "    labels = tf.cast(class_table.lookup(x['image/object/class/text']), tf.float32)\n    return image, labels\n\n"
    "def load_tfrecord_dataset(file_pattern, class_file, size=416):\n    class_table = {vocab}\n"
    "    dataset = tf.data.Dataset.list_files(file_pattern).flat_map(tf.data.TFRecordDataset)\n"
    "    return dataset.map(lambda x: parse_tfrecord(x, class_table, size))\n\n"
    "model.fit(load_tfrecord_dataset(pattern, classes).batch(8), epochs=10)\n"
)
# dragen1860/TensorFlow-2.x-Tutorials, lesson21 mnist_tensor.py (`{order}`: where the map runs).
_MNIST_PER_BATCH = (
    "import tensorflow as tf\nfrom tensorflow.keras import datasets\n\ndef preprocess(x, y):\n"
    "    x = tf.cast(x, dtype=tf.float32) / 255.\n    x = tf.reshape(x, [-1, 28*28])\n"
    "    y = tf.cast(y, dtype=tf.int32)\n    y = tf.one_hot(y, depth=10)\n    return x, y\n\n"
    "(x, y), _ = datasets.mnist.load_data()\n"
    "train_db = tf.data.Dataset.from_tensor_slices((x, y)).{order}\n"
    "for step, (x, y) in enumerate(train_db):\n    with tf.GradientTape() as tape:\n        loss = model(x)\n"
    "    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n"
)
# czy36mengfei/tensorflow2_tutorials_chinese 026-Transformer: a `py_function` tokenizer before `cache()`
# (`{map}`), read by `{epochs}` epochs.
# A char-RNN's input: text files encoded to byte ids, cut into chunks of 1,001, each mapped by `{encode}`.
_CHAR_CHUNKS = (
    "import tensorflow as tf\nVOCAB = 256\n"
    "chunks = tf.data.TextLineDataset(files).map(encode, 4).unbatch().batch(1001, drop_remainder=True)\n"
    "ds = chunks.map({encode})\nmodel.fit(ds.shuffle(10000).batch(64).prefetch(1), epochs=50)\n"
)
_SLICED_ONE_HOTS = "lambda seq: (tf.one_hot(seq[:-1], VOCAB), tf.one_hot(seq[1:], VOCAB))"
_CACHED = (
    "import tensorflow as tf\nimport tensorflow_datasets as tfds\ndef encode(lang1, lang2):\n    return tokenizer.encode(lang1.numpy()), tokenizer.encode(lang2.numpy())\n"
    "def tf_encode(pt, en):\n    return tf.py_function(encode, [pt, en], [tf.int64, tf.int64])\n"
    "examples = tfds.load('ted_hrlr_translate/pt_to_en', split='train', as_supervised=True)\n"
    "train = examples.map({map})\ntrain = train.filter(filter_long).cache()\n"
    "train = train.padded_batch(64, padded_shapes=([40], [40])).prefetch(tf.data.experimental.AUTOTUNE)\n"
    "epochs = {epochs}\nmodel.fit(train, epochs=epochs)\n"
)
_SEQUENTIAL_RETRIEVAL = (
    "import tensorflow as tf\nspec = {\n    'context_movie_id': tf.io.FixedLenFeature([10], tf.int64),\n"
    "    'label_movie_id': tf.io.FixedLenFeature([1], tf.int64),\n}\n"
    "def _parse_function(example_proto):\n    return tf.io.parse_single_example(example_proto, spec)\n"
    "train = tf.data.TFRecordDataset(f).map(_parse_function).map(lambda x: {\n"
    "    'context_movie_id': tf.strings.as_string(x['context_movie_id'])})\n"
    "model.fit(train.batch(128).cache(), epochs=3)\n"
)
_SEQUENTIAL_RETRIEVAL_FIXED = _SEQUENTIAL_RETRIEVAL.replace(
    "train = tf.data.TFRecordDataset(f).map(_parse_function).map(lambda x: {\n"
    "    'context_movie_id': tf.strings.as_string(x['context_movie_id'])})\n",
    "train = tf.data.TFRecordDataset(f).map(\n    _parse_function,\n    num_parallel_calls=tf.data.experimental.AUTOTUNE,\n"
    ").map(lambda x: {\n    'context_movie_id': tf.strings.as_string(x['context_movie_id'])}, "
    "num_parallel_calls=tf.data.experimental.AUTOTUNE)\n")
_IRIS_2D = (
    "import tensorflow as tf\nimport tensorflow_datasets as tfds\ndef iris2d(features, label):\n"
    "    return features[2:], tf.cast((label == 0), dtype=tf.float32)\n"
    "iris = tfds.load('{name}', split='train[:90%]', as_supervised=True)\n"
    "train = iris.map(iris2d).shuffle(buffer_size=100).batch(16)\n"
    "for epoch in range(300):\n    for x, y in train:\n        train_step(x, y)\n"
)
_RESCALED_BATCHES = (
    "import tensorflow as tf\ntrain_ds = tf.keras.preprocessing.image_dataset_from_directory(data_root, batch_size=32)\n"
    "normalization_layer = {layer}\ntrain_ds = train_ds.map(lambda x, y: (normalization_layer(x), y))\n"
    "train_ds = train_ds.cache().prefetch(buffer_size=tf.data.AUTOTUNE)\nmodel.fit(train_ds, epochs=2)\n"
)
# google-research/uda's input functions: the supervised and unsupervised batches zipped, their feature
# dicts merged by `{merge}`.
_MERGED = (
    "import tensorflow as tf\ndef get_input_fn(sup, unsup):\n    def input_fn(params):\n"
    "        def flatten_input(*features):\n            result = {{}}\n            for feature in features:\n"
    "                for key in feature:\n                    assert key not in result\n"
    "                    result[key] = {value}\n            return result\n"
    "        d = tf.data.Dataset.zip((sup, unsup))\n        d = d.map({merge})\n        return d.prefetch(1)\n"
    "    return input_fn\nestimator.train(input_fn=get_input_fn(a, b), max_steps=100000)\n"
)
# Position of num_parallel_calls among each method's parameters.
_POSITION = {"map": 1, "interleave": 3}


class SequentialMap(Rule):
    code = "TFP102"
    name = "sequential-map"
    summary = "`Dataset.map` / `interleave` without `num_parallel_calls` runs one element at a time"
    fix_availability = "sometimes"
    options = (target_version_option(
        "From TensorFlow 2.7 the runtime parallelises a stateless `map` itself (unless autotune or the `map_parallelization` rewrite is off), so such maps are not reported; before 2.4 the fix writes `tf.data.experimental.AUTOTUNE`."
    ),)

    what_it_does = """
Checks for `Dataset.map` and `Dataset.interleave` calls on a `tf.data` pipeline that pass no
`num_parallel_calls` (by keyword or by position). Only receivers known to be Datasets count: a
pandas `.map`, a Spark RDD, the builtin `map` or `tf.map_fn` are never reported.

Maps in pipelines consumed only for evaluation run once, inspection or a one-off pass (a projection
map feeding `adapt()`, a demonstration that reads a handful of elements, `next(ds.__iter__())`, a
loop printing `zip(sentences, ds)`, pipelines only printed by `print(train)` at module level, a
serving request read by `get_single_element()`, a TF1 iterator read only by session loops that
generate samples or compute metrics, see TFP101), in pipelines built for evaluation or a preview with no consumer in
sight (`make_eval_dataset`, `val_ds = ...`, `ds.map(f).take(3)`; a helper named for both sets,
`get_train_and_test_datasets`, says neither: its `test_ds` is evaluation, its `train_ds` training), a map whose result is thrown away
(`dataset.map(augment)` on a line of its own never runs) or bound to a name nothing reads nor
returns (`aug_ds = train_ds.map(augment)` never used; at module level, in a notebook, or in a Python
module the project shows no importer of), and maps in test files are not
reported, nor in modules whose path says evaluation, inference or serving, unless a `fit` there trains
on the pipeline (or a TF1 session loop there runs a train op on it); a `fit` trains on a pipeline whatever
its name says (`eval_train_ds`). Evaluation the model waits on every epoch counts as training does: `fit`'s
`validation_data` over several epochs (unless read rarely: `validation_steps=2`, `validation_freq=2` over
5 epochs), a `for x, y in test_ds:` loop inside the training loop (not under `if epoch % 5 == 0:`,
evaluation every Nth epoch, see TFP101). On TensorFlow 2.7 and later
(`target-version`, or the version inferred from the project's dependency files or required by the module's own
Keras calls, such as `tf.keras.optimizers.legacy` from 2.9) a stateless `map`
is parallelised by the runtime and not reported, unless the module switches `map_parallelization`
or autotune off; when the version is unknown the message says so. Dead code is not reported: a
pipeline built in a function or method whose name its module and the modules around it (what it
imports and what imports it, two levels each) mention only in its own `def`, in a project not packaged
for others (whose public names are an API); a training pipeline such a function returns unconsumed
(shuffled, repeated or randomly augmented, or named for training: a `make_train_dataset`, a
`train_input_fn`) is still reported, for the notebook, user or framework that calls it. Stateful maps (random ops,
`py_function`, a `tf.lookup` table's `lookup`, the table followed to where it is built, through a
helper's parameters too) and `interleave` are reported on every version: the runtime leaves them
sequential.

Maps with nothing to parallelise are not reported: a function that runs no op that computes, only
Python when it is traced (merging the feature dicts a `Dataset.zip` paired, `assert key not in result`;
a dict of the arguments with constant fields, `'supervised': tf.constant(True)`; joining the element's
strings is an op), a function that only picks, slices, regroups or
reshapes its arguments (`lambda x, y: (x, tf.expand_dims(y, -1))`, `lambda ex: labeler(ex, i)` with
a same-file `labeler` that pairs the element with a constant), one that repeats it in a list (`lambda
z: [[z] * examples_per_class]`) or picks one of two constants by comparing it (`lambda x: tf.cast(0,
tf.int64) if x < warmup else tf.cast(1, tf.int64)`), one that picks features and converts scalar ids or flags among them (`lambda x:
{"movie_id": tf.strings.to_number(x["movie_id"]), "gender": int(x["user_gender"])}`, `as_string`:
as cheap as the picks), one that one-hot encodes a label to a depth the code writes small while the
rest passes through (`lambda image, label: (image, tf.one_hot(label, depth=8))`; not a whole element or a slice,
which may be a sequence: `lambda seq: tf.one_hot(seq, 256)`), such a cheap map over a toy dataset's elements
(scikit-learn's digits: `lambda z: tf.one_hot(z, 10)`; `tfds.load('iris')`: a slice of the features), and, after `batch`, a function that
only moves a batch's values around (`reshape`, `transpose`, `concat`, `tile`, `pad`, slicing, `set_shape`,
shape checks) which runs once per batch, or, on the batches the consumer gets from any source, does
element-wise arithmetic on them (`tf.cast(x, tf.float32) / 255.`, TF1's `tf.div`, `tf.one_hot(y, depth=10)`,
`tf.where(mask, label, -1.)`, a Keras `Rescaling` layer), crops, flips or pads its images (`tf.image.central_crop(x, 0.75)`,
`tf.image.random_flip_left_right(x)`: one vectorised copy, no interpolation) or fills constants
(`tf.zeros`): microseconds per batch, or, straight after a `Dataset.zip`, one that
only stacks or concatenates what the zip paired (`Dataset.zip(tuple(parts)).map(lambda *windows:
tf.stack(windows))`). `make_csv_dataset` and `make_batched_features_dataset` batch their elements.
A map before a `cache()` is reported when it does work worth parallelising (decoding, parsing, a
`py_function`): it runs in the first epoch only, but that epoch waits on it. A cheap one there (the casts,
scales and one-hot encodings above, or an image resize) whose results a `cache()` keeps for every
consumer (`shuffle`, `batch`, `filter` and the like may come between, a `repeat` may not) runs for
microseconds per element once in the whole run: not reported.
"""
    why_bad = """
Without `num_parallel_calls`, `map` transforms one element at a time on one thread, and
`interleave` reads its inputs one after the other, however many cores the host has. Decoding and
augmentation then bound the step time. With `num_parallel_calls=tf.data.AUTOTUNE`, tf.data runs the
function on several elements at once and tunes the parallelism itself; output order is kept
(`deterministic` defaults to true). Measured on a 2-core CPU with a 10 ms I/O-like map function:
2.22 s sequential, 1.09 s with AUTOTUNE (2.0x).

TensorFlow 2.7 and later parallelise a `map` on their own (the `map_parallelization` graph
rewrite), but only when the function is stateless: a function with random ops, `py_function`,
`numpy_function` or other state stays sequential, and those are exactly the slow ones. Before 2.7
nothing is parallelised automatically.
"""
    example = """
import tensorflow as tf

ds = tf.data.TFRecordDataset(files).map(decode_and_augment)
"""
    use_instead = """
import tensorflow as tf

ds = tf.data.TFRecordDataset(files).map(decode_and_augment, num_parallel_calls=tf.data.AUTOTUNE)
"""
    fix_safety = """
The fix adds `num_parallel_calls=tf.data.AUTOTUNE`. It is **safe** when the mapped function is
provably stateless (only TensorFlow ops that are not random, in a lambda or a same-file function):
elements come out the same and in the same order. It is **unsafe** when the function is
stateful (random ops, `py_function` / `numpy_function`, variables, `global` state), when the
analysis cannot see into it (an imported function), when the call passes `deterministic=False`,
or when the pipeline later sets options that may allow non-deterministic order: running such a
function in parallel changes which element gets which random draw and when side effects
happen. Memory grows by the number of elements in flight. On a `target-version` before 1.13 no
`AUTOTUNE` spelling is certain to exist, and no fix is offered (a number of calls would be a guess).

An `interleave` whose `cycle_length` is not a positive number the code states (absent, AUTOTUNE,
or a value the analysis cannot follow) is **unsafe** too, even with a stateless function, because
the fix reorders its elements: TensorFlow picks the cycle length itself, the number of cores for a
sequential interleave but a third of them (rounded up) for a parallel one, so the parallel one
interleaves fewer inputs at a time. On 2 cores,
`Dataset.range(4).interleave(lambda x: Dataset.from_tensors(x).repeat(3))` gives
`0 1 0 1 0 1 2 3 2 3 2 3`, and `0 0 0 1 1 1 2 2 2 3 3 3` with `num_parallel_calls=AUTOTUNE`. A
training loop that depends on how the inputs are mixed (files of different classes, shards meant to
be shuffled by interleaving) then sees another mix. With a stated `cycle_length` the order is kept
(`deterministic` defaults to true).

The keyword goes after the last argument; on a line of its own when the arguments are written one
per line, and with the call broken at its brackets (one argument per line) when adding it would
make the line longer than the file's longest line and 88 characters.
"""
    known_problems = """
Cheapness is judged from the code as written: a cheap function other than the ones above (a small
arithmetic on a scalar label) is still reported, though it gains little from parallelism; batch
first and map the batch instead. A map that must stay sequential to save memory can say so with
`synchronous=True`, which this rule respects.
"""
    references = (
        "[tf.data performance guide: Parallelizing data transformation]"
        "(https://www.tensorflow.org/guide/data_performance#parallelizing_data_transformation)",
        "[`tf.data.Dataset.map`](https://www.tensorflow.org/api_docs/python/tf/data/Dataset#map)",
        "[`tf.data.experimental.OptimizationOptions.map_parallelization`]"
        "(https://www.tensorflow.org/api_docs/python/tf/data/experimental/OptimizationOptions)",
    )

    valid = (
        # A helper that builds both sets: its name says neither, the test set's own name says evaluation.
        Valid("import tensorflow as tf\ndef get_train_and_test_datasets(files):\n"
              "    test_ds = tf.data.TFRecordDataset(files).map(parse).batch(32)\n    return test_ds\n"),
        # training-data-analyst transfer_learning_with_hub.ipynb: a Rescaling layer on the batches of
        # image_dataset_from_directory, `x / 255.` once per batch.
        Valid(_RESCALED_BATCHES.format(layer="tf.keras.layers.experimental.preprocessing.Rescaling(1./255)")),
        # Packt's ML Using TF Cookbook, ch2: a feature-slicing map over Iris from TensorFlow Datasets.
        Valid(_IRIS_2D.format(name="iris")),
        # A pipeline bound to a local that nothing reads nor returns: dead code (notebooks' module-level
        # ones: tests/test_pipeline_intent.py).
        Valid("import tensorflow as tf\ndef make(files):\n    ds = tf.data.TFRecordDataset(files)\n"
              "    unused = ds.map(augment)\n    return ds.batch(8)\n"),
        # ml-design-patterns wx_embeddings.ipynb: the parse map feeds a smoke fit of three steps and a look.
        Valid("import tensorflow as tf\ndef read_dataset(pattern):\n    ds = tf.data.TFRecordDataset(tf.io.gfile.glob(pattern))\n"
              "    return ds.prefetch(tf.data.AUTOTUNE).map(parse_tfrecord)\n\n"
              "for rec in read_dataset(PATTERN).take(1):\n    print(rec)\n"
              "ds = read_dataset(PATTERN).map(input_and_label).batch(2).repeat()\n"
              "history = autoencoder.fit(ds, steps_per_epoch=1, epochs=3)\n"),
        Valid("import tensorflow as tf\nds = tf.data.Dataset.range(8).map(lambda x: x * 2, num_parallel_calls=tf.data.AUTOTUNE)\n"),
        Valid("import tensorflow as tf\nds = tf.data.Dataset.range(8).map(lambda x: x * 2, 4)\n"),
        # tensor2tensor problem.py serving_input_fn: one request's examples, read as the pipeline's single element.
        Valid("import tensorflow as tf\ndef serving_input_fn():\n"
              "    request = tf.compat.v1.placeholder(tf.string, [None])\n"
              "    ds = tf.data.Dataset.from_tensor_slices(request).map(decode_example).batch(8)\n"
              "    return tf.data.experimental.get_single_element(ds)\n"),
        Valid("import pandas as pd\nimport tensorflow as tf\ns = pd.Series([1, 2]).map(str)\n"),
        Valid("import tensorflow as tf\nys = map(str, [1, 2])\nzs = tf.map_fn(lambda x: x, tf.range(3))\n"),
        Valid("import tensorflow as tf\nclass Table:\n    def map(self, f):\n        return f\nTable().map(len)\n"),
        Valid("import tensorflow as tf\nds = tf.data.Dataset.range(8).map(lambda x: x, synchronous=True)\n"),
        # tensorflow/docs transfer_learning_audio: a module-level lambda that only drops a column.
        Valid("import tensorflow as tf\ndrop_fold = lambda emb, label, fold: (emb, label)\n"
              "ds = tf.data.Dataset.from_tensor_slices(t).map(drop_fold)\nmodel.fit(ds, epochs=5)\n"),
        # tensorflow/docs overfit_and_underfit: only `expand_dims` of the label.
        Valid("import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse, 4).batch(8)\n"
              "model.fit(ds.map(lambda x, y: (x, tf.expand_dims(y, axis=-1))), epochs=50)\n"),
        # tensorflow/docs load_data/text: pairs each line with a constant class index, through a helper.
        Valid("import tensorflow as tf\ndef labeler(example, index):\n    return example, tf.cast(index, tf.int64)\n"
              "for i, name in enumerate(files):\n    ds = tf.data.TextLineDataset(name).map(lambda ex: labeler(ex, i))\n"
              "    model.fit(ds.repeat(), epochs=5)\n"),
        # tensorflow/docs time_series: slices whole batches of windows into inputs and labels, once per batch.
        Valid("import tensorflow as tf\nclass Windows:\n    def split(self, features):\n"
              "        inputs = features[:, :24, :]\n        labels = tf.reshape(features[:, 24:, 0], [-1, 1])\n"
              "        inputs.set_shape([None, 24, None])\n        return inputs, labels\n"
              "    def make(self, data):\n        ds = tf.data.Dataset.from_tensor_slices(data).shuffle(100).batch(32)\n"
              "        return ds.map(self.split)\n"),
        # dragen1860/TensorFlow-2.x-Tutorials lesson21 mnist_tensor.py: in-memory arrays batched first,
        # then cast, scaled, reshaped and one-hot encoded once per batch of 128: microseconds per batch.
        Valid(_MNIST_PER_BATCH.format(order="shuffle(60000).batch(128).map(preprocess)"), target_version=(2, 0)),
        # A preview: three elements, printed once.
        Valid("import tensorflow as tf\nval_ds = tf.data.TFRecordDataset(f).map(parse)\nfor x in val_ds.take(3):\n    print(x)\n"),
        # ageron/handson-ml2 16_nlp: one window of each of 32 parts, stacked into a batch by the zip's map.
        Valid("import numpy as np\nimport tensorflow as tf\ndatasets = []\nfor part in np.array_split(encoded, 32):\n"
              "    ds = tf.data.Dataset.from_tensor_slices(part).window(101, shift=100, drop_remainder=True)\n"
              "    datasets.append(ds.flat_map(lambda window: window.batch(101)))\n"
              "ds = tf.data.Dataset.zip(tuple(datasets)).map(lambda *windows: tf.stack(windows)).prefetch(1)\n"
              "model.fit(ds, epochs=50)\n"),
        # On 2.12 a stateless map is parallelised by the runtime: a `lookup` of this file's own
        # vocabulary class, which only hashes, is no table.
        Valid(_YOLO_PARSE.format(vocab="Vocabulary(class_file)"), target_version=(2, 12)),
        # tensorflow/similarity tfdata_sampler.py: the class selector repeats each shuffled class id
        # once per example of its block, and the warm-up selector picks 0 or 1 per counter value.
        Valid("import tensorflow as tf\ndef create_choices_dataset(num_classes, examples_per_class):\n"
              "    return (tf.data.Dataset.range(num_classes).shuffle(num_classes)\n"
              "            .map(lambda z: [[z] * examples_per_class]).flat_map(tf.data.Dataset.from_tensor_slices).repeat())\n"
              "selector = tf.data.Dataset.counter().map(\n"
              "    lambda x: tf.cast(0, dtype=tf.int64) if x < warmup else tf.cast(1, dtype=tf.int64))\n"),
        # PacktPublishing/Hands-On-Computer-Vision-with-TensorFlow-2 ch4_nb5: the augmentation's result is
        # thrown away (never runs), and the pipeline is only peeked at through `__iter__()`.
        Valid("import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse)\nds.map(augment)\n"
              "images, labels = next(ds.batch(32).__iter__())\n"),
        # tensorflow/addons losses_triplet: a TFDS read batched, then cast and scaled once per batch of 32;
        # tensorflow/ranking: labels masked with `tf.where` once per padded batch.
        Valid("import tensorflow as tf\nimport tensorflow_datasets as tfds\ndef _normalize_img(img, label):\n"
              "    img = tf.cast(img, tf.float32) / 255.\n    return (img, label)\n"
              "train = tfds.load(name='mnist', split='train', as_supervised=True)\n"
              "train = train.shuffle(1024).batch(32)\ntrain = train.map(_normalize_img)\nmodel.fit(train, epochs=5)\n",
              target_version=(2, 0)),
        Valid("import tensorflow as tf\nimport tensorflow_datasets as tfds\nds = tfds.load('mslr_web/10k_fold1', split='train')\n"
              "ds = ds.shuffle(buffer_size=1000).padded_batch(batch_size=32)\n"
              "ds = ds.map(lambda feature_map: (feature_map, tf.where(feature_map['_mask'], feature_map.pop('label'), -1.)))\n"
              "model.fit(ds, epochs=3)\n", target_version=(2, 0)),
        # czy36mengfei's TF2 tutorials (iris): `make_csv_dataset` batches, then the columns are stacked once per batch.
        Valid("import tensorflow as tf\ndef pack_features_vector(features, labels):\n"
              "    features = tf.stack(list(features.values()), axis=1)\n    return features, labels\n"
              "train = tf.data.experimental.make_csv_dataset(train_fp, 32, column_names=names, label_name=label, num_epochs=1)\n"
              "train = train.map(pack_features_vector)\nfor epoch in range(201):\n    for x, y in train:\n"
              "        train_step(x, y)\n", target_version=(2, 0)),
        # tensorflow/recommenders: features picked, scalar ids and flags converted: as cheap as the picks.
        Valid("import tensorflow as tf\nimport tensorflow_datasets as tfds\nratings = tfds.load('movie_lens/100k-ratings', split='train')\n"
              "ratings = ratings.map(lambda x: {'movie_id': tf.strings.to_number(x['movie_id']), 'user_id': x['user_id'],\n"
              "    'user_rating': int(x['user_rating'] >= 3), 'age': tf.strings.as_string(x['bucketized_user_age'])})\n"
              "model.fit(ratings.batch(4096).cache(), epochs=3)\n", target_version=(2, 0)),
        # google-research/simclr: each batch padded to the full batch size, its shapes checked.
        Valid("import tensorflow as tf\ndef pad_to_batch(dataset, batch_size):\n    def _pad_to_batch(*args):\n"
              "        flat_args = tf.nest.flatten(args)\n        for tensor in flat_args:\n"
              "            if tensor.shape.ndims is None:\n                raise ValueError('Unknown rank %s.' % tensor.name)\n"
              "        difference = batch_size - tf.shape(flat_args[0])[0]\n        for i, tensor in enumerate(flat_args):\n"
              "            flat_args[i] = tf.pad(tensor, [[0, difference]] + [[0, 0]] * (tensor.shape.ndims - 1))\n"
              "            flat_args[i].set_shape([batch_size] + tensor.shape.as_list()[1:])\n"
              "        return tf.nest.pack_sequence_as(args, flat_args)\n    return dataset.map(_pad_to_batch)\n"
              "ds = pad_to_batch(tf.data.TFRecordDataset(f).map(parse, 4).batch(64), 64)\nmodel.fit(ds, epochs=5)\n",
              target_version=(2, 0)),
        # Validation in two epochs of five (dragen1860's Keras lessons): not worth a user's time.
        Valid(
            "import tensorflow as tf\nval_ds = tf.data.TFRecordDataset(f).map(parse).batch(8)\n"
            "model.fit(train_ds, validation_data=val_ds, epochs=5, validation_freq=2)\n"
        ),
        # The same per-batch crop and flip (adventuresinML's CIFAR-10 notebooks), and `tf.div`, TF1's division.
        Valid("import tensorflow as tf\n(x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()\n"
              "ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(256).shuffle(10000)\n"
              "ds = ds.map(lambda x, y: (tf.div(tf.cast(x, tf.float32), 255.0), tf.reshape(tf.one_hot(y, 10), (-1, 10))))\n"
              "ds = ds.map(lambda x, y: (tf.image.central_crop(x, 0.75), y))\n"
              "ds = ds.map(lambda x, y: (tf.image.random_flip_left_right(x), y))\n"
              "model.fit(ds.repeat(), epochs=50, steps_per_epoch=195)\n"),
        # ml-design-patterns' transfer_learning: each element's scalar label one-hot encoded to 8 classes
        # while the (TFDS-decoded) image passes through: as cheap as picking it.
        Valid("import tensorflow as tf\nimport tensorflow_datasets as tfds\n"
              "train = tfds.load('tf_flowers', split='train', as_supervised=True)\n"
              "def label_format(image, label):\n    return (image, tf.one_hot(label, depth=8))\n"
              "train = train.map(label_format)\nmodel.fit(train.batch(32), epochs=5)\n"),
        # adventuresinML's tf_dataset_tutorial.py: the labels of sklearn's digits (1,437 rows) one-hot encoded
        # one by one: microseconds for the whole toy set.
        Valid("import tensorflow as tf\nfrom sklearn.datasets import load_digits\ndigits = load_digits(return_X_y=True)\n"
              "labels = digits[1][:int(len(digits[0]) * 0.8)]\n"
              "dx = tf.data.Dataset.from_tensor_slices(digits[0][:int(len(digits[0]) * 0.8)])\n"
              "dy = tf.data.Dataset.from_tensor_slices(labels).map(lambda z: tf.one_hot(z, 10))\n"
              "model.fit(tf.data.Dataset.zip((dx, dy)).shuffle(500).repeat().batch(30), epochs=10, steps_per_epoch=50)\n"),
        # google-research/pegasus TFDSDataset.transform: the supervised pair regrouped into a dict with a
        # constant flag, or the text picked beside constant fields: Python at trace time, no op that computes.
        Valid("import tensorflow as tf\nimport tensorflow_datasets as tfds\nclass TFDSDataset:\n"
              "    def transform(self, dataset):\n        if self.is_supervised:\n"
              "            return dataset.map(lambda x, y: {'inputs': x, 'targets': y, 'supervised': tf.constant(True)})\n"
              "        return dataset.map(lambda d: {'inputs': d['text'], 'targets': tf.constant(''),\n"
              "                                      'supervised': tf.constant(False)})\n"
              "    def build(self):\n        ds = self.transform(tfds.load('cnn_dailymail', split='train'))\n"
              "        return ds.shuffle(1000).repeat()\n", target_version=(1, 15)),
        # google-research/uda: the zipped batches' feature dicts merged (dict copies when traced), or
        # through a same-file helper that does the merge.
        Valid(_MERGED.format(merge="flatten_input", value="feature[key]"), target_version=(1, 14)),
        Valid(_MERGED.format(merge="lambda *f: flatten_input(*f)", value="feature[key]"), target_version=(1, 14)),
        # A merge that counts what it copies and flags the result: the counter is Python's, stepped once
        # when the map is traced, and the flag a literal constant.
        Valid("import tensorflow as tf\ndef merge(sup, unsup):\n    result = {}\n    copied = 0\n"
              "    for key in sup:\n        result['sup_' + key] = sup[key]\n        copied += 1\n"
              "    for key in unsup:\n        result['unsup_' + key] = unsup[key]\n        copied += 1\n"
              "    result['supervised'] = tf.constant(True)\n    return result\n"
              "ds = tf.data.Dataset.zip((tf.data.TFRecordDataset(a).map(parse, 4), tf.data.TFRecordDataset(b).map(parse, 4)))\n"
              "model.fit(ds.map(merge).batch(8), epochs=5)\n",
              target_version=(2, 0)),
        # One feature picked by its key and one-hot encoded while the image passes through: the label half.
        Valid("import tensorflow as tf\nds = tf.data.TFRecordDataset(files).map(parse, 4)\n"
              "ds = ds.map(lambda features: (features['image'], tf.one_hot(features['label'], 10)))\n"
              "model.fit(ds.batch(64).prefetch(1), epochs=50)\n"),
    )
    invalid = (
        # A layer that interpolates every image of the batch is work per batch worth overlapping.
        Invalid(_RESCALED_BATCHES.format(layer="tf.keras.layers.Resizing(224, 224)"), fixed=_RESCALED_BATCHES.format(
            layer="tf.keras.layers.Resizing(224, 224)").replace("map(lambda x, y: (normalization_layer(x), y))",
                "map(\n    lambda x, y: (normalization_layer(x), y),\n    num_parallel_calls=tf.data.AUTOTUNE,\n)"),
                unsafe=True),
        # The same map over a catalogue set whose name does not say toy.
        Invalid(_IRIS_2D.format(name="mnist"), fixed=_IRIS_2D.format(name="mnist").replace(
            ".map(iris2d)", ".map(\n    iris2d,\n    num_parallel_calls=tf.data.AUTOTUNE,\n)")),
        # Read again after it is bound (handed to a trainer out of sight, rebound and returned): reported.
        Invalid("import tensorflow as tf\ntrain = tf.data.TFRecordDataset(f).map(parse)\ntrainer.run(train)\n",
                fixed="import tensorflow as tf\ntrain = tf.data.TFRecordDataset(f).map(parse, num_parallel_calls=tf.data.AUTOTUNE)\n"
                "trainer.run(train)\n", unsafe=True),
        # tensorflow/similarity's TFDataSampler: `ds` is a parameter, rebound and read after the map.
        Invalid("import tensorflow as tf\ndef sampler(ds, load_fn):\n    ds = ds.map(load_fn)\n    return ds.batch(8).prefetch(1)\n"
                "model.fit(sampler(tf.data.TFRecordDataset(f), load), epochs=3)\n", fixed="import tensorflow as tf\n"
                "def sampler(ds, load_fn):\n    ds = ds.map(load_fn, num_parallel_calls=tf.data.AUTOTUNE)\n"
                "    return ds.batch(8).prefetch(1)\nmodel.fit(sampler(tf.data.TFRecordDataset(f), load), epochs=3)\n",
                unsafe=True),
        Invalid("import tensorflow as tf\ndef input_fn(files):\n    ds = tf.data.TFRecordDataset(files).map(parse)\n"
                "    ds = ds.shuffle(1000).repeat()\n    return ds.batch(32)\n",
                fixed="import tensorflow as tf\ndef input_fn(files):\n"
                "    ds = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=tf.data.AUTOTUNE)\n"
                "    ds = ds.shuffle(1000).repeat()\n    return ds.batch(32)\n", unsafe=True),
        # A char-RNN's 1,001-token chunks one-hot encoded whole, or sliced into input and target: 256 floats a
        # token, a quarter of a million per element; a small depth makes only a picked label cheap.
        Invalid(_CHAR_CHUNKS.format(encode="lambda seq: tf.one_hot(seq, VOCAB)"),
                fixed=_CHAR_CHUNKS.format(encode="lambda seq: tf.one_hot(seq, VOCAB)").replace(
                    "VOCAB))\n", "VOCAB), num_parallel_calls=tf.data.AUTOTUNE)\n")),
        Invalid(_CHAR_CHUNKS.format(encode=_SLICED_ONE_HOTS),
                fixed=_CHAR_CHUNKS.format(encode=f"\n    {_SLICED_ONE_HOTS},\n    num_parallel_calls=tf.data.AUTOTUNE,\n")),
        # A one-hot to a depth the code does not show is small (a vocabulary's size), and a per-batch resize
        # interpolates every pixel: work each.
        Invalid("import tensorflow as tf\nimport tensorflow_datasets as tfds\n"
                "train = tfds.load('tf_flowers', split='train', as_supervised=True)\n"
                "def label_format(image, label):\n    return (image, tf.one_hot(label, depth=vocab_size))\n"
                "train = train.map(label_format)\nmodel.fit(train.batch(32), epochs=5)\n",
                fixed="import tensorflow as tf\nimport tensorflow_datasets as tfds\n"
                "train = tfds.load('tf_flowers', split='train', as_supervised=True)\n"
                "def label_format(image, label):\n    return (image, tf.one_hot(label, depth=vocab_size))\n"
                "train = train.map(label_format, num_parallel_calls=tf.data.AUTOTUNE)\nmodel.fit(train.batch(32), epochs=5)\n"),
        Invalid("import tensorflow as tf\n(x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()\n"
                "ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(256).shuffle(10000)\n"
                "ds = ds.map(lambda x, y: (tf.image.resize(x, (224, 224)), y))\n"
                "model.fit(ds.repeat(), epochs=50, steps_per_epoch=195)\n",
                fixed="import tensorflow as tf\n(x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()\n"
                "ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(256).shuffle(10000)\n"
                "ds = ds.map(\n    lambda x, y: (tf.image.resize(x, (224, 224)), y),\n    num_parallel_calls=tf.data.AUTOTUNE,\n)\n"
                "model.fit(ds.repeat(), epochs=50, steps_per_epoch=195)\n"),
        # A TF1 step loop whose helper runs the train op: the evaluation loop elsewhere does not make
        # the iterator evaluation input.
        Invalid(
            "import tensorflow as tf\nit = tf.data.TFRecordDataset(f).map(parse).batch(32).make_one_shot_iterator()\n"
            "x, y = it.get_next()\ntrain_op = tf.train.AdamOptimizer(1e-3).minimize(loss_of(model(x), y))\n"
            "def run_step(sess):\n    return sess.run([loss, train_op])\n"
            "def evaluate(sess):\n    for _ in range(10):\n        print(sess.run(accuracy))\n"
            "with tf.Session() as sess:\n    for step in range(100000):\n        run_step(sess)\n    evaluate(sess)\n",
        ),
        Invalid(
            "import tensorflow as tf\nds = tf.data.Dataset.range(8)\nds = ds.map(lambda x: x * 2)\n",
            fixed="import tensorflow as tf\nds = tf.data.Dataset.range(8)\nds = ds.map(lambda x: x * 2, num_parallel_calls=tf.data.AUTOTUNE)\n",
        ),
        Invalid(
            "import tensorflow as tf\n\ndef augment(x):\n    return tf.image.random_flip_left_right(x)\n\n"
            "ds = tf.data.Dataset.from_tensor_slices(images).map(augment)\n",
            fixed=None,
        ),
        Invalid(
            "import tensorflow as tf\n\ndef augment(x):\n    return tf.image.random_flip_left_right(x)\n\n"
            "ds = tf.data.Dataset.from_tensor_slices(images).map(augment)\n",
            unsafe=True,
            fixed="import tensorflow as tf\n\ndef augment(x):\n    return tf.image.random_flip_left_right(x)\n\n"
            "ds = tf.data.Dataset.from_tensor_slices(images).map(\n    augment,\n    num_parallel_calls=tf.data.AUTOTUNE,\n)\n",
        ),
        # Validation data read every epoch.
        Invalid(
            "import tensorflow as tf\nval_ds = tf.data.TFRecordDataset(f).map(parse).batch(8)\n"
            "model.fit(train_ds, validation_data=val_ds, epochs=20)\n",
            fixed="import tensorflow as tf\nval_ds = tf.data.TFRecordDataset(f).map(\n    parse,\n"
            "    num_parallel_calls=tf.data.AUTOTUNE,\n).batch(8)\nmodel.fit(train_ds, validation_data=val_ds, epochs=20)\n",
            unsafe=True,
        ),
        # After `batch` too, a map that computes (resizing every image of the batch) gains from parallelism.
        Invalid(
            "import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse, 4).batch(32)\n"
            "ds = ds.map(lambda x, y: (tf.image.resize(x, [224, 224]), y))\nmodel.fit(ds, epochs=5)\n",
            fixed="import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse, 4).batch(32)\n"
            "ds = ds.map(\n    lambda x, y: (tf.image.resize(x, [224, 224]), y),\n    num_parallel_calls=tf.data.AUTOTUNE,\n)\n"
            "model.fit(ds, epochs=5)\n",
        ),
        # The same preprocess mapped per element, before `batch`: 60,000 calls per epoch, sequential on 2.0.
        Invalid(_MNIST_PER_BATCH.format(order="map(preprocess).shuffle(60000).batch(128)"), target_version=(2, 0),
                fixed=_MNIST_PER_BATCH.format(
                    order="map(\n    preprocess,\n    num_parallel_calls=tf.data.experimental.AUTOTUNE,\n).shuffle(60000).batch(128)")),
        # lmoroney/dlaicourse's TFLite course: TF 2.0's weighted subsplits, unpacked one pipeline per name.
        Invalid(
            "import tensorflow as tf\nimport tensorflow_datasets as tfds\n"
            "splits = tfds.Split.ALL.subsplit(weighted=(80, 10, 10))\n"
            "splits, info = tfds.load('cats_vs_dogs', with_info=True, as_supervised=True, split=splits)\n"
            "(train_examples, validation_examples, test_examples) = splits\n"
            "model.fit(train_examples.map(lambda x, y: (tf.image.resize(x, (224, 224)), y)).batch(32).prefetch(1), epochs=5)\n",
            target_version=(2, 0),
            fixed="import tensorflow as tf\nimport tensorflow_datasets as tfds\n"
            "splits = tfds.Split.ALL.subsplit(weighted=(80, 10, 10))\n"
            "splits, info = tfds.load('cats_vs_dogs', with_info=True, as_supervised=True, split=splits)\n"
            "(train_examples, validation_examples, test_examples) = splits\n"
            "model.fit(train_examples.map(\n    lambda x, y: (tf.image.resize(x, (224, 224)), y),\n"
            "    num_parallel_calls=tf.data.experimental.AUTOTUNE,\n).batch(32).prefetch(1), epochs=5)\n",
        ),
        # Arithmetic on the repeated value, or a choice between values computed from the element, is work.
        Invalid("import tensorflow as tf\nds = tf.data.Dataset.range(8).map(lambda z: [tf.square(z)] * 4)\n",
                fixed="import tensorflow as tf\nds = tf.data.Dataset.range(8).map(\n    lambda z: [tf.square(z)] * 4,\n"
                "    num_parallel_calls=tf.data.AUTOTUNE,\n)\n"),
        Invalid("import tensorflow as tf\nds = tf.data.Dataset.counter().map(lambda x: x if x < 5 else tf.square(x))\n",
                fixed="import tensorflow as tf\nds = tf.data.Dataset.counter().map(\n    lambda x: x if x < 5 else tf.square(x),\n"
                "    num_parallel_calls=tf.data.AUTOTUNE,\n)\n"),
        # A map before `cache()` is reported however many epochs read the cache: the first epoch waits on
        # it (the labels' decision: dragen1860's py_function tokenizer, the udacity and distribute tutorials).
        Invalid(_CACHED.format(map="tf_encode", epochs="20"), count=1),
        # tensorflow/recommenders sequential_retrieval: the parsing spec declares the feature a vector of
        # ten ids, so converting it is work per id, not a scalar's conversion (the parse map is reported too).
        Invalid(_SEQUENTIAL_RETRIEVAL, count=2, target_version=(2, 0), fixed=_SEQUENTIAL_RETRIEVAL_FIXED),
        # A conversion of something computed, or of the whole element, is work.
        Invalid("import tensorflow as tf\nds = tf.data.TextLineDataset(f).map(lambda x: {'n': tf.strings.to_number(tf.strings.split(x))})\n"
                "model.fit(ds.batch(32), epochs=5)\n", target_version=(2, 0),
                fixed="import tensorflow as tf\nds = tf.data.TextLineDataset(f).map(\n"
                "    lambda x: {'n': tf.strings.to_number(tf.strings.split(x))},\n"
                "    num_parallel_calls=tf.data.experimental.AUTOTUNE,\n)\nmodel.fit(ds.batch(32), epochs=5)\n"),
        # A map after `batch` from a file that decodes each image of the batch is work.
        Invalid("import tensorflow as tf\nds = tf.data.TFRecordDataset(f).batch(32)\n"
                "ds = ds.map(lambda x: tf.cast(tf.io.decode_raw(x, tf.uint8), tf.float32) / 255.)\nmodel.fit(ds, epochs=5)\n",
                target_version=(2, 0),
                fixed="import tensorflow as tf\nds = tf.data.TFRecordDataset(f).batch(32)\nds = ds.map(\n"
                "    lambda x: tf.cast(tf.io.decode_raw(x, tf.uint8), tf.float32) / 255.,\n"
                "    num_parallel_calls=tf.data.experimental.AUTOTUNE,\n)\nmodel.fit(ds, epochs=5)\n"),
        # tensorflow/similarity tfdata_sampler.py: the warm-up path's augmentation (random) feeds
        # `choose_from_datasets` inside a helper; the sampler calls it on its training pipeline.
        Invalid(
            "import tensorflow as tf\ndef augment(x, y):\n    return tf.image.random_flip_left_right(x), y\n"
            "def apply_augmenter_ds(ds, augmenter, warmup):\n    aug_ds = ds.map(augmenter).skip(warmup)\n"
            "    selector = tf.data.Dataset.counter().map(lambda x: tf.cast(0, tf.int64) if x < warmup else tf.cast(1, tf.int64))\n"
            "    return tf.data.Dataset.choose_from_datasets([ds.take(warmup), aug_ds], selector)\n"
            "ds = apply_augmenter_ds(tf.data.TFRecordDataset(files).map(parse, 4), augment, 100)\n"
            "model.fit(ds.repeat().batch(32).prefetch(1), epochs=10)\n",
        ),
        # A helper that decodes is work, however short the lambda that calls it.
        Invalid(
            "import tensorflow as tf\ndef decode(example, index):\n    return tf.io.decode_jpeg(example), index\n"
            "ds = tf.data.TFRecordDataset(f).map(lambda ex: decode(ex, 1))\nmodel.fit(ds, epochs=5)\n",
            fixed="import tensorflow as tf\ndef decode(example, index):\n    return tf.io.decode_jpeg(example), index\n"
            "ds = tf.data.TFRecordDataset(f).map(\n    lambda ex: decode(ex, 1),\n    num_parallel_calls=tf.data.AUTOTUNE,\n)\n"
            "model.fit(ds, epochs=5)\n",
        ),
        # The same merge that also computes on what it copies (a cast of every feature) is work.
        Invalid(_MERGED.format(merge="flatten_input", value="tf.cast(feature[key], tf.float32)"),
                target_version=(1, 14), count=1,
                fixed=_MERGED.format(merge="flatten_input", value="tf.cast(feature[key], tf.float32)").replace(
                    "d.map(flatten_input)", "d.map(flatten_input, num_parallel_calls=tf.data.experimental.AUTOTUNE)")),
        # Strings of the element joined (a T5-style task prefix): a string op per element, not a key built in Python.
        Invalid("import tensorflow as tf\ndef format_str(ex):\n    question = ex['question']\n"
                "    return {'inputs': 'question: ' + question + ' context: ' + ex['context']}\n"
                "ds = tf.data.TFRecordDataset(f).map(parse, 4).map(format_str)\nmodel.fit(ds.batch(8), epochs=5)\n",
                target_version=(2, 0), count=1,
                fixed="import tensorflow as tf\ndef format_str(ex):\n    question = ex['question']\n"
                "    return {'inputs': 'question: ' + question + ' context: ' + ex['context']}\n"
                "ds = tf.data.TFRecordDataset(f).map(parse, 4).map(\n    format_str,\n    num_parallel_calls=tf.data.experimental.AUTOTUNE,\n)\n"
                "model.fit(ds.batch(8), epochs=5)\n"),
        # A written prefix joined to what an op computes from the element: the op runs per element.
        Invalid("import tensorflow as tf\ndef summarize(ex):\n    return {'inputs': 'summarize: ' + tf.strings.lower(ex['article'])}\n"
                "ds = tf.data.TFRecordDataset(f).map(parse, 4).map(summarize)\nmodel.fit(ds.batch(8), epochs=5)\n",
                target_version=(2, 0), count=1,
                fixed="import tensorflow as tf\ndef summarize(ex):\n    return {'inputs': 'summarize: ' + tf.strings.lower(ex['article'])}\n"
                "ds = tf.data.TFRecordDataset(f).map(parse, 4).map(\n    summarize,\n"
                "    num_parallel_calls=tf.data.experimental.AUTOTUNE,\n)\nmodel.fit(ds.batch(8), epochs=5)\n"),
        # Arithmetic on the element written in place (`image /= 255.0`) is an op per element, as `image / 255.0` is.
        Invalid("import tensorflow as tf\ndef scale(features):\n    image = features['image']\n    image /= 255.0\n"
                "    return image, features['label']\nds = tf.data.TFRecordDataset(f).map(parse, 4).map(scale)\n"
                "model.fit(ds.batch(8), epochs=5)\n", target_version=(2, 0), count=1,
                fixed="import tensorflow as tf\ndef scale(features):\n    image = features['image']\n    image /= 255.0\n"
                "    return image, features['label']\nds = tf.data.TFRecordDataset(f).map(parse, 4).map(\n    scale,\n"
                "    num_parallel_calls=tf.data.experimental.AUTOTUNE,\n)\nmodel.fit(ds.batch(8), epochs=5)\n"),
        # A constant made from the element is no literal: `tf.constant` of a tensor copies it.
        Invalid("import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(lambda x: {'inputs': tf.constant(x)})\n"
                "model.fit(ds.batch(8), epochs=5)\n", target_version=(2, 0), count=1,
                fixed="import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(\n    lambda x: {'inputs': tf.constant(x)},\n"
                "    num_parallel_calls=tf.data.experimental.AUTOTUNE,\n)\nmodel.fit(ds.batch(8), epochs=5)\n"),
        # A map on a zip that computes (resizing each image beside its mask) is per-element work.
        Invalid(
            "import tensorflow as tf\nds = tf.data.Dataset.zip((images, masks))\n"
            "ds = ds.map(lambda i, m: (tf.image.resize(i, [128, 128]), tf.image.resize(m, [128, 128])))\n"
            "model.fit(ds.batch(8).prefetch(1), epochs=20)\n",
            fixed="import tensorflow as tf\nds = tf.data.Dataset.zip((images, masks))\n"
            "ds = ds.map(\n    lambda i, m: (tf.image.resize(i, [128, 128]), tf.image.resize(m, [128, 128])),\n"
            "    num_parallel_calls=tf.data.AUTOTUNE,\n)\nmodel.fit(ds.batch(8).prefetch(1), epochs=20)\n",
        ),
        # zzh8829/yolov3-tf2: the parse reads a `StaticHashTable` passed through the helper's parameter;
        # `LookupTableFindV2` is stateful, so TensorFlow 2.12 leaves the map sequential.
        # On TensorFlow 1.11 (BERT's pin) no AUTOTUNE spelling exists for sure: reported, no fix.
        Invalid(
            "import tensorflow as tf\nds = tf.data.TFRecordDataset(files)\nds = ds.map(lambda r: tf.io.parse_single_example(r, spec))\n"
            "for x in ds:\n    train_step(x)\n",
            target_version=(1, 11),
        ),
        Invalid(
            _YOLO_PARSE.format(vocab="tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(\n"
                               "        class_file, tf.string, 0, tf.int64, -1, delimiter='\\n'), -1)"),
            target_version=(2, 12),
        ),
        Invalid(
            "import tensorflow as tf2\nfiles = tf2.data.Dataset.list_files('*.tfrecord')\n"
            "ds = files.interleave(tf2.data.TFRecordDataset, cycle_length=4)\n",
            fixed="import tensorflow as tf2\nfiles = tf2.data.Dataset.list_files('*.tfrecord')\n"
            "ds = files.interleave(\n    tf2.data.TFRecordDataset,\n    cycle_length=4,\n    num_parallel_calls=tf2.data.AUTOTUNE,\n)\n",
        ),
        # No cycle_length: the runtime's, which the fix changes (cores, then a third of them), reorders.
        Invalid(
            "import tensorflow as tf\nfiles = tf.data.Dataset.list_files('*.tfrecord')\n"
            "ds = files.interleave(tf.data.TFRecordDataset)\n",
            fixed=None,
        ),
        Invalid(
            "import tensorflow as tf\nfiles = tf.data.Dataset.list_files('*.tfrecord')\n"
            "ds = files.interleave(tf.data.TFRecordDataset, cycle_length=tf.data.AUTOTUNE)\n",
            unsafe=True,
            fixed="import tensorflow as tf\nfiles = tf.data.Dataset.list_files('*.tfrecord')\n"
            "ds = files.interleave(\n    tf.data.TFRecordDataset,\n    cycle_length=tf.data.AUTOTUNE,\n"
            "    num_parallel_calls=tf.data.AUTOTUNE,\n)\n",
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        if context.is_test_code:
            return
        # Evaluation or inference modules, but for what a `fit` there trains on (`efficient_serving.ipynb`).
        named_otherwise = path_purpose(context.filename) is not Purpose.UNKNOWN
        pipelines = context.model.pipelines
        for op, states in pipelines.ops("map", "interleave"):
            call = op.call
            if has_star_args(call) or argument(call, "num_parallel_calls", _POSITION[op.name]) is not None:
                continue
            if named_otherwise and not any(pipelines.trains_whatever_the_path(c) for c in pipelines.consumptions_of(call)):
                continue
            if not pipelines.serves(call, states, self.purposes, context.filename):
                continue  # evaluation run once, inspection, a one-off pass, `eval_input_fn`, a `take(3)` preview
            if any(pipelines.replays_one_element(state, call) for state in states):
                continue  # `Dataset.range(1).repeat().map(make_fake_batch)`: synthetic input
            if _is_true(argument(call, "synchronous", None)):
                continue
            function = argument(call, "map_func", 0)
            if function is None or is_trivial_function(function.value, context.model, pipelines.scope_of(call)):
                continue  # `lambda x, y: x`: picking and slicing gains nothing from parallelism
            if runs_no_ops(function.value, context.model, pipelines.scope_of(call)):
                continue  # merging zipped feature dicts, adding constant fields: Python at trace time, no op
            if all(pipelines.runs_per_batch(state, call) or pipelines.first_on_zip(state, call) for state in states) \
                    and only_moves_values(function.value, context.model, pipelines.scope_of(call)):
                # `ds.batch(32).map(split_window)`: once per batch, only moving values around;
                # `Dataset.zip(parts).map(lambda *w: tf.stack(w))`: stacking what the zip paired
                continue
            if all(pipelines.cheap_batch_map(state, call) for state in states):
                continue  # batches cast, scaled, one-hot encoded, padded: microseconds per batch
            if all(pipelines.cheap_on_toy_set(state, op) for state in states):
                continue  # `from_tensor_slices(digits_labels).map(lambda z: tf.one_hot(z, 10))`: a toy set's labels
            if pipelines.cheap_before_cache(states, op):
                continue  # `map(scale).cache()`: a cast and a division per image, in the first epoch only
            effects = context.model.effects.of_expression(function.value, pipelines.scope_of(call))
            reorderable = _is_false(argument(call, "deterministic", None)) or any(
                any(later.name == "with_options" for later in state.ops_after(call)) for state in states
            ) or op.name == "interleave" and not _states_cycle_length(context, call)
            stateful = effects.stateful
            rewritten = op.name == "map" and effects.provably_stateless
            if rewritten and _parallelises_stateless_maps(context):
                continue  # the runtime's map_parallelization does what the fix would
            message = f"`Dataset.{op.name}` without `num_parallel_calls` processes one element at a time"
            if stateful:
                message += "; its function is stateful, so TensorFlow will not parallelise it automatically"
            elif rewritten and context.settings.target_version is None:
                message += " (on TensorFlow < 2.7, or with autotune off; later versions parallelise a stateless map themselves)"
            safe = effects.provably_stateless and not reorderable
            yield self.finding(message, call_method_span(call), call, self._fix(context, call, safe))

    def _fix(self, context: RuleContext, call: cst.Call, safe: bool):
        spelling = autotune(context.model, context.settings, call)
        edit = add_keyword_argument(call, "num_parallel_calls", spelling[0]) if spelling else None
        if spelling is None or edit is None:
            return None
        wrapped = wrapped_keyword_argument(context.model, call, "num_parallel_calls", spelling[0])
        return FixPlan(SAFE if safe else UNSAFE, f"Pass `num_parallel_calls={spelling[0]}`", (edit,), spelling[1],
                       wrapped)


def _states_cycle_length(context: RuleContext, call: cst.Call) -> bool:
    """Whether an ``interleave`` call's ``cycle_length`` is a positive number the code states. Left
    to the runtime (absent, or AUTOTUNE), it is the number of cores for a sequential interleave and a
    third of them for a parallel one (TensorFlow's ``ComputeCycleLength``): the fix then interleaves
    fewer inputs at a time and the elements come out in another order."""
    cycle_length = argument(call, "cycle_length", 1)
    if cycle_length is None:
        return False
    known = context.model.integer_values.integer(cycle_length.value, context.model.site_of(call))
    return known is not None and known.value > 0


def _parallelises_stateless_maps(context: RuleContext) -> bool:
    version = context.settings.target_version
    return version is not None and version >= (2, 7) and context.model.dataset_options.keeps("map_parallelization")


def _is_true(arg) -> bool:
    return arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "True"


def _is_false(arg) -> bool:
    return arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "False"
