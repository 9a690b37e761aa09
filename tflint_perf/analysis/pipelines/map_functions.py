"""What a map function costs, judged from its body: does it only pick, slice, regroup or reshape its
arguments (``is_trivial_function``), or only move a batch's values around, with element-wise arithmetic
at most (``only_moves_values``)? A function that does nothing else gains nothing from running on several
elements at once, and, once per batch, costs microseconds.

Split from ``predicates`` (which asks these of the states holding the map): these read only the function.
"""

from __future__ import annotations

from typing import FrozenSet, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.elementwise import ELEMENTWISE_OPS
from tflint_perf.analysis.model import FunctionInfo, ModuleModel

# TensorFlow ops that only change a tensor's shape or dtype: a map function calling nothing else does no
# more work than one that picks its arguments (`lambda x, y: (x, tf.expand_dims(y, -1))`).
LAYOUT_OPS = frozenset(
    {"tf.expand_dims", "tf.reshape", "tf.squeeze", "tf.cast", "tf.identity", "tf.ensure_shape"}
)
# Ops that only move a batch's values around (and one cheap reduction): a map after `batch` calling
# nothing else runs once per batch on next to no work (`split_window`, a per-batch `transpose`).
BATCH_LAYOUT_OPS = LAYOUT_OPS | frozenset(
    {"tf.transpose", "tf.concat", "tf.stack", "tf.unstack", "tf.tile", "tf.gather", "tf.reduce_mean", "tf.shape",
     "tf.pad", "tf.nest.flatten", "tf.nest.pack_sequence_as", "tf.zeros", "tf.ones", "tf.fill"}
)
# What a map after `batch` may also do and still cost microseconds per batch: element-wise arithmetic
# (`tf.cast(x, tf.float32) / 255.`), over tensors already in memory; and `one_hot` of labels to a
# depth the code sets to a small number (`depth=10`; a vocabulary's size is not known to be small).
# Image ops that only select, reverse or pad a batch's pixels (`tf.image.central_crop(x, 0.75)`, a
# random left-right flip of each image of the batch): one vectorised copy of memory per batch, no
# interpolation and no decoding (a resize, a `decode_jpeg` are work).
_IMAGE_LAYOUT_OPS = frozenset(
    f"tf.image.{op}" for op in (
        "central_crop", "crop_to_bounding_box", "pad_to_bounding_box", "resize_with_crop_or_pad",
        "resize_image_with_crop_or_pad", "flip_left_right", "flip_up_down", "random_flip_left_right",
        "random_flip_up_down", "rot90", "transpose", "transpose_image")
)
# Resizes of decoded images: interpolation, some work per image, but no decoding or reading.
_RESIZES = frozenset({"tf.image.resize", "tf.image.resize_images", "tf.compat.v1.image.resize",
                      "tf.compat.v1.image.resize_images", "tf.image.resize_with_pad"})
# TF1 spellings of element-wise division (`tf.div(tf.cast(x, tf.float32), 255.0)`).
_TF1_DIVISIONS = frozenset({"tf.div", "tf.realdiv", "tf.compat.v1.div"})
CHEAP_BATCH_OPS = BATCH_LAYOUT_OPS | ELEMENTWISE_OPS | _IMAGE_LAYOUT_OPS | _TF1_DIVISIONS
_ONE_HOT = "tf.one_hot"
# Keras layers whose call is element-wise arithmetic on its input (`Rescaling`: `x * scale + offset`).
_ELEMENTWISE_LAYERS = frozenset({"Rescaling"})
_SMALL_DEPTH = 1000
# Methods that read or set a tensor's static shape, and ops that check a scalar or order the checks.
# Ops that change only a tensor's shape metadata: no value is copied.
_METADATA_OPS = frozenset({"tf.expand_dims", "tf.reshape", "tf.squeeze", "tf.identity", "tf.ensure_shape"})
_SHAPE_METHODS = frozenset({"set_shape", "is_fully_defined", "as_list", "get_shape"})
_CHECKS = frozenset({"tf.Assert", "tf.debugging.Assert", "tf.control_dependencies", "tf.debugging.assert_equal",
                     "tf.assert_equal"})
