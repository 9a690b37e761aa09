"""The one LibCST pass over a module, and the model its analyses are computed from.

The collector records, in a single traversal: the import-alias table, every function and class
definition, module-level aliases, every call with the function and loops it sits in, every name
binding (assignments, parameters, ``for`` and ``with`` targets) and every ``return``, each with
its place in source order and the blocks around it. All later analysis (pipelines, function
effects, hot paths, reaching definitions, output layers) works from these records and from the
function bodies they point to; nothing walks the whole tree again. The model knows none of its
analyses: ``analysis/analyses.py`` builds them on demand, on top of it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple, Union

import libcst as cst

from tflint_perf.analysis.names import ImportTable, dotted_text
from tflint_perf.text.walk import node_ids, walk

FunctionNode = Union[cst.FunctionDef, cst.Lambda]
LoopNode = Union[cst.For, cst.While]
BlockNode = Union[cst.IndentedBlock, cst.SimpleStatementSuite]


@dataclass(frozen=True)
class Place:
    """Where something happens: its rank in source order and the blocks around it (outermost first)."""

    order: int
    blocks: Tuple[BlockNode, ...]

    def dominated_by(self, earlier: "Place") -> bool:
        """True when ``earlier`` is before this place and certainly ran on the way to it: it sits
        in the same block or in one enclosing it (straight-line code, no branch in between)."""
        return earlier.order < self.order and self.blocks[: len(earlier.blocks)] == earlier.blocks


@dataclass(eq=False)
class Binding:
    """One binding of a local name.

    ``kind``: "assign" (``x = v``), "unpack" (``a, b = v``; ``path`` is the position in the
    target), "item" (``x[key] = v``), "augassign" (``x += v``), "for" (``for x in v``; ``v`` is
    the iterable), "with" (``with v as x``), "param" (``v`` is the default, if any), "def",
    "class", "import" (no value).
    """

    name: str
    kind: str
    value: Optional[cst.BaseExpression]
    place: Place
    path: Tuple[int, ...] = ()
    key: Optional[cst.BaseExpression] = None
    scope: Optional["FunctionInfo"] = None  # the function whose local it is; None: the module

    @property
    def replaces_previous(self) -> bool:
        return self.kind not in ("item", "augassign")


@dataclass(eq=False)
class ReturnSite:
    node: cst.Return
    place: Place


@dataclass(eq=False)
class FunctionInfo:
    node: cst.FunctionDef
    name: str
    class_info: Optional["ClassInfo"]
    parent: Optional["FunctionInfo"]
    declares_global: bool = False
    returns: List[ReturnSite] = field(default_factory=list)
    model: Optional["ModuleModel"] = field(default=None, repr=False)  # the module it is defined in

    @property
    def is_method(self) -> bool:
        return self.class_info is not None and self.parent is None

    @property
    def binds_self(self) -> bool:
        """A method whose first parameter is the instance (or class): not a ``@staticmethod``."""
        return self.is_method and not any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in self.node.decorators
        )

    def enclosing_names(self, classes: bool = True) -> List[str]:
        """The names around code in this function, innermost first: the function, each function it
        is nested in and (with ``classes``) the class each is a method of. What they say the code is for
        (``eval_input_fn``, ``class Evaluator``) is read from them."""
        names: List[str] = []
        function: Optional[FunctionInfo] = self
        while function is not None:
            names.append(function.name)
            if classes and function.class_info is not None:
                names.append(function.class_info.name)
            function = function.parent
        return names

    @property
    def positional_parameters(self) -> List[str]:
        """The parameters a call binds by position, as a caller sees them (a method's ``self`` left out)."""
        params = self.node.params
        positional = [p.name.value for p in [*params.posonly_params, *params.params]]
        return positional[1:] if self.binds_self and positional else positional

    @property
    def owner(self) -> Optional["ClassInfo"]:
        """The class this function is a method of, or whose method it is nested in."""
        current: Optional[FunctionInfo] = self
        while current is not None:
            if current.class_info is not None:
                return current.class_info
            current = current.parent
        return None


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    name: str
    methods: Dict[str, FunctionInfo] = field(default_factory=dict)
    # `self.<attr> = <value>` assignments made in any method.
    attributes: Dict[str, List[cst.BaseExpression]] = field(default_factory=dict)
    model: Optional["ModuleModel"] = field(default=None, repr=False)  # the module it is defined in
    # Where a module-level class statement binds its name: its bases read the bindings before it.
    place: Optional[Place] = None


@dataclass(eq=False)
class CallSite:
    node: cst.Call
    function: Optional[FunctionInfo]
    loops: Tuple[LoopNode, ...]
    lambdas: Tuple[cst.Lambda, ...]
    place: Place = Place(0, ())
    # The statement line the call is in; None in a compound statement's header or a one-line suite.
    statement: Optional[cst.SimpleStatementLine] = None


# Module-level statements that bind a name without an `=` (which `visit_Assign` records with its value):
# a second binding of a name, so no constant.
_REBINDING_STATEMENTS = ("augassign", "for", "with")

# Attributes recorded where they are used (not only called): `tf.data.experimental.AUTOTUNE`.
NOTED_ATTRIBUTES = frozenset({"AUTOTUNE"})


class _Collector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.attributes: List[CallSite] = []
        self.imports = ImportTable()
        self.functions: List[FunctionInfo] = []
        self.module_functions: Dict[str, FunctionInfo] = {}
        self.classes: Dict[str, ClassInfo] = {}
        self.calls: List[CallSite] = []
        self.module_assignments: Dict[str, List[cst.BaseExpression]] = {}
        # Module-level imports as written, for first-party names: local name -> (module, dots, name taken).
        self.raw_imports: Dict[str, Tuple[str, int, Optional[str]]] = {}
        # Module-level `from m import *`: (module, dots), for names the module re-exports wholesale.
        self.star_imports: List[Tuple[str, int]] = []
        self._containers: List[Union[FunctionInfo, ClassInfo]] = []
        self._loop_stack: List[List[LoopNode]] = [[]]
        self._lambda_stack: List[cst.Lambda] = []
        self._blocks: List[BlockNode] = []
        self._line: Optional[cst.SimpleStatementLine] = None
        self._order = 0
        # Bindings per scope: a function, or None for the module. Class bodies are not scopes here.
        self.bindings: Dict[Optional[FunctionInfo], Dict[str, List[Binding]]] = {}
        # The names each function declares `global`: what it binds to them are module bindings.
        self._globals: Dict[FunctionInfo, Set[str]] = {}

    def _place(self) -> Place:
        self._order += 1
        return Place(self._order, tuple(self._blocks))

    def _bind(self, name: str, kind: str, value: Optional[cst.BaseExpression], **extra) -> None:
        if self._containers and isinstance(self._containers[-1], ClassInfo):
            return
        scope = self._current_function()
        if scope is not None and name in self._globals.get(scope, ()):
            scope = None  # `global TRAIN; TRAIN = True` in `parse_args()` rebinds the module's TRAIN
            if kind != "import":  # an import stays in the import table, as a module-level one does
                self.module_assignments.setdefault(name, []).append(None)  # type: ignore[arg-type]
        elif scope is None and kind in _REBINDING_STATEMENTS:
            self._note_binding(name)
        binding = Binding(name, kind, value, self._place(), scope=scope, **extra)
        self.bindings.setdefault(scope, {}).setdefault(name, []).append(binding)

    def _bind_target(self, target: cst.BaseExpression, kind: str, value: Optional[cst.BaseExpression]) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, kind, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for path, name in _paths_in_target(target, ()):
                self._bind(name, "unpack" if kind == "assign" else kind, value, path=path)
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and len(target.slice) == 1:
            index = target.slice[0].slice
            key = index.value if isinstance(index, cst.Index) else None
            self._bind(target.value.value, "item", value, key=key)

    def visit_Import(self, node: cst.Import) -> None:
        self.imports.add_import(node)
        for alias in node.names:
            full = dotted_text(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(alias.asname.name.value, "import", None)
                self._raw_import(alias.asname.name.value, (full, 0, None))
            else:
                self._bind(full.split(".")[0], "import", None)
                self._raw_import(full.split(".")[0], (full.split(".")[0], 0, None))

    def _raw_import(self, local: str, target: Tuple[str, int, Optional[str]]) -> None:
        if not self._containers:
            self.raw_imports[local] = target

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.imports.add_import_from(node)
        module = dotted_text(node.module) if node.module is not None else ""
        if isinstance(node.names, cst.ImportStar):
            if not self._containers:
                self.star_imports.append((module or "", len(node.relative)))
            return
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            local = alias.name.value
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self._bind(local, "import", None)
            self._raw_import(local, (module or "", len(node.relative), alias.name.value))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name.value, "class", None)
        info = ClassInfo(node, node.name.value)
        if not self._containers:
            info.place = self.bindings[None][info.name][-1].place
            self.classes[info.name] = info
        self._note_binding(node.name.value)
        self._containers.append(info)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._containers.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name.value, "def", None)
        container = self._containers[-1] if self._containers else None
        owner = container if isinstance(container, ClassInfo) else None
        parent = next((c for c in reversed(self._containers) if isinstance(c, FunctionInfo)), None)
        info = FunctionInfo(node, node.name.value, owner, parent if owner is None else None)
        self.functions.append(info)
        if container is None:
            self.module_functions[info.name] = info
        elif owner is not None:
            owner.methods[info.name] = info
        self._note_binding(node.name.value)
        self._containers.append(info)
        self._loop_stack.append([])
        params = node.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            self._bind(param.name.value, "param", param.default)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self._bind(star.name.value, "param", None)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._containers.pop()
        self._loop_stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._lambda_stack.append(node)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._lambda_stack.pop()

    def visit_For_body(self, node: cst.For) -> None:
        self._loop_stack[-1].append(node)
        self._bind_target(node.target, "for", node.iter)

    def leave_For_body(self, node: cst.For) -> None:
        self._loop_stack[-1].pop()

    def visit_While_body(self, node: cst.While) -> None:
        self._loop_stack[-1].append(node)

    def leave_While_body(self, node: cst.While) -> None:
        self._loop_stack[-1].pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._blocks.append(node)

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self._blocks.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._line = node

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._line = None

    def visit_Call(self, node: cst.Call) -> None:
        function = self._current_function()
        self.calls.append(
            CallSite(node, function, tuple(self._loop_stack[-1]), tuple(self._lambda_stack), self._place(), self._line)
        )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in NOTED_ATTRIBUTES:
            self.attributes.append(
                CallSite(node, self._current_function(), tuple(self._loop_stack[-1]), tuple(self._lambda_stack),  # type: ignore[arg-type]
                         self._place(), self._line)
            )

    def visit_Return(self, node: cst.Return) -> None:
        function = self._current_function()
        if function is not None:
            function.returns.append(ReturnSite(node, self._place()))

    # Bindings are recorded when the statement is left, after the calls in its value: in
    # ``x = f(x)`` the argument ``x`` is the previous binding, not this one.
    def leave_Assign(self, original_node: cst.Assign) -> None:
        for target in original_node.targets:
            self._bind_target(target.target, "assign", original_node.value)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        if original_node.value is not None:
            self._bind_target(original_node.target, "assign", original_node.value)
            self._note_bindings(original_node.target)

    def leave_AugAssign(self, original_node: cst.AugAssign) -> None:
        if isinstance(original_node.target, cst.Name):
            self._bind(original_node.target.value, "augassign", original_node.value)

    def leave_NamedExpr(self, original_node: cst.NamedExpr) -> None:
        self._bind_target(original_node.target, "assign", original_node.value)
        self._note_bindings(original_node.target)

    def leave_WithItem(self, original_node: cst.WithItem) -> None:
        if original_node.asname is not None:
            self._bind_target(original_node.asname.name, "with", original_node.item)

    def visit_Global(self, node: cst.Global) -> None:
        self._mark_global()
        function = self._current_function()
        if function is not None:
            self._globals.setdefault(function, set()).update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self._mark_global()

    def _mark_global(self) -> None:
        function = self._current_function()
        if function is not None:
            function.declares_global = True

    def _current_function(self) -> Optional[FunctionInfo]:
        return next((c for c in reversed(self._containers) if isinstance(c, FunctionInfo)), None)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._containers:
            self._note_self_attributes(node)
            return
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.module_assignments.setdefault(target.target.value, []).append(node.value)
            elif _pairs_up(target.target, node.value):
                # `k, num_epochs, lr = 5, 100, 5`: each name bound to its own item, as by one assignment each
                for name, item in zip(target.target.elements, node.value.elements):  # type: ignore[attr-defined]
                    self.module_assignments.setdefault(name.value.value, []).append(item.value)
            else:
                for name in _names_in_target(target.target):
                    self._note_binding(name)

    def _note_self_attributes(self, node: cst.Assign) -> None:
        function = self._current_function()
        if function is None or function.class_info is None:
            return
        for target in node.targets:
            attr = target.target
            if isinstance(attr, cst.Attribute) and isinstance(attr.value, cst.Name) and attr.value.value == "self":
                function.class_info.attributes.setdefault(attr.attr.value, []).append(node.value)

    def _note_binding(self, name: str) -> None:
        if not self._containers:
            self.module_assignments.setdefault(name, []).append(None)  # type: ignore[arg-type]

    def _note_bindings(self, target: cst.BaseExpression) -> None:
        """A module-level binding whose value is not recorded as a constant's (``X: int = 5``,
        ``(X := f())``): it makes a name bound elsewhere too no constant."""
        for name in _names_in_target(target):
            self._note_binding(name)


