"""The open documents and their checks, through the project's long-lived workspace.

Each open Python file or notebook is an overlay on its project's ``Workspace`` (``checking/
workspace.py``: ``update(path, text)``, ``None`` on close), so that its importers see the buffer and
every unchanged module keeps its model between checks. A check is ``checker.process_text``, the
command line's own path for one file (TFP002 for a syntax error, notebooks joined into one module),
and its result is kept with the version it was made from, for code actions and hover.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Set

from tflint_perf.checking.checker import process_text
from tflint_perf.checking.config import ConfigError, Settings
from tflint_perf.checking.discovery import relative_to_root
from tflint_perf.checking.engine import check_text
from tflint_perf.checking.results import FileResult, Mode
from tflint_perf.checking.workspace import Workspace, workspace_for
from tflint_perf.faces.server.notebooks import Cell
from tflint_perf.faces.server.settings import SettingsStore, folder_of
from tflint_perf.text.diagnostics import Diagnostic
from tflint_perf.text.parsing import InternalError, ParseError


@dataclass
class Document:
    """An open file (``cells`` None) or notebook, as the editor holds it. An untitled buffer (an
    ``untitled:`` URI) has no place on disk: its ``path`` is only its name, and it is checked alone,
    in no project's workspace."""

    uri: str
    path: Path
    version: Optional[int]
    text: str  # a notebook's: its cells as .ipynb JSON (notebooks.document_json)
    cells: Optional[List[Cell]] = None
    untitled: bool = False

    @property
    def name(self) -> str:
        return str(self.path)


@dataclass
class Checked:
    """One check of a document: the result, the text and settings it was made from."""

    version: Optional[int]
    text: str
    settings: Optional[Settings]
    result: FileResult = field(default_factory=lambda: FileResult(""))
    config_error: Optional[str] = None

    def diagnostics(self) -> List[Diagnostic]:
        return self.result.diagnostics


class Documents:
    """The open documents, their overlays on the workspaces, and their last checks."""

    def __init__(self, settings: SettingsStore) -> None:
        self.settings = settings
        self.folders: List[Path] = []
        self.open: Dict[str, Document] = {}
        self.checked: Dict[str, Checked] = {}

    # -- the editor's changes -----------------------------------------------------------------
    def put(self, document: Document) -> Set[Path]:
        """Open or change a document: its text becomes the module's content in its workspace.
        Returns the modules whose models were dropped (itself and those depending on it)."""
        self.open[document.uri] = document
        if document.untitled:
            return set()  # no module imports a buffer that has no file
        return self._workspace(document.path).update(document.path, document.text)

    def close(self, uri: str) -> Set[Path]:
        document = self.open.pop(uri, None)
        self.checked.pop(uri, None)
        if document is None or document.untitled:
            return set()
        return self._workspace(document.path).update(document.path, None)

    def refresh(self, paths: List[Path]) -> Set[Path]:
        """Files changed on disk (a watcher): the modules whose models were dropped, in every workspace
        that holds one of the open documents."""
        affected: Set[Path] = set()
        for workspace in {id(w): w for w in map(self._workspace, self._open_paths())}.values():
            affected |= workspace.refresh(paths)
        return affected

    def reload_settings(self) -> None:
        self.settings.forget()
        self.checked.clear()

    def open_at(self, paths: Set[Path]) -> List[Document]:
        resolved = {p.resolve() for p in paths}
        return [d for d in self.open.values() if not d.untitled and d.path.resolve() in resolved]

    def _open_paths(self) -> List[Path]:
        return [d.path for d in self.open.values() if not d.untitled]

    # -- checking ---------------------------------------------------------------------------------
    def settings_for(self, path: Path) -> Settings:
        return self.settings.for_path(path, folder_of(path, self.folders))

    def _workspace(self, path: Path) -> Workspace:
        # The root the checker asks with (settings.root), so that overlays and checks share one workspace.
        try:
            root = self.settings_for(path).root
        except ConfigError:
            root = folder_of(path, self.folders)
        return workspace_for(path, root)

    def _settings_of(self, document: Document) -> Settings:
        if document.untitled:
            return self.settings.for_untitled(document.name, self.folders)
        return self.settings_for(document.path)

    def check(self, document: Document) -> Checked:
        """Check a document as it is now (answered from memory when nothing it depends on changed).
        Raises nothing for the input's faults: a bad config is ``config_error``."""
        try:
            settings = self._settings_of(document)
        except ConfigError as problem:
            checked = Checked(document.version, document.text, None, config_error=str(problem))
        else:
            result = process_text(document.text, document.name, document.path, settings, Mode(), explicit=False,
                                  in_project=not document.untitled)
            checked = Checked(document.version, document.text, settings, result)
        self.checked[document.uri] = checked
        return checked

    def fixed_text(self, document: Document, checked: Checked) -> Optional[str]:
        """The document with every applicable fix applied, as ``--fix`` (``--unsafe-fixes``) writes it."""
        if checked.settings is None:
            return None
        mode = Mode(fix=True, unsafe=checked.settings.unsafe_fixes)
        result = process_text(checked.text, document.name, document.path, checked.settings, mode, explicit=False,
                              in_project=not document.untitled)
        return result.fixed_text

    def module_diagnostics(self, document: Document, module: str, settings: Settings) -> Optional[List[Diagnostic]]:
        """A notebook's joined module checked as the checker checks it (the same workspace key, so
        answered from memory); None when it does not parse."""
        codes = settings.codes_for(relative_to_root(document.path, settings))
        try:
            if document.untitled:
                return check_text(module, document.name, settings, codes)
            workspace = workspace_for(document.path, settings.root)
            return workspace.check_text(module, document.name, settings, codes, path=document.path)
        except (ParseError, InternalError):
            return None
