"""The pinned repositories of the real-code check (manifest.toml)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "manifest.toml"
DEFAULT_TREES = HERE.parent.parent / ".realcode" / "trees"


@dataclass(frozen=True)
class Repo:
    name: str  # owner/name, as GitHub spells it
    commit: str
    heldout: bool
    why: str
    paths: Tuple[str, ...] = ()  # folders (or files) of the repository kept; empty: the whole repository
    tree: Optional[str] = None  # the tree's own name, where one repository gives several trees

    @property
    def mirror_name(self) -> str:
        """The mirror's directory under the mirror root (`owner+name`)."""
        return self.name.replace("/", "+")

    @property
    def tree_name(self) -> str:
        """The directory a tree lives in, and the `repo` column of the labels."""
        return self.tree or self.mirror_name


def load_manifest(path: Path = MANIFEST) -> List[Repo]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    repos = [
        Repo(entry["name"], entry["commit"], bool(entry.get("heldout", False)), entry.get("why", ""),
             tuple(entry.get("paths", ())), entry.get("tree"))
        for entry in data["repo"]
    ]
    trees = [repo.tree_name for repo in repos]
    duplicated = sorted({tree for tree in trees if trees.count(tree) > 1})
    if duplicated:
        raise ValueError(f"{path}: two entries write the tree {', '.join(duplicated)}: give one a `tree` name")
    return repos
