"""Train an image classifier from TFRecords with a custom loop and Keras fit (TF2 style).

The input pipeline is built in helpers, as most real training code does; some stages are
parallelised and prefetched, others are not.
"""

import functools

import numpy as np
import pandas as pd
import tensorflow as tf
from tensorflow import keras

AUTOTUNE = tf.data.AUTOTUNE
IMAGE_SIZE = 224


def parse_example(record):
    features = tf.io.parse_single_example(
        record,
        {"image": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([], tf.int64)},
    )
    image = tf.io.decode_jpeg(features["image"], channels=3)
    image = tf.image.resize(image, (IMAGE_SIZE, IMAGE_SIZE))
    return tf.cast(image, tf.float32) / 255.0, features["label"]


def augment(image, label):
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, 0.2)
    return image, label


def normalize(image, label, mean):
    return image - mean, label


def make_dataset(pattern, training, batch_size=64):
    files = tf.data.Dataset.list_files(pattern, shuffle=training)
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=8, num_parallel_calls=AUTOTUNE)  # reads one file at a time
    ds = ds.map(parse_example, num_parallel_calls=AUTOTUNE)  # sequential decode
    if training:
        ds = ds.shuffle(10_000)
        ds = ds.map(augment, num_parallel_calls=AUTOTUNE)  # random: TensorFlow will not parallelise this on its own
    ds = ds.map(functools.partial(normalize, mean=0.5), num_parallel_calls=AUTOTUNE)
    return ds.batch(batch_size).prefetch(AUTOTUNE)


def make_eval_dataset(pattern):
    ds = tf.data.TFRecordDataset(tf.io.gfile.glob(pattern))
    ds = ds.map(parse_example, num_parallel_calls=AUTOTUNE).batch(128)
    return ds.prefetch(AUTOTUNE)


def build_model(num_classes):
    return keras.Sequential(
        [
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(num_classes, activation="softmax"),
        ]
    )


def show_examples(ds):
    # Inspection, not training: no prefetch needed.
    for images, labels in ds.take(2):
        print(images.shape, labels.numpy())


def labels_from_csv(path):
    # A pandas .map and Python's map are not tf.data pipelines.
    frame = pd.read_csv(path)
    names = frame["label"].map(str.strip)
    return list(map(int, names))


def main():
    train_ds = make_dataset("train-*.tfrecord", training=True)
    val_ds = make_eval_dataset("val-*.tfrecord")
    show_examples(train_ds)

    model = build_model(10)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(train_ds, validation_data=val_ds, epochs=10)

    optimizer = keras.optimizers.Adam()
    finetune_ds = make_dataset("finetune-*.tfrecord", training=False)
    for images, labels in finetune_ds:
        with tf.GradientTape() as tape:
            loss = keras.losses.sparse_categorical_crossentropy(labels, model(images))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    features = np.random.rand(100, 8).astype("float32")
    model.predict(features, batch_size=32)


if __name__ == "__main__":
    main()
