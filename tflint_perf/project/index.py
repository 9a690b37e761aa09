"""The project around a checked file: its first-party modules, who imports whom, and one check's view.

Real training code is a package: ``data.py`` builds the pipeline that ``train.py`` fits on. The
analysis of a module asks two things of its project, both through a ``Session`` (one check's view):

- *down*: what an imported first-party name is (``from .data import make_dataset``, ``import
  pkg.augment as aug``, ``from pkg import data``): the other module is parsed and modelled once per
  session, and its own analysis (pipeline summaries, effects, hot paths), computed without knowing
  its callers, is used exactly like a same-file helper's;
- *up*: what the modules importing it do with its functions (a pipeline it returns is fitted, a
  function it defines is mapped or called per step): their own analyses, with this module's
  definitions resolved to the very objects the check of this module reports on, so a finding lands
  where the fix goes.

What is first-party: files under the project root (the nearest directory holding
``pyproject.toml``, ``setup.py``, ``setup.cfg`` or ``.git``; else the directory the command was
pointed at), found the way Python would for a script in the importing file's directory or for the
root on ``sys.path`` (plus a ``src/`` layout, and the directory above the package the importing file is
in, for a package that imports itself by name from below the root). TensorFlow, Keras and the other names the alias
table tracks are never first-party. Costs are bounded (docs/performance.md): at most
``MAX_PROJECT_FILES`` files in ``MAX_PROJECT_DIRECTORIES`` directories are scanned for imports (text
only, once a run), a run models each imported module once (shared by every check), a check reads at
most ``MAX_IMPORTERS`` importers per question, and an import cycle ends in "unknown", which every
rule treats as silence.
"""

from __future__ import annotations

import hashlib
from collections import Counter
import json
import os
import re
from bisect import insort
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, TypeVar

from tflint_perf.text.prefilter import may_hold_pipelines

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
MAX_PROJECT_FILES = 5000
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_PROJECT_DIRECTORIES = 20000
MAX_MODULES = 512  # modules a run keeps modelled (least recently used forgotten first)
MAX_IMPORTERS = 16  # importers of a module read for one question
CYCLE_DEPTH = 3
_SKIPPED_DIRECTORIES = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "env", ".env", "__pycache__", "build", "dist", "node_modules",
     "site-packages", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".tflint_perf_cache", ".ipynb_checkpoints"}
)
_NOT_FIRST_PARTY = frozenset(
    {"tensorflow", "keras", "tf_keras", "tensorflow_datasets", "functools", "numpy", "tqdm", "os", "sys"}
)
# `import a.b as c`, `from ..a import (b, c as d)`: enough of the grammar to find edges, never to judge code.
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]+)", re.M)
_SUFFIXES = (".py", ".ipynb")
STAR = "*"  # the name an ImportRef keeps for `from m import *`
# Text without any of these cannot build, extend or iterate a tf.data pipeline.


@dataclass(frozen=True)
class ImportRef:
    """One imported module (``level`` dots before it), with the names taken from it (empty for ``import m``;
    ``"*"`` for ``from m import *``, which takes every public name)."""

    module: str
    level: int
    names: Tuple[str, ...] = ()


Node = TypeVar("Node", Path, str)


# What a file's findings depend on, defined once for the project index (Paths) and for the results
# cache's manifest (strings, for speed): the cache keys, the workspace's invalidation and the tests hold to it.
def neighbourhood(path: Node, dependencies: Callable[[Node], Sequence[Node]],
                  importers: Callable[[Node], Sequence[Node]]) -> Set[Node]:
    """The files whose content can change ``path``'s findings: the modules it imports, two levels down
    (whose summaries it applies), and the modules importing it, two levels up (whose loops, fits and
    maps it is judged by: a pipeline mapped here, batched in an importer, fitted in the importer's
    importer)."""
    around: Set[Node] = set()
    for step in (dependencies, importers):
        frontier = [path]
        for _ in range(2):
            frontier = [other for file in frontier for other in step(file) if other not in around]
            around.update(frontier)
    around.discard(path)
    return around


def dependents(path: Node, dependencies: Callable[[Node], Sequence[Node]],
               importers: Callable[[Node], Sequence[Node]]) -> Set[Node]:
    """The files whose ``neighbourhood`` holds ``path`` (and ``path`` itself): what a change to it can
    change. The inverse of ``neighbourhood``: its importers and the modules it imports, two levels each."""
    found: Set[Node] = {path}
    for step in (importers, dependencies):
        frontier = [path]
        for _ in range(2):
            frontier = [other for file in frontier for other in step(file) if other not in found]
            found.update(frontier)
    return found


