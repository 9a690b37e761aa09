"""Train a text-and-image model with Keras and a custom tf.function step (TF2 style).

The kind of script a team grows over time: a tf.data pipeline with augmentation and caching,
a functional model, a subclassed head, a custom training step with some clipping logic, and a
final `fit` with a fixed validation split.
"""

import functools

import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers

# Mixed precision: 16-bit tensor cores want layer widths and batch sizes in multiples of 8.
keras.mixed_precision.set_global_policy("mixed_float16")

AUTOTUNE = tf.data.AUTOTUNE
NUM_CLASSES = 37
VOCAB = 20_000

augmenter = keras.Sequential([layers.RandomFlip("horizontal"), layers.RandomRotation(0.1)])


def decode(path, label):
    image = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
    return tf.image.resize(image, (160, 160)) / 255.0, label


def random_jitter(image, label):
    image = tf.image.random_brightness(image, 0.1)
    return image, label


def center_crop(image, label):
    # Deterministic despite the name of the module it came from.
    return tf.image.central_crop(image, 0.9), label


def seeded_flip(image, label):
    return tf.image.stateless_random_flip_left_right(image, seed=(7, 11)), label


def read_exif(path):
    return np.float32(0.0)


def with_exif(path, label):
    return path, label, tf.numpy_function(read_exif, [path], tf.float32)


def make_train_dataset(paths, labels):
    ds = tf.data.Dataset.from_tensor_slices((paths, labels))
    ds = ds.map(decode, num_parallel_calls=AUTOTUNE)
    ds = ds.cache()
    ds = ds.map(random_jitter, num_parallel_calls=AUTOTUNE)
    ds = ds.shuffle(2048)
    return ds.batch(104).prefetch(AUTOTUNE)


def make_cached_dataset(paths, labels):
    # Done right: cache the decoded images, then shuffle and augment every epoch.
    ds = tf.data.Dataset.from_tensor_slices((paths, labels))
    ds = ds.map(decode, num_parallel_calls=AUTOTUNE).map(center_crop, num_parallel_calls=AUTOTUNE)
    ds = ds.map(seeded_flip, num_parallel_calls=AUTOTUNE).cache()
    ds = ds.shuffle(2048).map(lambda x, y: (augmenter(x, training=True), y), num_parallel_calls=AUTOTUNE)
    return ds.batch(64).prefetch(AUTOTUNE)


def make_split(paths, labels):
    # Shuffle once with a fixed order, then split: the order must not change between epochs.
    full = tf.data.Dataset.from_tensor_slices((paths, labels)).shuffle(10_000, reshuffle_each_iteration=False)
    train = full.skip(1000).map(decode, num_parallel_calls=AUTOTUNE).cache()
    val = full.take(1000).map(decode, num_parallel_calls=AUTOTUNE).cache()
    return train.batch(64).prefetch(AUTOTUNE), val.batch(100).prefetch(AUTOTUNE)


def make_exif_dataset(paths, labels):
    ds = tf.data.Dataset.from_tensor_slices((paths, labels))
    ds = ds.map(with_exif, num_parallel_calls=AUTOTUNE)
    ds = ds.map(functools.partial(decode_with_meta, size=160), num_parallel_calls=AUTOTUNE)
    return ds.batch(64).prefetch(AUTOTUNE)


def decode_with_meta(path, label, meta, size):
    image, label = decode(path, label)
    return tf.image.resize(image, (size, size)), label, meta


def build_text_encoder():
    return keras.Sequential(
        [
            layers.Embedding(VOCAB, 104),
            layers.Bidirectional(layers.LSTM(64)),
            layers.Dense(104, activation="relu"),
            layers.Dropout(0.3),
            layers.Dense(1, activation="sigmoid"),
        ]
    )


def build_image_model(num_classes=NUM_CLASSES):
    inputs = keras.Input(shape=(160, 160, 3))
    x = layers.Conv2D(filters=48, kernel_size=3, activation="relu")(inputs)
    x = layers.Conv2D(filters=104, kernel_size=3, activation="relu")(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dense(504, activation="relu")(x)
    x = layers.Dense(num_classes)(x)
    outputs = layers.Softmax()(x)
    return keras.Model(inputs, outputs)


def build_regressor():
    inputs = keras.Input(shape=(20,))
    hidden = layers.Dense(256, activation="relu")(inputs)
    return keras.Model(inputs=inputs, outputs=layers.Dense(30)(hidden))


class ProjectionHead(keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(304, activation="relu")
        self.out = layers.Dense(50)

    def call(self, inputs, training=None):
        x = self.hidden(inputs)
        x = tf.where(tf.reduce_mean(x) > 10.0, x * 0.5, x)
        return self.out(x)


optimizer = keras.optimizers.Adam(1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy()


@tf.function
def train_step(model, images, labels, clip):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(labels, logits)
    # A NaN guard: with tf.where the NaN would still reach the gradients.
    loss = tf.cond(tf.math.is_finite(loss), lambda: loss, lambda: tf.zeros_like(loss))
    loss = tf.where(loss > 100.0, tf.minimum(loss, 100.0) * 0.1, loss)
    # A Python flag: resolved while tracing.
    loss = tf.cond(clip, lambda: tf.minimum(loss, 10.0), lambda: loss)
    # Shapes differ between the branches: tf.where cannot replace this.
    extra = tf.cond(tf.size(labels) > 0, lambda: tf.cast(labels, tf.float32), lambda: tf.zeros([0]))
    # A branch that runs a model: skipping it is the point.
    aux = tf.cond(loss > 1.0, lambda: model(images), lambda: logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss, extra, aux


def custom_loop(model, ds, epochs):
    for _ in range(epochs):
        for images, labels in ds:
            train_step(model, images, labels, True)


def main():
    paths = [f"img-{i}.jpg" for i in range(5000)]
    labels = np.random.randint(0, NUM_CLASSES, size=5000)
    model = build_image_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])

    train_ds = make_train_dataset(paths, labels)
    model.fit(train_ds, epochs=20)

    split_train, split_val = make_split(paths, labels)
    model.fit(split_train, validation_data=split_val, epochs=5)

    custom_loop(model, make_cached_dataset(paths, labels), epochs=3)
    custom_loop(model, make_exif_dataset(paths, labels), epochs=1)

    text_model = build_text_encoder()
    text_model.compile(optimizer="adam", loss="binary_crossentropy")
    tokens = np.random.randint(0, VOCAB, size=(2000, 50))
    targets = np.random.randint(0, 2, size=(2000, 1))
    text_model.fit(tokens, targets, batch_size=104, epochs=3, validation_split=0.1)
    text_model.predict(tokens[:10], batch_size=1)
    text_model.evaluate(tokens, targets, batch_size=50)

    regressor = build_regressor()
    regressor.compile(optimizer="adam", loss="mse")
    regressor.fit(np.random.rand(512, 20), np.random.rand(512, 30), batch_size=64, epochs=2)

    # One-off, eager: reading metadata once before training is fine.
    first_meta = tf.numpy_function(read_exif, [paths[0]], tf.float32)
    print(first_meta, ProjectionHead())


if __name__ == "__main__":
    main()
