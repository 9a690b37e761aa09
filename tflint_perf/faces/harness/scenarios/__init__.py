"""The benchmark scenarios: one module per rule (``tfpNNN.py``), each defining ``SCENARIO``.

A scenario is a small runnable program: the rule's bad example made runnable on synthetic data.
Its ``before`` source is what the user wrote; its ``after`` is what the rule's codemod produces
from it, derived by running the real fixer when the rule exists (``runner.derive_after``). The
hand-written ``after`` here is used only while a rule has no module yet, and as the documented
"use instead" code for rules that have no fix.

Two kinds of program, each a module the harness loads in its own process:

``pipeline``
    defines ``make_dataset()`` (returns the ``tf.data.Dataset``), ``train_step(batch)`` (the
    simulated accelerator step) and ``train()`` (the training loop, written as a user writes it:
    the linter must see the pipeline consumed for training). The harness times ``train()``; to
    observe it, it wraps ``make_dataset`` (to switch graph rewrites off) and ``train_step`` (to
    record every batch). An ``EPOCHS`` constant splits the recording into epochs; an optional
    ``observations()`` returns facts the equivalence check needs (side effects, for instance).
``program``
    defines ``run()``, which does the work and returns its result (NumPy values), and optionally
    ``probe()``, called once after timing (gradients on a probe input, a model's shape).

Sizes are module-level constants (``RECORDS = 200``); ``quick`` gives smaller values for tests
and CI smoke runs, substituted in the text before the program runs, so the report always shows
the sizes that ran.

Nothing here imports TensorFlow: the sources are text until a worker process runs them.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Dict, List, Mapping, Sequence, Tuple, Union

# TensorFlow's default tf.data graph rewrites that can hide a rule's effect at runtime.
REWRITES = ("inject_prefetch", "map_parallelization")


@dataclass(frozen=True)
class Scenario:
    code: str  # the rule's code, e.g. "TFP101"
    name: str  # the rule's kebab-case name (taken from the rule module when it exists)
    kind: str  # "pipeline" | "program"
    title: str  # one line: what the program does
    before: str  # the rule's bad example, runnable
    after: str  # the expected codemod output, or the documented "use instead" code when the rule has no fix
    fix_safety: str  # "safe" | "unsafe" | "none": what the rule's fix is (documented) for this code
    equivalence: str  # a check in harness/equivalence.py
    meaning: str  # one line for docs/benchmarks.md: what the numbers mean
    rewrites: Tuple[str, ...] = ()  # graph rewrites that can hide the effect: also measured switched off
    quick: Mapping[str, object] = field(default_factory=dict)  # constant -> smaller value for tests
    needs_gpu: bool = False
    notes: str = ""  # design choices a reader of the numbers should know


@lru_cache(maxsize=None)
def all_scenarios() -> List[Scenario]:
    scenarios = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("tfp"):
            scenarios.append(importlib.import_module(f"{__name__}.{info.name}").SCENARIO)
    return sorted(scenarios, key=lambda s: s.code)


def edit(text: str, old: str, new: str) -> str:
    """``text`` with the one occurrence of ``old`` replaced: a scenario's after written as a change."""
    if text.count(old) != 1:
        raise ValueError(f"expected exactly one {old!r} in the scenario source")
    return text.replace(old, new)


def rule_scenario(code: str, name: str, title: str, before: str, after: Union[str, Sequence[Tuple[str, str]]],
                  **details) -> Scenario:
    """A scenario module's ``SCENARIO``, with what each of them would repeat worked out once: the kind
    (a ``pipeline`` defines ``make_dataset()``; anything else is a ``program``) and the after, given
    as the (old, new) edits that turn ``before`` into it (see ``edit``) or as a whole text.
    ``details`` are the other ``Scenario`` fields (``fix_safety``, ``equivalence``, ``meaning``, ...)."""
    if not isinstance(after, str):
        edited = before
        for old, new in after:
            edited = edit(edited, old, new)
        after = edited
    kind = "pipeline" if "\ndef make_dataset(" in before else "program"
    return Scenario(code=code, name=name, kind=kind, title=title, before=before, after=after, **details)


def scenarios_by_code() -> Dict[str, Scenario]:
    return {scenario.code: scenario for scenario in all_scenarios()}


def select(codes) -> List[Scenario]:
    """Scenarios for codes or prefixes (``TFP1`` selects TFP101-TFP104); all when none are given."""
    if not codes:
        return all_scenarios()
    chosen = []
    for selector in codes:
        matching = [s for s in all_scenarios() if s.code.startswith(selector.upper()) or s.name == selector]
        if not matching:
            raise KeyError(selector)
        chosen.extend(s for s in matching if s not in chosen)
    return sorted(chosen, key=lambda s: s.code)
