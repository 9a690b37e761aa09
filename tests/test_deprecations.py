"""TFP401/TFP402 through the real command line: opt-in (off by default); when selected, the TensorFlow
version a project declares decides whether a deprecated spelling is reported (it warns or breaks
there) and whether its fix is offered; TFP209 needs naming."""

from __future__ import annotations

import json

from tests.conftest import run_cli
from tflint_perf.analysis.deprecations import TABLE, effect, replacement_available, respell

SCRIPT = (
    "import tensorflow as tf\n"
    "ds = tf.data.TFRecordDataset(files)\n"
    "ds = ds.apply(tf.data.experimental.map_and_batch(parse, 32))\n"
    "ds = ds.prefetch(tf.data.experimental.AUTOTUNE)\n"
    "model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
    "model.fit_generator(gen, epochs=3)\n"
)


def _project(tmp_path, requirement):
    (tmp_path / "requirements.txt").write_text(requirement + "\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(SCRIPT, encoding="utf-8")


def _codes(result):
    return sorted(finding["code"] for finding in json.loads(result.stdout))


def test_declared_new_tensorflow_gets_the_fixes(tmp_path):
    # `--unsafe-fixes` for map_and_batch: the same batches, measured slower (TFP401's fix safety).
    _project(tmp_path, "tensorflow>=2.15")
    result = run_cli("check", "--select", "TFP4", "--no-cache", "--fix", "--unsafe-fixes", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "train.py").read_text(encoding="utf-8") == (
        "import tensorflow as tf\n"
        "ds = tf.data.TFRecordDataset(files)\n"
        "ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE).batch(32)\n"
        "ds = ds.prefetch(tf.data.experimental.AUTOTUNE)\n"  # an alias no release warns about: left alone
        "model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
        "model.fit(gen, epochs=3)\n"
    )


def test_declared_old_tensorflow_is_silent(tmp_path):
    # TensorFlow 1.15 has none of the replacements: the experimental spellings are the right ones there.
    _project(tmp_path, "tensorflow==1.15.5")
    result = run_cli("check", "--select", "TFP4", "--no-cache", "--output-format", "json", "train.py", cwd=tmp_path)
    assert _codes(result) == []


def test_unknown_version_reports_without_fix(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    result = run_cli("check", "--select", "TFP4", "--no-cache", "--output-format", "json", "train.py", cwd=tmp_path)
    findings = json.loads(result.stdout)
    assert sorted(f["code"] for f in findings) == ["TFP401", "TFP402"]
    assert all(f["fix"] is None for f in findings)
    assert all("set `target-version` for a fix" in f["message"] for f in findings)
    assert all("the target TensorFlow is unknown" in f["message"] for f in findings)
    assert any("warns from TensorFlow 2.1 and is removed in 2.16" in f["message"] for f in findings)


def test_the_default_rule_set_has_no_deprecation_advice(tmp_path):
    _project(tmp_path, "tensorflow>=2.15")
    for selection in ([], ["--select", "TFP"], ["--select", "ALL"]):
        result = run_cli("check", *selection, "--no-cache", "--output-format", "json", "train.py", cwd=tmp_path)
        assert not [c for c in _codes(result) if c.startswith("TFP4")], selection
    result = run_cli("check", "--extend-select", "TFP4", "--no-cache", "--output-format", "json", "train.py", cwd=tmp_path)
    assert _codes(result) == ["TFP401", "TFP402"]


def test_what_is_reported_follows_the_target(tmp_path):
    """Keyed to the target: a spelling that breaks there, one that warns there, nothing where it is silent."""
    (tmp_path / "train.py").write_text(
        "import tensorflow as tf\n"
        "model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
        "model.fit_generator(gen, epochs=3)\n"
        "y = tf.py_func(f, [x], tf.float32)\n", encoding="utf-8")

    def messages(version):
        result = run_cli("check", "--isolated", "--extend-select", "TFP4", "--target-version", version, "--no-cache",
                         "--output-format", "json", "train.py", cwd=tmp_path)
        return {f["location"]["row"]: f["message"] for f in json.loads(result.stdout) if f["code"] == "TFP402"}

    assert messages("1.15") == {}  # TensorFlow 1: no TensorFlow 2 advice
    on_2_0 = messages("2.0")
    assert set(on_2_0) == {4} and "removed in TensorFlow 2.0: it breaks on 2.0, the target" in on_2_0[4]
    assert "TensorFlow 2.15, the target, logs a deprecation warning" in messages("2.15")[3]
    assert "removed in TensorFlow 2.16: it breaks on 2.16, the target" in messages("2.16")[3]


def test_off_by_default_rule_needs_its_own_name(tmp_path):
    script = (
        "import tensorflow as tf\n"
        "model = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(1)])\n"
        "model.compile(optimizer='sgd', loss='mse')\n"
        "model.fit(x, y, epochs=10)\n"
    )
    (tmp_path / "train.py").write_text(script, encoding="utf-8")
    for selection, expected in ((["--select", "TFP2"], []), (["--select", "ALL"], []),
                                (["--select", "TFP209"], ["TFP209"]), (["--extend-select", "steps-per-execution"], ["TFP209"])):
        result = run_cli("check", *selection, "--isolated", "--no-cache", "--output-format", "json", "train.py", cwd=tmp_path)
        assert [c for c in _codes(result) if c == "TFP209"] == expected, selection


def test_table_entries_are_consistent():
    for entry in TABLE:
        assert entry.rule in ("TFP401", "TFP402") and entry.since >= (1, 14)
        never = entry.old == "tf.data.experimental.AUTOTUNE"  # a constant: silent on every release
        newest = (2, 21)
        assert (effect(newest, entry, tf1=False, tf1_only=False) is None) == never, entry.old
        assert effect((1, 13), entry, tf1=False, tf1_only=False) is None
        assert effect((1, 15), entry, tf1=False, tf1_only=False) is None  # no TensorFlow 2 advice for 1.x
        if entry.removed_in is None and not never:
            assert effect(max(entry.warns, (2, 0)), entry, tf1=False, tf1_only=False) is not None
        assert entry.warns is None or entry.warns >= entry.since  # nothing warns before its replacement exists
        assert replacement_available(entry.since, entry) and not replacement_available(None, entry)
        if entry.form in ("constant", "function") and entry.old_tail and not entry.special == "report":
            written = "tf." + entry.old.split(".", 1)[1] if entry.old.startswith("tf.") else "tf." + entry.old
            assert respell(written, entry) is not None, entry.old


def test_a_deprecated_api_that_is_also_slow_is_reported_by_the_performance_rule_by_default(tmp_path):
    """`tf.py_func` in a training pipeline's map: TFP201 (on by default) reports the Python callback;
    the deprecation itself (TFP402) only for those who opt in."""
    (tmp_path / "train.py").write_text(
        "import tensorflow.compat.v1 as tf\n"
        "def parse(path):\n"
        "    image = tf.py_func(load_image, [path], tf.float32)\n"
        "    return image\n"
        "ds = tf.data.Dataset.from_tensor_slices(paths).shuffle(1000).map(parse, num_parallel_calls=8)\n"
        "ds = ds.batch(32).prefetch(1)\n"
        "model.fit(ds, epochs=10)\n", encoding="utf-8")
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.4\n", encoding="utf-8")
    default = run_cli("check", "--no-cache", "--output-format", "json", "train.py", cwd=tmp_path)
    assert [(f["code"], f["location"]["row"]) for f in json.loads(default.stdout)] == [("TFP201", 3)]
    opted = run_cli("check", "--extend-select", "TFP4", "--no-cache", "--output-format", "json", "train.py", cwd=tmp_path)
    assert sorted((f["code"], f["location"]["row"]) for f in json.loads(opted.stdout)) == [("TFP201", 3), ("TFP402", 3)]


# The TF1 Object Detection API as a vendor ships it (NVIDIA's SSD, TensorFlow 1.15): an evaluation helper
# calls `tf.py_func` through a plain `import tensorflow`, and nothing in it is TensorFlow 1-only, but the
# package's label-map reader it imports uses `tf.gfile`, which TensorFlow 2 removed. No dependency file.
_EVALUATION = (
    "import tensorflow as tf\n"
    "from object_detection.utils import label_map_util\n"
    "def get_estimator_eval_metric_ops(update_op, args):\n"
    "    return tf.py_func(update_op, args, [])\n"
)


def _detection_package(tmp_path, reader_body):
    package = tmp_path / "TensorFlow" / "Detection" / "SSD" / "models" / "research" / "object_detection"
    (package / "utils").mkdir(parents=True)
    for folder in (package, package / "utils"):
        (folder / "__init__.py").write_text("", encoding="utf-8")
    (package / "utils" / "object_detection_evaluation.py").write_text(_EVALUATION, encoding="utf-8")
    (package / "utils" / "label_map_util.py").write_text("import tensorflow as tf\n" + reader_body, encoding="utf-8")
    return package / "utils" / "object_detection_evaluation.py"


def test_a_module_whose_project_imports_run_only_on_tensorflow_1_gets_no_tensorflow_2_advice(tmp_path):
    evaluation = _detection_package(tmp_path, "def load_labelmap(path):\n    with tf.gfile.GFile(path, 'r') as fid:\n"
                                              "        return fid.read()\n")
    result = run_cli("check", "--select", "TFP402", "--isolated", "--no-cache", "--output-format", "json",
                     str(evaluation.relative_to(tmp_path)), cwd=tmp_path)
    assert _codes(result) == [], result.stdout + result.stderr


def test_a_module_whose_project_imports_run_on_tensorflow_2_is_reported(tmp_path):
    evaluation = _detection_package(tmp_path, "def load_labelmap(path):\n    with tf.io.gfile.GFile(path, 'r') as fid:\n"
                                              "        return fid.read()\n")
    result = run_cli("check", "--select", "TFP402", "--isolated", "--no-cache", "--output-format", "json",
                     str(evaluation.relative_to(tmp_path)), cwd=tmp_path)
    assert _codes(result) == ["TFP402"], result.stdout + result.stderr


# OpenSeq2Seq's speech-commands data layer (TensorFlow 1.13, NGC container): `tf.py_func` beside
# `tf.contrib.data.AUTOTUNE`, a TensorFlow 1 API used as an argument rather than called.
def test_a_module_passing_a_tensorflow_1_api_as_an_argument_runs_only_on_tensorflow_1(tmp_path):
    (tmp_path / "speech_commands.py").write_text(
        "import tensorflow as tf\n"
        "def build_graph(files, parse):\n"
        "    dataset = tf.data.Dataset.from_tensor_slices(files)\n"
        "    dataset = dataset.map(lambda line: tf.py_func(parse, [line], [tf.float32]), num_parallel_calls=8)\n"
        "    return dataset.prefetch(tf.contrib.data.AUTOTUNE)\n", encoding="utf-8")
    result = run_cli("check", "--select", "TFP402", "--isolated", "--no-cache", "--output-format", "json",
                     "speech_commands.py", cwd=tmp_path)
    assert _codes(result) == [], result.stdout + result.stderr


# neural-structured-learning's A2N: the input pipeline calls `tf.py_func` and nothing TensorFlow 1-only,
# but the one script importing it trains with `tf.Session` (and slim): the program runs on TensorFlow 1.
_PIPELINE = (
    "import tensorflow as tf\n"
    "def make_dataset(examples, featurize):\n"
    "    dataset = tf.data.Dataset.from_tensor_slices(examples)\n"
    "    return dataset.map(lambda e: tf.py_func(featurize, [e], [tf.int64]), num_parallel_calls=4)\n"
)


def _a2n(tmp_path, *scripts):
    (tmp_path / "setup.py").write_text("", encoding="utf-8")
    (tmp_path / "dataset.py").write_text(_PIPELINE, encoding="utf-8")
    for name, body in scripts:
        (tmp_path / name).write_text("import tensorflow as tf\nimport dataset\n" + body, encoding="utf-8")
    result = run_cli("check", "--select", "TFP402", "--isolated", "--no-cache", "--output-format", "json",
                     "dataset.py", cwd=tmp_path)
    return _codes(result), result.stdout + result.stderr


def test_a_module_whose_every_importer_runs_only_on_tensorflow_1_gets_no_tensorflow_2_advice(tmp_path):
    codes, output = _a2n(tmp_path, ("train.py", "ds = dataset.make_dataset(x, f)\nsession = tf.Session()\n"))
    assert codes == [], output


def test_a_module_also_imported_by_tensorflow_2_code_is_reported(tmp_path):
    codes, output = _a2n(tmp_path, ("train.py", "ds = dataset.make_dataset(x, f)\nsession = tf.Session()\n"),
                         ("train_v2.py", "ds = dataset.make_dataset(x, f)\nmodel.fit(ds, epochs=3)\n"))
    assert codes == ["TFP402"], output


def _notebook(path, *cells):
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": cell}
                  for cell in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 4}), encoding="utf-8")


