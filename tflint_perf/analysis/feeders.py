"""Whether Keras is fed batches that Python makes, one at a time: a generator, a ``Sequence``, or
Keras' own ``ImageDataGenerator``.

``model.fit(train_data)`` where ``train_data = datagen.flow_from_directory(...)`` (or ``flow``,
``flow_from_dataframe``) reads, decodes, resizes and augments every image of every batch in Python;
so does a same-file generator function (a ``def`` with a ``yield``) or an instance of a same-file
``keras.utils.Sequence`` subclass. Each step then waits on that Python work, not on the call into the
compiled train function, so running several steps per call saves nothing worth having
(``steps_per_execution``, TFP209). Read from how the value is made, never from names:

- a call of ``flow`` / ``flow_from_directory`` / ``flow_from_dataframe`` on a name bound to
  ``ImageDataGenerator(...)`` (every reaching binding);
- a call of a same-file function whose body yields (a generator function);
- a call of a same-file class that derives from ``keras.utils.Sequence``;
- a name every reaching assignment of which is one of those.

Anything else (a ``tf.data`` pipeline, arrays, a parameter, an imported helper's result) is not known
to be one.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_perf.analysis.keras_models import derives_from
from tflint_perf.analysis.model import FunctionInfo, ModuleModel, Place

_FLOWS = frozenset({"flow", "flow_from_directory", "flow_from_dataframe"})
_IMAGE_GENERATOR = "ImageDataGenerator"
_SEQUENCES = frozenset({"keras.utils.Sequence", "keras.utils.data_utils.Sequence", "keras.utils.PyDataset"})
_MAX_DEPTH = 4


def fed_by_python(model: ModuleModel, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                  depth: int = 0) -> bool:
    """``expr`` (what ``fit`` is given) is made batch by batch in Python (see the module doc)."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, cst.Name):
        bindings = model.reaching(expr.value, scope, place)
        return bool(bindings) and all(
            b.kind == "assign" and b.value is not None and fed_by_python(model, b.value, b.scope, b.place, depth + 1)
            for b in bindings)
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if isinstance(func, cst.Attribute) and func.attr.value in _FLOWS:
        return _image_generator(model, func.value, scope, place)
    if isinstance(func, cst.Name):
        function = model.lookup_function(func.value, scope, place)
        if function is not None:
            return function.class_info is None and _yields(function.node)
        cls = model.classes.get(func.value)
        return cls is not None and derives_from(model, cls, lambda name: name in _SEQUENCES)
    return False


def _image_generator(model: ModuleModel, receiver: cst.BaseExpression, scope: Optional[FunctionInfo],
                     place: Place) -> bool:
    """``receiver`` is ``ImageDataGenerator(...)``, or a name every reaching assignment binds to one."""
    values = [receiver]
    if isinstance(receiver, cst.Name):
        bindings = model.reaching(receiver.value, scope, place)
        if not bindings or any(b.kind != "assign" for b in bindings):
            return False
        values = [b.value for b in bindings]
    return all(isinstance(value, cst.Call) and (model.call_name(value) or "").rsplit(".", 1)[-1] == _IMAGE_GENERATOR
               for value in values)


class _Yields(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Yield(self, node: cst.Yield) -> None:
        self.found = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested def's yield makes that function a generator, not this one

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def _yields(node: cst.FunctionDef) -> bool:
    visitor = _Yields()
    node.body.visit(visitor)
    return visitor.found
