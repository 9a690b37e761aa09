"""TFP207 retracing-shapes: a ``tf.function`` called with tensors whose shapes vary from call to call."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from tflint_perf.analysis.model import CallSite
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.analysis.shapes import from_loop_target, loop_sized, varying_batches
from tflint_perf.analysis.tf_functions import TfFunction, find_tf_functions
from tflint_perf.text.diagnostics import SAFE, Finding, FixPlan, NodeEdit
from tflint_perf.fixes.building import add_keyword_argument
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid, target_version_option

_TF = "import tensorflow as tf\n\n"
# dragen1860/TensorFlow-2.x-Tutorials 21-CN-EN-Translation-BERT tokenizer.py: `encode` pads each
# sequence in Python to `{pad}`, `filter_max_length` keeps those of at most MAX_SEQ_LENGTH.
_TRANSLATION = (
    "import numpy as np\nimport tensorflow as tf\n\n"
    "def get_datasets(examples, tokenizer, MAX_SEQ_LENGTH, BATCH_SIZE):\n"
    "    def encode(zh, en, seq_length={pad}):\n        lang1 = tokenizer.encode(zh.numpy())\n"
    "        if len(lang1) < seq_length:\n            lang1 = lang1 + list(np.zeros(seq_length - len(lang1), 'int32'))\n"
    "        lang2 = tokenizer.encode(en.numpy())\n"
    "        if len(lang2) < seq_length:\n            lang2 = lang2 + list(np.zeros(seq_length - len(lang2), 'int32'))\n"
    "        return lang1, lang2\n\n"
    "    def filter_max_length(x, y, max_length=MAX_SEQ_LENGTH):\n"
    "        return tf.logical_and(tf.size(x) <= max_length, tf.size(y) <= max_length)\n\n"
    "    ds = examples.map(lambda zh, en: tf.py_function(encode, [zh, en], [tf.int32, tf.int32]))\n"
    "    ds = ds.filter(filter_max_length).cache()\n"
    "    return ds.shuffle(20000).padded_batch(BATCH_SIZE, padded_shapes=([-1], [-1]), drop_remainder=True)\n\n"
    "{decorator}\ndef train_step(inp, tar):\n    return model(inp, tar)\n\n"
    "for epoch in range(20):\n    for inp, tar in get_datasets(tf.data.TFRecordDataset(files), tokenizer, 128, 64):\n"
    "        train_step(inp, tar)\n"
)
_STEP = "@tf.function\ndef train_step(tokens, labels):\n    return model.train_on_batch(tokens, labels)\n\n"


class RetracingShapes(Rule):
    code = "TFP207"
    name = "retracing-shapes"
    summary = "A `tf.function` called with tensors whose shapes change every call traces a new graph each time"
    fix_availability = "sometimes"
    options = (target_version_option(
        "Below 2.9 the fix passes `experimental_relax_shapes=True` (`reduce_retracing` does not exist there)."
    ),)
    purposes = frozenset({Purpose.TRAINING, Purpose.EVALUATION, Purpose.INFERENCE})

    what_it_does = """
Checks for a same-file `tf.function` (decorated, or `step = tf.function(fn)`) without
`input_signature`, `reduce_retracing=True` or `experimental_relax_shapes=True`, called in a loop
with a value whose shape the analysis sees change from one iteration to the next:

- a batch of a pipeline iterated by the loop, when the pipeline ends in `padded_batch` without
  fully static `padded_shapes` (each batch is padded to its own longest element) or
  `bucket_by_sequence_length` without `pad_to_bucket_boundary=True`;
- a slice or a tensor sized by the loop's `range` variable (also under `tqdm`): `x[:n]`, `tokens[:, :i + 1]` (a
  prefix growing by one token a step), `tf.zeros([n, d])`; in a loop at module level (a script, a
  notebook) as in a function.

