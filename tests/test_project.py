"""Whole projects: pipelines, hot paths and loops across modules (fixtures/projects/trainer).

The package splits its training code the way real ones do: ``pkg/data.py`` builds pipelines that
``train.py`` fits on, ``pkg/augment.py`` holds the functions ``pkg/data.py`` and a notebook map,
``pkg/model.py`` runs ``Session.run`` in a method whose per-batch loop is in ``train.py``;
``cycle_a.py`` and ``cycle_b.py`` import each other. Every check goes through the real command line
or a real flake8 process.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Set, Tuple

import pytest

from tests.conftest import FIXTURES, run_cli
from tests.test_flake8_plugin import flake8, flake8_findings, plugin_path  # noqa: F401 - fixture

PROJECT = FIXTURES / "projects" / "trainer"

# (file, cell or None, row, code): each finding is in the module where its fix goes.
EXPECTED = {
    ("explore.ipynb", 3, 1, "TFP102"),  # maps pkg.augment.jitter (random) sequentially
    ("pkg/augment.py", None, 6, "TFP201"),  # py_function in `augment`, mapped in pkg/data.py
    ("pkg/augment.py", None, 21, "TFP202"),  # in a tf.map_fn in this file
    ("pkg/augment.py", None, 26, "TFP202"),  # `soft_sign`, hot only through train.py's tf.function
    ("pkg/data.py", None, 11, "TFP101"),  # make_dataset(), fitted in train.py
    ("pkg/data.py", None, 27, "TFP102"),  # add_augmentation: a sequential map of augment.augment
    ("pkg/model.py", None, 12, "TFP104"),  # partial_fit, called per batch from train.py
    ("pkg/queue_input.py", None, 10, "TFP201"),  # TF1 graph code built by tf1_train.py before its training session
}


def findings(result) -> Set[Tuple[str, object, int, str]]:
    assert result.returncode in (0, 1), result.stderr
    return {(Path(d["filename"]).as_posix(), d.get("cell"), d["location"]["row"], d["code"])
            for d in json.loads(result.stdout)}


@pytest.fixture()
def project(tmp_path) -> Path:
    copy = tmp_path / "trainer"
    shutil.copytree(PROJECT, copy)
    return copy


def test_findings_land_in_the_module_where_the_fix_goes(project):
    result = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=project)
    assert findings(result) == EXPECTED


def test_messages_name_the_other_module(project):
    result = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=project)
    messages = {(d["filename"], d["location"]["row"]): d["message"] for d in json.loads(result.stdout)}
    assert "`keras_model.fit()` in `train.py`" in messages[("pkg/data.py", 11)]
    assert "(in `pkg/data.py`)" in messages[("pkg/augment.py", 6)]
    assert "`step` (in `train.py`)" in messages[("pkg/augment.py", 26)]
    assert "called from a loop" in messages[("pkg/model.py", 12)]


@pytest.mark.parametrize("target", ["pkg/data.py", "pkg/augment.py", "pkg/model.py", "pkg/queue_input.py", "train.py",
                                    "explore.ipynb"])
def test_one_file_reports_what_the_whole_project_run_reports_for_it(project, target):
    """Pre-commit passes a subset of the files; the editor one file: the project is still read."""
    result = run_cli("check", "--no-cache", "--output-format", "json", target, cwd=project)
    assert findings(result) == {f for f in EXPECTED if f[0] == target}


def test_no_finding_where_the_other_module_prefetches_parallelises_or_reshuffles(project):
    result = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=project)
    rows = {(f[0], f[2]) for f in findings(result)}
    data = (project / "pkg" / "data.py").read_text().splitlines()
    for function in ("make_prefetched_dataset", "make_raw_dataset", "add_jitter"):
        start = next(i for i, line in enumerate(data, 1) if line.startswith(f"def {function}"))
        end = next((i for i, line in enumerate(data, 1) if i > start and line.startswith("def ")), len(data) + 1)
        assert not any(path == "pkg/data.py" and start <= row < end for path, row in rows), function
    assert not any(path.startswith("cycle_") for path, _ in rows)  # an import cycle: unknown, silent
    assert not any(path == "pkg/postprocess.py" for path, _ in rows)  # hot only in train.py's `evaluate`


def test_the_same_code_in_one_file_without_the_project_is_not_judged_blind(tmp_path):
    """Outside a project session a helper module alone has no consumer: nothing is guessed."""
    lone = tmp_path / "data.py"
    shutil.copy(PROJECT / "pkg" / "data.py", lone)
    lone.write_text(lone.read_text().replace("from . import augment as aug\nfrom .augment import scale\n", ""))
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", "TFP101", str(lone), cwd=tmp_path)
    assert findings(result) == set()


def test_flake8_on_one_file_reports_what_the_cli_reports(project, plugin_path):  # noqa: F811
    for target in ("pkg/data.py", "pkg/augment.py", "pkg/model.py", "train.py"):
        cli = run_cli("check", "--no-cache", "--output-format", "json", target, cwd=project)
        expected = {(d["location"]["row"], d["location"]["column"], d["code"], d["message"])
                    for d in json.loads(cli.stdout)}
        result = flake8(plugin_path, "--select", "TFP", target, cwd=project)
        assert {(row, column, code, text) for _, row, column, code, text in flake8_findings(result)} == expected


def test_a_changed_module_changes_the_findings_of_the_modules_around_it(project):
    """The results cache keys each file by the modules it imports and those importing it."""
    def run():
        return findings(run_cli("check", "--output-format", "json", ".", cwd=project))

    assert run() == EXPECTED
    assert run() == EXPECTED  # warm, from the cache
    # The per-batch loop moves out of train.py: pkg/model.py, unchanged, loses its finding.
    train = project / "train.py"
    train.write_text(train.read_text().replace("    for batch in batches:\n        autoencoder.partial_fit(batch)\n",
                                               "    autoencoder.partial_fit(batches)\n"))
    assert run() == EXPECTED - {("pkg/model.py", None, 12, "TFP104")}
    # augment.augment no longer calls back into Python: pkg/data.py, unchanged, gets the stateless message.
    augment = project / "pkg" / "augment.py"
    augment.write_text(augment.read_text().replace("tf.py_function(lambda x: x, [image], tf.float32)", "image * 1.0"))
    result = run_cli("check", "--output-format", "json", ".", cwd=project)
    message = next(d["message"] for d in json.loads(result.stdout)
                   if d["filename"] == "pkg/data.py" and d["code"] == "TFP102")
    assert "stateful" not in message


def test_an_import_cycle_ends_and_is_silent(tmp_path):
    for index in range(6):  # a ring of six modules, each passing the pipeline on
        nxt = (index + 1) % 6
        (tmp_path / f"m{index}.py").write_text(
            f"import tensorflow as tf\nfrom m{nxt} import step{nxt}\n\n\n"
            f"def step{index}(ds):\n    return step{nxt}(ds.map(lambda x: x))\n"
        )
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(
        "import tensorflow as tf\nfrom m0 import step0\n\n\ndef run(model, files):\n"
        "    model.fit(step0(tf.data.TFRecordDataset(files)))\n"
    )
    result = run_cli("check", "--no-cache", "--select", "TFP101", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr


def test_the_importer_map_kept_across_edits_is_the_one_built_afresh(tmp_path):
    # An editor's edits (overlays) update the importer map for the edited file only; it must stay the
    # map a fresh index builds, lists in file order included (importers_using and MAX_IMPORTERS read them so).
    from tflint_perf.project.index import Project

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    names = ["a", "b", "c", "d", "e"]
    for name in names:
        (tmp_path / "pkg" / f"{name}.py").write_text("import tensorflow as tf\n")
    files = [tmp_path / "pkg" / f"{name}.py" for name in names]
    edits = [
        (files[0], "from pkg import b\nfrom pkg.c import f\n"),
        (files[3], "from pkg import b, c\nimport pkg.e\n"),
        (files[4], "from . import b\n"),
        (files[0], "from pkg import e\n"),  # a's old edges (b, c) go, a new one comes
        (files[2], "from pkg import a, b\n"),
        (files[3], None),  # back to the file on disk: no imports
        (files[1], "from pkg import d\nfrom pkg import a\n"),
    ]
    project = Project(tmp_path)
    for path, text in edits:
        for file in files:
            project.importers_of(file)  # the map is built, then kept through the edits
        project.set_overlay(path, text)
        fresh = Project(tmp_path)
        for overlaid in files:
            if overlaid in project._overlays:
                fresh.set_overlay(overlaid, project._overlays[overlaid])
        for file in files:
            assert project.importers_of(file) == fresh.importers_of(file), (path, file)
    assert project.importers_of(files[3]) == [files[1]]
    assert project.importers_of(files[1]) == [files[2], files[4]]


def test_a_package_imports_itself_by_name_from_below_the_project_root(tmp_path):
    # A vendor's copy of the Object Detection API deep inside a larger tree: its modules import
    # `object_detection.utils...`, which runs with `research/` on sys.path, not the tree's root.
    from tflint_perf.project.index import Project, forget_index

    research = tmp_path / "TensorFlow" / "SSD" / "research"
    for folder in ("object_detection", "object_detection/utils", "object_detection/core", "loose"):
        (research / folder).mkdir(parents=True)
    for folder in ("object_detection", "object_detection/utils", "object_detection/core"):
        (research / folder / "__init__.py").write_text("", encoding="utf-8")
    (research / "object_detection" / "utils" / "label_map_util.py").write_text("x = 1\n", encoding="utf-8")
    evaluation = research / "object_detection" / "core" / "evaluation.py"
    evaluation.write_text("from object_detection.utils import label_map_util\n", encoding="utf-8")
    # `loose/` is no package (no __init__.py): a script in it does not import itself by its folder's name.
    (research / "loose" / "helpers.py").write_text("y = 2\n", encoding="utf-8")
    script = research / "loose" / "sub" / "run.py"
    script.parent.mkdir()
    script.write_text("from loose import helpers\n", encoding="utf-8")
    forget_index()
    project = Project(tmp_path)
    assert project.dependencies(evaluation.resolve()) == [(research / "object_detection" / "utils" / "label_map_util.py").resolve()]
    assert project.dependencies(script.resolve()) == []


def test_a_package_made_mid_session_is_imported_by_its_name(tmp_path):
    # An editor session: `vendor/pkg/` becomes a package when its __init__.py is created; the cached
    # answer "no package named pkg above this file" must go with the file list.
    from tflint_perf.project.index import Project, forget_index

    (tmp_path / "vendor" / "pkg" / "sub").mkdir(parents=True)
    helpers = tmp_path / "vendor" / "pkg" / "helpers.py"
    helpers.write_text("y = 2\n", encoding="utf-8")
    script = tmp_path / "vendor" / "pkg" / "sub" / "run.py"
    script.write_text("from pkg import helpers\n", encoding="utf-8")
    forget_index()
    project = Project(tmp_path)
    assert project.dependencies(script.resolve()) == []
    assert project.importers_of(helpers.resolve()) == []  # the file list and importer map are built
    init = tmp_path / "vendor" / "pkg" / "__init__.py"
    init.write_text("", encoding="utf-8")
    project.forget(init.resolve())
    project.forget(script.resolve())
    assert project.dependencies(script.resolve()) == [helpers.resolve()]


def test_tf1_only_importers_beyond_the_cap_leave_the_answer_unknown(tmp_path):
    # A helper imported by MAX_IMPORTERS TensorFlow 1 scripts (`tf.Session`) runs on TensorFlow 1 when
    # they are all its importers; one more, past the importers a check reads, might run on TensorFlow 2,
    # so its `tf.py_func` is reported as for an unknown target.
    from tflint_perf.project.index import MAX_IMPORTERS

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "ops.py").write_text("import tensorflow as tf\n\n\ndef wrap(f, x):\n    return tf.py_func(f, [x], tf.float32)\n")
    for index in range(MAX_IMPORTERS):
        (tmp_path / f"a{index:02d}.py").write_text("import tensorflow as tf\nfrom ops import wrap\nsess = tf.Session()\n")

    def codes():
        result = run_cli("check", "--no-cache", "--select", "TFP402", "--output-format", "json", "ops.py", cwd=tmp_path)
        return sorted(code for _, _, _, code in findings(result))

    assert codes() == []
    (tmp_path / "z_eager.py").write_text("import tensorflow as tf\nfrom ops import wrap\n")
    assert codes() == ["TFP402"]
