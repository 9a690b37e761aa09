"""Cheap element-wise expressions: what ``tf.where`` can compute in place of a branch.

``elementwise_leaves`` answers, for an expression such as ``x * 2.0`` or ``tf.minimum(loss, 1.0)``,
which tensors it is built from (its shape is theirs, by broadcasting), or None when it is not a
cheap, side-effect-free, element-wise expression of known shape: any call that is not on the
allow-list (a model, a layer, ``matmul``, ``assign``, ``tf.print``, ``py_function``,
``tf.debugging.assert_*``), slicing, tuples, and ops that can make NaN or infinity (division by a
tensor, ``log``, ``sqrt``, ``exp``, ``pow``), around which a condition is usually a guard.
``about_shapes_or_nan`` spots predicates about shapes and sizes, or NaN / infinity tests;
``about_step_counter`` spots predicates on a training-step counter (``global_step < warmup_steps``).
"""

from __future__ import annotations

import re
from typing import FrozenSet, List, Optional

import libcst as cst

from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.model import CallSite, FunctionInfo, ModuleModel
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.tf_functions import tf_function_decorator
from tflint_perf.analysis.values import PYTHON, ValueKinds

_LEAVES = (
    "abs", "negative", "square", "maximum", "minimum", "clip_by_value", "cast", "identity", "sign", "round",
    "floor", "ceil", "add", "subtract", "multiply", "tanh", "sigmoid", "logical_and", "logical_or",
    "logical_not", "logical_xor", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
    "stop_gradient", "zeros_like", "ones_like", "squared_difference",
)
# Element-wise, shape-preserving ops that cannot produce NaN or infinity (division, log, sqrt, exp
# and pow are left out: a cond around them is usually a guard, and tf.where would poison gradients).
ELEMENTWISE = frozenset(
    [f"tf.{leaf}" for leaf in _LEAVES] + [f"tf.math.{leaf}" for leaf in _LEAVES]
    + ["tf.nn.relu", "tf.nn.relu6", "tf.nn.leaky_relu", "tf.nn.elu", "tf.nn.sigmoid", "tf.nn.tanh"]
)
_SHAPE_CALLS = frozenset({"tf.shape", "tf.size", "tf.rank", "tf.shape_n"})
# A predicate testing for NaN or infinity guards the computation: tf.where would let the NaN reach gradients.
_GUARD_CALLS = frozenset(
    {"tf.math.is_finite", "tf.math.is_nan", "tf.math.is_inf", "tf.is_finite", "tf.is_nan", "tf.is_inf"}
)
_SHAPE_ATTRIBUTES = frozenset({"shape", "get_shape", "ndim", "rank", "dtype"})
_SAFE_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.BitAnd, cst.BitOr, cst.BitXor)
_HELPER_DEPTH = 2  # same-file helpers followed from a map function (`lambda x, y: (img_scaling(x), y)`)