def _paths_in_target(target: cst.BaseExpression, path: Tuple[int, ...]) -> List[Tuple[Tuple[int, ...], str]]:
    if isinstance(target, cst.Name):
        return [(path, target.value)]
    if isinstance(target, (cst.Tuple, cst.List)):
        found: List[Tuple[Tuple[int, ...], str]] = []
        for index, element in enumerate(target.elements):
            if isinstance(element, cst.StarredElement):
                continue
            found.extend(_paths_in_target(element.value, path + (index,)))
        return found
    return []


def _pairs_up(target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """A tuple (or list) of plain names assigned a tuple or list of as many items, none starred."""
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))):
        return False
    if len(target.elements) != len(value.elements):
        return False
    return all(isinstance(element.value, cst.Name) and not isinstance(element, cst.StarredElement)
               for element in target.elements) and not any(isinstance(e, cst.StarredElement) for e in value.elements)


def _names_in_target(target: cst.BaseExpression) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names: List[str] = []
        for element in target.elements:
            names.extend(_names_in_target(element.value))
        return names
    return []


class ModuleModel:
    """Everything the rules know about one module; expensive parts are computed on first use."""

    def __init__(self, module: cst.Module) -> None:
        collector = _Collector()
        walk(module, collector)
        self.module = module
        self.imports = collector.imports
        self.functions = collector.functions
        self.module_functions = collector.module_functions
        self.classes = collector.classes
        self.calls = collector.calls
        self.bindings = collector.bindings
        self.raw_imports = collector.raw_imports
        self.star_imports = collector.star_imports
        # Set by a project session (tflint_perf/project/session.py) when the module is part of one; the
        # analyses reach other modules through it (``definition``, ``importers``, ``analysis``, ``building``)
        # without importing the project layer.
        self.session: Optional[Any] = None
        self.path: Optional[Path] = None
        for info in self.functions:
            info.model = self
        for cls in self.classes.values():
            cls.model = self
        # Module-level names bound exactly once, to a value expression (None for def/class/import).
        self.module_values: Dict[str, cst.BaseExpression] = {
            name: values[0]
            for name, values in collector.module_assignments.items()
            if len(values) == 1 and values[0] is not None
        }
        for name in collector.module_assignments:
            self.imports.rebind(name)
        for name, value in self.module_values.items():
            # `AUTOTUNE = tf.data.AUTOTUNE`, `layers = tf.keras.layers`: aliases of API names.
            text = dotted_text(value)
            qualified_root = self.imports.qualified(text.split(".")[0]) if text else None
            if text is not None and qualified_root is not None:
                rest = text.partition(".")[2]
                self.imports.bind(name, f"{qualified_root}.{rest}" if rest else qualified_root)
        self._function_by_node: Dict[cst.FunctionDef, FunctionInfo] = {f.node: f for f in self.functions}
        self._nested: Dict[Tuple[Optional[FunctionInfo], str], FunctionInfo] = {
            (f.parent, f.name): f for f in self.functions if f.parent is not None
        }
        self._site_by_call: Dict[cst.Call, CallSite] = {site.node: site for site in self.calls}
        self._redefinitions: Optional[Dict[str, Dict[int, FunctionInfo]]] = None
        # Uses of the attributes in NOTED_ATTRIBUTES, recorded like calls (their `node` is the Attribute).
        self.attributes = collector.attributes
        self._site_by_call.update({site.node: site for site in self.attributes})  # type: ignore[misc]
        self.calls_in_function: Dict[Optional[FunctionInfo], List[CallSite]] = {}
        self.calls_in_lambda: Dict[cst.Lambda, List[CallSite]] = {}
        for site in self.calls:
            self.calls_in_function.setdefault(site.function, []).append(site)
            for lam in site.lambdas:
                self.calls_in_lambda.setdefault(lam, []).append(site)

    def resolve(self, node: cst.BaseExpression) -> Optional[str]:
        """Canonical TensorFlow/Keras name of an expression such as ``tf.data.Dataset``."""
        return self.imports.resolve(node)

    def call_name(self, call: cst.Call) -> Optional[str]:
        return self.imports.resolve(call.func)

    def site_of(self, call: cst.Call) -> Optional[CallSite]:
        """The collector's record of a call (its function, loops, place, statement)."""
        return self._site_by_call.get(call)

    def function_info(self, node: cst.FunctionDef) -> Optional[FunctionInfo]:
        return self._function_by_node.get(node)

    def lookup_function(self, name: str, scope: Optional[FunctionInfo], place: Optional[Place] = None
                        ) -> Optional[FunctionInfo]:
        """The same-file ``def`` a bare name refers to from inside ``scope`` (None: module level). Given
        the ``place`` of a module-level use, the ``def`` in effect there: a notebook that defines
        ``run_optimization`` in cell 8, trains with it in cell 9 and redefines it in cell 23 calls the
        first in cell 9. Elsewhere (and where branches leave it open) the last module-level ``def``."""
        current = scope
        while current is not None:
            nested = self._nested.get((current, name))
            if nested is not None:
                return nested
            current = current.parent
        if place is not None and scope is None:
            redefined = self._redefined().get(name)
            if redefined is not None:
                reaching = self.reaching(name, None, place)
                if reaching is not None and len(reaching) == 1 and reaching[0].kind == "def":
                    return redefined.get(id(reaching[0]), self.module_functions.get(name))
        return self.module_functions.get(name)

    def _redefined(self) -> Dict[str, Dict[int, FunctionInfo]]:
        """Module-level functions defined more than once: each ``def`` binding's function, by the
        binding's identity (bindings and functions are recorded in the same source order)."""
        if self._redefinitions is None:
            self._redefinitions = {}
            module_bindings = self.bindings.get(None, {})
            for name in {f.name for f in self.functions if f.owner is None and f.parent is None}:
                infos = [f for f in self.functions if f.owner is None and f.parent is None and f.name == name]
                defs = [b for b in module_bindings.get(name, []) if b.kind == "def"]
                if len(infos) > 1 and len(infos) == len(defs):
                    self._redefinitions[name] = {id(binding): info for binding, info in zip(defs, infos)}
        return self._redefinitions

    def calls_in(self, function: Union[FunctionInfo, cst.Lambda]) -> List[CallSite]:
        """Calls lexically inside a def (not its nested defs) or inside a lambda."""
        if isinstance(function, cst.Lambda):
            return self.calls_in_lambda.get(function, [])
        return self.calls_in_function.get(function, [])

    def scope_bindings(self, name: str, scope: Optional[FunctionInfo]) -> Tuple[Optional[FunctionInfo], List[Binding]]:
        """The bindings a bare name refers to from ``scope``, Python-style: the innermost function
        that binds it, else the module. Returns the scope found and its bindings (empty if none)."""
        current = scope
        while current is not None:
            found = self.bindings.get(current, {}).get(name)
            if found:
                return current, found
            current = current.parent
        return None, self.bindings.get(None, {}).get(name, [])

    def reaching(self, name: str, scope: Optional[FunctionInfo], place: Place,
                 lambdas: Tuple[cst.Lambda, ...] = ()) -> Optional[List[Binding]]:
        """The bindings of ``name`` that may reach ``place`` inside ``scope``.

        None when the name is a parameter of an enclosing lambda. A binding in the same or an
        enclosing block hides the earlier ones; bindings on branches do not (not even when every
        branch binds: the answer errs towards "may reach"). In an outer scope (a closure or the
        module seen from a function) every binding may reach.
        """
        for lam in lambdas:
            if name in lambda_parameter_names(lam):
                return None
        found_scope, bindings = self.scope_bindings(name, scope)
        if found_scope is not scope:
            return list(bindings)
        reaching: List[Binding] = []
        for binding in reversed(bindings):
            if binding.place.order >= place.order:
                continue
            reaching.append(binding)
            if binding.replaces_previous and place.dominated_by(binding.place):
                break
        reaching.reverse()
        return reaching if reaching else list(bindings)

    def reaching_calls(self, value: cst.BaseExpression, site: "CallSite") -> List[cst.Call]:
        """The call ``value`` is, or the calls that every binding of the name ``value`` reaching ``site``
        assigns (``strategy = tf.distribute.MirroredStrategy()``); empty when one binding is anything else
        or the name is a parameter of an enclosing lambda."""
        if isinstance(value, cst.Call):
            return [value]
        if not isinstance(value, cst.Name):
            return []
        bindings = self.reaching(value.value, site.function, site.place, site.lambdas)
        if not bindings or any(binding.kind != "assign" or not isinstance(binding.value, cst.Call) for binding in bindings):
            return []
        return [binding.value for binding in bindings]  # type: ignore[misc]

    def after_setup(self, name: str) -> List[Binding]:
        """The module-level bindings of ``name`` that a function called once the module's top-level
        code has run sees: the last one at the top level, not under any branch or loop, and any after
        it (``model = build_transformer_model(...)`` then ``model = Model(model.input, output)``:
        a callback's helper reads the second). All of them when none is unconditional."""
        bindings = self.bindings.get(None, {}).get(name, [])
        for index in range(len(bindings) - 1, -1, -1):
            binding = bindings[index]
            if binding.replaces_previous and not binding.place.blocks and binding.kind in ("assign", "unpack", "import", "def"):
                return list(bindings[index:])
        return list(bindings)

    def foreign(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo] = None, before: Optional[Place] = None
                ) -> Optional[Union[FunctionInfo, ClassInfo]]:
        """The function or class of another first-party module that a name such as ``make_dataset``
        or ``data.make_dataset`` denotes (imported, and not rebound locally; with ``before``, not
        rebound before that place: ``class Model(Model)`` reads the imported ``Model``); None outside
        a project session or when it cannot be known."""
        if self.session is None:
            return None
        text = dotted_text(expr)
        if text is None:
            return None
        root, *attributes = text.split(".")
        target = self.raw_imports.get(root)
        if target is None or self.imports.is_bound(root) and self.imports.qualified(root) is not None:
            return None  # not imported, or a TensorFlow/Keras name
        found_scope, bindings = self.scope_bindings(root, scope)
        if before is not None:
            bindings = [b for b in bindings if b.place.order < before.order]
            if not bindings:
                return None
        if found_scope is not None or any(b.kind != "import" for b in bindings):
            return None  # a local of the same name, or the import rebound
        return self.session.definition(self, target, attributes)

    def owns(self, node: cst.CSTNode) -> bool:
        """The node is part of this module's tree (not of another module's, in a project session)."""
        if self.session is None:
            return True
        return id(node) in self._node_ids

    @cached_property
    def _node_ids(self) -> frozenset:
        return module_node_ids(self.module, self.path)

    def tensorflow_alias(self) -> Optional[str]:
        """The local name the module uses for TensorFlow itself (``tf``, ``tf2``...), if any."""
        return self.imports.alias_for("tf")


