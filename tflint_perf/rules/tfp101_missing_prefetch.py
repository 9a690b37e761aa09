"""TFP101 missing-prefetch: a pipeline consumed for training that does not end with ``prefetch``."""

from __future__ import annotations

from typing import Iterable, Set

import libcst as cst

from tflint_perf.analysis.files import path_purpose
from tflint_perf.analysis.pipelines.values import State
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.text.diagnostics import SAFE, Finding, FixPlan
from tflint_perf.fixes.building import append_op, prefetch_buffer
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid, call_method_span, target_version_option


# chiphuyen/stanford-tensorflow-tutorials, 04_word2vec_eager.py (`{step}`: the loop body's work).
_WORD2VEC_EAGER = (
    "import tensorflow as tf\nimport tensorflow.contrib.eager as tfe\n\ndef gen():\n"
    "    yield from word2vec_utils.batch_gen(URL, VOCAB_SIZE, BATCH_SIZE)\n\ndef main():\n"
    "    dataset = tf.data.Dataset.from_generator(gen, (tf.int32, tf.int32))\n    num_train_steps = 0\n"
    "    while num_train_steps < 100000:\n        for center, target in tfe.Iterator(dataset):\n"
    "            {step}\n            num_train_steps += 1\n"
)
# google-research/big_transfer: `get_data` ends in a prefetch; `{after}` is mapped on each batch after it.
_PER_BATCH_CIFAR = (
    "import tensorflow as tf\n(x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()\n"
    "ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64).shuffle(10000)\n"
    "ds = ds.map(lambda x, y: ({first}, y))\n"
    "ds = ds.map(lambda x, y: (tf.image.central_crop(x, 0.75), y))\n"
    "ds = ds.map(lambda x, y: (tf.image.random_flip_left_right(x), y))\n"
    "model.fit(ds.repeat(), epochs=30, steps_per_epoch=195)\n"
)
_DIGITS = (
    "import tensorflow as tf\nfrom sklearn.datasets import load_digits\ndigits = {load}\n"
    "images = digits[0][:int(len(digits[0]) * 0.8)]\nlabels = digits[1][:int(len(digits[0]) * 0.8)]\n"
    "dx = tf.data.Dataset.from_tensor_slices(images)\n"
    "dy = tf.data.Dataset.from_tensor_slices(labels).map(lambda z: tf.one_hot(z, 10))\n"
    "ds = tf.data.Dataset.zip((dx, dy)).shuffle(500).repeat().batch(30)\n"
    "model.fit(ds, epochs=10, steps_per_epoch=50)\n"
)
_CSV_ENSEMBLE = (
    "import tensorflow as tf\nFEATURES = ['is_male', 'mother_age']\n"
    "train_data = tf.data.experimental.make_csv_dataset('train.csv', 32, label_name='weight')\n"
    "def stack_features(features, label):\n    for feature in FEATURES:\n        for i in range(3):\n"
    "            {body}\n    return features, label\n"
    "ensemble_data = train_data.map(stack_features).repeat(1)\n"
    "model.fit(ensemble_data.shuffle(500), epochs=1)\n"
)
_SLICED_COPY = "features['ensemble_' + str(i + 1) + '_' + feature] = features[feature][:, :1]"
_DANN = (
    "import functools\nimport tensorflow as tf\n"
    "source = tf.data.Dataset.from_tensor_slices((x_source, y_source)).shuffle(1000).repeat().batch(16)\n"
    "target = tf.data.Dataset.from_tensor_slices(x_target).shuffle(1000).repeat().batch(16)\n"
    "training_dataset = tf.data.Dataset.zip((source, target))\n"
    "def prepare(source_data, target_images, main_head_name='main'):\n"
    "    source_images, source_labels = source_data\n    num_target = tf.shape(target_images)[0]\n"
    "    batch_images = {work}\n"
    "    target_labels = tf.zeros([num_target, *source_labels.shape[1:]], dtype=source_labels.dtype)\n"
    "    batch_labels = tf.concat((source_labels, target_labels), axis=0)\n"
    "    return batch_images, {{main_head_name: batch_labels}}\n"
    "prepare_fn = functools.partial(prepare, main_head_name='class')\n"
    "training_dataset = training_dataset.map(prepare_fn, num_parallel_calls=4)\n"
    "model.fit(training_dataset, epochs=30, steps_per_epoch=100)\n"
)
_ZIPPED_PARAMETER = (
    "import tensorflow as tf\ndef train(model, images, labels):\n"
    "    label_ds = tf.data.Dataset.from_tensor_slices(labels)\n"
    "    ds = tf.data.Dataset.zip(({images}, label_ds)).batch(32)\n    model.fit(ds, epochs=10)\n"
)
_BIT = (
    "import tensorflow as tf\nimport tensorflow_datasets as tfds\n"
    "def reshape_for_keras(features, batch_size, crop_size):\n"
    "    features['image'] = tf.reshape(features['image'], (batch_size, crop_size, crop_size, 3))\n"
    "    features['label'] = tf.reshape(features['label'], (batch_size, -1))\n"
    "    return (features['image'], features['label'])\n"
    "def get_data(batch_size):\n    data = tfds.load('cifar10', split='train').repeat().shuffle(10000)\n"
    "    data = data.map(decode_and_augment, num_parallel_calls=8).batch(batch_size, drop_remainder=True)\n"
    "    return data.prefetch(1)\n"
    "data_train = get_data(512).map({after})\nmodel.fit(data_train, epochs=10, steps_per_epoch=100)\n"
)

_TRAIN_AND_EVALUATE = (
    "import tensorflow as tf\ndef {helper}(batch_size=32):\n"
    "    train_dataset = (tf.data.TextLineDataset('gs://b/train_set.csv').\n"
    "        map(decode_csv)).batch(batch_size)\n"
    "    model = tf.keras.Sequential(layers)\n    model.fit(train_dataset, epochs=10)\n    return model\n"
    "model = {helper}()\n"
)
_PREFETCH_THEN_CACHE = (
    "import tensorflow as tf\ndef load(filenames, nb_epochs):\n    dataset = tf.data.TFRecordDataset(filenames, 'GZIP')\n"
    "    dataset = dataset.map(read_tfrecord, num_parallel_calls=32).batch(64)\n"
    "    dataset = dataset.prefetch(tf.data.experimental.AUTOTUNE)\n    dataset = dataset.{cache}\n"
    "    return dataset.repeat(nb_epochs)\n"
    "model.fit(load(files, 10), steps_per_epoch=100, epochs=10)\n"
)
_CATALOGUE_TOY = (
    "import tensorflow as tf\nimport tensorflow_datasets as tfds\n{load}\nfor repeat in range(1200):\n"
    "    for batch in data.batch(32, drop_remainder=True):\n        train_step(batch['features'], batch['label'])\n"
)
_KERAS_TOY = (
    "import tensorflow as tf\n(x, y), _ = tf.keras.datasets.{set}.load_data()\n"
    "ds = tf.data.Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a / 100., b)).shuffle(400).batch(32)\n"
    "model.fit(ds, epochs=100)\n"
)

