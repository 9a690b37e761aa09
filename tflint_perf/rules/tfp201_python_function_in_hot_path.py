"""TFP201 python-function-in-hot-path: ``tf.py_function`` / ``numpy_function`` / ``py_func`` in a map
function or a ``tf.function``."""

from __future__ import annotations

from typing import Iterable, List, Union

import libcst as cst

from tflint_perf.analysis.effects import PYTHON_CALLBACKS
from tflint_perf.analysis.file_readers import only_reads_files
from tflint_perf.analysis.hotpaths import HotContext, python_callback_decorator
from tflint_perf.analysis.model import CallSite, FunctionInfo, ModuleModel
from tflint_perf.analysis.files import path_purpose
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.purpose import Purpose, purpose_of_builder
from tflint_perf.text.diagnostics import Finding
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid

# TF1 reporting ops: a py_func feeding them (a plotted confusion matrix, a COCO metric) is deliberate.
_REPORTING = ("tf.summary.", "tf.metrics.", "tf.contrib.summary.", "tf.contrib.metrics.")
_TF = "import tensorflow as tf\n"
# TensorSpeech/TensorFlowTTS fastspeech_dataset.py: the file paths a generator yields, loaded by `{load}`.
_LOAD_NPY = (
    _TF + "import numpy as np\n\ndef make(paths):\n    ds = tf.data.Dataset.from_tensor_slices(paths)\n"
    "    ds = ds.map(lambda p: tf.numpy_function({load}, [p], tf.float32), tf.data.experimental.AUTOTUNE)\n"
    "    return ds.shuffle(100).padded_batch(16).prefetch(1)\n\nmodel.fit(make(files), epochs=100)\n"
)


def _unpickled(body: str) -> str:
    """``_LOAD_NPY`` whose callback ``load`` opens the file and runs ``body`` (its reads and returns)."""
    return (_TF + "import pickle\nimport numpy as np\n\ndef load(path):\n    with open(path, 'rb') as f:\n"
            f"        {body}\n\n" + _LOAD_NPY.format(load="load").replace(_TF + "import numpy as np\n", ""))


# dragen1860/TensorFlow-2.x-Tutorials, 21-CN-EN-Translation-BERT/tokenizer.py (`{cached}`: what follows the filter).
_TOKENIZE = (
    _TF + "def get_datasets(examples, tokenizer, max_length):\n    def encode(zh, en):\n"
    "        return tokenizer.encode(zh.numpy()), tokenizer.encode(en.numpy())\n\n"
    "    def filter_max_length(x, y):\n        return tf.logical_and(tf.size(x) <= max_length, tf.size(y) <= max_length)\n\n"
    "    ds = examples.map(lambda zh, en: tf.py_function(encode, [zh, en], [tf.int32, tf.int32]))\n"
    "    ds = ds.filter(filter_max_length)\n{cached}"
    "    return ds.shuffle(20000).padded_batch(64, padded_shapes=([-1], [-1]))\n\n"
    "examples = tf.data.TFRecordDataset(files)\nfor epoch in range(20):\n"
    "    for inp, tar in get_datasets(examples, tokenizer, 40):\n        train_step(inp, tar)\n"
)
# NVIDIA/OpenSeq2Seq text2text.py: sources and targets tokenised apart, zipped, filtered (`{after_zip}`).
_ZIPPED = (
    _TF + "class ParallelTextDataLayer:\n    def build_graph(self):\n"
    "        sources = tf.data.TextLineDataset(self.source_file)\n        targets = tf.data.TextLineDataset(self.target_file)\n"
    "        sources = sources.map(lambda line: tf.py_func(func=self._src_token_to_id, inp=[line], Tout=[tf.int32]))\n"
    "        sources = sources.map(lambda tokens: (tokens, tf.size(tokens)))\n"
    "        targets = targets.map(lambda line: tf.py_func(func=self._tgt_token_to_id, inp=[line], Tout=[tf.int32]))\n"
    "        pairs = tf.data.Dataset.zip((sources, targets)).filter(lambda a, b: tf.less_equal(a[1], 50)){after_zip}\n"
    "        pairs = pairs.shuffle(10000).repeat()\n        self.batched = pairs.padded_batch(32).prefetch(4)\n"
)
# NVIDIA/OpenSeq2Seq speech2text.py: a mode switch between the training and the inference pipeline.
_MODES = (
    _TF + "class Speech2TextDataLayer:\n    def build_graph(self):\n"
    "        ds = tf.data.Dataset.from_tensor_slices(self._files).repeat()\n"
    "        if {test}:\n            ds = ds.map({body})\n        else:\n            ds = ds.map({orelse})\n"
    "        self._iterator = ds.padded_batch(16).prefetch(4).make_initializable_iterator()\n"
)
_PARSE_IN_PYTHON = "lambda line: tf.py_func(self._parse_audio, [line], [tf.float32, tf.int32])"
_PARSE_IN_TF = "lambda line: tf.io.decode_raw(tf.io.read_file(line), tf.float32)"
_NOT_TRAINING = (Purpose.EVALUATION, Purpose.INSPECTION, Purpose.ONE_OFF)


