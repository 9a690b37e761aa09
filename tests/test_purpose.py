"""What code is for (analysis/purpose.py): each false-positive class seen on real code, pinned on
realistic excerpts through the real engine."""

import textwrap

import pytest

from tests.conftest import fix, lint
from tflint_perf.analysis.purpose import Purpose, purpose_of_builder, purpose_of_names


def codes(source, select, filename="train.py"):
    return [(d.location.row, d.code) for d in lint(textwrap.dedent(source), select, filename=filename)]


# Each: code on which TFP101 and TFP102 must stay silent, and why.
SILENT = {
    # fchollet/deep-learning-with-python-notebooks: the loader already ends in prefetch(AUTOTUNE).
    "Keras loader that prefetches": """
        from tensorflow import keras
        train_dataset = keras.utils.image_dataset_from_directory("cats_vs_dogs_small/train", image_size=(180, 180), batch_size=32)
        model.fit(train_dataset, epochs=30)
    """,
    "Keras text loader through tf.keras.preprocessing": """
        import tensorflow as tf
        train_ds = tf.keras.preprocessing.text_dataset_from_directory("aclImdb/train", batch_size=32)
        model.fit(train_ds, epochs=10)
    """,
    # tensorflow/docs CycleGAN: zip of two pipelines that each end in prefetch.
    "zip of prefetched pipelines": """
        import tensorflow as tf
        AUTOTUNE = tf.data.AUTOTUNE
        train_horses = train_horses.map(preprocess, num_parallel_calls=AUTOTUNE).batch(1).prefetch(AUTOTUNE)
        train_zebras = train_zebras.map(preprocess, num_parallel_calls=AUTOTUNE).batch(1).prefetch(AUTOTUNE)
        horses = tf.data.Dataset.from_tensor_slices(h).batch(1).prefetch(AUTOTUNE)
        zebras = tf.data.Dataset.from_tensor_slices(z).batch(1).prefetch(AUTOTUNE)
        for image_x, image_y in tf.data.Dataset.zip((horses, zebras)):
            train_step(image_x, image_y)
    """,
    # A text-vectorisation layer adapted on a projection of the training data: a one-off pass.
    "adapt on a projection map": """
        import tensorflow as tf
        raw_train_ds = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(32)
        text_ds = raw_train_ds.map(lambda x, y: x)
        vectorize_layer.adapt(text_ds)
    """,
    "evaluation only": """
        import tensorflow as tf
        test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).map(normalize).batch(64)
        model.evaluate(test_ds)
    """,
    "prediction only": """
        import tensorflow as tf
        ds = tf.data.Dataset.from_tensor_slices(images).map(decode).batch(64)
        predictions = model.predict(ds)
    """,
    "an evaluation loop": """
        import tensorflow as tf
        test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).map(normalize).batch(64)
        for images, labels in test_ds:
            test_step(images, labels)
        print(test_accuracy.result())
    """,
    "inspection through enumerate(take)": """
        import tensorflow as tf
        import matplotlib.pyplot as plt
        ds = tf.data.Dataset.from_tensor_slices(files).map(load).batch(9)
        for i, (image, label) in enumerate(ds.take(9)):
            plt.subplot(3, 3, i + 1)
            plt.imshow(image)
    """,
    "materialised to NumPy once": """
        import tensorflow as tf
        import numpy as np
        ds = tf.data.Dataset.from_tensor_slices(files).map(load)
        arrays = list(ds.as_numpy_iterator())
    """,
    # tensorflow/tpu mnist_estimator: the validation pipeline's builder names it.
    "a pipeline built by an evaluation input function": """
        import tensorflow as tf
        def get_validation_dataset(image_file, label_file):
            dataset = tf.data.TFRecordDataset(image_file).map(parse)
            return dataset.cache().batch(10000).repeat()
        def eval_input_fn():
            return get_validation_dataset(IMAGES, LABELS).make_one_shot_iterator().get_next()
    """,
    # ageron/handson-ml2: a loop that demonstrates parsing, not training.
    "a loop whose body does not train": """
        import tensorflow as tf
        dataset = tf.data.TFRecordDataset(["my_contacts.tfrecord"]).batch(10)
        for serialized_examples in dataset:
            parsed_examples = tf.io.parse_example(serialized_examples, feature_description)
    """,
    "a rebatch after the loader's own prefetch": """
        from tensorflow import keras
        dataset = keras.utils.image_dataset_from_directory(images_dir, labels=None, image_size=(64, 64))
        dataset = dataset.rebatch(64, drop_remainder=True)
        model.fit(dataset, epochs=10)
    """,
    # tensorflow/docs tutorials: MNIST arrays in memory, shuffled and batched: nothing to overlap.
    "in-memory arrays only regrouped": """
        import tensorflow as tf
        train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(60000).batch(64)
        model.fit(train_dataset, epochs=5)
    """,
    # tensorflow/examples udacity time series: slicing a small window into (input, target).
    "a map that only slices its element": """
        import tensorflow as tf
        ds = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
        ds = ds.map(lambda window: (window[:-1], window[-1]))
        model.fit(ds.batch(32).prefetch(tf.data.AUTOTUNE), epochs=5)
    """,
    # tensorflow/tpu imagenet_input.py: the synthetic-data input of the benchmarks.
    "synthetic input from one repeated element": """
        import tensorflow as tf
        def input_fn(params):
            return tf.data.Dataset.range(1).repeat().map(self._get_null_input)
    """,
    # tensorflow/docs segmentation: a mapped pipeline whose element_spec is printed.
    "only the element_spec is read": """
        import tensorflow as tf
        train_batches = tf.data.TFRecordDataset(files).batch(8).prefetch(tf.data.AUTOTUNE)
        print(train_batches.map(add_sample_weights).element_spec)
    """,
    # tensorflow/docs text_generation: a same-file function that only slices.
    "a same-file map function that only slices": """
        import tensorflow as tf
        def split_input_target(chunk):
            input_text = chunk[:-1]
            target_text = chunk[1:]
            return input_text, target_text
        dataset = tf.data.TFRecordDataset(files).map(split_input_target)
        model.fit(dataset.batch(64).prefetch(tf.data.AUTOTUNE), epochs=10)
    """,
    # tensorflow/docs load_data/images: serialised once into a TFRecord file.
    "written once with a TFRecordWriter": """
        import tensorflow as tf
        ds = image_ds.map(tf.io.serialize_tensor)
        tfrec = tf.data.experimental.TFRecordWriter('images.tfrec')
        tfrec.write(ds)
    """,
    # tensorflow/docs load_data/text: the validation split, named so.
    "a pipeline its author names for validation": """
        import tensorflow as tf
        raw_val_ds = tf.data.TextLineDataset(files)
        binary_val_ds = raw_val_ds.map(vectorize_text)
    """,
    "written to disk once": """
        import tensorflow as tf
        ds = tf.data.TFRecordDataset(files).map(parse)
        tf.data.experimental.save(ds, "/tmp/cache")
    """,
}


