"""The command-line verbs a ruff user reaches for, through the real CLI: --show-settings, --show-files,
--add-noqa, --fix-only, --watch, --statistics, colour, did-you-mean, and settings validation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import List

import pytest

from tests.conftest import REPO, run_cli

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


# -- --show-settings -----------------------------------------------------------------------------------
def test_show_settings_shows_the_effective_configuration_and_what_was_inferred(project):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["tensorflow>=2.13"]\n'
        '[tool.tflint-perf]\nignore = ["TFP2"]\nmin-width = 128\nextend-exclude = ["gen"]\n'
    )
    result = run_cli("check", "--show-settings", "bad.py", cwd=project)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "config file: pyproject.toml" in out or f"config file: {project / 'pyproject.toml'}" in out
    selected = next(line for line in out.splitlines() if line.startswith("selected rules: "))
    codes = selected.split(": ", 1)[1].split(", ")
    assert {"TFP101", "TFP102", "TFP103", "TFP104", "TFP301"} <= set(codes) and "TFP302" not in codes
    assert not any(code.startswith("TFP2") for code in codes)
    assert "option min-width: 128 (configured)" in out and "option alignment: 0 (default)" in out
    assert "extend-exclude: gen" in out and "unsafe-fixes: false" in out
    assert f"bad.py: target-version 2.13 ({project / 'pyproject.toml'})" in out


# -- --show-files ----------------------------------------------------------------------------------------
def test_show_files_lists_what_would_be_checked(project):
    (project / "pyproject.toml").write_text('[tool.tflint-perf]\nextend-exclude = ["generated"]\n')
    (project / "generated").mkdir()
    (project / "generated" / "x.py").write_text(BAD)
    (project / "pkg").mkdir()
    (project / "pkg" / "nb.ipynb").write_text("{}")
    (project / "pkg" / "notes.txt").write_text("not python")
    result = run_cli("check", "--show-files", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        str((project / "bad.py").resolve()), str((project / "good.py").resolve()),
        str((project / "pkg" / "nb.ipynb").resolve()),
    ]
    assert (project / "bad.py").read_text() == BAD  # nothing checked, nothing written
    missing = run_cli("check", "--show-files", "nowhere.py", "bad.py", cwd=project)
    assert missing.returncode == 1 and "nowhere.py: error: no such file or directory" in missing.stderr
    assert missing.stdout.splitlines() == [str((project / "bad.py").resolve())]


# -- --add-noqa ------------------------------------------------------------------------------------------
def test_add_noqa_then_check_reports_nothing_and_a_second_run_adds_nothing(project):
    result = run_cli("check", "--add-noqa", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "Added 1 noqa directive." in result.stderr
    assert (project / "bad.py").read_text() == BAD.replace("batch(2)\n", "batch(2)  # noqa: TFP101\n")
    assert (project / "good.py").read_text() == GOOD
    after = run_cli("check", cwd=project)
    assert after.returncode == 0 and "All checks passed!" in after.stdout
    again = run_cli("check", "--add-noqa", cwd=project)
    assert again.returncode == 0 and "Added 0 noqa directives." in again.stderr
    assert (project / "bad.py").read_text() == BAD.replace("batch(2)\n", "batch(2)  # noqa: TFP101\n")


def test_add_noqa_merges_with_an_existing_noqa_and_keeps_other_comments(tmp_path):
    source = (
        "import tensorflow as tf\n"
        "def f(x):\n    return tf.random.uniform([]) * x\n"
        "a = tf.data.Dataset.range(4).map(f)  # noqa: E501 the line is long\n"
        "b = tf.data.Dataset.range(4).map(f)  # keep me\n"
        "c = tf.data.Dataset.range(4).map(f)  # noqa\n"
    )
    (tmp_path / "m.py").write_text(source)
    result = run_cli("check", "--add-noqa", "m.py", cwd=tmp_path)
    assert result.returncode == 0 and "Added 2 noqa directives." in result.stderr
    assert (tmp_path / "m.py").read_text() == source.replace(
        "# noqa: E501 the line is long", "# noqa: E501, TFP102 the line is long"
    ).replace("# keep me", "# keep me  # noqa: TFP102")
    assert run_cli("check", "m.py", cwd=tmp_path).returncode == 0


def test_add_noqa_collects_the_codes_of_a_line(tmp_path):
    (tmp_path / "m.py").write_text("import tensorflow as tf\nmodel.fit(tf.data.Dataset.range(4).map(g))\n")
    assert run_cli("check", "--add-noqa", "m.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "m.py").read_text().splitlines()[1].endswith("  # noqa: TFP101, TFP102")
    assert run_cli("check", "m.py", cwd=tmp_path).returncode == 0


def test_add_noqa_keeps_line_endings_and_encoding(tmp_path):
    data = "# -*- coding: latin-1 -*-\r\n# café\r\nimport tensorflow as tf\r\nmodel.fit(tf.data.Dataset.range(4))\r\n".encode("latin-1")
    (tmp_path / "m.py").write_bytes(data)
    assert run_cli("check", "--add-noqa", "m.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "m.py").read_bytes() == data.replace(b"range(4))\r\n", b"range(4))  # noqa: TFP101\r\n")
    assert run_cli("check", "m.py", cwd=tmp_path).returncode == 0


def test_add_noqa_goes_where_python_sees_a_comment_after_a_multi_line_string(tmp_path):
    # The finding is on `map`, whose line ends inside the string: the comment goes after the string.
    source = (
        "import tensorflow as tf\n"
        "ds = tf.data.Dataset.range(4).map(g, name='''first\n"
        "second''')\n"
        "y = 1\n"
    )
    (tmp_path / "m.py").write_text(source)
    before = run_cli("check", "--select", "TFP102", "m.py", cwd=tmp_path)
    assert "m.py:2:31: TFP102" in before.stdout
    assert run_cli("check", "--add-noqa", "--select", "TFP102", "m.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "m.py").read_text() == source.replace("second''')\n", "second''')  # noqa: TFP102\n")
    assert run_cli("check", "--select", "TFP102", "m.py", cwd=tmp_path).returncode == 0


def test_add_noqa_in_a_notebook_cell(tmp_path):
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
         "source": ["import tensorflow as tf\n", "ds = tf.data.Dataset.range(8).batch(2)\n"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["model.fit(ds)"]},
    ]
    notebook = {"cells": cells, "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(notebook, indent=1) + "\n")
    assert run_cli("check", "train.ipynb", cwd=tmp_path).returncode == 1
    result = run_cli("check", "--add-noqa", "train.ipynb", cwd=tmp_path)
    assert result.returncode == 0 and "Added 1 noqa directive." in result.stderr
    written = json.loads(path.read_text())
    assert written["cells"][1]["source"] == [
        "import tensorflow as tf\n", "ds = tf.data.Dataset.range(8).batch(2)  # noqa: TFP101\n"
    ]
    assert written["cells"][0] == cells[0] and written["cells"][2] == cells[2]
    assert run_cli("check", "train.ipynb", cwd=tmp_path).returncode == 0


def test_add_noqa_leaves_a_file_that_does_not_parse(project):
    (project / "broken.py").write_text("import tensorflow as tf\ndef broken(:\n")
    result = run_cli("check", "--add-noqa", cwd=project)
    assert result.returncode == 1 and "broken.py: error:" in result.stderr
    assert (project / "broken.py").read_text() == "import tensorflow as tf\ndef broken(:\n"
    assert "# noqa: TFP101" in (project / "bad.py").read_text()


# -- --fix-only, and a --fix with nothing to fix ------------------------------------------------------------
def test_fix_only_applies_fixes_reports_nothing_and_exits_0(tmp_path):
    (tmp_path / "m.py").write_text(UNSAFE_ONLY + "model.fit(a)\n")
    first = run_cli("check", "--fix-only", "m.py", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Fixed 1 error (2 additional fixes available with --unsafe-fixes).\n"
    assert "prefetch" in (tmp_path / "m.py").read_text()
    second = run_cli("check", "--fix-only", "m.py", cwd=tmp_path)
    assert second.returncode == 0 and second.stdout == "No errors fixed (2 fixes available with --unsafe-fixes).\n"


def test_fix_only_with_exit_non_zero_on_fix(project):
    result = run_cli("check", "--fix-only", "--exit-non-zero-on-fix", "bad.py", cwd=project)
    assert result.returncode == 1 and result.stdout == "Fixed 1 error.\n"
    assert (project / "bad.py").read_text() == GOOD
    again = run_cli("check", "--fix-only", "--exit-non-zero-on-fix", "bad.py", cwd=project)
    assert again.returncode == 0 and again.stdout == "No errors fixed.\n"


def test_fix_only_on_stdin_writes_the_fixed_source(project):
    result = run_cli("check", "--fix-only", "-", stdin=BAD, cwd=project)
    assert result.returncode == 0 and result.stdout == GOOD and "Fixed 1 error." in result.stderr


def test_a_second_fix_says_what_ruff_says(project, tmp_path):
    first = run_cli("check", "--fix", "bad.py", cwd=project)
    assert "Found 1 error (1 fixed, 0 remaining)." in first.stdout
    second = run_cli("check", "--fix", "bad.py", cwd=project)
    assert second.returncode == 0 and second.stdout == "All checks passed!\n"
    (tmp_path / "m.py").write_text(UNSAFE_ONLY)
    remaining = run_cli("check", "--fix", "m.py", cwd=tmp_path)
    assert remaining.returncode == 1
    assert "Found 2 errors.\n" in remaining.stdout and "0 fixed" not in remaining.stdout


# -- --statistics ----------------------------------------------------------------------------------------
def test_statistics_prints_only_the_table(tmp_path):
    (tmp_path / "m.py").write_text(UNSAFE_ONLY + "model.fit(a)\n")
    result = run_cli("check", "--statistics", "m.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["2\tTFP102\t[ ] sequential-map", "1\tTFP101\t[*] missing-prefetch"]
    unsafe = run_cli("check", "--statistics", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert unsafe.stdout.splitlines() == ["2\tTFP102\t[*] sequential-map", "1\tTFP101\t[*] missing-prefetch"]
    clean = run_cli("check", "--statistics", "--select", "TFP3", "m.py", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout == ""


def test_statistics_as_json(tmp_path):
    (tmp_path / "m.py").write_text(UNSAFE_ONLY + "model.fit(a)\n")
    result = run_cli("check", "--statistics", "--output-format", "json", "m.py", cwd=tmp_path)
    assert json.loads(result.stdout) == [
        {"code": "TFP102", "name": "sequential-map", "count": 2, "fixable": False},
        {"code": "TFP101", "name": "missing-prefetch", "count": 1, "fixable": True},
    ]
    unsupported = run_cli("check", "--statistics", "--output-format", "sarif", "m.py", cwd=tmp_path)
    assert unsupported.returncode == 2 and "--statistics: unsupported output format `sarif`" in unsupported.stderr


# -- colour ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("env,coloured", [
    ({}, False),  # run_cli: NO_COLOR=1
    ({"NO_COLOR": "", "FORCE_COLOR": "1"}, True),  # set but empty: no effect
    ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),  # NO_COLOR wins
    ({"NO_COLOR": "", "FORCE_COLOR": ""}, False),  # not a terminal
])
def test_colour_honours_no_color_and_force_color(project, env, coloured):
    result = run_cli("check", "bad.py", cwd=project, env=env)
    assert ("\033[" in result.stdout) == coloured
    if coloured:
        assert result.stdout.startswith("\033[1mbad.py:2:31\033[0m: \033[1;31mTFP101\033[0m \033[36m[*]\033[0m Pipeline")
        json_out = run_cli("check", "--output-format", "json", "bad.py", cwd=project, env=env).stdout
        assert "\033[" not in json_out and json.loads(json_out)[0]["code"] == "TFP101"


# -- --watch ------------------------------------------------------------------------------------------------
def _watching(cwd, *args):
    """``tflint-perf check --watch`` in a subprocess, with its merged output collected by a thread."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tflint_perf", "check", "--watch", "--no-cache", *args], cwd=cwd,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)},
    )
    output: List[str] = []
    threading.Thread(target=lambda: output.extend(iter(process.stdout.readline, "")), daemon=True).start()
    return process, output


