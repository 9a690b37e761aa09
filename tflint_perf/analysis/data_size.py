"""How much data a value is drawn from, when the source says: the whole dataset, counted in numbers.

A training step fed a batch of a dataset of 17 points, 100 random draws or the 150 rows of Iris
copies a few hundred bytes per step: ``feed_dict`` costs it microseconds and a ``tf.data``
pipeline would gain nothing a user could measure (the TF1 cookbooks' and tutorials' toy
regressions). Whether data is that small is read from how it is made, never from variable names:

- literal numbers and (nested) lists of them, ``np.array`` / ``np.asarray`` of those;
- NumPy constructors with their sizes written out: ``np.random.normal(1, 0.1, 100)``,
  ``np.random.uniform(size=(50, 2))``, ``np.linspace(0, 10, 100)``, ``np.arange(100)``,
  ``np.zeros((20, 3))``, ``np.arange(-100, 100, 4)`` (sizes as literals or module constants);
- Keras' and TensorFlow Datasets' catalogue sets whose name shows they are toys
  (``keras.datasets.boston_housing.load_data()``, ``tfds.load('iris')``: ``is_named_toy_source``);
- scikit-learn's small bundled datasets (``datasets.load_iris()``: 150 rows) and its generators with
  their sample counts written (``datasets.make_circles(n_samples=350)``);
- ``np.repeat(10., 100)``: the repeated data times the count;
- what keeps or combines such data: a slice or an item of it, ``x.T``, ``x.reshape(...)``,
  ``np.transpose([x])``, ``np.concatenate((a, b))``, ``[row[3] for row in iris.data]``,
  ``x * 2``, NumPy's and scipy.stats' element-wise functions of it (``norm.ppf(np.linspace(0.05, 0.95, 7))``),
  one element of a loop over it (``for (x, y) in zip(train_X, train_Y)``), the tensor
  TensorFlow makes of it (``tf.expand_dims(x, axis=-1)``, ``tf.cast(x, tf.float32)``, ``tf.constant(x)``).

A ``tf.data`` pipeline that slices a dataset this small (``is_toy_dataset``: at most ``TOY_DATASET``
numbers, sklearn's digits or Iris, a few thousand 2-D points) does microseconds of input work per step
with cheap maps: nothing for a prefetch to overlap (``StatePredicates.does_work``).

A name is followed to every binding that may reach the use; all must be known. Anything else (a
file read, a download, a parameter, a function's result) is of unknown size.

Where the dataset's size is not written (a CSV read from disk), what one step feeds can still be: a
placeholder's written shape (``tf.placeholder(shape=[None, 7])``) times the rows gathered from an
in-memory array for the step (``x[np.random.choice(len(x), size=batch_size)]``, ``x[i:i + 25]``).
A few thousand numbers gathered per step cost microseconds whatever the dataset's size.
"""

from __future__ import annotations

from typing import Callable, FrozenSet, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument, int_literal
from tflint_perf.analysis.model import Binding, FunctionInfo, ModuleModel, Place

TINY_DATA = 10_000  # numbers (40 KB of float32): a feed drawn from this much copies next to nothing
# Numbers (1 MB of float32) a whole in-memory dataset may hold and still be a toy (scikit-learn's digits,
# 1,797 rows of 64 pixels and a label; Iris; a few thousand 2-D points): one pass over all of it slices,
# batches and casts a megabyte, so its input work is microseconds per step whatever the batch size.
TOY_DATASET = 250_000
SMALL_STEP = 4_096  # numbers fed per step (16 KB of float32): gathering and copying them takes microseconds
_MAX_DEPTH = 12

