"""Settings from ``[tool.tflint-perf]`` in pyproject.toml and the command line, and rule selection.

The rules (and with them LibCST) are imported only when a question needs them: which codes a
selector selects, a rule option's default, whether a key or selector exists. A warm run whose
settings were validated before (the results cache remembers them, ``Settings.written``) asks none.
"""

from __future__ import annotations

import re
import sys
import dataclasses
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

if TYPE_CHECKING:
    import pathspec

    from tflint_perf.project.tf_version import InferredVersion

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tflint_perf.project.versions import RELEASED_TENSORFLOW

DEFAULT_EXCLUDES = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
    ".vscode", "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages",
    "venv", ".tflint_perf_cache",
)
_LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude")
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)?$")
_TOML_TYPES = {bool: "true or false", int: "an integer", float: "a number", str: "a string", list: "a list"}


def all_rules():
    """Every rule class (imported on first use: importing the rules imports LibCST)."""
    from tflint_perf.rules import all_rules as rules

    return rules()


def rules_by_code():
    from tflint_perf.rules import rules_by_code as by_code

    return by_code()


def rule_options():
    """Every rule option by key."""
    from tflint_perf.rules.base import options_of

    return options_of(all_rules())


class ConfigError(Exception):
    """A bad configuration value or selector; the message names where it came from."""


