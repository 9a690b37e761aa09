"""The verification harness, run for real: real TensorFlow in real subprocesses, small sizes.

Timing thresholds stay out of these tests (speed claims live in docs/benchmarks.md, produced by
`tflint-perf bench`); they check that every scenario runs, that equivalence checks pass on the
real fixes and fail on wrong ones, the JSON output, `verify`, and the message without TensorFlow.
Tests that need TensorFlow request the `tensorflow` fixture, which skips only where it is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List

import pytest

from tests.conftest import FIXTURES, REPO, run_cli
from tflint_perf.checking.config import Settings
from tflint_perf.text.diagnostics import UNSAFE
from tflint_perf.checking.engine import check_text
from tflint_perf.text.parsing import parse
from tflint_perf.fixes.fixer import fix_text
from tflint_perf.faces.harness import equivalence
from tflint_perf.faces.harness.runner import NEEDS_GPU, After, ScenarioError, derive_after, sized
from tflint_perf.faces.harness.scenarios import all_scenarios, edit, scenarios_by_code
from tflint_perf.rules import all_rules, rules_by_code

# Every rule has a scenario, except the input errors (TFP001/TFP002: nothing to measure); adding a
# rule adds its code here by itself, and the test below fails until its scenario exists.
CODES = {rule.code for rule in all_rules() if not rule.input_error}
VERIFY_FIXTURE = FIXTURES / "pipelines_for_verify.py"
INSTALL = "pip install 'tflint-perf[bench]'"


def harness(*args: str, cwd: Path = REPO, extra_env=None) -> subprocess.CompletedProcess:
    """``python -m tflint_perf.faces.harness ...`` in a subprocess."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "2", **(extra_env or {})}
    return subprocess.run([sys.executable, "-m", "tflint_perf.faces.harness", *args], cwd=cwd, capture_output=True,
                          text=True, env=env, timeout=600)


