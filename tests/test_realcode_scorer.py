"""The real-code scorer's matching and figures, on labels and reports written here (CI cannot fetch trees)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "realcode"))

from labels import FIELDS, Report, load_labels, match, score  # noqa: E402
from manifest import load_manifest  # noqa: E402
from agreement import agreement, as_reports, paired_sites  # noqa: E402

LABELS = """\
repo,path,line,cell,code,verdict,reason
a+b,train.py,10,,TFP101,should-flag,training pipeline without prefetch
a+b,train.py,20-22,,TFP102,should-not-flag,adapt-only projection map
a+b,nb.ipynb,3,4,TFP101,should-flag,fit in a notebook cell
a+b,eval.py,7,,TFP101,should-flag,missed by the linter
a+b,other.py,5,,TFP104,should-not-flag,never reported: a true negative
"""


@pytest.fixture
def labels(tmp_path):
    (tmp_path / "TFP.csv").write_text(LABELS, encoding="utf-8")
    return load_labels(tmp_path)


def test_reports_match_labels_by_tree_path_cell_code_and_line_range(labels):
    reports = [
        Report("a+b", "train.py", 11, None, "TFP101", "m"),  # one line off the label: still the site
        Report("a+b", "train.py", 21, None, "TFP102", "m"),
        Report("a+b", "nb.ipynb", 3, 4, "TFP101", "m"),
        Report("a+b", "nb.ipynb", 3, 5, "TFP101", "m"),  # another cell: not the labelled site
        Report("a+b", "train.py", 40, None, "TFP101", "m"),
    ]
    matched, unlabelled, unreported = match(reports, labels)
    assert {report.line for report, _ in matched} == {11, 21, 3}
    assert [(report.cell, report.line) for report in unlabelled] == [(5, 3), (None, 40)]
    assert {label.path for label in unreported} == {"eval.py", "other.py"}


def test_a_label_counts_once_when_a_site_is_reported_twice(labels):
    reports = [Report("a+b", "train.py", 10, None, "TFP101", "m"), Report("a+b", "train.py", 11, None, "TFP101", "m")]
    matched, unlabelled, _ = match(reports, labels)
    assert len(matched) == 1 and len(unlabelled) == 1


def test_identical_reports_each_count_and_each_takes_a_label_of_its_own(tmp_path):
    # Two calls on one line, one under each of two labels a line apart: the same rule, file, line and
    # message twice. Each report counts; the second takes the other label, not the first's.
    (tmp_path / "TFP.csv").write_text(
        "repo,path,line,cell,code,verdict,reason\n"
        "a+b,train.py,10,,TFP101,should-flag,the first call\n"
        "a+b,train.py,11,,TFP101,should-flag,the second call\n"
        "a+b,train.py,30,,TFP102,should-not-flag,one site reported twice\n",
        encoding="utf-8")
    twice = Report("a+b", "train.py", 10, None, "TFP101", "m")
    once_more = Report("a+b", "train.py", 30, None, "TFP102", "m")
    scores, matched, unlabelled, unreported = score([twice, twice, once_more, once_more], load_labels(tmp_path))
    assert (scores["TFP101"].reports, scores["TFP101"].true_positives, scores["TFP101"].false_negatives) == (2, 2, 0)
    assert (scores["TFP102"].reports, scores["TFP102"].false_positives) == (2, 1) and unlabelled == [once_more]
    assert len(matched) == 3 and unreported == []


def test_precision_and_recall_per_rule(labels):
    reports = [
        Report("a+b", "train.py", 10, None, "TFP101", "m"),
        Report("a+b", "nb.ipynb", 3, 4, "TFP101", "m"),
        Report("a+b", "train.py", 20, None, "TFP102", "m"),
    ]
    scores, *_ = score(reports, labels)
    assert (scores["TFP101"].true_positives, scores["TFP101"].false_negatives) == (2, 1)
    assert scores["TFP101"].precision == 1.0 and scores["TFP101"].recall == pytest.approx(2 / 3)
    assert scores["TFP102"].precision == 0.0 and scores["TFP102"].recall is None
    assert scores["TFP104"].true_negatives == 1 and scores["TFP104"].labelled == 0


def test_a_bad_verdict_or_header_is_an_error(tmp_path):
    (tmp_path / "bad.csv").write_text(LABELS.replace("should-not-flag,adapt", "maybe,adapt"), encoding="utf-8")
    with pytest.raises(ValueError, match="verdict"):
        load_labels(tmp_path)
    (tmp_path / "bad.csv").write_text("repo,path\n", encoding="utf-8")
    with pytest.raises(ValueError, match="header"):
        load_labels(tmp_path)


def test_the_shipped_labels_and_manifest_are_well_formed():
    labels = load_labels()
    trees = {repo.tree_name for repo in load_manifest()}
    assert all(label.repo in trees for label in labels)
    assert all(label.first <= label.last and label.reason.strip() for label in labels)
    assert FIELDS[0] == "repo"


SECOND = """\
repo,path,line,cell,code,verdict,reason
a+b,train.py,11,,TFP101,should-flag,the same site one line off: paired
a+b,train.py,20-22,,TFP102,should-flag,judgement call: the second labeller would parallelise it
a+b,nb.ipynb,3,4,TFP101,should-flag,fit in a notebook cell
a+b,eval.py,7,,TFP101,should-not-flag,evaluation once after training
a+b,other.py,5,,TFP104,should-not-flag,agreed true negative
a+b,new.py,9,,TFP101,should-flag,a site only the second labeller found
"""


@pytest.fixture
def second(tmp_path):
    (tmp_path / "second").mkdir()
    (tmp_path / "second" / "TFP.csv").write_text(SECOND, encoding="utf-8")
    return load_labels(tmp_path / "second")


def test_two_labellings_pair_by_site_and_count_agreement_and_kappa(labels, second):
    pairs = paired_sites(labels, second)
    assert [(a.path, b.first) for a, b in pairs] == [
        ("train.py", 11), ("train.py", 20), ("nb.ipynb", 3), ("eval.py", 7), ("other.py", 5)]
    both = agreement(pairs)
    assert (both.counts[True, True], both.counts[False, False], both.counts[True, False], both.counts[False, True]) \
        == (2, 1, 1, 1)
    assert both.observed == pytest.approx(3 / 5)
    # Flag rates 3/5 and 3/5: chance agreement 0.52, so kappa = (0.6 - 0.52) / 0.48.
    assert both.kappa == pytest.approx((0.6 - 0.52) / 0.48)


def test_a_labellers_flags_scored_against_the_other_labelling(labels, second):
    scores = score(as_reports(second), labels)[0]
    assert (scores["TFP101"].true_positives, scores["TFP101"].false_positives, scores["TFP101"].false_negatives) \
        == (2, 0, 1)  # train.py and nb.ipynb agreed; eval.py missed; new.py unlabelled by the first
    assert (scores["TFP102"].true_positives, scores["TFP102"].false_positives) == (0, 1)


def test_the_shipped_second_labels_are_well_formed_and_cover_labelled_trees():
    root = Path(__file__).resolve().parents[1] / "benchmarks" / "realcode"
    second = load_labels(root / "second_labels")
    first_repos = {label.repo for label in load_labels(root / "labels")}
    assert second and {label.repo for label in second} <= first_repos
