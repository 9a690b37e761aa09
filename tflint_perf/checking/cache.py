"""A results cache like ruff's: a file is not checked again while nothing that decides its result changed.

An entry is one JSON file, named by a hash of everything that decides a file's result: its bytes,
the tool (version, a digest of its own source, the LibCST version), the effective settings
(``Settings.fingerprint()``), the name it is reported under and its path relative to the project
root (per-file ignores match on it). A changed input is a different key, so a stale entry is never
found; old entries are only ever left behind, and ``tflint-perf clean`` removes them.

The layout copies ruff's: ``.tflint_perf_cache/`` in the project root, with a ``CACHEDIR.TAG`` and a
``.gitignore`` of ``*``, entries under ``<version>/<2 hex>/<hash>.json``. Entries are written to a
temporary file and renamed into place, so concurrent runs (pre-commit runs hook partitions in
parallel) see an entry whole or not at all; an unreadable, truncated or foreign entry is ignored and
recomputed. Entries are JSON, never pickle: a cache directory can come from a checkout of untrusted
code, and reading it must not run anything.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

import tflint_perf
from tflint_perf.checking.checker import FileResult
from tflint_perf.checking.config import Settings
from tflint_perf.text.diagnostics import Diagnostic, Edit, Fix, Location

DEFAULT_DIRECTORY = ".tflint_perf_cache"
ENTRY_FORMAT = 1
# From https://bford.info/cachedir/: backup and archiving tools skip a directory holding this file.
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by tflint-perf.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)
_TYPES = {cls.__name__: cls for cls in (FileResult, Diagnostic, Location, Fix, Edit)}
_FALSE = ("", "0", "false", "no", "off")


class CacheError(Exception):
    """The cache directory cannot be used as asked (e.g. ``clean`` on a directory that is not a cache)."""


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in _FALSE


def resolve_directory(root: Path, cli_value: Optional[str]) -> Path:
    """``--cache-dir``, else ``TFLINT_PERF_CACHE_DIR``, else ``.tflint_perf_cache`` in the project root."""
    value = cli_value or os.environ.get("TFLINT_PERF_CACHE_DIR")
    if value:
        return Path(value).expanduser().absolute()
    return root / DEFAULT_DIRECTORY


class Cache:
    """Results of plain checks, keyed by everything that decides them. Picklable, for worker processes."""

    def __init__(self, directory: Path, settings: Settings) -> None:
        self.directory = directory
        self.namespace = directory / _safe_name(tflint_perf.__version__)
        tool = [ENTRY_FORMAT, tflint_perf.__version__, code_digest(), _libcst_version(), sys.version_info[:2]]
        self._context = hashlib.sha256(json.dumps([tool, settings.fingerprint()]).encode()).digest()

    def key(self, data: bytes, name: str, relative_path: str, explicit: bool, context: str = "") -> str:
        digest = hashlib.sha256(self._context)
        digest.update(json.dumps([name, relative_path, explicit, context]).encode())
        digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.namespace / key[:2] / f"{key[2:]}.json"

    def get(self, key: str) -> Optional[FileResult]:
        """The stored result, or None when there is none or it cannot be read back exactly."""
        try:
            with open(self._entry(key), "rb") as handle:
                entry = json.loads(handle.read())
            if entry["key"] != key:
                return None
            result = _decode(entry["result"])
        except Exception:  # noqa: BLE001 - missing, partial, corrupt or foreign: recompute
            return None
        return result if isinstance(result, FileResult) else None

    def put(self, key: str, result: FileResult) -> None:
        """Store a result (best effort: a cache that cannot be written only costs time)."""
        stored = dataclasses.replace(result, text=result.text if result.diagnostics else None, fixed_text=None)
        try:
            payload = json.dumps({"key": key, "result": _encode(stored)}, separators=(",", ":")).encode()
        except TypeError:
            return  # a field this cache cannot spell exactly: never store an approximation
        entry = self._entry(key)
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            _write_atomically(entry, payload)
        except OSError:
            pass

    def prepare(self) -> None:
        """Create the directory with its CACHEDIR.TAG and ``.gitignore`` (best effort)."""
        if (self.directory / "CACHEDIR.TAG").is_file():
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            _write_atomically(self.directory / ".gitignore", b"# Created by tflint-perf automatically.\n*\n")
            _write_atomically(self.directory / "CACHEDIR.TAG", CACHEDIR_TAG.encode())
        except OSError:
            pass


def clean(directory: Path) -> bool:
    """Remove a cache directory; False when there was none. Refuses a directory that is not a cache."""
    if not directory.exists():
        return False
    is_cache = (directory / "CACHEDIR.TAG").is_file() and "tflint-perf" in _read(directory / "CACHEDIR.TAG")
    if not directory.is_dir() or not (is_cache or not any(directory.iterdir())):
        raise CacheError(f"{directory}: not a tflint-perf cache directory (no CACHEDIR.TAG); not removed")
    shutil.rmtree(directory)
    return True


@lru_cache(maxsize=None)
def code_digest() -> str:
    """A digest of tflint-perf's own source, so a changed rule invalidates entries even without a release."""
    package = Path(tflint_perf.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()


def _libcst_version() -> str:
    try:
        from libcst._version import __version__
    except ImportError:  # pragma: no cover - an unusual LibCST build
        return "unknown"
    return __version__


def _safe_name(version: str) -> str:
    return "".join(c if c.isalnum() or c in ".-_+" else "_" for c in version) or "unknown"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _write_atomically(path: Path, data: bytes) -> None:
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_encode(item) for item in value]
    if isinstance(value, tuple):
        return {"$tuple": [_encode(item) for item in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"$dict": {k: _encode(v) for k, v in value.items()}}
    if dataclasses.is_dataclass(value) and _TYPES.get(type(value).__name__) is type(value):
        fields = {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"$type": type(value).__name__, "fields": fields}
    raise TypeError(f"cannot store {type(value).__name__} in the cache")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(item) for item in value]
    if not isinstance(value, dict):
        return value
    if "$tuple" in value:
        return tuple(_decode(item) for item in value["$tuple"])
    if "$dict" in value:
        return {k: _decode(v) for k, v in value["$dict"].items()}
    cls = _TYPES[value["$type"]]
    return cls(**{name: _decode(field) for name, field in value["fields"].items()})
