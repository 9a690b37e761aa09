"""TFP105 from-generator-over-arrays: ``Dataset.from_generator`` that only slices in-memory arrays."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from tflint_perf.analysis.files import path_purpose
from tflint_perf.analysis.generators import GeneratorSlices, in_memory_slices
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.text.diagnostics import UNSAFE, Finding, FixPlan, NodeEdit
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid

_TF = "import numpy as np\nimport tensorflow as tf\n\n"
_ARRAYS = "x = np.load('x.npy')\ny = np.load('y.npy')\n\n"
_LOADED = "import tensorlayer as tl\n\nX_train, y_train, X_test, y_test = tl.files.load_cifar10_dataset(shape=(-1, 32, 32, 3))\n\n"


class FromGeneratorOverArrays(Rule):
    code = "TFP105"
    name = "from-generator-over-arrays"
    summary = "`Dataset.from_generator` over arrays already in memory runs Python for every element"
    fix_availability = "sometimes"

    what_it_does = """
Checks for `tf.data.Dataset.from_generator(gen, ...)` where `gen` is a same-file generator whose
whole body is one loop yielding slices of arrays already in memory, and nothing else:
`for i in range(len(x)): yield x[i], y[i]`, `for a, b in zip(x, y): yield a, b`,
`for row in x: yield {"features": row}`.

Before the loop the generator may only name the arrays again (`inputs = X_train`) and guard them
with a check that only raises (`if len(inputs) != len(targets): raise ValueError(...)`, `assert`).

The arrays must be known to be rectangular: bound to NumPy calls (`np.load`, `np.array`, ...),
`.values` / `.to_numpy()` / `.astype()`, or unpacked from a library's dataset loader (a function of
an imported module named `load_data`, `load_<name>_dataset` or `load_<name>_data`, the convention
`keras.datasets` set: it returns one NumPy array per split; loaders of text corpora such as `imdb`
are not trusted, their rows vary in length), or the call declares fully static shapes in
`output_signature` / `output_shapes`. Not reported: a generator that reads files,
decodes, shuffles indices, computes anything per element, loops forever (`while True`) or takes
`args=`; a declared `None` dimension (variable-length items, which `from_tensor_slices` cannot
hold); memory-mapped arrays (`np.memmap`, `np.load(mmap_mode=...)`, kept out of memory on
purpose); pipelines consumed only for evaluation or inspection, and test files.
"""
    why_bad = """
`from_generator` runs the Python generator under the GIL, through a `py_function`, once per
element: it cannot be parallelised, prefetching only hides part of it, and each element is
converted from NumPy to a tensor on its own. When the generator only slices arrays that are
already in memory, `Dataset.from_tensor_slices` yields the same elements from a tensor, with no
Python in the loop. The TensorFlow profiler guide: "Consider limiting the usage of
`tf.data.Dataset.from_generator` as it is slower compared to pure TensorFlow ops". Measured on
20,000 rows of 64 float32 in batches of 128: about 30x faster (see docs/benchmarks.md).
"""
    example = """
import numpy as np
import tensorflow as tf

x, y = np.load("x.npy"), np.load("y.npy")

def gen():
    for i in range(len(x)):
        yield x[i], y[i]

ds = tf.data.Dataset.from_generator(gen, output_signature=(spec_x, spec_y)).batch(128)
"""
    use_instead = """
import numpy as np
import tensorflow as tf

x, y = np.load("x.npy"), np.load("y.npy")

ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(128)
"""
    fix_safety = """
The fix replaces the `from_generator(...)` call with `from_tensor_slices(<the arrays>)` in the
structure the generator yields. It is **unsafe**: `from_generator` converts each element to the
declared `output_signature` / `output_types` dtype, `from_tensor_slices` keeps the arrays' own
(a float64 array stays float64); `zip` stops at the shortest array where `from_tensor_slices`
requires equal lengths; and the arrays are copied into one tensor (memory: twice the data
while both exist). The fix is offered only when the generator is defined in the same function
(or at module level, like the call), so the names mean the same arrays at the call; the
generator's `def` is left in place.
"""
    known_problems = """
