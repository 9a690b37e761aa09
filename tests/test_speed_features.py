"""Speed features that must never change an answer: the prefilter, parallel checking and the cache.

No timing is asserted here (figures live in benchmarks/lint_speed.py and docs/performance.md); these
tests pin down that each shortcut gives exactly the output of the slow path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List, Tuple

import pytest

import tflint_perf
from tests.conftest import FIXTURES, REPO, run_cli
from tflint_perf.checking import cache as cache_module
from tflint_perf.checking import engine, runner
from tflint_perf.analysis.names import TRACKED_ROOTS
from tflint_perf.faces.cli import main
from tflint_perf.checking.config import Settings
from tflint_perf.checking.engine import check_text, may_have_findings
from tflint_perf.rules import all_rules

SAFE_FIX = "import tensorflow as tf\nds = tf.data.Dataset.range(10).batch(2)\nmodel.fit(ds)\n"
SAFE_FIXED = "import tensorflow as tf\nds = tf.data.Dataset.range(10).batch(2).prefetch(tf.data.AUTOTUNE)\nmodel.fit(ds)\n"
UNSAFE_ONLY = (
    "import tensorflow as tf\n\ndef augment(x):\n    return tf.image.random_flip_left_right(x)\n\n"
    "ds = tf.data.Dataset.from_tensor_slices(images).map(augment)\n"
)
CLEAN = SAFE_FIXED
TRAINING = textwrap.dedent(
    """\
    import functools
    import numpy as np
    import tensorflow as tf
    from tqdm import tqdm

    AUTOTUNE = tf.data.AUTOTUNE


    def parse(record):
        features = tf.io.parse_single_example(record, {"x": tf.io.FixedLenFeature([], tf.string)})
        return tf.io.decode_raw(features["x"], tf.uint8)


    def augment(image):
        return tf.image.random_flip_left_right(image)


    def make_dataset(files, batch_size):
        ds = tf.data.TFRecordDataset(files)
        ds = ds.map(parse)
        ds = ds.shuffle(1000).map(augment)
        return ds.batch(batch_size)


    class Trainer:
        def __init__(self, model):
            self.model = model
            self.train = make_dataset(["a.tfrecord"], 64)

        def run(self, epochs):
            for epoch in range(epochs):
                for step, batch in enumerate(tqdm(self.train)):
                    self.model.train_on_batch(batch)


    model = tf.keras.Sequential([tf.keras.layers.Dense(100), tf.keras.layers.Dense(10)])
    model.fit(make_dataset(["b.tfrecord"], 30), epochs=3)
    scale = functools.partial(np.multiply, 2.0)
    """
)


def make_project(root: Path, copies: int = 3) -> Path:
    files = {
        "train.py": SAFE_FIX,
        "augment.py": UNSAFE_ONLY,
        "clean.py": CLEAN,
        "plain.py": "import numpy as np\nprint(np.ones(3))\n",
        "pkg/__init__.py": "",
        "broken.py": "import tensorflow as tf\ndef f(:\n    pass\n",
    }
    for index in range(copies):
        files[f"pkg/trainer_{index}.py"] = TRAINING.replace("epochs=3", f"epochs={index + 1}")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "latin.py").write_bytes(b"# -*- coding: ascii -*-\nimport tensorflow as tf\nname = '\xe9'\n")
    return root


def in_process(monkeypatch, capsys, cwd: Path, *args: str) -> Tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    getattr(cache_module.code_digest, "cache_clear", lambda: None)()  # as a fresh process would: sources may have changed
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def cli(cwd: Path, *args: str, **env: str) -> Tuple[int, str, str]:
    result = run_cli(*args, cwd=cwd) if not env else _run_with_env(cwd, env, *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stdout, result.stderr


def _run_with_env(cwd: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tflint_perf", *args], cwd=cwd, capture_output=True, text=True,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO), **env},
    )


def count_process_file(monkeypatch) -> List[str]:
    """Names of the files actually checked (cache misses), in-process."""
    pin_code_digest(monkeypatch)
    checked: List[str] = []
    real = runner.process_file

    def spy(path, name, *args, **kwargs):
        checked.append(name)
        return real(path, name, *args, **kwargs)

    monkeypatch.setattr(runner, "process_file", spy)
    return checked


def pin_code_digest(monkeypatch) -> None:
    """In-process runs key on a fixed build, so that someone editing tflint_perf/ meanwhile changes nothing."""
    monkeypatch.setattr(cache_module, "code_digest", lambda: "pinned for this test")


def entries(cache_dir: Path) -> List[Path]:
    return sorted(p for p in cache_dir.rglob("*.json") if not p.name.startswith("."))


def tamper(cache_dir: Path) -> int:
    """Rewrite every cached finding's message, so that output served from the cache is recognisable."""
    changed = 0
    for entry in entries(cache_dir):
        data = json.loads(entry.read_text())
        for diagnostic in data["result"]["fields"]["diagnostics"]:
            diagnostic["fields"]["message"] = "FROM CACHE"
            changed += 1
        entry.write_text(json.dumps(data))
    return changed


