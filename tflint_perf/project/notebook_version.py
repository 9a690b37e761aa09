"""Which TensorFlow a notebook says it runs on, in its own cells.

Course and book notebooks of 2019-2020 seldom sit beside a dependency file; they say their
TensorFlow themselves, in one of two ways, read here from the notebook's JSON (the notebook reader
of ``text/`` keeps no outputs, and the project layer does not import it):

- a cell installs a pinned TensorFlow: ``!pip install -q tensorflow==2.0.0-alpha0``,
  ``!pip install tensorflow-gpu==2.0.0-beta1``, ``%pip install "tensorflow>=2.4"``,
  ``!pip install tf-nightly-2.0-preview`` (the 2.0 previews), each argument of ``pip ... install``
  read as a requirements line is (``requirement.py``), or selects Colab's 1.x
  (``%tensorflow_version 1.x``: Colab's TensorFlow 1 was 1.15). A declaration as strong as a
  requirements line; a commented-out line (``#!pip install ...``) declares nothing, nor does an
  unpinned ``!pip install tf-nightly``;
- a cell selects Colab's 2.x (``%tensorflow_version 2.x``): a notebook needed that only while
  Colab's default was TensorFlow 1, from the magic's arrival with TensorFlow 2.0 (autumn 2019) to
  the switch of the default to 2.x (March 2020, TensorFlow 2.2), so it was written for 2.0 or 2.1.
  The line stayed harmless for two years after and was copied into later notebooks, so it is weaker
  than a saved output: it counts only where the notebook installs nothing and printed no version,
  and, as a saved output, only where no dependency file declares TensorFlow (handson-ml2's
  notebooks select 2.x; its requirements.txt asks for 2.6);
- a cell printing (or, on its last line, displaying) ``tf.__version__`` kept its output: ``2.0.0-alpha0``, ``tf version: 1.12.0``,
  ``• Using TensorFlow Version: 2.1.0``: the TensorFlow the notebook last ran on (a Keras version
  printed beside it, ``2.2.4-tf``, is not TensorFlow's).

Several declarations give the lowest (the oldest TensorFlow the notebook must run on, as a
requirement's lower bound does); an installed pin is read before a saved output. How they rank with
the dependency files of the notebook's directory (``tf_version.py``): a pinned install outranks
them, because it is what the notebook runs on whatever the directory declares; a saved output only
says where the notebook last ran, which a requirements file written or raised since outranks
(handson-ml2's chapter 10 printed 2.4.1; its requirements.txt now asks for 2.6), so it counts only
where no dependency file declares TensorFlow (the 2019 course notebooks that printed 2.0.0-alpha0).
A configured ``target-version`` outranks everything.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from dataclasses import dataclass
from typing import Iterator, List, Optional

from tflint_perf.project.requirement import Version, lower_bound
from tflint_perf.project.versions import RELEASED_TENSORFLOW

# Cheap test on the raw text before the JSON is parsed: nothing to find without one of these.
_MARKERS = ("__version__", "tensorflow", "tf-nightly")
# A shell command's separators: each command of `!pip uninstall -y tensorflow && pip install ...` is read alone.
_SEPARATORS = ";&|"
_PIP = re.compile(r"^pip(?:\d+(?:\.\d+)?)?$")
# What runs pip as a module: `python -m pip`, `python3.8 -m pip`, `!{sys.executable} -m pip`.
_PYTHON = re.compile(r"^(?:.*/)?python[\d.]*$|^\{sys\.executable\}$")
_COLAB_MAGIC = re.compile(r"^\s*%?tensorflow_version\s+(\d+)\.x\s*$")
# What `%tensorflow_version 2.x` gave while a notebook needed it: the oldest of 2.0 and 2.1.
_COLAB_TWO = (2, 0)
# A line that shows what it computes: a print or display call.
_PRINT_CALL = re.compile(r"(?<![\w.])(?:print|display)\s*\(")
_PRINTS_VERSION = re.compile(r"\b(?:tf|tensorflow)\.__version__\b")
# A line that is a version, perhaps quoted or after a label: `2.0.0-alpha0`, `'2.0.0'`,
# `tf version: 2.0.0-dev20190628`, `• Using TensorFlow Version: 2.1.0`. Keras's own `2.2.4-tf` is not.
_VERSION_LINE = re.compile(
    r"""^(?:[^\d\n]*[\s:])?['"]?(\d+)\.(\d+)\.\d+(?:-?(?:alpha|beta|rc|dev)\d*|[a-z]+\d*)?['"]?\s*$""", re.IGNORECASE)


# Any version line, a Keras one (`2.2.4-tf`) or NumPy's (`1.16.4`) too: what pairs outputs with the prints.
_ANY_VERSION = re.compile(r"""^(?:[^\d\n]*[\s:])?['"]?\d+\.\d+\.\d+\S*\s*$""")
_NAMES_TENSORFLOW = re.compile(r"\b(?:tf|tensorflow)\b", re.IGNORECASE)


@dataclass(frozen=True)
class NotebookVersion:
    version: Version
    evidence: str  # what the notebook shows, and where: "installs `tensorflow==2.0.0-alpha0` (cell 4)"
    saved_output: bool = False  # only a saved output of `tf.__version__`: where it last ran
    # Only Colab's `%tensorflow_version 2.x`: a line copied on for years, weaker than a printed version.
    colab_selection: bool = False


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
            found = _printed(source, cell.get("outputs"), number)
            if found is not None:
                printed.append(found)
    found_in = declared or printed or [found for number, cell in enumerate(cells, 1)
                                       if isinstance(cell, dict) and cell.get("cell_type") == "code"
                                       for found in _selected(_text(cell.get("source")), number)]
    return min(found_in, key=lambda found: found.version) if found_in else None


