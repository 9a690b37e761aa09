"""Whether anything uses the value a call computes.

A value bound to a name or an attribute that nothing reads is dead: in a TensorFlow 1 graph the op
it names is never run (``sess.run`` fetches only what it is asked for, and nothing asks), and in
eager code the work is thrown away. A rule that reports the cost of computing a value (TFP202's
per-element ``tf.cond``) has nothing to report there: the fix is to delete the line, not to speed it up.

``result_unused(model, call)`` answers for a call that is the whole value of an assignment:

- ``x = call(...)`` in a function: no other mention of ``x`` in that function (nested functions and
  lambdas included), no ``global``/``nonlocal`` and no ``locals()`` there;
- ``self.x = call(...)`` in a method of class ``C``: no read of an attribute ``x`` (through any
  receiver) in ``C``'s module and, for each first-party base class ``B`` of ``C`` (a project session),
  in ``B``'s module, except in ``B``'s methods that ``C`` overrides without calling ``super()`` (they
  never run on a ``C``); no ``.x`` in the text of any module importing ``C`` or ``B`` (parsed or not);
  no string ``"x"`` that ``getattr`` could spell in any of those modules.

Anything else (module-level names, which another module may import; a tuple target; a value
returned, passed on or stored in a container) counts as used: when unsure, a value is used.
"""

from __future__ import annotations

import re
from typing import Iterable, List, Optional, Set

import libcst as cst

from tflint_perf.analysis.classes import mro
from tflint_perf.analysis.effects import nodes_within
from tflint_perf.analysis.model import ClassInfo, FunctionInfo, ModuleModel


def result_unused(model: ModuleModel, call: cst.Call) -> bool:
    """Nothing reads the value ``call`` computes (see the module's docstring)."""
    site = model.site_of(call)
    if site is None or site.statement is None or site.function is None:
        return False
    assign = next((s for s in site.statement.body if isinstance(s, cst.Assign) and s.value is call), None)
    if assign is None or len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    if isinstance(target, cst.Name):
        return _local_unread(site.function, target.value)
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
        cls = site.function.owner if site.function.binds_self else None
        return cls is not None and _attribute_unread(model, cls, target.attr.value)
    return False


def _local_unread(function: FunctionInfo, name: str) -> bool:
    node = function.node
    if function.declares_global or nodes_within(node.body, cst.Global) or nodes_within(node.body, cst.Nonlocal):
        return False
    mentions = [n for n in nodes_within(node.body, cst.Name) if n.value in (name, "locals", "vars")]
    targets = _target_ids(node.body)
    return all(id(n) in targets for n in mentions)


def _attribute_unread(model: ModuleModel, cls: ClassInfo, attr: str) -> bool:
    if _reads(model.module, attr, skipped=()):
        return False
    session = model.session
    if session is not None and _mentioned(session.importer_texts(model, [cls.name]), attr):
        return False
    for base in mro(model, cls)[1:]:
        owner = base.model
        if owner is None or owner is model:
            continue
        skipped = [method.node for name, method in base.methods.items()
                   if name in cls.methods and not _calls_super(cls.methods[name])]
        if _reads(owner.module, attr, skipped):
            return False
        # The subclass's own module was read above, as a tree: its text is not read again.
        importers = session.importer_texts(owner, [base.name], excluding=model.path) if session is not None else []
        if _mentioned(importers, attr):
            return False
    return True


def _mentioned(texts: List[str], attr: str) -> bool:
    """Any of the texts spells ``.attr`` or the string ``attr``: read, or may be (the importers, read as
    text: a module without TensorFlow in it is not parsed, and reads what it imports all the same)."""
    pattern = re.compile(rf"\.\s*{re.escape(attr)}\b|['\"]{re.escape(attr)}['\"]")
    return any(pattern.search(text) for text in texts)


def _reads(tree: cst.CSTNode, attr: str, skipped: Iterable[cst.CSTNode]) -> bool:
    """``tree`` reads an attribute ``attr`` (or spells it as a string) outside the ``skipped`` nodes."""
    hidden: Set[int] = set()
    for node in skipped:
        hidden.update(id(n) for n in nodes_within(node, cst.Attribute))
        hidden.update(id(n) for n in nodes_within(node, cst.SimpleString))
    targets = _target_ids(tree)
    for node in nodes_within(tree, cst.Attribute):
        if node.attr.value == attr and id(node) not in targets and id(node) not in hidden:
            return True
    spelled = (f'"{attr}"', f"'{attr}'")
    return any(s.value in spelled and id(s) not in hidden for s in nodes_within(tree, cst.SimpleString))


def _target_ids(tree: cst.CSTNode) -> Set[int]:
    """The nodes that ``=`` assigns to (``x`` and ``self.x`` in ``x = self.x = v``; not ``+=``, which reads)."""
    found: Set[int] = set()
    for assign in nodes_within(tree, cst.Assign):
        for target in assign.targets:
            found.update(id(n) for n in _bound_nodes(target.target))
    for assign in nodes_within(tree, cst.AnnAssign):
        if assign.value is not None:
            found.update(id(n) for n in _bound_nodes(assign.target))
    return found


def _bound_nodes(target: cst.BaseExpression) -> List[cst.CSTNode]:
    if isinstance(target, (cst.Name, cst.Attribute)):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in _bound_nodes(element.value)]
    return []


def _calls_super(function: Optional[FunctionInfo]) -> bool:
    if function is None:
        return True
    return any(isinstance(c.func, cst.Attribute) and isinstance(c.func.value, cst.Call)
               and isinstance(c.func.value.func, cst.Name) and c.func.value.func.value == "super"
               for c in nodes_within(function.node, cst.Call))
