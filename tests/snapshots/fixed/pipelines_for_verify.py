"""Input pipelines over in-memory NumPy data, for `tflint-perf verify`.

Each `make_*` function returns a tf.data.Dataset built from arrays in memory, so
`tflint-perf verify fixtures/pipelines_for_verify.py::make_training_dataset --synthetic` can swap
the arrays for random data of the same shapes and dtypes. `train` consumes the pipelines the way
a training script does, which is what makes the linter treat them as training input.
"""

import time

import numpy as np
import tensorflow as tf

FEATURES = np.random.default_rng(0).normal(size=(2048, 32)).astype(np.float32)
LABELS = (np.arange(2048) % 10).astype(np.int64)


def standardize(features, label):
    return (features - 0.5) * 2.0, label


def make_training_dataset(batch_size=64):
    ds = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS))
    ds = ds.map(standardize, num_parallel_calls=tf.data.AUTOTUNE)  # sequential, and the function is stateless: a safe fix
    return ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)  # no prefetch


def load_record(index):
    time.sleep(0.002)  # stands in for reading one record from storage
    return FEATURES[int(index)]


def make_loaded_dataset(batch_size=32):
    indices = tf.data.Dataset.from_tensor_slices(np.arange(len(FEATURES)))
    records = indices.map(
        lambda i: tf.py_function(load_record, [i], tf.float32),
        num_parallel_calls=tf.data.AUTOTUNE,
    )  # a Python callback: unsafe fix
    return records.batch(batch_size).prefetch(tf.data.AUTOTUNE)


def make_shuffled_dataset(batch_size=64):
    ds = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).shuffle(1024)  # no seed: a new order every run
    return ds.batch(batch_size).map(standardize, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


def train(model, epochs=2):
    model.fit(make_training_dataset(), epochs=epochs)
    model.fit(make_shuffled_dataset(), epochs=epochs)
    for batch in make_loaded_dataset():
        model.train_on_batch(batch, batch)