def importer_map(files: Iterable[Node], dependencies: Callable[[Node], Sequence[Node]]) -> Dict[Node, List[Node]]:
    """Who imports whom, inverted: each file's direct importers among ``files``."""
    importers: Dict[Node, List[Node]] = {}
    for file in files:
        for target in dependencies(file):
            importers.setdefault(target, []).append(file)
    return importers


def digest_of_files(files: Iterable[str], digest: Callable[[str], bytes]) -> str:
    """One digest of several files' paths and contents (empty for none), in path order."""
    ordered = sorted(files)
    if not ordered:
        return ""
    return hashlib.blake2b(b"".join(file.encode("utf-8", "surrogateescape") + b"\0" + digest(file) + b"\0"
                                    for file in ordered), digest_size=16).hexdigest()


def walk_files(top: str, suffixes: Tuple[str, ...], max_files: int) -> Optional[List[str]]:
    """The files under ``top`` whose names end in one of ``suffixes``, in sorted order, skipping what
    is never a project's own (hidden directories, virtual environments, ``node_modules``, build
    output); None past ``max_files`` of them or ``MAX_PROJECT_DIRECTORIES`` directories: a collection
    too big to walk on every run. The one walk of a project's files (its imports, its notebooks)."""
    found: List[str] = []
    for visited, (current, directories, names) in enumerate(os.walk(top)):
        if visited >= MAX_PROJECT_DIRECTORIES:
            return None
        directories[:] = sorted(d for d in directories if d not in _SKIPPED_DIRECTORIES and not d.startswith("."))
        found.extend(os.path.join(current, name) for name in sorted(names) if name.endswith(suffixes))
        if len(found) > max_files:
            return None
    return found


def run_project_root(path: Path, run_root: Optional[Path]) -> Path:
    """The project of ``path`` in a run: the nearest marked ancestor, else ``run_root`` (the directory
    the command runs in) where ``path`` lies under it, else ``path``'s own directory."""
    fallback = run_root.resolve() if run_root is not None else None
    if fallback is not None and fallback != path and fallback not in path.parents:
        fallback = None  # a file outside the directory the command runs in: its own directory
    return project_root(path, fallback)


def project_root(path: Path, fallback: Optional[Path] = None) -> Path:
    """The nearest ancestor of ``path`` that holds a project marker; ``fallback`` (or the file's own
    directory) when none does."""
    start = path if path.is_dir() else path.parent
    found = _marked_ancestor(start)
    return found if found is not None else (fallback if fallback is not None else start)


@lru_cache(maxsize=4096)
def _marked_ancestor(directory: Path) -> Optional[Path]:
    if any(os.path.exists(os.path.join(directory, marker)) for marker in ROOT_MARKERS):
        return directory
    return None if directory.parent == directory else _marked_ancestor(directory.parent)


def imports_in_text(text: str) -> List[ImportRef]:
    """The import statements of a module's text (a notebook's code cells joined), read as text."""
    found: List[ImportRef] = []
    for dots, module, names in _FROM.findall(text):
        taken = tuple(
            part.split(" as ")[0].strip() for part in names.strip("()").replace("\n", " ").split(",")
        )
        found.append(ImportRef(module, len(dots), tuple(name for name in taken if name)))
    for clause in _IMPORT.findall(text):
        for part in clause.split(","):
            module = part.split(" as ")[0].strip()
            if re.fullmatch(r"[\w.]+", module):
                found.append(ImportRef(module, 0))
    return found


def notebook_code(text: str) -> str:
    """A notebook's code cells joined, for the import scan only (IPython lines are harmless here)."""
    try:
        cells = json.loads(text).get("cells", [])
    except (ValueError, AttributeError):
        return ""
    parts = []
    for cell in cells if isinstance(cells, list) else []:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            parts.append("".join(source) if isinstance(source, list) else str(source))
    return "\n".join(parts)


