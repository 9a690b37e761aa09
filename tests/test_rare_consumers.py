"""Pipelines read too rarely for their speed to matter, and a training script that only looks like a
test (issue 22; shapes from dragen1860/TensorFlow-2.x-Tutorials), each pinned both ways through the
real engine:

- ``fit(..., validation_data=ds_val, validation_steps=2)``, or ``validation_freq=2`` over 5 epochs:
  the validation pipeline is silent; every epoch, many epochs, or counts the code does not show, it
  is reported (analysis/pipelines/intent.py, ``validates_rarely``);
- a ``__main__`` loop that writes each batch to ``tf.summary.image`` and sleeps is inspection;
- a file list read once into a list (``for x in iter(ds): data.append(load(x))``) is a one-off pass;
- ``train_evalute_test.py``, a script that trains, is not test code (analysis/files.py).
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint

RULES = ["TFP101", "TFP102"]


def found(source: str, filename: str = "input_pipeline.py"):
    return sorted((d.location.row, d.code) for d in lint(textwrap.dedent(source), RULES, filename=filename))


# -- validation that barely runs -----------------------------------------------------------------
# lesson30-Keras高层API/compile_fit.py: MNIST arrays mapped by `preprocess`; the training pipeline
# (line 11) is prefetched and parallel, so only the validation pipeline (line 12) can be reported.
FIT = """
    import tensorflow as tf
    EPOCHS = 20

    def preprocess(x, y):
        x = tf.cast(x, dtype=tf.float32) / 255.
        return x, y

    (x, y), (x_val, y_val) = tf.keras.datasets.mnist.load_data()
    db = tf.data.Dataset.from_tensor_slices((x, y))
    db = db.map(preprocess, num_parallel_calls=4).shuffle(60000).batch(128).prefetch(1)
    ds_val = tf.data.Dataset.from_tensor_slices((x_val, y_val)).map(preprocess).batch(128)
    network.fit(db, epochs=5, validation_data=ds_val)
"""
VALIDATION_EVERY_EPOCH = [(12, "TFP101"), (12, "TFP102")]


def fit(arguments: str) -> str:
    return FIT.replace("network.fit(db, epochs=5, validation_data=ds_val)", f"network.fit(db, {arguments})")


def test_validation_every_epoch_is_reported():
    assert found(FIT) == VALIDATION_EVERY_EPOCH


def test_two_validation_steps_per_epoch_are_not():
    # 05-FashionMNIST/mnist_fit.py: 30 epochs of 500 steps, two validation batches each.
    source = fit("epochs=30, steps_per_epoch=500, validation_data=ds_val.repeat(), validation_steps=2")
    assert found(source) == []


def test_many_validation_steps_or_steps_from_a_flag_are():
    assert found(fit("epochs=30, validation_data=ds_val, validation_steps=100")) == VALIDATION_EVERY_EPOCH
    assert found(fit("epochs=30, validation_data=ds_val, validation_steps=FLAGS.val_steps")) == VALIDATION_EVERY_EPOCH


def test_validation_every_second_epoch_of_five_is_not():
    assert found(fit("epochs=5, validation_data=ds_val, validation_freq=2")) == []
    assert found(fit("epochs=3, validation_data=ds_val, validation_freq=2")) == []


def test_validation_on_a_few_listed_epochs_is_not():
    assert found(fit("epochs=10, validation_data=ds_val, validation_freq=[1, 5, 10]")) == []


def test_validation_every_second_epoch_of_many_or_of_an_unknown_count_is():
    assert found(fit("epochs=EPOCHS, validation_data=ds_val, validation_freq=2")) == VALIDATION_EVERY_EPOCH
    # tensorflow/docs' MoViNet tutorial: `validation_freq=1` over two epochs is every epoch.
    assert found(fit("epochs=2, validation_data=ds_val, validation_freq=1")) == VALIDATION_EVERY_EPOCH
    assert found(fit("epochs=args.epochs, validation_data=ds_val, validation_freq=2")) == VALIDATION_EVERY_EPOCH


# -- inspection: each batch written to TensorBoard, paced for a person ----------------------------
# lesson52-自定义数据集和迁移学习/pokemon.py's main().
PACED = """
    import tensorflow as tf

    def main():
        import time
        images, labels, table = load_pokemon('pokemon', 'train')
        db = tf.data.Dataset.from_tensor_slices((images, labels))
        db = db.shuffle(1000).map(preprocess).batch(32)
        writter = tf.summary.create_file_writer('logs')
        for step, (x, y) in enumerate(db):
            with writter.as_default():
                x = denormalize(x)
                tf.summary.image('img', x, step=step, max_outputs=9)
                time.sleep(5)
