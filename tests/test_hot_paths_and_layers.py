"""The analysis layer behind TFP103-TFP302, queried directly, and what inline examples cannot show
(file names, options, line endings, multi-line rewrites)."""

from __future__ import annotations

import textwrap

import libcst as cst

from tests.conftest import fix, lint
from tflint_perf.analysis.feeds import Feeds, Iteration
from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.sessions import Sessions
from tflint_perf.analysis.values import PYTHON, TENSOR, UNKNOWN, ValueKinds
from tflint_perf.checking.config import Settings


def model_of(source: str) -> AnalysedModule:
    return AnalysedModule(cst.parse_module(textwrap.dedent(source)))


def site_of(model: AnalysedModule, text: str):
    """The call site whose code is ``text``."""
    matches = [s for s in model.calls if model.module.code_for_node(s.node) == text]
    assert len(matches) == 1, [model.module.code_for_node(s.node) for s in model.calls]
    return matches[0]


def values_of(model: AnalysedModule, bindings):
    return [model.module.code_for_node(b.value) if b.value is not None else b.kind for b in bindings]


# -- reaching definitions ------------------------------------------------------------------------


def test_reaching_definitions_follow_straight_line_code_and_join_branches():
    model = model_of(
        """
        def build(x, flag):
            x = first(x)
            x = second(x)
            if flag:
                x = third(x)
            else:
                x = fourth(x)
            use(x)
            x = fifth(x)
        """
    )
    function = model.module_functions["build"]
    use = site_of(model, "use(x)")
    # Both branches may reach; so may the binding before the `if` (the approximation errs towards "may").
    assert values_of(model, model.reaching("x", function, use.place)) == ["second(x)", "third(x)", "fourth(x)"]
    second = site_of(model, "second(x)")
    assert values_of(model, model.reaching("x", function, second.place)) == ["first(x)"]
    first = site_of(model, "first(x)")
    assert values_of(model, model.reaching("x", function, first.place)) == ["param"]


def test_reaching_sees_lambda_parameters_and_closures():
    model = model_of(
        """
        scale = 2.0
        def outer(v):
            f = lambda v: g(v * scale)
        """
    )
    site = site_of(model, "g(v * scale)")
    assert model.reaching("v", site.function, site.place, site.lambdas) is None
    assert values_of(model, model.reaching("scale", site.function, site.place, site.lambdas)) == ["2.0"]


def test_value_kinds_tell_python_values_from_tensors():
    model = model_of(
        """
        import tensorflow as tf
        THRESHOLD = 3
        def f(x, use_abs=False, training=None):
            s = tf.reduce_sum(x)
            for i in range(10):
                probe(s > 0, THRESHOLD > 2, use_abs, training, i, x)
        """
    )
    site = site_of(model, "probe(s > 0, THRESHOLD > 2, use_abs, training, i, x)")
    kinds = ValueKinds(model)
    got = [kinds.kind(arg.value, site.function, site.place, site.lambdas) for arg in site.node.args]
    assert got == [TENSOR, PYTHON, PYTHON, UNKNOWN, PYTHON, UNKNOWN]


# -- call graph and hot paths --------------------------------------------------------------------


def test_loops_reaching_a_function_through_two_levels_of_callers():
    model = model_of(
        """
        def inner():
            work()
        def middle():
            inner()
        for step in range(10):
            middle()
        def unused():
            inner2()
        """
    )
    loops = model.call_graph.loops_reaching(model.module_functions["inner"])
    assert [type(loop).__name__ for loop in loops] == ["For"]
    assert not model.call_graph.loops_reaching(model.module_functions["unused"])


def test_hot_paths_roots_and_reach():
    model = model_of(
        """
        import functools
        import tensorflow as tf
        from tensorflow import keras

        def helper(x):
            return x
        def parse(x, size):
            return helper(x)
        def eager_only(x):
            return x

        @tf.py_function(Tout=tf.float32)
        def py_side(x):
            return x

        @tf.function(jit_compile=True)
        def step(x):
            return py_side(x)

        def wrapped(x):
            return x
        fast = tf.function(wrapped)

        class Block(keras.layers.Layer):
            def call(self, x):
                return x
            def get_config(self):
                return {}

        ds = tf.data.Dataset.range(3).map(functools.partial(parse, size=2))
        eager_only(1)
        """
    )
    hot = model.hot_paths
    functions = model.module_functions
    assert hot.context_of(functions["parse"]).kind == "dataset"
    assert hot.context_of(functions["helper"]).kind == "dataset"  # reached from the map function
    assert hot.context_of(functions["step"]).kind == "tf.function"
    assert hot.context_of(functions["wrapped"]).kind == "tf.function"
    assert hot.context_of(model.classes["Block"].methods["call"]).kind == "keras"
    assert hot.context_of(model.classes["Block"].methods["get_config"]) is None
    assert hot.context_of(functions["eager_only"]) is None
    # A py_function-decorated function is reached, but its body is Python, not a hot graph.
    assert hot.context_of(functions["py_side"]) is None
    assert list(hot.python_callback_functions()) == [functions["py_side"]]


