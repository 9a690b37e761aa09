"""Fixes keep the layout: exact fixed text of each fix shape on code written over several lines.

A new op in a chain written one op per line gets its own line; a keyword added to a call written
one argument per line gets its own line; a call that would grow past the file's line length is
broken at its brackets; a multi-line ``tf.cond`` becomes a multi-line ``tf.where``; ``cache()``
moved in a multi-line chain stays one op per line. Each result re-parses and a second run changes
nothing.
"""

from __future__ import annotations

import textwrap
from typing import List, Optional

import libcst as cst
import pytest

from tests.conftest import fix
from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.fixes.building import wrapped_keyword_argument
from tflint_perf.text.parsing import parse
from tflint_perf.text.layout import line_limit, too_long

TF = "import tensorflow as tf\n"
AUGMENT = "def augment(image):\n    return tf.image.random_flip_left_right(image)\n\n\n"


def fixed(source: str, codes: Optional[List[str]] = None, unsafe: bool = False) -> str:
    result = fix(textwrap.dedent(source), codes, unsafe=unsafe)
    parse(result)
    assert fix(result, codes, unsafe=unsafe) == result, "not idempotent"
    return result


def dedent(text: str) -> str:
    return textwrap.dedent(text)


# -- TFP101: the prefetch on a line of its own -----------------------------------------------------
def test_prefetch_gets_its_own_line_in_a_chain_written_one_op_per_line():
    source = """\
        import tensorflow as tf

        def make(files):
            ds = (tf.data.TFRecordDataset(files)
                  .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
                  .batch(32))
            return ds

        model.fit(make(files))
    """
    assert fixed(source, ["TFP101"]) == dedent("""\
        import tensorflow as tf

        def make(files):
            ds = (tf.data.TFRecordDataset(files)
                  .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
                  .batch(32)
                  .prefetch(tf.data.AUTOTUNE))
            return ds

        model.fit(make(files))
    """)


def test_prefetch_follows_a_backslash_continued_chain():
    source = """\
        import tensorflow as tf
        ds = tf.data.TFRecordDataset(files) \\
            .batch(64)
        model.fit(ds)
    """
    assert fixed(source, ["TFP101"]) == dedent("""\
        import tensorflow as tf
        ds = tf.data.TFRecordDataset(files) \\
            .batch(64) \\
            .prefetch(tf.data.AUTOTUNE)
        model.fit(ds)
    """)


def test_prefetch_on_one_line_chain_stays_on_the_line():
    source = TF + "ds = tf.data.TFRecordDataset(files).batch(64)\nmodel.fit(ds)\n"
    assert fixed(source, ["TFP101"]) == TF + "ds = tf.data.TFRecordDataset(files).batch(64).prefetch(tf.data.AUTOTUNE)\nmodel.fit(ds)\n"


def test_prefetch_line_keeps_crlf():
    source = "import tensorflow as tf\r\nds = (tf.data.TFRecordDataset(files)\r\n      .batch(32))\r\nmodel.fit(ds)\r\n"
    assert fix(source, ["TFP101"]) == (
        "import tensorflow as tf\r\nds = (tf.data.TFRecordDataset(files)\r\n      .batch(32)\r\n"
        "      .prefetch(tf.data.AUTOTUNE))\r\nmodel.fit(ds)\r\n"
    )


# -- TFP102: the keyword under the last argument, or the call broken at its brackets ---------------
def test_keyword_goes_under_arguments_written_one_per_line():
    source = """\
        import tensorflow as tf
        ds = tf.data.Dataset.range(8)
        ds = ds.map(
            lambda x: x * 2,
            deterministic=True
        )
    """
    assert fixed(source, ["TFP102"]) == dedent("""\
        import tensorflow as tf
        ds = tf.data.Dataset.range(8)
        ds = ds.map(
            lambda x: x * 2,
            deterministic=True,
            num_parallel_calls=tf.data.AUTOTUNE
        )
    """)


def test_keyword_after_a_trailing_comma_leaves_the_comment_on_its_line():
    source = """\
        import tensorflow as tf
        ds = tf.data.Dataset.range(8)
        ds = ds.map(
            lambda x: x * 2,  # double
        )
    """
    assert fixed(source, ["TFP102"]) == dedent("""\
        import tensorflow as tf
        ds = tf.data.Dataset.range(8)
        ds = ds.map(
            lambda x: x * 2,  # double
            num_parallel_calls=tf.data.AUTOTUNE,
        )
    """)


