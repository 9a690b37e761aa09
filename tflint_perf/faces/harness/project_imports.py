"""``verify``: the user's code imported as the project runs it, with ``check``'s fixes applied in memory.

- *Where imports come from*: the project root that ``check`` finds (``project/index.py``: the
  nearest ``pyproject.toml``, ``setup.py``, ``setup.cfg`` or ``.git``, else the working directory)
  and its ``src/`` folder go on ``sys.path`` after the file's own folder, in the order the project
  index resolves absolute imports. The target file is imported by its package name
  (``utils/pre_process_mnist.py`` as ``utils.pre_process_mnist``), so its package and sibling
  imports (``from inputs.augment import normalise``, ``from .augment import normalise``) work as in
  the project; a file whose path is no importable name (``my-scripts/run.py``) is imported by its
  stem from its folder.
- *Which modules are fixed*: every first-party module the file reaches through the project index
  (its imports, theirs in turn, and the ``__init__.py`` of each package on the way, which Python
  runs too), each fixed exactly as ``check --fix`` fixes it (``checking/checker.py`` in the
  project's workspace, so findings that need another module, a map function defined elsewhere,
  are found as ``check`` finds them). No file is written.
- *How the fixed text is run*: the after side puts an import hook (``FixedSourceFinder``) first on
  ``sys.meta_path``: a module whose file has a fixed text is loaded from that text (its code named
  ``FILE (fixed)``, registered with ``linecache`` so AutoGraph and tracebacks read the fixed lines;
  ``__file__`` stays the real path, for code that finds its data next to it). Each side keeps its
  own objects for the reached modules and their packages, swapped into ``sys.modules`` while that
  side's code runs, so the original and the fixed pipeline never share a helper.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import keyword
import linecache
import os
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set

from tflint_perf.checking.checker import process_bytes
from tflint_perf.checking.config import ConfigError, Settings, find_config, load_config
from tflint_perf.checking.results import Mode
from tflint_perf.project.index import Project, project_for
from tflint_perf.faces.harness.targets import VerifyError
from tflint_perf.text.diagnostics import Diagnostic, Fix


@dataclass
class ProjectLayout:
    """Where the target file sits in its project, and what it reaches."""

    root: Path
    search_path: List[str]  # prepended to sys.path on both sides
    module_name: str  # the name the target file is imported by
    reached: List[Path]  # first-party files the import runs, the target first
    project: Project


def layout_of(path: Path, cwd: Optional[Path] = None) -> ProjectLayout:
    path = path.resolve()
    project = project_for(path, cwd or Path.cwd())
    root = project.root
    search = [str(path.parent), str(root)] + ([str(root / "src")] if (root / "src").is_dir() else [])
    name = _import_name(path, root)
    if name is None:
        name = path.stem  # not importable by a package name: as a script, from its own folder
    return ProjectLayout(root, list(dict.fromkeys(search)), name, reached_files(project, path), project)


def _import_name(path: Path, root: Path) -> Optional[str]:
    for base in (root / "src", root):
        try:
            parts = list(path.with_suffix("").relative_to(base).parts)
        except ValueError:
            continue
        if parts and parts[-1] == "__init__":
            parts.pop()
        if parts and all(part.isidentifier() and not keyword.iskeyword(part) for part in parts):
            return ".".join(parts)
    return None


def reached_files(project: Project, start: Path) -> List[Path]:
    """``start`` and the first-party modules it imports, transitively, with the packages' ``__init__.py``."""
    found: Dict[Path, None] = {}
    pending = [start]
    while pending:
        current = pending.pop(0)
        if current in found:
            continue
        found[current] = None
        pending.extend(project.dependencies(current))
        pending.extend(_package_inits(current, project.root))
    return list(found)


def _package_inits(path: Path, root: Path) -> List[Path]:
    inits = []
    for directory in path.parents:
        if directory == root or root not in directory.parents:
            break
        init = directory / "__init__.py"
        if init.is_file() and init != path:
            inits.append(init)
    return inits


@dataclass
class FixedModule:
    path: Path
    text: str
    fixes: List[Diagnostic]


def fixed_modules(layout: ProjectLayout, unsafe: bool) -> List[FixedModule]:
    """The reached files that ``check --fix`` would change, with their fixed texts and fixes."""
    settings = project_settings(layout)
    mode = Mode(fix=True, diff=True, unsafe=unsafe)  # diff: compute the fixes, write nothing
    found = []
    for path in layout.reached:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        result = process_bytes(data, relative_name(layout, path), path, settings, mode, explicit=True)
        if result.fixed_text is not None and result.fixed:
            found.append(FixedModule(path, result.fixed_text, result.fixed))
    return found


