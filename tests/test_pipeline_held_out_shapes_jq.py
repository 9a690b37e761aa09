"""Pipeline classes the spent held-out sets j to q taught (issue 22), each pinned both ways on excerpts
written from the real code, through the real engine:

- ``tfds.load(name, split=splits)`` with a split the call does not spell out (TF 2.0's
  ``tfds.Split.ALL.subsplit(weighted=(80, 10, 10))``, ``list(splits)``), unpacked into names: one
  pipeline per name (lmoroney/dlaicourse's TFLite and TFDS courses, the Packt TF2 book's Chapter 5);
- ``ds.__iter__()`` is ``iter(ds)``: ``next(ds.__iter__())`` peeks, and an iterator a notebook binds
  afresh in several cells is read by the ``next`` calls its own binding reaches (Packt's Hands-On CV);
- a Dataset method whose result is thrown away never runs (``dataset.map(augment)`` on its own line);
- ``for sentence, sequence in zip(sentences, ds)``: a list beside the pipeline does not hide it;
- ``print(ds)`` at module level looks at the pipeline, as ``element_spec`` does (the Packt TF2 book's
  ``estimators.py`` builds two input_fn pipelines and prints them);
- ``TrainingDataset.load_tfrecord(...)``: a static method called on its same-file class is followed
  (bojone/bert4keras' pretraining data), and a method a class inherits from another module's class
  (``train_generator.to_dataset(...)``) is applied in the importer.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.conftest import lint, run_cli
from tflint_perf.checking.config import Settings


def found(source: str, select=("TFP101", "TFP102"), filename: str = "notebook.py", target=None):
    settings = Settings(target_version=target)
    return sorted((d.location.row, d.code) for d in lint(textwrap.dedent(source), list(select), settings, filename=filename))


# lmoroney/dlaicourse, TensorFlow Deployment/Course 2 - TensorFlow Lite/Week 2/Exercise (cells joined).
SUBSPLITS = """
    import tensorflow as tf
    import tensorflow_datasets as tfds

    splits = tfds.Split.ALL.subsplit(weighted=(80, 10, 10))
    splits, info = tfds.load('rock_paper_scissors', with_info=True, as_supervised=True, split = splits)
    (train_examples, validation_examples, test_examples) = splits

    def format_image(image, label):
        image = tf.image.resize(image, IMAGE_SIZE) / 255.0
        return  image, label

    train_batches = train_examples.shuffle(num_examples // 4).batch(32).map(format_image).prefetch(1)
    validation_batches = validation_examples.batch(32).map(format_image).prefetch(1)
    test_batches = test_examples.batch(1).map(format_image)
    hist = model.fit(train_batches, epochs=5, validation_data=validation_batches)
    """

# PacktPublishing/Deep-Learning-with-TensorFlow-2-and-Keras, Chapter 5/horse_and_humans_transfer_learning.
LISTED_SUBSPLITS = """
    import tensorflow as tf
    import tensorflow_datasets as tfds

    SPLIT_WEIGHTS = (8, 1, 1)
    splits = tfds.Split.TRAIN.subsplit(weighted=SPLIT_WEIGHTS)
    (raw_train, raw_validation, raw_test), metadata = tfds.load(
        'horses_or_humans', split=list(splits), with_info=True, as_supervised=True)

    def format_example(image, label):
        image = tf.cast(image, tf.float32)
        image = (image/127.5) - 1
        image = tf.image.resize(image, (160, 160))
        return image, label

    train = raw_train.map(format_example)
    validation = raw_validation.map(format_example)
    test = raw_test.map(format_example)
    train_batches = train.shuffle(2000).batch(32)
    validation_batches = validation.batch(32)
    test_batches = test.batch(32)
    history = model.fit(train_batches, epochs=20, validation_data=validation_batches)
    """


def test_subsplits_unpacked_into_names_are_one_pipeline_each():
    # The training and validation maps resize each batch on one thread, every epoch; the test map is
    # read by no consumer here.
    assert found(SUBSPLITS, ["TFP102"], target=(2, 0)) == [(13, "TFP102"), (14, "TFP102")]


def test_a_listed_subsplit_gives_the_training_and_validation_pipelines():
    assert found(LISTED_SUBSPLITS, target=(2, 0)) == [
        (16, "TFP102"), (17, "TFP102"), (19, "TFP101"), (20, "TFP101"),
    ]


def test_a_split_named_once_is_still_one_pipeline():
    source = """
        import tensorflow as tf
        import tensorflow_datasets as tfds
        split = 'train[:80%]'
        ds = tfds.load('cats_vs_dogs', split=split, as_supervised=True)
        model.fit(ds.map(lambda x, y: (tf.image.resize(x, (224, 224)), y)).batch(32), epochs=10)
    """
    assert found(source, target=(2, 0)) == [(6, "TFP101"), (6, "TFP102")]


def test_a_dict_of_splits_unpacked_gives_its_keys_not_pipelines():
    # `tfds.load` without `split=` returns a dict: unpacking it gives the split names.
    source = """
        import tensorflow as tf
        import tensorflow_datasets as tfds
        train, test = tfds.load('mnist')
        model.fit(train.map(lambda x: tf.image.resize(x['image'], (64, 64))).batch(32), epochs=10)
    """
    assert found(source, target=(2, 0)) == []


# PacktPublishing/Hands-On-Computer-Vision-with-TensorFlow-2, Chapter04 and Chapter07 (cells joined).
PEEKED = """
    import tensorflow as tf

    def _parse_function(filename, label):
        image = tf.io.decode_jpeg(tf.io.read_file(filename), channels=3)
        return tf.image.resize(image, [64, 64]), label

    dataset = tf.data.Dataset.from_tensor_slices((image_files, image_labels))
    dataset = dataset.map(_parse_function)
    dataset = dataset.shuffle(buffer_size=10000).batch(32).repeat(30).prefetch(1)
    images, labels = {read}
    """


def test_next_of_a_spelled_out_iterator_is_a_peek():
    assert found(PEEKED.format(read="next(dataset.__iter__())")) == []


def test_an_iterator_read_every_step_is_still_training():
    source = textwrap.dedent(PEEKED.format(read="None")) + textwrap.dedent("""
        it = dataset.__iter__()
        for step in range(num_steps):
            train_step(next(it))
    """)
    assert found(source) == [(9, "TFP102")]


def test_an_iterator_bound_afresh_in_each_cell_is_read_once_each_time():
    source = """
        import tensorflow as tf
        ds = tf.data.TFRecordDataset(tfrecord_file).map(convert_example_to_sample)
        hands_dataset_iter = ds.batch(5).skip(1).__iter__()
        batch = next(hands_dataset_iter)
        plot_image_grid([batch['image'].numpy()])
        hands_dataset_iter = ds.batch(5).skip(1).__iter__()
        batch = next(hands_dataset_iter)
        plot_image_grid([batch['image'].numpy()])
    """
    assert found(source) == []


def test_a_map_whose_result_is_thrown_away_never_runs():
    source = """
        import tensorflow as tf
        dataset = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=4)
        dataset.map(_training_augmentation_fn)
        dataset.map(_training_augmentation_fn).batch(8)
        model.fit(dataset.batch(32).prefetch(1), epochs=10)
    """
    assert found(source) == []


def test_a_map_whose_result_is_kept_is_reported():
    source = """
        import tensorflow as tf
        dataset = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=4)
        dataset = dataset.map(_training_augmentation_fn)
        model.fit(dataset.batch(32).prefetch(1), epochs=10)
    """
    assert found(source) == [(4, "TFP102")]


# https-deeplearning-ai/tensorflow-1-public, C3/W1/ungraded_labs/C3_W1_Lab_2_sequences_basic.
def test_a_loop_printing_a_list_beside_the_pipeline_is_an_inspection():
    source = """
        import tensorflow as tf
        sentences = ['I love my dog', 'I love my cat', 'You love my dog!']
        sentences_dataset = tf.data.Dataset.from_tensor_slices(sentences)
        sequences = sentences_dataset.map(vectorize_layer)
        for sentence, sequence in zip(sentences, sequences):
          print(f'{sentence} ---> {sequence}')
    """
    assert found(source) == []


def test_a_loop_training_on_a_pipeline_zipped_with_a_list_is_training():
    source = """
        import tensorflow as tf
        ds = tf.data.TFRecordDataset(files).map(parse)
        for weight, (x, y) in zip(weights, ds):
            train_step(x, y, weight)
    """
    assert found(source) == [(3, "TFP101"), (3, "TFP102")]


# PacktPublishing/Deep-Learning-with-TensorFlow-2-and-Keras, Chapter 2/estimators.py.
ESTIMATORS = """
    import tensorflow as tf
    import tensorflow_datasets as tfds

    def input_fn(mode):
      datasets, info = tfds.load(name='mnist', with_info=True, as_supervised=True)
      mnist_dataset = (datasets['train'] if mode == tf.estimator.ModeKeys.TRAIN else datasets['test'])
      def scale(image, label):
        image = tf.cast(image, tf.float32)
        image /= 255
        return image, label
      {body}
      return mnist_dataset.map(scale).shuffle(10000).batch(64)

    test = input_fn('test')
    train = input_fn(tf.estimator.ModeKeys.TRAIN)
    {after}
    """


def test_pipelines_only_printed_at_module_level_are_looked_at():
    source = textwrap.dedent(ESTIMATORS).format(body="pass", after="print(test)\nprint(train)")
    assert found(source, ["TFP102", "TFP106"], target=(2, 0)) == []


def test_a_printed_pipeline_that_is_also_trained_on_is_reported():
    source = textwrap.dedent(ESTIMATORS).format(body="pass", after="print(train)\nmodel.fit(train, epochs=5)")
    assert found(source, ["TFP102"], target=(2, 0)) == [(13, "TFP102")]


def test_a_helper_printing_the_pipeline_it_returns_says_nothing_of_its_callers():
    source = """
        import tensorflow as tf
        def make_train_dataset(files):
            ds = tf.data.TFRecordDataset(files).map(parse).shuffle(1000).repeat().batch(32)
            print(ds)
            return ds
    """
    assert found(source, ["TFP102"]) == [(4, "TFP102")]


# bojone/bert4keras, pretraining/data_utils.py (shortened): the subclass's static method adds the parse.
STATIC_LOADERS = """
    import tensorflow as tf

    class TrainingDataset(object):
        @staticmethod
        def load_tfrecord(record_names, batch_size, parse_function):
            dataset = tf.data.TFRecordDataset(record_names)
            dataset = dataset.map(parse_function)
            dataset = dataset.repeat()
            dataset = dataset.shuffle(batch_size * 1000)
            dataset = dataset.batch(batch_size)
            return dataset

    class TrainingDatasetRoBERTa(TrainingDataset):
        @staticmethod
        def load_tfrecord(record_names, sequence_length, batch_size):
            def parse_function(serialized):
                return tf.io.parse_single_example(serialized, {{'ids': tf.io.FixedLenFeature([sequence_length], tf.int64)}})
            return TrainingDataset.load_tfrecord(record_names, batch_size, parse_function)

    dataset = TrainingDatasetRoBERTa.load_tfrecord(corpus_paths, 512, 256)
    train_model.fit(dataset, steps_per_epoch=10000, epochs={epochs})
    """


def test_a_static_method_called_on_its_class_builds_the_pipeline_fitted():
    assert found(STATIC_LOADERS.format(epochs=200), ["TFP101"]) == [(11, "TFP101")]


def test_a_static_method_s_pipeline_only_evaluated_is_not_training():
    source = STATIC_LOADERS.format(epochs=200).replace("train_model.fit(dataset, steps_per_epoch=10000, epochs=200)",
                                                       "train_model.evaluate(dataset, steps=100)")
    assert found(source, ["TFP101"]) == []


# bojone/bert4keras: bert4keras/snippets.py's DataGenerator.to_dataset, subclassed by an example.
GENERATORS = '''
import tensorflow as tf


class DataGenerator(object):
    def __init__(self, data, batch_size=32):
        self.data = data
        self.batch_size = batch_size

    def forfit(self, random=True):
        while True:
            for d in self.__iter__(random):
                yield d

    def to_dataset(self, types, shapes):
        dataset = tf.data.Dataset.from_generator(self.forfit, output_types=types)
        dataset = dataset.padded_batch(self.batch_size, shapes)
        return dataset
'''

EXAMPLE = '''
import tensorflow as tf
from lib.snippets import DataGenerator


class data_generator(DataGenerator):
    def __iter__(self, random=False):
        for text, label in self.data:
            yield tokenizer.encode(text), [label]


train_generator = data_generator(train_data, 32)
train_dataset = train_generator.to_dataset(types=('float32', 'float32'), shapes=([None], [1]))
model.fit(train_dataset, steps_per_epoch=len(train_generator), epochs={epochs})
'''


def _project(tmp_path: Path, epochs: str) -> Path:
    root = tmp_path / "project"
    (root / "lib").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'example'\n")
    (root / "lib" / "__init__.py").write_text("")
    (root / "lib" / "snippets.py").write_text(GENERATORS)
    (root / "example.py").write_text(EXAMPLE.format(epochs=epochs))
    return root


def _reported(root: Path):
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", "TFP101", ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return sorted((Path(d["filename"]).as_posix(), d["location"]["row"]) for d in json.loads(result.stdout))


def test_a_method_inherited_from_another_module_builds_the_pipeline_the_importer_fits(tmp_path):
    assert _reported(_project(tmp_path, "10")) == [("lib/snippets.py", 17)]


def test_an_inherited_builder_whose_pipeline_only_a_predict_reads_is_not_reported(tmp_path):
    root = _project(tmp_path, "10")
    example = root / "example.py"
    example.write_text(example.read_text().replace(
        "model.fit(train_dataset, steps_per_epoch=len(train_generator), epochs=10)",
        "model.predict(train_dataset, steps=len(train_generator))"))
    assert _reported(root) == []


# A print beside a use the analysis cannot see (a training loop from a library): the print is not the
# pipeline's purpose, so the maps stay reported (the review of the print-is-inspection change).
PRINTED_AND_TRAINED_OUT_OF_SIGHT = """
    import tensorflow as tf
    from mylib import train_loop

    def parse(record):
        return tf.py_function(decode, [record], tf.float32)

    dataset = tf.data.TFRecordDataset(files).map(parse).batch(32)
    {look}
    train_loop(dataset, epochs=100)
    """


def test_a_print_beside_a_library_training_loop_does_not_hide_the_maps():
    source = PRINTED_AND_TRAINED_OUT_OF_SIGHT.format(look="print(dataset)")
    assert found(source, ["TFP102", "TFP201"]) == [(6, "TFP201"), (8, "TFP102")]


def test_an_element_spec_beside_a_library_training_loop_does_not_hide_the_maps():
    source = PRINTED_AND_TRAINED_OUT_OF_SIGHT.format(look="print(dataset.element_spec)")
    assert found(source, ["TFP102", "TFP201"]) == [(6, "TFP201"), (8, "TFP102")]


def test_a_pipeline_printed_rebuilt_and_printed_again_is_still_only_looked_at():
    source = PRINTED_AND_TRAINED_OUT_OF_SIGHT.format(look="print(dataset)\n    dataset = dataset.prefetch(1)\n    print(dataset)")
    assert found(source.replace("train_loop(dataset, epochs=100)", ""), ["TFP102", "TFP201"]) == []


def test_a_pipeline_returned_by_a_function_that_reads_its_element_spec_is_not_only_looked_at():
    source = """
        import tensorflow as tf
        def make(files):
            dataset = tf.data.TFRecordDataset(files).map(parse).batch(32)
            shapes = dataset.element_spec
            return dataset
    """
    assert found(source, ["TFP102"]) == [(4, "TFP102")]


# A module whose pipeline another module takes with `from data import *` and trains on.
STARRED_DATA = """
import tensorflow as tf

