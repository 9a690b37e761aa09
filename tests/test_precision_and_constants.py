"""TFP301/TFP302 on realistic code: the precision and hardware a module targets (analysis/precision.py)
and sizes followed to constants, defaults and flags (analysis/constants.py)."""

import textwrap

import libcst
import pytest

from tests.conftest import fix, lint
from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.checking.config import Settings

MIXED = "from tensorflow.keras import mixed_precision\nmixed_precision.set_global_policy('mixed_float16')\n"


def findings(source, codes=("TFP301", "TFP302")):
    return [(d.code, d.message) for d in lint(textwrap.dedent(source), list(codes), filename="train.py")]


@pytest.mark.parametrize(
    "setup, width, reported, assumed",
    [
        ("", 100, False, None),
        ("", 250, False, None),  # float32 says nothing about the GPU: only a configured alignment reports it
        (MIXED, 100, True, "float16"),
        ("from tensorflow import keras\nkeras.mixed_precision.set_global_policy('mixed_bfloat16')\n", 100, True, "bfloat16"),
        ("import tensorflow as tf\ntf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n", 100, True, "float16"),
        ("import tensorflow as tf\ntf.compat.v1.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n", 100, True, "float16"),
        (MIXED + "import tensorflow as tf\nstrategy = tf.distribute.TPUStrategy(resolver)\n", 100, False, None),
        (MIXED + "import tensorflow as tf\nresolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu='')\n", 100, False, None),
        ("import tensorflow_decision_forests as tfdf\n" + MIXED, 100, False, None),
    ],
)
def test_the_alignment_follows_the_modules_precision(setup, width, reported, assumed):
    source = setup + (
        "from tensorflow import keras\n"
        f"model = keras.Sequential([keras.layers.Dense({width}, activation='relu'), keras.layers.Dense(10)])\n"
    )
    found = findings(source, ["TFP301"])
    assert bool(found) == reported
    if reported:
        assert assumed in found[0][1]


def test_float16_layers_ask_for_multiples_of_8():
    source = "from tensorflow import keras\nhidden = [keras.layers.Dense(100, dtype='float16'), keras.layers.Dense(1)]\n"
    assert [code for code, _ in findings(source, ["TFP301"])] == ["TFP301"]


def test_small_layers_and_batches_are_memory_bound_and_never_reported():
    source = MIXED + "from tensorflow import keras\nmodel = keras.Sequential([keras.layers.Dense(30), keras.layers.Dense(1)])\nmodel.fit(x, y, batch_size=50)\n"
    assert findings(source) == []


def test_a_width_tied_to_a_reshape_is_not_a_choice():
    source = MIXED + textwrap.dedent("""
        from tensorflow import keras
        decoder = keras.Sequential([keras.layers.Dense(2450), keras.layers.Reshape((7, 7, 50)), keras.layers.Conv2DTranspose(1, 5)])
    """)
    assert findings(source, ["TFP301"]) == []


VALUE_SOURCES = {
    "module constant": (
        MIXED + "BATCH_SIZE = 100\nmodel.fit(x, y, batch_size=BATCH_SIZE)\n",
        "constant `BATCH_SIZE = 100`",
    ),
    "parameter default": (
        MIXED + "def train(model, batch_size=100):\n    model.fit(x, y, batch_size=batch_size)\n",
        "default of parameter `batch_size`",
    ),
    "argparse default": (
        MIXED + "import argparse\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--batch-size', type=int, default=100)\nargs = parser.parse_args()\n"
        "model.fit(x, y, batch_size=args.batch_size)\n",
        "flag --batch-size, default 100",
    ),
    "absl flag": (
        MIXED + "from absl import flags\nflags.DEFINE_integer('batch_size', 100, 'Batch size.')\nFLAGS = flags.FLAGS\n"
        "model.fit(x, y, batch_size=FLAGS.batch_size)\n",
        "flag --batch_size, default 100",
    ),
    "tf.compat.v1 flag": (
        MIXED + "import tensorflow as tf\ntf.compat.v1.flags.DEFINE_integer('batch_size', 100, 'Batch size.')\n"
        "FLAGS = tf.compat.v1.flags.FLAGS\nmodel.fit(x, y, batch_size=FLAGS.batch_size)\n",
        "flag --batch_size, default 100",
    ),
    "TF1 next_batch": (
        MIXED + "import tensorflow as tf\nfor step in range(num_steps):\n    batch_x, batch_y = mnist.train.next_batch(100)\n"
        "    sess.run(train_op, feed_dict={X: batch_x, Y: batch_y})\n",
        "`next_batch` size 100",
    ),
    "Estimator numpy_input_fn": (
        MIXED + "import tensorflow as tf\ninput_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(\n"
        "    x={'x': x_train}, y=y_train, batch_size=100, num_epochs=None, shuffle=True)\n",
        "`numpy_input_fn` batch_size 100",
    ),
    # The batch size given to the pipeline a model fits (issue 22), through a helper that builds it.
    "parameter default from a constant": (
        MIXED + "import tensorflow as tf\nBATCH_SIZE = 100\n\ndef make_train_dataset(files, batch_size=BATCH_SIZE):\n"
        "    ds = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=8).shuffle(10_000)\n"
        "    return ds.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)\n\n"
        "model.fit(make_train_dataset(train_files), epochs=5)\n",
        "default of parameter `batch_size`, constant `BATCH_SIZE = 100`",
    ),
    "passed by every caller": (
        MIXED + "import tensorflow as tf\nBATCH_SIZE = 100\n\ndef get_dataset(files, batch_size, training):\n"
        "    ds = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=8)\n    if training:\n"
        "        ds = ds.shuffle(10_000).repeat()\n    return ds.batch(batch_size).prefetch(1)\n\n"
        "train_ds = get_dataset(train_files, BATCH_SIZE, True)\nval_ds = get_dataset(val_files, BATCH_SIZE, False)\n"
        "model.fit(train_ds, validation_data=val_ds, steps_per_epoch=500, epochs=5)\n",
        "passed for parameter `batch_size` by every caller: constant `BATCH_SIZE = 100`",
    ),
    "layer width from a constant": (
        MIXED + "from tensorflow import keras\nHIDDEN = 100\n"
        "model = keras.Sequential([keras.layers.Dense(HIDDEN, activation='relu'), keras.layers.Dense(10)])\n",
        "constant `HIDDEN = 100`",
    ),
}


