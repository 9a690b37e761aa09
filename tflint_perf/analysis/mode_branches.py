"""What the ``if``s around a place say it runs for: the branch of a mode switch.

Input builders shared by training and inference switch on a mode string (OpenSeq2Seq's
``if self.params['mode'] != 'infer': ... else: <the inference pipeline>``, Estimator input
functions' ``if mode == tf.estimator.ModeKeys.PREDICT``); the code in the inference branch runs once
over the inputs to transcribe or synthesise, not in every training step.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import string_literal
from tflint_perf.analysis.effects import nodes_within
from tflint_perf.analysis.model import CallSite
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.purpose import Purpose, purpose_of_builder

# `ModeKeys.PREDICT`, `ModeKeys.EVAL`, `ModeKeys.TRAIN`: the attribute names what the mode is.
_MODE_KEYS = {"PREDICT": "predict", "EVAL": "eval", "TRAIN": "train", "INFER": "infer"}


def branch_purpose(site: CallSite, module: cst.Module) -> Purpose:
    """Evaluation when the call sits in the branch a mode test takes for evaluation or inference
    (`if mode == 'infer':`, the `else` of `if mode != 'infer':`); training in the training branch;
    unknown when no enclosing `if` tests a mode against a literal. The innermost test decides."""
    if not site.place.blocks:
        return Purpose.UNKNOWN
    owners = _block_owners(site.function.node if site.function is not None else module)
    for block in reversed(site.place.blocks):
        owner = owners.get(id(block))
        if owner is None:
            continue
        if_node, in_body = owner
        purpose = _mode_test_purpose(if_node.test, in_body)
        if purpose is not Purpose.UNKNOWN:
            return purpose
    return Purpose.UNKNOWN


def _block_owners(scope: cst.CSTNode) -> Dict[int, Tuple[cst.If, bool]]:
    """Each `if`'s body and `else` block (by id), with the `if` and whether it is the body."""
    owners: Dict[int, Tuple[cst.If, bool]] = {}
    for if_node in nodes_within(scope, cst.If):
        owners[id(if_node.body)] = (if_node, True)
        if isinstance(if_node.orelse, cst.Else):
            owners[id(if_node.orelse.body)] = (if_node, False)
    return owners


def _mode_test_purpose(test: cst.BaseExpression, in_body: bool) -> Purpose:
    """`mode == 'infer'` (body) / `mode != 'infer'` (else): what the mode literal names. Through
    `and` in the body, `or` in the `else` (`if mode != 'infer' or style == 'wav': ... else:` runs
    in inference only) and `not`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _mode_test_purpose(test.expression, not in_body)
    if isinstance(test, cst.BooleanOperation):
        implies_both = isinstance(test.operator, cst.And) if in_body else isinstance(test.operator, cst.Or)
        if not implies_both:
            return Purpose.UNKNOWN
        for side in (test.left, test.right):
            purpose = _mode_test_purpose(side, in_body)
            if purpose is not Purpose.UNKNOWN:
                return purpose
        return Purpose.UNKNOWN
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return Purpose.UNKNOWN
    target = test.comparisons[0]
    if isinstance(target.operator, (cst.Equal, cst.In)):
        taken = in_body
    elif isinstance(target.operator, (cst.NotEqual, cst.NotIn)):
        taken = not in_body
    else:
        return Purpose.UNKNOWN
    if not taken:
        return Purpose.UNKNOWN  # the other branch: any mode but this one, which says nothing
    left, right = test.left, target.comparator
    if _names_mode(left):
        modes = _mode_literals(right)
    elif _names_mode(right):
        modes = _mode_literals(left)
    else:
        return Purpose.UNKNOWN
    if not modes:
        return Purpose.UNKNOWN
    purposes = {purpose_of_builder([mode]) for mode in modes}
    return purposes.pop() if len(purposes) == 1 else Purpose.UNKNOWN


def _names_mode(node: cst.BaseExpression) -> bool:
    """`mode`, `self.mode`, `params['mode']`, `self.params["mode"]`."""
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        index = node.slice[0].slice
        return isinstance(index, cst.Index) and string_literal(index.value) == "mode"
    text = dotted_text(node)
    return text is not None and text.rsplit(".", 1)[-1] == "mode"


def _mode_literals(node: cst.BaseExpression) -> List[str]:
    """The mode names a comparison's other side spells: a string, `ModeKeys.PREDICT`, or a tuple of them."""
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        found = [_mode_literal(element.value) for element in node.elements]
        return [mode for mode in found if mode is not None] if all(found) else []
    mode = _mode_literal(node)
    return [mode] if mode is not None else []


def _mode_literal(node: cst.BaseExpression) -> Optional[str]:
    literal = string_literal(node)
    if literal is not None:
        return literal
    text = dotted_text(node)
    if text is not None and ".ModeKeys." in f".{text}":
        return _MODE_KEYS.get(text.rsplit(".", 1)[-1])
    return None
