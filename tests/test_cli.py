"""The command line as users run it: exit codes, bad input, formats, selection, suppression, config."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.conftest import REPO, run_cli
from tflint_perf.faces.docs import rule_pages

BAD = "import tensorflow as tf\nds = tf.data.Dataset.range(8).batch(2)\nmodel.fit(ds)\n"
GOOD = "import tensorflow as tf\nds = tf.data.Dataset.range(8).batch(2).prefetch(tf.data.AUTOTUNE)\nmodel.fit(ds)\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text(GOOD)
    return tmp_path


def test_findings_exit_1_clean_exit_0(project):
    assert run_cli("check", "bad.py", cwd=project).returncode == 1
    clean = run_cli("check", "good.py", cwd=project)
    assert clean.returncode == 0 and "All checks passed!" in clean.stdout


def test_concise_output_and_summary(project):
    result = run_cli("check", "bad.py", cwd=project)
    assert result.stdout.splitlines() == [
        "bad.py:2:31: TFP101 [*] Pipeline consumed by `model.fit()` does not end with `prefetch`; "
        "input preparation and the training step run one after the other "
        "(on TensorFlow < 2.12, or with autotune off; later versions inject one themselves)",
        "Found 1 error.",
        "[*] 1 fixable with --fix.",
    ]


def test_check_is_the_default_command(project):
    result = run_cli("--fix", "bad.py", cwd=project)
    assert result.returncode == 0
    assert "Found 1 error (1 fixed, 0 remaining)." in result.stdout
    assert (project / "bad.py").read_text() == GOOD


def test_directory_walk_defaults_to_cwd(project):
    result = run_cli(cwd=project)
    assert result.returncode == 1 and "bad.py:2:31" in result.stdout and "good.py" not in result.stdout


def test_json_is_ruff_compatible(project):
    result = run_cli("check", "--output-format", "json", "bad.py", cwd=project)
    (item,) = json.loads(result.stdout)
    assert item["code"] == "TFP101" and item["name"] == "missing-prefetch"
    assert item["filename"] == "bad.py"
    assert item["location"] == {"row": 2, "column": 31} and item["end_location"] == {"row": 2, "column": 39}
    assert item["fix"]["applicability"] == "safe"
    assert item["fix"]["edits"] == [
        {"content": ".prefetch(tf.data.AUTOTUNE)", "location": {"row": 2, "column": 39}, "end_location": {"row": 2, "column": 39}}
    ]
    assert item["url"].endswith("TFP101.md")


def test_json_lines_github_and_sarif(project):
    lines = run_cli("check", "--output-format", "json-lines", "bad.py", cwd=project).stdout.splitlines()
    assert [json.loads(line)["code"] for line in lines] == ["TFP101"]
    github = run_cli("check", "--output-format", "github", "bad.py", cwd=project).stdout
    assert github.startswith("::warning title=tflint-perf (TFP101),file=bad.py,line=2,col=31,endLine=2,endColumn=39::")
    sarif = json.loads(run_cli("check", "--output-format", "sarif", "bad.py", cwd=project).stdout)
    run = sarif["runs"][0]
    assert sarif["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "tflint-perf"
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad.py"
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} >= {"TFP101", "TFP102"}


def test_output_file(project):
    result = run_cli("check", "--output-format", "json", "-o", "out.json", "bad.py", cwd=project)
    assert result.returncode == 1 and result.stdout == ""
    assert json.loads((project / "out.json").read_text())[0]["code"] == "TFP101"


def test_full_format_shows_source_and_help(project):
    out = run_cli("check", "--output-format", "full", "bad.py", cwd=project).stdout
    assert "  --> bad.py:2:31" in out and "^^^^^^^^" in out and "help: Append `.prefetch(tf.data.AUTOTUNE)`" in out


def test_diff_writes_nothing(project):
    result = run_cli("check", "--diff", "bad.py", cwd=project)
    assert result.returncode == 1
    assert "+ds = tf.data.Dataset.range(8).batch(2).prefetch(tf.data.AUTOTUNE)" in result.stdout
    assert (project / "bad.py").read_text() == BAD
    assert run_cli("check", "--diff", "good.py", cwd=project).returncode == 0


def test_exit_zero_and_exit_non_zero_on_fix(project):
    assert run_cli("check", "--exit-zero", "bad.py", cwd=project).returncode == 0
    assert run_cli("check", "--fix", "--exit-non-zero-on-fix", "bad.py", cwd=project).returncode == 1


def test_unsafe_fixes_need_opt_in(tmp_path):
    (tmp_path / "m.py").write_text("import tensorflow as tf\ndef f(x):\n    return tf.random.uniform([]) * x\nds = tf.data.Dataset.range(4).map(f)\n")
    first = run_cli("check", "--fix", "m.py", cwd=tmp_path)
    assert first.returncode == 1 and "1 unsafe fix available with --fix --unsafe-fixes" not in first.stdout
    assert "num_parallel_calls" not in (tmp_path / "m.py").read_text()
    second = run_cli("check", "--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert second.returncode == 0 and "num_parallel_calls" in (tmp_path / "m.py").read_text()


def test_hint_mentions_unsafe_fixes(tmp_path):
    (tmp_path / "m.py").write_text("import tensorflow as tf\nds = tf.data.Dataset.range(4).map(g)\n")
    assert "(1 unsafe fix available with --fix --unsafe-fixes)" not in run_cli("check", "m.py", cwd=tmp_path).stdout
    assert "No fixes available (1 unsafe fix available with --unsafe-fixes)." in run_cli("check", "m.py", cwd=tmp_path).stdout


@pytest.mark.parametrize("selector,expected", [("TFP", 1), ("TFP1", 1), ("TFP101", 1), ("TFP102", 0), ("missing-prefetch", 1)])
def test_select_by_prefix_code_and_name(project, selector, expected):
    result = run_cli("check", "--select", selector, "--output-format", "json", "bad.py", cwd=project)
    assert len(json.loads(result.stdout)) == expected


def test_ignore_and_extend_select(project):
    assert json.loads(run_cli("check", "--ignore", "TFP101", "--output-format", "json", "bad.py", cwd=project).stdout) == []
    extended = run_cli("check", "--select", "TFP102", "--extend-select", "TFP101", "--output-format", "json", "bad.py", cwd=project)
    assert [d["code"] for d in json.loads(extended.stdout)] == ["TFP101"]


def test_unknown_selector_is_a_usage_error(project):
    result = run_cli("check", "--select", "XYZ9", "bad.py", cwd=project)
    assert result.returncode == 2 and "unknown rule selector `XYZ9`" in result.stderr


def test_bad_output_format_from_the_environment_is_a_usage_error(project):
    result = run_cli("check", "bad.py", cwd=project, env={"TFLINT_PERF_OUTPUT_FORMAT": "bogus"})
    assert result.returncode == 2 and "TFLINT_PERF_OUTPUT_FORMAT='bogus'" in result.stderr
    assert "internal error" not in result.stderr


def test_unknown_flag_is_a_usage_error(project):
    assert run_cli("check", "--frobnicate", cwd=project).returncode == 2


@pytest.mark.parametrize(
    "suppression,suppressed",
    [
        ("model.fit(ds.batch(2))  # noqa", True),
        ("model.fit(ds.batch(2))  # noqa: TFP101", True),
        ("model.fit(ds.batch(2))  # NOQA:TFP102,TFP101", True),
        ("model.fit(ds.batch(2))  # noqa: TFP102", False),
        ("# tflint-perf: noqa\nmodel.fit(ds.batch(2))", True),
        ("# tflint-perf: noqa: TFP101\nmodel.fit(ds.batch(2))", True),
        ("# tflint-perf: noqa: TFP102\nmodel.fit(ds.batch(2))", False),
        ("model.fit(ds.batch(2))  # tflint-perf: noqa", False),  # file-level only on its own line
        ("x = '# noqa'; model.fit(ds.batch(2))", False),  # inside a string is not a comment
    ],
)
def test_noqa(tmp_path, suppression, suppressed):
    (tmp_path / "n.py").write_text(f"import tensorflow as tf\nds = tf.data.Dataset.range(4)\n{suppression}\n")
    result = run_cli("check", "--select", "TFP101", "n.py", cwd=tmp_path)
    assert (result.returncode == 0) == suppressed, result.stdout


def test_pyproject_configuration(project):
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [tool.tflint-perf]
            select = ["TFP1"]
            ignore = ["TFP102"]
            exclude = ["generated"]
            [tool.tflint-perf.per-file-ignores]
            "scripts/**" = ["TFP101"]
            """
        )
    )
    (project / "scripts").mkdir()
    (project / "scripts" / "train.py").write_text(BAD)
    (project / "generated").mkdir()
    (project / "generated" / "train.py").write_text(BAD)
    result = run_cli("check", "--output-format", "json", cwd=project)
    assert sorted(d["filename"] for d in json.loads(result.stdout)) == ["bad.py"]
    # Excluded paths given explicitly are still checked unless --force-exclude.
    assert run_cli("check", "generated/train.py", cwd=project).returncode == 1
    assert run_cli("check", "--force-exclude", "generated/train.py", cwd=project).returncode == 0


