"""Which arithmetic a module's matrix multiplies run in, and so which sizes tensor cores want.

The hardware facts (rule-catalog G01): on NVIDIA GPUs with tensor cores, 16-bit math (float16,
bfloat16: Keras mixed precision, `dtype="float16"` layers, the graph rewrite) wants dimensions that
are multiples of 8. float32 code asks for no alignment of its own: tensor cores run it only as TF32,
on Ampere and later GPUs (a T4 or a V100 runs float32 without them), which the code does not say; a
user who states that hardware configures `alignment = 4` (rules/alignment.py). TPU code pads to its
own tiles (128) and TensorFlow Decision Forests trains no matrix multiply: neither gets a GPU
alignment finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Optional

import libcst as cst

from tflint_perf.analysis.arguments import argument, string_literal
from tflint_perf.analysis.model import ModuleModel

_POLICY_SETTERS = ("set_global_policy", "set_policy", "Policy", "set_dtype_policy", "DTypePolicy")
_GRAPH_REWRITE = ("enable_mixed_precision_graph_rewrite",)
_DECISION_FORESTS = "tensorflow_decision_forests"


@dataclass(frozen=True)
class Precision:
    name: str  # "float16", "bfloat16", "float32", "TPU", "decision forests"
    alignment: int  # the multiple tensor cores want; 0 where alignment does not apply or the code does not say
    because: str  # what in the module showed it, for messages

    def in_message(self) -> str:
        return f"{self.name} ({self.because})"


FLOAT32 = Precision("float32", 0, "no mixed-precision policy in this module; tensor cores run float32 only as "
                    "TF32, on Ampere and later GPUs, which the code does not say")


class PrecisionAnalysis:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model

    @cached_property
    def precision(self) -> Precision:
        if any(module.split(".")[0] == _DECISION_FORESTS for module in self.model.imports.modules):
            return Precision("decision forests", 0, "TensorFlow Decision Forests trains no matrix multiply")
        sixteen_bit: Optional[Precision] = None
        for site in self.model.calls:
            name = self.model.call_name(site.node)
            if name is None:
                continue
            if _is_tpu(name):
                return Precision("TPU", 0, f"`{name.rsplit('.', 1)[-1]}`: TPUs pad to their own tiles")
            if sixteen_bit is None:
                sixteen_bit = self._sixteen_bit(site.node, name)
        return sixteen_bit or FLOAT32

    def _sixteen_bit(self, call: cst.Call, name: str) -> Optional[Precision]:
        leaf = name.rsplit(".", 1)[-1]
        if leaf in _GRAPH_REWRITE:
            return Precision("float16", 8, "the mixed-precision graph rewrite")
        if leaf in _POLICY_SETTERS and "mixed_precision" in name or leaf in ("set_dtype_policy", "DTypePolicy"):
            policy = argument(call, "policy", None) or argument(call, "name", 0)
            text = string_literal(policy.value) if policy is not None else None
            if text is not None and "float16" in text:
                kind = "bfloat16" if "bfloat16" in text else "float16"
                return Precision(kind, 8, f"policy `{text}`")
        if name.startswith("keras.layers."):
            dtype = argument(call, "dtype", None)
            text = string_literal(dtype.value) if dtype is not None else None
            if text is not None and "float16" in text:
                kind = "bfloat16" if "bfloat16" in text else "float16"
                return Precision(kind, 8, f"layers with dtype `{text}`")
        return None


def _is_tpu(name: str) -> bool:
    return any(part.lower().startswith("tpu") for part in name.split("."))
