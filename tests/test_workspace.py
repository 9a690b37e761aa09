"""The long-lived workspace: a project's models and results kept between checks, updated file by file."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from tflint_perf.checking import workspace as workspace_module
from tflint_perf.checking.config import Settings
from tflint_perf.checking.workspace import Workspace, forget_workspaces, workspace_for

HELPER = """\
import tensorflow as tf


def load(files):
    return tf.data.TFRecordDataset(files)
"""
# The same helper, no longer returning a pipeline: `ds.map` in the importer is then not `Dataset.map`.
HELPER_WITHOUT_PIPELINE = """\
import tensorflow as tf


def load(files):
    return sorted(files)
"""
TRAIN = """\
import tensorflow as tf

from pkg.helpers import load


def decode(record):
    return tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature([], tf.float32)})


def main(files, model):
    ds = load(files)
    ds = ds.map(decode).batch(32).prefetch(tf.data.AUTOTUNE)
    model.fit(ds, epochs=10)
"""
METRICS = """\
import tensorflow as tf


def make(files):
    return tf.data.TFRecordDataset(files).map(tf.io.decode_raw)
"""
EVALUATE = """\
import tensorflow as tf

from pkg.metrics import make


def train(files, model):
    model.fit(make(files).batch(64), epochs=3)
