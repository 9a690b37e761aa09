"""``tflint-perf verify FILE::FUNCTION`` on real functions: arguments, a seed, sibling modules, errors.

The first tests need no TensorFlow (argument parsing, finding and fixing the project modules a file
imports, keeping each side's modules apart). The ones marked ``tensorflow`` run the real command
in a subprocess with real TensorFlow: a function called with arguments and a seeded shuffle, its
elements compared one by one; a fix in an imported sibling module that changes the elements; and
functions that cannot be called, reported in one line with exit 2.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import List

import pytest

from tests.conftest import records, verify
from tflint_perf.faces.harness.call_arguments import ArgumentError, Synthetic, parse_arguments
from tflint_perf.faces.harness.project_imports import fixed_modules, layout_of, sides
from tflint_perf.faces.harness.verify import describe

PREPROCESSING = '''\
import tensorflow as tf


def decode(x):
    return tf.cast(x, tf.float32) * 2.0


def base(data):
    ds = tf.data.Dataset.from_tensor_slices(data)
    ds = ds.map(decode)
    return ds
'''

PIPELINE = '''\
import tensorflow as tf

from preprocessing import base, decode


def make(data, batch_size, buffer=100):
    ds = tf.data.Dataset.from_tensor_slices(data).shuffle(buffer).map(decode)
    return ds.batch(batch_size)


def make_from_base(data, batch_size):
    return base(data).batch(batch_size)


def broken(data):
    raise ValueError("no data here\\nsecond line")


def train(model, data):
    model.fit(make(data, 8), epochs=2)
'''


def write_project(directory: Path) -> Path:
    (directory / "preprocessing.py").write_text(PREPROCESSING)
    (directory / "pipeline.py").write_text(PIPELINE)
    return directory


# -- without TensorFlow -----------------------------------------------------------------------------
def test_arguments_are_literals_and_synthetic_tensors():
    arguments = parse_arguments("32, 'train', array((10, 3)), tensor(5, 'int64', high=3)", "training=True, ids=[1, 2]")
    assert arguments.args[:2] == (32, "train")
    assert arguments.args[2] == Synthetic("array", (10, 3), "float32")
    assert arguments.args[3] == Synthetic("tensor", (5,), "int64", 0, 3)
    assert arguments.kwargs == {"training": True, "ids": [1, 2]}
    assert arguments.text == ("32, 'train', array((10, 3), 'float32'), tensor((5,), 'int64', high=3), "
                              "training=True, ids=[1, 2]")
    assert parse_arguments("", "{'batch_size': 4}").kwargs == {"batch_size": 4}
    first, _ = parse_arguments("array((4, 2)), [1]").materialise(None, seed=7)
    again, _ = parse_arguments("array((4, 2)), [1]").materialise(None, seed=7)
    assert (first[0] == again[0]).all() and first[0].dtype.name == "float32" and first[1] == [1]


@pytest.mark.parametrize("args,kwargs,message", [
    ("open('x')", "", "is not a Python literal"),
    ("", "3", "expected name=value pairs"),
    ("a=1", "", "name=value pairs go in --kwargs"),
    ("array('a')", "", "expected array(shape"),
    ("array((2,), 'nope')", "", "unknown dtype"),
    ("*xs", "", "not supported"),
    ("(1,", "", "cannot read"),
    ("", "{1: 2}", "must map parameter names"),
])
def test_arguments_that_cannot_be_read(args, kwargs, message):
    with pytest.raises(ArgumentError, match=message.replace("(", r"\(")):
        parse_arguments(args, kwargs)


def test_sibling_modules_are_found_transitively(tmp_path):
    write_project(tmp_path)
    (tmp_path / "unused.py").write_text("X = 1\n")
    (tmp_path / "preprocessing.py").write_text(PREPROCESSING + "import helpers\n")
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "__init__.py").write_text("")
    layout = layout_of(tmp_path / "pipeline.py", cwd=tmp_path)
    assert layout.module_name == "pipeline"
    assert [p.relative_to(tmp_path.resolve()).as_posix() for p in layout.reached] == [
        "pipeline.py", "preprocessing.py", "helpers/__init__.py"]


def test_each_side_imports_its_own_copy_of_a_fixed_sibling(tmp_path):
    """The fixed side sees the fixed text, also through a sibling that has no fix of its own."""
    (tmp_path / "values.py").write_text("VALUE = 'original'\n")
    (tmp_path / "relay.py").write_text("from values import VALUE\n")
    main = tmp_path / "main.py"
    main.write_text("import relay\n")
    layout = layout_of(main, cwd=tmp_path)
    assert {p.name for p in layout.reached} == {"main.py", "relay.py", "values.py"}
    fixed = [type("Fixed", (), {"path": (tmp_path / "values.py").resolve(), "text": "VALUE = 'fixed'\n",
                                "fixes": ["a fix"]})()]
    before, after = sides(layout, fixed).values()
    seen = {}
    for label, side in (("before", before), ("after", after), ("before again", before)):
        seen[label] = side.import_module("main").relay.VALUE
    assert seen == {"before": "original", "after": "fixed", "before again": "original"}
    assert "relay" not in sys.modules and "values" not in sys.modules and "main" not in sys.modules
    assert fixed_modules(layout, unsafe=False) == []  # nothing in these modules for `check` to fix


def test_an_error_is_one_line_with_where_it_was_raised():
    def user_code():
        raise ValueError("bad input\nmore detail")

    try:
        user_code()
    except ValueError as error:
        text = describe(error)
    assert text.startswith("ValueError: bad input (at test_verify.py:") and "\n" not in text


# -- with real TensorFlow ---------------------------------------------------------------------------


def error_lines(stderr: str) -> List[str]:
    return [line for line in stderr.splitlines() if line.startswith("tflint-perf verify: error:")]


@pytest.mark.tensorflow
def test_a_seeded_shuffle_with_arguments_is_compared_element_by_element(tmp_path, tensorflow):
    write_project(tmp_path)
    common = ("pipeline.py::make", "--args", "array((500, 4)), 16", "--steps", "6", "--step-ms", "0", "--repeats", "1",
              "--budget", "0")
    seeded = verify(tmp_path, *common, "--seed", "3", "--json")
    assert seeded.returncode == 0, seeded.stderr[-3000:]
    before, after = records(seeded.stdout)
    assert before["elements"] == after["elements"] == "identical" and before["batches"] == 6
    assert before["call"] == "make(array((500, 4), 'float32'), 16)" and before["seed"] == 3
    assert before["fixes"] == [  # as `check --fix` finds them: decode, imported, is known to be stateless
        "pipeline.py:7:67 TFP102 Pass `num_parallel_calls=tf.data.AUTOTUNE`",
        "pipeline.py:8:15 TFP101 Append `.prefetch(tf.data.AUTOTUNE)`",
        "preprocessing.py:10:13 TFP102 Pass `num_parallel_calls=tf.data.AUTOTUNE`",
    ]
    assert before["fixed_files"] == ["pipeline.py", "preprocessing.py"]
    # The text report says the same: the call, the seed and the fixes.
    text = verify(tmp_path, *common, "--seed", "3")
    assert text.returncode == 0, text.stderr[-3000:]
    lines = text.stdout.splitlines()
    assert lines[:6] == [
        "tflint-perf verify pipeline.py::make",
        "called make(array((500, 4), 'float32'), 16), seed 3",
        "fixes applied in memory (no file is changed):",
        "  pipeline.py:7:67 TFP102 Pass `num_parallel_calls=tf.data.AUTOTUNE`",
        "  pipeline.py:8:15 TFP101 Append `.prefetch(tf.data.AUTOTUNE)`",
        "  preprocessing.py:10:13 TFP102 Pass `num_parallel_calls=tf.data.AUTOTUNE`",
    ]
    assert lines[-1] == "elements: identical (6 batches)"
    # Without a seed the shuffle differs from run to run: nothing to compare.
    unseeded = verify(tmp_path, *common, "--json")
    assert unseeded.returncode == 0, unseeded.stderr[-3000:]
    assert {r["elements"] for r in records(unseeded.stdout)} == {"same-structure"}
    assert any("a shuffle without a seed (pipeline.py:7)" in cause for cause in records(unseeded.stdout)[0]["nondeterminism"])
    assert {r["seed"] for r in records(unseeded.stdout)} == {None}


@pytest.mark.tensorflow
def test_a_fix_in_an_imported_sibling_module_is_run(tmp_path, tensorflow):
    """The only fix is in the sibling (an unsafe TFP302 batch size, under mixed precision and selected, since
    the rule is opt-in): the fixed side's batches differ."""
    (tmp_path / "pyproject.toml").write_text('[tool.tflint-perf]\nextend-select = ["TFP302"]\n')
    (tmp_path / "loader.py").write_text(textwrap.dedent("""\
        import numpy as np
        import tensorflow as tf

        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        DATA = np.arange(2000, dtype=np.float32)


        def make(batch_size=90):
            return tf.data.Dataset.from_tensor_slices(DATA).batch(90).prefetch(tf.data.AUTOTUNE)


        def train(model):
            model.fit(make(), epochs=3)
    """))
    (tmp_path / "train.py").write_text("from loader import make\n\n\ndef pipeline():\n    return make()\n")
    result = verify(tmp_path, "train.py::pipeline", "--steps", "3", "--step-ms", "0", "--repeats", "1", "--budget", "0",
                    "--unsafe-fixes", "--json")
    assert result.returncode == 1, result.stderr[-3000:]
    before, _ = records(result.stdout)
    assert before["fixed_files"] == ["loader.py"] and "TFP302" in before["fixes"][0]
    assert before["elements"] == "differ" and before["call"] == "pipeline()"
    assert not any(tmp_path.glob("tflint_perf_verify_*")), "nothing is written into the project"


