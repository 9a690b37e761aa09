"""The fix-history check's own logic: its toml, matching a report to the expected site, the verdicts, the
manifest's restricted trees (no network, no mirrors: CI cannot fetch)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "realcode"))

from fix_history import FIX_HISTORY, load_fixes, reported, table, verdict  # noqa: E402
from labels import Report  # noqa: E402
from manifest import load_manifest  # noqa: E402

ENTRIES = """\
[[fix]]
repo = "a/b"
fix = "1111111111111111111111111111111111111111"
parent = "2222222222222222222222222222222222222222"
path = "data/input.py"
line = 40
code = "TFP102"
why = "sequential parse map"
source = "https://example.org/a/b/issues/1"

[[fix]]
repo = "a/b"
fix = "3333333333333333333333333333333333333333"
parent = "4444444444444444444444444444444444444444"
path = "data/input.py"
line = 10
fixed_line = 11
code = "TFP101"
why = "no prefetch"
paths = ["data"]
"""


@pytest.fixture
def fixes(tmp_path):
    path = tmp_path / "fix_history.toml"
    path.write_text(ENTRIES, encoding="utf-8")
    return load_fixes(path)


def test_entries_are_read_with_their_defaults(fixes):
    first, second = fixes
    assert (first.mirror_name, first.line, first.fixed_line, first.paths) == ("a+b", 40, 40, ())
    assert (second.fixed_line, second.paths, second.source) == (11, ("data",), "")


def test_an_entry_without_its_site_is_refused(tmp_path):
    path = tmp_path / "fix_history.toml"
    path.write_text(ENTRIES.replace('line = 40\n', ''), encoding="utf-8")
    with pytest.raises(ValueError, match="entry 1 lacks line"):
        load_fixes(path)


def test_a_report_matches_the_site_by_path_code_and_line_give_or_take_one(fixes):
    fix = fixes[0]
    assert reported(fix, [Report("a+b", "data/input.py", 41, None, "TFP102", "m")], fixed=False)
    assert not reported(fix, [Report("a+b", "data/input.py", 42, None, "TFP102", "m")], fixed=False)
    assert not reported(fix, [Report("a+b", "data/input.py", 40, None, "TFP101", "m")], fixed=False)
    assert not reported(fix, [Report("a+b", "other.py", 40, None, "TFP102", "m")], fixed=False)


def test_after_the_fix_the_site_is_looked_for_at_its_fixed_line(fixes):
    fix = fixes[1]
    moved = [Report("a+b", "data/input.py", 12, None, "TFP101", "m")]
    assert reported(fix, moved, fixed=True) and not reported(fix, moved, fixed=False)


def test_verdicts_and_the_table():
    assert [verdict(True, False), verdict(False, False), verdict(True, True), verdict(False, True)] == [
        "ok", "missed", "still reported", "reported only after"]


def test_table_counts_the_entries_that_pass(fixes):
    text = table([(fixes[0], "ok"), (fixes[1], "missed")])
    assert "data/input.py:40" in text and text.endswith("1 of 2 reported before the fix and silent after it")


def test_the_shipped_fix_history_is_well_formed():
    fixes = load_fixes(FIX_HISTORY)
    assert len(fixes) >= 8
    for fix in fixes:
        assert len(fix.fix) == len(fix.parent) == 40 and fix.fix != fix.parent
        assert fix.code.startswith("TFP") and fix.why


def test_manifest_entries_from_one_repository_need_their_own_tree_names(tmp_path):
    path = tmp_path / "manifest.toml"
    entry = '[[repo]]\nname = "a/b"\ncommit = "{}"\n'
    path.write_text(entry.format("1" * 40) + entry.format("2" * 40), encoding="utf-8")
    with pytest.raises(ValueError, match="a\\+b"):
        load_manifest(path)
    path.write_text(entry.format("1" * 40) + entry.format("2" * 40) + 'tree = "a+b-ssd"\npaths = ["ssd"]\n',
                    encoding="utf-8")
    first, second = load_manifest(path)
    assert (first.tree_name, first.paths) == ("a+b", ())
    assert (second.tree_name, second.mirror_name, second.paths) == ("a+b-ssd", "a+b", ("ssd",))


def test_materialise_keeps_only_the_entrys_paths_of_a_local_repository(tmp_path):
    import subprocess

    from materialise import materialise, mirror_git_dir

    work = tmp_path / "mirrors" / "a+b" / "repo"
    for name in ("ssd/model.py", "ssd/README.md", "tf2/train.py"):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("x = 1\n", encoding="utf-8")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "c"], check=True)
    git_dir = mirror_git_dir(tmp_path / "mirrors", "a+b")
    assert git_dir == work / ".git"
    written, missing = materialise(git_dir, "HEAD", tmp_path / "out", ("ssd",))
    assert (written, missing) == (1, 0)
    written_files = [p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert written_files == ["ssd/model.py"]
