"""Which files to check: walk directories for Python files, honouring excludes and .gitignore."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Optional

import pathspec

from tflint_perf.config import Settings

SUFFIXES = (".py",)


def relative_to_root(path: Path, settings: Settings) -> str:
    try:
        return path.resolve().relative_to(settings.root).as_posix()
    except ValueError:
        return path.as_posix()


def is_excluded(path: Path, settings: Settings, is_dir: bool = False) -> bool:
    """Excluded by name, by a pattern relative to the project root, or by a .gitignore."""
    relative = relative_to_root(path, settings)
    if settings.excluded(path.name + ("/" if is_dir else "")) or settings.excluded(relative + ("/" if is_dir else "")):
        return True
    return settings.respect_gitignore and _gitignored(path.resolve(), is_dir)


def iter_source_files(directory: Path, settings: Settings) -> Iterator[Path]:
    for current, dirnames, filenames in os.walk(directory):
        base = Path(current)
        dirnames[:] = sorted(d for d in dirnames if not is_excluded(base / d, settings, is_dir=True))
        for name in sorted(filenames):
            path = base / name
            if path.suffix in SUFFIXES and not is_excluded(path, settings):
                yield path


def _gitignored(path: Path, is_dir: bool) -> bool:
    """Whether any .gitignore between the repository root and the file ignores it."""
    for ancestor in path.parents:
        spec = _gitignore_spec(ancestor)
        if spec is not None:
            relative = path.relative_to(ancestor).as_posix() + ("/" if is_dir else "")
            if spec.match_file(relative):
                return True
        if (ancestor / ".git").exists():
            break
    return False


@lru_cache(maxsize=None)
def _gitignore_spec(directory: Path) -> Optional[pathspec.PathSpec]:
    gitignore = directory / ".gitignore"
    try:
        lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.PathSpec.from_lines("gitwildmatch", lines)
