"""`tflint-perf server` with a project around the open files: notebooks (cells joined as the command
line joins them), a change in one module re-checking the open modules that depend on it, settings
and the inferred TensorFlow version reloaded when pyproject.toml or requirements change, pulled
diagnostics, a bad configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp_client import actions_at, apply_edits, change, codes, open_file, published, serving, uri
from tests.test_server import TRAIN

DATA = '''import tensorflow as tf


def decode(record):
    return tf.io.decode_jpeg(record)


def make_dataset(files):
    return tf.data.TFRecordDataset(files).map(decode)
'''

FITS = '''import tensorflow as tf

from data import make_dataset

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.fit(make_dataset(["a.tfrecord"]).prefetch(1), epochs=3)
'''

EVALUATES = FITS.replace("model.fit(make_dataset([\"a.tfrecord\"]).prefetch(1), epochs=3)",
                         "model.evaluate(make_dataset([\"a.tfrecord\"]))")

CELLS = [
    (types.NotebookCellKind.Markup, "# Training"),
    (types.NotebookCellKind.Code, "import tensorflow as tf\n\ndef decode(record):\n    return tf.io.decode_jpeg(record)\n"),
    (types.NotebookCellKind.Code, "%matplotlib inline\nds = tf.data.TFRecordDataset(files)\nds = ds.map(decode).prefetch(1)\n"),
    (types.NotebookCellKind.Code, "model = tf.keras.Sequential([tf.keras.layers.Dense(10)])\nmodel.fit(ds, epochs=3)\n"),
]


def changed_on_disk(client, path: Path) -> None:
    """What the editor's file watcher sends."""
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=uri(path), type=types.FileChangeType.Changed)]))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "data.py").write_text(DATA)
    (tmp_path / "train.py").write_text(FITS)
    return tmp_path


@pytest.mark.asyncio
async def test_a_change_in_an_importer_rechecks_the_open_module_it_imports(project: Path) -> None:
    async with serving(project) as client:
        data = open_file(client, project / "data.py")
        open_file(client, project / "train.py")
        assert codes(await published(client, data, lambda items: bool(items))) == ["TFP102"]  # fitted in train.py
        # Only evaluated now: data.py's map no longer feeds training, and data.py is published again.
        change(client, project / "train.py", EVALUATES, 2)
        assert await published(client, data, lambda items: not items) == []
        change(client, project / "train.py", FITS, 3)
        assert codes(await published(client, data, lambda items: bool(items))) == ["TFP102"]


@pytest.mark.asyncio
async def test_a_file_changed_on_disk_rechecks_the_open_modules(project: Path) -> None:
    async with serving(project) as client:
        data = open_file(client, project / "data.py")
        assert codes(await published(client, data, lambda items: bool(items))) == ["TFP102"]
        (project / "train.py").write_text(EVALUATES)  # not open: the editor's watcher reports it
        changed_on_disk(client, project / "train.py")
        assert await published(client, data, lambda items: not items) == []


@pytest.mark.asyncio
async def test_settings_and_tensorflow_version_reload(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "train.py").write_text(TRAIN)
    async with serving(tmp_path) as client:
        target = open_file(client, tmp_path / "train.py")
        assert codes(await published(client, target, lambda items: bool(items))) == ["TFP102"]

        # TensorFlow 2.15 parallelises a stateless map itself: TFP102 no longer applies.
        (tmp_path / "requirements.txt").write_text("tensorflow>=2.15\n")
        changed_on_disk(client, tmp_path / "requirements.txt")
        assert await published(client, target, lambda items: not items) == []
        (tmp_path / "requirements.txt").write_text("tensorflow>=2.4\n")
        changed_on_disk(client, tmp_path / "requirements.txt")
        assert codes(await published(client, target, lambda items: bool(items))) == ["TFP102"]
        # The project's own selection.
        (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n[tool.tflint-perf]\nignore = ['TFP102']\n")
        changed_on_disk(client, tmp_path / "pyproject.toml")
        assert await published(client, target, lambda items: not items) == []


@pytest.mark.asyncio
async def test_editor_settings_go_over_the_project_config(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.tflint-perf]\nignore = ['TFP102']\n")
    (tmp_path / "train.py").write_text(TRAIN)
    async with serving(tmp_path, configuration={"targetVersion": "2.4", "select": ["TFP1"]}) as client:
        target = open_file(client, tmp_path / "train.py")
        # `select` replaces the project's selection, as on the command line; `ignore` still adds.
        assert await published(client, target, lambda items: not items) == []
    async with serving(tmp_path, options={"select": ["TFP102"], "targetVersion": "2.4"}, configuration={}) as client:
        target = open_file(client, tmp_path / "train.py")
        assert await published(client, target, lambda items: not items) == []
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    async with serving(tmp_path, options={"targetVersion": "2.15"}) as client:
        target = open_file(client, tmp_path / "train.py")
        assert await published(client, target, lambda items: not items) == []
    # Changed in the editor while the server runs: it asks for the settings again.
    async with serving(tmp_path, configuration={}) as client:
        target = open_file(client, tmp_path / "train.py")
        assert codes(await published(client, target, lambda items: bool(items))) == ["TFP102"]
        client.set_configuration({"ignore": ["TFP102"]}, section="tflint-perf")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        assert await published(client, target, lambda items: not items) == []


@pytest.mark.asyncio
async def test_a_bad_configuration_is_a_diagnostic_and_a_message(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.tflint-perf]\nselect = ['TFP999x']\n")
    (tmp_path / "train.py").write_text(TRAIN)
    async with serving(tmp_path) as client:
        target = open_file(client, tmp_path / "train.py")
        items = await published(client, target, lambda items: bool(items))
        assert codes(items) == ["TFP000"] and "unknown rule selector `TFP999x`" in items[0].message
        assert any("TFP999x" in message.message for message in client.messages)
        # Mended on disk: the findings come back.
        (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
        changed_on_disk(client, tmp_path / "pyproject.toml")
        assert codes(await published(client, target, lambda items: codes(items) == ["TFP102"])) == ["TFP102"]


@pytest.mark.asyncio
async def test_pulled_diagnostics(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    async with serving(tmp_path, pull=True) as client:
        target = open_file(client, tmp_path / "train.py")
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=target)))
        assert codes(report.items) == ["TFP102"]
        change(client, tmp_path / "train.py", TRAIN.replace(".map(decode)", ".map(decode, num_parallel_calls=4)"), 2)
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=target)))
        assert list(report.items) == []  # the latest version, asked before the debounced check ran
        assert target not in client.diagnostics  # a pulling client is not also pushed diagnostics


