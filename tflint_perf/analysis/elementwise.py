"""Cheap element-wise expressions: what ``tf.where`` can compute in place of a branch.

``elementwise_leaves`` answers, for an expression such as ``x * 2.0`` or ``tf.minimum(loss, 1.0)``,
which tensors it is built from (its shape is theirs, by broadcasting), or None when it is not a
cheap, side-effect-free, element-wise expression of known shape: any call that is not on the
allow-list (a model, a layer, ``matmul``, ``assign``, ``tf.print``, ``py_function``,
``tf.debugging.assert_*``), slicing, tuples, and ops that can make NaN or infinity (division by a
tensor, ``log``, ``sqrt``, ``exp``, ``pow``), around which a condition is usually a guard.
``about_shapes_or_nan`` spots predicates about shapes and sizes, or NaN / infinity tests;
``about_step_counter`` spots predicates on a training-step counter (``global_step < warmup_steps``).
"""

from __future__ import annotations

import re
from typing import FrozenSet, List, Optional

import libcst as cst

from tflint_perf.analysis.module import CallSite, ModuleModel
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.values import PYTHON, ValueKinds

_LEAVES = (
    "abs", "negative", "square", "maximum", "minimum", "clip_by_value", "cast", "identity", "sign", "round",
    "floor", "ceil", "add", "subtract", "multiply", "tanh", "sigmoid", "logical_and", "logical_or",
    "logical_not", "logical_xor", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
    "stop_gradient", "zeros_like", "ones_like", "squared_difference",
)
# Element-wise, shape-preserving ops that cannot produce NaN or infinity (division, log, sqrt, exp
# and pow are left out: a cond around them is usually a guard, and tf.where would poison gradients).
ELEMENTWISE = frozenset(
    [f"tf.{leaf}" for leaf in _LEAVES] + [f"tf.math.{leaf}" for leaf in _LEAVES]
    + ["tf.nn.relu", "tf.nn.relu6", "tf.nn.leaky_relu", "tf.nn.elu", "tf.nn.sigmoid", "tf.nn.tanh"]
)
_SHAPE_CALLS = frozenset({"tf.shape", "tf.size", "tf.rank", "tf.shape_n"})
# A predicate testing for NaN or infinity guards the computation: tf.where would let the NaN reach gradients.
_GUARD_CALLS = frozenset(
    {"tf.math.is_finite", "tf.math.is_nan", "tf.math.is_inf", "tf.is_finite", "tf.is_nan", "tf.is_inf"}
)
_SHAPE_ATTRIBUTES = frozenset({"shape", "get_shape", "ndim", "rank", "dtype"})
_SAFE_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.BitAnd, cst.BitOr, cst.BitXor)


def elementwise_leaves(
    model: ModuleModel, values: ValueKinds, expr: cst.BaseExpression, site: CallSite
) -> Optional[FrozenSet[str]]:
    """The tensors a cheap element-wise expression is built from (its shape is theirs), or None
    when the expression is not cheap, not element-wise or not side-effect-free."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return frozenset()
    if isinstance(expr, (cst.Name, cst.Attribute)):
        if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
            return frozenset()
        if isinstance(expr, cst.Name) and expr.value == "None":
            return None
        if model.resolve(expr) is not None:
            return frozenset()  # tf.float32, np.pi
        if isinstance(expr, cst.Name) and values.kind(expr, site.function, site.place, site.lambdas) == PYTHON:
            return frozenset()
        text = dotted_text(expr)
        return frozenset({text}) if text is not None else None
    again = lambda e: elementwise_leaves(model, values, e, site)  # noqa: E731
    if isinstance(expr, cst.UnaryOperation):
        return again(expr.expression) if isinstance(expr.operator, (cst.Minus, cst.Plus, cst.BitInvert)) else None
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, _SAFE_OPERATORS):
            return _union([again(expr.left), again(expr.right)])
        if isinstance(expr.operator, (cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)):
            if _nonzero_number(expr.right):
                return again(expr.left)
        return None
    if isinstance(expr, cst.Comparison):
        return _union([again(expr.left)] + [again(target.comparator) for target in expr.comparisons])
    if isinstance(expr, cst.Call):
        name = model.call_name(expr)
        if name in ("tf.constant", "tf.convert_to_tensor") and expr.args:
            first = expr.args[0].value
            return frozenset() if isinstance(first, (cst.Integer, cst.Float)) else None
        if name not in ELEMENTWISE:
            return None
        parts: List[Optional[FrozenSet[str]]] = []
        for arg in expr.args:
            if arg.star:
                return None
            leaves = again(arg.value)
            if arg.keyword is not None and leaves:
                return None  # only constants (dtype=, name=) by keyword
            parts.append(leaves)
        return _union(parts)
    return None


def _union(parts: List[Optional[FrozenSet[str]]]) -> Optional[FrozenSet[str]]:
    if any(part is None for part in parts):
        return None
    result: FrozenSet[str] = frozenset()
    for part in parts:
        result |= part  # type: ignore[operator]
    return result


def _nonzero_number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float)):
        try:
            return float(expr.value.replace("_", "")) != 0
        except ValueError:
            return False
    return False


def about_shapes_or_nan(model: ModuleModel, pred: cst.BaseExpression) -> bool:
    """The predicate is about shapes or sizes, or tests for NaN / infinity."""
    stack: List[cst.CSTNode] = [pred]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            name = model.call_name(current)
            if name in _SHAPE_CALLS or name in _GUARD_CALLS or (name or "").startswith("tf.debugging."):
                return True
            if isinstance(current.func, cst.Name) and current.func.value == "len":
                return True
        if isinstance(current, cst.Attribute) and current.attr.value in _SHAPE_ATTRIBUTES:
            return True
        stack.extend(current.children)
    return False


# The last part of a name that counts training steps: global_step, step, optimizer.iterations, epoch.
_STEP_COUNTER = re.compile(r"(?:^|_)(?:step|steps|iteration|iterations|epoch|epochs)$", re.IGNORECASE)


def about_step_counter(pred: cst.BaseExpression) -> bool:
    """The predicate reads a training-step counter (``global_step < warmup_steps``,
    ``optimizer.iterations > 100``): it is known when the step starts, as in learning-rate schedules."""
    stack: List[cst.CSTNode] = [pred]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            stack.extend(arg.value for arg in current.args)  # not the callee's own name (tf.math.less)
            continue
        if isinstance(current, cst.Name) and _STEP_COUNTER.search(current.value):
            return True
        if isinstance(current, cst.Attribute):
            if _STEP_COUNTER.search(current.attr.value):
                return True
            stack.append(current.value)
            continue
        stack.extend(current.children)
    return False