# Conversions of one scalar feature (an id, a flag) to another type.
_CONVERSIONS = frozenset({"int", "float", "bool", "tf.strings.to_number", "tf.strings.as_string", "tf.as_string"})
# Parsing specs of a feature (`tf.io.FixedLenFeature([10], tf.int64)`): a shape other than `[]` is a vector.
_FEATURE_SPECS = ("FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "RaggedFeature", "SparseFeature")
# Dict methods that pick features out of an element (`feature_map.pop("label")`, `features.values()`).
_DICT_PICKS = frozenset({"pop", "get", "values", "keys", "items"})
_PYTHON_HELPERS = frozenset({"range", "len", "int", "str", "zip", "enumerate", "list", "dict", "tuple"})
_CALL_DEPTH = 2  # same-file functions followed from a map function (`lambda ex: labeler(ex, i)`)
# Nodes that compute something: a map function holding one does work per element.
_HEAVY_NODES = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation,
                cst.Lambda, cst.ListComp, cst.DictComp, cst.GeneratorExp, cst.SetComp, cst.Await)


def _plain_map_function(expr: cst.BaseExpression, model: ModuleModel, scope: Optional[FunctionInfo]
                        ) -> Optional[Tuple[cst.CSTNode, Optional[FunctionInfo]]]:
    """The same-file function or lambda a map is given, with the scope its body runs in; None where it
    is not in this file or is decorated (a decorator may wrap it in anything)."""
    function = model.effects.resolve_callable(expr, scope, local_only=True)  # type: ignore[attr-defined]
    if function is None:
        return None
    inner = function if isinstance(function, FunctionInfo) else scope
    node = function.node if isinstance(function, FunctionInfo) else function
    if isinstance(node, cst.FunctionDef) and node.decorators:
        return None
    return node, inner


def only_reshapes(expr: cst.BaseExpression, model: ModuleModel, scope: Optional[FunctionInfo], depth: int = 0) -> bool:
    """A map function that only picks items of its arguments by key or index and changes their shapes'
    metadata (`reshape`, `expand_dims`, `squeeze`, `set_shape`), through the same-file functions it calls
    (big_transfer's `reshape_for_keras`): no value is copied or computed. A slice (`inks[:, :100]`), a
    cast, a `stack` or arithmetic copies or computes: not a reshape."""
    resolved = _plain_map_function(expr, model, scope)
    if resolved is None:
        return False
    node, inner = resolved
    stack: List[cst.CSTNode] = [node.body]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.BinaryOperation, cst.Comparison, cst.BooleanOperation, cst.Slice, cst.For,
                                cst.While, cst.If, cst.IfExp, cst.Lambda)):
            return False
        if not isinstance(current, cst.Call):
            stack.extend(current.children)
            continue
        func = current.func
        if model.call_name(current) in _METADATA_OPS or isinstance(func, cst.Attribute) and func.attr.value == "set_shape":
            if current.args:
                stack.append(current.args[0].value)  # the tensor; the shape is a few ints
            continue
        if isinstance(func, cst.Name) and depth < _CALL_DEPTH and model.lookup_function(func.value, inner) is not None \
                and only_reshapes(func, model, inner, depth + 1):
            stack.extend(arg.value for arg in current.args)
            continue
        return False
    return True


