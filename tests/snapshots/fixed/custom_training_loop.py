"""A TF2 custom training loop: an eager step, a Python step number, a function per batch, predict per sample."""
import numpy as np
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
dataset = tf.data.Dataset.from_tensor_slices((np.zeros((256, 32), "float32"), np.zeros(256, "int64"))).batch(32)


@tf.function
def train_step(x, y, step):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss * tf.cast(step, tf.float32)


def l2(x):
    return tf.reduce_sum(x * x)


# Once the step is a tf.function (the first --unsafe-fixes pass), its Python step number retraces it:
# the second pass wraps the argument in tf.constant.
for step in range(1000):
    for x, y in dataset:
        train_step(x, y, tf.constant(step))
        penalty = tf.function(l2)(x)

for epoch in range(3):
    print(epoch)

for sample in np.zeros((100, 32), "float32"):
    logits = model.predict_on_batch(sample[None])
