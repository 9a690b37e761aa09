"""What a function does when TensorFlow runs it: random ops, Python callbacks, state.

Rules ask about the function passed to ``Dataset.map`` (or decorated with ``tf.function``):
is it random per epoch, does it call back into Python, is it provably stateless? The answer
comes from the function's body and the same-file functions it calls, never from its name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Type, TypeVar, Union

import libcst as cst

from tflint_perf.analysis.arguments import argument, has_star_args
from tflint_perf.analysis.classes import method_of
from tflint_perf.analysis.environments import SIMULATOR, environment
from tflint_perf.analysis.model import Binding, ClassInfo, FunctionInfo, ModuleModel, Place
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.unpacking import unpacked_sources

Callable = Union[FunctionInfo, cst.Lambda]
NodeT = TypeVar("NodeT", bound=cst.CSTNode)

PYTHON_CALLBACKS = frozenset({"tf.py_function", "tf.numpy_function", "tf.py_func"})
# Factories of environments simulated in Python: stepping one has no TensorFlow equivalent.
_NOT_RANDOM = frozenset(
    {
        "tf.random.set_seed",
        "tf.random.create_rng_state",
        "tf.random.experimental.create_rng_state",
        "tf.random.experimental.stateless_split",
        "tf.random.experimental.stateless_fold_in",
        "tf.random.experimental.index_shuffle",
    }
)
_STATE_METHODS = frozenset(
    {"assign", "assign_add", "assign_sub", "scatter_update", "scatter_add", "scatter_sub", "scatter_nd_update"}
)
# The methods of a `tf.lookup` table: each runs a stateful op on the table's resource.
_TABLE_METHODS = frozenset({"lookup", "insert", "remove", "export", "size"})
_GENERATOR_METHODS = frozenset(
    {"uniform", "normal", "truncated_normal", "uniform_full_int", "binomial", "make_seeds"}
)
# Builtins that neither call back into user code nor keep state.
_PURE_BUILTINS = frozenset(
    {
        "len", "int", "float", "str", "bool", "tuple", "list", "dict", "set", "range", "zip", "enumerate",
        "isinstance", "min", "max", "abs", "round", "sum", "sorted", "reversed", "getattr", "hasattr",
        "type", "print", "super", "slice", "divmod", "pow", "any", "all", "repr", "format",
    }
)
_MAX_DEPTH = 4


def is_random_op(name: str) -> bool:
    """True for a canonical op name whose result differs from one run (epoch) to the next."""
    if name in _NOT_RANDOM:
        return False
    if name.startswith("tf.random."):
        leaf = name.rsplit(".", 1)[-1]
        return not leaf.startswith("stateless_")
    if name.startswith("tf.image.random_") or name == "tf.nn.dropout":
        return True
    if name.startswith("keras.layers.Random") or name.startswith("keras.random."):
        return True
    return False


@dataclass
class Effects:
    """What running a function can do. ``unknown`` means a call the analysis could not see into."""

    random: bool = False
    python_callbacks: List[cst.Call] = field(default_factory=list)
    variables: bool = False
    python_side_effects: bool = False
    unknown: bool = False
    # A `tf.lookup` table read or written (`LookupTableFindV2` and its kin are stateful ops, so
    # the runtime's map_parallelization leaves such a map sequential).
    tables: bool = False

    @property
    def stateful(self) -> bool:
        return self.random or bool(self.python_callbacks) or self.variables or self.python_side_effects or self.tables

    @property
    def provably_stateless(self) -> bool:
        return not self.stateful and not self.unknown

    def absorb(self, other: "Effects") -> None:
        self.random |= other.random
        self.python_callbacks.extend(c for c in other.python_callbacks if c not in self.python_callbacks)
        self.variables |= other.variables
        self.python_side_effects |= other.python_side_effects
        self.unknown |= other.unknown
        self.tables |= other.tables


class EffectAnalysis:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._memo: Dict[object, Effects] = {}
        self._in_progress: Set[object] = set()
        self._attributes_following: Set[tuple] = set()  # (class, attribute) pairs being followed
        self._unpacking: Set[int] = set()  # unpacking bindings being followed
        self._parameters_following: Set[tuple] = set()  # (function, parameter) pairs being followed

    # -- which function does an expression denote ------------------------------------------
    def resolve_callable(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo],
                         local_only: bool = False, place: Optional[Place] = None) -> Optional[Callable]:
        """The function an expression denotes: a lambda, a def, ``self.method``, ``obj.method`` of
        an object built from a known class, or ``functools.partial(f, ...)``; in a project session also
        a function imported from another first-party module (unless ``local_only``). None when it
        cannot be known. ``place``: where a module-level use is (the ``def`` in effect there)."""
        if isinstance(expr, cst.Lambda):
            return expr
        if isinstance(expr, cst.Name):
            found = self.model.lookup_function(expr.value, scope, place)
            if found is None:
                lam = self._named_lambda(expr.value, scope)
                if lam is not None:
                    return lam
            if found is None and not local_only:
                foreign = self.model.foreign(expr, scope)
                found = foreign if isinstance(foreign, FunctionInfo) else None
            return found
        if isinstance(expr, cst.Attribute) and _is_self(expr.value) and scope is not None:
            owner = scope.owner
            if owner is not None:
                return method_of(self.model, owner, expr.attr.value, local_only)  # its own, or a base's
            return None
        if isinstance(expr, cst.Call) and self.model.call_name(expr) == "functools.partial" and expr.args:
            return self.resolve_callable(expr.args[0].value, scope, local_only)
        if isinstance(expr, cst.Attribute):
            foreign = self.model.foreign(expr, scope) if not local_only else None
            if isinstance(foreign, FunctionInfo):
                return foreign
            classes = self._classes_of_object(expr.value, scope, place)
            if not classes or (local_only and any(cls.model not in (None, self.model) for cls in classes)):
                return None
            # `agent = DDQNAgent(...)` or `agent = DQNAgent(...)`: one method when every class has the same
            # (`act`, defined once in the base both share)
            methods = {id(found): found for found in (method_of(cls.model or self.model, cls, expr.attr.value, local_only)
                                                      for cls in classes)}
            return next(iter(methods.values())) if len(methods) == 1 else None
        return None

    def steps_simulator(self, target: Callable) -> bool:
        """The function calls a method of an environment made by a Python simulator (``env = gym.make(...)``,
        then ``env.step(action)``): work that no TensorFlow op can do. Judged from the factory that
        made the receiver (``environments.SIMULATOR``), never from its name."""
        node = target if isinstance(target, cst.Lambda) else target.node
        scope = self._scope_of_lambda(target) if isinstance(target, cst.Lambda) else target
        return any(isinstance(call.func, cst.Attribute) and environment(self.model, call.func.value, scope) == SIMULATOR
                   for call in _calls_within(node))

    def only_sleeps(self, target: Callable) -> bool:
        """Every call the function makes is ``time.sleep``: a deliberate delay (a benchmark simulating
        slow work), not computation that TensorFlow ops could do."""
        if "time" not in self.model.imports.modules:
            return False
        node = target if isinstance(target, cst.Lambda) else target.node
        calls = [call for call in _calls_within(node) if not (isinstance(target, FunctionInfo) and _is_decorator_call(target, call))]
        return bool(calls) and all(dotted_text(call.func) == "time.sleep" for call in calls)

    def _named_lambda(self, name: str, scope: Optional[FunctionInfo]) -> Optional[cst.Lambda]:
        """The lambda a name is bound to, when it is its only binding (AutoAugment's
        ``wrapped_shift_bbox = lambda bbox: _shift_bbox(bbox, ...)`` handed to ``tf.map_fn``)."""
        _, bindings = self.model.scope_bindings(name, scope)
        if len(bindings) == 1 and bindings[0].kind == "assign" and isinstance(bindings[0].value, cst.Lambda):
            return bindings[0].value
        return None

    def class_of_object(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo]) -> Optional[ClassInfo]:
        """The class a local name's object was built from: every binding of it is ``Cls(...)`` of one
        known class (of this module, or imported from another first-party one). ``self.attr`` is
        followed too: every assignment of it is ``Cls(...)``, or a parameter of ``__init__`` that every
        construction of the owner in this module passes such an object for (``A2CAgent(model)`` with
        ``model = Model(...)``)."""
        classes = self._classes_of_object(expr, scope)
        return classes[0] if classes is not None and len(classes) == 1 else None

    def _classes_of_object(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo],
                           place: Optional[Place] = None) -> Optional[List[ClassInfo]]:
        """The known classes a name's object may have been built from (each binding ``Cls(...)``, or a
        parameter every same-file caller passes such an object for: ``play_one_episode(agent, env)`` with
        ``agent = DQNAgent(...)``), or ``self.attr``'s one class; None when any binding is something else.
        Where some binding of the name is something else, the bindings reaching ``place`` (if given)
        decide: a loop variable reused (``for m in range(2)``, then ``for m in models``)."""
        found = self._classes_bound(expr, scope, None)
        if found is None and place is not None and isinstance(expr, cst.Name):
            found = self._classes_bound(expr, scope, place)
        return found

    def _classes_bound(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo],
                       place: Optional[Place]) -> Optional[List[ClassInfo]]:
        if isinstance(expr, cst.Attribute) and _is_self(expr.value) and scope is not None and scope.owner is not None:
            cls = self._class_of_attribute(scope.owner, expr.attr.value)
            return [cls] if cls is not None else None
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            return self._element_classes(expr.value, scope)  # `models[m].train(...)`
        if not isinstance(expr, cst.Name):
            return None
        if place is None:
            _, bindings = self.model.scope_bindings(expr.value, scope)
        else:
            bindings = self.model.reaching(expr.value, scope, place) or []
        found: List[ClassInfo] = []
        for binding in bindings:
            if binding.kind == "for" and binding.value is not None:
                # `for m in models`, `for i, m in enumerate(models)`: an element of a list of objects
                iterable = binding.value
                if binding.path == (1,) and isinstance(iterable, cst.Call) and dotted_text(iterable.func) == "enumerate" \
                        and len(iterable.args) == 1:
                    iterable = iterable.args[0].value
                elif binding.path != ():
                    return None
                more = self._element_classes(iterable, binding.scope)
                if more is None:
                    return None
                found += [cls for cls in more if not any(known is cls for known in found)]
                continue
            if binding.kind == "unpack":
                # `agent, train = setup_agent(env, args)`, whose `return agent, train` says which object
                more = self._classes_unpacked(binding)
                if more is None:
                    return None
                found += [cls for cls in more if not any(known is cls for known in found)]
                continue
            if binding.kind == "param":
                more = self._classes_passed(binding)
                if more is None:
                    return None
                found += [cls for cls in more if not any(known is cls for known in found)]
                continue
            cls = self._constructed(binding.value, scope) if binding.kind == "assign" else None
            if cls is None:
                return None
            if not any(known is cls for known in found):
                found.append(cls)
        return found or None

    def _constructed(self, value: Optional[cst.BaseExpression], scope: Optional[FunctionInfo]) -> Optional[ClassInfo]:
        """The known class ``value`` (``Cls(...)``) builds an object of."""
        if not isinstance(value, cst.Call):
            return None
        cls = self.model.classes.get(value.func.value) if isinstance(value.func, cst.Name) else None
        if cls is None:
            foreign = self.model.foreign(value.func, scope)
            cls = foreign if isinstance(foreign, ClassInfo) else None
        return cls

    def _element_classes(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo]) -> Optional[List[ClassInfo]]:
        """The classes of a list's objects: a name bound only to lists of ``Cls(...)`` (``models = []``
        included), filled by ``models.append(Cls(...))`` in its scope; None when anything else goes in."""
        if not isinstance(expr, cst.Name):
            return None
        # The appends that count are those on this list wherever it is seen (a module's list may be read
        # in one function and filled at module level or in another).
        owner, bindings = self.model.scope_bindings(expr.value, scope)
        values: List[cst.BaseExpression] = []
        for binding in bindings:
            if binding.kind != "assign" or not isinstance(binding.value, cst.List):
                return None
            values += [element.value for element in binding.value.elements]
        for site in self.model.calls:
            func = site.node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == expr.value \
                    and self.model.scope_bindings(expr.value, site.function)[0] is owner:
                if func.attr.value != "append" or len(site.node.args) != 1:
                    return None  # `models.extend(...)`, `models.insert(...)`: not followed
                values.append(site.node.args[0].value)
        found: List[ClassInfo] = []
        for value in values:
            cls = self._constructed(value, scope)
            if cls is None:
                return None
            if not any(known is cls for known in found):
                found.append(cls)
        return found or None

    def _classes_passed(self, binding: Binding) -> Optional[List[ClassInfo]]:
        """The classes of the objects that every call of a plain function by its name in this module passes
        for one of its parameters (the call graph is built with this answer, so its callers are found
        here); None without such a call, or when a call passes anything else."""
        function = binding.scope
        key = (id(function), binding.name)
        if function is None or function.owner is not None or key in self._parameters_following:
            return None
        positional = function.positional_parameters
        index = positional.index(binding.name) if binding.name in positional else None
        self._parameters_following.add(key)
        try:
            found: List[ClassInfo] = []
            for site in self.model.calls:
                func = site.node.func
                if not isinstance(func, cst.Name) or func.value != function.name \
                        or self.model.lookup_function(func.value, site.function, site.place) is not function:
                    continue
                passed = None if has_star_args(site.node) else argument(site.node, binding.name, index)
                more = self._classes_of_object(passed.value, site.function) if passed is not None else None
                if more is None:
                    return None
                found += [cls for cls in more if not any(known is cls for known in found)]
            return found or None
        finally:
            self._parameters_following.discard(key)

    def _classes_unpacked(self, binding: Binding) -> Optional[List[ClassInfo]]:
        key = id(binding)
        if key in self._unpacking:
            return None  # `a, _ = a.step()`: a cycle says nothing
        self._unpacking.add(key)
        try:
            # parameters are not followed: their callers come from the call graph, built with this answer
            sources = unpacked_sources(self.model, binding, parameters=False)
            found: List[ClassInfo] = []
            for source in sources or []:
                if isinstance(source.expr, cst.Call) and isinstance(source.expr.func, cst.Name) \
                        and source.expr.func.value in self.model.classes:
                    more: Optional[List[ClassInfo]] = [self.model.classes[source.expr.func.value]]
                else:
                    more = self._classes_of_object(source.expr, source.scope)
                if more is None:
                    return None
                found += more
            return found or None
        finally:
            self._unpacking.discard(key)

    def _class_of_attribute(self, owner: ClassInfo, attr: str) -> Optional[ClassInfo]:
        key = (owner.name, attr)
        if key in self._attributes_following:
            return None  # `A(self.b)` in B and `B(self.a)` in A: a cycle says nothing
        self._attributes_following.add(key)
        try:
            return self._class_of_attribute_values(owner, attr)
        finally:
            self._attributes_following.discard(key)

    def _class_of_attribute_values(self, owner: ClassInfo, attr: str) -> Optional[ClassInfo]:
        values = owner.attributes.get(attr, [])
        init = owner.methods.get("__init__")
        found: Optional[ClassInfo] = None
        for value in values:
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                cls = self.model.classes.get(value.func.value)
            elif isinstance(value, cst.Name) and init is not None and value.value in init.positional_parameters:
                cls = self._class_passed(owner, init.positional_parameters.index(value.value), value.value)
            else:
                return None
            if cls is None or (found is not None and cls is not found):
                return None
            found = cls
        return found

    def _class_passed(self, owner: ClassInfo, index: int, param: str) -> Optional[ClassInfo]:
        """The one class of the objects every ``Owner(...)`` call of this module passes for a parameter."""
        found: Optional[ClassInfo] = None
        constructions = [site for site in self.model.calls
                         if isinstance(site.node.func, cst.Name) and site.node.func.value == owner.name]
        for site in constructions:
            value = argument(site.node, param, index)
            if value is None or value.star:
                return None
            passed = value.value
            if isinstance(passed, cst.Call) and isinstance(passed.func, cst.Name):
                cls = self.model.classes.get(passed.func.value)  # `Agent(Policy())`
            else:
                cls = self.class_of_object(passed, site.function)
            if cls is None or (found is not None and cls is not found):
                return None
            found = cls
        return found

    # -- what does a function do ------------------------------------------------------------
    def of_expression(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo]) -> Effects:
        """Effects of calling the function an expression denotes (unknown if unresolvable)."""
        api = self.model.resolve(expr)
        if api is not None:  # a TensorFlow API passed as the function, e.g. tf.data.TFRecordDataset
            return _effects_of_api(api, None)
        target = self.resolve_callable(expr, scope)
        if target is None:
            effects = Effects(unknown=True)
            if isinstance(expr, cst.Name):
                effects = self._effects_of_callable_value(expr.value) or effects
            return effects
        return self.of_callable(target)

    def of_callable(self, target: Callable, depth: int = 0) -> Effects:
        owner = target.model if isinstance(target, FunctionInfo) else None
        if owner is not None and owner is not self.model:
            return owner.effects.of_callable(target, depth)  # another module's function: its own analysis
        if target in self._memo:
            return self._memo[target]
        if target in self._in_progress or depth > _MAX_DEPTH:
            return Effects()
        self._in_progress.add(target)
        try:
            effects = Effects()
            if isinstance(target, FunctionInfo) and target.declares_global:
                effects.python_side_effects = True
            scope = target if isinstance(target, FunctionInfo) else self._scope_of_lambda(target)
            for site in self.model.calls_in(target):
                effects.absorb(self._effects_of_call(site.node, scope, depth))
        finally:
            self._in_progress.discard(target)
        self._memo[target] = effects
        return effects

    def _scope_of_lambda(self, node: cst.Lambda) -> Optional[FunctionInfo]:
        sites = self.model.calls_in_lambda.get(node)
        return sites[0].function if sites else None

    def _effects_of_call(self, call: cst.Call, scope: Optional[FunctionInfo], depth: int) -> Effects:
        name = self.model.call_name(call)
        if name is not None:
            return _effects_of_api(name, call)
        func = call.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _STATE_METHODS:
                return Effects(variables=True)
            if method in _TABLE_METHODS and self.is_lookup_table(func.value, scope):
                return Effects(tables=True)
            if _is_self(func.value) and scope is not None:
                owner = scope.owner
                if owner is not None and method in owner.methods:
                    return self.of_callable(owner.methods[method], depth + 1)
                if owner is not None and method in owner.attributes:
                    return _effects_of_values(self.model, owner.attributes[method])
                return Effects(unknown=True)
            if method in _GENERATOR_METHODS and self.model.resolve(func.value) is None:
                return Effects(random=True)
            imported = self.model.foreign(func, scope)
            if isinstance(imported, FunctionInfo):  # `augment.flip(x)`: a function of another module
                return self.of_callable(imported, depth + 1)
            receiver = func.value
            if isinstance(receiver, cst.Call) and self.model.call_name(receiver) is not None:
                return _effects_of_api(self.model.call_name(receiver) or "", receiver)
            return Effects()  # a method of a tensor or other local value
        if isinstance(func, cst.Name):
            target = self.model.lookup_function(func.value, scope)
            if target is not None:
                return self.of_callable(target, depth + 1)
            if func.value in _PURE_BUILTINS:
                return Effects()
            imported = self.model.foreign(func, scope)
            if isinstance(imported, FunctionInfo):
                return self.of_callable(imported, depth + 1)
            from_module_value = self._effects_of_callable_value(func.value)
            if from_module_value is not None:
                return from_module_value
            from_local_value = self._effects_of_local_value(func.value, scope)
            if from_local_value is not None:
                return from_local_value
        return Effects(unknown=True)

    def is_lookup_table(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], depth: int = 0) -> bool:
        """``expr`` is a ``tf.lookup`` table: built by a table factory where it is bound, in this scope,
        an enclosing one, ``self.<attr>`` in a method, or passed for a parameter by every same-file
        caller (yolov3-tf2's ``parse_tfrecord(x, class_table, size)``, ``class_table =
        tf.lookup.StaticHashTable(...)``). False when unsure."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Call):
            return _makes_lookup_table(self.model.call_name(expr) or "")
        if isinstance(expr, cst.Attribute) and _is_self(expr.value) and scope is not None:
            owner = scope.owner
            values = owner.attributes.get(expr.attr.value, []) if owner is not None else []
            return bool(values) and all(self.is_lookup_table(value, scope, depth + 1) for value in values)
        if not isinstance(expr, cst.Name):
            return False
        found_scope, bindings = self.model.scope_bindings(expr.value, scope)
        if not bindings:
            return False
        if all(binding.kind == "assign" and binding.value is not None for binding in bindings):
            return all(self.is_lookup_table(b.value, found_scope, depth + 1) for b in bindings)  # type: ignore[arg-type]
        if found_scope is None or any(binding.kind != "param" for binding in bindings):
            return False
        callers = self.model.call_graph.callers(found_scope)  # type: ignore[attr-defined]
        positional = found_scope.positional_parameters
        index = positional.index(expr.value) if expr.value in positional else None
        passed = [argument(site.node, expr.value, index) for site in callers]
        return bool(callers) and all(
            arg is not None and not has_star_args(site.node) and self.is_lookup_table(arg.value, site.function, depth + 1)
            for arg, site in zip(passed, callers)
        )

    def _effects_of_local_value(self, name: str, scope: Optional[FunctionInfo]) -> Optional[Effects]:
        """A local object being called, e.g. ``augment = keras.Sequential([...])`` in the function
        that builds the pipeline; only when every binding of the name is such an assignment."""
        found_scope, bindings = self.model.scope_bindings(name, scope)
        if found_scope is None or not bindings or any(b.kind != "assign" or b.value is None for b in bindings):
            return None
        return _effects_of_values(self.model, [b.value for b in bindings])  # type: ignore[misc]

    def _effects_of_callable_value(self, name: str) -> Optional[Effects]:
        """A module-level object being called, e.g. ``augment = keras.Sequential([RandomFlip()])``."""
        value = self.model.module_values.get(name)
        if value is None:
            return None
        return _effects_of_values(self.model, [value])