# The node ids of a module's top-level statements, by the statement's identity, for the latest tree
# of each module path asked: a module re-parsed after an edit keeps its unchanged statements as the
# same objects, so a re-check walks only the changed ones to tell its own nodes from another module's
# (``owns``). Each entry keeps its statement alive, so that the id it is keyed by cannot be reused by
# another object while the entry lives; only the latest tree's statements are kept, so no old tree
# outlives its model because of this.
StatementIds = Dict[int, Tuple[cst.CSTNode, frozenset]]
_STATEMENT_IDS: "OrderedDict[Path, StatementIds]" = OrderedDict()
_MAX_PATHS = 16
_STATEMENT_IDS_LOCK = threading.Lock()  # a language server may check two documents at once


def module_node_ids(module: cst.Module, path: Optional[Path] = None) -> frozenset:
    """``node_ids(module)``; with ``path``, reading again the statements of the path's last tree."""
    with _STATEMENT_IDS_LOCK:
        known = _STATEMENT_IDS.get(path, {}) if path is not None else {}
    current: StatementIds = {}
    for statement in module.body:
        entry = known.get(id(statement))
        if entry is None or entry[0] is not statement:
            entry = (statement, frozenset(node_ids(statement)))
        current[id(statement)] = entry
    rest = {id(module)}
    for node in (*module.header, *module.footer):  # the module's other nodes: comments and blank lines
        rest |= node_ids(node)
    if path is not None:
        with _STATEMENT_IDS_LOCK:
            _STATEMENT_IDS[path] = current
            _STATEMENT_IDS.move_to_end(path)
            while len(_STATEMENT_IDS) > _MAX_PATHS:
                _STATEMENT_IDS.popitem(last=False)
    return frozenset(rest).union(*(ids for _, ids in current.values()))


def lambda_parameter_names(node: cst.Lambda) -> List[str]:
    params = node.params
    names = [p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.append(star.name.value)
    return names


def module_name(model: ModuleModel) -> str:
    """How a message names another module: its path relative to the project root."""
    session = model.session
    if session is None or model.path is None:
        return "another module"
    try:
        return model.path.relative_to(session.project.root).as_posix()
    except ValueError:
        return model.path.name
