"""Cross-validation with scikit-learn's splitters: how many folds a loop over ``cv.split(x)`` runs, and
which names hold the row indices of a whole fold.

``for train, test in kf.split(x)`` with ``kf = KFold(5)`` runs five times; with
``StratifiedShuffleSplit(n_splits=SPLITS)`` as many times as ``SPLITS`` holds where the splitter is made;
with ``RepeatedKFold(n_splits=5, n_repeats=10)`` fifty times. And ``x[test]`` is a whole fold of ``x`` (a
fifth of its rows, or the 10% a shuffle split holds out), not one sample. ``StepLoops.count`` reads the
first (TFP205 leaves k-fold validation of a few small models alone); ``Rows`` reads the second (TFP203
leaves one ``predict`` per fold on the fold's rows alone).

A splitter whose folds may be a row or a few is not one of whole folds: ``LeaveOneOut``, ``LeavePOut``
(not in the table, so not a splitter here), and a shuffle or time-series split given a number of rows
(``ShuffleSplit(test_size=1)``) rather than a fraction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument, int_literal, keyword_value
from tflint_perf.analysis.model import Binding, CallSite, FunctionInfo, ModuleModel, Place

_MODULE = "sklearn.model_selection."
# Each splitter whose folds are fractions of the rows, with its default `n_splits` (scikit-learn >= 0.22)
# and, for the repeated ones, its default `n_repeats`.
_SPLITTERS: Dict[str, Tuple[int, int]] = {
    "KFold": (5, 1), "StratifiedKFold": (5, 1), "GroupKFold": (5, 1), "StratifiedGroupKFold": (5, 1),
    "TimeSeriesSplit": (5, 1), "ShuffleSplit": (10, 1), "StratifiedShuffleSplit": (10, 1),
    "GroupShuffleSplit": (5, 1), "RepeatedKFold": (5, 10), "RepeatedStratifiedKFold": (5, 10),
}
# The arguments that can give a fold a number of rows instead of a fraction.
_SIZES = ("test_size", "train_size")
_ENUMERATE = "enumerate"  # `for k, (train, test) in enumerate(cv.split(x))`: the split is element 1


@dataclass(frozen=True)
class Splitter:
    kind: str  # the class name, `KFold`
    splits: Optional[int]  # how many (train, test) pairs `split` yields, when the source shows it
    whole_folds: bool  # each part is a fraction of the rows, not a count of rows given in the source


class CrossValidation:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model

    def split_count(self, iterated: Optional[cst.BaseExpression]) -> Optional[int]:
        """How many times ``for ... in cv.split(x)`` runs, when ``cv`` is a splitter of known ``n_splits``."""
        splitter = self.splitter_of_split(iterated)
        return splitter.splits if splitter is not None else None

    def holds_fold(self, name: str, scope: Optional[FunctionInfo], place: Place,
                   lambdas: Tuple[cst.Lambda, ...] = ()) -> bool:
        """Every binding of ``name`` that reaches ``place`` in ``scope`` is the train or test indices of
        a splitter's fold: ``x[name]`` is then a whole fold of ``x``."""
        bindings = self.model.reaching(name, scope, place, lambdas)
        return bool(bindings) and all(self._fold_indices(binding) for binding in bindings)

    def _fold_indices(self, binding: Binding) -> bool:
        """``train`` or ``test`` in ``for train, test in cv.split(x)`` (or ``for k, (train, test) in
        enumerate(cv.split(x))``), ``cv`` a splitter of whole folds."""
        if binding.kind != "for" or binding.value is None:
            return False
        iterated, path = binding.value, binding.path
        if isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Name) and iterated.func.value == _ENUMERATE:
            if not iterated.args or path[:1] != (1,):
                return False
            iterated, path = iterated.args[0].value, path[1:]
        if len(path) != 1 or path[0] not in (0, 1):
            return False
        splitter = self.splitter_of_split(iterated)
        return splitter is not None and splitter.whole_folds

    def splitter_of_split(self, iterated: Optional[cst.BaseExpression]) -> Optional[Splitter]:
        """The splitter whose ``split`` call ``iterated`` is: made right there (``KFold(5).split(x)``) or
        bound to the receiver by every assignment that reaches the call."""
        if not isinstance(iterated, cst.Call) or not isinstance(iterated.func, cst.Attribute) \
                or iterated.func.attr.value != "split":
            return None
        site = self.model.site_of(iterated)
        receiver = iterated.func.value
        if isinstance(receiver, cst.Call):
            return self._made(receiver, site)
        if not isinstance(receiver, cst.Name) or site is None:
            return None
        bindings = self.model.reaching(receiver.value, site.function, site.place, site.lambdas) or []
        found = {self._made(b.value, self.model.site_of(b.value)) if b.kind == "assign" and isinstance(b.value, cst.Call)
                 else None for b in bindings}
        return found.pop() if len(found) == 1 else None

    def _made(self, call: cst.Call, site: Optional[CallSite]) -> Optional[Splitter]:
        """The splitter a constructor call makes, with its count of splits as written."""
        name = self.model.call_name(call) or ""
        kind = name[len(_MODULE):] if name.startswith(_MODULE) else ""
        if kind not in _SPLITTERS:
            return None
        default_splits, default_repeats = _SPLITTERS[kind]
        repeated = default_repeats > 1  # the repeated splitters take their arguments by keyword only
        splits = self._count(argument(call, "n_splits", None if repeated else 0), default_splits, site)
        repeats = self._count(argument(call, "n_repeats", None), default_repeats, site)
        total = splits * repeats if splits is not None and repeats is not None else None
        whole = not any(self._rows_given(keyword_value(call, size), site) for size in _SIZES)
        return Splitter(kind, total, whole)

    def _count(self, arg: Optional[cst.Arg], default: int, site: Optional[CallSite]) -> Optional[int]:
        return default if arg is None else self._integer(arg.value, site)

    def _rows_given(self, size: Optional[cst.BaseExpression], site: Optional[CallSite]) -> bool:
        """``test_size=1`` (a count of rows, or a value the source does not show) rather than ``0.1``
        or ``None``."""
        if size is None or isinstance(size, cst.Float) or (isinstance(size, cst.Name) and size.value == "None"):
            return False
        if isinstance(size, cst.Name) and site is not None:
            bindings = self.model.reaching(size.value, site.function, site.place, site.lambdas) or []
            return not bindings or any(b.kind != "assign" or not isinstance(b.value, cst.Float) for b in bindings)
        return True

    def _integer(self, expr: cst.BaseExpression, site: Optional[CallSite]) -> Optional[int]:
        """A literal, or a name every assignment reaching the constructor binds to the same literal
        (``SPLITS = 50`` in the notebook cell that makes the splitter, ``SPLITS = 100`` in a later one)."""
        value = int_literal(expr)
        if value is not None or not isinstance(expr, cst.Name) or site is None:
            return value
        bindings = self.model.reaching(expr.value, site.function, site.place, site.lambdas) or []
        values = {int_literal(b.value) if b.kind == "assign" and b.value is not None else None for b in bindings}
        return values.pop() if len(values) == 1 else None