@pytest.mark.parametrize("name", VALUE_SOURCES)
def test_values_are_followed_and_named(name):
    source, origin = VALUE_SOURCES[name]
    found = findings(source)
    assert len(found) == 1 and origin in found[0][1], found
    # Only a literal at the use site is fixed; a value set elsewhere may differ at run time.
    literal_here = name in ("TF1 next_batch", "Estimator numpy_input_fn")
    assert (fix(source, unsafe=True) != source) == literal_here


def test_a_rebound_name_is_unknown_and_evaluation_sizes_are_not_training():
    assert findings(MIXED + "def train(batch_size=100):\n    batch_size = compute()\n    model.fit(x, y, batch_size=batch_size)\n") == []
    assert findings(MIXED + "input_fn = tf.compat.v1.estimator.inputs.numpy_input_fn(x, y, batch_size=100, shuffle=False)\n") == []
    # `batch(n).map(f).unbatch()`: a vectorised map, not the training batch.
    source = MIXED + (
        "import tensorflow as tf\nds = tf.data.TFRecordDataset(files).batch(100).map(parse).unbatch().batch(128)\n"
        "model.fit(ds)\n"
    )
    assert findings(source, ["TFP302"]) == []


def test_a_parameter_callers_disagree_on_or_do_not_show_is_unknown():
    helper = MIXED + "import tensorflow as tf\n\ndef get_dataset(files, batch_size):\n    return tf.data.TFRecordDataset(files).batch(batch_size)\n\n"
    # Two callers, two sizes: the training pipeline's cannot be told from the helper alone.
    assert findings(helper + "model.fit(get_dataset(a, 100))\nmodel.evaluate(get_dataset(b, 50))\n", ["TFP302"]) == []
    # A size read at run time.
    assert findings(helper + "model.fit(get_dataset(a, args.batch_size))\n", ["TFP302"]) == []
    # Every caller passes the same aligned size.
    assert findings(helper + "model.fit(get_dataset(a, 128))\nmodel.fit(get_dataset(b, 128))\n", ["TFP302"]) == []
    # Under float32 (TF32, multiples of 4) the same 100 is aligned: the 16-bit policy is what makes it a finding.
    plain = helper.replace(MIXED, "")
    assert findings(plain + "model.fit(get_dataset(a, 100))\n", ["TFP302"]) == []
    assert [c for c, _ in findings(helper + "model.fit(get_dataset(a, 100))\n", ["TFP302"])] == ["TFP302"]


def test_a_stateful_rnn_is_skipped_only_at_batch_one():
    layer = "from tensorflow import keras\nrnn = keras.layers.LSTM(1020, stateful=True, batch_input_shape=[{}, None, 64])\n"
    assert findings(MIXED + layer.format(1), ["TFP301"]) == []
    assert [code for code, _ in findings(MIXED + layer.format(64), ["TFP301"])] == ["TFP301"]


@pytest.mark.parametrize(
    "setup, name, alignment",
    [
        ("", "float32", 0),  # tensor cores run float32 only as TF32, on Ampere and later: the code does not say
        (MIXED, "float16", 8),
        ("import tensorflow_decision_forests as tfdf\n", "decision forests", 0),
    ],
)
def test_the_alignment_a_modules_precision_asks_for(setup, name, alignment):
    precision = AnalysedModule(libcst.parse_module(setup + "from tensorflow import keras\nlayer = keras.layers.Dense(100)\n")).precision
    assert (precision.name, precision.alignment) == (name, alignment)


def test_float32_code_is_checked_only_when_the_user_states_tf32_hardware():
    # float32 says nothing about the GPU (TF32 tensor cores only from Ampere on), so the default is
    # silent; `alignment = 4` is the user saying the code runs on TF32 tensor cores.
    source = (
        "import tensorflow as tf\nfrom tensorflow import keras\n"
        "model = keras.Sequential([keras.layers.Dense(250, activation='relu'), keras.layers.Dense(10)])\n"
        "model.fit(x, y, batch_size=90, epochs=5)\n"
    )
    assert lint(source, ["TFP301", "TFP302"], filename="train.py") == []
    tf32 = Settings(options={"alignment": 4})
    found = lint(source, ["TFP301", "TFP302"], filename="train.py", settings=tf32)
    assert sorted((d.code, d.message.rsplit(" ", 1)[-1]) for d in found) == [("TFP301", "252"), ("TFP302", "92")]
    assert all("configured alignment" in d.message for d in found)
