"""The TensorFlow a module's own Keras calls require raises an unknown or inferred target (analysis/api_versions.py)."""

import json
import textwrap

from tests.conftest import lint, project_findings, run_cli, write_project
from tflint_perf.checking.config import Settings

# A training script of the keras-io era: a sequential stateless map and no final prefetch.
TRAIN = textwrap.dedent("""\
    import tensorflow as tf

    def scale(image, label):
        return tf.cast(image, tf.float32) / 255.0, label

    train = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(60000).map(scale).batch(128)
    model = build_model()
    model.compile(optimizer={optimizer}, loss="sparse_categorical_crossentropy")
    model.fit(train, epochs=30)
""")


def codes(source: str, settings: Settings = None):
    return sorted((d.location.row, d.code) for d in lint(source, ["TFP101", "TFP102"], settings=settings, filename="train.py"))


def test_with_no_version_known_both_are_reported_with_the_caveat():
    found = lint(TRAIN.format(optimizer='"adam"'), ["TFP101", "TFP102"], filename="train.py")
    assert sorted((d.location.row, d.code) for d in found) == [(6, "TFP101"), (6, "TFP102")]
    assert all("on TensorFlow < 2." in d.message for d in found)


def test_a_legacy_optimizer_means_2_9_so_the_runtime_parallelises_the_stateless_map():
    assert codes(TRAIN.format(optimizer="tf.keras.optimizers.legacy.Adam(1e-3)")) == [(6, "TFP101")]


def test_adamw_means_2_12_so_the_runtime_also_appends_the_prefetch():
    assert codes(TRAIN.format(optimizer="tf.keras.optimizers.AdamW(1e-3)")) == []
    from_import = "from tensorflow.keras.optimizers import AdamW\n" + TRAIN.format(optimizer="AdamW(1e-3)")
    assert codes(from_import) == []


def test_names_that_are_older_or_elsewhere_say_nothing():
    # `Adam` exists in every TensorFlow 2; TensorFlow Addons' AdamW is not tf.keras'.
    assert codes(TRAIN.format(optimizer="tf.keras.optimizers.Adam(1e-3)")) == [(6, "TFP101"), (6, "TFP102")]
    addons = "import tensorflow_addons as tfa\n" + TRAIN.format(optimizer="tfa.optimizers.AdamW(1e-4, 1e-3)")
    assert codes(addons) == [(7, "TFP101"), (7, "TFP102")]


def test_a_call_behind_a_version_check_says_nothing():
    guarded = TRAIN.format(optimizer="optimizer").replace(
        "model = build_model()\n",
        "model = build_model()\ntry:\n    optimizer = tf.keras.optimizers.AdamW(1e-3)\nexcept AttributeError:\n"
        "    optimizer = tf.keras.optimizers.Adam(1e-3)\n")
    assert codes(guarded) == [(6, "TFP101"), (6, "TFP102")]


def test_a_configured_target_is_the_users_word():
    configured = Settings(target_version=(2, 4), target_version_source="pyproject.toml: [tool.tflint-perf] target-version")
    found = codes(TRAIN.format(optimizer="tf.keras.optimizers.AdamW(1e-3)"), configured)
    assert found == [(6, "TFP101"), (6, "TFP102")]


def test_an_inferred_lower_bound_is_raised_by_the_code(tmp_path):
    root = write_project(tmp_path, {
        "requirements.txt": "tensorflow>=2.4\n",
        "train.py": TRAIN.format(optimizer="tf.keras.optimizers.legacy.Adam(1e-3)"),
    })
    assert project_findings(root, "TFP101") == {("train.py", 6)}
    assert project_findings(root, "TFP102") == set()
    (root / "train.py").write_text(TRAIN.format(optimizer='"adam"'))
    assert project_findings(root, "TFP102") == {("train.py", 6)}  # 2.4 as declared: sequential there


def test_a_target_written_in_pyproject_or_on_the_command_line_is_kept(tmp_path):
    # The real sources of a configured version, as the configuration loader and the CLI name them.
    root = write_project(tmp_path, {"train.py": TRAIN.format(optimizer="tf.keras.optimizers.AdamW(1e-3)")})
    assert project_findings(root, "TFP102") == set()
    (root / "pyproject.toml").write_text('[tool.tflint-perf]\ntarget-version = "2.4"\n')
    assert project_findings(root, "TFP102") == {("train.py", 6)}
    (root / "pyproject.toml").write_text("")
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", "TFP101,TFP102",
                     "--target-version", "2.4", ".", cwd=root)
    assert sorted((d["code"], d["location"]["row"]) for d in json.loads(result.stdout)) == [("TFP101", 6), ("TFP102", 6)]


def test_the_cache_tells_a_configured_version_from_the_same_one_inferred(tmp_path):
    # --target-version 2.4 is kept; tensorflow>=2.4 in requirements.txt is raised to the 2.12 AdamW needs.
    root = write_project(tmp_path, {"train.py": TRAIN.format(optimizer="tf.keras.optimizers.AdamW(1e-3)"),
                                    "requirements.txt": "tensorflow>=2.4\n"})
    cached = ("check", "--cache-dir", str(tmp_path / "cache"), "--output-format", "json", "--select", "TFP102", ".")

    def rows(*extra):
        result = run_cli(*cached[:-1], *extra, ".", cwd=root)
        assert result.returncode in (0, 1), result.stderr
        return [d["location"]["row"] for d in json.loads(result.stdout)]

    assert rows("--target-version", "2.4") == [6]
    assert rows() == []
    assert rows("--target-version", "2.4") == [6]
