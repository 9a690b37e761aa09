"""TF1 Estimator input functions as TFP101's consumers (issue 22), through the real engine and CLI.

Written from google-research/bert (`file_based_input_fn_builder` returns the inner `input_fn`
closure, given to `TPUEstimator.train`; the same builder with `is_training=False` feeds
`evaluate`/`predict`) and google-research/simclr (`build_input_fn(builder, is_training)` reads a
tfds builder passed in, and consumes its pipeline through a one-shot iterator): the training
pipeline is read once per step, evaluation's is not a training step.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.conftest import fix, lint, run_cli
from tflint_perf.checking.config import Settings

BERT_BUILDER = """
    import tensorflow as tf


    def file_based_input_fn_builder(input_file, is_training, drop_remainder):
      def input_fn(params):
        batch_size = params["batch_size"]
        d = tf.data.TFRecordDataset(input_file)
        if is_training:
          d = d.repeat()
          d = d.shuffle(buffer_size=100)
        d = d.apply(
            tf.contrib.data.map_and_batch(
                lambda record: _decode_record(record, name_to_features),
                batch_size=batch_size,
                drop_remainder=drop_remainder))
        return d
      return input_fn


    def main(_):
      estimator = tf.contrib.tpu.TPUEstimator(model_fn=model_fn, config=run_config)
"""
TRAIN = """
      train_input_fn = file_based_input_fn_builder(input_file=train_file, is_training=True, drop_remainder=True)
      estimator.train(input_fn=train_input_fn, max_steps=num_train_steps)
"""
EVALUATE = """
      eval_input_fn = file_based_input_fn_builder(input_file=eval_file, is_training=False, drop_remainder=False)
      result = estimator.evaluate(input_fn=eval_input_fn, steps=eval_steps)
      predictions = estimator.predict(input_fn=eval_input_fn)
"""


def bert(*parts: str) -> str:
    return textwrap.dedent(BERT_BUILDER) + "".join(textwrap.dedent(part).replace("\n", "\n  ")[:-2] for part in parts)


def rows(source: str, settings: Settings = None):
    return [(d.location.row, d.code) for d in lint(source, ["TFP101"], settings=settings, filename="run_classifier.py")]


def test_a_factorys_input_fn_given_to_estimator_train_is_reported_at_its_last_op():
    source = bert(TRAIN, EVALUATE)
    assert rows(source) == [(12, "TFP101")]
    message = lint(source, ["TFP101"], filename="run_classifier.py")[0].message
    assert "`estimator.train()`" in message


def test_the_same_builder_feeding_only_evaluate_and_predict_is_not():
    assert rows(bert(EVALUATE)) == []


def test_train_and_evaluates_train_spec_and_a_lambda_input_fn_are_consumers_too():
    spec = """
      train_spec = tf.estimator.TrainSpec(input_fn=file_based_input_fn_builder(train_file, True, True), max_steps=10000)
      tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    """
    assert rows(bert(spec)) == [(12, "TFP101")]
    with_lambda = """
      estimator.train(input_fn=lambda: file_based_input_fn_builder(train_file, True, True)({"batch_size": 32}))
    """
    assert rows(bert(with_lambda)) == [(12, "TFP101")]


def test_a_positional_argument_of_another_train_method_is_not_an_input_fn():
    """`trainer.train(dataset_fn)` of something that is not an Estimator: the argument is not a
    function returning a pipeline, so nothing is read into it."""
    source = textwrap.dedent("""
        import tensorflow as tf

        ds = tf.data.TFRecordDataset(files).map(parse, 4).batch(32)
        trainer.train(num_steps, ds.cardinality())
    """)
    assert rows(source) == []


def test_the_fix_is_valid_on_the_target_tensorflow():
    """BERT pins TensorFlow 1.11: no `AUTOTUNE` spelling is certain there, a buffer of one is; from
    1.13 `tf.data.experimental.AUTOTUNE` exists; a second `--fix` changes nothing."""
    source = bert(TRAIN)
    old = fix(source, ["TFP101"], settings=Settings(target_version=(1, 11)))
    assert "drop_remainder=drop_remainder)).prefetch(1)\n" in old
    assert fix(old, ["TFP101"], settings=Settings(target_version=(1, 11))) == old
    newer = fix(source, ["TFP101"], settings=Settings(target_version=(1, 15)))
    assert ".prefetch(tf.data.experimental.AUTOTUNE)\n" in newer


SIMCLR_DATA = """
    import tensorflow as tf


    def build_input_fn(builder, is_training):
      def _input_fn(params):
        def map_fn(image, label):
          return preprocess(image, is_training), label

        dataset = builder.as_dataset(
            split=FLAGS.train_split if is_training else FLAGS.eval_split,
            shuffle_files=is_training, as_supervised=True)
        if is_training:
          dataset = dataset.shuffle(params['batch_size'] * 10)
          dataset = dataset.repeat(-1)
        dataset = dataset.map(map_fn, num_parallel_calls=tf.data.experimental.AUTOTUNE)
        dataset = dataset.batch(params['batch_size'], drop_remainder=is_training)
        images, labels = tf.data.make_one_shot_iterator(dataset).get_next()
        return images, {'labels': labels}
      return _input_fn
