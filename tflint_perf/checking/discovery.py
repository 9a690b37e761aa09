"""Which files to check: walk directories for Python files, honouring excludes and .gitignore."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Optional, Tuple

import pathspec

from tflint_perf.checking.config import Settings

SUFFIXES = (".py", ".ipynb")


def relative_to_root(path: Path, settings: Settings, resolved: Optional[Path] = None) -> str:
    try:
        return (resolved or real_path(path)).relative_to(settings.root).as_posix()
    except ValueError:
        return path.as_posix()


def is_excluded(path: Path, settings: Settings, is_dir: bool = False, resolved: Optional[Path] = None) -> bool:
    """Excluded by name, by a pattern relative to the project root, or by a .gitignore.

    ``resolved`` is ``path.resolve()`` when the caller already knows it (walking a tree, resolving
    each path again would cost more than everything else discovery does).
    """
    resolved = resolved or real_path(path)
    relative = relative_to_root(path, settings, resolved)
    if settings.excluded(path.name + ("/" if is_dir else "")) or settings.excluded(relative + ("/" if is_dir else "")):
        return True
    return settings.respect_gitignore and _gitignored(resolved, is_dir)


def iter_source_files(directory: Path, settings: Settings) -> Iterator[Path]:
    for current, dirnames, filenames in os.walk(directory):
        base = Path(current)
        real_base = real_path(base)  # once per directory; a child's real path follows unless it is a link
        dirnames[:] = sorted(
            d for d in dirnames if not is_excluded(base / d, settings, True, _real_child(base, real_base, d))
        )
        for name in sorted(filenames):
            path = base / name
            if path.suffix in SUFFIXES and not is_excluded(path, settings, False, _real_child(base, real_base, name)):
                yield path


def _real_child(base: Path, real_base: Path, name: str) -> Path:
    return real_path(base / name) if os.path.islink(os.path.join(base, name)) else real_base / name


def real_path(path: Path) -> Path:
    """``path.resolve()``, or the absolute path where links cannot be followed (a symlink loop)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a loop, before Python 3.13
        return Path(os.path.abspath(path))


def _gitignored(path: Path, is_dir: bool) -> bool:
    """Whether any .gitignore between the repository root and the file ignores it."""
    for ancestor, spec in _gitignores_above(path.parent):
        if spec.match_file(path.relative_to(ancestor).as_posix() + ("/" if is_dir else "")):
            return True
    return False


@lru_cache(maxsize=None)
def _gitignores_above(directory: Path) -> Tuple[Tuple[Path, pathspec.PathSpec], ...]:
    """The .gitignore files that apply inside ``directory``: its own and its ancestors' up to the repository root."""
    spec = _gitignore_spec(directory)
    own = ((directory, spec),) if spec is not None else ()
    if (directory / ".git").exists() or directory.parent == directory:
        return own
    return own + _gitignores_above(directory.parent)


@lru_cache(maxsize=None)
def _gitignore_spec(directory: Path) -> Optional[pathspec.PathSpec]:
    gitignore = directory / ".gitignore"
    try:
        lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)