@pytest.mark.parametrize(
    "table,message",
    [
        ('select = "TFP"', "expected a list of strings"),
        ('colour = "red"', "unknown key `colour`"),
        ('select = ["NOPE1"]', "unknown rule selector `NOPE1`"),
        ('target-version = "two"', "expected a TensorFlow version"),
        ("select = [", "invalid TOML"),
    ],
)
def test_bad_config_is_exit_2_naming_the_file(project, table, message):
    (project / "pyproject.toml").write_text(f"[tool.tflint-perf]\n{table}\n")
    result = run_cli("check", "bad.py", cwd=project)
    assert result.returncode == 2
    assert "pyproject.toml" in result.stderr and message in result.stderr


def test_isolated_ignores_config(project):
    (project / "pyproject.toml").write_text('[tool.tflint-perf]\nignore = ["TFP101"]\n')
    assert run_cli("check", "bad.py", cwd=project).returncode == 0
    assert run_cli("check", "--isolated", "bad.py", cwd=project).returncode == 1


def test_gitignore_is_honoured(project):
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("ignored/\n")
    (project / "ignored").mkdir()
    (project / "ignored" / "train.py").write_text(BAD)
    (project / "bad.py").unlink()
    assert run_cli("check", cwd=project).returncode == 0


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("syntax.py", b"import tensorflow as tf\ndef broken(:\n", "syntax.py:2:12: TFP002 SyntaxError: invalid syntax"),
        ("bytes.py", b"import tensorflow as tf\nx = '\xff\xfe'\n", "bytes.py:2:6: TFP001 cannot decode the file as utf-8"),
        ("cookie.py", b"# -*- coding: klingon -*-\nimport tensorflow\n",
         "cookie.py:1:1: TFP001 cannot determine the file's encoding"),
    ],
)
def test_bad_input_is_one_finding_and_other_files_are_still_checked(project, name, content, message):
    (project / name).write_bytes(content)
    result = run_cli("check", name, "bad.py", cwd=project)
    assert result.returncode == 1
    (line,) = [line for line in result.stdout.splitlines() if line.startswith(name)]
    assert line.startswith(message)
    assert "bad.py:2:31: TFP101" in result.stdout and "Found 2 errors." in result.stdout
    assert result.stderr == ""
    assert "Traceback" not in result.stderr


