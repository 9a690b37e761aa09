"""The pinned repositories of the real-code check (manifest.toml)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import List

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

    @property
    def tree_name(self) -> str:
        """The directory a tree lives in, and the `repo` column of the labels."""
        return self.name.replace("/", "+")


def load_manifest(path: Path = MANIFEST) -> List[Repo]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [
        Repo(entry["name"], entry["commit"], bool(entry.get("heldout", False)), entry.get("why", ""))
        for entry in data["repo"]
    ]
