"""How far two labellers who judge the same trees apart agree: the ceiling any linter's figures reach.

    python benchmarks/realcode/agreement.py [--second second_labels] [--linter --trees .realcode/trees]

`second_labels/` holds a second, blind labelling of some trees (`README.md`, "How reliable the labels
are"): the second labeller was given the first labeller's sites without their verdicts, every report
of the linter, and the same instructions. This prints, on the trees the second labelling covers:
- site by site, how often the two verdicts agree (and Cohen's kappa, which discounts chance), apart
  for the sites the first labeller marked "judgement call";
- each labeller's should-flag sites scored as if they were a linter's reports against the other's
  labels: a linter that judged exactly as one careful labeller would get these figures from the other;
- with `--linter`, this checkout's linter scored against each labelling (it runs the linter on the trees).
Tables only: no site is printed, so held-out trees stay held out.
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

from labels import LABELS_DIR, SLACK, Label, Report, Score, load_labels, score
from manifest import DEFAULT_TREES

SECOND_DIR = Path(__file__).resolve().parent / "second_labels"
JUDGEMENT_CALL = "judgement call"


@dataclass
class Agreement:
    """The verdicts of the sites both labellers judged, counted by (first says flag, second says flag)."""

    counts: Counter

    @property
    def sites(self) -> int:
        return sum(self.counts.values())

    @property
    def observed(self) -> Optional[float]:
        return (self.counts[True, True] + self.counts[False, False]) / self.sites if self.sites else None

    @property
    def kappa(self) -> Optional[float]:
        """Cohen's kappa: the agreement beyond what two labellers flagging at their own rates reach by chance."""
        if not self.sites:
            return None
        first = (self.counts[True, True] + self.counts[True, False]) / self.sites
        second = (self.counts[True, True] + self.counts[False, True]) / self.sites
        chance = first * second + (1 - first) * (1 - second)
        return 1.0 if chance == 1 else (self.observed - chance) / (1 - chance)


def paired_sites(first: Iterable[Label], second: Iterable[Label]) -> List[Tuple[Label, Label]]:
    """Each first label with the second label of the same tree, file, cell and rule whose lines are
    nearest, within the scorer's slack (each second label used once)."""
    by_key: Dict[tuple, List[Label]] = {}
    for label in second:
        by_key.setdefault((label.repo, label.path, label.cell, label.code), []).append(label)
    pairs, taken = [], set()
    for label in first:
        candidates = [
            other for other in by_key.get((label.repo, label.path, label.cell, label.code), ())
            if id(other) not in taken and other.first <= label.last + SLACK and label.first <= other.last + SLACK
        ]
        if candidates:
            nearest = min(candidates, key=lambda other: abs(other.first - label.first))
            taken.add(id(nearest))
            pairs.append((label, nearest))
    return pairs


def agreement(pairs: Iterable[Tuple[Label, Label]]) -> Agreement:
    return Agreement(Counter((first.should_flag, second.should_flag) for first, second in pairs))


def as_reports(labels: Iterable[Label]) -> List[Report]:
    """A labeller's should-flag sites, as the reports of a linter that judged exactly as they did."""
    return [Report(label.repo, label.path, label.first, label.cell, label.code, "") for label in labels if label.should_flag]


def totals(scores: Dict[str, Score]) -> Score:
    total = Score("all")
    for entry in scores.values():
        total.true_positives += entry.true_positives
        total.false_positives += entry.false_positives
        total.false_negatives += entry.false_negatives
        total.labelled += entry.true_positives + entry.false_positives
    return total


def _figure(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


def _table(title: str, scores: Dict[str, Score]) -> None:
    print(f"\n{title}\nrule      TP   FP   FN precision recall")
    rows = [entry for _, entry in sorted(scores.items()) if entry.true_positives + entry.false_positives + entry.false_negatives]
    for entry in [*rows, totals(scores)]:
        print(f"{entry.code:8s} {entry.true_positives:4d} {entry.false_positives:4d} {entry.false_negatives:4d} "
              f"{_figure(entry.precision):>9s} {_figure(entry.recall):>6s}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", type=Path, default=LABELS_DIR)
    parser.add_argument("--second", type=Path, default=SECOND_DIR)
    parser.add_argument("--linter", action="store_true", help="also score this checkout's linter against each labelling")
    parser.add_argument("--trees", type=Path, default=DEFAULT_TREES)
    args = parser.parse_args()

    second = load_labels(args.second)
    repos = sorted({label.repo for label in second})
    first = [label for label in load_labels(args.first) if label.repo in repos]
    print("trees:", ", ".join(repos))
    print(f"labels: first {len(first)} ({sum(l.should_flag for l in first)} should-flag), "
          f"second {len(second)} ({sum(l.should_flag for l in second)} should-flag)")

    pairs = paired_sites(first, second)
    both = agreement(pairs)
    print(f"\nsites both judged: {both.sites} of the first labelling's {len(first)}")
    print(f"  both should-flag {both.counts[True, True]}, both should-not-flag {both.counts[False, False]}, "
          f"first only {both.counts[True, False]}, second only {both.counts[False, True]}")
    print(f"  agreement {_figure(both.observed)}, Cohen's kappa {_figure(both.kappa)}")
    for marked in (True, False):
        subset = agreement((a, b) for a, b in pairs if a.reason.lower().startswith(JUDGEMENT_CALL) == marked)
        print(f"  first labeller {'marked' if marked else 'did not mark'} a judgement call: {subset.sites} sites, "
              f"agreement {_figure(subset.observed)}")
    by_rule: Dict[str, List[Tuple[Label, Label]]] = {}
    for pair in pairs:
        by_rule.setdefault(pair[0].code, []).append(pair)
    print("  by rule: " + ", ".join(
        f"{code} {agreement(rule_pairs).counts[True, True] + agreement(rule_pairs).counts[False, False]}/{len(rule_pairs)}"
        for code, rule_pairs in sorted(by_rule.items())))

    _table("the second labeller's should-flag sites against the first labelling", score(as_reports(second), first)[0])
    _table("the first labeller's should-flag sites against the second labelling", score(as_reports(first), second)[0])
    if args.linter:
        from score import lint

        reports = [report for repo in repos for report in lint(args.trees / repo, repo)]
        _table("the linter against the first labelling", score(reports, first)[0])
        _table("the linter against the second labelling", score(reports, second)[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