def runs_no_ops(expr: cst.BaseExpression, model: ModuleModel, scope: Optional[FunctionInfo], depth: int = 0) -> bool:
    """A map function that calls no TensorFlow op that computes: it only picks its arguments' items and
    builds a new structure of them in Python, which runs once when the map is traced
    (`for f in FEATURES: features['ensemble_' + str(i) + '_' + f] = features[f]`, then `return
    features, label`; merging zipped feature dicts, `assert key not in result`; adding a constant field,
    `"supervised": tf.constant(True)`), through the same-file functions it calls. Its elements are the
    input's tensors, untouched (or constants): a map over a prefetched source that runs no op leaves that
    prefetch the last stage doing work, and running it on several elements at once gains nothing. A
    slice, a comparison or arithmetic on a tensor is an op."""
    resolved = _plain_map_function(expr, model, scope)
    if resolved is None:
        return False
    node, inner = resolved
    stack: List[cst.CSTNode] = [node.body]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.BinaryOperation):
            if not _builds_string(current) or _joins_element_values(current, model, inner, node):
                return False
            stack.extend(_joined_calls(current))  # `'q: ' + tf.strings.lower(...)`: the call is judged as any other
            continue
        if isinstance(current, cst.AugAssign) and _holds_element_value((current.target, current.value), model, inner, node):
            return False  # `image /= 255.`, `total += features[k]`: arithmetic on the element (a counter is Python's)
        if isinstance(current, cst.Comparison) and _membership(current):
            stack.extend(current.children)  # `key not in result`: Python's test on a dict's keys
            continue
        if isinstance(current, (cst.Slice, cst.Comparison, cst.BooleanOperation, cst.UnaryOperation, cst.IfExp,
                                cst.Lambda, cst.While)):
            return False
        if isinstance(current, cst.Call):
            func = current.func
            python = isinstance(func, cst.Name) and func.value in _PYTHON_HELPERS and \
                model.lookup_function(func.value, inner) is None
            picks = isinstance(func, cst.Attribute) and func.attr.value in _DICT_PICKS and isinstance(func.value, cst.Name)
            if _literal_constant(current, model):
                continue  # `tf.constant(True)`, `tf.constant("")`: a constant, computed by no one
            helper = isinstance(func, cst.Name) and depth < _CALL_DEPTH and \
                model.lookup_function(func.value, inner) is not None and runs_no_ops(func, model, inner, depth + 1)
            if not (python or picks or helper):
                return False
        stack.extend(current.children)
    return True


def _joins_element_values(operation: cst.BinaryOperation, model: ModuleModel, scope: Optional[FunctionInfo],
                          function: cst.CSTNode) -> bool:
    """``question + '\\n' + options[0]``: strings of the element joined, a string op per element (pegasus'
    RACE formatting), not a key built in Python. An operand that is an item picked from something, a
    parameter, or a name bound to such an item is the element's."""
    return _holds_element_value((operation.left, operation.right), model, scope, function)


def _holds_element_value(sides: Tuple[cst.BaseExpression, ...], model: ModuleModel, scope: Optional[FunctionInfo],
                         function: cst.CSTNode) -> bool:
    """One of ``sides`` (operands, through nested operations) is the element's: an item picked from
    something, a parameter, or a name bound to a parameter or to such an item."""
    params = [p.name.value for p in function.params.params] if isinstance(function, cst.Lambda) else []
    stack: List[cst.CSTNode] = list(sides)
    while stack:
        side = stack.pop()
        if isinstance(side, cst.BinaryOperation):
            stack.extend((side.left, side.right))
        elif isinstance(side, cst.Subscript):
            return True
        elif isinstance(side, cst.Name):
            if side.value in params:
                return True
            _, bindings = model.scope_bindings(side.value, scope)
            if any(b.kind == "param" or b.kind == "assign" and isinstance(b.value, cst.Subscript) for b in bindings):
                return True
    return False


def _joined_calls(operation: cst.BinaryOperation) -> List[cst.Call]:
    """The calls a key built from strings joins, other than ``str(...)`` of a Python value (``'ensemble_' +
    str(i + 1)``): ``'summarize: ' + tf.strings.lower(text)`` runs the call's op per element."""
    calls: List[cst.Call] = []
    stack: List[cst.BaseExpression] = [operation.left, operation.right]
    while stack:
        side = stack.pop()
        if isinstance(side, cst.BinaryOperation):
            stack.extend((side.left, side.right))
        elif isinstance(side, cst.Call) and not (isinstance(side.func, cst.Name) and side.func.value == "str"):
            calls.append(side)
    return calls


def _membership(comparison: cst.Comparison) -> bool:
    """``key in d`` / ``key not in d``: a tensor has no membership test, so this is Python's, at trace time."""
    return all(isinstance(target.operator, (cst.In, cst.NotIn)) for target in comparison.comparisons)


def _literal_constant(call: cst.Call, model: ModuleModel) -> bool:
    """``tf.constant(True)``, ``tf.constant("", dtype=tf.string)``: a literal made a tensor."""
    if model.call_name(call) != "tf.constant" or not call.args or call.args[0].keyword is not None:
        return False
    value = call.args[0].value
    literal = isinstance(value, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(value, cst.Name) and value.value in ("True", "False"))
    return literal and all(isinstance(arg.value, (cst.Name, cst.Attribute)) for arg in call.args[1:])


