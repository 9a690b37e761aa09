"""How many rows an input evidently holds: one sample, a small batch, many rows, or unknown.

``Model.predict`` is built for large inputs (it batches them itself) and wastes its setup on one
sample; whether a call is worth a finding depends on which. Decided from how the input is written
and where the names it reads are bound, never from how they are spelled:

- ``ONE``: provably one row with its batch dimension: ``x[None]``, ``x[np.newaxis]``,
  ``np.expand_dims(x, 0)``, ``x.reshape(1, ...)``, ``tf.reshape(x, [1, -1])``, ``x[i:i + 1]``,
  ``np.zeros((1, n))``, ``np.array([x])``, a layer or tokenizer called on a list of one
  (``vectorize([sentence])``; ``to_array([token_ids], [segment_ids])``, one list per input), ``tf.concat([one, more], axis=1)`` (a longer row), a tuple of such
  inputs (``(inputs, state)``: inputs share their batch dimension). ``predict_on_batch`` returns
  exactly what ``predict`` does on these.
- ``FEW``: one sample or a small batch: a slice of at most ``SMALL_BATCH`` rows (``x[i:i + 32]``,
  ``x[i * 20:(i + 1) * 20]``), ``np.random.normal(size=(20, latent_dim))``, one item of an array
  (``x[i]``), one element of what a loop iterates (``for obs in observations``, ``for images,
  labels in dataset``: a batch; or its parts unpacked in the loop's body, ``s, a, r = transition``), ``next(batches)``, a Keras model or layer, a cast or an application's
  ``preprocess_input`` applied to one of those.
- ``MANY``: evidently large: a slice of more rows than that (``x[i * 200000:(i + 1) * 200000]``),
  a shard (``np.array_split(x, n)[k]``, ``ds.shard(n, k)``), a fold of a cross-validation split (``x[test]``
  in ``for train, test in kf.split(x)``: a fraction of x's rows, ``analysis/cross_validation.py``), a tf.data
  pipeline, one batch of at least ``FILE_BATCH`` images a Keras directory iterator reads from disk (``for x, y
  in gen.flow_from_directory(path, batch_size=64)``: the reads, the decoding and the forward pass of so many
  images dwarf predict's per-call setup).
- ``UNKNOWN``: anything else (a parameter, a whole array read from elsewhere, a function's result).

A name is followed to the bindings that reach the use (and, in a loop around the call, those later
in its body, which reach the next iteration); all of them must agree, except that ``x[k] = v``, ``x += v`` and a
rebinding from the name itself along a non-batch axis (``x = tf.concat([x, token], axis=1)``)
keep its rows, as does a rebinding through a call that keeps rows (``x = preprocess_input(x)``, an
autoregressive ``y = model.predict(y)``); several inputs joined into one list (``[target_seq] + states``)
share their batch dimension.
"""

from __future__ import annotations

from typing import FrozenSet, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument, has_star_args, int_literal
from tflint_perf.analysis.cross_validation import CrossValidation
from tflint_perf.analysis.data_size import constructor_shape, slice_length
from tflint_perf.analysis.model import Binding, CallSite, FunctionInfo, ModuleModel, Place
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.unpacking import unpacked_sources

ONE = "one"
FEW = "few"
MANY = "many"
UNKNOWN = "unknown"
_SAME = "same"  # a rebinding that keeps the rows the name already has

SMALL_BATCH = 1024  # rows: beyond this, predict's per-call setup is a small share of the call
# Images per batch of a Keras directory iterator from which a batch is evidently large: each call reads,
# decodes and resizes this many files and runs the model on them (a confusion matrix over
# `flow_from_directory(..., batch_size=64)` through ResNet50); 20-image batches stay a small batch.
FILE_BATCH = 64
# Keras' iterators that read a batch of image files from disk per step, and the position of `batch_size`.
_FILE_ITERATORS = {"flow_from_directory": 5, "flow_from_dataframe": None}
_ITERATOR_DEFAULT_BATCH = 32
_EXPAND = frozenset({"numpy.expand_dims", "tf.expand_dims", "keras.ops.expand_dims"})
_RESHAPE = frozenset({"tf.reshape", "numpy.reshape", "keras.ops.reshape"})
_CONCAT = frozenset({"tf.concat", "numpy.concatenate", "keras.ops.concatenate"})
_SHARDS = frozenset({"numpy.array_split", "numpy.split"})
# Functions that return what a one-element list holds, not a batch of one.
_NOT_BATCHING = _CONCAT | frozenset({"numpy.stack", "tf.stack", "numpy.hstack", "numpy.vstack", "len", "list",
                                     "tuple", "sum", "max", "min", "sorted", "zip", "enumerate"})
