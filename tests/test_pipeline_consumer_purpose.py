"""What a pipeline is for, learned from its consumer (analysis/pipelines/consumption.py, reads.py,
project/index.py; issue 22): a serving request read as one element, a TF1 iterator read only by
session runs that evaluate or generate, a loop that only collects labels, are not training input;
a JAX loop over ``as_numpy_iterator()`` and an input function a package's own script trains on are.
Each both ways, written from the real shapes, through the real engine (projects through the real
command line)."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import lint, run_cli

RULES = ["TFP101", "TFP102"]


def found(source: str, filename: str = "input_pipeline.py"):
    return sorted((d.location.row, d.code) for d in lint(textwrap.dedent(source), RULES, filename=filename))


# tensor2tensor problem.py: `serving_input_fn` parses one request's serialized examples and reads the
# pipeline as its single element for `export_saved_model`.
SERVING = """
    import tensorflow.compat.v1 as tf

    def serving_input_fn(hparams):
        serialized_example = tf.placeholder(dtype=tf.string, shape=[None], name="serialized_example")
        dataset = tf.data.Dataset.from_tensor_slices(serialized_example)
        dataset = dataset.map(decode_example)
        dataset = dataset.padded_batch(tf.shape(serialized_example, out_type=tf.int64)[0], shapes)
        features = {reader}
        return tf.estimator.export.ServingInputReceiver(features, serialized_example)
"""


def test_a_serving_request_read_as_its_single_element_is_not_reported():
    assert found(SERVING.format(reader="tf.data.experimental.get_single_element(dataset)")) == []
    assert found(SERVING.format(reader="dataset.get_single_element()")) == []


def test_the_same_map_in_a_pipeline_returned_unread_still_is():
    # Returned to a caller out of sight (an `input_fn`): what it is for is not shown, so it is reported.
    source = SERVING.format(reader="dataset").replace(
        "return tf.estimator.export.ServingInputReceiver(features, serialized_example)", "return features")
    assert found(source) == [(7, "TFP102")]


# tensor2tensor moving_mnist.py: a TF1 iterator read by `generate_samples`, which yields the records
# t2t-datagen writes; video_metrics.py: a zip of decoded and target videos read to compute metrics.
GENERATION = """
    import tensorflow.compat.v1 as tf
    import tensorflow_datasets as tfds

    def get_train_iterator():
        mnist_ds = tfds.load("mnist", split="train", as_supervised=True).repeat()
        moving_mnist_ds = mnist_ds.map(map_fn).batch(2)
        return moving_mnist_ds.make_initializable_iterator()

    def {function}(n_samples):
        moving_ds = get_train_iterator()
        next_video = moving_ds.get_next()
        with tf.Session() as sess:
            sess.run(moving_ds.initializer)
            for _ in range(n_samples):
                {run}
"""


def test_an_iterator_read_by_a_generator_of_samples_is_not_reported():
    source = GENERATION.format(function="generate_samples", run="yield {'frame': sess.run(next_video)}")
    assert found(source, "moving_mnist.py") == []


def test_metrics_computed_over_an_iterator_in_a_loop_are_not_reported():
    source = GENERATION.format(function="compute_video_metrics", run="psnr = sess.run(metrics)")
    assert found(source, "video_metrics.py") == []


def test_an_iterator_read_by_runs_that_train_or_say_nothing_still_is():
    trains = GENERATION.format(function="generate_samples", run="sess.run(train_op)")
    assert found(trains, "moving_mnist.py") == [(7, "TFP101"), (7, "TFP102")]
    unsaid = GENERATION.format(function="main", run="sess.run([loss, opt])")
    assert found(unsaid, "moving_mnist.py") == [(7, "TFP101"), (7, "TFP102")]


# rasbt ch13_part2.py: the Iris splits read five times only to count their labels.
COUNTING = """
    import tensorflow as tf
    import tensorflow_datasets as tfds
    ds_train_orig = tfds.load('iris', split='train').shuffle(100).map(lambda x: (x['features'], x['label']))
    for j in range(5):
        labels_train = []
        for i, item in enumerate(ds_train_orig):
            {body}
        print('Training Set: ', len(labels_train))