def _builds_string(operation: cst.BinaryOperation) -> bool:
    """``'ensemble_' + str(i + 1) + '_' + feature``: a key built from strings (at trace time, in Python)."""
    if not isinstance(operation.operator, (cst.Add, cst.Modulo)):
        return False
    for side in (operation.left, operation.right):
        if isinstance(side, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            return True
        if isinstance(side, cst.Call) and isinstance(side.func, cst.Name) and side.func.value == "str":
            return True
        if isinstance(side, cst.BinaryOperation) and _builds_string(side):
            return True
    return False


def is_trivial_function(expr: cst.BaseExpression, model: Optional[ModuleModel] = None,
                        scope: Optional[FunctionInfo] = None, depth: int = 0) -> bool:
    """A map function that only picks, slices, regroups and reshapes its arguments (`lambda x, y: x`,
    `lambda w: (w[:-1], w[1:])`, `lambda x, y: (x, tf.expand_dims(y, -1))`, a module-level name bound
    once to such a lambda, or a same-file `def split_input_target(chunk)` that returns `chunk[:-1],
    chunk[1:]`, or `lambda ex: labeler(ex, i)` calling such a def): no arithmetic and no call but the
    layout ops (`reshape`, `expand_dims`, `cast`...), so running it on several elements at once gains
    nothing measurable."""
    if isinstance(expr, cst.Lambda):
        return _only_regroups(expr.body, model, scope, depth)
    if isinstance(expr, cst.Name) and model is not None:
        function = model.lookup_function(expr.value, scope)
        if function is None:
            # `remove_fold_column = lambda embedding, label, fold: (embedding, label)`, bound once at
            # module level and not shadowed where the map is.
            value = model.module_values.get(expr.value)
            module_level = model.scope_bindings(expr.value, scope)[0] is None
            return isinstance(value, cst.Lambda) and module_level and _only_regroups(value.body, model, scope, depth)
        if function.node.decorators:
            return False
        body = function.node.body
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
                small = statement.body[0]
                if isinstance(small, cst.Assign) and _only_regroups(small.value, model, function, depth):
                    continue
                if isinstance(small, cst.Return) and small.value is not None and _only_regroups(
                        small.value, model, function, depth):
                    continue
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
                    continue  # a docstring
            return False
        return bool(statements)
    return False


def _only_regroups(node: cst.CSTNode, model: Optional[ModuleModel], scope: Optional[FunctionInfo],
                   depth: int) -> bool:
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.IfExp) and model is not None and _picks_a_constant(current, model):
            continue  # `tf.cast(0, tf.int64) if x < warmup else tf.cast(1, tf.int64)`: a choice of two constants
        if isinstance(current, cst.BinaryOperation) and _repeats_a_display(current):
            stack.extend((current.left, current.right))  # `[z] * examples_per_class`: one value, repeated
            continue
        if isinstance(current, _HEAVY_NODES):
            if isinstance(current, cst.UnaryOperation) and isinstance(current.operator, cst.Minus) and isinstance(
                current.expression, (cst.Integer, cst.Float)
            ):
                continue  # `w[-1]`: a negative index
            if isinstance(current, cst.Call) and model is not None and _converts_a_feature(current, model, scope):
                continue  # `int(x["user_gender"])`, `tf.strings.to_number(x["movie_id"])`: as cheap as the pick
            if isinstance(current, cst.Call) and model is not None and _cheap_call(current, model, scope, depth):
                stack.extend(arg.value for arg in current.args)
                continue
            return False
        stack.extend(current.children)
    return True


def _converts_a_feature(call: cst.Call, model: ModuleModel, scope: Optional[FunctionInfo]) -> bool:
    """A conversion of one feature picked from the element by its key (``int(x["user_gender"])``,
    ``tf.strings.to_number(x["movie_id"])``, ``tf.strings.as_string(x["bucketized_user_age"])``,
    ``int(x["user_rating"] >= 3)``): a scalar id or flag turned into another type, work of the order of
    the pick itself (tensorflow/recommenders' MovieLens feature selections). A conversion of a whole
    element, or of anything computed, is not a pick."""
    name = model.call_name(call)
    if isinstance(call.func, cst.Name) and call.func.value in _CONVERSIONS and \
            model.lookup_function(call.func.value, scope) is None and not model.scope_bindings(call.func.value, scope)[1]:
        name = call.func.value
    if name not in _CONVERSIONS or not call.args or call.args[0].keyword is not None or call.args[0].star:
        return False
    if any(not isinstance(arg.value, (cst.Name, cst.Attribute, cst.Integer)) for arg in call.args[1:]):
        return False  # `out_type=tf.int64`, a dtype
    value = call.args[0].value
    if isinstance(value, cst.Comparison) and len(value.comparisons) == 1 and isinstance(
            value.comparisons[0].comparator, (cst.Integer, cst.Float, cst.SimpleString)):
        value = value.left  # `x["user_rating"] >= 3`: a flag from one feature
    key = _picked_key(value)
    return key is not None and key not in _vector_features(model)