class Project:
    """The first-party files under one root and the imports between them; shared by every check of a run."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        # Texts that stand in for a file's content on disk (an editor's unsaved buffer).
        self._overlays: Dict[Path, str] = {}
        # The stat (mtime_ns, size) of each file when its text was read from disk, to tell a change.
        self._stamps: Dict[Path, Tuple[int, int]] = {}
        self._files: Optional[List[Path]] = None
        self._scans: Dict[Path, List[ImportRef]] = {}
        self._importers: Optional[Dict[Path, List[Path]]] = None
        # The importer map is kept across an edit: the edited file leaves the lists of what it imported
        # and goes back, in file order, under what it imports now when next asked (``importers_of``).
        self._file_order: Dict[Path, int] = {}
        self._stale_importers: Set[Path] = set()
        self._pipeline_text: Dict[Path, bool] = {}
        self._sys_path_entries: Dict[Path, List[str]] = {}  # each file's relative literal `sys.path` entries
        self._dependencies: Dict[Path, Tuple[List[ImportRef], List[Path]]] = {}
        self._reachable: Dict[Path, FrozenSet[Path]] = {}
        self._words: Dict[Path, Counter] = {}  # each file's identifiers (code, strings, comments), counted
        self._packaging: Optional[Tuple[tuple, bool]] = None  # (the packaging files' stamps, `distributed`)

    # -- texts ------------------------------------------------------------------------------------
    def text_of(self, path: Path) -> str:
        """The module's text: the overlay set for it, else the file on disk (stamped, so that
        ``changed_on_disk`` can tell when it was edited)."""
        overlay = self._overlays.get(path)
        if overlay is not None:
            return overlay
        stamp = _stamp(path)
        if stamp is not None:
            self._stamps[path] = stamp
        return read_text(path)

    def digest_of(self, path: Path) -> bytes:
        """The content digest of the module (of its overlay, when one is set)."""
        overlay = self._overlays.get(path)
        if overlay is not None:
            return hashlib.blake2b(overlay.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        return _file_digest(path)

    def set_overlay(self, path: Path, text: Optional[str]) -> Set[Path]:
        """Use ``text`` as the module's content from now on (None: the file on disk again). Returns
        the modules whose analyses may depend on it, before and after the change (``affected_by``)."""
        path = _resolved(path)
        before = self.affected_by(path)
        if text is None:
            self._overlays.pop(path, None)
        else:
            self._overlays[path] = text
        self.forget(path)
        return before | self.affected_by(path)

    def changed_on_disk(self) -> List[Path]:
        """The files read from disk whose stat differs from when they were read (edited, or removed)."""
        return [path for path, stamp in self._stamps.items() if path not in self._overlays and _stamp(path) != stamp]

    def forget(self, path: Path) -> None:
        """Drop what is known of one file (its imports, its text's traits); the edges around it are
        recomputed on the next question. A file created or deleted also changes the file list."""
        self._scans.pop(path, None)
        self._words.pop(path, None)
        known = self._dependencies.pop(path, None)
        self._pipeline_text.pop(path, None)
        self._sys_path_entries.pop(path, None)
        self._stamps.pop(path, None)
        _DIGESTS.pop(path, None)
        self._reachable.clear()
        exists = path in self._overlays or path.exists()
        if self._files is not None and exists != (path in self._files):
            self._files = None  # a file created or deleted: list the project and resolve imports again
            _module_file.cache_clear()
            _enclosing_package_parent.cache_clear()  # a new or removed __init__.py moves a package's root
            _is_root_package.cache_clear()
            self._importers = None
        elif self._importers is not None and path in self._file_order:
            if known is not None:
                self._leave_importer_lists(path, known[1])
            elif path not in self._stale_importers:
                self._importers = None  # its edges were never read: build the map again

    def _leave_importer_lists(self, path: Path, imported: List[Path]) -> None:
        importers = self._importers
        assert importers is not None
        for target in imported:
            found = importers.get(target)
            if found is not None and path in found:
                found.remove(path)
                if not found:
                    del importers[target]
        self._stale_importers.add(path)

    def affected_by(self, path: Path) -> Set[Path]:
        """The modules whose findings may depend on ``path``'s content (``dependents``)."""
        return dependents(_resolved(path), self.dependencies, self.importers_of)

    # -- files and edges ------------------------------------------------------------------------
    def files(self) -> List[Path]:
        """Every Python file and notebook under the root (bounded: an empty list past MAX_PROJECT_FILES)."""
        if self._files is None:
            # Too big to scan on every check: modules imported still resolve, importers do not.
            self._files = [Path(found) for found in walk_files(str(self.root), _SUFFIXES, MAX_PROJECT_FILES) or ()]
        return self._files

    def mentions(self, name: str, path: Path) -> Optional[int]:
        """How often ``name`` occurs as a word in ``path`` and the files of its ``neighbourhood``: a call,
        an import, a ``getattr(obj, "name")``, a comment. Only there: the results cache and the workspace
        key a file's findings by those files' texts (``neighbourhood_digest``), so an answer read from any
        other file would leave a finding stale when that file changes. None when the project is too big
        to list (its importers are then unknown)."""
        if not self.files():
            return None
        path = _resolved(path)
        total = 0
        for file in sorted({path} | neighbourhood(path, self.dependencies, self.importers_of)):
            words = self._words.get(file)
            if words is None:
                words = self._words[file] = Counter(_WORD.findall(self.text_of(file)))
            total += words[name]
        return total

    @property
    def distributed(self) -> bool:
        """The project is packaged for others to install (``setup.py``, ``setup.cfg``, or a
        ``pyproject.toml`` with a ``[project]`` or Poetry table): its public functions have callers out of sight.
        Asked again after one of those files changed, it reads them again (a long-lived workspace); the
        results caches key findings by the answer, since no file's neighbourhood covers them."""
        stamps = tuple(_stamp(self.root / name) for name in _PACKAGING_FILES)
        if self._packaging is None or self._packaging[0] != stamps:
            self._packaging = (stamps, self._packaged())
        return self._packaging[1]

    def _packaged(self) -> bool:
        if (self.root / "setup.py").exists() or (self.root / "setup.cfg").exists():
            return True
        pyproject = self.root / "pyproject.toml"
        text = read_text(pyproject) if pyproject.exists() else ""
        return "[project]" in text or "[tool.poetry]" in text

    def imports_of(self, path: Path) -> List[ImportRef]:
        """A file's imports, read once and kept until the file is ``forget``-ten (changed)."""
        known = self._scans.get(path)
        if known is None:
            text = self.text_of(path)
            if path.suffix == ".ipynb":
                text = notebook_code(text)
            known = self._scans[path] = imports_in_text(text) if "import" in text else []
            self._sys_path_entries[path] = _added_to_sys_path(text)  # the same read, for `_module_file`
        return known

    def remember_imports(self, path: Path, refs: List[ImportRef], dependencies: Optional[List[Path]] = None) -> None:
        """A file's imports known without reading it here (the results cache's manifest, or bytes the
        caller has just read; the first-party ones are enough), and where they lead when known:
        ``imports_of`` then reads nothing, ``dependencies`` resolves nothing. Ignored when the file's
        imports are known already."""
        if path not in self._scans:
            self._scans[path] = refs
            if dependencies is not None:
                self._dependencies[path] = (refs, list(dependencies))

    def dependencies(self, path: Path) -> List[Path]:
        """The first-party modules ``path`` imports, directly."""
        refs = self.imports_of(path)
        known = self._dependencies.get(path)
        if known is not None and known[0] is refs:
            return known[1]
        self._dependencies[path] = (refs, self.leads_to(path, refs)[0])
        return self._dependencies[path][1]

    def leads_to(self, importer: Path, refs: Sequence[ImportRef]) -> Tuple[List[Path], List[ImportRef]]:
        """The first-party files a file's imports lead to (each once), and the imports that lead there."""
        found: Dict[Path, None] = {}
        kept: List[ImportRef] = []
        for ref in refs:
            leads = False
            for name in ref.names or ("",):
                target = self.resolve(importer, ref.module, ref.level, name or None)
                if target is not None and target[0] != importer:
                    found[target[0]] = None
                    leads = True
            if leads:
                kept.append(ref)
        return list(found), kept

    def has_edges(self, path: Path) -> bool:
        """The file imports a first-party module or is imported by one: worth reading as part of a project."""
        path = _resolved(path)
        return bool(self.dependencies(path) or self.importers_of(path))

    def importers_of(self, path: Path) -> List[Path]:
        """The project files that import ``path`` directly."""
        if self._importers is None:
            files = self.files()
            self._importers = importer_map(files, self.dependencies)
            self._file_order = {file: index for index, file in enumerate(files)}
            self._stale_importers.clear()
        elif self._stale_importers:
            for file in self._stale_importers:
                for target in self.dependencies(file):
                    insort(self._importers.setdefault(target, []), file, key=self._file_order.__getitem__)
            self._stale_importers.clear()
        return self._importers.get(_resolved(path), [])

    def mentions_pipelines(self, path: Path) -> bool:
        """A cheap test before modelling a module for its pipelines: does its text mention tf.data at all."""
        known = self._pipeline_text.get(path)
        if known is None:
            known = self._pipeline_text[path] = may_hold_pipelines(self.text_of(path))
        return known

    def importers_using(self, path: Path, names: FrozenSet[str]) -> List[Path]:
        """The importers of ``path`` that take one of ``names`` from it (by name, or all public names
        with ``import *``), or the module itself (then its text must mention ``.name``)."""
        path = _resolved(path)
        found = []
        for importer in self.importers_of(path):
            text = None
            for ref in self.imports_of(importer):
                for name in ref.names or ("",):
                    target = self.resolve(importer, ref.module, ref.level, name or None)
                    if target is None or target[0] != path:
                        continue
                    if target[1] == STAR:
                        hit = any(not name.startswith("_") for name in names)  # what `import *` takes
                    elif target[1] is not None:
                        hit = target[1] in names
                    else:
                        text = self.text_of(importer) if text is None else text
                        hit = any(f".{name}" in text for name in names)
                    if hit and importer not in found:
                        found.append(importer)
        return found

    def reaches(self, start: Path, goal: Path) -> bool:
        """``start`` imports ``goal`` within CYCLE_DEPTH hops (text-level edges)."""
        reachable = self._reachable.get(start)
        if reachable is None:
            seen: Set[Path] = set()
            frontier = [start]
            for _ in range(CYCLE_DEPTH):
                frontier = [dep for file in frontier for dep in self.dependencies(file) if dep not in seen]
                seen.update(frontier)
            reachable = self._reachable[start] = frozenset(seen)
        return goal in reachable

    def neighbourhood_digest(self, path: Path) -> str:
        """A digest of the files in ``path``'s ``neighbourhood``: part of the cache key, so changing a
        helper re-checks the modules that use it, and only those."""
        around = neighbourhood(_resolved(path), self.dependencies, self.importers_of)
        return digest_of_files([str(file) for file in around], lambda file: self.digest_of(Path(file)))

    # -- names ------------------------------------------------------------------------------------
    def resolve(self, importer: Path, module: str, level: int, name: Optional[str] = None
                ) -> Optional[Tuple[Path, Optional[str]]]:
        """Where ``from <level dots><module> import <name>`` (or ``import <module>``) leads: the module's
        file and the name to look up in it (None when the import names a module itself; ``"*"`` for
        ``import *``, which names no submodule)."""
        if level == 0 and module.split(".")[0] in _NOT_FIRST_PARTY:
            return None
        if name is not None and name != STAR:
            submodule = self._module_file(importer, f"{module}.{name}" if module else name, level)
            if submodule is not None:
                return submodule, None
        if not module and level == 0:
            return None
        found = self._module_file(importer, module, level)
        return (found, name) if found is not None else None

    def _module_file(self, importer: Path, module: str, level: int) -> Optional[Path]:
        found = _module_file(self.root, _resolved(importer).parent, module, level)
        if found is None and not level:
            # `sys.path.append("..")` then `import d2lzh_tensorflow2`: a notebook in `code/chapter09/`
            # runs in its own directory and puts `code/` on the path for the helper package there.
            for extra in self._sys_path_entries_of(importer):
                found = _module_file(self.root, Path(os.path.normpath(_resolved(importer).parent / extra)), module, 0)
                if found is not None:
                    break
        return found

    def _sys_path_entries_of(self, importer: Path) -> List[str]:
        """The relative directories the importer's text puts on ``sys.path``: found when its imports are
        scanned, else read once (asked for every import that does not resolve otherwise: numpy's...)."""
        entries = self._sys_path_entries.get(importer)
        if entries is None:
            text = self.text_of(importer)
            entries = self._sys_path_entries[importer] = _added_to_sys_path(
                notebook_code(text) if importer.suffix == ".ipynb" and "sys.path" in text else text)
        return entries


# `sys.path.append("..")`, `sys.path.insert(0, '../..')`: a relative directory written as a literal.
_SYS_PATH = re.compile(r"""sys\.path\.(?:append\(|insert\(\s*\d+\s*,)\s*[rR]?(['"])(\.{1,2}(?:/\.\.)*/?)\1\s*\)""")


def _added_to_sys_path(text: str) -> List[str]:
    """The relative directories (``..``, ``../..``) the module's text puts on ``sys.path`` as literals."""
    return list(dict.fromkeys(match.group(2) for match in _SYS_PATH.finditer(text))) if "sys.path" in text else []


@lru_cache(maxsize=65536)
def _resolved(path: Path) -> Path:
    return path.resolve()


@lru_cache(maxsize=65536)
def _module_file(root: Path, directory: Path, module: str, level: int) -> Optional[Path]:
    # Plain string paths: this runs for every import of every file, and pathlib's objects cost more
    # than the file system calls.
    if level:
        base = str(directory)
        for _ in range(level - 1):
            base = os.path.dirname(base)
        bases: Sequence[str] = (base,)
    else:
        bases = tuple(dict.fromkeys((str(directory), str(root), os.path.join(root, "src"))
                                    + _enclosing_package_parent(str(root), str(directory), module.split(".")[0])))
    relative = os.path.join(*module.split(".")) if module else ""
    for base in bases:
        found = _file_under(str(root), base, relative, bool(module))
        if found is not None:
            return found
    head, _, rest = module.partition(".")
    if not level and _is_root_package(str(root), head):
        # `from albert import classifier_utils` in a clone of google-research/albert, whose root is the
        # package itself: its scripts run with the clone's parent on `sys.path`.
        return _file_under(str(root), str(root), os.path.join(*rest.split(".")) if rest else "", bool(rest))
    return None


def _file_under(root: str, base: str, relative: str, module: bool) -> Optional[Path]:
    """``relative`` as a module (``.py``) or a package (``__init__.py``) under ``base``, inside ``root``."""
    candidate = os.path.join(base, relative) if relative else base
    for file in (candidate + ".py" if module else None, os.path.join(candidate, "__init__.py")):
        if file is not None and os.path.isfile(file):
            resolved = os.path.realpath(file)
            if resolved.startswith(root.rstrip(os.sep) + os.sep):
                return Path(resolved)
    return None


@lru_cache(maxsize=4096)
def _is_root_package(root: str, head: str) -> bool:
    """The project's root directory is a package (it holds ``__init__.py``) that ``import <head>`` names:
    the directory is called ``head``, as a clone is called after its repository (``albert/``), or
    ``owner+head`` as the real-code trees call theirs."""
    if not head or not os.path.isfile(os.path.join(root, "__init__.py")):
        return False
    name = os.path.basename(root.rstrip(os.sep))
    return head in (name, name.rsplit("+", 1)[-1])


@lru_cache(maxsize=65536)
def _enclosing_package_parent(root: str, directory: str, head: str) -> Tuple[str, ...]:
    """Where ``import <head>...`` finds the package the importing file is in: the parent of the nearest
    ancestor package named ``head`` (below the root). ``from object_detection.utils import x`` in
    ``research/object_detection/core/y.py`` runs with ``research/`` on ``sys.path``, as the project's
    scripts are run; the root is often above it (a vendor's copy of the package in a larger tree)."""
    if not head:
        return ()
    inside = root.rstrip(os.sep) + os.sep
    current = directory
    while current.startswith(inside):
        if os.path.basename(current) == head and os.path.isfile(os.path.join(current, "__init__.py")):
            return (os.path.dirname(current),)
        current = os.path.dirname(current)
    return ()


def read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""


_DIGESTS: Dict[Path, Tuple[Tuple[int, int], bytes]] = {}


_PACKAGING_FILES = ("setup.py", "setup.cfg", "pyproject.toml")


def _stamp(path: Path) -> Optional[Tuple[int, int]]:
    try:
        status = path.stat()
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def _file_digest(path: Path) -> bytes:
    """The file's content digest, read again only when its size or modification time changed."""
    try:
        status = path.stat()
        stamp = (status.st_mtime_ns, status.st_size)
        known = _DIGESTS.get(path)
        if known is not None and known[0] == stamp:
            return known[1]
        digest = hashlib.blake2b(path.read_bytes(), digest_size=16).digest()
    except OSError:
        return b"missing"
    _DIGESTS[path] = (stamp, digest)
    return digest


_PROJECTS: Dict[Path, Project] = {}


def project_for(path: Path, fallback_root: Optional[Path] = None) -> Project:
    """The run's shared Project for the file at ``path``."""
    path = path.resolve()
    root = run_project_root(path, fallback_root)
    project = _PROJECTS.get(root)
    if project is None:
        project = _PROJECTS[root] = Project(root)
    return project


def forget_index() -> None:
    """Drop every memoised project and path (files changed: a watch loop, a test)."""
    _PROJECTS.clear()
    _DIGESTS.clear()
    _marked_ancestor.cache_clear()
    _module_file.cache_clear()
    _enclosing_package_parent.cache_clear()
    _resolved.cache_clear()
