"""TFP302 unaligned-batch-size: a training batch size literal that is not a multiple of 8."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from tflint_perf.analysis.arguments import argument, bool_literal, has_star_args, keyword_value
from tflint_perf.text.diagnostics import Finding
from tflint_perf.rules.alignment import ALIGNMENT_OPTIONS, misaligned
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid

_TF = "import tensorflow as tf\n"
_MIXED = _TF + "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"


class UnalignedBatchSize(Rule):
    code = "TFP302"
    name = "unaligned-batch-size"
    summary = "Training batch size under mixed precision is not a multiple of 8, so older tensor-core libraries run dense layers less efficiently (off by default)"
    fix_availability = "always"
    options = ALIGNMENT_OPTIONS
    # Measured on current GPUs and libraries, an unaligned batch costs nothing (see "Why is this bad?"):
    # opt-in for hardware where it still does (Volta, cuBLAS before 11).
    default_enabled = False

    what_it_does = """
Checks training batch sizes given as integer literals that are not a multiple of the alignment:
8 under a `mixed_float16` / `mixed_bfloat16` policy; nothing in float32 unless `alignment` is set
(as TFP301), nor in modules that use a TPU or TensorFlow Decision Forests; the message names what
it assumed. Off by default: select it (`extend-select = ["TFP302"]`) for GPUs and libraries where
alignment still decides whether tensor cores run (below). The
sizes: `model.fit(..., batch_size=N)`, and `Dataset.batch(N)` / `padded_batch(N)` on a pipeline that is consumed for training (`model.fit`'s data, a training loop, an iterator).
`N` is a literal, or followed to where it is set: a module constant (`BATCH_SIZE = 100`), a
parameter's default, the one value every same-file caller passes for a helper's `batch_size`
parameter (`make_dataset(files, BATCH_SIZE)`), a flag's default. `drop_remainder` does not change
the finding: every batch but the last has `N` rows either way.

`model.fit` is reported only in a file that imports TensorFlow or Keras, since any library may
have a `fit` with a `batch_size`. Not reported: `evaluate` / `predict` batch sizes and pipelines consumed only for validation,
evaluation, prediction or inspection (`for x in ds.take(3)`); batch sizes below `min-width`
(64) or passed as variables; test files (`test_*.py`, `*_test.py`, `tests/`).
"""
    why_bad = """
This matters on NVIDIA GPUs with tensor cores (Volta and later) when the math runs in 16-bit
(`mixed_float16`, `mixed_bfloat16`) or TF32 (the default for float32 on Ampere and later). The
batch size is one of the three dimensions of every dense and recurrent layer's matrix multiplies
(forward, activation gradient and weight gradient), and tensor cores work on tiles that are
multiples of 8 elements for 16-bit types (4 for TF32, 16 for int8). A batch of 100 leaves the
tiles partly empty or sends the multiply to slower kernels; 96 or 104 do not. For convolutions
the batch size is folded into a larger dimension and matters much less. On CPUs, TPUs (which
want multiples of 128) and in plain float32 without TF32 the alignment makes no reliable
difference: set `alignment` for your hardware or disable the rule.

Why it is off by default: with cuBLAS 11 and later, tensor cores run unaligned sizes too, and on
current hardware the batch dimension no longer shows a cost. Measured on an NVIDIA H200 (CUDA 13,
through PyTorch, which calls the same cuBLAS kernels as TensorFlow;
`benchmarks/tensor_core_alignment.py`, kernel time of a Dense layer's three training GEMMs, three
runs): batch 100 against 104 (1,024 units) and 250 against 256 (2,048 units) ran 0.99-1.03x as long
in float16, bfloat16 and TF32 alike, where the same runs showed an unaligned layer width costing
1.5-2.2x in 16-bit (TFP301). On Volta GPUs or with cuBLAS before 11, alignment decides whether
tensor cores run at all: select the rule there.
"""
    example = """
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(10_000).batch(100).prefetch(tf.data.AUTOTUNE)
model.fit(ds, epochs=10)
"""
    use_instead = """
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")
ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(10_000).batch(104).prefetch(tf.data.AUTOTUNE)
model.fit(ds, epochs=10)
"""
    fix_safety = """
The fix rounds the batch size up to the next multiple of the alignment. It is **unsafe**: the
batch size changes the optimisation (gradient noise, the learning rate that works, the number of
steps per epoch, batch-norm statistics) and memory use. It is offered only with
`--unsafe-fixes`.
"""
    known_problems = """
The rule reads the precision from the module itself: a policy set in another module, or a TPU
chosen by a flag at run time, is not seen (set `alignment` to state your hardware). On CPU-only
training or GPUs without tensor cores the finding is noise. A helper's `batch_size` parameter is
known only when every caller in the same file passes one value for it (or leaves it to a known
default); callers in other modules are not followed.
"""
    references = (
        "[Mixed precision guide: GPU performance tips](https://www.tensorflow.org/guide/mixed_precision#gpu_performance_tips)",
        "[NVIDIA: Linear/Fully-Connected Layers User's Guide]"
        "(https://docs.nvidia.com/deeplearning/performance/dl-performance-fully-connected/index.html)",
        "[NVIDIA: Matrix Multiplication Background: Tensor Core requirements]"
        "(https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html)",
    )

    valid = (
        # float32 says nothing about the GPU: no finding unless `alignment` is set (the test file sets it).
        Valid(_TF + "model.fit(x_train, y_train, batch_size=90, epochs=5)\n"),
        # TPU code: no GPU alignment finding.
        Valid(_MIXED + "resolver = tf.distribute.cluster_resolver.TPUClusterResolver()\nmodel.fit(x, y, batch_size=100)\n"),
        # Inference only.
        Valid(_TF + "preds = model.predict(x_test, batch_size=100)\nmodel.evaluate(x_test, y_test, batch_size=50)\n"),
        # A pipeline used only for validation.
        Valid(
            _TF + "train = tf.data.Dataset.range(100).batch(64)\nval = tf.data.Dataset.range(10).batch(100)\n"
            "model.fit(train, validation_data=val, epochs=3)\n"
        ),
        # Inspection, not training.
        Valid(_TF + "ds = tf.data.Dataset.range(100).batch(100)\nfor x in ds.take(2):\n    print(x)\n"),
        # Small, aligned, or a variable.
        Valid(_TF + "model.fit(x, y, batch_size=1)\nmodel.fit(x, y, batch_size=256)\nmodel.fit(x, y, batch_size=BATCH)\n"),
        # Not Keras: nothing in the file imports TensorFlow or Keras.
        Valid("from mylab.models import Regressor\nreg = Regressor()\nreg.fit(X, y, batch_size=100)\n"),
        # A batch op on something that is not a Dataset.
        Valid(_TF + "loader = make_loader()\nloader.batch(100)\nmodel.fit(loader)\n"),
        # Only evaluated: the size is not training's.
        Valid(
            _MIXED + "BATCH_SIZE = 100\n\ndef get_dataset(files, batch_size):\n"
            "    return tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=8).batch(batch_size)\n\n"
            "model.evaluate(get_dataset(test_files, BATCH_SIZE))\n"
        ),
        # A pipeline nobody trains on.
        Valid(_TF + "ds = tf.data.Dataset.range(100).batch(100)\n"),
    )
    invalid = (
        Invalid(
            _MIXED + "model.fit(x_train, y_train, batch_size=100, epochs=5)\n",
            fixed=_MIXED + "model.fit(x_train, y_train, batch_size=104, epochs=5)\n",
            unsafe=True,
        ),
        Invalid(_MIXED + "model.fit(x_train, y_train, 100, 5)\n", fixed=None),
        Invalid(
            _MIXED + "def make(files):\n    ds = tf.data.TFRecordDataset(files)\n    return ds.padded_batch(90)\n\n"
            "for batch in make(['a.tfrecord']):\n    train_step(batch)\n",
            fixed=_MIXED + "def make(files):\n    ds = tf.data.TFRecordDataset(files)\n    return ds.padded_batch(96)\n\n"
            "for batch in make(['a.tfrecord']):\n    train_step(batch)\n",
            unsafe=True,
        ),
        # The size a helper's callers pass, on the pipeline the model fits; its validation twin is not trained on.
        Invalid(
            _MIXED + "BATCH_SIZE = 100\n\ndef get_dataset(files, batch_size, training):\n"
            "    ds = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=8)\n"
            "    if training:\n        ds = ds.shuffle(10_000).repeat()\n"
            "    return ds.batch(batch_size, drop_remainder=training).prefetch(1)\n\n"
            "model.fit(get_dataset(train_files, BATCH_SIZE, True), validation_data=get_dataset(val_files, BATCH_SIZE, False))\n",
        ),
        Invalid(
            _MIXED + "ds = tf.data.Dataset.range(1000)\nif shuffle:\n    ds = ds.shuffle(100)\nds = ds.batch(batch_size=90)\n"
            "model.fit(ds, epochs=2)\n",
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        # `fit(..., batch_size=N)` and `next_batch(N)` are judged by their shape, so the file must be
        # TensorFlow code (not another library's).
        sites = model.calls if model.imports.imports_framework else ()
        for site in sites:
            call = site.node
            method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
            if method == "fit" and not has_star_args(call):
                yield from self._report(context, argument(call, "batch_size", 2), "`fit` batch_size", site)
            elif method == "next_batch" and site.loops:
                # TF1 `mnist.train.next_batch(n)` in a training loop.
                yield from self._report(context, argument(call, "batch_size", 0), "`next_batch` size", site)
            elif (model.call_name(call) or "").endswith("inputs.numpy_input_fn") and bool_literal(
                keyword_value(call, "shuffle")
            ):
                # Estimator `numpy_input_fn(..., shuffle=True)`: the training input (evaluation does not shuffle).
                yield from self._report(context, argument(call, "batch_size", 2), "`numpy_input_fn` batch_size", site)
        pipelines = model.pipelines
        for op, states in pipelines.ops("batch", "padded_batch"):
            if any(later.name == "unbatch" for state in states for later in state.ops_after(op.call)):
                continue  # `batch(n).map(f).unbatch()`: a vectorised map, not the training batch
            if any(c.trains_on for c in pipelines.consumptions_of(op.call)):
                site = model.site_of(op.call)
                yield from self._report(context, argument(op.call, "batch_size", 0), f"`Dataset.{op.name}` size", site)

    def _report(self, context: RuleContext, arg, what: str, site) -> Iterable[Finding]:
        if arg is None:
            return
        miss = misaligned(context, arg.value, site)
        if miss is None:
            return
        message = (
            f"Training {what} {miss.describe()}; tensor cores on NVIDIA GPUs "
            f"run dense layers faster on aligned batches, e.g. {miss.aligned}"
        )
        yield self.finding(message, arg.value, fix=miss.fix())