"""


@pytest.fixture
def project(tmp_path):
    forget_workspaces()
    files = {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/helpers.py": HELPER, "train.py": TRAIN,
             "pkg/metrics.py": METRICS, "evaluate.py": EVALUATE}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    yield tmp_path
    forget_workspaces()


def findings(workspace: Workspace, root: Path, name: str):
    path = root / name
    text = workspace.project.text_of(path.resolve())
    return [(d.code, d.location.row) for d in workspace.check_text(text, name, Settings(root=root), path=path)]


def test_an_update_in_memory_changes_the_importers_findings_and_nothing_else(project):
    workspace = workspace_for(project / "train.py", project)
    assert findings(workspace, project, "train.py") == [("TFP102", 12)]
    assert findings(workspace, project, "pkg/metrics.py") == [("TFP102", 5)]
    # Named for evaluation, it fits for 3 epochs: what that `fit` trains on is training (no final prefetch).
    assert findings(workspace, project, "evaluate.py") == [("TFP101", 7)]
    before = workspace.builds()
    checks = workspace.checks_run
    on_disk = (project / "pkg/helpers.py").read_bytes()

    affected = workspace.update(project / "pkg/helpers.py", HELPER_WITHOUT_PIPELINE)

    assert {path.relative_to(project.resolve()).as_posix() for path in affected} == {"pkg/helpers.py", "train.py"}
    assert findings(workspace, project, "train.py") == []  # `load` no longer returns a Dataset
    assert (project / "pkg/helpers.py").read_bytes() == on_disk  # the disk was never touched
    # The unrelated modules are neither modelled nor checked again: their models and results are reused.
    assert findings(workspace, project, "pkg/metrics.py") == [("TFP102", 5)]
    assert findings(workspace, project, "evaluate.py") == [("TFP101", 7)]
    after = workspace.builds()
    for unrelated in ("pkg/metrics.py", "evaluate.py"):
        path = (project / unrelated).resolve()
        assert after[path] == before[path] == 1
    assert after[(project / "train.py").resolve()] == 2
    assert workspace.checks_run == checks + 1  # only train.py ran its rules again


def test_an_overlay_removed_is_the_file_on_disk_again(project):
    workspace = workspace_for(project / "train.py", project)
    workspace.update(project / "pkg/helpers.py", HELPER_WITHOUT_PIPELINE)
    assert findings(workspace, project, "train.py") == []
    workspace.update(project / "pkg/helpers.py", None)
    assert findings(workspace, project, "train.py") == [("TFP102", 12)]


def test_refresh_takes_in_a_file_edited_on_disk(project):
    workspace = workspace_for(project / "train.py", project)
    assert findings(workspace, project, "train.py") == [("TFP102", 12)]
    helper = project / "pkg/helpers.py"
    helper.write_text(HELPER_WITHOUT_PIPELINE)
    stat = helper.stat()
    os.utime(helper, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a later save, whatever the clock
    affected = workspace.refresh()
    assert helper.resolve() in affected
    assert findings(workspace, project, "train.py") == []


def test_one_workspace_per_project_root(project, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    (other / "pyproject.toml").write_text("")
    (other / "train.py").write_text(TRAIN)
    first = workspace_for(project / "train.py", project)
    assert workspace_for(project / "pkg" / "helpers.py", project) is first
    assert workspace_for(other / "train.py", other) is not first


def test_results_are_bounded(project, monkeypatch):
    monkeypatch.setattr(workspace_module, "MAX_RESULTS", 3)
    workspace = workspace_for(project / "train.py", project)
    for version in range(6):
        text = TRAIN + f"\nVERSION = {version}\n"
        workspace.check_text(text, "train.py", Settings(root=project), path=project / "train.py")
    assert workspace.memory()["results"] == 3


def test_results_of_one_file_are_bounded_over_an_editing_session(project):
    """An editor checks each keystroke's text: only the last few results of a file are kept, so memory
    does not grow per edit; the most recent text (undo, a re-check) is still answered from memory."""
    workspace = workspace_for(project / "train.py", project)
    other = findings(workspace, project, "pkg/helpers.py")
    for version in range(3 * workspace_module.RESULTS_PER_FILE):
        text = TRAIN + f"\nVERSION = {version}\n"
        workspace.check_text(text, "train.py", Settings(root=project), path=project / "train.py")
    assert workspace.memory()["results"] == workspace_module.RESULTS_PER_FILE + 1  # and helpers.py's one
    runs = workspace.checks_run
    workspace.check_text(text, "train.py", Settings(root=project), path=project / "train.py")
    assert workspace.checks_run == runs
    assert findings(workspace, project, "pkg/helpers.py") == other and workspace.checks_run == runs


def test_a_module_without_first_party_edges_is_checked_on_its_own(project):
    (project / "alone.py").write_text(textwrap.dedent("""\
        import tensorflow as tf
        ds = tf.data.TFRecordDataset(["a"]).map(tf.io.decode_raw).batch(8)
        for batch in ds:
            pass
    """))
    workspace = workspace_for(project / "alone.py", project)
    assert not workspace.project.has_edges(project / "alone.py")
    first = findings(workspace, project, "alone.py")
    assert findings(workspace, project, "alone.py") == first
    assert workspace.builds()[project / "alone.py"] == 1  # the second check was answered from memory


def test_models_dropped_over_an_editing_session_are_collected_though_the_workspace_freezes(project, monkeypatch):
    """A workspace being edited freezes what is alive now and then (``project/session.py``: the collector
    then skips it); the models its edits drop must still be freed: none waits past the next refreeze."""
    import gc
    import weakref

    from tflint_perf.project import session as session_module

    # No periodic refreeze within the test: frozen models dropped by edits must set one off themselves.
    monkeypatch.setattr(session_module, "REFREEZE_EVERY", 1000)
    monkeypatch.setattr(session_module, "REFREEZE_DROPPED", 2)
    workspace = workspace_for(project / "train.py", project)
    settings = Settings(root=project)
    texts = {"pkg/helpers.py": HELPER, "train.py": TRAIN, "pkg/metrics.py": METRICS, "evaluate.py": EVALUATE}
    built = []
    try:
        for version in range(30):
            # Mostly train.py and its helper; now and then metrics.py, whose models (its own and its
            # importer's) were frozen by then: dropping them must set off a refreeze.
            name = "pkg/metrics.py" if version % 10 == 9 else "train.py" if version % 3 else "pkg/helpers.py"
            text = texts[name] = texts[name] + f"\nVERSION = {version}\n"
            workspace.update(project / name, text)
            for checked in ("train.py", "pkg/helpers.py", "pkg/metrics.py", "evaluate.py"):
                workspace.check_text(texts[checked], checked, settings, path=project / checked)
            built.extend(weakref.ref(model) for model in workspace.session._models.values() if model is not None)
        gc.collect()
        alive = {id(ref()) for ref in built if ref() is not None}
        # The models in the session now, and fewer than REFREEZE_DROPPED frozen ones dropped since the last refreeze.
        assert len(alive) <= len(workspace.session) + session_module.REFREEZE_DROPPED - 1
        assert sum(workspace.session.builds.values()) > 30  # many were built (and dropped) along the way
    finally:
        gc.unfreeze()
