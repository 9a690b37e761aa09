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

Two shapes of real code take more than a call graph (KerasCV's augmentation layers have both): the
map's function may be a parameter that a wrapper forwards (``_map_fn(self, func, inputs)`` calls
``tf.map_fn(func, inputs)``; what its callers pass for ``func`` is mapped), and the per-element code
may call ``self.augment_bounding_boxes(...)`` on a base class whose subclass, in another module,
overrides it: the override is per-element code too. A function called from per-element code runs
once per element whether or not it is handed the element, so such calls are followed with no
element values; a random draw there (``tf.random.uniform(()) < p``) is one draw per element.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

import libcst as cst

from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.classes import mro
from tflint_perf.analysis.effects import is_random_op, nodes_within
from tflint_perf.analysis.hotpaths import ELEMENT_MAPS, parameter_names
from tflint_perf.analysis.loops import names_read
from tflint_perf.analysis.model import CallSite, ClassInfo, FunctionInfo, ModuleModel, Place, module_name

Callable = Union[FunctionInfo, cst.Lambda]
_MAX_DEPTH = 4  # calls followed from the mapped function: "two or three calls deep" and one more
_MAX_FORWARDING = 3  # wrappers between the map and the function handed to it
_TAINTING = ("assign", "unpack", "augassign", "for")
# Methods of Keras' `RandomGenerator` (`self._random_generator` of a random layer): one draw per call.
_RANDOM_METHODS = frozenset({"random_uniform", "random_normal", "truncated_normal"})


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


@dataclass(frozen=True)
class _Origin:
    """The map a walk starts from."""

    map_call: cst.Call
    map_model: ModuleModel
    map_name: str
    map_caller: Optional[FunctionInfo]


@dataclass(frozen=True)
class _SelfCall:
    """``self.<method>(...)`` in per-element code of a class's method: a subclass's override of
    ``method`` runs there."""

    method: str
    call: cst.Call
    elements: FrozenSet[str]  # the caller's element values, for binding the override's parameters
    depth: int  # the override's depth
    origin: _Origin


