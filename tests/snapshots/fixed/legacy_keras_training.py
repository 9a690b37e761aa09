"""A TF2 training script carrying TF 2.0-era spellings: eager debugging switches left on,
experimental tf.data names, the experimental mixed-precision API and fit_generator."""

import argparse

import numpy as np
import tensorflow as tf

AUTOTUNE = tf.data.experimental.AUTOTUNE


def parse(record):
    features = tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature([8], tf.float32)})
    return features["x"], tf.reduce_sum(features["x"])


def make_dataset(files, batch_size):
    ds = tf.data.Dataset.from_tensor_slices(files)
    ds = ds.apply(tf.data.experimental.parallel_interleave(tf.data.TFRecordDataset, cycle_length=4, sloppy=True))
    ds = ds.apply(tf.data.experimental.shuffle_and_repeat(1024))
    ds = ds.apply(tf.data.experimental.map_and_batch(parse, batch_size, drop_remainder=True))
    return ds.prefetch(AUTOTUNE)


def noisy_copy(x):
    return tf.py_func(lambda a: a + np.random.normal(size=a.shape).astype(np.float32), [x], tf.float32)


@tf.function(experimental_relax_shapes=True)
def augment(x):
    return noisy_copy(x)


def build_model():
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(1),
    ])
    model.compile(
        optimizer="adam",
        loss="mse",
    )
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--debug", action="store_true")
    args = parser.parse_args()
    if args.debug:
        tf.config.run_functions_eagerly(True)  # a debugging switch: not reported
    tf.keras.mixed_precision.experimental.set_policy("mixed_float16")
    model = build_model()
    model.fit(make_dataset(["train.tfrecord"], 32), epochs=10, steps_per_epoch=100)

    legacy = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    legacy.compile(optimizer="sgd", loss="mse", run_eagerly=args.debug)
    legacy.fit_generator(batches(), steps_per_epoch=10, epochs=3)


def batches():
    while True:
        yield np.ones((32, 8), np.float32), np.ones((32, 1), np.float32)


if __name__ == "__main__":
    main()
