"""Real trees at scale: ``check`` and ``--fix --unsafe-fixes`` on a copy of installed packages' sources.

The trees are the installed ``keras`` (its training-related directories) and ``tensorflow`` (every
15th file), found with ``importlib.util.find_spec`` without importing them; the test extra installs
both. Without them it falls back to LibCST's own sources (always installed), with a small tf.data
pipeline appended to each file so that the prefilter lets the engine run and there is something to
fix, and says so (a warning in the test summary).

Invariants: no internal error, every fixed file still compiles, a second ``--fix`` changes nothing,
no temporary file is left. Marked ``slow`` (select or skip it with ``-m``); it runs by default and
stays well under three minutes on two cores.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from tests.conftest import REPO

KERAS_TRAINING_DIRS = ("trainers", "callbacks", "optimizers", "losses", "metrics", "models", "backend/tensorflow",
                       "layers/preprocessing", "engine")  # `engine` is where Keras 2 keeps its training loop
TENSORFLOW_EVERY = 15
LIBCST_EVERY = 2
ENV = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
# Appended to each fallback file: TensorFlow text for the prefilter, and something to fix.
FALLBACK_SNIPPET = (b"\n\nimport tensorflow as tf\n_ds = tf.data.Dataset.range(8).map(lambda x: x)\n"
                    b"for _batch in _ds:\n    _step(_batch)\n")


def package_directory(name: str) -> Optional[Path]:
    spec = importlib.util.find_spec(name)  # finds without importing
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def sources(directory: Path) -> List[Path]:
    return sorted(p for p in directory.rglob("*.py") if "__pycache__" not in p.parts)


def choose_trees() -> Tuple[str, List[Tuple[Path, Path]]]:
    """(description, [(source file, path relative to the copy)])."""
    chosen: List[Tuple[Path, Path]] = []
    names = []
    keras = package_directory("keras")
    if keras is not None:
        base = keras / "src" if (keras / "src").is_dir() else keras
        directories = [base / d for d in KERAS_TRAINING_DIRS if (base / d).is_dir()]
        files = [f for d in directories for f in sources(d)] or sources(keras)[::TENSORFLOW_EVERY]
        chosen += [(f, Path("keras") / f.relative_to(keras)) for f in files]
        names.append(f"keras ({len(files)} files from {keras})")
    tensorflow = package_directory("tensorflow")
    if tensorflow is not None:
        files = sources(tensorflow)[TENSORFLOW_EVERY - 1::TENSORFLOW_EVERY]
        chosen += [(f, Path("tensorflow") / f.relative_to(tensorflow)) for f in files]
        names.append(f"tensorflow (every {TENSORFLOW_EVERY}th file: {len(files)} files from {tensorflow})")
    if chosen:
        return " and ".join(names), chosen
    libcst = package_directory("libcst")
    assert libcst is not None
    files = sources(libcst)[::LIBCST_EVERY]
    return (f"FALLBACK: neither keras nor tensorflow is installed; LibCST's own sources (every {LIBCST_EVERY}nd "
            f"file: {len(files)} files from {libcst}), each with a tf.data snippet appended",
            [(f, Path("libcst") / f.relative_to(libcst)) for f in files])


def compiles(data: bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(data, "<fixed>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return False
    return True


def snapshot(root: Path) -> Dict[str, bytes]:
    files = [p for p in root.rglob("*") if p.is_file() and ".tflint_perf_cache" not in p.parts]
    return {str(p.relative_to(root)): p.read_bytes() for p in files}


def tflint_perf(root: Path, *arguments: str) -> subprocess.CompletedProcess:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "tflint_perf", "check", *arguments, "."], cwd=root, env=ENV,
                            capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - started
    print(f"  tflint-perf check {' '.join(arguments)}: exit {result.returncode} in {seconds:.1f}s")
    assert result.returncode in (0, 1), result.stderr[-5000:]
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr, result.stderr[-5000:]
    return result


@pytest.mark.slow
def test_check_and_fix_installed_packages(tmp_path):
    description, files = choose_trees()
    print(f"\nTrees: {description}")
    if description.startswith("FALLBACK"):
        warnings.warn(description)
    root = tmp_path / "tree"
    for source, relative in files:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, root / relative)
        if relative.parts[0] == "libcst":
            with open(root / relative, "ab") as handle:
                handle.write(FALLBACK_SNIPPET)
    original = snapshot(root)
    assert len(original) >= 100, f"too few files to be a test at scale: {len(original)}"
    print(f"  {len(original)} files, {sum(map(len, original.values())) / 1e6:.1f} MB")

    checked = tflint_perf(root, "--statistics")
    errors = [line for line in checked.stderr.splitlines() if ": error:" in line]
    print(f"  file errors (the input's fault): {len(errors)}", *errors[:10], sep="\n    ")

    tflint_perf(root, "--fix", "--unsafe-fixes")
    fixed = snapshot(root)
    assert set(fixed) == set(original), "files were created or removed (a temporary file left behind?)"
    changed = sorted(name for name in original if fixed[name] != original[name])
    print(f"  files fixed: {len(changed)}")
    for name in changed:
        if compiles(original[name]):
            assert compiles(fixed[name]), f"{name} no longer compiles after --fix"

    tflint_perf(root, "--fix", "--unsafe-fixes")
    again = snapshot(root)
    assert [name for name in again if again[name] != fixed[name]] == [], "a second --fix changed files"
