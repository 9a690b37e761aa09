"""What a class of this file has through its same-file bases: methods and ``self`` attributes.

``ClassInfo`` records what a class body defines itself; a subclass that inherits ``act`` from its
agent base (``class DDQNAgent(DQNAgent)``), or reads ``self.q_model`` that the base's ``__init__``
assigned, needs its bases too. Only same-file bases are followed (depth first, left to right, the
order Python's MRO gives for single and simple multiple inheritance); a base from elsewhere adds
nothing, so a name found nowhere stays unknown.
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Set

import libcst as cst

from tflint_perf.analysis.model import ClassInfo, FunctionInfo, ModuleModel

_MAX_DEPTH = 6


def lineage(model: ModuleModel, cls: ClassInfo) -> Iterator[ClassInfo]:
    """``cls``, then its same-file bases, depth first, each once."""
    seen: Set[int] = set()

    def walk(current: ClassInfo, depth: int) -> Iterator[ClassInfo]:
        if id(current) in seen or depth > _MAX_DEPTH:
            return
        seen.add(id(current))
        yield current
        for base in current.node.bases:
            parent = model.classes.get(base.value.value) if isinstance(base.value, cst.Name) else None
            if parent is not None:
                yield from walk(parent, depth + 1)

    yield from walk(cls, 0)


def method_of(model: ModuleModel, cls: ClassInfo, name: str) -> Optional[FunctionInfo]:
    """The method ``name`` that an instance of ``cls`` calls: its own, or the first base's that defines it."""
    for current in lineage(model, cls):
        if name in current.methods:
            return current.methods[name]
    return None


def attribute_values(model: ModuleModel, cls: ClassInfo, attr: str) -> List[cst.BaseExpression]:
    """Every ``self.<attr> = value`` that an instance of ``cls`` may hold: in its own methods and its bases'."""
    found: List[cst.BaseExpression] = []
    for current in lineage(model, cls):
        found += current.attributes.get(attr, [])
    return found
