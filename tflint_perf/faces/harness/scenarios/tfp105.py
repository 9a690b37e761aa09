"""TFP105 from-generator-over-arrays: a generator that only slices NumPy arrays already in memory."""

from tflint_perf.faces.harness.scenarios import rule_scenario

BEFORE = '''\
"""Rows of in-memory arrays fed through a Python generator, batched, trained on."""
import numpy as np
import tensorflow as tf

ROWS = 20000
WIDTH = 64
BATCH = 128

_rng = np.random.default_rng(0)
FEATURES = _rng.normal(size=(ROWS, WIDTH)).astype(np.float32)
LABELS = _rng.integers(0, 10, size=ROWS).astype(np.int64)


def make_dataset():
    def gen():
        for i in range(len(FEATURES)):
            yield FEATURES[i], LABELS[i]

    ds = tf.data.Dataset.from_generator(
        gen, output_signature=(tf.TensorSpec((WIDTH,), tf.float32), tf.TensorSpec((), tf.int64)))
    return ds.batch(BATCH)


def train_step(batch):
    pass


def train():
    for batch in make_dataset():
        train_step(batch)
'''

SCENARIO = rule_scenario(
    "TFP105", "from-generator-over-arrays",
    "20,000 rows of 64 float32 (and int64 labels) from a generator over NumPy arrays, batches of 128",
    BEFORE, [(
        "ds = tf.data.Dataset.from_generator(\n"
        "        gen, output_signature=(tf.TensorSpec((WIDTH,), tf.float32), tf.TensorSpec((), tf.int64)))",
        "ds = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS))",
    )],
    fix_safety="unsafe", equivalence="identical",
    quick={"ROWS": 512, "BATCH": 32},
    meaning=(
        "The generator runs under the GIL through a `py_function`, one row at a time; `from_tensor_slices` slices "
        "the same arrays in TensorFlow. The arrays already have the signature's dtypes, so the unsafe fix (it would "
        "keep an array's own dtype) gives the same batches here."
    ),
)