# Functions that return their argument's numbers, rearranged or combined (the sum of their parts).
_KEEPS_DATA = frozenset({
    "numpy.array", "numpy.asarray", "numpy.float32", "numpy.float64", "numpy.transpose", "numpy.reshape",
    "numpy.expand_dims", "numpy.squeeze", "numpy.stack", "numpy.vstack", "numpy.hstack", "numpy.column_stack",
    "numpy.concatenate", "numpy.matrix", "numpy.atleast_2d", "numpy.ravel", "numpy.nan_to_num", "list", "tuple",
    "sorted", "zip",
})
# NumPy's element-wise functions: each result is as large as its (broadcast) arguments, drawn from them.
_ELEMENTWISE = frozenset(f"numpy.{name}" for name in (
    "sin", "cos", "tan", "tanh", "exp", "log", "sqrt", "square", "abs", "absolute", "power", "maximum", "minimum",
    "clip", "sign", "floor", "ceil", "round", "add", "subtract", "multiply", "divide", "where",
))
# scipy.stats distributions' element-wise functions (`norm.ppf(np.linspace(0.05, 0.95, n))`: a latent grid).
_DISTRIBUTION_FUNCTIONS = frozenset({"pdf", "logpdf", "cdf", "logcdf", "ppf", "sf", "logsf", "isf"})
_KEEPS_DATA_METHODS = frozenset({"reshape", "astype", "flatten", "ravel", "tolist", "copy", "squeeze", "transpose"})
# TensorFlow functions whose result holds the numbers of their first argument, rearranged or cast
# (`tf.expand_dims(X_train, axis=-1)`, `tf.cast(x, tf.float32)`); their other arguments are options.
_KEEPS_FIRST = frozenset({
    "tf.expand_dims", "tf.squeeze", "tf.reshape", "tf.cast", "tf.constant", "tf.convert_to_tensor", "tf.transpose",
})
# What keeps an array's rows as rows (a gather's row count survives it; a reshape's does not).
_KEEPS_ROWS = frozenset({"numpy.array", "numpy.asarray", "numpy.float32", "numpy.float64"})
_KEEPS_ROWS_METHODS = frozenset({"astype", "copy"})
# Constructors whose result's shape is one argument: its keyword and position.
_SHAPE_ARGUMENT = {
    "numpy.random.normal": ("size", 2), "numpy.random.uniform": ("size", 2), "numpy.random.randint": ("size", 2),
    "numpy.random.choice": ("size", 1), "numpy.random.binomial": ("size", 2), "numpy.random.poisson": ("size", 1),
    "numpy.random.random": ("size", 0), "numpy.random.random_sample": ("size", 0),
    "numpy.zeros": ("shape", 0), "numpy.ones": ("shape", 0), "numpy.empty": ("shape", 0), "numpy.full": ("shape", 0),
    "numpy.linspace": ("num", 2), "tf.zeros": ("shape", 0), "tf.ones": ("shape", 0),
    "tf.random.normal": ("shape", 0), "tf.random.uniform": ("shape", 0),
}
_DIMENSIONS = frozenset({"numpy.random.rand", "numpy.random.randn"})  # rand(d0, d1, ...)


