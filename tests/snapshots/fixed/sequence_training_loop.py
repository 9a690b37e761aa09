"""A custom training loop over variable-length sequences: what TFP105, TFP106, TFP207 and TFP210
find across functions (pipelines built in helpers, consumed in another function's loop)."""

import numpy as np
import tensorflow as tf

MAX_LEN = 64
TOKENS = np.load("tokens.npy")  # (N, MAX_LEN) int32, already padded
LABELS = np.load("labels.npy")


def in_memory_rows():
    # TFP105: the generator only slices arrays already in memory.
    def rows():
        for i in range(len(TOKENS)):
            yield TOKENS[i], LABELS[i]

    signature = (tf.TensorSpec((MAX_LEN,), tf.int32), tf.TensorSpec((), tf.int64))
    return tf.data.Dataset.from_tensor_slices((TOKENS, LABELS))


def sentences(path):
    # Reads a file per element: no TFP105.
    def read():
        with open(path) as handle:
            for line in handle:
                yield [int(token) for token in line.split()]

    return tf.data.Dataset.from_generator(read, output_signature=tf.TensorSpec([None], tf.int32))


def scale(tokens):
    return tf.cast(tokens, tf.float32) / 1000.0


def make_variable_length(path, batch_size=32):
    ds = sentences(path).map(scale, num_parallel_calls=tf.data.AUTOTUNE)  # TFP106: element-wise, but padded_batch would run it on the padding
    return ds.padded_batch(batch_size).prefetch(tf.data.AUTOTUNE)


def make_fixed_length(batch_size=32):
    ds = in_memory_rows().shuffle(10_000)
    return ds.padded_batch(batch_size).prefetch(tf.data.AUTOTUNE)  # rows of in-memory arrays: every batch has the same shape


@tf.function(reduce_retracing=True)
def train_step(model, optimizer, batch):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(batch))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


def train(model, optimizer, path, epochs=3):
    for _ in range(epochs):
        for batch in make_variable_length(path):
            train_step(model, optimizer, batch)  # TFP207: a new padded length on most batches
        for tokens, _labels in make_fixed_length():
            train_step(model, optimizer, tokens)  # same shape every batch: no TFP207 here


def predict_all(model, path):
    outputs = tf.zeros([0, 1])
    for batch in make_variable_length(path):
        outputs = tf.concat([outputs, model(batch)], axis=0)  # TFP210: quadratic copying
    return outputs
