"""A results cache like ruff's: a file is not checked again while nothing that decides its result changed.

An entry is one JSON file, named by a hash of everything that decides a file's result: its content
digest, the tool (version, a digest of its own sources' stat, the LibCST version), the effective
settings (``Settings.fingerprint()``), the name it is reported under and its path relative to the
project root (per-file ignores match on it). A changed input is a different key, so a stale entry is
never found; old entries are only ever left behind, and ``tflint-perf clean`` removes them.

Beside the entries, ``meta/`` holds what lets a warm run decide without reading any source or
importing any rule: each project's manifest (``checking/manifest.py``: every file's stat, content
digest and first-party import edges), the effective fingerprint of settings as written once they
were validated, and the stat of the dependency files the TensorFlow version was read from. Each is
keyed by the tool as well, written whole and ignored when it cannot be read back.

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
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

import tflint_perf
from tflint_perf.checking.config import Settings
from tflint_perf.checking.results import FileResult
from tflint_perf.text.diagnostics import Diagnostic, Edit, Fix, Location

DEFAULT_DIRECTORY = ".tflint_perf_cache"
ENTRY_FORMAT = 2  # 2: keyed by the content digest rather than the bytes; meta/ documents
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
    """Results of plain checks, keyed by everything that decides them. Picklable, for worker processes.

    ``fingerprint`` is the settings' effective fingerprint when it is already known
    (``known_fingerprint``: remembered from a run that validated the same settings as written with this
    build); otherwise it is computed here, which imports the rules, and remembered by ``flush``."""

    def __init__(self, directory: Path, settings: Settings, fingerprint: Optional[str] = None) -> None:
        self.directory = directory
        self.namespace = directory / _safe_name(tflint_perf.__version__)
        self.tool = _tool_digest()
        self._remember: Optional[Settings] = None
        if fingerprint is None:
            fingerprint = settings.fingerprint()
            self._remember = settings
        self.fingerprint = fingerprint
        self._context = hashlib.sha256(json.dumps([self.tool, fingerprint]).encode()).digest()

    @staticmethod
    def known_fingerprint(directory: Path, settings: Settings) -> Optional[str]:
        """The effective fingerprint of ``settings`` when a run with this build validated the same
        settings as written (they then need no validation, and no rule is imported); else None."""
        namespace = directory / _safe_name(tflint_perf.__version__)
        written = settings.written()
        stored = _load_meta(namespace, _settings_name(_tool_digest(), written))
        if stored is None or stored.get("written") != written or not isinstance(stored.get("fingerprint"), str):
            return None
        return stored["fingerprint"]

    def key(self, content: bytes, name: str, relative_path: str, explicit: bool, context: str = "") -> str:
        """The entry's key; ``content`` is the digest of the file's bytes (``manifest.content_digest``)."""
        digest = hashlib.sha256(self._context)
        digest.update(json.dumps([name, relative_path, explicit, context]).encode())
        digest.update(b"\0")
        digest.update(content)
        return digest.hexdigest()

    # -- what a warm run decides by, beside the entries ----------------------------------------
    def load_meta(self, name: str) -> Optional[dict]:
        """A ``meta/`` document of this build (a project's manifest, the versions' stamps), or None."""
        return _load_meta(self.namespace, f"{name}-{self.tool[:16]}")

    def save_meta(self, name: str, document: dict) -> None:
        """Store a ``meta/`` document whole (best effort: a cache that cannot be written only costs time)."""
        self.prepare()
        _save_meta(self.namespace, f"{name}-{self.tool[:16]}", document)

    def flush(self) -> None:
        """Remember this run's effective fingerprint under its settings as written, once they are valid."""
        settings, self._remember = self._remember, None
        if settings is None:
            return
        try:
            settings.validate("settings")  # a caller may not have: only valid settings are remembered
        except Exception:  # noqa: BLE001 - a ConfigError: nothing to remember
            return
        written = settings.written()
        self.prepare()
        _save_meta(self.namespace, _settings_name(self.tool, written), {"written": written, "fingerprint": self.fingerprint})

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
    import shutil

    shutil.rmtree(directory)
    return True


