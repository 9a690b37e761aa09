"""What kind of value an expression holds: a plain Python value, a TensorFlow value, or unknown.

Rules need this to tell a hyperparameter fed to a session (``lr = 0.01``) from a batch of data,
and a Python flag (``if use_bn``, ``tf.cond(True, ...)``) from a tensor predicate. A name's kind
comes from the bindings that reach the use (``x = 0.5`` two lines earlier, a parameter default,
``for i in range(n)``), never from how the name is spelled.
"""

from __future__ import annotations

from typing import FrozenSet, Iterable, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.model import Binding, FunctionInfo, ModuleModel, Place
from tflint_perf.analysis.tf_functions import TfFunctions

PYTHON = "python"
TENSOR = "tensor"
UNKNOWN = "unknown"

# Builtins whose result is a plain Python scalar whatever they are given.
_SCALAR_BUILTINS = frozenset({"float", "int", "bool", "str", "len", "round", "abs", "min", "max", "sum"})
_TENSOR_ROOTS = ("tf.", "keras.")
_MAX_DEPTH = 4
# At most this many distinct values: a function keyed on them traces at most this many times in all.
FEW_VALUES = 4
_BOOLEAN = ("<a boolean>",)  # stands for both truth values in a set of possible values
_SAVED_MODEL_LOADERS = frozenset({"tf.saved_model.load", "tf.compat.v2.saved_model.load"})
_TENSORS = frozenset({"<tensors>"})  # a tf.function's outputs: traced for by shape and dtype, one value


def literal_value(node: cst.BaseExpression) -> bool:
    """A number, string, ``True``/``False``/``None``, or a signed number."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return literal_value(node.expression)
    return False


def _literal_collection(node: cst.BaseExpression) -> bool:
    """A list or tuple written out of literals (``[0.75, 1.0]``): one Python value, as a literal is."""
    return isinstance(node, (cst.List, cst.Tuple)) and all(
        not isinstance(element, cst.StarredElement) and literal_value(element.value) for element in node.elements)


def _config_lookup(call: cst.Call) -> bool:
    """``params.get('iter_size', 1)``: a setting read by name from a configuration dict, with a number
    or boolean as its default, is a Python number or boolean like its default."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "get" or len(call.args) != 2:
        return False
    key, default = call.args
    if key.keyword is not None or key.star or default.star or not isinstance(key.value, cst.SimpleString):
        return False
    value = default.value
    if isinstance(value, cst.Name):
        return value.value in ("True", "False")
    return literal_value(value) and not isinstance(value, (cst.SimpleString, cst.ConcatenatedString))


def combine(kinds: Iterable[str]) -> str:
    """All Python: Python. Any unknown: unknown. Otherwise (tensors, maybe with Python): tensor."""
    kinds = list(kinds)
    if not kinds or UNKNOWN in kinds:
        return UNKNOWN
    return TENSOR if TENSOR in kinds else PYTHON