Not reported: a pipeline whose elements are rows of in-memory arrays (every padded batch then has
the same shape), or sequences a map pads in Python to the length a later `filter` keeps them at
(`if len(ids) < seq_length:` padding, `tf.size(x) <= max_length` filtering, the two lengths one
value: every element has that length, in whichever module of the project the pipeline is built); the last, partial batch of a pipeline (at most one extra trace); calls made from
inside another `tf.function` (traced once with it); loops that only inspect data; test files.
"""
    why_bad = """
A `tf.function` keeps one graph per input signature, and by default a signature includes every
dimension of every tensor argument. A call with a shape it has not seen traces the Python function
again and builds a new graph, which costs far more than running the step; with lengths that change
every batch the loop traces on most calls and TensorFlow warns about "excessive retracing".
`reduce_retracing=True` lets it generalise to a signature with unknown dimensions after the first
traces; an `input_signature` with `None` dimensions fixes one graph from the start. Measured with
60 calls on 60 different lengths: about 20x faster (see docs/benchmarks.md).
"""
    example = """
import tensorflow as tf

@tf.function
def train_step(tokens, labels):
    ...

ds = tf.data.Dataset.from_generator(read_sentences, output_signature=spec).padded_batch(32)
for tokens, labels in ds:
    train_step(tokens, labels)
"""
    use_instead = """
import tensorflow as tf

@tf.function(reduce_retracing=True)
def train_step(tokens, labels):
    ...

ds = tf.data.Dataset.from_generator(read_sentences, output_signature=spec).padded_batch(32)
for tokens, labels in ds:
    train_step(tokens, labels)
"""
    fix_safety = """