@lru_cache(maxsize=None)
def code_digest() -> str:
    """A digest of tflint-perf's own sources by their names, sizes and modification times, so that a
    changed rule invalidates entries even without a release, without reading a source (hashing their
    content cost every warm run more than stat-ing a whole project).

    Installed from a wheel, the digest is the wheel's RECORD instead (every file's content hash):
    each install stamps the files with its own time, and a CI job installs afresh on every run, so
    the modification times would make a results cache carried between runs (docs/ci.md) never hit."""
    package = os.path.dirname(os.path.abspath(tflint_perf.__file__))
    record = _wheel_record(package)
    if record is not None:
        return hashlib.sha256(b"RECORD\0" + record).hexdigest()
    digest = hashlib.sha256()
    for relative, size, modified in sorted(_sources(package, "")):
        digest.update(f"{relative}\0{size}\0{modified}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def _wheel_record(package: str) -> Optional[bytes]:
    """The RECORD of the wheel this package was installed from, or None: a checkout, or an editable
    install (whose RECORD lists no source of the package). One file opened, by its exact name."""
    name = f"tflint_perf-{tflint_perf.__version__}.dist-info"
    try:
        with open(os.path.join(os.path.dirname(package), name, "RECORD"), "rb") as handle:
            record = handle.read()
    except OSError:
        return None
    return record if f"{os.path.basename(package)}/__init__.py,".encode() in record else None


def _sources(directory: str, prefix: str):
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name.endswith(".py") and entry.is_file():
                status = entry.stat()
                yield prefix + entry.name, status.st_size, status.st_mtime_ns
            elif entry.name != "__pycache__" and entry.is_dir():
                yield from _sources(entry.path, f"{prefix}{entry.name}/")
        except OSError:
            yield prefix + entry.name, -1, -1


@lru_cache(maxsize=None)
def _libcst_version() -> str:
    """LibCST's version, read without importing LibCST (its import alone costs more than a warm run)."""
    loaded = sys.modules.get("libcst._version")
    if loaded is not None:
        return str(getattr(loaded, "__version__", "unknown"))
    for entry in sys.path:  # where a plain installation is: what find_spec would find first, at less cost
        candidate = os.path.join(entry or os.curdir, "libcst", "_version.py")
        if os.path.isfile(os.path.join(entry or os.curdir, "libcst", "__init__.py")):
            try:
                with open(candidate, encoding="utf-8") as handle:
                    found = _VERSION_ASSIGNMENT.search(handle.read())
            except (OSError, ValueError):
                break
            if found:
                return found.group(1)
            break
    try:  # pragma: no cover - a LibCST build without _version.py
        from importlib.metadata import version

        return version("libcst")
    except Exception:  # noqa: BLE001
        return "unknown"


_VERSION_ASSIGNMENT = re.compile(r"""^__version__\s*=\s*(?:version\s*=\s*)?['"]([^'"]+)['"]""", re.M)


def _tool_digest() -> str:
    """The build that decides results: entries and meta documents are keyed by it."""
    tool = [ENTRY_FORMAT, tflint_perf.__version__, code_digest(), _libcst_version(), list(sys.version_info[:2])]
    return hashlib.sha256(json.dumps(tool).encode()).hexdigest()


def _settings_name(tool: str, written: str) -> str:
    return "settings-" + hashlib.sha256(f"{tool}\0{written}".encode("utf-8", "surrogateescape")).hexdigest()[:40]


def _load_meta(namespace: Path, name: str) -> Optional[dict]:
    try:
        with open(namespace / "meta" / name, "rb") as handle:
            document = json.loads(handle.read())
    except Exception:  # noqa: BLE001 - missing, partial or corrupt: decided afresh
        return None
    return document if isinstance(document, dict) else None


def _save_meta(namespace: Path, name: str, document: dict) -> None:
    try:
        payload = json.dumps(document, separators=(",", ":")).encode("utf-8", "surrogateescape")
        (namespace / "meta").mkdir(parents=True, exist_ok=True)
        _write_atomically(namespace / "meta" / name, payload)
    except (OSError, TypeError, ValueError, UnicodeEncodeError):
        pass


def _safe_name(version: str) -> str:
    return "".join(c if c.isalnum() or c in ".-_+" else "_" for c in version) or "unknown"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _write_atomically(path: Path, data: bytes) -> None:
    import tempfile  # only when writing: a warm run writes nothing

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
