"""What a small function returns, inlined at its call (analysis/small_functions.py): the shapes of
AutoAugment's ``_adjust_bbox_boundaries`` and KerasCV's parameterless corner pickers."""

from __future__ import annotations

import textwrap

import libcst as cst

from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.small_functions import returned_expression


def _inlined(source: str, helper: str, caller: str = "caller"):
    model = AnalysedModule(cst.parse_module(textwrap.dedent(source)))
    function = next(f for f in model.functions if f.name == helper)
    scope = next(f for f in model.functions if f.name == caller)
    call = next((s.node for s in model.calls_in(scope) if model.call_graph.callee(s.node) is function), None)
    found = returned_expression(model, function, call, scope)
    return None if found is None else cst.Module([]).code_for_node(found)


def test_parameters_and_reassigned_locals_are_replaced_in_order():
    source = """\
        import tensorflow as tf

        def caller(min_y, max_y, delta=0.05):
            def adjust(min_coord, max_coord):
                # Make sure max is never 0 and min is never 1.
                max_coord = tf.maximum(max_coord, 0.0 + delta)
                min_coord = tf.minimum(min_coord, 1.0 - delta)
                return min_coord, max_coord
            return adjust(min_y, max_coord=max_y - 1)
        """
    assert _inlined(source, "adjust") == "tf.minimum(min_y, 1.0 - delta), tf.maximum((max_y - 1), 0.0 + delta)"


def test_a_parameterless_function_returns_its_locals_values():
    source = """\
        def caller(corners):
            tl_x, br_x = split(corners)
            def negative():
                \"\"\"The corners for a negative shear.\"\"\"
                x1 = tl_x
                x2 = br_x
                return x1, x2
            return negative
        """
    model = AnalysedModule(cst.parse_module(textwrap.dedent(source)))
    negative = next(f for f in model.functions if f.name == "negative")
    caller = next(f for f in model.functions if f.name == "caller")
    found = returned_expression(model, negative, None, caller)
    assert cst.Module([]).code_for_node(found) == "tl_x, br_x"


def test_literal_defaults_fill_missing_arguments_and_other_defaults_do_not():
    source = """\
        LIMIT = compute()

        def clamp(x, lo=0.0, hi=LIMIT):
            return x * lo

        def scale(x, factor=2.0):
            return x * factor

        def caller(v):
            return clamp(v) + scale(v)
        """
    assert _inlined(source, "scale") == "v * 2.0"
    assert _inlined(source, "clamp") is None  # `LIMIT` is evaluated once, where `clamp` is defined


def test_what_cannot_be_read_as_one_value_is_not_inlined():
    source = """\
        import tensorflow as tf

        def branchy(x):
            if x is None:
                return x
            return tf.abs(x)

        def starred(*xs):
            return xs[0]

        def nested(x):
            return [tf.abs(v) for v in x]

        def counted(x):
            x += 1
            return x

        def caller(v):
            return branchy(v), starred(v), nested(v), counted(v)
        """
    for helper in ("branchy", "starred", "nested", "counted"):
        assert _inlined(source, helper) is None, helper


def test_a_free_name_the_caller_rebinds_is_not_inlined():
    # `scale` in `shifted` is the module's; in `caller` a local `scale` would be read instead.
    source = """\
        scale = 3.0

        def shifted(x):
            return x * scale

        def caller(v, scale):
            return shifted(v)

        def other(v):
            return shifted(v)
        """
    assert _inlined(source, "shifted") is None
    assert _inlined(source, "shifted", "other") == "v * scale"
