"""Per-element code reached through helpers (issue 22): analysis/element_maps.py and TFP202 on it.

The shapes come from detection and augmentation code: a box clipped coordinate by coordinate in a
helper that ``tf.map_fn`` runs for every box (``lambda bbox: _shift_bbox(bbox, height, ...)`` in the
AutoAugment bbox ops, ``_clip_box`` / ``_check_bbox_area`` below it), in the same module or another.
"""

from __future__ import annotations

import json
import textwrap

import libcst as cst

from tests.conftest import lint, run_cli
from tflint_perf.analysis.analyses import AnalysedModule

BOXES = textwrap.dedent(
    """\
    import tensorflow as tf


    def _clamp(coord, hi):
        return tf.cond(coord < 0.0, lambda: tf.zeros_like(coord), lambda: tf.minimum(coord, hi))


    def _clip_box(box, height, width):
        ymin, xmin, ymax, xmax = tf.unstack(box)
        return tf.stack([_clamp(ymin, height), _clamp(xmin, width), _clamp(ymax, height), _clamp(xmax, width)])


    def clip_boxes(image, boxes):
        height = tf.cast(tf.shape(image)[0], tf.float32)
        width = tf.cast(tf.shape(image)[1], tf.float32)
        clip = lambda bbox: _clip_box(bbox, height, width)
        return tf.map_fn(clip, boxes)
    """
)


def _function(model, name):
    return next(f for f in model.functions if f.name == name)


def test_the_walk_follows_the_element_and_not_what_the_map_closes_over():
    model = AnalysedModule(cst.parse_module(BOXES))
    maps = model.element_maps
    clip_box = maps.reaches(next(s for s in model.calls if model.call_name(s.node) == "tf.stack"))[0]
    assert clip_box.depth == 1 and clip_box.map_caller is _function(model, "clip_boxes")
    # `box` is the element and `ymin`... are computed from it; the image's size is not per element.
    assert {"box", "ymin", "xmax"} <= clip_box.elements and not {"height", "width"} & clip_box.elements
    cond = next(s for s in model.calls if model.call_name(s.node) == "tf.cond")
    clamp = maps.reaches(cond)[0]
    assert clamp.depth == 2 and clamp.elements == frozenset({"coord"})
    # `clip_boxes` itself runs once, not per element.
    assert maps.reaches(next(s for s in model.calls if model.call_name(s.node) == "tf.map_fn")) == []


def test_a_per_element_cond_two_calls_below_the_map_is_reported_at_the_cond():
    found = lint(BOXES, ["TFP202"])
    assert [(d.code, d.location.row) for d in found] == [("TFP202", 5)]
    assert "`_clamp`, which the `tf.map_fn` in `clip_boxes` runs for every element (2 calls deep)" in found[0].message
    assert "one `tf.where` over the whole batch can replace the per-element map" in found[0].message


def test_a_vectorized_map_through_a_local_def():
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        def scores(logits, threshold):
            def one(score):
                return keep(score)

            def keep(s):
                return tf.cond(s > threshold, lambda: s, lambda: tf.zeros_like(s))

            return tf.vectorized_map(one, logits)
        """
    )
    assert [d.location.row for d in lint(source, ["TFP202"])] == [8]


def test_a_choice_the_map_closes_over_is_the_same_for_every_element():
    # A training flag (or any value from outside the map) picks one branch for all the boxes.
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        def _jitter(coord, training):
            return tf.cond(training, lambda: tf.minimum(coord, 1.0), lambda: tf.abs(coord))

        def jitter_boxes(boxes, training):
            return tf.map_fn(lambda b: _jitter(b, training), boxes)
        """
    )
    assert lint(source, ["TFP202"]) == []


def test_branches_that_are_not_element_wise_equivalent_stay_silent():
    # Different shapes (an empty box list against the boxes), and an expensive branch the cond skips.
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        def _pad(row):
            return tf.cond(tf.reduce_sum(row) > 0.0, lambda: row, lambda: tf.zeros([0]))

        def _decode(encoded):
            return tf.cond(tf.strings.length(encoded) > 0, lambda: tf.io.decode_png(encoded), lambda: empty)

        def per_row(rows, masks):
            a = tf.map_fn(lambda r: _pad(r), rows)
            b = tf.map_fn(_decode, masks, dtype=tf.uint8)
            return a, b
        """
    )
    assert lint(source, ["TFP202"]) == []


def test_a_helper_in_another_module_reached_from_a_map(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'det'\n")
    package = tmp_path / "det"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "box_ops.py").write_text(
        "import tensorflow as tf\n\n\ndef clamp(coord):\n"
        "    return tf.cond(coord > 1.0, lambda: tf.ones_like(coord), lambda: tf.maximum(coord, 0.0))\n\n\n"
        "def clamp_flag(coord, training):\n"
        "    return tf.cond(training, lambda: tf.ones_like(coord), lambda: tf.maximum(coord, 0.0))\n"
    )
    (package / "postprocess.py").write_text(
        "import tensorflow as tf\n\nfrom det import box_ops\n\n\ndef _clip(box, training):\n"
        "    return tf.stack([box_ops.clamp(box[0]), box_ops.clamp_flag(box[1], training)])\n\n\n"
        "def clip_all(boxes, training):\n    return tf.map_fn(lambda b: _clip(b, training), boxes)\n"
    )
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", "TFP202", ".", cwd=tmp_path)
    found = [(d["filename"].replace("\\", "/"), d["location"]["row"], d["message"]) for d in json.loads(result.stdout)]
    assert [(name, row) for name, row, _ in found] == [("det/box_ops.py", 5)], result.stderr
    assert "the `tf.map_fn` in `clip_all` (in `det/postprocess.py`)" in found[0][2]


def test_methods_mapped_by_keyword_and_a_recursive_helper():
    source = textwrap.dedent(
        """\
        import tensorflow as tf

        class BoxCoder:
            def _clamp(self, coord):
                return tf.cond(coord > 1.0, lambda: tf.ones_like(coord), lambda: tf.maximum(coord, 0.0))

            def _clip(self, box):
                return tf.stack([self._clamp(box[0]), self._again(box[1])])

            def _again(self, coord):
                return self._again(coord)

            def clip(self, boxes):
                return tf.map_fn(fn=self._clip, elems=boxes)
        """
    )
    found = lint(source, ["TFP202"])
    assert [d.location.row for d in found] == [5]
    assert "`_clamp`, which the `tf.map_fn` in `clip` runs for every element (1 call deep)" in found[0].message
