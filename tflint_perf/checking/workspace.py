"""A project kept in memory between checks: its index, its modules' models and their results.

One ``Workspace`` per project root and process (``workspace_for``). It holds the project index (which
files import which, ``project/index.py``), the session of module models (``project/session.py``: each
module parsed and analysed once, every module resolving another's names to the same objects) and the
diagnostics of each check, keyed by everything that decides them: the text, the texts around it in
the project (``Project.neighbourhood_digest``), the settings and the selected codes.

Life cycle:

- *create*: ``workspace_for(path)`` finds the project root above a file and makes its workspace on
  first use. The command line uses one for a run (its results cache keeps the results between runs),
  ``--watch`` keeps it between changes, the flake8 plugin keeps one per process.
- *update*: ``update(path, text)`` makes ``text`` the module's content without touching the disk (an
  editor's buffer; None goes back to the file). ``refresh()`` notices files edited on disk by their
  stat. Either drops the models of the modules whose findings may depend on that file (itself, what
  it imports, its importers two levels up: ``Project.affected_by``) and nothing else.
- *check*: ``check_text`` reuses every model and result that the change did not touch.
- *re-parse*: the last parse of each of ``MAX_BUFFERS`` files is kept, so that a file's next text (an editor's
  edit, ``--fix``'s next pass) is parsed by the top-level statements that changed (``text/incremental.py``).
- *evict*: memory is bounded by counts: at most ``project.index.MAX_MODULES`` models (least recently built first),
  ``MAX_RESULTS`` results (least recently used first; ``RESULTS_PER_FILE`` of each file), ``MAX_BUFFERS`` parses
  and ``MAX_WORKSPACES`` projects per process.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Dict, FrozenSet, Hashable, Iterable, List, Optional, Set, Tuple

from tflint_perf.checking.config import Settings
from tflint_perf.checking import engine
from tflint_perf.project.index import Project, forget_index, project_for
from tflint_perf.project.session import Session, forget_trees
from tflint_perf.text.diagnostics import Diagnostic
from tflint_perf.text.incremental import Buffer

MAX_RESULTS = 4096  # checks remembered per workspace (a result is a few diagnostics: small)
# Results remembered per file: an editor's undo and redo find theirs, and a long editing session does not keep
# one result per keystroke (tens of KiB each for a large file with many findings) until MAX_RESULTS.
RESULTS_PER_FILE = 4
MAX_WORKSPACES = 8  # projects kept per process (a language server has one per workspace folder)
# Files whose last parse is kept for an incremental re-parse of their next text (text/incremental.py): an
# editor's open buffers, and the file ``--fix`` is fixing. One tree each.
MAX_BUFFERS = 16


class Workspace:
    """One project's modules, models and results, kept between checks and updated file by file."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.session = Session(project, engine.parse_first_party)
        self._results: "OrderedDict[Hashable, List[Diagnostic]]" = OrderedDict()
        self._keys_of_file: Dict[Hashable, "OrderedDict[Hashable, None]"] = {}
        self.checks_run = 0  # checks that ran the rules (not served from memory)
        self._standalone: Counter = Counter()  # modules with no first-party edge, modelled on their own
        self._buffers: "OrderedDict[Tuple[str, str], Buffer]" = OrderedDict()

    @property
    def root(self) -> Path:
        return self.project.root

    def builds(self) -> Counter:
        """How often each module was modelled in this workspace: an unchanged module's count stays put."""
        return self.session.builds + self._standalone

    # -- update -----------------------------------------------------------------------------------
    def update(self, path: Path, text: Optional[str]) -> Set[Path]:
        """Make ``text`` the content of the module at ``path`` (None: the file on disk again); returns
        the modules whose models were dropped because their findings may depend on it."""
        affected = self.project.set_overlay(path, text)
        self._drop(affected)
        return affected

    def refresh(self, paths: Optional[Iterable[Path]] = None) -> Set[Path]:
        """Take in files changed on disk: ``paths`` when the caller knows them (a file watcher), else
        every file read so far whose stat changed. Returns the modules whose models were dropped."""
        changed = [Path(p).resolve() for p in paths] if paths is not None else self.project.changed_on_disk()
        affected: Set[Path] = set()
        for path in changed:
            before = self.project.affected_by(path)
            self.project.forget(path)
            affected |= before | self.project.affected_by(path)
        self._drop(affected)
        return affected

    def _drop(self, affected: Set[Path]) -> None:
        if affected:
            self.session.forget(affected)
        # Results need no dropping: their keys hold the texts they were computed from.

    # -- check ------------------------------------------------------------------------------------
    def check_text(self, text: str, filename: str, settings: Settings, codes: Optional[Set[str]] = None,
                   path: Optional[Path] = None, apply_noqa: bool = True, tree=None) -> List[Diagnostic]:
        """``engine.check_text`` in this project: the module is read with its first-party neighbours,
        and a check whose inputs are all unchanged is answered from memory. Raises as the engine does."""
        session = self.session if path is not None and self.project.has_edges(path) else None
        key = self._key(text, filename, settings, codes, path, apply_noqa, session is not None)
        known = self._results.get(key)
        if known is not None:
            self._results.move_to_end(key)
            return list(known)
        self.checks_run += 1
        if session is None:
            self._standalone[path] += 1
        diagnostics = engine.check_text(text, filename, settings, codes, apply_noqa=apply_noqa, tree=tree,
                                        path=path, session=session, buffer=self._buffer(path, filename))
        self._remember(key, diagnostics)
        return diagnostics

    def _buffer(self, path: Optional[Path], filename: str) -> Optional[Buffer]:
        if path is None:
            return None
        key = (str(path), filename)
        buffer = self._buffers.get(key)
        if buffer is None:
            buffer = self._buffers[key] = Buffer()
        self._buffers.move_to_end(key)
        while len(self._buffers) > MAX_BUFFERS:
            self._buffers.popitem(last=False)
        return buffer

    def _remember(self, key: Hashable, diagnostics: List[Diagnostic]) -> None:
        self._results[key] = list(diagnostics)
        keys = self._keys_of_file.setdefault(key[:2], OrderedDict())  # the key starts with the path and the name
        keys[key] = None
        while len(keys) > RESULTS_PER_FILE:
            self._results.pop(keys.popitem(last=False)[0], None)
        while len(self._results) > MAX_RESULTS:
            oldest, _ = self._results.popitem(last=False)
            self._keys_of_file.get(oldest[:2], {}).pop(oldest, None)

    def _key(self, text: str, filename: str, settings: Settings, codes: Optional[Set[str]], path: Optional[Path],
             apply_noqa: bool, in_project: bool) -> Hashable:
        around = self.project.neighbourhood_digest(path) if in_project and path is not None else ""
        content = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        selected: Optional[FrozenSet[str]] = frozenset(codes) if codes is not None else None
        packaged = self.project.distributed if in_project else False  # dead-code answers depend on it
        return (str(path), filename, content, around, packaged, settings.fingerprint(), settings.target_version,
                selected, apply_noqa)

    def memory(self) -> Dict[str, int]:
        """What the workspace holds, by count (its bounds are MAX_MODULES and MAX_RESULTS)."""
        return {"models": len(self.session), "results": len(self._results)}


_WORKSPACES: "OrderedDict[Path, Workspace]" = OrderedDict()


def workspace_for(path: Path, fallback_root: Optional[Path] = None) -> Workspace:
    """The process's workspace for the project holding ``path`` (made on first use)."""
    project = project_for(path, fallback_root)
    workspace = _WORKSPACES.get(project.root)
    if workspace is None or workspace.project is not project:
        workspace = _WORKSPACES[project.root] = Workspace(project)
    _WORKSPACES.move_to_end(project.root)
    while len(_WORKSPACES) > MAX_WORKSPACES:
        _WORKSPACES.popitem(last=False)
    return workspace


def refresh_workspaces(paths: Optional[Iterable[Path]] = None) -> None:
    """Every workspace takes in the files changed on disk (``paths``, or those whose stat changed)."""
    changed = list(paths) if paths is not None else None
    for workspace in list(_WORKSPACES.values()):
        workspace.refresh(changed)


def forget_workspaces() -> None:
    """Drop every workspace, project index and memoised tree (a test, or a fresh start)."""
    _WORKSPACES.clear()
    forget_index()
    forget_trees()

