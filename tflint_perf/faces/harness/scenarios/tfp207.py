"""TFP207 retracing-shapes: a tf.function called with a new length every call."""

from tflint_perf.faces.harness.scenarios import rule_scenario

BEFORE = '''\
"""A tf.function over prefixes of a sequence, one new length per call."""
import numpy as np
import tensorflow as tf

CALLS = 60
START = 100

SEQUENCE = np.random.default_rng(0).normal(size=START + CALLS).astype(np.float32)


def run():
    # A new tf.function per run, as a fresh process would have: every timed run traces from scratch.
    @tf.function
    def encode(tokens):
        return tf.reduce_sum(tf.tanh(tokens) * 2.0)

    results = []
    for n in range(START, START + CALLS):
        results.append(encode(SEQUENCE[:n]).numpy())
    return np.array(results)
'''

SCENARIO = rule_scenario(
    "TFP207", "retracing-shapes", "a small tf.function called 60 times on prefixes of 100..159 float32 values",
    BEFORE, [("    @tf.function\n", "    @tf.function(reduce_retracing=True)\n")],
    fix_safety="safe", equivalence="allclose",
    quick={"CALLS": 6},
    meaning=(
        "Without `reduce_retracing` every new length traces the function again (60 traces); with it TensorFlow "
        "generalises to an unknown length after the second shape and reuses that graph. The values agree."
    ),
)
