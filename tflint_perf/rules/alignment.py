"""Shared by the tensor-core alignment rules (TFP301, TFP302): their options and the arithmetic."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_perf.analysis.files import is_test_file
from tflint_perf.diagnostics import UNSAFE, FixPlan, NodeEdit
from tflint_perf.rules.base import Option, RuleContext

ALIGNMENT_OPTIONS = (
    Option(
        "alignment",
        8,
        "the multiple tensor cores want: 8 for float16/bfloat16, 4 for TF32-only, 16 for int8",
    ),
    Option("min-width", 16, "literals below this are never reported (tiny layers and batches are deliberate)"),
)


def integer_value(node: cst.Integer) -> Optional[int]:
    try:
        return int(node.value.replace("_", ""), 0)
    except ValueError:
        return None


def misaligned(context: RuleContext, node: cst.Integer) -> Optional[int]:
    """The next multiple of the alignment when ``node`` is a reportable misaligned literal, else None."""
    alignment = context.option("alignment")
    minimum = context.option("min-width")
    value = integer_value(node)
    if value is None or alignment < 2 or value < max(minimum, 1) or value % alignment == 0:
        return None
    if is_test_file(context.filename):
        return None
    return -(-value // alignment) * alignment


def round_up_fix(node: cst.Integer, aligned: int) -> FixPlan:
    return FixPlan(UNSAFE, f"Round up to {aligned}", (NodeEdit(node, "replace", str(aligned)),))
