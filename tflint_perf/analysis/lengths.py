"""How many elements an iterable yields at most, when the source shows it: the bound of a loop over it.

A loop over five file names, over ten tweets drawn with ``random.sample(tweets, 10)`` or over a grid of
``np.linspace(0.05, 0.95, n)`` with ``n = 7`` runs a handful of times, however its body is written.
``Lengths.at_most`` reads that bound from how the iterated value is made, never from names:

- a literal list, tuple, set or dict (no ``*xs``), or a name every binding of which reaching the loop is
  one (not an empty one, which is filled out of sight; that no ``append`` / ``extend`` ... grows and that
  is handed to no function of this file);
- ``range`` of known integers; ``random.sample(population, k)``; a slice ``x[:k]`` or ``x[a:b]``;
- what keeps the count: ``enumerate``, ``list``, ``tuple``, ``sorted``, ``reversed``, ``tqdm``, a dict's
  ``items()`` / ``keys()`` / ``values()``, a comprehension over one (its ``if`` clauses only drop items;
  nested ``for`` clauses multiply); ``zip`` yields as many as its shortest argument;
- a ``tf.data`` pipeline over in-memory slices: ``Dataset.from_tensor_slices(x)`` yields as many elements as
  ``x`` has rows (the leading dimension of a constructor's written shape, else at most its numbers; for a
  tuple or dict of arrays, the fewest any component shows); ``shuffle``, ``map``, ``prefetch``, ``cache``
  keep the count, ``batch(b)`` divides it (rounding up), ``take(k)`` caps it, ``repeat(k)`` multiplies it
  (``repeat()`` is endless: unknown);
- an array whose numbers ``data_size`` counts (``np.linspace(0.05, 0.95, 7)``, ``norm.ppf`` of one): a
  loop over it yields at most as many elements as it holds numbers.

Integers are read with the loop analysis' ``fixed_integer`` (literals and module constants, whatever the
run). Anything else (a file listing, a parameter, a function's result) is of unknown length: None.
"""

from __future__ import annotations

from typing import Callable, List, Optional

import libcst as cst

from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.data_size import DataSizes, constructor_shape
from tflint_perf.analysis.model import FunctionInfo, ModuleModel, Place
from tflint_perf.analysis.names import dotted_text

_KEEPS_COUNT = frozenset({"enumerate", "list", "tuple", "sorted", "reversed", "tqdm", "tqdm.tqdm", "set"})
_VIEWS = frozenset({"items", "keys", "values"})
_RANGES = frozenset({"range", "xrange"})
# Methods that change a list, set or dict's length.
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "add", "setdefault",
                      "discard", "popitem"})
_MAX_DEPTH = 12  # a pipeline rebound step by step (`ds = ds.shuffle(n)`, `ds = ds.batch(b)`) nests deep
# tf.data methods that yield one element per element of the dataset they are called on.
_KEEPS_ELEMENTS = frozenset({"shuffle", "map", "prefetch", "cache", "with_options", "apply_options"})
_BATCHES = frozenset({"batch", "padded_batch"})


