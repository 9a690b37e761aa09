"""TFP401 deprecated-tf-data-api: the fused experimental transformations against the core pair."""

from tflint_perf.faces.harness.scenarios import Scenario, edit

BEFORE = '''\
"""A pipeline written with tf.data.experimental.shuffle_and_repeat and map_and_batch."""
import tensorflow as tf

RECORDS = 100000
BATCH = 64


def scale(x):
    return tf.cast(x, tf.float32) * 0.5 + 1.0


def run():
    ds = tf.data.Dataset.range(RECORDS)
    ds = ds.apply(tf.data.experimental.shuffle_and_repeat(1000, count=2, seed=7))
    ds = ds.apply(tf.data.experimental.map_and_batch(scale, BATCH, drop_remainder=True))
    ds = ds.prefetch(tf.data.experimental.AUTOTUNE)
    return [batch.numpy() for batch in ds]
'''

AFTER = edit(
    edit(
        edit(
            BEFORE,
            "ds.apply(tf.data.experimental.shuffle_and_repeat(1000, count=2, seed=7))",
            "ds.shuffle(1000, seed=7).repeat(2)",
        ),
        "ds.apply(tf.data.experimental.map_and_batch(scale, BATCH, drop_remainder=True))",
        "ds.map(scale, num_parallel_calls=tf.data.AUTOTUNE).batch(BATCH, drop_remainder=True)",
    ),
    "ds.prefetch(tf.data.experimental.AUTOTUNE)",
    "ds.prefetch(tf.data.AUTOTUNE)",
)

SCENARIO = Scenario(
    code="TFP401",
    name="deprecated-tf-data-api",
    kind="program",
    title="100,000 integers shuffled and repeated twice, scaled and batched by 64",
    before=BEFORE,
    after=AFTER,
    fix_safety="none",
    equivalence="allclose",
    quick={"RECORDS": 2000},
    meaning=(
        "A hygiene rule: no speed-up is claimed, and none is expected (TensorFlow's default rewrites fuse "
        "`shuffle().repeat()` and `map().batch()` back into the fused ops). With no `target-version` the rule "
        "offers no fix; the after is what its safe fix writes for 2.4 and later. The check asks for the same "
        "batches in the same order: `shuffle_and_repeat` with a seed against `shuffle(seed).repeat()`."
    ),
)