def elementwise_leaves(
    model: ModuleModel, values: ValueKinds, expr: cst.BaseExpression, site: CallSite
) -> Optional[FrozenSet[str]]:
    """The tensors a cheap element-wise expression is built from (its shape is theirs), or None
    when the expression is not cheap, not element-wise or not side-effect-free."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return frozenset()
    if isinstance(expr, (cst.Name, cst.Attribute)):
        if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
            return frozenset()
        if isinstance(expr, cst.Name) and expr.value == "None":
            return None
        if model.resolve(expr) is not None:
            return frozenset()  # tf.float32, np.pi
        if isinstance(expr, cst.Name) and values.kind(expr, site.function, site.place, site.lambdas) == PYTHON:
            return frozenset()
        text = dotted_text(expr)
        return frozenset({text}) if text is not None else None
    again = lambda e: elementwise_leaves(model, values, e, site)  # noqa: E731
    if isinstance(expr, cst.UnaryOperation):
        return again(expr.expression) if isinstance(expr.operator, (cst.Minus, cst.Plus, cst.BitInvert)) else None
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, _SAFE_OPERATORS):
            return _union([again(expr.left), again(expr.right)])
        if isinstance(expr.operator, (cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)):
            if _nonzero_number(expr.right):
                return again(expr.left)
        return None
    if isinstance(expr, cst.Comparison):
        return _union([again(expr.left)] + [again(target.comparator) for target in expr.comparisons])
    if isinstance(expr, cst.Call):
        name = model.call_name(expr)
        if name in ("tf.constant", "tf.convert_to_tensor") and expr.args:
            first = expr.args[0].value
            return frozenset() if isinstance(first, (cst.Integer, cst.Float)) else None
        if name not in ELEMENTWISE:
            return None
        parts: List[Optional[FrozenSet[str]]] = []
        for arg in expr.args:
            if arg.star:
                return None
            leaves = again(arg.value)
            if arg.keyword is not None and leaves:
                return None  # only constants (dtype=, name=) by keyword
            parts.append(leaves)
        return _union(parts)
    return None


def _union(parts: List[Optional[FrozenSet[str]]]) -> Optional[FrozenSet[str]]:
    if any(part is None for part in parts):
        return None
    result: FrozenSet[str] = frozenset()
    for part in parts:
        result |= part  # type: ignore[operator]
    return result


def _nonzero_number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float)):
        try:
            return float(expr.value.replace("_", "")) != 0
        except ValueError:
            return False
    return False


def about_shapes_or_nan(model: ModuleModel, pred: cst.BaseExpression) -> bool:
    """The predicate is about shapes or sizes, or tests for NaN / infinity."""
    stack: List[cst.CSTNode] = [pred]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            name = model.call_name(current)
            if name in _SHAPE_CALLS or name in _GUARD_CALLS or (name or "").startswith("tf.debugging."):
                return True
            if isinstance(current.func, cst.Name) and current.func.value == "len":
                return True
        if isinstance(current, cst.Attribute) and current.attr.value in _SHAPE_ATTRIBUTES:
            return True
        stack.extend(current.children)
    return False


# The last part of a name that counts training steps: global_step, step, optimizer.iterations, epoch.
_STEP_COUNTER = re.compile(r"(?:^|_)(?:step|steps|iteration|iterations|epoch|epochs)$", re.IGNORECASE)


def about_step_counter(pred: cst.BaseExpression) -> bool:
    """The predicate reads a training-step counter (``global_step < warmup_steps``,
    ``optimizer.iterations > 100``): it is known when the step starts, as in learning-rate schedules."""
    stack: List[cst.CSTNode] = [pred]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            stack.extend(arg.value for arg in current.args)  # not the callee's own name (tf.math.less)
            continue
        if isinstance(current, cst.Name) and _STEP_COUNTER.search(current.value):
            return True
        if isinstance(current, cst.Attribute):
            if _STEP_COUNTER.search(current.attr.value):
                return True
            stack.append(current.value)
            continue
        stack.extend(current.children)
    return False


# -- functions a map could run once per batch ---------------------------------------------------
# Exactly the same result whether applied to one element or to a batch of them (IEEE operations
# that are correctly rounded, casts, comparisons, selections).
_EXACT = ELEMENTWISE - {f"tf.{n}" for n in ("tanh", "sigmoid")} - {f"tf.math.{n}" for n in ("tanh", "sigmoid")} - {
    "tf.nn.sigmoid", "tf.nn.tanh", "tf.nn.elu"} | {
    "tf.cast", "tf.dtypes.cast", "tf.divide", "tf.math.divide", "tf.truediv", "tf.math.truediv", "tf.math.floordiv",
    "tf.math.floormod", "tf.sqrt", "tf.math.sqrt", "tf.math.reciprocal", "tf.math.rint", "tf.where",
    "tf.image.convert_image_dtype",  # a cast, then a scale by a constant (1/255 from uint8)
}
# Element-wise, but vectorised kernels may round the last bit differently from scalar ones.
_APPROXIMATE = frozenset(
    {"tf.tanh", "tf.math.tanh", "tf.sigmoid", "tf.math.sigmoid", "tf.nn.sigmoid", "tf.nn.tanh", "tf.nn.elu",
     "tf.exp", "tf.math.exp", "tf.math.log", "tf.log", "tf.math.log1p", "tf.math.expm1", "tf.math.sin", "tf.math.cos",
     "tf.sin", "tf.cos", "tf.pow", "tf.math.pow", "tf.nn.softplus", "tf.math.softplus", "tf.math.erf", "tf.math.rsqrt",
     "tf.nn.silu", "tf.nn.gelu", "tf.nn.selu", "tf.nn.swish"}
)
# Every element-wise op above: on a whole batch, a few of them cost microseconds (what a map after
# `batch` may do without being worth parallelising or overlapping).
ELEMENTWISE_OPS = _EXACT | _APPROXIMATE
_EXPAND_DIMS = frozenset({"tf.expand_dims", "tf.compat.v1.expand_dims"})
_VECTOR_OPERATORS = _SAFE_OPERATORS + (cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)
_AUGMENTED = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power,
}
EXACT = "exact"
APPROXIMATE = "approximate"


def per_batch(model: ModuleModel, function, scope=None, depth: int = 0) -> Optional[str]:
    """Whether a ``Dataset.map`` function (a lambda or a ``FunctionInfo``) is element-wise over
    its inputs, so that it computes the same thing run once on a batch: EXACT, APPROXIMATE (only
    last-bit rounding of transcendental kernels may differ), or None.

    Each output is built with allow-listed element-wise ops from one input (or an input's
    ``["key"]`` entry) and numeric literals or names bound only to numbers: two different inputs
    in one operation (``x * w``, whose shapes may broadcast differently once batched), slicing,
    reductions, reshapes, decoding, random ops, any call not on the allow-list, and functions
    that only pass their inputs through give None. A same-file helper such a function calls on one
    input counts when it is element-wise itself (``img_scaling(x)``, followed ``_HELPER_DEPTH`` deep),
    and so does Keras' ``preprocess_input``: each channel scaled and shifted by constants."""
    params, body, own_scope = _function_parts(model, function)
    scope = own_scope or scope
    if params is None:
        return None
    deps: dict = {name: frozenset({name}) for name in params}
    kinds = {EXACT}
    updated = set()  # parameters (dict elements) some of whose features are replaced in place
    for target, value in body[:-1]:
        found = _elementwise_deps(model, value, deps, scope, kinds, depth)
        if found is None:
            return None
        if isinstance(target, tuple):  # `features[KEY] = ...`
            if target[0] not in params or not found or found != deps[target[0]]:
                return None  # a constant, or another input's value, stored in the dict
            updated.add(target[0])
            continue
        if target in updated:
            return None
        deps[target] = found
        params = [name for name in params if name != target]  # rebound: no longer passed through
    returned = body[-1][1]
    if isinstance(returned, cst.Name) and returned.value in updated:
        # `features[IMAGE] = tf.cast(features[IMAGE], tf.float32) / 255.0; return features`: the
        # element's dict with some features replaced, the others passed on as they are.
        return APPROXIMATE if APPROXIMATE in kinds else EXACT
    outputs = _outputs(body[-1][1], lambda key: _string_key(model, key, scope))
    if outputs is None:
        return None
    computes = False
    for output in outputs:
        found = _elementwise_deps(model, output, deps, scope, kinds, depth)
        if not found:
            return None  # None, or a constant: once per batch it would be one value, not one per element
        computes |= not _passes_through(output, params)
    if not computes:
        return None
    return APPROXIMATE if APPROXIMATE in kinds else EXACT


