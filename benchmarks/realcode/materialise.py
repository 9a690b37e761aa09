"""Re-create the real-code trees from fetched mirrors, at the commits the manifest pins.

    python benchmarks/realcode/materialise.py --mirror-root /work/.mirror --out .realcode/trees

A mirror is a bare git directory per repository (`<mirror-root>/<owner>+<name>/repo`, as the search
tool's `fetch` leaves it, or a plain `git clone --bare`). Only Python sources, notebooks and the files
that declare dependencies are kept; blobs a partial mirror lacks are skipped and counted.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from manifest import DEFAULT_TREES, load_manifest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tflint_perf.project.dockerfile import is_dockerfile  # noqa: E402  (the checkout's own package)

KEPT_SUFFIXES = (".py", ".ipynb")
KEPT_NAMES = ("pyproject.toml", "setup.py", "setup.cfg", "environment.yml", "environment.yaml")


def kept(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        path.endswith(KEPT_SUFFIXES)
        or name in KEPT_NAMES
        or (name.startswith("requirements") and name.endswith(".txt"))
        or is_dockerfile(name)  # the image's `pip install tensorflow==X` is a target version, as for a user
    )


def git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True).stdout


def mirror_git_dir(mirror_root: Path, mirror_name: str) -> Path:
    """The git directory of a repository's mirror: `<root>/<owner+name>/repo` (bare, or a clone's `.git`),
    or the folder itself."""
    for candidate in (mirror_root / mirror_name / "repo" / ".git", mirror_root / mirror_name / "repo"):
        if candidate.exists():
            return candidate
    return mirror_root / mirror_name


def materialise(git_dir: Path, commit: str, out: Path, paths: Sequence[str] = ()) -> tuple:
    """Write the kept files of `commit` (only those under `paths`, when it names any) to `out`."""
    if out.exists():
        shutil.rmtree(out)
    written = missing = 0
    for line in git(git_dir, "ls-tree", "-r", "-z", commit, "--", *paths).split(b"\0"):
        if not line:
            continue
        meta, path = line.decode().split("\t", 1)
        mode, kind, blob = meta.split()
        if kind != "blob" or mode == "120000" or not kept(path):
            continue
        try:
            content = git(git_dir, "cat-file", "blob", blob)
        except subprocess.CalledProcessError:
            missing += 1  # a partial mirror leaves its largest files out
            continue
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        written += 1
    return written, missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror-root", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=DEFAULT_TREES)
    parser.add_argument("--repos", help="comma-separated tree names (owner+name, or the entry's `tree`): only these")
    args = parser.parse_args()
    wanted = set(args.repos.split(",")) if args.repos else None
    failed = False
    for repo in load_manifest():
        if wanted is not None and repo.tree_name not in wanted:
            continue
        git_dir = mirror_git_dir(args.mirror_root, repo.mirror_name)
        try:
            git(git_dir, "cat-file", "-e", repo.commit + "^{commit}")
        except (subprocess.CalledProcessError, FileNotFoundError):
            print(f"{repo.name}: commit {repo.commit[:12]} not in {git_dir}", file=sys.stderr)
            failed = True
            continue
        written, missing = materialise(git_dir, repo.commit, args.out / repo.tree_name, repo.paths)
        print(f"{repo.tree_name}@{repo.commit[:12]}: {written} files" + (f", {missing} absent from the mirror" if missing else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
