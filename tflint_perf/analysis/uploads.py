"""Loops a person paces by hand: over the files uploaded in a notebook, or waiting for typed input.

``for fn in uploaded.keys()`` with ``uploaded = files.upload()`` (``google.colab.files``), or, in an
``ipywidgets.FileUpload`` observer registered with ``uploader.observe(on_upload_change, ...)``,
``for item in change.new`` (or the widget's ``uploader.value``): each iteration is one file a person
picked in a dialog. However the body is written, such a loop does not repeat a step over data; a
performance finding about "X in a loop" there would send the user after a handful of calls.
Recognised from the API that makes the iterated value (resolved through the imports), never from
how names are spelled.

A loop whose body calls the builtin ``input()`` (``ans = input("Continue? [Y/n]")`` after each test
translation) waits for a person every iteration: one run per typed request, not a step repeated over data.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from tflint_perf.analysis.model import CallSite, FunctionInfo, LoopNode, ModuleModel

_COLAB_UPLOAD = "google.colab.files.upload"
_UPLOAD_WIDGETS = frozenset({"ipywidgets.FileUpload", "ipywidgets.widgets.FileUpload"})
_VIEWS = frozenset({"keys", "values", "items"})
_WRAPPERS = frozenset({"enumerate", "list", "sorted", "tuple"})
_MAX_DEPTH = 4


def iterates_uploads(model: ModuleModel, loop: LoopNode, scope: Optional[FunctionInfo]) -> bool:
    """``loop`` (in ``scope``; None: module level) is a ``for`` over files uploaded by hand."""
    return isinstance(loop, cst.For) and _uploaded(model, loop.iter, scope, 0)


# Modules whose `input` is the builtin's Python 2/3 shim (`from builtins import input`).
_BUILTIN_SHIMS = frozenset({"builtins", "future.builtins", "six.moves"})


def waits_for_input(model: ModuleModel, sites: List[CallSite]) -> bool:
    """Among a loop's calls (``sites``) is the builtin ``input()``: no def, assignment or import binds the
    name but the builtin's own shims."""
    for site in sites:
        func = site.node.func
        if isinstance(func, cst.Name) and func.value == "input" and model.imports.qualified_chain(func) is None \
                and model.lookup_function("input", site.function, site.place) is None \
                and all(b.kind == "import" and model.imports.modules & _BUILTIN_SHIMS
                        for b in model.scope_bindings("input", site.function)[1]):
            return True
    return False


def _uploaded(model: ModuleModel, expr: cst.BaseExpression, scope: Optional[FunctionInfo], depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in _VIEWS and not expr.args:
            return _uploaded(model, func.value, scope, depth + 1)  # `uploaded.keys()`
        if isinstance(func, cst.Name) and func.value in _WRAPPERS and expr.args and model.imports.qualified_chain(func) is None:
            return _uploaded(model, expr.args[0].value, scope, depth + 1)  # `enumerate(uploaded)`
        return model.imports.qualified_chain(func) == _COLAB_UPLOAD
    if isinstance(expr, cst.Name):
        bindings = model.scope_bindings(expr.value, scope)[1]
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return _uploaded(model, bindings[0].value, bindings[0].scope, depth + 1)
        return False
    new = _attribute_or_key(expr)
    if new is None:
        return False
    owner, field = new
    if field == "value":
        return _is_upload_widget(model, owner, scope)  # `uploader.value`
    if field == "new" and isinstance(owner, cst.Name) and scope is not None \
            and owner.value in scope.positional_parameters:
        return _observes_upload(model, scope)  # `change.new` in the widget's observer
    return False


def _attribute_or_key(expr: cst.BaseExpression) -> Optional[tuple]:
    """``x.field`` or ``x["field"]``: (x, field)."""
    if isinstance(expr, cst.Attribute):
        return expr.value, expr.attr.value
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        key = expr.slice[0].slice.value
        if isinstance(key, cst.SimpleString):
            return expr.value, key.evaluated_value
    return None


def _is_upload_widget(model: ModuleModel, expr: cst.BaseExpression, scope: Optional[FunctionInfo]) -> bool:
    if not isinstance(expr, cst.Name):
        return False
    bindings = model.scope_bindings(expr.value, scope)[1]  # the observer's, else the module's widget
    return bool(bindings) and all(
        b.kind == "assign" and isinstance(b.value, cst.Call)
        and model.imports.qualified_chain(b.value.func) in _UPLOAD_WIDGETS for b in bindings)


def _observes_upload(model: ModuleModel, function: FunctionInfo) -> bool:
    """``function`` is registered as an observer of an upload widget (``uploader.observe(function, ...)``)."""
    for site in model.calls:
        func = site.node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "observe" and site.node.args:
            handler = site.node.args[0].value
            if isinstance(handler, cst.Name) and model.lookup_function(handler.value, site.function, site.place) is function \
                    and _is_upload_widget(model, func.value, site.function):
                return True
    return False