@pytest.mark.tensorflow
def test_functions_that_cannot_be_called_get_one_line_and_exit_2(tmp_path, tensorflow):
    write_project(tmp_path)
    cases = {
        "wrong arity": (("pipeline.py::make",), "cannot call make(): missing a required argument: 'data' "
                                                "(pass them with --args / --kwargs)"),
        "too many": (("pipeline.py::make", "--args", "1, 2, 3, 4"), "cannot call make(1, 2, 3, 4): too many "
                                                                    "positional arguments"),
        "raises": (("pipeline.py::broken", "--args", "1"), "calling broken(1) (before) failed: ValueError: "
                                                           "no data here (at pipeline.py:16)"),
        "missing": (("pipeline.py::nothing",), "pipeline.py has no `nothing`"),
        "bad literal": (("pipeline.py::make", "--args", "data"), "--args: `data` is not a Python literal "
                                                                 "(nor array(shape) / tensor(shape))"),
    }
    for name, (args, message) in cases.items():
        result = verify(tmp_path, *args, "--steps", "2", "--repeats", "1")
        assert result.returncode == 2, (name, result.stderr[-3000:])
        assert error_lines(result.stderr) == [f"tflint-perf verify: error: {message}"], (name, result.stderr)
        assert "Traceback" not in result.stderr, name
