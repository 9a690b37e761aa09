"""Code that is not the training configuration: a statement under a debugging switch (``if args.debug:``,
``if __debug__:``, ``if FLAGS.eager:``), code a constant condition rules out (``if False:``, ``if DEBUG:``
with ``DEBUG = False``: it never runs), and a module that trains nothing (a guide demonstrating an
API, a helper module). A switch that slows training down is worth reporting only outside these.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.model import FunctionInfo, ModuleModel, Place
from tflint_perf.analysis.optimizers import is_optimizer

_DEBUG_WORDS = ("debug", "eager", "__debug__", "verbose", "profil", "test")
_KERAS_TRAINING_METHODS = frozenset({"fit", "fit_generator", "train_on_batch"})
_TRAINING_METHODS = _KERAS_TRAINING_METHODS | {"apply_gradients", "minimize"}


def is_debug_guarded(module: cst.Module, place: Place) -> bool:
    """Inside ``if args.debug:``, ``if __debug__:``, ``if FLAGS.eager:`` and the like: a switch the user
    turns on to debug, not the training configuration."""
    for test in enclosing_tests(module, place):
        text = module.code_for_node(test).lower()
        if any(word in text for word in _DEBUG_WORDS):
            return True
    return False


def is_training_call(model: ModuleModel, call: cst.Call) -> bool:
    """A training step: ``fit`` / ``fit_generator`` / ``train_on_batch`` on a Keras model, ``minimize`` /
    ``apply_gradients`` on a TensorFlow optimizer. The method's name alone is not enough: a scikit-learn
    ``LinearRegression().fit(...)`` in a plotting loop or scipy's ``optimize.minimize`` trains nothing."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in _TRAINING_METHODS:
        return False
    site = model.site_of(call)
    if site is None:
        return False
    if func.attr.value in _KERAS_TRAINING_METHODS:
        return model.keras_models.is_model_site(func.value, site)  # type: ignore[attr-defined]  # an AnalysedModule's
    return is_optimizer(model, func.value, site.function, site.place)


def never_runs(model: ModuleModel, place: Place, scope: Optional[FunctionInfo] = None) -> bool:
    """``place`` is on a branch its condition's constant value rules out: the body of ``if False:`` or
    of ``if DEBUG:`` where the module binds ``DEBUG = False`` once (``ValueSources.truth``), the ``else``
    of ``if True:``. ``scope``: the function the code is in, where a local may shadow the constant."""
    values = model.integer_values  # type: ignore[attr-defined]  # an AnalysedModule's
    return any(values.truth(test, scope) is (not taken) for test, taken in branch_conditions(model.module, place))


def branch_conditions(module: cst.Module, place: Place) -> List[Tuple[cst.BaseExpression, bool]]:
    """The conditions of the ``if`` / ``elif`` statements around ``place``, each with the value it has
    when ``place`` runs: True in a body, False for the tests an ``elif`` or ``else`` comes after."""
    conditions: List[Tuple[cst.BaseExpression, bool]] = []
    statements: List[cst.CSTNode] = list(module.body)
    for block in place.blocks:
        found = None
        for statement in statements:
            found = _conditions_to(statement, block)
            if found is not None:
                break
        if found is None:
            return conditions
        conditions.extend(found)
        statements = list(block.body) if isinstance(block, cst.IndentedBlock) else []
    return conditions


def _conditions_to(statement: cst.CSTNode, block: cst.CSTNode) -> Optional[List[Tuple[cst.BaseExpression, bool]]]:
    """The conditions under which ``statement``'s clause whose body is ``block`` runs; None when no
    clause of ``statement`` (its ``elif`` / ``else`` chain, handlers, ``finally``) has that body."""
    if getattr(statement, "body", None) is block:
        return [(statement.test, True)] if isinstance(statement, cst.If) else []
    passed: List[Tuple[cst.BaseExpression, bool]] = [(statement.test, False)] if isinstance(statement, cst.If) else []
    for name in ("orelse", "handlers", "finalbody"):
        child = getattr(statement, name, None)
        children = child if isinstance(child, (list, tuple)) else [child] if child is not None else []
        for clause in children:
            found = _conditions_to(clause, block)
            if found is not None:
                return (passed if name == "orelse" else []) + found
    return None


def module_trains(model: ModuleModel) -> bool:
    """The module trains something: it calls ``fit`` / ``train_on_batch`` / ``apply_gradients`` /
    ``minimize`` or opens a ``tf.GradientTape``. A guide that only demonstrates an API does not."""
    for site in model.calls:
        # By the method's name: a module that only demonstrates an API calls none of these, whatever the receiver.
        func = site.node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _TRAINING_METHODS:
            return True
        if model.call_name(site.node) == "tf.GradientTape":
            return True
    return False


def module_fits(model: ModuleModel) -> bool:
    """The module trains a Keras model: it calls ``fit`` / ``fit_generator`` / ``train_on_batch``. That is
    training whatever the module's path says (`evaluator.ipynb` trains the model it then evaluates)."""
    return any(
        isinstance(site.node.func, cst.Attribute) and site.node.func.attr.value in _KERAS_TRAINING_METHODS
        for site in model.calls
    )


def enclosing_tests(module: cst.Module, place: Place) -> List[cst.BaseExpression]:
    """The conditions of the ``if`` / ``elif`` / ``while`` statements whose body holds ``place``."""
    tests: List[cst.BaseExpression] = []
    statements: List[cst.CSTNode] = list(module.body)
    for block in place.blocks:
        owner = _owner_of(statements, block)
        if owner is None:
            return tests
        node, test = owner
        if test is not None:
            tests.append(test)
        statements = list(block.body) if isinstance(block, cst.IndentedBlock) else []
    return tests


def _owner_of(statements: List[cst.CSTNode], block: cst.CSTNode) -> Optional[Tuple[cst.CSTNode, Optional[cst.BaseExpression]]]:
    """The statement among ``statements`` (or an ``elif`` / ``else`` / handler of one) whose body is
    ``block``, with its condition when it has one."""
    for statement in statements:
        stack = [statement]
        while stack:
            node = stack.pop()
            if getattr(node, "body", None) is block:
                return node, node.test if isinstance(node, (cst.If, cst.While)) else None
            for name in ("orelse", "handlers", "finalbody"):
                child = getattr(node, name, None)
                if isinstance(child, (list, tuple)):
                    stack.extend(child)
                elif child is not None:
                    if getattr(child, "body", None) is block or isinstance(child, (cst.If, cst.Else, cst.Finally)):
                        stack.append(child)
    return None
