"""TFP205 function-created-in-loop: ``tf.function(fn)`` created anew for every batch."""

from tflint_perf.faces.harness.scenarios import rule_scenario

_HEADER = '''\
"""A regulariser computed per batch by a tf.function."""
import numpy as np
import tensorflow as tf

BATCHES = 50
WIDTH = 128

BATCH_DATA = [np.random.default_rng(i).normal(size=(WIDTH, WIDTH)).astype(np.float32) for i in range(BATCHES)]


def penalty(x):
    return tf.reduce_sum(tf.square(tf.matmul(x, x, transpose_b=True)))

'''

BEFORE = _HEADER + '''
def run():
    totals = []
    for batch in BATCH_DATA:
        totals.append(tf.function(penalty)(batch).numpy())
    return np.array(totals)
'''

# The rule has no fix: this is its documented use-instead, the function created once before the loop.
AFTER = _HEADER + '''
def run():
    totals = []
    penalty_fn = tf.function(penalty)
    for batch in BATCH_DATA:
        totals.append(penalty_fn(batch).numpy())
    return np.array(totals)
'''

SCENARIO = rule_scenario(
    "TFP205", "function-created-in-loop",
    "50 batches of 128 x 128 floats, a tf.function created per batch vs once",
    BEFORE, AFTER,
    fix_safety="none", equivalence="allclose",
    quick={"BATCHES": 4, "WIDTH": 16},
    meaning=(
        "No fix: the after is the rule's documented use-instead (the `tf.function` created once, before the "
        "loop). Before, each batch builds a new function that traces on its first call; after, one trace serves "
        "every batch. The same 50 values come out."
    ),
)