# Dive-into-DL's semantic segmentation notebook: VOC images decoded and batched; `{body}` reads them.
_VOC = (
    "import tensorflow as tf\ndef load(path, label):\n    return tf.image.decode_jpeg(tf.io.read_file(path)), label\n"
    "voc_train = tf.data.Dataset.from_tensor_slices((paths, labels)).map(load, num_parallel_calls=4)\n"
    "voc_train = voc_train.batch(64)\nfor x, y in iter(voc_train):\n{body}"
)
# Packt's TF 2.0 Quick Start Guide: a TFRecord file written, then read back through TF1's iterator API.
_ONE_RECORD = (
    "import tensorflow as tf\ndataset = tf.data.TFRecordDataset('./students.tfrecords')\n"
    "dataset = dataset.map(parse_function, num_parallel_calls=4)\n"
    "iterator = tf.compat.v1.data.make_one_shot_iterator(dataset)\n{reads}"
)
# google-research/fixmatch's scripts/create_split.py: each record's label read out through a session,
# collected, then a labelled split written; `{step}` is what else the loop does with the batch.
_CREATE_SPLIT = (
    "import tensorflow as tf\n\ndef get_class(serialized_example):\n"
    "    return tf.parse_single_example(serialized_example, features={{'label': tf.FixedLenFeature([], tf.int64)}})['label']\n\n"
    "def main(argv):\n    count = 0\n    id_class = []\n"
    "    dataset = tf.data.TFRecordDataset(argv[1:]).map(get_class, 4).batch(1 << 10)\n"
    "    it = dataset.make_one_shot_iterator().get_next()\n    try:\n        with tf.Session() as session:\n"
    "            while 1:\n                for i in session.run(it):\n                    id_class.append(i)\n"
    "                    count += 1\n{step}    except tf.errors.OutOfRangeError:\n        pass\n"
    "    write_split(id_class, count)\n"
)
_SESSION_STEPS = (
    "item = iterator.get_next()\nloss = build(item)\ntrain_op = tf.compat.v1.train.AdamOptimizer().minimize(loss)\n"
    "with tf.compat.v1.Session() as sess:\n    for step in range(1000):\n        sess.run(train_op)\n"
)

# snowkylin/tensorflow-handbook distributed/multi_gpu.py: `{strategy}` holds the strategy the model is built in.
_STRATEGY_FIT = (
    "import tensorflow as tf\nimport tensorflow_datasets as tfds\n{strategy}\n"
    "def resize(image, label):\n    return tf.image.resize(image, [224, 224]) / 255.0, label\n"
    "dataset = tfds.load('cats_vs_dogs', split='train', as_supervised=True)\n"
    "dataset = dataset.map(resize).shuffle(1024).batch(64)\n"
    "with strategy.scope():\n    model = tf.keras.applications.MobileNetV2(weights=None, classes=2)\n"
    "    model.compile(optimizer='adam', loss='sparse_categorical_crossentropy')\n"
    "model.fit(dataset, epochs=5)\n"
)

# wizyoung/YOLOv3_TensorFlow train.py: a reinitializable TF1 iterator switched to the validation pipeline
# by `sess.run(val_init_op)` {where}; `val.prefetch(4)` alone discards its result.
_REINITIALIZED = (
    "import tensorflow as tf\ntrain = tf.data.TextLineDataset(a).batch(8).map(load, 4).prefetch(4)\n"
    "val = tf.data.TextLineDataset(b).batch(1).map(load, 4)\nval.prefetch(4)\n"
    "iterator = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)\n"
    "train_init_op = iterator.make_initializer(train)\nval_init_op = iterator.make_initializer(val)\n"
    "x, y = iterator.get_next()\ntrain_op = tf.train.AdamOptimizer(1e-3).minimize(loss_of(model(x), y))\n"
    "with tf.Session() as sess:\n    for epoch in range(100):\n        sess.run(train_init_op)\n"
    "        for step in range(1000):\n            sess.run(train_op)\n{val}"
)
_VAL_EVERY_EPOCH = "        sess.run(val_init_op)\n        for j in range(500):\n            sess.run(loss)\n"
_VAL_ONCE = "    sess.run(val_init_op)\n    for j in range(500):\n        sess.run(loss)\n"
# One batch read after the switch, every epoch: the step waits for it however the pipeline ends.
_VAL_ONE_BATCH = "        sess.run(val_init_op)\n        print(sess.run(loss))\n"

# google-research/uda image/data.py: the supervised and unsupervised pipelines, {ending}, gathered by
# `append` into a list that `Dataset.zip` pairs; the map after the zip only merges the feature dicts.
_UDA = (
    "import tensorflow as tf\ndef get_dataset(files, bsz):\n"
    "    d = tf.data.TFRecordDataset(files).map(parser, num_parallel_calls=32).batch(bsz)\n"
    "    return d{ending}\n"
    "def input_fn(params):\n    datasets = []\n    datasets.append(get_dataset(sup_files, 64))\n"
    "    if unsup_ratio > 0:\n        datasets.append(get_dataset(aug_files, 64 * unsup_ratio))\n"
    "    def flatten_input(*features):\n        result = {{}}\n        for feature in features:\n"
    "            for key in feature:\n                result[key] = feature[key]\n        return result\n"
    "    if len(datasets) > 1:\n        dataset = tf.data.Dataset.zip(tuple(datasets))\n"
    "        dataset = dataset.map(flatten_input)\n    else:\n        dataset = datasets[0]\n"
    "    return dataset\nestimator.train(input_fn=input_fn, max_steps=400000)\n"
)

