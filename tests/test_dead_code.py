"""Code nothing in the project runs is no hot path (issue 22, eleventh stop): FixMatch's
``DataSet.empty_data``, a classmethod whose name occurs nowhere in the repository but its ``def``,
builds a sequential map nobody ever iterates. A project packaged for others keeps its public
functions live: users call them. A training pipeline returned unconsumed stays reported (issue 22,
item 1: its caller is a notebook, a user or a framework). The name is looked for where the results
cache and the workspace key a file's findings (the module and its neighbourhood), so a cached or
remembered finding is the one a fresh run gives.

The tests run the real CLI on a project written to disk, or the real workspace."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import project_findings as _findings, run_cli, write_project as _project
from tflint_perf.checking.config import Settings
from tflint_perf.checking.workspace import forget_workspaces, workspace_for

_DATA = (
    "import tensorflow as tf\n\n"
    "def _parse(record):\n    return tf.io.decode_jpeg(tf.io.parse_single_example(record, SPEC)['image'])\n\n"
    "class DataSet:\n    def __init__(self, data):\n        self.data = data\n\n"
    "    @classmethod\n    def from_files(cls, files):\n"
    "        return cls(tf.data.TFRecordDataset(files).map(_parse))\n\n"
    "    @classmethod\n    def empty_data(cls, image_shape):\n"
    "        def _get_null_input(_):\n            return tf.io.decode_jpeg(tf.zeros(image_shape, tf.string))\n\n"
    "        return cls(tf.data.Dataset.range(64).map(_get_null_input))\n"
)
_TRAIN = (
    "import tensorflow as tf\nfrom data import DataSet\n\n"
    "train = DataSet.from_files(FILES)\n{more}model.fit(train.data.batch(64), epochs=10)\n"
)


def test_a_method_nothing_names_builds_nothing_that_runs(tmp_path):
    root = _project(tmp_path, {"data.py": _DATA, "train.py": _TRAIN.format(more="")})
    assert _findings(root, "TFP102") == {("data.py", 12)}


def test_a_method_called_anywhere_is_live(tmp_path):
    more = "empty = DataSet.empty_data([32, 32, 3])\n"
    root = _project(tmp_path, {"data.py": _DATA, "train.py": _TRAIN.format(more=more)})
    assert _findings(root, "TFP102") == {("data.py", 12), ("data.py", 19)}


def test_a_packaged_project_keeps_its_public_methods_live(tmp_path):
    root = _project(tmp_path, {"data.py": _DATA, "train.py": _TRAIN.format(more=""), "setup.py": "setup()\n"})
    assert _findings(root, "TFP102") == {("data.py", 12), ("data.py", 19)}


# A module of pipeline builders for callers out of sight (a notebook elsewhere, a user, an Estimator):
# it imports the project's settings, so it is read as part of the project, and nothing in it names them.
_BUILDERS = (
    "import tensorflow as tf\nfrom settings import BATCH\n\n"
    "def _augment(image, label):\n    return tf.image.random_flip_left_right(image), label\n\n"
    "def make_train_dataset(files):\n"
    "    ds = tf.data.TFRecordDataset(files).shuffle(10000).map(_augment)\n"
    "    return ds.repeat().batch(BATCH)\n"
)
# A module the data module neither imports nor is imported by, calling the dead classmethod on a class it is given.
_WARM_UP = "def warm_up(dataset_class):\n    return dataset_class.empty_data([32, 32, 3])\n"


def test_a_training_pipeline_returned_to_a_caller_out_of_sight_is_reported(tmp_path):
    root = _project(tmp_path, {"data.py": _BUILDERS, "settings.py": "BATCH = 64\n"})
    assert _findings(root, "TFP102") == {("data.py", 8)}


def _cached_findings(root: Path):
    result = run_cli("check", "--cache-dir", str(root / ".cache"), "--output-format", "json", "--select", "TFP102",
                     ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return {(Path(d["filename"]).name, d["location"]["row"]) for d in json.loads(result.stdout)}


def test_a_cached_result_is_what_a_fresh_run_gives_after_an_unrelated_file_changes(tmp_path):
    # The results cache keys data.py by its neighbourhood; a mention in warm.py, outside it, must not
    # decide data.py's findings, or the entry would outlive the change.
    root = _project(tmp_path, {"data.py": _DATA, "train.py": _TRAIN.format(more=""), "warm.py": "x = 1\n"})
    assert _cached_findings(root) == {("data.py", 12)}
    (root / "warm.py").write_text(_WARM_UP)
    assert _cached_findings(root) == _findings(root, "TFP102")


def _workspace_findings(root: Path):
    """data.py's TFP102 rows, as the long-lived workspace of ``root`` checks it now."""
    workspace = workspace_for(root / "data.py", root)
    text = (root / "data.py").read_text()
    return {d.location.row for d in workspace.check_text(text, "data.py", Settings(root=root), {"TFP102"},
                                                          path=root / "data.py")}


def test_the_workspace_remembers_what_a_fresh_workspace_finds_after_an_unrelated_edit(tmp_path):
    forget_workspaces()
    root = _project(tmp_path, {"data.py": _DATA, "train.py": _TRAIN.format(more=""), "warm.py": "x = 1\n"})
    try:
        _workspace_findings(root)
        workspace_for(root / "data.py", root).update((root / "warm.py").resolve(), _WARM_UP)  # an editor's buffer
        remembered = _workspace_findings(root)
        (root / "warm.py").write_text(_WARM_UP)
        forget_workspaces()
        assert remembered == _workspace_findings(root)
    finally:
        forget_workspaces()


# setup.py lies in no module's neighbourhood, yet packaging decides which public methods are live: the
# results cache and the workspace key findings by the answer.
def test_a_cached_result_follows_the_project_becoming_packaged(tmp_path):
    root = _project(tmp_path, {"data.py": _DATA, "train.py": _TRAIN.format(more="")})
    assert _cached_findings(root) == {("data.py", 12)}
    (root / "setup.py").write_text("setup()\n")
    assert _cached_findings(root) == {("data.py", 12), ("data.py", 19)}
    (root / "setup.py").unlink()
    assert _cached_findings(root) == {("data.py", 12)}


def test_the_workspace_follows_the_project_becoming_packaged(tmp_path):
    forget_workspaces()
    root = _project(tmp_path, {"data.py": _DATA, "train.py": _TRAIN.format(more="")})
    try:
        assert _workspace_findings(root) == {12}
        (root / "pyproject.toml").write_text('[project]\nname = "data"\n')
        assert _workspace_findings(root) == {12, 19}
    finally:
        forget_workspaces()
