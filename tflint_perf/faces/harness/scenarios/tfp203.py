"""TFP203 predict-in-loop: a Keras model asked for one sample at a time with ``predict``."""

from tflint_perf.faces.harness.scenarios import rule_scenario

BEFORE = '''\
"""Per-sample inference with Model.predict, as in an agent's policy or a generation loop."""
import numpy as np
import tensorflow as tf

SAMPLES = 100
FEATURES = 32

tf.keras.utils.set_random_seed(0)
model = tf.keras.Sequential([
    tf.keras.Input((FEATURES,)),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(10),
])
INPUTS = np.random.default_rng(0).normal(size=(SAMPLES, FEATURES)).astype(np.float32)


def run():
    outputs = []
    for sample in INPUTS:
        outputs.append(model.predict(sample[None], verbose=0))
    return np.concatenate(outputs)
'''

SCENARIO = rule_scenario(
    "TFP203", "predict-in-loop", "100 single-sample predictions from a 2-layer MLP (32 -> 64 -> 10)",
    BEFORE, [("model.predict(sample[None], verbose=0)", "model.predict_on_batch(sample[None])")],
    fix_safety="safe", equivalence="allclose",
    quick={"SAMPLES": 5},
    meaning=(
        "The safe fix replaces `predict` on one sample with `predict_on_batch`, which returns the same NumPy "
        "array without `predict`'s per-call setup (data adapter, batch loop, callbacks). The same 100 outputs "
        "come out."
    ),
)
