"""Pipelines whose input work runs once, or that a strategy already prefetches, each way: shapes from
the practical-ml-vision-book notebooks, the Hands-On Image Generation notebooks, deepmind/sonnet's
examples and TensorFlowOnSpark's Estimator and segmentation examples."""

from __future__ import annotations

import pytest

from tests.conftest import lint

# practical-ml-vision-book's "visual validation" cells: the validation set re-batched by 20, one batch
# drawn by `next` per run of the cell to plot predictions.
_PEEK = (
    "import tensorflow as tf\n"
    "def get_validation_dataset():\n"
    "    return tf.data.TFRecordDataset(VALID).map(parse, num_parallel_calls=tf.data.AUTOTUNE).batch(32)"
    ".prefetch(tf.data.AUTOTUNE)\n"
    "model.fit(get_training_dataset(), validation_data=get_validation_dataset(), epochs=20)\n"
    "dataset = get_validation_dataset()\n"
    "dataset = dataset.unbatch().batch(20)\n"
    "batch = iter(dataset)\n"
    "{read}"
)


def test_an_iterator_read_once_by_next_is_a_look_even_when_its_name_is_also_a_method():
    # `batch` names the iterator and, as `.batch(20)`, a method: only the variable's uses count.
    read = "images, labels = next(batch)\nprobabilities = model.predict(images)\n"
    assert lint(_PEEK.format(read=read), ["TFP101"]) == []


def test_an_iterator_read_by_next_in_a_long_loop_is_still_training_input():
    read = "for step in range(100000):\n    images, labels = next(batch)\n    train_step(images, labels)\n"
    assert [d.code for d in lint(_PEEK.format(read=read), ["TFP101"])] == ["TFP101"]


# TensorFlowOnSpark's mnist_tf.py: an Estimator trained by train_and_evaluate on an input_fn.
_ESTIMATOR = (
    "import tensorflow as tf\nimport tensorflow_datasets as tfds\n"
    "def main_fun(args, ctx):\n"
    "    def input_fn(mode, input_context=None):\n"
    "        ds = tfds.load('mnist', split='train', as_supervised=True)\n"
    "        return ds.repeat(args.epochs).map(scale, num_parallel_calls=4).shuffle(10000).batch(64)\n"
    "{strategy}"
    "    config = tf.estimator.RunConfig({config})\n"
    "    classifier = tf.estimator.Estimator(model_fn=model_fn, model_dir=args.model_dir, config=config)\n"
    "    tf.estimator.train_and_evaluate(classifier, train_spec=tf.estimator.TrainSpec(input_fn=input_fn),\n"
    "                                    eval_spec=tf.estimator.EvalSpec(input_fn=input_fn))\n"
)
_MULTI_WORKER = "    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()\n"


@pytest.mark.parametrize("strategy,config", [
    (_MULTI_WORKER, "train_distribute=strategy, save_checkpoints_steps=100"),
    ("", "train_distribute=tf.distribute.MirroredStrategy()"),
])
def test_an_estimator_whose_run_config_distributes_training_prefetches_its_input(strategy, config):
    assert lint(_ESTIMATOR.format(strategy=strategy, config=config), ["TFP101"]) == []


@pytest.mark.parametrize("strategy,config", [
    ("", "save_checkpoints_steps=100"),
    # `get_strategy()` may be the default strategy, which distributes nothing
    ("    strategy = tf.distribute.get_strategy()\n", "train_distribute=strategy"),
    # the parameter-server strategy hands no distributed iterator to the Estimator's input
    ("    strategy = tf.distribute.experimental.ParameterServerStrategy()\n", "train_distribute=strategy"),
])
def test_an_estimator_without_a_distributing_strategy_is_reported(strategy, config):
    found = lint(_ESTIMATOR.format(strategy=strategy, config=config), ["TFP101"])
    assert [d.code for d in found] == ["TFP101"]


def test_another_estimators_distributing_config_does_not_count():
    # tensorflow/docs' Estimator guide: a distributed LinearRegressor is built in a later cell, but the
    # estimator trained here comes from model_to_estimator with no config
    source = _ESTIMATOR.format(strategy=_MULTI_WORKER, config="train_distribute=strategy").replace(
        "    classifier = tf.estimator.Estimator(model_fn=model_fn, model_dir=args.model_dir, config=config)\n",
        "    regressor = tf.estimator.LinearRegressor(feature_columns=columns, config=config)\n"
        "    classifier = tf.keras.estimator.model_to_estimator(keras_model=model)\n")
    assert [d.code for d in lint(source, ["TFP101"])] == ["TFP101"]


def test_an_estimator_trained_directly_keeps_its_configs_strategy():
    source = _ESTIMATOR.format(strategy=_MULTI_WORKER, config="train_distribute=strategy")
    trained = source.replace("    tf.estimator.train_and_evaluate(classifier, train_spec=tf.estimator.TrainSpec(input_fn=input_fn),\n"
                             "                                    eval_spec=tf.estimator.EvalSpec(input_fn=input_fn))\n",
                             "    classifier.train(input_fn=input_fn, max_steps=10000)\n")
    assert trained != source and lint(trained, ["TFP101"]) == []
    plain = trained.replace("config=config)", "config=tf.estimator.RunConfig(save_checkpoints_steps=100))")
    assert [d.code for d in lint(plain, ["TFP101"])] == ["TFP101"]


