"""TFP201 python-function-in-hot-path: a NumPy normalisation wrapped in numpy_function inside a map."""

from tflint_perf.faces.harness.scenarios import edit, rule_scenario

_HEADER = '''\
"""Rows normalised in a parallel map, batched, trained on."""
import time

import numpy as np
import tensorflow as tf

ROWS = 8000
WIDTH = 64
BATCH = 128
STEP_MS = 1  # simulated accelerator step per batch

ROWS_DATA = np.random.default_rng(0).normal(size=(ROWS, WIDTH)).astype(np.float32)

'''

BEFORE = _HEADER + '''
def normalize(x):
    return ((x - np.mean(x)) / (np.std(x) + 1e-6)).astype(np.float32)


def make_dataset():
    ds = tf.data.Dataset.from_tensor_slices(ROWS_DATA)
    ds = ds.map(lambda x: tf.numpy_function(normalize, [x], tf.float32), num_parallel_calls=tf.data.AUTOTUNE)
    return ds.batch(BATCH)


def train_step(batch):
    time.sleep(STEP_MS / 1000)


def train():
    for batch in make_dataset():
        train_step(batch)
'''

# The rule's documented "use instead": the same computation in TensorFlow ops.
AFTER = edit(
    edit(
        BEFORE,
        "    return ((x - np.mean(x)) / (np.std(x) + 1e-6)).astype(np.float32)",
        "    return (x - tf.reduce_mean(x)) / (tf.math.reduce_std(x) + 1e-6)",
    ),
    "ds.map(lambda x: tf.numpy_function(normalize, [x], tf.float32), num_parallel_calls=tf.data.AUTOTUNE)",
    "ds.map(normalize, num_parallel_calls=tf.data.AUTOTUNE)",
)

SCENARIO = rule_scenario(
    "TFP201", "python-function-in-hot-path",
    "8,000 rows of 64 floats normalised in a parallel map, batches of 128, a 1 ms step",
    BEFORE, AFTER,
    fix_safety="none", equivalence="allclose",
    quick={"ROWS": 256, "BATCH": 32},
    meaning=(
        "No fix: the after is the rule's documented use-instead, the same normalisation in TensorFlow ops. "
        "Each `numpy_function` call takes the GIL and crosses into Python, so the parallel map cannot use "
        "both cores; the values agree to float rounding."
    ),
)
