"""TFP301 unaligned-layer-dim: hidden Dense widths that are not a multiple of 8, under mixed precision."""

from tflint_perf.harness.scenarios import Scenario, edit

BEFORE = '''\
"""A mixed-precision MLP trained with model.fit on random data."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.mixed_precision.set_global_policy("mixed_float16")

SAMPLES = 65536
FEATURES = 1024
BATCH = 1024

_rng = np.random.default_rng(0)
X = _rng.random((SAMPLES, FEATURES), dtype=np.float32)
Y = (np.arange(SAMPLES) % 10).astype(np.int64)

model = keras.Sequential([
    keras.Input(shape=(FEATURES,)),
    keras.layers.Dense(2500, activation="relu"),
    keras.layers.Dense(2500, activation="relu"),
    keras.layers.Dense(10, dtype="float32"),
])
model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


def run():
    history = model.fit(X, Y, batch_size=BATCH, epochs=1, verbose=0)
    return np.array(history.history["loss"])


def probe():
    outputs = model.predict(X[:BATCH], verbose=0)
    return {"output_shape": np.array(outputs.shape), "parameters": np.array(model.count_params()),
            "finite": np.array(bool(np.isfinite(outputs).all()))}
'''

SCENARIO = Scenario(
    code="TFP301",
    name="unaligned-layer-dim",
    kind="program",
    title="an MLP 1,024 -> 2,500 -> 2,500 -> 10 in mixed_float16, one epoch of 65,536 samples",
    before=BEFORE,
    after=edit(
        BEFORE,
        'keras.layers.Dense(2500, activation="relu"),\n    keras.layers.Dense(2500, activation="relu"),',
        'keras.layers.Dense(2504, activation="relu"),\n    keras.layers.Dense(2504, activation="relu"),',
    ),
    fix_safety="unsafe",
    equivalence="architecture_change",
    quick={"SAMPLES": 64, "FEATURES": 16, "BATCH": 32},
    needs_gpu=True,
    meaning=(
        "Tensor cores work on tiles whose sides are multiples of 8 in 16-bit math: the aligned widths do more "
        "arithmetic yet should train faster on an NVIDIA GPU. On a CPU there is no reliable effect, so the "
        "scenario runs only where a GPU is visible. The fix changes the architecture (the check: same output "
        "shape, finite outputs, a different parameter count)."
    ),
)
