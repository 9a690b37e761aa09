"""The program the alignment scenarios share (TFP301, TFP302): a mixed-precision MLP trained for one
epoch with ``model.fit`` on random data, with a ``probe()`` of its outputs and parameter count.

Not a scenario itself (``all_scenarios`` loads only ``tfpNNN`` modules).
"""

from string import Template

_PROGRAM = Template('''\
"""A mixed-precision MLP trained with model.fit on random data."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.mixed_precision.set_global_policy("mixed_float16")

$constants

_rng = np.random.default_rng(0)
X = _rng.random((SAMPLES, FEATURES), dtype=np.float32)
Y = (np.arange(SAMPLES) % 10).astype(np.int64)

model = keras.Sequential([
    keras.Input(shape=(FEATURES,)),
    keras.layers.Dense($width, activation="relu"),
    keras.layers.Dense($width, activation="relu"),
    keras.layers.Dense(10, dtype="float32"),
])
model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


def run():
    history = model.fit(X, Y, batch_size=$batch_size, epochs=1, verbose=0)
    return np.array(history.history["loss"])


def probe():
    outputs = model.predict(X[:$probe_rows], verbose=0)
    return {"output_shape": np.array(outputs.shape), "parameters": np.array(model.count_params()),
            "finite": np.array(bool(np.isfinite(outputs).all()))}
''')


def mlp_program(constants: str, width: int, batch_size: str, probe_rows: str) -> str:
    """The program's text: ``constants`` (module-level sizes: ``SAMPLES``, ``FEATURES``, ...), the
    two hidden layers' ``width``, and ``model.fit``'s batch size and the probe's rows as written."""
    return _PROGRAM.substitute(constants=constants, width=width, batch_size=batch_size, probe_rows=probe_rows)
