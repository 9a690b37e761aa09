"""Every rule's inline examples, run through the real engine and fixer."""

from __future__ import annotations

import pytest

from pathlib import Path

from tests.conftest import fix, lint
from tflint_perf.checking.checker import Mode, process_bytes
from tflint_perf.checking.config import Settings
from tflint_perf.text.parsing import parse
from tflint_perf.rules import all_rules, find_rule


def input_errors(source: str, code: str):
    """An input-error rule's example as a whole file, through the checker (fixing, to show nothing changes)."""
    result = process_bytes(source.encode("utf-8"), "example.py", Path("example.py"), Settings(select=[code]),
                           Mode(fix=True, unsafe=True), explicit=True)
    assert result.fixed_text is None and not result.errors and not result.internal_errors
    return [d.code for d in result.diagnostics]

VALID = [(rule.code, i, example) for rule in all_rules() for i, example in enumerate(rule.valid)]
INVALID = [(rule.code, i, example) for rule in all_rules() for i, example in enumerate(rule.invalid)]


@pytest.mark.parametrize("code,index,example", VALID, ids=[f"{c}-valid-{i}" for c, i, _ in VALID])
def test_valid_examples_are_silent(code, index, example):
    if find_rule(code).input_error:
        assert input_errors(example.code, code) == []
        return
    settings = Settings(target_version=example.target_version)
    assert [d for d in lint(example.code, [code], settings=settings)] == []


@pytest.mark.parametrize("code,index,example", INVALID, ids=[f"{c}-invalid-{i}" for c, i, _ in INVALID])
def test_invalid_examples_fire_and_fix_exactly(code, index, example):
    if find_rule(code).input_error:
        assert input_errors(example.code, code) == [code] * example.count
        assert example.fixed is None
        return
    settings = Settings(target_version=example.target_version)
    diagnostics = lint(example.code, [code], settings=settings)
    assert [d.code for d in diagnostics] == [code] * example.count
    fixed = fix(example.code, [code], unsafe=example.unsafe, settings=settings)
    if example.fixed is None:
        assert fixed == example.code, "a fix was applied where none is expected"
        return
    assert fixed == example.fixed
    parse(fixed)
    assert fix(fixed, [code], unsafe=example.unsafe, settings=settings) == fixed, "a second --fix changed the file"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_is_documented_and_exemplified(rule):
    assert rule.code.startswith("TFP") and len(rule.code) == 6
    assert rule.name == rule.name.lower() and " " not in rule.name
    assert rule.valid and rule.invalid
    docs = rule.docs_markdown()
    for section in ("## What it does", "## Why is this bad?", "## Example", "Use instead:", "## Fix safety"):
        assert section in docs
