"""What a rule is: identity, message, documentation, examples that are tests, and a check."""

from __future__ import annotations

import dataclasses
from functools import cached_property
from dataclasses import dataclass
from typing import Any, ClassVar, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.files import is_test_module
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.project import versions
from tflint_perf.text.diagnostics import Finding, FixPlan


@dataclass(frozen=True)
class Valid:
    """Code on which the rule must stay silent (with ``target-version`` set to ``target_version``)."""

    code: str
    target_version: Optional[Tuple[int, int]] = None


@dataclass(frozen=True)
class Invalid:
    """Code on which the rule must fire; ``fixed`` is the exact text after ``--fix``
    (with ``--unsafe-fixes`` when ``unsafe`` is set), or None when no fix is expected.
    ``target_version`` runs the example with that ``target-version`` setting (default: none known)."""

    code: str
    count: int = 1
    fixed: Optional[str] = None
    unsafe: bool = False
    target_version: Optional[Tuple[int, int]] = None


@dataclass(frozen=True)
class Option:
    """A setting a rule reads, documented on the rule's page as the TOML the user writes."""

    key: str  # the key in [tool.tflint-perf]
    default: Any
    help: str
    toml_type: str = ""  # for the docs; derived from ``default`` when empty
    default_text: str = ""  # for the docs, when ``default`` (e.g. None) does not say it
    example: Any = None  # the value shown in the TOML snippet; ``default`` when None
    flag: str = ""  # the command-line flag that sets it too, if any

    def toml_type_name(self) -> str:
        if self.toml_type:
            return self.toml_type
        return {bool: "boolean", int: "integer", float: "float", str: "string", list: "list of strings"}.get(
            type(self.default), type(self.default).__name__
        )

    def docs_markdown(self) -> List[str]:
        example = self.example if self.example is not None else self.default
        default = self.default_text or f"`{_toml(self.default)}`"
        lines = [f"### `{self.key}`", "", "```toml", "[tool.tflint-perf]", f"{self.key} = {_toml(example)}", "```", "",
                 f"- Type: {self.toml_type_name()}", f"- Default: {default}"]
        if self.flag:
            lines.append(f"- Command line: `{self.flag}`")
        return lines + ["", " ".join(self.help.split()), ""]


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return repr(value)


# The TensorFlow version the checked code runs on; a setting of the whole run (config.py validates it
# and infers it from the project's dependency files), declared by the rules whose findings depend on it.
TARGET_VERSION = Option(
    "target-version",
    None,
    f"The TensorFlow version the code runs on (a released version, `\"{versions.OLDEST}\"` to `\"{versions.NEWEST}\"`; "
    "an unknown one is a configuration error). When unset, it is inferred from the lower bound of the TensorFlow requirement in the "
    "project's dependency files (`pyproject.toml`, `setup.cfg`, `setup.py`, `requirements*.txt`, `environment.yml`, Dockerfiles' `pip install` and `FROM tensorflow/tensorflow:X`), "
    "and for a notebook from its own cells: a pinned `!pip install tensorflow==...` first, the saved output of "
    "`tf.__version__` where no dependency file declares TensorFlow. An inferred or unknown version below what a module's own Keras calls "
    "require is raised to it for that module (`tf.keras.optimizers.legacy` exists from 2.9, `tf.keras.optimizers.AdamW` from 2.12), "
    "unless a version check guards the call; a configured version is never changed. "
    "`tflint-perf check --show-settings PATH` shows the project's version and where it came from.",
    toml_type="string",
    default_text="none: inferred from the project's dependency files (or a notebook's own cells); when nothing declares it, findings say which versions they hold for",
    example="2.15",
    flag="--target-version 2.15",
)


def target_version_option(effect: str) -> Option:
    """``target-version`` as a rule declares it: with what the version changes in this rule."""
    return dataclasses.replace(TARGET_VERSION, help=f"{TARGET_VERSION.help} In this rule: {effect}")


