"""What a pipeline is for where its consumer says too little (analysis/pipelines/intent.py, issue 22):
each class pinned both ways on excerpts written from real code, through the real engine.

- a pipeline built for training and returned to a consumer out of sight (an Estimator `input_fn`, a
  trainer's `make_train_dataset`, an input reader's `__call__`): TFP103 and TFP201 report it, an
  evaluation one is silent;
- TFP103 stays silent when a later shuffle restores per-epoch order (tensorflow/tpu's ImageNet inputs);
- evaluation the model waits on every epoch (`validation_data=` over several epochs, a test loop inside
  the epoch loop): TFP101 and TFP102 report it; a `take(3)` preview, one count, a one-epoch fit do not,
  nor evaluation a guard runs every Nth epoch (`if (epoch + 1) % 5 == 0:`), unlike every Nth step;
- TF1 pipelines on attributes behind a reinitializable iterator (`make_initializer`) are consumed;
- a pipeline mapped in one module, batched in a second and fitted in a third (tuple unpacking);
- a test module's consumer is not a training one: the other importers, or the pipeline itself, decide;
- made-up elements (GAN noise drawn per batch) and a zip whose costly side is prefetched, then picked;
- a module named for serving or evaluation that fits a model: what the `fit` trains on is training;
- a distributed dataset is for what the loops over it do (distributed prediction is not training).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.conftest import lint, model_of, run_cli, write_project
from tflint_perf.analysis.purpose import Purpose


def found(source: str, select, filename: str = "input_pipeline.py"):
    return sorted((d.location.row, d.code) for d in lint(textwrap.dedent(source), select, filename=filename))


# -- built for training, consumed elsewhere -----------------------------------------------------
TRAIN_INPUT_FN = """
    import tensorflow as tf

    def _augment(image, label):
        image = tf.image.random_flip_left_right(image)
        image = tf.image.random_brightness(image, 0.2)
        return image, label

    def make_train_dataset(files, batch_size):
        ds = tf.data.TFRecordDataset(files)
        ds = ds.map(_parse, num_parallel_calls=tf.data.AUTOTUNE)
        ds = ds.map(_augment, num_parallel_calls=tf.data.AUTOTUNE)
        ds = ds.cache()
        ds = ds.shuffle(10000).repeat()
        return ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)
"""


def test_a_training_pipeline_returned_unconsumed_is_reported_for_a_frozen_augmentation():
    assert found(TRAIN_INPUT_FN, ["TFP103"]) == [(13, "TFP103")]


def test_an_evaluation_pipeline_returned_unconsumed_is_not():
    source = """
        import tensorflow as tf

        def make_eval_dataset(files, batch_size):
            ds = tf.data.TFRecordDataset(files)
            ds = ds.map(_parse, num_parallel_calls=tf.data.AUTOTUNE)
            ds = ds.shuffle(1000).cache()
            return ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)
    """
    assert found(source, ["TFP103"]) == []
    assert found(source.replace("make_eval_dataset", "make_dataset"), ["TFP103"]) == [(7, "TFP103")]


def test_a_pipeline_consumed_only_for_evaluation_keeps_its_frozen_order_silently():
    source = """
        import tensorflow as tf

        test_ds = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=4).shuffle(1000).cache().batch(32)
        for epoch in range(3):
            for x, y in test_ds:
                test_step(x, y)
    """
    assert found(source, ["TFP103"]) == []
    assert found(source.replace("test_step", "train_step"), ["TFP103"]) == [(4, "TFP103")]


PY_FUNCTION_READER = """
    import numpy as np
    import tensorflow as tf

    class InputReader(object):
        def __init__(self, file_pattern, is_training):
            self._file_pattern = file_pattern
            self._is_training = is_training

        def _distort(self, image):
            return np.fliplr(image)

        def _parse(self, record):
            image = tf.io.decode_jpeg(record)
            image = tf.numpy_function(self._distort, [image], tf.uint8)
            return image

        def __call__(self, params):
            ds = tf.data.Dataset.list_files(self._file_pattern)
            ds = ds.interleave(tf.data.TFRecordDataset, num_parallel_calls=8)
            ds = ds.shuffle(1024).repeat()
            ds = ds.map(self._parse, num_parallel_calls=8)
            return ds.batch(params["batch_size"]).prefetch(1)
"""


def test_a_numpy_function_in_a_training_readers_map_is_reported():
    assert found(PY_FUNCTION_READER, ["TFP201"]) == [(15, "TFP201")]


def test_a_numpy_function_in_an_evaluation_builders_map_is_not():
    source = """
        import numpy as np
        import tensorflow as tf

        def _load(path):
            return np.abs(np.fft.rfft(np.load(path)))

        def make_eval_dataset(paths):
            ds = tf.data.Dataset.from_tensor_slices(paths)
            ds = ds.map(lambda p: tf.numpy_function(_load, [p], tf.float32), num_parallel_calls=4)
            return ds.batch(32).prefetch(1)
    """
    assert found(source, ["TFP201"]) == []
    assert found(source.replace("make_eval_dataset", "make_train_dataset"), ["TFP201"]) == [(10, "TFP201")]


# -- TFP103: a later reshuffle ------------------------------------------------------------------
# tensorflow/tpu models/official/resnet/imagenet_input.py and the garden's imagenet_preprocessing:
# files shuffled and records reshuffled under the same condition, the cache between them.
IMAGENET_INPUT_FN = """
    import tensorflow as tf

    def process_record_dataset(dataset, is_training, batch_size, shuffle_buffer):
        if is_training:
            dataset = dataset.shuffle(buffer_size=shuffle_buffer)
            dataset = dataset.repeat()
        dataset = dataset.map(parse_record, num_parallel_calls=tf.data.AUTOTUNE)
        return dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)

    def input_fn(is_training, filenames, batch_size, training_dataset_cache=False):
        dataset = tf.data.Dataset.from_tensor_slices(filenames)
        if is_training:
            dataset = dataset.shuffle(buffer_size=1024)
        dataset = dataset.interleave(tf.data.TFRecordDataset, num_parallel_calls=tf.data.AUTOTUNE)
        if is_training and training_dataset_cache:
            dataset = dataset.cache()
        return process_record_dataset(dataset, is_training, batch_size, 10000)