@pytest.mark.asyncio
async def test_a_pull_right_after_a_change_elsewhere_gets_the_recheck_not_the_old_result(project: Path) -> None:
    """data.py's text did not change, but train.py's change decides its findings: pulled before the
    debounced re-check of data.py has run, it must be checked now, not answered with its last result."""
    async with serving(project, pull=True) as client:
        data = open_file(client, project / "data.py")
        open_file(client, project / "train.py")
        asked = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=data))
        assert codes((await client.text_document_diagnostic_async(asked)).items) == ["TFP102"]
        change(client, project / "train.py", EVALUATES, 2)
        train = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri(project / "train.py")))
        await client.text_document_diagnostic_async(train)  # train.py checked now: data.py's re-check is scheduled
        assert list((await client.text_document_diagnostic_async(asked)).items) == []


def _open_notebook(client, path, cells) -> list:
    """Open a notebook at ``path`` (a file's Path, or an ``untitled:`` URI for one not yet saved)."""
    cell_uris = [f"vscode-notebook-cell:{path}#W{index}" for index in range(len(cells))]
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=uri(path) if isinstance(path, Path) else path,
                                                 notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=kind, document=cell_uri) for (kind, _), cell_uri in zip(cells, cell_uris)]),
        cell_text_documents=[types.TextDocumentItem(uri=cell_uri, language_id="python" if kind == types.NotebookCellKind.Code
                                                    else "markdown", version=1, text=text)
                             for (kind, text), cell_uri in zip(cells, cell_uris)]))
    return cell_uris


@pytest.mark.asyncio
async def test_notebook_findings_across_cells_map_to_their_cell(tmp_path: Path) -> None:
    path = tmp_path / "train.ipynb"
    async with serving(tmp_path) as client:
        cells = _open_notebook(client, path, CELLS)
        # The map in cell 3 (its `decode` defined in cell 2, fitted in cell 4) is reported in cell 3, at
        # its row there (the `%matplotlib` line is IPython, kept in place).
        items = await published(client, cells[2], lambda items: bool(items))
        assert codes(items) == ["TFP102"]
        assert (items[0].range.start.line, items[0].range.start.character) == (2, 8)
        for other in (cells[0], cells[1], cells[3]):
            assert await published(client, other) == []
        # Its quick fix edits that cell only.
        fix = next(a for a in await actions_at(client, cells[2], items[0]) if a.title.startswith("Fix TFP102"))
        assert list(fix.edit.changes) == [cells[2]]
        fixed = apply_edits(CELLS[2][1], fix.edit.changes[cells[2]])
        assert fixed == CELLS[2][1].replace(".map(decode)", ".map(decode, num_parallel_calls=tf.data.AUTOTUNE)")
        # A syntax error in one cell is reported in that cell, and the others are still checked.
        client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=uri(path), version=2),
            change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
                types.NotebookDocumentCellContentChanges(
                    document=types.VersionedTextDocumentIdentifier(uri=cells[3], version=2),
                    changes=[types.TextDocumentContentChangeWholeDocument(text="model.fit(ds,\n")])]))))
        assert codes(await published(client, cells[3], lambda items: bool(items))) == ["TFP002"]
        client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=uri(path)),
            cell_text_documents=[types.TextDocumentIdentifier(uri=cell) for cell in cells]))
        assert await published(client, cells[3], lambda items: not items) == []


@pytest.mark.asyncio
async def test_an_untitled_notebook_is_checked_alone(tmp_path: Path) -> None:
    # A notebook not yet saved (VS Code's "untitled:Untitled-1.ipynb") is checked as ruff's server
    # checks it: its cells joined, with no project around it, and its quick fixes edit its cells.
    untitled = "untitled:Untitled-1.ipynb"
    async with serving(tmp_path) as client:
        cells = _open_notebook(client, untitled, CELLS)
        items = await published(client, cells[2], lambda items: bool(items))
        assert codes(items) == ["TFP102"]
        fix = next(a for a in await actions_at(client, cells[2], items[0]) if a.title.startswith("Fix TFP102"))
        assert list(fix.edit.changes) == [cells[2]]
        fixed = apply_edits(CELLS[2][1], fix.edit.changes[cells[2]])
        assert fixed == CELLS[2][1].replace(".map(decode)", ".map(decode, num_parallel_calls=tf.data.AUTOTUNE)")
    assert list(tmp_path.iterdir()) == []  # nothing written
