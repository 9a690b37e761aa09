"""A guard on a parameter that every call in the project leaves false never runs (issue 22, eleventh stop):
WZMIAOMIAO's image-classification trainers cache the augmented training set only `if cache:`, a
parameter of a nested helper passed `cache=cache_data`, whose own default is False and which the one
trainer never passes. The cache after the random map never runs, so nothing is frozen (TFP103).

Each test runs the real CLI on a project written to disk."""

from __future__ import annotations

from tests.conftest import project_findings as _findings, write_project as _project

_UTILS = (
    "import tensorflow as tf\n\n"
    "def generate_ds(paths, labels, batch_size=8, cache_data=False):\n"
    "    def process_train_info(path, label):\n"
    "        image = tf.image.decode_jpeg(tf.io.read_file(path), channels=3)\n"
    "        return tf.image.random_flip_left_right(image), label\n\n"
    "    def configure_for_performance(ds, shuffle_size, shuffle=False, cache=False):\n"
    "        if cache:\n            ds = ds.cache()\n"
    "        if shuffle:\n            ds = ds.shuffle(buffer_size=shuffle_size)\n"
    "        return ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)\n\n"
    "    train_ds = tf.data.Dataset.from_tensor_slices((paths, labels))\n"
    "    train_ds = train_ds.map(process_train_info, num_parallel_calls=tf.data.AUTOTUNE)\n"
    "    train_ds = configure_for_performance(train_ds, len(paths), shuffle=True, cache=cache_data)\n"
    "    return train_ds\n"
)
_TRAIN = (
    "import tensorflow as tf\nfrom utils import generate_ds\n\n"
    "def main():\n    train_ds = generate_ds(paths, labels{passed})\n    model.fit(train_ds, epochs=10)\n\n"
    "if __name__ == '__main__':\n    main()\n"
)


def test_a_cache_guarded_by_a_parameter_no_caller_sets_is_silent(tmp_path):
    root = _project(tmp_path, {"utils.py": _UTILS, "train.py": _TRAIN.format(passed=", batch_size=16")})
    assert _findings(root, "TFP103") == set()


def test_a_caller_that_passes_true_makes_the_cache_run(tmp_path):
    root = _project(tmp_path, {"utils.py": _UTILS, "train.py": _TRAIN.format(passed=", cache_data=True")})
    assert _findings(root, "TFP103") == {("utils.py", 10)}


def test_a_default_that_is_true_makes_the_cache_run(tmp_path):
    utils = _UTILS.replace("cache_data=False", "cache_data=True")
    root = _project(tmp_path, {"utils.py": utils, "train.py": _TRAIN.format(passed="")})
    assert _findings(root, "TFP103") == {("utils.py", 10)}


def test_a_helper_nobody_in_sight_calls_may_be_called_with_anything(tmp_path):
    # A library's function, checked without its callers: the guard may run.
    root = _project(tmp_path, {"utils.py": _UTILS})
    assert _findings(root, "TFP103") == {("utils.py", 10)}


def test_an_importer_the_session_does_not_model_may_pass_anything(tmp_path):
    # A launcher without TensorFlow in it is not modelled: its calls are not in sight.
    launcher = "from utils import generate_ds\n\nds = generate_ds(paths, labels, cache_data=True)\n"
    root = _project(tmp_path, {"utils.py": _UTILS, "train.py": _TRAIN.format(passed=""), "launch.py": launcher})
    assert _findings(root, "TFP103") == {("utils.py", 10)}


_RECURSIVE = (
    "import tensorflow as tf\n\n"
    "def make(files, depth, cache=False):\n"
    "    ds = tf.data.TFRecordDataset(files).shuffle(1000)\n"
    "    if cache:\n        ds = ds.cache()\n"
    "    if depth > 0:\n        return make(files, depth - 1, cache=cache)\n"
    "    return ds.repeat()\n\n"
    "ds = make(['a.tfrecord'], 2{passed})\nmodel.fit(ds, epochs=10)\n"
)


def test_a_helper_passing_its_flag_to_itself_is_followed_a_few_calls_deep(tmp_path):
    # The recursive call binds `cache` to `cache` itself: followed for ever, the check overflowed the
    # stack and the module was reported as "nested too deeply to analyse", every finding in it lost.
    root = _project(tmp_path, {"data.py": _RECURSIVE.format(passed=", cache=True")})
    assert _findings(root, "TFP103") == {("data.py", 6)}
    assert _findings(root, "TFP002") == set()
