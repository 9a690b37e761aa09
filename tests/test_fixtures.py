"""Whole-file snapshots: each ``fixtures/*.py`` against ``fixtures/expected/<name>.txt``.

Set TFLINT_PERF_UPDATE_SNAPSHOTS=1 to rewrite the expected files after a deliberate change, then
review the diff.
"""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, UPDATE_SNAPSHOTS, fix, lint
from tflint_perf.text.parsing import parse

SCRIPTS = sorted(FIXTURES.glob("*.py"))


def render(path) -> str:
    diagnostics = lint(path.read_text(encoding="utf-8"), filename=path.name)
    return "".join(f"{d.location.row}:{d.location.column}: {d.code} {d.name}\n" for d in diagnostics)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_fixture_findings_match_snapshot(path):
    expected_file = FIXTURES / "expected" / (path.stem + ".txt")
    actual = render(path)
    if UPDATE_SNAPSHOTS:
        expected_file.parent.mkdir(exist_ok=True)
        expected_file.write_text(actual, encoding="utf-8")
    assert expected_file.exists(), f"missing snapshot {expected_file}"
    assert actual == expected_file.read_text(encoding="utf-8")


FIXED_SNAPSHOTS = FIXTURES.parent / "tests" / "snapshots" / "fixed"


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_fixture_fixes_match_snapshot_reparse_and_are_idempotent(path):
    """``fixtures/X.py`` (the .in) fixed with --unsafe-fixes equals ``tests/snapshots/fixed/X.py`` (the .out)."""
    source = path.read_text(encoding="utf-8")
    fixed = fix(source, unsafe=True)
    expected_file = FIXED_SNAPSHOTS / path.name
    if UPDATE_SNAPSHOTS:
        expected_file.parent.mkdir(parents=True, exist_ok=True)
        expected_file.write_text(fixed, encoding="utf-8")
    assert expected_file.exists(), f"missing snapshot {expected_file}"
    assert fixed == expected_file.read_text(encoding="utf-8")
    parse(fixed)
    compile(fixed, str(path), "exec")
    assert fix(fixed, unsafe=True) == fixed
