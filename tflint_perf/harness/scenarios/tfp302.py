"""TFP302 unaligned-batch-size: a model.fit batch size that is not a multiple of 8, under mixed precision."""

from tflint_perf.harness.scenarios import Scenario, edit

BEFORE = '''\
"""A mixed-precision MLP trained with model.fit on random data."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.mixed_precision.set_global_policy("mixed_float16")

SAMPLES = 65520
FEATURES = 1024

_rng = np.random.default_rng(0)
X = _rng.random((SAMPLES, FEATURES), dtype=np.float32)
Y = (np.arange(SAMPLES) % 10).astype(np.int64)

model = keras.Sequential([
    keras.Input(shape=(FEATURES,)),
    keras.layers.Dense(2048, activation="relu"),
    keras.layers.Dense(2048, activation="relu"),
    keras.layers.Dense(10, dtype="float32"),
])
model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


def run():
    history = model.fit(X, Y, batch_size=1020, epochs=1, verbose=0)
    return np.array(history.history["loss"])


def probe():
    outputs = model.predict(X[:1024], verbose=0)
    return {"output_shape": np.array(outputs.shape), "parameters": np.array(model.count_params()),
            "finite": np.array(bool(np.isfinite(outputs).all()))}
'''

SCENARIO = Scenario(
    code="TFP302",
    name="unaligned-batch-size",
    kind="program",
    title="an MLP 1,024 -> 2,048 -> 2,048 -> 10 in mixed_float16, batch 1,020, one epoch of 65,520 samples",
    before=BEFORE,
    after=edit(BEFORE, "batch_size=1020", "batch_size=1024"),
    fix_safety="unsafe",
    equivalence="batch_size_change",
    quick={"SAMPLES": 1020, "FEATURES": 16},
    needs_gpu=True,
    meaning=(
        "The batch size is a dimension of every dense layer's matrix multiplies; an aligned batch fills tensor-core "
        "tiles on an NVIDIA GPU. Both variants train one epoch over the same samples. On a CPU there is no reliable "
        "effect, so the scenario runs only where a GPU is visible. The fix changes the optimisation (the check: "
        "same model, same output shape, finite loss)."
    ),
)
