"""TFP210 concat-in-loop: a tensor grown with ``tf.concat`` / ``tf.stack`` on every step of a loop."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from tflint_perf.analysis.accumulation import GrowingTensor, grows_by_scores, growing_tensors
from tflint_perf.analysis.arguments import int_literal
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.text.diagnostics import Finding
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid

_TF = "import tensorflow as tf\n\n"
_MANY = 100  # a Python `range` with a literal bound below this is too short to matter


class ConcatInLoop(Rule):
    code = "TFP210"
    name = "concat-in-loop"
    summary = "A tensor grown with `tf.concat` / `tf.stack` on every loop step copies everything so far: quadratic"
    fix_availability = "none"
    purposes = frozenset({Purpose.TRAINING, Purpose.EVALUATION, Purpose.INFERENCE})

    what_it_does = """
Checks for a tensor grown on every step of a loop, `v = tf.concat([v, x], axis)`, or a list
appended to and concatenated (`tf.concat(parts, 0)` / `tf.stack(parts)`) on every step, where the
loop runs many times:

- a `tf.while_loop` whose body returns `tf.concat([v, x])` for its own loop variable `v`;
- in a `tf.function` (or another graph: a Keras `call`, a `Dataset.map` function), a `while`
  loop, a `for` over `tf.range(...)` or over `range(...)` of a tensor, or a `range` / `tf.range`
  with a literal bound of 100 or more;
- in eager code, a `for` loop over a `tf.data` pipeline (accumulating predictions batch by batch).

