"""The warm path (issue 20): a run over an unchanged project decides from each file's stat, reads no
source file and imports neither LibCST nor the rules; a changed file is read alone and re-checks the
files around it; and every shortcut gives the answer of the slow path.

Behaviour, not timing: runs are traced in a subprocess (an audit hook records every ``open``, a spy
records every file checked, ``sys.modules`` is inspected at exit). Figures are benchmarks/lint_speed.py's.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, List, Set, Tuple

import pathspec
import pytest

from tests.conftest import REPO
import tflint_perf
from tflint_perf.checking import cache as cache_module
from tflint_perf.checking.config import DEFAULT_EXCLUDES, Exclusions, Settings
from tflint_perf.checking.discovery import _gitignored, is_excluded, iter_source_files_resolved, real_path
from tflint_perf.checking.manifest import ProjectFiles
from tflint_perf.project.index import Project, forget_index
from tflint_perf.project.tf_version import VersionSearch, infer_tensorflow_version

OLD = time.time() - 3600  # files written "an hour ago": past the racy window, as in a real project

NOTEBOOK = json.dumps({
    "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
               "source": ["from pkg.data import make\n", "import tensorflow as tf\n", "ds = make(['x'])\n",
                          "for batch in ds:\n", "    print(batch)\n"]}],
    "metadata": {"kernelspec": {"name": "python3", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5,
})
FILES = {
    "pyproject.toml": '[project]\nname = "warm"\n\n[tool.tflint-perf]\nmin-width = 64\nextend-select = ["TFP1"]\n',
    "requirements.txt": "numpy\ntensorflow>=2.4\n",
    "pkg/__init__.py": "",
    "pkg/data.py": "import tensorflow as tf\n\n\ndef make(files):\n    ds = tf.data.TFRecordDataset(files)\n"
                   "    return ds.map(lambda x: x).batch(32)\n",
    "pkg/train.py": "import tensorflow as tf\nfrom pkg.data import make\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(100)])\n"
                    "model.fit(make(['a']), epochs=3)\n",
    "pkg/model.py": "import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(100)])\n",
    "helper.py": "import tensorflow as tf\n\n\ndef numbers():\n    return tf.data.Dataset.range(3).map(lambda x: x * 2)\n",
    "scripts/run.py": "import helper\nfrom pkg import train\n\nfor x in helper.numbers():\n    print(x)\n",
    "nb.ipynb": NOTEBOOK,
}
SOURCES = {name for name in FILES if name.endswith((".py", ".ipynb"))}

WRAPPER = r'''
import json, os, sys
opened = []
def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes)):
        opened.append(os.fsdecode(args[0]))
sys.addaudithook(hook)
from tflint_perf.checking import runner
checked = []
real_process_file = runner.process_file
def spy(path, name, *rest):
    checked.append(name)
    return real_process_file(path, name, *rest)
runner.process_file = spy
from tflint_perf.faces.cli import main
code = main(sys.argv[1:])
modules = sorted(m for m in sys.modules if m.split(".")[0] == "libcst" or m.startswith("tflint_perf.rules")
                 or m in ("tflint_perf.checking.engine", "tflint_perf.checking.checker"))
trace = {"opened": opened, "checked": checked, "modules": modules, "cwd": os.getcwd()}
sys.stdout.flush()
with open(os.environ["TFLINT_PERF_TRACE"], "w") as handle:
    json.dump(trace, handle)
sys.exit(code)
'''


def make_project(root: Path, files=FILES, when: float = OLD) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, (when, when))
    return root


def traced(project: Path, *args: str) -> Tuple[int, str, str, Set[str], List[str], List[str]]:
    """A real ``tflint-perf check`` in a subprocess (one worker, so that every check is seen):
    exit code, stdout, stderr, the project files opened (relative), the files checked, the modules
    of LibCST, the rules and the engine that were imported."""
    wrapper = project.parent / "traced_tflint_perf.py"
    wrapper.write_text(WRAPPER)
    out = project.parent / "trace.json"
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO), "TFLINT_PERF_TRACE": str(out)}
    result = subprocess.run([sys.executable, str(wrapper), "check", "-j", "1", *args], cwd=project,
                            capture_output=True, text=True, env=env)
    assert "Traceback" not in result.stderr, result.stderr
    trace = json.loads(out.read_text())
    root = os.path.realpath(project)
    opened = set()
    for name in trace["opened"]:
        full = os.path.realpath(os.path.join(trace["cwd"], name))
        if full.startswith(root + os.sep) and ".tflint_perf_cache" not in full:
            opened.add(os.path.relpath(full, root))
    return result.returncode, result.stdout, result.stderr, opened, trace["checked"], trace["modules"]


def uncached(project: Path, *args: str) -> Tuple[int, str, str]:
    result = subprocess.run([sys.executable, "-m", "tflint_perf", "check", "--no-cache", *args], cwd=project,
                            capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)})
    return result.returncode, result.stdout, result.stderr


# -- a real command line, traced ------------------------------------------------------------------------
def test_a_warm_run_reads_no_source_file_and_imports_neither_libcst_nor_the_rules(tmp_path):
    project = make_project(tmp_path / "proj")
    expected = uncached(project, ".")
    assert expected[0] == 1 and "pkg/data.py" in expected[1]

    code, out, err, opened, checked, modules = traced(project, ".")
    assert (code, out, err) == expected
    assert set(checked) == SOURCES and any(m.startswith("libcst") for m in modules)  # the cold run, for contrast

    code, out, err, opened, checked, modules = traced(project, ".")
    assert (code, out, err) == expected
    assert checked == []
    assert modules == [], "a warm run imported " + ", ".join(modules)
    assert not opened & SOURCES, f"a warm run read {sorted(opened & SOURCES)}"
    assert "requirements.txt" not in opened  # the TensorFlow version's dependency file: known by its stat
    # The configuration is read, and discovery looks for .gitignore files; nothing else of the project.
    assert {path for path in opened if os.path.basename(path) != ".gitignore"} <= {"pyproject.toml"}


def test_a_changed_file_is_read_alone_and_rechecks_the_files_around_it(tmp_path):
    project = make_project(tmp_path / "proj")
    traced(project, ".")
    data = project / "pkg" / "data.py"
    data.write_text(FILES["pkg/data.py"] + "# changed\n")
    os.utime(data, (OLD + 60, OLD + 60))

    code, out, err, opened, checked, modules = traced(project, ".")
    assert (code, out, err) == uncached(project, ".")
    # Its importers, and the importer of an importer (data.py is two levels down from scripts/run.py).
    assert sorted(checked) == ["nb.ipynb", "pkg/data.py", "pkg/train.py", "scripts/run.py"]
    # The files checked and the modules their analyses read; never a file outside the neighbourhood.
    assert not opened & {"pkg/model.py", "pkg/__init__.py"}

    code, out, err, opened, checked, modules = traced(project, ".")
    assert checked == [] and not opened & SOURCES and modules == []


def test_a_touched_file_is_hashed_again_and_still_served(tmp_path):
    project = make_project(tmp_path / "proj")
    expected = traced(project, ".")[:3]
    os.utime(project / "pkg" / "model.py", (OLD + 5, OLD + 5))  # a new stat, the same content (a checkout)
    code, out, err, opened, checked, modules = traced(project, ".")
    assert (code, out, err) == expected and checked == [] and modules == []
    assert opened & SOURCES == {"pkg/model.py"}


def test_a_file_changed_just_now_is_hashed_again_by_the_next_run(tmp_path):
    project = make_project(tmp_path / "proj")
    traced(project, ".")
    model = project / "pkg" / "model.py"
    model.write_text(FILES["pkg/model.py"].replace("100", "101"))  # modified now: within the racy window
    first = traced(project, ".")
    assert first[4] == ["pkg/model.py"]
    second = traced(project, ".")
    assert second[:3] == first[:3] and second[4] == []
    assert second[3] & SOURCES == {"pkg/model.py"}  # its stat could not be trusted: hashed, unchanged, served


def test_an_added_file_that_changes_where_an_import_leads_rechecks_its_importer(tmp_path):
    project = make_project(tmp_path / "proj")
    traced(project, ".")
    # `import helper` in scripts/run.py now finds scripts/helper.py first: run.py did not change, its edges did.
    make_project(project, {"scripts/helper.py": "import tensorflow as tf\n\n\ndef numbers():\n"
                                                "    return tf.data.Dataset.range(3)\n"})
    code, out, err, opened, checked, modules = traced(project, ".")
    assert (code, out, err) == uncached(project, ".")
    assert {"scripts/run.py", "scripts/helper.py", "helper.py"} <= set(checked)
    assert "pkg/model.py" not in checked

    (project / "scripts" / "helper.py").unlink()  # back as it was: each key is the first run's again
    code, out, err, opened, checked, modules = traced(project, ".")
    assert (code, out, err) == uncached(project, ".") and checked == []


def test_unreadable_meta_documents_are_ignored_and_replaced(tmp_path):
    project = make_project(tmp_path / "proj")
    expected = traced(project, ".")[:3]
    documents = sorted((project / ".tflint_perf_cache").rglob("meta/*"))
    assert {path.name.split("-")[0] for path in documents} == {"project", "settings", "versions"}
    corruptions = [
        lambda text: text[: len(text) // 2],
        lambda text: "\x00\xff garbage",
        lambda text: "[]",
        lambda text: json.dumps({**json.loads(text), "files": {"pkg/data.py": [1, 2, "zz", 0, ["x"], 5]},
                                 "stamps": {"/requirements.txt": "no"}, "fingerprint": 3}),
    ]
    for corrupt in corruptions:
        for path in documents:
            path.write_text(corrupt(path.read_text(encoding="utf-8", errors="replace")), encoding="latin-1")
        assert traced(project, ".")[:3] == expected
        code, out, err, opened, checked, modules = traced(project, ".")  # rewritten: warm again
        assert (code, out, err) == expected and checked == [] and not opened & SOURCES and modules == []


def test_settings_never_validated_are_validated_in_full(tmp_path):
    project = make_project(tmp_path / "proj")
    traced(project, ".")
    traced(project, "--select", "TFP101", ".")
    for args in (["--select", "TFP1011"], ["--ignore", "prefetch-missing"], ["--per-file-ignores", "x.py:TFP9"]):
        code, out, err, *_ = traced(project, *args, ".")
        assert code == 2 and "unknown rule selector" in err and (code, out, err) == uncached(project, *args, ".")
    (project / "pyproject.toml").write_text('[tool.tflint-perf]\nmin-widht = 64\n')
    code, out, err, *_ = traced(project, ".")
    assert code == 2 and "unknown key `min-widht`" in err and (code, out, err) == uncached(project, ".")
    (project / "pyproject.toml").write_text('[tool.tflint-perf]\nmin-width = "64"\n')
    code, out, err, *_ = traced(project, ".")
    assert code == 2 and "expected an integer" in err and (code, out, err) == uncached(project, ".")
    (project / "pyproject.toml").write_text('[tool.tflint-perf]\nselect = ["TFP1011"]\n')
    code, out, err, *_ = traced(project, ".")
    assert code == 2 and "(did you mean `TFP101`?)" in err and (code, out, err) == uncached(project, ".")


def test_the_effective_settings_decide_the_key_and_a_warm_run_with_options_imports_no_rule(tmp_path):
    project = make_project(tmp_path / "proj")
    traced(project, ".")
    code, out, err, opened, checked, modules = traced(project, "--extend-select", "TFP101", ".")
    assert checked == []  # the same effective selection: served (the rules were asked, to validate it)
    code, out, err, opened, checked, modules = traced(project, "--extend-select", "TFP101", ".")
    assert checked == [] and modules == []  # validated before: not even that
    code, out, err, opened, checked, modules = traced(project, "--ignore", "TFP101", ".")
    assert checked and (code, out, err) == uncached(project, "--ignore", "TFP101", ".")


# -- the parts, against what they stand for --------------------------------------------------------------
def _index_edges(root: Path) -> Tuple[dict, dict]:
    forget_index()
    project = Project(root)
    files = project.files()
    return ({str(f): sorted(str(d) for d in project.dependencies(f)) for f in files},
            {str(f): sorted(str(i) for i in project.importers_of(f)) for f in files})


@pytest.mark.parametrize("tree", ["fixture", "repository"])
def test_the_manifest_graph_is_the_index_graph_cold_and_warm(tmp_path, tree):
    root = make_project(tmp_path / "proj") if tree == "fixture" else REPO
    dependencies, importers = _index_edges(root)
    assert any(dependencies.values())
    stored = None
    for run in range(3):
        forget_index()
        files = ProjectFiles(Project(root), stored, time.time_ns())
        for path in files.walk():
            assert sorted(files.dependencies(path)) == dependencies[path], (run, path)
            assert sorted(files.importers(path)) == importers[path], (run, path)
        if run:
            assert files.read == [] or root == REPO  # the repository's files may be racy (being edited)
        # What the index is handed before checks gives its own answers, without reading or resolving again.
        files.seed()
        for path in files.walk():
            assert sorted(str(d) for d in files.project.dependencies(Path(path))) == dependencies[path], (run, path)
            assert sorted(str(i) for i in files.project.importers_of(Path(path))) == importers[path], (run, path)
        stored = json.loads(json.dumps(files.document()))


def test_the_neighbourhood_changes_with_a_neighbour_and_only_then(tmp_path):
    root = make_project(tmp_path / "proj")
    first = ProjectFiles(Project(root), None, time.time_ns())
    train, model = str(root / "pkg" / "train.py"), str(root / "pkg" / "model.py")
    before = {path: first.neighbourhood_digest(path) for path in (train, model)}
    assert before[model] == ""  # no first-party edge
    stored = json.loads(json.dumps(first.document()))
    (root / "pkg" / "data.py").write_text(FILES["pkg/data.py"] + "\n")
    os.utime(root / "pkg" / "data.py", (OLD + 1, OLD + 1))
    forget_index()
    second = ProjectFiles(Project(root), stored, time.time_ns())
    assert second.neighbourhood_digest(train) != before[train]
    assert second.neighbourhood_digest(model) == ""
    assert second.read == [str(root / "pkg" / "data.py")]


def test_the_tensorflow_version_is_searched_once_per_directory_and_read_once(tmp_path):
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.11\n")
    os.utime(tmp_path / "requirements.txt", (OLD, OLD))
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    os.utime(tmp_path / "pyproject.toml", (OLD, OLD))
    directories = [tmp_path / "a", tmp_path / "a" / "b", tmp_path / "c", tmp_path / "c" / "d" / "e"]
    for directory in directories:
        directory.mkdir(parents=True, exist_ok=True)
    (tmp_path / "c" / "requirements-gpu.txt").write_text("tensorflow-gpu==1.15\n")
    search = VersionSearch()
    for directory in directories * 3:
        assert search.infer(str(directory.resolve())) == infer_tensorflow_version(directory)
    assert sorted(search.read) == sorted({str(tmp_path / "pyproject.toml"), str(tmp_path / "requirements.txt"),
                                          str(tmp_path / "c" / "requirements-gpu.txt")})
    remembered = VersionSearch(json.loads(json.dumps(search.stamps)))
    for directory in directories:
        assert remembered.infer(str(directory.resolve())) == infer_tensorflow_version(directory)
    assert remembered.read == [str(tmp_path / "c" / "requirements-gpu.txt")]  # written just now: racy, read again
    (tmp_path / "requirements.txt").write_text("tensorflow>=2.14\n")
    changed = VersionSearch(remembered.stamps)
    assert changed.infer(str((tmp_path / "a").resolve())).version == (2, 14)


def test_exclusions_answer_as_pathspec_does():
    rng = random.Random(20)
    parts = ["a", "b", "build", "builds", ".git", "x.py", "venv", ".venv", "a.b", "x+y", "dist", "y.ipynb", "docs"]
    paths = {"/".join(rng.choice(parts) for _ in range(rng.randint(1, 4))) for _ in range(4000)}
    paths |= {path + "/" for path in paths}
    pattern_sets = [
        DEFAULT_EXCLUDES,
        DEFAULT_EXCLUDES + ("docs/*", "*.ipynb"),
        ("build", "!build/x.py", "x.py"),
        ("b/", "a.b", "/a", "**/y.ipynb", "x+y", " build", "#a"),
    ]
    for patterns in pattern_sets:
        spec = pathspec.GitIgnoreSpec.from_lines(patterns)
        fast = Exclusions(tuple(patterns))
        assert [p for p in paths if fast.match_file(p)] == [p for p in paths if spec.match_file(p)], patterns


def _reference_iter_source_files(directory: Path, settings: Settings) -> Iterator[Path]:
    """Discovery as it was before it handled paths as strings (commit a5af7d6), to compare with."""
    def real_child(base: Path, real_base: Path, name: str) -> Path:
        return real_path(base / name) if os.path.islink(os.path.join(base, name)) else real_base / name

    for current, dirnames, filenames in os.walk(directory):
        base = Path(current)
        real_base = real_path(base)
        dirnames[:] = sorted(d for d in dirnames if not is_excluded(base / d, settings, True, real_child(base, real_base, d)))
        for name in sorted(filenames):
            path = base / name
            if path.suffix in (".py", ".ipynb") and not is_excluded(path, settings, False, real_child(base, real_base, name)):
                yield path


def test_discovery_finds_what_it_found_before(tmp_path, monkeypatch):
    root = tmp_path / "tree"
    names = ["a.py", "b.ipynb", ".py", "c.txt", "build/x.py", "sub/build/y.py", "sub/d.py", "sub/.hidden/e.py",
             "venv/f.py", "docs/g.py", "docs/h.txt", "ignored/i.py", "keep/j.py", "keep/k.tmp.py", "deep/1/2/3/l.py"]
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x = 1\n")
    (root / ".gitignore").write_text("ignored/\n*.tmp.py\n")
    (root / "keep" / ".gitignore").write_text("!k.tmp.py\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.py").write_text("o = 1\n")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    (root / "link.py").symlink_to(outside / "o.py")
    (root / "broken.py").symlink_to(tmp_path / "missing.py")
    (root / ".git").mkdir()
    monkeypatch.chdir(root)
    for extend in ([], ["docs/*"], ["*.ipynb", "!a.py"], ["sub"]):
        for start in (Path("."), Path("sub"), root, Path("linked")):
            settings = Settings(root=root, extend_exclude=list(extend))
            found = list(iter_source_files_resolved(start, settings))
            assert [path for path, _ in found] == list(_reference_iter_source_files(start, settings)), (extend, start)
            for path, real in found:
                assert real is None if os.path.islink(path) else real == str(real_path(path))
    assert _gitignored(root / "ignored" / "i.py", False)


def test_the_code_digest_follows_the_sources_without_reading_them(tmp_path, monkeypatch):
    package = tmp_path / "pkg"
    (package / "rules").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "rules" / "tfp999.py").write_text("RULE = 1\n")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.py").write_text("")
    monkeypatch.setattr(tflint_perf, "__file__", str(package / "__init__.py"))
    opened: List[str] = []
    recording = [True]  # an audit hook cannot be removed: it records only during this test
    sys.addaudithook(lambda event, args: opened.append(str(args[0])) if recording and event == "open" else None)

    def digest() -> str:
        cache_module.code_digest.cache_clear()
        return cache_module.code_digest()

    first = digest()
    assert not [path for path in opened if str(package) in path]
    assert digest() == first
    (package / "rules" / "tfp999.py").write_text("RULE = 22\n")  # another size
    second = digest()
    os.utime(package / "rules" / "tfp999.py", (OLD, OLD))  # another modification time
    assert len({first, second, digest()}) == 3
    (package / "__pycache__" / "x.py").write_text("ignored")
    assert digest() == digest()
    recording.clear()
    cache_module.code_digest.cache_clear()


def test_the_libcst_version_is_found_without_importing_libcst():
    import libcst._version

    cache_module._libcst_version.cache_clear()
    saved = sys.modules.pop("libcst._version")
    try:
        assert cache_module._libcst_version() == libcst._version.__version__
    finally:
        sys.modules["libcst._version"] = saved
        cache_module._libcst_version.cache_clear()

