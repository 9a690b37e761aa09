"""A real LSP client (pytest-lsp's) driving the real server process, ``python -m tflint_perf server``."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path
from typing import Callable, List, Optional

from lsprotocol import types
from pytest_lsp import LanguageClient
from pygls.protocol import default_converter
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pygls.uris import from_fs_path

REPO = Path(__file__).resolve().parent.parent
WAIT_S = 60  # a bound on waiting for a notification on a loaded machine, never a speed assertion


def capabilities(pull: bool = False, configuration: bool = True, resolve: bool = False) -> types.ClientCapabilities:
    """A plain editor: pushed diagnostics (pulled with ``pull``), code actions, hover, notebooks."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            configuration=configuration,
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=False),
        ),
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            code_action=types.CodeActionClientCapabilities(resolve_support=types.ClientCodeActionResolveOptions(
                properties=["edit"]) if resolve else None),
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            diagnostic=types.DiagnosticClientCapabilities() if pull else None,
        ),
        notebook_document=types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities()),
    )


def make_client() -> LanguageClient:
    """pytest-lsp's test client, which also records each publication (``client.publications``: uri,
    version, codes) to tell which version of a document each one was about."""
    client = LanguageClient(converter_factory=default_converter)
    client.publications = []

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.publications.append((params.uri, params.version, codes(params.diagnostics)))
        client.diagnostics[params.uri] = params.diagnostics

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish})
    return client


@contextlib.asynccontextmanager
async def serving(root: Path, options: Optional[dict] = None, pull: bool = False, configuration: Optional[dict] = None,
                  resolve: bool = False, arguments: tuple = ()):
    client = make_client()
    if configuration is not None:
        client.set_configuration(configuration, section="tflint-perf")
    await client.start_io(sys.executable, "-m", "tflint_perf", "server", *arguments, cwd=str(root),
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    await client.initialize_session(types.InitializeParams(
        capabilities=capabilities(pull, resolve=resolve), root_uri=uri(root), initialization_options=options,
        workspace_folders=[types.WorkspaceFolder(uri=uri(root), name="project")]))
    try:
        yield client
    finally:
        if client._server is not None and client._server.returncode is None:
            await client.shutdown_session()
        await client.stop()


def uri(path: Path) -> str:
    return from_fs_path(str(path))


def open_file(client: LanguageClient, path: Path, text: Optional[str] = None, version: int = 1) -> str:
    text = path.read_text() if text is None else text
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri(path), language_id="python", version=version, text=text)))
    return uri(path)


def change(client: LanguageClient, path: Path, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(path), version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def apply_in_editor(client: LanguageClient, path: Path, edits: List[types.TextEdit], version: int) -> None:
    """An editor applying a code action's edits to its buffer: incremental changes, last first."""
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(path), version=version),
        content_changes=[types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in ordered]))


async def published(client: LanguageClient, target: str,
                    until: Callable[[List[types.Diagnostic]], bool] = lambda items: True) -> List[types.Diagnostic]:
    """The diagnostics published for ``target`` once ``until`` holds for them."""
    for _ in range(int(WAIT_S / 0.05)):
        items = client.diagnostics.get(target)
        if items is not None and until(list(items)):
            return list(items)
        await asyncio.sleep(0.05)
    raise AssertionError(f"no diagnostics as expected for {target}: {client.diagnostics.get(target)}")


def codes(items: List[types.Diagnostic]) -> List[str]:
    return sorted(str(item.code) for item in items)


def apply_edits(text: str, edits: List[types.TextEdit]) -> str:
    """A client applying text edits (ASCII texts: UTF-16 columns are characters)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: types.Position) -> int:
        return starts[min(position.line, len(lines))] + position.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


async def actions_at(client: LanguageClient, target: str, item: types.Diagnostic,
                     only: Optional[List[str]] = None) -> List[types.CodeAction]:
    answer = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=target), range=item.range,
        context=types.CodeActionContext(diagnostics=[item], only=only)))
    return [a for a in answer or [] if isinstance(a, types.CodeAction)]
