"""Small rules' classes that need the project around a file (issue 22, from the dragen1860 tutorials):
a model class defined in another module of the project is a Keras model (TFP203).

Each test runs the real CLI on a project written to disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Set, Tuple

from tests.conftest import run_cli

# dragen1860/TensorFlow-2.x-Tutorials 06-CIFAR-VGG: `class VGG16(models.Model)` in network.py, and
# main.py predicting on each 256-image batch of the test set inside the 250-epoch loop.
_NETWORK = (
    "from tensorflow.keras import layers, models\n\n"
    "class VGG16({base}):\n    def __init__(self, input_shape):\n        super().__init__()\n"
    "        self.dense = layers.Dense(10)\n\n    def call(self, x):\n        return self.dense(x)\n"
)
_MAIN = (
    "import tensorflow as tf\nfrom tensorflow.keras import datasets\nfrom network import VGG16\n\n"
    "def main():\n    (x, y), (x_test, y_test) = datasets.cifar10.load_data()\n"
    "    test_loader = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(256)\n"
    "    model = VGG16([32, 32, 3])\n    metric = tf.keras.metrics.CategoricalAccuracy()\n"
    "    for epoch in range(250):\n        for x, y in test_loader:\n"
    "            logits = model.predict(x)\n            metric.update_state(y, logits)\n"
)


def _findings(root: Path, code: str) -> Set[Tuple[str, int]]:
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", code, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return {(Path(d["filename"]).name, d["location"]["row"]) for d in json.loads(result.stdout)}


def _project(tmp_path: Path, files: dict) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_predict_on_a_model_class_of_another_module_in_a_loop_is_reported(tmp_path):
    root = _project(tmp_path, {"network.py": _NETWORK.format(base="models.Model"), "main.py": _MAIN})
    assert _findings(root, "TFP203") == {("main.py", 12)}


def test_predict_on_another_modules_class_that_is_no_keras_model_is_silent(tmp_path):
    # A class of the same name that derives from no Keras model (a scikit-learn-like wrapper).
    root = _project(tmp_path, {"network.py": _NETWORK.format(base="object"), "main.py": _MAIN})
    assert _findings(root, "TFP203") == set()
