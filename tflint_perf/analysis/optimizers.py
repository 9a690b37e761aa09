"""TensorFlow optimizers as values: whether an expression holds one (``is_optimizer``).

A ``minimize`` / ``apply_gradients`` call is a training step only on a TensorFlow optimizer: scipy's
``optimize.minimize`` and a hand-written solver's ``minimize`` train nothing. An expression counts as
an optimizer only when the analysis can see where it comes from: a call of a Keras or TF1 optimizer
class (``tf.keras.optimizers.Adam(...)``, ``tf.train.AdamOptimizer(...)``, a mixed-precision
``LossScaleOptimizer``, TensorFlow Addons'), a same-file function whose every ``return`` is one, a
Keras model's ``optimizer`` (set by ``compile``), or a name / ``self.attr`` whose every reaching
assignment is one of those. Anything else is unknown, and counts as no optimizer.
"""

from __future__ import annotations

import re
from typing import Optional, Set

import libcst as cst

from tflint_perf.analysis.classes import attribute_values
from tflint_perf.analysis.model import FunctionInfo, ModuleModel, Place

# Canonical names (the alias table's): Keras' optimizers (`tf.keras.optimizers.Adam`, `keras.optimizers.get`),
# TF 2's `tf.optimizers`, mixed precision's wrapper, TensorFlow Addons'.
_OPTIMIZER_MODULES = ("keras.optimizers.", "tf.optimizers.", "tensorflow_addons.optimizers.")
_OPTIMIZER_CLASSES = frozenset({"keras.mixed_precision.LossScaleOptimizer",
                                "keras.mixed_precision.experimental.LossScaleOptimizer"})
# TF1's optimizer classes: `tf.train.AdamOptimizer`, `tf.compat.v1.train.MomentumOptimizer`.
_TF1_OPTIMIZER = re.compile(r"^tf\.(?:compat\.v1\.)?train\.\w*Optimizer$")
_MAX_DEPTH = 6


def builds_optimizer(name: Optional[str]) -> bool:
    """A call of this canonical name returns a TensorFlow optimizer."""
    if name is None:
        return False
    return name.startswith(_OPTIMIZER_MODULES) or name in _OPTIMIZER_CLASSES or bool(_TF1_OPTIMIZER.match(name))


def is_optimizer(model: ModuleModel, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                 depth: int = 0, seen: Optional[Set[FunctionInfo]] = None) -> bool:
    """``expr``, evaluated at ``place`` in ``scope``, holds a TensorFlow optimizer (the module's
    docstring says what evidence counts)."""
    if depth > _MAX_DEPTH:
        return False
    seen = set() if seen is None else seen
    again = lambda e, s, p: is_optimizer(model, e, s, p, depth + 1, seen)  # noqa: E731
    if isinstance(expr, cst.Call):
        if builds_optimizer(model.call_name(expr)):
            return True
        target = model.call_graph.callee(expr)  # type: ignore[attr-defined]  # an AnalysedModule's
        if target is None or target in seen:
            return False
        seen.add(target)  # `get_optimizer(args)` returning `tf.keras.optimizers.Adam(lr)` on every path
        returns = [(r.node.value, r.place) for r in target.returns]
        return bool(returns) and all(value is not None and again(value, target, at) for value, at in returns)
    if isinstance(expr, cst.Name):
        bindings = model.reaching(expr.value, scope, place)
        if scope is not None and model.scope_bindings(expr.value, scope)[0] is None:
            bindings = model.call_graph.globals_when_run(expr.value, scope)  # type: ignore[attr-defined]
        return bool(bindings) and all(
            b.kind == "assign" and b.value is not None and again(b.value, b.scope, b.place) for b in bindings)
    if isinstance(expr, cst.Attribute):
        if expr.attr.value == "optimizer" and model.keras_models.is_model(  # type: ignore[attr-defined]
                expr.value, scope, place):
            return True  # `model.optimizer`: what `compile` set
        owner = scope.owner if scope is not None else None
        if isinstance(expr.value, cst.Name) and expr.value.value == "self" and owner is not None:
            values = attribute_values(model, owner, expr.attr.value)
            # constructor calls, whose meaning does not depend on the method that holds them
            return bool(values) and all(isinstance(value, cst.Call) and again(value, None, place) for value in values)
    return False