The fix adds `reduce_retracing=True` to the `tf.function` (or `experimental_relax_shapes=True`
when `target-version` is below TensorFlow 2.9, where `reduce_retracing` does not exist yet). It is
**safe**: the function computes the same values; only the graphs it keeps are more general (a
kernel specialised to one shape may be a little slower, which tracing costs far more than). An
`input_signature` is better still but needs the dtypes and ranks of every argument, so it is left
to you.
"""
    references = (
        "[tf.function guide: controlling retracing](https://www.tensorflow.org/guide/function#controlling_retracing)",
        "[`tf.function` (`reduce_retracing`)](https://www.tensorflow.org/api_docs/python/tf/function)",
    )

    valid = (
        # Already relaxed.
        Valid(
            _TF + "@tf.function(reduce_retracing=True)\ndef step(x):\n    return x * 2\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=tf.int32).padded_batch(32)\n"
            "for batch in ds:\n    step(batch)\n"
        ),
        Valid(
            _TF + "@tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])\ndef step(x):\n    return x * 2\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=tf.int32).padded_batch(32)\n"
            "for batch in ds:\n    step(batch)\n"
        ),
        # The pre-2.9 spelling.
        Valid(
            _TF + "step = tf.function(lambda x: x * 2, experimental_relax_shapes=True)\n"
            "for n in range(100, 200):\n    step(tf.zeros([n]))\n"
        ),
        # Fixed padded shapes: every batch has the same shape.
        Valid(
            _TF + "@tf.function\ndef step(x):\n    return x * 2\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=tf.int32).padded_batch(32, padded_shapes=[128])\n"
            "for batch in ds:\n    step(batch)\n"
        ),
        # A plain batch: only the last, partial batch differs (at most two traces).
        Valid(
            _TF + "@tf.function\ndef step(x):\n    return x * 2\n\n"
            "ds = tf.data.Dataset.from_tensor_slices(x).batch(32)\nfor batch in ds:\n    step(batch)\n"
        ),
        # Rows of in-memory arrays: padded or not, the batches are the same shape.
        Valid(
            _TF + "@tf.function\ndef step(x):\n    return x * 2\n\n"
            "ds = tf.data.Dataset.from_tensor_slices(x).shuffle(100).padded_batch(32)\nfor batch in ds:\n    step(batch)\n"
        ),
        # A fixed-size window moving along: x[i:i + 16] has the same shape every time.
        Valid(
            _TF + "@tf.function\ndef step(x):\n    return x * 2\n\nfor i in range(100):\n    step(data[i:i + 16])\n"
        ),
        # At module level as in a function: a fixed window over the sequence axis keeps its shape.
        Valid(
            _TF + "@tf.function\ndef step(x):\n    return x * 2\n\nfor i in range(100):\n    step(tokens[:, i:i + 16])\n"
        ),
        # Called from another tf.function: traced once with it.
        Valid(
            _TF + "@tf.function\ndef inner(x):\n    return x * 2\n\n@tf.function\ndef outer(ds):\n"
            "    for n in range(10):\n        inner(ds[:n])\n\nouter(data)\n"
        ),
        # The loop's value is not what is passed.
        Valid(
            _TF + "@tf.function\ndef step(x):\n    return x * 2\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=tf.int32).padded_batch(32)\n"
            "for batch in ds:\n    step(fixed_input)\n"
        ),
        # An inspection loop.
        Valid(
            _TF + "@tf.function\ndef step(x):\n    return x * 2\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=tf.int32).padded_batch(32)\n"
            "for batch in ds.take(2):\n    print(step(batch).shape)\n"
        ),
        # tensorflow/docs wav2vec2 fine-tuning: padded to fixed lengths given by module constants.
        Valid(
            _TF + "AUDIO_MAXLEN = 246000\nLABEL_MAXLEN = 256\n\n@tf.function(jit_compile=True)\ndef eval_fwd(batch):\n"
            "    return tf.argmax(model(batch, training=False), axis=-1)\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int32))\n"
            "ds = ds.padded_batch(2, padded_shapes=(AUDIO_MAXLEN, LABEL_MAXLEN))\n"
            "for speech, labels in ds:\n    predictions = eval_fwd(speech)\n"
        ),
        # Padded in Python to the length the filter keeps: every element, and every batch, has one shape.
        Valid(_TRANSLATION.format(pad="MAX_SEQ_LENGTH", decorator="@tf.function")),
    )
    invalid = (
        # Padded to another length than the filter's: sequences between the two still vary.
        Invalid(
            _TRANSLATION.format(pad="64", decorator="@tf.function"),
            fixed=_TRANSLATION.format(pad="64", decorator="@tf.function(reduce_retracing=True)"),
        ),
        Invalid(
            _TF + _STEP + "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.int32, tf.int32)).padded_batch(32)\n"
            "for tokens, labels in ds:\n    train_step(tokens, labels)\n",
            fixed=_TF + _STEP.replace("@tf.function", "@tf.function(reduce_retracing=True)")
            + "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.int32, tf.int32)).padded_batch(32)\n"
            "for tokens, labels in ds:\n    train_step(tokens, labels)\n",
        ),
        # A decorator with arguments, a method, padded_shapes with None, enumerate and unpacking.
        Invalid(
            _TF + "class Trainer:\n    @tf.function(jit_compile=False)\n    def step(self, batch):\n        return batch\n\n"
            "    def fit(self, files):\n        ds = tf.data.TFRecordDataset(files).map(parse)\n"
            "        ds = ds.padded_batch(16, padded_shapes=([None], []))\n"
            "        for i, batch in enumerate(ds):\n            x, y = batch\n            self.step(x)\n",
            fixed=_TF + "class Trainer:\n    @tf.function(jit_compile=False, reduce_retracing=True)\n    def step(self, batch):\n"
            "        return batch\n\n"
            "    def fit(self, files):\n        ds = tf.data.TFRecordDataset(files).map(parse)\n"
            "        ds = ds.padded_batch(16, padded_shapes=([None], []))\n"
            "        for i, batch in enumerate(ds):\n            x, y = batch\n            self.step(x)\n",
        ),
        # A notebook's generation loop at module level: the decoded prefix grows by one token a step.
        Invalid(
            _TF + "@tf.function\ndef decode(tokens):\n    return tf.argmax(model(tokens)[:, -1], axis=-1)\n\n"
            "for i in tqdm(range(max_len)):\n    next_id = decode(output[:, :i + 1])\n",
            fixed=_TF + "@tf.function(reduce_retracing=True)\ndef decode(tokens):\n    return tf.argmax(model(tokens)[:, -1], axis=-1)\n\n"
            "for i in tqdm(range(max_len)):\n    next_id = decode(output[:, :i + 1])\n",
        ),
        # `padded_shapes` whose constant is not an integer the code sets (a `None` dimension).
        Invalid(
            _TF + "MAXLEN = None\n\n" + _STEP + "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.int32, tf.int32))\n"
            "ds = ds.padded_batch(32, padded_shapes=(MAXLEN, []))\nfor tokens, labels in ds:\n    train_step(tokens, labels)\n",
            fixed=_TF + "MAXLEN = None\n\n" + _STEP.replace("@tf.function", "@tf.function(reduce_retracing=True)")
            + "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.int32, tf.int32))\n"
            "ds = ds.padded_batch(32, padded_shapes=(MAXLEN, []))\nfor tokens, labels in ds:\n    train_step(tokens, labels)\n",
        ),
        # Sized by the loop variable; a wrapped function.
        Invalid(
            _TF + "def encode(x):\n    return tf.reduce_sum(x)\n\nfast_encode = tf.function(encode)\n\n"
            "for n in range(100, 160):\n    fast_encode(tf.ones([n]))\n",
            fixed=_TF + "def encode(x):\n    return tf.reduce_sum(x)\n\nfast_encode = tf.function(encode, reduce_retracing=True)\n\n"
            "for n in range(100, 160):\n    fast_encode(tf.ones([n]))\n",
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        if context.is_test_code:
            return
        model = context.model
        functions = [f for f in find_tf_functions(model) if f.call_sites and not f.relaxes_shapes]
        if not functions:
            return
        hot = model.hot_paths
        loops = {c.node: c for c in model.pipelines.consumptions if c.kind == "for"}
        for tf_function in functions:
            for site in tf_function.call_sites:
                if not site.loops or hot.context_of_site(site) is not None:
                    continue  # not repeated, or traced as part of another graph
                reason = self._varying_argument(context, site, loops)
                if reason is None:
                    continue
                message = (
                    f"`{tf_function.name}` is a `tf.function` called in a loop with {reason}: each new shape traces "
                    "it again; pass `reduce_retracing=True` or an `input_signature` with `None` dimensions"
                )
                yield self.finding(message, site.node, site.node, self._fix(context, tf_function))
                break  # one finding per function

    def _varying_argument(self, context: RuleContext, site: CallSite, loops) -> Optional[str]:
        model = context.model
        for arg in site.node.args:
            if arg.star:
                continue
            sized_by = loop_sized(model, site, arg.value)
            if sized_by is not None:
                return f"a tensor sized by the loop variable `{sized_by}`"
            for loop in site.loops:
                consumption = loops.get(loop)
                if consumption is None or consumption.purpose not in self.purposes | {Purpose.UNKNOWN}:
                    continue
                if not isinstance(loop, cst.For) or not from_loop_target(model, site, arg.value, loop):
                    continue
                reasons = [varying_batches(model, state) for state in consumption.states]
                if reasons and all(reasons):
                    return f"batches whose shape varies ({reasons[0]})"
        return None

    def _fix(self, context: RuleContext, tf_function: TfFunction) -> Optional[FixPlan]:
        version = context.settings.target_version
        keyword = "experimental_relax_shapes" if version is not None and version < (2, 9) else "reduce_retracing"
        maker = tf_function.maker
        edit: Optional[NodeEdit]
        if isinstance(maker, cst.Call):
            edit = add_keyword_argument(maker, keyword, "True")
            if edit is None:  # `@tf.function()`
                func = context.model.module.code_for_node(maker.func)
                edit = NodeEdit(maker, "replace", f"{func}({keyword}=True)")
        else:
            edit = NodeEdit(maker, "after", f"({keyword}=True)")
        return FixPlan(SAFE, f"Pass `{keyword}=True` to `tf.function`", (edit,))