Very large arrays (several GB) may be kept in a generator on purpose, to avoid the copy: the
analysis cannot see sizes. Suppress the finding with `# noqa: TFP105` there.
"""
    references = (
        "[TensorFlow profiler guide: optimize the input pipeline](https://www.tensorflow.org/guide/profiler#optimize_the_input_data_pipeline)",
        "[`tf.data.Dataset.from_generator`](https://www.tensorflow.org/api_docs/python/tf/data/Dataset#from_generator)",
        "[tf.function guide: looping over Python data](https://www.tensorflow.org/guide/function#looping_over_python_data)",
    )

    valid = (
        # The generator reads files: real work per element.
        Valid(
            _TF + "def gen():\n    for path in paths:\n        yield np.load(path)\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=tf.float32)\nmodel.fit(ds.batch(32), epochs=3)\n"
        ),
        # Python work per element (a tokenizer).
        Valid(
            _TF + _ARRAYS + "def gen():\n    for i in range(len(x)):\n        yield tokenize(x[i]), y[i]\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.int32, tf.int32))\nmodel.fit(ds.batch(32))\n"
        ),
        # Variable-length items: from_tensor_slices cannot hold them.
        Valid(
            _TF + "def gen():\n    for s, t in zip(sentences, labels):\n        yield s, t\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_signature=(tf.TensorSpec([None], tf.int32), "
            "tf.TensorSpec([], tf.int32)))\nmodel.fit(ds.padded_batch(32))\n"
        ),
        # A streaming source: loops forever.
        Valid(
            _TF + _ARRAYS + "def gen():\n    while True:\n        for i in range(len(x)):\n            yield x[i], y[i]\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int64))\n"
            "model.fit(ds.batch(32), steps_per_epoch=100)\n"
        ),
        # Shuffled indices: Python work per epoch.
        Valid(
            _TF + _ARRAYS + "def gen():\n    idx = np.random.permutation(len(x))\n    for i in idx:\n        yield x[i], y[i]\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int64))\nmodel.fit(ds.batch(32))\n"
        ),
        # Nothing says the lists are rectangular.
        Valid(
            _TF + "def gen():\n    for a, b in zip(xs, ys):\n        yield a, b\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int64))\nmodel.fit(ds.batch(32))\n"
        ),
        # An object array holds ragged rows: from_tensor_slices cannot take it.
        Valid(
            _TF + "seqs = np.array(sequences, dtype=object)\n\ndef gen():\n    for s in seqs:\n        yield s\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=tf.int32)\nmodel.fit(ds.padded_batch(32))\n"
        ),
        # Memory-mapped on purpose.
        Valid(
            _TF + "x = np.load('x.npy', mmap_mode='r')\n\ndef gen():\n    for row in x:\n        yield row\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=tf.float32)\nmodel.fit(ds.batch(32))\n"
        ),
        # The generator takes its data through args=.
        Valid(
            _TF + _ARRAYS + "def gen(n):\n    for i in range(n):\n        yield x[i]\n\n"
            "ds = tf.data.Dataset.from_generator(gen, args=[100], output_types=tf.float32)\nmodel.fit(ds.batch(32))\n"
        ),
        # A text corpus loader: its rows are token lists of varying length.
        Valid(
            _TF + "(x_train, y_train), _ = tf.keras.datasets.imdb.load_data(num_words=10000)\n\n"
            "def gen():\n    for a, b in zip(x_train, y_train):\n        yield a, b\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.int32, tf.int64))\nmodel.fit(ds.padded_batch(32))\n"
        ),
        # A loader defined in this file is not the library convention (and its body says what it returns).
        Valid(
            _TF + "def load_data():\n    return read_rows('train.txt')\n\nxs, ys = load_data()\n\n"
            "def gen():\n    for a, b in zip(xs, ys):\n        yield a, b\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int64))\nmodel.fit(ds.batch(32))\n"
        ),
        # Before the loop the generator does work of its own (here: reorders the rows each pass).
        Valid(
            _TF + "import tensorlayer as tl\n\nX_train, y_train, _, _ = tl.files.load_cifar10_dataset()\n\n"
            "def gen():\n    inputs, targets = sklearn.utils.shuffle(X_train, y_train)\n"
            "    for a, b in zip(inputs, targets):\n        yield a, b\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int32))\nmodel.fit(ds.batch(32))\n"
        ),
        # Inspection only.
        Valid(
            _TF + _ARRAYS + "def gen():\n    for i in range(len(x)):\n        yield x[i], y[i]\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int64))\n"
            "for a, b in ds.take(3):\n    print(a.shape, b)\n"
        ),
    )
    invalid = (
        Invalid(
            _TF + _ARRAYS + "def gen():\n    for i in range(len(x)):\n        yield x[i], y[i]\n\n"
            "ds = tf.data.Dataset.from_generator(gen, output_types=(tf.float32, tf.int64)).batch(128)\n"
            "model.fit(ds, epochs=5)\n",
            fixed=_TF + _ARRAYS + "def gen():\n    for i in range(len(x)):\n        yield x[i], y[i]\n\n"
            "ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(128)\n"
            "model.fit(ds, epochs=5)\n",
            unsafe=True,
        ),
        # Closure over a function's arrays, a dict element; static shapes in the signature.
        Invalid(
            _TF + "def make_dataset(features, labels):\n    def gen():\n        for f, l in zip(features, labels):\n"
            "            yield {'x': f}, l\n\n"
            "    return tf.data.Dataset.from_generator(gen, output_signature=({'x': tf.TensorSpec((64,), tf.float32)}, "
            "tf.TensorSpec((), tf.int64)))\n\nmodel.fit(make_dataset(a, b).batch(32))\n",
            fixed=_TF + "def make_dataset(features, labels):\n    def gen():\n        for f, l in zip(features, labels):\n"
            "            yield {'x': f}, l\n\n"
            "    return tf.data.Dataset.from_tensor_slices(({'x': features}, labels))\n\nmodel.fit(make_dataset(a, b).batch(32))\n",
            unsafe=True,
        ),
        # A keras.datasets loader; the generator is module-level, the call in a function: no fix.
        Invalid(
            _TF + "(x_train, y_train), _ = tf.keras.datasets.mnist.load_data()\n\n"
            "def gen():\n    for i in range(x_train.shape[0]):\n        yield x_train[i], y_train[i]\n\n"
            "def train():\n    ds = tf.data.Dataset.from_generator(gen, output_types=(tf.uint8, tf.uint8))\n"
            "    model.fit(ds.batch(32), epochs=2)\n",
            fixed=None,
            unsafe=True,
        ),
        # A library's dataset loader; the generator names the arrays again and checks their lengths first.
        Invalid(
            _TF + _LOADED + "def generator_train():\n    inputs = X_train\n    targets = y_train\n"
            "    if len(inputs) != len(targets):\n        raise AssertionError('lengths differ')\n"
            "    for _input, _target in zip(inputs, targets):\n        yield _input, _target\n\n"
            "train_ds = tf.data.Dataset.from_generator(generator_train, output_types=(tf.float32, tf.int32))\n"
            "for epoch in range(10):\n    for x, y in train_ds.shuffle(1000).batch(32):\n        train_step(x, y)\n",
            fixed=_TF + _LOADED + "def generator_train():\n    inputs = X_train\n    targets = y_train\n"
            "    if len(inputs) != len(targets):\n        raise AssertionError('lengths differ')\n"
            "    for _input, _target in zip(inputs, targets):\n        yield _input, _target\n\n"
            "train_ds = tf.data.Dataset.from_tensor_slices((X_train, y_train))\n"
            "for epoch in range(10):\n    for x, y in train_ds.shuffle(1000).batch(32):\n        train_step(x, y)\n",
            unsafe=True,
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        if context.is_test_code or path_purpose(context.filename) is not Purpose.UNKNOWN:
            return
        model = context.model
        sources = [s for s in model.calls if model.call_name(s.node) == "tf.data.Dataset.from_generator"]
        if not sources:
            return
        pipelines = model.pipelines
        for site in sources:
            call = site.node
            consumptions = [c for c in pipelines.consumptions if any(s.source.node is call for s in c.states)]
            if consumptions and all(c.purpose not in self.purposes for c in consumptions):
                continue  # evaluation, inspection, a one-off pass
            if pipelines.built_for(call) not in self.purposes | {Purpose.UNKNOWN}:
                continue
            slices = in_memory_slices(model, call, site.function)
            if slices is None:
                continue
            message = (
                f"`from_generator` over `{slices.generator.name}`, which only yields slices of "
                f"{', '.join(f'`{n}`' for n in slices.containers)}: Python runs for every element; "
                f"use `Dataset.from_tensor_slices({slices.structure})`"
            )
            yield self.finding(message, call.func, call, self._fix(context, call, site.function, slices))

    def _fix(self, context: RuleContext, call: cst.Call, scope, slices: GeneratorSlices) -> Optional[FixPlan]:
        if slices.generator.parent is not scope or not isinstance(call.func, cst.Attribute):
            return None
        receiver = context.model.module.code_for_node(call.func.value)
        text = f"{receiver}.from_tensor_slices({slices.structure})"
        return FixPlan(UNSAFE, f"Use `from_tensor_slices({slices.structure})`", (NodeEdit(call, "replace", text),))
