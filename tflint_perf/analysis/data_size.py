"""How much data a value is drawn from, when the source says: the whole dataset, counted in numbers.

A training step fed a batch of a dataset of 17 points, 100 random draws or the 150 rows of Iris
copies a few hundred bytes per step: ``feed_dict`` costs it microseconds and a ``tf.data``
pipeline would gain nothing a user could measure (the TF1 cookbooks' and tutorials' toy
regressions). Whether data is that small is read from how it is made, never from names:

- literal numbers and (nested) lists of them, ``np.array`` / ``np.asarray`` of those;
- NumPy constructors with their sizes written out: ``np.random.normal(1, 0.1, 100)``,
  ``np.random.uniform(size=(50, 2))``, ``np.linspace(0, 10, 100)``, ``np.arange(100)``,
  ``np.zeros((20, 3))`` (sizes as literals or module constants);
- scikit-learn's small bundled datasets (``datasets.load_iris()``: 150 rows);
- what keeps or combines such data: a slice or an item of it, ``x.T``, ``x.reshape(...)``,
  ``np.transpose([x])``, ``np.concatenate((a, b))``, ``[row[3] for row in iris.data]``,
  ``x * 2``, one element of a loop over it (``for (x, y) in zip(train_X, train_Y)``).

A name is followed to every binding that may reach the use; all must be known. Anything else (a
file read, a download, a parameter, a function's result) is of unknown size.
"""

from __future__ import annotations

from typing import FrozenSet, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.constants import ValueSources
from tflint_perf.analysis.model import Binding, FunctionInfo, ModuleModel, Place

TINY_DATA = 10_000  # numbers (40 KB of float32): a feed drawn from this much copies next to nothing
_MAX_DEPTH = 12

# Functions that return their argument's numbers, rearranged or combined (the sum of their parts).
_KEEPS_DATA = frozenset({
    "numpy.array", "numpy.asarray", "numpy.float32", "numpy.float64", "numpy.transpose", "numpy.reshape",
    "numpy.expand_dims", "numpy.squeeze", "numpy.stack", "numpy.vstack", "numpy.hstack", "numpy.column_stack",
    "numpy.concatenate", "numpy.matrix", "numpy.atleast_2d", "numpy.ravel", "list", "tuple", "sorted", "zip",
})
_KEEPS_DATA_METHODS = frozenset({"reshape", "astype", "flatten", "ravel", "tolist", "copy", "squeeze", "transpose"})
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


# scikit-learn's bundled datasets: rows x (features + target).
_BUNDLED = {
    "load_iris": 150 * 5, "load_wine": 178 * 14, "load_diabetes": 442 * 11, "load_boston": 506 * 14,
    "load_breast_cancer": 569 * 31, "load_linnerud": 20 * 6,
}


class DataSizes:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._integers = ValueSources(model)

    def is_tiny(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                lambdas: Tuple[cst.Lambda, ...] = ()) -> bool:
        """``expr`` is drawn from at most ``TINY_DATA`` numbers in all, as its source shows."""
        numbers = self._numbers(expr, scope, place, lambdas, 0, frozenset())
        return numbers is not None and numbers <= TINY_DATA

    def _numbers(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place,
                 lambdas: Tuple[cst.Lambda, ...], depth: int, resolving: FrozenSet[str]) -> Optional[int]:
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
            return again(expr.for_in.iter)  # `[row[3] for row in iris.data]`: drawn from the rows
        if isinstance(expr, cst.Call):
            return self._call(expr, again)
        if isinstance(expr, cst.Name):
            if expr.value in resolving:
                return None
            bindings = self.model.reaching(expr.value, scope, place, lambdas)
            if not bindings:
                return None
            largest = 0
            for binding in bindings:
                found = self._binding(binding, depth, resolving | {expr.value})
                if found is None:
                    return None
                largest = max(largest, found)
            return largest
        return None

    def _binding(self, binding: Binding, depth: int, resolving: FrozenSet[str]) -> Optional[int]:
        if binding.value is None:
            return None
        numbers = self._numbers(binding.value, binding.scope, binding.place, (), depth + 1, resolving)
        if binding.kind in ("assign", "for", "unpack"):
            return numbers  # the whole of what is bound, unpacked or iterated bounds each part
        return None

    def _call(self, call: cst.Call, again) -> Optional[int]:
        name = self.model.call_name(call) or (call.func.value if isinstance(call.func, cst.Name) else "")
        positional = [a.value for a in call.args if a.keyword is None and a.star == ""]
        if name in _KEEPS_DATA:
            return _total(again(a.value) for a in call.args if a.keyword is None) if positional else None
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _KEEPS_DATA_METHODS and not name:
            return again(call.func.value)
        shape = constructor_shape(call, name)
        if shape is not None:
            return self._product(shape)
        if name == "numpy.arange" and positional and len(positional) <= 2:
            stop = self._integer(positional[-1])
            start = self._integer(positional[0]) if len(positional) == 2 else 0
            return stop - start if stop is not None and start is not None and stop >= start else None
        if name.startswith("sklearn.datasets.") and not call.args:
            return _BUNDLED.get(name.rsplit(".", 1)[-1])
        return None

    def _product(self, size: cst.BaseExpression) -> Optional[int]:
        parts = [e.value for e in size.elements] if isinstance(size, (cst.Tuple, cst.List)) else [size]
        product = 1
        for part in parts:
            value = self._integer(part)
            if value is None or value < 0:
                return None
            product *= value
        return product

    def _integer(self, expr: cst.BaseExpression) -> Optional[int]:
        found = self._integers.integer(expr, None)
        return found.value if found is not None else None


def _total(parts) -> Optional[int]:
    total = 0
    for part in parts:
        if part is None:
            return None
        total += part
    return total