def parse(record):
    return tf.py_function(decode, [record], tf.float32)

raw = tf.data.TFRecordDataset(files)
dataset = raw.map(parse)
dataset = dataset.batch(32)
for x in raw.take(1):
    print(x)
"""


def _starred_project(tmp_path: Path, importer: str) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'example'\n")
    (root / "data.py").write_text(STARRED_DATA)
    (root / "train2.py").write_text(f"import tensorflow as tf\n{importer}\n\nmodel.fit(dataset, epochs=50)\n")
    return root


def _codes(root: Path):
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", "TFP201", ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return sorted((Path(d["filename"]).as_posix(), d["location"]["row"], d["code"]) for d in json.loads(result.stdout))


def test_a_pipeline_another_module_star_imports_is_read(tmp_path):
    assert _codes(_starred_project(tmp_path, "from data import *")) == [("data.py", 5, "TFP201")]


def test_a_pipeline_no_module_imports_is_never_read(tmp_path):
    assert _codes(_starred_project(tmp_path, "from data import raw")) == []


# `tfds.load(..., batch_size=-1)` returns whole tensors, also when -1 is a module constant; a batch size
# the analysis cannot read may be -1 too, so `x, y = ...` is then no pair of pipelines.
WHOLE_TENSORS = """
    import tensorflow as tf
    import tensorflow_datasets as tfds

    SPLIT = tfds.Split.TRAIN
    ALL = -1
    x, y = tfds.load("mnist", split=SPLIT, as_supervised=True, batch_size={size})
    model.fit(x, y, epochs=10)
    """


def test_a_batch_size_of_minus_one_in_a_constant_gives_tensors_not_pipelines():
    assert found(WHOLE_TENSORS.format(size="ALL"), ["TFP101"]) == []


def test_an_unread_batch_size_does_not_unpack_into_pipelines():
    assert found(WHOLE_TENSORS.format(size="args.batch_size"), ["TFP101"]) == []


def test_a_batch_size_in_a_positive_constant_keeps_the_pipeline():
    source = WHOLE_TENSORS.format(size="ALL").replace("ALL = -1", "ALL = 32").replace(
        "x, y = tfds.load", "ds = tfds.load").replace("model.fit(x, y,", "model.fit(ds,")
    assert found(source, ["TFP101"]) == [(7, "TFP101")]
