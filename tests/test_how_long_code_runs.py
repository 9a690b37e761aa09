"""What the code shows about how long something runs (issue 22): constant conditions (`if False:`,
`if DEBUG:` with `DEBUG = False`) rule a branch out (analysis/constants.py `truth`, analysis/debugging.py
`never_runs`), a `fit` of a few steps in all is a smoke run, a validation pass of one batch has nothing to
overlap, and a NumPy view handed to `fit` is the pipeline the model trains on (analysis/pipelines/)."""

import textwrap

import libcst
import pytest

from tests.conftest import lint
from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.debugging import never_runs


def model_of(source: str) -> AnalysedModule:
    return AnalysedModule(libcst.parse_module(textwrap.dedent(source)))


def codes(source: str, selected=("TFP101", "TFP102", "TFP201")):
    return [(d.code, d.location.row) for d in lint(textwrap.dedent(source), list(selected), filename="train.py")]


def _site(model, name):
    return next(site for site in model.calls if model.call_name(site.node) == name or (
        isinstance(site.node.func, libcst.Name) and site.node.func.value == name))


@pytest.mark.parametrize(
    "header, test, body_runs, else_runs",
    [
        ("", "False", False, True),
        ("", "True", True, False),
        ("DEBUG = False\n", "DEBUG", False, True),
        ("DEBUG = False\n", "not DEBUG", True, False),
        ("DEBUG = True\n", "DEBUG", True, False),
        ("DEBUG = False\nDEBUG = True\n", "DEBUG", True, True),  # bound twice: unknown
        # A function that declares it `global` rebinds it (`parse_args()` setting it from a flag): unknown.
        ("DEBUG = False\ndef parse_args():\n    global DEBUG\n    DEBUG = True\n", "DEBUG", True, True),
        ("DEBUG = False\ndef parse_args():\n    global DEBUG, N\n    DEBUG, N = read()\n", "DEBUG", True, True),
        ("DEBUG = False\ndef parse_args():\n    global DEBUG\n    for DEBUG in read():\n        pass\n", "DEBUG", True, True),
        ("DEBUG = False\ndef parse_args():\n    global DEBUG\n    DEBUG |= read()\n", "DEBUG", True, True),
        ("def parse_args():\n    global DEBUG\n    DEBUG = True\n", "DEBUG", True, True),
        # `global` covers the function that says it, not one nested in it: `g`'s DEBUG is its own.
        ("DEBUG = False\ndef f():\n    global DEBUG\n    def g():\n        DEBUG = True\n", "DEBUG", False, True),
        # Module-level rebindings without `=`: each makes the name no constant.
        ("DEBUG = False\nDEBUG |= read()\n", "DEBUG", True, True),
        ("DEBUG = False\nfor DEBUG in read():\n    pass\n", "DEBUG", True, True),
        ("DEBUG = False\nwith read() as DEBUG:\n    pass\n", "DEBUG", True, True),
        ("DEBUG = False\nDEBUG: bool = read()\n", "DEBUG", True, True),
        ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--debug', default=False)\nargs = p.parse_args()\n",
         "args.debug", True, True),  # a flag: the run decides
    ],
)
def test_a_constant_condition_rules_out_one_branch(header, test, body_runs, else_runs):
    model = model_of(header + f"if {test}:\n    body()\nelse:\n    other()\n")
    assert never_runs(model, _site(model, "body").place) is not body_runs
    assert never_runs(model, _site(model, "other").place) is not else_runs


def test_elif_and_nested_branches_and_a_local_that_shadows_the_constant():
    model = model_of(
        "DEBUG = False\n"
        "if DEBUG:\n    a()\nelif ready:\n    b()\nelse:\n    c()\n"
        "def f(DEBUG):\n    if DEBUG:\n        d()\n"
        "def g():\n    if True:\n        if not DEBUG:\n            e()\n"
    )
    assert never_runs(model, _site(model, "a").place)
    assert not never_runs(model, _site(model, "b").place)
    assert not never_runs(model, _site(model, "c").place)
    d = _site(model, "d")
    assert not never_runs(model, d.place, d.function)  # the parameter, not the module's constant
    e = _site(model, "e")
    assert not never_runs(model, e.place, e.function)