"""


def test_a_reshuffle_in_the_helper_the_pipeline_goes_through_restores_the_order():
    assert found(IMAGENET_INPUT_FN, ["TFP103"]) == []


def test_without_the_reshuffle_the_frozen_file_order_is_reported():
    source = IMAGENET_INPUT_FN.replace("dataset = dataset.shuffle(buffer_size=shuffle_buffer)\n", "")
    assert found(source, ["TFP103"]) == [(16, "TFP103")]


def test_shuffle_and_repeat_after_the_cache_reshuffles_too():
    source = """
        import tensorflow as tf

        def make_source_dataset(files, cache):
            dataset = tf.data.Dataset.from_tensor_slices(files).shuffle(64)
            dataset = dataset.interleave(tf.data.TFRecordDataset, num_parallel_calls=8)
            if cache:
                dataset = dataset.cache().apply(tf.data.experimental.shuffle_and_repeat(16 * 1024))
            else:
                dataset = dataset.shuffle(1024)
            return dataset
    """
    assert found(source, ["TFP103"]) == []
    assert found(source.replace(".apply(tf.data.experimental.shuffle_and_repeat(16 * 1024))", ".repeat()"),
                 ["TFP103"]) == [(8, "TFP103")]


def test_a_later_shuffle_does_not_undo_a_frozen_augmentation():
    source = """
        import tensorflow as tf

        def augment(x):
            return tf.image.random_flip_left_right(x)

        def make_train_dataset(files):
            ds = tf.data.TFRecordDataset(files).map(augment, num_parallel_calls=4).cache()
            return ds.shuffle(1000).repeat().batch(32).prefetch(1)
    """
    assert found(source, ["TFP103"]) == [(8, "TFP103")]


# -- evaluation every epoch ---------------------------------------------------------------------
# tensorflow/docs tutorials: the validation split decoded by a sequential map, fitted for 10 epochs.
VALIDATION = """
    import tensorflow as tf

    def decode(record):
        features = tf.io.parse_single_example(record, {"image": tf.io.FixedLenFeature([], tf.string)})
        return tf.io.decode_jpeg(features["image"])

    train_ds = tf.data.TFRecordDataset(train_files).map(decode, num_parallel_calls=tf.data.AUTOTUNE)
    train_ds = train_ds.shuffle(1000).batch(32).prefetch(tf.data.AUTOTUNE)
    val_ds = tf.data.TFRecordDataset(val_files).map(decode).batch(32)
    model.fit(train_ds, validation_data=val_ds, epochs=10)
"""


def test_a_validation_pipeline_read_every_epoch_is_reported():
    assert found(VALIDATION, ["TFP101", "TFP102"]) == [(10, "TFP101"), (10, "TFP102")]
    message = next(d.message for d in lint(textwrap.dedent(VALIDATION), ["TFP101"]))
    assert "`validation_data` every epoch" in message


def test_validation_for_one_epoch_is_not():
    assert found(VALIDATION.replace(", epochs=10", ""), ["TFP101", "TFP102"]) == []


def test_a_preview_of_the_validation_pipeline_is_not():
    source = VALIDATION.replace("model.fit(train_ds, validation_data=val_ds, epochs=10)",
                                "for image in val_ds.take(3):\n        plt.imshow(image[0])")
    assert found(source, ["TFP101", "TFP102"]) == []


def test_counting_the_elements_once_is_not():
    source = VALIDATION.replace("model.fit(train_ds, validation_data=val_ds, epochs=10)",
                                "n = 0\n    for _ in val_ds:\n        n += 1\n    print(n)")
    assert found(source, ["TFP101", "TFP102"]) == []


def test_evaluate_inside_the_epoch_loop_is_reported_and_after_one_fit_is_not():
    source = VALIDATION.replace("model.fit(train_ds, validation_data=val_ds, epochs=10)",
                                "for epoch in range(10):\n        model.fit(train_ds, epochs=1)\n        model.evaluate(val_ds)")
    assert found(source, ["TFP101", "TFP102"]) == [(10, "TFP101"), (10, "TFP102")]
    once = VALIDATION.replace("model.fit(train_ds, validation_data=val_ds, epochs=10)",
                              "model.fit(train_ds, epochs=10)\n    model.evaluate(val_ds)")
    assert found(once, ["TFP101", "TFP102"]) == []


# tensorflow/docs guide/core/mlp_core.ipynb: the validation loop inside the epoch loop.
EPOCH_LOOP = """
    import tensorflow as tf

    def preprocess(x, y):
        x = tf.reshape(x, shape=[-1, 784])
        return x / 255, y

    train_data = tf.data.TFRecordDataset(train_files).map(preprocess, num_parallel_calls=4).prefetch(2)
    val_data = tf.data.TFRecordDataset(val_files).map(preprocess)

    def train_model(mlp, train_data, val_data, epochs):
        for epoch in range(epochs):
            for x_batch, y_batch in train_data:
                batch_loss = train_step(x_batch, y_batch, mlp)
            for x_batch, y_batch in val_data:
                batch_loss = val_step(x_batch, y_batch, mlp)

    train_model(mlp, train_data, val_data, epochs=10)
