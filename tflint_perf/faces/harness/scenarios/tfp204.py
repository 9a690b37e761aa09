"""TFP204 python-scalar-to-tf-function: a tf.function called with the Python step number."""

from tflint_perf.faces.harness.scenarios import rule_scenario

BEFORE = '''\
"""A tf.function step that takes the step number, called with Python ints as training goes on."""
import numpy as np
import tensorflow as tf

CALLS = 60
WIDTH = 256

INPUTS = np.random.default_rng(0).normal(size=(WIDTH, WIDTH)).astype(np.float32)
_FIRST_STEP = [0]  # training goes on: every run continues from the previous run's step number


@tf.function
def scaled_step(x, step):
    h = tf.nn.relu(tf.matmul(x, x))
    return tf.reduce_mean(h) * tf.cast(step % 7, tf.float32)


def run():
    x = tf.constant(INPUTS)
    first = _FIRST_STEP[0]
    _FIRST_STEP[0] += CALLS
    outputs = []
    for step in range(first, first + CALLS):
        outputs.append(scaled_step(x, step).numpy())
    return np.array(outputs)


def probe():
    return {"traces": scaled_step.experimental_get_tracing_count()}
'''

SCENARIO = rule_scenario(
    "TFP204", "python-scalar-to-tf-function",
    "60 calls of a small tf.function (a 256 x 256 matmul) with the Python step number",
    BEFORE, [("scaled_step(x, step).numpy()", "scaled_step(x, tf.constant(step)).numpy()")],
    fix_safety="unsafe", equivalence="allclose_fewer_traces",
    quick={"CALLS": 4, "WIDTH": 16},
    meaning=(
        "Each new Python step number traces the function again; the unsafe fix passes `tf.constant(step)`, "
        "so every call reuses one graph. The values are the same and the probe counts the traces."
    ),
)