Not reported: an accumulated tensor that the loop also reads (a DenseNet block concatenating
features as the next layer's input, a decoder feeding its tokens back: each step needs the grown
tensor), short loops (`for scale in scales`, `range(3)`, the tf.function guide's `tf.range(5)`), loops that only inspect data,
an eager pass growing a tensor by one score per image (`tf.image.psnr`, `tf.image.ssim`: a few KB for
a whole evaluation set, whose copies cost microseconds) where the pass runs once (no loop around it, or
the tensor starts anew on each iteration of the loop around it: an evaluation pass per epoch),
and test files.
"""
    why_bad = """
`tf.concat` allocates a new tensor and copies both inputs. Grown by one piece per step, the tensor
is copied whole on every step: n steps copy about n²/2 pieces, and the loop slows down as it
goes. In a `tf.while_loop` it also forces a shape that changes every iteration (a
`shape_invariants` dance). The `tf.function` guide recommends `tf.TensorArray` for "accumulating
values in a loop": each step writes one element and `stack()` copies once at the end. Measured
with 20,000 steps: several times faster, and the gap grows with n (see docs/benchmarks.md).
"""
    example = """
import tensorflow as tf

@tf.function
def cumulative(xs):
    out = tf.zeros([0])
    for i in tf.range(tf.shape(xs)[0]):
        tf.autograph.experimental.set_loop_options(shape_invariants=[(out, tf.TensorShape([None]))])
        out = tf.concat([out, [tf.reduce_sum(xs[: i + 1])]], axis=0)
    return out
"""
    use_instead = """
import tensorflow as tf

@tf.function
def cumulative(xs):
    n = tf.shape(xs)[0]
    out = tf.TensorArray(tf.float32, size=n)
    for i in tf.range(n):
        out = out.write(i, tf.reduce_sum(xs[: i + 1]))
    return out.stack()
"""
    fix_safety = """
There is no automatic fix: the rewrite needs the element dtype and a size (or
`dynamic_size=True`), and in eager code the better rewrite is different (append to a Python list
and concatenate once after the loop). The message says which applies.
"""
    references = (
        "[tf.function guide: accumulating values in a loop](https://www.tensorflow.org/guide/function#accumulating_values_in_a_loop)",
        "[`tf.TensorArray`](https://www.tensorflow.org/api_docs/python/tf/TensorArray)",
    )

    valid = (
        # One evaluation pass accumulating one PSNR per image (a few hundred floats): microseconds.
        Valid(
            _TF + "psnr_val = tf.convert_to_tensor([], dtype=tf.float32)\n"
            "val_dataset = tf.data.TFRecordDataset(files).map(parse).batch(32)\nfor inputs, targets in val_dataset:\n"
            "    outputs = tf.image.resize(inputs, tf.shape(targets)[1:3])\n"
            "    scores = tf.image.psnr(targets, outputs, max_val=1.)\n"
            "    psnr_val = tf.concat((psnr_val, scores), axis=0)\nprint(tf.reduce_mean(psnr_val))\n"
        ),
        # The same pass after each epoch, the scores starting anew each time: one pass's few KB.
        Valid(
            _TF + "val_dataset = tf.data.TFRecordDataset(files).map(parse).batch(32)\nfor epoch in range(20):\n"
            "    psnr_val = tf.zeros([0])\n    for inputs, targets in val_dataset:\n"
            "        psnr_val = tf.concat([psnr_val, tf.image.psnr(targets, model(inputs), max_val=1.)], axis=0)\n"
            "    print(tf.reduce_mean(psnr_val))\n"
        ),
        # DenseNet: every layer reads the features concatenated so far.
        Valid(
            _TF + "class DenseBlock(tf.keras.layers.Layer):\n    def call(self, x):\n"
            "        for layer in self.layers_:\n            x = tf.concat([x, layer(x)], axis=-1)\n        return x\n"
        ),
        # An autoregressive decoder feeds its output back.
        Valid(
            _TF + "@tf.function\ndef generate(tokens):\n    for _ in tf.range(64):\n        logits = model(tokens)\n"
            "        tokens = tf.concat([tokens, tf.argmax(logits[:, -1:], -1)], axis=1)\n    return tokens\n"
        ),
        # A tf.while_loop body that reads what it grows (a decoder).
        Valid(
            _TF + "def body(i, tokens):\n    nxt = tf.argmax(model(tokens)[:, -1:], -1)\n"
            "    return i + 1, tf.concat([tokens, nxt], 1)\n\n"
            "_, out = tf.while_loop(lambda i, t: i < 32, body, (0, start))\n"
        ),
        # A short Python loop, unrolled once.
        Valid(
            _TF + "@tf.function\ndef pyramid(x):\n    out = x\n    for scale in range(3):\n"
            "        out = tf.concat([out, tf.nn.avg_pool2d(x, 2 ** scale, 1, 'SAME')], axis=-1)\n    return out\n"
        ),
        # czy36mengfei/tensorflow2_tutorials_chinese, the tf.function guide: five steps of a literal `tf.range`.
        Valid(
            _TF + "@tf.function\ndef buggy_concat():\n    x = tf.ones([0, 10])\n    for i in tf.range(5):\n"
            "        x = tf.concat([x, tf.ones([1, 10])], axis=0)\n    return x\n"
        ),
        # A list appended to in the loop and concatenated once after it: linear.
        Valid(
            _TF + "preds = []\nfor x, y in test_ds:\n    preds.append(model(x))\nall_preds = tf.concat(preds, axis=0)\n"
        ),
        # Eager code looping over a Python list.
        Valid(_TF + "out = tf.zeros([0, 4])\nfor part in parts:\n    out = tf.concat([out, part], 0)\n"),
        # Inspection.
        Valid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(x).batch(8)\nseen = tf.zeros([0])\n"
            "for batch in ds.take(3):\n    seen = tf.concat([seen, batch], 0)\n    print(seen)\n"
        ),
    )
    invalid = (
        Invalid(
            _TF + "@tf.function\ndef cumulative(xs):\n    out = tf.zeros([0])\n    for i in tf.range(tf.shape(xs)[0]):\n"
            "        tf.autograph.experimental.set_loop_options(shape_invariants=[(out, tf.TensorShape([None]))])\n"
            "        out = tf.concat([out, [tf.reduce_sum(xs[: i + 1])]], axis=0)\n    return out\n"
        ),
        # The same loop over a literal `tf.range` of many steps.
        Invalid(
            _TF + "@tf.function\ndef grow():\n    x = tf.ones([0, 10])\n    for i in tf.range(1000):\n"
            "        x = tf.concat([x, tf.ones([1, 10])], axis=0)\n    return x\n"
        ),
        # A Keras functional loss on segmentation masks averages only the last axis: B x H x W errors per step.
        Invalid(
            _TF + "model = tf.keras.models.load_model('unet.h5')\nerrors = tf.zeros([0, 256, 256])\n"
            "val_ds = tf.data.TFRecordDataset(files).map(parse).batch(8)\nfor images, masks in val_ds:\n"
            "    err = tf.keras.losses.mse(masks, model(images))\n    errors = tf.concat([errors, err], axis=0)\n"
        ),
        # Per-example losses of every step of 20 epochs: one tensor grown across all the passes.
        Invalid(
            _TF + "train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)\n"
            "history = tf.zeros([0])\nfor epoch in range(20):\n    for x, y in train_ds:\n"
            "        losses = tf.keras.losses.sparse_categorical_crossentropy(y, model(x), from_logits=True)\n"
            "        history = tf.concat([history, losses], axis=0)\n"
        ),
        # PSNRs grown across 20 epochs' passes, never started anew.
        Invalid(
            _TF + "val_dataset = tf.data.TFRecordDataset(files).map(parse).batch(32)\npsnr_val = tf.zeros([0])\n"
            "for epoch in range(20):\n    for inputs, targets in val_dataset:\n"
            "        psnr_val = tf.concat([psnr_val, tf.image.psnr(targets, model(inputs), max_val=1.)], axis=0)\n"
        ),
        # Predictions accumulated batch by batch over a dataset, in eager code.
        Invalid(
            _TF + "ds = tf.data.TFRecordDataset(files).map(parse).batch(64)\npreds = None\n"
            "for images, labels in ds:\n    logits = model(images, training=False)\n"
            "    preds = logits if preds is None else tf.concat([preds, logits], 0)\n"
        ),
        # A tf.while_loop body growing its own loop variable.
        Invalid(
            _TF + "def body(i, out):\n    return i + 1, tf.concat([out, [tf.cast(i, tf.float32)]], 0)\n\n"
            "_, result = tf.while_loop(lambda i, out: i < n, body, (0, tf.zeros([0])),\n"
            "                          shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))\n"
        ),
        # A list appended and stacked on every step.
        Invalid(
            _TF + "@tf.function\ndef rollout(state, n):\n    states = []\n    i = 0\n    while i < n:\n"
            "        state = step(state)\n        states.append(state)\n        history = tf.stack(states)\n"
            "        i += 1\n    return history\n"
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        if context.is_test_code:
            return
        model = context.model
        names = [model.call_name(c.node) for c in model.calls]
        if "tf.while_loop" not in names and not any(
            name in ("tf.concat", "tf.stack") and site.loops for name, site in zip(names, model.calls)
        ):
            return
        for growing in growing_tensors(model):
            where = self._where(context, growing)
            if where is None:
                continue
            verb = "grows" if growing.form == "self" else f"concatenates the list `{growing.name}` on every step,"
            subject = f"`{growing.name}`" if growing.form == "self" else "which"
            call = model.call_name(growing.site.node)
            if where == "graph":
                advice = "write each step to a `tf.TensorArray` and `stack()` once after the loop"
            else:
                advice = "append each step's tensor to a Python list and concatenate once after the loop"
            if growing.form == "self":
                message = f"`{call}` {verb} {subject} on every loop step, copying everything so far (quadratic); {advice}"
            else:
                message = f"`{call}` {verb} copying everything so far (quadratic); {advice}"
            yield self.finding(message, growing.site.node.func, growing.site.node)

    def _where(self, context: RuleContext, growing: GrowingTensor) -> Optional[str]:
        model = context.model
        loop = growing.loop
        if isinstance(loop, cst.Call):
            return "graph"  # a tf.while_loop body
        hot = model.hot_paths.context_of_site(growing.site)
        if hot is not None:
            return "graph" if _many_steps_in_graph(model, loop) else None
        consumption = next((c for c in model.pipelines.consumptions if c.node is loop), None)
        if consumption is not None and consumption.purpose in self.purposes | {Purpose.UNKNOWN}:
            if grows_by_scores(model, growing):
                return None  # one score per example over a pass: a few KB copied, microseconds
            return "eager"
        return None


def _many_steps_in_graph(model, loop: cst.CSTNode) -> bool:
    if isinstance(loop, cst.While):
        return True
    if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
        return False
    it = loop.iter
    name = model.call_name(it)
    if name == "tf.range" or (isinstance(it.func, cst.Name) and it.func.value == "range" and it.args):
        bound = (it.args[1].value if len(it.args) > 1 else it.args[0].value) if it.args else None
        literal = int_literal(bound) if bound is not None else None
        if literal is not None:
            return literal >= _MANY  # `tf.range(5)` in a guide's example is as short as `range(5)`
        if name == "tf.range":
            return True
        return isinstance(bound, cst.Call) and (model.call_name(bound) or "").startswith("tf.") or (
            isinstance(bound, cst.Subscript) and isinstance(bound.value, cst.Call)
            and (model.call_name(bound.value) or "").startswith("tf.")
        )
    return False
