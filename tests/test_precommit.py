"""The pre-commit hooks, through real ``pre-commit`` runs.

The hook repository is a temporary git repository holding this checkout's files (tracked and
untracked, minus what .gitignore excludes), so the hooks under test are the working tree's, and
this repository's own git state is never touched. pre-commit builds each hook environment with pip
(registry access needed). ``try-repo`` builds a fresh one on every call (it uses a temporary
store), so it runs once; the other runs use a ``.pre-commit-config.yaml`` pointing at the hook
repository's commit, as users do, and share one environment through PRE_COMMIT_HOME.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

BAD = "import tensorflow as tf\nds = tf.data.Dataset.range(8).batch(2)\nmodel.fit(ds)\n"
GOOD = "import tensorflow as tf\nds = tf.data.Dataset.range(8).batch(2).prefetch(tf.data.AUTOTUNE)\nmodel.fit(ds)\n"
IGNORED = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "build", "dist", ".pytest_cache",
                                 ".tflint_perf_cache")


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=tests", "-c", "user.email=tests@example.invalid", "-c", "commit.gpgsign=false",
         *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    ).stdout


def checkout_files() -> list:
    try:
        listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO)
    except (OSError, subprocess.CalledProcessError):
        return []
    return [name for name in listed.split("\0") if name and (REPO / name).is_file()]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    home = tmp_path_factory.mktemp("pre-commit-home")
    return {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("hook-repo")
    names = checkout_files()
    if names:
        for name in names:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, repo / name)
    else:  # not a git checkout: copy the tree
        shutil.copytree(REPO, repo, ignore=IGNORED, dirs_exist_ok=True)
    assert (repo / ".pre-commit-hooks.yaml").is_file()
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "hooks under test", cwd=repo)
    return repo


@pytest.fixture(scope="module")
def config(hook_repo, tmp_path_factory) -> Path:
    revision = git("rev-parse", "HEAD", cwd=hook_repo).strip()
    path = tmp_path_factory.mktemp("config") / ".pre-commit-config.yaml"
    path.write_text(
        f"repos:\n- repo: {json.dumps(str(hook_repo))}\n  rev: {revision}\n"
        "  hooks:\n  - id: tflint-perf\n  - id: tflint-perf-fix\n"
    )
    return path


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    shutil.copy(REPO / "tests" / "notebooks" / "tf2_training.ipynb", tmp_path / "train.ipynb")
    # The notebook's TFP106 finding has no fix (a shuffle between its map and batch): the fix hook
    # would leave it, and the check hook's rerun would fail on it.
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-perf]\nignore = ["TFP106"]\n')
    (tmp_path / "notes.txt").write_text("import tensorflow as tf\n")  # not Python: never passed to the hook
    git("init", "-q", cwd=tmp_path)
    git("add", "-A", cwd=tmp_path)
    return tmp_path


def pre_commit(env, project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=project, env=env, capture_output=True,
                          text=True)


def test_the_manifest_is_valid():
    result = subprocess.run([sys.executable, "-m", "pre_commit", "validate-manifest", ".pre-commit-hooks.yaml"],
                            cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_try_repo_check_hook_fails_on_bad_code(env, hook_repo, project):
    dirty = pre_commit(env, project, "try-repo", str(hook_repo), "tflint-perf", "--all-files")
    assert dirty.returncode == 1, dirty.stdout + dirty.stderr
    assert "Failed" in dirty.stdout and "- exit code: 1" in dirty.stdout
    assert "bad.py:2:31: TFP101" in dirty.stdout
    assert "train.ipynb:cell 4:3:36: TFP101" in dirty.stdout  # notebooks are passed to the hook
    assert "good.py" not in dirty.stdout and "notes.txt" not in dirty.stdout
    assert (project / "bad.py").read_text() == BAD


def test_check_hook_passes_on_good_code(env, config, project):
    clean = pre_commit(env, project, "run", "--config", str(config), "tflint-perf", "--files", "good.py")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "tflint-perf...." in clean.stdout and "Passed" in clean.stdout


def test_fix_hook_fixes_reports_and_fails_the_commit(env, config, project):
    before = (project / "train.ipynb").read_text(encoding="utf-8")
    fixing = pre_commit(env, project, "run", "--config", str(config), "tflint-perf-fix", "--all-files")
    assert fixing.returncode == 1, fixing.stdout + fixing.stderr
    assert "files were modified by this hook" in fixing.stdout
    assert "- bad.py:" in fixing.stdout and "- train.ipynb:" in fixing.stdout  # --show-fixes names them
    assert (project / "bad.py").read_text() == GOOD
    assert (project / "good.py").read_text() == GOOD
    after = json.loads((project / "train.ipynb").read_text(encoding="utf-8"))
    assert after["cells"][3]["source"][-1] == "ds_train = ds_train.shuffle(10000).batch(128).prefetch(tf.data.AUTOTUNE)"
    assert after["cells"][7] == json.loads(before)["cells"][7]  # outputs untouched

    rerun = pre_commit(env, project, "run", "--config", str(config), "tflint-perf", "--all-files")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
