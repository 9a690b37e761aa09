"""Code that is not the training configuration: a statement under a debugging switch (``if args.debug:``,
``if __debug__:``, ``if FLAGS.eager:``), and a module that trains nothing (a guide demonstrating an
API, a helper module). A switch that slows training down is worth reporting only outside both.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.model import ModuleModel, Place

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
    """``model.fit(...)``, ``train_on_batch``, ``opt.apply_gradients`` / ``minimize``: a training step."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in _TRAINING_METHODS


def module_trains(model: ModuleModel) -> bool:
    """The module trains something: it calls ``fit`` / ``train_on_batch`` / ``apply_gradients`` /
    ``minimize`` or opens a ``tf.GradientTape``. A guide that only demonstrates an API does not."""
    for site in model.calls:
        if is_training_call(model, site.node):
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
