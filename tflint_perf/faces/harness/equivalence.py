"""Equivalence checks: does the "after" program compute what the "before" one did?

Each check compares two worker outcomes (see ``worker.py``): for pipelines ``epochs``, a list per
epoch of the batches ``train_step`` received; for programs ``result``; and either one's
``observations`` and ``probe``. A safe fix must give the same elements in the same order; an
unsafe one must give exactly its intended difference and nothing else. NumPy is imported
lazily: it arrives with TensorFlow, in the ``bench`` extra.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional


@dataclass(frozen=True)
class Verdict:
    passed: bool
    summary: str  # one line, for the table and the JSON record


def check(name: str, before: Dict[str, Any], after: Dict[str, Any]) -> Verdict:
    return CHECKS[name](before, after)


# -- pipelines -------------------------------------------------------------------------------------
def identical(before, after) -> Verdict:
    return _agree(_batches(before), _batches(after), True, lambda: f"same {_count(before)} elements, same order")


def identical_with_overlapping_side_effects(before, after) -> Verdict:
    """A stateful map made parallel: the elements must not change; its side effects now overlap."""
    was = before.get("observations", {}).get("most_concurrent_decodes")
    now = after.get("observations", {}).get("most_concurrent_decodes")
    return _extended(
        identical(before, after),
        lambda: None if was == 1 else f"the sequential map ran {was} calls at once (expected 1)",
        lambda: None if now and now >= 2 else "the parallel map never ran two calls at once: the fix did not take effect",
        summary=lambda base: f"{base}; side effects overlapped ({now} calls at once, before: 1)",
    )


def reshuffled_each_epoch(before, after) -> Verdict:
    """cache moved before shuffle: same records every epoch, in a new order each epoch (before: frozen)."""
    before_epochs = [_element_keys(epoch) for epoch in before["epochs"]]
    after_epochs = [_element_keys(epoch) for epoch in after["epochs"]]
    if len(before_epochs) < 2 or len(before_epochs) != len(after_epochs):
        return Verdict(False, f"expected the same number of epochs (>= 2), got {len(before_epochs)} and {len(after_epochs)}")
    reference = Counter(before_epochs[0])
    for index, (old, new) in enumerate(zip(before_epochs, after_epochs), start=1):
        if Counter(old) != reference or Counter(new) != reference:
            return Verdict(False, f"epoch {index} does not hold the same records as epoch 1 before the fix")
    if any(epoch != before_epochs[0] for epoch in before_epochs[1:]):
        return Verdict(False, "before the fix the epochs already differ in order: the scenario no longer shows the bug")
    repeats = sum(1 for a, b in zip(after_epochs, after_epochs[1:]) if a == b)
    if repeats:
        return Verdict(False, f"after the fix {repeats} epoch(s) repeat the previous epoch's order")
    epochs = len(after_epochs)
    return Verdict(True, f"same {len(before_epochs[0])} records each epoch; order frozen before, "
                         f"{epochs} different orders after")


# -- values ----------------------------------------------------------------------------------------
def allclose(before, after) -> Verdict:
    return _agree(_values(before), _values(after), False, lambda: f"values allclose ({_describe(before)})")


def allclose_finite_gradients(before, after) -> Verdict:
    gradient = after.get("probe", {}).get("gradient")
    return _extended(
        allclose(before, after),
        lambda: None if _all_finite(gradient) else f"gradients on the probe input are not finite: {gradient}",
        summary=lambda base: f"{base}; gradients finite on the probe input",
    )


def allclose_fewer_traces(before, after) -> Verdict:
    """Python arguments made tensors: the same values, and the function traced fewer times (probe["traces"])."""
    verdict = allclose(before, after)
    if not verdict.passed:
        return verdict
    old, new = before.get("probe", {}).get("traces"), after.get("probe", {}).get("traces")
    if old is None or new is None or int(new) >= int(old):
        return Verdict(False, f"traces did not drop: {old} before, {new} after")
    return Verdict(True, f"{verdict.summary}; traces {int(old)} before, {int(new)} after")


def architecture_change(before, after) -> Verdict:
    """Layer widths rounded up: same outputs' shape, finite values, a different parameter count (intended)."""
    old, new = before.get("probe", {}), after.get("probe", {})
    return _first_failure(
        lambda: _output_shape_change(old, new),
        lambda: None if _finite(after) else "the fixed model produces non-finite outputs or loss",
        lambda: None if int(old.get("parameters")) != int(new.get("parameters"))
        else "the parameter count did not change: the fix did not take effect",
    ) or Verdict(True, f"same output shape, finite; parameters {int(old['parameters']):,} -> "
                       f"{int(new['parameters']):,} (intended)")


