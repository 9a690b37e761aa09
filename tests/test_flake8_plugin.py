"""The flake8 plugin, through a real ``flake8`` process, against the real command line.

flake8 finds plugins through the ``flake8.extension`` entry point of an installed distribution.
CI installs the package (``pip install -e '.[test]'``); in a development environment where it is
not installed, the tests write a ``.dist-info`` with the entry point declared in pyproject.toml to a
temporary directory on ``PYTHONPATH``, so flake8's own plugin discovery still does the finding.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Optional, Set, Tuple

import pytest

from tests.conftest import FIXTURES, REPO, run_cli
from tflint_perf import __version__
from tflint_perf.text.diagnostics import INPUT_ERROR_CODES
from tflint_perf.rules import all_rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Finding = Tuple[str, int, int, str, str]  # file, row, 1-based column, code, message
FORMAT = "%(path)s\t%(row)d\t%(col)d\t%(code)s\t%(text)s"

BAD = textwrap.dedent(
    """\
    import tensorflow as tf
    ds = tf.data.Dataset.range(8).map(lambda x: tf.strings.as_string(x)).batch(2)
    model.fit(ds)
    """
)


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> str:
    """PYTHONPATH for flake8 subprocesses: this checkout, plus the entry point when not installed."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"][
        "flake8.extension"
    ]
    installed = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="flake8.extension")}
    if installed.get("TFP") == declared["TFP"]:
        return str(REPO)
    site = tmp_path_factory.mktemp("site")
    info = site / f"tflint_perf-{__version__}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: tflint-perf\nVersion: {__version__}\n")
    lines = "".join(f"{name} = {value}\n" for name, value in declared.items())
    (info / "entry_points.txt").write_text(f"[flake8.extension]\n{lines}")
    return os.pathsep.join([str(site), str(REPO)])


def flake8(plugin_path: str, *args: str, cwd: Path, stdin: Optional[str] = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", f"--format={FORMAT}", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": plugin_path},
    )


def flake8_findings(result: subprocess.CompletedProcess, prefix: str = "TFP") -> Set[Finding]:
    assert "Traceback" not in result.stderr, result.stderr
    found = set()
    for line in result.stdout.splitlines():
        path, row, column, code, text = line.split("\t")
        if code.startswith(prefix):
            found.add((os.path.normpath(path), int(row), int(column), code, text))
    return found