def test_bad_input_is_left_untouched_by_fix(project):
    content = b"import tensorflow as tf\ndef broken(:\n"
    (project / "syntax.py").write_bytes(content)
    run_cli("check", "--fix", "syntax.py", cwd=project)
    assert (project / "syntax.py").read_bytes() == content


def test_missing_path(project):
    result = run_cli("check", "nowhere.py", "good.py", cwd=project)
    assert result.returncode == 1 and "nowhere.py:1:1: TFP001 no such file or directory" in result.stdout
    # Not selected, a missing path is still not silently passed over.
    ignored = run_cli("check", "--ignore", "TFP001", "nowhere.py", "good.py", cwd=project)
    assert ignored.returncode == 1 and "nowhere.py: error: no such file or directory" in ignored.stderr


def test_empty_file_gets_a_note_and_is_clean(project):
    (project / "empty.py").write_text("")
    result = run_cli("check", "empty.py", cwd=project)
    assert result.returncode == 0 and "empty.py: note: file is empty, nothing to check" in result.stderr


def test_unreadable_file_is_reported(project, monkeypatch, capsys):
    from pathlib import Path

    from tflint_perf.faces import cli

    original = Path.read_bytes

    def deny(self):
        if self.name == "bad.py":
            raise PermissionError(13, "Permission denied")
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", deny)
    monkeypatch.chdir(project)
    assert cli.main(["check", "bad.py", "good.py"]) == 1
    assert "bad.py:1:1: TFP001 cannot read file: Permission denied" in capsys.readouterr().out


