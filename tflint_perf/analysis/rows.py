"""How many rows an input evidently holds: one sample, a small batch, many rows, or unknown.

``Model.predict`` is built for large inputs (it batches them itself) and wastes its setup on one
sample; whether a call is worth a finding depends on which. Decided from how the input is written
and where the names it reads are bound, never from how they are spelled:

- ``ONE``: provably one row with its batch dimension: ``x[None]``, ``x[np.newaxis]``,
  ``np.expand_dims(x, 0)``, ``x.reshape(1, ...)``, ``x[i:i + 1]``, ``np.array([x])``,
  ``pad_sequences([tokens], ...)`` (``predict_on_batch`` returns exactly what ``predict`` does).
- ``FEW``: one sample or a small batch: a slice of at most ``SMALL_BATCH`` rows (``x[i:i + 32]``,
  ``x[i * 20:(i + 1) * 20]``), one item of an array (``x[i]``), one element of what a loop iterates
  (``for obs in observations``, ``for batch in dataset``).
- ``MANY``: evidently large: a slice of more rows than that (``x[i * 200000:(i + 1) * 200000]``), a
  shard (``np.array_split(x, n)[k]``, ``ds.shard(n, k)``), a tf.data pipeline.
- ``UNKNOWN``: anything else (a parameter, a whole array read from elsewhere, a function's result).

A name is followed to the bindings that reach the use (and, in a loop, those later in its body):
all of them must agree.
"""

from __future__ import annotations

from typing import Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument, int_literal
from tflint_perf.analysis.model import Binding, CallSite, FunctionInfo, ModuleModel, Place
from tflint_perf.analysis.names import dotted_text

ONE = "one"
FEW = "few"
MANY = "many"
UNKNOWN = "unknown"

SMALL_BATCH = 1024  # rows: beyond this, predict's per-call setup is a small share of the call
_EXPAND = frozenset({"numpy.expand_dims", "tf.expand_dims"})
_ONE_ROW_OF_LIST = frozenset({"numpy.array", "numpy.asarray", "tf.constant", "tf.convert_to_tensor",
                              "keras.preprocessing.sequence.pad_sequences", "keras.utils.pad_sequences"})
_SHARDS = frozenset({"numpy.array_split", "numpy.split"})
_ORDER = {ONE: 0, FEW: 1, MANY: 2}
_MAX_DEPTH = 3


def _join(first: str, second: str) -> str:
    """Bindings that disagree: the larger size wins only when both are known."""
    if UNKNOWN in (first, second):
        return UNKNOWN
    return first if _ORDER[first] >= _ORDER[second] else second


