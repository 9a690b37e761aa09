"""What a file is for, judged from its path: test code is not a training hot path."""

from __future__ import annotations

import re
from pathlib import PurePath

import libcst as cst

from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.text.walk import walk

_TEST_DIRECTORIES = frozenset({"tests"})


def _in_test_directory(path: PurePath) -> bool:
    return path.name == "conftest.py" or any(part in _TEST_DIRECTORIES for part in path.parts[:-1])


# Modules that exist to support tests: their datasets, fakes and fixtures are built for unit tests
# (TAPAS' `table_dataset_test_utils.py`, `test_util.py`, `testing_utils.py`, an `official/utils/testing/`
# package). A `test/` folder is not one of them: scratch scripts live there as often as tests.
_TEST_SUPPORT_MODULE = re.compile(r"(?:^|_)(?:test|testing)_?(?:utils?|helpers?|fixtures?)$", re.IGNORECASE)
_TEST_SUPPORT_DIRECTORIES = frozenset({"testing"})


def _supports_tests(path: PurePath) -> bool:
    return bool(_TEST_SUPPORT_MODULE.search(path.stem)) or any(part in _TEST_SUPPORT_DIRECTORIES for part in path.parts[:-1])


def _named_like_a_test(path: PurePath) -> bool:
    return path.name.startswith("test_") or path.name.endswith(("_test.py", "_test.ipynb"))


def is_test_module(filename: str, module: cst.Module) -> bool:
    """Test code: a file under a ``tests/`` directory, ``conftest.py``, a module that supports tests
    (``*test_utils.py``, ``test_util.py``, under ``testing/``), or a module named like a test
    (``test_*.py``, ``*_test.py``) that holds a test; one named so that holds none is not. The
    tutorials' ``train_evalute_test.py`` trains, validates and tests a model as a script: "test" is
    the data split, and its training pipeline is a hot path. A test is a ``test*`` function or
    method, a ``TestCase`` class, or a test runner's ``main()``."""
    path = PurePath(filename.replace("\\", "/"))
    if _in_test_directory(path) or _supports_tests(path):
        return True
    if not _named_like_a_test(path):
        return False
    found = _Tests()
    walk(module, found)
    return found.any


# `unittest.main()`, `tf.test.main()`, `absltest.main()`: a test runner started by the module.
_TEST_RUNNERS = frozenset({"unittest.main", "tf.test.main", "absltest.main", "pytest.main", "test.main"})


class _Tests(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.any = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.any = self.any or node.name.value.startswith("test")

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = (dotted_text(base.value) or "" for base in node.bases)
        self.any = self.any or node.name.value.startswith("Test") or any(b.endswith("TestCase") for b in bases)

    def visit_Call(self, node: cst.Call) -> None:
        self.any = self.any or (dotted_text(node.func) or "") in _TEST_RUNNERS


# Module and directory names that say evaluation or inference (narrower than the names in code:
# `samples/` or `generated/` directories hold training code as often as not).
_EVALUATION_PATH = re.compile(
    r"(?:^|_)(?:eval|evaluat\w*|valid|validat\w*|inference|infer|predict\w*|serving|visuali[sz]\w*)(?:_|\d|$)",
    re.IGNORECASE,
)

# Names that say training (`trainer/`, `training/`, `train_utils.py`): nearer the module, they outweigh an
# evaluation name further out.
_TRAINING_PATH = re.compile(r"(?:^|_)train(?:er|ers|ing)?(?:_|\d|$)", re.IGNORECASE)


def path_purpose(filename: str) -> Purpose:
    """What a module's own path says it is for: `evaluate_model.py`, `evaluation/coco_utils.py`,
    `inference.py`, `predict.py` hold evaluation and inference code; other names say nothing. The
    name nearest the module decides: `model_evaluation_pipeline/trainer/model.py` is the trainer of a
    project about evaluation (a `trainer/` package), and says nothing either."""
    path = PurePath(filename.replace("\\", "/"))
    names = [part for part in path.parts[:-1]] + [path.stem]
    for name in reversed(names):
        if _EVALUATION_PATH.search(name):
            return Purpose.EVALUATION
        if _TRAINING_PATH.search(name):
            return Purpose.UNKNOWN
    return Purpose.UNKNOWN
