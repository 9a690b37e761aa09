"""TFP102 sequential-map: a stateful decode function mapped one element at a time."""

from tflint_perf.faces.harness.scenarios import rule_scenario

BEFORE = '''\
"""Records decoded by a Python-side function, one at a time, then batched for training."""
import threading
import time

import tensorflow as tf

RECORDS = 200  # records per epoch
DECODE_MS = 10  # simulated read + decode per record
BATCH = 4
STEP_MS = 2  # simulated accelerator step per batch

_lock = threading.Lock()
_decoding = 0
_most_decoding = 0


def read_and_decode(index):
    # The counters are this function's side effect: parallel calls change when (and how many at once) it runs.
    global _decoding, _most_decoding
    with _lock:
        _decoding += 1
        _most_decoding = max(_most_decoding, _decoding)
    time.sleep(DECODE_MS / 1000)  # sleeping releases the GIL, as waiting on storage does
    with _lock:
        _decoding -= 1
    return index


def decode_and_augment(index):
    record = tf.py_function(read_and_decode, [index], tf.int64)
    return tf.reshape(record, [])


def make_dataset():
    ds = tf.data.Dataset.range(RECORDS).map(decode_and_augment)
    ds = ds.batch(BATCH)
    return ds


def train_step(batch):
    time.sleep(STEP_MS / 1000)


def train():
    for batch in make_dataset():
        train_step(batch)


def observations():
    return {"most_concurrent_decodes": _most_decoding}
'''

SCENARIO = rule_scenario(
    "TFP102", "sequential-map",
    "200 records through a stateful 10 ms py_function decode, batches of 4, a 2 ms step",
    BEFORE, [(".map(decode_and_augment)", ".map(decode_and_augment, num_parallel_calls=tf.data.AUTOTUNE)")],
    fix_safety="unsafe", equivalence="identical_with_overlapping_side_effects",
    rewrites=("map_parallelization",),
    quick={"RECORDS": 16, "DECODE_MS": 2, "STEP_MS": 1},
    meaning=(
        "The decode function is stateful (`py_function`, a global counter), so TensorFlow's `map_parallelization` "
        "rewrite never parallelises it: the speedup is the same with and without the rewrite, and it is bounded by "
        "the 2 cores. The fix is unsafe for this function: elements stay identical and in order, and what changes "
        "is that its side effects now run on several elements at once."
    ),
)