"""


def test_an_evaluation_loop_inside_the_epoch_loop_is_reported():
    assert found(EPOCH_LOOP, ["TFP101", "TFP102"]) == [(9, "TFP101"), (9, "TFP102")]


def test_an_evaluation_loop_after_training_is_not():
    source = EPOCH_LOOP.replace(
        "            for x_batch, y_batch in val_data:\n                batch_loss = val_step(x_batch, y_batch, mlp)\n",
        "        for x_batch, y_batch in val_data:\n            batch_loss = val_step(x_batch, y_batch, mlp)\n",
    )
    assert source != EPOCH_LOOP
    assert found(source, ["TFP101", "TFP102"]) == []


# -- evaluation every Nth epoch -----------------------------------------------------------------
# tensorlayer/TensorLayer examples (tutorial_cifar10_cnn_static.py, the quantized_net CIFAR-10 tutorials):
# the test pipeline read inside the epoch loop, under a guard that picks every `print_freq`-th epoch.
EVERY_NTH_EPOCH = """
    import tensorflow as tf

    n_epoch = 50000
    print_freq = 5
    train_ds = tf.data.TFRecordDataset(train_files).map(_map_fn_train, num_parallel_calls=4).batch(128).prefetch(4)
    test_ds = tf.data.TFRecordDataset(test_files).batch(128).map(_map_fn_test)

    for epoch in range(n_epoch):
        for X_batch, y_batch in train_ds:
            with tf.GradientTape() as tape:
                _loss = tl.cost.cross_entropy(net(X_batch), y_batch, name='train_loss')
            grad = tape.gradient(_loss, train_weights)
            optimizer.apply_gradients(zip(grad, train_weights))
        if epoch + 1 == 1 or (epoch + 1) % print_freq == 0:
            for X_batch, y_batch in test_ds:
                val_loss += tl.cost.cross_entropy(net(X_batch), y_batch, name='eval_loss')
"""


def test_evaluation_every_fifth_epoch_is_not_per_epoch_work():
    assert found(EVERY_NTH_EPOCH, ["TFP101", "TFP102"]) == []


def test_evaluation_the_same_guard_runs_every_epoch_is_reported():
    every = EVERY_NTH_EPOCH.replace("print_freq = 5", "print_freq = 1")  # tensorlayer's tutorial_quanconv_mnist.py
    assert found(every, ["TFP101", "TFP102"]) == [(7, "TFP101"), (7, "TFP102")]
    unknown = EVERY_NTH_EPOCH.replace("(epoch + 1) % print_freq", "(epoch + 1) % args.print_freq")  # may be 1
    assert found(unknown, ["TFP101", "TFP102"]) == [(7, "TFP101"), (7, "TFP102")]
    otherwise = EVERY_NTH_EPOCH.replace(
        "            for X_batch, y_batch in test_ds:", "            pass\n        else:\n            for X_batch, y_batch in test_ds:")
    assert found(otherwise, ["TFP101", "TFP102"]) == [(7, "TFP101"), (7, "TFP102")]  # the other four epochs in five


def test_a_test_function_called_every_tenth_epoch_is_not_per_epoch_work():
    source = """
        import tensorflow as tf

        train_ds = tf.data.TFRecordDataset(train_files).map(parse, num_parallel_calls=4).batch(32).prefetch(2)
        test_ds = tf.data.TFRecordDataset(test_files).map(parse).batch(32)

        def test(model, ds):
            for x, y in ds:
                test_step(model, x, y)

        for epoch in range(100):
            for x, y in train_ds:
                train_step(model, x, y)
            if epoch % 10 == 0:
                test(model, test_ds)
    """
    assert found(source, ["TFP101", "TFP102"]) == []
    assert found(source.replace("            if epoch % 10 == 0:\n                test(", "            test("),
                 ["TFP101", "TFP102"]) == [(5, "TFP101"), (5, "TFP102")]


# dragen1860/TensorFlow-2.x-Tutorials lesson28 main.py: one loop of steps over the repeated training data,
# evaluating every 500 steps: about once an epoch (469 steps of 128), as often as per-epoch evaluation.
EVERY_NTH_STEP = """
    import tensorflow as tf

    db = tf.data.TFRecordDataset(train_files).map(preprocess, num_parallel_calls=4).batch(128).prefetch(2).repeat(10)
    ds_val = tf.data.TFRecordDataset(val_files).map(preprocess).batch(128)

    for step, (x, y) in enumerate(db):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.losses.categorical_crossentropy(y, network(x), from_logits=True))
        grads = tape.gradient(loss, network.trainable_variables)
        optimizer.apply_gradients(zip(grads, network.trainable_variables))
        if step % 500 == 0:
            for x, y in ds_val:
                total_correct += tf.reduce_sum(tf.cast(tf.equal(tf.argmax(network(x), 1), y), tf.int32))
