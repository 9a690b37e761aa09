"""The language server's wiring: which LSP message does what (pygls 2 on lsprotocol, over stdio).

Checks run on the event loop's thread, one at a time, so the workspaces are never shared between
threads. An open or a save is checked at once; a change is debounced (``DEBOUNCE_S``): a newer
change cancels the pending check, so only the latest version is checked and published. The edited
document is checked first, alone; the open modules that depend on it (``Workspace.update``'s answer)
are checked after, debounced again. Every handler catches what it does not expect and logs it
(``window/logMessage``): an input or a bug never ends the server.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from pathlib import Path
from typing import Dict, List, Optional, Set
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from tflint_perf import __version__
from tflint_perf.faces.server import actions
from tflint_perf.faces.server.convert import Page, config_error, to_lsp
from tflint_perf.faces.server.documents import Checked, Document, Documents
from tflint_perf.faces.server.hover import hover_text
from tflint_perf.faces.server.notebooks import cell_range, cells_of, document_json
from tflint_perf.faces.server.settings import SettingsStore, editor_settings, is_settings_file
from tflint_perf.text.notebook import NOTEBOOK_SUFFIX

DEBOUNCE_S = 0.15
UNTITLED = "untitled"  # the URI scheme of an editor's buffer that has no file yet
CHECKED_SUFFIXES = (".py", ".pyi", NOTEBOOK_SUFFIX)
SETTINGS_SECTION = "tflint-perf"
WATCHED = ("**/*.py", "**/*.ipynb", "**/pyproject.toml", "**/setup.cfg", "**/setup.py", "**/requirements*.txt",
           "**/environment.yml", "**/environment.yaml", "**/Dockerfile", "**/Dockerfile.*", "**/*.Dockerfile")
LOG = logging.getLogger(__name__)


class TflintPerfServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "tflint-perf", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithNotebook(
                    notebook="jupyter-notebook", cells=[types.NotebookCellLanguage(language="python")])],
                save=True))
        self.store = SettingsStore()
        self.documents = Documents(self.store)
        self.initialization_options: dict = {}
        self.pending: Dict[str, asyncio.Task] = {}
        self.after: Dict[str, Set[str]] = {}  # uri -> the open documents to re-check once it is checked
        self.pull = False  # the client asks for diagnostics (textDocument/diagnostic) rather than being sent them
        self.shut_down = False
        self.shown_errors: Set[str] = set()

    # -- messages to the client -----------------------------------------------------------------
    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        if message not in self.shown_errors:  # once per distinct problem, not once per keystroke
            self.shown_errors.add(message)
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def guarded(self, what: str, function, *args):
        try:
            return function(*args)
        except Exception as error:  # noqa: BLE001 - a bug of ours: logged, the server goes on
            self.log(f"tflint-perf: internal error while {what}: {type(error).__name__}: {error} (please report "
                     f"this)\n{traceback.format_exc()}", types.MessageType.Error)
            return None

    @property
    def encoding(self) -> str:
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    # -- documents --------------------------------------------------------------------------------
    def document(self, uri: str) -> Optional[Document]:
        """The open Python file or notebook that ``uri`` (a file, a notebook or one of its cells) is."""
        notebook = self.workspace.get_notebook_document(notebook_uri=uri) or \
            self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:
            path = _path(notebook.uri)
            untitled = path is None
            if untitled:
                name = _untitled_name(notebook.uri)
                if name is None:
                    return None
                path = Path(name if name.endswith(NOTEBOOK_SUFFIX) else name + NOTEBOOK_SUFFIX)
            cells = cells_of(notebook, lambda cell: self.workspace.get_text_document(cell).source)
            return Document(notebook.uri, path, notebook.version, document_json(cells), cells, untitled=untitled)
        path = _path(uri)
        if path is None:
            return self._untitled(uri)
        if not path.name.endswith(CHECKED_SUFFIXES) or path.suffix == NOTEBOOK_SUFFIX:
            return None
        text_document = self.workspace.get_text_document(uri)
        return Document(uri, path, text_document.version, text_document.source)

    def _untitled(self, uri: str) -> Optional[Document]:
        """A new buffer not yet saved (``untitled:Untitled-1``), when it is Python: named by its URI's
        last part, checked alone (ruff's server checks them too)."""
        name = _untitled_name(uri)
        if name is None or uri not in self.workspace.text_documents:
            return None
        text_document = self.workspace.get_text_document(uri)
        if text_document.language_id != "python" and not name.endswith((".py", ".pyi")):
            return None
        return Document(uri, Path(name), text_document.version, text_document.source, untitled=True)

    def take(self, uri: str, delay: float) -> None:
        """The editor's text of ``uri`` is the module's content now; check it after ``delay`` and then
        the open documents that depend on it."""
        document = self.document(uri)
        if document is None:
            return
        affected = self.documents.put(document)
        others = {d.uri for d in self.documents.open_at(affected) if d.uri != document.uri}
        self.after[document.uri] = self.after.get(document.uri, set()) | others
        self.schedule(document.uri, delay)

    def schedule(self, uri: str, delay: float) -> None:
        pending = self.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()  # a newer version supersedes it: only the latest is checked and published
        self.pending[uri] = asyncio.get_running_loop().create_task(self._check_later(uri, delay))

    async def _check_later(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        if self.pending.get(uri) is asyncio.current_task():
            del self.pending[uri]
        self.guarded(f"checking {uri}", self.check_now, uri)

    def check_now(self, uri: str, pulled: bool = False) -> Optional[Checked]:
        """Check and publish ``uri``, then schedule the open documents that depend on its change."""
        checked = self.check_and_publish(uri, pulled)
        for other in sorted(self.after.pop(uri, set())):
            if other in self.documents.open:
                self.schedule(other, DEBOUNCE_S)
        return checked

    def check_and_publish(self, uri: str, pulled: bool = False) -> Optional[Checked]:
        """Check ``uri`` and send its diagnostics; a client that pulls them is asked to pull again,
        unless this check answers its own request (``pulled``)."""
        document = self.documents.open.get(uri)
        if document is None:
            return None
        checked = self.documents.check(document)
        if checked.config_error is not None:
            self.show(f"tflint-perf: {checked.config_error}")
        for message in checked.result.internal_errors + checked.result.errors:
            self.log(f"{document.name}: {message}", types.MessageType.Error)
        if self.pull:
            if not pulled:
                self._refresh_pulled()
        else:
            for target, items in self.items(document, checked).items():
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                    uri=target, diagnostics=items, version=document.version if document.cells is None else None))
        return checked

    def _refresh_pulled(self) -> None:
        workspace = self.client_capabilities.workspace
        if workspace and workspace.diagnostics and workspace.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)

    def items(self, document: Document, checked: Checked) -> Dict[str, List[types.Diagnostic]]:
        """The protocol's diagnostics of a check, per URI (a notebook's per cell, every cell listed)."""
        if checked.config_error is not None:
            uris = [c.uri for c in document.cells if c.code] if document.cells is not None else [document.uri]
            return {uri: [config_error(checked.config_error)] for uri in uris[:1]} | {uri: [] for uri in uris[1:]}
        if document.cells is None:
            page = Page(checked.text, self.encoding)
            return {document.uri: [to_lsp(d, page) for d in checked.diagnostics()]}
        found: Dict[str, List[types.Diagnostic]] = {}
        for number, cell in enumerate(document.cells, start=1):
            page = Page(cell.text, self.encoding)
            found[cell.uri] = [to_lsp(d, page) for d in checked.diagnostics() if d.cell == number]
        return found

    def fresh(self, uri: str, pulled: bool = False) -> Optional[tuple]:
        """The document of ``uri`` and a check of its current version (made now if need be)."""
        document = self.document(uri)
        if document is None or document.uri not in self.documents.open:
            return None
        checked = self.documents.checked.get(document.uri)
        if checked is None or checked.version != document.version or checked.text != document.text \
                or self._awaits_recheck(document.uri):
            pending = self.pending.pop(document.uri, None)
            if pending is not None:
                pending.cancel()  # checked here instead: the text was taken in when it changed
            checked = self.check_now(document.uri, pulled)
        return (document, checked) if checked is not None else None

    def _awaits_recheck(self, uri: str) -> bool:
        """A module another one's change affects is re-checked later (debounced): until then its last check is
        stale though its own text did not change, and a request about it (a pull after a refresh) must not get it."""
        return uri in self.pending or any(uri in dependents for dependents in self.after.values())

    def recheck_all(self) -> None:
        for uri in list(self.documents.open):
            self.schedule(uri, 0)


