"""Generate ``docs/rules/`` from the rules themselves: ``python -m tflint_perf.faces.docs [DIR]``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict

from tflint_perf.rules import all_rules

_FIX = {"always": "always", "sometimes": "sometimes", "none": "none"}


def rule_pages() -> Dict[str, str]:
    """File name → content for every page under docs/rules/."""
    pages = {f"{rule.code}.md": rule.docs_markdown() for rule in all_rules()}
    rows = [
        "# Rules",
        "",
        "Generated from `tflint_perf/rules/` by `python -m tflint_perf.faces.docs`; do not edit by hand.",
        "",
        "| code | name | summary | fix | default |",
        "|---|---|---|---|---|",
    ]
    for rule in all_rules():
        rows.append(
            f"| [{rule.code}]({rule.code}.md) | `{rule.name}` | {rule.summary} | {_FIX[rule.fix_availability]} "
            f"| {'on' if rule.default_enabled else 'off (opt-in: `' + (rule.opt_in_group or rule.code) + '`)'} |"
        )
    pages["README.md"] = "\n".join(rows) + "\n"
    return pages


def write(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("TFP*.md"):
        stale.unlink()
    for name, content in rule_pages().items():
        (directory / name).write_text(content, encoding="utf-8")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "docs" / "rules")
