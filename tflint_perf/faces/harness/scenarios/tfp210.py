"""TFP210 concat-in-loop: a tensor grown with tf.concat on every step of a tf.while_loop."""

from tflint_perf.faces.harness.scenarios import edit, rule_scenario

BEFORE = '''\
"""A running transformation accumulated step by step inside a tf.function."""
import numpy as np
import tensorflow as tf

STEPS = 80000

INPUTS = np.random.default_rng(0).normal(size=STEPS).astype(np.float32)


@tf.function
def accumulate(xs):
    def body(i, out):
        return i + 1, tf.concat([out, [xs[i] * 2.0 + 1.0]], axis=0)

    _, out = tf.while_loop(lambda i, out: i < STEPS, body, (0, tf.zeros([0])),
                           shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))
    return out


def run():
    return accumulate(tf.constant(INPUTS)).numpy()
'''

# The rule's documented "use instead": one TensorArray write per step, one stack at the end.
AFTER = edit(
    BEFORE,
    '''    def body(i, out):
        return i + 1, tf.concat([out, [xs[i] * 2.0 + 1.0]], axis=0)

    _, out = tf.while_loop(lambda i, out: i < STEPS, body, (0, tf.zeros([0])),
                           shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))
    return out
''',
    '''    def body(i, out):
        return i + 1, out.write(i, xs[i] * 2.0 + 1.0)

    _, out = tf.while_loop(lambda i, out: i < STEPS, body, (0, tf.TensorArray(tf.float32, size=STEPS)))
    return out.stack()
''',
)

SCENARIO = rule_scenario(
    "TFP210", "concat-in-loop", "80,000 steps of a tf.while_loop in a tf.function, one float appended per step",
    BEFORE, AFTER,
    fix_safety="none", equivalence="allclose",
    quick={"STEPS": 200},
    meaning=(
        "No fix: the after is the rule's documented use-instead, a `tf.TensorArray`. Each `tf.concat` copies the "
        "whole tensor so far, so the before is quadratic in the number of steps and the gap grows with it; the "
        "values are the same."
    ),
)
