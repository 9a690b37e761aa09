from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst
import pytest

from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.checking.config import Settings
from tflint_perf.checking.engine import check_text
from tflint_perf.fixes.fixer import fix_text

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
UPDATE_SNAPSHOTS = os.environ.get("TFLINT_PERF_UPDATE_SNAPSHOTS") == "1"


def lint(source: str, codes: Optional[List[str]] = None, settings: Optional[Settings] = None, filename: str = "example.py"):
    """Diagnostics from the real engine for a source text."""
    return check_text(source, filename, settings or Settings(), set(codes) if codes else None)


def fix(source: str, codes: Optional[List[str]] = None, unsafe: bool = False, settings: Optional[Settings] = None) -> str:
    selected = set(codes) if codes else None
    outcome = fix_text(source, lambda text: check_text(text, "example.py", settings or Settings(), selected), unsafe)
    return outcome.text


def run_cli(*args: str, cwd: Optional[Path] = None, stdin: Optional[str] = None,
            env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    """The real command line, in a subprocess (colour off unless ``env`` says otherwise)."""
    return subprocess.run(
        [sys.executable, "-m", "tflint_perf", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO), **(env or {})},
    )


def write_project(tmp_path: Path, files: Dict[str, str]) -> Path:
    """A project of the given modules, marked by an empty ``pyproject.toml``."""
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def project_findings(root: Path, code: str) -> Set[Tuple[str, int]]:
    """(file name, row) of each ``code`` finding the real command line reports on the project at ``root``."""
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", code, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return {(Path(d["filename"]).name, d["location"]["row"]) for d in json.loads(result.stdout)}


def model_of(source: str) -> AnalysedModule:
    """The analysed module of ``source`` (the analysis layer's tests query it directly)."""
    return AnalysedModule(cst.parse_module(source))


def site_named(model: AnalysedModule, text: str):
    """The call site whose code is ``text``."""
    for site in model.calls:
        if model.module.code_for_node(site.node) == text:
            return site
    raise AssertionError(text)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="module")
def tensorflow():
    """TensorFlow for the harness tests (marked ``tensorflow``); skipped where it is not installed."""
    return pytest.importorskip("tensorflow")


def verify(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The real ``tflint-perf verify`` command."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "3"}
    return subprocess.run([sys.executable, "-m", "tflint_perf", "verify", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=600)


def records(stdout: str) -> List[dict]:
    """``verify --json``'s records, one per line."""
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: runs the linter over installed packages' sources (deselect with -m 'not slow')")