@dataclass
class Settings:
    select: Optional[List[str]] = None  # None: the rules that are on by default
    extend_select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    exclude: List[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    extend_exclude: List[str] = field(default_factory=list)
    respect_gitignore: bool = True
    target_version: Optional[Tuple[int, int]] = None  # the TensorFlow version the code runs on
    # Where target_version came from: "configuration", "--target-version", the dependency file it
    # was inferred from, or the notebook that declares it and how (project/tf_version.py); None when
    # it is unknown.
    target_version_source: Optional[str] = None
    # target_version is only what sibling notebooks declare: code that runs only on TensorFlow 1
    # (``deprecations.runs_only_on_tf1``) is checked with no target instead (``engine``).
    target_version_guessed: bool = False
    # target_version was inferred (dependency files, a notebook, the module's own Keras calls), not written
    # by the user in the configuration, on the command line or in the editor: the engine may raise it.
    target_version_inferred: bool = False
    unsafe_fixes: bool = False
    options: Dict[str, Any] = field(default_factory=dict)
    root: Path = field(default_factory=Path.cwd)
    config_file: Optional[Path] = None

    def option(self, key: str) -> Any:
        if key in self.options:
            return self.options[key]
        return rule_options()[key].default

    def fingerprint(self) -> str:
        """Everything that changes results, as text (for caches)."""
        return repr((sorted(self.selected_codes()), sorted(self.per_file_ignores.items()),
                     self.target_version, self.target_version_guessed, self.target_version_inferred,
                     sorted(self.options.items())))

    def written(self) -> str:
        """The settings that decide results as they were written (selectors, options, target version),
        before any rule is consulted: what the results cache remembers a validated fingerprint by."""
        return repr((self.select, self.extend_select, self.ignore, sorted(self.per_file_ignores.items()),
                     self.target_version, sorted(self.options.items(), key=lambda item: item[0])))

    def selected_codes(self) -> Set[str]:
        codes: Set[str] = (
            {rule.code for rule in all_rules() if rule.default_enabled} if self.select is None else set()
        )
        for selector in list(self.select or []) + list(self.extend_select):
            codes |= _selected_by(selector)
        for selector in self.ignore:
            codes -= _matching(selector)
        return codes

    def codes_for(self, relative_path: str) -> Set[str]:
        codes = self.selected_codes()
        for pattern, ignored in self.per_file_ignores.items():
            if _glob(pattern).match_file(relative_path):
                for selector in ignored:
                    codes -= _matching(selector)
        return codes

    def excluded(self, relative_path: str) -> bool:
        return self.exclusions().match_file(relative_path)

    def exclusions(self) -> "Exclusions":
        """The exclude patterns, compiled once per process."""
        return _exclusions(tuple(self.exclude) + tuple(self.extend_exclude))

    def validate(self, origin: str) -> None:
        for selector in list(self.select or []) + self.extend_select + self.ignore + [
            code for codes in self.per_file_ignores.values() for code in codes
        ]:
            if not _matching(selector):
                raise ConfigError(f"{origin}: unknown rule selector `{selector}`{did_you_mean(selector)}")


def did_you_mean(selector: str) -> str:
    """`` (did you mean `TFP101`?)`` for a near miss among rule codes and names, else ""."""
    upper = {word.upper(): word for rule in all_rules() for word in (rule.code, rule.name)}
    import difflib

    close = difflib.get_close_matches(selector.strip().upper(), list(upper), n=1, cutoff=0.6)
    if not close:
        return ""
    return f" (did you mean `{upper[close[0]]}`?)"


def _matching(selector: str) -> Set[str]:
    selector = selector.strip()
    if selector.upper() == "ALL":
        return {rule.code for rule in all_rules()}
    return {
        rule.code
        for rule in all_rules()
        if (rule.code.startswith(selector.upper()) and selector[:1].isalpha()) or rule.name == selector
    }


def _selected_by(selector: str) -> Set[str]:
    """What ``select`` / ``extend-select`` turn on: every matching rule, except that a rule off by
    default (``Rule.default_enabled = False``, opt-in) is turned on only by a selector that names it on
    purpose: its code, its name, or a prefix that selects opt-in rules alone (``TFP4``, the deprecation
    rules, as ruff's ``UP`` turns pyupgrade on). A prefix that also selects rules on by default
    (``TFP``, ``TFP2``) or ``ALL`` leaves opt-in rules off, as ruff does for preview rules with
    ``explicit-preview-rules``."""
    matching = _matching(selector)
    return matching if names_opt_in_rules(selector) else {code for code in matching if rules_by_code()[code].default_enabled}


def names_opt_in_rules(selector: str) -> bool:
    """Whether ``selector`` turns on the opt-in rules it matches: it matches at least one rule, and
    every rule it matches is off by default (a code, a name, or a prefix such as ``TFP4``)."""
    if selector.strip().upper() == "ALL":
        return False
    matching = _matching(selector)
    return bool(matching) and not any(rules_by_code()[code].default_enabled for code in matching)


_GLOB_CACHE: Dict[Tuple[str, ...], "pathspec.PathSpec"] = {}
# A pattern that is a plain name (no slash, wildcard, negation, escape or comment) matches, with
# gitignore's rules, exactly the paths one of whose components is that name: most excludes are such
# names (DEFAULT_EXCLUDES all are), and a set lookup per component is what discovery can afford per entry.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9._+-]*|\.[A-Za-z0-9_+-][A-Za-z0-9._+-]*")


def _glob_list(patterns: Tuple[str, ...]) -> pathspec.PathSpec:
    spec = _GLOB_CACHE.get(patterns)
    if spec is None:
        import pathspec  # only for patterns that are not plain names (a warm run with the defaults has none)

        spec = _GLOB_CACHE[patterns] = pathspec.GitIgnoreSpec.from_lines(patterns)
    return spec


class Exclusions:
    """``GitIgnoreSpec.from_lines(patterns).match_file``, with the plain names matched as a set of
    path components (the same answers: tests/test_warm_path.py compares them)."""

    def __init__(self, patterns: Tuple[str, ...]) -> None:
        # A negated pattern makes order matter: then every pattern goes through pathspec, in order.
        negated = any(p.strip().startswith("!") for p in patterns)
        self.names = frozenset() if negated else frozenset(p for p in patterns if _PLAIN_NAME.fullmatch(p))
        rest = tuple(p for p in patterns if p not in self.names)
        self._rest = _glob_list(rest) if rest else None
        self.needs_path = self._rest is not None  # a pattern to match against the whole path

    def match_file(self, relative_path: str) -> bool:
        names = self.names
        if names and any(part in names for part in relative_path.split("/")):
            return True
        return self._rest is not None and self._rest.match_file(relative_path)


_EXCLUSIONS: Dict[Tuple[str, ...], Exclusions] = {}


def _exclusions(patterns: Tuple[str, ...]) -> Exclusions:
    known = _EXCLUSIONS.get(patterns)
    if known is None:
        known = _EXCLUSIONS[patterns] = Exclusions(patterns)
    return known


def _glob(pattern: str) -> pathspec.PathSpec:
    return _glob_list((pattern,))


def find_config(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml, from ``start`` upwards, that has a [tool.tflint-perf] table."""
    for directory in [start, *start.parents]:
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                return candidate  # reported properly by load_config
            if "tflint-perf" in data.get("tool", {}):
                return candidate
    return None


def load_config(path: Optional[Path], root: Optional[Path] = None, validate: bool = True) -> Settings:
    """The settings of a configuration file. ``validate=False`` takes the keys that are not built in for
    rule options and checks no selector, which needs no rule: only for a file whose settings were
    validated before (``Settings.written``); any error is then raised as the validating load raises it."""
    if path is None:
        return Settings(root=root or Path.cwd())
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read configuration: {error.strerror or error}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    table = data.get("tool", {}).get("tflint-perf", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.tflint-perf] must be a table")
    settings = Settings(root=path.parent.resolve(), config_file=path)
    known_options = None
    for key, value in table.items():
        where = f"{path}: [tool.tflint-perf] {key}"
        if key in _LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise ConfigError(f"{where}: expected a list of strings")
            setattr(settings, key.replace("-", "_"), list(value))
        elif key == "per-file-ignores":
            if not isinstance(value, dict) or not all(
                isinstance(codes, list) and all(isinstance(code, str) for code in codes) for codes in value.values()
            ):
                raise ConfigError(f"{where}: expected a table of glob = [codes]")
            settings.per_file_ignores = {str(glob): list(codes) for glob, codes in value.items()}
        elif key == "target-version":
            settings.target_version = parse_version(value, where)
            settings.target_version_source = where
        elif key in ("respect-gitignore", "unsafe-fixes"):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: expected true or false")
            setattr(settings, key.replace("-", "_"), value)
        elif not validate:
            settings.options[key] = value  # a rule option: checked when these settings were validated
        else:
            known_options = rule_options() if known_options is None else known_options
            if key not in known_options:
                raise ConfigError(f"{path}: unknown key `{key}` in [tool.tflint-perf]")
            default = known_options[key].default
            if type(value) is not type(default):
                raise ConfigError(f"{where}: expected {_TOML_TYPES.get(type(default), type(default).__name__)}, got {value!r}")
            settings.options[key] = value
    if validate:
        settings.validate(str(path))
    return settings


def parse_version(value: Any, where: str) -> Tuple[int, int]:
    """A released TensorFlow version, as (major, minor); a ConfigError naming ``where`` otherwise."""
    if isinstance(value, float):  # TOML 2.10 is the number 2.1
        raise ConfigError(f"{where}: write the TensorFlow version as a string, e.g. \"{value}\", got the number {value!r}")
    match = _VERSION.match(value) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(f"{where}: expected a TensorFlow version such as \"2.15\", got {value!r}")
    version = int(match.group(1)), int(match.group(2))
    if version not in RELEASED_TENSORFLOW:
        raise ConfigError(
            f"{where}: {value!r} is not a released TensorFlow version; valid values: {released_versions()}"
        )
    return version


def released_versions() -> str:
    return ", ".join(f"{major}.{minor}" for major, minor in RELEASED_TENSORFLOW)


def with_cli_overrides(
    settings: Settings,
    select: Optional[Sequence[str]],
    extend_select: Optional[Sequence[str]],
    ignore: Optional[Sequence[str]],
    exclude: Optional[Sequence[str]],
    per_file_ignores: Optional[Iterable[str]] = None,
    validate: bool = True,
) -> Settings:
    """Command-line selection wins over the file: --select replaces, the others add."""
    updated = replace(settings)
    if select:
        updated.select = list(select)
        updated.extend_select = []
    if extend_select:
        updated.extend_select = updated.extend_select + list(extend_select)
    if ignore:
        updated.ignore = updated.ignore + list(ignore)
    if exclude:
        updated.extend_exclude = updated.extend_exclude + list(exclude)
    if per_file_ignores:
        merged = dict(updated.per_file_ignores)
        for entry in per_file_ignores:
            pattern, _, codes = entry.rpartition(":")
            if not pattern:
                raise ConfigError(f"--per-file-ignores: expected PATTERN:CODES, got `{entry}`")
            merged[pattern] = merged.get(pattern, []) + [c for c in codes.split(",") if c]
        updated.per_file_ignores = merged
    if validate:
        updated.validate("command line")
    return updated


def version_configured(settings: Settings) -> bool:
    """The target version is the user's word, not one inferred from the project or the code."""
    return settings.target_version is not None and not settings.target_version_inferred


def with_project_version(settings: Settings, path: Path) -> Settings:
    """``settings`` with the TensorFlow version the project of ``path`` depends on, when none is configured."""
    if settings.target_version is not None:
        return settings
    from tflint_perf.project.tf_version import infer_for_file

    inferred = infer_for_file(path, settings.root)  # as a run infers it (an unmarked project: the run's root)
    return settings if inferred is None else with_inferred_version(settings, inferred)


def with_inferred_version(settings: Settings, inferred: "InferredVersion") -> Settings:
    """``settings`` with the TensorFlow version ``inferred`` for a file or directory, and where it came from."""
    return dataclasses.replace(settings, target_version=inferred.version, target_version_source=inferred.where(),
                               target_version_guessed=inferred.from_siblings, target_version_inferred=True)
