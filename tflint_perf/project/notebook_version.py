"""Which TensorFlow a notebook says it runs on, in its own cells.

Course and book notebooks of 2019-2020 seldom sit beside a dependency file; they say their
TensorFlow themselves, in one of two ways, read here from the notebook's JSON (the notebook reader
of ``text/`` keeps no outputs, and the project layer does not import it):

- a cell installs a pinned TensorFlow: ``!pip install -q tensorflow==2.0.0-alpha0``,
  ``!pip install tensorflow-gpu==2.0.0-beta1``, ``%pip install "tensorflow>=2.4"``,
  ``!pip install tf-nightly-2.0-preview`` (the 2.0 previews), or selects Colab's 1.x
  (``%tensorflow_version 1.x``: Colab's TensorFlow 1 was 1.15). A declaration as strong as a
  requirements line; a commented-out line (``#!pip install ...``) declares nothing, nor does an
  unpinned ``!pip install tf-nightly``, nor ``%tensorflow_version 2.x`` (any 2.x Colab had, from 2.0
  in 2019 to 2.8 in 2022: it says 2, not which);
- a cell printing ``tf.__version__`` kept its output: ``2.0.0-alpha0``, ``tf version: 1.12.0``,
  ``• Using TensorFlow Version: 2.1.0``: the TensorFlow the notebook last ran on (a Keras version
  printed beside it, ``2.2.4-tf``, is not TensorFlow's).

Several declarations give the lowest (the oldest TensorFlow the notebook must run on, as a
requirement's lower bound does); an installed pin is read before a saved output, which only
says where the notebook ran. A notebook's own declaration beats the dependency files of its
directory (``tf_version.py``): a notebook that installs or printed its TensorFlow says more about
itself than a requirements file shared by a whole course, which may have been raised after the
notebook was last run. A configured ``target-version`` beats both.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

from tflint_perf.project.versions import RELEASED_TENSORFLOW

Version = Tuple[int, int]

# Cheap test on the raw text before the JSON is parsed: nothing to find without one of these.
_MARKERS = ("__version__", "tensorflow", "tf-nightly")
_DISTRIBUTION = r"(?:tensorflow(?:[-_](?:gpu|cpu))?|tf[-_]nightly(?:[-_](?:gpu|cpu))?)"
_PIP_INSTALL = re.compile(r"^\s*(?:[!%]\s*)?(?:python3?\s+-m\s+)?pip3?\s+install\b(?P<rest>.*)$")
_PINNED = re.compile(rf"""(?<![\w.-])['"]?{_DISTRIBUTION}\s*(?:===?|>=|~=)\s*v?(\d+)\.(\d+)[\w.+*-]*""", re.IGNORECASE)
_PREVIEW = re.compile(r"(?<![\w.-])tf[-_]nightly(?:[-_]gpu)?[-_](\d+)\.(\d+)[-_]preview\b", re.IGNORECASE)
_COLAB_MAGIC = re.compile(r"^\s*%?tensorflow_version\s+(\d+)\.x\s*$")
_PRINTS_VERSION = re.compile(r"\b(?:tf|tensorflow)\.__version__\b")
# A line that is a version, perhaps quoted or after a label: `2.0.0-alpha0`, `'2.0.0'`,
# `tf version: 2.0.0-dev20190628`, `• Using TensorFlow Version: 2.1.0`. Keras's own `2.2.4-tf` is not.
_VERSION_LINE = re.compile(
    r"""^(?:[^\d\n]*[\s:])?['"]?(\d+)\.(\d+)\.\d+(?:-?(?:alpha|beta|rc|dev)\d*|[a-z]+\d*)?['"]?\s*$""", re.IGNORECASE)


@dataclass(frozen=True)
class NotebookVersion:
    version: Version
    evidence: str  # what the notebook shows: "installs `tensorflow==2.0.0-alpha0`", ...

    def describe(self) -> str:
        return self.evidence


def notebook_version(text: str) -> Optional[NotebookVersion]:
    """The TensorFlow the notebook ``text`` (its JSON) declares in its own cells, if any."""
    if not any(marker in text for marker in _MARKERS):
        return None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        return None
    declared: List[NotebookVersion] = []
    printed: List[NotebookVersion] = []
    for number, cell in enumerate(cells, 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _text(cell.get("source"))
        declared.extend(_installed(source, number))
        if _PRINTS_VERSION.search(source):
            found = _printed(cell.get("outputs"), number)
            if found is not None:
                printed.append(found)
    found_in = declared or printed
    return min(found_in, key=lambda found: found.version) if found_in else None


def _installed(source: str, cell: int) -> Iterator[NotebookVersion]:
    for line in source.splitlines():
        if line.lstrip().startswith("#"):
            continue
        magic = _COLAB_MAGIC.match(line)
        if magic is not None and magic.group(1) == "1":
            yield NotebookVersion((1, 15), f"selects Colab's TensorFlow 1 (`%tensorflow_version 1.x`, cell {cell})")
            continue
        install = _PIP_INSTALL.match(line)
        if install is None:
            continue
        for pattern in (_PINNED, _PREVIEW):
            for match in pattern.finditer(install.group("rest")):
                version = (int(match.group(1)), int(match.group(2)))
                if version in RELEASED_TENSORFLOW:
                    yield NotebookVersion(version, f"installs `{match.group(0).strip(chr(34) + chr(39))}` (cell {cell})")


def _printed(outputs: object, cell: int) -> Optional[NotebookVersion]:
    """The TensorFlow version a cell printing ``tf.__version__`` showed: its first version line."""
    if not isinstance(outputs, list):
        return None
    for output in outputs:
        if not isinstance(output, dict) or output.get("name") == "stderr":
            continue
        data = output.get("data")
        shown = output.get("text") if "text" in output else data.get("text/plain") if isinstance(data, dict) else None
        for line in _text(shown).splitlines():
            match = _VERSION_LINE.match(line.strip())
            if match is None:
                continue
            version = (int(match.group(1)), int(match.group(2)))
            if version in RELEASED_TENSORFLOW:
                return NotebookVersion(version, f"printed `tf.__version__` as {line.strip()} (cell {cell})")
    return None


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""
