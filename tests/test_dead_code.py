"""Code nothing in the project runs is no hot path (issue 22, eleventh stop): FixMatch's
``DataSet.empty_data``, a classmethod whose name occurs nowhere in the repository but its ``def``,
builds a sequential map nobody ever iterates. A project packaged for others keeps its public
functions live: users call them.

Each test runs the real CLI on a project written to disk."""

from __future__ import annotations

from tests.conftest import project_findings as _findings, write_project as _project

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