"""


def test_the_same_guard_on_a_step_counter_still_evaluates_every_epoch():
    assert found(EVERY_NTH_STEP, ["TFP101", "TFP102"]) == [(5, "TFP101"), (5, "TFP102")]


def test_a_loop_of_epochs_named_for_nothing_counts_epochs_by_its_nested_training_loop():
    source = """
        import tensorflow as tf

        train_ds = tf.data.TFRecordDataset(train_files).map(parse, num_parallel_calls=4).batch(32).prefetch(2)
        test_ds = tf.data.TFRecordDataset(test_files).map(parse).batch(32)
        step = 0
        while step < 40:
            for x, y in train_ds:
                train_step(x, y)
            step += 1
            if step % 4 == 0:
                for x, y in test_ds:
                    test_step(x, y)
    """
    assert found(source, ["TFP101", "TFP102"]) == []
    assert found(source.replace("step % 4", "step % 1"), ["TFP101", "TFP102"]) == [(5, "TFP101"), (5, "TFP102")]


# -- TF1: pipelines on attributes, reinitializable iterators -------------------------------------
# A TF1 data reader: `self.train_data` mapped with `map_func=`, batched, switched to by a
# reinitializable iterator that the session loop reads per step through `get_next()`.
TF1_READER = """
    import tensorflow as tf

    class DataReader(object):
        def __init__(self, train_files, test_files, batch_size):
            self.train_data = tf.data.TFRecordDataset(train_files)
            self.train_data = self.train_data.map(map_func=self._parse)
            self.batch_train_data = self.train_data.shuffle(1000).batch(batch_size)
            self.test_data = tf.data.TFRecordDataset(test_files)
            self.test_data = self.test_data.map(map_func=self._parse)
            self.batch_test_data = self.test_data.batch(batch_size)
            self.iterator = tf.compat.v1.data.Iterator.from_structure(
                tf.compat.v1.data.get_output_types(self.batch_train_data),
                tf.compat.v1.data.get_output_shapes(self.batch_train_data))
            self.next_batch = self.iterator.get_next()
            self.train_init = self.iterator.make_initializer(self.batch_train_data)
            self.test_init = self.iterator.make_initializer(self.batch_test_data)

        def _parse(self, record):
            features = tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature([784], tf.float32)})
            return features["x"]
"""


def test_a_tf1_training_pipeline_behind_a_reinitializable_iterator_is_reported():
    assert found(TF1_READER, ["TFP101", "TFP102"]) == [(7, "TFP102"), (8, "TFP101")]


def test_the_test_pipeline_the_same_iterator_switches_to_is_named_for_evaluation():
    """Lines 10 and 11 are silent above because the initializer's pipeline is named for testing; named
    for nothing, it is read per step like the training one."""
    source = TF1_READER.replace("test_data", "extra_data").replace("test_files", "extra_files")
    assert found(source, ["TFP101", "TFP102"]) == [(7, "TFP102"), (8, "TFP101"), (10, "TFP102"), (11, "TFP101")]


def test_a_one_shot_iterator_in_the_compat_spelling_consumes_the_pipeline():
    source = """
        import tensorflow as tf

        def parse(record):
            return tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature([784], tf.float32)})

        dataset = tf.data.TFRecordDataset(files).map(map_func=parse).shuffle(1000).repeat().batch(32)
        next_batch = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
    """
    assert found(source, ["TFP101", "TFP102"]) == [(7, "TFP101"), (7, "TFP102")]


# -- three modules, a tuple ---------------------------------------------------------------------
PARSING = """\
import tensorflow as tf


def _parse(record):
    features = tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature([784], tf.float32),
                                                   "y": tf.io.FixedLenFeature([], tf.int64)})
    return tf.reshape(features["x"], [28, 28, 1]), features["y"]


def get_parsed_dataset(files):
    dataset = tf.data.TFRecordDataset(files)
    return dataset.map(_parse)
"""
# The middle module names no TensorFlow: it only batches what the first one parsed.
GENERATE = """\
from data.parsing import get_parsed_dataset

BATCH_SIZE = 64


def generate_datasets():
    train = get_parsed_dataset(["train.tfrecord"]).shuffle(1000).batch(BATCH_SIZE).prefetch(1)
    valid = get_parsed_dataset(["valid.tfrecord"]).batch(BATCH_SIZE).prefetch(1)
    test = get_parsed_dataset(["test.tfrecord"]).batch(BATCH_SIZE).prefetch(1)
    return train, valid, test, 60000
"""
TRAIN = """\
import tensorflow as tf

from data.generate import generate_datasets


def main():
    train, valid, test, n = generate_datasets()
    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
    model.compile("adam", "sparse_categorical_crossentropy")
    model.fit(train, validation_data=valid, epochs=5)
"""


def three_modules(root: Path, train: str) -> None:
    (root / "pyproject.toml").write_text("")
    for package in ("data", "trainer"):
        (root / package).mkdir()
        (root / package / "__init__.py").write_text("")
    (root / "data" / "parsing.py").write_text(PARSING)
    (root / "data" / "generate.py").write_text(GENERATE)
    (root / "trainer" / "main.py").write_text(train)


def project_findings(root: Path):
    result = run_cli("check", "--no-cache", "--select", "TFP101,TFP102", "--output-format", "json", ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return [(Path(d["filename"]).as_posix(), d["location"]["row"], d["code"]) for d in json.loads(result.stdout)]


def test_a_map_handed_through_a_tuple_across_three_modules_is_reported_at_its_line(tmp_path):
    three_modules(tmp_path, TRAIN)
    assert project_findings(tmp_path) == [("data/parsing.py", 12, "TFP102")]


def test_the_same_map_consumed_only_by_one_evaluation_is_not(tmp_path):
    """The chain is followed, not guessed: with no consumer in sight the map would be reported; the
    third module's one `evaluate`, seen through the middle module, makes it silent."""
    three_modules(tmp_path, TRAIN.replace("train, valid, test, n", "_, _, test, n").replace(
        "model.fit(train, validation_data=valid, epochs=5)", "model.evaluate(test)"))
    assert project_findings(tmp_path) == []



