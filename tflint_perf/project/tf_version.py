"""Which TensorFlow a project depends on, when `target-version` is not configured.

As ruff reads `requires-python`, this reads the lower bound of the TensorFlow requirement from the
nearest dependency files above a checked file: `pyproject.toml` (PEP 621 dependencies and optional
dependencies, Poetry), `setup.cfg`, `setup.py` (parsed with `ast`, never run), `requirements*.txt`,
`environment.yml` and Dockerfiles (``dockerfile.py``: `pip install tensorflow==X` in a `RUN`, `FROM
tensorflow/tensorflow:X`). The search stops at the project root (a directory holding `.git`,
`pyproject.toml`, `setup.py` or `setup.cfg`). `tensorflow>=2.12,<3` gives 2.12; `tensorflow==1.15`
1.15; `tensorflow` with no version, or no requirement at all, gives nothing: rules then say which
versions a finding holds for. In one directory the packaging metadata decides when it names
TensorFlow; otherwise the lowest bound of its requirements, environment and Dockerfiles does (a CPU and a GPU pin side by
side: the code runs on both).

A notebook's own declaration (``notebook_version.py``) comes first when it installs a pinned
TensorFlow (that is what the notebook runs on); the saved output of ``tf.__version__`` (where it last
ran) counts only where no dependency file declares TensorFlow.

A ``VersionSearch`` answers for every directory of a run: each directory's dependency files are
listed and read once, whichever file asks (the files of one directory, and the directories of one
project, share the answer). It can remember each dependency file's bound by its stat between runs
(the results cache keeps it), so a warm run reads none of them; a notebook's own declaration is
remembered the same way.

A notebook that declares nothing, where no dependency file does either, takes the TensorFlow its
sibling notebooks declare (``sibling_version``): the notebooks of one course or book directory are
written for one TensorFlow, and many declare it in one notebook and not the next (the S+P course
notebooks of dlaicourse install ``tf-nightly-2.0-preview`` or printed ``2.0.0-beta1`` in half of
them). It takes at least two siblings that declare one and the same minor version: a lone
declaration may be that notebook's own need (one migration guide pinning 2.9 among twenty), and
siblings that disagree (a tutorial series run on 1.1 to 2.1 over the years) say nothing.

Where its directory says nothing either, it takes what the notebooks of its whole project declare
(``project_version``): a course or a book keeps its notebooks in chapter or week folders and shows
its TensorFlow in some of them, not in the one at hand (dlaicourse's first lessons declare nothing;
29 of its week notebooks select Colab's 2.x, others printed 2.0.0-beta1). Only what the notebooks
ran on counts there (saved outputs of ``tf.__version__``, Colab's ``%tensorflow_version``): a pinned
install far from the notebook at hand is that notebook's own need (tensorflow/docs' migration
guides pin 2.9, 2.10 and 2.11 among 185 notebooks for the current TensorFlow). It takes at least
two such notebooks (or, in a project of at most ``_ONE_BOOK`` notebooks, one book, a single printed
version: Packt's TF 2.0 Quick Start Guide printed 2.0.0-alpha0 in Chapter 1 alone), of which at least three in four name one major version, and answers the
oldest they name (a requirement's lower bound: what the course must run on); Colab's 2.x counts for
TensorFlow 2, but its 2.0 is the answer only where no notebook printed a 2.x version (the line was
copied into notebooks run on later releases: one such copy must not make a 2.8 course 2.0). A minority of the
other major (one TensorFlow 1 notebook kept from an earlier edition) does not speak for the rest;
a project split between majors says nothing. As the siblings', the answer is a guess about the
notebook, which TensorFlow 1 code in the notebook outranks.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from tflint_perf.project.dockerfile import dockerfile_requirements, is_dockerfile
from tflint_perf.project.index import run_project_root, walk_files
from tflint_perf.project.notebook_version import notebook_version
from tflint_perf.project.requirement import Version, lower_bound

NOTEBOOK_SUFFIX = ".ipynb"

_ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
_PACKAGING_FILES = ("pyproject.toml", "setup.cfg", "setup.py")  # read before any requirements file, in this order
_MAX_LEVELS = 12
# Siblings of a notebook read for their declarations: a directory of more is a dump, not one course.
_MAX_SIBLINGS = 64
_MIN_SIBLINGS = 2  # declaring siblings needed: one may be that notebook's own need
_MAX_PROJECT_NOTEBOOKS = 512  # notebooks of a project read for its consensus: more is a collection of projects
# A project of at most this many notebooks is one book or course: one notebook's printed version (where the
# book ran) speaks for the rest when no other notebook declares one.
_ONE_BOOK = 32
_PROJECT_MAJORITY = 0.75  # share of the declaring notebooks that must name one major version
# A file modified this recently may be modified again within the file system's timestamp granularity
# without its stat changing: its bound is not remembered by stat (as git treats "racily clean" files).
RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class InferredVersion:
    version: Version
    source: Path  # the file the requirement was read from (or the notebook that declares its own)
    evidence: Optional[str] = None  # for a notebook: what it shows ("installs `tensorflow==2.0.0`")
    # A notebook's saved output of `tf.__version__` only: where it last ran, which the dependency files
    # of its directory outrank (an install in the notebook outranks them: it is what the notebook runs).
    saved_output: bool = False
    # Only what the notebook's siblings declare (``VersionSearch.sibling_version``): a guess about the
    # notebook, which the notebook's own code outranks when it runs only on TensorFlow 1.
    from_siblings: bool = False
    # Only Colab's `%tensorflow_version 2.x` (``NotebookVersion.colab_selection``): a printed version outranks it.
    colab_selection: bool = False

    def describe(self) -> str:
        return f"{self.version[0]}.{self.version[1]} (inferred from {self.where()})"

    def where(self) -> str:
        """The source as ``target_version_source`` says it: the file, and for a notebook what it shows."""
        return f"{self.source}: {self.evidence}" if self.evidence else str(self.source)


def infer_tensorflow_version(directory: Path) -> Optional[InferredVersion]:
    """The TensorFlow lower bound the project around ``directory`` declares, if any."""
    return _infer(str(directory.resolve()))


def infer_for_file(path: Path, run_root: Optional[Path] = None) -> Optional[InferredVersion]:
    """The TensorFlow a file runs on: a notebook's as ``VersionSearch.for_notebook`` answers it (the
    run's answer: ``run_root``, the directory the command runs in, is an unmarked project's root), else
    its project's dependency files' (a directory given as ``path`` is searched from itself)."""
    if path.suffix == NOTEBOOK_SUFFIX:
        return VersionSearch().for_notebook(os.path.realpath(path), run_root)
    return infer_tensorflow_version(path.parent if path.suffix else path)


@lru_cache(maxsize=1024)  # per directory: every file of a project asks the same few
def _infer(directory: str) -> Optional[InferredVersion]:
    return VersionSearch().infer(directory)


@dataclass(frozen=True)
class _ProjectNotebooks:
    """The notebooks of a project that show where they ran (by real path), and how many it holds."""
    declared: List[Tuple[str, InferredVersion]]
    count: int


class VersionSearch:
    """The search, with each directory's answer kept: one per run (or per process for the one-file
    entry points). ``stamps`` maps a dependency file's path to ``[mtime_ns, size, bound]`` (bound:
    ``[major, minor]`` or None), as remembered by an earlier run; a file whose stat matches is not read."""

    def __init__(self, stamps: Optional[Dict[str, list]] = None) -> None:
        self.stamps: Dict[str, list] = dict(stamps or {})
        self.read: List[str] = []  # the dependency files this search read (their stat did not match)
        self._declared: Dict[str, Optional[InferredVersion]] = {}
        self._is_root: Dict[str, bool] = {}
        self._listed: Dict[str, Optional[Set[str]]] = {}
        self._siblings: Dict[str, List[Tuple[str, InferredVersion]]] = {}
        self._projects: Dict[str, _ProjectNotebooks] = {}
        self._started = time.time_ns()

    def infer(self, directory: str) -> Optional[InferredVersion]:
        """As ``infer_tensorflow_version`` for a directory given as its real path."""
        current = Path(directory)
        for _ in range(_MAX_LEVELS):
            key = str(current)
            found = self._declared[key] if key in self._declared else self._declare(key, current)
            if found is not None:
                return found
            root = self._is_root.get(key)
            if root is None:
                names = self._names(key)
                root = self._is_root[key] = any(
                    (names is None or marker in names) and (current / marker).exists() for marker in _ROOT_MARKERS)
            if root or current.parent == current:
                return None
            current = current.parent
        return None

    def for_notebook(self, real: str, run_root: Optional[Path] = None) -> Optional[InferredVersion]:
        """The TensorFlow the notebook at ``real`` (a real path) runs on: a pinned install of its own;
        else its directory's dependency files; else its saved output (or Colab selection); else what its
        sibling notebooks agree on; else what its project's notebooks agree on (the project around it:
        ``run_project_root``). The one order of every entry point: a run, --show-settings, flake8, the server."""
        own = self.notebook(real)
        if own is not None and not own.saved_output:
            return own
        return (self.infer(os.path.dirname(real)) or own or self.sibling_version(real)
                or self.project_version(real, str(run_project_root(Path(real), run_root))))

    def notebook(self, real: str) -> Optional[InferredVersion]:
        """The TensorFlow the notebook at ``real`` (a real path) declares in its own cells, if any,
        remembered by its stat as a dependency file's bound is."""
        remembered = self._remembered(real)
        bound, detail = remembered if remembered is not None else self._remember(real, _read_notebook)
        if bound is None or detail is None:
            return None
        return InferredVersion(bound, Path(real), str(detail[0]), bool(detail[1]), colab_selection=bool(detail[2]))

    def sibling_version(self, real: str) -> Optional[InferredVersion]:
        """The TensorFlow the other notebooks of ``real``'s directory declare (installs or saved
        outputs), when at least two do and all name the same minor version; None otherwise."""
        directory, name = os.path.split(real)
        declared = [found for other, found in self._declaring_notebooks(directory) if other != name]
        versions = {found.version for found in declared}
        if len(declared) < _MIN_SIBLINGS or len(versions) != 1:
            return None
        first = declared[0]
        evidence = (f"{len(declared)} notebooks beside it declare {first.version[0]}.{first.version[1]}, as "
                    f"{first.source.name} {first.evidence}")
        return InferredVersion(first.version, Path(real), evidence, saved_output=True, from_siblings=True)

    def project_version(self, real: str, top: str) -> Optional[InferredVersion]:
        """The oldest TensorFlow the notebooks of the project under ``top`` declare (``real`` aside),
        when at least two declare and three in four of them name one major version (the module's
        docstring says why); None otherwise. A Colab selection of 2.x votes for the major, but its
        2.0 is the answer only where no notebook of that major printed its version: the line was
        copied into notebooks that ran on later releases."""
        notebooks = self._project_notebooks(top)
        declared = [found for path, found in notebooks.declared if path != real]
        if len(declared) < _MIN_SIBLINGS and not self._lone_printed(declared, notebooks.count):
            return None
        majors: Dict[int, List[InferredVersion]] = {}
        for found in declared:
            majors.setdefault(found.version[0], []).append(found)
        major = max(majors.values(), key=len)
        if len(major) < _PROJECT_MAJORITY * len(declared):
            return None
        printed = [found for found in major if not found.colab_selection]
        oldest = min(printed or major, key=lambda found: found.version)
        evidence = (f"{len(major)} of the {len(declared)} notebooks of the project that declare a TensorFlow name "
                    f"{oldest.version[0]}.x, the oldest {oldest.version[0]}.{oldest.version[1]}: "
                    f"{os.path.relpath(oldest.source, top)} {oldest.evidence}")
        return InferredVersion(oldest.version, Path(real), evidence, saved_output=True, from_siblings=True)

    @staticmethod
    def _lone_printed(declared: List[InferredVersion], count: int) -> bool:
        """One notebook of a small project (one book: Packt's TF 2.0 Quick Start Guide prints
        `2.0.0-alpha0` in Chapter 1 only, its other 19 notebooks declare nothing) printed the version it
        ran on: the book was written on that TensorFlow. A Colab selection alone may be that notebook's
        own line, and a project of many notebooks may be many books."""
        return len(declared) == 1 and not declared[0].colab_selection and count <= _ONE_BOOK

    def _project_notebooks(self, top: str) -> "_ProjectNotebooks":
        """The notebooks under ``top`` that show the TensorFlow they ran on (a saved output, Colab's
        magic; not a pin), by real path, read once per project; found by the project index's walk
        (``walk_files``: the directories it skips, and its bound on directories), and none when the
        project holds more than ``_MAX_PROJECT_NOTEBOOKS`` or more directories than that bound."""
        if top not in self._projects:
            found: List[Tuple[str, InferredVersion]] = []
            paths = walk_files(top, (NOTEBOOK_SUFFIX,), _MAX_PROJECT_NOTEBOOKS)
            for path in paths or ():
                declared = self.notebook(os.path.realpath(path))
                if declared is not None and declared.saved_output:  # where it ran, not a pin of its own
                    found.append((os.path.realpath(path), declared))
            count = len(paths) if paths is not None else _MAX_PROJECT_NOTEBOOKS + 1  # too many to walk
            self._projects[top] = _ProjectNotebooks(found, count)
        return self._projects[top]

    def _declaring_notebooks(self, directory: str) -> List[Tuple[str, InferredVersion]]:
        """The notebooks of a directory that declare a TensorFlow, by name (read once per directory)."""
        if directory not in self._siblings:
            names = self._names(directory) or set()
            notebooks = sorted(name for name in names if name.endswith(NOTEBOOK_SUFFIX))
            found: List[Tuple[str, InferredVersion]] = []
            if len(notebooks) <= _MAX_SIBLINGS:
                for name in notebooks:
                    declared = self.notebook(os.path.join(directory, name))
                    if declared is not None:
                        found.append((name, declared))
            self._siblings[directory] = found
        return self._siblings[directory]

    def _names(self, key: str) -> Optional[Set[str]]:
        """The names in a directory, listed once (None when it cannot be listed: then each is asked)."""
        if key not in self._listed:
            try:
                self._listed[key] = set(os.listdir(key))
            except OSError:
                self._listed[key] = None
        return self._listed[key]

    def _declare(self, key: str, directory: Path) -> Optional[InferredVersion]:
        """The packaging metadata's bound (``pyproject.toml``, ``setup.cfg``, ``setup.py``, in that order)
        when it declares one; else the lowest of the requirements and environment files': yolov3-tf2's
        ``requirements.txt`` pins ``tensorflow==2.11.1`` beside ``requirements-gpu.txt``'s
        ``tensorflow-gpu==2.12.0``, and the code runs on both."""
        found = None
        names = self._names(key)
        for path in _dependency_files(directory) if names is None else _listed_dependency_files(directory, names):
            bound = self._bound(path)
            if bound is None or (found is not None and found.version <= bound):
                continue
            found = InferredVersion(bound, path)
            if path.name in _PACKAGING_FILES:
                break
        self._declared[key] = found
        return found

    def _bound(self, path: Path) -> Optional[Version]:
        """The lowest TensorFlow bound the file declares, remembered by its stat."""
        name = str(path)
        remembered = self._remembered(name)
        if remembered is not None:
            return remembered[0]
        return self._remember(name, _read_dependency_file)[0]

    def _remembered(self, name: str) -> Optional[Tuple[Optional[Version], Optional[list]]]:
        """What an earlier run read from the file (its bound, and for a notebook what it shows), when
        its stat still matches: ``[mtime_ns, size, bound]``, or ``[mtime_ns, size, bound, [evidence,
        saved_output, colab_selection]]`` for a notebook."""
        known = self.stamps.get(name)
        if not isinstance(known, list) or len(known) not in (3, 4):
            return None
        try:
            status = os.stat(name)
        except OSError:
            return None
        if known[:2] != [status.st_mtime_ns, status.st_size]:
            return None
        bound = known[2]
        detail = known[3] if len(known) == 4 else None
        if detail is not None and not (isinstance(detail, list) and len(detail) == 3 and isinstance(detail[0], str)):
            return None
        if bound is None:
            return None, detail
        if isinstance(bound, list) and len(bound) == 2 and all(type(part) is int for part in bound):
            return (bound[0], bound[1]), detail
        return None

    def _remember(self, name: str, read: "Reader") -> Tuple[Optional[Version], Optional[list]]:
        """Read the file (``read`` gives its bound, and a notebook's detail) and remember the answer by its stat."""
        try:
            status: Optional[os.stat_result] = os.stat(name)
        except OSError:
            status = None
        self.read.append(name)
        try:
            text = Path(name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            self.stamps.pop(name, None)
            return None, None
        bound, detail = read(Path(name), text)
        if status is not None and status.st_mtime_ns < self._started - RACY_NS:
            stamp = [status.st_mtime_ns, status.st_size, list(bound) if bound else None]
            self.stamps[name] = stamp + [detail] if detail is not None else stamp
        else:
            self.stamps.pop(name, None)
        return bound, detail


Reader = Callable[[Path, str], Tuple[Optional[Version], Optional[list]]]


def _read_dependency_file(path: Path, text: str) -> Tuple[Optional[Version], Optional[list]]:
    bounds = [bound for bound in map(lower_bound, _requirements(path, text)) if bound is not None]
    return (min(bounds) if bounds else None), None


def _read_notebook(path: Path, text: str) -> Tuple[Optional[Version], Optional[list]]:
    found = notebook_version(text)
    return (None, None) if found is None else (found.version, [found.evidence, found.saved_output, found.colab_selection])


def _dependency_files(directory: Path) -> Iterator[Path]:
    for name in _PACKAGING_FILES:
        if (directory / name).is_file():
            yield directory / name
    try:
        # The name first: a stat only for the few names that can be dependency files.
        extra = sorted(p for p in directory.iterdir() if _is_requirements_or_environment(p.name) and p.is_file())
    except OSError:
        return
    yield from extra


def _listed_dependency_files(directory: Path, names: Set[str]) -> Iterator[Path]:
    """``_dependency_files`` of a directory whose names are known: a stat only for the candidates."""
    for name in _PACKAGING_FILES:
        if name in names and (directory / name).is_file():
            yield directory / name
    yield from sorted(directory / name for name in names if _is_requirements_or_environment(name)
                      and (directory / name).is_file())


def _is_requirements_or_environment(name: str) -> bool:
    return ((name.startswith("requirements") and name.endswith(".txt")) or name in ("environment.yml", "environment.yaml")
            or is_dockerfile(name))


def _requirements(path: Path, text: str) -> Iterable[str]:
    if path.name == "pyproject.toml":
        return _pyproject_requirements(text)
    if path.name == "setup.py":
        return _setup_py_requirements(text)
    if is_dockerfile(path.name):
        return dockerfile_requirements(text)
    if path.name.startswith("environment."):
        # `- tensorflow=2.6` (conda) or `- tensorflow>=2.6` under pip:
        return (re.sub(r"^[\s-]*", "", line).replace("=", "==", 1) if re.search(r"[^<>=!~]=[^=]", line) else
                re.sub(r"^[\s-]*", "", line) for line in text.splitlines())
    return text.splitlines()  # requirements*.txt, setup.cfg's install_requires lines


def _pyproject_requirements(text: str) -> List[str]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    project = data.get("project", {})
    found = list(project.get("dependencies", []))
    for group in project.get("optional-dependencies", {}).values():
        found.extend(group)
    poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {})
    for name, spec in poetry.items():
        version = spec.get("version", "") if isinstance(spec, dict) else str(spec)
        found.append(f"{name}{_poetry_spec(version)}")
    return [item for item in found if isinstance(item, str)]


def _poetry_spec(version: str) -> str:
    version = version.strip()
    if version.startswith(("^", "~")):
        return ">=" + version.lstrip("^~=")
    if version and version[0].isdigit():
        return "==" + version
    return version


def _setup_py_requirements(text: str) -> List[str]:
    import ast  # only for a setup.py not read before

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def forget_inferred_versions() -> None:
    """Forget each directory's answer: a dependency file changed (the language server reloads)."""
    _infer.cache_clear()
