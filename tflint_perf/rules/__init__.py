"""The rule registry. A rule is registered by existing: every ``tfpNNN_*.py`` module here is loaded."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import Dict, List, Type

from tflint_perf.rules.base import Rule


@lru_cache(maxsize=None)
def all_rules() -> List[Type[Rule]]:
    rules: List[Type[Rule]] = []
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not module_info.name.startswith("tfp"):
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.__module__ == module.__name__:
                rules.append(value)
    return sorted(rules, key=lambda rule: rule.code)


def rules_by_code() -> Dict[str, Type[Rule]]:
    return {rule.code: rule for rule in all_rules()}


def find_rule(code_or_name: str) -> Type[Rule]:
    for rule in all_rules():
        if code_or_name.upper() == rule.code or code_or_name == rule.name:
            return rule
    raise KeyError(code_or_name)
