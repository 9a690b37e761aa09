"""The CI face: the GitHub Action's steps run as written, SARIF against the 2.1.0 schema, the gitlab
and junit reports against their formats, and the CLI's edges (a file named twice, no files at all)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Dict, List
from xml.etree import ElementTree

import jsonschema
import pytest
import yaml

from tests.conftest import REPO, run_cli

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
SARIF_SCHEMA = json.loads((REPO / "tests" / "schemas" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
NOTEBOOKS = REPO / "tests" / "notebooks"

BAD = "import tensorflow as tf\nds = tf.data.Dataset.range(8).batch(2)\nmodel.fit(ds)\n"
TWICE = BAD + "ds = tf.data.Dataset.range(8).batch(2)\nmodel.fit(ds)\n"  # two findings on identical lines
BROKEN = "import tensorflow as tf\ndef f(:\n"


def validate_sarif(document: dict) -> None:
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(document)  # the schema declares draft 4


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(TWICE)
    (tmp_path / "broken.py").write_text(BROKEN)
    shutil.copy(NOTEBOOKS / "colab_style.ipynb", tmp_path / "colab_style.ipynb")
    return tmp_path


# -- the action ------------------------------------------------------------------------------------
EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


def expressions(step: dict) -> List[str]:
    return EXPRESSION.findall(json.dumps(step))


def test_action_declares_every_input_its_steps_use_and_uses_every_input():
    assert ACTION["runs"]["using"] == "composite"
    declared = set(ACTION["inputs"])
    used = {name.split(".", 1)[1] for step in ACTION["runs"]["steps"] for name in expressions(step)
            if name.startswith("inputs.")}
    assert used == declared == {"version", "paths", "args", "fix", "sarif-file"}
    for step in ACTION["runs"]["steps"]:
        assert step["shell"] == "bash"  # the one shell on every runner, Windows included
        for variable, value in step.get("env", {}).items():  # INPUT_<NAME>, a name bash passes on
            (name,) = EXPRESSION.findall(value)
            assert variable == "INPUT_" + name.split(".", 1)[1].replace("-", "_").upper()
    for name, spec in ACTION["inputs"].items():
        assert spec["description"] and "default" in spec, name


def run_steps(project: Path, inputs: Dict[str, str], summary: Path, skip=("install",)) -> subprocess.CompletedProcess:
    """The action's steps as a runner runs them: each step's ``run`` in bash, in the workspace, with
    its ``env`` (the inputs substituted, their defaults where not given) and the variables GitHub
    sets. ``python`` is this interpreter, with this checkout importable (as after the install step)."""
    given = {name: inputs.get(name, spec["default"]) for name, spec in ACTION["inputs"].items()}
    bin_dir = project.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO),
           "NO_COLOR": "1", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(project),
           "GITHUB_ACTION_PATH": str(REPO), "GITHUB_STEP_SUMMARY": str(summary)}

    def substitute(text: str) -> str:
        return EXPRESSION.sub(lambda m: given[m.group(1).split(".", 1)[1]], text)

    outputs, code = [], 0
    for step in ACTION["runs"]["steps"]:
        if step["id"] in skip:
            continue
        step_env = {**env, **{k: substitute(v) for k, v in step.get("env", {}).items()}}
        done = subprocess.run(["bash", "-e", "-c", substitute(step["run"])], cwd=project, env=step_env,
                              capture_output=True, text=True)
        outputs.append(done)
        code = done.returncode
        if code:
            break
    return subprocess.CompletedProcess(["action"], code, "".join(o.stdout for o in outputs),
                                       "".join(o.stderr for o in outputs))


def test_the_action_annotates_findings_writes_schema_valid_sarif_and_exits_as_tflint_perf(project, tmp_path):
    summary = tmp_path / "summary.md"
    done = run_steps(project, {"sarif-file": "results.sarif", "paths": "src broken.py colab_style.ipynb"}, summary)
    assert done.returncode == 1, done.stderr
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 4, done.stdout
    warnings = [a for a in annotations if a.startswith("::warning ")]
    assert [re.search(r"file=([^,]+),line=(\d+)", a).groups() for a in warnings] == [
        ("colab_style.ipynb", re.search(r"file=colab_style.ipynb,line=(\d+)", warnings[0]).group(1)),
        ("src/train.py", "2"), ("src/train.py", "4")]
    (error,) = [a for a in annotations if a.startswith("::error ")]
    assert "file=broken.py,line=2," in error and "TFP002" in error
    sarif = json.loads((project / "results.sarif").read_text(encoding="utf-8"))
    validate_sarif(sarif)
    results = sarif["runs"][0]["results"]
    assert sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results) == [
        ("TFP002", "broken.py"), ("TFP101", "colab_style.ipynb"), ("TFP101", "src/train.py"), ("TFP101", "src/train.py")]
    assert not summary.exists()  # no fix input: no summary


def test_the_action_exits_0_on_a_clean_project_and_shows_fixes_in_the_summary(project, tmp_path):
    summary = tmp_path / "summary.md"
    clean = run_steps(project, {"paths": "src", "args": "--select TFP2"}, summary)
    assert clean.returncode == 0 and "::" not in clean.stdout
    fixing = run_steps(project, {"paths": "src", "fix": "true"}, summary)
    assert fixing.returncode == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## tflint-perf fixes") and "```diff" in text
    assert "+ds = tf.data.Dataset.range(8).batch(2).prefetch(tf.data.AUTOTUNE)" in text
    assert (project / "src" / "train.py").read_text() == TWICE  # shown, not written


def test_the_install_step_installs_the_actions_own_checkout_unless_a_version_is_given(monkeypatch):
    spec = importlib.util.spec_from_file_location("action_run", REPO / ".github" / "action" / "run.py")
    action = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(action)
    monkeypatch.setenv("GITHUB_ACTION_PATH", "/actions/tflint-perf")
    for version, requirement in [("", "/actions/tflint-perf"), ("0.4.0", "tflint-perf==0.4.0"),
                                 ("tflint-perf>=0.4", "tflint-perf>=0.4"),
                                 ("git+https://example.org/tflint-perf@main", "git+https://example.org/tflint-perf@main")]:
        monkeypatch.setenv("INPUT_VERSION", version)
        assert action.requirement() == requirement
    install = next(step for step in ACTION["runs"]["steps"] if step["id"] == "install")
    assert install["run"].endswith(".github/action/run.py\" install")


# -- gitlab ----------------------------------------------------------------------------------------
def gitlab_report(cwd: Path, *paths: str) -> List[dict]:
    done = run_cli("check", "--no-cache", "--output-format", "gitlab", *paths, cwd=cwd)
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)


def test_gitlab_report_has_the_fields_gitlab_reads(project):
    issues = gitlab_report(project, "src", "broken.py")
    assert len(issues) == 3
    for issue in issues:
        assert isinstance(issue["description"], str) and issue["description"].startswith(issue["check_name"] + ": ")
        assert re.fullmatch(r"TFP\d{3}", issue["check_name"])
        assert re.fullmatch(r"[0-9a-f]{32}", issue["fingerprint"])
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert isinstance(issue["location"]["path"], str) and type(issue["location"]["lines"]["begin"]) is int
    assert [(i["location"]["path"], i["location"]["lines"]["begin"], i["severity"]) for i in issues] == [
        ("broken.py", 2, "major"), ("src/train.py", 2, "minor"), ("src/train.py", 4, "minor")]
    assert len({i["fingerprint"] for i in issues}) == 3  # identical lines stay apart


def test_gitlab_fingerprints_survive_runs_and_inserted_lines(project):
    before = [i["fingerprint"] for i in gitlab_report(project, "src")]
    assert before == [i["fingerprint"] for i in gitlab_report(project, "src")]
    train = project / "src" / "train.py"
    train.write_text("# a comment above\n\n" + TWICE)
    after = gitlab_report(project, "src")
    assert [i["location"]["lines"]["begin"] for i in after] == [4, 6]
    assert [i["fingerprint"] for i in after] == before
    train.write_text(TWICE.replace("batch(2)\nmodel", "batch(3)\nmodel", 1))  # the first flagged line changed
    changed = [i["fingerprint"] for i in gitlab_report(project, "src")]
    assert changed[0] not in before


def test_sarif_fingerprints_follow_the_code_not_the_line(project):
    def hashes() -> List[str]:
        document = json.loads(run_cli("check", "--no-cache", "--output-format", "sarif", "src", cwd=project).stdout)
        validate_sarif(document)
        return [r["partialFingerprints"]["primaryLocationLineHash"] for r in document["runs"][0]["results"]]

    before = hashes()
    assert [h.split(":")[1] for h in before] == ["1", "2"] and len(set(h.split(":")[0] for h in before)) == 1
    (project / "src" / "train.py").write_text("\n\n\n" + TWICE)
    assert hashes() == before


# -- junit -----------------------------------------------------------------------------------------
def test_junit_has_a_testsuite_per_file_and_a_failure_per_finding(project):
    done = run_cli("check", "--output-format", "junit", "src", "broken.py", "colab_style.ipynb", cwd=project)
    assert done.returncode == 1 and done.stdout.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ElementTree.fromstring(done.stdout)
    assert root.tag == "testsuites" and root.get("tests") == root.get("failures") == "4"
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert list(suites) == ["broken.py", "colab_style.ipynb", "src/train.py"]
    train = suites["src/train.py"]
    assert train.get("tests") == train.get("failures") == "2"
    cases = train.findall("testcase")
    assert [(c.get("name"), c.get("classname"), c.get("line"), c.get("column")) for c in cases] == [
        ("tflint-perf.TFP101", "src/train", "2", "31"), ("tflint-perf.TFP101", "src/train", "4", "31")]
    failure = cases[0].find("failure")
    assert failure.get("type") == "TFP101" and failure.text == f"line 2, col 31, {failure.get('message')}"
    assert suites["broken.py"].find("testcase/properties/property").get("value") == "error"
    # A notebook finding: on its line of the .ipynb, as in github's annotations; the cell in the text.
    github = run_cli("check", "--output-format", "github", "colab_style.ipynb", cwd=project).stdout
    line, column = re.search(r"file=colab_style.ipynb,line=(\d+),col=(\d+)", github).groups()
    notebook_case = suites["colab_style.ipynb"].find("testcase")
    assert (notebook_case.get("line"), notebook_case.get("column")) == (line, column)
    assert notebook_case.find("failure").text.startswith("cell 2, line 1, col 25, ")
    (issue,) = gitlab_report(project, "colab_style.ipynb")
    assert issue["location"]["lines"]["begin"] == int(line) and "(cell 2, line 1, col 25)" in issue["description"]


def test_junit_of_a_clean_run_is_one_passing_testcase(project):
    done = run_cli("check", "--output-format", "junit", "--select", "TFP2", "src", cwd=project)
    assert done.returncode == 0
    root = ElementTree.fromstring(done.stdout)
    assert root.get("tests") == "1" and root.get("failures") == "0"
    (case,) = root.iter("testcase")
    assert case.find("failure") is None


# -- edges of the command line -----------------------------------------------------------------------
def finding_places(done: subprocess.CompletedProcess) -> List[str]:
    return [line.split(": ")[0] for line in done.stdout.splitlines() if ": TFP" in line]


def test_a_file_named_twice_is_checked_and_reported_once(project):
    (project / "link.py").symlink_to(project / "src" / "train.py")
    for spelling in (["src/train.py", "src/train.py"], ["src", "src/train.py"], ["./src/train.py", "src"],
                     ["src/train.py", "link.py"], ["src/../src/train.py", "src/train.py"]):
        done = run_cli("check", "--no-cache", *spelling, cwd=project)
        assert len(finding_places(done)) == 2 and "Found 2 errors." in done.stdout, (spelling, done.stdout)
    assert finding_places(run_cli("check", "src/train.py", "src/train.py", cwd=project)) == ["src/train.py:2:31",
                                                                                            "src/train.py:4:31"]
    fixed = run_cli("check", "--fix", "src/train.py", "src", "./src/train.py", cwd=project)
    assert "Found 2 errors (2 fixed, 0 remaining)." in fixed.stdout, fixed.stdout


def test_paths_without_python_files_warn_and_exit_0(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no code here\n")
    done = run_cli("check", "empty", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stderr == "warning: No Python files found under the given path(s)\n"
    assert run_cli("check", "-q", "empty", cwd=tmp_path).stderr == ""
    missing = run_cli("check", "missing.py", cwd=tmp_path)  # a missing path is an error, not "no files"
    assert missing.returncode == 1 and "No Python files" not in missing.stderr


# -- the results cache carried between CI runs -------------------------------------------------------
def test_a_wheel_install_keys_the_cache_by_its_record_not_the_install_time(tmp_path, monkeypatch):
    """Each CI run installs tflint-perf afresh, with new modification times: a results cache carried
    between runs (docs/ci.md) hits only because an install from the same wheel has the same digest."""
    import tflint_perf
    from tflint_perf.checking import cache as cache_module

    def install(site: Path, record: str) -> Path:
        (site / "tflint_perf" / "rules").mkdir(parents=True)
        (site / "tflint_perf" / "__init__.py").write_text("")
        (site / "tflint_perf" / "rules" / "tfp999.py").write_text("RULE = 1\n")
        (site / f"tflint_perf-{tflint_perf.__version__}.dist-info").mkdir()
        (site / f"tflint_perf-{tflint_perf.__version__}.dist-info" / "RECORD").write_text(record)
        return site / "tflint_perf" / "__init__.py"

    def digest(init: Path, touched: int = 0) -> str:
        for source in init.parent.rglob("*.py"):
            os.utime(source, (1_600_000_000 + touched, 1_600_000_000 + touched))
        monkeypatch.setattr(tflint_perf, "__file__", str(init))
        cache_module.code_digest.cache_clear()
        return cache_module.code_digest()

    wheel = "tflint_perf/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
    first = install(tmp_path / "run1", wheel)
    second = install(tmp_path / "run2", wheel)
    assert digest(first) == digest(second, touched=60)  # the same build, installed a minute later
    other = install(tmp_path / "other", wheel.replace("47DEQ", "58EFR"))  # another build
    assert digest(other) != digest(first)
    editable = install(tmp_path / "editable", "__editable__.tflint_perf-0.1.0.pth,sha256=x,10\n")
    assert digest(editable) != digest(editable, touched=60)  # a checkout: its sources' stat, as before
    cache_module.code_digest.cache_clear()