def test_a_cached_result_is_not_reused_when_the_module_two_importers_up_changes(tmp_path):
    """parsing.py is judged by trainer/main.py through data/generate.py: main.py's text is part of
    parsing.py's cache key (the neighbourhood reaches importers two levels up)."""
    evaluate_only = TRAIN.replace("train, valid, test, n", "_, _, test, n").replace(
        "model.fit(train, validation_data=valid, epochs=5)", "model.evaluate(test)")
    three_modules(tmp_path, evaluate_only)

    def cached_run():
        result = run_cli("check", "--select", "TFP102", "--output-format", "json", ".", cwd=tmp_path)
        assert result.returncode in (0, 1), result.stderr
        return [(Path(d["filename"]).as_posix(), d["location"]["row"]) for d in json.loads(result.stdout)]

    assert cached_run() == []
    (tmp_path / "trainer" / "main.py").write_text(TRAIN)
    assert cached_run() == [("data/parsing.py", 12)]


# -- a test's consumer ---------------------------------------------------------------------------
# tensorflow/gan examples/cyclegan: a file-reading helper whose pipeline the trainer reaches through
# `_preprocess_datasets` (which prefetches after its maps), and whose own pipeline the test iterates.
DATA_PROVIDER = """\
import tensorflow as tf


def full_image_to_patch(image, patch_size):
    image = tf.image.resize(tf.image.convert_image_dtype(image, tf.float32), [patch_size, patch_size])
    return image * 2.0 - 1.0


def _provide_custom_dataset(image_file_pattern, num_threads=1):
    filenames_ds = tf.data.Dataset.list_files(image_file_pattern)
    bytes_ds = filenames_ds.map(tf.io.read_file, num_parallel_calls=num_threads)
    images_ds = bytes_ds.map(tf.image.decode_image, num_parallel_calls=num_threads)
    return images_ds


def _preprocess_datasets(dataset, batch_size, num_threads=1, patch_size=128):
    patches_ds = dataset.map(lambda img: full_image_to_patch(img, patch_size), num_parallel_calls=num_threads)
    patches_ds = patches_ds.repeat().shuffle(5 * batch_size)
    patches_ds = patches_ds.prefetch(5 * batch_size)
    return patches_ds.batch(batch_size)


def provide_custom_datasets(batch_size, image_file_patterns, num_threads=1):
    images_ds = [_provide_custom_dataset(pattern, num_threads) for pattern in image_file_patterns]
    return [_preprocess_datasets(x, batch_size, num_threads) for x in images_ds]
"""
DATA_PROVIDER_TEST = """\
import tensorflow as tf

from cyclegan import data_provider


class DataProviderTest(tf.test.TestCase):

    def test_custom_dataset_provider(self):
        images_ds = data_provider._provide_custom_dataset("testdata/*.jpg")
        iterator = tf.data.make_initializable_iterator(images_ds)
        with self.cached_session() as sess:
            sess.run(iterator.initializer)
            images_out = sess.run(iterator.get_next())
        self.assertEqual(3, images_out.shape[-1])


if __name__ == "__main__":
    tf.test.main()
"""
# The same iteration in a script that trains on what it reads.
TRAIN_SCRIPT = """\
import tensorflow as tf

from cyclegan import data_provider

images_ds = data_provider._provide_custom_dataset("images/*.jpg")
iterator = tf.data.make_initializable_iterator(images_ds)
with tf.Session() as sess:
    sess.run(iterator.initializer)
    for step in range(100000):
        sess.run(train_op, {images: sess.run(iterator.get_next())})
"""


def provider_project(root: Path, importer_name: str, importer: str) -> None:
    (root / "pyproject.toml").write_text("")
    (root / "cyclegan").mkdir()
    (root / "cyclegan" / "__init__.py").write_text("")
    (root / "cyclegan" / "data_provider.py").write_text(DATA_PROVIDER)
    (root / "cyclegan" / importer_name).write_text(importer)


def test_a_pipeline_a_test_iterates_is_not_reported_as_consumed_for_training(tmp_path):
    provider_project(tmp_path, "data_provider_test.py", DATA_PROVIDER_TEST)
    assert project_findings(tmp_path) == []


def test_the_same_pipeline_a_training_script_iterates_is_reported(tmp_path):
    provider_project(tmp_path, "train.py", TRAIN_SCRIPT)
    assert project_findings(tmp_path) == [("cyclegan/data_provider.py", 12, "TFP101")]