"""


def test_a_tfds_builder_passed_in_starts_the_pipeline_its_input_fn_consumes():
    assert rows(textwrap.dedent(SIMCLR_DATA)) == [(17, "TFP101")]


def test_an_as_dataset_without_the_tfds_signature_starts_nothing():
    """`loader.as_dataset(split=...)` alone could be any library's; tfds's own keywords say it is tfds."""
    source = textwrap.dedent(SIMCLR_DATA).replace("shuffle_files=is_training, as_supervised=True", "mode=1")
    assert rows(source) == []


def test_an_input_fn_factory_in_another_module_is_followed_through_the_project(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "inputs.py").write_text(textwrap.dedent(BERT_BUILDER).split("\ndef main")[0])
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        import tensorflow as tf

        import inputs


        def main():
            estimator = tf.estimator.Estimator(model_fn=model_fn)
            estimator.train(input_fn=inputs.file_based_input_fn_builder("train.tfrecord", True, True), max_steps=100)
    """))
    result = run_cli("check", "--no-cache", "--select", "TFP101", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    found = [(Path(d["filename"]).as_posix(), d["location"]["row"]) for d in json.loads(result.stdout)]
    assert found == [("inputs.py", 12)]


IRIS_TPU_ESTIMATOR = """
    import tensorflow as tf

    def train_input_fn(features, labels, batch_size):
        dataset = tf.data.Dataset.from_tensor_slices((dict(features), labels))
        dataset = dataset.shuffle(1000).repeat()
        dataset = dataset.apply(tf.contrib.data.batch_and_drop_remainder(batch_size))
        return dataset

    classifier.train(input_fn=lambda params: train_input_fn(train_x, train_y, params["batch_size"]), max_steps=500)
"""


def test_in_memory_arrays_batched_through_apply_do_no_work_to_overlap():
    """tensorflow/tpu's iris colab: pandas columns sliced, shuffled and batched with the TF1 spelling
    `apply(batch_and_drop_remainder(n))`; a parsing map in their place is work."""
    source = textwrap.dedent(IRIS_TPU_ESTIMATOR)
    assert rows(source) == []
    parsed = source.replace("dataset.shuffle(1000)", "dataset.map(parse_csv).shuffle(1000)")
    assert rows(parsed) == [(7, "TFP101")]


# GoogleCloudPlatform/tf-estimator-tutorials' babyweight trainer: the input function returns a one-shot
# iterator's tensors to `TrainSpec`, or its pipeline only to `EvalSpec`. Its real path,
# `model_evaluation_pipeline/trainer/model.py`, no longer says evaluation (`path_purpose`: the `trainer/`
# nearest the module decides), so the module is placed where the nearest name does say it.
BABYWEIGHT = """
    import tensorflow as tf


    def read_dataset(prefix, mode, batch_size):
        def _input_fn():
            def decode_csv(value_column):
                columns = tf.decode_csv(value_column, record_defaults=DEFAULTS)
                features = dict(zip(CSV_COLUMNS, columns))
                label = features.pop(LABEL_COLUMN)
                return features, label
            dataset = tf.data.TextLineDataset(tf.gfile.Glob(prefix)).map(decode_csv)
            if mode == tf.estimator.ModeKeys.TRAIN:
                dataset = dataset.shuffle(buffer_size=10 * batch_size)
            dataset = dataset.repeat(None).batch(batch_size)
            return dataset.make_one_shot_iterator().get_next()
        return _input_fn


    def train_and_evaluate(output_dir):
        estimator = tf.estimator.DNNLinearCombinedRegressor(model_dir=output_dir)
        train_spec = tf.estimator.{spec}(input_fn=read_dataset('train', tf.estimator.ModeKeys.TRAIN, 512))
        tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
"""
EVALUATION_PATH = "model_evaluation_pipeline/babyweight_model.py"


def test_an_estimator_training_on_an_iterators_tensors_trains_whatever_the_path_says():
    source = textwrap.dedent(BABYWEIGHT.replace("{spec}", "TrainSpec"))
    assert [d.code for d in lint(source, ["TFP102"], filename=EVALUATION_PATH)] == ["TFP102"]


def test_the_same_input_fn_given_only_to_evaluation_in_an_evaluation_module_is_not():
    source = textwrap.dedent(BABYWEIGHT.replace("{spec}", "EvalSpec"))
    assert lint(source, ["TFP102"], filename=EVALUATION_PATH) == []
