"""TFP206 eager-train-step: a custom training step run eagerly, batch after batch."""

from tflint_perf.faces.harness.scenarios import rule_scenario

BEFORE = '''\
"""A custom training loop over a small MLP."""
import numpy as np
import tensorflow as tf

EPOCHS = 30
BATCH = 64

tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential([
    tf.keras.Input((32,)),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(10),
])
INITIAL = model.get_weights()
optimizer = tf.keras.optimizers.SGD(0.01)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
_rng = np.random.default_rng(0)
BATCHES = [
    (tf.constant(_rng.normal(size=(BATCH, 32)).astype(np.float32)), tf.constant(_rng.integers(0, 10, BATCH)))
    for _ in range(20)
]


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def run():
    model.set_weights(INITIAL)
    losses = []
    for epoch in range(EPOCHS):
        for x, y in BATCHES:
            losses.append(train_step(x, y))
    return np.array([float(loss) for loss in losses])
'''

SCENARIO = rule_scenario(
    "TFP206", "eager-train-step", "600 training steps of a 3-layer MLP (32 -> 64 -> 64 -> 10), batches of 64",
    BEFORE, [("def train_step(x, y):", "@tf.function\ndef train_step(x, y):")],
    fix_safety="unsafe", equivalence="allclose",
    quick={"EPOCHS": 1},
    meaning=(
        "The unsafe fix decorates the step with `@tf.function`: it is traced once and runs as one graph per "
        "batch instead of dispatching every op from Python. The weights are reset at the start of each run; "
        "the same 600 losses come out (30 epochs over 20 batches: past the 500 steps below which the rule "
        "stays silent, since eager dispatch then costs seconds at most)."
    ),
)
