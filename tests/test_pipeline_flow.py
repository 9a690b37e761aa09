"""The pipeline model on every flow shape real code uses, through the real engine (TFP101/TFP102)."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint


def findings(source: str, code: str = "TFP101"):
    return [(d.location.row, d.code) for d in lint(textwrap.dedent(source), [code])]


FLOWS = {
    "method chain": """
        import tensorflow as tf
        ds = tf.data.Dataset.from_tensor_slices((paths, y)).map(load_image).shuffle(100).batch(32)
        model.fit(ds, epochs=5)
    """,
    "reassignments": """
        import tensorflow as tf
        ds = tf.data.TFRecordDataset(files)
        ds = ds.map(parse, num_parallel_calls=4)
        ds = ds.batch(32)
        model.fit(ds)
    """,
    "helper returns pipeline": """
        import tensorflow as tf
        def make_dataset(files):
            ds = tf.data.TFRecordDataset(files)
            return ds.batch(32)
        train_ds = make_dataset(train_files)
        model.fit(train_ds)
    """,
    "helper appends ops": """
        import tensorflow as tf
        def augment(ds):
            return ds.batch(32)
        ds = tf.data.Dataset.range(100)
        ds = augment(ds)
        model.fit(ds)
    """,
    "helper returns tuple": """
        import tensorflow as tf
        def get_datasets():
            train = tf.data.Dataset.range(100).batch(8)
            val = tf.data.Dataset.range(10).batch(8).prefetch(1)
            return train, val
        train_ds, val_ds = get_datasets()
        model.fit(train_ds, validation_data=val_ds)
    """,
    "tfds split list": """
        import tensorflow as tf
        import tensorflow_datasets as tfds
        (train, test), info = tfds.load("mnist", split=["train", "test"], with_info=True)
        train = train.batch(64)
        model.fit(train)
    """,
    "keras directory source mapped after its own prefetch": """
        from tensorflow import keras
        train_ds = keras.utils.image_dataset_from_directory("data/", batch_size=32)
        train_ds = train_ds.map(augment)
        model.fit(train_ds)
    """,
    "custom training loop": """
        import tensorflow as tf
        ds = tf.data.Dataset.range(100).batch(4)
        for step, batch in enumerate(ds):
            loss = train_step(batch)
    """,
    "pipeline stored on self": """
        import tensorflow as tf
        class Trainer:
            def __init__(self, files):
                self.ds = tf.data.TFRecordDataset(files).batch(16)
            def train(self):
                for batch in self.ds:
                    self.step(batch)
    """,
    "one-shot iterator": """
        import tensorflow.compat.v1 as tf
        ds = tf.data.TFRecordDataset(files).batch(16)
        it = ds.make_one_shot_iterator()
    """,
    "dataset subclass": """
        import tensorflow as tf
        class MyData(tf.data.Dataset):
            pass
        ds = MyData().batch(2)
        model.fit(ds)
    """,
}


@pytest.mark.parametrize("name", FLOWS)
def test_missing_prefetch_is_found_through(name):
    assert findings(FLOWS[name]), f"no TFP101 for {name}"


def test_branch_only_ops_are_a_may_analysis():
    source = """
        import tensorflow as tf
        def make(training):
            ds = tf.data.TFRecordDataset(files)
            if training:
                ds = ds.shuffle(1000)
            ds = ds.batch(32)
            return ds
        model.fit(make(True))
    """
    assert findings(source) == [(7, "TFP101")]


def test_branch_that_ends_differently_is_reported_once_per_ending_without_a_fix():
    source = """
        import tensorflow as tf
        ds = tf.data.Dataset.range(10).batch(2)
        if augment:
            ds = ds.map(f, num_parallel_calls=2)
        model.fit(ds)
    """
    diagnostics = lint(textwrap.dedent(source), ["TFP101"])
    assert sorted(d.location.row for d in diagnostics) == [3, 5]
    assert all(d.fix is None for d in diagnostics)


def test_prefetch_added_on_every_branch_is_enough():
    source = """
        import tensorflow as tf
        ds = tf.data.Dataset.range(10).batch(2)
        if fast:
            ds = ds.prefetch(4)
        else:
            ds = ds.prefetch(1)
        model.fit(ds)
    """
    assert findings(source) == []


def test_helper_that_prefetches_is_respected():
    source = """
        import tensorflow as tf
        def make():
            return tf.data.Dataset.range(10).batch(2).prefetch(tf.data.AUTOTUNE)
        model.fit(make())
    """
    assert findings(source) == []


def test_prefetch_not_last_is_reported():
    source = """
        import tensorflow as tf
        ds = tf.data.Dataset.range(10).prefetch(2).batch(2)
        model.fit(ds)
    """
    (diagnostic,) = lint(textwrap.dedent(source), ["TFP101"])
    assert "not the last transformation" in diagnostic.message


def test_helper_consuming_its_parameter():
    source = """
        import tensorflow as tf
        def train(model, ds):
            model.fit(ds, epochs=3)
        train(model, tf.data.Dataset.range(8).batch(2))
    """
    assert findings(source) == [(5, "TFP101")]


def test_nested_helpers_are_followed():
    source = """
        import tensorflow as tf
        def base():
            return tf.data.Dataset.range(8)
        def batched():
            return base().batch(2)
        def main():
            model.fit(batched())
    """
    assert findings(source) == [(6, "TFP101")]


NEGATIVES = {
    "inspection take loop": """
        import tensorflow as tf
        ds = tf.data.Dataset.range(10).batch(2)
        for images, labels in ds.take(3):
            print(images.shape)
    """,
    "print-only loop": """
        import tensorflow as tf
        ds = tf.data.Dataset.range(10).batch(2)
        for x in ds:
            print(x.numpy())
    """,
    "peek": """
        import tensorflow as tf
        ds = tf.data.Dataset.range(10).batch(2)
        sample = next(iter(ds))
    """,
    "break after first": """
        import tensorflow as tf
        ds = tf.data.Dataset.range(10).batch(2)
        for x in ds:
            shape = model(x).shape
            break
    """,
    "unconsumed library return": """
        import tensorflow as tf
        def make_dataset(files):
            return tf.data.TFRecordDataset(files).batch(32)
    """,
    # Given to `train`, the input_fn's pipeline is read per step (tests/test_estimator_input_fns.py).
    "estimator input_fn only evaluated": """
        import tensorflow as tf
        def input_fn():
            return tf.data.TFRecordDataset(files).batch(32)
        estimator.evaluate(input_fn=input_fn, steps=100)
    """,
    "distribute from function": """
        import tensorflow as tf
        def dataset_fn(ctx):
            return tf.data.Dataset.range(10).batch(2)
        dist = strategy.distribute_datasets_from_function(dataset_fn)
    """,
    "pandas map then fit": """
        import pandas as pd
        import tensorflow as tf
        df = pd.read_csv("x.csv")
        x = df["a"].map(str)
        model.fit(x, y)
    """,
    "spark rdd": """
        import tensorflow as tf
        rdd = sc.parallelize(data).map(f).filter(g)
        model.fit(rdd)
    """,
    "builtin map": """
        import tensorflow as tf
        xs = list(map(float, values))
        model.fit(xs, ys)
    """,
    "tf.map_fn": """
        import tensorflow as tf
        out = tf.map_fn(lambda t: t * 2, tf.range(4))
        model.fit(out)
    """,
    "user class with map": """
        import tensorflow as tf
        class Pipeline:
            def map(self, f):
                return self
        p = Pipeline().map(f)
        model.fit(p)
    """,
    "parameter never given a dataset": """
        import tensorflow as tf
        def train(ds):
            model.fit(ds.batch(32))
    """,
    "numpy in-memory arrays": """
        import numpy as np
        import tensorflow as tf
        model.fit(np.zeros((10, 3)), np.zeros(10), batch_size=32)
    """,
}


@pytest.mark.parametrize("name", NEGATIVES)
def test_no_missing_prefetch_for(name):
    assert findings(NEGATIVES[name]) == []


MAP_NEGATIVES = {
    "pandas": "import pandas as pd\nimport tensorflow as tf\npd.Series([1]).map(str)\n",
    "rdd": "import tensorflow as tf\nrdd = sc.textFile('x').map(len)\n",
    "builtin": "import tensorflow as tf\nlist(map(len, ['a']))\n",
    "tf.map_fn": "import tensorflow as tf\ntf.map_fn(lambda t: t, tf.range(3))\n",
    "user class": "import tensorflow as tf\nclass A:\n    def map(self, f):\n        return f\nA().map(len)\n",
    "positional parallelism": "import tensorflow as tf\ntf.data.Dataset.range(3).map(f, 4)\n",
    "interleave positional": "import tensorflow as tf\ntf.data.Dataset.range(3).interleave(f, 2, 1, 4)\n",
    "star args": "import tensorflow as tf\ntf.data.Dataset.range(3).map(f, **kwargs)\n",
}


@pytest.mark.parametrize("name", MAP_NEGATIVES)
def test_no_sequential_map_for(name):
    assert findings(MAP_NEGATIVES[name], "TFP102") == []


def test_sequential_map_inside_helper_called_with_a_dataset():
    source = """
        import tensorflow as tf
        def preprocess(ds):
            return ds.map(decode)
        ds = preprocess(tf.data.TFRecordDataset(files))
    """
    assert findings(source, "TFP102") == [(4, "TFP102")]


def test_sequential_map_in_interleave_function_is_a_pipeline_too():
    source = """
        import tensorflow as tf
        files = tf.data.Dataset.list_files("*.tfrecord")
        ds = files.interleave(lambda f: tf.data.TFRecordDataset(f).map(parse), num_parallel_calls=4)
    """
    assert findings(source, "TFP102") == [(4, "TFP102")]


@pytest.mark.parametrize(
    "function,applicability",
    [
        ("def fn(x):\n    return tf.cast(x, tf.float32) / 255.0\n", "safe"),
        ("def fn(x):\n    return tf.image.random_flip_left_right(x)\n", "unsafe"),
        ("def fn(x):\n    return tf.random.uniform([]) + x\n", "unsafe"),
        ("def fn(x):\n    return tf.image.stateless_random_flip_left_right(x, seed=(1, 2))\n", "safe"),
        ("def fn(x):\n    return tf.py_function(load, [x], tf.float32)\n", "unsafe"),
        ("def fn(x):\n    global seen\n    seen += 1\n    return x * 2\n", "unsafe"),
        ("from mylib import fn\n", "unsafe"),
        ("def helper(x):\n    return tf.random.normal([3]) * x\ndef fn(x):\n    return helper(x)\n", "unsafe"),
        ("augment = tf.keras.Sequential([tf.keras.layers.RandomFlip()])\ndef fn(x):\n    return augment(x)\n", "unsafe"),
        ("rescale = tf.keras.layers.Rescaling(1 / 255)\ndef fn(x):\n    return rescale(x)\n", "safe"),
    ],
)
def test_fix_safety_follows_the_map_functions_body(function, applicability):
    source = f"import tensorflow as tf\n{function}ds = tf.data.Dataset.range(4).map(fn)\n"
    (diagnostic,) = lint(source, ["TFP102"])
    assert diagnostic.fix is not None and diagnostic.fix.applicability == applicability


def test_deterministic_false_makes_the_fix_unsafe():
    source = "import tensorflow as tf\nds = tf.data.Dataset.range(4).map(lambda x: x + 1, deterministic=False)\n"
    (diagnostic,) = lint(source, ["TFP102"])
    assert diagnostic.fix.applicability == "unsafe"


def test_functools_partial_and_lambda_calling_named_function():
    source = textwrap.dedent(
        """
        import functools
        import tensorflow as tf
        def scale(x, factor):
            return x * factor
        ds = tf.data.Dataset.range(4).map(functools.partial(scale, factor=2))
        ds = ds.map(lambda x: scale(x, 3))
        """
    )
    diagnostics = lint(source, ["TFP102"])
    assert [d.fix.applicability for d in diagnostics] == ["safe", "safe"]


def test_target_version_gates_what_the_runtime_rewrites():
    from tflint_perf.checking.config import Settings

    source = "import tensorflow as tf\nds = tf.data.Dataset.range(4).map(lambda x: x + 1)\nmodel.fit(ds)\n"
    new = {d.code: d.message for d in lint(source, settings=Settings(target_version=(2, 15)))}
    old = {d.code: d.message for d in lint(source, settings=Settings(target_version=(2, 5)))}
    unknown = {d.code: d.message for d in lint(source, settings=Settings())}
    # 2.15 injects the prefetch and parallelises the stateless map itself: nothing to say.
    assert "TFP101" not in new and "TFP102" not in new
    # 2.5 does neither: the findings stand, with no caveat.
    assert "TensorFlow" not in old["TFP101"] and "TensorFlow" not in old["TFP102"]
    # Unknown: the message says which versions the finding holds for.
    assert "TensorFlow < 2.12" in unknown["TFP101"] and "TensorFlow < 2.7" in unknown["TFP102"]


def test_options_that_switch_the_rewrites_off_keep_the_findings_on_new_versions():
    from tflint_perf.checking.config import Settings

    source = (
        "import tensorflow as tf\noptions = tf.data.Options()\noptions.autotune.enabled = False\n"
        "ds = tf.data.Dataset.range(4).map(lambda x: x + 1).with_options(options)\nmodel.fit(ds)\n"
    )
    assert sorted(d.code for d in lint(source, settings=Settings(target_version=(2, 15)))) == ["TFP101", "TFP102"]
    stateful = "import tensorflow as tf\nds = tf.data.Dataset.range(4).map(lambda x: x + tf.random.uniform([]))\nmodel.fit(ds)\n"
    assert [d.code for d in lint(stateful, ["TFP102"], settings=Settings(target_version=(2, 15)))] == ["TFP102"]

