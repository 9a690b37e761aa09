"""Deprecated TensorFlow and Keras spellings: their replacements, and what each does on a given TensorFlow.

One table for TFP401 (tf.data) and TFP402 (functions and Keras), the opt-in upgrade rules. Each
entry names the old API by its spelled canonical name (``names.spelled_name``:
``tf.data.experimental.AUTOTUNE``), how it is used (``form``), the replacement, the first TensorFlow
that has the replacement (``since``), and what the old spelling does: from which release using it
logs a deprecation warning (``warns_from``: the release whose API decorated it with TensorFlow's
``deprecation.deprecated``) and from which one it is gone (``removed_in``: it breaks there).

Advice is keyed to the project's target TensorFlow (``target-version``, or the version inferred from
its dependency files), as ``effect`` decides: a spelling is reported only where the target is a
release on which it warns or breaks. An alias that works silently on every 2.x
(``tf.data.experimental.AUTOTUNE`` is a plain constant: nothing warns) is never reported; TensorFlow 1
targets (below 2.0) get no TensorFlow 2 advice; with no target known the spelling is reported where
it warns or breaks on some release, and the message says the target is unknown and from which
release each applies. A fix is offered only where the target is known and has the replacement
(``replacement_available``).

Forms:
- ``constant``: an attribute used as a value (``tf.data.experimental.AUTOTUNE``); the written
  spelling's ``old_tail`` becomes ``new_tail``.
- ``function``: a function called by name; the callee's ``old_tail`` becomes ``new_tail``.
- ``apply``: a transformation passed to ``Dataset.apply``; ``ds.apply(old(args))`` becomes
  ``ds.<new_tail>(args)`` (same arguments) or a rule-specific rewrite (``special``).
- ``keyword``: a keyword argument of a function (``tf.function(experimental_relax_shapes=...)``).
- ``method``: a Keras model method (``fit_generator``), on a receiver known to be a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.names import dotted_text

if TYPE_CHECKING:
    from tflint_perf.analysis.model import ModuleModel

Version = Tuple[int, int]


@dataclass(frozen=True)
class Deprecation:
    old: str  # spelled canonical name (constant, function, apply), `function:keyword`, or `.method`
    new: str  # the replacement, as a message shows it
    since: Version  # the first TensorFlow version that has the replacement
    rule: str
    form: str
    old_tail: str = ""  # the end of the written spelling the fix replaces ...
    new_tail: str = ""  # ... and what it becomes
    special: str = ""  # a rewrite the rule does itself (arguments change), or "report" for no fix
    # What the old spelling does: logs a deprecation warning from ``warns_from`` (``since`` when not
    # given; None: never, ``NEVER``), breaks from ``removed_in`` (None: not removed).
    warns_from: Optional[Version] = None
    removed_in: Optional[Version] = None
    compat_keeps: bool = False  # the removal is from TensorFlow 2's namespace: `tf.compat.v1` keeps it

    @property
    def warns(self) -> Optional[Version]:
        if self.warns_from == NEVER:
            return None
        return self.warns_from or self.since


NEVER: Version = (0, 0)  # ``warns_from`` of an alias that no release warns about
_D = Deprecation
TABLE: Tuple[Deprecation, ...] = (
    # TFP401: tf.data
    _D("tf.data.experimental.AUTOTUNE", "tf.data.AUTOTUNE", (2, 4), "TFP401", "constant",
       "experimental.AUTOTUNE", "AUTOTUNE", warns_from=NEVER),  # a constant: still exported in 2.21, no warning
    _D("tf.data.experimental.map_and_batch", "`Dataset.map(f, num_parallel_calls=...)` then `.batch(n, drop_remainder=...)`",
       (2, 0), "TFP401", "apply", special="map_and_batch"),
    _D("tf.data.experimental.parallel_interleave", "`Dataset.interleave(f, cycle_length, block_length, num_parallel_calls=..., deterministic=...)`",
       (2, 2), "TFP401", "apply", special="parallel_interleave"),
    _D("tf.data.experimental.shuffle_and_repeat", "`Dataset.shuffle(buffer_size, seed=...)` then `.repeat(count)`",
       (2, 0), "TFP401", "apply", special="shuffle_and_repeat"),
    _D("tf.data.experimental.unbatch", "`Dataset.unbatch()`", (2, 0), "TFP401", "apply", new_tail="unbatch"),
    _D("tf.data.experimental.enumerate_dataset", "`Dataset.enumerate()`", (2, 0), "TFP401", "apply", new_tail="enumerate"),
    _D("tf.data.experimental.ignore_errors", "`Dataset.ignore_errors()`", (2, 12), "TFP401", "apply", new_tail="ignore_errors"),
    _D("tf.data.experimental.scan", "`Dataset.scan()`", (2, 6), "TFP401", "apply", new_tail="scan"),
    _D("tf.data.experimental.group_by_window", "`Dataset.group_by_window()`", (2, 6), "TFP401", "apply", new_tail="group_by_window"),
    _D("tf.data.experimental.take_while", "`Dataset.take_while()`", (2, 7), "TFP401", "apply", new_tail="take_while"),
    _D("tf.data.experimental.unique", "`Dataset.unique()`", (2, 7), "TFP401", "apply", new_tail="unique"),
    _D("tf.data.experimental.bucket_by_sequence_length", "`Dataset.bucket_by_sequence_length()`", (2, 7), "TFP401", "apply",
       new_tail="bucket_by_sequence_length"),
    _D("tf.data.experimental.rejection_resample", "`Dataset.rejection_resample()`", (2, 7), "TFP401", "apply",
       new_tail="rejection_resample"),
    _D("tf.data.experimental.dense_to_ragged_batch", "`Dataset.ragged_batch()`", (2, 12), "TFP401", "apply", new_tail="ragged_batch"),
    _D("tf.data.experimental.dense_to_sparse_batch", "`Dataset.sparse_batch()`", (2, 12), "TFP401", "apply", new_tail="sparse_batch"),
    _D("tf.data.experimental.sample_from_datasets", "tf.data.Dataset.sample_from_datasets", (2, 7), "TFP401", "function",
       "experimental.sample_from_datasets", "Dataset.sample_from_datasets"),
    _D("tf.data.experimental.choose_from_datasets", "tf.data.Dataset.choose_from_datasets", (2, 7), "TFP401", "function",
       "experimental.choose_from_datasets", "Dataset.choose_from_datasets"),
    _D("tf.data.experimental.load", "tf.data.Dataset.load", (2, 10), "TFP401", "function",
       "experimental.load", "Dataset.load"),
    _D("tf.data.experimental.Counter", "tf.data.Dataset.counter", (2, 12), "TFP401", "function",
       "experimental.Counter", "Dataset.counter"),
    _D("tf.data.experimental.get_single_element", "`Dataset.get_single_element()`", (2, 7), "TFP401", "function", special="report"),
    _D("tf.data.experimental.save", "`Dataset.save()`", (2, 10), "TFP401", "function", special="report"),
    # TFP402: functions and Keras
    _D("tf.py_func", "tf.numpy_function", (1, 14), "TFP402", "function", "py_func", "numpy_function", special="py_func",
       # Gone from TensorFlow 2's namespace; `tf.compat.v1.py_func` warns there. TensorFlow 1.14/1.15's
       # warning is advice about TensorFlow 2, which TensorFlow 1 code gets none of.
       warns_from=(2, 0), removed_in=(2, 0), compat_keeps=True),
    _D("tf.function:experimental_relax_shapes", "reduce_retracing", (2, 9), "TFP402", "keyword",
       "experimental_relax_shapes", "reduce_retracing"),
    _D("tf.function:experimental_compile", "jit_compile", (2, 5), "TFP402", "keyword", "experimental_compile", "jit_compile"),
    _D("keras.mixed_precision.experimental.set_policy", "keras.mixed_precision.set_global_policy", (2, 4), "TFP402", "function",
       "experimental.set_policy", "set_global_policy", removed_in=(2, 9)),
    _D("keras.mixed_precision.experimental.global_policy", "keras.mixed_precision.global_policy", (2, 4), "TFP402", "function",
       "experimental.global_policy", "global_policy", removed_in=(2, 9)),
    _D("keras.mixed_precision.experimental.Policy", "keras.mixed_precision.Policy", (2, 4), "TFP402", "function",
       "experimental.Policy", "Policy", special="policy", removed_in=(2, 9)),
    _D("keras.mixed_precision.experimental.LossScaleOptimizer", "keras.mixed_precision.LossScaleOptimizer", (2, 4), "TFP402",
       "function", "experimental.LossScaleOptimizer", "LossScaleOptimizer", special="loss_scale_optimizer",
       removed_in=(2, 9)),  # the experimental mixed-precision module: deprecated in 2.4, removed in 2.9
    _D("tf.train.experimental.enable_mixed_precision_graph_rewrite", "a `mixed_float16` Keras policy and `LossScaleOptimizer`",
       (2, 4), "TFP402", "function", special="report", removed_in=(2, 6), compat_keeps=True),  # 2.6 release notes
    # Keras 3, the tf.keras of TensorFlow 2.16 on, has no `*_generator` methods.
    _D(".fit_generator", "fit", (2, 1), "TFP402", "method", "fit_generator", "fit", removed_in=(2, 16)),
    _D(".evaluate_generator", "evaluate", (2, 1), "TFP402", "method", "evaluate_generator", "evaluate", removed_in=(2, 16)),
    _D(".predict_generator", "predict", (2, 1), "TFP402", "method", "predict_generator", "predict", removed_in=(2, 16)),
)

BY_OLD: Dict[str, Deprecation] = {entry.old: entry for entry in TABLE}


def lookup(spelled: Optional[str], rule: str) -> Optional[Deprecation]:
    entry = BY_OLD.get(spelled or "")
    return entry if entry is not None and entry.rule == rule else None


# Top-level TensorFlow 1 APIs that TensorFlow 2 removed (kept only under `tf.compat.v1`): a module that
# calls them through a plain `import tensorflow` is written for TensorFlow 1.
_TF1_ONLY = ("contrib.", "Session", "InteractiveSession", "placeholder", "logging.", "app.", "gfile.",
             "enable_eager_execution", "train.Saver", "global_variables_initializer", "variable_scope",
             "get_variable", "layers.", "losses.sparse_softmax_cross_entropy", "flags.")


def written_for_tf1(model: "ModuleModel", filename: Optional[str] = None) -> bool:
    """The module is TensorFlow 1 code: it calls TensorFlow 1 APIs through ``import tensorflow``, or
    uses TensorFlow as ``import tensorflow.compat.v1 as tf`` or ``compat.v2`` (code kept running on
    both 1.15 and 2.x: a replacement that 1.15 lacks is no improvement for it). Its project may run a TensorFlow 1 release, which has none
    of the TensorFlow 2 replacements."""
    if any(qualified in ("tensorflow.compat.v1", "tensorflow.compat.v2") for qualified in model.imports._bindings.values()):  # noqa: SLF001
        return True
    return runs_only_on_tf1(model, filename)


def runs_only_on_tf1(model: "ModuleModel", filename: Optional[str] = None) -> bool:
    """The code cannot run on TensorFlow 2, so its target is a TensorFlow 1 release even when none is
    declared: the module itself (``module_runs_only_on_tf1``), a first-party module it imports (the
    project is TensorFlow 1 code: an evaluation helper of the Object Detection API whose neighbours read
    files with ``tf.gfile``), every first-party module that imports it (the programs it is part of
    run only on TensorFlow 1: neural-structured-learning's A2N input pipeline, whose one importer, the
    training script, runs ``tf.Session`` and ``slim``), or a notebook (a whole program: nothing else
    can turn eager execution off for it) that builds graphs through ``compat.v1`` with TensorFlow 2's
    eager execution on, which only TensorFlow 1 runs (``tf.placeholder`` raises under eager execution)."""
    if model.runs_only_on_tf1:
        return True
    if filename is not None and filename.endswith(".ipynb") and _graph_only_under_eager(model):
        return True
    session = model.session
    if session is None:
        return False
    if any(imported.runs_only_on_tf1 for imported in session.imported(model)):
        return True
    importers = session.all_importers(model)  # None: too many to read, so not known to be TF1 only
    return bool(importers) and all(importer.runs_only_on_tf1 for importer in importers)


def module_runs_only_on_tf1(model: "ModuleModel") -> bool:
    """The module uses TensorFlow 1 APIs that TensorFlow 2 removed through a plain ``import
    tensorflow`` (``tf.Session``, ``tf.contrib``, ``tf.placeholder``), called or used as a value (a
    call's argument: ``dataset.prefetch(tf.contrib.data.AUTOTUNE)``, ``regularizer=tf.contrib.layers.l2_regularizer``;
    a module-level value), or imports ``tensorflow.contrib`` (``slim``): it cannot run on TensorFlow 2.
    Answered once per module (``AnalysedModule.runs_only_on_tf1``)."""
    if any(qualified is not None and (qualified + ".").startswith("tensorflow.contrib.")
           for qualified in model.imports._bindings.values()):  # noqa: SLF001
        return True
    used = [site.node.func for site in model.calls] + list(model.module_values.values())
    used += [arg.value for site in model.calls for arg in site.node.args if isinstance(arg.value, cst.Attribute)]
    for node in used:
        text = dotted_text(node)
        if text is None or "." not in text:
            continue
        root, _, rest = text.partition(".")
        if model.imports.qualified(root) == "tensorflow" and (rest + ".").startswith(_TF1_ONLY):
            return True
    return False


# Graph-building calls that raise under eager execution, and the calls that turn it off.
_GRAPH_ONLY = ("placeholder", "placeholder_with_default")
_EAGER_OFF = ("disable_eager_execution", "disable_v2_behavior", "Graph")


def _graph_only_under_eager(model: "ModuleModel") -> bool:
    """``compat.v1`` graph building (``tf.placeholder``) with nothing in the module turning eager
    execution off (``disable_eager_execution``, ``disable_v2_behavior``, a ``tf.Graph()`` of its own)."""
    found = False
    for site in model.calls:
        qualified = model.imports.qualified_chain(site.node.func)
        if qualified is None or not qualified.startswith("tensorflow."):
            continue
        tail = qualified.rpartition(".")[2]
        if tail in _EAGER_OFF:
            return False
        found = found or (tail in _GRAPH_ONLY and ".compat.v1." in qualified)
    return found


def through_compat_v1(model: "ModuleModel", node) -> bool:
    """The spelling reaches TensorFlow through ``compat.v1`` (``tf.compat.v1.py_func``, or ``tf.py_func``
    under ``import tensorflow.compat.v1 as tf``), which keeps APIs TensorFlow 2's namespace removed."""
    qualified = model.imports.qualified_chain(node)
    return qualified is not None and ".compat.v1." in qualified + "."