def _function_parts(model: ModuleModel, function):
    """Parameter names, [(target, value)...] ending in (None, returned), and the scope."""
    if isinstance(function, cst.Lambda):
        params = function.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg or params.kwonly_params:
            return None, (), None
        return [p.name.value for p in [*params.posonly_params, *params.params]], [(None, function.body)], None
    node = function.node
    params = node.params
    if (node.decorators and not _plain_tf_function(model, function)) or isinstance(params.star_arg, cst.Param) or params.star_kwarg or params.kwonly_params:
        return None, (), None
    names = [p.name.value for p in [*params.posonly_params, *params.params]]
    if function.is_method:
        return None, (), None
    body = []
    statements = node.body.body if isinstance(node.body, cst.IndentedBlock) else node.body.body
    for index, statement in enumerate(statements):
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return None, (), None
        small = statement.body[0]
        if index == 0 and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
            continue  # docstring
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            body.append((small.targets[0].target.value, small.value))
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and _item_target(model, small.targets[0].target):
            target = small.targets[0].target
            body.append(((target.value.value, target.slice[0].slice.value), small.value))  # type: ignore[attr-defined]
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name) and type(small.operator) in _AUGMENTED:
            # `x /= 255` is `x = x / 255`
            operator = _AUGMENTED[type(small.operator)]()
            body.append((small.target.value, cst.BinaryOperation(small.target, operator, small.value)))
        elif isinstance(small, cst.Return) and small.value is not None and index == len(statements) - 1:
            body.append((None, small.value))
        else:
            return None, (), None
    if not body or body[-1][0] is not None:
        return None, (), None
    return names, body, function


