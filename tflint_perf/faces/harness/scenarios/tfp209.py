"""TFP209 steps-per-execution: a small Keras model fit in many small steps, one host round trip each."""

from tflint_perf.faces.harness.scenarios import Scenario, edit

BEFORE = '''\
"""A small MLP fit for 4 epochs of 1,024 batches of 32, one step per call of the train function."""
import numpy as np
import tensorflow as tf

SAMPLES = 32768
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
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    model.fit(x, y, batch_size=BATCH, epochs=4, shuffle=False, verbose=0)
    return model.get_weights()
'''

SCENARIO = Scenario(
    code="TFP209",
    name="steps-per-execution",
    kind="program",
    title="a 16-64-1 MLP fit for 4 epochs of 1,024 batches of 32 (4,096 steps)",
    before=BEFORE,
    after=edit(BEFORE, 'loss="mse")', 'loss="mse", steps_per_execution=32)'),
    fix_safety="none",
    equivalence="allclose",
    quick={"SAMPLES": 512},
    meaning=(
        "`steps_per_execution=32` runs 32 steps per call of the compiled train function. With no "
        "`target-version` the rule offers no fix (the scenario's after is its use-instead; with 2.4 or later "
        "the fix is unsafe: per-batch callbacks then run every 32 batches). The check asks for the same final "
        "weights: the optimisation is the same."
    ),
)
