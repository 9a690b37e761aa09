"""Code written to run on several TensorFlow versions: an API used only where a feature or version check
chose it.

A deprecated spelling on a branch of such a check is the compatible way to write it, not advice to give:
the new API is used wherever it exists, and the old one only where it does not (OpenNMT-tf keeps
``tf.data.experimental.sample_from_datasets`` for TensorFlow < 2.7 behind ``compat.tf_supports(...)``).

``CompatibilityChecks.on_branch`` answers for one node (``model.compatibility.on_branch(node)``). The checks recognised:

- ``if`` / ``elif`` / a conditional expression whose test asks for the feature or the version:
  ``hasattr(tf.data.Dataset, "sample_from_datasets")``, a helper named for it (``tf_supports(...)``,
  ``has_feature(...)``, ``is_available(...)``, ``version.parse(...)``), a same-file function whose body
  calls ``hasattr``, or a comparison with a version (``tf.__version__``, ``TF_VERSION >= (2, 7)``);
- ``try: new except AttributeError: old`` (also ``ImportError``, ``ModuleNotFoundError``, ``NameError``):
  either side of the ``try``;
- ``getattr(tf.data, "AUTOTUNE", tf.data.experimental.AUTOTUNE)``: the old spelling as the default;
- code after ``if <such a check>: return new`` in the same block (an ``else`` written as an early return).

Either branch of a check counts: which one the old API sits on depends on how the test is phrased.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional

import libcst as cst

from tflint_perf.analysis.model import ModuleModel
from tflint_perf.analysis.names import dotted_text

# Words a check for a feature or a version is named with: `tf_supports`, `has_feature`, `is_available`,
# `version.parse`, `LooseVersion`, `tf.__version__`, `TF_VERSION`.
_CHECK_NAME = re.compile(r"(^|_)(supports?|has|is_\w*available|available)(_|$)|version", re.IGNORECASE)
_MISSING_FEATURE_ERRORS = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError", "NameError"})


class CompatibilityChecks:
    """Which nodes of a module sit on a branch of a feature or version check (see the module doc)."""

    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._parents: Optional[Dict[int, cst.CSTNode]] = None

    def on_branch(self, node: cst.CSTNode) -> bool:
        """``node`` is used only on a branch of a feature or version check."""
        model, parents = self.model, self._parent_map()
        child: cst.CSTNode = node
        current = parents.get(id(node))
        while current is not None:
            if isinstance(current, (cst.If, cst.IfExp)) and _is_feature_check(model, current.test):
                return True
            if isinstance(current, cst.ExceptHandler) and _catches_missing_feature(current):
                return True
            if isinstance(current, cst.Try) and child is current.body and any(_catches_missing_feature(h) for h in current.handlers):
                return True
            if isinstance(current, cst.Arg) and _is_getattr_default(parents.get(id(current)), current):
                return True
            if isinstance(current, (cst.IndentedBlock, cst.Module)) and self._after_exiting_check(current, child):
                return True
            child, current = current, parents.get(id(current))
        return False

    def _after_exiting_check(self, block: "cst.IndentedBlock | cst.Module", statement: cst.CSTNode) -> bool:
        """``statement`` follows, in the same block, ``if <feature check>: ... return`` (no ``else``): it
        runs only where the check failed, as an ``else`` branch would."""
        for earlier in block.body:
            if earlier is statement:
                return False
            if (isinstance(earlier, cst.If) and earlier.orelse is None and _exits(earlier.body)
                    and _is_feature_check(self.model, earlier.test)):
                return True
        return False

    def _parent_map(self) -> Dict[int, cst.CSTNode]:
        """Each node's parent, by node id (the model holds the module, so the ids stay its nodes');
        built when a rule first asks, which only files with a deprecated spelling do."""
        if self._parents is None:
            parents: Dict[int, cst.CSTNode] = {}
            stack: List[cst.CSTNode] = [self.model.module]
            while stack:
                node = stack.pop()
                for child in node.children:
                    parents[id(child)] = node
                    stack.append(child)
            self._parents = parents
        return self._parents


def _is_feature_check(model: ModuleModel, test: cst.BaseExpression) -> bool:
    stack: List[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            name = dotted_text(node.func) or ""
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "hasattr" or _CHECK_NAME.search(leaf) or (leaf in model.module_functions and _tests_attributes(model, leaf)):
                return True
        elif isinstance(node, cst.Comparison):
            text = model.module.code_for_node(node)
            if "version" in text.lower():
                return True
        stack.extend(node.children)
    return False


def _exits(body: cst.BaseSuite) -> bool:
    """The block's last statement is a ``return`` or ``raise``: code after the ``if`` runs only when its test failed."""
    lines = body.body if isinstance(body, cst.IndentedBlock) else (body,)
    last = lines[-1] if lines else None
    return isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and isinstance(
        last.body[-1], (cst.Return, cst.Raise))


def _tests_attributes(model: ModuleModel, name: str) -> bool:
    """A same-file helper whose body asks whether an attribute exists (``hasattr`` / ``getattr``)."""
    function = model.module_functions[name]
    return any(
        isinstance(site.node.func, cst.Name) and site.node.func.value in ("hasattr", "getattr")
        for site in model.calls_in(function)
    )


def _catches_missing_feature(handler: cst.ExceptHandler) -> bool:
    caught = handler.type
    if caught is None:
        return False
    names = [e.value for e in caught.elements] if isinstance(caught, cst.Tuple) else [caught]
    return any((dotted_text(n) or "").rsplit(".", 1)[-1] in _MISSING_FEATURE_ERRORS for n in names)


def _is_getattr_default(call: Optional[cst.CSTNode], arg: cst.Arg) -> bool:
    return (
        isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "getattr"
        and len(call.args) == 3 and call.args[2] is arg
    )
