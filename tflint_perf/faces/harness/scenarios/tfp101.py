"""TFP101 missing-prefetch: records read one at a time, batched, trained on in a loop."""

from tflint_perf.faces.harness.scenarios import rule_scenario

BEFORE = '''\
"""Training input read record by record (like a TFRecord file), batched, without prefetch."""
import time

import numpy as np
import tensorflow as tf

RECORDS = 200  # records per epoch
READ_MS = 10  # simulated storage latency and decode per record
BATCH = 2
STEP_MS = 20  # simulated accelerator step per batch
FEATURES = 16


def read_records():
    # Stands in for TFRecordDataset(files); sleeping releases the GIL, as waiting on storage does.
    for index in range(RECORDS):
        time.sleep(READ_MS / 1000)
        yield index, np.full(FEATURES, index, dtype=np.float32)


def make_dataset():
    signature = (tf.TensorSpec([], tf.int64), tf.TensorSpec([FEATURES], tf.float32))
    ds = tf.data.Dataset.from_generator(read_records, output_signature=signature)
    ds = ds.batch(BATCH)
    return ds


def train_step(batch):
    time.sleep(STEP_MS / 1000)  # the accelerator's step: the host thread waits, as it does on a GPU


def train():
    for batch in make_dataset():
        train_step(batch)
'''

SCENARIO = rule_scenario(
    "TFP101", "missing-prefetch", "200 records read at 10 ms each, batches of 2, a 20 ms training step",
    BEFORE, [("ds = ds.batch(BATCH)", "ds = ds.batch(BATCH).prefetch(tf.data.AUTOTUNE)")],
    fix_safety="safe", equivalence="identical",
    rewrites=("inject_prefetch",),
    quick={"RECORDS": 24, "READ_MS": 2, "STEP_MS": 4},
    meaning=(
        "With `inject_prefetch` off (TensorFlow before 2.12, or autotuning/default optimizations disabled) "
        "the step waits for reading and reading waits for the step: the explicit prefetch overlaps them. "
        "With TensorFlow's defaults the runtime injects the prefetch itself, so before and after match."
    ),
    notes=(
        "The rule's example has a parallel `map` before the `batch`. On TensorFlow 2.21 an autotuned parallel "
        "map keeps a buffer of finished elements that already overlaps most of the input work with the step "
        "(measured here: no difference at 8 records per batch), so this scenario puts the cost in the reader, "
        "the stage a prefetch is there to hide."
    ),
)