def _release(version: Version) -> str:
    return ".".join(map(str, version))


def effect(target: Optional[Version], entry: Deprecation, tf1: bool, tf1_only: bool, compat: bool = False) -> Optional[str]:
    """What the old spelling does on the project's TensorFlow, as a message clause, or None when
    there is nothing to report: it works silently on the target (an alias that never warns, a
    target that predates the warning), or the target is TensorFlow 1 (below 2.0, or code that runs
    only there: ``tf1_only``), or, with no target known, a module kept running on 1.15 (``tf1``) and a
    replacement that 1.15 lacks. ``compat``: spelled through ``compat.v1``, which keeps removed APIs."""
    removed = None if (compat and entry.compat_keeps) else entry.removed_in
    warns = entry.warns
    if target is not None:
        if target < (2, 0):
            return None
        if removed is not None and target >= removed:
            return f"removed in TensorFlow {_release(removed)}: it breaks on {_release(target)}, the target"
        if warns is not None and target >= warns:
            return f"TensorFlow {_release(target)}, the target, logs a deprecation warning for it"
        return None
    if tf1_only or (tf1 and entry.since >= (2, 0)):
        return None
    if removed is not None and warns is not None and warns >= removed:
        warns = None  # gone where it would warn: `tf.py_func` outside compat.v1
    parts = ([f"warns from TensorFlow {_release(warns)}"] if warns is not None else []) + (
        [f"is removed in {'TensorFlow ' if warns is None else ''}{_release(removed)}"] if removed is not None else [])
    if not parts:
        return None
    return f"the target TensorFlow is unknown: it {' and '.join(parts)}"


def replacement_available(target_version: Optional[Version], entry: Deprecation) -> bool:
    """Whether every TensorFlow the project may run has the replacement."""
    return target_version is not None and target_version >= entry.since


def version_note(target_version: Optional[Version], entry: Deprecation) -> str:
    """What a message adds when the fix is held back for the version."""
    since = _release(entry.since)
    if target_version is None:
        return f" (the replacement exists from TensorFlow {since}; set `target-version` for a fix)"
    return ""


def message(old: str, effect_clause: str, replacement: str, target_version: Optional[Version], entry: Deprecation) -> str:
    """A finding's message: the old spelling, what it does on the target, the replacement."""
    return f"{old} is deprecated ({effect_clause}); use {replacement}{version_note(target_version, entry)}"


def respell(written: str, entry: Deprecation) -> Optional[str]:
    """The written dotted spelling with the entry's ``old_tail`` replaced by its ``new_tail``, or
    None when the spelling does not end with it (``from ... import experimental as mp`` hides it)."""
    if not entry.old_tail:
        return None
    if written == entry.old_tail:
        return None
    if not written.endswith("." + entry.old_tail):
        return None
    return written[: -len(entry.old_tail)] + entry.new_tail