def _installed(source: str, cell: int) -> Iterator[NotebookVersion]:
    for line in source.replace("\\\n", " ").splitlines():  # a command continued with `\` is one line
        if line.lstrip().startswith("#"):
            continue
        magic = _COLAB_MAGIC.match(line)
        if magic is not None and magic.group(1) == "1":
            yield NotebookVersion((1, 15), f"selects Colab's TensorFlow 1 (`%tensorflow_version 1.x`, cell {cell})")
            continue
        for argument in install_arguments(line):
            version = lower_bound(argument)  # the requirement parser the dependency files are read with
            if version in RELEASED_TENSORFLOW:
                yield NotebookVersion(version, f"installs `{argument}` (cell {cell})")  # type: ignore[arg-type]


def _selected(source: str, cell: int) -> Iterator[NotebookVersion]:
    """``%tensorflow_version 2.x``: Colab's 2.x of the months the default was 1.x (2.0, then 2.1)."""
    for line in source.splitlines():
        magic = _COLAB_MAGIC.match(line)
        if magic is not None and magic.group(1) == "2":
            yield NotebookVersion(_COLAB_TWO, f"selects Colab's TensorFlow 2 (`%tensorflow_version 2.x`, cell {cell}), "
                                  "as notebooks did while Colab's default was 1.x (to March 2020: 2.0 and 2.1)", True, True)


def install_arguments(line: str) -> List[str]:
    """The requirements a shell line installs with pip: the arguments after ``pip ... install`` in each
    of its commands (``&&``, ``;``, ``|``), unquoted as the shell does, its ``#`` comment dropped
    (``!pip install tensorflow==2.3.0  # not 1.15`` installs 2.3). Options are skipped; the value of one
    (``-r requirements.txt``, ``-i URL``) is no TensorFlow requirement. An unquoted ``>`` is kept in its
    word: ``!pip install tensorflow>=2.4`` redirects to a file ``=2.4`` and installs the newest
    TensorFlow, which is at least 2.4 all the same."""
    if "pip" not in line or "install" not in line:  # most lines: no need to split them
        return []
    try:
        lexer = shlex.shlex(line.lstrip().lstrip("!%"), posix=True, punctuation_chars=_SEPARATORS)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:  # an unclosed quote: not a command this can read
        return []
    found: List[str] = []
    command: List[str] = []
    for word in words + [";"]:
        if word and all(char in _SEPARATORS for char in word):
            found.extend(_pip_install_arguments(command))
            command = []
        else:
            command.append(word)
    return found


def _pip_install_arguments(command: List[str]) -> List[str]:
    words = command[1:] if command[:1] == ["sudo"] else command
    if words and _PYTHON.match(words[0]) and words[1:3] == ["-m", "pip"]:
        words = words[2:]
    if not words or not _PIP.match(words[0]):
        return []
    rest = [word for word in words[1:] if not word.startswith("-")]  # `pip -q install`, `install -U`
    return rest[1:] if rest[:1] == ["install"] else []


def _printed(source: str, outputs: object, cell: int) -> Optional[NotebookVersion]:
    """The TensorFlow version a cell printing ``tf.__version__`` showed. Its version lines answer the
    cell's ``__version__`` lines in order (``print(np.__version__)`` then ``print(tf.__version__)``:
    the second); where they cannot be paired, only a line that names TensorFlow counts."""
    if not isinstance(outputs, list):
        return None
    asked = _showing_versions(source)
    shown = [line.strip() for output in outputs for line in _shown(output).splitlines() if _ANY_VERSION.match(line.strip())]
    tensorflow = [index for index, line in enumerate(asked) if _PRINTS_VERSION.search(line)]
    if len(asked) == len(shown) and tensorflow and all(line.count("__version__") == 1 for line in asked):
        candidates = [shown[tensorflow[0]]]
    else:
        candidates = [line for line in shown if _NAMES_TENSORFLOW.search(line)]
    for line in candidates:
        match = _VERSION_LINE.match(line)
        version = (int(match.group(1)), int(match.group(2))) if match is not None else None
        if version in RELEASED_TENSORFLOW:
            return NotebookVersion(version, f"printed `tf.__version__` as {line} (cell {cell})", True)  # type: ignore[arg-type]
    return None


def _showing_versions(source: str) -> List[str]:
    """The cell's lines that show a ``__version__``: a ``print``/``display`` of it, or the cell's last
    line a bare expression (``tf.__version__``, not ``tf.__version__;``). A line that only reads one
    (``assert tf.__version__ >= '2'``, ``v = tf.__version__``) shows nothing, and no output answers it."""
    lines = [line for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    showing = [line for line in lines if "__version__" in line and _PRINT_CALL.search(line)]
    last = lines[-1] if lines else ""
    if "__version__" in last and last not in showing and _is_displayed(last):
        showing.append(last)
    return showing


def _is_displayed(line: str) -> bool:
    """Whether a cell's last line is an expression the notebook displays the value of."""
    if line[:1].isspace() or line.rstrip().endswith(";"):
        return False
    try:
        body = ast.parse(line).body
    except (SyntaxError, ValueError):
        return False
    return len(body) == 1 and isinstance(body[0], ast.Expr)


def _shown(output: object) -> str:
    """What an output shows on stdout or as a result (a warning on stderr is no answer)."""
    if not isinstance(output, dict) or output.get("name") == "stderr":
        return ""
    data = output.get("data")
    return _text(output.get("text") if "text" in output else data.get("text/plain") if isinstance(data, dict) else None)


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""