class ElementMaps:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._reached: Dict[Callable, List[ElementReach]] = {}
        self._importers_done = model.session is None
        # Calls of `self.<method>` in per-element code, by the class whose method makes them.
        self.self_calls: Dict[ClassInfo, List[_SelfCall]] = {}
        # Wrappers handing a parameter to a map (`_map_fn(self, func, inputs)`): what callers pass for it is mapped.
        self.forwarders: Dict[FunctionInfo, List[Tuple[str, _Origin]]] = {}
        for site in model.calls:
            name = model.call_name(site.node)
            if name not in ELEMENT_MAPS:
                continue
            arg = argument(site.node, "fn", 0)
            if arg is None:
                continue
            origin = _Origin(site.node, model, name, site.function)
            target = model.effects.resolve_callable(arg.value, site.function)
            if target is not None:
                self._walk(origin, [(target, frozenset(parameter_names(target)))], 0)
                continue
            parameter = _parameter_named(model, arg.value, site.function)
            if parameter is not None:
                self.forwarders.setdefault(site.function, []).append((parameter, origin))  # type: ignore[index]
        self._follow_wrappers()
        self._walk_overrides()
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

    def varies_per_element(self, reach: ElementReach, expr: cst.BaseExpression, site: CallSite) -> bool:
        """An expression of per-element code takes its own value for each element: it reads the
        element's values, or a random draw made there (one per element)."""
        if reach.elements.intersection(names_read(expr)):
            return True
        return _draws_random(self.model, expr, site.function, site.place, site.lambdas, 0)

    # -- the walk -------------------------------------------------------------------------------
    def _follow_wrappers(self) -> None:
        """Calls of wrappers that hand a parameter to a map (this module's, and in a project session
        other first-party modules', such as the Object Detection API's ``static_or_dynamic_map_fn``):
        the function passed for it is mapped; a parameter passed for it makes the caller a wrapper
        too, a few wrappers up."""
        done: Set[Tuple[cst.Call, str]] = set()
        for _ in range(_MAX_FORWARDING):
            found: Dict[FunctionInfo, List[Tuple[str, _Origin]]] = {}
            for site in self.model.calls:
                callee, entries = self._wrapper_at(site)
                for parameter, origin in entries:
                    if (site.node, parameter) in done or any(arg.star for arg in site.node.args):
                        continue
                    done.add((site.node, parameter))
                    positional = callee.positional_parameters  # type: ignore[union-attr]
                    position = positional.index(parameter) if parameter in positional else None
                    passed = argument(site.node, parameter, position)
                    if passed is None:
                        continue
                    target = self.model.effects.resolve_callable(passed.value, site.function)
                    if target is not None:
                        self._walk(origin, [(target, frozenset(parameter_names(target)))], 0)
                        continue
                    outer = _parameter_named(self.model, passed.value, site.function)
                    if outer is not None:
                        found.setdefault(site.function, []).append((outer, origin))  # type: ignore[arg-type]
            if not found:
                return
            for wrapper, entries in found.items():
                self.forwarders.setdefault(wrapper, []).extend(entries)

    def _wrapper_at(self, site: CallSite) -> Tuple[Optional[FunctionInfo], List[Tuple[str, _Origin]]]:
        """The wrapper a call calls and the parameters it hands to a map; (None, []) for other calls."""
        model = self.model
        local = model.call_graph.callee(site.node)
        if local is not None:
            return local, self.forwarders.get(local, [])
        func = site.node.func
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        if model.session is None or not isinstance(root, cst.Name) or root.value not in model.raw_imports:
            return None, []
        if not any(model.effects.resolve_callable(arg.value, site.function, local_only=True) is not None
                   or _parameter_named(model, arg.value, site.function) is not None for arg in site.node.args):
            return None, []  # no function handed over: no need to look into the other module
        callee = model.call_graph.callee_at(site)
        maps = self._maps_of(callee.model) if callee is not None and callee.model is not model else None
        return (callee, maps.forwarders.get(callee, [])) if maps is not None else (None, [])

    def _walk(self, origin: _Origin, frontier: List[Tuple[Callable, FrozenSet[str]]], start: int) -> None:
        seen: Set[Callable] = set()
        for depth in range(start, _MAX_DEPTH + 1):
            next_frontier: List[Tuple[Callable, FrozenSet[str]]] = []
            for function, bound in frontier:
                if function in seen:
                    continue
                seen.add(function)
                owner = _owner(function, self.model)
                elements = _element_values(owner, function, bound)
                reach = ElementReach(origin.map_call, origin.map_model, origin.map_name, origin.map_caller,
                                     function, elements, depth)
                self._reached.setdefault(function, []).append(reach)
                for call_site in owner.calls_in(function):
                    self._note_self_call(function, call_site, elements, depth + 1, origin)
                    callee = owner.call_graph.callee_at(call_site)
                    passed = _bound_to_elements(callee, call_site.node, elements) if callee is not None else None
                    # Called from per-element code, a function runs once per element even when it is
                    # not handed the element (a random draw there is one draw per element).
                    if passed is not None:
                        next_frontier.append((callee, passed))  # type: ignore[arg-type]
            frontier = next_frontier

    def _note_self_call(self, function: Callable, site: CallSite, elements: FrozenSet[str], depth: int,
                        origin: _Origin) -> None:
        func = site.node.func
        if depth > _MAX_DEPTH or not isinstance(function, FunctionInfo) or not function.binds_self:
            return
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
            return
        owner = function.owner
        if owner is not None:
            self.self_calls.setdefault(owner, []).append(_SelfCall(func.attr.value, site.node, elements, depth, origin))

    def _walk_overrides(self) -> None:
        """Per-element code of a base class (here or in another first-party module) calling
        ``self.<method>``: this module's subclasses' overrides of ``method`` run there."""
        for cls in self.model.classes.values():
            for base in mro(self.model, cls)[1:]:
                maps = self if base.model is self.model else self._maps_of(base.model)
                for call in maps.self_calls.get(base, []) if maps is not None else []:
                    override = cls.methods.get(call.method)
                    if override is None or override is base.methods.get(call.method):
                        continue
                    passed = _bound_to_elements(override, call.call, call.elements)
                    if passed is not None:
                        self._walk(call.origin, [(override, passed)], call.depth)

    def _maps_of(self, model: Optional[ModuleModel]) -> Optional["ElementMaps"]:
        session = self.model.session
        return session.analysis(model, "element_maps") if session is not None and model is not None else None

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


def _parameter_named(model: ModuleModel, expr: cst.BaseExpression, scope: Optional[FunctionInfo]) -> Optional[str]:
    """The parameter of ``scope`` that ``expr`` names, when nothing rebinds it."""
    if scope is None or not isinstance(expr, cst.Name):
        return None
    found, bindings = model.scope_bindings(expr.value, scope)
    return expr.value if found is scope and bindings and all(b.kind == "param" for b in bindings) else None


def _draws_random(model: ModuleModel, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                  lambdas: Tuple[cst.Lambda, ...], depth: int) -> bool:
    """The expression is, or is computed from, a random draw (``tf.random.uniform(())``, a Keras
    layer's ``self._random_generator.random_uniform(...)``), followed through the local names it reads."""
    for call in nodes_within(expr, cst.Call):
        name = model.call_name(call)
        if name is not None and is_random_op(name):
            return True
        if name is None and isinstance(call.func, cst.Attribute) and call.func.attr.value in _RANDOM_METHODS:
            return True
    if depth >= _MAX_DEPTH:
        return False
    for name in set(names_read(expr)):
        for binding in model.reaching(name, scope, place, lambdas) or []:
            if binding.kind in _TAINTING and binding.value is not None and binding.scope is scope and \
                    _draws_random(model, binding.value, scope, binding.place, (), depth + 1):
                return True
    return False


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
