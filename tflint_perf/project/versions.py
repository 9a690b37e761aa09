"""The released TensorFlow minor versions (pypi.org/project/tensorflow), which `target-version` must
name, so that a typo ("2.51") or a version that does not exist ("3.0") is an error rather than a
silent change of what the rules report. Add the new minor here when TensorFlow releases one."""

from __future__ import annotations

from typing import Tuple

RELEASED_TENSORFLOW: Tuple[Tuple[int, int], ...] = tuple(
    [(1, minor) for minor in range(0, 16)] + [(2, minor) for minor in range(0, 22)]
)
OLDEST = "{}.{}".format(*RELEASED_TENSORFLOW[0])
NEWEST = "{}.{}".format(*RELEASED_TENSORFLOW[-1])
