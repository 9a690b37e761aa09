"""The TensorFlow a project's Dockerfile installs (project/dockerfile.py), as the target version."""

from tflint_perf.project.dockerfile import dockerfile_requirements, is_dockerfile
from tflint_perf.project.requirement import lower_bound
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


def test_what_names_no_tensorflow_version():
    # An ARG-substituted tag, NVIDIA's image (tagged by its own release), nightly and unpinned installs,
    # an install from a requirements file (read as that file, beside the Dockerfile): no bound here.
    text = ("ARG TF_VERSION=2.3.0\nFROM tensorflow/tensorflow:${TF_VERSION}\n"
            "ARG FROM_IMAGE_NAME=nvcr.io/nvidia/tensorflow:20.12-tf2-py3\nFROM ${FROM_IMAGE_NAME}\n"
            "FROM nvcr.io/nvidia/tensorflow:20.12-tf2-py3\n"
            "RUN pip install tf-nightly && pip --no-cache-dir install -r requirements.txt\n")
    assert [r for r in dockerfile_requirements(text) if lower_bound(r) is not None] == []


def test_continued_run_lines_and_the_gpu_package():
    text = ("FROM tensorflow/tensorflow:2.3.0-gpu-jupyter\nRUN apt-get update && \\\n    pip install \\\n"
            "# the GPU build\n      tensorflow-gpu==1.15.2 \\\n    && rm -rf /var/lib/apt/lists/*\n")
    assert [lower_bound(r) for r in dockerfile_requirements(text)] == [(2, 3), (1, 15)]
    assert dockerfile_requirements("FROM gcr.io/tensorflow/tensorflow:1.0.0\n") == ["tensorflow==1.0.0"]


def test_only_the_stage_the_image_runs_counts():
    # A build stage on TensorFlow's image is not what the final image runs; a stage started from a
    # named one keeps what that one installed.
    assert dockerfile_requirements("FROM tensorflow/tensorflow:2.3.0 AS build\nRUN make\n"
                                   "FROM python:3.10\nRUN pip install tensorflow==2.12\n") == ["tensorflow==2.12"]
    assert dockerfile_requirements("FROM python:3.9 AS base\nRUN pip install tensorflow==2.5\nFROM base\n") == [
        "tensorflow==2.5"]


def test_a_dockerfile_in_a_subfolder_speaks_only_for_that_folder(tmp_path):
    # handson-ml2 and tf-faster-rcnn keep theirs in docker/: the search goes up from a file, so the
    # project's requirements file still decides for the code beside it.
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.8\n")
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "Dockerfile").write_text("FROM python:3.8\nRUN pip install tensorflow==2.0.0\n")
    (tmp_path / "src").mkdir()
    search = VersionSearch()
    assert search.infer(str((tmp_path / "src").resolve())).version == (2, 8)
    assert search.infer(str((tmp_path / "docker").resolve())).version == (2, 0)
