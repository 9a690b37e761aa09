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

PYTHON = "python"
TENSOR = "tensor"
UNKNOWN = "unknown"

# Builtins whose result is a plain Python scalar whatever they are given.
_SCALAR_BUILTINS = frozenset({"float", "int", "bool", "str", "len", "round", "abs", "min", "max", "sum"})
_TENSOR_ROOTS = ("tf.", "keras.")
_MAX_DEPTH = 4


def literal_value(node: cst.BaseExpression) -> bool:
    """A number, string, ``True``/``False``/``None``, or a signed number."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return literal_value(node.expression)
    return False


def combine(kinds: Iterable[str]) -> str:
    """All Python: Python. Any unknown: unknown. Otherwise (tensors, maybe with Python): tensor."""
    kinds = list(kinds)
    if not kinds or UNKNOWN in kinds:
        return UNKNOWN
    return TENSOR if TENSOR in kinds else PYTHON


class ValueKinds:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model

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
            return UNKNOWN
        return UNKNOWN

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