def test_the_interpreter_follows_only_the_branch_that_runs():
    source = """
        import tensorflow as tf
        DEBUG = False
        ds = tf.data.TFRecordDataset(files).map(parse)
        if DEBUG:
            train = ds.repeat().batch(64)
        else:
            train = ds.shuffle(100).batch(64).repeat()
        model.fit(train, epochs=10, steps_per_epoch=100)
    """
    model = model_of(source)
    (fit,) = [c for c in model.pipelines.consumptions if c.role == "fit"]
    assert [[op.name for op in state.ops] for state in fit.states] == [["map", "shuffle", "batch", "repeat"]]
    # One ending, so the fix has one place to append to; the debug branch is not reported.
    assert codes(source, ["TFP101"]) == [("TFP101", 8)]


@pytest.mark.parametrize(
    "arguments, smoke",
    [
        ("steps_per_epoch=1, epochs=3", True),
        ("steps_per_epoch=STEPS", True),  # a module constant, one epoch: 5 steps
        ("steps_per_epoch=5, epochs=3", False),  # 15 steps
        ("steps_per_epoch=10", False),  # tensorflow/docs segmentation's ten-step fit is labelled training
        ("steps_per_epoch=1, epochs=args.epochs", False),  # a flag: the run decides
        ("epochs=3", False),  # steps unknown: the whole data each epoch
        ("steps_per_epoch=1, epochs=3, initial_epoch=1", False),
    ],
)
def test_a_fit_of_a_few_steps_in_all_is_a_smoke_run(arguments, smoke):
    source = f"""
        import tensorflow as tf
        STEPS = 5
        ds = tf.data.TFRecordDataset(files).map(parse).batch(2).repeat()
        val = tf.data.TFRecordDataset(other).map(parse).batch(2)
        model.fit(ds, {arguments}, validation_data=val)
    """
    model = model_of(source)
    pipelines = model.pipelines
    purposes = {c.role: (c.purpose.value, pipelines.every_epoch(c)) for c in pipelines.consumptions}
    assert (purposes["fit"][0] == "one-off") is smoke
    if "epochs=3" in arguments:
        assert purposes["validation"][1] is not smoke  # validated after each of three smoke epochs: no hot path
    assert bool(codes(source, ["TFP102"])) is not smoke


def test_a_constant_a_function_rebinds_under_global_is_read_at_run_time():
    """`TRAIN = False` / `STEPS_PER_EPOCH = 1` set again from the command line by `parse_args()` under
    `global`: the branch may run and the fit may be long, so the pipeline it trains on is checked."""
    condition = """
        import tensorflow as tf
        TRAIN = False
        def parse_args():
            global TRAIN
            TRAIN = True
        def main(paths, labels, model):
            ds = tf.data.Dataset.from_tensor_slices((paths, labels)).map(load_image).batch(32)
            if TRAIN:
                model.fit(ds, epochs=10)
    """
    assert codes(condition, ["TFP101"]) == [("TFP101", 8)]
    counts = """
        import tensorflow as tf
        STEPS_PER_EPOCH = 1
        EPOCHS = 1
        def parse_args():
            global STEPS_PER_EPOCH, EPOCHS
            args = parser.parse_args()
            STEPS_PER_EPOCH, EPOCHS = args.steps, args.epochs
        def main(paths, labels):
            parse_args()
            ds = tf.data.Dataset.from_tensor_slices((paths, labels)).map(load_image).batch(32).repeat()
            model.fit(ds, steps_per_epoch=STEPS_PER_EPOCH, epochs=EPOCHS)
    """
    model = model_of(counts)
    assert [c.purpose.value for c in model.pipelines.consumptions] == ["training"]
    assert model.step_loops.fixed_integer(libcst.parse_expression("STEPS_PER_EPOCH")) is None
    # Read from the function that rebinds it, the name is the module's, not a local of its own.
    (parse_args,) = [f for f in model.functions if f.name == "parse_args"]
    scope, bindings = model.scope_bindings("EPOCHS", parse_args)
    assert scope is None and [b.kind for b in bindings] == ["assign", "unpack"]


