"""What a ``feed_dict`` carries on each iteration of a loop: per-step data, or the same values again.

A fed value is per-step data when it changes from one iteration to the next: it is computed in
the loop (a slice ``X[i:i + B]``, a ``next_batch()`` call), or bound to a name in the loop body or
as the loop's target, or, when the ``run`` sits in a function called from a loop, bound in that
function (its parameters included). Not per-step data: Python values (literals, names bound to
numbers or booleans), hyperparameters by name (``lr``, ``learning_rate``, ``keep_prob``,
``dropout``, ``is_training``, ``global_step``...), and values bound once before the loop (a
``validate_feed`` built before training and fed every 1,000 steps).

The dict may be written in the call, built a few lines earlier (``feed = {...}``,
``feed[x] = batch``), returned by a same-file helper, or handed in as a parameter by a same-file
caller (``run_step(sess, {x: xb})`` in the step loop), judged where the caller builds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.environments import is_environment_step
from tflint_perf.analysis.loops import counts_epochs
from tflint_perf.analysis.unpacking import unpacked_sources
from tflint_perf.analysis.model import Binding, CallSite, FunctionInfo, LoopNode, ModuleModel, Place
from tflint_perf.analysis.values import PYTHON, ValueKinds

HYPERPARAMETER_NAME = re.compile(
    r"(?:^|_)(?:lr|learning_?rate|keep_?prob\w*|dropout\w*|training|is_?train\w*|phase_?train|train_?phase|"
    r"step|global_?step)(?:_|$)",
    re.IGNORECASE,
)
_MAX_DEPTH = 3


@dataclass(frozen=True)
class Iteration:
    """What repeats: loops around the call in its own function, and/or the whole function when
    the file calls it from a loop."""

    loops: FrozenSet[LoopNode]
    function: Optional[FunctionInfo]

    def rebinds(self, binding: Binding) -> bool:
        """The binding happens again on every iteration."""
        for loop in self.loops:
            if loop.body in binding.place.blocks or (binding.kind == "for" and binding.value is _iterable(loop)):
                return True
        return self.function is not None and binding.scope is self.function


class Feeds:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self.values = ValueKinds(model)

    def per_step_entry(
        self, feed: cst.BaseExpression, site: CallSite, iteration: Iteration
    ) -> Optional[cst.BaseExpression]:
        """The first fed value that is per-step data, or None."""
        return self._feed(feed, site.function, site.place, site.lambdas, iteration, True, 0)

    def _feed(self, feed: cst.BaseExpression, scope, place: Place, lambdas, iteration: Iteration,
              evaluated_each_time: bool, depth: int) -> Optional[cst.BaseExpression]:
        if depth > _MAX_DEPTH:
            return None
        entries: List[Tuple[cst.BaseExpression, cst.BaseExpression]] = []
        if isinstance(feed, cst.Dict):
            for element in feed.elements:
                if isinstance(element, cst.DictElement):
                    entries.append((element.key, element.value))
                else:
                    found = self._feed(element.value, scope, place, lambdas, iteration, evaluated_each_time, depth + 1)
                    if found is not None:
                        return found
        elif isinstance(feed, cst.DictComp):
            entries.append((feed.key, feed.value))
        elif isinstance(feed, cst.Name):
            for binding in self.model.reaching(feed.value, scope, place, lambdas) or []:
                again = iteration.rebinds(binding)
                found = None
                if binding.kind in ("assign", "augassign") and binding.value is not None:
                    found = self._feed(binding.value, binding.scope, binding.place, (), iteration, again, depth + 1)
                elif binding.kind == "item" and binding.value is not None and binding.key is not None:
                    if again and self._is_data(binding.key, binding.value, binding.scope, binding.place, (), iteration):
                        found = binding.value
                elif binding.kind == "param" and binding.scope is not None and binding.scope is iteration.function:
                    found = self._passed(binding.scope, feed.value, depth)
                if found is not None:
                    return found
        elif isinstance(feed, cst.Call) and evaluated_each_time:
            callee = self.model.call_graph.callee(feed)
            every_call = Iteration(frozenset(), callee)
            for ret in callee.returns if callee is not None else []:
                if ret.node.value is not None:
                    found = self._feed(ret.node.value, callee, ret.place, (), every_call, True, depth + 1)
                    if found is not None:
                        return found
        if not evaluated_each_time:
            return None  # a dict built once, before the loop: the same values every time
        for key, value in entries:
            if self._is_data(key, value, scope, place, lambdas, iteration):
                return value
        return None

    def _passed(self, function: FunctionInfo, name: str, depth: int) -> Optional[cst.BaseExpression]:
        """A feed handed in as a parameter (``def run_step(sess, feed): sess.run(train_op, feed)``):
        what its callers in this file pass, judged where they pass it (a dict built in their step loop)."""
        positional = function.positional_parameters
        index = positional.index(name) if name in positional else None
        for caller in self.model.call_graph.callers(function):
            arg = argument(caller.node, name, index)
            if arg is None or arg.star:
                continue
            loops = frozenset(loop for loop in caller.loops if not counts_epochs(loop))
            around = Iteration(loops, None if loops else caller.function)
            found = self._feed(arg.value, caller.function, caller.place, caller.lambdas, around, True, depth + 1)
            if found is not None:
                return found
        return None

    def _is_data(self, key, value, scope, place: Place, lambdas, iteration: Iteration) -> bool:
        if self.is_setting(key, value, scope, place, lambdas):
            return False
        return self._varies(value, scope, place, lambdas, iteration)

    def is_setting(self, key, value, scope, place: Place, lambdas=()) -> bool:
        """A fed hyperparameter or Python value (``lr``, ``keep_prob: 0.5``, ``is_training: True``), not data."""
        if HYPERPARAMETER_NAME.search(_leaf(key) or "") or HYPERPARAMETER_NAME.search(_leaf(value) or ""):
            return True
        return self.values.kind(value, scope, place, lambdas) == PYTHON

    def data_entries(self, feed: cst.BaseExpression, site: CallSite):
        """The fed entries that are data, not settings: ``(key, value, scope, place)`` where each is bound;
        None when some binding of the feed cannot be read (``feed = dict(zip(keys, batch))``, then
        ``feed[c] = state.c``): the entries read are not all the feed holds, so no conclusion drawn
        from every one of them (all fed back, all small) is about the whole feed."""
        entries, complete = _entries(self.model, feed, site.function, site.place, site.lambdas, 0)
        if not complete:
            return None
        return [(key, value, scope, place) for key, value, scope, place in entries
                if not self.is_setting(key, value, scope, place)]

    def _varies(self, expr: cst.BaseExpression, scope, place: Place, lambdas, iteration: Iteration) -> bool:
        """``expr``, evaluated on each iteration, gives a different value each time."""
        stack: List[cst.CSTNode] = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Call):
                return True  # next_batch(), np.stack(...): a new batch assembled on the host
            if isinstance(node, cst.Name):
                bindings = self.model.reaching(node.value, scope, place, lambdas)
                if bindings is None or any(iteration.rebinds(b) for b in bindings):
                    return True
            if isinstance(node, cst.Attribute):
                stack.append(node.value)  # `self.x` or `batch.images`: only the root name decides
                continue
            stack.extend(node.children)
        return False


def fed_entries(model: ModuleModel, feed: cst.BaseExpression, site: CallSite):
    """``(key, value, scope, place)`` for each entry of a feed dict that can be read, written in the
    call or built a few assignments earlier (``feed = {...}``, ``feed[x] = batch``); there may be more."""
    return _entries(model, feed, site.function, site.place, site.lambdas, 0)[0]


def _entries(model: ModuleModel, feed, scope, place: Place, lambdas, depth: int) -> Tuple[list, bool]:
    """The feed's readable entries, and whether they are all it holds: every binding of it reached is
    a dict display or an item assignment (``feed[x] = batch``)."""
    if depth > _MAX_DEPTH:
        return [], False
    if isinstance(feed, cst.Dict):
        entries = [(el.key, el.value, scope, place) for el in feed.elements if isinstance(el, cst.DictElement)]
        return entries, len(entries) == len(feed.elements)  # a `**other` spreads entries unseen
    if not isinstance(feed, cst.Name):
        return [], False
    bindings = model.reaching(feed.value, scope, place, lambdas)
    found, complete = [], bindings is not None
    for binding in bindings or []:
        if binding.kind == "assign" and binding.value is not None:
            entries, known = _entries(model, binding.value, binding.scope, binding.place, (), depth + 1)
            found += entries
            complete = complete and known
        elif binding.kind == "item" and binding.value is not None and binding.key is not None:
            found.append((binding.key, binding.value, binding.scope, binding.place))
        else:
            complete = False
    return found, complete


def _iterable(loop: LoopNode) -> Optional[cst.BaseExpression]:
    return loop.iter if isinstance(loop, cst.For) else None


def _leaf(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


# -- on-policy rollouts -------------------------------------------------------------------------
_BUFFER_METHODS = frozenset({"append", "extend", "appendleft", "insert"})
_ROLLOUT_DEPTH = 6  # steps followed from a fed value back to the buffer a rollout fills


class Rollouts:
    """Whether fed data is a rollout: read from a buffer (a local list or a ``self.x`` attribute of
    the run's class) that is filled, on each environment step, in a loop that steps an environment
    (``s1, r, d, _ = self.env.step(a)`` ... ``self.episode_buffer.append([s, a, r, s1])``). The data
    exists only after those steps, so no input pipeline can run ahead of them. The buffer may be
    read a few assignments away (``rollout = np.array(self.episode_buffer)``, ``obs = rollout[:, 0]``)
    or handed in by a same-file caller (``self.train(episode_buffer, bootstrap)``)."""

    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._steps: Optional[List[CallSite]] = None

    def from_rollout(self, feed: cst.BaseExpression, site: CallSite) -> bool:
        return any(self._reads_rollout(value, scope, place, 0, set())
                   for _, value, scope, place in fed_entries(self.model, feed, site))

    def _reads_rollout(self, expr: cst.BaseExpression, scope, place: Place, depth: int, seen: set) -> bool:
        if depth > _ROLLOUT_DEPTH:
            return False
        stack: List[cst.CSTNode] = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Attribute):
                if isinstance(node.value, cst.Name) and node.value.value == "self":
                    if self._is_rollout_buffer(node, scope):
                        return True
                    continue
                stack.append(node.value)
                continue
            if isinstance(node, cst.Name):
                key = (node.value, scope, place.order)
                if key in seen:
                    continue
                seen.add(key)
                if self._is_rollout_buffer(node, scope):
                    return True
                for binding in self.model.reaching(node.value, scope, place) or []:
                    if binding.kind in ("assign", "augassign", "for") and binding.value is not None:
                        # `for step in reversed(steps)`: each element is read from what is iterated
                        if self._reads_rollout(binding.value, binding.scope, binding.place, depth + 1, seen):
                            return True
                    elif binding.kind == "unpack":
                        # `steps, n = self.run_n_steps(t_max)`: what that function returns in that position
                        for source in unpacked_sources(self.model, binding) or []:
                            if source.model is self.model and \
                                    self._reads_rollout(source.expr, source.scope, source.place, depth + 1, seen):
                                return True
                    elif binding.kind == "param" and binding.scope is not None:
                        if self._passed_rollout(binding.scope, node.value, depth, seen):
                            return True
                if any(self._reads_rollout(value, scope, at, depth + 1, seen) for value, at in self._appended(node.value, scope)):
                    return True  # `states.append(step.state)` for each step of a rollout
                continue
            stack.extend(node.children)
        return False

    def _appended(self, name: str, scope: Optional[FunctionInfo]):
        """``(value, place)`` of each ``name.append(value)`` in ``scope``: what a local list is filled with."""
        for site in self.model.calls:
            func = site.node.func
            if site.function is scope and isinstance(func, cst.Attribute) and func.attr.value in _BUFFER_METHODS \
                    and isinstance(func.value, cst.Name) and func.value.value == name:
                for arg in site.node.args:
                    yield arg.value, site.place

    def _passed_rollout(self, function: FunctionInfo, name: str, depth: int, seen: set) -> bool:
        positional = function.positional_parameters
        index = positional.index(name) if name in positional else None
        for caller in self.model.call_graph.callers(function):
            arg = argument(caller.node, name, index)
            if arg is not None and not arg.star:
                if self._reads_rollout(arg.value, caller.function, caller.place, depth + 1, seen):
                    return True
        return False

    def _is_rollout_buffer(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo]) -> bool:
        """``expr`` (a local name, or ``self.x``) is filled in a loop that steps an environment."""
        owner = scope.owner if scope is not None else None
        for site in self.model.calls:
            func = site.node.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in _BUFFER_METHODS:
                continue
            receiver = func.value
            if isinstance(expr, cst.Name):
                same = isinstance(receiver, cst.Name) and receiver.value == expr.value and site.function is scope
            else:
                same = (
                    isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name)
                    and receiver.value.value == "self" and receiver.attr.value == expr.attr.value  # type: ignore[attr-defined]
                    and owner is not None and site.function is not None and site.function.owner is owner
                )
            if same and self._steps_environment(site):
                return True
        return False

    def _steps_environment(self, site: CallSite) -> bool:
        """A loop around ``site`` (in its function or in a caller) also steps an environment."""
        loops = set(site.loops) | self.model.call_graph.loops_reaching(site.function)
        for step in self._environment_steps():
            if loops & set(step.loops) or (step.function is site.function and step.function is not None and loops):
                return True
        return False

    def _environment_steps(self) -> List[CallSite]:
        if self._steps is None:
            self._steps = [s for s in self.model.calls if is_environment_step(self.model, s.node, s.function)]
        return self._steps