def cli_findings(*args: str, cwd: Path) -> Set[Finding]:
    result = run_cli("check", "--output-format", "json", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return {
        (os.path.normpath(d["filename"]), d["location"]["row"], d["location"]["column"], d["code"], d["message"])
        for d in json.loads(result.stdout)
        if d["filename"].endswith(".py")
    }


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- registration ------------------------------------------------------------------------------------
def test_flake8_lists_the_plugin(plugin_path, tmp_path):
    result = flake8(plugin_path, "--version", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"tflint-perf: {__version__}" in result.stdout.replace("\n", " ")


# -- the same findings as the command line -----------------------------------------------------------
def test_flake8_reports_what_the_cli_reports_for_every_rule_example_and_fixture(plugin_path, tmp_path):
    for rule in all_rules():
        for kind, examples in (("valid", rule.valid), ("invalid", rule.invalid)):
            for index, example in enumerate(examples):
                write(tmp_path / "examples", f"{rule.code.lower()}_{kind}_{index}.py", example.code)
    shutil.copytree(FIXTURES, tmp_path / "fixtures", ignore=shutil.ignore_patterns("expected"))
    # Rules off by default are on only when named: both read this from the configuration.
    named = ", ".join(f'"{rule.code}"' for rule in all_rules() if not rule.default_enabled)
    (tmp_path / "pyproject.toml").write_text(f"[tool.tflint-perf]\nextend-select = [{named}]\n", encoding="utf-8")

    # A file that cannot be decoded or parsed is the CLI's TFP001/TFP002; flake8 reports it itself (E902, E999).
    expected = {f for f in cli_findings("examples", "fixtures", cwd=tmp_path) if f[3] not in INPUT_ERROR_CODES}
    result = flake8(plugin_path, "--select", "TFP", "examples", "fixtures", cwd=tmp_path)

    assert flake8_findings(result) == expected
    assert result.returncode == 1
    assert {code for _, _, _, code, _ in expected} == {rule.code for rule in all_rules() if not rule.input_error}


def test_stdin_with_a_display_name(plugin_path, tmp_path):
    write(tmp_path, "models/train.py", BAD)
    expected = cli_findings("models/train.py", cwd=tmp_path)
    result = flake8(plugin_path, "--select", "TFP", "-", "--stdin-display-name", "models/train.py",
                    cwd=tmp_path, stdin=BAD)
    assert flake8_findings(result) == expected and expected


# -- flake8 does the suppression and selection -------------------------------------------------------
NOQA = textwrap.dedent(
    """\
    import tensorflow as tf
    a = tf.data.Dataset.range(8).map(lambda x: x + 1)  # noqa: TFP102
    b = tf.data.Dataset.range(8).map(lambda x: x + 1)  # noqa
    c = tf.data.Dataset.range(8).map(lambda x: x + 1)  # noqa: E501
    """
)


def test_noqa_is_applied_by_flake8(plugin_path, tmp_path):
    write(tmp_path, "noqa.py", NOQA)
    honoured = flake8_findings(flake8(plugin_path, "--select", "TFP", "noqa.py", cwd=tmp_path))
    assert {(row, code) for _, row, _, code, _ in honoured} == {(4, "TFP102")}
    assert honoured == cli_findings("noqa.py", cwd=tmp_path)
    # The plugin yields suppressed findings too: flake8 decides, so --disable-noqa shows them all.
    every = flake8_findings(flake8(plugin_path, "--select", "TFP", "--disable-noqa", "noqa.py", cwd=tmp_path))
    assert {(row, code) for _, row, _, code, _ in every} == {(2, "TFP102"), (3, "TFP102"), (4, "TFP102")}


def test_file_level_tflint_perf_noqa_is_applied_by_the_plugin(plugin_path, tmp_path):
    write(tmp_path, "quiet.py", "# tflint-perf: noqa: TFP102\n" + BAD)
    found = flake8_findings(flake8(plugin_path, "--select", "TFP", "quiet.py", cwd=tmp_path))
    assert {code for _, _, _, code, _ in found} == {"TFP101"}
    assert found == cli_findings("quiet.py", cwd=tmp_path)


def test_select_extend_ignore_and_per_file_ignores(plugin_path, tmp_path):
    write(tmp_path, "a.py", BAD)
    write(tmp_path, "b.py", BAD)

    def codes(*args: str) -> Set[Tuple[str, str]]:
        return {(path, code) for path, _, _, code, _ in flake8_findings(flake8(plugin_path, *args, cwd=tmp_path))}

    everything = {("a.py", "TFP101"), ("a.py", "TFP102"), ("b.py", "TFP101"), ("b.py", "TFP102")}
    assert codes("--select", "TFP", "a.py", "b.py") == everything
    assert codes("--select", "TFP101", "a.py", "b.py") == {("a.py", "TFP101"), ("b.py", "TFP101")}
    assert codes("--select", "TFP", "--extend-ignore", "TFP102", "a.py", "b.py") == {("a.py", "TFP101"),
                                                                                     ("b.py", "TFP101")}
    assert codes("--select", "TFP", "--per-file-ignores", "a.py:TFP", "a.py", "b.py") == {("b.py", "TFP101"),
                                                                                          ("b.py", "TFP102")}


# A TF2 script using a deprecated spelling that warns there (py_func through compat.v1) beside a
# performance problem: the deprecation rules are opt-in, the performance rule is not.
DEPRECATED = textwrap.dedent(
    """\
    import tensorflow as tf
    ds = tf.data.Dataset.range(8).map(lambda x: tf.strings.as_string(x)).batch(2)
    y = tf.compat.v1.py_func(abs, [1.0], tf.float32)
    model.fit(ds)
    """
)


def test_opt_in_rules_need_a_selector_that_names_them(plugin_path, tmp_path):
    write(tmp_path, "train.py", DEPRECATED)
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.4\n")

    def codes(*args: str) -> Set[str]:
        return {code for _, _, _, code, _ in flake8_findings(flake8(plugin_path, *args, "train.py", cwd=tmp_path))}

    # `--select TFP` is the plugin's codes, and the plugin's default rule set: no deprecation advice.
    assert codes("--select", "TFP") == {"TFP101", "TFP102"}
    assert codes() >= {"TFP101", "TFP102"} and "TFP402" not in codes()
    # flake8's own selectors naming the opt-in rules on purpose: the group prefix, or the code.
    assert codes("--select", "TFP,TFP4") == {"TFP101", "TFP102", "TFP402"}
    assert codes("--select", "TFP402") == {"TFP402"}
    assert codes("--select", "TFP", "--extend-select", "TFP40") == {"TFP101", "TFP102", "TFP402"}
    # Or tflint-perf's own configuration, as for the command line.
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-perf]\nextend-select = ["TFP4"]\n')
    assert codes("--select", "TFP") == {"TFP101", "TFP102", "TFP402"}
    assert codes("--select", "TFP") == {c for _, _, _, c, _ in cli_findings("train.py", cwd=tmp_path)}


# -- configuration -----------------------------------------------------------------------------------
def test_pyproject_settings_apply_as_for_the_cli(plugin_path, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.tflint-perf]\nignore = ["TFP102"]\n')
    write(tmp_path, "src/train.py", BAD)
    found = flake8_findings(flake8(plugin_path, "--select", "TFP", "src/train.py", cwd=tmp_path))
    assert {code for _, _, _, code, _ in found} == {"TFP101"}
    assert found == cli_findings("src/train.py", cwd=tmp_path)


def test_bad_config_is_one_finding_per_file_not_a_crash(plugin_path, tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.tflint-perf]\nselect = ["NOPE"]\n')
    write(tmp_path, "train.py", "import os\n" + BAD)
    write(tmp_path, "plain.py", "import os\n")  # no TensorFlow: never gets as far as the settings
    result = flake8(plugin_path, "--select", "TFP,F", "train.py", "plain.py", cwd=tmp_path)
    assert result.returncode == 1
    found = flake8_findings(result, prefix="")
    tfp = [f for f in found if f[3].startswith("TFP")]
    assert [(path, row, code) for path, row, _, code, _ in tfp] == [("train.py", 1, "TFP000")]
    assert "unknown rule selector `NOPE`" in tfp[0][4]
    unused_imports = {(path, code) for path, _, _, code, _ in found if code == "F401"}
    assert unused_imports == {("train.py", "F401"), ("plain.py", "F401")}  # pyflakes ran on both


# -- robustness and cost -----------------------------------------------------------------------------
def test_a_file_libcst_cannot_analyse_is_skipped_and_the_run_goes_on(plugin_path, tmp_path):
    # 1000 implicitly concatenated strings: one constant to `ast` (so flake8 and pyflakes are
    # fine), 1000 nested nodes to LibCST, deeper than tflint-perf analyses.
    deep = "import tensorflow as tf\nNAMES = (" + " ".join(["'a'"] * 1000) + ")\n" + BAD
    write(tmp_path, "deep.py", deep)
    write(tmp_path, "bad.py", BAD)
    cli = run_cli("check", "deep.py", cwd=tmp_path)
    assert cli.stdout.startswith("deep.py:1:1: TFP002 expressions nested"), "the input no longer exercises this path"

    result = flake8(plugin_path, "--select", "TFP,E999,F", "deep.py", "bad.py", cwd=tmp_path)
    assert result.returncode == 1
    assert flake8_findings(result) == cli_findings("bad.py", cwd=tmp_path)
    others = {(path, code) for path, _, _, code, _ in flake8_findings(result, prefix="F")}
    assert ("deep.py", "F821") in others  # pyflakes still ran on it: `model` is undefined


def test_the_plugin_never_raises(monkeypatch):
    from tflint_perf.checking import engine
    from tflint_perf.faces import flake8_plugin

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(engine, "check_text", broken)
    plugin = flake8_plugin.Plugin(None, BAD.splitlines(keepends=True), "train.py")
    assert list(plugin.run()) == []


def test_files_without_tensorflow_cost_nothing(plugin_path, tmp_path):
    # Not even an import: the plugin answers from the text alone, LibCST and the settings untouched.
    probe = textwrap.dedent(
        """\
        import sys
        from tflint_perf.faces.flake8_plugin import Plugin
        lines = ["import torch\\n", "for x in torch.utils.data.DataLoader(data):\\n", "    step(x)\\n"]
        assert list(Plugin(None, lines, "torch_train.py").run()) == []
        loaded = sorted(name for name in sys.modules if name.split(".")[0] == "libcst" or
                        name in ("tflint_perf.checking.engine", "tflint_perf.checking.config"))
        print(loaded)
        """
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": plugin_path})
    assert result.returncode == 0 and result.stdout == "[]\n", result.stdout + result.stderr

    write(tmp_path, "pyproject.toml", "[tool.tflint-perf]\nnot-a-key = 1\n")  # would be TFP000 if read
    write(tmp_path, "torch_train.py", "import torch\nfor x in loader:\n    step(x)\n")
    result = flake8(plugin_path, "--select", "TFP", "torch_train.py", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""