class RuleContext:
    """What a rule can ask about the file it is checking."""

    def __init__(self, model: AnalysedModule, settings: Any, filename: str) -> None:
        # ``settings``: the checking layer's ``Settings`` (read here through ``option``).
        self.model = model
        self.settings = settings
        self.filename = filename

    def option(self, key: str) -> Any:
        return self.settings.option(key)

    @cached_property
    def is_test_code(self) -> bool:
        """The file is test code, where no rule reports (``analysis/files.py``: a ``tests/`` folder,
        ``conftest.py``, or a module named like a test that holds one); asked once per file."""
        return is_test_module(self.filename, self.model.module)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case; reads well as "ignore <name>"
    summary: ClassVar[str]  # one line for tables and SARIF
    fix_availability: ClassVar[str] = "none"  # "always" | "sometimes" | "none"
    # On by default: in the rule set when nothing selects rules. A rule off by default (opt-in: advice
    # that is not about speed, or a trade-off) runs only when a selector names it on purpose
    # (checking/config.py: its code, its name, or a prefix of opt-in rules alone such as ``TFP4``).
    default_enabled: ClassVar[bool] = True
    # The narrowest selector that turns an opt-in rule on with its group (``TFP4``); its code when empty.
    opt_in_group: ClassVar[str] = ""
    options: ClassVar[Tuple[Option, ...]] = ()
    # What the code a finding is about must be for (analysis/purpose.py): training by default, where
    # speed matters; a rule that also fires on evaluation or inference says so in its message.
    purposes: ClassVar[FrozenSet[Purpose]] = frozenset({Purpose.TRAINING})
    # A file that cannot be read or parsed (TFP001, TFP002): reported by the checker, not by a check
    # on a tree; its examples are whole files, run through ``checker.process_bytes``.
    input_error: ClassVar[bool] = False

    # Documentation, in Markdown, one field per section.
    what_it_does: ClassVar[str]
    why_bad: ClassVar[str]
    example: ClassVar[str]
    use_instead: ClassVar[str]
    fix_safety: ClassVar[str]
    known_problems: ClassVar[str] = ""
    references: ClassVar[Sequence[str]] = ()

    valid: ClassVar[Sequence[Valid]] = ()
    invalid: ClassVar[Sequence[Invalid]] = ()

    def check(self, context: RuleContext) -> Iterable[Finding]:
        if self.input_error:
            return ()
        raise NotImplementedError

    def finding(
        self,
        message: str,
        start: cst.CSTNode,
        end: Optional[cst.CSTNode] = None,
        fix: Optional[FixPlan] = None,
    ) -> Finding:
        return Finding(self.code, self.name, message, start, end if end is not None else start, fix)

    @classmethod
    def opt_in_note(cls) -> str:
        """How a rule off by default is turned on (its page and ``tflint-perf rule`` say it first)."""
        selectors = [cls.code] + ([cls.opt_in_group] if cls.opt_in_group else [])
        spelled = " or ".join(f'`extend-select = ["{selector}"]`' for selector in reversed(selectors))
        return (f"Off by default (opt-in): turn it on with {spelled} in `[tool.tflint-perf]`, or "
                f"`--extend-select {selectors[-1]}`; `select = [\"TFP\"]` and `ALL` leave it off.")

    @classmethod
    def docs_markdown(cls) -> str:
        availability = {
            "always": "Fix is always available.",
            "sometimes": "Fix is sometimes available.",
            "none": "",
        }[cls.fix_availability]
        parts = [f"# {cls.name} ({cls.code})", ""]
        if availability:
            parts += [availability, ""]
        if not cls.default_enabled:
            parts += [cls.opt_in_note(), ""]
        parts += ["## What it does", cls.what_it_does.strip(), "", "## Why is this bad?", cls.why_bad.strip(), ""]
        if cls.known_problems:
            parts += ["## Known problems", cls.known_problems.strip(), ""]
        parts += ["## Example", "```python", cls.example.strip(), "```", "", "Use instead:", "```python",
                  cls.use_instead.strip(), "```", ""]
        if cls.options:
            parts += ["## Options", "", "Set in `pyproject.toml`:", ""]
            for option in cls.options:
                parts += option.docs_markdown()
        parts += ["## Fix safety", cls.fix_safety.strip(), ""]
        if cls.references:
            parts += ["## References"] + [f"- {ref}" for ref in cls.references] + [""]
        return "\n".join(parts)


def call_method_span(call: cst.Call) -> cst.CSTNode:
    """Where a method call is reported: from the method's name (``map`` in ``ds.map(f)``)."""
    return call.func.attr if isinstance(call.func, cst.Attribute) else call


def options_of(rules: Iterable[type]) -> Dict[str, Option]:
    """The per-rule options (``target-version`` is a setting of the whole run, read by config.py)."""
    return {
        option.key: option
        for rule in rules
        for option in rule.options  # type: ignore[attr-defined]
        if option.key != TARGET_VERSION.key
    }