def _plain_tf_function(model: ModuleModel, function) -> bool:
    """The one decorator is `@tf.function` with no `input_signature` (which would fix the element's
    shape and refuse a batch): the function computes on a batch what it computes on one element."""
    decorator = tf_function_decorator(model, function)
    if decorator is None or len(function.node.decorators) != 1:
        return False
    return not (isinstance(decorator.decorator, cst.Call) and any(
        arg.keyword is None or arg.keyword.value == "input_signature" for arg in decorator.decorator.args))


def _item_target(model: ModuleModel, target: cst.BaseExpression) -> bool:
    """``features[KEY]`` with a string key: one feature of a dict element replaced in place."""
    if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and len(target.slice) == 1):
        return False
    index = target.slice[0].slice
    return isinstance(index, cst.Index) and _string_key(model, index.value, None)


def _outputs(expr: cst.BaseExpression, is_key=lambda key: isinstance(key, cst.SimpleString)):
    """The leaves of a returned structure: a tuple, a dict of features with string keys, and the
    tabular ``(features_dict, label)`` nesting of the two."""
    if isinstance(expr, cst.Tuple):
        if any(isinstance(e, cst.StarredElement) for e in expr.elements):
            return None
        parts = [e.value for e in expr.elements]
    elif isinstance(expr, cst.Dict):
        if not all(isinstance(e, cst.DictElement) and is_key(e.key) for e in expr.elements):
            return None
        parts = [e.value for e in expr.elements]
    else:
        return [expr]
    leaves = []
    for part in parts:
        inner = _outputs(part, is_key) if isinstance(part, (cst.Tuple, cst.Dict)) else [part]
        if inner is None:
            return None
        leaves.extend(inner)
    return leaves


def _passes_through(expr: cst.BaseExpression, params) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value in params
    return isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and expr.value.value in params


def _elementwise_deps(model: ModuleModel, expr, deps: dict, scope, kinds: set, depth: int = 0) -> Optional[FrozenSet[str]]:
    """The inputs an element-wise expression reads (at most one), or None."""
    again = lambda e: _elementwise_deps(model, e, deps, scope, kinds, depth)  # noqa: E731
    if isinstance(expr, (cst.Integer, cst.Float)):
        return frozenset()
    if isinstance(expr, cst.Name):
        if expr.value in deps:
            return deps[expr.value]
        if expr.value in ("True", "False", "None"):
            return frozenset()
        return frozenset() if _number_name(model, expr.value, scope) else None
    if isinstance(expr, cst.Attribute):
        name = model.resolve(expr)
        return frozenset() if name is not None and name.rsplit(".", 1)[-1] in _DTYPES else None
    if isinstance(expr, cst.Subscript):
        if isinstance(expr.value, cst.Name) and expr.value.value in deps and len(expr.slice) == 1:
            index = expr.slice[0].slice
            if isinstance(index, cst.Index) and _string_key(model, index.value, scope):
                return deps[expr.value.value]
        return None
    if isinstance(expr, cst.UnaryOperation):
        return again(expr.expression) if isinstance(expr.operator, (cst.Minus, cst.Plus, cst.BitInvert)) else None
    if isinstance(expr, cst.BinaryOperation):
        if not isinstance(expr.operator, _VECTOR_OPERATORS):
            return None
        if isinstance(expr.operator, cst.Power):
            kinds.add(APPROXIMATE)
        return _one_input([again(expr.left), again(expr.right)])
    if isinstance(expr, cst.Comparison):
        return _one_input([again(expr.left)] + [again(t.comparator) for t in expr.comparisons])
    if isinstance(expr, cst.Call):
        name = model.call_name(expr)
        if name == "tf.where" and len(expr.args) != 3:
            return None  # tf.where(cond) returns indices
        if name in _EXPAND_DIMS:
            return _last_axis_expanded(expr, again)
        if name is None:
            return _helper_deps(model, expr, scope, kinds, depth, again)
        if name in _APPROXIMATE:
            kinds.add(APPROXIMATE)
        elif name not in _EXACT and not _keras_preprocessing(name):
            return None
        parts = []
        for arg in expr.args:
            if arg.star:
                return None
            found = again(arg.value)
            if arg.keyword is not None and found:
                return None  # only constants by keyword (dtype=, name=)
            parts.append(found)
        return _one_input(parts)
    if isinstance(expr, cst.SimpleString):
        return frozenset()  # name=
    if isinstance(expr, cst.Dict):
        # A dict of features built in the body (`features = {"age": x["age"] / 100.0, ...}`).
        if not all(isinstance(e, cst.DictElement) and _string_key(model, e.key, scope) for e in expr.elements):
            return None
        return _one_input([again(e.value) for e in expr.elements])  # type: ignore[union-attr]
    if isinstance(expr, cst.DictComp):
        return _feature_comprehension(model, expr, deps, scope, kinds)
    return None


