"""tflint-perf as a flake8 plugin: ``flake8 --select TFP`` reports what ``tflint-perf check`` reports.

The plugin is the engine's thin adapter. It yields every diagnostic before ``# noqa`` filtering,
because flake8 applies ``# noqa``, ``# flake8: noqa``, ``--select``, ``--extend-ignore`` and
``--per-file-ignores`` itself (only the file-level ``# tflint-perf: noqa``, which flake8 does not
know, is applied here). Settings come from ``[tool.tflint-perf]`` in the nearest pyproject.toml, as
for the command line.

Rules off by default (opt-in: TFP209, the deprecation rules TFP401/TFP402) are yielded only when
selected on purpose, since flake8's ``--select TFP`` means "this plugin's codes", not "every advice
it has": by tflint-perf's own ``select``/``extend-select`` (``extend-select = ["TFP4"]``), or by a
flake8 ``--select``/``--extend-select`` (command line or ``[flake8]`` configuration) that names them
as tflint-perf's selectors would: their code (``TFP401``), or a prefix of opt-in rules alone
(``TFP4``). ``flake8 --select TFP`` reports the default rule set.

A plugin that raises kills the whole flake8 run, so this one never does:

- a file LibCST cannot analyse (flake8 has already reported real syntax errors as E999) is skipped,
  with an INFO line in ``flake8 -v``: the command line's TFP002 (and TFP001 for a file that cannot
  be read) are flake8's own E999 and E902 here;
- a bug in tflint-perf skips the file, with a WARNING line in ``flake8 -v``;
- a bad ``[tool.tflint-perf]`` table is reported as ``TFP000`` on line 1 of each file that would be
  checked, and no other TFP check runs on it (as the command line stops with exit code 2).
"""

from __future__ import annotations

import ast
import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, List, Optional, Sequence, Tuple, Union

from tflint_perf import __version__
from tflint_perf.text.prefilter import may_have_findings

if TYPE_CHECKING:
    from tflint_perf.checking.config import ConfigError, Settings

# Under flake8's logger, so the lines show with `flake8 -v` and stay silent otherwise.
LOG = logging.getLogger("flake8.tflint_perf")

CONFIG_ERROR_CODE = "TFP000"

Result = Tuple[int, int, str, type]


class Plugin:
    name = "tflint-perf"
    version = __version__

    def __init__(self, tree: ast.AST, lines: Sequence[str], filename: str) -> None:
        # flake8 recognises an AST plugin by this parameter's name; the tree places findings for free.
        self.tree = tree if isinstance(tree, ast.Module) else None
        self.lines = lines
        self.filename = filename

    # flake8's --select / --extend-select entries that may name tflint-perf rules (``parse_options``).
    flake8_selectors: Tuple[str, ...] = ()

    @classmethod
    def parse_options(cls, options: object) -> None:
        """flake8 hands every plugin its parsed options (in each worker process too): keep the selectors
        that could name an opt-in rule. Nothing is imported here, so a run with no TFP file pays nothing."""
        given = list(getattr(options, "select", None) or []) + list(getattr(options, "extend_select", None) or [])
        cls.flake8_selectors = tuple(entry.strip() for entry in given if entry.strip().upper().startswith("TFP"))

    def run(self) -> Iterator[Result]:
        text = "".join(self.lines)
        # Before anything else: most files end here, and the engine (LibCST) is imported only for
        # the others, so having the plugin installed costs a flake8 run next to nothing.
        if not may_have_findings(text):
            return
        try:
            results = self._check(text)
        except Exception:  # noqa: BLE001 - a plugin that raises ends the whole flake8 run
            LOG.warning("tflint-perf: internal error on %s; file skipped (please report this)", self.filename,
                        exc_info=True)
            return
        yield from results

    def _check(self, text: str) -> List[Result]:
        from tflint_perf.checking.config import ConfigError
        from tflint_perf.checking.discovery import relative_to_root
        from tflint_perf.checking.engine import check_text
        from tflint_perf.text.parsing import InternalError, ParseError
        from tflint_perf.checking.workspace import workspace_for

        settings = settings_for(self.filename)
        if isinstance(settings, ConfigError):
            return [(1, 0, f"{CONFIG_ERROR_CODE} tflint-perf configuration error, no TFP checks ran: {settings}",
                     type(self))]
        settings = with_flake8_selection(settings, self.flake8_selectors)
        codes = settings.codes_for(relative_to_root(Path(self.filename), settings))
        try:
            if self.filename in ("-", "stdin"):
                diagnostics = check_text(text, self.filename, settings, codes, apply_noqa=False, tree=self.tree)
            else:
                # One workspace per project and process: modules another file imports are modelled once.
                path = Path(self.filename)
                diagnostics = workspace_for(path, settings.root).check_text(
                    text, self.filename, settings, codes, path=path, apply_noqa=False, tree=self.tree)
        except ParseError as problem:
            LOG.info("tflint-perf did not check %s: %s", self.filename, problem)
            return []
        except InternalError as problem:
            LOG.warning("tflint-perf: internal error on %s, file skipped (please report this): %s",
                        self.filename, problem)
            return []
        # flake8 wants a 0-based column; a Location's column is 1-based.
        return [(d.location.row, d.location.column - 1, f"{d.code} {d.message}", type(self)) for d in diagnostics]


def settings_for(filename: str) -> Union["Settings", "ConfigError"]:
    """The settings for a file: the nearest ``[tool.tflint-perf]`` from the file's directory (the
    working directory for stdin), read once per configuration file and process."""
    directory = Path(filename).parent if filename not in ("-", "stdin") else Path(".")
    if not directory.is_dir():  # stdin with a display name that is not a real path
        directory = Path(".")
    absolute = Path(os.path.abspath(directory))
    settings = _settings(_config_for(absolute), Path.cwd())
    if isinstance(settings, Exception):
        return settings
    from tflint_perf.checking.config import with_project_version

    return with_project_version(settings, absolute)  # the TensorFlow the file's project depends on


def with_flake8_selection(settings: "Settings", selectors: Sequence[str]) -> "Settings":
    """``settings`` with the opt-in rules that flake8's own selectors name on purpose turned on (the
    other selectors are flake8's business: it filters what the plugin yields)."""
    from tflint_perf.checking.config import names_opt_in_rules

    named = [selector for selector in selectors if names_opt_in_rules(selector)]
    if not named:
        return settings
    import dataclasses

    return dataclasses.replace(settings, extend_select=list(settings.extend_select) + named)


@lru_cache(maxsize=None)
def _config_for(directory: Path) -> Optional[Path]:
    from tflint_perf.checking.config import find_config

    return find_config(directory)


@lru_cache(maxsize=None)
def _settings(config: Optional[Path], cwd: Path) -> Union["Settings", "ConfigError"]:
    from tflint_perf.checking.config import ConfigError, load_config

    try:
        return load_config(config, root=cwd)
    except ConfigError as problem:
        return problem
