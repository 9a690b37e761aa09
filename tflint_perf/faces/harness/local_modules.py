"""``verify``: the project modules FUNCTION's file imports, fixed too, and kept apart per side.

A pipeline is often built from helpers in sibling modules (``from preprocessing import decode``).
The modules the file imports from its own directory (``name.py`` or a package ``name/``), and the
ones those import in turn, are fixed as well: fixed copies go to a temporary tree that comes first
on ``sys.path`` for the fixed side, while the original side imports from the file's directory.
Each side keeps its own module objects for these names, swapped into ``sys.modules`` while that
side's code runs, so the original and the fixed function never share a helper.
"""

from __future__ import annotations

import ast
import contextlib
import shutil
import sys
import tempfile
import types
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple


def imported_names(text: str) -> Set[str]:
    """Top-level module names a source imports absolutely (``import a.b`` -> ``a``), anywhere in it."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def local_modules(path: Path, text: str) -> Dict[str, Path]:
    """The modules of ``path``'s directory that it imports, directly or through each other:
    name -> ``name.py`` or the package directory."""
    directory = path.resolve().parent
    found: Dict[str, Path] = {}
    pending = [text]
    while pending:
        for name in sorted(imported_names(pending.pop())):
            if name in found or name == path.stem:
                continue
            module = _module_path(directory, name)
            if module is None:
                continue
            found[name] = module
            pending.extend(_read(source) for source in _sources(module))
    return found


def _module_path(directory: Path, name: str) -> Optional[Path]:
    if (directory / f"{name}.py").is_file():
        return directory / f"{name}.py"
    if (directory / name / "__init__.py").is_file():
        return directory / name
    return None


def _sources(module: Path) -> List[Path]:
    if module.is_file():
        return [module]
    return sorted(p for p in module.rglob("*.py") if "__pycache__" not in p.parts)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


Fixer = Callable[[Path], Tuple[str, list]]  # a file -> (its fixed text, the fixes applied)


class FixedTree:
    """Fixed copies of the local modules that have fixes, in a temporary directory."""

    def __init__(self, modules: Dict[str, Path], fix: Fixer) -> None:
        self.modules = modules
        self.fixes: List[Tuple[Path, list]] = []  # (original file, fixes applied), files with fixes only
        self._texts: Dict[Path, str] = {}
        for module in modules.values():
            for source in _sources(module):
                text, applied = fix(source)
                if applied:
                    self._texts[source] = text
                    self.fixes.append((source, applied))
        self.root: Optional[Path] = None

    def __enter__(self) -> "FixedTree":
        if self._texts:
            self.root = Path(tempfile.mkdtemp(prefix="tflint_perf_verify_"))
            for name, module in self.modules.items():
                if not any(source in self._texts for source in _sources(module)):
                    continue  # unchanged: imported from the project directory
                for source in _sources(module):
                    target = self.root / source.relative_to(module.parent)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(self._texts.get(source, _read(source)), encoding="utf-8")
        return self

    def __exit__(self, *exc) -> None:
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)


class Side:
    """One side's view of the local modules: its ``sys.path`` entries and its module objects."""

    def __init__(self, search_path: List[str], names: Set[str]) -> None:
        self.search_path = search_path
        self.names = names
        self.modules: Dict[str, types.ModuleType] = {}

    def _local(self, name: str) -> bool:
        return name.split(".")[0] in self.names

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        saved_path = list(sys.path)
        saved = {name: module for name, module in sys.modules.items() if self._local(name)}
        for name in saved:
            del sys.modules[name]
        sys.modules.update(self.modules)
        sys.path[:0] = self.search_path
        try:
            yield
        finally:
            self.modules = {name: module for name, module in sys.modules.items() if self._local(name)}
            for name in self.modules:
                del sys.modules[name]
            sys.modules.update(saved)
            sys.path[:] = saved_path
