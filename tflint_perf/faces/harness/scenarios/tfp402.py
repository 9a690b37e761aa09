"""TFP402 deprecated-keras-function-api: ``tf.compat.v1.py_func`` against ``tf.numpy_function``."""

from tflint_perf.faces.harness.scenarios import Scenario, edit

BEFORE = '''\
"""A map that calls NumPy through the deprecated py_func."""
import numpy as np
import tensorflow as tf

RECORDS = 20000


def clip(x):
    return np.clip(x, 0.25, 0.75).astype(np.float32)


def run():
    data = np.random.default_rng(0).random((RECORDS, 16), dtype=np.float32)
    ds = tf.data.Dataset.from_tensor_slices(data)
    ds = ds.map(lambda x: tf.compat.v1.py_func(clip, [x], tf.float32))
    return np.stack([row.numpy() for row in ds])
'''

SCENARIO = Scenario(
    code="TFP402",
    name="deprecated-keras-function-api",
    kind="program",
    title="20,000 rows of 16 floats clipped by NumPy inside a Dataset.map",
    before=BEFORE,
    after=edit(BEFORE, "tf.compat.v1.py_func(clip, [x], tf.float32)", "tf.numpy_function(clip, [x], tf.float32)"),
    fix_safety="none",
    equivalence="allclose",
    quick={"RECORDS": 200},
    meaning=(
        "A hygiene rule: `tf.numpy_function` keeps `py_func`'s semantics, so no speed-up is expected (the "
        "Python call is the slow part either way; see TFP201). With no `target-version` the rule offers no "
        "fix; the after is what its safe fix writes for 1.14 and later. The check asks for the same values."
    ),
)
