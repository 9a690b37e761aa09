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
from typing import List, Optional

import libcst as cst

from tflint_perf.analysis.model import Binding, CallSite, FunctionInfo, ModuleModel, Place
from tflint_perf.analysis.purpose import Purpose

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
# Calls that regroup the values they are given (`zip(mems, mems_np)`), and methods giving a view of
# their receiver's items (`state.items()`): what they yield is still what a run returned.
_REGROUPING = frozenset({"zip", "enumerate", "list", "tuple", "reversed"})
_VIEWS = frozenset({"items", "values", "keys", "copy"})


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
    if isinstance(expr, cst.Subscript):
        return _leaf(expr.value)  # `model.train_ops[bucket_id]`: one of the per-bucket train ops
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


# -- what a run is for ---------------------------------------------------------------------------
# A fetch that names a training op: `train_op`, `optimizer` (bound to `...minimize(loss)`), `d_optim`,
# `self.update`, `train_step.run(...)`. Metrics, losses, summaries and samples are not.
TRAIN_FETCH_NAME = re.compile(
    r"(?:^|_)(?:train(?:_?op|_?step|ing_?op|er)?s?|updates?(?:_?ops?)?|apply_?grad\w*|minimi[sz]e\w*|backprop)\d*$"
    r"|(?:^|_)(?:optim\w*|opt|solver)(?:_|\d|$)",
    re.IGNORECASE,
)
_TRAIN_OP_METHODS = frozenset({"minimize", "apply_gradients"})
_TRAIN_OP_CALLS = frozenset({"tf.group", "tf.train.Optimizer.minimize", "tf.contrib.layers.optimize_loss"})
_ASSIGN_CALLS = frozenset({"tf.assign", "tf.compat.v1.assign"})
# A function whose single run is the step a loop elsewhere repeats: `partial_fit`, `train_step`, `update`.
TRAIN_FUNCTION_NAME = re.compile(r"(?:^|_)(?:train|fit|update|optimi[sz]e|learn)(?:_|$)", re.IGNORECASE)