# The Hands-On Image Generation VAE notebook and sonnet's simple_mnist.py: MNIST cast and scaled by a
# map without num_parallel_calls, then cached.
_MNIST = (
    "import tensorflow as tf\nimport tensorflow_datasets as tfds\n"
    "(ds_train, ds_test), ds_info = tfds.load('mnist', split=['train', 'test'], as_supervised=True, with_info=True)\n"
    "def preprocess(image, label):\n    image = tf.cast(image, tf.float32)\n    image = image / 255.\n"
    "    return image, image\n"
    "{pipeline}"
    "model.fit(ds_train, epochs=50)\n"
)


@pytest.mark.parametrize("pipeline", [
    "ds_train = ds_train.map(preprocess)\nds_train = ds_train.cache()\n"
    "ds_train = ds_train.shuffle(60000).batch(256)\n",
    # sonnet: shuffled and batched before the cache, which still fills on the first pass
    "ds_train = ds_train.map(preprocess).shuffle(1024).batch(256).cache().prefetch(tf.data.AUTOTUNE)\n",
    # the DCGAN notebook: Fashion-MNIST resized to 32x32 and scaled, cached right after
    "def resize(image, label):\n    return tf.image.resize(tf.cast(image, tf.float32), [32, 32]) / 127.5 - 1, label\n"
    "ds_train = ds_train.map(resize).cache().shuffle(60000).batch(64)\n",
])
def test_a_cheap_map_before_a_cache_runs_in_the_first_epoch_only(pipeline):
    assert lint(_MNIST.format(pipeline=pipeline), ["TFP102"]) == []


@pytest.mark.parametrize("pipeline", [
    # no cache: the cast runs on every element of every epoch
    "ds_train = ds_train.map(preprocess).shuffle(60000).batch(256)\n",
    # a repeat before the cache: the first pass never ends, the map runs on every element
    "ds_train = ds_train.map(preprocess).repeat().cache().batch(256)\n",
])
def test_a_cheap_map_not_cached_is_reported(pipeline):
    assert [d.code for d in lint(_MNIST.format(pipeline=pipeline), ["TFP102"])] == ["TFP102"]


def test_a_costly_map_before_a_cache_is_reported():
    # decoding files is the work a parallel map saves, even once per element
    source = (
        "import tensorflow as tf\n"
        "def load(path):\n    return tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(path)), [224, 224])\n"
        "ds = tf.data.Dataset.list_files(PATTERN).map(load).cache().shuffle(1000).batch(64)\n"
        "model.fit(ds, epochs=30)\n"
    )
    assert [d.code for d in lint(source, ["TFP102"])] == ["TFP102"]


# TensorFlowOnSpark's segmentation.py: `EPOCHS = 1` as the example ships, validation read after it.
_SEGMENTATION = (
    "import tensorflow as tf\nimport tensorflow_datasets as tfds\n"
    "dataset, info = tfds.load('oxford_iiit_pet:3.*.*', with_info=True)\n"
    "def load_image_test(datapoint):\n"
    "    image = tf.image.resize(datapoint['image'], (128, 128))\n"
    "    mask = tf.image.resize(datapoint['segmentation_mask'], (128, 128))\n"
    "    return tf.cast(image, tf.float32) / 255.0, mask\n"
    "train = dataset['train'].map(load_image_train, num_parallel_calls=tf.data.AUTOTUNE)\n"
    "train_dataset = train.cache().shuffle(1000).batch(64).repeat().prefetch(tf.data.AUTOTUNE)\n"
    "test_dataset = dataset['test'].map(load_image_test).batch(64)\n"
    "# EPOCHS = 20\nEPOCHS = {epochs}\n"
    "model.fit(train_dataset, epochs=EPOCHS, steps_per_epoch=57, validation_steps=11,\n"
    "          validation_data=test_dataset)\n"
)


def test_validation_after_a_single_epoch_named_by_a_constant_runs_once():
    assert lint(_SEGMENTATION.format(epochs=1), ["TFP101", "TFP102"]) == []


def test_validation_every_epoch_named_by_a_constant_is_reported():
    found = lint(_SEGMENTATION.format(epochs=20), ["TFP101", "TFP102"])
    assert sorted(d.code for d in found) == ["TFP101", "TFP102"]


