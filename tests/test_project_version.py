"""The TensorFlow version a project depends on, read from its dependency files (project_version.py),
and how it reaches every entry point: the CLI (per file's project), --show-settings, flake8, the cache."""

import json
import textwrap

import pytest

from tests.conftest import run_cli
from tests.test_flake8_plugin import flake8, flake8_findings, plugin_path  # noqa: F401 (a fixture)
from tflint_perf.project.tf_version import infer_tensorflow_version, lower_bound

TRAINING = "import tensorflow as tf\nds = tf.data.Dataset.range(8).map(lambda x: tf.strings.as_string(x)).batch(2)\nmodel.fit(ds)\n"


@pytest.mark.parametrize(
    "requirement, bound",
    [
        ("tensorflow>=2.12,<3", (2, 12)),
        ("tensorflow==1.15.5", (1, 15)),
        ("tensorflow~=2.9.1", (2, 9)),
        ("tensorflow-gpu==1.7.0", (1, 7)),
        ("tensorflow_cpu >= 2.3", (2, 3)),
        ("tensorflow[and-cuda]>=2.15", (2, 15)),
        ("tensorflow==2.6.*", (2, 6)),
        ("tensorflow", None),
        ("tensorflow<2.0", None),
        ("tensorflow-datasets>=4.0", None),
        ("tf-keras>=2.15", None),
    ],
)
def test_lower_bound_of_a_requirement(requirement, bound):
    assert lower_bound(requirement) == bound


@pytest.mark.parametrize(
    "name, text, version",
    [
        ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["numpy", "tensorflow>=2.13"]\n', (2, 13)),
        ("pyproject.toml", '[project]\nname = "x"\n[project.optional-dependencies]\ngpu = ["tensorflow[and-cuda]>=2.16"]\n', (2, 16)),
        ("pyproject.toml", '[tool.poetry.dependencies]\npython = "^3.10"\ntensorflow = "^2.14"\n', (2, 14)),
        ("setup.cfg", "[options]\ninstall_requires =\n    tensorflow>=2.4\n", (2, 4)),
        ("setup.py", "from setuptools import setup\nsetup(name='x', install_requires=['tensorflow==1.15'])\n", (1, 15)),
        ("requirements.txt", "numpy\ntensorflow-gpu==1.7.0  # the cluster's CUDA\n", (1, 7)),
        ("requirements-dev.txt", "tensorflow>=2.11\n", (2, 11)),
        ("environment.yml", "name: tf\ndependencies:\n  - python=3.8\n  - tensorflow=2.6\n", (2, 6)),
        ("environment.yml", "dependencies:\n  - pip:\n    - tensorflow>=2.10\n", (2, 10)),
        ("requirements.txt", "tensorflow\n", None),
    ],
)
def test_each_dependency_file_format(tmp_path, name, text, version):
    (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "src").mkdir()
    inferred = infer_tensorflow_version(tmp_path / "src")
    assert (inferred.version if inferred else None) == version


def test_requirements_files_side_by_side_give_the_lowest_pin(tmp_path):
    # zzh8829/yolov3-tf2: a CPU pin and a GPU pin; the code runs on 2.11, where no prefetch is injected.
    (tmp_path / "requirements.txt").write_text("opencv-python==4.2.0.32\ntensorflow==2.11.1\n")
    (tmp_path / "requirements-gpu.txt").write_text("tensorflow-gpu==2.12.0\n")
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='yolov3_tf2', packages=['yolov3_tf2'])\n")
    inferred = infer_tensorflow_version(tmp_path)
    assert inferred.version == (2, 11) and inferred.source.name == "requirements.txt"


def test_the_packaging_metadata_outranks_a_requirements_pin(tmp_path):
    # A lower pin in a requirements file beside a package that declares its own bound: the package decides.
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["tensorflow>=2.13"]\n')
    (tmp_path / "requirements-legacy.txt").write_text("tensorflow==2.4.0\n")
    inferred = infer_tensorflow_version(tmp_path)
    assert inferred.version == (2, 13) and inferred.source.name == "pyproject.toml"


def test_the_search_stops_at_the_project_root(tmp_path):
    (tmp_path / "requirements.txt").write_text("tensorflow==2.4\n")
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["numpy"]\n')
    assert infer_tensorflow_version(project / "pkg") is None  # the outer file belongs to another project


def test_the_cli_infers_per_file_and_show_settings_says_from_where(tmp_path):
    old = tmp_path / "old"
    new = tmp_path / "new"
    for project, requirement in ((old, "tensorflow==2.5"), (new, "tensorflow>=2.15")):
        project.mkdir()
        (project / "requirements.txt").write_text(requirement + "\n")
        (project / "pyproject.toml").write_text('[project]\nname = "p"\n')
        (project / "train.py").write_text(TRAINING)
    result = run_cli("check", "--isolated", "--no-cache", "--select", "TFP101,TFP102", "--output-format", "json", "old",
                     "new", cwd=tmp_path)
    assert sorted((d["filename"].split("/")[0], d["code"]) for d in json.loads(result.stdout)) == [
        ("old", "TFP101"), ("old", "TFP102")
    ]
    shown = run_cli("check", "--isolated", "--show-settings", "old/train.py", "new", cwd=tmp_path)
    assert shown.returncode == 0
    assert "old/train.py: target-version 2.5" in shown.stdout and "requirements.txt" in shown.stdout
    assert "new: target-version 2.15" in shown.stdout
    configured = run_cli("check", "--isolated", "--show-settings", "--target-version", "2.4", "new", cwd=tmp_path)
    assert "new: target-version 2.4 (--target-version)" in configured.stdout


def test_a_changed_requirement_changes_cached_results(tmp_path):
    (tmp_path / "requirements.txt").write_text("tensorflow==2.5\n")
    (tmp_path / "train.py").write_text(TRAINING)
    first = run_cli("check", "--isolated", "--select", "TFP101,TFP102", "--output-format", "json", "train.py", cwd=tmp_path)
    assert {d["code"] for d in json.loads(first.stdout)} == {"TFP101", "TFP102"}
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.15\n")
    second = run_cli("check", "--isolated", "--select", "TFP101,TFP102", "--output-format", "json", "train.py",
                     cwd=tmp_path)
    assert json.loads(second.stdout) == []


def test_flake8_infers_the_version_of_the_files_project(plugin_path, tmp_path):  # noqa: F811
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(install_requires=['tensorflow>=2.15'])\n")
    (tmp_path / "train.py").write_text(TRAINING)
    assert flake8_findings(flake8(plugin_path, "--select", "TFP101,TFP102", "train.py", cwd=tmp_path)) == set()
    (tmp_path / "setup.py").write_text(textwrap.dedent("""\
        from setuptools import setup
        setup(install_requires=['tensorflow==2.5'])
    """))
    assert {f[3] for f in flake8_findings(flake8(plugin_path, "--select", "TFP101,TFP102", "train.py", cwd=tmp_path))} == {"TFP101", "TFP102"}