def _picked_key(node: cst.BaseExpression) -> Optional[str]:
    """``x["movie_id"]``: one item of a name picked by a string key (the key), else None."""
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) == 1 and \
            isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.SimpleString):
        key = node.slice[0].slice.value.evaluated_value
        return key if isinstance(key, str) else None
    return None


def _vector_features(model: ModuleModel) -> FrozenSet[str]:
    """Keys the module's parsing specs declare as vectors or lists (``'context_movie_id':
    tf.io.FixedLenFeature([10], tf.string)``, a ``VarLenFeature``): converting one is work per value,
    not a scalar id's conversion."""
    found = set()
    for site in model.calls:
        name = model.call_name(site.node) or ""
        if not name.endswith(_FEATURE_SPECS):
            continue
        shape = argument(site.node, "shape", 0)
        scalar = name.endswith("FixedLenFeature") and shape is not None and isinstance(
            shape.value, (cst.List, cst.Tuple)) and not shape.value.elements
        if not scalar:
            found.update(_spec_keys(site.statement, site.node))
    return frozenset(found)


def _spec_keys(statement: Optional[cst.CSTNode], spec: cst.Call) -> List[str]:
    """The string keys a feature spec is given under in the dict display of its statement."""
    keys: List[str] = []
    stack: List[cst.CSTNode] = [statement] if statement is not None else []
    while stack:
        current = stack.pop()
        if isinstance(current, cst.DictElement) and current.value is spec and isinstance(current.key, cst.SimpleString):
            key = current.key.evaluated_value
            if isinstance(key, str):
                keys.append(key)
        stack.extend(current.children)
    return keys


def _repeats_a_display(operation: cst.BinaryOperation) -> bool:
    """``[z] * n`` / ``n * (x,)``: a list or tuple display repeated, which only lays out the values it
    holds n times (tensorflow/similarity's class selector: one class id per example of its block)."""
    if not isinstance(operation.operator, cst.Multiply):
        return False
    return isinstance(operation.left, (cst.List, cst.Tuple)) or isinstance(operation.right, (cst.List, cst.Tuple))


def _picks_a_constant(choice: cst.IfExp, model: ModuleModel) -> bool:
    """``A if x < n else B`` with constants ``A`` and ``B`` (literals, or literals cast or wrapped by a
    layout op: ``tf.cast(0, dtype=tf.int64)``) and a test that compares names and literals: each element
    becomes one of two constants (tensorflow/similarity's warm-up selector, 0 then 1 over a counter),
    work measured in nanoseconds."""
    return _constant(choice.body, model) and _constant(choice.orelse, model) and _plain_test(choice.test)


def _constant(expr: cst.BaseExpression, model: ModuleModel) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return isinstance(expr.expression, (cst.Integer, cst.Float))
    if isinstance(expr, cst.Call) and model.call_name(expr) in LAYOUT_OPS and expr.args:
        first, rest = expr.args[0], expr.args[1:]
        return first.keyword is None and not first.star and _constant(first.value, model) and all(
            isinstance(arg.value, (cst.Name, cst.Attribute)) for arg in rest)  # `tf.int64`, `dtype=tf.int64`
    return False