def _wait_for(output: List[str], text: str, deadline: float, count: int = 1, retry=None) -> bool:
    last_retry = time.monotonic()
    if retry is not None:
        retry()
    while time.monotonic() < deadline:
        if "".join(output).count(text) >= count:
            return True
        if retry is not None and time.monotonic() - last_retry > 3:
            retry()  # the watcher may not have been ready for the first change
            last_retry = time.monotonic()
        time.sleep(0.05)
    return False


def test_watch_checks_again_when_a_file_changes(project):
    pytest.importorskip("watchfiles")
    process, output = _watching(project, "bad.py")
    deadline = time.monotonic() + 60
    try:
        assert _wait_for(output, "Watching for file changes.", deadline), "".join(output)
        assert "bad.py:2:31: TFP101" in "".join(output) and "Found 1 error." in "".join(output)
        time.sleep(0.5)
        assert _wait_for(output, "All checks passed!", deadline,
                         retry=lambda: (project / "bad.py").write_text(GOOD)), "".join(output)
        assert "File change detected..." in "".join(output)
        assert process.poll() is None  # still watching
    finally:
        process.terminate()
        process.wait(timeout=10)


_WITHOUT_WATCHFILES = (
    "import sys\n"
    "class NoWatchfiles:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'watchfiles' or name.startswith('watchfiles.'):\n"
    "            raise ImportError('no watchfiles here')\n"
    "sys.meta_path.insert(0, NoWatchfiles())\n"
    "from tflint_perf.faces.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def test_watch_without_watchfiles_says_how_to_install_it(project):
    result = subprocess.run([sys.executable, "-c", _WITHOUT_WATCHFILES, "check", "--watch", "bad.py"], cwd=project,
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert result.returncode == 2
    assert "--watch needs the watchfiles package: pip install 'tflint-perf[watch]'" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


# -- options documented where they are set -----------------------------------------------------------
def test_rule_pages_show_their_options_as_the_toml_users_write():
    tfp101 = run_cli("rule", "TFP101").stdout
    assert '## Options' in tfp101
    assert '```toml\n[tool.tflint-perf]\ntarget-version = "2.15"\n```' in tfp101
    assert "- Type: string" in tfp101 and "- Command line: `--target-version 2.15`" in tfp101
    assert "From TensorFlow 2.12" in tfp101
    tfp301 = run_cli("rule", "TFP301").stdout
    assert "```toml\n[tool.tflint-perf]\nmin-width = 64\n```\n\n- Type: integer\n- Default: `64`" in tfp301
    assert "alignment = 8" in tfp301


def test_every_rule_that_reads_the_target_version_declares_it():
    import inspect

    from tflint_perf.rules import all_rules

    for rule in all_rules():
        source = inspect.getsource(inspect.getmodule(rule))
        reads = "target_version" in source or "autotune(" in source  # fixes.autotune reads it
        declared = "target-version" in {option.key for option in rule.options}
        assert reads == declared, rule.code


def test_rule_json_lists_the_options():
    (tfp302,) = [rule for rule in json.loads(run_cli("rule", "--all", "--output-format", "json").stdout)
                 if rule["code"] == "TFP302"]
    assert [(o["key"], o["type"], o["default"]) for o in tfp302["options"]] == [
        ("alignment", "integer", 0), ("min-width", "integer", 64)
    ]
    assert json.loads(run_cli("rule", "TFP101", "--output-format", "json").stdout)["options"][0]["key"] == "target-version"


def test_add_noqa_after_a_backslash_continuation(tmp_path):
    source = "import tensorflow as tf\nds = tf.data.Dataset.range(4).map(g) \\\n    .batch(2)\n"
    (tmp_path / "m.py").write_text(source)
    assert "m.py:2:31: TFP102" in run_cli("check", "--select", "TFP102", "m.py", cwd=tmp_path).stdout
    assert run_cli("check", "--add-noqa", "--select", "TFP102", "m.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "m.py").read_text() == source.replace(".batch(2)\n", ".batch(2)  # noqa: TFP102\n")
    assert run_cli("check", "--select", "TFP102", "m.py", cwd=tmp_path).returncode == 0


def test_show_settings_says_which_rules_are_on_by_default_and_which_opt_in_rules_are_selected(project):
    def lines(*args: str):
        result = run_cli("check", "--isolated", "--show-settings", *args, "bad.py", cwd=project)
        assert result.returncode == 0, result.stderr
        return {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in result.stdout.splitlines() if ": " in line}

    default = lines()
    on = default["rules on by default"].split(", ")
    assert "TFP101" in on and "TFP401" not in on and "TFP402" not in on and "TFP209" not in on
    assert default["rules off by default (opt-in)"] == "TFP209 (off), TFP302 (off), TFP401 (off), TFP402 (off)"
    assert "TFP401" not in default["selected rules"].split(", ")
    # The deprecation group, opted into as ruff users opt into pyupgrade.
    chosen = lines("--extend-select", "TFP4")
    assert chosen["rules off by default (opt-in)"] == "TFP209 (off), TFP302 (off), TFP401 (selected), TFP402 (selected)"
    assert {"TFP401", "TFP402", "TFP101"} <= set(chosen["selected rules"].split(", "))


def test_rule_explains_that_an_opt_in_rule_is_off_by_default():
    out = run_cli("rule", "TFP401").stdout
    assert 'Off by default (opt-in): turn it on with `extend-select = ["TFP4"]` or `extend-select = ["TFP401"]`' in out
    assert "Off by default" not in run_cli("rule", "TFP101").stdout
