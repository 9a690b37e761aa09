"""TFP202 cond-over-where: an element-wise choice written as tf.cond inside tf.map_fn."""

from tflint_perf.faces.harness.scenarios import rule_scenario

BEFORE = '''\
"""A leaky ReLU applied element by element with tf.cond."""
import numpy as np
import tensorflow as tf

ELEMENTS = 5000
CALLS = 20

INPUTS = np.random.default_rng(0).normal(size=ELEMENTS).astype(np.float32)


@tf.function
def leaky(x):
    return tf.map_fn(lambda v: tf.cond(v > 0, lambda: v, lambda: 0.2 * v), x)


def run():
    x = tf.constant(INPUTS)
    for _ in range(CALLS):
        y = leaky(x)
    return y.numpy()


def probe():
    x = tf.constant([-2.0, -0.5, 0.0, 0.5, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        total = tf.reduce_sum(leaky(x))
    return {"gradient": tape.gradient(total, x).numpy()}
'''

SCENARIO = rule_scenario(
    "TFP202", "cond-over-where", "a leaky ReLU over 5,000 floats, element by element with map_fn, 20 calls",
    BEFORE, [(
        "tf.cond(v > 0, lambda: v, lambda: 0.2 * v)",
        "tf.where(v > 0, v, 0.2 * v)",
    )],
    fix_safety="unsafe", equivalence="allclose_finite_gradients",
    quick={"ELEMENTS": 200, "CALLS": 2},
    meaning=(
        "The codemod swaps the per-element `tf.cond` for a `tf.where` and keeps the `map_fn`, so the speedup is "
        "what dropping the conditional's control flow buys; vectorising the whole `map_fn` (the comment in the "
        "rule's use-instead) is a further manual step. The fix is unsafe in general (both branches run), so the "
        "check asks for the same values and finite gradients on a probe input."
    ),
)