class ValueKinds:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._tf_functions: Optional[TfFunctions] = None

    def kind(
        self,
        expr: cst.BaseExpression,
        scope: Optional[FunctionInfo],
        place: Place,
        lambdas: Tuple[cst.Lambda, ...] = (),
        tensor_names: FrozenSet[str] = frozenset(),
        depth: int = 0,
    ) -> str:
        """PYTHON, TENSOR or UNKNOWN for ``expr`` evaluated at ``place`` in ``scope``.

        ``tensor_names`` are names known to hold tensors there (the element parameters of a
        function passed to ``Dataset.map``)."""
        if depth > _MAX_DEPTH:
            return UNKNOWN
        again = lambda e: self.kind(e, scope, place, lambdas, tensor_names, depth + 1)  # noqa: E731
        if literal_value(expr):
            return PYTHON
        if isinstance(expr, cst.Name):
            if expr.value in tensor_names:
                return TENSOR
            bindings = self.model.reaching(expr.value, scope, place, lambdas)
            if not bindings:
                return UNKNOWN
            return combine(self._binding_kind(b, depth + 1) for b in bindings)
        if isinstance(expr, cst.Attribute):
            if self.model.resolve(expr) is not None:
                return PYTHON  # a module constant such as tf.float32 or np.pi
            return UNKNOWN
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return PYTHON if again(expr.expression) == PYTHON else UNKNOWN
            return again(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            return combine([again(expr.left), again(expr.right)])
        if isinstance(expr, cst.Comparison):
            return combine([again(expr.left)] + [again(target.comparator) for target in expr.comparisons])
        if isinstance(expr, cst.BooleanOperation):
            return PYTHON if again(expr.left) == PYTHON and again(expr.right) == PYTHON else UNKNOWN
        if isinstance(expr, (cst.List, cst.Tuple)):
            kinds = [again(el.value) for el in expr.elements if not isinstance(el, cst.StarredElement)]
            return PYTHON if kinds and all(k == PYTHON for k in kinds) else UNKNOWN
        if isinstance(expr, cst.Call):
            name = self.model.call_name(expr)
            if name is not None:
                return TENSOR if name.startswith(_TENSOR_ROOTS) else UNKNOWN
            if isinstance(expr.func, cst.Name) and expr.func.value in _SCALAR_BUILTINS:
                if self.model.lookup_function(expr.func.value, scope) is None:
                    return PYTHON
            if _config_lookup(expr):
                return PYTHON
            return UNKNOWN
        return UNKNOWN

    def few_values(
        self,
        expr: cst.BaseExpression,
        scope: Optional[FunctionInfo],
        place: Place,
        lambdas: Tuple[cst.Lambda, ...] = (),
    ) -> bool:
        """Whether ``expr`` takes at most ``FEW_VALUES`` distinct Python values however often it is
        evaluated: a literal (a list or tuple of literals too: ``scale = GLOBAL_SCALE``, ``[0.75, 1.0]``),
        a boolean (a comparison, ``not``, ``and``/``or`` of those), or a name every binding of which, wherever it may reach this use from, is one of those (``first_batch =
        True`` before a loop and ``first_batch = False`` in it: two values in all; ``phase = "warmup"`` /
        ``phase = "train"``). A counter, an accumulated float or a parameter is not: each iteration
        may bring a new value."""
        values = self._possible_values(expr, scope, place, lambdas)
        if values is None:
            return False
        return len({v for v in values if v is not _BOOLEAN[0]}) + (2 if _BOOLEAN[0] in values else 0) <= FEW_VALUES

    def _possible_values(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                         lambdas: Tuple[cst.Lambda, ...], depth: int = 0) -> Optional[FrozenSet[object]]:
        """The values ``expr`` may take (``_BOOLEAN`` for either truth value), or None when unbounded or unknown."""
        if depth > _MAX_DEPTH:
            return None
        if literal_value(expr) or _literal_collection(expr):
            return frozenset({self.model.module.code_for_node(expr)})
        if self._is_boolean(expr, scope, place, lambdas):
            return frozenset(_BOOLEAN)
        if not isinstance(expr, cst.Name):
            return None
        if self.model.reaching(expr.value, scope, place, lambdas) is None:
            return None  # a lambda's parameter
        # Every binding of the name in its scope, not only those reaching from above: in a loop, one
        # later in the body reaches the next iteration (`first_batch = False` after the call).
        _, bindings = self.model.scope_bindings(expr.value, scope)
        if not bindings:
            return None
        values: FrozenSet[object] = frozenset()
        for binding in bindings:
            if self._returned_by_tf_function(binding):
                values |= _TENSORS  # `states = None`, then the step's own returned state: two traces in all
                continue
            if binding.kind != "assign" or binding.value is None:
                return None
            more = self._possible_values(binding.value, binding.scope, binding.place, (), depth + 1)
            if more is None:
                return None
            values |= more
        return values

    def _returned_by_tf_function(self, binding: Binding) -> bool:
        """The name is bound (or unpacked) from what a ``tf.function`` returns: tensors, which a
        ``tf.function`` traces for by shape and dtype, never by value (``next_char, states =
        model.generate_one_step(next_char, states=states)``)."""
        if binding.kind not in ("assign", "unpack") or not isinstance(binding.value, cst.Call):
            return False
        site = self.model.site_of(binding.value)
        if site is None:
            return False
        if self._calls_saved_model(binding.value, site):
            return True
        if self._tf_functions is None:
            self._tf_functions = TfFunctions(self.model)
        return self._tf_functions.called(site) is not None

    def _calls_saved_model(self, call: cst.Call, site) -> bool:
        """``reloaded.generate_one_step(...)`` where ``reloaded = tf.saved_model.load(path)``: a restored
        SavedModel's functions are concrete graph functions that return tensors."""
        func = call.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return False
        bindings = self.model.reaching(func.value.value, site.function, site.place, site.lambdas)
        return bool(bindings) and all(
            b.kind == "assign" and isinstance(b.value, cst.Call) and self.model.call_name(b.value) in _SAVED_MODEL_LOADERS
            for b in bindings
        )

    def _is_boolean(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                    lambdas: Tuple[cst.Lambda, ...]) -> bool:
        """A comparison or ``not`` (a Python boolean, or a tensor, which is never a new value to trace),
        or ``and``/``or`` of those and of ``True``/``False`` (``x or default`` is not: it yields ``x``)."""
        if isinstance(expr, cst.Comparison) or (isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not)):
            return True
        if isinstance(expr, cst.BooleanOperation):
            return all(
                (isinstance(side, cst.Name) and side.value in ("True", "False")) or self._is_boolean(side, scope, place, lambdas)
                for side in (expr.left, expr.right)
            )
        return False

    def _binding_kind(self, binding: Binding, depth: int) -> str:
        value = binding.value
        if binding.kind in ("assign", "augassign") and value is not None:
            return self.kind(value, binding.scope, binding.place, depth=depth)
        if binding.kind == "unpack" and isinstance(value, (cst.Tuple, cst.List)) and len(binding.path) == 1:
            index = binding.path[0]
            if index < len(value.elements):
                return self.kind(value.elements[index].value, binding.scope, binding.place, depth=depth)
            return UNKNOWN
        if binding.kind == "param":
            is_none = isinstance(value, cst.Name) and value.value == "None"
            if value is not None and literal_value(value) and not is_none:
                return PYTHON
            return UNKNOWN
        if binding.kind == "for" and isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            if value.func.value == "range" and not binding.path:
                return PYTHON
            if value.func.value == "enumerate" and binding.path[:1] == (0,):
                return PYTHON
        return UNKNOWN
