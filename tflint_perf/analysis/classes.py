"""What a class has through its first-party bases: its method resolution order, methods and ``self`` attributes.

``ClassInfo`` records what a class body defines itself; a subclass that inherits ``act`` from its
agent base (``class DDQNAgent(DQNAgent)``), reads ``self.q_model`` that the base's ``__init__``
assigned, or has its ``predict`` called by a base's decoding loop in another module (bert4keras'
``AutoRegressiveDecoder``), needs its bases too. ``mro`` is the one answer to "which classes, in
which order": Python's C3 linearisation over the bases this project defines (this module's, and in a
project session other first-party modules'; ``local_only`` keeps to this module's). A base from
elsewhere (``keras.Model``, ``object``) adds nothing, so a name found nowhere stays unknown.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from tflint_perf.analysis.model import ClassInfo, FunctionInfo, ModuleModel

_MAX_DEPTH = 6


def direct_bases(model: ModuleModel, cls: ClassInfo, local_only: bool = False) -> List[ClassInfo]:
    """The first-party classes ``cls`` names as its bases, in the order written: resolved in the
    module that defines ``cls`` (a same-module class, else in a project session an imported one)."""
    owner = cls.model or model
    found: List[ClassInfo] = []
    for base in cls.node.bases:
        parent: object = None
        if isinstance(base.value, cst.Name) and base.value.value in owner.classes:
            parent = owner.classes[base.value.value]
        if parent is cls and not local_only and owner.session is not None:
            # `class Model(Model)`: the base is the name as bound before this statement (an import)
            parent = owner.foreign(base.value, before=cls.place)
        elif parent is None and not local_only and owner.session is not None:
            parent = owner.foreign(base.value)
        if isinstance(parent, ClassInfo) and parent is not cls and not any(parent is f for f in found):
            found.append(parent)
    return found


def mro(model: ModuleModel, cls: ClassInfo, local_only: bool = False) -> List[ClassInfo]:
    """``cls``, then its first-party bases in Python's method resolution order (C3); where C3 has no
    answer (an inconsistent hierarchy Python itself would refuse), depth first, each class once."""
    memo: Dict[int, List[ClassInfo]] = {}

    def linearise(current: ClassInfo, depth: int, active: frozenset) -> List[ClassInfo]:
        if id(current) in memo:
            return memo[id(current)]
        if depth >= _MAX_DEPTH or id(current) in active:
            return [current]  # a cycle or a very deep hierarchy: no further
        bases = [base for base in direct_bases(model, current, local_only) if id(base) not in active]
        inner = active | {id(current)}
        heads = [linearise(base, depth + 1, inner) for base in bases]
        merged = _merge([list(head) for head in heads] + [list(bases)])
        if merged is None:
            merged = []
            for head in heads:
                merged += [c for c in head if not any(c is m for m in merged)]
        memo[id(current)] = result = [current] + [c for c in merged if c is not current]
        return result

    return linearise(cls, 0, frozenset())


def _merge(sequences: List[List[ClassInfo]]) -> Optional[List[ClassInfo]]:
    """C3's merge: repeatedly take the first head that is in no other sequence's tail."""
    result: List[ClassInfo] = []
    sequences = [seq for seq in sequences if seq]
    while sequences:
        for seq in sequences:
            head = seq[0]
            if not any(head is c for other in sequences for c in other[1:]):
                break
        else:
            return None
        result.append(head)
        sequences = [[c for c in seq if c is not head] for seq in sequences]
        sequences = [seq for seq in sequences if seq]
    return result


def method_of(model: ModuleModel, cls: ClassInfo, name: str, local_only: bool = False) -> Optional[FunctionInfo]:
    """The method ``name`` that an instance of ``cls`` calls: its own, or that of the first class in
    its method resolution order that defines it."""
    for current in mro(model, cls, local_only):
        if name in current.methods:
            return current.methods[name]
    return None


def attribute_values(model: ModuleModel, cls: ClassInfo, attr: str) -> List[cst.BaseExpression]:
    """Every ``self.<attr> = value`` that an instance of ``cls`` may hold: in its own methods and its
    same-module bases' (values the caller reads in this module's terms)."""
    found: List[cst.BaseExpression] = []
    for current in mro(model, cls, local_only=True):
        found += current.attributes.get(attr, [])
    return found