def test_stdin(project):
    result = run_cli("check", "-", "--stdin-filename", "train.py", stdin=BAD, cwd=project)
    assert result.returncode == 1 and result.stdout.startswith("train.py:2:31: TFP101")
    fixed = run_cli("check", "--fix", "-", stdin=BAD, cwd=project)
    assert fixed.stdout == GOOD and fixed.returncode == 0


def test_statistics(project):
    out = run_cli("check", "--statistics", "bad.py", cwd=project).stdout
    assert out == "1\tTFP101\t[*] missing-prefetch\n"  # only the table, as ruff prints it


def test_show_fixes(project):
    out = run_cli("check", "--fix", "--show-fixes", "bad.py", cwd=project).stdout
    assert "Fixed 1 error:\n- bad.py:\n    1 × TFP101 (missing-prefetch)" in out


def test_rule_command_prints_docs():
    result = run_cli("rule", "TFP101")
    assert result.returncode == 0
    assert result.stdout.startswith("# missing-prefetch (TFP101)")
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety", "## References"):
        assert section in result.stdout
    assert run_cli("rule", "TFP999").returncode == 2
    listed = json.loads(run_cli("rule", "--all", "--output-format", "json").stdout)
    assert {"TFP101", "TFP102"} <= {rule["code"] for rule in listed}


def test_version():
    from tflint_perf import __version__

    assert run_cli("--version").stdout.strip() == f"tflint-perf {__version__}"


def test_docs_rules_pages_are_in_sync_with_the_rules():
    directory = REPO / "docs" / "rules"
    expected = rule_pages()
    actual = {path.name: path.read_text(encoding="utf-8") for path in directory.glob("*.md")}
    assert actual == expected, "docs/rules/ is stale: run `python -m tflint_perf.faces.docs`"


def test_rules_off_by_default_need_explicit_selection(monkeypatch):
    from tflint_perf.checking.config import Settings
    from tflint_perf.rules import find_rule

    rule = find_rule("TFP102")
    monkeypatch.setattr(rule, "default_enabled", False)
    assert "TFP102" not in Settings().selected_codes()
    assert "TFP101" in Settings().selected_codes()
    # As ruff's explicit preview rules: a prefix or ALL does not turn such a rule on, its code or name does.
    assert "TFP102" not in Settings(select=["TFP"]).selected_codes()
    assert "TFP102" not in Settings(select=["TFP1"]).selected_codes()
    assert "TFP102" not in Settings(select=["ALL"]).selected_codes()
    assert "TFP101" in Settings(select=["TFP1"]).selected_codes()
    assert "TFP102" in Settings(select=["TFP102"]).selected_codes()
    assert "TFP102" in Settings(select=["sequential-map"]).selected_codes()
    assert "TFP102" in Settings(extend_select=["TFP102"]).selected_codes()
    assert "TFP102" not in Settings(extend_select=["TFP102"], ignore=["TFP1"]).selected_codes()


def test_a_prefix_that_selects_opt_in_rules_alone_turns_them_on():
    """TFP401/TFP402 are upgrade advice, off by default: ``TFP4`` (only opt-in rules) turns them on,
    as ruff's ``UP`` turns pyupgrade on; ``TFP`` and ``ALL``, which mean "the performance rules", do not."""
    from tflint_perf.checking.config import Settings

    deprecations = {"TFP401", "TFP402"}
    assert not deprecations & Settings().selected_codes()
    assert not deprecations & Settings(select=["TFP"]).selected_codes()
    assert not deprecations & Settings(select=["ALL"]).selected_codes()
    assert deprecations <= Settings(extend_select=["TFP4"]).selected_codes()
    assert deprecations <= Settings(select=["TFP40"]).selected_codes()
    assert Settings(extend_select=["TFP401"]).selected_codes() & deprecations == {"TFP401"}
    assert Settings(extend_select=["deprecated-keras-function-api"]).selected_codes() & deprecations == {"TFP402"}
    assert Settings(extend_select=["TFP4"], ignore=["TFP402"]).selected_codes() & deprecations == {"TFP401"}
    # The default set is untouched by the opt-in group.
    assert Settings(extend_select=["TFP4"]).selected_codes() - deprecations == Settings().selected_codes()