# -- made-up elements ------------------------------------------------------------------------------
# tensorflow/gan examples/mnist_estimator/train_experiment_lib.py: GANEstimator's input_fn. Predicting, it
# returns the noise alone; training, the noise zipped with MNIST images cached and prefetched by a
# provider, then only the images picked from each element.
GAN_INPUT_FN = """
    import numpy as np
    import tensorflow as tf
    import tensorflow_datasets as tfds

    def provide_dataset(split, batch_size, num_parallel_calls=None):
        ds = tfds.load('mnist:3.*.*', split=split)
        ds = ds.map(_preprocess, num_parallel_calls=num_parallel_calls).cache().repeat()
        return ds.batch(batch_size, drop_remainder=True).prefetch(tf.data.experimental.AUTOTUNE)

    def input_fn(mode, params):
        bs = params['batch_size']
        nd = params['noise_dims']
        noise_ds = (tf.data.Dataset.from_tensors(0).repeat()
                    .map(lambda _: tf.random.normal([bs, nd])))
        if mode == tf.estimator.ModeKeys.PREDICT:
            return noise_ds
        if params['use_dummy_data']:
            images_ds = tf.data.Dataset.from_tensors(np.zeros((bs, 28, 28, 1), dtype=np.float32)).repeat()
        else:
            images_ds = provide_dataset('train', bs, 4).map(lambda x: x['images'])
        return tf.data.Dataset.zip((noise_ds, images_ds))

    estimator.train(input_fn=input_fn, max_steps=1000)
"""


def test_gan_noise_and_a_prefetched_reader_picked_after_the_prefetch_are_not_reported():
    assert found(GAN_INPUT_FN, ["TFP101"]) == []


def test_noise_of_fake_images_is_work_and_a_slice_after_the_prefetch_is_an_op():
    images = GAN_INPUT_FN.replace("tf.random.normal([bs, nd])", "tf.random.normal([bs, 224, 224, 3])").replace(
        "        return tf.data.Dataset.zip((noise_ds, images_ds))\n", "        return noise_ds\n")
    assert found(images, ["TFP101"]) == [(15, "TFP101")]
    # handson-ml2 chapter 15: `crop_long_sketches` slices every batch after the reader's prefetch(1).
    sliced = GAN_INPUT_FN.replace("x['images']", "x['images'][:, :20]")
    assert found(sliced, ["TFP101"]) == [(22, "TFP101")]  # the zip, where the prefetch goes


# -- a module named otherwise that fits ------------------------------------------------------------
# tensorflow/recommenders docs/examples/efficient_serving.ipynb: trains the retrieval model for 3 epochs,
# then builds the serving index from the candidates (a one-off pass).
SERVING = """
    import tempfile
    import tensorflow as tf
    import tensorflow_datasets as tfds

    ratings = tfds.load("movielens/100k-ratings", split="train")
    ratings = ratings.map(lambda x: {"user_id": x["user_id"], "movie_title": x["movie_title"]}).cache(tempfile.NamedTemporaryFile().name)
    movies = tfds.load("movielens/100k-movies", split="train").map(lambda x: x["movie_title"])
    train = ratings.shuffle(100_000, seed=42, reshuffle_each_iteration=False).take(80_000)
    model.fit(train.batch(8192), epochs=3)
    brute_force.index_from_dataset(movies.batch(4096).map(lambda x: tf.zeros_like(x)).map(model.movie_model))
"""


def serving_findings(filename: str):
    return sorted((d.location.row, d.code) for d in lint(textwrap.dedent(SERVING), ["TFP101", "TFP102"], filename=filename))


def test_what_a_module_named_for_serving_fits_on_is_reported():
    assert serving_findings("efficient_serving.py") == [(10, "TFP101")]
    assert serving_findings("retrieval.py") == [(10, "TFP101")]  # as in a module named for nothing


def test_a_module_named_for_serving_without_a_fit_stays_silent():
    source = textwrap.dedent(SERVING).replace("model.fit(train.batch(8192), epochs=3)", "model.evaluate(train.batch(8192))")
    assert lint(source, ["TFP101", "TFP102"], filename="efficient_serving.py") == []


# -- a distributed dataset -------------------------------------------------------------------------
# tensorflow/docs tutorials/distribute/input.ipynb: one notebook, `dist_dataset` rebound cell after cell:
# first trained on, then used to demonstrate distributed prediction.
DISTRIBUTED = """
    import tensorflow as tf

    mirrored_strategy = tf.distribute.MirroredStrategy()
    dataset = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=4).batch(16)
    dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)
    for x in dist_dataset:
        loss = mirrored_strategy.run(train_step, args=(x,))

    dataset = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=4).enumerate().batch(6)
    dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)

    def predict(index, inputs):
        return index, 2 * inputs

    for index, inputs in dist_dataset:
        output_index, outputs = mirrored_strategy.run(predict, args=(index, inputs))
        indices = list(mirrored_strategy.experimental_local_results(output_index))
"""


def _distributed_purposes(source: str):
    model = model_of(textwrap.dedent(source))
    return [(c.kind, c.purpose, c.distributed) for c in model.pipelines.consumptions]


def test_a_distributed_dataset_looped_over_for_prediction_is_not_training():
    assert _distributed_purposes(DISTRIBUTED) == [
        ("distribute", Purpose.TRAINING, True), ("distribute", Purpose.EVALUATION, True)]


def test_a_distributed_dataset_with_no_loop_in_sight_is_still_training():
    source = DISTRIBUTED.split("    def predict")[0]
    assert _distributed_purposes(source) == [
        ("distribute", Purpose.TRAINING, True), ("distribute", Purpose.TRAINING, True)]


