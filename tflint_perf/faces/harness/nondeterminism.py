"""``verify``: why a pipeline gives different elements on two runs, and what can still be compared.

*Why*, read statically from the pipelines of the modules the target reaches (the pipeline and
effect analyses, in the project's session, so a map function defined in another module counts):

- random ops in a map (or interleave) with ``num_parallel_calls``: which element draws which
  numbers depends on thread timing, which no seed fixes;
- ``deterministic=False`` on a map or interleave, or in ``tf.data.Options``: elements come in the
  order they finish;
- a ``shuffle`` without a seed and random ops in a sequential map: fixed by ``--seed`` (said only
  when no seed was given).

*What*, read from the elements: each batch is fingerprinted as a whole and row by row (its
elements, when every tensor of the batch has the same leading dimension). Runs that differ only in
order have the same multiset of rows; runs whose values vary still have the same structure, shapes
and dtypes, batch by batch.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument, bool_literal
from tflint_perf.project.session import Session
from tflint_perf.text.positions import locate
from tflint_perf.text.source import LineIndex

# Position of the parameters read here, among each method's parameters.
_FUNCTION_OPS = {"map": 1, "interleave": 3, "flat_map": None, "filter": None}  # op -> num_parallel_calls position
_DETERMINISTIC_POSITION = {"map": 2, "interleave": 4}
_OPTIONS_OFF = re.compile(r"\.(?:experimental_)?deterministic\s*=\s*False\b")

IDENTICAL, SAME_MULTISET, SAME_STRUCTURE, DIFFER = "identical", "same-multiset", "same-structure", "differ"


@dataclass(frozen=True)
class Cause:
    text: str  # "random ops in a parallel map (data.py:12)"
    seed_fixes: bool  # whether --seed makes it deterministic
    leaves: str = SAME_STRUCTURE  # what two runs still share: SAME_MULTISET when only the order can change


_AGREEMENT = (IDENTICAL, SAME_MULTISET, SAME_STRUCTURE, DIFFER)  # from the most that two runs share to the least


def weaker(first: str, second: str) -> str:
    """The lesser of two agreements (an agreement seen by chance is no more than the code allows)."""
    return max(first, second, key=_AGREEMENT.index)


def allowed(causes: Iterable[Cause]) -> str:
    """The most two runs of the original can be expected to share, given the causes that apply."""
    return max((cause.leaves for cause in causes), key=_AGREEMENT.index, default=IDENTICAL)


def static_causes(session: Session, files: Iterable[Path], root: Path) -> List[Cause]:
    """What in the reached modules' pipelines can make their elements differ between runs."""
    causes: List[Cause] = []
    for path in files:
        model = session.model_for(path)
        if model is None:
            continue
        text = session.project.text_of(path)
        name = _relative(path, root)
        found: List[Tuple[cst.Call, str, bool, str]] = []
        for op, _ in model.pipelines.ops(*_FUNCTION_OPS, "shuffle"):
            if model.owns(op.call):  # an op of another module, reached through a helper, is reported there
                found.extend(_op_causes(model, op.name, op.call))
        if found:
            offsets = locate(model.module, text, [call for call, _, _, _ in found])
            index = LineIndex(text)
            for call, what, seed_fixes, leaves in found:
                span = offsets.get(id(call))
                where = f"{name}:{index.position(span[0])[0]}" if span else name
                causes.append(Cause(f"{what} ({where})", seed_fixes, leaves))
        for match in _OPTIONS_OFF.finditer(text):
            row = text.count("\n", 0, match.start()) + 1
            causes.append(Cause(f"tf.data.Options with deterministic = False ({name}:{row})", False, SAME_MULTISET))
    return list(dict.fromkeys(causes))


def _op_causes(model, name: str, call: cst.Call) -> List[Tuple[cst.Call, str, bool, str]]:
    if name == "shuffle":
        seeded = argument(call, "seed", 1) is not None
        return [] if seeded else [(call, "a shuffle without a seed", True, SAME_MULTISET)]
    found = []
    if name in _DETERMINISTIC_POSITION:
        flag = argument(call, "deterministic", _DETERMINISTIC_POSITION[name])
        if flag is not None and bool_literal(flag.value) is False:
            found.append((call, f"deterministic=False on a {name}: elements come in the order they finish", False,
                          SAME_MULTISET))
    function = argument(call, "map_func", 0) or argument(call, "predicate", 0)
    if function is None:
        return found
    effects = model.effects.of_expression(function.value, model.pipelines.scope_of(call))
    if effects.random:
        position = _FUNCTION_OPS[name]
        parallel = position is not None and argument(call, "num_parallel_calls", position) is not None
        if parallel:
            found.append((call, f"random ops in a parallel {name}: which element draws which numbers depends on "
                                "thread timing, which a seed does not fix", False, SAME_STRUCTURE))
        else:
            found.append((call, f"random ops in a {name}", True, SAME_STRUCTURE))
    return found


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


# -- the elements ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BatchPrint:
    """One batch: its structure, each tensor's dtype and shape, a digest of all of it, and one digest
    per element (row) when the batch can be split into rows."""

    signature: Tuple[str, Tuple[Tuple[str, Tuple[int, ...]], ...]]
    digest: str
    rows: Optional[Tuple[str, ...]]


def batch_print(tf, batch) -> BatchPrint:
    leaves = [leaf.numpy() for leaf in tf.nest.flatten(batch, expand_composites=True)]
    structure = repr(tf.nest.map_structure(lambda _: None, batch, expand_composites=True))
    signature = (structure, tuple((str(leaf.dtype), tuple(leaf.shape)) for leaf in leaves))
    digest = _digest(*leaves)
    lengths = {leaf.shape[0] if leaf.ndim else None for leaf in leaves}
    rows = None
    if len(lengths) == 1 and None not in lengths:
        rows = tuple(_digest(*(leaf[i] for leaf in leaves)) for i in range(lengths.pop()))
    return BatchPrint(signature, digest, rows)


def _digest(*arrays) -> str:
    hasher = hashlib.sha256()
    for array in arrays:
        if getattr(array, "dtype", None) is not None and array.dtype == object:  # strings: bytes objects
            hasher.update(b"\0".join(item if isinstance(item, bytes) else repr(item).encode()
                                     for item in array.ravel()))
        else:
            hasher.update(array.tobytes() if hasattr(array, "tobytes") else repr(array).encode())
        hasher.update(b"\1")
    return hasher.hexdigest()


def _rows(prints: List[BatchPrint]) -> Optional[Counter]:
    if any(p.rows is None for p in prints):
        return None
    return Counter(row for p in prints for row in p.rows)  # type: ignore[union-attr]


def agreement(old: List[BatchPrint], new: List[BatchPrint]) -> str:
    """How far two runs agree: IDENTICAL, SAME_MULTISET (the same elements in another order),
    SAME_STRUCTURE (the same structure, shapes and dtypes batch by batch) or DIFFER."""
    if [p.digest for p in old] == [p.digest for p in new]:
        return IDENTICAL
    rows = _rows(old)
    if rows is not None and rows == _rows(new):
        return SAME_MULTISET
    if [p.signature for p in old] == [p.signature for p in new]:
        return SAME_STRUCTURE
    return DIFFER


def first_difference(old: List[BatchPrint], new: List[BatchPrint]) -> str:
    if len(old) != len(new):
        return f"{len(old)} batches before, {len(new)} after"
    for index, (a, b) in enumerate(zip(old, new)):
        if a.signature != b.signature:
            return f"batch {index}: structure, dtype or shape differ"
        if a.digest != b.digest:
            return f"batch {index}: values differ"
    return "no difference"
