"""Precision and recall of tflint-perf on real code, against the hand labels.

    python benchmarks/realcode/score.py [--trees .realcode/trees] [--heldout-only | --dev-only]
                                        [--repos a+b,c+d] [--rules TFP101,TFP102] [--json]
                                        [--sample-unlabelled N --seed S] [--default-rules]

It runs this checkout's linter (every rule, no cache, no configuration) over each tree of the manifest,
each file keyed to the TensorFlow its tree declares (the version inferred from its dependency files, as
for a user: the opt-in deprecation rules TFP401/TFP402 report what warns or breaks on that target),
matches the reports to `labels/*.csv` (same tree, path, cell and code; the line within the label's range,
give or take one), and prints per rule: reports, labelled reports, true and false positives, false
negatives (should-flag labels nothing reported), precision over the labelled reports, recall over the
should-flag labels; then every disagreement with its reason. `--sample-unlabelled` prints a random
sample of reports no label covers yet, per rule: what to label next. `--default-rules` runs the rule
set a new user gets instead (no selection: the opt-in rules TFP209, TFP401, TFP402 are off), to see
what a first run reports; opt-in rules then have no reports and only false negatives.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

from labels import Label, Report, load_labels, score
from manifest import DEFAULT_TREES, load_manifest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _every_rule() -> str:
    """Every rule's code, named one by one: rules off by default (opt-in) are enabled only when named,
    so the opt-in rules are scored as their users run them, selected."""
    sys.path.insert(0, str(REPO_ROOT))
    from tflint_perf.rules import all_rules

    return ",".join(rule.code for rule in all_rules())


def lint(tree: Path, repo: str, default_rules: bool = False) -> List[Report]:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    selection = [] if default_rules else ["--select", _every_rule()]
    result = subprocess.run(
        [sys.executable, "-m", "tflint_perf", "check", *selection, "--isolated", "--no-cache",
         "--exit-zero", "--quiet", "--output-format", "json", "."],
        cwd=tree, env=env, capture_output=True, text=True,
    )
    if result.returncode != 0:
        raise SystemExit(f"tflint-perf failed on {tree} ({result.returncode}):\n{result.stderr}")
    reports = []
    for finding in json.loads(result.stdout or "[]"):
        if finding["code"] in ("TFP001", "TFP002"):
            continue  # a file or notebook cell that could not be read or parsed: nothing to score
        path = Path(finding["filename"]).as_posix()
        path = path[2:] if path.startswith("./") else path
        reports.append(Report(repo, path, finding["location"]["row"], finding.get("cell"), finding["code"], finding["message"]))
    return reports


def figure(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", type=Path, default=DEFAULT_TREES)
    parser.add_argument("--repos", help="comma-separated tree names (owner+name)")
    split = parser.add_mutually_exclusive_group()
    split.add_argument("--heldout-only", action="store_true")
    split.add_argument("--dev-only", action="store_true")
    parser.add_argument("--rules", help="comma-separated codes")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--sample-unlabelled", type=int, default=0, metavar="N")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--default-rules", action="store_true", help="the default rule set, as a first run gets it")
    args = parser.parse_args()

    repos = load_manifest()
    if args.heldout_only or args.dev_only:
        repos = [repo for repo in repos if repo.heldout == args.heldout_only]
    if args.repos:
        wanted = set(args.repos.split(","))
        repos = [repo for repo in repos if repo.tree_name in wanted]
    names = {repo.tree_name for repo in repos}
    rules = set(args.rules.split(",")) if args.rules else None

    reports: List[Report] = []
    for repo in repos:
        tree = args.trees / repo.tree_name
        if not tree.is_dir():
            raise SystemExit(f"{tree} is missing: run materialise.py first")
        reports.extend(lint(tree, repo.tree_name, args.default_rules))
    labels = [label for label in load_labels() if label.repo in names]
    if rules:
        reports = [report for report in reports if report.code in rules]
        labels = [label for label in labels if label.code in rules]
    scores, matched, unlabelled, unreported = score(reports, labels)

    if args.json:
        print(json.dumps({code: {**vars(entry), "precision": entry.precision, "recall": entry.recall}
                          for code, entry in sorted(scores.items())}, indent=2))
        return 0
    print(f"trees: {', '.join(sorted(names))}")
    print(f"labels: {len(labels)}\n")
    print(f"{'rule':8} {'reports':>7} {'labelled':>8} {'TP':>4} {'FP':>4} {'FN':>4} {'precision':>9} {'recall':>6} {'unlabelled':>10}")
    unlabelled_by_code: Dict[str, List[Report]] = {}
    for report in unlabelled:
        unlabelled_by_code.setdefault(report.code, []).append(report)
    for code, entry in sorted(scores.items()):
        print(f"{code:8} {entry.reports:7} {entry.labelled:8} {entry.true_positives:4} {entry.false_positives:4} "
              f"{entry.false_negatives:4} {figure(entry.precision):>9} {figure(entry.recall):>6} "
              f"{len(unlabelled_by_code.get(code, ())):10}")
    true_positives = sum(entry.true_positives for entry in scores.values())
    should_flag = true_positives + sum(entry.false_negatives for entry in scores.values())
    labelled = sum(entry.labelled for entry in scores.values())
    print(f"{'all':8} {len(reports):7} {labelled:8} {true_positives:4} {labelled - true_positives:4} "
          f"{should_flag - true_positives:4} {figure(true_positives / labelled if labelled else None):>9} "
          f"{figure(true_positives / should_flag if should_flag else None):>6} {len(unlabelled):10}")

    by_site = lambda item: (item[0], item[1].code)  # noqa: E731 -- two rules' labels can share a site
    false_positives = sorted(((label.where(), label) for report, label in matched if not label.should_flag), key=by_site)
    if false_positives:
        print("\nfalse positives (reported, labelled should-not-flag):")
        for where, label in false_positives:
            print(f"  {label.code} {where}  # {label.reason}")
    false_negatives = sorted(((label.where(), label) for label in unreported if label.should_flag), key=by_site)
    if false_negatives:
        print("\nfalse negatives (labelled should-flag, not reported):")
        for where, label in false_negatives:
            print(f"  {label.code} {where}  # {label.reason}")
    if args.sample_unlabelled:
        chooser = random.Random(args.seed)
        print("\nunlabelled reports (a sample):")
        for code, items in sorted(unlabelled_by_code.items()):
            for report in chooser.sample(items, min(args.sample_unlabelled, len(items))):
                print(f"  {code} {report.where()}  {report.message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