def _resolves_edits(ls: TflintPerfServer) -> bool:
    """Whether the client asks ``codeAction/resolve`` for an action's edit."""
    text_document = ls.client_capabilities.text_document
    code_action = text_document.code_action if text_document else None
    support = code_action.resolve_support if code_action else None
    return bool(support and "edit" in support.properties)


def _untitled_name(uri: str) -> Optional[str]:
    """The name of a buffer not yet saved (``untitled:Untitled-1``): its URI's last part; None for
    any other URI."""
    scheme, _, rest = uri.partition(":")
    if scheme != UNTITLED:
        return None
    return unquote(rest).rstrip("/").rsplit("/", 1)[-1] or rest


def _path(uri: str) -> Optional[Path]:
    path = to_fs_path(uri)
    return Path(path) if path else None


def build_server() -> TflintPerfServer:
    server = TflintPerfServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: TflintPerfServer, params: types.InitializeParams) -> None:
        options = params.initialization_options
        ls.initialization_options = options if isinstance(options, dict) else {}
        ls.store.set_editor(ls.initialization_options)
        folders = [f.uri for f in params.workspace_folders or []] or ([params.root_uri] if params.root_uri else [])
        ls.documents.folders = [p.resolve() for p in map(_path, folders) if p is not None]
        text_document = params.capabilities.text_document
        ls.pull = bool(text_document and text_document.diagnostic)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: TflintPerfServer, params: types.InitializedParams) -> None:
        workspace = ls.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace else None
        if watched is not None and watched.dynamic_registration:
            watchers = [types.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED]
            ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
                id="tflint-perf-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
        await _pull_configuration(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: TflintPerfServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        # pygls has updated its own list; settings are per folder, so they are read again.
        paths = [_path(folder.uri) for folder in ls.workspace.folders.values()]
        ls.documents.folders = [p.resolve() for p in paths if p is not None]
        ls.documents.reload_settings()
        ls.recheck_all()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: TflintPerfServer, params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings.get(SETTINGS_SECTION) if isinstance(params.settings, dict) else None
        if isinstance(settings, dict):
            ls.store.set_editor({**editor_settings(ls.initialization_options), **settings})
        else:
            await _pull_configuration(ls)
        ls.documents.reload_settings()
        ls.shown_errors.clear()
        ls.recheck_all()

    # Opening or changing a file or a notebook: its text is taken in, and checked at once or debounced.
    for method, delay in ((types.TEXT_DOCUMENT_DID_OPEN, 0), (types.TEXT_DOCUMENT_DID_CHANGE, DEBOUNCE_S),
                          (types.NOTEBOOK_DOCUMENT_DID_OPEN, 0), (types.NOTEBOOK_DOCUMENT_DID_CHANGE, DEBOUNCE_S)):
        server.feature(method)(_taking(method, delay))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TflintPerfServer, params: types.DidSaveTextDocumentParams) -> None:
        path = _path(params.text_document.uri)
        if path is not None and is_settings_file(path):
            _settings_changed(ls)
        elif params.text_document.uri in ls.documents.open:
            ls.schedule(params.text_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_save(ls: TflintPerfServer, params: types.DidSaveNotebookDocumentParams) -> None:
        if params.notebook_document.uri in ls.documents.open:
            ls.schedule(params.notebook_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TflintPerfServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.guarded("closing a document", _close, ls, params.text_document.uri, [params.text_document.uri])

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: TflintPerfServer, params: types.DidCloseNotebookDocumentParams) -> None:
        cells = [cell.uri for cell in params.cell_text_documents]
        ls.guarded("closing a notebook", _close, ls, params.notebook_document.uri, cells)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files(ls: TflintPerfServer, params: types.DidChangeWatchedFilesParams) -> None:
        paths = [p for p in (_path(change.uri) for change in params.changes) if p is not None]
        if any(is_settings_file(p) for p in paths):
            _settings_changed(ls)
        modules = [p for p in paths if p.name.endswith(CHECKED_SUFFIXES)]
        if modules:
            affected = ls.guarded("taking in changed files", ls.documents.refresh, modules) or set()
            for document in ls.documents.open_at(affected):
                ls.schedule(document.uri, DEBOUNCE_S)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=actions.KINDS, resolve_provider=True))
    def code_action(ls: TflintPerfServer, params: types.CodeActionParams) -> Optional[List[types.CodeAction]]:
        def answer():
            found = ls.fresh(params.text_document.uri)
            if found is None:
                return None
            document, checked = found
            return actions.code_actions(ls.documents, document, checked, params.text_document.uri, params.range,
                                        params.context.only, ls.encoding, lazy=_resolves_edits(ls))
        return ls.guarded("finding code actions", answer)

    @server.feature(types.CODE_ACTION_RESOLVE)
    def resolve_code_action(ls: TflintPerfServer, action: types.CodeAction) -> types.CodeAction:
        def answer():
            data = action.data if isinstance(action.data, dict) else {}
            found = ls.fresh(data.get("uri", ""))
            if found is not None and action.kind == actions.FIX_ALL and found[0].version == data.get("version"):
                action.edit = actions.fix_all(ls.documents, found[0], found[1], ls.encoding)
        ls.guarded("resolving a code action", answer)
        return action

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TflintPerfServer, params: types.HoverParams) -> Optional[types.Hover]:
        def answer():
            found = ls.fresh(params.text_document.uri)
            if found is None:
                return None
            document, checked = found
            number, cell = cell_range(document.cells or [], params.text_document.uri)
            text = cell.text if cell is not None else checked.text
            here = [d for d in checked.diagnostics() if document.cells is None or d.cell == number]
            return hover_text(here, Page(text, ls.encoding), params.position)
        return ls.guarded("answering a hover", answer)

    @server.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, types.DiagnosticOptions(
        identifier="tflint-perf", inter_file_dependencies=True, workspace_diagnostics=False))
    def pull_diagnostics(ls: TflintPerfServer, params: types.DocumentDiagnosticParams):
        def answer():
            found = ls.fresh(params.text_document.uri, pulled=True)
            if found is None:
                return []
            document, checked = found
            return ls.items(document, checked).get(params.text_document.uri, [])
        items = ls.guarded("answering a diagnostic request", answer) or []
        return types.RelatedFullDocumentDiagnosticReport(items=items)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: TflintPerfServer, params: None) -> None:
        ls.shut_down = True
        for task in ls.pending.values():
            task.cancel()
        ls.pending.clear()

    return server


