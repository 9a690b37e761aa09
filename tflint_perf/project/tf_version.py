"""Which TensorFlow a project depends on, when `target-version` is not configured.

As ruff reads `requires-python`, this reads the lower bound of the TensorFlow requirement from the
nearest dependency files above a checked file: `pyproject.toml` (PEP 621 dependencies and optional
dependencies, Poetry), `setup.cfg`, `setup.py` (parsed with `ast`, never run), `requirements*.txt`
and `environment.yml`. The search stops at the project root (a directory holding `.git`,
`pyproject.toml`, `setup.py` or `setup.cfg`). `tensorflow>=2.12,<3` gives 2.12; `tensorflow==1.15`
1.15; `tensorflow` with no version, or no requirement at all, gives nothing: rules then say which
versions a finding holds for.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Tuple

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

Version = Tuple[int, int]

_DISTRIBUTIONS = r"(?:tensorflow[-_](?:cpu|gpu|macos|intel|aarch64)|tensorflow|tf[-_]nightly(?:[-_](?:cpu|gpu))?)"
_REQUIREMENT = re.compile(
    rf"^\s*['\"]?(?P<name>{_DISTRIBUTIONS})(?![\w.-])\s*(?:\[[^\]]*\])?\s*(?P<spec>(?:[<>=!~]=?|===)[^;#'\"]*)?",
    re.IGNORECASE,
)
_LOWER_BOUND = re.compile(r"(?:>=|==|~=|===|>)\s*v?(\d+)\.(\d+)")
_ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
_MAX_LEVELS = 12


@dataclass(frozen=True)
class InferredVersion:
    version: Version
    source: Path  # the file the requirement was read from

    def describe(self) -> str:
        return f"{self.version[0]}.{self.version[1]} (inferred from {self.source})"


def lower_bound(requirement: str) -> Optional[Version]:
    """`tensorflow>=2.12,<3` -> (2, 12); None when the line is not a TensorFlow requirement with a bound."""
    match = _REQUIREMENT.match(requirement)
    if match is None or not match.group("spec"):
        return None
    bounds = [(int(major), int(minor)) for major, minor in _LOWER_BOUND.findall(match.group("spec"))]
    return max(bounds) if bounds else None


def infer_tensorflow_version(directory: Path) -> Optional[InferredVersion]:
    """The TensorFlow lower bound the project around ``directory`` declares, if any."""
    return _infer(str(directory.resolve()))


@lru_cache(maxsize=1024)  # per directory: every file of a project asks the same few
def _infer(directory: str) -> Optional[InferredVersion]:
    current = Path(directory)
    for _ in range(_MAX_LEVELS):
        found = _declared_in(current)
        if found is not None:
            return found
        if any((current / marker).exists() for marker in _ROOT_MARKERS) or current.parent == current:
            return None
        current = current.parent
    return None


def _declared_in(directory: Path) -> Optional[InferredVersion]:
    for path in _dependency_files(directory):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        bounds = [bound for bound in map(lower_bound, _requirements(path, text)) if bound is not None]
        if bounds:
            return InferredVersion(min(bounds), path)
    return None


def _dependency_files(directory: Path) -> Iterator[Path]:
    for name in ("pyproject.toml", "setup.cfg", "setup.py"):
        if (directory / name).is_file():
            yield directory / name
    try:
        extra = sorted(p for p in directory.iterdir() if p.is_file() and _is_requirements_or_environment(p.name))
    except OSError:
        return
    yield from extra


def _is_requirements_or_environment(name: str) -> bool:
    return (name.startswith("requirements") and name.endswith(".txt")) or name in ("environment.yml", "environment.yaml")


def _requirements(path: Path, text: str) -> Iterable[str]:
    if path.name == "pyproject.toml":
        return _pyproject_requirements(text)
    if path.name == "setup.py":
        return _setup_py_requirements(text)
    if path.name.startswith("environment."):
        # `- tensorflow=2.6` (conda) or `- tensorflow>=2.6` under pip:
        return (re.sub(r"^[\s-]*", "", line).replace("=", "==", 1) if re.search(r"[^<>=!~]=[^=]", line) else
                re.sub(r"^[\s-]*", "", line) for line in text.splitlines())
    return text.splitlines()  # requirements*.txt, setup.cfg's install_requires lines


def _pyproject_requirements(text: str) -> List[str]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return []
    project = data.get("project", {})
    found = list(project.get("dependencies", []))
    for group in project.get("optional-dependencies", {}).values():
        found.extend(group)
    poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {})
    for name, spec in poetry.items():
        version = spec.get("version", "") if isinstance(spec, dict) else str(spec)
        found.append(f"{name}{_poetry_spec(version)}")
    return [item for item in found if isinstance(item, str)]


def _poetry_spec(version: str) -> str:
    version = version.strip()
    if version.startswith(("^", "~")):
        return ">=" + version.lstrip("^~=")
    if version and version[0].isdigit():
        return "==" + version
    return version


def _setup_py_requirements(text: str) -> List[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
