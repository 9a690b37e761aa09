"""Hover on a finding: the rule's "Why is this bad?" (where its measured speedup is stated) and the
link to its page, read from the rule class itself (``rules/base.py``), as the generated docs are."""

from __future__ import annotations

from typing import List, Optional

from lsprotocol import types

from tflint_perf.faces.output import DOCS_URL
from tflint_perf.faces.server.convert import Page
from tflint_perf.text.diagnostics import Diagnostic


def hover_text(diagnostics: List[Diagnostic], page: Page, position: types.Position) -> Optional[types.Hover]:
    from tflint_perf.rules import rules_by_code

    rules = rules_by_code()
    parts = []
    for diagnostic in diagnostics:
        start, end = page.at_location(diagnostic.location), page.at_location(diagnostic.end_location)
        if not (start.line, start.character) <= (position.line, position.character) <= (end.line, end.character):
            continue
        rule = rules.get(diagnostic.code)
        if rule is None:
            continue
        parts.append("\n\n".join([
            f"**{rule.code} {rule.name}**: {diagnostic.message}",
            "**Why is this bad?** " + rule.why_bad.strip(),
            f"[{rule.code} documentation]({DOCS_URL.format(code=rule.code)})",
        ]))
    if not parts:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)))
