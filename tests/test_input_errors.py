"""A file that cannot be read, decoded or parsed is a finding (TFP001, TFP002), through the real
command line: in every output format, in the summary and the exit code, selectable, ignorable and
cached like any other finding."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import REPO, run_cli

BAD = "import tensorflow as tf\nds = tf.data.Dataset.range(8).batch(2)\nmodel.fit(ds)\n"
GOOD = "import tensorflow as tf\nds = tf.data.Dataset.range(8).batch(2).prefetch(tf.data.AUTOTUNE)\nmodel.fit(ds)\n"

# name, bytes, (row, column, code, message start)
BROKEN = {
    "bytes.py": (b"import tensorflow as tf\nx = '\xff\xfe'\n", (2, 6, "TFP001", "cannot decode the file as utf-8: ")),
    "cookie.py": (b"#!/usr/bin/env python\n# -*- coding: klingon -*-\nimport tensorflow\n",
                  (2, 1, "TFP001", "cannot determine the file's encoding: unknown encoding: klingon")),
    "syntax.py": (b"import tensorflow as tf\n\nprint 'steps', steps\n",
                  (3, 1, "TFP002", "SyntaxError: Missing parentheses in call to 'print'")),
    "notebook.ipynb": (b'{\n "cells": [\n  {"cell_type": "code", "source": []}\n  {}\n ]\n}\n',
                       (4, 3, "TFP001", "not a valid notebook: invalid JSON: Expecting ',' delimiter")),
}
NAMES = sorted(BROKEN) + ["link.py", "nowhere.py"]
EXPECTED = {
    **{name: position for name, (_, position) in BROKEN.items()},
    "link.py": (1, 1, "TFP001", "no such file or directory"),  # a dangling symlink: it cannot be read
    "nowhere.py": (1, 1, "TFP001", "no such file or directory"),
}


@pytest.fixture
def project(tmp_path):
    for name, (data, _) in BROKEN.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "link.py").symlink_to(tmp_path / "gone.py")
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text(GOOD)
    return tmp_path


def check(project, *args):
    return run_cli("check", "--no-cache", *args, *NAMES, "bad.py", "good.py", cwd=project)


def test_concise_lists_each_error_at_its_place_and_counts_it(project):
    result = check(project)
    assert result.returncode == 1 and result.stderr == ""
    lines = result.stdout.splitlines()
    for name, (row, column, code, message) in EXPECTED.items():
        (line,) = [line for line in lines if line.startswith(f"{name}:")]
        assert line.startswith(f"{name}:{row}:{column}: {code} {message}"), line
    assert any(line.startswith("bad.py:2:31: TFP101 [*]") for line in lines)
    assert lines[-2:] == ["Found 7 errors.", "[*] 1 fixable with --fix."]
    assert "All checks passed!" not in result.stdout


def test_full_shows_the_line_of_a_syntax_error(project):
    result = check(project, "--output-format", "full")
    assert result.returncode == 1
    assert "TFP002 SyntaxError: Missing parentheses in call to 'print'" in result.stdout
    assert "  --> syntax.py:3:1\n  |\n3 | print 'steps', steps\n  | ^\n" in result.stdout
    for name, (row, column, code, message) in EXPECTED.items():
        assert f"{code} {message}" in result.stdout and f"  --> {name}:{row}:{column}\n" in result.stdout
    assert "Found 7 errors." in result.stdout


@pytest.mark.parametrize("fmt", ["json", "json-lines"])
def test_json_formats(project, fmt):
    result = check(project, "--output-format", fmt)
    assert result.returncode == 1 and result.stderr == ""
    items = json.loads(result.stdout) if fmt == "json" else [json.loads(line) for line in result.stdout.splitlines()]
    errors = {item["filename"]: item for item in items if item["code"] in ("TFP001", "TFP002")}
    assert set(errors) == set(EXPECTED)
    for name, (row, column, code, message) in EXPECTED.items():
        item = errors[name]
        assert item["code"] == code and item["message"].startswith(message)
        assert item["name"] == {"TFP001": "io-error", "TFP002": "syntax-error"}[code]
        assert item["location"] == item["end_location"] == {"row": row, "column": column}
        assert item["fix"] is None and item["cell"] is None and item["url"].endswith(f"{code}.md")
    assert [item["code"] for item in items if item["filename"] == "bad.py"] == ["TFP101"]


def test_github(project):
    result = check(project, "--output-format", "github")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    for name, (row, column, code, _) in EXPECTED.items():
        (line,) = [line for line in lines if f",file={name}," in line]
        assert line.startswith(f"::error title=tflint-perf ({code}),file={name},line={row},col={column},"), line
    assert any(line.startswith("::warning title=tflint-perf (TFP101),file=bad.py,line=2,col=31") for line in lines)


def test_sarif(project):
    result = check(project, "--output-format", "sarif")
    assert result.returncode == 1
    run = json.loads(result.stdout)["runs"][0]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert rules["TFP001"]["name"] == "io-error" and rules["TFP002"]["name"] == "syntax-error"
    assert rules["TFP002"]["defaultConfiguration"]["level"] == "error"
    found = {}
    for item in run["results"]:
        location = item["locations"][0]["physicalLocation"]
        found[location["artifactLocation"]["uri"]] = (item["ruleId"], item["level"], location["region"])
    for name, (row, column, code, _) in EXPECTED.items():
        rule, level, region = found[name]
        assert (rule, level) == (code, "error")
        assert (region["startLine"], region["startColumn"]) == (row, column)
    assert found["bad.py"][:2] == ("TFP101", "warning")
    for item in run["results"]:
        assert run["tool"]["driver"]["rules"][item["ruleIndex"]]["id"] == item["ruleId"]


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_one_error_alone_exits_1_and_never_passes(project, name):
    result = run_cli("check", "--no-cache", name, cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == "Found 1 error." and "All checks passed!" not in result.stdout
    assert run_cli("check", "--no-cache", "--exit-zero", name, cwd=project).returncode == 0


def test_errors_are_selected_and_ignored_like_any_code(project):
    ignored = check(project, "--ignore", "TFP0")
    assert ignored.returncode == 1 and "TFP00" not in ignored.stdout  # bad.py still has its finding
    assert "nowhere.py: error: no such file or directory" in ignored.stderr  # a missing path is never silent
    alone = run_cli("check", "--no-cache", "--ignore", "TFP001", "nowhere.py", "good.py", cwd=project)
    assert alone.returncode == 1 and "All checks passed!" not in alone.stdout
    only_errors = run_cli("check", "--no-cache", "--select", "TFP002", "syntax.py", "bad.py", cwd=project)
    assert only_errors.stdout.splitlines()[0].startswith("syntax.py:3:1: TFP002")
    assert "TFP101" not in only_errors.stdout and only_errors.returncode == 1
    (project / "pyproject.toml").write_text('[tool.tflint-perf.per-file-ignores]\n"syntax.py" = ["syntax-error"]\n')
    per_file = run_cli("check", "--no-cache", "syntax.py", "good.py", cwd=project)
    assert per_file.returncode == 0 and per_file.stdout == "All checks passed!\n"


def test_noqa_on_the_line_of_a_syntax_error(tmp_path):
    (tmp_path / "old.py").write_text("import tensorflow as tf\nprint 'x'  # noqa: TFP002\n")
    assert run_cli("check", "--no-cache", "old.py", cwd=tmp_path).stdout == "All checks passed!\n"
    (tmp_path / "old.py").write_text("import tensorflow as tf\nprint 'x'  # noqa: TFP101\n")
    assert run_cli("check", "--no-cache", "old.py", cwd=tmp_path).returncode == 1


def test_errors_are_cached_like_findings(project):
    first = run_cli("check", *NAMES, "bad.py", cwd=project)
    second = run_cli("check", *NAMES, "bad.py", cwd=project)
    assert (project / ".tflint_perf_cache").is_dir()
    assert second.stdout == first.stdout and second.returncode == first.returncode == 1
    fixed = run_cli("check", "--fix", *NAMES, "bad.py", cwd=project)
    assert fixed.returncode == 1 and "Found 7 errors (1 fixed, 6 remaining)." in fixed.stdout
    for name, (data, _) in BROKEN.items():
        assert (project / name).read_bytes() == data
    assert run_cli("check", *NAMES, "bad.py", cwd=project).stdout == first.stdout.replace(
        first.stdout.splitlines()[0] + "\n", "").replace("Found 7 errors.\n[*] 1 fixable with --fix.\n", "Found 6 errors.\n")


def test_stdin_syntax_error(tmp_path):
    result = run_cli("check", "--stdin-filename", "train.py", "-", cwd=tmp_path,
                     stdin="import tensorflow as tf\nexcept Exception, e:\n")
    assert result.returncode == 1 and result.stdout.startswith("train.py:2:1: TFP002 SyntaxError: ")
    fixed = run_cli("check", "--fix", "-", cwd=tmp_path, stdin="import tensorflow as tf\nprint 'x'\n")
    assert fixed.returncode == 1 and fixed.stdout == "import tensorflow as tf\nprint 'x'\n"
    assert "-:2:1: TFP002" in fixed.stderr


def test_rule_command_documents_the_error_codes():
    listed = {rule["code"]: rule for rule in json.loads(run_cli("rule", "--all", "--output-format", "json").stdout)}
    assert listed["TFP001"]["name"] == "io-error" and listed["TFP002"]["name"] == "syntax-error"
    assert run_cli("rule", "TFP002").stdout.startswith("# syntax-error (TFP002)")


def test_code_libcst_builds_then_rejects_is_a_syntax_error(tmp_path):
    # LibCST parses `"a" b"b"` and then refuses the node it built (CSTValidationError); Python rejects it
    # too. It is the user's syntax error (TFP002 at Python's place), never an internal error of ours.
    (tmp_path / "mixed.py").write_text('import tensorflow as tf\nx = "a" b"b"\n')
    result = run_cli("check", "--no-cache", "mixed.py", cwd=tmp_path)
    assert result.returncode == 1 and "internal error" not in result.stderr
    assert result.stdout.startswith("mixed.py:2:")  # Python's place (its column differs between versions)
    assert ": TFP002 SyntaxError: cannot mix bytes and nonbytes literals" in result.stdout.splitlines()[0]


# No text found by mutating real files (some 3.4 million mutations) makes LibCST raise anything but
# what text/parsing.py turns into a syntax error, so the parser is made to fail on a marker: in the
# real command line's processes (workers included), through a sitecustomize module on their path.
PARSER_BUG = '''
import libcst

_parse_module = libcst.parse_module


def _failing_on_marker(source, *args, **kwargs):
    if "# parser-bug" in source:
        raise IndexError("a parser bug")
    return _parse_module(source, *args, **kwargs)


libcst.parse_module = _failing_on_marker
'''


def test_a_parser_bug_names_its_file_and_the_other_files_are_still_checked(tmp_path):
    patch = tmp_path / "patch"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(PARSER_BUG)
    (tmp_path / "broken.py").write_text("import tensorflow as tf  # parser-bug\n")
    (tmp_path / "train.py").write_text(BAD)
    result = run_cli("check", "--no-cache", "broken.py", "train.py", cwd=tmp_path,
                     env={"PYTHONPATH": os.pathsep.join([str(patch), str(REPO)])})
    assert result.returncode == 2, result.stderr  # ruff's exit code for an internal error
    assert "broken.py: error: internal error in tflint-perf: IndexError: a parser bug (please report this)" \
        in result.stderr
    assert "Traceback" not in result.stderr
    assert "train.py:2:" in result.stdout  # the file after it is still checked


def test_a_parser_bug_with_only_syntax_errors_selected_names_its_file(tmp_path):
    # No rule runs when only TFP002 is asked for, so the text is parsed outside the engine's handling.
    patch = tmp_path / "patch"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(PARSER_BUG)
    (tmp_path / "broken.py").write_text("import tensorflow as tf  # parser-bug\n")
    (tmp_path / "bad.py").write_text("import tensorflow as tf\ndef f(:\n")
    result = run_cli("check", "--no-cache", "--select", "TFP002", "broken.py", "bad.py", cwd=tmp_path,
                     env={"PYTHONPATH": os.pathsep.join([str(patch), str(REPO)])})
    assert result.returncode == 2, result.stderr
    assert "broken.py: error: internal error in tflint-perf: IndexError: a parser bug (please report this)" \
        in result.stderr
    assert "Traceback" not in result.stderr
    assert "bad.py:2:" in result.stdout  # the file after it is still checked
