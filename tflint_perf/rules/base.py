"""What a rule is: identity, message, documentation, examples that are tests, and a check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Dict, FrozenSet, Iterable, Optional, Sequence, Tuple

import libcst as cst

from tflint_perf.analysis.purpose import Purpose
from tflint_perf.diagnostics import Finding, FixPlan

if TYPE_CHECKING:
    from tflint_perf.analysis.module import ModuleModel
    from tflint_perf.config import Settings


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
    key: str  # the key in [tool.tflint-perf]
    default: Any
    help: str


class RuleContext:
    """What a rule can ask about the file it is checking."""

    def __init__(self, model: "ModuleModel", settings: "Settings", filename: str) -> None:
        self.model = model
        self.settings = settings
        self.filename = filename

    def option(self, key: str) -> Any:
        return self.settings.option(key)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case; reads well as "ignore <name>"
    summary: ClassVar[str]  # one line for tables and SARIF
    fix_availability: ClassVar[str] = "none"  # "always" | "sometimes" | "none"
    default_enabled: ClassVar[bool] = True
    options: ClassVar[Tuple[Option, ...]] = ()
    # What the code a finding is about must be for (analysis/purpose.py): training by default, where
    # speed matters; a rule that also fires on evaluation or inference says so in its message.
    purposes: ClassVar[FrozenSet[Purpose]] = frozenset({Purpose.TRAINING})

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
    def docs_markdown(cls) -> str:
        availability = {
            "always": "Fix is always available.",
            "sometimes": "Fix is sometimes available.",
            "none": "",
        }[cls.fix_availability]
        parts = [f"# {cls.name} ({cls.code})", ""]
        if availability:
            parts += [availability, ""]
        parts += ["## What it does", cls.what_it_does.strip(), "", "## Why is this bad?", cls.why_bad.strip(), ""]
        if cls.known_problems:
            parts += ["## Known problems", cls.known_problems.strip(), ""]
        parts += ["## Example", "```python", cls.example.strip(), "```", "", "Use instead:", "```python",
                  cls.use_instead.strip(), "```", ""]
        if cls.options:
            parts += ["## Options"]
            parts += [f"- `{opt.key}` (default `{opt.default!r}`): {opt.help}" for opt in cls.options]
            parts += [""]
        parts += ["## Fix safety", cls.fix_safety.strip(), ""]
        if cls.references:
            parts += ["## References"] + [f"- {ref}" for ref in cls.references] + [""]
        return "\n".join(parts)


def call_method_span(call: cst.Call) -> cst.CSTNode:
    """Where a method call is reported: from the method's name (``map`` in ``ds.map(f)``)."""
    return call.func.attr if isinstance(call.func, cst.Attribute) else call


def options_of(rules: Iterable[type]) -> Dict[str, Option]:
    return {option.key: option for rule in rules for option in rule.options}  # type: ignore[attr-defined]
