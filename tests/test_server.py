"""`tflint-perf server` end to end: a real LSP client (pytest-lsp) talking to the real server
process over stdio: diagnostics, quick fixes, noqa, fix all, unsafe fixes, hover, a syntax error
mid-edit, shutdown."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp_client import (REPO, actions_at, apply_edits, apply_in_editor, change, codes, open_file, published, serving)

TRAIN = '''import tensorflow as tf


def decode(record):
    image = tf.io.decode_jpeg(record)
    return tf.image.resize(image, [224, 224])


files = ["a.tfrecord"]
ds = tf.data.TFRecordDataset(files)
ds = ds.map(decode).prefetch(1)
model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.fit(ds, epochs=3)
'''

RANDOM = '''import tensorflow as tf


def augment(x):
    return tf.image.random_flip_left_right(x)


ds = tf.data.Dataset.from_tensor_slices(images).map(augment).prefetch(1)
model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.fit(ds, epochs=3)
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def only(items, code):
    return [item for item in items if item.code == code]


@pytest.mark.asyncio
async def test_diagnostics_quick_fix_and_fix_all(project: Path) -> None:
    async with serving(project) as client:
        target = open_file(client, project / "train.py")
        items = await published(client, target, lambda items: bool(items))
        assert codes(items) == ["TFP102"]
        item = items[0]
        assert item.source == "tflint-perf"
        assert item.severity == types.DiagnosticSeverity.Warning
        assert item.code_description.href.endswith("docs/rules/TFP102.md")
        assert item.data["name"] == "sequential-map"
        assert (item.range.start.line, item.range.start.character) == (10, 8)  # `map(decode)`, row 11 column 9

        actions = await actions_at(client, target, item)
        titles = [action.title for action in actions]
        fix = next(action for action in actions if action.title.startswith("Fix TFP102"))
        assert "(unsafe)" not in fix.title and fix.is_preferred
        assert "Disable TFP102 for this line" in titles
        assert any(action.kind == "source.fixAll.tflint-perf" for action in actions)
        edits = fix.edit.changes[target]
        assert [edit.new_text for edit in edits] == [", num_parallel_calls=tf.data.AUTOTUNE"]  # minimal: an insertion
        fixed = apply_edits(TRAIN, edits)
        assert ".map(decode, num_parallel_calls=tf.data.AUTOTUNE)" in fixed

        apply_in_editor(client, project / "train.py", edits, 2)
        assert await published(client, target, lambda items: not items) == []

        # The whole-document fix gives what `tflint-perf check --fix` writes.
        change(client, project / "train.py", TRAIN, 3)
        await published(client, target, lambda items: bool(items))
        fix_all = await actions_at(client, target, item, only=["source.fixAll"])
        assert [action.kind for action in fix_all] == ["source.fixAll.tflint-perf"]
        written = project / "written.py"
        written.write_text(TRAIN)
        subprocess.run([sys.executable, "-m", "tflint_perf", "check", "--fix", "--no-cache", str(written)],
                       capture_output=True, env={"PYTHONPATH": str(REPO)}, check=False)
        assert apply_edits(TRAIN, fix_all[0].edit.changes[target]) == written.read_text()
        assert (project / "train.py").read_text() == TRAIN  # the server never writes the user's files


@pytest.mark.asyncio
async def test_changes_in_a_burst_publish_only_what_each_version_holds(project: Path) -> None:
    fixed = TRAIN.replace(".map(decode)", ".map(decode, num_parallel_calls=4)")
    async with serving(project) as client:
        target = open_file(client, project / "train.py")
        await published(client, target, lambda items: bool(items))
        texts = {version: fixed if version % 2 else TRAIN for version in range(2, 8)}
        for version, text in texts.items():
            change(client, project / "train.py", text, version)
        await published(client, target, lambda items: client.publications[-1][1] == 7)
        seen = [(version, found) for uri, version, found in client.publications if uri == target]
        expected = {1: ["TFP102"], **{v: [] if text == fixed else ["TFP102"] for v, text in texts.items()}}
        assert all(found == expected[version] for version, found in seen)  # never a stale result
        assert [version for version, _ in seen] == sorted(version for version, _ in seen)
        assert seen[-1] == (7, [])


@pytest.mark.asyncio
async def test_fix_all_resolved_when_chosen(project: Path) -> None:
    # A client that resolves edits gets fix all without its edit (computed at every cursor move, it
    # would re-run the fixer), and the edit when it asks.
    async with serving(project, resolve=True) as client:
        target = open_file(client, project / "train.py")
        item = (await published(client, target, lambda items: bool(items)))[0]
        action = next(a for a in await actions_at(client, target, item) if a.kind == "source.fixAll.tflint-perf")
        assert action.edit is None
        resolved = await client.code_action_resolve_async(action)
        assert ".map(decode, num_parallel_calls=tf.data.AUTOTUNE)" in apply_edits(TRAIN, resolved.edit.changes[target])


@pytest.mark.asyncio
async def test_disable_for_this_line(project: Path) -> None:
    async with serving(project) as client:
        target = open_file(client, project / "train.py")
        item = (await published(client, target, lambda items: bool(items)))[0]
        noqa = next(a for a in await actions_at(client, target, item) if a.title == "Disable TFP102 for this line")
        edits = noqa.edit.changes[target]
        assert [(e.range.start.line, e.new_text) for e in edits] == [(10, "  # noqa: TFP102")]
        change(client, project / "train.py", apply_edits(TRAIN, edits), 2)
        assert await published(client, target, lambda items: not items) == []

        # A line that already has `# noqa: TFP101` gets the code added to its list.
        commented = TRAIN.replace(".prefetch(1)", ".prefetch(1)  # noqa: TFP101")
        change(client, project / "train.py", commented, 3)
        item = (await published(client, target, lambda items: bool(items)))[0]
        noqa = next(a for a in await actions_at(client, target, item) if a.title == "Disable TFP102 for this line")
        assert "# noqa: TFP101, TFP102" in apply_edits(commented, noqa.edit.changes[target])


@pytest.mark.parametrize("unsafe", [False, True])
@pytest.mark.asyncio
async def test_unsafe_fixes_follow_the_setting(tmp_path: Path, unsafe: bool) -> None:
    (tmp_path / "train.py").write_text(RANDOM)
    async with serving(tmp_path, options={"settings": {"unsafeFixes": unsafe}}) as client:
        target = open_file(client, tmp_path / "train.py")
        item = only(await published(client, target, lambda items: bool(only(items, "TFP102"))), "TFP102")[0]
        titles = [action.title for action in await actions_at(client, target, item)]
        fixes = [title for title in titles if title.startswith("Fix TFP102")]
        if unsafe:
            assert len(fixes) == 1 and fixes[0].startswith("Fix TFP102 (unsafe): ")
        else:
            assert fixes == []
        assert "Disable TFP102 for this line" in titles


@pytest.mark.asyncio
async def test_hover_explains_the_rule(project: Path) -> None:
    async with serving(project) as client:
        target = open_file(client, project / "train.py")
        item = (await published(client, target, lambda items: bool(items)))[0]
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=target), position=item.range.start))
        text = hover.contents.value
        assert "TFP102 sequential-map" in text
        assert "Why is this bad?" in text
        assert "with AUTOTUNE (2.0x)" in text  # the measured speedup, from the rule's own section
        assert "docs/rules/TFP102.md" in text
        nothing = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=target), position=types.Position(line=0, character=0)))
        assert nothing is None


@pytest.mark.asyncio
async def test_syntax_error_mid_edit_is_a_diagnostic(project: Path) -> None:
    async with serving(project) as client:
        target = open_file(client, project / "train.py")
        await published(client, target, lambda items: bool(items))
        broken = TRAIN.replace("def decode(record):", "def decode(record:")
        change(client, project / "train.py", broken, 2)
        items = await published(client, target, lambda items: codes(items) == ["TFP002"])
        assert items[0].severity == types.DiagnosticSeverity.Error
        assert items[0].message.startswith("SyntaxError")
        # The server keeps answering, and checks the mended text again.
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=target), position=types.Position(line=0, character=0)))
        assert hover is None
        change(client, project / "train.py", TRAIN, 3)
        assert codes(await published(client, target, lambda items: codes(items) == ["TFP102"])) == ["TFP102"]


@pytest.mark.asyncio
async def test_a_file_beyond_the_limits_is_a_diagnostic(project: Path) -> None:
    async with serving(project) as client:
        huge = TRAIN + "x = 1\n" * 400_000  # 2.4 MiB: past text/limits.py's 2 MiB, as the command line says
        target = open_file(client, project / "train.py", huge)
        items = await published(client, target, lambda items: bool(items))
        assert codes(items) == ["TFP002"] and "larger than 2 MiB" in items[0].message
        change(client, project / "train.py", TRAIN, 2)
        assert codes(await published(client, target, lambda items: codes(items) == ["TFP102"])) == ["TFP102"]


@pytest.mark.asyncio
async def test_shutdown_and_exit_end_the_server_cleanly(project: Path) -> None:
    async with serving(project, arguments=("--stdio",)) as client:  # as VS Code's client starts a server
        open_file(client, project / "train.py")
        await client.shutdown_session()
        assert client._server.returncode == 0


@pytest.mark.asyncio
async def test_exit_without_shutdown_is_exit_code_1(project: Path) -> None:
    async with serving(project) as client:
        client.exit(None)  # as the protocol says: exit before shutdown is an error
        assert await client._server.wait() == 1


def test_without_pygls_the_server_says_so() -> None:
    blocker = ("import sys\nclass Block:\n    def find_spec(self, name, *args):\n"
               "        if name.split('.')[0] in ('pygls', 'lsprotocol'):\n            raise ImportError(name)\n"
               "sys.meta_path.insert(0, Block())\nfrom tflint_perf.faces.cli import main\nsys.exit(main(['server']))\n")
    result = subprocess.run([sys.executable, "-c", blocker], capture_output=True, text=True,
                            env={"PYTHONPATH": str(REPO)}, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert "pip install" in result.stderr and "pygls" in result.stderr


@pytest.mark.asyncio
async def test_an_untitled_buffer_is_checked_alone_with_the_folders_settings(tmp_path: Path) -> None:
    # As ruff's server: a buffer not yet saved is checked, in a one-folder workspace with the settings
    # of a file at the folder's top (here its config turns unsafe fixes on), with no project around it.
    (tmp_path / "pyproject.toml").write_text("[tool.tflint-perf]\nunsafe-fixes = true\n")
    untitled = "untitled:Untitled-1"
    async with serving(tmp_path) as client:
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=untitled, language_id="python", version=1, text=RANDOM)))
        items = await published(client, untitled, lambda items: bool(items))
        assert codes(items) == ["TFP102"]
        fix = next(a for a in await actions_at(client, untitled, items[0]) if a.title.startswith("Fix TFP102"))
        assert "(unsafe)" in fix.title  # a random augmentation: unsafe, offered as the folder's config says
        fixed = apply_edits(RANDOM, fix.edit.changes[untitled])
        assert ".map(\n    augment,\n    num_parallel_calls=tf.data.AUTOTUNE,\n)" in fixed

        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=untitled, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
        assert await published(client, untitled, lambda items: not items) == []
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=untitled)))
        assert sorted(path.name for path in tmp_path.iterdir()) == ["pyproject.toml"]  # nothing written
        # A plain-text buffer is not Python: never checked.
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri="untitled:Untitled-2", language_id="plaintext", version=1, text=RANDOM)))
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri="untitled:Untitled-3", language_id="python", version=1, text=TRAIN)))
        await published(client, "untitled:Untitled-3", lambda items: bool(items))
        assert "untitled:Untitled-2" not in client.diagnostics


def test_an_untitled_buffer_outside_one_folder_gets_the_editors_settings_over_the_defaults(tmp_path: Path) -> None:
    from tflint_perf.faces.server.settings import SettingsStore

    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
        (folder / "pyproject.toml").write_text("[tool.tflint-perf]\nignore = ['TFP102']\n")
    store = SettingsStore()
    store.set_editor({"settings": {"unsafeFixes": True}})
    alone = store.for_untitled("Untitled-1", [first])
    assert alone.config_file == first / "pyproject.toml" and "TFP102" not in alone.selected_codes()
    for folders in ([first, second], []):  # which folder's would it be? none: the defaults
        fallback = store.for_untitled("Untitled-1", folders)
        assert fallback.config_file is None and fallback.unsafe_fixes and "TFP102" in fallback.selected_codes()