async def _pull_configuration(ls: TflintPerfServer) -> None:
    """The editor's settings (``workspace/configuration``, section ``tflint-perf``) over its
    ``initializationOptions``, when the client answers such requests."""
    workspace = ls.client_capabilities.workspace
    if not (workspace and workspace.configuration):
        return
    scope = from_fs_path(str(ls.documents.folders[0])) if ls.documents.folders else None
    try:
        answer = await asyncio.wait_for(ls.workspace_configuration_async(types.ConfigurationParams(
            items=[types.ConfigurationItem(section=SETTINGS_SECTION, scope_uri=scope)])), timeout=5)
    except Exception as error:  # noqa: BLE001 - a client that cannot answer: the initialization options stand
        ls.log(f"tflint-perf: workspace/configuration unanswered ({error}); using the initialization options")
        return
    if answer and isinstance(answer[0], dict):
        ls.store.set_editor({**editor_settings(ls.initialization_options), **answer[0]})
        ls.documents.reload_settings()
        ls.recheck_all()


def _taking(method: str, delay: float):
    def handler(ls: TflintPerfServer, params) -> None:
        document = getattr(params, "text_document", None) or params.notebook_document
        ls.guarded(method, ls.take, document.uri, delay)
    return handler


def _settings_changed(ls: TflintPerfServer) -> None:
    ls.log("tflint-perf: a configuration or dependency file changed; settings reloaded", types.MessageType.Info)
    ls.documents.reload_settings()
    ls.shown_errors.clear()
    ls.recheck_all()


def _close(ls: TflintPerfServer, uri: str, cleared: List[str]) -> None:
    pending = ls.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()
    affected = ls.documents.close(uri)
    if not ls.pull:
        for target in cleared:
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=target, diagnostics=[]))
    for document in ls.documents.open_at(affected):
        ls.schedule(document.uri, DEBOUNCE_S)