def test_a_distributed_dataset_needs_no_prefetch_of_its_own():
    """The strategy's distributed iterator prefetches onto each device (the distributed-input guide)."""
    assert found(DISTRIBUTED, ["TFP101"]) == []
    assert found(DISTRIBUTED.split("    def predict")[0], ["TFP101"]) == []


# -- bound to a name nothing reads ---------------------------------------------------------------
# Packt's ML Using TF Cookbook, ch1: loading recipes, one a cell, each bound to a name nothing reads (two
# cells bind `text_data`); training-data-analyst's data_augmentation.ipynb maps `aug_ds`, never read.
RECIPES = """
    import tensorflow as tf

    def split_text(x):
        return tf.strings.split(x, sep='\\t')

    text_data = (tf.data
                 .TextLineDataset(path)
                 .map(split_text)
                )
    housing = tf.data.TextLineDataset(path).skip(1).map(lambda x: tf.strings.to_number(tf.strings.split(x)))
    text_data = (tf.data.TextLineDataset('deu.txt').map(split_text))
    train_ds = tf.data.TFRecordDataset(f).map(parse, 4).batch(32).prefetch(1)
    aug_ds = train_ds.map(
      lambda x, y: (resize_and_rescale(x, training=True), y))
    model.fit(train_ds, epochs=5)
"""


def notebook_found(source: str, select):
    return sorted((d.location.row, d.code) for d in lint(textwrap.dedent(source), select, filename="recipes.ipynb"))


def test_a_notebook_pipeline_nothing_reads_is_not_reported():
    assert notebook_found(RECIPES, ["TFP102"]) == []


def test_a_notebook_pipeline_read_later_is_reported():
    # `aug_ds` fitted after all; `housing` handed to a helper out of sight.
    source = RECIPES.replace("model.fit(train_ds", "model.fit(aug_ds") + "    describe(housing)\n"
    assert notebook_found(source, ["TFP102"]) == [(11, "TFP102"), (14, "TFP102")]


def test_a_module_pipeline_may_be_imported_when_checked_alone():
    # A Python module's module-level `housing` may be imported as `from recipes import housing`: reported.
    assert (11, "TFP102") in found(RECIPES, ["TFP102"])


# tensorflow/workshops amld 2_keras.ipynb: the model is first built without a strategy, then rebuilt in a
# TPUStrategy's scope cells later; the `with` body always runs, so the rebuilt model is the one `fit` reads.
REBUILT_IN_SCOPE = """
    import tensorflow as tf
    train_ds = tf.data.TFRecordDataset(files).map(parse).batch(64).repeat()
    linear_model = tf.keras.Sequential()
    linear_model.fit(train_ds.prefetch(1), epochs=3, steps_per_epoch=100)
    strategy = tf.distribute.experimental.TPUStrategy(tpu)
    with strategy.scope():
        linear_model = tf.keras.Sequential()
    linear_model.fit(train_ds, epochs=3, steps_per_epoch=100)
"""


def test_a_model_rebuilt_in_a_strategy_scope_reads_through_the_strategy():
    assert found(REBUILT_IN_SCOPE, ["TFP101"]) == []


def test_a_model_rebuilt_after_the_strategy_scope_does_not():
    source = REBUILT_IN_SCOPE.replace(
        "        linear_model = tf.keras.Sequential()\n    linear_model.fit(train_ds,",
        "        pass\n    linear_model = tf.keras.Sequential()\n    linear_model.fit(train_ds,")
    assert found(source, ["TFP101"]) == [(3, "TFP101")]


# tf-estimator-tutorials model_evaluation_pipeline/trainer/model.py: the babyweight trainer (TF 1.x) of a
# project about model evaluation. The name nearest the module (`trainer/`) says what it is for.
BABYWEIGHT = """
    import tensorflow as tf
    def read_dataset(prefix, mode, batch_size):
        def _input_fn():
            dataset = tf.data.TextLineDataset(tf.gfile.Glob(prefix)).map(decode_csv)
            if mode == tf.estimator.ModeKeys.TRAIN:
                num_epochs = None
                dataset = dataset.shuffle(buffer_size=10 * batch_size)
            else:
                num_epochs = 1
            dataset = dataset.repeat(num_epochs).batch(batch_size)
            return dataset.make_one_shot_iterator().get_next()
        return _input_fn
    def train_and_evaluate(output_dir):
        train_spec = tf.estimator.TrainSpec(input_fn=read_dataset('train', tf.estimator.ModeKeys.TRAIN, 512),
                                            max_steps=10000)
        tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
"""


# The reader alone: no `TrainSpec` in sight (a `TrainSpec` trains whatever the path says), so the path decides.
BABYWEIGHT_READER = BABYWEIGHT[: BABYWEIGHT.index("    def train_and_evaluate")]


def test_a_trainer_package_inside_an_evaluation_project_is_training_code():
    assert found(BABYWEIGHT, ["TFP101"], filename="model_evaluation_pipeline/trainer/model.py") == [(11, "TFP101")]
    assert found(BABYWEIGHT_READER, ["TFP101"], filename="model_evaluation_pipeline/trainer/model.py") == [
        (11, "TFP101")]


def test_an_evaluation_module_inside_a_trainer_package_is_not():
    assert found(BABYWEIGHT_READER, ["TFP101"], filename="trainer/evaluation/model.py") == []
    assert found(BABYWEIGHT_READER, ["TFP101"], filename="model_evaluation_pipeline/model.py") == []