def test_long_map_call_is_broken_inside_its_parentheses():
    source = """\
        import tensorflow as tf

        def make(files):
            ds = tf.data.TFRecordDataset(files)
            ds = ds.map(lambda record: tf.io.parse_single_example(record, FEATURES), deterministic=True)
            return ds
    """
    assert fixed(source, ["TFP102"], unsafe=True) == dedent("""\
        import tensorflow as tf

        def make(files):
            ds = tf.data.TFRecordDataset(files)
            ds = ds.map(
                lambda record: tf.io.parse_single_example(record, FEATURES),
                deterministic=True,
                num_parallel_calls=tf.data.AUTOTUNE,
            )
            return ds
    """)


def test_continuation_indentation_is_the_files_own():
    source = (
        "import tensorflow as tf\n\n"
        "def make(files):\n"
        "  ds = tf.data.TFRecordDataset(files)\n"
        "  ds = ds.map(lambda record: tf.io.parse_single_example(record, FEATURES_WITH_A_LONG_NAME))\n"
        "  return ds\n"
    )
    assert fixed(source, ["TFP102"], unsafe=True) == (
        "import tensorflow as tf\n\n"
        "def make(files):\n"
        "  ds = tf.data.TFRecordDataset(files)\n"
        "  ds = ds.map(\n"
        "    lambda record: tf.io.parse_single_example(record, FEATURES_WITH_A_LONG_NAME),\n"
        "    num_parallel_calls=tf.data.AUTOTUNE,\n"
        "  )\n"
        "  return ds\n"
    )


def test_a_file_with_longer_lines_keeps_the_keyword_in_place():
    long_line = "LONG_NAME = '" + "x" * 120 + "'\n"
    source = TF + long_line + "ds = tf.data.TFRecordDataset(files).map(lambda r: tf.io.parse_single_example(r, F))\n"
    assert fixed(source, ["TFP102"], unsafe=True) == (
        TF + long_line + "ds = tf.data.TFRecordDataset(files).map(lambda r: tf.io.parse_single_example(r, F), "
        "num_parallel_calls=tf.data.AUTOTUNE)\n"
    )


def test_a_trailing_comment_does_not_count_towards_the_length():
    source = TF + "ds = tf.data.TFRecordDataset(files)\nds = ds.map(decode)  # decoding happens here, one record at a time\n"
    assert fixed(source, ["TFP102"], unsafe=True) == (
        TF + "ds = tf.data.TFRecordDataset(files)\n"
        "ds = ds.map(decode, num_parallel_calls=tf.data.AUTOTUNE)  # decoding happens here, one record at a time\n"
    )


def test_line_length_helpers():
    assert line_limit("a = 1\n") == 88
    assert line_limit("x" * 100 + "\n") == 100
    text = "f(a)  # " + "c" * 90 + "\n"
    assert not too_long(text, [(3, 3, ", b")], 88)  # the comment does not count
    assert too_long("f(a)\n", [(3, 3, ", " + "b" * 90)], 88)


# -- TFP103: cache moved within a multi-line chain, the decoding kept cached -----------------------
def test_cache_moves_before_the_shuffle_in_a_multiline_chain_keeping_the_decoding_cached():
    source = TF + AUGMENT + dedent("""\
        def make(files):
            ds = (
                tf.data.TFRecordDataset(files)
                .map(decode)  # decode
                .shuffle(1000)
                .map(augment)  # random
                .cache()
                .batch(32)
            )
            model.fit(ds, epochs=5)
    """)
    assert fixed(source, ["TFP103"], unsafe=True) == TF + AUGMENT + dedent("""\
        def make(files):
            ds = (
                tf.data.TFRecordDataset(files)
                .map(decode)  # decode
                .cache()
                .shuffle(1000)
                .map(augment)  # random
                .batch(32)
            )
            model.fit(ds, epochs=5)
    """)


def test_cache_from_a_later_statement_gets_its_own_line_in_the_chain():
    source = TF + dedent("""\
        def make(files):
            ds = (tf.data.TFRecordDataset(files)
                  .map(decode)  # decode
                  .shuffle(1000))
            ds = ds.cache().batch(32)
            model.fit(ds, epochs=5)
    """)
    assert fixed(source, ["TFP103"], unsafe=True) == TF + dedent("""\
        def make(files):
            ds = (tf.data.TFRecordDataset(files)
                  .map(decode)  # decode
                  .cache()
                  .shuffle(1000))
            ds = ds.batch(32)
            model.fit(ds, epochs=5)
    """)


