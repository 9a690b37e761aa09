"""What a warm run knows of a project without reading it: the project's manifest in the results cache.

For each project (its root), the results cache keeps one JSON document that records, for every file
the last run looked at: its stat (modification time in nanoseconds, size), the digest of its content,
whether its text mentions ``tensorflow`` or ``keras`` (how much checking it would take), the
first-party files it imports (resolved, as ``Project.dependencies`` resolves them) and the import
statements that lead there. A run then, like ruff's:

- stats each file; one whose stat is as recorded has the recorded digest and edges, and is not read;
- reads and hashes a file whose stat changed: when its digest is as recorded (touched, checked out
  again) it is still unchanged and keeps its edges; otherwise its imports are scanned from the bytes
  just read, and only its own;
- trusts recorded edges only while the project's file list is the one they were resolved against
  (a file added or removed can change where an import leads); otherwise every file's imports are
  scanned again, as a cold run does. Past ``index.MAX_PROJECT_FILES`` there is no list, and the
  files asked about are always scanned;
- computes each checked file's neighbourhood digest (the definition of ``Project.neighbourhood_digest``:
  the files it imports, two levels down, and the files importing it) from that graph.

A file modified less than ``RACY_NS`` before the run began is recorded without its stat (a change
within the file system's timestamp granularity could leave the stat as it was), so the next run
hashes it again: git's "racily clean" rule. Two runs at once each write a whole manifest (atomically,
last one wins); a manifest that cannot be read back is ignored, and the run decides as a cold one.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_module
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from tflint_perf.project.index import (
    ImportRef, Project, digest_of_files, importer_map, imports_in_text, neighbourhood, notebook_code,
)
from tflint_perf.project.tf_version import RACY_NS

MANIFEST_FORMAT = 2  # 2: a star import keeps its "*" among the names taken
MARKERS = (b"tensorflow", b"keras")  # text the prefilter parses for (text/prefilter.py): what costs checking


def content_digest(data: bytes) -> bytes:
    """The digest that stands for a file's bytes in cache keys and neighbourhood digests."""
    return hashlib.blake2b(data, digest_size=16).digest()


def scan_imports(path: str, data: bytes) -> List[ImportRef]:
    """A file's import statements from its bytes, as ``Project.imports_of`` reads them from disk."""
    text = data.decode("utf-8", errors="replace")
    if path.endswith(".ipynb"):
        text = notebook_code(text)
    return imports_in_text(text) if "import" in text else []


@dataclass
class FileState:
    """One file as this run knows it."""

    stamp: Optional[Tuple[int, int]]  # (mtime_ns, size) to record; None when racy (hashed again next run)
    digest: bytes
    marked: bool  # mentions tensorflow/keras: checking it means parsing it
    deps: Optional[List[str]] = None  # first-party files imported (real paths); None: not known yet
    refs: Optional[list] = None  # the import statements that lead to them, as [module, level, [names]]
    scanned: Optional[List[ImportRef]] = None  # every import statement, when read this run


