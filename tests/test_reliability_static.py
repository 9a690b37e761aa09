"""Static means static: checking never imports or runs the code it checks, nor TensorFlow.

The checked tree's modules write a marker file when imported, and so do stand-in ``tensorflow``
and ``keras`` packages put on the path, so an import anywhere (the linter, a worker process, the
flake8 plugin) would leave a trace. A positive control shows the markers do appear when the code is
imported. Only ``tflint-perf verify`` runs user code, and only when asked (tests/test_harness.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

WRITE_MARKER = (
    "import os, pathlib\n"
    "pathlib.Path(os.environ['TFLINT_PERF_MARKERS'], {name!r}).write_text('imported')\n"
)
TRAINING = (
    "import tensorflow as tf\nimport keras\n"
    "ds = tf.data.Dataset.range(8).map(lambda x: x * 2)\n"
    "for batch in ds:\n    train_step(batch)\n"
    "if __name__ == '__main__':\n    MAIN_RAN = True\n"
)
NOTEBOOK = {
    "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
               "source": [WRITE_MARKER.format(name="notebook_cell"), TRAINING]}],
    "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"},
                 "language_info": {"name": "python"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@pytest.fixture
def tree(tmp_path):
    """(checked tree, directory the markers go to, environment with the stand-in packages on the path)."""
    markers = tmp_path / "markers"
    markers.mkdir()
    packages = tmp_path / "site"
    for package in ("tensorflow", "keras"):
        (packages / package).mkdir(parents=True)
        (packages / package / "__init__.py").write_text(WRITE_MARKER.format(name=f"{package}_imported"))
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    for name in ("train.py", "setup.py", "conftest.py", "__main__.py", "sitecustomize.py", "pkg/__init__.py",
                 "pkg/model.py"):
        (project / name).write_text(WRITE_MARKER.format(name=name.replace("/", "_")) + TRAINING)
    (project / "notebook.ipynb").write_text(json.dumps(NOTEBOOK))
    for dependency in ("libcst", "pathspec"):  # the project's own copies of what tflint-perf imports
        (project / dependency).mkdir()
        (project / dependency / "__init__.py").write_text(WRITE_MARKER.format(name=f"project_{dependency}"))
    env = {**os.environ, "NO_COLOR": "1", "TFLINT_PERF_MARKERS": str(markers),
           "PYTHONPATH": os.pathsep.join([str(REPO), str(packages)])}
    return project, markers, env


def test_the_markers_do_appear_when_the_code_is_imported(tree):
    project, markers, env = tree
    # The import itself fails (the stand-in has no `tf.data`), after the markers are written.
    subprocess.run([sys.executable, "-c", "import train"], cwd=project, env=env, capture_output=True)
    assert sorted(p.name for p in markers.iterdir()) == ["keras_imported", "tensorflow_imported", "train.py"]


@pytest.mark.parametrize(
    "arguments",
    [
        ["check", "."],
        ["check", "--fix", "--unsafe-fixes", "--no-cache", "."],
        ["check", "--diff", "--unsafe-fixes", "-j", "2", "--no-cache", "."],
        ["check", "--output-format", "sarif", "--show-fixes", "."],
        ["check", "--statistics", "--output-format", "json", "."],
        ["check", "train.py", "notebook.ipynb", "pkg/model.py"],
        ["rule", "--all"],
        ["version"],
    ],
    ids=lambda a: " ".join(a),
)
def test_the_command_line_imports_nothing_it_checks(tree, arguments):
    project, markers, env = tree
    result = subprocess.run([sys.executable, "-m", "tflint_perf", *arguments], cwd=project, env=env,
                            capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    assert "internal error" not in result.stderr
    assert list(markers.iterdir()) == []


def test_stdin_imports_nothing(tree):
    project, markers, env = tree
    command = [sys.executable, "-m", "tflint_perf", "check", "--fix", "--stdin-filename", "train.py", "-"]
    result = subprocess.run(command, cwd=project, env=env, input=(project / "train.py").read_text(),
                            capture_output=True, text=True)
    assert result.returncode in (0, 1) and "prefetch" in result.stdout
    assert list(markers.iterdir()) == []


def test_no_tensorflow_and_no_checked_module_in_sys_modules_after_linting(tree):
    # In-process, with `tensorflow` importable: after a whole check-and-fix run, what did it import?
    project, markers, env = tree
    script = (
        "import json, sys\n"
        "from tflint_perf.faces.cli import main\n"
        "project = sys.argv[1]\n"
        "code = main(['check', '--fix', '--unsafe-fixes', '--no-cache', '-j', '1', project])\n"
        "loaded = sorted(name for name, module in list(sys.modules.items())\n"
        "                if str(getattr(module, '__file__', '') or '').startswith(project))\n"
        "print(json.dumps({'code': code, 'tensorflow': 'tensorflow' in sys.modules,\n"
        "                  'keras': 'keras' in sys.modules, 'from_project': loaded}))\n"
    )
    # Not from the project's directory: `python -c` would put it first on sys.path, ahead of LibCST.
    result = subprocess.run([sys.executable, "-c", script, str(project)], cwd=project.parent, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["code"] in (0, 1)
    assert report == {"code": report["code"], "tensorflow": False, "keras": False, "from_project": []}
    assert list(markers.iterdir()) == []


def test_the_flake8_plugin_imports_nothing_it_checks(tree):
    pytest.importorskip("flake8")
    project, markers, env = tree
    # The flake8 script, as editors and pre-commit run it (`python -m flake8` would import the
    # project's `libcst` from the working directory: Python's doing, not the plugin's).
    script = Path(sys.executable).with_name("flake8")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "flake8"]
    if not script.exists():
        for dependency in ("libcst", "pathspec"):
            (project / dependency / "__init__.py").unlink()
    result = subprocess.run([*command, "--select", "TFP", "."], cwd=project, env=env, capture_output=True, text=True)
    assert "TFP10" in result.stdout, result.stdout + result.stderr
    assert list(markers.iterdir()) == []


def test_the_harness_is_not_loaded_by_checking(tree):
    # `verify` is the one command that runs user code; `check` must not even load the code that can.
    project, markers, env = tree
    script = (
        "import sys\nfrom tflint_perf.faces.cli import main\n"
        "main(['check', '--no-cache', '-j', '1', sys.argv[1]])\n"
        "print(sorted(name for name in sys.modules if name.startswith('tflint_perf.faces.harness.')))\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(project)], cwd=project.parent, env=env,
                            capture_output=True, text=True)
    loaded = result.stdout.strip().splitlines()[-1]
    assert "verify" not in loaded and "dependency" not in loaded, loaded