def test_only_the_randomness_moves_after_the_cache():
    source = TF + AUGMENT + "ds = tf.data.TFRecordDataset(f).map(decode).shuffle(100).map(augment).cache()\nmodel.fit(ds, epochs=5)\n"
    assert fixed(source, ["TFP103"], unsafe=True) == (
        TF + AUGMENT + "ds = tf.data.TFRecordDataset(f).map(decode).cache().shuffle(100).map(augment)\nmodel.fit(ds, epochs=5)\n"
    )


def test_no_fix_when_the_cache_would_move_above_deterministic_work():
    source = TF + "ds = tf.data.Dataset.list_files('*.jpg').shuffle(100).map(tf.io.read_file).cache()\nmodel.fit(ds, epochs=5)\n"
    assert fixed(source, ["TFP103"], unsafe=True) == source


# -- TFP202: a multi-line tf.cond becomes a multi-line tf.where ------------------------------------
def test_cond_written_one_argument_per_line_becomes_where_written_the_same_way():
    source = """\
        import tensorflow as tf

        @tf.function
        def leaky(x):
            return tf.map_fn(
                lambda v: tf.cond(
                    v > 0,
                    lambda: v,  # positive
                    lambda: 0.2 * v,
                ),
                x,
            )
    """
    assert fixed(source, ["TFP202"], unsafe=True) == dedent("""\
        import tensorflow as tf

        @tf.function
        def leaky(x):
            return tf.map_fn(
                lambda v: tf.where(
                    v > 0,
                    v,  # positive
                    0.2 * v,
                ),
                x,
            )
    """)


def test_cond_aligned_under_its_bracket_is_realigned_when_it_does_not_fit_one_line():
    source = """\
        import tensorflow as tf


        def clip_one(image):
            return tf.compat.v1.cond(tf.reduce_max(image) > 1.0,
                                     true_fn=lambda: tf.minimum(image, 1.0) * 0.5 + 0.25,
                                     false_fn=lambda: tf.maximum(image, -1.0) * 0.5)


        @tf.function
        def clip(images):
            return tf.map_fn(clip_one, images)
    """
    assert fixed(source, ["TFP202"], unsafe=True) == dedent("""\
        import tensorflow as tf


        def clip_one(image):
            return tf.where(tf.reduce_max(image) > 1.0,
                            tf.minimum(image, 1.0) * 0.5 + 0.25,
                            tf.maximum(image, -1.0) * 0.5)


        @tf.function
        def clip(images):
            return tf.map_fn(clip_one, images)
    """)


@pytest.mark.parametrize("codes", [["TFP101", "TFP102", "TFP103"], None])
def test_all_fixes_together_on_a_multiline_pipeline(codes):
    source = TF + AUGMENT + dedent("""\
        def make(files):
            ds = (
                tf.data.TFRecordDataset(files)
                .map(decode)
                .shuffle(1000)
                .map(augment)
                .cache()
                .batch(32)
            )
            model.fit(ds, epochs=5)
    """)
    assert fixed(source, codes, unsafe=True) == TF + AUGMENT + dedent("""\
        def make(files):
            ds = (
                tf.data.TFRecordDataset(files)
                .map(decode, num_parallel_calls=tf.data.AUTOTUNE)
                .cache()
                .shuffle(1000)
                .map(augment, num_parallel_calls=tf.data.AUTOTUNE)
                .batch(32)
                .prefetch(tf.data.AUTOTUNE)
            )
            model.fit(ds, epochs=5)
    """)


def test_the_wrapped_keyword_generates_each_arguments_code_once(monkeypatch):
    module = parse(TF + "ds = ds.map(decode, augment, deterministic=True)\n")
    call = module.body[1].body[0].value
    generated: List[cst.CSTNode] = []
    code_for_node = cst.Module.code_for_node

    def counted(self, node):
        generated.append(node)
        return code_for_node(self, node)

    monkeypatch.setattr(cst.Module, "code_for_node", counted)
    edits = wrapped_keyword_argument(AnalysedModule(module), call, "num_parallel_calls", "tf.data.AUTOTUNE")
    assert edits is not None and len(edits) == 4  # a line break before each argument, and the keyword
    assert generated == list(call.args)