def _last_axis_expanded(call: cst.Call, again) -> Optional[FrozenSet[str]]:
    """``tf.expand_dims(label, axis=-1)``: a new last axis, the same on one element (``[]`` to ``[1]``)
    as on a batch (``[B]`` to ``[B, 1]``); an axis counted from the front would land before the batch's."""
    tensor, axis = argument(call, "input", 0), argument(call, "axis", 1)
    if tensor is None or axis is None or len(call.args) != 2:
        return None
    value = axis.value
    if not (isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus)
            and isinstance(value.expression, cst.Integer) and value.expression.value == "1"):
        return None
    return again(tensor.value)


def _keras_preprocessing(name: str) -> bool:
    """``keras.applications.<model>.preprocess_input``: per channel, a flip of the channel order and
    constants subtracted and divided by (``mode="caffe"``, ``"torch"``, ``"tf"``), the same on an image
    as on a batch of them (Keras reads the rank of what it is given)."""
    return name.startswith("keras.applications.") and name.endswith(".preprocess_input")


def _helper_deps(model: ModuleModel, call: cst.Call, scope, kinds: set, depth: int, again) -> Optional[FrozenSet[str]]:
    """``img_scaling(x)``: a same-file function of one parameter, element-wise itself (``per_batch``),
    applied to one input."""
    if depth >= _HELPER_DEPTH or len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    helper = model.effects.resolve_callable(call.func, scope, local_only=True)  # type: ignore[attr-defined]
    if not isinstance(helper, FunctionInfo) or helper is scope or len(helper.node.params.params) != 1:
        return None
    kind = per_batch(model, helper, scope, depth + 1)
    if kind is None:
        return None
    kinds.add(kind)
    return again(call.args[0].value)


def _feature_comprehension(model: ModuleModel, expr: cst.DictComp, deps: dict, scope, kinds: set) -> Optional[FrozenSet[str]]:
    """``{k: f(v) for k, v in features.items()}`` over an input dict, ``f`` element-wise on ``v``
    alone (every feature cast or scaled the same way: the tabular shape)."""
    loop = expr.for_in
    if loop.ifs or loop.inner_for_in is not None or loop.asynchronous is not None:
        return None
    if not (isinstance(expr.key, cst.Name) and isinstance(loop.target, cst.Tuple) and len(loop.target.elements) == 2):
        return None
    key, value = (element.value for element in loop.target.elements)
    iterable = loop.iter
    if not (isinstance(key, cst.Name) and isinstance(value, cst.Name) and key.value == expr.key.value
            and isinstance(iterable, cst.Call) and not iterable.args and isinstance(iterable.func, cst.Attribute)
            and iterable.func.attr.value == "items" and isinstance(iterable.func.value, cst.Name)
            and iterable.func.value.value in deps):
        return None
    inner = {**deps, value.value: deps[iterable.func.value.value]}
    inner.pop(key.value, None)  # the key is a string: not an input, and not a number
    found = _elementwise_deps(model, expr.value, inner, scope, kinds)
    return found if found else None


