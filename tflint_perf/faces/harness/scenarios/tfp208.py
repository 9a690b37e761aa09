"""TFP208 run-eagerly: a small Keras model fit with ``run_eagerly=True``."""

from tflint_perf.faces.harness.scenarios import Scenario, edit

BEFORE = '''\
"""A small MLP fit for one epoch of 256 steps, compiled with run_eagerly=True."""
import numpy as np
import tensorflow as tf

SAMPLES = 8192
BATCH = 32


def run():
    tf.keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(SAMPLES, 16)).astype(np.float32)
    y = (x @ rng.normal(size=(16, 1))).astype(np.float32)
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(16,)),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(1),
    ])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse", run_eagerly=True)
    model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    return model.get_weights()
'''

SCENARIO = Scenario(
    code="TFP208",
    name="run-eagerly",
    kind="program",
    title="a 16-64-1 MLP fit for one epoch of 256 batches of 32 on 8,192 samples",
    before=BEFORE,
    after=edit(BEFORE, ', loss="mse", run_eagerly=True)', ', loss="mse")'),
    fix_safety="safe",
    equivalence="allclose",
    quick={"SAMPLES": 512},
    meaning=(
        "The fix removes `run_eagerly=True`: `fit` then runs each step as a traced graph instead of Python "
        "dispatching one op at a time. The check asks for the same final weights (same seed, no shuffling)."
    ),
)