"""


def test_a_loop_that_only_collects_labels_is_inspection():
    assert found(COUNTING.format(body="labels_train.append(item[1].numpy())")) == []


def test_a_loop_nested_the_same_way_that_evaluates_still_is_reported():
    # Over a set larger than Iris (150 rows, a toy whose input work is microseconds however it is read).
    source = COUNTING.format(body="labels_train.append(evaluate_batch(item[0]))").replace("'iris'", "'cifar10'")
    assert found(source) == [(4, "TFP101")]


# google-research/big_transfer big_transfer_jax.ipynb: a JAX fine-tuning loop over NumPy batches.
JAX_LOOP = """
    import tensorflow as tf
    data_train = tf.data.Dataset.from_tensor_slices((images, labels)).repeat().shuffle(500)
    data_train = data_train.map(lambda x, y: (tf.image.random_crop(tf.image.resize(x, [160, 160]), [128, 128, 3]), y))
    data_train = data_train.batch(64)
    {loop}
"""


def test_a_jax_loop_over_numpy_batches_trains_on_the_pipeline():
    loop = "for step, batch in zip(range(500), data_train.as_numpy_iterator()):\n" \
           "        opt, loss_value = update_fn(opt, get_lr(step), batch[0], batch[1])"
    assert found(JAX_LOOP.format(loop=loop)) == [(4, "TFP102"), (5, "TFP101")]
    loop = "for batch in tfds.as_numpy(data_train):\n        state = train_step(state, batch)"
    assert found(JAX_LOOP.format(loop=loop).replace("import tensorflow as tf",
                                                    "import tensorflow as tf\n    import tensorflow_datasets as tfds")) \
        == [(5, "TFP102"), (6, "TFP101")]


def test_numpy_batches_taken_whole_or_collected_are_still_one_off():
    assert found(JAX_LOOP.format(loop="arrays = list(data_train.take(10).as_numpy_iterator())")) == []
    loop = "for batch in data_train.take(10).as_numpy_iterator():\n        batches.append(batch)"
    assert found(JAX_LOOP.format(loop=loop)) == []


# google-research/albert: the repository's root is the package; run_classifier.py imports its helper
# as `from albert import classifier_utils` and trains an Estimator on the closure it builds.
UTILS = """\
import tensorflow as tf


def file_based_input_fn_builder(input_file, is_training, bsz):
    def input_fn(params):
        d = tf.data.TFRecordDataset(input_file)
        if is_training:
            d = d.repeat()
            d = d.shuffle(buffer_size=100)
        d = d.apply(tf.data.experimental.map_and_batch(lambda r: parse(r), batch_size=bsz))
        return d
    return input_fn
"""
RUN = """\
import tensorflow as tf
from albert import classifier_utils


def main(_):
    estimator = tf.estimator.Estimator(model_fn=model_fn)
    train_input_fn = classifier_utils.file_based_input_fn_builder("train.tfrecord", True, 32)
    estimator.train(input_fn=train_input_fn, max_steps=1000)
"""


def _project_findings(tmp_path, root_is_package: bool):
    root = tmp_path / "albert"
    root.mkdir()
    (root / "setup.py").write_text("")
    if root_is_package:
        (root / "__init__.py").write_text("")
    (root / "classifier_utils.py").write_text(UTILS)
    (root / "run_classifier.py").write_text(RUN)
    result = run_cli("check", "--no-cache", "--isolated", "--select", "TFP101", "--output-format", "json", ".",
                     cwd=root)
    return sorted((d["filename"].rsplit("/", 1)[-1], d["location"]["row"]) for d in json.loads(result.stdout))


def test_an_input_fn_built_in_the_root_package_and_trained_on_by_its_script_is_reported(tmp_path):
    assert _project_findings(tmp_path, root_is_package=True) == [("classifier_utils.py", 10)]


def test_without_the_root_package_the_import_is_not_first_party(tmp_path):
    # No `__init__.py` at the root: `albert` is some installed package, and the helper has no consumer here.
    assert _project_findings(tmp_path, root_is_package=False) == []