class Rows:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model

    def of(self, expr: cst.BaseExpression, site: CallSite) -> str:
        """ONE, FEW, MANY or UNKNOWN for ``expr``, an argument of ``site``."""
        if self._is_pipeline_input(site, expr):
            return MANY
        return self._rows(expr, site.function, site.place, site.lambdas, 0)

    def _is_pipeline_input(self, site: CallSite, expr: cst.BaseExpression) -> bool:
        """A tf.data pipeline the call consumes (``model.predict(ds)``): batched by the pipeline."""
        consumptions = self.model.pipelines.consumptions  # type: ignore[attr-defined]
        return any(c.node is site.node or c.node is expr for c in consumptions)

    def _rows(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
              lambdas: Tuple[cst.Lambda, ...], depth: int) -> str:
        if depth > _MAX_DEPTH:
            return UNKNOWN
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, scope, place, depth)
        if isinstance(expr, cst.Call):
            return self._call(expr, scope, place)
        if isinstance(expr, cst.Name):
            return self._name(expr, scope, place, lambdas, depth)
        return UNKNOWN

    def _subscript(self, expr: cst.Subscript, scope: Optional[FunctionInfo], place: Place, depth: int) -> str:
        if not expr.slice:
            return UNKNOWN
        first = expr.slice[0].slice
        if isinstance(first, cst.Index):
            value = first.value
            if (isinstance(value, cst.Name) and value.value == "None") or (dotted_text(value) or "").endswith("newaxis"):
                return ONE
            if isinstance(expr.value, cst.Call) and self.model.call_name(expr.value) in _SHARDS:
                return MANY  # np.array_split(x, n)[k]: one shard of many rows
            return FEW  # one item of an array or a list: one sample
        if isinstance(first, cst.Slice):
            span = self._span(first, scope)
            if span is None:
                return UNKNOWN
            return ONE if span == 1 else FEW if span <= SMALL_BATCH else MANY
        return UNKNOWN

    def _span(self, piece: cst.Slice, scope: Optional[FunctionInfo]) -> Optional[int]:
        """The rows a slice takes: ``a:a + k`` (k), ``i * k:(i + 1) * k`` (k), ``:k`` (k)."""
        if piece.step is not None:
            return None
        lower, upper = piece.lower, piece.upper
        if upper is None:
            return None
        if lower is None:
            return self._integer(upper, scope)
        code = self.model.module.code_for_node
        if isinstance(upper, cst.BinaryOperation) and isinstance(upper.operator, cst.Add) and code(upper.left) == code(lower):
            return self._integer(upper.right, scope)
        if (isinstance(lower, cst.BinaryOperation) and isinstance(upper, cst.BinaryOperation)
                and isinstance(lower.operator, cst.Multiply) and isinstance(upper.operator, cst.Multiply)
                and code(lower.right) == code(upper.right)):
            step = upper.left  # `(i + 1)` in `(i + 1) * k`, written in parentheses
            if isinstance(step, cst.BinaryOperation) and isinstance(step.operator, cst.Add) \
                    and code(step.left) == code(lower.left) and int_literal(step.right) == 1:
                return self._integer(lower.right, scope)
        return None

    def _integer(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo]) -> Optional[int]:
        value = int_literal(expr)
        if value is not None:
            return value
        if isinstance(expr, cst.Name) and self.model.scope_bindings(expr.value, scope)[0] is None:
            known = self.model.integer_values.integer(expr, None)  # type: ignore[attr-defined]
            return known.value if known is not None else None  # a module constant (`SHARD = 200_000`)
        return None

    def _call(self, call: cst.Call, scope: Optional[FunctionInfo], place: Place) -> str:
        name = self.model.call_name(call) or ""
        if name in _EXPAND:
            axis = argument(call, "axis", 1)
            return ONE if axis is not None and int_literal(axis.value) == 0 else UNKNOWN
        if name in _ONE_ROW_OF_LIST or name.endswith(".pad_sequences"):
            first = argument(call, "x", 0) if not name.startswith("numpy") else argument(call, "object", 0)
            first = first or (call.args[0] if call.args else None)
            if first is not None and isinstance(first.value, cst.List) and len(first.value.elements) == 1:
                return ONE
            return UNKNOWN
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "reshape" and call.args:
            shape = call.args[0].value
            if isinstance(shape, (cst.Tuple, cst.List)) and shape.elements:
                shape = shape.elements[0].value
            return ONE if int_literal(shape) == 1 else UNKNOWN
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "shard":
            return MANY
        return UNKNOWN

    def _name(self, expr: cst.Name, scope: Optional[FunctionInfo], place: Place,
              lambdas: Tuple[cst.Lambda, ...], depth: int) -> str:
        reaching = self.model.reaching(expr.value, scope, place, lambdas)
        if not reaching:
            return UNKNOWN
        found_scope, every = self.model.scope_bindings(expr.value, scope)
        # In a loop, a binding later in the body reaches the next iteration: take every binding of
        # the name in its own scope (the same answer whenever they all agree).
        bindings = list(every) if found_scope is scope else list(reaching)
        size: Optional[str] = None
        for binding in bindings:
            one = self._binding(binding, depth)
            size = one if size is None else _join(size, one)
            if size == UNKNOWN:
                return UNKNOWN
        return size or UNKNOWN

    def _binding(self, binding: Binding, depth: int) -> str:
        if binding.kind == "assign" and binding.value is not None:
            return self._rows(binding.value, binding.scope, binding.place, (), depth + 1)
        if binding.kind == "for" and not binding.path and binding.value is not None \
                and not (isinstance(binding.value, cst.Call) and isinstance(binding.value.func, cst.Name)
                         and binding.value.func.value in ("range", "enumerate", "zip")):
            return FEW  # one element of what the loop iterates: a sample, or one batch of a pipeline
        return UNKNOWN
