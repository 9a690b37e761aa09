"""The one LibCST pass over a module, and the model that rules query.

The collector records, in a single traversal: the import-alias table, every function and class
definition, module-level aliases, and every call with the function and loops it sits in. All
later analysis (pipelines, function effects, hot paths) works from these records and from the
function bodies they point to; nothing walks the whole tree again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Dict, List, Optional, Tuple, Union

import libcst as cst

from tflint_perf.analysis.names import ImportTable, dotted_text

FunctionNode = Union[cst.FunctionDef, cst.Lambda]
LoopNode = Union[cst.For, cst.While]


@dataclass(eq=False)
class FunctionInfo:
    node: cst.FunctionDef
    name: str
    class_info: Optional["ClassInfo"]
    parent: Optional["FunctionInfo"]
    declares_global: bool = False

    @property
    def is_method(self) -> bool:
        return self.class_info is not None and self.parent is None


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    name: str
    methods: Dict[str, FunctionInfo] = field(default_factory=dict)
    # `self.<attr> = <value>` assignments made in any method.
    attributes: Dict[str, List[cst.BaseExpression]] = field(default_factory=dict)


@dataclass(eq=False)
class CallSite:
    node: cst.Call
    function: Optional[FunctionInfo]
    loops: Tuple[LoopNode, ...]
    lambdas: Tuple[cst.Lambda, ...]


class _Collector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.imports = ImportTable()
        self.functions: List[FunctionInfo] = []
        self.module_functions: Dict[str, FunctionInfo] = {}
        self.classes: Dict[str, ClassInfo] = {}
        self.calls: List[CallSite] = []
        self.module_assignments: Dict[str, List[cst.BaseExpression]] = {}
        self._containers: List[Union[FunctionInfo, ClassInfo]] = []
        self._loop_stack: List[List[LoopNode]] = [[]]
        self._lambda_stack: List[cst.Lambda] = []

    def visit_Import(self, node: cst.Import) -> None:
        self.imports.add_import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.imports.add_import_from(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        info = ClassInfo(node, node.name.value)
        if not self._containers:
            self.classes[info.name] = info
        self._note_binding(node.name.value)
        self._containers.append(info)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._containers.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
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

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._containers.pop()
        self._loop_stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._lambda_stack.append(node)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._lambda_stack.pop()

    def visit_For_body(self, node: cst.For) -> None:
        self._loop_stack[-1].append(node)

    def leave_For_body(self, node: cst.For) -> None:
        self._loop_stack[-1].pop()

    def visit_While_body(self, node: cst.While) -> None:
        self._loop_stack[-1].append(node)

    def leave_While_body(self, node: cst.While) -> None:
        self._loop_stack[-1].pop()

    def visit_Call(self, node: cst.Call) -> None:
        function = self._current_function()
        self.calls.append(CallSite(node, function, tuple(self._loop_stack[-1]), tuple(self._lambda_stack)))

    def visit_Global(self, node: cst.Global) -> None:
        self._mark_global()

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
        module.visit(collector)
        self.module = module
        self.imports = collector.imports
        self.functions = collector.functions
        self.module_functions = collector.module_functions
        self.classes = collector.classes
        self.calls = collector.calls
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

    def function_info(self, node: cst.FunctionDef) -> Optional[FunctionInfo]:
        return self._function_by_node.get(node)

    def lookup_function(self, name: str, scope: Optional[FunctionInfo]) -> Optional[FunctionInfo]:
        """The same-file ``def`` a bare name refers to from inside ``scope`` (None: module level)."""
        current = scope
        while current is not None:
            nested = self._nested.get((current, name))
            if nested is not None:
                return nested
            current = current.parent
        return self.module_functions.get(name)

    def calls_in(self, function: Union[FunctionInfo, cst.Lambda]) -> List[CallSite]:
        """Calls lexically inside a def (not its nested defs) or inside a lambda."""
        if isinstance(function, cst.Lambda):
            return self.calls_in_lambda.get(function, [])
        return self.calls_in_function.get(function, [])

    @cached_property
    def pipelines(self) -> "PipelineAnalysis":
        from tflint_perf.analysis.pipelines import PipelineAnalysis

        return PipelineAnalysis(self)

    @cached_property
    def effects(self) -> "EffectAnalysis":
        from tflint_perf.analysis.effects import EffectAnalysis

        return EffectAnalysis(self)

    def tensorflow_alias(self) -> Optional[str]:
        """The local name the module uses for TensorFlow itself (``tf``, ``tf2``...), if any."""
        return self.imports.alias_for("tf")


if False:  # pragma: no cover - imports for type checkers only
    from tflint_perf.analysis.effects import EffectAnalysis
    from tflint_perf.analysis.pipelines import PipelineAnalysis
