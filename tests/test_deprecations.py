"""TFP401/TFP402 through the real command line: the TensorFlow version a project declares decides
whether a deprecated spelling is reported and whether its fix is offered; TFP209 needs naming."""

from __future__ import annotations

import json

from tests.conftest import run_cli
from tflint_perf.analysis.deprecations import TABLE, applies, replacement_available, respell

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
        "ds = ds.prefetch(tf.data.AUTOTUNE)\n"
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
    assert sorted(f["code"] for f in findings) == ["TFP401", "TFP401", "TFP402"]
    assert all(f["fix"] is None for f in findings)
    assert all("set `target-version` for a fix" in f["message"] for f in findings)


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
        assert applies(entry.since, entry, tf1=False) and not applies((1, 13), entry, tf1=False)
        assert replacement_available(entry.since, entry) and not replacement_available(None, entry)
        if entry.form in ("constant", "function") and entry.old_tail and not entry.special == "report":
            written = "tf." + entry.old.split(".", 1)[1] if entry.old.startswith("tf.") else "tf." + entry.old
            assert respell(written, entry) is not None, entry.old
