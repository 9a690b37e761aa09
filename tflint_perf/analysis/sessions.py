"""TF1 sessions: is the receiver of ``.run(...)`` a ``tf.Session``?

A receiver is a session when what it is bound to says so: ``sess = tf.Session()``,
``with tf.compat.v1.Session() as sess:``, ``self.sess = tf.InteractiveSession()``,
``tf.train.MonitoredTrainingSession(...)``, ``tf.get_default_session()``, or a same-file helper
returning one. When nothing binds it in this file (a parameter, an attribute set elsewhere), a
name such as ``sess``, ``session`` or ``mon_sess`` is taken as a session. A binding to anything
else (``onnxruntime.InferenceSession(...)``) means it is not one.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from tflint_perf.analysis.module import Binding, CallSite, FunctionInfo, ModuleModel, Place

SESSION_FACTORIES = frozenset(
    {
        "tf.Session",
        "tf.InteractiveSession",
        "tf.train.MonitoredTrainingSession",
        "tf.train.MonitoredSession",
        "tf.train.SingularMonitoredSession",
        "tf.get_default_session",
        "keras.backend.get_session",
    }
)
SESSION_NAME = re.compile(r"(?:^|_)(?:mon|tf|train|eval|test|my)?(?:sess|session)\d*(?:_|$)", re.IGNORECASE)
_MAX_DEPTH = 3


class Sessions:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model

    def is_session(self, expr: cst.BaseExpression, site: CallSite) -> bool:
        verdict = self._judge(expr, site.function, site.place, site.lambdas, 0)
        if verdict is None:
            return bool(SESSION_NAME.search(_leaf(expr) or ""))
        return verdict

    def _judge(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
               lambdas, depth: int) -> Optional[bool]:
        """True / False when bindings decide it, None when nothing in the file does."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Call):
            return self._judge_call(expr, depth)
        bindings = None
        if isinstance(expr, cst.Name):
            bindings = self.model.reaching(expr.value, scope, place, lambdas)
        elif isinstance(expr, cst.Attribute) and _is_self(expr.value) and scope is not None:
            owner = scope.owner
            values = owner.attributes.get(expr.attr.value, []) if owner is not None else []
            verdicts = [self._judge(v, scope, place, (), depth + 1) for v in values]
            return _all_or_none(verdicts)
        if not bindings:
            return None
        return _all_or_none(self._judge_binding(b, depth) for b in bindings)

    def _judge_binding(self, binding: Binding, depth: int) -> Optional[bool]:
        if binding.kind in ("assign", "with") and binding.value is not None:
            return self._judge(binding.value, binding.scope, binding.place, (), depth + 1)
        if binding.kind == "param":
            return None
        return False

    def _judge_call(self, call: cst.Call, depth: int) -> Optional[bool]:
        name = self.model.call_name(call)
        if name is not None:
            return name in SESSION_FACTORIES
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "as_default" and isinstance(func.value, cst.Call):
            return self._judge_call(func.value, depth + 1)  # `with tf.Session().as_default() as sess`
        callee = self.model.call_graph.callee(call)
        if callee is not None:
            verdicts = [
                self._judge(r.node.value, callee, r.place, (), depth + 1)
                for r in callee.returns
                if r.node.value is not None
            ]
            return _all_or_none(verdicts)
        root = _root_name(func)
        if root is not None and self.model.imports.is_bound(root):
            return False  # a call into another library: onnxruntime.InferenceSession(...)
        return None


def _all_or_none(verdicts) -> Optional[bool]:
    verdicts = list(verdicts)
    if any(v is False for v in verdicts):
        return False
    if verdicts and all(v is True for v in verdicts):
        return True
    return None


def _leaf(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def _root_name(expr: cst.BaseExpression) -> Optional[str]:
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _is_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"
