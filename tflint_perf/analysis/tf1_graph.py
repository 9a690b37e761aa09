"""TF1 graph code that the training step runs: what a function builds before its training session.

In TensorFlow 1 the Python that builds the graph runs once, but the ops it builds run on every
``sess.run`` of the training step. So a ``tf.py_func`` in an input pipeline built with queues, or a
``tf.cond`` in the model, costs every step when the graph is the training graph. This module finds
the calls that build it, narrowly: a function that creates a session (``tf.Session``,
``tf.InteractiveSession``, ``MonitoredTrainingSession``) and reaches a training run (a ``run`` that
fetches a train op, per ``sessions.RunPurposes``, in the function or in one it calls, inside a loop);
the functions it calls *before* creating the session build the graph that session runs. Calls whose
names say evaluation or drawing (``build_eval_graph``) are left out, and so is anything built after
the session exists (the analysis cannot tell then which graph the ops join).
"""

from __future__ import annotations

from typing import List, Tuple

import libcst as cst

from tflint_perf.analysis.model import CallSite, FunctionInfo, ModuleModel
from tflint_perf.analysis.purpose import Purpose, purpose_of_builder
from tflint_perf.analysis.sessions import RunPurposes, run_fetches

SESSION_CONSTRUCTORS = frozenset(
    {"tf.Session", "tf.InteractiveSession", "tf.train.MonitoredTrainingSession", "tf.train.MonitoredSession",
     "tf.train.SingularMonitoredSession"}
)


def graph_builders(model: ModuleModel) -> List[Tuple[FunctionInfo, FunctionInfo]]:
    """(the function that builds graph code, the function that creates the training session after it)."""
    sessions = [site for site in model.calls
                if site.function is not None and model.call_name(site.node) in SESSION_CONSTRUCTORS]
    if not sessions:
        return []
    purposes = RunPurposes(model)
    found: List[Tuple[FunctionInfo, FunctionInfo]] = []
    for session in sessions:
        owner = session.function
        if not _reaches_training_run(model, purposes, owner):
            continue
        for site in model.calls_in(owner):
            if site.place.order >= session.place.order or site.lambdas:
                continue
            target = model.effects.resolve_callable(site.node.func, owner)
            if not isinstance(target, FunctionInfo) or target is owner:
                continue
            if purpose_of_builder([target.name]) in (Purpose.EVALUATION, Purpose.INSPECTION):
                continue
            if all(target is not built for built, _ in found):
                found.append((target, owner))
    return found


def _reaches_training_run(model: ModuleModel, purposes: RunPurposes, owner: FunctionInfo) -> bool:
    """A training ``run`` in a loop, in ``owner`` or in a same-file function it calls."""
    scopes = [owner, *model.call_graph.callees(owner)]
    for site in model.calls:
        if site.function not in scopes or not _is_run(site):
            continue
        in_loop = bool(site.loops) or bool(model.call_graph.loops_reaching(site.function))
        if in_loop and purposes.purpose(site, run_fetches(site.node)) is Purpose.TRAINING:
            return True
    return False


def _is_run(site: CallSite) -> bool:
    func = site.node.func
    return isinstance(func, cst.Attribute) and func.attr.value == "run"