_ROW_WISE = frozenset({"tf.cast", "tf.image.resize", "tf.image.convert_image_dtype", "numpy.asarray", "numpy.float32",
                       "keras.ops.cast", "keras.ops.convert_to_tensor", "tf.convert_to_tensor"})
_LAYER_ROOTS = ("keras.layers.", "keras_hub.layers.", "keras_nlp.layers.", "keras_cv.layers.")
_ORDER = {ONE: 0, FEW: 1, MANY: 2}
_MAX_DEPTH = 4


def _join(first: Optional[str], second: str) -> Optional[str]:
    """Bindings that disagree: the larger size, when both are known."""
    if second == _SAME:
        return first
    if first is None:
        return second
    if UNKNOWN in (first, second):
        return UNKNOWN
    return first if _ORDER[first] >= _ORDER[second] else second


def _batches_of_one(call: cst.Call, name: str, positional: list) -> bool:
    """A call given only lists of one element (``np.array([x])``, ``tokenizer([sentence])``, bert4keras'
    ``to_array([token_ids], [segment_ids])``): each list becomes a batch of one; not a function that
    returns what the list holds (``len``, ``np.concatenate``, ``zip``)."""
    if not positional or any(arg.star for arg in call.args) or name in _NOT_BATCHING \
            or (isinstance(call.func, cst.Name) and call.func.value in _NOT_BATCHING):
        return False
    return all(isinstance(arg, cst.List) and len(arg.elements) == 1
               and not isinstance(arg.elements[0], cst.StarredElement) for arg in positional)


def _count(rows: int) -> str:
    return ONE if rows == 1 else FEW if rows <= SMALL_BATCH else MANY