def _plain_test(test: cst.BaseExpression) -> bool:
    """A comparison of names, attributes and literals (``x < warmup``), or a boolean of such."""
    if isinstance(test, cst.BooleanOperation):
        return _plain_test(test.left) and _plain_test(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _plain_test(test.expression)
    if not isinstance(test, cst.Comparison):
        return False
    operands = [test.left, *(target.comparator for target in test.comparisons)]
    return all(isinstance(operand, (cst.Name, cst.Attribute, cst.Integer, cst.Float)) for operand in operands)


def _cheap_call(call: cst.Call, model: ModuleModel, scope: Optional[FunctionInfo], depth: int) -> bool:
    """A layout op (`tf.expand_dims(y, -1)`), a one-hot encoding of a label picked from the element to
    a depth the code writes small (`lambda image, label: (image, tf.one_hot(label, depth=8))`: a vector
    of a few floats per element while the image passes through, as cheap as the pick), or a same-file
    function that only regroups (`labeler(ex, i)` returning `ex, tf.cast(i, tf.int64)`)."""
    if model.call_name(call) in LAYOUT_OPS:
        return True
    if model.call_name(call) == _ONE_HOT and _small_depth(model, call) and call.args and \
            _picks_a_label(call.args[0].value, call, model, scope):
        return True
    return isinstance(call.func, cst.Name) and depth < _CALL_DEPTH and \
        model.lookup_function(call.func.value, scope) is not None and \
        is_trivial_function(call.func, model, scope, depth + 1)


def _picks_a_label(expr: cst.BaseExpression, call: cst.Call, model: ModuleModel, scope: Optional[FunctionInfo]) -> bool:
    """What a one-hot encodes is one value of the element: an item picked by a literal index or key
    (`y[0]`, `x["label"]`, not a feature the parsing spec declares a vector), or a parameter after the
    first of a map function taking several (`label` in `lambda image, label: ...` or `def
    label_format(image, label)`: the label half of an `(image, label)` element). The whole element of a
    one-parameter function (`lambda seq: tf.one_hot(seq, VOCAB)`) or a slice (`seq[:-1]`) may be a
    sequence: `depth` floats per token, work."""
    if isinstance(expr, cst.Subscript):
        if not all(isinstance(element.slice, cst.Index) for element in expr.slice):
            return False
        key = _picked_key(expr)
        if key is not None:
            return key not in _vector_features(model)
        return len(expr.slice) == 1 and _literal_index(expr.slice[0].slice.value)  # type: ignore[union-attr]
    if not isinstance(expr, cst.Name):
        return False
    site = model.site_of(call)
    if site is not None and site.lambdas:
        params = site.lambdas[-1].params  # the innermost lambda, the map function or one inside it
        return expr.value in [p.name.value for p in [*params.posonly_params, *params.params]][1:]
    if scope is None or site is None or site.function is not scope:
        return False
    bindings = model.bindings.get(scope, {}).get(expr.value, [])
    return expr.value in scope.positional_parameters[1:] and all(binding.kind == "param" for binding in bindings)


def _literal_index(node: cst.BaseExpression) -> bool:
    """`0`, `-1`: a position written out."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


def only_moves_values(expr: cst.BaseExpression, model: ModuleModel, scope: Optional[FunctionInfo],
                      depth: int = 0, arithmetic: bool = False, resizing: bool = False) -> bool:
    """A map function whose every call only moves values around (`reshape`, `transpose`, `concat`,
    `tile`, `x.set_shape(...)`, `range`), through the same-file functions and methods it calls
    (`lambda *args: self.process_example(params, *args)`): after `batch` it runs once per batch on next
    to no work. No arithmetic on values (`x / 255.` is work), only on Python ints in `range(...)` and
string formatting (`'box_%d' % level`); loops, and branches on settings, are allowed. With ``arithmetic``,
element-wise arithmetic and ops (``CHEAP_BATCH_OPS``: `x / 255.`, `tf.cast`, `tf.one_hot`) count as
moving values too: what a map run once per batch may do for microseconds. With ``resizing`` too, image
resizes (``_RESIZES``) count: what a map run once per element in the whole run (before a `cache()`) may do."""
    function = model.effects.resolve_callable(expr, scope, local_only=True)  # type: ignore[attr-defined]
    if function is None and isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
            and expr.value.value == "self":
        function = _patched_method(model, expr.attr.value)
    if function is None:
        return False
    inner = function if isinstance(function, FunctionInfo) else scope
    node = function.node if isinstance(function, FunctionInfo) else function
    if isinstance(node, cst.FunctionDef) and not all(
            (model.resolve(d.decorator) or "").startswith("tf.") for d in node.decorators):
        return False  # `@tf.function`, `@tf.autograph.experimental.do_not_convert` leave the work as it is
    stack: List[cst.CSTNode] = [node.body]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.If):
            stack.extend(c for c in (current.body, current.orelse) if c is not None)
            continue  # a choice on a setting (`if params['data_format'] == ...`)
        if isinstance(current, cst.Raise):
            continue  # an error path: `raise ValueError('Tensor %s is a scalar.' % tensor.name)`
        if isinstance(current, cst.BinaryOperation) and not arithmetic and not isinstance(
                current.left, (cst.SimpleString, cst.FormattedString)):
            return False  # `x / 255.`: arithmetic on the batch (`'box_%d' % level` only formats a key)
        if isinstance(current, (cst.UnaryOperation, cst.Comparison, cst.BooleanOperation)) and not arithmetic and not (
                isinstance(current, cst.UnaryOperation) and isinstance(current.expression, (cst.Integer, cst.Float))):
            return False
        if not isinstance(current, cst.Call):
            stack.extend(current.children)
            continue
        func = current.func
        if isinstance(func, cst.Name) and func.value in _PYTHON_HELPERS and model.lookup_function(func.value, inner) is None:
            continue  # `range(params['min_level'], params['max_level'] + 1)`: Python ints
        stack.extend(current.children)
        name = model.call_name(current)
        if name in (CHEAP_BATCH_OPS if arithmetic else BATCH_LAYOUT_OPS) or (resizing and name in _RESIZES):
            continue
        if arithmetic and name == _ONE_HOT and _small_depth(model, current):
            continue
        if arithmetic and _elementwise_layer(model, current):
            continue  # `normalization_layer(x)` with `normalization_layer = Rescaling(1./255)`: `x / 255.`
        if isinstance(func, cst.Attribute) and func.attr.value in _SHAPE_METHODS:
            continue  # `x.set_shape(...)`, `x.shape[:1].is_fully_defined()`: shapes, not values
        if name in _CHECKS:
            continue  # `tf.Assert(tf.equal(n, batch_size), [...])` under `tf.control_dependencies`: a scalar check
        if isinstance(func, cst.Attribute) and func.attr.value in _DICT_PICKS and isinstance(func.value, cst.Name) \
                and all(isinstance(arg.value, (cst.SimpleString, cst.Name)) for arg in current.args):
            continue  # `features.pop("label")`: a feature picked out of the element's dict
        if depth < _CALL_DEPTH and only_moves_values(func, model, inner, depth + 1, arithmetic, resizing):
            continue
        return False
    return True


def _elementwise_layer(model: ModuleModel, call: cst.Call) -> bool:
    """``call`` applies a Keras layer that only does element-wise arithmetic (``_ELEMENTWISE_LAYERS``):
    ``Rescaling(1./255)(x)``, or a name every binding of which reaching the call builds one."""
    func = call.func
    if isinstance(func, cst.Call):
        return _builds_elementwise_layer(model, func)
    site = model.site_of(call)
    if not isinstance(func, cst.Name) or site is None:
        return False
    bindings = model.reaching(func.value, site.function, site.place, site.lambdas)
    return bool(bindings) and all(
        binding.kind == "assign" and isinstance(binding.value, cst.Call) and _builds_elementwise_layer(model, binding.value)
        for binding in bindings)


def _builds_elementwise_layer(model: ModuleModel, call: cst.Call) -> bool:
    name = model.call_name(call) or ""
    return name.startswith("keras.") and name.rsplit(".", 1)[-1] in _ELEMENTWISE_LAYERS


def _small_depth(model: ModuleModel, call: cst.Call) -> bool:
    """`tf.one_hot(y, depth=10)`: a depth the code sets (a literal, a constant) to a few classes."""
    depth = argument(call, "depth", 1)
    known = model.integer_values.integer(depth.value, model.site_of(call)) if depth is not None else None  # type: ignore[attr-defined]
    return known is not None and known.value <= _SMALL_DEPTH


def _patched_method(model: ModuleModel, name: str) -> Optional[FunctionInfo]:
    """`self.split_window` in a notebook that defines `def split_window(self, ...)` at module level and
    attaches it with `WindowGenerator.split_window = split_window`."""
    function = model.module_functions.get(name)
    if function is None:
        return None
    params = function.node.params.params
    if not params or params[0].name.value != "self":
        return None
    for statement in model.module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and isinstance(small.value, cst.Name) and small.value.value == name \
                        and any(isinstance(t.target, cst.Attribute) and t.target.attr.value == name for t in small.targets):
                    return function
    return None
