"""Which files to check: walk directories for Python files, honouring excludes and .gitignore."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterable, Iterator, List, Optional, Tuple

if TYPE_CHECKING:
    import pathspec

from tflint_perf.checking.config import Settings

SUFFIXES = (".py", ".ipynb")
NO_FILES_WARNING = "warning: No Python files found under the given path(s)"  # ruff's words

# What the command line gathers for each file: (the argument that led to it, the file or None for a
# missing path or stdin, whether it was named explicitly, its real path when a directory walk knew it).
Found = Tuple[str, Optional[Path], bool, Optional[str]]


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
    for path, _ in iter_source_files_resolved(directory, settings):
        yield path


def iter_source_files_resolved(directory: Path, settings: Settings) -> Iterator[Tuple[Path, Optional[str]]]:
    """Each file to check under ``directory`` with its real path (what ``real_path`` gives; None for a
    link, whose directory's real path is not its target's), so that nothing after discovery resolves
    it again. Each directory is resolved once; an entry's real path follows from it unless it is a
    link. Paths are strings here: this runs for every entry of the tree, and pathlib's objects cost
    more than the checks themselves (excludes that are plain names are a set lookup per component)."""
    root = str(settings.root)
    root_prefix = root if root.endswith(os.sep) else root + os.sep
    exclusions = settings.exclusions()
    names = exclusions.names
    patterns = exclusions.needs_path

    def excluded(base: str, real_base: str, ignores: bool, name: str, is_dir: bool) -> Tuple[bool, Optional[str]]:
        """``is_excluded(base / name, settings, is_dir, real)``, and the entry's real path (None for a link)."""
        link = os.path.islink(os.path.join(base, name))
        real = str(real_path(Path(base) / name)) if link else os.path.join(real_base, name)
        mark = "/" if is_dir else ""
        if real.startswith(root_prefix) and os.sep == "/":
            relative = real[len(root_prefix):]
        else:
            relative = relative_to_root(Path(base) / name, settings, Path(real))
        skip = bool(
            name in names or (names and any(part in names for part in relative.split("/")))
            or (patterns and (exclusions.match_file(name + mark) or exclusions.match_file(relative + mark)))
            or (settings.respect_gitignore and (link or ignores) and _gitignored(Path(real), is_dir))
        )
        return skip, None if link else real

    for current, dirnames, filenames in os.walk(directory):
        real_base = str(real_path(Path(current)))  # once per directory
        ignores = settings.respect_gitignore and bool(_gitignores_above(Path(real_base)))
        dirnames[:] = sorted(d for d in dirnames if not excluded(current, real_base, ignores, d, True)[0])
        for name in sorted(filenames):
            if _suffix(name) in SUFFIXES:
                skip, real = excluded(current, real_base, ignores, name, False)
                if not skip:
                    yield Path(current, name), real


def once_each(found: Iterable[Found]) -> List[Found]:
    """Each file once, at the place it was first found, whatever the spellings that name it:
    ``train.py train.py``, ``src src/train.py``, ``./train.py``, a link to it (pre-commit passes
    overlapping paths too). Keyed by real path; a file that any spelling named explicitly is checked
    as an explicit one. Missing paths are kept once each; stdin (``-``) always."""
    first: Dict[str, int] = {}
    kept: List[Found] = []
    for raw, path, explicit, real in found:
        if raw == "-" and path is None:
            kept.append((raw, path, explicit, real))
            continue
        key = real or str(real_path(path if path is not None else Path(raw)))
        place = first.get(key)
        if place is None:
            first[key] = len(kept)
            kept.append((raw, path, explicit, real))
        elif explicit and not kept[place][2]:
            kept[place] = (*kept[place][:2], True, kept[place][3])
    return kept


def _suffix(name: str) -> str:
    """``Path(name).suffix``."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


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
    import pathspec  # only where a .gitignore exists

    return pathspec.GitIgnoreSpec.from_lines(lines)
