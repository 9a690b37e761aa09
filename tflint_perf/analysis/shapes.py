"""Values whose shape changes from one loop iteration to the next.

Two sources are recognised, both only where the analysis sees them:

- ``varying_batches``: a pipeline state whose batches differ in shape from batch to batch:
  ``padded_batch`` without fully static ``padded_shapes`` (each batch is padded to its own longest
  element) or ``bucket_by_sequence_length`` without ``pad_to_bucket_boundary=True``, followed only
  by ops that keep shapes. Not when the elements are rows of in-memory arrays, or come from a
  generator declaring fully static shapes, with no op in between that could change their length (every batch then has the same shape, padded or not),
  or when a map pads every sequence in Python to the length a later `filter` bounds them by
  (``fixed_lengths.one_length``). A last
  partial batch is *not* a varying shape here: it costs at most one extra trace.
- ``loop_sized``: an expression sized by a ``for n in range(...)`` variable of an enclosing loop
  (in a function or at module level alike; ``tqdm(range(...))`` too): ``x[:n]``, ``x[n:]``,
  ``tokens[:, :n + 1]``, ``tf.zeros([n, d])``, ``np.random.rand(n)`` (directly, or through a name
  assigned so in the loop body).

``from_loop_target`` tells whether an expression is (a part of) what a ``for`` loop binds.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_perf.analysis.arguments import argument, bool_literal
from tflint_perf.analysis.fixed_lengths import one_length
from tflint_perf.analysis.generators import declared_shapes
from tflint_perf.analysis.model import CallSite, ModuleModel
from tflint_perf.analysis.pipelines.values import State

SHAPE_KEEPING = frozenset({"prefetch", "repeat", "take", "skip", "shuffle", "cache", "with_options", "shard", "filter"})
_IN_MEMORY = frozenset({"tf.data.Dataset.from_tensor_slices", "tf.data.Dataset.from_tensors", "tf.data.Dataset.range"})
_SIZED_CONSTRUCTORS = frozenset(
    {"tf.zeros", "tf.ones", "tf.fill", "tf.random.normal", "tf.random.uniform", "tf.random.truncated_normal",
     "numpy.zeros", "numpy.ones", "numpy.empty", "numpy.random.rand", "numpy.random.randn", "numpy.random.normal",
     "numpy.random.uniform", "numpy.arange", "tf.range"}
)


def varying_batches(model: ModuleModel, state: State) -> Optional[str]:
    """Why the state's batches change shape from batch to batch (for a message), or None."""
    for index in range(len(state.ops) - 1, -1, -1):
        op = state.ops[index]
        if op.name in SHAPE_KEEPING:
            continue
        if op.name == "padded_batch":
            shapes = argument(op.call, "padded_shapes", 1)
            if shapes is not None and _fully_static(model, shapes.value, model.site_of(op.call)):
                return None
            if _rectangular_rows(model, state, index) or one_length(model, state.ops[:index], SHAPE_KEEPING):
                return None  # rows of arrays, or sequences padded in Python to the length a filter keeps
            return "`padded_batch` pads each batch to its own longest element"
        if op.name == "bucket_by_sequence_length" or (op.name == "apply" and _bucketing(model, op.call)):
            call = op.call if op.name == "bucket_by_sequence_length" else op.call.args[0].value
            if bool_literal(_keyword(call, "pad_to_bucket_boundary")) is True:
                return None
            return "`bucket_by_sequence_length` pads each batch to its own longest element"
        return None
    return None


def _bucketing(model: ModuleModel, call: cst.Call) -> bool:
    inner = call.args[0].value if call.args else None
    return isinstance(inner, cst.Call) and model.call_name(inner) == "tf.data.experimental.bucket_by_sequence_length"


