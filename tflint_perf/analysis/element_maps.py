"""Per-element code: what ``tf.map_fn`` / ``tf.vectorized_map`` run once for every element, through
the helpers they call, and which values there belong to the element.

A function mapped over a tensor (a lambda, a local ``def``, a function of another module) runs once
per element, and so do the functions it calls with the element, a few calls deep: clamping each
box, scoring each anchor, padding each token. ``ElementMaps`` follows those calls through the call
graph (``CallGraph.callee_at``, other first-party modules included) and records, for each function
reached, the map that reaches it and its *element values*: the parameters bound, at the call that
reaches it, to expressions that read element values, and the locals computed from them. A value
the mapped function closes over (a training flag, the image's height) is the same for every
element, so a choice on it is not a per-element choice.

In a project session a module also takes what its importers' maps reach among its functions: a
``_clip_box`` in ``box_utils.py`` mapped from ``augment.py`` is per-element code in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

import libcst as cst

from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.hotpaths import ELEMENT_MAPS, parameter_names
from tflint_perf.analysis.loops import names_read
from tflint_perf.analysis.model import CallSite, FunctionInfo, ModuleModel, module_name

Callable = Union[FunctionInfo, cst.Lambda]
_MAX_DEPTH = 4  # calls followed from the mapped function: "two or three calls deep" and one more
_TAINTING = ("assign", "unpack", "augassign", "for")


@dataclass(frozen=True)
class ElementReach:
    """How per-element code is reached: the map, the function it reaches, and that function's
    element values."""

    map_call: cst.Call
    map_model: ModuleModel  # the module holding the map call
    map_name: str  # "tf.map_fn" / "tf.vectorized_map"
    map_caller: Optional[FunctionInfo]  # the function the map call sits in (None: module level)
    function: Callable
    elements: FrozenSet[str]  # the function's names holding the element or values computed from it
    depth: int  # calls from the mapped function (0: the mapped function itself)

    def describe(self, here: ModuleModel) -> str:
        """How a message names the map: "the `tf.map_fn` in `clip_boxes`" (and its module when
        another one holds it)."""
        where = f" in `{self.map_caller.name}`" if self.map_caller is not None else ""
        elsewhere = f" (in `{module_name(self.map_model)}`)" if self.map_model is not here else ""
        return f"the `{self.map_name}`{where}{elsewhere}"


class ElementMaps:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._reached: Dict[Callable, List[ElementReach]] = {}
        self._importers_done = model.session is None
        for site in model.calls:
            name = model.call_name(site.node)
            if name not in ELEMENT_MAPS:
                continue
            arg = argument(site.node, "fn", 0)
            target = model.effects.resolve_callable(arg.value, site.function) if arg is not None else None
            if target is not None:
                self._walk(site, name, target)  # type: ignore[arg-type]
        # What this module's own maps reach, before anything its importers add: what another module reads.
        self.own: Dict[Callable, List[ElementReach]] = {k: list(v) for k, v in self._reached.items()}

    # -- queries --------------------------------------------------------------------------------
    def reaches(self, site: CallSite) -> List[ElementReach]:
        """The maps whose per-element code a call sits in: those reaching the innermost lambda around
        it that a map runs, else its function."""
        self._take_importers()
        for lam in reversed(site.lambdas):
            if lam in self._reached:
                return self._reached[lam]
        return self._reached.get(site.function, []) if site.function is not None else []

    # -- the walk -------------------------------------------------------------------------------
    def _walk(self, site: CallSite, name: str, target: Callable) -> None:
        frontier: List[Tuple[Callable, FrozenSet[str]]] = [(target, frozenset(parameter_names(target)))]
        seen: Set[Callable] = set()
        for depth in range(_MAX_DEPTH + 1):
            next_frontier: List[Tuple[Callable, FrozenSet[str]]] = []
            for function, bound in frontier:
                if function in seen:
                    continue
                seen.add(function)
                owner = _owner(function, self.model)
                elements = _element_values(owner, function, bound)
                reach = ElementReach(site.node, self.model, name, site.function, function, elements, depth)
                self._reached.setdefault(function, []).append(reach)
                for call_site in owner.calls_in(function):
                    callee = owner.call_graph.callee_at(call_site)
                    passed = _bound_to_elements(callee, call_site.node, elements) if callee is not None else None
                    if passed:
                        next_frontier.append((callee, passed))  # type: ignore[arg-type]
            frontier = next_frontier

    def _take_importers(self) -> None:
        """The reaches that importers' maps found among this module's functions."""
        if self._importers_done:
            return
        self._importers_done = True
        session = self.model.session
        names = [*self.model.module_functions, *self.model.classes]
        for importer in session.importers(self.model, names):
            theirs = session.analysis(importer, "element_maps")
            if theirs is None:
                continue
            for function, reaches in theirs.own.items():
                if isinstance(function, FunctionInfo) and function.model is self.model:
                    self._reached.setdefault(function, []).extend(reaches)


def _owner(function: Callable, default: ModuleModel) -> ModuleModel:
    if isinstance(function, FunctionInfo) and function.model is not None:
        return function.model
    return default


def _element_values(model: ModuleModel, function: Callable, bound: FrozenSet[str]) -> FrozenSet[str]:
    """``bound`` and the locals of ``function`` computed from them (``height = max_y - min_y``)."""
    if isinstance(function, cst.Lambda):
        return bound
    found = set(bound)
    local = model.bindings.get(function, {})
    changed = True
    while changed:
        changed = False
        for name, bindings in local.items():
            if name in found:
                continue
            if any(b.kind in _TAINTING and b.value is not None and found.intersection(names_read(b.value))
                   for b in bindings):
                found.add(name)
                changed = True
    return frozenset(found)


def _bound_to_elements(callee: FunctionInfo, call: cst.Call, elements: FrozenSet[str]) -> Optional[FrozenSet[str]]:
    """The callee's parameters that a call binds to element values; None when it cannot be told
    (``*args``)."""
    if any(arg.star for arg in call.args):
        return None
    positional = callee.positional_parameters
    found = set()
    for index, arg in enumerate(a for a in call.args if a.keyword is None):
        if index < len(positional) and elements.intersection(names_read(arg.value)):
            found.add(positional[index])
    for arg in call.args:
        if arg.keyword is not None and elements.intersection(names_read(arg.value)):
            found.add(arg.keyword.value)
    return frozenset(found)
