"""The server's settings: the editor's (``initializationOptions``, ``workspace/configuration``) over
the project's ``[tool.tflint-perf]``, as ruff's server layers them.

The editor's keys are camelCase (``select``, ``extendSelect``, ``ignore``, ``perFileIgnores``,
``unsafeFixes``, ``targetVersion``) or any rule option (``alignment``, ``minWidth`` or ``min-width``).
``select`` replaces the project's selection, the other selectors add to it, as on the command line
(``checking/config.py``'s ``with_cli_overrides``). When neither sets ``target-version``, it is
inferred from the project's dependency files, read again after any of them changes (``forget``).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from tflint_perf.checking.config import (
    ConfigError,
    Settings,
    find_config,
    load_config,
    parse_version,
    rule_options,
    with_cli_overrides,
    with_project_version,
)
from tflint_perf.project.dockerfile import is_dockerfile
from tflint_perf.project.tf_version import forget_inferred_versions

_SELECTORS = ("select", "extendSelect", "ignore")
_BUILT_IN = set(_SELECTORS) | {"perFileIgnores", "unsafeFixes", "targetVersion", "logLevel"}
# The files whose change reloads the settings: the config, and where the TensorFlow version is declared.
_DEPENDENCY_FILE = re.compile(r"^(pyproject\.toml|setup\.cfg|setup\.py|environment\.ya?ml|requirements.*\.txt)$")


def is_settings_file(path: Path) -> bool:
    return bool(_DEPENDENCY_FILE.match(path.name)) or is_dockerfile(path.name)


def editor_settings(raw: Any) -> Dict[str, Any]:
    """The editor's settings table: ``{"settings": {...}}`` (ruff's initializationOptions) or the table itself."""
    if not isinstance(raw, dict):
        return {}
    inner = raw.get("settings")
    return dict(inner) if isinstance(inner, dict) else dict(raw)


def _kebab(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", key).lower()


class SettingsStore:
    """The settings of each file: the project's config read once per config file (until ``forget``),
    with the editor's on top. A bad value raises ConfigError, naming where it came from."""

    def __init__(self) -> None:
        self.editor: Dict[str, Any] = {}
        self._loaded: Dict[Path, Union[Settings, ConfigError]] = {}  # per directory, until ``forget``
        self._fallback: Optional[Union[Settings, ConfigError]] = None  # an untitled buffer's, outside any folder

    def set_editor(self, raw: Any) -> None:
        self.editor = editor_settings(raw)
        self._loaded.clear()
        self._fallback = None

    def forget(self) -> None:
        """A config or dependency file changed: read them again on the next question."""
        self._loaded.clear()
        self._fallback = None
        forget_inferred_versions()

    @property
    def unsafe_fixes(self) -> Optional[bool]:
        value = self.editor.get("unsafeFixes")
        return value if isinstance(value, bool) else None

    def for_path(self, path: Path, folder: Path) -> Settings:
        known = self._loaded.get(path.parent)
        if known is None:
            try:
                known = with_project_version(self._layered(find_config(path.parent), folder), path)
            except ConfigError as problem:
                known = problem
            self._loaded[path.parent] = known
        if isinstance(known, ConfigError):
            raise known
        return known

    def for_untitled(self, name: str, folders: List[Path]) -> Settings:
        """An untitled buffer's settings, as ruff's server gives them: in a workspace of one folder, a
        file's at the top of that folder; else the editor's over the defaults (which folder would it
        be in?)."""
        if len(folders) == 1:
            return self.for_path(folders[0] / name, folders[0])
        if self._fallback is None:
            try:
                self._fallback = self._layered(None, None)
            except ConfigError as problem:
                self._fallback = problem
        if isinstance(self._fallback, ConfigError):
            raise self._fallback
        return self._fallback

    def _layered(self, config: Optional[Path], folder: Optional[Path]) -> Settings:
        settings = load_config(config, root=folder)
        editor = self.editor
        lists = {}
        for key in (*_SELECTORS, "perFileIgnores"):
            value = editor.get(key)
            if value is None:
                continue
            if key == "perFileIgnores":
                if not isinstance(value, dict) or not all(isinstance(codes, list) for codes in value.values()):
                    raise ConfigError(f"editor setting `{key}`: expected a table of glob = [codes]")
                lists[key] = [f"{glob}:{','.join(map(str, codes))}" for glob, codes in value.items()]
            elif not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ConfigError(f"editor setting `{key}`: expected a list of strings")
            else:
                lists[key] = value
        settings = with_cli_overrides(settings, lists.get("select"), lists.get("extendSelect"), lists.get("ignore"),
                                      None, lists.get("perFileIgnores"))
        if self.unsafe_fixes is not None:
            settings = dataclasses.replace(settings, unsafe_fixes=self.unsafe_fixes)
        if editor.get("targetVersion") is not None:
            where = "editor setting `targetVersion`"
            settings = dataclasses.replace(settings, target_version=parse_version(editor["targetVersion"], where),
                                           target_version_source=where)
        options = self._options({k: v for k, v in editor.items() if k not in _BUILT_IN})
        if options:
            settings = dataclasses.replace(settings, options={**settings.options, **options})
        return settings

    @staticmethod
    def _options(raw: Dict[str, Any]) -> Dict[str, Any]:
        known = rule_options()
        options: Dict[str, Any] = {}
        for key, value in raw.items():
            name = key if key in known else _kebab(key)
            if name not in known:
                raise ConfigError(f"editor setting `{key}`: unknown setting")
            default = known[name].default
            if type(value) is not type(default):
                raise ConfigError(f"editor setting `{key}`: expected a {type(default).__name__}, got {value!r}")
            options[name] = value
        return options


def folder_of(path: Path, folders: List[Path]) -> Path:
    """The workspace folder holding ``path`` (the deepest), else the file's directory."""
    holding = [folder for folder in folders if folder == path or folder in path.parents]
    return max(holding, key=lambda folder: len(folder.parts)) if holding else path.parent