class ProjectFiles:
    """One project's files during one run: their digests and import graph, from the manifest and the
    stat of each file, reading only what changed."""

    def __init__(self, project: Project, stored: Optional[dict], started_ns: int) -> None:
        self.project = project
        self.root = str(project.root)
        self._prefix = self.root if self.root.endswith(os.sep) else self.root + os.sep
        self._started = started_ns
        self._stored: Dict[str, list] = {}
        self._stored_listing: Optional[str] = None
        if stored is not None and stored.get("format") == MANIFEST_FORMAT and stored.get("root") == self.root:
            files = stored.get("files")
            if isinstance(files, dict):
                self._stored = files
                listing = stored.get("listing")
                self._stored_listing = listing if isinstance(listing, str) else None
        self._states: Dict[str, Optional[FileState]] = {}
        self._listing: Optional[str] = None
        self._walk: Optional[List[str]] = None
        self._importers: Optional[Dict[str, List[str]]] = None
        self._distributed: Optional[bool] = None
        self.read: List[str] = []  # the files this run read (their stat changed, or their edges were unknown)
        self.changed = False

    @property
    def distributed(self) -> bool:
        """``Project.distributed``, asked once a run: part of every file's cache key."""
        if self._distributed is None:
            self._distributed = self.project.distributed
        return self._distributed

    # -- the list of files ------------------------------------------------------------------------
    def walk(self) -> List[str]:
        """The project's files (``Project.files``: one directory walk per run)."""
        if self._walk is None:
            self._walk = [str(path) for path in self.project.files()]
            if self._walk:
                self._listing = hashlib.blake2b("\n".join(self._walk).encode("utf-8", "surrogateescape"),
                                                digest_size=16).hexdigest()
        return self._walk

    def _edges_trusted(self) -> bool:
        """Recorded edges hold while the file list is the one they were resolved against."""
        self.walk()
        return self._listing is not None and self._listing == self._stored_listing

    # -- one file ---------------------------------------------------------------------------------
    def state(self, path: str, status: Optional[os.stat_result] = None) -> Optional[FileState]:
        """The file's content digest (and edges, when recorded) this run; None when it cannot be read.
        ``status`` is its ``os.stat`` when the caller has it."""
        if path in self._states:
            return self._states[path]
        state = self._state(path, status)
        self._states[path] = state
        return state

    def _state(self, path: str, status: Optional[os.stat_result]) -> Optional[FileState]:
        try:
            status = status if status is not None else os.stat(path)
        except OSError:
            return None
        if not stat_module.S_ISREG(status.st_mode):
            return None
        stamp = (status.st_mtime_ns, status.st_size)
        recorded = self._recorded(path)
        trusted = stamp if status.st_mtime_ns < self._started - RACY_NS else None
        if recorded is not None and recorded[0] == stamp:
            state = FileState(trusted, recorded[1], recorded[2])
            if recorded[0] != trusted:
                self.changed = True
        else:
            data = self._read(path)
            if data is None:
                return None
            digest = content_digest(data)
            self.changed = True
            if recorded is not None and recorded[1] == digest:
                state = FileState(trusted, digest, recorded[2])
            else:
                return FileState(trusted, digest, any(marker in data for marker in MARKERS), scanned=scan_imports(path, data))
        if recorded is not None and recorded[3] is not None and self._edges_trusted():
            state.deps, state.refs = recorded[3], recorded[4]
        return state

    def _recorded(self, path: str):
        """(stamp or None, digest, marked, deps, refs) as the manifest recorded them, or None."""
        entry = self._stored.get(self._relative(path))
        try:
            mtime, size, digest, marked, deps, refs = entry  # type: ignore[misc]
            stamp = (int(mtime), int(size)) if mtime is not None else None
            recorded_deps = [self._absolute(dep) for dep in deps] if deps is not None else None
            if deps is not None and not isinstance(refs, list):
                return None
            return stamp, bytes.fromhex(digest), bool(marked), recorded_deps, refs
        except (TypeError, ValueError):  # none, or not as this code writes it: decided afresh
            return None

    def _read(self, path: str) -> Optional[bytes]:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        self.read.append(path)
        return data

    def digest(self, path: str) -> Optional[bytes]:
        state = self.state(path)
        return state.digest if state is not None else None

    def marked(self, path: str) -> bool:
        state = self.state(path)
        return state is not None and state.marked

    # -- edges ------------------------------------------------------------------------------------
    def dependencies(self, path: str) -> List[str]:
        """The first-party files ``path`` imports directly (``Project.dependencies``)."""
        state = self.state(path)
        if state is None:
            return []
        if state.deps is None:
            scanned = state.scanned
            if scanned is None:  # recorded, but its edges are not: read its imports again
                data = self._read(path)
                if data is None:  # as the index reads an unreadable file: no imports (and hashed again next run)
                    state.deps, state.refs, state.stamp = [], [], None
                    self.changed = True
                    return state.deps
                digest = content_digest(data)
                if digest != state.digest:  # changed while this run was under way: the newer text, hashed again next run
                    state.digest, state.stamp = digest, None
                    state.marked = any(marker in data for marker in MARKERS)
                scanned = state.scanned = scan_imports(path, data)
            state.deps, state.refs = self._resolve(path, scanned)
            self.changed = True
        return state.deps

    def _resolve(self, path: str, refs: Sequence[ImportRef]) -> Tuple[List[str], list]:
        """Where a file's imports lead (``Project.leads_to``), and the statements that lead to a
        first-party file (what the analysis will ask about), as the manifest records them."""
        targets, kept = self.project.leads_to(Path(path), refs)
        return [str(target) for target in targets], [[ref.module, ref.level, list(ref.names)] for ref in kept]

    def importers(self, path: str) -> List[str]:
        """The project files that import ``path`` directly (``Project.importers_of``)."""
        if self._importers is None:
            self._importers = importer_map(self.walk(), self.dependencies)
        return self._importers.get(path, [])

    def neighbourhood_digest(self, path: str) -> str:
        """``Project.neighbourhood_digest`` from the manifest's graph and digests: nothing is read."""
        around = neighbourhood(path, self.dependencies, self.importers)
        return digest_of_files(around, lambda file: self.digest(file) or b"missing")

    # -- for the checks of this run -------------------------------------------------------------------
    def seed(self) -> None:
        """Hand the project index the imports known here and where they lead, so that checking a
        changed file reads no other file's imports and resolves none again (it reads only the modules
        its analysis parses)."""
        for file in self.walk():
            state = self.state(file)
            if state is not None:
                dependencies = [Path(dep) for dep in state.deps] if state.deps is not None else None
                if state.scanned is not None:
                    self.project.remember_imports(Path(file), list(state.scanned), dependencies)
                elif state.refs is not None:
                    try:
                        refs = [ImportRef(str(module), int(level), tuple(str(name) for name in names))
                                for module, level, names in state.refs]
                    except (TypeError, ValueError):
                        continue  # not as this code writes it: the index reads the file's imports itself
                    self.project.remember_imports(Path(file), refs, dependencies)

    # -- the manifest -------------------------------------------------------------------------------
    def document(self) -> dict:
        """The manifest to store: this run's files, and the recorded ones it did not look at."""
        files: Dict[str, list] = {}
        trusted = self._edges_trusted()
        walked = set(self.walk()) if self._importers is not None else None
        for relative, entry in self._stored.items():
            if walked is not None and self._absolute(relative) not in walked:
                continue  # the whole list was read: a file no longer in it is gone
            if not trusted and isinstance(entry, list) and len(entry) == 6:
                entry = entry[:4] + [None, None]  # resolved against another file list
            files[relative] = entry
        for path, state in self._states.items():
            relative = self._relative(path)
            if state is None:
                files.pop(relative, None)
                continue
            deps = [self._relative(dep) for dep in state.deps] if state.deps is not None else None
            stamp = state.stamp or (None, None)
            files[relative] = [stamp[0], stamp[1], state.digest.hex(), int(state.marked), deps,
                               state.refs if deps is not None else None]
        return {"format": MANIFEST_FORMAT, "root": self.root, "listing": self._listing, "files": files}

    def _relative(self, path: str) -> str:
        return path[len(self._prefix):] if path.startswith(self._prefix) else path

    def _absolute(self, relative: str) -> str:
        return relative if os.path.isabs(relative) else self._prefix + relative


def manifest_name(root: str) -> str:
    return "project-" + hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:32]
