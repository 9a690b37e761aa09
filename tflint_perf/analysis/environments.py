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
