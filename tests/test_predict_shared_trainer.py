"""TFP203 on a GAN trainer shared by several scripts (Advanced-Deep-Learning-with-Keras' lib/gan.py):
the trainer unpacks the models and the sizes from tuples its callers, in other modules, pack; the
generator is built by the library's own builder. Each test runs the real CLI on a project on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Set, Tuple

from tests.conftest import run_cli

_GAN = (
    "import numpy as np\nfrom tensorflow.keras.models import Model\n\n"
    "def generator(inputs):\n    return Model(inputs, inputs, name='generator')\n\n"
    "def train(models, x_train, params):\n    generator, discriminator = models\n"
    "    batch_size, latent_size, train_steps = params\n    for i in range(train_steps):\n"
    "        noise = np.random.uniform(-1.0, 1.0, size=[batch_size, latent_size])\n"
    "        fake_images = generator.predict(noise)\n        discriminator.train_on_batch(fake_images, labels)\n"
)
_SCRIPT = (
    "from tensorflow.keras.models import Model\nfrom lib import gan\n\n"
    "def build_and_train_models():\n    batch_size = {batch}\n    generator = gan.generator(inputs)\n"
    "    discriminator = Model(inputs, outputs)\n    models = (generator, discriminator)\n"
    "    params = (batch_size, 100, 40000)\n    gan.train(models, x_train, params)\n"
)


def _findings(root: Path) -> Set[Tuple[str, int]]:
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", "TFP203", ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return {(Path(d["filename"]).name, d["location"]["row"]) for d in json.loads(result.stdout)}


def _project(tmp_path: Path, scripts: dict) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "gan.py").write_text(_GAN)
    for name, text in scripts.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_the_shared_trainer_is_reported_where_every_script_packs_a_small_batch(tmp_path):
    root = _project(tmp_path, {"dcgan.py": _SCRIPT.format(batch=64), "lsgan.py": _SCRIPT.format(batch=32)})
    assert _findings(root) == {("gan.py", 12)}


def test_the_shared_trainer_is_silent_where_a_script_packs_a_large_batch(tmp_path):
    root = _project(tmp_path, {"dcgan.py": _SCRIPT.format(batch=64), "big.py": _SCRIPT.format(batch=200000)})
    assert _findings(root) == set()


def test_the_shared_trainer_is_silent_where_a_script_passes_models_it_did_not_build(tmp_path):
    other = _SCRIPT.format(batch=64).replace("models = (generator, discriminator)", "models = load_models()")
    root = _project(tmp_path, {"dcgan.py": _SCRIPT.format(batch=64), "other.py": other})
    assert _findings(root) == set()
