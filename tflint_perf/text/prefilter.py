"""The first test every file gets, before anything is imported or parsed.

Every name the analysis can resolve comes from an import of one of these packages, so a file
without this text cannot have a finding and is never parsed. Kept apart from the engine so the
flake8 plugin can answer for such files without importing LibCST.
"""

from __future__ import annotations

import re

_MARKER = re.compile(r"tensorflow|keras")


def may_have_findings(text: str) -> bool:
    return _MARKER.search(text) is not None


# A module may build or pass on tf.data pipelines without naming TensorFlow: `generate_datasets()`
# batching what another module's `get_parsed_dataset()` maps, for a third module to fit. Such a module
# has no finding of its own, but a project's session reads it as a link between its neighbours.
# A package's `__init__.py` that re-exports a module wholesale (`from .utils import *`) hands on whatever
# helpers that module defines (`d2lzh.getVOCSegDataset`): a link too.
_PIPELINE_TEXT = re.compile(
    r"Dataset|tf\.data|tfds|dataset_from_directory|dataset_from_array"
    r"|\.(?:batch|padded_batch|shuffle|prefetch|interleave|repeat)\("
    r"|^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+\*",
    re.M,
)


def may_hold_pipelines(text: str) -> bool:
    """The text may build, extend or hand on a tf.data pipeline (cheap, and generous)."""
    return _PIPELINE_TEXT.search(text) is not None
