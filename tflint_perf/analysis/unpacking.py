"""Which expression a name bound by tuple unpacking stands for.

``generator, discriminator, adversarial = models`` in a GAN trainer, with ``models = (generator,
discriminator, adversarial)`` built by the caller; ``batch_size, latent_size, steps, name = params``;
``agent, train = setup_agent(env, args)`` with ``return agent, train``. The element bound is the
same position of a tuple or list written out: directly, through a name bound to one, through a
parameter every same-file caller passes one for, or through every ``return`` of a same-file function.
Anything else (a starred element, a call the analysis cannot resolve, a parameter no caller fills)
leaves the answer unknown (None), so callers stay silent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional

import libcst as cst

from tflint_perf.analysis.arguments import argument, has_star_args
from tflint_perf.analysis.model import Binding, FunctionInfo, ModuleModel, Place

_MAX_DEPTH = 4


@dataclass(frozen=True)
class Source:
    """An expression, read in ``scope`` at ``place`` of ``model`` (in a project session, a module that
    imports the one asking: a shared trainer's caller)."""

    expr: cst.BaseExpression
    scope: Optional[FunctionInfo]
    place: Place
    model: ModuleModel


def unpacked_sources(model: ModuleModel, binding: Binding, parameters: bool = True) -> Optional[List[Source]]:
    """The expressions an ``a, b = value`` binding's name may hold, or None when unknown.
    ``parameters``: follow a parameter to its callers (needs the call graph; off while it is built)."""
    if binding.kind != "unpack" or len(binding.path) != 1 or binding.value is None:
        return None
    return _element(model, binding.value, binding.scope, binding.place, binding.path[0], parameters, 0)


def _element(model: ModuleModel, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
             index: int, parameters: bool, depth: int) -> Optional[List[Source]]:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, (cst.Tuple, cst.List)):
        elements = expr.elements
        if index >= len(elements) or any(isinstance(e, cst.StarredElement) for e in elements):
            return None
        return [Source(elements[index].value, scope, place, model)]
    found: List[Source] = []
    if isinstance(expr, cst.Name):
        bindings = model.reaching(expr.value, scope, place)
        if not bindings:
            return None
        for binding in bindings:
            if binding.kind == "assign" and binding.value is not None:
                more = _element(model, binding.value, binding.scope, binding.place, index, parameters, depth + 1)
            elif binding.kind == "param" and binding.scope is not None and parameters:
                more = _passed(model, binding.scope, binding.name, index, depth)
            else:
                more = None
            if more is None:
                return None
            found += more
        return found
    if isinstance(expr, cst.Call):
        target = model.effects.resolve_callable(expr.func, scope, local_only=True, place=place)  # type: ignore[attr-defined]
        if not isinstance(target, FunctionInfo) or not target.returns:
            return None
        for ret in target.returns:
            more = None if ret.node.value is None else _element(
                model, ret.node.value, target, ret.place, index, parameters, depth + 1)
            if more is None:
                return None
            found += more
        return found
    return None


def _passed(model: ModuleModel, function: FunctionInfo, name: str, index: int, depth: int) -> Optional[List[Source]]:
    """What every caller of ``function`` passes for the parameter ``name``, at ``index``: in this file,
    and in a project session in the modules importing it (``gan.train(models, x_train, params)``)."""
    callers = [(model, site) for site in model.call_graph.callers(function)]  # type: ignore[attr-defined]
    callers += model.call_graph.callers_elsewhere(function)  # type: ignore[attr-defined]
    if not callers:
        return None
    positional = function.positional_parameters
    position = positional.index(name) if name in positional else None
    found: List[Source] = []
    for caller_model, caller in callers:
        passed = None if has_star_args(caller.node) else argument(caller.node, name, position)
        if passed is None:
            return None
        more = _element(caller_model, passed.value, caller.function, caller.place, index, True, depth + 1)
        if more is None:
            return None
        found += more
    return found