"""


def test_a_loop_that_sleeps_after_each_image_summary_is_inspection():
    assert found(PACED) == []


def test_without_the_pause_the_loop_is_not_known_to_be_inspection():
    assert found(PACED.replace("time.sleep(5)", "pass")) == [(8, "TFP101"), (8, "TFP102")]


# -- a one-off loading pass ----------------------------------------------------------------------
# 14-Pixel2Pixel/main.py: the file list decoded image by image into memory, then sliced again.
LOADING = """
    import tensorflow as tf

    train_dataset = tf.data.Dataset.list_files(PATH + '/train/*.jpg')
    train_iter = iter(train_dataset)
    train_data = []
    for x in train_iter:
        train_data.append(load_image(x, True))
    train_data = tf.stack(train_data, axis=0)
"""
PREFETCH_MISSING = [(4, "TFP101")]


def test_a_file_list_read_once_into_a_list_is_a_one_off_pass():
    assert found(LOADING) == []
    direct = LOADING.replace("    train_iter = iter(train_dataset)\n", "").replace("in train_iter", "in train_dataset")
    assert found(direct) == []


def test_a_loop_that_appends_what_a_training_step_returns_trains():
    source = LOADING.replace("train_data.append(load_image(x, True))", "train_data.append(train_step(x))")
    assert found(source) == PREFETCH_MISSING


def test_the_iterator_used_elsewhere_too_is_not_known_to_be_read_once():
    source = LOADING + "    first = next(train_iter)\n"
    assert found(source) == PREFETCH_MISSING


# -- a training script named like a test ---------------------------------------------------------
# lesson34-交叉验证/train_evalute_test.py: "test" is the data split.
SCRIPT = """
    import tensorflow as tf

    def preprocess(x, y):
        x = tf.cast(x, dtype=tf.float32) / 255.
        return x, y

    db_train = tf.data.Dataset.from_tensor_slices((x_train, y_train))
    db_train = db_train.map(preprocess).shuffle(50000).batch(128)
    sample = next(iter(db_train))
    network.fit(db_train, epochs=6)
"""
TRAINING_REPORTED = [(9, "TFP101"), (9, "TFP102")]


def test_a_script_named_like_a_test_that_trains_is_reported():
    assert found(SCRIPT, "lesson34/train_evalute_test.py") == TRAINING_REPORTED


def test_a_real_test_module_is_not():
    with_test = SCRIPT + "\n    def test_fit():\n        pass\n"
    assert found(with_test, "lesson34/train_evalute_test.py") == []
    runner = SCRIPT + "\n    if __name__ == '__main__':\n        tf.test.main()\n"
    assert found(runner, "model_test.py") == []
    assert found(SCRIPT, "tests/train.py") == []


def test_a_module_that_supports_tests_is_test_code():
    # google-research/tapas' table_dataset_test_utils.py builds the unit tests' datasets with a sequential map.
    for helper in ("tapas/datasets/table_dataset_test_utils.py", "efficientdet/test_util.py",
                   "keras_cv/utils/testing_utils.py", "official/utils/testing/pipeline.py"):
        assert found(SCRIPT, helper) == [], helper


def test_a_test_folder_or_a_name_that_only_mentions_tests_is_not():
    # snowkylin's handbook keeps a scratch DQN in `test/`; `test_utils_box.py` is a box utility of a trainer.
    assert found(SCRIPT, "code/zh/test/train.py") == TRAINING_REPORTED
    assert found(SCRIPT, "trainer_yolo/test_utils_box.py") == TRAINING_REPORTED
    assert found(SCRIPT, "contest_utils.py") == TRAINING_REPORTED