# practical-ml-vision-book's 02b_neural_network.ipynb: a Bayesian search of 10 trials of 5 epochs each on
# a sequential decode map with no prefetch, validated every epoch.
_TUNER = (
    "import tensorflow as tf\nimport {module}\n"
    "def decode_csv(line):\n    path, label = tf.io.decode_csv(line, ['', ''])\n"
    "    return tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(path)), [224, 224]), label\n"
    "train_dataset = tf.data.TextLineDataset('train_set.csv').map(decode_csv, num_parallel_calls=8).batch(32)\n"
    "eval_dataset = tf.data.TextLineDataset('eval_set.csv').map(decode_csv, num_parallel_calls=8).batch(32)\n"
    "{tuner} = {make}\n"
    "{tuner}.search(train_dataset, validation_data=eval_dataset, epochs=5)\n"
)


@pytest.mark.parametrize("module,make", [
    ("kerastuner as kt", "kt.BayesianOptimization(build_model, objective='val_accuracy', max_trials=10)"),
    ("keras_tuner", "keras_tuner.Hyperband(build_model, objective='val_accuracy', max_epochs=10)"),
])
def test_a_keras_tuner_search_trains_on_its_pipelines(module, make):
    found = lint(_TUNER.format(module=module, make=make, tuner="tuner"), ["TFP101"])
    assert [d.message.split("`")[1] for d in found] == ["tuner.search()", "tuner.search()"]


def test_another_librarys_search_is_not_training():
    # ScaNN's searcher: `search` names a lookup, not a fit
    source = _TUNER.format(module="scann", make="scann.scann_ops_pybind.builder(db, 10, 'dot_product').build()",
                           tuner="searcher")
    assert lint(source, ["TFP101"]) == []


def test_an_estimator_built_by_a_helper_out_of_sight_is_not_known_to_distribute():
    source = _ESTIMATOR.format(strategy=_MULTI_WORKER, config="train_distribute=strategy").replace(
        "tf.estimator.Estimator(model_fn=model_fn, model_dir=args.model_dir, config=config)",
        "make_classifier(config=config)")
    assert [d.code for d in lint(source, ["TFP101"])] == ["TFP101"]


def test_only_the_train_spec_a_distributed_run_takes_is_distributed():
    source = (
        "import tensorflow as tf\n"
        "def distributed_input_fn():\n"
        "    return tf.data.TFRecordDataset(TRAIN).map(parse, num_parallel_calls=4).shuffle(1000).batch(64)\n"
        "def plain_input_fn():\n"
        "    return tf.data.TFRecordDataset(TRAIN).map(parse, num_parallel_calls=4).shuffle(1000).batch(64)\n"
        "def main():\n"
        "    config = tf.estimator.RunConfig(train_distribute=tf.distribute.MirroredStrategy())\n"
        "    classifier = tf.estimator.Estimator(model_fn=model_fn, config=config)\n"
        "    spec = tf.estimator.TrainSpec(input_fn=distributed_input_fn)\n"
        "    tf.estimator.train_and_evaluate(classifier, spec, tf.estimator.EvalSpec(input_fn=plain_input_fn))\n"
        "    plain = tf.estimator.Estimator(model_fn=model_fn)\n"
        "    tf.estimator.train_and_evaluate(plain, tf.estimator.TrainSpec(input_fn=plain_input_fn),\n"
        "                                    tf.estimator.EvalSpec(input_fn=plain_input_fn))\n"
    )
    found = lint(source, ["TFP101"])
    assert [(d.code, d.location.row) for d in found] == [("TFP101", 5)]


def test_a_prefix_read_uncached_keeps_its_cheap_map_reported():
    # the cache serves only the evaluation; the template's `fit` reads the map's output uncached every epoch
    pipeline = ("ds_train = ds_train.map(preprocess).shuffle(1000).batch(256)\n"
                "ds_cached = ds_train.cache()\nmodel.evaluate(ds_cached)\n")
    assert sorted(d.code for d in lint(_MNIST.format(pipeline=pipeline), ["TFP102", "TFP106"])) == ["TFP102", "TFP106"]


@pytest.mark.parametrize("head", ["def main():\n    EPOCHS = 20\n", "def main(EPOCHS):\n"])
def test_an_epochs_constant_shadowed_where_fit_reads_it_is_not_the_constant(head):
    source = (
        "import tensorflow as tf\nEPOCHS = 1\n" + head +
        "    test_dataset = tf.data.TFRecordDataset(TEST).map(decode).batch(64)\n"
        "    model.fit(train_dataset, epochs=EPOCHS, validation_data=test_dataset)\n"
        "main(30)\n"
    )
    assert sorted(d.code for d in lint(source, ["TFP101", "TFP102"])) == ["TFP101", "TFP102"]
    module_level = source.replace("    EPOCHS = 20\n", "").replace("def main(EPOCHS):", "def main():")
    assert lint(module_level, ["TFP101", "TFP102"]) == []


@pytest.mark.parametrize("epochs", ["", ", epochs=1"])
def test_a_tuner_search_validates_every_trial_whatever_its_epochs(epochs):
    source = _TUNER.format(module="keras_tuner", make="keras_tuner.RandomSearch(build_model, max_trials=50)",
                           tuner="tuner").replace(", epochs=5)", epochs + ")")
    found = lint(source, ["TFP101"])
    assert len(found) == 2 and "as `validation_data` every epoch" in found[1].message