def test_a_smoke_sized_fit_repeated_by_a_loop_trains():
    model = model_of(
        "import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(parse).batch(2)\n"
        "for epoch in range(100):\n    model.fit(ds, steps_per_epoch=1, epochs=3)\n"
    )
    assert [c.purpose.value for c in model.pipelines.consumptions] == ["training"]


@pytest.mark.parametrize(
    "validation, reported",
    [
        ("val.repeat().batch(1000), validation_steps=10", True),  # 10,000 images an epoch
        ("val.repeat().batch(100), validation_steps=2", False),  # two batches of 100
        ("val.repeat().batch(1000), validation_steps=1", False),  # one batch: nothing to overlap
        ("val.batch(2000).take(1)", False),
        ("val.batch(2000).take(ONE)", False),
        ("val.batch(2000).take(2)", True),
        # adventuresinML keras_eager_tf_2.py: in-memory rows batched by 5,000, then cast once per batch
        ("tf.data.Dataset.from_tensor_slices(x).batch(5000).map(scale, 4).repeat(), validation_steps=3", False),
    ],
)
def test_how_much_validation_an_epoch_reads(validation, reported):
    source = f"""
        import tensorflow as tf
        ONE = 1
        train = tf.data.TFRecordDataset(a).map(resize, 4).batch(64).prefetch(1)
        val = tf.data.TFRecordDataset(b).map(resize, 4)
        model.fit(train, epochs=7, validation_data={validation})
    """
    assert bool(codes(source, ["TFP101"])) is reported


def test_a_numpy_view_handed_to_fit_is_the_pipeline_it_trains_on():
    model = model_of(
        "import tensorflow as tf\nds = tf.data.TFRecordDataset(f).map(decode).batch(64)\n"
        "model.fit(x=ds.repeat().as_numpy_iterator(), steps_per_epoch=100, epochs=150)\n"
        "first = ds.as_numpy_iterator()\n"
    )
    purposes = sorted((c.kind, c.purpose.value) for c in model.pipelines.consumptions)
    assert purposes == [("model", "training"), ("one-off", "one-off")]


def test_validation_of_a_fit_counts_in_a_module_named_for_serving():
    source = (
        "import tensorflow as tf\ntrain = tf.data.TFRecordDataset(a).map(parse, 4).batch(512).prefetch(1)\n"
        "val = tf.data.TFRecordDataset(b).map(parse, 4).batch(512)\nmodel.fit(train, epochs=10, validation_data=val)\n"
    )
    assert [d.code for d in lint(source, ["TFP101"], filename="serving_function.py")] == ["TFP101"]


@pytest.mark.parametrize(
    "rebinding, reported",
    [
        ("train_ds = load_dataset('train_cache')", False),  # another pipeline: the first is only looked at
        ("train_ds = train_ds.batch(32)", True),  # the same pipeline, batched, is what fit reads
    ],
)
def test_a_pipeline_looked_at_and_then_replaced_is_not_trained_on(rebinding, reported):
    # tensorflow/text image_captioning.ipynb: prepare_dataset's pipeline is inspected, then replaced.
    source = f"""
        import tensorflow as tf
        def prepare_dataset(ds):
            return ds.shuffle(1000).map(lambda path, caption: (load_image(path), caption))
        def load_dataset(path):
            return tf.data.Dataset.load(path).shuffle(1000).prefetch(tf.data.AUTOTUNE)
        train_ds = prepare_dataset(tf.data.TFRecordDataset(files))
        train_ds.element_spec
        {rebinding}
        model.fit(train_ds, epochs=100)
    """
    assert bool(codes(source, ["TFP102"])) is reported
