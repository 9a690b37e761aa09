"""Hand labels of the real-code check, and how reports are matched to them.

A label file `labels/<CODE>.csv` has the columns
    repo,path,line,cell,code,verdict,reason
`repo` is the tree's directory (`owner+name`), `path` is relative to the tree, `line` is a line or a
range `a-b` (a row of the cell for a notebook), `cell` the notebook cell number as the linter prints
it (`cell 3`: 1-based, markdown cells counted) or empty, `verdict` is `should-flag` or `should-not-flag`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

LABELS_DIR = Path(__file__).resolve().parent / "labels"
FIELDS = ("repo", "path", "line", "cell", "code", "verdict", "reason")
VERDICTS = ("should-flag", "should-not-flag")
SLACK = 1  # a report one line off a label still matches it: where a rule reports a multi-line call is its choice


@dataclass(frozen=True)
class Label:
    repo: str
    path: str
    first: int
    last: int
    cell: Optional[int]
    code: str
    should_flag: bool
    reason: str

    def covers(self, line: int) -> bool:
        return self.first - SLACK <= line <= self.last + SLACK

    def where(self) -> str:
        cell = f":cell {self.cell}" if self.cell is not None else ""
        lines = str(self.first) if self.first == self.last else f"{self.first}-{self.last}"
        return f"{self.repo}/{self.path}{cell}:{lines}"


@dataclass(frozen=True)
class Report:
    repo: str
    path: str
    line: int
    cell: Optional[int]
    code: str
    message: str

    def where(self) -> str:
        cell = f":cell {self.cell}" if self.cell is not None else ""
        return f"{self.repo}/{self.path}{cell}:{self.line}"


def parse_label(row: Dict[str, str], origin: str) -> Label:
    if row["verdict"] not in VERDICTS:
        raise ValueError(f"{origin}: verdict must be one of {VERDICTS}, not {row['verdict']!r}")
    first, _, last = row["line"].partition("-")
    cell = row["cell"].strip()
    return Label(
        repo=row["repo"], path=row["path"], first=int(first), last=int(last or first),
        cell=int(cell) if cell else None, code=row["code"], should_flag=row["verdict"] == "should-flag",
        reason=row["reason"],
    )


def load_labels(directory: Path = LABELS_DIR) -> List[Label]:
    labels = []
    for file in sorted(directory.glob("*.csv")):
        with file.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            if tuple(reader.fieldnames or ()) != FIELDS:
                raise ValueError(f"{file}: header must be {','.join(FIELDS)}")
            for number, row in enumerate(reader, start=2):
                labels.append(parse_label(row, f"{file.name}:{number}"))
    return labels


Key = Tuple[str, str, Optional[int], str]


def _key(item) -> Key:
    return (item.repo, item.path, item.cell, item.code)


def match(reports: Iterable[Report], labels: Iterable[Label]) -> Tuple[List[Tuple[Report, Label]], List[Report], List[Label]]:
    """Pair each report with the label that covers it; the unlabelled reports; the labels nothing reported.

    A label is matched by at most one report (the nearest), so one site reported twice counts one true
    positive and leaves the other report unlabelled. Every report counts, identical ones too (same
    rule, file, line and message: two calls on one line): they are paired as a list, not keyed.
    """
    by_key: Dict[Key, List[Label]] = {}
    for label in labels:
        by_key.setdefault(_key(label), []).append(label)
    matched: List[Tuple[Report, Label]] = []
    taken = set()
    unlabelled = []
    for report in sorted(reports, key=lambda r: (r.repo, r.path, r.cell or 0, r.line, r.code)):
        candidates = [
            label for label in by_key.get(_key(report), ())
            if label.covers(report.line) and id(label) not in taken
        ]
        if not candidates:
            unlabelled.append(report)
            continue
        best = min(candidates, key=lambda label: (not (label.first <= report.line <= label.last), abs(label.first - report.line)))
        taken.add(id(best))
        matched.append((report, best))
    missed = [label for labels_ in by_key.values() for label in labels_ if id(label) not in taken]
    return matched, unlabelled, missed


@dataclass
class Score:
    code: str
    reports: int = 0
    labelled: int = 0
    true_positives: int = 0
    false_positives: int = 0
    false_negatives: int = 0
    true_negatives: int = 0

    @property
    def precision(self) -> Optional[float]:
        return self.true_positives / self.labelled if self.labelled else None

    @property
    def recall(self) -> Optional[float]:
        flagged = self.true_positives + self.false_negatives
        return self.true_positives / flagged if flagged else None


def score(reports: List[Report], labels: List[Label]
          ) -> Tuple[Dict[str, Score], List[Tuple[Report, Label]], List[Report], List[Label]]:
    matched, unlabelled, unreported = match(reports, labels)
    scores: Dict[str, Score] = {}

    def of(code: str) -> Score:
        return scores.setdefault(code, Score(code))

    for report in reports:
        of(report.code).reports += 1
    for report, label in matched:
        entry = of(label.code)
        entry.labelled += 1
        if label.should_flag:
            entry.true_positives += 1
        else:
            entry.false_positives += 1
    for label in unreported:
        if label.should_flag:
            of(label.code).false_negatives += 1
        else:
            of(label.code).true_negatives += 1
    return scores, matched, unlabelled, unreported