@pytest.mark.parametrize("name", SILENT)
def test_silent_on(name):
    assert codes(SILENT[name], ["TFP101", "TFP102"]) == []


def test_a_training_loop_is_reported_and_a_prefetching_loader_gets_no_second_prefetch():
    source = """
        import tensorflow as tf
        ds = tf.data.TFRecordDataset(files).map(parse).batch(32)
        for step, (xb, yb) in enumerate(ds):
            with tf.GradientTape() as tape:
                loss = loss_fn(yb, model(xb))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    """
    assert codes(source, ["TFP101"]) == [(3, "TFP101")]
    loader = "from tensorflow import keras\nds = keras.utils.image_dataset_from_directory('d')\nmodel.fit(ds)\n"
    assert fix(loader, ["TFP101"]) == loader


def test_test_files_are_skipped_as_the_other_rules_do():
    source = "import tensorflow as tf\nds = tf.data.Dataset.range(8).map(f).batch(2)\nmodel.fit(ds)\n"
    assert {code for _, code in codes(source, ["TFP101", "TFP102"])} == {"TFP101", "TFP102"}
    assert codes(source, ["TFP101", "TFP102"], filename="tests/input.py") == []
    # Named like a test, a module is test code when it holds a test (tests/test_rare_consumers.py has
    # the script named like one).
    with_test = source + "def test_fit():\n    assert model is not None\n"
    for name in ("tests/test_input.py", "input_test.py", "test_pipeline.py"):
        assert codes(with_test, ["TFP101", "TFP102"], filename=name) == []