def constructor_shape(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """The shape a NumPy or TensorFlow constructor is given, as written (``np.zeros((20, 3))``: ``(20,
    3)``; ``np.random.normal(1, 0.1, 100)``: ``100``; ``np.random.rand(20, 3)``: the dimensions as a
    tuple); None when ``name`` is not such a constructor or the shape is not written."""
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if name in _DIMENSIONS:
        return cst.Tuple([cst.Element(p) for p in positional]) if positional else None
    if name not in _SHAPE_ARGUMENT:
        return None
    keyword, index = _SHAPE_ARGUMENT[name]
    found = argument(call, keyword, index)
    return found.value if found is not None else None


def slice_length(piece: cst.Slice, code: Callable[[cst.CSTNode], str],
                 integer: Callable[[cst.BaseExpression], Optional[int]]) -> Optional[int]:
    """The rows a slice takes, when it says: ``a:a + k`` (k), ``i * k:(i + 1) * k`` (k), ``:k`` (k).
    ``code`` renders a node (to compare bounds), ``integer`` is the caller's reading of a count."""
    lower, upper = piece.lower, piece.upper
    if piece.step is not None or upper is None:
        return None
    if lower is None:
        return integer(upper)
    if isinstance(upper, cst.BinaryOperation) and isinstance(upper.operator, cst.Add) and code(upper.left) == code(lower):
        return integer(upper.right)
    if (isinstance(lower, cst.BinaryOperation) and isinstance(upper, cst.BinaryOperation)
            and isinstance(lower.operator, cst.Multiply) and isinstance(upper.operator, cst.Multiply)
            and code(lower.right) == code(upper.right)):
        step = upper.left  # `(i + 1)` in `(i + 1) * k`, written in parentheses
        if isinstance(step, cst.BinaryOperation) and isinstance(step.operator, cst.Add) \
                and code(step.left) == code(lower.left) and int_literal(step.right) == 1:
            return integer(lower.right)
    return None


# scikit-learn's bundled datasets: rows x (features + target).
_BUNDLED = {
    "load_iris": 150 * 5, "load_wine": 178 * 14, "load_diabetes": 442 * 11, "load_boston": 506 * 14,
    "load_breast_cancer": 569 * 31, "load_linnerud": 20 * 6, "load_digits": 1797 * 65,
}
# Keywords of the bundled loaders that only choose how the same numbers come back.
_PRESENTATION_KEYWORDS = frozenset({"return_X_y", "as_frame"})
# scikit-learn's generators: (features + target) per sample, with their default sample count.
_GENERATED = {"make_circles": 3, "make_moons": 3, "make_blobs": 3, "make_s_curve": 4, "make_swiss_roll": 4}
# Well-known catalogue datasets small enough to be toys whatever is done with them, by the name their loader
# is given: rows x (features + target). TensorFlow Datasets' (`tfds.load('iris')`: 150 rows; a config or a
# version after the name, `penguins/processed`, `iris:2.*.*`, is the same set) and Keras' bundled ones
# (`keras.datasets.boston_housing.load_data()`: 506 rows of 13 features).
_TFDS_TOYS = {"iris": 150 * 5, "penguins": 344 * 8, "titanic": 1309 * 14, "german_credit_numeric": 1000 * 25}
_KERAS_TOYS = {"boston_housing": 506 * 14}
_PLACEHOLDERS = frozenset({"tf.placeholder", "tf.compat.v1.placeholder"})


class DataSizes:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model

    def is_tiny(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                lambdas: Tuple[cst.Lambda, ...] = ()) -> bool:
        """``expr`` is drawn from at most ``TINY_DATA`` numbers in all, as its source shows."""
        numbers = self._numbers(expr, scope, place, lambdas, 0, frozenset())
        return numbers is not None and numbers <= TINY_DATA

    def is_toy_dataset(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place) -> bool:
        """``expr`` (what a pipeline slices) is drawn from at most ``TOY_DATASET`` numbers in all, as its
        source shows (``load_digits(return_X_y=True)`` and slices of it, ``np.random.rand(100, 2)``)."""
        numbers = self._numbers(expr, scope, place, (), 0, frozenset())
        return numbers is not None and numbers <= TOY_DATASET

    def is_named_toy_source(self, call: cst.Call) -> bool:
        """``call`` loads a catalogue dataset its name shows to be a toy (``_TFDS_TOYS``): ``tfds.load(
        'iris', split='train')``, 150 rows, a pipeline whose whole pass is a few kilobytes."""
        if self.model.call_name(call) != "tfds.load":
            return False
        name = argument(call, "name", 0)
        text = name.value.evaluated_value if name is not None and isinstance(name.value, cst.SimpleString) else None
        return isinstance(text, str) and text.split(":")[0].split("/")[0] in _TFDS_TOYS

    def numbers(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place) -> Optional[int]:
        """How many numbers ``expr`` is drawn from in all, as its source shows; None when unknown. A loop
        over it yields at most that many elements (``analysis/lengths.py``)."""
        return self._numbers(expr, scope, place, (), 0, frozenset())

    def feeds_little(self, entries) -> bool:
        """Every fed ``(key, value, scope, place)`` is drawn from a toy dataset or its step's share is
        written, and the shares written add up to at most ``SMALL_STEP`` numbers."""
        per_step = 0
        for key, value, scope, place in entries:
            if self.is_tiny(value, scope, place):
                continue
            numbers = self.step_numbers(key, value, scope, place)
            if numbers is None:
                return False
            per_step += numbers
        return per_step <= SMALL_STEP

    def step_numbers(self, key: cst.BaseExpression, value: cst.BaseExpression, scope: Optional[FunctionInfo],
                     place: Place) -> Optional[int]:
        """How many numbers one step feeds through the placeholder ``key``: its written shape, its one
        open dimension counted as the rows ``value`` gathers. None when either is not written, or the
        value is not gathered from an in-memory array."""
        shape = self._placeholder_shape(key, scope, place)
        if shape is None:
            return None
        known, open_dimensions = shape
        rows = self._gathered_rows(value, scope, place, 0)
        if rows is None or open_dimensions > 1:
            return None  # a batch built in Python (a skip-gram generator) costs more than its copy
        return known * rows if open_dimensions else known

    def _placeholder_shape(self, key: cst.BaseExpression, scope, place: Place) -> Optional[Tuple[int, int]]:
        """``(product of the written dimensions, number of None dimensions)`` of the placeholder a
        name is bound to; None when it is not one, or its shape or rank is not written."""
        if not isinstance(key, cst.Name):
            return None
        bindings = self.model.reaching(key.value, scope, place)
        if not bindings or len(bindings) != 1 or bindings[0].kind != "assign":
            return None
        call = bindings[0].value
        if not isinstance(call, cst.Call) or self.model.call_name(call) not in _PLACEHOLDERS:
            return None
        shape = argument(call, "shape", 1)
        if shape is None or not isinstance(shape.value, (cst.List, cst.Tuple)):
            return None
        known, open_dimensions = 1, 0
        for element in shape.value.elements:
            if isinstance(element.value, cst.Name) and element.value.value == "None":
                open_dimensions += 1
                continue
            size = self._integer(element.value)
            if size is None or size < 0:
                return None
            known *= size
        return known, open_dimensions

    def _gathered_rows(self, expr: cst.BaseExpression, scope, place: Place, depth: int,
                       listed: bool = False) -> Optional[int]:
        """The rows a step's value takes from an in-memory array, when the gather says how many: a
        random index array of a written size, or a slice ``start:start + k``. Wrappers that keep the
        rows (a one-element list, ``np.array``, ``astype``, ``np.transpose`` of a one-element list) are
        looked through; a reshape, which may move numbers into rows, is not."""
        if depth > _MAX_DEPTH:
            return None
        again = lambda e: self._gathered_rows(e, scope, place, depth + 1)  # noqa: E731
        if isinstance(expr, (cst.List, cst.Tuple)) and len(expr.elements) == 1:
            return self._gathered_rows(expr.elements[0].value, scope, place, depth + 1, listed=True)
        if isinstance(expr, cst.Call):
            name = self.model.call_name(expr)
            positional = [a.value for a in expr.args if a.keyword is None and not a.star]
            if name in _KEEPS_ROWS and len(positional) == 1:
                return again(positional[0])
            if name == "numpy.transpose" and len(positional) == 1 and isinstance(positional[0], cst.List):
                return again(positional[0])  # `np.transpose([y[idx]])`: k values as a column
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _KEEPS_ROWS_METHODS and not name:
                return again(expr.func.value)
            return None
        if isinstance(expr, cst.Name):
            bindings = self.model.reaching(expr.value, scope, place)
            if not bindings or any(b.kind != "assign" or b.value is None for b in bindings):
                return None
            found = [self._gathered_rows(b.value, b.scope, b.place, depth + 1) for b in bindings]
            return None if None in found else max(found)
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
            index = expr.slice[0].slice
            if isinstance(index, cst.Slice):
                return slice_length(index, self.model.module.code_for_node, self._integer)
            if isinstance(index, cst.Index):
                count = self._index_count(index.value, scope, place)
                # One index drops the row's dimension: `[x[i]]` is one row, `x[i]` a row's own numbers.
                return None if count is None or (count == 0 and not listed) else max(count, 1)
        return None

    def _index_count(self, index: cst.BaseExpression, scope, place: Place) -> Optional[int]:
        """How many indices a random index array holds: ``np.random.choice(n, size=25)``: 25;
        ``np.random.choice(n)``: 0, a single index."""
        if isinstance(index, cst.Name):
            bindings = self.model.reaching(index.value, scope, place)
            if not bindings or len(bindings) != 1 or bindings[0].kind != "assign":
                return None
            index = bindings[0].value
        if not isinstance(index, cst.Call):
            return None
        name = self.model.call_name(index)
        if name not in ("numpy.random.choice", "numpy.random.randint"):
            return None
        shape = constructor_shape(index, name)
        return self._product(shape) if shape is not None else 0  # no size: one index, no row dimension

    def _numbers(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                 lambdas: Tuple[cst.Lambda, ...], depth: int, resolving: FrozenSet[int]) -> Optional[int]:
        if depth > _MAX_DEPTH:
            return None
        again = lambda e: self._numbers(e, scope, place, lambdas, depth + 1, resolving)  # noqa: E731
        if isinstance(expr, (cst.Integer, cst.Float)):
            return 1
        if isinstance(expr, cst.UnaryOperation):
            return again(expr.expression)
        if isinstance(expr, (cst.List, cst.Tuple)):
            if not expr.elements:
                return None  # filled later (`obs = []`, then `obs.append(ob)`): of unknown size
            return _total(again(e.value) for e in expr.elements if not isinstance(e, cst.StarredElement)) \
                if not any(isinstance(e, cst.StarredElement) for e in expr.elements) else None
        if isinstance(expr, cst.BinaryOperation):
            return _total((again(expr.left), again(expr.right)))
        if isinstance(expr, cst.Subscript):
            return again(expr.value)  # a slice or an item holds at most what the whole does
        if isinstance(expr, cst.Attribute):
            return again(expr.value)  # `x.T`, `iris.data`
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            repeated = self._repeated(expr, again)
            if repeated is not None:
                return repeated
            return again(expr.for_in.iter)  # `[row[3] for row in iris.data]`: drawn from the rows
        if isinstance(expr, cst.Comparison):
            return _total([again(expr.left)] + [again(target.comparator) for target in expr.comparisons])
        if isinstance(expr, cst.Call):
            return self._call(expr, again, depth)
        if isinstance(expr, cst.Name):
            bindings = self.model.reaching(expr.value, scope, place, lambdas)
            if not bindings:
                return None
            largest = 0
            for binding in bindings:
                if id(binding) in resolving:
                    return None  # `y = [f(v) for v in y]` reads the binding before it, never itself
                found = self._binding(binding, depth, resolving | {id(binding)})
                if found is None:
                    return None
                largest = max(largest, found)
            return largest
        return None

    def _binding(self, binding: Binding, depth: int, resolving: FrozenSet[int]) -> Optional[int]:
        if binding.value is None:
            return None
        numbers = self._numbers(binding.value, binding.scope, binding.place, (), depth + 1, resolving)
        if binding.kind in ("assign", "for", "unpack"):
            return numbers  # the whole of what is bound, unpacked or iterated bounds each part
        return None

    def _call(self, call: cst.Call, again, depth: int) -> Optional[int]:
        name = self.model.call_name(call) or (call.func.value if isinstance(call.func, cst.Name) else "")
        positional = [a.value for a in call.args if a.keyword is None and a.star == ""]
        if name in _KEEPS_DATA or name in _ELEMENTWISE or _distribution_function(name):
            return _total(again(a.value) for a in call.args if a.keyword is None) if positional else None
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _KEEPS_DATA_METHODS and not name:
            return again(call.func.value)
        if name in _KEEPS_FIRST:
            shape = argument(call, "shape", 2) if name == "tf.constant" else None
            if shape is not None:  # `tf.constant(0., shape=(200000, 20))` fills the shape: 4 million numbers
                return self._product(shape.value)
            return again(positional[0]) if positional else None
        shape = constructor_shape(call, name)
        if isinstance(shape, cst.Attribute) and shape.attr.value == "shape":
            return again(shape.value)  # `np.random.normal(0, 0.1, size=x.shape)`: as many numbers as x
        if shape is not None:
            return self._product(shape)
        callee = self.model.call_graph.callee(call)  # type: ignore[attr-defined]
        if callee is not None and callee.returns and not call.args:
            return self._returned(callee, depth)
        if name == "numpy.arange" and positional and len(positional) <= 3:
            return _arange_length([self._signed_integer(p) for p in positional])
        if name == "numpy.repeat" and len(positional) == 2:
            data, count = again(positional[0]), self._integer(positional[1])
            return data * count if data is not None and count is not None and count >= 0 else None
        if name.startswith("sklearn.datasets."):
            return _scikit_learn_numbers(name.rsplit(".", 1)[-1], call, self._integer)
        parts = name.split(".")
        if parts[-1] == "load_data" and len(parts) >= 3 and parts[-3] == "datasets" and not call.args:
            return _KERAS_TOYS.get(parts[-2])  # `boston_housing.load_data()`: the whole set, both splits
        return None

    def _repeated(self, comprehension, again) -> Optional[int]:
        """``[np.linspace(-1, 1, 15) for _ in range(64)]``: the element's numbers times the literal count of
        a ``range``, when the element does not read the loop's target (it is the same size every time)."""
        loop = comprehension.for_in
        if loop.inner_for_in is not None or not isinstance(loop.iter, cst.Call) or loop.ifs:
            return None
        if self.model.call_name(loop.iter) != "range" and not (
                isinstance(loop.iter.func, cst.Name) and loop.iter.func.value == "range"):
            return None
        bounds = [a.value for a in loop.iter.args if a.keyword is None and not a.star]
        integers = [self._integer(bound) for bound in bounds]
        if len(bounds) not in (1, 2) or None in integers:
            return None
        count = integers[-1] - (integers[0] if len(integers) == 2 else 0)
        element = again(comprehension.elt)
        return max(count, 0) * element if element is not None else None

    def _returned(self, function: FunctionInfo, depth: int) -> Optional[int]:
        """The largest of what a same-file function, called without arguments, returns (``artist_works()``
        drawing 64 curves of 15 points); None when any return's size is unknown."""
        largest = 0
        for ret in function.returns:
            if ret.node.value is None:
                return None
            found = self._numbers(ret.node.value, function, ret.place, (), depth + 1, frozenset())
            if found is None:
                return None
            largest = max(largest, found)
        return largest

    def _product(self, size: cst.BaseExpression) -> Optional[int]:
        parts = [e.value for e in size.elements] if isinstance(size, (cst.Tuple, cst.List)) else [size]
        product = 1
        for part in parts:
            value = self._integer(part)
            if value is None or value < 0:
                return None
            product *= value
        return product

    def _signed_integer(self, expr: cst.BaseExpression) -> Optional[int]:
        """As ``_integer``, and a negated one (``np.arange(-100, 100, 4)``'s start)."""
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
            value = self._integer(expr.expression)
            return -value if value is not None else None
        return self._integer(expr)

    def _integer(self, expr: cst.BaseExpression) -> Optional[int]:
        """A literal or a module constant: a flag's default (``FLAGS.batch_size``) may differ at run time."""
        return self.model.step_loops.fixed_integer(expr)


def _arange_length(bounds) -> Optional[int]:
    """The numbers ``np.arange(stop)``, ``np.arange(start, stop)`` or ``np.arange(start, stop, step)``
    gives (``np.arange(-100, 100, 4)``: 50), its bounds integers; None when one is not known."""
    if None in bounds:
        return None
    start, stop = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
    step = bounds[2] if len(bounds) == 3 else 1
    if step <= 0 or stop < start:
        return None
    return -(-(stop - start) // step)


def _distribution_function(name: str) -> bool:
    return name.startswith("scipy.stats.") and name.rsplit(".", 1)[-1] in _DISTRIBUTION_FUNCTIONS


def _total(parts) -> Optional[int]:
    total = 0
    for part in parts:
        if part is None:
            return None
        total += part
    return total


def _scikit_learn_numbers(name: str, call: cst.Call, integer) -> Optional[int]:
    """The numbers a bundled scikit-learn dataset (``load_iris()``) or a generator with its sample
    count written (``make_circles(n_samples=350)``) holds."""
    if name in _BUNDLED:
        presentation_only = all(arg.keyword is not None and arg.keyword.value in _PRESENTATION_KEYWORDS
                                for arg in call.args)  # `load_digits(return_X_y=True)`: the same numbers
        return _BUNDLED[name] if presentation_only else None
    if name not in _GENERATED:
        return None
    samples = argument(call, "n_samples", 0)
    count = integer(samples.value) if samples is not None else 100
    features = argument(call, "n_features", None)
    if count is None or features is not None:
        return None
    return count * _GENERATED[name]
