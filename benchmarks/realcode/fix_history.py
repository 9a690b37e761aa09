"""The fix-history check: public commits that fixed a tf.data or tf.function performance problem.

    python benchmarks/realcode/fix_history.py --mirror-root /work/.mirror [--work /tmp/fix-history] [--json]

Each entry of `fix_history.toml` names a repository, the fixing commit and its parent, the file, the line
in the parent the fix changed and the rule expected to report it there. The script writes both versions of
the repository (the kept files under the entry's `paths`, or all of them) from a mirror, runs this checkout's
linter on each (every rule, as `score.py` does), and checks that the rule reports the site before the fix
(the line give or take one, as a label matches) and not after it (at `fixed_line`, the same site in the fixed
file). It prints one row per entry and exits non-zero when a mirror or commit is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

from labels import Label, Report, match
from manifest import tomllib
from materialise import materialise, mirror_git_dir
from score import lint

HERE = Path(__file__).resolve().parent
FIX_HISTORY = HERE / "fix_history.toml"


@dataclass(frozen=True)
class Fix:
    repo: str  # owner/name
    fix: str  # the fixing commit
    parent: str  # the commit before it
    path: str  # the file, relative to the repository
    line: int  # the site in the parent
    fixed_line: int  # the same site in the fixed file
    code: str  # the rule expected to report the site before the fix
    why: str
    source: str  # where the maintainers confirmed it (an issue, a pull request), or ""
    paths: Tuple[str, ...]  # what of the tree is written; empty: every kept file

    @property
    def mirror_name(self) -> str:
        return self.repo.replace("/", "+")

    def site(self, fixed: bool) -> Label:
        """The expected site as a label, so that a report matches it exactly as it matches a hand label."""
        line = self.fixed_line if fixed else self.line
        return Label(self.mirror_name, self.path, line, line, None, self.code, True, self.why)


def load_fixes(path: Path = FIX_HISTORY) -> List[Fix]:
    fixes = []
    for number, entry in enumerate(tomllib.loads(path.read_text(encoding="utf-8"))["fix"], start=1):
        missing = {"repo", "fix", "parent", "path", "line", "code", "why"} - set(entry)
        if missing:
            raise ValueError(f"{path.name}: entry {number} lacks {', '.join(sorted(missing))}")
        fixes.append(Fix(
            repo=entry["repo"], fix=entry["fix"], parent=entry["parent"], path=entry["path"],
            line=int(entry["line"]), fixed_line=int(entry.get("fixed_line", entry["line"])), code=entry["code"],
            why=entry["why"], source=entry.get("source", ""), paths=tuple(entry.get("paths", ())),
        ))
    return fixes


def reported(fix: Fix, reports: Iterable[Report], fixed: bool) -> bool:
    """Whether one of the reports is the fix's site, in the version before (`fixed=False`) or after the fix."""
    matched, _, _ = match([report for report in reports if report.code == fix.code], [fix.site(fixed)])
    return bool(matched)


def verdict(before: bool, after: bool) -> str:
    if before and not after:
        return "ok"
    if not before and not after:
        return "missed"  # silent on the problem
    if before:
        return "still reported"  # the fix did not silence it: a false positive after
    return "reported only after"


def check(fix: Fix, mirror_root: Path, work: Path) -> Tuple[bool, bool]:
    git_dir = mirror_git_dir(mirror_root, fix.mirror_name)
    outcome = []
    for commit, fixed in ((fix.parent, False), (fix.fix, True)):
        tree = work / fix.mirror_name / commit[:12]
        if not tree.exists():
            materialise(git_dir, commit, tree, fix.paths)
        outcome.append(reported(fix, lint(tree, fix.mirror_name), fixed))
    return outcome[0], outcome[1]


def table(rows: Sequence[Tuple[Fix, str]]) -> str:
    lines = [f"{'repository':40} {'fix':8} {'site':55} {'code':6} result"]
    for fix, result in rows:
        site = f"{fix.path}:{fix.line}"
        lines.append(f"{fix.repo[:40]:40} {fix.fix[:8]:8} {site[-55:]:55} {fix.code:6} {result}")
    ok = sum(result == "ok" for _, result in rows)
    lines.append(f"\n{ok} of {len(rows)} reported before the fix and silent after it")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror-root", type=Path, required=True)
    parser.add_argument("--work", type=Path, help="where the trees are written (default: a temporary folder)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows, failed = [], False
    with tempfile.TemporaryDirectory(prefix="fix-history-") as scratch:
        work = args.work or Path(scratch)
        for fix in load_fixes():
            try:
                before, after = check(fix, args.mirror_root, work)
            except Exception as error:  # a missing mirror or commit: say so, check the rest
                print(f"{fix.repo} {fix.fix[:8]}: {error}", file=sys.stderr)
                rows.append((fix, "not checked"))
                failed = True
                continue
            rows.append((fix, verdict(before, after)))
    if args.json:
        print(json.dumps([{"repo": fix.repo, "fix": fix.fix, "path": fix.path, "line": fix.line, "code": fix.code,
                           "result": result} for fix, result in rows], indent=2))
    else:
        print(table(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