class MissingPrefetch(Rule):
    code = "TFP101"
    name = "missing-prefetch"
    summary = "tf.data pipeline consumed for training without `prefetch` at its end"
    fix_availability = "sometimes"
    options = (target_version_option(
        "From TensorFlow 2.12 the runtime appends a prefetch itself (unless autotune or the `inject_prefetch` rewrite is off), so such pipelines are not reported; before 2.4 the fix writes `tf.data.experimental.AUTOTUNE` (`tf.data.AUTOTUNE` does not exist there)."
    ),)

    what_it_does = """
Checks for `tf.data` pipelines that are consumed for training (`model.fit`, a training `for`
loop, `iter()` or TF 1.x eager's `tfe.Iterator()`, a TF1 iterator, the `input_fn` given to
`Estimator.train` or `TrainSpec`, also as a factory's returned closure or a lambda) whose last
transformation is not `prefetch`.

A pipeline read through a `tf.distribute` strategy is not reported: the strategy's distributed
iterator prefetches onto each device itself (the distributed-input guide). That is a dataset given to
`strategy.experimental_distribute_dataset`, and one given to `fit` or `evaluate` of a model built inside
`with strategy.scope():` of a `tf.distribute` strategy (`MirroredStrategy`, `TPUStrategy`,
`MultiWorkerMirroredStrategy`, `OneDeviceStrategy`...; analysis/distribution.py), whose data handler
distributes it, and the input function of an Estimator whose `config` is a `RunConfig` with `train_distribute`
set to such a strategy (trained by `estimator.train` or `train_and_evaluate`). A strategy name that may also be the default strategy (`get_strategy()` off a TPU),
DTensor, Horovod and hand-placed `tf.device` loops prefetch nothing for the user: still reported.

What the consumer is for decides (analysis/purpose.py): `fit` and loops that train (they call a
`train_step`, `apply_gradients`, open a `GradientTape`) count, and so does evaluation the model
waits on every epoch (analysis/pipelines/intent.py): `fit(..., validation_data=val_ds, epochs=10)`,
or a `for x, y in test_ds:` loop inside the loop that trains, or a TF1 reinitializable iterator switched
to the validation pipeline (`sess.run(val_init_op)`) inside the loop that trains, then read by a loop of
session runs (one `sess.run(loss)` after the switch reads a single batch: not reported; a `val_ds.prefetch(n)`
whose result is discarded prefetches nothing: the pipeline the iterator reads is the one bound to the name). Pipelines consumed only by `evaluate`,
`predict`, `fit`'s `validation_data` for one epoch or read rarely (`validation_steps=2` batches an epoch,
and at most 1,000 elements where a map before a written batch size makes each element work: ten batches
of 1,000 decoded images are reported, three batches of 5,000 in-memory rows mapped once per batch are not;
`validation_freq=2` over 5 epochs) or one batch an epoch (`validation_steps=1`, `batched.skip(1).take(1)`:
nothing to overlap), a smoke run of a `fit` of at most five steps in all (`steps_per_epoch=1, epochs=3`,
counts the source shows), code a constant rules out (`if False:`, `if DEBUG:` with `DEBUG = False`: it never
runs), an evaluation loop run once (`test_step`,
metric updates) or every Nth epoch (`if (epoch + 1) % print_freq == 0:`, N a literal or module
constant of at least 2; every N *steps* is about every epoch and stays reported), an inspection (`take(n)`, plotting, a loop that only collects
`item[1].numpy()` labels) or a one-off pass (`adapt()`, `list(ds)`, `as_numpy_iterator()` taken whole,
saving, `get_single_element()`: a serving request read as its one element) are not reported; a `for`
loop over `ds.as_numpy_iterator()` or `tfds.as_numpy(ds)` reads `ds` for what its body does (a JAX
step loop trains on it). A TF1 iterator counts as training input unless the module's session runs
in loops all sit in functions, or fetch values, named for evaluation or generation and none fetches
a train op (tensor2tensor's `generate_samples` yielding records to write, a loop computing video
metrics). The Keras loaders
(`image_dataset_from_directory`, `text_`, `audio_`, `timeseries_dataset_from_*`) end in a prefetch
of their own, and `Dataset.zip` of a pipeline that ends in `prefetch` with others that end in
`prefetch` too (also when the parts were gathered by `append` into a list: `zip(tuple(datasets))`), do no work, or make up their elements (GAN noise from `from_tensors(0).repeat()
.map(random)`) is prefetched too: no finding, and the fix never adds a second one. Noise on its own
(maps that only draw random vectors or batches of them, `tf.random.normal([bs, noise_dims])`; a
draw of rank 3 or more is fake images, work) has nothing to overlap either, and a `map` after the
prefetch that only selects parts of each element (`lambda x: x['images']`) runs no op, and one on
whole batches that only reshapes them (big_transfer's `reshape_for_keras`) changes metadata, and an
in-memory `cache()` after it serves later epochs from memory (`prefetch(AUTOTUNE).cache().repeat(n)`;
a cache to a file reads the disk again): the prefetch still ends the pipeline (a slice, a stack, a cast or a per-element reshape there copies or
computes, and is reported), and neither does a map that runs no op at all (a `def` that copies dict
entries under new keys in Python). `make_csv_dataset` and `make_batched_features_dataset` end in a prefetch
of their own. A pipeline that
only slices arrays already in memory (`from_tensor_slices`, `from_tensors`, or a `Dataset.zip` of such
pipelines) and regroups them
(`shuffle`, `batch`, `repeat`, `cache`, or TF1's `apply(batch_and_drop_remainder(n))`), with at most
maps after the last `batch` that only cast, scale (`tf.div` too), reshape, concatenate, one-hot encode
the batch to a few classes, crop or flip its images (`central_crop`, `random_flip_left_right`:
microseconds once per batch; decoding, resizing and `py_function` are work), or whose
`from_generator` generator only yields NumPy
random draws or constant arrays, does no work a prefetch could overlap with the step: no finding
either. Nor does one over a toy dataset the code shows the size of (at most 250,000 numbers, a
megabyte of float32: scikit-learn's `load_digits()` or `load_iris()`, `np.random.rand(100, 2)`,
slices of them; catalogue sets whose name shows a toy, `tfds.load('iris')`, Keras' `boston_housing`;
analysis/data_size.py) whose maps only pick, cast, scale or one-hot encode: a whole
pass over it is microseconds of input work per step. Test files are skipped, and a test iterating another module's pipeline (`data_provider_test.py`
reading `_provide_custom_dataset(...)`) is no training consumer of it: the other importers decide.
In a module whose path says evaluation, inference or serving (`evaluate_model.py`, `inference/`,
`efficient_serving.ipynb`, `04_word2vec_visualize.py`) only what a `fit` there trains on is reported,
or what a TF1 iterator feeds to session runs that fetch a train op in a loop.

Which TensorFlow the code runs on decides too: `target-version` if configured, else the lower
bound of the TensorFlow requirement in the project's `pyproject.toml`, `setup.cfg`, `setup.py`,
`requirements*.txt` or `environment.yml` (`check --show-settings` shows what was inferred and
from where), raised to what the module's own Keras calls require (`tf.keras.optimizers.AdamW` exists from 2.12). On 2.12 and later the runtime appends the prefetch itself, so nothing is reported
unless the module switches autotune or `inject_prefetch` off; when the version is unknown the
message says the finding holds for TensorFlow < 2.12 or with autotune off.

The analysis follows the pipeline through method chains, `ds = ds.op(...)` reassignments,
ops added on only some branches, tuple unpacking, same-file helpers and a same-file class that keeps
the pipeline its constructor is given (`self.dataset = dataset`), and reports where the
`prefetch` belongs: the pipeline's last op, inside the helper when a helper builds it.
Inspection loops (`for x in ds.take(3)`, print-only loops, a loop over `ds` or `iter(ds)` that breaks after
its first element, `next(iter(ds))` or `next(ds.__iter__())`, a TF1 iterator a module that runs no session
makes at module level and reads by a few `get_next()` calls (TF2 runs it eagerly), a
module-level `print(ds)`, an iterator read only by
printed `next()` calls), a demonstration that reads its pipeline a handful of times (`it = iter(ds)`
read by `next(it)` in loops whose counts the source shows, at most ten reads in all: a colab that
fine-tunes a checkpoint for ten steps, five images drawn to plot; a TF1 iterator whose session runs
are as few), loops whose only training word is a printed counter (`print(num_train_steps)`) and pipelines that
only a framework consumes without saying for what (`distribute_datasets_from_function`, an `input_fn`
given only to `evaluate` or `predict`) are not reported, nor are a TF1 iterator whose session runs only
fetch its elements, feeding nothing, in a module that trains nothing (a script collecting each record's
label before writing a split), and test support modules (`*test_utils.py`, `test_util.py`, a `testing/`
package).
"""
    why_bad = """
Without `prefetch`, the input pipeline and the training step run one after the other: while the
accelerator trains on a batch, no next batch is being prepared, and while the next batch is
prepared the accelerator waits. With `prefetch(tf.data.AUTOTUNE)` a background thread keeps a
buffer of ready elements, so a step costs the maximum of the two times instead of their sum.
Measured on a 2-core CPU with a 10 ms producer and a 10 ms step: 2.16 s without, 1.12 s with
(1.9x), with TensorFlow's automatic prefetch injection switched off.

TensorFlow 2.12 and later inject a `prefetch(AUTOTUNE)` at the end of a pipeline on their own
(the `inject_prefetch` graph rewrite) when autotuning is on and the last transformation is
synchronous. That covers the default case on new versions. It does not cover TensorFlow before
2.12, pipelines with `options.autotune.enabled = False` or `apply_default_optimizations = False`
or `inject_prefetch = False`, and it leaves the intent invisible in the code. Set
`target-version` to tell the linter which TensorFlow you run.
"""
    example = """
import tensorflow as tf

ds = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=tf.data.AUTOTUNE).batch(256)
model.fit(ds, epochs=10)
"""
    use_instead = """
import tensorflow as tf

ds = (
    tf.data.TFRecordDataset(files)
    .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    .batch(256)
    .prefetch(tf.data.AUTOTUNE)
)
model.fit(ds, epochs=10)
"""
    fix_safety = """
The fix appends `.prefetch(tf.data.AUTOTUNE)` (spelled with the module's own TensorFlow alias,
or `tf.data.experimental.AUTOTUNE` under `tf.compat.v1` and for `target-version` below 2.4; for a
`target-version` below 1.13, where no `AUTOTUNE` spelling is certain to exist, a buffer of `1`) and
is safe: the pipeline yields the same elements in the same order. It costs one buffer of
elements in memory and a background thread; side effects inside `py_function` map functions run
earlier than before, and prefetched elements are part of iterator checkpoints. When the module
has no name for TensorFlow and uses it only through `from` imports, the fix adds
`import tensorflow as tf`; when neither is possible, no fix is offered. When the pipeline can end
in different ops on different branches, the finding is reported without a fix. In a chain written
one op per line, the prefetch gets a line of its own with the same indentation.
"""
    references = (
        "[tf.data performance guide: Prefetching](https://www.tensorflow.org/guide/data_performance#prefetching)",
        "[Analyze tf.data performance](https://www.tensorflow.org/guide/data_performance_analysis)",
        "[`tf.data.Dataset.prefetch`](https://www.tensorflow.org/api_docs/python/tf/data/Dataset#prefetch)",
    )

    valid = (
        # A session that only fetches the iterator's elements into lists, in a module that trains nothing.
        Valid(_CREATE_SPLIT.format(step="")),
        # A loop over `iter(ds)` that breaks after the first batch, printed: a look at its shapes.
        Valid(_VOC.format(body="    print(x.dtype, x.shape)\n    print(y.dtype, y.shape)\n    break\n")),
        # No session in the module: TF2 runs the TF1 iterator eagerly, and one `get_next()` reads one record.
        Valid(_ONE_RECORD.format(reads="item = iterator.get_next()\nprint(item)\nprint(item[0].numpy())\n")),
        # Every zipped part already ends in a prefetch, and the map after the zip runs no op.
        Valid(_UDA.format(ending=".prefetch(1)")),
        # Validation once, after the training loop: evaluation run once.
        Valid(_REINITIALIZED.format(where="after training", val=_VAL_ONCE)),
        # Switched to every epoch, but only one batch read: nothing for a prefetch to overlap.
        Valid(_REINITIALIZED.format(where="every epoch", val=_VAL_ONE_BATCH)),
        # A model built in a tf.distribute strategy's scope: `fit` distributes the dataset, and the
        # strategy's iterator prefetches onto each device (MirroredStrategy, TPUStrategy, MultiWorker...).
        Valid(_STRATEGY_FIT.format(strategy="strategy = tf.distribute.MirroredStrategy()")),
        Valid(_STRATEGY_FIT.format(strategy="strategy = tf.distribute.experimental.TPUStrategy(tpu)")),
        # tensorflow/docs distribute/keras.ipynb: validation every epoch, under the same strategy.
        Valid("import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
              "train = tf.data.TFRecordDataset(a).map(parse, 4).batch(64)\n"
              "val = tf.data.TFRecordDataset(b).map(parse, 4).batch(64)\n"
              "with strategy.scope():\n    model = build_model()\n"
              "model.fit(train, validation_data=val, epochs=12)\n"),
        # A custom loop over `experimental_distribute_dataset`: the distributed iterator prefetches.
        Valid("import tensorflow as tf\nstrategy = tf.distribute.MirroredStrategy()\n"
              "ds = tf.data.TFRecordDataset(f).map(parse, 4).batch(64)\n"
              "dist = strategy.experimental_distribute_dataset(ds)\nfor epoch in range(10):\n"
              "    for x in dist:\n        strategy.run(train_step, args=(x,))\n"),
        # tensorflow-without-a-phd's RNN TPU tutorial: prefetch, then an in-memory cache and the epochs' repeat.
        Valid(_PREFETCH_THEN_CACHE.format(cache="cache()")),
        Valid(_TRAIN_AND_EVALUATE.format(helper="evaluate_model").replace("model.fit(train_dataset, epochs=10)",
                                                                          "model.evaluate(train_dataset)")),
        # Packt's ML Using TF Cookbook: Iris from TensorFlow Datasets (150 rows) batched in a training loop,
        # and a Keras catalogue toy (Boston housing, 506 rows) scaled and fitted: microseconds of input work.
        Valid(_CATALOGUE_TOY.format(load="data = tfds.load('iris', split='train')")),
        Valid(_KERAS_TOY.format(set="boston_housing")),
        Valid("import tensorflow as tf\nds = tf.data.Dataset.range(10).batch(2).prefetch(tf.data.AUTOTUNE)\nmodel.fit(ds)\n"),
        # ml-design-patterns wx_embeddings.ipynb: a smoke fit of three steps; the training job is elsewhere.
        Valid("import tensorflow as tf\nds = tf.data.TFRecordDataset(files).map(parse).batch(2).repeat()\n"
              "history = autoencoder.fit(ds, steps_per_epoch=1, epochs=3)\n"),
        # trekhleb recipe_generation_rnn.ipynb: the DEBUG branch never runs (`DEBUG = False`).
        Valid("import tensorflow as tf\nDEBUG = False\nds = tf.data.TFRecordDataset(files).map(parse)\n"
              "if DEBUG:\n    train = ds.repeat().batch(64)\nelse:\n    train = ds.shuffle(100).batch(64).repeat().prefetch(1)\n"
              "model.fit(train, epochs=10, steps_per_epoch=100)\n"),
        # trekhleb sketch_recognition_cnn.ipynb: validation is one batch an epoch, nothing to overlap.
        Valid("import tensorflow as tf\nval_batches = 1\nbatched = tf.data.TFRecordDataset(f).map(parse).batch(2000)\n"
              "val = batched.take(val_batches)\ntrain = batched.skip(val_batches).prefetch(1).repeat()\n"
              "model.fit(train, epochs=20, steps_per_epoch=100, validation_data=val)\n"),
        Valid("import tensorflow as tf\nds = tf.data.Dataset.range(10).batch(2)\nfor x in ds.take(3):\n    print(x)\n"),
        Valid("import tensorflow as tf\nds = tf.data.Dataset.range(10).batch(2)\nfirst = next(iter(ds))\n"),
        # tensor2tensor moving_mnist.py: a TF1 iterator read only to yield the records a data generator writes.
        Valid("import tensorflow.compat.v1 as tf\ndef generate_samples(n):\n"
              "    it = tf.data.TFRecordDataset(f).map(parse).batch(2).make_one_shot_iterator()\n"
              "    video = it.get_next()\n    with tf.Session() as sess:\n        for _ in range(n):\n"
              "            yield {'frame': sess.run(video)}\n"),
        # An input_fn only evaluated: Estimator's evaluation, not a training step.
        Valid("import tensorflow as tf\ndef input_fn():\n    return tf.data.TFRecordDataset(f).map(parse, 4).batch(2)\n"
              "estimator.evaluate(input_fn=input_fn)\n"),
        Valid("import pandas as pd\nimport tensorflow as tf\ns = pd.Series([1, 2]).map(str)\nmodel.fit(s)\n"),
        Valid("import tensorflow as tf\nds = tf.data.Dataset.range(10).prefetch(2).repeat()\nmodel.fit(ds)\n"),
        # Validation for one epoch (fit's default): the pipeline is read once.
        Valid(
            "import tensorflow as tf\ntrain = tf.data.TFRecordDataset(a).map(parse, 4).batch(8).prefetch(1)\n"
            "val = tf.data.TFRecordDataset(b).map(parse, 4).batch(8)\nmodel.fit(train, validation_data=val)\n"
        ),
        # dragen1860's FashionMNIST: two validation batches per epoch, and validation in two epochs of five.
        Valid(
            "import tensorflow as tf\ntrain = tf.data.TFRecordDataset(a).map(parse, 4).batch(8).prefetch(1)\n"
            "val = tf.data.TFRecordDataset(b).map(parse, 4).batch(8)\n"
            "model.fit(train.repeat(), epochs=30, steps_per_epoch=500, validation_data=val.repeat(), validation_steps=2)\n"
            "model.fit(train, epochs=5, validation_data=val, validation_freq=2)\n"
        ),
        # tensorlayer's CIFAR-10 tutorials: the test pipeline read every fifth epoch.
        Valid(
            "import tensorflow as tf\nprint_freq = 5\ntrain = tf.data.TFRecordDataset(a).map(parse, 4).batch(8).prefetch(1)\n"
            "test = tf.data.TFRecordDataset(b).map(parse, 4).batch(8)\nfor epoch in range(500):\n"
            "    for x, y in train:\n        train_step(x, y)\n    if epoch + 1 == 1 or (epoch + 1) % print_freq == 0:\n"
            "        for x, y in test:\n            test_step(x, y)\n"
        ),
        # A file list decoded once into memory, then sliced again (dragen1860's Pixel2Pixel).
        Valid(
            "import tensorflow as tf\nfiles = tf.data.Dataset.list_files('train/*.jpg')\nfile_iter = iter(files)\n"
            "images = []\nfor path in file_iter:\n    images.append(load_image(path))\nimages = tf.stack(images)\n"
        ),
        # tensorflow/docs guide/data: an iterator checkpointed, read only by printed `next()` calls.
        Valid(
            "import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse, 4)\nit = iter(ds)\n"
            "ckpt = tf.train.Checkpoint(iterator=it)\nprint([next(it).numpy() for _ in range(5)])\n"
        ),
        # google-research/simclr tf2/colabs/finetuning.ipynb: "we fine-tune the new linear layer for just a few iterations".
        Valid(
            "import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse, 4).batch(64)\n"
            "total_iterations = 10\niterator = iter(ds)\nfor it in range(total_iterations):\n"
            "    x = next(iterator)\n    loss = train_step(x)\n"
        ),
        # tensorflow/tpu tfgan_on_tpus: the expensive side of the zip is prefetched; the other makes up noise.
        Valid(
            "import tensorflow as tf\nnoise = tf.data.Dataset.from_tensors(0).repeat().map(lambda _: tf.random.normal([8, 64]))\n"
            "images = tf.data.TFRecordDataset(f).map(parse, 4).batch(8).prefetch(1)\n"
            "model.fit(tf.data.Dataset.zip((noise, images)), epochs=5)\n"
        ),
        # tensorflow/gan mnist_estimator: GANEstimator's input_fn returns the noise alone when predicting.
        Valid(
            "import tensorflow as tf\ndef input_fn(mode, params):\n"
            "    noise = tf.data.Dataset.from_tensors(0).repeat().map(lambda _: tf.random.normal([params['bs'], 64]))\n"
            "    if mode == tf.estimator.ModeKeys.PREDICT:\n        return noise\n"
            "    images = tf.data.TFRecordDataset(f).map(parse, 4).batch(8).prefetch(1).map(lambda x: x['images'])\n"
            "    return tf.data.Dataset.zip((noise, images))\nestimator.train(input_fn=input_fn, max_steps=1000)\n"
        ),
        # tensorflow/docs distribute/input: a generator of random vectors, nothing to overlap.
        Valid(
            "import numpy as np\nimport tensorflow as tf\ndef input_gen():\n    while True:\n        yield np.random.rand(4)\n"
            "ds = tf.data.Dataset.from_generator(input_gen, output_types=tf.float32)\nmodel.fit(ds, steps_per_epoch=10)\n"
        ),
        # dragen1860/TensorFlow-2.x-Tutorials lesson21 mnist_tensor.py: in-memory arrays, and the one
        # map runs once per batch of 128 (cast, scale, reshape, one_hot): microseconds to overlap.
        Valid(
            "import tensorflow as tf\ndef preprocess(x, y):\n    x = tf.cast(x, dtype=tf.float32) / 255.\n"
            "    x = tf.reshape(x, [-1, 28*28])\n    return x, tf.one_hot(tf.cast(y, dtype=tf.int32), depth=10)\n"
            "train_db = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(60000).batch(128).map(preprocess).repeat(30)\n"
            "model.fit(train_db, epochs=5)\n",
            target_version=(2, 0),
        ),
        # google-research/big_transfer bit_tf2/train.py: after `get_data`'s prefetch, a map that only
        # reshapes each batch (microseconds, in step with `fit`): the prefetch is the last in effect.
        Valid(_BIT.format(after="lambda x: reshape_for_keras(x, batch_size=512, crop_size=128)")),
        # chiphuyen/stanford-tensorflow-tutorials 04_word2vec_eager_starter.py: the loop over the eager
        # iterator only prints a counter (its training step is a TO DO); printing `num_train_steps` is no training.
        Valid(_WORD2VEC_EAGER.format(step="if (num_train_steps + 1) % 5000 == 0:\n"
                                          "                print('step {}'.format(num_train_steps))")),
        # adventuresinML's CIFAR-10 notebooks: in-memory arrays batched first, then maps that run once per
        # batch (cast and scale, a central crop, a random flip of the batch): microseconds per step.
        Valid(_PER_BATCH_CIFAR.format(first="tf.cast(x, tf.float32) / 255.0")),
        # adventuresinML's tf_dataset_tutorial.py: sklearn's digits (1,797 rows of 64 pixels), a one-hot
        # of each label and a zip: a toy set, its whole pass is a megabyte of cheap ops.
        Valid(_DIGITS.format(load="load_digits(return_X_y=True)")),
        # ml-design-patterns' ensemble_methods: `make_csv_dataset` ends in its own prefetch; a map that
        # only copies dict entries under new keys runs no op, and the shuffle reorders batches.
        Valid(_CSV_ENSEMBLE.format(body="features['ensemble_' + str(i + 1) + '_' + feature] = features[feature]")),
        # Packt's Hands-On CV with TF2, Chapter07 DANN: two in-memory sets batched by halves and zipped, then a
        # per-batch map (a `functools.partial` of it) that concatenates the halves and builds zero labels and weights.
        Valid(_DANN.format(work="tf.concat((source_images, target_images), axis=0)")),
        # Both zipped parts slice the arrays passed in: regrouped in-memory rows, nothing to overlap.
        Valid(_ZIPPED_PARAMETER.format(images="tf.data.Dataset.from_tensor_slices(images)")),
    )
    invalid = (
        # The same elements fed to a training step each batch.
        Invalid(_CREATE_SPLIT.format(step="                session.run(train_op, feed_dict={labels: id_class[-1:]})\n"),
                fixed=_CREATE_SPLIT.format(step="                session.run(train_op, feed_dict={labels: id_class[-1:]})\n")
                .replace("batch(1 << 10)", "batch(1 << 10).prefetch(tf.data.AUTOTUNE)")),
        # The same loop over `iter(ds)` training on every batch.
        Invalid(_VOC.format(body="    train_step(x, y)\n"), fixed=_VOC.format(body="    train_step(x, y)\n").replace(
            "voc_train.batch(64)", "voc_train.batch(64).prefetch(tf.data.AUTOTUNE)")),
        # The same iterator read by a session's training loop: graph mode, a step per run.
        Invalid(_ONE_RECORD.format(reads=_SESSION_STEPS), fixed=_ONE_RECORD.format(reads=_SESSION_STEPS).replace(
            "num_parallel_calls=4)", "num_parallel_calls=4).prefetch(tf.data.AUTOTUNE)")),
        # Neither part is prefetched: the parse maps run in step with training.
        Invalid(_UDA.format(ending=""), count=2),
        # Validation switched to in every epoch; the discarded `val.prefetch(4)` prefetches nothing.
        Invalid(_REINITIALIZED.format(where="every epoch", val=_VAL_EVERY_EPOCH),
                fixed=_REINITIALIZED.format(where="every epoch", val=_VAL_EVERY_EPOCH).replace(
                    ".batch(1).map(load, 4)\n", ".batch(1).map(load, 4).prefetch(tf.data.AUTOTUNE)\n")),
        # The Kaggle idiom: off a TPU the strategy is the default one, which distributes nothing.
        Invalid(
            _STRATEGY_FIT.format(strategy="try:\n    strategy = tf.distribute.TPUStrategy(tpu)\n"
                                 "except ValueError:\n    strategy = tf.distribute.get_strategy()"),
            fixed=_STRATEGY_FIT.format(strategy="try:\n    strategy = tf.distribute.TPUStrategy(tpu)\n"
                                       "except ValueError:\n    strategy = tf.distribute.get_strategy()").replace(
                ".batch(64)\n", ".batch(64).prefetch(tf.data.AUTOTUNE)\n"),
        ),
        # A model built outside the scope (the strategy is only created), and a hand-placed device loop:
        # nothing prefetches for the user.
        Invalid(
            _STRATEGY_FIT.format(strategy="strategy = tf.distribute.MirroredStrategy()").replace(
                "with strategy.scope():\n    model", "with tf.device('/gpu:0'):\n    model"),
            fixed=_STRATEGY_FIT.format(strategy="strategy = tf.distribute.MirroredStrategy()").replace(
                "with strategy.scope():\n    model", "with tf.device('/gpu:0'):\n    model").replace(
                ".batch(64)\n", ".batch(64).prefetch(tf.data.AUTOTUNE)\n"),
        ),
        # A cache to a file reads it from disk every later epoch, after the prefetch: reported.
        Invalid(_PREFETCH_THEN_CACHE.format(cache="cache('/tmp/temps')"), fixed=_PREFETCH_THEN_CACHE.format(
            cache="cache('/tmp/temps')").replace("repeat(nb_epochs)", "repeat(nb_epochs).prefetch(tf.data.AUTOTUNE)")),
        # training-data-analyst's deepdive2 flower notebooks: the pipeline is built and fitted inside a
        # `train_and_evaluate` helper, which trains first (`evaluate_model` building the same would not).
        Invalid(_TRAIN_AND_EVALUATE.format(helper="train_and_evaluate"),
                fixed=_TRAIN_AND_EVALUATE.format(helper="train_and_evaluate").replace(
                    "map(decode_csv)).batch(batch_size)", "map(decode_csv)).batch(batch_size).prefetch(tf.data.AUTOTUNE)")),
        # The same loops over catalogue sets whose names do not say toy: reported.
        Invalid(_CATALOGUE_TOY.format(load="data = tfds.load('mnist', split='train')"),
                fixed=_CATALOGUE_TOY.format(load="data = tfds.load('mnist', split='train')").replace(
                    "drop_remainder=True)", "drop_remainder=True).prefetch(tf.data.AUTOTUNE)")),
        Invalid(_KERAS_TOY.format(set="cifar10"),
                fixed=_KERAS_TOY.format(set="cifar10").replace(".batch(32)", ".batch(32).prefetch(tf.data.AUTOTUNE)")),
        # The same zip with a per-batch resize: interpolation of every pixel, work a prefetch would overlap.
        Invalid(_DANN.format(work="tf.image.resize(tf.concat((source_images, target_images), axis=0), (224, 224))"),
                fixed=_DANN.format(work="tf.image.resize(tf.concat((source_images, target_images), axis=0), (224, 224))")
                .replace("num_parallel_calls=4)", "num_parallel_calls=4).prefetch(tf.data.AUTOTUNE)")),
        # A per-batch resize is interpolation of every pixel: work a prefetch would overlap.
        Invalid(_PER_BATCH_CIFAR.format(first="tf.image.resize(x, (224, 224))"),
                fixed=_PER_BATCH_CIFAR.format(first="tf.image.resize(x, (224, 224))").replace(
                    "ds.repeat()", "ds.repeat().prefetch(tf.data.AUTOTUNE)")),
        # The digits' loader given `n_class=2` keeps the size unknown to the analysis: reported as before.
        Invalid(_DIGITS.format(load="load_digits(n_class=2, return_X_y=True)"),
                fixed=_DIGITS.format(load="load_digits(n_class=2, return_X_y=True)").replace(
                    ".batch(30)", ".batch(30).prefetch(tf.data.AUTOTUNE)")),
        # The copied features are sliced: a copy per batch, in step with the fit.
        Invalid(_CSV_ENSEMBLE.format(body=_SLICED_COPY),
                fixed=_CSV_ENSEMBLE.format(body=_SLICED_COPY).replace(".shuffle(500)", ".shuffle(500).prefetch(tf.data.AUTOTUNE)")),
        # adventuresinML average_pooling_tensorflow2.ipynb: ten validation batches of 1,000 decoded images an epoch.
        Invalid(
            "import tensorflow as tf\ntrain = tf.data.TFRecordDataset(a).map(resize).batch(64).prefetch(1)\n"
            "valid = tf.data.TFRecordDataset(b).map(resize).repeat().batch(1000)\n"
            "model.fit(train, epochs=7, validation_data=valid, validation_steps=10)\n",
            fixed="import tensorflow as tf\ntrain = tf.data.TFRecordDataset(a).map(resize).batch(64).prefetch(1)\n"
            "valid = tf.data.TFRecordDataset(b).map(resize).repeat().batch(1000).prefetch(tf.data.AUTOTUNE)\n"
            "model.fit(train, epochs=7, validation_data=valid, validation_steps=10)\n",
        ),
        # The same smoke-sized fit in a loop over epochs runs as long as the loop: training.
        Invalid(
            "import tensorflow as tf\nds = tf.data.TFRecordDataset(files).map(parse).batch(2).repeat()\n"
            "for epoch in range(100):\n    autoencoder.fit(ds, steps_per_epoch=1, epochs=3)\n",
            fixed="import tensorflow as tf\nds = tf.data.TFRecordDataset(files).map(parse).batch(2).repeat().prefetch(tf.data.AUTOTUNE)\n"
            "for epoch in range(100):\n    autoencoder.fit(ds, steps_per_epoch=1, epochs=3)\n",
        ),
        # `DEBUG = True`: the debugging branch is the one that runs.
        Invalid(
            "import tensorflow as tf\nDEBUG = True\nds = tf.data.TFRecordDataset(files).map(parse)\n"
            "if DEBUG:\n    train = ds.repeat().batch(64)\nelse:\n    train = ds.shuffle(100).batch(64).repeat().prefetch(1)\n"
            "model.fit(train, epochs=10, steps_per_epoch=100)\n",
            fixed="import tensorflow as tf\nDEBUG = True\nds = tf.data.TFRecordDataset(files).map(parse)\n"
            "if DEBUG:\n    train = ds.repeat().batch(64).prefetch(tf.data.AUTOTUNE)\nelse:\n    train = ds.shuffle(100).batch(64).repeat().prefetch(1)\n"
            "model.fit(train, epochs=10, steps_per_epoch=100)\n",
        ),
        # A TF1 step loop whose helper runs the train op: the evaluation loop elsewhere does not make
        # the iterator evaluation input.
        Invalid(
            "import tensorflow as tf\nit = tf.data.TFRecordDataset(f).map(parse, 4).batch(32).make_one_shot_iterator()\n"
            "x, y = it.get_next()\ntrain_op = tf.train.AdamOptimizer(1e-3).minimize(loss_of(model(x), y))\n"
            "def run_step(sess):\n    return sess.run([loss, train_op])\n"
            "def evaluate(sess):\n    for _ in range(10):\n        print(sess.run(accuracy))\n"
            "with tf.Session() as sess:\n    for step in range(100000):\n        run_step(sess)\n    evaluate(sess)\n",
            fixed="import tensorflow as tf\n"
            "it = tf.data.TFRecordDataset(f).map(parse, 4).batch(32).prefetch(tf.data.AUTOTUNE).make_one_shot_iterator()\n"
            "x, y = it.get_next()\ntrain_op = tf.train.AdamOptimizer(1e-3).minimize(loss_of(model(x), y))\n"
            "def run_step(sess):\n    return sess.run([loss, train_op])\n"
            "def evaluate(sess):\n    for _ in range(10):\n        print(sess.run(accuracy))\n"
            "with tf.Session() as sess:\n    for step in range(100000):\n        run_step(sess)\n    evaluate(sess)\n",
        ),
        # `make_csv_dataset` ends in its own prefetch, but stacking each batch's columns after it copies
        # them in step with the training loop (czy36mengfei's iris, left to the toy-set judgement).
        Invalid("import tensorflow as tf\ndef pack_features_vector(features, labels):\n"
                "    features = tf.stack(list(features.values()), axis=1)\n    return features, labels\n"
                "train = tf.data.experimental.make_csv_dataset(train_fp, 32, column_names=names, label_name=label, num_epochs=1)\n"
                "train = train.map(pack_features_vector)\nfor epoch in range(201):\n    for x, y in train:\n"
                "        train_step(x, y)\n", target_version=(2, 0),
                fixed="import tensorflow as tf\ndef pack_features_vector(features, labels):\n"
                "    features = tf.stack(list(features.values()), axis=1)\n    return features, labels\n"
                "train = tf.data.experimental.make_csv_dataset(train_fp, 32, column_names=names, label_name=label, num_epochs=1)\n"
                "train = train.map(pack_features_vector).prefetch(tf.data.experimental.AUTOTUNE)\nfor epoch in range(201):\n"
                "    for x, y in train:\n        train_step(x, y)\n"),
        # After the prefetch, a per-batch map that resizes every image is work in step with the consumer.
        Invalid(_BIT.format(after="lambda x: (tf.image.resize(x['image'], (128, 128)), x['label'])"),
                fixed=_BIT.format(after="lambda x: (tf.image.resize(x['image'], (128, 128)), x['label'])").replace(
                    "x['label']))\n", "x['label'])).prefetch(tf.data.AUTOTUNE)\n")),
        # chiphuyen/stanford-tensorflow-tutorials 04_word2vec_eager.py: TF 1.x eager's `tfe.Iterator(ds)`
        # read by a loop that applies gradients, for 100,000 steps.
        Invalid(
            _WORD2VEC_EAGER.format(step="optimizer.apply_gradients(grad_fn(center, target)[1])"),
            fixed=_WORD2VEC_EAGER.format(step="optimizer.apply_gradients(grad_fn(center, target)[1])").replace(
                "(tf.int32, tf.int32))", "(tf.int32, tf.int32)).prefetch(1)"),
            target_version=(1, 4),
        ),
        # Once per batch too, resizing every image of the batch is work a prefetch overlaps.
        Invalid(
            "import tensorflow as tf\nds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)\n"
            "ds = ds.map(lambda x, y: (tf.image.resize(x, [224, 224]), y))\nmodel.fit(ds, epochs=5)\n",
            fixed="import tensorflow as tf\nds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)\n"
            "ds = ds.map(lambda x, y: (tf.image.resize(x, [224, 224]), y)).prefetch(tf.data.AUTOTUNE)\n"
            "model.fit(ds, epochs=5)\n",
        ),
        # tensorflow/tpu shakespeare_with_tpu_and_keras: a `batch` that chunks the text into sequences; the
        # map after it runs once per training example, and the pipeline is reported as before.
        Invalid(
            "import tensorflow as tf\ndef split_input_target(chunk):\n    return chunk[:-1], chunk[1:]\n"
            "ds = tf.data.Dataset.from_tensor_slices(source).batch(101, drop_remainder=True)\n"
            "ds = ds.map(split_input_target).shuffle(10000).batch(1024, drop_remainder=True)\nmodel.fit(ds, epochs=10)\n",
            fixed="import tensorflow as tf\ndef split_input_target(chunk):\n    return chunk[:-1], chunk[1:]\n"
            "ds = tf.data.Dataset.from_tensor_slices(source).batch(101, drop_remainder=True)\n"
            "ds = ds.map(split_input_target).shuffle(10000).batch(1024, drop_remainder=True).prefetch(tf.data.AUTOTUNE)\n"
            "model.fit(ds, epochs=10)\n",
        ),
        # The same loop run for as many steps as training takes.
        Invalid(
            "import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse, 4).batch(64)\n"
            "total_iterations = 20000\niterator = iter(ds)\nfor it in range(total_iterations):\n"
            "    x = next(iterator)\n    loss = train_step(x)\n",
            fixed="import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse, 4).batch(64).prefetch(tf.data.AUTOTUNE)\n"
            "total_iterations = 20000\niterator = iter(ds)\nfor it in range(total_iterations):\n"
            "    x = next(iterator)\n    loss = train_step(x)\n",
        ),
        # An iterator read by a training loop too, not only printed.
        Invalid(
            "import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse, 4)\nit = iter(ds)\nprint(next(it))\n"
            "for step in range(100):\n    train_step(next(it))\n",
            fixed="import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse, 4).prefetch(tf.data.AUTOTUNE)\nit = iter(ds)\n"
            "print(next(it))\nfor step in range(100):\n    train_step(next(it))\n",
        ),
        # The images come in as a parameter: the zip pairs a pipeline the analysis cannot see with in-memory
        # labels, and the images may be decoded and resized; only when every part is seen is a zip no work.
        Invalid(_ZIPPED_PARAMETER.format(images="images"),
                fixed=_ZIPPED_PARAMETER.format(images="images").replace(".batch(32)", ".batch(32).prefetch(tf.data.AUTOTUNE)")),
        # Both sides of the zip read and parse records: prefetching one does not cover the other.
        Invalid(
            "import tensorflow as tf\nlabels = tf.data.TFRecordDataset(g).map(parse, 4).batch(8)\n"
            "images = tf.data.TFRecordDataset(f).map(parse, 4).batch(8).prefetch(1)\n"
            "model.fit(tf.data.Dataset.zip((labels, images)), epochs=5)\n",
            fixed="import tensorflow as tf\nlabels = tf.data.TFRecordDataset(g).map(parse, 4).batch(8)\n"
            "images = tf.data.TFRecordDataset(f).map(parse, 4).batch(8).prefetch(1)\n"
            "model.fit(tf.data.Dataset.zip((labels, images)).prefetch(tf.data.AUTOTUNE), epochs=5)\n",
        ),
        # A generator that reads files does work a prefetch overlaps.
        Invalid(
            "import numpy as np\nimport tensorflow as tf\ndef input_gen():\n    for path in paths:\n        yield np.load(path)\n"
            "ds = tf.data.Dataset.from_generator(input_gen, output_types=tf.float32)\nmodel.fit(ds, epochs=3)\n",
            fixed="import numpy as np\nimport tensorflow as tf\ndef input_gen():\n    for path in paths:\n        yield np.load(path)\n"
            "ds = tf.data.Dataset.from_generator(input_gen, output_types=tf.float32).prefetch(tf.data.AUTOTUNE)\nmodel.fit(ds, epochs=3)\n",
        ),
        Invalid(
            "import tensorflow as tf\nds = tf.data.Dataset.range(10).batch(2)\nmodel.fit(ds)\n",
            fixed="import tensorflow as tf\nds = tf.data.Dataset.range(10).batch(2).prefetch(tf.data.AUTOTUNE)\nmodel.fit(ds)\n",
        ),
        Invalid(
            "import tensorflow as tf\n\ndef make():\n    ds = tf.data.Dataset.range(10)\n    ds = ds.batch(2)\n    return ds\n\n"
            "for batch in make():\n    train_step(batch)\n",
            fixed="import tensorflow as tf\n\ndef make():\n    ds = tf.data.Dataset.range(10)\n"
            "    ds = ds.batch(2).prefetch(tf.data.AUTOTUNE)\n    return ds\n\nfor batch in make():\n    train_step(batch)\n",
        ),
        # Validation every epoch: the model waits for it as for the training data.
        Invalid(
            "import tensorflow as tf\ntrain = tf.data.TFRecordDataset(a).map(parse, 4).batch(8).prefetch(1)\n"
            "val = tf.data.TFRecordDataset(b).map(parse, 4).batch(8)\nmodel.fit(train, validation_data=val, epochs=10)\n",
            fixed="import tensorflow as tf\ntrain = tf.data.TFRecordDataset(a).map(parse, 4).batch(8).prefetch(1)\n"
            "val = tf.data.TFRecordDataset(b).map(parse, 4).batch(8).prefetch(tf.data.AUTOTUNE)\n"
            "model.fit(train, validation_data=val, epochs=10)\n",
        ),
        # google-research/bert run_classifier.py: a factory's closure given to `Estimator.train`.
        Invalid(
            "import tensorflow as tf\ndef input_fn_builder(files, is_training):\n    def input_fn(params):\n"
            "        d = tf.data.TFRecordDataset(files)\n        if is_training:\n            d = d.repeat()\n"
            "        return d.map(parse, 4).batch(params['batch_size'])\n    return input_fn\n"
            "estimator.train(input_fn=input_fn_builder(files, True), max_steps=1000)\n",
            fixed="import tensorflow as tf\ndef input_fn_builder(files, is_training):\n    def input_fn(params):\n"
            "        d = tf.data.TFRecordDataset(files)\n        if is_training:\n            d = d.repeat()\n"
            "        return d.map(parse, 4).batch(params['batch_size']).prefetch(tf.data.AUTOTUNE)\n    return input_fn\n"
            "estimator.train(input_fn=input_fn_builder(files, True), max_steps=1000)\n",
        ),
        # google-research/big_transfer big_transfer_jax.ipynb: a JAX step loop over NumPy batches.
        Invalid(
            "import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse).batch(64)\n"
            "for step, batch in zip(range(500), ds.as_numpy_iterator()):\n    opt = update_fn(opt, get_lr(step), batch)\n",
            fixed="import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse).batch(64).prefetch(tf.data.AUTOTUNE)\n"
            "for step, batch in zip(range(500), ds.as_numpy_iterator()):\n    opt = update_fn(opt, get_lr(step), batch)\n",
        ),
        Invalid(
            "from tensorflow.data import Dataset\nmodel.fit(Dataset.range(10).batch(2))\n",
            fixed="from tensorflow.data import Dataset\nimport tensorflow as tf\nmodel.fit(Dataset.range(10).batch(2).prefetch(tf.data.AUTOTUNE))\n",
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        if context.is_test_code or runtime_injects_prefetch(context):
            return
        # `evaluate_model.py`, `evaluation/`, `inference.py`: not training code, but for what a `fit` there trains on
        named_otherwise = path_purpose(context.filename) is not Purpose.UNKNOWN
        pipelines = context.model.pipelines
        reported: Set[cst.Call] = set()
        # A loop counts when its body trains (`train_step`, `apply_gradients`, a `GradientTape`); one
        # whose body does not say is as often a demonstration as a training loop: silent.
        for consumption in pipelines.consumptions_for(self.purposes):
            if named_otherwise and not pipelines.trains_whatever_the_path(consumption):
                continue
            if consumption.distributed:
                continue  # a tf.distribute strategy's iterator prefetches onto each device itself
            states = sorted(consumption.states, key=_order)
            if any(pipelines.ends_prefetched(state) for state in states):
                continue
            if not any(pipelines.does_work(state) for state in states):
                continue  # in-memory tensors, batched and shuffled: nothing to overlap with the step
            every_epoch = pipelines.every_epoch(consumption)
            if every_epoch and pipelines.reads_one_batch(consumption):
                continue  # one validation batch per epoch (`skip(1).take(1)` of batches): nothing to overlap
            if not every_epoch and all(
                pipelines.built_for(state.last_call) not in self.purposes | {Purpose.UNKNOWN} for state in states
            ):
                continue  # built by `eval_input_fn`, `get_validation_dataset`, `dataset_to_numpy_util`
            last_calls = {state.last_call for state in states}
            for state in states:
                last = state.last_call
                if last in reported or not pipelines.does_work(state):
                    continue  # on this branch (`if just_noise: return noise_ds`) nothing to overlap
                reported.add(last)
                has_prefetch = any(op.name == "prefetch" for op in state.ops)
                problem = (
                    "`prefetch` is not the last transformation of a pipeline consumed by"
                    if has_prefetch
                    else "Pipeline consumed by"
                )
                consumer = _consumer(consumption, every_epoch) + consumption.where
                step = "evaluation step" if every_epoch else "training step"
                message = (
                    f"{problem} {consumer} does not end with `prefetch`; input preparation and the "
                    f"{step} run one after the other"
                    if not has_prefetch
                    else f"{problem} {consumer}: the ops after it run in step with "
                    + ("evaluation" if every_epoch else "training")
                )
                if context.settings.target_version is None:
                    message += " (on TensorFlow < 2.12, or with autotune off; later versions inject one themselves)"
                yield self.finding(message, call_method_span(last), last, self._fix(context, last, len(last_calls)))

    def _fix(self, context: RuleContext, last: cst.Call, endings: int):
        if endings != 1:
            return None  # different branches end in different ops: no single place to append
        spelling = prefetch_buffer(context.model, context.settings, last)
        if spelling is None:
            return None
        value, imports = spelling
        return FixPlan(SAFE, f"Append `.prefetch({value})`", (append_op(context.model, last, f".prefetch({value})"),),
                       imports)


def _consumer(consumption, every_epoch: bool) -> str:
    """How the message names the consumer: `model.fit()`, its `validation_data`, a training loop."""
    if every_epoch:
        if consumption.kind == "model":
            return f"`{consumption.description}` as `validation_data` every epoch"
        return "an evaluation loop run every epoch"
    return f"`{consumption.description}`" if consumption.kind != "for" else "a training loop"


def runtime_injects_prefetch(context: RuleContext) -> bool:
    """TensorFlow >= 2.12 appends the prefetch itself unless the module switches autotune or the rewrite off."""
    version = context.settings.target_version
    return version is not None and version >= (2, 12) and context.model.dataset_options.keeps("inject_prefetch")


def _order(state: State):
    return (len(state.ops), [op.name for op in state.ops])
