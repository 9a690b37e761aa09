"""Calls between functions: who calls whom, and which loops a function is reached from.

Built once from the collector's call records: a call whose callee resolves (``f(...)``, a nested
``def``, ``self.method(...)``, ``obj.method(...)`` or ``self.attr.method(...)`` of an object built from a
class of this file (``self.model.action_value(obs)`` with the agent constructed on ``Policy()``; an element
of a list filled only with such objects, ``for m in models: m.train(xb, yb)``),
``functools.partial(f, ...)(...)``) to a function of this file is an edge. Calls the analysis cannot resolve are not edges, so "reached from a loop" is never guessed.
In a project session, ``callees`` also follows calls into other first-party modules, and
``loops_reaching`` also counts the loops of the modules importing this one (a
``partial_fit`` method whose per-batch loop is in the runner) and of base classes in other modules
whose methods call ``self.m(...)`` that a class here overrides (a library's decoding loop).
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

import libcst as cst

from tflint_perf.analysis.classes import method_of, mro
from tflint_perf.analysis.model import Binding, CallSite, FunctionInfo, LoopNode, ModuleModel

Callable = Union[FunctionInfo, cst.Lambda]
_MAX_DEPTH = 4


class CallGraph:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._callers: Dict[FunctionInfo, List[CallSite]] = {}
        self._callee: Dict[cst.Call, Optional[FunctionInfo]] = {}
        resolve = model.effects.resolve_callable
        for site in model.calls:
            target = resolve(site.node.func, site.function, local_only=True, place=site.place)
            if isinstance(target, FunctionInfo):
                self._callee[site.node] = target
                self._callers.setdefault(target, []).append(site)
                for override in self._overrides(site, target):
                    self._callers.setdefault(override, []).append(site)
        self._loops_memo: Dict[FunctionInfo, FrozenSet[LoopNode]] = {}
        self._globals_memo: Dict[Tuple[str, FunctionInfo], List[Binding]] = {}
        self._value_names: Optional[Set[str]] = None

    def _overrides(self, site: CallSite, target: FunctionInfo) -> List[FunctionInfo]:
        """``self.m(...)`` in a method of class A also calls the ``m`` of each same-file subclass of A that
        overrides it, on an instance of that subclass (DDQN's ``get_target_q_value`` called from the DQN
        base's ``replay`` loop)."""
        owner = site.function.owner if site.function is not None else None
        func = site.node.func
        if owner is None or not _self_call(site) or not isinstance(func, cst.Attribute):
            return []
        found: List[FunctionInfo] = []
        for cls in self.model.classes.values():
            if cls is owner or not any(base is owner for base in mro(self.model, cls, local_only=True)):
                continue
            override = method_of(self.model, cls, func.attr.value, local_only=True)
            if override is not None and override is not target and override not in found:
                found.append(override)
        return found

    def callee(self, call: cst.Call) -> Optional[FunctionInfo]:
        """The same-file function a call calls, if the analysis can tell."""
        return self._callee.get(call)

    def callers(self, function: FunctionInfo) -> List[CallSite]:
        return self._callers.get(function, [])

    def named_as_value(self, function: FunctionInfo) -> bool:
        """The function's name appears in this file otherwise than as a call's callee or its own ``def``:
        handed on as a callback (``LambdaCallback(on_epoch_end=show_samples)``, ``map(f, xs)``,
        ``Thread(target=f)``), stored or returned. It may then run any number of times besides its calls.
        Read from names alone (a parameter or attribute spelled alike counts too): the answer errs towards
        "named"."""
        if self._value_names is None:
            visitor = _ValueNames()
            self.model.module.visit(visitor)
            self._value_names = visitor.names
        return function.name in self._value_names

    def callees(self, function: Callable) -> List[FunctionInfo]:
        """Functions called (directly) from a function or lambda body: of this file, and in a project
        session of the other first-party modules it imports."""
        owner = function.model if isinstance(function, FunctionInfo) else None
        if owner is not None and owner is not self.model:
            return owner.call_graph.callees(function)
        found: List[FunctionInfo] = []
        for site in self.model.calls_in(function):
            target = self.callee_at(site)
            if target is not None and target not in found:
                found.append(target)
        return found

    def callee_at(self, site: CallSite) -> Optional[FunctionInfo]:
        """The function a call of this file calls: of this file, or in a project session of another
        first-party module it imports."""
        target = self._callee.get(site.node)
        if target is None and self.model.session is not None:
            resolved = self.model.effects.resolve_callable(site.node.func, site.function, place=site.place)
            target = resolved if isinstance(resolved, FunctionInfo) else None
        return target

    def loops_reaching(self, function: Optional[FunctionInfo]) -> FrozenSet[LoopNode]:
        """The loops, in callers up to a few levels away, from which ``function`` is called."""
        if function is None:
            return frozenset()
        if function not in self._loops_memo:
            self._loops_memo[function] = frozenset(self._collect_loops(function, 0, set()))
        return self._loops_memo[function]

    def _collect_loops(self, function: FunctionInfo, depth: int, seen: Set[FunctionInfo]) -> Set[LoopNode]:
        # ``seen`` is one set for the whole walk, across modules too: guarded recursion between two
        # modules (an override calling back the base's ``greedy``, whose loop calls the override)
        # would otherwise bounce between them for ever. Only complete answers go into the memo.
        if depth > _MAX_DEPTH or function in seen:
            return set()
        seen.add(function)
        loops: Set[LoopNode] = set()
        for site in self.callers(function):
            loops.update(site.loops)
            if site.function is not None:
                loops |= self._collect_loops(site.function, depth + 1, seen)
        for importer, site in self.callers_elsewhere(function) + self.base_callers_elsewhere(function):
            loops.update(site.loops)
            if site.function is None:
                continue
            graph = importer.call_graph
            known = graph._loops_memo.get(site.function)
            loops |= known if known is not None else graph._collect_loops(site.function, 0, seen)
        return loops

    def globals_when_run(self, name: str, function: FunctionInfo) -> List[Binding]:
        """The module-level bindings of ``name`` that ``function`` may read when it runs: those reaching
        each top-level call that leads to it, a few callers away (``score(row)`` in a loop before
        ``model`` is rebound reads the first binding). Where it may also run at a time this file does
        not show (nobody here calls it: a Keras callback, another module's import; a call inside a
        lambda; a chain of callers too long), the bindings current once the top-level code has run
        (``ModuleModel.after_setup``) count too."""
        key = (name, function)
        if key not in self._globals_memo:
            found: List[Binding] = []
            later = [False]
            self._collect_globals(name, function, 0, set(), found, later)
            if later[0]:
                found += [b for b in self.model.after_setup(name) if not any(b is f for f in found)]
            found.sort(key=lambda binding: binding.place.order)
            self._globals_memo[key] = found
        return self._globals_memo[key]

    def _collect_globals(self, name: str, function: FunctionInfo, depth: int, seen: Set[FunctionInfo],
                         found: List[Binding], later: List[bool]) -> None:
        if function in seen:
            return
        seen.add(function)
        sites = self.callers(function)
        if depth > _MAX_DEPTH or not sites or self.callers_elsewhere(function) or self.base_callers_elsewhere(function):
            later[0] = True
        if depth > _MAX_DEPTH:
            return
        for site in sites:
            if site.function is not None:
                self._collect_globals(name, site.function, depth + 1, seen, found, later)
            elif site.lambdas:
                later[0] = True  # a lambda runs whenever it is called
            else:
                for binding in self.model.reaching(name, None, site.place) or []:
                    if not any(binding is f for f in found):
                        found.append(binding)

    def base_callers_elsewhere(self, function: FunctionInfo) -> List[Tuple[ModuleModel, CallSite]]:
        """``self.m(...)`` in the methods of a base class of another first-party module, where ``m`` is
        this module's override (in a project session): bert4keras' ``AutoRegressiveDecoder.beam_search``
        loop calling the ``predict`` an example's decoder subclass defines. Same-file bases are edges
        already (``_overrides``)."""
        owner = function.owner
        if self.model.session is None or owner is None or function.model not in (None, self.model) \
                or method_of(self.model, owner, function.name) is not function:
            return []
        found: List[Tuple[ModuleModel, CallSite]] = []
        for base in mro(self.model, owner)[1:]:
            base_model = base.model
            if base_model is None or base_model is self.model:
                continue
            for site in base_model.calls:
                func = site.node.func
                if site.function is not None and site.function.owner is base and _self_call(site) \
                        and isinstance(func, cst.Attribute) and func.attr.value == function.name:
                    found.append((base_model, site))
        return found

    def callers_elsewhere(self, function: FunctionInfo) -> List[Tuple[ModuleModel, CallSite]]:
        """Calls of ``function`` in the modules importing this one (in a project session)."""
        session = self.model.session
        if session is None or function.model is not self.model:
            return []
        found = []
        owner = function.owner
        if function.parent is not None and owner is None:
            return []
        for importer in session.importers(self.model, [owner.name if owner is not None else function.name]):
            for site in importer.calls:
                func = site.node.func
                name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
                if name == function.name and importer.effects.resolve_callable(func, site.function) is function:
                    found.append((importer, site))
        return found


class _ValueNames(cst.CSTVisitor):
    """Every identifier of a module that is not a call's callee (``f`` in ``f(x)``, ``m`` in ``obj.m(x)``)
    nor the name a ``def`` or ``class`` binds."""

    def __init__(self) -> None:
        self.names: Set[str] = set()
        self._skipped: Set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self._skipped.add(id(func.attr if isinstance(func, cst.Attribute) else func))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._skipped.add(id(node.name))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._skipped.add(id(node.name))

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self._skipped:
            self.names.add(node.value)


def _self_call(site: CallSite) -> bool:
    """``self.m(...)`` in a method that binds ``self``: on an instance of a subclass, its override runs."""
    func = site.node.func
    return site.function is not None and site.function.binds_self and isinstance(func, cst.Attribute) \
        and isinstance(func.value, cst.Name) and func.value.value == "self"