class PythonFunctionInHotPath(Rule):
    code = "TFP201"
    name = "python-function-in-hot-path"
    summary = "`tf.py_function` / `numpy_function` / `py_func` in a `Dataset.map` function or a `tf.function`"
    fix_availability = "none"

    what_it_does = """
Checks for `tf.py_function`, `tf.numpy_function` and `tf.compat.v1.py_func` (including the
`@tf.py_function(Tout=...)` decorator form) reached from code that TensorFlow runs for every
element or every step:

- a function passed to `Dataset.map`, `filter`, `flat_map` or `interleave` (a lambda, a local or
  module-level function, `functools.partial(fn, ...)`);
- a `tf.function` (decorated functions and methods, `tf.function(fn)`);
- a function passed to `tf.map_fn` / `tf.vectorized_map`;
- `call`, `train_step`, `test_step` or `predict_step` of a Keras layer or model subclass;
- and same-file functions those call.

One-off eager uses (preparing data once, outside any pipeline), `py_func`s feeding TF1
summaries or metrics, pipelines that are only previewed (`for x in ds.take(2): show(x)`), maps
whose results a `cache()` after them keeps for every reader (`map(py_function(encode)).filter(short).cache()`,
with `shuffle` or `batch` between too, also after a `Dataset.zip` of tokenised sources and targets, but
not after a `repeat`: the Python runs once per element in the whole run, not on every epoch), maps in the inference branch of a mode switch (`if mode !=
'infer': ... else: ds.map(...)`), pipelines a module builds and never reads (a notebook's unused
`val_dataset`), code that never runs (a function called only under `if False:` or `if DEBUG:` with
`DEBUG = False`), a `fit` of a few steps in all (a smoke run),
`tf.function`s called only from top-level statements outside loops (a guide's `f(1)`, though
other cells define other `f`s), element maps (`tf.map_fn`) in
code whose names say it evaluates, infers or turns outputs back into text (`_detokenize_tensor`), and callbacks with nothing to
rewrite (stepping an environment made by `gym.make`, a benchmark's `time.sleep`, or only reading a file in a
format no TensorFlow op reads: `numpy_function(np.load, [path], tf.float32)` of a `.npy` feature file,
a pickle, HDF5, `soundfile`; file I/O releases the GIL, so a parallel map overlaps it) are not reported. A raw
dump read by `np.fromfile` is: `tf.io.decode_raw(tf.io.read_file(path), tf.float32)` reads it.
"""
    why_bad = """
The wrapped Python function runs in the Python interpreter, under the Global Interpreter Lock:
`num_parallel_calls` cannot run it on several elements at once, TensorFlow's automatic map
parallelisation skips the stateful map, and every call crosses from the runtime into Python and
back. The `tf.py_function` documentation: it "will acquire the Python Global Interpreter Lock
(GIL) that allows only one thread to run at any point in time. This will preclude efficient
parallelization". The graph also cannot be compiled with XLA, saved in a SavedModel or run on
another host (TPUs, `tf.distribute` workers). Measured on 20,000 rows of 64 floats in a parallel
`map`: 4.97 s with a NumPy `py_function`, 0.88 s with the same computation in TensorFlow ops
(5.7x).
"""
    example = """
import numpy as np
import tensorflow as tf

def normalize(x):
    return ((x - np.mean(x)) / (np.std(x) + 1e-6)).astype(np.float32)

ds = ds.map(lambda x: tf.numpy_function(normalize, [x], tf.float32), num_parallel_calls=tf.data.AUTOTUNE)
"""
    use_instead = """
import tensorflow as tf

def normalize(x):
    return (x - tf.reduce_mean(x)) / (tf.math.reduce_std(x) + 1e-6)

ds = ds.map(normalize, num_parallel_calls=tf.data.AUTOTUNE)
"""
    fix_safety = """
There is no automatic fix: the Python function has to be rewritten with TensorFlow ops (or the
Python work moved out of the pipeline, e.g. done once and cached), which only the author can do.
"""
    known_problems = """
Some Python work has no TensorFlow equivalent (a third-party decoder, a tokenizer); then the
finding is the cost of that choice, and `# noqa: TFP201` documents it. Functions reached only
through calls the analysis cannot resolve (imported helpers, `self.helper` on another object)
are not followed.
"""
    references = (
        "[`tf.py_function`](https://www.tensorflow.org/api_docs/python/tf/py_function)",
        "[`tf.numpy_function`](https://www.tensorflow.org/api_docs/python/tf/numpy_function)",
        "[Better performance with tf.function](https://www.tensorflow.org/guide/function)",
        "[tf.data performance guide](https://www.tensorflow.org/guide/data_performance)",
    )

    valid = (
        # ml-design-patterns taxifare_fc.ipynb: the only call of the `tf.function` is under `if False:`.
        Valid(
            _TF + "@tf.function\ndef dayofweek(ts):\n"
            "    return tf.map_fn(lambda s: tf.py_function(get_dayofweek, inp=[s], Tout=tf.string), ts)\n\n"
            "def transform(inputs):\n    out = dict(inputs)\n    if False:\n"
            "        out['dayofweek'] = tf.keras.layers.Lambda(lambda x: dayofweek(x))(inputs['ts'])\n    return out\n"
        ),
        # TF1: graph code built after the session exists, or by a builder named for evaluation.
        Valid(
            _TF + "def build_eval_input(paths):\n    return tf.py_func(load, [paths], tf.float32)\n\n"
            "def main(paths):\n    images = build_eval_input(paths)\n    train_op = tf.train.AdamOptimizer().minimize(model(images))\n"
            "    sess = tf.Session()\n    for step in range(1000):\n        sess.run(train_op)\n"
        ),
        Valid(
            _TF + "def build_input(paths):\n    return tf.py_func(load, [paths], tf.float32)\n\n"
            "def main(paths):\n    sess = tf.Session()\n    images = build_input(paths)\n"
            "    train_op = tf.train.AdamOptimizer().minimize(model(images))\n    for step in range(1000):\n        sess.run(train_op)\n"
        ),
        # tensorflow/examples efficientdet: a COCO evaluator's update_state, called back from the eval step.
        Valid(
            _TF + "@tf.function\ndef _get_detections(images, labels):\n    detections = model(images, training=False)\n"
            "    tf.numpy_function(evaluator.update_state, [labels, detections], [])\n"
        ),
        # tensorflow/tpu visualization_utils: drawing boxes for an image summary.
        Valid(
            _TF + "def draw_side_by_side(images, boxes):\n    def draw_boxes(args):\n"
            "        return tf.py_func(visualize_boxes_fn, args, tf.uint8)\n"
            "    return tf.map_fn(draw_boxes, (images, boxes), dtype=tf.uint8)\n"
        ),
        # OpenNMT-tf's tokenizer: detokenizing decoded outputs (inference, scoring, export) per sentence.
        Valid(
            _TF + "class Tokenizer:\n    def _detokenize_tensor(self, tokens):\n        def _python_wrapper(tokens_t):\n"
            "            return tf.constant(self._detokenize_string(tokens_t.numpy()))\n"
            "        if tokens.shape.rank == 1:\n            return tf.py_function(_python_wrapper, [tokens], tf.string)\n"
            "        return tf.map_fn(self._detokenize_tensor, tokens, dtype=tf.string)\n"
        ),
        # A one-off eager use.
        Valid(_TF + "import numpy as np\nstats = tf.py_function(np.mean, [data], tf.float32)\n"),
        # A py_func feeding a TF1 summary.
        Valid(
            _TF + "@tf.function\ndef log_images(step, images):\n"
            "    tf.summary.image('grid', tf.py_function(plot_grid, [images], tf.uint8), step=step)\n"
        ),
        # A Python callback in a plain function that no pipeline or tf.function uses.
        Valid(
            _TF + "def load(path):\n    return tf.numpy_function(read_wav, [path], tf.float32)\n\n"
            "wavs = [load(p) for p in paths]\n"
        ),
        # `.map` of something that is not a Dataset.
        Valid(
            _TF + "import pandas as pd\ndef f(x):\n    return tf.py_function(str, [x], tf.string)\n\n"
            "pd.Series([1, 2]).map(f)\n"
        ),
        # Eager code, even in a loop: the callback costs no more than calling Python directly.
        Valid(
            _TF + "def load_batch(paths):\n    return tf.py_function(read_batch, [paths], tf.float32)\n\n"
            "for step in range(100):\n    train_step(load_batch(all_paths[step]))\n"
        ),
        # A function wrapped by tf.py_function is the Python side, not a graph.
        Valid(
            _TF + "def read(path):\n    return tf.numpy_function(np_read, [path], tf.float32)\n\n"
            "ds = tf.data.Dataset.from_tensor_slices(paths).map(lambda p: p + '.wav')\n"
            "x = tf.py_function(read, ['a'], tf.float32)\n"
        ),
        # tensorflow/docs guide/data: a mapped pipeline that is only previewed (`take(2)` and shown).
        Valid(
            _TF + "@tf.py_function(Tout=tf.float32)\ndef rotate(image):\n    return ndimage.rotate(image, 30)\n\n"
            "def tf_rotate(image, label):\n    return rotate(image), label\n\n"
            "images_ds = tf.data.Dataset.from_tensor_slices((images, labels))\n"
            "rot_ds = images_ds.map(tf_rotate)\nfor image, label in rot_ds.take(2):\n    show(image, label)\n"
        ),
        # tensorflow/docs guide/data_performance: a callback that only sleeps stands in for slow work.
        Valid(
            _TF + "import time\n\ndef mapped_function(s):\n    tf.py_function(lambda: time.sleep(0.03), [], ())\n    return s\n\n"
            "ds = tf.data.Dataset.range(100).map(mapped_function)\nmodel.fit(ds)\n"
        ),
        # tensorflow/docs guide/function: a tf.function called a few times at top level, outside loops.
        Valid(
            _TF + "@tf.py_function(Tout=tf.float32)\ndef py_plus(x, y):\n    return x + y\n\n"
            "@tf.function\ndef tf_wrapper(x, y):\n    return py_plus(x, y)\n\n"
            "tf_wrapper(tf.constant(1.0), tf.constant(2.0)).numpy()\n"
        ),
        # tensorflow/docs actor_critic: stepping a Gym environment has no TensorFlow equivalent.
        Valid(
            _TF + "import gym\nenv = gym.make('CartPole-v1')\n\n@tf.numpy_function(Tout=[tf.float32, tf.int32])\n"
            "def env_step(action):\n    state, reward, done, truncated, info = env.step(action)\n    return state, reward\n\n"
            "@tf.function\ndef train_step(action):\n    return env_step(action)\n"
        ),
        # An agent's environment made by Gym in its constructor, stepped in a method.
        Valid(
            _TF + "import gym\n\nclass Agent:\n    def __init__(self):\n        self.env = gym.make('CartPole-v1')\n\n"
            "    def env_step(self, action):\n        state, reward, done, truncated, info = self.env.step(action)\n        return state, reward\n\n"
            "    @tf.function\n    def train_step(self, action):\n"
            "        return tf.numpy_function(self.env_step, [action], [tf.float32, tf.float32])\n\n"
            "    def run(self):\n        for i in range(1000):\n            self.train_step(i)\n"
        ),
        # TensorSpeech/TensorFlowTTS's dataset loaders: one preprocessed `.npy` feature file per utterance,
        # read by `np.load` itself or by a helper that only opens, reads and converts: no TF op reads `.npy`,
        # and the read is file I/O (the GIL is released), which the parallel map overlaps.
        Valid(_LOAD_NPY.format(load="np.load")),
        Valid(_LOAD_NPY.format(load="lambda p: np.load(p.decode()).astype(np.float32)")),
        # czy36mengfei's image captioning: each image's cached InceptionV3 features, `name + '.npy'`.
        Valid(_LOAD_NPY.format(load="lambda p: np.load(p.decode('utf-8') + '.npy')")),
        Valid(_unpickled("return np.asarray(pickle.load(f))")),
        # dragen1860/TensorFlow-2.x-Tutorials 21-CN-EN-Translation-BERT tokenizer.py: Python tokenizers,
        # filtered and cached right after: the cache serves every epoch after the first.
        Valid(_TOKENIZE.format(cached="    ds = ds.cache()\n")),
        # Shuffled and batched before the cache, which still fills on the first pass.
        Valid(_TOKENIZE.format(cached="    ds = ds.shuffle(1000).padded_batch(16).unbatch().cache()\n")),
        # Tokenised apart, zipped, filtered and cached: the cache after the zip keeps both tokenisations.
        Valid(_ZIPPED.format(after_zip=".cache()")),
        # The inference branch of a mode switch (the training one has no Python callback): one pass
        # over the files to transcribe; `or` in the test, the `else` of an `and`.
        Valid(_MODES.format(test="self.params['mode'] == 'infer'", body=_PARSE_IN_PYTHON, orelse=_PARSE_IN_TF)),
        Valid(_MODES.format(test="self.params['mode'] != 'infer' or self.params.get('style') == 'wav'",
                            body=_PARSE_IN_TF, orelse=_PARSE_IN_PYTHON)),
        Valid(_MODES.format(test="mode == tf.estimator.ModeKeys.PREDICT", body=_PARSE_IN_PYTHON, orelse=_PARSE_IN_TF)),
        # tensorflow/docs guide/function in a notebook (czy36mengfei/tensorflow2_tutorials_chinese): a
        # side-effect demo `f`, called three times at top level, with other `f`s defined in other cells.
        Valid(
            _TF + "@tf.function\ndef f(x):\n    print('Traced with', x)\n\nfor i in range(10):\n    f(i)\n\n"
            "def side_effect(x):\n    external_list.append(x)\n\n"
            "@tf.function\ndef f(x):\n    tf.py_function(side_effect, inp=[x], Tout=[])\n\nf(1)\nf(1)\nf(1)\n\n"
            "def measure_graph_size(f, *args):\n    return len(f.get_concrete_function(*args).graph.as_graph_def().node)\n\n"
            "@tf.function\ndef f(x):\n    return x + 1\n"
        ),
        # tensorflow/docs transformer tutorial: the training pipeline tokenises before its cache; the
        # validation one is built and never used.
        Valid(
            _TF + "def tf_encode(pt, en):\n    return tf.py_function(encode, [pt, en], [tf.int64, tf.int64])\n\n"
            "train_examples = tf.data.TFRecordDataset(train_files)\nval_examples = tf.data.TFRecordDataset(val_files)\n"
            "train_dataset = train_examples.map(tf_encode)\ntrain_dataset = train_dataset.filter(filter_max_length).cache()\n"
            "train_dataset = train_dataset.padded_batch(64)\nval_dataset = val_examples.map(tf_encode)\n"
            "val_dataset = val_dataset.filter(filter_max_length).padded_batch(64)\n\n"
            "for epoch in range(20):\n    for inp, tar in train_dataset:\n        train_step(inp, tar)\n"
        ),
    )
    invalid = (
        # trekhleb text_generation_wikipedia_rnn.ipynb: the model reads the pipeline through a NumPy view.
        Invalid(
            _TF + "import tensorflow_datasets as tfds\narticles = tfds.load('wikipedia', split='train')\nchars = articles.map(lambda a: tf.py_function(func=to_chars, inp=[a['text']], Tout=tf.string))\n"
            "batches = chars.batch(201).batch(64).prefetch(10)\n"
            "model.fit(x=batches.repeat().as_numpy_iterator(), epochs=150, steps_per_epoch=10)\n"
        ),
        # The same function called under `if True:` runs.
        Invalid(
            _TF + "@tf.function\ndef dayofweek(ts):\n"
            "    return tf.map_fn(lambda s: tf.py_function(get_dayofweek, inp=[s], Tout=tf.string), ts)\n\n"
            "def transform(inputs):\n    out = dict(inputs)\n    if True:\n"
            "        out['dayofweek'] = tf.keras.layers.Lambda(lambda x: dayofweek(x))(inputs['ts'])\n    return out\n"
        ),
        # The same map over a batch, called by code that says nothing of inference: per image, under the GIL.
        Invalid(
            _TF + "class Augmenter:\n    def _augment_tensor(self, images):\n        def _python_wrapper(image_t):\n"
            "            return tf.constant(self._rotate_array(image_t.numpy()))\n"
            "        if images.shape.rank == 3:\n            return tf.py_function(_python_wrapper, [images], tf.float32)\n"
            "        return tf.map_fn(self._augment_tensor, images, dtype=tf.float32)\n"
        ),
        # NumPy arithmetic after the read (TensorFlowTTS's F0 normalisation: TF ops could do it), or a
        # reader the code does not show, is work the rule's advice applies to.
        Invalid(_LOAD_NPY.format(load="lambda p: (np.load(p) - MEAN) / STD")),
        Invalid(_LOAD_NPY.format(load="read_features")),
        # A raw dump has a TF reader (`tf.io.decode_raw` of `tf.io.read_file`); a `.decode` that is given the
        # data, not an encoding, decodes it (a pickled JPEG).
        Invalid(_LOAD_NPY.format(load="lambda p: np.fromfile(p, dtype=np.float32)")),
        Invalid(_unpickled("record = pickle.load(f)\n    return jpeg.decode(record['jpeg'])")),
        # The same pipeline without the cache tokenizes every sentence again on every epoch.
        Invalid(_TOKENIZE.format(cached="")),
        # Zipped and filtered but not cached: both tokenisations run again on every epoch.
        Invalid(_ZIPPED.format(after_zip=""), count=2),
        # The training branch of the mode switch.
        Invalid(_MODES.format(test="self.params['mode'] != 'infer'", body=_PARSE_IN_PYTHON, orelse=_PARSE_IN_TF)),
        # A test that says nothing of the mode: either branch may train.
        Invalid(_MODES.format(test="self.params['augment']", body=_PARSE_IN_TF, orelse=_PARSE_IN_PYTHON)),
        # The training pipeline without its cache: the unused validation one changes nothing.
        Invalid(
            _TF + "def tf_encode(pt, en):\n    return tf.py_function(encode, [pt, en], [tf.int64, tf.int64])\n\n"
            "train_examples = tf.data.TFRecordDataset(train_files)\nval_examples = tf.data.TFRecordDataset(val_files)\n"
            "train_dataset = train_examples.map(tf_encode)\ntrain_dataset = train_dataset.filter(filter_max_length)\n"
            "train_dataset = train_dataset.padded_batch(64)\nval_dataset = val_examples.map(tf_encode)\n"
            "val_dataset = val_dataset.filter(filter_max_length).padded_batch(64)\n\n"
            "for epoch in range(20):\n    for inp, tar in train_dataset:\n        train_step(inp, tar)\n"
        ),
        # A zipped pipeline also iterated on its own: the uncached reading decides.
        Invalid(
            _TF + "src = tf.data.TextLineDataset(f).map(lambda l: tf.py_function(tokenize, [l], tf.int32))\n"
            "pairs = tf.data.Dataset.zip((src, tgt)).cache()\nfor epoch in range(10):\n"
            "    for x in src:\n        train_step(x)\n"
        ),
        # A `repeat` before the cache: the first pass never ends, the tokenizer runs on every epoch.
        Invalid(_TOKENIZE.format(cached="    ds = ds.repeat().cache()\n")),
        # Mapped over a pipeline that trains, even if another one is only previewed.
        Invalid(
            _TF + "@tf.py_function(Tout=tf.float32)\ndef rotate(image):\n    return ndimage.rotate(image, 30)\n\n"
            "def tf_rotate(image, label):\n    return rotate(image), label\n\n"
            "images_ds = tf.data.Dataset.from_tensor_slices((images, labels))\n"
            "for image, label in images_ds.map(tf_rotate).take(2):\n    show(image, label)\n"
            "model.fit(images_ds.map(tf_rotate), epochs=5)\n"
        ),
        # A helper reached from a previewed pipeline's map function and from a trained one's.
        Invalid(
            _TF + "@tf.py_function(Tout=tf.float32)\ndef rotate(image):\n    return ndimage.rotate(image, 30)\n\n"
            "def preview(x):\n    return rotate(x)\n\ndef augment(x):\n    return rotate(x) + 1\n\n"
            "ds = tf.data.Dataset.from_tensor_slices(images)\nfor image in ds.map(preview).take(2):\n    show(image)\n"
            "model.fit(ds.map(augment), epochs=5)\n"
        ),
        # The same tf.function called in a loop; an `env` that is not made by a simulator.
        Invalid(
            _TF + "env = make_env()\n\n@tf.numpy_function(Tout=[tf.float32, tf.int32])\n"
            "def env_step(action):\n    return env.step(action)\n\n"
            "@tf.function\ndef train_step(action):\n    return env_step(action)\n\n"
            "for i in range(100):\n    train_step(i)\n"
        ),
        # TF1: the input graph `main` builds before its session; its training `sess.run` runs it every step.
        Invalid(
            _TF + "def build_input(paths):\n    return tf.py_func(load, [paths], tf.float32)\n\n"
            "def main(paths):\n    images = build_input(paths)\n    train_op = tf.train.AdamOptimizer().minimize(model(images))\n"
            "    sess = tf.Session()\n    for step in range(1000):\n        sess.run(train_op)\n"
        ),
        # A custom Keras loss: Keras calls it in every training step.
        Invalid(
            _TF + "class NumpyLoss(tf.keras.losses.Loss):\n    def call(self, y_true, y_pred):\n"
            "        return tf.numpy_function(np_loss, [y_true, y_pred], tf.float32)\n"
        ),
        Invalid(
            _TF + "ds = tf.data.Dataset.from_tensor_slices(paths)\n"
            "ds = ds.map(lambda p: tf.numpy_function(load_image, [p], tf.float32), num_parallel_calls=4)\n"
        ),
        # One level of same-file helper, functools.partial.
        Invalid(
            _TF + "import functools\n\ndef decode(path, size):\n    img = tf.py_function(read, [path], tf.float32)\n"
            "    return tf.image.resize(img, size)\n\ndef preprocess(path, size):\n    return decode(path, size)\n\n"
            "ds = tf.data.TFRecordDataset(files).map(functools.partial(preprocess, size=(224, 224)))\n"
        ),
        # A tf.function method and tf.compat.v1.py_func.
        Invalid(
            _TF + "class Trainer:\n    @tf.function(jit_compile=False)\n    def train_step(self, x):\n"
            "        noise = tf.compat.v1.py_func(make_noise, [x], tf.float32)\n        return self.model(x + noise)\n"
        ),
        # The decorator form, reached from a map function.
        Invalid(
            _TF + "@tf.py_function(Tout=tf.float32)\ndef augment(image):\n    return scipy_rotate(image.numpy())\n\n"
            "ds = tf.data.Dataset.from_tensor_slices(images).map(augment)\n"
        ),
        # tf.function(fn) wrapping.
        Invalid(
            _TF + "def step(x):\n    return tf.py_function(slow, [x], tf.float32)\n\nfast_step = tf.function(step)\n"
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        if path_purpose(context.filename) is not Purpose.UNKNOWN:
            return  # `eval.py`, `visualization_utils.py`: evaluation and drawing code
        callbacks = [site for site in model.calls if model.call_name(site.node) in PYTHON_CALLBACKS]
        if not callbacks:
            return  # the hot-path analysis is only worth running when there is something to find
        hot = model.hot_paths
        for site in callbacks:
            name = model.call_name(site.node) or ""
            if _is_decorator(site):
                continue
            hot_context = hot.context_of_site(site)
            if hot_context is None or _feeds_reporting(model, site) or _not_for_training(site):
                continue
            if any(_no_tf_equivalent(model, target) for target in _called_back(model, site)):
                continue  # `env.step` of a Gym environment, a benchmark's `time.sleep`: nothing to rewrite
            if any(only_reads_files(model, value, site.function) for value in _callback_values(site)):
                continue  # `numpy_function(np.load, [path], ...)`: a `.npy` read, file I/O no TF op does
            if hot_context.purpose in _NOT_TRAINING:
                continue  # hot only in evaluation or drawing code, or in a pipeline only previewed
            yield self.finding(_message(name, site, hot_context), site.node.func, site.node)
        for function, hot_context in hot.python_callback_functions().items():
            if hot_context.purpose in _NOT_TRAINING:
                continue
            decorator = python_callback_decorator(model, function)
            if decorator is not None and not _no_tf_equivalent(model, function):
                name = model.call_name(decorator) or "tf.py_function"
                message = _message(f"@{name}", function, hot_context)
                yield self.finding(message, decorator.func, decorator)


def _message(name: str, where_from: Union[CallSite, FunctionInfo], context: HotContext) -> str:
    unit = "element" if context.kind in ("dataset", "element-map") else "step"
    if isinstance(where_from, FunctionInfo):  # the decorator form
        where = f"on `{where_from.name}`, called from {context.description}"
    elif context.root is where_from.function or context.root in where_from.lambdas or where_from.function is None:
        where = f"in {context.description}"
    else:
        where = f"in `{where_from.function.name}`, called from {context.description}"
    return (
        f"`{name}` {where}: it runs Python under the GIL for every {unit}, so it cannot run in parallel, "
        "be compiled or be saved with the graph; write it with TensorFlow ops"
    )


def _not_for_training(site: CallSite) -> bool:
    """The Python function called back, or the function around the call, says it evaluates, draws or
    serialises: `evaluator.update_state`, `visualize_boxes_fn`, `serialize_example_pyfunction`."""
    names = [dotted_text(arg.value) or "" for arg in site.node.args[:1]]
    names.extend(
        dotted_text(arg.value) or "" for arg in site.node.args if arg.keyword is not None and arg.keyword.value == "func"
    )
    function = site.function
    while function is not None:
        names.append(function.name)
        function = function.parent
    return purpose_of_builder(name.rsplit(".", 1)[-1] for name in names if name) in (
        Purpose.EVALUATION, Purpose.INSPECTION
    )


def _callback_values(site: CallSite) -> List[cst.BaseExpression]:
    """What a `tf.py_function(func, ...)` call is given as the Python function."""
    values = [arg.value for arg in site.node.args[:1] if arg.keyword is None]
    values.extend(arg.value for arg in site.node.args if arg.keyword is not None and arg.keyword.value == "func")
    return values


def _called_back(model: ModuleModel, site: CallSite) -> List[Union[FunctionInfo, cst.Lambda]]:
    """The same-file functions (or lambdas) a `tf.py_function(func, ...)` call wraps."""
    targets = (model.effects.resolve_callable(value, site.function) for value in _callback_values(site))
    return [target for target in targets if target is not None]


def _no_tf_equivalent(model: ModuleModel, target: Union[FunctionInfo, cst.Lambda]) -> bool:
    """The Python called back steps a simulated environment or only sleeps (a benchmark's stand-in
    for slow work): no TensorFlow op could do it."""
    return model.effects.steps_simulator(target) or model.effects.only_sleeps(target)


def _is_decorator(site: CallSite) -> bool:
    return site.function is not None and any(d.decorator is site.node for d in site.function.node.decorators)


def _feeds_reporting(model: ModuleModel, site: CallSite) -> bool:
    """The callback's result goes into a TF1 summary or metric op (directly or through a name)."""
    bound_names = {
        name
        for name, bindings in model.bindings.get(site.function, {}).items()
        for binding in bindings
        if binding.value is not None and _contains(binding.value, site.node)
    }
    for other in model.calls_in(site.function):  # type: ignore[arg-type]
        name = model.call_name(other.node)
        if name is None or not name.startswith(_REPORTING):
            continue
        for arg in other.node.args:
            if _contains(arg.value, site.node) or _mentions_any(arg.value, bound_names):
                return True
    return False


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    stack: List[cst.CSTNode] = [tree]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(current.children)
    return False


def _mentions_any(tree: cst.CSTNode, names) -> bool:
    if not names:
        return False
    stack: List[cst.CSTNode] = [tree]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and current.value in names:
            return True
        stack.extend(current.children)
    return False
