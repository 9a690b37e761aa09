from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

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
