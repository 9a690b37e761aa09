"""The command-line verbs a ruff user reaches for, through the real CLI: --show-settings, --show-files,
--add-noqa, --fix-only, --watch, --statistics, colour, did-you-mean, and settings validation."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

BAD = "import tensorflow as tf\nds = tf.data.Dataset.range(8).batch(2)\nmodel.fit(ds)\n"
GOOD = "import tensorflow as tf\nds = tf.data.Dataset.range(8).batch(2).prefetch(tf.data.AUTOTUNE)\nmodel.fit(ds)\n"
# Two unsafe fixes (random map functions), nothing safe.
UNSAFE_ONLY = (
    "import tensorflow as tf\n"
    "def f(x):\n    return tf.random.uniform([]) * x\n"
    "a = tf.data.Dataset.range(4).map(f)\n"
    "b = tf.data.Dataset.range(4).map(f)\n"
)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text(GOOD)
    return tmp_path


# -- did you mean, settings validation ---------------------------------------------------------------
@pytest.mark.parametrize("selector,suggestion", [
    ("TFP1011", "TFP101"), ("TFP11", "TFP101"), ("missing-prefech", "missing-prefetch"),
])
def test_unknown_selector_suggests_the_nearest_rule(project, selector, suggestion):
    result = run_cli("check", "--select", selector, "bad.py", cwd=project)
    assert result.returncode == 2
    assert f"unknown rule selector `{selector}` (did you mean `{suggestion}`?)" in result.stderr


def test_unknown_selector_in_the_config_suggests_too(project):
    (project / "pyproject.toml").write_text('[tool.tflint-perf]\nignore = ["TFP3011"]\n')
    result = run_cli("check", "bad.py", cwd=project)
    assert result.returncode == 2
    assert "pyproject.toml" in result.stderr and "(did you mean `TFP301`?)" in result.stderr


def test_far_off_selector_suggests_nothing(project):
    result = run_cli("check", "--select", "XYZ9", "bad.py", cwd=project)
    assert result.returncode == 2 and "did you mean" not in result.stderr


def test_unknown_rule_in_rule_command_suggests(project):
    result = run_cli("rule", "TFP1010")
    assert result.returncode == 2 and "did you mean `TFP101`?" in result.stderr


@pytest.mark.parametrize("value", ['"2.99"', '"3.0"', '"2.51"'])
def test_unreleased_target_version_in_the_config_is_exit_2(project, value):
    (project / "pyproject.toml").write_text(f"[tool.tflint-perf]\ntarget-version = {value}\n")
    result = run_cli("check", "bad.py", cwd=project)
    assert result.returncode == 2
    assert "pyproject.toml" in result.stderr and "is not a released TensorFlow version" in result.stderr
    assert "valid values: 1.0, 1.1," in result.stderr and "2.15" in result.stderr and "2.21" in result.stderr


def test_unreleased_target_version_on_the_command_line_is_exit_2(project):
    result = run_cli("check", "--target-version", "2.99", "bad.py", cwd=project)
    assert result.returncode == 2
    assert "--target-version: '2.99' is not a released TensorFlow version; valid values:" in result.stderr
    assert run_cli("check", "--target-version", "2.21", "bad.py", cwd=project).returncode == 0  # 2.12+ prefetches
    assert run_cli("check", "--target-version", "1.15.5", "bad.py", cwd=project).returncode == 1


def test_a_number_for_target_version_asks_for_a_string(project):
    (project / "pyproject.toml").write_text("[tool.tflint-perf]\ntarget-version = 2.10\n")
    result = run_cli("check", "bad.py", cwd=project)
    assert result.returncode == 2 and "write the TensorFlow version as a string" in result.stderr


def test_wrong_option_type_names_the_toml_type(project):
    (project / "pyproject.toml").write_text('[tool.tflint-perf]\nmin-width = "64"\n')
    result = run_cli("check", "bad.py", cwd=project)
    assert result.returncode == 2
    assert "min-width: expected an integer, got '64'" in result.stderr and "a int" not in result.stderr


def test_plural_of_fix(tmp_path):
    (tmp_path / "m.py").write_text(UNSAFE_ONLY)
    out = run_cli("check", "m.py", cwd=tmp_path).stdout
    assert "No fixes available (2 unsafe fixes available with --unsafe-fixes)." in out
    assert "fixs" not in out
