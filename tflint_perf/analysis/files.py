"""What a file is for, judged from its path: test code is not a training hot path."""

from __future__ import annotations

import re
from pathlib import PurePath

from tflint_perf.analysis.purpose import Purpose

_TEST_DIRECTORIES = frozenset({"tests"})


def is_test_file(filename: str) -> bool:
    """``test_*.py``, ``*_test.py``, ``conftest.py``, or anything under a ``tests/`` directory."""
    path = PurePath(filename.replace("\\", "/"))
    name = path.name
    if name.startswith("test_") or name.endswith(("_test.py", "_test.ipynb")) or name == "conftest.py":
        return True
    return any(part in _TEST_DIRECTORIES for part in path.parts[:-1])


# Module and directory names that say evaluation or inference (narrower than the names in code:
# `samples/` or `generated/` directories hold training code as often as not).
_EVALUATION_PATH = re.compile(
    r"(?:^|_)(?:eval|evaluat\w*|valid|validat\w*|inference|infer|predict\w*|serving|visuali[sz]\w*)(?:_|\d|$)",
    re.IGNORECASE,
)


def path_purpose(filename: str) -> Purpose:
    """What a module's own path says it is for: `evaluate_model.py`, `evaluation/coco_utils.py`,
    `inference.py`, `predict.py` hold evaluation and inference code; other names say nothing."""
    path = PurePath(filename.replace("\\", "/"))
    names = [part for part in path.parts[:-1]] + [path.stem]
    return Purpose.EVALUATION if any(_EVALUATION_PATH.search(name) for name in names) else Purpose.UNKNOWN