def test_a_pipeline_consumed_for_training_and_for_evaluation_is_still_reported():
    source = """
        import tensorflow as tf
        ds = tf.data.Dataset.from_tensor_slices((x, y)).map(normalize).batch(32)
        model.fit(ds, epochs=3)
        model.evaluate(ds)
    """
    assert sorted(code for _, code in codes(source, ["TFP101", "TFP102"])) == ["TFP101", "TFP102"]


@pytest.mark.parametrize(
    "names, purpose",
    [
        (["train_step"], Purpose.TRAINING),
        (["GradientTape", "gradient", "apply_gradients"], Purpose.TRAINING),
        (["test_step", "result"], Purpose.EVALUATION),
        (["update_state"], Purpose.EVALUATION),
        (["generate_images"], Purpose.EVALUATION),
        (["print"], Purpose.INSPECTION),
        (["parse_example"], Purpose.UNKNOWN),
        (["distributed_train_step", "print"], Purpose.TRAINING),
        # A helper that trains and then evaluates trains; one that evaluates what was trained does not,
        # and plotting a training-and-evaluation history is inspection.
        (["train_and_evaluate"], Purpose.TRAINING),
        (["train_then_test"], Purpose.TRAINING),
        (["eval_train_ds"], Purpose.EVALUATION),
        (["evaluate_trained_model"], Purpose.EVALUATION),
        (["plot_train_and_eval"], Purpose.INSPECTION),
    ],
)
def test_loop_purpose_from_the_names_it_calls(names, purpose):
    assert purpose_of_names(names) is purpose


def test_evaluation_and_inference_modules_are_not_training_code():
    # tensorflow/tpu models/official/detection/evaluate_model.py and evaluation/coco_utils.py.
    source = (
        "import tensorflow as tf\nds = tf.data.TFRecordDataset(files).map(parse_fn)\n"
        "ds = ds.prefetch(tf.data.AUTOTUNE).batch(1)\nimages = ds.make_one_shot_iterator().get_next()\n"
    )
    assert {code for _, code in codes(source, ["TFP101", "TFP102"], filename="detection/train_input.py")} == {
        "TFP101", "TFP102"
    }
    for name in ("detection/evaluate_model.py", "detection/evaluation/coco_utils.py", "inference.py", "predict.py"):
        assert codes(source, ["TFP101", "TFP102"], filename=name) == []
    # A `samples/` directory says nothing about what its modules are for.
    assert codes(source, ["TFP101"], filename="samples/train.py") == [(3, "TFP101")]


def test_a_module_that_fits_is_training_whatever_its_path_says():
    # tensorflow/docs guide/migrate/evaluator.ipynb: trains with fit, then evaluates with a SidecarEvaluator.
    source = (
        "import tensorflow as tf\nmodel = make_model()\n"
        "model.compile(optimizer='adam', loss='mse', run_eagerly=True)\nmodel.fit(x, y, epochs=1)\n"
    )
    assert codes(source, ["TFP208"], filename="guide/migrate/evaluator.py") == [(3, "TFP208")]
    # An evaluation module that takes gradients (a saliency map) without fitting is still not training code.
    evaluating = source.replace(
        "model.fit(x, y, epochs=1)", "model.evaluate(x, y)\nwith tf.GradientTape() as tape:\n    saliency = model(x)"
    )
    assert codes(evaluating, ["TFP208"], filename="train.py") == [(3, "TFP208")]
    assert codes(evaluating, ["TFP208"], filename="guide/migrate/evaluator.py") == []


@pytest.mark.parametrize(
    "names, purpose",
    [
        # A helper named for both sets may build either: the pipeline's own name decides.
        (["test_ds", "get_train_and_test_datasets"], Purpose.EVALUATION),
        (["train_ds", "get_train_and_test_datasets"], Purpose.TRAINING),
        (["ds", "train_and_evaluate"], Purpose.UNKNOWN),
        (["train_and_evaluate"], Purpose.UNKNOWN),
    ],
)
def test_builder_purpose_a_name_for_both_sets_says_nothing(names, purpose):
    assert purpose_of_builder(names) is purpose


def test_a_helper_building_training_and_test_sets_reports_only_the_training_one():
    source = """
        import tensorflow as tf

        def get_train_and_test_datasets(files_train, files_test):
            train_ds = tf.data.TFRecordDataset(files_train).map(parse).batch(32)
            test_ds = tf.data.TFRecordDataset(files_test).map(parse).batch(32)
            return train_ds, test_ds
    """
    assert codes(source, ["TFP102"]) == [(5, "TFP102")]