class Lengths:
    def __init__(self, model: ModuleModel, integer: Callable[[cst.BaseExpression], Optional[int]]) -> None:
        self.model = model
        self._integer = integer
        self._sizes = DataSizes(model)

    def at_most(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place, depth: int = 0) -> Optional[int]:
        """The most elements iterating ``expr`` (read in ``scope`` at ``place``) yields; None if unknown."""
        if depth > _MAX_DEPTH:
            return None
        again = lambda e: self.at_most(e, scope, place, depth + 1)  # noqa: E731
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
            starred = (cst.StarredElement, cst.StarredDictElement)
            return None if any(isinstance(e, starred) for e in expr.elements) else len(expr.elements)
        if isinstance(expr, cst.Name):
            return self._name(expr.value, scope, place, depth)
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            total, clause = 1, expr.for_in
            while clause is not None:
                count = self.at_most(clause.iter, scope, place, depth + 1)
                if count is None:
                    return None
                total, clause = total * count, clause.inner_for_in
            return total
        if isinstance(expr, cst.Subscript):
            return self._slice(expr, again)
        if isinstance(expr, cst.Call):
            found = self._call(expr, again, lambda e: self._slices(e, scope, place, depth + 1))
            if found is not None:
                return found
        return self._sizes.numbers(expr, scope, place)

    def _call(self, call: cst.Call, again, slices) -> Optional[int]:
        name = dotted_text(call.func) or ""
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if any(arg.star for arg in call.args):
            return None
        if name in _RANGES and 1 <= len(positional) <= 2 and len(call.args) == len(positional):
            bounds = [self._integer(bound) for bound in positional]
            if None in bounds:
                return None
            return max(0, bounds[-1] - (bounds[0] if len(bounds) == 2 else 0))  # type: ignore[operator]
        if name in _KEEPS_COUNT and positional:
            return again(positional[0])
        if name == "zip" and positional:
            known = [count for count in (again(arg) for arg in positional) if count is not None]
            return min(known) if known else None
        if name == "random.sample" and "random" in self.model.imports.modules:
            count = argument(call, "k", 1)
            return self._integer(count.value) if count is not None else None
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _VIEWS and not call.args:
            return again(call.func.value)
        if name.endswith("Dataset.from_tensor_slices") and len(positional) == 1:
            return slices(positional[0])
        if isinstance(call.func, cst.Attribute):
            return self._pipeline(call, call.func.attr.value, again)
        return None

    def _pipeline(self, call: cst.Call, method: str, again) -> Optional[int]:
        """The elements a ``tf.data`` method yields, from the count of the dataset it is called on."""
        if method in _KEEPS_ELEMENTS:
            return again(call.func.value)  # type: ignore[attr-defined]
        if method not in _BATCHES | {"take", "repeat"}:
            return None
        keyword = "batch_size" if method in _BATCHES else "count"
        found = argument(call, keyword, 0)
        size = self._integer(found.value) if found is not None else None
        if size is None or size <= 0:
            return None  # `repeat()`: endless; a size the source does not fix
        inner = again(call.func.value)  # type: ignore[attr-defined]
        if inner is None:
            return size if method == "take" else None
        if method in _BATCHES:
            return -(-inner // size)
        return min(inner, size) if method == "take" else inner * size

    def _slices(self, tensors: cst.BaseExpression, scope: Optional[FunctionInfo], place: Place, depth: int) -> Optional[int]:
        """How many slices ``from_tensor_slices`` makes: the rows of its tensors (the fewest any component
        of a tuple, list or dict shows: all components have as many)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(tensors, (cst.Tuple, cst.List, cst.Dict)):
            known = [count for count in (self._slices(element.value, scope, place, depth + 1) for element in tensors.elements
                                         if not isinstance(element, (cst.StarredElement, cst.StarredDictElement)))
                     if count is not None]
            return min(known) if known else None
        if isinstance(tensors, cst.Call):
            shape = constructor_shape(tensors, self.model.call_name(tensors) or "")
            if isinstance(shape, (cst.Tuple, cst.List)) and shape.elements:
                return self._integer(shape.elements[0].value)  # `tf.random.normal(shape=(1000, 2))`: 1,000 rows
        if isinstance(tensors, cst.Name):
            bindings = self.model.reaching(tensors.value, scope, place) or []
            if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
                return self._slices(bindings[0].value, bindings[0].scope, bindings[0].place, depth + 1)
        return self.at_most(tensors, scope, place, depth + 1)  # rows are at most its numbers

    def _slice(self, expr: cst.Subscript, again) -> Optional[int]:
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Slice):
            return None
        piece = expr.slice[0].slice
        if piece.step is not None or piece.upper is None:
            return None
        upper = self._integer(piece.upper)
        lower = self._integer(piece.lower) if piece.lower is not None else 0
        whole = again(expr.value)
        if upper is None or lower is None:
            return whole
        return max(0, upper - lower) if whole is None else min(whole, max(0, upper - lower))

    def _name(self, name: str, scope: Optional[FunctionInfo], place: Place, depth: int) -> Optional[int]:
        bindings = self.model.reaching(name, scope, place)
        if not bindings or mutated(self.model, name) or _handed_on(self.model, name):
            return None
        counts: List[Optional[int]] = [
            self.at_most(b.value, b.scope, b.place, depth + 1)
            if b.kind == "assign" and b.value is not None and not _empty_literal(b.value) else None
            for b in bindings
        ]  # `images = []` then a loop over it: filled somewhere (`add = images.append`), not empty
        return None if None in counts else max(counts)  # type: ignore[type-var]


def _empty_literal(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.List, cst.Tuple, cst.Set, cst.Dict)) and not expr.elements


def mutated(model: ModuleModel, name: str) -> bool:
    """``name.append(...)`` (or another method in ``MUTATORS``) anywhere in the module: a collection
    grown or shrunk at run time."""
    for site in model.calls:
        func = site.node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == name \
                and func.attr.value in MUTATORS:
            return True
    return False


def _handed_on(model: ModuleModel, name: str) -> bool:
    """``name`` is passed to a function of this file (``load_into(images, folder)``, which may append to
    its parameter)."""
    return any(any(isinstance(arg.value, cst.Name) and arg.value.value == name for arg in site.node.args)
               and model.call_graph.callee(site.node) is not None  # type: ignore[attr-defined]
               for site in model.calls)