def unsafe_fixes_left(layout: ProjectLayout) -> int:
    """How many more fixes ``--unsafe-fixes`` would apply (for the "no fix applies" message)."""
    safe = sum(len(module.fixes) for module in fixed_modules(layout, unsafe=False))
    return sum(len(module.fixes) for module in fixed_modules(layout, unsafe=True)) - safe


def project_settings(layout: ProjectLayout) -> Settings:
    try:
        config = find_config(layout.reached[0].parent)
        return load_config(config, root=config.parent if config else layout.root)
    except ConfigError as error:
        raise VerifyError(str(error)) from None


def relative_name(layout: ProjectLayout, path: Path) -> str:
    try:
        return path.relative_to(layout.root).as_posix()
    except ValueError:
        return str(path)


def fix_line(layout: ProjectLayout, module: FixedModule, diagnostic: Diagnostic) -> str:
    """``file.py:row:col CODE message``, the file named relative to the project root."""
    fix: Optional[Fix] = diagnostic.fix
    location = diagnostic.location
    return f"{relative_name(layout, module.path)}:{location.row}:{location.column} {diagnostic.code} " \
           f"{fix.message if fix else ''}"


class FixedSourceLoader(importlib.abc.Loader):
    def __init__(self, text: str, origin: str) -> None:
        self.text, self.origin = text, origin

    def create_module(self, spec) -> None:
        return None  # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        filename = f"{self.origin} (fixed)"
        linecache.cache[filename] = (len(self.text), None, self.text.splitlines(True), filename)
        exec(compile(self.text, filename, "exec"), module.__dict__)  # noqa: S102 - verify runs the user's code, and says so


class FixedSourceFinder(importlib.abc.MetaPathFinder):
    """Finds modules as ``sys.path`` does, and loads those with a fixed text from that text."""

    def __init__(self, texts: Dict[str, str]) -> None:
        self.texts = texts  # real path of the file -> its fixed text

    def find_spec(self, fullname: str, path: Optional[Sequence[str]], target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None:
            return None
        text = self.texts.get(os.path.realpath(spec.origin))
        if text is None:
            return None
        spec.loader = FixedSourceLoader(text, spec.origin)
        return spec


@dataclass
class Side:
    """One side's view of the reached modules: its ``sys.path`` entries, its import hook (the fixed
    side) and its module objects, kept apart from the other side's."""

    search_path: List[str]
    root: str
    reached: Set[str]  # real paths of the reached files
    finder: Optional[FixedSourceFinder] = None
    modules: Dict[str, types.ModuleType] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The folders of the packages that may hold a reached module: between a file and the root.
        self._folders: Set[str] = set()
        for path in self.reached:
            folder = os.path.dirname(path)
            while folder.startswith(self.root + os.sep) and folder not in self._folders:
                self._folders.add(folder)
                folder = os.path.dirname(folder)

    def owns(self, module: types.ModuleType) -> bool:
        """A reached module, or a package (namespace packages too) holding one."""
        file = getattr(module, "__file__", None)
        if file is not None and os.path.realpath(file) in self.reached:
            return True
        spec = getattr(module, "__spec__", None)
        locations = getattr(spec, "submodule_search_locations", None) if spec is not None else None
        return any(os.path.realpath(location) in self._folders for location in locations or ())

    def import_module(self, name: str) -> types.ModuleType:
        with self.active():
            return importlib.import_module(name)

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        saved_path, saved_bytecode = list(sys.path), sys.dont_write_bytecode
        sys.dont_write_bytecode = True  # no __pycache__ written into the user's project
        saved = {name: module for name, module in list(sys.modules.items()) if self.owns(module)}
        for name in saved:
            del sys.modules[name]
        sys.modules.update(self.modules)
        sys.path[:0] = self.search_path
        if self.finder is not None:
            sys.meta_path.insert(0, self.finder)
        importlib.invalidate_caches()
        try:
            yield
        finally:
            if self.finder is not None and self.finder in sys.meta_path:
                sys.meta_path.remove(self.finder)
            self.modules = {name: module for name, module in list(sys.modules.items()) if self.owns(module)}
            for name in self.modules:
                del sys.modules[name]
            sys.modules.update(saved)
            sys.path[:] = saved_path
            sys.dont_write_bytecode = saved_bytecode


def sides(layout: ProjectLayout, fixed: List[FixedModule]) -> Dict[str, Side]:
    reached = {os.path.realpath(path) for path in layout.reached}
    texts = {os.path.realpath(module.path): module.text for module in fixed}
    root = os.path.realpath(layout.root)
    return {"before": Side(layout.search_path, root, reached),
            "after": Side(layout.search_path, root, reached, FixedSourceFinder(texts))}