class RunPurposes:
    """What a `Session.run` / `Operation.run` / `Tensor.eval` call is for."""

    def __init__(self, model: ModuleModel) -> None:
        self.model = model

    def purpose(self, site: CallSite, fetches: Optional[cst.BaseExpression]) -> Purpose:
        """Training when a fetch is a train op, or when the run is the step of a training function
        called from a loop (`partial_fit`); evaluation when it fetches only metrics; else unknown."""
        if fetches is not None and any(
            TRAIN_FETCH_NAME.search(item) if isinstance(item, str) else self._is_train_op(item, site, 0)
            for item in _fetch_items(fetches)
        ):
            return Purpose.TRAINING
        function = site.function
        if function is not None and not site.loops and TRAIN_FUNCTION_NAME.search(function.name):
            return Purpose.TRAINING
        return Purpose.UNKNOWN

    def _is_train_op(self, expr: cst.BaseExpression, site: CallSite, depth: int) -> bool:
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, (cst.List, cst.Tuple)):  # `output_feed = [model.train_ops[b], model.losses[b]]`
            return any(self._is_train_op(el.value, site, depth + 1) for el in expr.elements)
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in _TRAIN_OP_METHODS:
                return True
            return self.model.call_name(expr) in _TRAIN_OP_CALLS or self._descends(expr)
        leaf = _leaf(expr)
        if leaf is not None and TRAIN_FETCH_NAME.search(leaf):
            return True
        if isinstance(expr, cst.Name):
            bindings = self.model.reaching(expr.value, site.function, site.place, site.lambdas) or []
            return any(
                b.kind == "assign" and b.value is not None and self._is_train_op(b.value, site, depth + 1)
                for b in bindings
            )
        if isinstance(expr, cst.Attribute) and _is_self(expr.value) and site.function is not None:
            owner = site.function.owner
            values = owner.attributes.get(expr.attr.value, []) if owner is not None else []
            return any(self._is_train_op(value, site, depth + 1) for value in values)
        return False

    def _descends(self, call: cst.Call) -> bool:
        """A gradient-descent step written out: ``tf.assign(w, w - learning_rate * d_w)`` (or
        ``w.assign(w - lr * grad)``), the variable set to itself less a scaled quantity. A copy
        (``tf.assign(target, source)``) or a moving average (``tf.assign(m, m * decay + ...)``,
        ``tf.assign(m, m - (1 - decay) * (m - x))``) is not."""
        func = call.func
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if self.model.call_name(call) in _ASSIGN_CALLS and len(positional) == 2:
            target, value = positional
        elif isinstance(func, cst.Attribute) and func.attr.value == "assign" and len(positional) == 1 \
                and self.model.call_name(call) not in _ASSIGN_CALLS:
            target, value = func.value, positional[0]
        else:
            return False
        code = self.model.module.code_for_node
        if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Subtract)
                and isinstance(value.right, cst.BinaryOperation) and isinstance(value.right.operator, cst.Multiply)
                and code(value.left) == code(target)):
            return False
        # `m - (1 - decay) * (m - x)`, `t - tau * (t - e)`: a moving average or a soft target update,
        # the variable moved towards a value by a share of the gap, not down a gradient.
        stack: List[cst.CSTNode] = [value.right]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Call):
                continue  # `w - lr * tf.gradients(loss, w)[0]`: the variable as what is differentiated
            if not isinstance(node, cst.BinaryOperation) and code(node) == code(target):
                return False
            stack.extend(node.children)
        return True

    def feeds_back(self, feed: cst.BaseExpression, site: CallSite, entries=()) -> bool:
        """A fed value comes from what an earlier run returned: sampling, generation, an on-policy
        rollout. Each step needs the previous one's output, so no input pipeline can run ahead.

        ``entries`` (``(key, value, scope, place)`` of the fed data, from ``Feeds.data_entries``;
        None or empty when the feed's entries are not all known) are followed further: when every one is what this same run returned on an earlier step,
        through assignments, unpackings and loops over it (an RNN's state, Transformer-XL's
        memory: ``fetched = sess.run(fetches, feed)``, ``mems_np = fetched[1]``, ``for m, m_np in
        zip(mems, mems_np): feed[m] = m_np``), the run is a recurrence, whatever its fetches."""
        returned = self._run_results(site.function)
        if returned and any(isinstance(node, cst.Name) and node.value in returned for node in _descendants(feed)):
            return True
        return bool(entries) and all(
            self._returned_by(value, scope, place, site, 0, set()) for _, value, scope, place in entries
        )

    def fed_back_entry(self, entry, site: CallSite) -> bool:
        """One fed ``(key, value, scope, place)`` is what this same run returned on an earlier step (a
        recurrent state carried from step to step): no input pipeline could hold it, so it is no part
        of the data a step copies in."""
        _, value, scope, place = entry
        return self._returned_by(value, scope, place, site, 0, set())

    def _returned_by(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                     run: CallSite, depth: int, seen: set) -> bool:
        """``expr`` holds (part of) what the ``run`` returned on an earlier step: a name is followed to
        its bindings that reach it and to those later in a loop around the run, which reach it on the
        next step. Only the value itself is followed: an index, a slice bound or a call's argument
        computed from it (``X[step * B:]`` for a fetched ``step``) selects other data, which is not
        the run's output."""
        if depth > 2 * _MAX_DEPTH:  # assignments followed
            return False
        if expr is run.node:
            return True
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            return self._returned_by(expr.value, scope, place, run, depth, seen)
        if isinstance(expr, (cst.List, cst.Tuple)):
            return any(self._returned_by(el.value, scope, place, run, depth, seen) for el in expr.elements)
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Name) and expr.func.value in _REGROUPING:
                return any(self._returned_by(arg.value, scope, place, run, depth, seen) for arg in expr.args)
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _VIEWS:
                return self._returned_by(expr.func.value, scope, place, run, depth, seen)
            return False
        if not isinstance(expr, cst.Name):
            return False
        carried = [b for b in self.model.bindings.get(scope, {}).get(expr.value, [])
                   if scope is run.function and any(loop.body in b.place.blocks for loop in run.loops)]
        for binding in (self.model.reaching(expr.value, scope, place) or []) + carried:
            if binding.kind not in ("assign", "unpack", "for") or binding.value is None or id(binding) in seen:
                continue
            seen.add(id(binding))
            if self._returned_by(binding.value, binding.scope, binding.place, run, depth + 1, seen):
                return True
        return False

    def _run_results(self, scope: Optional[FunctionInfo]) -> frozenset:
        names = set()
        for name, bindings in self.model.bindings.get(scope, {}).items():
            for binding in bindings:
                if binding.value is not None and any(_is_run_call(node) for node in _descendants(binding.value)):
                    names.add(name)
        return frozenset(names)


def run_fetches(call: cst.Call) -> Optional[cst.BaseExpression]:
    """What a run computes: `sess.run(fetches, ...)`'s first argument; the receiver of `op.run()` and `t.eval()`."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    if func.attr.value == "run":
        first = call.args[0] if call.args and call.args[0].keyword is None else None
        fetches = next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == "fetches"), first)
        if fetches is not None and not _looks_like_feed(fetches.value):
            return fetches.value
    return func.value


def _looks_like_feed(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Dict)


def _fetch_items(fetches: cst.BaseExpression):
    if isinstance(fetches, (cst.List, cst.Tuple)):
        for element in fetches.elements:
            yield from _fetch_items(element.value)
    elif isinstance(fetches, cst.Dict):
        for element in fetches.elements:
            if isinstance(element, cst.DictElement):
                yield element.value
                if isinstance(element.key, cst.SimpleString):
                    yield str(element.key.evaluated_value)  # `{"train_op": op, "loss": loss}`
    else:
        yield fetches


def _is_run_call(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("run", "eval")
    )


def _descendants(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)
