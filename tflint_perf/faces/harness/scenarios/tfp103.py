"""TFP103 cache-after-shuffle: parsed records shuffled, then cached, trained on for three epochs."""

from tflint_perf.faces.harness.scenarios import rule_scenario

BEFORE = '''\
"""Parsed records shuffled and cached, trained on for several epochs."""
import time

import tensorflow as tf

RECORDS = 300  # records per epoch
PARSE_MS = 2  # simulated read + parse per record
BATCH = 10
STEP_MS = 1  # simulated accelerator step per batch
EPOCHS = 3


def read_and_parse(index):
    time.sleep(PARSE_MS / 1000)  # sleeping releases the GIL, as waiting on storage does
    return index


def parse(index):
    return tf.reshape(tf.py_function(read_and_parse, [index], tf.int64), [])


def make_dataset():
    ds = tf.data.Dataset.range(RECORDS)
    ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE).shuffle(RECORDS, seed=1).cache().batch(BATCH)
    return ds


def train_step(batch):
    time.sleep(STEP_MS / 1000)


def train():
    ds = make_dataset()
    for epoch in range(EPOCHS):
        for batch in ds:
            train_step(batch)
'''

SCENARIO = rule_scenario(
    "TFP103", "cache-after-shuffle", "300 records parsed at 2 ms each, shuffled, cached, 3 epochs",
    BEFORE, [(".shuffle(RECORDS, seed=1).cache()", ".cache().shuffle(RECORDS, seed=1)")],
    fix_safety="unsafe", equivalence="reshuffled_each_epoch",
    quick={"RECORDS": 40, "PARSE_MS": 1, "BATCH": 4},
    meaning=(
        "A correctness rule: the time is the same either way (both variants cache the parsed records), and "
        "the check shows what the fix is for: before it every epoch replays the first epoch's order; after it "
        "every epoch has the same records in a new order."
    ),
)