def test_a_map_on_something_that_is_not_a_dataset_is_not_a_hot_path():
    model = model_of(
        """
        import pandas as pd
        import tensorflow as tf
        def f(x):
            return x
        pd.Series([1]).map(f)
        """
    )
    assert model.hot_paths.context_of(model.module_functions["f"]) is None


# -- output layers -------------------------------------------------------------------------------


def _output_verdicts(source: str):
    model = model_of(source)
    layers = model.layers
    return {
        model.module.code_for_node(site.node): layers.is_output_layer(site.node)
        for site in model.calls
        if isinstance((layers.width_expression(site.node) or (None, None, None))[2], cst.Integer)
    }


def test_output_layers_sequential_add_and_functional():
    verdicts = _output_verdicts(
        """
        from tensorflow import keras
        from tensorflow.keras import layers
        seq = keras.Sequential([layers.Dense(64), layers.Dense(20), layers.Dropout(0.5)])
        tagger = keras.Sequential([layers.LSTM(88, return_sequences=True), layers.TimeDistributed(layers.Dense(92))])
        added = keras.Sequential()
        added.add(layers.Dense(72))
        added.add(layers.Dense(24))
        inputs = keras.Input(shape=(8,))
        x = layers.Dense(40)(inputs)
        x = layers.Dense(12)(x)
        probs = layers.Activation("softmax")(x)
        model = keras.Model(inputs, probs)
        """
    )
    assert verdicts == {
        "layers.Dense(64)": False,
        "layers.Dense(20)": True,
        "layers.LSTM(88, return_sequences=True)": False,
        "layers.Dense(92)": True,
        "layers.Dense(72)": False,
        "layers.Dense(24)": True,
        "layers.Dense(40)": False,
        "layers.Dense(12)": True,
    }


def test_output_layers_subclassed_helpers_and_heads():
    verdicts = _output_verdicts(
        """
        import tensorflow as tf
        from tensorflow import keras

        def head(x):
            return keras.layers.Dense(36)(x)

        class Net(keras.Model):
            def __init__(self):
                super().__init__()
                self.body = keras.layers.Dense(44)
                self.out = keras.layers.Dense(52)

            def call(self, x):
                x = self.body(x)
                x = self.out(x)
                return x

        logits = keras.layers.Dense(60)(features)
        probabilities = tf.nn.softmax(logits)
        gate = keras.layers.Dense(68, activation="sigmoid")
        """
    )
    assert verdicts == {
        "keras.layers.Dense(36)": True,
        "keras.layers.Dense(44)": False,
        "keras.layers.Dense(52)": True,
        "keras.layers.Dense(60)": True,
        'keras.layers.Dense(68, activation="sigmoid")': True,
    }


# -- sessions and feeds --------------------------------------------------------------------------


def test_session_receivers():
    model = model_of(
        """
        import tensorflow as tf
        import onnxruntime as ort
        def helper_session():
            return tf.compat.v1.Session()
        with tf.compat.v1.Session() as a:
            a.run(x)
        b = ort.InferenceSession("m.onnx")
        b.run(x)
        c = helper_session()
        c.run(x)
        def f(sess, runner):
            sess.run(x)
            runner.run(x)
        """
    )
    sessions = Sessions(model)
    verdicts = {
        model.module.code_for_node(s.node.func.value): sessions.is_session(s.node.func.value, s)
        for s in model.calls
        if isinstance(s.node.func, cst.Attribute) and s.node.func.attr.value == "run"
    }
    assert verdicts == {"a": True, "b": False, "c": True, "sess": True, "runner": False}


def test_feeds_built_before_the_loop_are_not_per_step_data():
    model = model_of(
        """
        validate = {x: x_val, y: y_val}
        for i in range(100):
            xb = batches[i]
            feed = {x: xb}
            sess.run(a, feed_dict=validate)
            sess.run(b, feed_dict=feed)
            sess.run(c, feed_dict={x: x_val[:10], lr: 0.1})
            sess.run(d, feed_dict={x: x_val[i:i + 10]})
        """
    )
    feeds = Feeds(model)
    per_step = {}
    for fetch in "abcd":
        site = site_of(model, next(
            model.module.code_for_node(s.node) for s in model.calls
            if model.module.code_for_node(s.node).startswith(f"sess.run({fetch},")
        ))
        iteration = Iteration(frozenset(site.loops), None)
        feed = site.node.args[1].value
        per_step[fetch] = feeds.per_step_entry(feed, site, iteration) is not None
    assert per_step == {"a": False, "b": True, "c": False, "d": True}


