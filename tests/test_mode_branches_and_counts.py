"""The analyses behind issue 22's held-out classes, queried directly: which branch of a mode switch
a call sits in, how many times a loop over a module-level literal collection runs, what a config
`.get` with a number default is, and a `cache()` after a `Dataset.zip`."""

from __future__ import annotations

import pytest

from tests.test_hot_paths_and_layers import model_of, site_of
from tflint_perf.analysis.mode_branches import branch_purpose
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.analysis.values import PYTHON, UNKNOWN, ValueKinds


@pytest.mark.parametrize(
    "test,expected",
    [
        ("mode == 'infer'", (Purpose.EVALUATION, Purpose.UNKNOWN)),
        ("self.params['mode'] != 'infer'", (Purpose.UNKNOWN, Purpose.EVALUATION)),
        ("params['mode'] == 'train'", (Purpose.TRAINING, Purpose.UNKNOWN)),
        ("mode == tf.estimator.ModeKeys.PREDICT", (Purpose.EVALUATION, Purpose.UNKNOWN)),
        ("self.mode in ('eval', 'infer')", (Purpose.EVALUATION, Purpose.UNKNOWN)),
        ("mode in ('train', 'infer')", (Purpose.UNKNOWN, Purpose.UNKNOWN)),  # the modes disagree
        ("mode != 'infer' or style == 'wav'", (Purpose.UNKNOWN, Purpose.EVALUATION)),
        ("mode == 'infer' and batched", (Purpose.EVALUATION, Purpose.UNKNOWN)),
        ("mode == 'infer' or batched", (Purpose.UNKNOWN, Purpose.UNKNOWN)),  # the body runs when batched too
        ("not mode == 'infer'", (Purpose.UNKNOWN, Purpose.EVALUATION)),
        ("kind == 'infer'", (Purpose.UNKNOWN, Purpose.UNKNOWN)),  # not a mode
    ],
)
def test_a_mode_switch_says_what_each_branch_runs_for(test, expected):
    model = model_of(
        f"""
        import tensorflow as tf
        def build(self, mode, style, batched, kind):
            if {test}:
                first()
            else:
                second()
        """
    )
    got = tuple(branch_purpose(site_of(model, call), model.module) for call in ("first()", "second()"))
    assert got == expected


def test_the_innermost_mode_test_decides_and_other_ifs_are_crossed():
    model = model_of(
        """
        def build(mode, shuffle):
            if mode != 'infer':
                if shuffle:
                    train_map()
            else:
                if shuffle:
                    infer_map()
        """
    )
    assert branch_purpose(site_of(model, "train_map()"), model.module) is Purpose.UNKNOWN
    assert branch_purpose(site_of(model, "infer_map()"), model.module) is Purpose.EVALUATION


@pytest.mark.parametrize(
    "setup,iterated,expected",
    [
        ("configs = {'sgd': 1, 'adam': 2, 'rmsprop': 3}", "configs", 3),
        ("configs = {'sgd': 1, 'adam': 2}", "configs.items()", 2),
        ("widths = [0, 1, 2, 3]", "widths", 4),
        ("widths = (8, 16, *more)", "widths", None),  # the starred part is not written
        ("widths = [8, 16]\nwidths.append(32)", "widths", None),  # grown at run time
        ("widths = [8, 16]\nwidths = widths + extra", "widths", None),  # bound again
        ("widths = load_widths()", "widths", None),
    ],
)
def test_a_loop_over_a_module_level_literal_collection_has_its_count(setup, iterated, expected):
    model = model_of(f"{setup}\nfor w in {iterated}:\n    build(w)\n")
    loop = site_of(model, "build(w)").loops[0]
    assert model.step_loops.iterations(loop) == expected


def test_a_local_of_the_same_name_is_not_the_module_collection():
    model = model_of(
        """
        widths = [8, 16]
        def sweep(widths):
            for w in widths:
                build(w)
        """
    )
    loop = site_of(model, "build(w)").loops[0]
    assert model.step_loops.iterations(loop) is None


@pytest.mark.parametrize(
    "expr,expected",
    [
        ("params.get('iter_size', 1)", PYTHON),
        ("params.get('lr', 0.1)", PYTHON),
        ("params.get('use_fp16', False)", PYTHON),
        ("params.get('iter_size')", UNKNOWN),  # no default: anything the config holds
        ("params.get('data', None)", UNKNOWN),
        ("params.get('name', 'x')", UNKNOWN),  # a string default: not a step's number
        ("params.get(key, 1)", UNKNOWN),  # not a setting read by name
    ],
)
def test_a_config_lookup_with_a_number_default_is_a_python_value(expr, expected):
    model = model_of(f"value = {expr}\nuse(value)\n")
    site = site_of(model, "use(value)")
    assert ValueKinds(model).kind(site.node.args[0].value, None, site.place) == expected


def test_a_cache_after_a_zip_keeps_the_zipped_pipelines_maps():
    source = """
        import tensorflow as tf
        src = tf.data.TextLineDataset(a).map(tokenize)
        tgt = tf.data.TextLineDataset(b).map(tokenize_target)
        pairs = tf.data.Dataset.zip((src, tgt)).filter(short){cached}
        for epoch in range(10):
            for x, y in pairs:
                step(x, y)
        """
    for cached, expected in ((".cache()", True), ("", False), (".repeat().cache()", False)):
        model = model_of(source.format(cached=cached))
        pipelines = model.pipelines
        for op, states in pipelines.ops("map"):
            assert all(pipelines.cached_after(state, op.call) for state in states) is expected, cached
