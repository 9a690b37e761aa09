"""Is this receiver a reinforcement-learning environment: asked by two rules, answered here once.

An environment's ``step`` runs a simulator in Python: no TensorFlow op can do it (TFP201 does not ask
for a rewrite of a callback that steps one), and the data it returns exists only after each step (an
on-policy rollout fed to ``Session.run`` is no input pipeline: TFP104). The receiver is resolved
first: a name or a ``self.`` attribute assigned a simulator factory's result (``gym.make(...)``,
``gymnasium.make_vec(...)``) is a ``SIMULATOR``. Where its source cannot be seen (a parameter, an
attribute set elsewhere, a helper's result), its name is the fallback: ``env``, ``self.env``,
``train_env``, ``envs`` are ``NAMED`` environments. A rule that must be sure (TFP201, which would
otherwise report) asks for ``SIMULATOR``; one that only stays silent on a rollout (TFP104) takes either.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from tflint_perf.analysis.loops import StepLoops
from tflint_perf.analysis.model import FunctionInfo, ModuleModel

SIMULATOR_FACTORIES = frozenset({"gym.make", "gymnasium.make", "gym.vector.make", "gymnasium.vector.make", "gymnasium.make_vec"})
SIMULATOR = "simulator"  # made by a simulator factory, as resolved
NAMED = "named"  # its source unseen; named as an environment
_ENVIRONMENT_NAME = re.compile(r"(?:^|_)env(?:ironment)?s?(?:_|\d|$)", re.IGNORECASE)
_STEP_METHOD = re.compile(r"(?:^|_)step$")  # `step`, `special_step`


def environment(model: ModuleModel, receiver: cst.BaseExpression, scope: Optional[FunctionInfo]) -> Optional[str]:
    """``SIMULATOR``, ``NAMED`` or None for the object a method is called on."""
    if _made_by_simulator(model, receiver, scope):
        return SIMULATOR
    leaf = receiver.value if isinstance(receiver, cst.Name) else receiver.attr.value if isinstance(receiver, cst.Attribute) else None
    return NAMED if leaf is not None and _ENVIRONMENT_NAME.search(leaf) else None


def is_environment_step(model: ModuleModel, call: cst.Call, scope: Optional[FunctionInfo]) -> bool:
    """``env.step(action)``, ``self.env.step(a)``, ``env.special_step(a, s)``: an environment stepped."""
    func = call.func
    return (isinstance(func, cst.Attribute) and bool(_STEP_METHOD.search(func.attr.value))
            and environment(model, func.value, scope) is not None)


def _made_by_simulator(model: ModuleModel, receiver: cst.BaseExpression, scope: Optional[FunctionInfo]) -> bool:
    if isinstance(receiver, cst.Name):
        _, bindings = model.scope_bindings(receiver.value, scope)
        values = [binding.value for binding in bindings if binding.kind == "assign"]
    elif (isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and receiver.value.value == "self"
          and scope is not None and scope.owner is not None):
        values = scope.owner.attributes.get(receiver.attr.value, [])  # `self.env = gym.make(...)` in some method
    else:
        return False
    return any(isinstance(value, cst.Call) and model.call_name(value) in SIMULATOR_FACTORIES for value in values)


# -- updates interleaved with environment steps ---------------------------------------------------
_MAX_CALLER_DEPTH = 4


def interleaved_with_environment(model: ModuleModel, site) -> bool:
    """The call at ``site`` (a ``CallSite``) repeats once per environment step: the innermost loop that
    repeats it (around it, or around the call of its function, a few callers away and in other first-party
    modules too) also steps an environment (``env.step(a)`` in that loop's body). An off-policy update
    fed a replay sample after every ``env.step`` (a DQN's ``learn()`` in the episode's step loop) then
    costs what the simulator and the Python replay cost: its feed of a few transitions is not what the
    loop waits for. An update loop of its own (``for i in range(iterations): sess.run(train_op,
    feed_dict=replay.random_batch())`` after the episodes) does not step an environment and is no such
    case. Every path that repeats the call must be such a loop."""
    if site.loops:
        return _loop_steps_environment(model, site.loops[-1]) or _one_per_environment_step(model, site)
    return _callers_step_environment(model, site.function, 0, set())


def _one_per_environment_step(model: ModuleModel, site) -> bool:
    """The innermost loop around the call runs as many times as the environment was just stepped: its
    bound is a count (``for _ in range(episode_length)``) that ``+=`` raises in a loop stepping an
    environment within the same enclosing loop (DDPG's updates after each episode, one per step taken).
    An update loop with a count of its own (``range(1000)``) is no such case."""
    loop = site.loops[-1]
    if len(site.loops) < 2 or not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
        return False
    bounds = [arg.value for arg in loop.iter.args]
    if not (isinstance(loop.iter.func, cst.Name) and loop.iter.func.value in ("range", "xrange")
            and len(bounds) == 1 and isinstance(bounds[0], cst.Name)):
        return False
    counter, enclosing = bounds[0].value, site.loops[-2]
    for step in model.calls:
        if enclosing not in step.loops or loop in step.loops or step.function is not site.function \
                or not is_environment_step(model, step.node, step.function):
            continue
        stepping = step.loops[-1]
        if any(b.kind == "augassign" and b.place.blocks and stepping.body in b.place.blocks
               for b in model.scope_bindings(counter, site.function)[1]):
            return True
    return False


def _callers_step_environment(model: ModuleModel, function: Optional[FunctionInfo], depth: int, seen: set) -> bool:
    if function is None or depth > _MAX_CALLER_DEPTH or function in seen:
        return False
    seen.add(function)
    graph = model.call_graph  # type: ignore[attr-defined]
    callers = [(model, caller) for caller in graph.callers(function)]
    callers += graph.callers_elsewhere(function) + graph.base_callers_elsewhere(function)
    if not callers:
        return False
    for owner, caller in callers:
        if caller.loops:
            if not _loop_steps_environment(owner, caller.loops[-1]):
                return False
        elif not _callers_step_environment(owner, caller.function, depth + 1, seen):
            return False
    return True


def _loop_steps_environment(model: ModuleModel, loop) -> bool:
    """An environment is stepped on the iterations of ``loop``: an ``env.step`` in its body (an episode's
    step loop nested in it included), or a call there of a same-file function that steps one outside any
    loop of its own (``env_step(action)``, a helper taking one step). Neither counts behind a periodic
    guard (``if it % 5000 == 0:``): evaluation episodes every few thousand updates leave the other
    iterations to the update alone. An ``evaluate()`` running whole episodes in its own loop, called from
    the loop, does not count either: it is such evaluation, not the steps the updates are paced by."""
    steps = [call for call in model.calls if is_environment_step(model, call.node, call.function)]
    if not steps:
        return False
    stepping = {step.function for step in steps if step.function is not None and not step.loops}
    graph = model.call_graph  # type: ignore[attr-defined]
    step_calls = {id(step) for step in steps}
    pacing = [call for call in model.calls if loop in call.loops
              and (id(call) in step_calls or graph.callee(call.node) in stepping)]
    if not pacing:
        return False
    periodic = StepLoops(model)
    # A call in a compound statement's header (`while not env.step(a)[2]:`) has no statement to find guards to: it counts.
    return any(call.statement is None or periodic.every_nth(loop, call.statement, call.function) is None
               for call in pacing)
