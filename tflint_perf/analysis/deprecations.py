"""Deprecated TensorFlow and Keras spellings, their replacements, and the version that introduced each.

One table for TFP401 (tf.data) and TFP402 (functions and Keras). Each entry names the old API by its
spelled canonical name (``names.spelled_name``: ``tf.data.experimental.AUTOTUNE``), how it is used
(``form``), the replacement, and the first TensorFlow version that has the replacement. A fix is
offered only where that version is certain to be there (``replacement_available``): the
``target-version`` setting or the version inferred from the project's dependency files is at least
``since``. With no version known, no fix is offered, because the project could run a TensorFlow that
lacks the replacement, and the message says from which version it exists. Nothing is reported where
the project runs a TensorFlow older than the replacement (``applies``): there the old spelling is
the only one.

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


_D = Deprecation
TABLE: Tuple[Deprecation, ...] = (
    # TFP401: tf.data
    _D("tf.data.experimental.AUTOTUNE", "tf.data.AUTOTUNE", (2, 4), "TFP401", "constant",
       "experimental.AUTOTUNE", "AUTOTUNE"),
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
    _D("tf.py_func", "tf.numpy_function", (1, 14), "TFP402", "function", "py_func", "numpy_function", special="py_func"),
    _D("tf.function:experimental_relax_shapes", "reduce_retracing", (2, 9), "TFP402", "keyword",
       "experimental_relax_shapes", "reduce_retracing"),
    _D("tf.function:experimental_compile", "jit_compile", (2, 5), "TFP402", "keyword", "experimental_compile", "jit_compile"),
    _D("keras.mixed_precision.experimental.set_policy", "keras.mixed_precision.set_global_policy", (2, 4), "TFP402", "function",
       "experimental.set_policy", "set_global_policy"),
    _D("keras.mixed_precision.experimental.global_policy", "keras.mixed_precision.global_policy", (2, 4), "TFP402", "function",
       "experimental.global_policy", "global_policy"),
    _D("keras.mixed_precision.experimental.Policy", "keras.mixed_precision.Policy", (2, 4), "TFP402", "function",
       "experimental.Policy", "Policy", special="policy"),
    _D("keras.mixed_precision.experimental.LossScaleOptimizer", "keras.mixed_precision.LossScaleOptimizer", (2, 4), "TFP402",
       "function", "experimental.LossScaleOptimizer", "LossScaleOptimizer", special="loss_scale_optimizer"),
    _D("tf.train.experimental.enable_mixed_precision_graph_rewrite", "a `mixed_float16` Keras policy and `LossScaleOptimizer`",
       (2, 4), "TFP402", "function", special="report"),
    _D(".fit_generator", "fit", (2, 1), "TFP402", "method", "fit_generator", "fit"),
    _D(".evaluate_generator", "evaluate", (2, 1), "TFP402", "method", "evaluate_generator", "evaluate"),
    _D(".predict_generator", "predict", (2, 1), "TFP402", "method", "predict_generator", "predict"),
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


def written_for_tf1(model: "ModuleModel") -> bool:
    """The module is TensorFlow 1 code: it calls TensorFlow 1 APIs through ``import tensorflow``, or
    uses TensorFlow as ``import tensorflow.compat.v1 as tf`` or ``compat.v2`` (code kept running on
    both 1.15 and 2.x: a replacement that 1.15 lacks is no improvement for it). Its project may run a TensorFlow 1 release, which has none
    of the TensorFlow 2 replacements."""
    if any(qualified in ("tensorflow.compat.v1", "tensorflow.compat.v2") for qualified in model.imports._bindings.values()):  # noqa: SLF001
        return True
    for site in model.calls:
        text = dotted_text(site.node.func)
        if text is None or "." not in text:
            continue
        root, _, rest = text.partition(".")
        if model.imports.qualified(root) == "tensorflow" and rest.startswith(_TF1_ONLY):
            return True
    return False


def applies(target_version: Optional[Version], entry: Deprecation, tf1: bool) -> bool:
    """Whether the old spelling is deprecated for this project: not when the project runs a TensorFlow
    older than the replacement (``target-version`` below ``since``, or TensorFlow 1 code and a
    replacement from 2.0 on), where the old spelling is the only one."""
    if target_version is not None:
        return target_version >= entry.since
    return not (tf1 and entry.since >= (2, 0))


def replacement_available(target_version: Optional[Version], entry: Deprecation) -> bool:
    """Whether every TensorFlow the project may run has the replacement."""
    return target_version is not None and target_version >= entry.since


def version_note(target_version: Optional[Version], entry: Deprecation) -> str:
    """What a message adds when the fix is held back for the version."""
    since = ".".join(map(str, entry.since))
    if target_version is None:
        return f" (the replacement exists from TensorFlow {since}; set `target-version` for a fix)"
    return ""


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
