"""What a file is for, judged from its path: test code is not a training hot path."""

from __future__ import annotations

from pathlib import PurePath

_TEST_DIRECTORIES = frozenset({"tests"})


def is_test_file(filename: str) -> bool:
    """``test_*.py``, ``*_test.py``, ``conftest.py``, or anything under a ``tests/`` directory."""
    path = PurePath(filename.replace("\\", "/"))
    name = path.name
    if name.startswith("test_") or name.endswith(("_test.py", "_test.ipynb")) or name == "conftest.py":
        return True
    return any(part in _TEST_DIRECTORIES for part in path.parts[:-1])