_DTYPES = frozenset(
    {"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
     "uint64", "bool", "complex64", "complex128"}
)


def _one_input(parts) -> Optional[FrozenSet[str]]:
    found = _union(parts)
    return found if found is not None and len(found) <= 1 else None


def _string_key(model: ModuleModel, expr: cst.BaseExpression, scope) -> bool:
    """A feature key: a string literal, or a name bound only to one (``IMAGE_INPUT_NAME = 'image'``)."""
    if isinstance(expr, cst.SimpleString):
        return True
    if not isinstance(expr, cst.Name):
        return False
    _scope, bindings = model.scope_bindings(expr.value, scope)
    return bool(bindings) and all(b.kind == "assign" and isinstance(b.value, cst.SimpleString) for b in bindings)


def _number_name(model: ModuleModel, name: str, scope) -> bool:
    """A name bound only to numeric literals (a module constant such as ``SCALE = 255.0``)."""
    _scope, bindings = model.scope_bindings(name, scope)
    if not bindings:
        return False
    for binding in bindings:
        value = binding.value
        if isinstance(value, cst.UnaryOperation):
            value = value.expression
        if binding.kind != "assign" or not isinstance(value, (cst.Integer, cst.Float)):
            return False
    return True


def scalar_operands(model: ModuleModel, pred: cst.BaseExpression) -> FrozenSet[str]:
    """The values a ``tf.cond`` predicate compares element-wise (``tf.less(x, n)``, ``x > 0``,
    ``tf.logical_and(a > 0, b < 1)``), which are therefore scalars: the predicate of ``tf.cond``
    is a scalar, and an element-wise op's result is at least as large as each operand."""
    found = set()
    stack: List[cst.BaseExpression] = [pred]
    while stack:
        expr = stack.pop()
        if isinstance(expr, (cst.Name, cst.Attribute)):
            text = dotted_text(expr)
            if text is not None and model.resolve(expr) is None:
                found.add(text)
        elif isinstance(expr, cst.Comparison):
            stack.append(expr.left)
            stack.extend(target.comparator for target in expr.comparisons)
        elif isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus, cst.BitInvert)):
            stack.append(expr.expression)
        elif isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _SAFE_OPERATORS):
            stack.extend((expr.left, expr.right))
        elif isinstance(expr, cst.Call) and model.call_name(expr) in ELEMENTWISE:
            stack.extend(arg.value for arg in expr.args if arg.keyword is None and not arg.star)
    return frozenset(found)


def is_number(expr: cst.BaseExpression) -> bool:
    """A numeric literal: ``0``, ``1.0``, ``-1``."""
    while isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


# Calls whose results, unpacked, are tensors of one shape: an equal split, the slices of an unstack.
_EQUAL_PARTS = frozenset({"tf.split", "tf.unstack"})


def equal_parts(model: ModuleModel, names: FrozenSet[str], scope) -> bool:
    """The names are all unpacked from one ``a, b, ... = tf.split(x, 8, axis=1)`` (a count, not
    sizes) or ``tf.unstack(x)`` in ``scope``: tensors of one shape (KerasCV's box corners)."""
    source = None
    for name in names:
        bindings = model.bindings.get(scope, {}).get(name, [])
        if len(bindings) != 1 or bindings[0].kind != "unpack" or not isinstance(bindings[0].value, cst.Call):
            return False
        call = bindings[0].value
        if model.call_name(call) not in _EQUAL_PARTS or source not in (None, call):
            return False
        if model.call_name(call) == "tf.split":
            count = call.args[1].value if len(call.args) > 1 and call.args[1].keyword is None else None
            keyword = next((a.value for a in call.args if a.keyword and a.keyword.value == "num_or_size_splits"), None)
            if not isinstance(count or keyword, cst.Integer):
                return False
        source = call
    return source is not None