def _keyword(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _fully_static(model: ModuleModel, expr: cst.BaseExpression, site: Optional[CallSite]) -> bool:
    """Every dimension of ``padded_shapes`` is an integer: a literal, or a name or flag the code sets
    to one (`padded_shapes=(AUDIO_MAXLEN, LABEL_MAXLEN)` with `AUDIO_MAXLEN = 246000`)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value == "None":
            return False
        if isinstance(node, (cst.Name, cst.Attribute)):
            if model.integer_values.integer(node, site) is None:
                return False
            continue
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return False
        if isinstance(node, (cst.Tuple, cst.List, cst.Dict, cst.DictElement, cst.Element, cst.Integer)):
            stack.extend(node.children)
        elif isinstance(node, (cst.Comma, cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
                               cst.LeftCurlyBrace, cst.RightCurlyBrace, cst.SimpleWhitespace, cst.SimpleString,
                               cst.ParenthesizedWhitespace, cst.Colon, cst.MaybeSentinel)):
            continue
        else:
            return False  # a name or a call: not known to be static
    return True


def _rectangular_rows(model: ModuleModel, state: State, index: int) -> bool:
    source = state.source.node
    if not isinstance(source, cst.Call):
        return False
    name = model.call_name(source)
    static_generator = name == "tf.data.Dataset.from_generator" and declared_shapes(source) == "static"
    if name not in _IN_MEMORY and not static_generator:
        return False
    return all(op.name in SHAPE_KEEPING for op in state.ops[:index])


# -- loops ------------------------------------------------------------------------------------
def loop_sized(model: ModuleModel, site: CallSite, expr: cst.BaseExpression, depth: int = 0) -> Optional[str]:
    """The range variable an expression's size follows (``n`` in ``x[:n]``), or None."""
    if isinstance(expr, cst.Subscript):
        return _sliced_by_loop(model, site, expr)
    if isinstance(expr, cst.Call) and model.call_name(expr) in _SIZED_CONSTRUCTORS:
        shape = argument(expr, "shape", 0)
        if shape is None:
            return None
        candidates = [shape.value]
        if isinstance(shape.value, (cst.List, cst.Tuple)):
            candidates = [e.value for e in shape.value.elements]
        for candidate in candidates:
            if _range_variable(model, site, candidate):
                return candidate.value  # type: ignore[union-attr]
        return None
    if isinstance(expr, cst.Name) and depth == 0:
        bindings = model.reaching(expr.value, site.function, site.place, site.lambdas)
        if bindings and len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            binding = bindings[0]
            inside = [loop for loop in site.loops if _within(binding.place.blocks, loop)]
            if inside:
                return loop_sized(model, site, binding.value, depth + 1)
    return None


def _sliced_by_loop(model: ModuleModel, site: CallSite, expr: cst.Subscript) -> Optional[str]:
    """``x[:n]``, ``x[n:]``, ``tokens[:, :i + 1]`` (a growing sequence axis, the generation loop's
    shape): one axis sliced to a length the range variable sets, every other axis whole (``:``) or
    a literal index."""
    sized: Optional[str] = None
    for element in expr.slice:
        piece = element.slice
        if isinstance(piece, cst.Index):
            if isinstance(piece.value, (cst.Integer, cst.Ellipsis)):
                continue
            return None
        if piece.step is not None:
            return None
        if piece.lower is None and piece.upper is None:
            continue  # a whole axis
        if sized is not None:
            return None
        bounds = [piece.lower, piece.upper]
        loop_vars = [name for name in (_loop_bound(model, site, b) for b in bounds if b is not None) if name]
        fixed = [b for b in bounds if b is None or isinstance(b, cst.Integer)]
        if len(loop_vars) != 1 or len(fixed) != 1:
            return None
        sized = loop_vars[0]
    return sized


def _loop_bound(model: ModuleModel, site: CallSite, bound: cst.BaseExpression) -> Optional[str]:
    """The range variable a slice bound follows: ``n``, ``n + 1``, ``n - 1``, ``2 * n``."""
    if _range_variable(model, site, bound):
        return bound.value  # type: ignore[union-attr]
    if isinstance(bound, cst.BinaryOperation) and isinstance(bound.operator, (cst.Add, cst.Subtract, cst.Multiply)):
        for variable, other in ((bound.left, bound.right), (bound.right, bound.left)):
            if isinstance(other, cst.Integer) and _range_variable(model, site, variable):
                return variable.value  # type: ignore[union-attr]
    return None


def _within(blocks, loop: cst.CSTNode) -> bool:
    body = getattr(loop, "body", None)
    return body is not None and any(block is body for block in blocks)


def _range_variable(model: ModuleModel, site: CallSite, expr: cst.CSTNode) -> bool:
    """``expr`` is a name bound by ``for <name> in range(...)`` of a loop around ``site``."""
    if not isinstance(expr, cst.Name):
        return False
    for loop in site.loops:
        if isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and loop.target.value == expr.value:
            it = loop.iter
            counted = it
            if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "tqdm" and it.args:
                counted = it.args[0].value  # `for i in tqdm(range(n))`: a progress bar around the same range
            if isinstance(counted, cst.Call) and isinstance(counted.func, cst.Name) and counted.func.value == "range":
                bindings = model.reaching(expr.value, site.function, site.place, site.lambdas) or []
                return all(b.kind == "for" and b.value is it for b in bindings)
    return False


def from_loop_target(model: ModuleModel, site: CallSite, expr: cst.BaseExpression, loop: cst.For,
                     depth: int = 0) -> bool:
    """``expr`` is what ``loop`` binds (``batch``; ``x`` in ``for x, y in ds``; ``batch["ids"]``;
    ``x`` after ``x, y = batch`` in the loop body). The index of ``enumerate`` does not count."""
    while isinstance(expr, (cst.Subscript, cst.Attribute)):
        expr = expr.value
    if not isinstance(expr, cst.Name) or depth > 3:
        return False
    bindings = model.reaching(expr.value, site.function, site.place, site.lambdas)
    if not bindings:
        return False
    for binding in bindings:
        if binding.kind == "for" and binding.value is loop.iter:
            it = loop.iter
            enumerating = isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "enumerate"
            if enumerating and binding.path[:1] != (1,):
                return False
            continue
        if binding.kind in ("assign", "unpack") and binding.value is not None and _within(binding.place.blocks, loop):
            if from_loop_target(model, site, binding.value, loop, depth + 1):
                continue
        return False
    return True