# The archived TensorFlow 1 eager guide (tensorflow/docs, site/en/r1/guide/eager.ipynb): `compat.v1`,
# and a graph with a placeholder, which raises under TensorFlow 2's eager execution.
_GRAPH_CELL = (
    "with tf.Session() as sess:\n"
    "  x = tf.placeholder(dtype=tf.float32)\n"
    "  pf = tf.py_func(my_py_func, [x], tf.float32)\n"
    "  sess.run(pf, feed_dict={x: [[2.0]]})\n"
)


def test_a_notebook_building_graphs_under_eager_execution_runs_only_on_tensorflow_1(tmp_path):
    _notebook(tmp_path / "eager.ipynb", "import tensorflow.compat.v1 as tf\n", _GRAPH_CELL)
    result = run_cli("check", "--select", "TFP402", "--isolated", "--no-cache", "--output-format", "json",
                     "eager.ipynb", cwd=tmp_path)
    assert _codes(result) == [], result.stdout + result.stderr


def test_a_notebook_that_turns_eager_execution_off_runs_on_tensorflow_2_and_is_reported(tmp_path):
    _notebook(tmp_path / "eager.ipynb", "import tensorflow.compat.v1 as tf\ntf.disable_eager_execution()\n", _GRAPH_CELL)
    result = run_cli("check", "--select", "TFP402", "--isolated", "--no-cache", "--output-format", "json",
                     "eager.ipynb", cwd=tmp_path)
    assert _codes(result) == ["TFP402"], result.stdout + result.stderr


