"""The TensorFlow a project's Dockerfile installs (project/dockerfile.py), as the target version."""

from tflint_perf.project.dockerfile import dockerfile_requirements, is_dockerfile
from tflint_perf.project.tf_version import VersionSearch

# DLTFpT's Dockerfile: a Jupyter image, then TensorFlow pinned in a RUN instruction continued over lines.
DLTFPT = """# Details of the base image are here: hub.docker.com/r/jupyter/scipy-notebook
FROM jupyter/scipy-notebook:2ce7c06a61a1

USER $NB_USER

# install TensorFlow
RUN pip install --quiet tensorflow==2.0.0 && \\
    pip install --quiet matplotlib seaborn
"""


def test_a_pinned_pip_install_in_a_run_instruction_is_a_requirement():
    assert dockerfile_requirements(DLTFPT) == ["tensorflow==2.0.0", "matplotlib", "seaborn"]


def test_tensorflows_own_image_names_its_version_and_latest_names_none():
    assert dockerfile_requirements("FROM tensorflow/tensorflow:2.3.0-gpu\nRUN pip install pillow\n") == [
        "tensorflow==2.3.0", "pillow"]
    assert dockerfile_requirements("FROM tensorflow/tensorflow:latest-gpu-jupyter\n") == []
    assert dockerfile_requirements("# RUN pip install tensorflow==1.15\nFROM python:3.8\n") == []


def test_dockerfile_names():
    assert is_dockerfile("Dockerfile") and is_dockerfile("Dockerfile.gpu") and is_dockerfile("cpu.Dockerfile")
    assert not is_dockerfile("dockerfile_notes.md")


def test_the_dockerfile_sets_the_projects_target_and_packaging_metadata_outranks_it(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "Dockerfile").write_text(DLTFPT)
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    found = VersionSearch().infer(str(notebooks.resolve()))
    assert found is not None and found.version == (2, 0) and found.source.name == "Dockerfile"
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(install_requires=['tensorflow>=2.12'])\n")
    assert VersionSearch().infer(str(tmp_path.resolve())).version == (2, 12)


def test_the_lowest_of_requirements_and_dockerfile_counts(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "Dockerfile").write_text("FROM tensorflow/tensorflow:2.4.1-gpu\n")
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.8\n")
    assert VersionSearch().infer(str(tmp_path.resolve())).version == (2, 4)


def test_tfp402_is_silent_on_fit_generator_where_the_dockerfile_pins_tf_2_0(tmp_path):
    # DLTFpT's transfer-learning notebook calls fit_generator, the generator API of the TF 2.0.0 its
    # Dockerfile pins (deprecated only from 2.1): nothing warns there. Without the Dockerfile it is reported.
    import json

    from tests.conftest import run_cli
    from tests.test_notebook_version import notebook

    (tmp_path / ".git").mkdir()
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "transfer.ipynb").write_text(notebook(
        "import tensorflow as tf",
        "model = tf.keras.Sequential([tf.keras.layers.Dense(10)])\nmodel.compile('adam', 'mse')\n"
        "model.fit_generator(train_generator, steps_per_epoch=15, epochs=16)\n"))

    def codes():
        found = run_cli("check", "--isolated", "--no-cache", "--select", "TFP402", "--output-format", "json",
                        "notebooks/transfer.ipynb", cwd=tmp_path)
        return [d["code"] for d in json.loads(found.stdout)]

    assert codes() == ["TFP402"]
    (tmp_path / "Dockerfile").write_text(DLTFPT)
    assert codes() == []
