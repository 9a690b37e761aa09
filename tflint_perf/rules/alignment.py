"""Shared by the tensor-core alignment rules (TFP301, TFP302): their options and the arithmetic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from tflint_perf.analysis.constants import IntegerValue
from tflint_perf.analysis.model import CallSite
from tflint_perf.text.diagnostics import UNSAFE, FixPlan, NodeEdit
from tflint_perf.rules.base import Option, RuleContext

ALIGNMENT_OPTIONS = (
    Option(
        "alignment",
        0,
        "The multiple tensor cores want; 0 (the default) reads it from the module's precision: 8 for a "
        "float16/bfloat16 mixed-precision policy; none for float32 (whether TF32 tensor cores run it depends "
        "on the GPU, Ampere and later, and on a small layer the gain is microseconds), TPU or Decision Forests "
        "code; set 8 (16-bit), 4 (TF32 on Ampere or later) or 16 (int8) to state your hardware instead.",
        example=8,
    ),
    Option(
        "min-width",
        64,
        "Literals below this are never reported: layers and batches that small are memory-bound, so "
        "tensor-core alignment makes no measurable difference (NVIDIA's guides ask for 64 and more).",
    ),
)


@dataclass(frozen=True)
class Misalignment:
    aligned: int  # the next multiple
    alignment: int
    assumed: str  # the precision the alignment came from, for the message
    value: IntegerValue

    def describe(self) -> str:
        origin = f" ({self.value.origin})" if self.value.origin else ""
        return f"{self.value.value}{origin} is not a multiple of {self.alignment} ({self.assumed})"

    def fix(self) -> Optional[FixPlan]:
        """Round the literal up; a value set elsewhere (a constant, a flag) gets no fix here."""
        literal = self.value.literal
        return round_up_fix(literal, self.aligned) if literal is not None else None


def integer_value(node: cst.Integer) -> Optional[int]:
    try:
        return int(node.value.replace("_", ""), 0)
    except ValueError:
        return None


def alignment_for(context: RuleContext) -> tuple:
    """(alignment, what it assumes); alignment 0 when the module's hardware makes alignment moot."""
    configured = context.option("alignment")
    precision = context.model.precision
    if precision.name == "decision forests":
        return 0, precision.in_message()
    if configured:
        return configured, "the configured alignment"
    # A mixed-precision policy is the code's own statement that it targets tensor cores (8). float32
    # asks for none (analysis/precision.py): TF32 tensor cores exist only from Ampere on, and the
    # measured gain of an aligned float32 layer is a few microseconds a step on the widths of real
    # notebooks (benchmarks/tensor_core_alignment.py); TPU code pads to its own tiles.
    return precision.alignment, precision.in_message()


def misaligned(context: RuleContext, expr: cst.BaseExpression, site: Optional[CallSite] = None) -> Optional[Misalignment]:
    """How a reportable misaligned size misses the alignment, else None: a literal, or a value
    followed to a constant, a parameter default or a flag (analysis/constants.py)."""
    if context.is_test_code:
        return None
    found = context.model.integer_values.integer(expr, site)
    if found is None or found.value < max(context.option("min-width"), 1):
        return None
    alignment, assumed = alignment_for(context)
    if alignment < 2 or found.value % alignment == 0:
        return None
    return Misalignment(-(-found.value // alignment) * alignment, alignment, assumed, found)


def round_up_fix(node: cst.Integer, aligned: int) -> FixPlan:
    return FixPlan(UNSAFE, f"Round up to {aligned}", (NodeEdit(node, "replace", str(aligned)),))