COMPATIBLE = (
    "import tensorflow as tf\n"
    "from mypkg.utils import compat\n"
    "\n"
    "def sample(datasets, weights):\n"
    "    if compat.tf_supports('data.Dataset.sample_from_datasets'):\n"
    "        return tf.data.Dataset.sample_from_datasets(datasets, weights=weights)\n"
    "    else:\n"
    "        return tf.data.experimental.sample_from_datasets(datasets, weights=weights)\n"
    "\n"
    "def _has(module, name):\n"
    "    return hasattr(module, name)\n"
    "\n"
    "def flatten(ds):\n"
    "    if _has(tf.data.Dataset, 'unbatch'):\n"
    "        return ds.unbatch()\n"
    "    return ds.apply(tf.data.experimental.unbatch())\n"
    "\n"
    "def counter():\n"
    "    try:\n"
    "        return tf.data.Dataset.counter()\n"
    "    except (NameError, AttributeError):\n"
    "        return tf.data.experimental.Counter()\n"
    "\n"
    "def train(model, gen):\n"
    "    if tuple(int(p) for p in tf.__version__.split('.')[:2]) < (2, 1):\n"
    "        model.fit_generator(gen, epochs=3)\n"
    "    else:\n"
    "        model.fit(gen, epochs=3)\n"
    "\n"
    "def upgrade_me(ds, training):\n"
    "    if training:\n"
    "        ds = ds.apply(tf.data.experimental.shuffle_and_repeat(1024))\n"
    "    return ds\n"
)


def test_a_deprecated_spelling_only_a_feature_or_version_check_picks_is_not_reported(tmp_path):
    # OpenNMT-tf's shape: the new API wherever it exists, the old one as the fallback for older
    # TensorFlow; a helper named for the check, a same-file helper that calls hasattr, try/except
    # AttributeError and a version comparison all say so. A branch on anything else does not.
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.15\n", encoding="utf-8")
    (tmp_path / "data.py").write_text(COMPATIBLE, encoding="utf-8")
    result = run_cli("check", "--select", "TFP4", "--no-cache", "--output-format", "json", "data.py", cwd=tmp_path)
    findings = json.loads(result.stdout)
    assert [(f["code"], f["location"]["row"]) for f in findings] == [("TFP401", 32)], result.stdout + result.stderr