# -- rules: what examples cannot show ------------------------------------------------------------

_MIXED = "keras.mixed_precision.set_global_policy('mixed_float16')\n"
HIDDEN = "from tensorflow import keras\n" + _MIXED + "model = keras.Sequential([keras.layers.Dense(100), keras.layers.Dense(10)])\n"
FIT = "import tensorflow as tf\nfrom tensorflow import keras\n" + _MIXED + "model.fit(x, y, batch_size=100)\n"


_A_TEST = "\n\ndef test_model():\n    assert model is not None\n"


def test_alignment_rules_skip_test_files():
    for name in ("tests/test_model.py", "src/tests/helpers.py", "conftest.py"):
        assert lint(HIDDEN, ["TFP301"], filename=name) == []
        assert lint(FIT, ["TFP302"], filename=name) == []
    # Named like a test: test code when it holds one; a script named so that holds none is checked.
    for name in ("pkg/model_test.py", "test_train.py"):
        assert lint(HIDDEN + _A_TEST, ["TFP301"], filename=name) == []
        assert lint(FIT + _A_TEST, ["TFP302"], filename=name) == []
        assert [d.code for d in lint(HIDDEN, ["TFP301"], filename=name)] == ["TFP301"]
    assert [d.code for d in lint(HIDDEN, ["TFP301"], filename="src/contest.py")] == ["TFP301"]


def test_alignment_and_minimum_width_options():
    tf32 = Settings(options={"alignment": 4})
    assert lint(HIDDEN, ["TFP301"], settings=tf32) == []  # 100 is a multiple of 4
    int8 = Settings(options={"alignment": 16})
    assert [d.message.rsplit(" ", 1)[-1] for d in lint(HIDDEN, ["TFP301"], settings=int8)] == ["112"]
    assert fix(HIDDEN, ["TFP301"], unsafe=True, settings=int8) == HIDDEN.replace("Dense(100)", "Dense(112)")
    assert lint(HIDDEN, ["TFP301"], settings=Settings(options={"min-width": 128})) == []
    assert lint(FIT, ["TFP302"], settings=Settings(options={"min-width": 128})) == []


def test_cache_move_keeps_comments_indentation_and_crlf():
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        def make(files):
            ds = (
                tf.data.TFRecordDataset(files)
                .map(parse)  # decode
                # shuffle well
                .shuffle(10_000)  # big buffer
                .batch(64)
                # now cache
                .cache()  # keep it in memory
                .prefetch(1)
            )
            return ds

        model.fit(make(["a"]), epochs=3)
        """
    )
    expected = textwrap.dedent(
        """\
        import tensorflow as tf

        def make(files):
            ds = (
                tf.data.TFRecordDataset(files)
                .map(parse)  # decode
                # now cache
                .cache()  # keep it in memory
                # shuffle well
                .shuffle(10_000)  # big buffer
                .batch(64)
                .prefetch(1)
            )
            return ds

        model.fit(make(["a"]), epochs=3)
        """
    )
    assert fix(source, ["TFP103"], unsafe=True) == expected
    crlf = source.replace("\n", "\r\n")
    assert fix(crlf, ["TFP103"], unsafe=True) == expected.replace("\n", "\r\n")


def test_cache_statements_with_comments_are_reported_without_a_fix():
    source = (
        "import tensorflow as tf\nds = tf.data.Dataset.range(9)\nds = ds.shuffle(9)  # mix\n"
        "ds = ds.cache()  # keep\nmodel.fit(ds, epochs=2)\n"
    )
    diagnostics = lint(source, ["TFP103"])
    assert [d.code for d in diagnostics] == ["TFP103"] and diagnostics[0].fix is None


def test_cond_fix_adds_the_tensorflow_import_when_the_module_has_no_alias():
    source = (
        "from tensorflow import cond, function, reduce_sum\n\n@function\ndef f(x):\n"
        "    return cond(reduce_sum(x) > 0, lambda: x * 2.0, lambda: -x)\n"
    )
    assert fix(source, ["TFP202"], unsafe=True) == (
        "from tensorflow import cond, function, reduce_sum\nimport tensorflow as tf\n\n@function\ndef f(x):\n"
        "    return tf.where(reduce_sum(x) > 0, x * 2.0, -x)\n"
    )


def test_feed_dict_rule_skips_test_files():
    source = (
        "import tensorflow as tf\nwith tf.Session() as sess:\n    for xb in batches:\n"
        "        sess.run(train_op, feed_dict={x: xb})\n"
    )
    assert [d.code for d in lint(source, ["TFP104"])] == ["TFP104"]
    assert lint(source, ["TFP104"], filename="tests/test_ops.py") == []