def _makes_lookup_table(name: str) -> bool:
    """``tf.lookup.StaticHashTable``, ``tf.lookup.StaticVocabularyTable``,
    ``tf.lookup.experimental.DenseHashTable``, TF1's ``tf.contrib.lookup.index_table_from_file``."""
    if not name.startswith(("tf.lookup.", "tf.contrib.lookup.")):
        return False
    leaf = name.rsplit(".", 1)[-1]
    return leaf.endswith("Table") or "_table_from_" in leaf


def _effects_of_api(name: str, call: Optional[cst.Call]) -> Effects:
    if name in PYTHON_CALLBACKS:
        return Effects(python_callbacks=[call] if call is not None else [])
    if is_random_op(name):
        return Effects(random=True)
    if name == "tf.Variable":
        return Effects(variables=True)
    if name.startswith(("tf.", "keras.", "tfds.", "numpy.")) or name == "functools.partial":
        return Effects()
    return Effects(unknown=True)


def _effects_of_values(model: ModuleModel, values: List[cst.BaseExpression]) -> Effects:
    """Effects of calling an object built by one of ``values`` (a Keras layer or model)."""
    effects = Effects()
    for value in values:
        if not isinstance(value, cst.Call):
            effects.unknown = True
            continue
        for call in _calls_within(value):
            name = model.call_name(call)
            if name is None:
                effects.unknown = True
            elif is_random_op(name):
                effects.random = True
            elif not name.startswith("keras."):
                effects.unknown = True
    return effects


def nodes_within(node: cst.CSTNode, kind: Type[NodeT]) -> List[NodeT]:
    """The nodes of one kind in a tree (``node`` included)."""
    found: List[NodeT] = []
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, kind):
            found.append(current)
        stack.extend(current.children)
    return found


def _calls_within(node: cst.CSTNode) -> List[cst.Call]:
    return nodes_within(node, cst.Call)


def _is_decorator_call(function: FunctionInfo, call: cst.Call) -> bool:
    return any(_contains(decorator, call) for decorator in function.node.decorators)


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(current is node for current in _calls_within(tree))


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


__all__ = ["Effects", "EffectAnalysis", "PYTHON_CALLBACKS", "is_random_op", "FrozenSet"]