class Rows:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._loop_bodies: list = []  # the bodies of the loops around the call being sized
        self._cross_validation = CrossValidation(model)

    def of(self, expr: cst.BaseExpression, site: CallSite) -> str:
        """ONE, FEW, MANY or UNKNOWN for ``expr``, an argument of ``site``."""
        if self._is_pipeline_input(site, expr):
            return MANY
        self._loop_bodies = [loop.body for loop in site.loops]
        found = self._rows(expr, site.function, site.place, site.lambdas, 0, frozenset())
        return UNKNOWN if found == _SAME else found

    def _is_pipeline_input(self, site: CallSite, expr: cst.BaseExpression) -> bool:
        """A tf.data pipeline the call consumes (``model.predict(ds)``): batched by the pipeline."""
        consumptions = self.model.pipelines.consumptions  # type: ignore[attr-defined]
        return any(c.node is site.node or c.node is expr for c in consumptions)

    def _rows(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
              lambdas: Tuple[cst.Lambda, ...], depth: int, resolving: FrozenSet[str]) -> str:
        if depth > _MAX_DEPTH:
            return UNKNOWN
        again = lambda e: self._rows(e, scope, place, lambdas, depth + 1, resolving)  # noqa: E731
        if isinstance(expr, cst.Name):
            if expr.value in resolving:
                return _SAME
            return self._name(expr, scope, place, lambdas, depth, resolving)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, scope, place, lambdas, again)
        if isinstance(expr, cst.Call):
            found = self._call(expr, scope, place, lambdas, again)
            return self._returned(expr, depth) if found == UNKNOWN else found
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.right, (cst.Integer, cst.Float)):
            return again(expr.left)  # `x / 255`: scaled, the same rows
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add) \
                and isinstance(expr.left, (cst.List, cst.Tuple)):
            return again(expr.left)  # `[target_seq] + states_value`: inputs of one model joined in one list
        if isinstance(expr, (cst.Tuple, cst.List)) and expr.elements and not isinstance(expr.elements[0], cst.StarredElement):
            return again(expr.elements[0].value)  # several inputs of one model: they share the batch dimension
        if isinstance(expr, cst.Dict):
            # `{"decoder_initial_state": state, "decoder_input": np.zeros((1, n))}`: named inputs of one
            # model share the batch dimension; the first whose rows are known says them.
            for element in expr.elements:
                rows = again(element.value) if isinstance(element, cst.DictElement) else UNKNOWN
                if rows != UNKNOWN:
                    return rows
        return UNKNOWN

    def _subscript(self, expr: cst.Subscript, scope: Optional[FunctionInfo], place: Place,
                   lambdas: Tuple[cst.Lambda, ...], again) -> str:
        if not expr.slice:
            return UNKNOWN
        first = expr.slice[0].slice
        if isinstance(first, cst.Index):
            value = first.value
            if (isinstance(value, cst.Name) and value.value == "None") or (dotted_text(value) or "").endswith("newaxis"):
                return ONE
            if isinstance(expr.value, cst.Call) and self.model.call_name(expr.value) in _SHARDS:
                return MANY  # np.array_split(x, n)[k]: one shard of many rows
            if isinstance(value, cst.Name) and self._cross_validation.holds_fold(value.value, scope, place, lambdas):
                # `x[test]`, `test` a fold's indices from `kf.split(x)`: a fraction of x, never one sample;
                # as large as x is known to be, no more (a fold of an unknown table is not evidently large).
                whole = again(expr.value)
                return whole if whole == MANY else UNKNOWN
            return FEW  # one item of an array or a list: one sample
        if isinstance(first, cst.Slice):
            if first.lower is None and first.upper is None and first.step is None:
                return again(expr.value)  # `x[:, i:i + 1]`: every row of x
            span = self._span(first, scope)
            if span is None:
                # `batch[0:n]` of an array of a few rows: at most as many rows as the array
                return FEW if again(expr.value) in (ONE, FEW) else UNKNOWN
            return _count(span)
        return UNKNOWN

    def _span(self, piece: cst.Slice, scope: Optional[FunctionInfo]) -> Optional[int]:
        """The rows a slice takes (``a:a + k``, ``i * k:(i + 1) * k``, ``:k``), its count read in ``scope``."""
        return slice_length(piece, self.model.module.code_for_node, lambda expr: self._integer(expr, scope))

    def _integer(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], depth: int = 0) -> Optional[int]:
        if depth > _MAX_DEPTH:
            return None
        value = int_literal(expr)
        if value is not None:
            return value
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Add)):
            left, right = self._integer(expr.left, scope, depth + 1), self._integer(expr.right, scope, depth + 1)
            if left is None or right is None:
                return None
            return left * right if isinstance(expr.operator, cst.Multiply) else left + right  # `batch_size * 2`
        if isinstance(expr, cst.Name) and self.model.scope_bindings(expr.value, scope)[0] is None:
            known = self.model.integer_values.integer(expr, None)  # type: ignore[attr-defined]
            return known.value if known is not None else None  # a module constant (`SHARD = 200_000`)
        if isinstance(expr, cst.Name) and scope is not None:
            bindings = self.model.scope_bindings(expr.value, scope)[1]
            if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
                return int_literal(bindings[0].value)  # a local set once (`batch_size = 64`)
            if len(bindings) == 1 and bindings[0].kind == "unpack":
                return self._unpacked_integer(bindings[0], depth)
            return self._parameter_integer(expr.value, scope)
        return None

    def _unpacked_integer(self, binding: Binding, depth: int) -> Optional[int]:
        """``batch_size, latent_size, steps, name = params``, the caller's ``params = (batch_size, ...)``:
        the largest integer the element may be; None unless every source is one."""
        found: Optional[int] = None
        for source in unpacked_sources(self.model, binding) or [None]:
            rows = self if source is None or source.model is self.model else Rows(source.model)
            value = rows._integer(source.expr, source.scope, depth + 1) if source is not None else None
            if value is None:
                return None
            found = value if found is None else max(found, value)
        return found

    def _parameter_integer(self, name: str, function: FunctionInfo) -> Optional[int]:
        """A parameter never rebound: its integer default when nothing in the file calls the function,
        else the largest integer the callers bind it to (``ValueSources.largest_passed``: literals, module
        constants, the callers' own parameters); None if a caller passes anything else."""
        owner, bindings = self.model.scope_bindings(name, function)  # a closure reads its enclosing function's
        if owner is None or len(bindings) != 1 or bindings[0].kind != "param":
            return None
        if self.model.call_graph.callers(owner):
            known = self.model.integer_values.largest_passed(owner, name)  # type: ignore[attr-defined]
            return known.value if known is not None else None
        return int_literal(bindings[0].value) if bindings[0].value is not None else None

    def _leading(self, shape: Optional[cst.BaseExpression], scope: Optional[FunctionInfo],
                 place: Optional[Place] = None) -> Optional[int]:
        """The first dimension of a shape written as a tuple or a list, or named (`shape = (1, n)`: its
        one binding, or the one that reaches ``place``); of ``(batch_size,) + img_size``, the first tuple's."""
        if isinstance(shape, cst.Name):
            bindings = self.model.scope_bindings(shape.value, scope)[1]
            if len(bindings) != 1 and place is not None:
                bindings = list(self.model.reaching(shape.value, scope, place) or [])
            if len(bindings) == 1 and bindings[0].kind == "assign":
                shape = bindings[0].value
        while isinstance(shape, cst.BinaryOperation) and isinstance(shape.operator, cst.Add):
            shape = shape.left
        if isinstance(shape, (cst.Tuple, cst.List)) and shape.elements:
            return self._integer(shape.elements[0].value, scope)
        return None

    def _call(self, call: cst.Call, scope: Optional[FunctionInfo], place: Place,
              lambdas: Tuple[cst.Lambda, ...], again) -> str:
        name = self.model.call_name(call) or ""
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if name in _EXPAND:
            axis = argument(call, "axis", 1)
            return ONE if axis is not None and int_literal(axis.value) == 0 else UNKNOWN
        if name in _RESHAPE or (isinstance(call.func, cst.Attribute) and call.func.attr.value == "reshape" and not name):
            shape = argument(call, "shape", 1) if name in _RESHAPE else (call.args[0] if call.args else None)
            value = shape.value if shape is not None else None
            rows = int_literal(value) if value is not None and not isinstance(value, (cst.Tuple, cst.List)) \
                else self._leading(value, scope)
            return ONE if rows == 1 else MANY if rows is not None and rows > SMALL_BATCH else UNKNOWN
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "astype" and not name:
            return again(call.func.value)  # `x.astype("float32")`: the same rows
        if name in _CONCAT:
            axis = argument(call, "axis", 1)
            pieces = positional[0] if positional else None
            if axis is not None and (int_literal(axis.value) or 0) >= 1 and isinstance(pieces, (cst.List, cst.Tuple)) \
                    and pieces.elements:
                return again(pieces.elements[0].value)  # joined along a row: the rows of the first piece
            return UNKNOWN
        shape = constructor_shape(call, name)
        if shape is not None:
            rows = self._leading(shape, scope, place)
            return UNKNOWN if rows is None else _count(rows)
        if name == "numpy.repeat":
            count, axis = argument(call, "repeats", 1), argument(call, "axis", 2)
            times = self._integer(count.value, scope) if count is not None else None
            if times is not None and axis is not None and int_literal(axis.value) == 0 and positional:
                base = again(positional[0])
                return _count(times) if base == ONE else MANY if base == MANY else UNKNOWN
            return UNKNOWN
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "shard":
            return MANY
        if _batches_of_one(call, name, positional):
            return ONE  # `np.array([x])`, `tokenizer([sentence])`, `pad_sequences([tokens])`: a batch of one
        if isinstance(call.func, cst.Name) and call.func.value == "next" and len(positional) == 1 \
                and self.model.lookup_function("next", scope) is None:
            return FEW  # one element of an iterator: a sample, or the next batch of a generator
        predicted = self._prediction_input(call, scope, place)
        if predicted is not None:
            rows = again(predicted)  # `model.predict(x)`: one output row per input row
            return rows if rows in (ONE, FEW, _SAME) else UNKNOWN
        if positional and self._keeps_rows(call, name, scope, place):
            rows = again(positional[0])  # `x = preprocess_input(x)`: the rows x had (_SAME)
            return rows if rows in (ONE, FEW, _SAME) else UNKNOWN
        return UNKNOWN

    def _returned(self, call: cst.Call, depth: int) -> str:
        """The rows a same-file function returns when every ``return`` evidently gives one sample or a
        small batch (``preprocess_state`` returning ``np.reshape(state, [1, 4])``); else unknown."""
        target = self.model.call_graph.callee(call)  # type: ignore[attr-defined]
        if target is None or not target.returns or depth >= _MAX_DEPTH:
            return UNKNOWN
        size: Optional[str] = None
        for ret in target.returns:
            if ret.node.value is None:
                return UNKNOWN
            size = _join(size, self._rows(ret.node.value, target, ret.place, (), depth + 1, frozenset()))
            if size in (UNKNOWN, _SAME, MANY):
                return UNKNOWN
        return size or UNKNOWN

    def _keeps_rows(self, call: cst.Call, name: str, scope: Optional[FunctionInfo], place: Place) -> bool:
        """A call that transforms each row of its first argument: a Keras model or layer applied to
        a batch (a preprocessing ``Sequential``, an ``ImageConverter``), an application's
        ``preprocess_input``, a cast or a resize."""
        if name in _ROW_WISE or name.endswith(".preprocess_input"):
            return True
        if self.model.keras_models.is_model(call.func, scope, place):  # type: ignore[attr-defined]
            return True
        if isinstance(call.func, cst.Name):
            bindings = self.model.reaching(call.func.value, scope, place) or []
            return bool(bindings) and all(
                b.kind == "assign" and isinstance(b.value, cst.Call)
                and (self.model.call_name(b.value) or self._untracked(b.value.func)).startswith(_LAYER_ROOTS)
                for b in bindings)

    def _prediction_input(self, call: cst.Call, scope: Optional[FunctionInfo], place: Place) -> Optional[cst.BaseExpression]:
        """The input of ``model.predict(x)`` / ``model.predict_on_batch(x)`` on a Keras model."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in ("predict", "predict_on_batch")):
            return None
        x = argument(call, "x", 0)
        if x is None or not self.model.keras_models.is_model(func.value, scope, place):  # type: ignore[attr-defined]
            return None
        return x.value

    def _untracked(self, func: cst.BaseExpression) -> str:
        """``keras_hub.layers.X`` as written, when ``keras_hub`` (not among the roots the import table
        resolves) is imported under its own name."""
        text = dotted_text(func) or ""
        root = text.split(".", 1)[0]
        return text if root in ("keras_hub", "keras_nlp", "keras_cv") and self.model.imports.is_bound(root) else ""
        return False

    def _name(self, expr: cst.Name, scope: Optional[FunctionInfo], place: Place,
              lambdas: Tuple[cst.Lambda, ...], depth: int, resolving: FrozenSet[str]) -> str:
        reaching = self.model.reaching(expr.value, scope, place, lambdas)
        if not reaching:
            return UNKNOWN
        found_scope, every = self.model.scope_bindings(expr.value, scope)
        bindings = list(reaching)
        if found_scope is scope:
            # In a loop around the call, a binding later in the body reaches the next iteration.
            bindings += [b for b in every if b.place.order > place.order and any(
                body in b.place.blocks and body in place.blocks for body in self._loop_bodies)]
        size: Optional[str] = None
        for binding in bindings:
            size = _join(size, self._binding(binding, depth, resolving | {expr.value}))
            if size == UNKNOWN:
                return UNKNOWN
        return size or _SAME

    def _binding(self, binding: Binding, depth: int, resolving: FrozenSet[str]) -> str:
        if binding.kind in ("item", "augassign"):
            return _SAME  # `x[0, t] = 1.`, `x += 1`: the same rows
        if binding.kind == "assign" and binding.value is not None:
            found = self._rows(binding.value, binding.scope, binding.place, (), depth + 1, resolving)
            if found == _SAME and depth < _MAX_DEPTH:
                # `x = x.astype("float32") / 255`: the rows x held before this statement.
                before = self._name(cst.Name(binding.name), binding.scope, binding.place, (), depth + 1,
                                    resolving - {binding.name})
                return _SAME if before == UNKNOWN else before
            return found
        if binding.kind == "unpack" and isinstance(binding.value, (cst.Tuple, cst.List)) and len(binding.path) == 1 \
                and binding.path[0] < len(binding.value.elements) \
                and not any(isinstance(e, cst.StarredElement) for e in binding.value.elements):
            # `x_train, y_train = series[:7000, :n], series[:7000, -1]`: the element bound
            element = binding.value.elements[binding.path[0]].value
            return self._rows(element, binding.scope, binding.place, (), depth + 1, resolving)
        if binding.kind == "for" and binding.value is not None:
            return self._element(binding)
        sources = unpacked_sources(self.model, binding) if binding.kind == "unpack" and depth < _MAX_DEPTH else None
        if sources:
            # `real, labels = batch` of a tuple the caller built, `x, _ = load()` of a function returning one
            size: Optional[str] = None
            for source in sources:
                rows = self if source.model is self.model else Rows(source.model)  # a caller in an importing module
                size = _join(size, rows._rows(source.expr, source.scope, source.place, (), depth + 1, frozenset()))
                if size in (UNKNOWN, _SAME):
                    return UNKNOWN
            return size or UNKNOWN
        if binding.kind == "unpack" and isinstance(binding.value, cst.Name) and len(binding.path) == 1:
            # `for transition in batch: s, a, r, next_s, done = transition`: the parts of one element,
            # sized as `for s, a, r, next_s, done in batch` binds them (one answer for both spellings:
            # `inputs_b, labels_b = test_batch` of a pipeline's batch is a batch, as `for inputs_b,
            # labels_b in test_dataset` is).
            loop_bindings = self.model.reaching(binding.value.value, binding.scope, binding.place) or []
            if loop_bindings and all(b.kind == "for" and len(b.path) == 0 for b in loop_bindings):
                size = None
                for element in loop_bindings:
                    size = _join(size, self._element(element))
                return size or UNKNOWN
        if binding.kind == "unpack" and isinstance(binding.value, cst.Call) and len(binding.path) == 1:
            # `x, y = next(batches)`: the parts of one batch share its rows; so do the outputs of
            # `logits, value = model.predict(obs)`
            found = self._rows(binding.value, binding.scope, binding.place, (), depth + 1, resolving)
            predicts = self._prediction_input(binding.value, binding.scope, binding.place) is not None
            # `token_ids, segment_ids = to_array([token_ids], [segment_ids])`: one batch of one per list
            several = len([arg for arg in binding.value.args if arg.keyword is None and not arg.star]) > 1
            return found if found == FEW or (found == ONE and (predicts or several)) else UNKNOWN
        if binding.kind == "param" and binding.scope is not None:
            return self._passed(binding, depth)
        return UNKNOWN

    def _passed(self, binding: Binding, depth: int) -> str:
        """A parameter's rows: what every same-file caller passes for it (``action_value(obs[None, :])``
        from a rollout loop); unknown without a caller, or where a caller leaves it to its default."""
        function = binding.scope
        callers = self.model.call_graph.callers(function) if function is not None and depth < _MAX_DEPTH else []
        positional = function.positional_parameters if function is not None else []
        index = positional.index(binding.name) if binding.name in positional else None
        size: Optional[str] = None
        for caller in callers:
            passed = None if has_star_args(caller.node) else argument(caller.node, binding.name, index)
            if passed is None:
                return UNKNOWN
            size = _join(size, self._rows(passed.value, caller.function, caller.place, caller.lambdas, depth + 1, frozenset()))
            if size in (UNKNOWN, _SAME):
                return UNKNOWN
        return size or UNKNOWN

    def _element(self, binding: Binding) -> str:
        """What a loop binds: one element of what it iterates (a sample, or one batch of a pipeline
        or generator); not the index of ``range`` or ``enumerate``."""
        if binding.kind != "for":
            return UNKNOWN
        iterated = binding.value
        if isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Name):
            if iterated.func.value == "range":
                return UNKNOWN
            if iterated.func.value == "enumerate":
                return FEW if binding.path[:1] == (1,) else UNKNOWN
        images = self._file_batch(iterated, binding.scope)
        if images is not None and images >= FILE_BATCH:
            return MANY  # a batch of many image files read from disk: predict's setup is a small share
        return FEW

    def _file_batch(self, iterated: Optional[cst.BaseExpression], scope: Optional[FunctionInfo]) -> Optional[int]:
        """The images per batch of a Keras iterator that reads image files from disk (``gen.flow_from_directory(
        path, batch_size=batch_size * 2)``, or a name bound once to one): its ``batch_size``, 32 if not given."""
        if isinstance(iterated, cst.Name):
            bindings = self.model.scope_bindings(iterated.value, scope)[1]
            if len(bindings) != 1 or bindings[0].kind != "assign":
                return None
            iterated, scope = bindings[0].value, bindings[0].scope
        if not isinstance(iterated, cst.Call) or not isinstance(iterated.func, cst.Attribute) \
                or iterated.func.attr.value not in _FILE_ITERATORS or has_star_args(iterated):
            return None
        size = argument(iterated, "batch_size", _FILE_ITERATORS[iterated.func.attr.value])
        return _ITERATOR_DEFAULT_BATCH if size is None else self._integer(size.value, scope)
