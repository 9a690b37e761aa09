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
