"""Code nothing runs: a function or method whose name occurs nowhere but in its own ``def``, in its
module and the modules around it (FixMatch's ``DataSet.empty_data``, a classmethod no module calls).

A finding there changes nothing a run does. Where the name is looked for is what a file's findings
are keyed by in the results cache and the workspace (``Project.mentions``: the module, what it imports
and what imports it, two levels each), so a change anywhere else cannot leave a finding stale; a caller
further away is not seen. What may call a function out of sight keeps it live:
- a project packaged for others to install (``Project.distributed``): its public names are an API;
- a decorator but ``@classmethod`` / ``@staticmethod`` (``@app.route``, ``@gin.configurable``, ``@tf.function`` registered by name), a dunder,
  a ``test*`` name (a test runner finds it), ``main``;
- a method of a class with a base from elsewhere (``keras.layers.Layer.call``, ``Callback.on_epoch_end``:
  the framework calls its hooks by name) or from a project base that may call it through ``self``;
- any mention there, strings and comments included (``getattr(self, "empty_" + kind)`` is not
  seen, ``getattr(self, "empty_data")`` is).
Without a project session (a file checked alone) nothing is known: live. A caller decides whether dead
code is silent: a training pipeline a function returns unconsumed (a ``make_train_dataset``, an
``input_fn`` a notebook, a user or a framework calls) stays reported (``PipelineIntent.serves``).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_perf.analysis.model import FunctionInfo, ModuleModel

_RUN_BY_NAME = ("main",)
# Decorators that only say how a method binds: they register nothing anywhere.
_BINDING_DECORATORS = frozenset({"classmethod", "staticmethod"})


def _plain(decorator: cst.BaseExpression) -> bool:
    return isinstance(decorator, cst.Name) and decorator.value in _BINDING_DECORATORS


def never_called(model: ModuleModel, function: Optional[FunctionInfo]) -> bool:
    """``function``, or a function around it, is named nowhere around its module but where it is defined."""
    session = model.session
    if session is None or model.path is None:
        return False
    while function is not None:
        if _unnamed_elsewhere(model, function):
            return True
        function = function.parent
    return False


def _unnamed_elsewhere(model: ModuleModel, function: FunctionInfo) -> bool:
    name = function.name
    if not all(_plain(d.decorator) for d in function.node.decorators) or name.startswith(("__", "test")) \
            or name in _RUN_BY_NAME:
        return False
    cls = function.class_info
    if cls is not None and cls.node.bases:
        return False  # a hook a base calls by name (`call`, `on_epoch_end`, a parent's `self.build()`)
    project = model.session.project  # type: ignore[union-attr]
    if project.distributed and not name.startswith("_"):
        return False
    return project.mentions(name, model.path) == 1
