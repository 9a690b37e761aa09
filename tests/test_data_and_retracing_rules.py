"""What the inline examples of TFP105, TFP106, TFP207 and TFP210 cannot show: settings, and the
analysis questions they share (analysis/generators.py, elementwise.per_batch, shapes.py,
tf_functions.py, accumulation.py)."""

from __future__ import annotations

import libcst as cst

from tests.conftest import fix, lint
from tflint_perf.analysis.elementwise import APPROXIMATE, EXACT, per_batch
from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.tf_functions import find_tf_functions
from tflint_perf.checking.config import Settings

RETRACING = (
    "import tensorflow as tf\n\n@tf.function\ndef step(x):\n    return x * 2\n\n"
    "for n in range(10, 60):\n    step(tf.zeros([n]))\n"
)


def test_retracing_fix_uses_the_old_spelling_before_tensorflow_2_9():
    old = fix(RETRACING, ["TFP207"], settings=Settings(target_version=(2, 8)))
    assert "@tf.function(experimental_relax_shapes=True)" in old
    new = fix(RETRACING, ["TFP207"], settings=Settings(target_version=(2, 15)))
    assert "@tf.function(reduce_retracing=True)" in new
    assert fix(RETRACING, ["TFP207"]) == new  # unknown version: the current name


def test_retracing_empty_decorator_call_gets_the_keyword_inside():
    source = RETRACING.replace("@tf.function\n", "@tf.function()\n")
    assert "@tf.function(reduce_retracing=True)\n" in fix(source, ["TFP207"])


def test_retracing_reports_once_per_function():
    source = RETRACING + "for m in range(5, 9):\n    step(tf.ones([m, 2]))\n"
    assert [d.code for d in lint(source, ["TFP207"])] == ["TFP207"]


def test_tf_functions_know_their_options_and_callers():
    model = AnalysedModule(cst.parse_module(
        "import tensorflow as tf\n\n@tf.function(input_signature=[spec])\ndef a(x):\n    return x\n\n"
        "def b(x):\n    return x\n\nfast_b = tf.function(b)\nslow = tf.function(b, [spec])\n"
        "a(1)\nfast_b(2)\nfast_b(3)\n"
    ))
    found = {f.name: f for f in find_tf_functions(model)}
    assert found["a"].relaxes_shapes and len(found["a"].call_sites) == 1
    assert not found["fast_b"].relaxes_shapes and len(found["fast_b"].call_sites) == 2
    assert found["slow"].relaxes_shapes  # a positional input_signature


def _function(source: str):
    model = AnalysedModule(cst.parse_module("import tensorflow as tf\nK = 3\n" + source))
    return model, model.functions[-1]


def test_per_batch_sorts_exact_approximate_and_not_elementwise():
    cases = {
        "def f(x, y):\n    return tf.cast(x, tf.float32) / 255.0, y\n": EXACT,
        "def f(x):\n    x = tf.maximum(x, 0)\n    x *= K\n    return x\n": EXACT,
        "def f(x):\n    return tf.exp(x) + 1\n": APPROXIMATE,
        "def f(x, y):\n    return x * y\n": None,  # two inputs: broadcasting may differ once batched
        "def f(x):\n    return x[0]\n": None,
        "def f(x):\n    return tf.reduce_sum(x)\n": None,
        "def f(x, y):\n    return y, x\n": None,  # passes inputs through: nothing to vectorize
        "def f(d):\n    return {'a': d['a'] * 2, 'b': d['b']}\n": EXACT,
        "def f(x):\n    print(x)\n    return x * 2\n": None,
        "def f(x):\n    return x * 2, 1\n": None,  # a constant output: one per batch, not one per element
        "def f(x):\n    return tf.where(x > 0)\n": None,  # indices
        "def f(x):\n    return tf.where(x > 0, x, 0.0)\n": EXACT,
    }
    for source, expected in cases.items():
        model, function = _function(source)
        assert per_batch(model, function) == expected, source