# -- parallel checking -------------------------------------------------------------------------------
def test_jobs_1_and_2_give_identical_output_through_a_real_pool(tmp_path, monkeypatch, capsys):
    project = make_project(tmp_path / "proj", copies=6)
    monkeypatch.setattr(runner, "POOL_MIN_WORK", 0)  # a pool even for this small project
    pools = []
    real_pool = runner._in_pool
    monkeypatch.setattr(runner, "_in_pool", lambda *a: pools.append(1) or real_pool(*a))
    for fmt in ("concise", "json", "full"):
        serial = in_process(monkeypatch, capsys, project, "check", "--no-cache", "-j", "1", "--output-format", fmt, ".")
        parallel = in_process(monkeypatch, capsys, project, "check", "--no-cache", "-j", "2", "--output-format", fmt, ".")
        assert parallel == serial
        assert serial[0] == 1 and "broken.py" in serial[1] and "latin.py" in serial[1] and "TFP002" in serial[1]
    assert len(pools) == 3, "-j 2 did not use worker processes"


def test_jobs_1_and_2_give_identical_output_above_the_real_threshold(tmp_path):
    copies = runner.POOL_MIN_WORK // len(TRAINING.encode()) + 2
    project = make_project(tmp_path / "proj", copies=copies)
    serial = cli(project, "check", "--no-cache", "-j", "1", "--output-format", "json", ".", "missing.py")
    parallel = cli(project, "check", "--no-cache", "-j", "2", "--output-format", "json", ".", "missing.py")
    assert parallel == serial
    assert len({d["filename"] for d in json.loads(serial[1])}) > copies


def test_jobs_must_be_a_positive_number(tmp_path):
    code, _, err = cli(tmp_path, "check", "-j", "0", ".")
    assert code == 2 and "positive" in err


# -- the cache ---------------------------------------------------------------------------------------
def test_cache_hit_returns_identical_output_without_checking_again(tmp_path, monkeypatch, capsys):
    project = make_project(tmp_path / "proj")
    cache_dir = tmp_path / "cache"
    uncached = cli(project, "check", "--no-cache", "--output-format", "full", ".")
    first = cli(project, "check", "--cache-dir", str(cache_dir), "--output-format", "full", ".")
    second = cli(project, "check", "--cache-dir", str(cache_dir), "--output-format", "full", ".")
    assert first == second == uncached
    checked = count_process_file(monkeypatch)
    in_process(monkeypatch, capsys, project, "check", "--cache-dir", str(cache_dir), "--output-format", "full", ".")
    checked.clear()
    third = in_process(monkeypatch, capsys, project, "check", "--cache-dir", str(cache_dir), "--output-format", "full", ".")
    assert third == uncached and checked == []


