"""TFP106 unvectorized-map: a cheap element-wise map before batch."""

from tflint_perf.faces.harness.scenarios import rule_scenario

BEFORE = '''\
"""Scalars transformed one by one, then batched."""
import tensorflow as tf

ELEMENTS = 200000
BATCH = 256


def make_dataset():
    return tf.data.Dataset.range(ELEMENTS).map(lambda x: x * 2 + 1).batch(BATCH)


def train_step(batch):
    pass


def train():
    for batch in make_dataset():
        train_step(batch)
'''

SCENARIO = rule_scenario(
    "TFP106", "unvectorized-map", "200,000 int64 scalars through `x * 2 + 1`, batches of 256, drained",
    BEFORE, [(".map(lambda x: x * 2 + 1).batch(BATCH)", ".batch(BATCH).map(lambda x: x * 2 + 1)")],
    fix_safety="safe", equivalence="identical",
    rewrites=("map_parallelization",),
    quick={"ELEMENTS": 2048},
    meaning=(
        "The map's scheduling costs far more than its arithmetic; batching first runs it once per 256 elements. "
        "TensorFlow's `map_parallelization` rewrite spreads the per-element calls over the cores but does not "
        "remove them, so the gain is similar with and without it."
    ),
)