def json_records(stdout: str) -> List[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


# -- scenarios and the real fixer (no TensorFlow needed) -------------------------------------------
def test_every_code_has_one_scenario_and_every_rule_is_covered():
    assert {s.code for s in all_scenarios()} == CODES
    assert {rule.code for rule in all_rules() if not rule.input_error} <= CODES, (
        "a new rule needs a scenario in tflint_perf/faces/harness/scenarios/")  # TFP001/TFP002: nothing to measure


@pytest.mark.parametrize("scenario", all_scenarios(), ids=lambda s: s.code)
def test_scenario_is_reported_by_its_rule_and_the_after_comes_from_the_real_fixer(scenario):
    parse(scenario.before)
    parse(scenario.after)
    rule = rules_by_code().get(scenario.code)
    if rule is None:  # a rule still being written: the hand-written after stands in
        assert derive_after(scenario).text == scenario.after
        return
    assert rule.name == scenario.name
    diagnostics = check_text(scenario.before, "scenario.py", Settings(), {scenario.code})
    assert diagnostics, f"{scenario.code} does not report its own scenario"
    after = derive_after(scenario)
    fixes = [d.fix for d in diagnostics if d.fix is not None]
    if scenario.fix_safety == "none":
        assert not fixes and after.text == scenario.after and "use-instead" in after.origin
        return
    assert {fix.applicability for fix in fixes} == {scenario.fix_safety}
    expected = fix_text(scenario.before, lambda t: check_text(t, "s.py", Settings(), {scenario.code}),
                        scenario.fix_safety == UNSAFE).text
    assert after.text == expected != scenario.before
    assert not check_text(after.text, "scenario.py", Settings(), {scenario.code}), "the fixed program is still reported"


def test_quick_sizes_replace_module_constants():
    scenario = scenarios_by_code()["TFP101"]
    text = sized(scenario.before, {"RECORDS": 7, "STEP_MS": 1})
    assert "RECORDS = 7  # records per epoch\n" in text and "STEP_MS = 1  # simulated" in text
    with pytest.raises(ScenarioError):
        sized(scenario.before, {"NO_SUCH_CONSTANT": 1})
    for scenario in all_scenarios():
        sized(scenario.before, scenario.quick)  # every quick size names a real constant


def test_the_linter_and_the_harness_cli_never_import_tensorflow():
    code = textwrap.dedent(
        """
        import argparse, sys
        from tflint_perf.checking.config import Settings
        from tflint_perf.checking.engine import check_text
        from tflint_perf.faces.harness.cli import register
        from tflint_perf.faces.harness.runner import derive_after
        from tflint_perf.faces.harness.scenarios import all_scenarios
        register(argparse.ArgumentParser().add_subparsers())
        for scenario in all_scenarios():
            check_text(scenario.before, "s.py", Settings())
            derive_after(scenario)
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("tensorflow", "keras", "numpy"))
        print(loaded)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# A `-c` wrapper that makes `import tensorflow` fail the way it does where it is not installed.
_WITHOUT_TENSORFLOW = textwrap.dedent(
    """
    import runpy, sys

    class NoTensorFlow:
        def find_spec(self, name, path=None, target=None):
            if name == "tensorflow" or name.startswith("tensorflow."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoTensorFlow())
    sys.argv = ["tflint_perf.faces.harness"] + sys.argv[1:]
    runpy.run_module("tflint_perf.faces.harness", run_name="__main__")
    """
)


@pytest.mark.parametrize("arguments", [
    ["bench", "TFP101", "--quick"],
    ["verify", f"{VERIFY_FIXTURE}::make_training_dataset", "--steps", "2"],
], ids=["bench", "verify"])
def test_without_tensorflow_the_commands_say_how_to_install_it(arguments):
    result = subprocess.run([sys.executable, "-c", _WITHOUT_TENSORFLOW, *arguments], capture_output=True, text=True,
                            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert result.returncode == 2, result.stderr
    assert INSTALL in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_bench_list_and_unknown_code_need_no_tensorflow():
    listed = harness("bench", "--list")
    assert listed.returncode == 0
    assert [line.split()[0] for line in listed.stdout.splitlines()] == sorted(CODES)
    unknown = harness("bench", "TFP999")
    assert unknown.returncode == 2 and "no scenario for `TFP999`" in unknown.stderr


def test_the_main_cli_has_the_harness_commands():
    result = run_cli("bench", "--list")
    assert result.returncode == 0, result.stderr
    assert "TFP101" in result.stdout


# -- equivalence checks on hand-made outcomes ------------------------------------------------------
def _pipeline(*epochs, **observations):
    np = pytest.importorskip("numpy")
    outcome = {"epochs": [[(np.array(batch, dtype=np.int64),) for batch in epoch] for epoch in epochs]}
    if observations:
        outcome["observations"] = observations
    return outcome


def test_identical_wants_the_same_elements_in_the_same_order():
    assert equivalence.identical(_pipeline([[1, 2], [3, 4]]), _pipeline([[1, 2], [3, 4]])).passed
    assert not equivalence.identical(_pipeline([[1, 2], [3, 4]]), _pipeline([[2, 1], [3, 4]])).passed
    assert not equivalence.identical(_pipeline([[1, 2], [3, 4]]), _pipeline([[1, 2]])).passed
    np = pytest.importorskip("numpy")
    as_float = {"epochs": [[(np.array([1, 2], dtype=np.float32),)]]}
    assert "dtype" in equivalence.identical(_pipeline([[1, 2]]), as_float).summary


def test_overlapping_side_effects_must_be_the_only_change():
    check = equivalence.identical_with_overlapping_side_effects
    assert check(_pipeline([[1, 2]], most_concurrent_decodes=1), _pipeline([[1, 2]], most_concurrent_decodes=2)).passed
    assert not check(_pipeline([[1, 2]], most_concurrent_decodes=1), _pipeline([[1, 2]], most_concurrent_decodes=1)).passed
    assert not check(_pipeline([[1, 2]], most_concurrent_decodes=1), _pipeline([[2, 1]], most_concurrent_decodes=2)).passed


def test_reshuffled_each_epoch_wants_frozen_before_and_new_orders_after():
    check = equivalence.reshuffled_each_epoch
    frozen = _pipeline([[3, 1], [2, 4]], [[3, 1], [2, 4]], [[3, 1], [2, 4]])
    reshuffled = _pipeline([[3, 1], [2, 4]], [[4, 2], [1, 3]], [[1, 4], [3, 2]])
    assert check(frozen, reshuffled).passed
    assert not check(frozen, frozen).passed  # the fix did not take effect
    assert not check(reshuffled, reshuffled).passed  # the scenario no longer shows the bug
    assert not check(frozen, _pipeline([[3, 1], [2, 4]], [[4, 2], [1, 1]], [[1, 4], [3, 2]])).passed  # lost a record


def test_allclose_with_finite_gradients():
    np = pytest.importorskip("numpy")
    before = {"result": np.array([1.0, 2.0]), "probe": {"gradient": np.array([1.0, 0.2])}}
    assert equivalence.allclose_finite_gradients(before, dict(before)).passed
    assert not equivalence.allclose_finite_gradients(before, {**before, "result": np.array([1.0, 2.1])}).passed
    assert not equivalence.allclose_finite_gradients(before, {**before, "probe": {"gradient": np.array([np.nan, 1])}}).passed


def test_architecture_and_batch_size_changes():
    np = pytest.importorskip("numpy")

    def model(parameters, loss=0.5):
        return {"result": np.array([loss]), "probe": {"output_shape": np.array([8, 10]),
                                                      "parameters": np.array(parameters), "finite": np.array(True)}}

    assert equivalence.architecture_change(model(100), model(120)).passed
    assert not equivalence.architecture_change(model(100), model(100)).passed
    assert not equivalence.architecture_change(model(100), model(120, loss=np.nan)).passed
    assert equivalence.batch_size_change(model(100), model(100)).passed
    assert not equivalence.batch_size_change(model(100), model(120)).passed


# -- bench, for real --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def quick_bench(tensorflow):
    result = harness("bench", "--quick", "--repeats", "1", "--rewrites", "defaults", "--json")
    return result, json_records(result.stdout)


@pytest.mark.tensorflow
def test_bench_runs_every_scenario_and_every_equivalence_check_passes(quick_bench, tensorflow):
    result, records = quick_bench
    assert result.returncode == 0, result.stderr[-3000:]
    gpu = bool(tensorflow.config.list_physical_devices("GPU"))
    for scenario in all_scenarios():
        mine = [r for r in records if r["rule"] == scenario.code]
        if scenario.needs_gpu and not gpu:
            assert [(r["variant"], r["equivalence"], r["median_s"]) for r in mine] == [
                ("before", NEEDS_GPU, None), ("after", NEEDS_GPU, None)]
            continue
        assert [(r["variant"], r["rewrites"]) for r in mine] == [("before", "defaults"), ("after", "defaults")]
        for record in mine:
            assert record["equivalence"] == "pass", record
            assert 0 < record["min_s"] <= record["median_s"] <= record["max_s"]


@pytest.mark.tensorflow
def test_bench_json_lines_carry_what_ci_diffs(quick_bench, tensorflow):
    _, records = quick_bench
    fields = {"rule", "name", "variant", "rewrites", "tf_version", "device", "cores", "repeats", "median_s", "min_s",
              "max_s", "speedup", "equivalence", "equivalence_detail", "after_source"}
    for record in records:
        assert fields <= set(record)
        assert record["tf_version"] == tensorflow.__version__ and record["cores"] == os.cpu_count()
    ran = [r for r in records if r["equivalence"] == "pass"]
    assert all(r["speedup"] == 1.0 for r in ran if r["variant"] == "before")
    for after in (r for r in ran if r["variant"] == "after"):
        before = next(r for r in ran if (r["rule"], r["rewrites"], r["variant"]) == (after["rule"], after["rewrites"], "before"))
        assert after["speedup"] == pytest.approx(before["median_s"] / after["median_s"], abs=1e-3)


@pytest.mark.tensorflow
def test_the_rewrites_that_hide_an_effect_are_switched_off_by_name(tensorflow):
    from tflint_perf.faces.harness.runner import BenchOptions, rewrite_settings
    from tflint_perf.faces.harness.worker import without_rewrites

    settings = {s.code: rewrite_settings(s, BenchOptions()) for s in all_scenarios()}
    assert settings["TFP101"] == [[], ["inject_prefetch"]]
    assert settings["TFP102"] == [[], ["map_parallelization"]]
    assert settings["TFP103"] == [[]]
    assert rewrite_settings(scenarios_by_code()["TFP101"], BenchOptions(rewrites=("off",))) == [["inject_prefetch"]]
    for scenario in all_scenarios():
        dataset = without_rewrites(tensorflow.data.Dataset.range(3), list(scenario.rewrites))
        for name in scenario.rewrites:
            assert getattr(dataset.options().experimental_optimization, name) is False


@pytest.mark.tensorflow
def test_after_origins_in_the_records(quick_bench):
    _, records = quick_bench
    origins = {r["rule"]: r["after_source"] for r in records}
    assert origins["TFP101"] == "codemod, --fix" and origins["TFP102"] == "codemod, --unsafe-fixes"
    assert "use-instead" in origins["TFP104"] and "use-instead" in origins["TFP201"]


@pytest.mark.tensorflow
def test_bench_progress_goes_to_stderr(quick_bench):
    result, records = quick_bench
    progress = result.stderr.splitlines()
    total = len([r for r in records if r["equivalence"] == "pass"])
    assert f"[1/{total}] TFP101 missing-prefetch [TF defaults] before: warm-up" in progress
    last = [r for r in records if r["equivalence"] == "pass"][-1]
    assert any(line.startswith(f"[{total}/{total}] {last['rule']} {last['name']} [TF defaults] after: run 1/1 ")
               for line in progress)


@pytest.mark.tensorflow
def test_bench_table_from_the_records(quick_bench, tensorflow):
    from tflint_perf.faces.harness import report
    from tflint_perf.faces.harness.runner import Record, tensorflow_environment

    _, records = quick_bench
    records = [Record(**record) for record in records]
    environment = tensorflow_environment()
    table = report.text_table(records, environment, repeats=1)
    assert f"TensorFlow {tensorflow.__version__}, {environment.device}, {environment.cores} cores" in table
    rows = {line.split()[0]: line for line in table.splitlines() if line.startswith("TFP")}
    assert "TF defaults" in rows["TFP101"] and "pass: same 24 elements, same order" in rows["TFP101"]
    assert rows["TFP202"].endswith("unsafe fix")
    markdown = report.markdown_table(records, environment, repeats=1)
    assert "| TFP104 | feed-dict-in-loop | TF defaults |" in markdown


@pytest.mark.tensorflow
@pytest.mark.parametrize("code", ["TFP301", "TFP302"])
def test_gpu_scenarios_run_where_forced_onto_a_cpu(code, tensorflow):
    from tflint_perf.faces.harness.runner import BenchOptions, run_scenario, tensorflow_environment

    options = BenchOptions(repeats=1, quick=True, rewrites=("defaults",), run_gpu_scenarios_anyway=True)
    records = run_scenario(scenarios_by_code()[code], options, tensorflow_environment())
    assert [r.equivalence for r in records] == ["pass", "pass"], records[0].equivalence_detail


def _wrong(code: str, old: str, new: str) -> After:
    return After(edit(scenarios_by_code()[code].before, old, new), "deliberately wrong")


@pytest.mark.tensorflow
def test_a_wrong_after_fails_its_equivalence_check(tensorflow):
    from tflint_perf.faces.harness.runner import BenchOptions, run_scenario, tensorflow_environment

    # A "fix" that prefetches but also drops the first batch: a safe fix must keep every element.
    # Run with inject_prefetch switched off, the setting the CLI test above leaves out.
    wrong = _wrong("TFP101", "ds = ds.batch(BATCH)", "ds = ds.batch(BATCH).skip(1).prefetch(tf.data.AUTOTUNE)")
    options = BenchOptions(repeats=1, quick=True, rewrites=("off",))
    records = run_scenario(scenarios_by_code()["TFP101"], options, tensorflow_environment(), after=wrong)
    assert [(r.variant, r.rewrites, r.equivalence) for r in records] == [
        ("before", "off: inject_prefetch", "fail"), ("after", "off: inject_prefetch", "fail")]
    assert records[0].equivalence_detail == "12 batches before, 11 after"
    from tflint_perf.faces.harness import report

    assert "inject_prefetch off" in report.text_table(records, tensorflow_environment(), repeats=1)


# -- verify, for real -------------------------------------------------------------------------------
@pytest.mark.tensorflow
def test_verify_safe_fixes_keep_the_elements_with_synthetic_data(tensorflow):
    result = harness("verify", f"{VERIFY_FIXTURE}::make_training_dataset", "--steps", "8", "--step-ms", "1",
                     "--repeats", "1", "--budget", "0", "--synthetic", "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "this runs your code" in result.stderr.splitlines()[0]
    records = json_records(result.stdout)
    assert [r["variant"] for r in records] == ["before", "after"]
    assert {r["elements"] for r in records} == {"identical"}
    assert records[0]["batches"] == 8 and records[0]["synthetic_sources"] == 1
    assert any("TFP101" in fix for fix in records[0]["fixes"])


@pytest.mark.tensorflow
def test_verify_unsafe_fixes_and_the_text_report(tensorflow):
    result = harness("verify", f"{VERIFY_FIXTURE}::make_loaded_dataset", "--steps", "4", "--step-ms", "1",
                     "--repeats", "1", "--budget", "0", "--unsafe-fixes")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "TFP102 Pass `num_parallel_calls=tf.data.AUTOTUNE`" in result.stdout
    assert "elements: identical (4 batches)" in result.stdout
    assert "batches/s" in result.stdout and "speedup:" in result.stdout


@pytest.mark.tensorflow
def test_verify_says_when_the_pipeline_is_not_deterministic(tensorflow):
    result = harness("verify", f"{VERIFY_FIXTURE}::make_shuffled_dataset", "--steps", "4", "--step-ms", "0",
                     "--repeats", "1", "--budget", "0")
    assert result.returncode == 0, result.stderr[-3000:]
    elements = next(line for line in result.stdout.splitlines() if line.startswith("elements: "))
    assert "values not comparable. Why: the original pipeline gives different elements on two runs: " in elements
    assert "a shuffle without a seed (" in elements and elements.endswith("; --seed would fix the seedable ones")


@pytest.mark.tensorflow
def test_verify_reports_elements_that_differ(tmp_path, tensorflow):
    (tmp_path / "pipeline.py").write_text(textwrap.dedent(
        """
        import numpy as np
        import tensorflow as tf

        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        DATA = np.arange(2000, dtype=np.float32)


        def make():
            return tf.data.Dataset.from_tensor_slices(DATA).batch(90).prefetch(tf.data.AUTOTUNE)


        def train(model):
            model.fit(make(), epochs=3)
        """
    ))
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-perf]\nextend-select = ["TFP302"]\n')  # opt-in
    result = harness("verify", "pipeline.py::make", "--steps", "3", "--step-ms", "0", "--repeats", "1",
                     "--budget", "0", "--unsafe-fixes", cwd=tmp_path)
    assert result.returncode == 1, result.stderr[-3000:]
    assert "TFP302" in result.stdout and "elements: differ: batch 0: structure, dtype or shape differ" in result.stdout


@pytest.mark.tensorflow
def test_verify_errors_exit_2(tmp_path, tensorflow):
    """Errors are reported with exit 2; a missing FUNCTION is found before any code runs."""
    (tmp_path / "not_a_pipeline.py").write_text(textwrap.dedent(
        """
        import tensorflow as tf


        def make():
            return {"size": 8}


        def real():
            return tf.data.Dataset.range(8).batch(2)


        def train(step):
            for batch in real():
                step(batch)
        """
    ))
    wrong_type = harness("verify", "not_a_pipeline.py::make", "--steps", "2", cwd=tmp_path)
    assert wrong_type.returncode == 2 and "make() returned dict holding no tf.data.Dataset" in wrong_type.stderr
    missing = harness("verify", "not_a_pipeline.py::nope", cwd=tmp_path)
    assert missing.returncode == 2 and "has no `nope`" in missing.stderr
    assert "this runs your code" not in missing.stderr
    assert harness("verify", "not_a_pipeline.py").returncode == 2  # no ::FUNCTION


def test_verify_with_nothing_to_fix_runs_nothing(tmp_path):
    (tmp_path / "clean.py").write_text("import tensorflow as tf\n\ndef make():\n    return tf.data.Dataset.range(4)\n")
    result = harness("verify", "clean.py::make", cwd=tmp_path)
    assert result.returncode == 0 and "no fix applies" in result.stderr
    assert "this runs your code" not in result.stderr
