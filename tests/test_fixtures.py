"""Whole-file snapshots: each ``fixtures/*.py`` against ``fixtures/expected/<name>.txt``.

Set TFLINT_PERF_UPDATE_SNAPSHOTS=1 to rewrite the expected files after a deliberate change, then
review the diff.
"""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, UPDATE_SNAPSHOTS, lint

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