def batch_size_change(before, after) -> Verdict:
    """Batch size rounded up: the same model and outputs' shape, a finite loss."""
    old, new = before.get("probe", {}), after.get("probe", {})
    return _first_failure(
        lambda: _output_shape_change(old, new),
        lambda: None if int(old.get("parameters")) == int(new.get("parameters"))
        else "the model changed: only the batch size should",
        lambda: None if _finite(after) else "training with the new batch size gives a non-finite loss",
    ) or Verdict(True, "same model and output shape, finite loss; batch size changed (intended)")


CHECKS: Dict[str, Callable[[Dict[str, Any], Dict[str, Any]], Verdict]] = {
    "identical": identical,
    "identical_with_overlapping_side_effects": identical_with_overlapping_side_effects,
    "reshuffled_each_epoch": reshuffled_each_epoch,
    "allclose": allclose,
    "allclose_finite_gradients": allclose_finite_gradients,
    "allclose_fewer_traces": allclose_fewer_traces,
    "architecture_change": architecture_change,
    "batch_size_change": batch_size_change,
}


# -- helpers ---------------------------------------------------------------------------------------
def _agree(old: List[Any], new: List[Any], exact: bool, summary: Callable[[], str]) -> Verdict:
    """The shape every value check shares: the first difference fails it, else ``summary()`` passes it."""
    difference = _first_difference(old, new, exact)
    return Verdict(False, difference) if difference else Verdict(True, summary())


def _first_failure(*checks: Callable[[], Optional[str]]) -> Optional[Verdict]:
    """The shape the checks share: each returns what is wrong, or None; the first wrong fails the check."""
    for check in checks:
        failure = check()
        if failure:
            return Verdict(False, failure)
    return None


def _extended(verdict: Verdict, *checks: Callable[[], Optional[str]], summary: Callable[[str], str]) -> Verdict:
    """A base check (``identical``, ``allclose``) with more to ask when it passes; ``summary`` turns
    the base summary into the extended one."""
    if not verdict.passed:
        return verdict
    return _first_failure(*checks) or Verdict(True, summary(verdict.summary))


def _output_shape_change(old, new) -> Optional[str]:
    import numpy as np

    if np.array_equal(old.get("output_shape"), new.get("output_shape")):
        return None
    return f"output shape changed: {old.get('output_shape')} -> {new.get('output_shape')}"


def _finite(outcome) -> bool:
    """The probe's outputs and the training loss are finite."""
    return bool(outcome.get("probe", {}).get("finite")) and _all_finite(_values(outcome)[0])


def _all_finite(values) -> bool:
    import numpy as np

    return values is not None and bool(np.all(np.isfinite(values)))


def leaves(value: Any) -> List[Any]:
    """The arrays of a (nested tuple / list / dict) structure, in a fixed order."""
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=str) for leaf in leaves(value[key])]
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


def _batches(outcome) -> List[Any]:
    return [batch for epoch in outcome["epochs"] for batch in epoch]


def _values(outcome) -> List[Any]:
    return _batches(outcome) if "epochs" in outcome else [outcome["result"]]


def _count(outcome) -> int:
    return sum(len(_element_keys(epoch)) for epoch in outcome["epochs"])


def _describe(outcome) -> str:
    if "epochs" in outcome:
        return f"{_count(outcome)} elements, same order"
    import numpy as np

    return f"{sum(np.size(leaf) for leaf in leaves(outcome['result']))} values"


def _element_keys(batches) -> List[tuple]:
    """One hashable key per element (a row of every array in a batch)."""
    import numpy as np

    keys = []
    for batch in batches:
        arrays = [np.asarray(leaf) for leaf in leaves(batch)]
        rows = len(arrays[0]) if arrays and arrays[0].ndim else 1
        for row in range(rows):
            keys.append(tuple((a[row] if a.ndim else a).tobytes() for a in arrays))
    return keys


def _first_difference(old: List[Any], new: List[Any], exact: bool) -> Optional[str]:
    """Where two lists of nested structures of arrays first differ, or None when they agree."""
    import numpy as np

    if len(old) != len(new):
        return f"{len(old)} batches before, {len(new)} after"
    for index, (a, b) in enumerate(zip(old, new)):
        left, right = leaves(a), leaves(b)
        if len(left) != len(right):
            return f"batch {index}: the element structure differs"
        for x, y in zip(left, right):
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape:
                return f"batch {index}: shape {x.shape} before, {y.shape} after"
            if exact:
                if x.dtype != y.dtype:
                    return f"batch {index}: dtype {x.dtype} before, {y.dtype} after"
                if not np.array_equal(x, y):
                    return f"batch {index}: values differ"
            elif not np.allclose(x, y, rtol=1e-4, atol=1e-5):
                return f"batch {index}: values differ by up to {float(np.max(np.abs(x - y))):.3g}"
    return None