# calmisential/Basic_CNNs_TensorFlow2: prepare_data.py returns the train/valid/test pipelines; train.py
# loops over the validation pipeline inside its epoch loop, evaluate.py reads the test one once.
PREPARE = """\
import tensorflow as tf


def generate_datasets():
    train = tf.data.TFRecordDataset("train.tfrecord").map(parse).batch(8).prefetch(1)
    valid = tf.data.TFRecordDataset("valid.tfrecord").map(parse).batch(8)
    test = tf.data.TFRecordDataset("test.tfrecord").map(parse).batch(8)
    return train, valid, test
"""
IMPORTER_EPOCH_LOOP = """\
import tensorflow as tf
from prepare_data import generate_datasets

train, valid, test = generate_datasets()
for epoch in range(50):
    for images, labels in train:
        train_step(images, labels)
{validation}
"""


def test_a_pipeline_looped_over_every_epoch_in_an_importer_is_as_hot_as_training(tmp_path):
    root = write_project(tmp_path, {"prepare_data.py": PREPARE, "train.py": IMPORTER_EPOCH_LOOP.format(
        validation="    for images, labels in valid:\n        valid_step(images, labels)")})
    assert [f for f in project_findings(root) if f[2] == "TFP101"] == [("prepare_data.py", 6, "TFP101")]


def test_a_pipeline_evaluated_once_after_training_in_an_importer_is_not(tmp_path):
    root = write_project(tmp_path, {"prepare_data.py": PREPARE, "train.py": IMPORTER_EPOCH_LOOP.format(
        validation="for images, labels in valid:\n    valid_step(images, labels)")})
    assert [f for f in project_findings(root) if f[2] == "TFP101"] == []


# TrickyGo/Dive-into-DL-TensorFlow2.0: a notebook in code/chapter09/ puts `..` on sys.path and imports the
# book's helper package from code/, whose __init__ re-exports utils wholesale (`from .utils import *`).
HELPER = """\
import tensorflow as tf


def getVOCSegDataset(features, labels):
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    return dataset.map(normalize_and_lookup_labels)
"""
CHAPTER = """\
import sys
sys.path.append("..")
import tensorflow as tf
import d2lzh_tensorflow2 as d2lzh

voc_train = d2lzh.getVOCSegDataset(features, labels).shuffle(1024).batch(16)
net.fit(voc_train, epochs=5)
"""


def _book(tmp_path, chapter: str):
    """D2L's layout: the helper package in `code/`, re-exported by star, and a chapter beside it."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "code" / "d2lzh_tensorflow2").mkdir(parents=True)
    (tmp_path / "code" / "chapter09").mkdir()
    (tmp_path / "code" / "d2lzh_tensorflow2" / "__init__.py").write_text("from .utils import *\n")
    (tmp_path / "code" / "d2lzh_tensorflow2" / "utils.py").write_text(HELPER)
    (tmp_path / "code" / "chapter09" / "fcn.py").write_text(chapter)
    return [f for f in project_findings(tmp_path) if f[2] == "TFP101"]


def test_a_helper_package_on_a_relative_sys_path_and_re_exported_by_star_is_followed(tmp_path):
    assert _book(tmp_path, CHAPTER) == [("code/chapter09/fcn.py", 6, "TFP101")]


def test_without_the_sys_path_entry_the_helper_is_not_first_party(tmp_path):
    assert _book(tmp_path, CHAPTER.replace('sys.path.append("..")\n', "")) == []


# A helper that fits the model it is given inside a strategy's scope, called with the caller's pipeline.
HELPER_FITS_IN_SCOPE = """
    import tensorflow as tf
    strategy = tf.distribute.MirroredStrategy()
    def train(ds):
        with strategy.scope():
            model = build_model()
        model.fit(ds, epochs=10)
    train(tf.data.TFRecordDataset(files).map(parse, 4).batch(64))
"""


def test_a_helpers_fit_under_a_strategy_stays_distributed_at_its_callers():
    assert found(HELPER_FITS_IN_SCOPE, ["TFP101"]) == []
    assert found(HELPER_FITS_IN_SCOPE.replace("with strategy.scope():", "if True:"), ["TFP101"]) == [(8, "TFP101")]


# One device is still a strategy of tf.distribute: Keras' data handler distributes the dataset of a model
# built in its scope, with a prefetch onto the device. The default strategy (`get_strategy()` outside any
# scope) distributes nothing, and a name that may be either is not a strategy.
ONE_DEVICE = """
    import tensorflow as tf
    strategy = tf.distribute.OneDeviceStrategy("/gpu:0")
    train = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=4).batch(64)
    with strategy.scope():
        model = build_model()
    model.fit(train, epochs=10)
"""


def test_a_model_built_under_one_device_strategy_reads_through_it():
    assert found(ONE_DEVICE, ["TFP101"]) == []


def test_the_default_strategy_distributes_nothing():
    default = ONE_DEVICE.replace('tf.distribute.OneDeviceStrategy("/gpu:0")', "tf.distribute.get_strategy()")
    assert found(default, ["TFP101"]) == [(4, "TFP101")]
    kaggle = ONE_DEVICE.replace(
        '    strategy = tf.distribute.OneDeviceStrategy("/gpu:0")\n',
        "    try:\n        strategy = tf.distribute.TPUStrategy(resolver)\n"
        "    except ValueError:\n        strategy = tf.distribute.get_strategy()\n")
    assert found(kaggle, ["TFP101"]) == [(7, "TFP101")]