def test_cache_layout_like_ruffs(tmp_path):
    project = make_project(tmp_path / "proj")
    cli(project, "check", ".")
    cache_dir = project / ".tflint_perf_cache"
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (cache_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (cache_dir / tflint_perf.__version__).is_dir() and entries(cache_dir)
    assert not [p for p in cache_dir.rglob("*") if p.name.startswith(".tmp-")]


def test_cache_is_in_the_project_root_found_from_a_subdirectory(tmp_path):
    project = make_project(tmp_path / "proj")
    (project / "pyproject.toml").write_text("[tool.tflint-perf]\nignore = []\n")
    cli(project / "pkg", "check", ".")
    assert (project / ".tflint_perf_cache").is_dir() and not (project / "pkg" / ".tflint_perf_cache").exists()


def test_no_cache_flag_and_environment(tmp_path):
    project = make_project(tmp_path / "proj")
    cli(project, "check", "--no-cache", ".")
    cli(project, "check", ".", TFLINT_PERF_NO_CACHE="1")
    assert not (project / ".tflint_perf_cache").exists()
    cli(project, "check", ".", TFLINT_PERF_NO_CACHE="0")
    assert (project / ".tflint_perf_cache").exists()


def test_cache_dir_from_the_environment(tmp_path):
    project = make_project(tmp_path / "proj")
    cli(project, "check", ".", TFLINT_PERF_CACHE_DIR=str(tmp_path / "elsewhere"))
    assert entries(tmp_path / "elsewhere") and not (project / ".tflint_perf_cache").exists()
    code, _, _ = cli(project, "clean", TFLINT_PERF_CACHE_DIR=str(tmp_path / "elsewhere"))
    assert code == 0 and not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize(
    "change",
    [
        ["--select", "TFP101"],
        ["--ignore", "TFP102"],
        ["--select", "TFP1"],
        ["--target-version", "2.3"],
        ["--per-file-ignores", "train.py:TFP101"],
        ["--per-file-ignores", "pkg/*.py:TFP102"],
    ],
    ids=lambda c: " ".join(c),
)
def test_cache_never_serves_a_result_for_other_settings(tmp_path, change):
    project = make_project(tmp_path / "proj")
    cache_dir = str(tmp_path / "cache")
    cli(project, "check", "--cache-dir", cache_dir, "--output-format", "json", ".")
    assert tamper(Path(cache_dir)) > 0
    served = cli(project, "check", "--cache-dir", cache_dir, "--output-format", "json", ".")
    assert "FROM CACHE" in served[1], "the unchanged run did not use the cache"

    changed = cli(project, "check", "--cache-dir", cache_dir, "--output-format", "json", ".", *change)
    assert "FROM CACHE" not in changed[1]
    assert changed == cli(project, "check", "--no-cache", "--output-format", "json", ".", *change)


def test_the_key_is_the_effective_configuration_not_its_spelling(tmp_path):
    project = make_project(tmp_path / "proj")
    cli(project, "check", ".")
    tamper(project / ".tflint_perf_cache")
    assert "FROM CACHE" in cli(project, "check", "--extend-select", "TFP101", ".")[1]


def test_cache_never_serves_a_result_after_the_config_file_changes(tmp_path):
    project = make_project(tmp_path / "proj")
    cli(project, "check", ".")
    assert tamper(project / ".tflint_perf_cache") > 0
    assert "FROM CACHE" in cli(project, "check", ".")[1]
    (project / "pyproject.toml").write_text("[tool.tflint-perf]\nignore = ['TFP102']\n")
    changed = cli(project, "check", ".")
    assert "FROM CACHE" not in changed[1] and changed == cli(project, "check", "--no-cache", ".")


def test_cache_never_serves_a_result_for_changed_content(tmp_path):
    project = make_project(tmp_path / "proj")
    cli(project, "check", ".")
    tamper(project / ".tflint_perf_cache")
    (project / "train.py").write_text("# edited\n" + SAFE_FIX)
    code, out, _ = cli(project, "check", ".")
    train_lines = [line for line in out.splitlines() if line.startswith("train.py")]
    assert train_lines and "FROM CACHE" not in "".join(train_lines)
    assert train_lines == [line for line in cli(project, "check", "--no-cache", ".")[1].splitlines() if line.startswith("train.py")]
    assert any(line.startswith("pkg/trainer_0.py") and "FROM CACHE" in line for line in out.splitlines())


def test_cache_never_serves_a_result_under_another_name(tmp_path):
    project = make_project(tmp_path / "proj")
    cli(project, "check", ".")
    tamper(project / ".tflint_perf_cache")
    served = cli(tmp_path, "check", "--cache-dir", str(project / ".tflint_perf_cache"), "proj")
    assert "FROM CACHE" not in served[1] and "proj/train.py:2:" in served[1]
    assert served == cli(tmp_path, "check", "--no-cache", "proj")


@pytest.mark.parametrize("what", ["version", "code"])
def test_cache_never_serves_a_result_from_another_version(tmp_path, monkeypatch, capsys, what):
    project = make_project(tmp_path / "proj")
    cli(project, "check", ".")
    tamper(project / ".tflint_perf_cache")
    assert "FROM CACHE" in in_process(monkeypatch, capsys, project, "check", ".")[1]
    if what == "version":
        monkeypatch.setattr(tflint_perf, "__version__", "99.0.0")
    else:  # the same version number, but the rules' code changed (a development checkout)
        monkeypatch.setattr(cache_module, "code_digest", lambda: "another build")
    code, out, err = in_process(monkeypatch, capsys, project, "check", ".")
    assert "FROM CACHE" not in out and (code, out, err) == cli(project, "check", "--no-cache", ".")


def test_corrupted_cache_entries_are_ignored_and_replaced(tmp_path, monkeypatch, capsys):
    project = make_project(tmp_path / "proj")
    expected = cli(project, "check", "--no-cache", "--output-format", "json", ".")
    checked = count_process_file(monkeypatch)
    in_process(monkeypatch, capsys, project, "check", "--output-format", "json", ".")
    found = entries(project / ".tflint_perf_cache")
    corruptions = [
        lambda text: text[: len(text) // 2],  # a partial write
        lambda text: "",
        lambda text: "\x00\xff garbage",
        lambda text: "[]",
        lambda text: json.dumps({**json.loads(text), "key": "0" * 64}),  # another file's entry
        lambda text: text.replace('"$type":"Location"', '"$type":"os.system"'),
        lambda text: text.replace('"fields":{', '"fields":{"unexpected":1,', 1),
    ]
    assert len(found) >= len(corruptions)
    for index, entry in enumerate(found):
        entry.write_text(corruptions[index % len(corruptions)](entry.read_text()), encoding="latin-1")
    assert in_process(monkeypatch, capsys, project, "check", "--output-format", "json", ".") == expected
    checked.clear()  # the bad entries were rewritten: all hits now
    assert in_process(monkeypatch, capsys, project, "check", "--output-format", "json", ".") == expected
    assert checked == []


def test_two_processes_sharing_a_cache_both_succeed(tmp_path):
    copies = runner.POOL_MIN_WORK // len(TRAINING.encode()) + 2
    project = make_project(tmp_path / "proj", copies=copies)
    expected = cli(project, "check", "--no-cache", "--output-format", "json", ".")
    cache_dir = str(tmp_path / "shared-cache")
    for round_ in range(3):
        if round_ == 2:
            (project / "pkg" / "trainer_1.py").write_text(SAFE_FIX)
            expected = cli(project, "check", "--no-cache", "--output-format", "json", ".")
        command = [sys.executable, "-m", "tflint_perf", "check", "--cache-dir", cache_dir, "--output-format", "json", "."]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        processes = [
            subprocess.Popen(command + ["-j", jobs], cwd=project, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
            for jobs in ("1", "2")
        ]
        streams = [process.communicate(timeout=600) for process in processes]  # both still run at once
        outputs = [(process.returncode, out, err) for process, (out, err) in zip(processes, streams)]
        assert outputs == [expected, expected], f"round {round_}"
    assert not [p for p in Path(cache_dir).rglob("*") if p.name.startswith(".tmp-")]


def test_clean_removes_the_cache(tmp_path):
    project = make_project(tmp_path / "proj")
    cli(project, "check", ".")
    assert (project / ".tflint_perf_cache").is_dir()
    code, _, err = cli(project, "clean")
    assert code == 0 and "Removed" in err and not (project / ".tflint_perf_cache").exists()
    code, _, err = cli(project, "clean")
    assert code == 0 and "No cache" in err


def test_clean_refuses_a_directory_that_is_not_a_cache(tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    code, _, err = cli(tmp_path, "clean", "--cache-dir", str(precious))
    assert code == 2 and "not a tflint-perf cache" in err and (precious / "thesis.tex").exists()


# -- the cache with --fix and --diff ------------------------------------------------------------------
def test_fix_is_not_skipped_when_the_cached_result_has_a_fix(tmp_path):
    project = make_project(tmp_path / "proj")
    reference = make_project(tmp_path / "ref")
    cli(project, "check", ".")
    fixed = cli(project, "check", "--fix", "train.py")
    assert fixed == cli(reference, "check", "--fix", "--no-cache", "train.py")
    assert (project / "train.py").read_text() == SAFE_FIXED
    after = cli(project, "check", "train.py")
    assert after[0] == 0 and after == cli(reference, "check", "--no-cache", "train.py")


def test_fix_uses_a_cached_result_only_when_nothing_is_fixable(tmp_path, monkeypatch, capsys):
    project = make_project(tmp_path / "proj")
    reference = make_project(tmp_path / "ref")
    checked = count_process_file(monkeypatch)
    in_process(monkeypatch, capsys, project, "check", "augment.py", "clean.py")  # named files, as below (part of the key)
    checked.clear()
    served = in_process(monkeypatch, capsys, project, "check", "--fix", "augment.py", "clean.py")
    assert checked == []  # only an unsafe fix and no finding: a safe --fix has nothing to do
    assert served == cli(reference, "check", "--fix", "--no-cache", "augment.py", "clean.py")
    assert (project / "augment.py").read_text() == UNSAFE_ONLY

    unsafe = in_process(monkeypatch, capsys, project, "check", "--fix", "--unsafe-fixes", "augment.py")
    assert checked == ["augment.py"]  # now the cached finding is fixable: checked and fixed for real
    assert unsafe == cli(reference, "check", "--fix", "--unsafe-fixes", "--no-cache", "augment.py")
    assert (project / "augment.py").read_text() == (reference / "augment.py").read_text() != UNSAFE_ONLY


def test_fix_and_diff_give_the_uncached_output(tmp_path):
    for args in (["--diff"], ["--fix"], ["--fix", "--unsafe-fixes"], ["--diff", "--unsafe-fixes"]):
        project = make_project(tmp_path / "proj" / "-".join(args))
        reference = make_project(tmp_path / "ref" / "-".join(args))
        cli(project, "check", ".")
        assert cli(project, "check", *args, ".") == cli(reference, "check", "--no-cache", *args, ".")
        for path in reference.rglob("*.py"):
            assert (project / path.relative_to(reference)).read_bytes() == path.read_bytes()


def test_a_fix_run_that_changes_nothing_fills_the_cache(tmp_path, monkeypatch, capsys):
    project = make_project(tmp_path / "proj")
    checked = count_process_file(monkeypatch)
    in_process(monkeypatch, capsys, project, "check", "--fix", "clean.py", "augment.py")
    checked.clear()
    in_process(monkeypatch, capsys, project, "check", "clean.py", "augment.py")
    assert checked == []


# -- the prefilter -----------------------------------------------------------------------------------
AUXILIARY_ROOTS = {"functools", "numpy", "tqdm", "gym", "gymnasium", "sklearn", "scipy", "ipywidgets", "pickle", "joblib", "h5py", "soundfile"}  # resolved to help the analysis; never a finding alone
EXAMPLES = [(f"{rule.code}-invalid-{i}", example.code) for rule in all_rules() for i, example in enumerate(rule.invalid)
            if not rule.input_error]  # a file that cannot be read or parsed: no analysis to filter
# The TensorFlow version an example is judged for (TFP401/TFP402 report only where the replacement exists).
VERSIONS = {f"{rule.code}-invalid-{i}": example.target_version for rule in all_rules()
            for i, example in enumerate(rule.invalid)}
FIXTURE_FILES = [(path.name, path.read_text(encoding="utf-8")) for path in sorted(FIXTURES.glob("*.py"))]


@pytest.mark.parametrize("name,text", EXAMPLES + FIXTURE_FILES, ids=[n for n, _ in EXAMPLES + FIXTURE_FILES])
def test_prefilter_keeps_every_fixture_and_invalid_example(name, text):
    assert may_have_findings(text)


def test_every_tracked_root_is_caught_by_the_prefilter_or_never_finds_anything_alone():
    for root in TRACKED_ROOTS:
        if not may_have_findings(f"import {root}\nfrom {root} import x\n"):
            assert root in AUXILIARY_ROOTS, f"{root} is resolved by the analysis but the prefilter skips it"
    assert AUXILIARY_ROOTS <= set(TRACKED_ROOTS)


def _without_markers(text: str) -> str:
    return text.replace("tensorflow", "tensorfloq").replace("keras", "kerax")


@pytest.mark.parametrize("name,text", EXAMPLES + FIXTURE_FILES, ids=[n for n, _ in EXAMPLES + FIXTURE_FILES])
def test_without_the_marker_text_the_analysis_finds_nothing(monkeypatch, name, text):
    """What makes the prefilter sound: take the marker away and even an unfiltered check finds nothing."""
    settings = Settings(select=["ALL"], target_version=VERSIONS.get(name))
    assert check_text(text, "example.py", settings)  # it does find something with it
    hidden = _without_markers(text)
    assert not may_have_findings(hidden)
    monkeypatch.setattr(engine, "may_have_findings", lambda text: True)
    found = check_text(hidden, "example.py", settings)
    assert found == [], [(d.code, d.message) for d in found]


def test_auxiliary_roots_alone_find_nothing(monkeypatch):
    monkeypatch.setattr(engine, "may_have_findings", lambda text: True)
    script = _without_markers(TRAINING) + textwrap.dedent(
        """\
        from functools import partial
        import numpy as np
        from tqdm import trange

        batches = map(partial(np.multiply, 2), np.random.rand(100, 32))
        for step in trange(100):
            for batch in tqdm(batches):
                np.random.shuffle(batch)
        """
    )
    assert check_text(script, "train.py", Settings(select=["ALL"])) == []
