"""The one reading of a TensorFlow requirement, wherever it is written: a requirements line, a
``pyproject.toml`` dependency, a ``setup.py`` string (``tf_version.py``) or an argument of a notebook's
``pip install`` (``notebook_version.py``). Both import it from here (``tf_version`` imports
``notebook_version``, so neither can hold it).

A distribution is TensorFlow's own build of it: ``tensorflow``, ``tensorflow-gpu``/``-cpu``/
``-macos``/``-intel``/``-aarch64``, ``tf-nightly`` (``-gpu``/``-cpu``), and the 2019 previews
``tf-nightly-2.0-preview`` / ``tf-nightly-gpu-2.0-preview``, whose name carries the version. Extras
(``tensorflow[and-cuda]``) are read past; ``tensorflow-datasets`` or ``tensorflow-addons`` is another
project.
"""

from __future__ import annotations

import re
from typing import Optional, Tuple

Version = Tuple[int, int]

_DISTRIBUTIONS = (
    r"(?:tensorflow[-_](?:cpu|gpu|macos|intel|aarch64)|tensorflow"
    r"|tf[-_]nightly(?:[-_](?:cpu|gpu))?(?:[-_](?P<preview>\d+\.\d+)[-_]preview)?)"
)
_REQUIREMENT = re.compile(
    rf"^\s*['\"]?(?P<name>{_DISTRIBUTIONS})(?![\w.-])\s*(?:\[[^\]]*\])?\s*(?P<spec>(?:[<>=!~]=?|===)[^;#'\"]*)?",
    re.IGNORECASE,
)
_LOWER_BOUND = re.compile(r"(?:>=|==|~=|===|>)\s*v?(\d+)\.(\d+)")


def lower_bound(requirement: str) -> Optional[Version]:
    """`tensorflow>=2.12,<3` -> (2, 12); `tf-nightly-2.0-preview` -> (2, 0); None when the text is not a
    TensorFlow requirement with a bound."""
    match = _REQUIREMENT.match(requirement)
    if match is None:
        return None
    if match.group("preview"):
        major, minor = match.group("preview").split(".")
        return int(major), int(minor)
    if not match.group("spec"):
        return None
    bounds = [(int(major), int(minor)) for major, minor in _LOWER_BOUND.findall(match.group("spec"))]
    return max(bounds) if bounds else None
