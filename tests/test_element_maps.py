"""Per-element code reached through helpers (issue 22): analysis/element_maps.py and TFP202 on it.

The shapes come from detection and augmentation code: a box clipped coordinate by coordinate in a
helper that ``tf.map_fn`` runs for every box (``lambda bbox: _shift_bbox(bbox, height, ...)`` in the
AutoAugment bbox ops, ``_clip_box`` / ``_check_bbox_area`` below it), in the same module or another.
"""

from __future__ import annotations

import json
import textwrap

import libcst as cst

from tests.conftest import fix, lint, run_cli
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


def _project(tmp_path, files):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'aug'\n")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", "TFP202", ".", cwd=tmp_path)
    found = [(d["filename"].replace("\\", "/"), d["location"]["row"], d["message"]) for d in json.loads(result.stdout)]
    return found, result


# KerasCV's augmentation layers (keras_cv/layers/preprocessing): the base layer maps `self._augment`
# through a `_map_fn(self, func, inputs)` wrapper; `_augment` calls `self.get_random_transformation`
# and `self.augment_bounding_boxes`, which a subclass in another module overrides; the override reaches
# a helper of a third module drawing a random sign per image.
KERAS_CV = {
    "aug/__init__.py": "",
    "aug/base.py": """\
        import tensorflow as tf


        class BaseAugmentation(tf.keras.layers.Layer):
            def _map_fn(self, func, inputs):
                if self.auto_vectorize:
                    return tf.vectorized_map(func, inputs)
                return tf.map_fn(func, inputs)

            def get_random_transformation(self, image=None, bounding_boxes=None):
                return None

            def augment_bounding_boxes(self, bounding_boxes, transformation, **kwargs):
                raise NotImplementedError()

            def _augment(self, inputs):
                image = inputs["images"]
                bounding_boxes = inputs["bounding_boxes"]
                transformation = self.get_random_transformation(image=image, bounding_boxes=bounding_boxes)
                boxes = self.augment_bounding_boxes(bounding_boxes, transformation=transformation, image=image)
                return {"images": image, "bounding_boxes": boxes}

            def _batch_augment(self, inputs):
                return self._map_fn(self._augment, inputs)

            def call(self, inputs):
                return self._batch_augment(inputs)
        """,
    "aug/utils.py": """\
        import tensorflow as tf


        def random_inversion(random_generator):
            negate = random_generator.random_uniform((), 0, 1, dtype=tf.float32) > 0.5
            negate = tf.cond(negate, lambda: -1.0, lambda: 1.0)
            return negate


        def unused_flip(flag):
            return tf.cond(flag, lambda: -1.0, lambda: 1.0)
        """,
    "aug/shear.py": """\
        import tensorflow as tf

        from aug import utils
        from aug.base import BaseAugmentation


        class RandomShear(BaseAugmentation):
            def get_random_transformation(self, **kwargs):
                return self._get_shear_amount(self.x_factor)

            def _get_shear_amount(self, constraint):
                invert = utils.random_inversion(self._random_generator)
                return invert * constraint()

            def augment_bounding_boxes(self, bounding_boxes, transformation, image=None, **kwargs):
                x = transformation
                return self._convert_to_four_coordinate(bounding_boxes, x)

            @staticmethod
            def _convert_to_four_coordinate(extended_bboxes, x):
                top_left_x, bottom_right_x, top_right_x, bottom_left_x = tf.split(extended_bboxes, 4, axis=1)

                def positive_case_x():
                    final_x1 = bottom_left_x
                    final_x2 = top_right_x
                    return final_x1, final_x2

                def negative_case_x():
                    final_x1 = top_left_x
                    final_x2 = bottom_right_x
                    return final_x1, final_x2

                final_x1, final_x2 = tf.cond(tf.less(x, 0), negative_case_x, positive_case_x)
                return tf.concat([final_x1, final_x2], axis=1)
        """,
}


def test_overrides_a_base_class_maps_through_a_wrapper_are_per_element_code(tmp_path):
    found, result = _project(tmp_path, KERAS_CV)
    assert sorted((name, row) for name, row, _ in found) == [("aug/shear.py", 33), ("aug/utils.py", 6)], result.stderr
    messages = {name: message for name, _, message in found}
    assert "the `tf.vectorized_map` in `_map_fn` (in `aug/base.py`)" in messages["aug/shear.py"]
    assert "(3 calls deep)" in messages["aug/utils.py"]


def test_without_the_map_the_same_layer_code_is_silent(tmp_path):
    files = dict(KERAS_CV)
    files["aug/base.py"] = files["aug/base.py"].replace(
        "return self._map_fn(self._augment, inputs)", "return self._augment(inputs)"
    )
    found, result = _project(tmp_path, files)
    assert found == [], result.stderr


def test_a_wrapper_in_another_module_hands_its_function_to_the_map(tmp_path):
    found, result = _project(tmp_path, {
        "aug/__init__.py": "",
        "aug/shape_utils.py": """\
            import tensorflow as tf


            def static_or_dynamic_map_fn(fn, elems, dtype=None):
                if isinstance(elems, list):
                    return [fn(e) for e in elems]
                return tf.map_fn(fn, elems, dtype=dtype)
            """,
        "aug/post.py": """\
            import tensorflow as tf

            from aug import shape_utils


            def _clip_score(score):
                return tf.cond(score > 1.0, lambda: tf.ones_like(score), lambda: tf.maximum(score, 0.0))


            def _not_mapped(score):
                return tf.cond(score > 1.0, lambda: tf.ones_like(score), lambda: tf.maximum(score, 0.0))


            def clip_scores(scores):
                return shape_utils.static_or_dynamic_map_fn(_clip_score, scores)
            """,
    })
    assert [(name, row) for name, row, _ in found] == [("aug/post.py", 7)], result.stderr


# The A3C option network (veronicachelu/temporal_abstraction): a subclass's `build_losses` computes a
# per-option mask that nothing reads, while the base's `build_losses`, which it overrides, reads its own.
OPTIONS = {
    "nets/__init__.py": "",
    "nets/base.py": """\
        import tensorflow as tf


        class OptionNetwork:
            def build_losses(self):
                self.option_mask = tf.map_fn(lambda x: tf.cond(tf.less(x, self.nb_options), lambda: x, lambda: 0),
                                             self.options_placeholder)
                self.policies = self.get_policies(self.option_mask)
        """,
    "nets/embedding.py": """\
        import tensorflow as tf

        from nets.base import OptionNetwork


        class EmbeddingNetwork(OptionNetwork):
            def build_losses(self):
                self.option_mask = tf.map_fn(lambda x: tf.cond(tf.less(x, self.nb_options), lambda: x, lambda: 0),
                                             self.options_placeholder)
                self.loss = tf.reduce_mean(self.q_values)
        """,
}


def test_a_per_element_choice_nothing_reads_is_silent_across_a_base_class(tmp_path):
    found, result = _project(tmp_path, OPTIONS)
    assert [(name, row) for name, row, _ in found] == [("nets/base.py", 6)], result.stderr


def test_a_base_method_the_subclass_inherits_reads_the_attribute(tmp_path):
    files = dict(OPTIONS)
    files["nets/base.py"] += (
        "\n            def summaries(self):\n                return tf.summary.histogram('mask', self.option_mask)\n"
    )
    found, result = _project(tmp_path, files)
    assert sorted((name, row) for name, row, _ in found) == [("nets/base.py", 6), ("nets/embedding.py", 8)], result.stderr


def test_an_importer_reading_the_attribute_keeps_it_alive(tmp_path):
    files = dict(OPTIONS)
    files["nets/agent.py"] = """\
        from nets.embedding import EmbeddingNetwork


        def step(sess, net: EmbeddingNetwork, feed):
            return sess.run(net.option_mask, feed_dict=feed)
        """
    found, result = _project(tmp_path, files)
    assert sorted((name, row) for name, row, _ in found) == [("nets/base.py", 6), ("nets/embedding.py", 8)], result.stderr


# AutoAugment's bbox ops (google/automl efficientdet/aug/autoaugment.py, TPU detection's
# autoaugment_utils.py): `tf.map_fn` runs a lambda per box, the lambda calls `_rotate_bbox`, which
# calls `_check_bbox_area`, whose `tf.cond` picks between what a local helper returns and the
# unchanged pair.
CHECK_BBOX_AREA = """\
def _check_bbox_area(min_y, min_x, max_y, max_x, delta=0.05):
  height = max_y - min_y
  width = max_x - min_x
  def _adjust_bbox_boundaries(min_coord, max_coord):
    # Make sure max is never 0 and min is never 1.
    max_coord = tf.maximum(max_coord, 0.0 + delta)
    min_coord = tf.minimum(min_coord, 1.0 - delta)
    return min_coord, max_coord
  min_y, max_y = tf.cond(tf.equal(height, 0.0),
                         lambda: _adjust_bbox_boundaries(min_y, max_y),
                         lambda: (min_y, max_y))
  min_x, max_x = tf.cond(tf.equal(width, 0.0),
                         lambda: _adjust_bbox_boundaries(min_x, max_x),
                         lambda: (min_x, max_x))
  return min_y, min_x, max_y, max_x
"""

ROTATE_BBOX = """\
def _rotate_bbox(bbox, image_height, image_width, degrees):
  min_y = tf.cast(image_height * (bbox[0] - 0.5), tf.int32)
  min_x = tf.cast(image_width * (bbox[1] - 0.5), tf.int32)
  max_y = tf.cast(image_height * (bbox[2] - 0.5), tf.int32)
  max_x = tf.cast(image_width * (bbox[3] - 0.5), tf.int32)
  return tf.stack(CHECK(min_y, min_x, max_y, max_x))


def rotate_with_bboxes(image, bboxes, degrees, replace):
  image = rotate(image, degrees, replace)
  image_height = tf.shape(image)[0]
  image_width = tf.shape(image)[1]
  wrapped_rotate_bbox = lambda bbox: _rotate_bbox(bbox, image_height, image_width, degrees)
  bboxes = tf.map_fn(wrapped_rotate_bbox, bboxes)
  return image, bboxes
"""


def test_a_per_box_cond_whose_branch_calls_a_small_local_helper_is_reported():
    source = "import tensorflow as tf\n\n\n" + CHECK_BBOX_AREA + "\n\n" + ROTATE_BBOX.replace("CHECK", "_check_bbox_area")
    found = lint(source, ["TFP202"])
    assert [d.location.row for d in found] == [12, 15]
    assert "`_check_bbox_area`, which the `tf.map_fn` in `rotate_with_bboxes` runs for every element (2 calls deep)" \
        in found[0].message
    # The helper's body is not the lambda's text: no fix is offered, so `--fix` changes nothing.
    assert fix(source, ["TFP202"], unsafe=True) == source


def test_a_helper_branch_that_guards_skips_or_chooses_per_map_stays_silent():
    source = textwrap.dedent(
        """\
        import tensorflow as tf


        def _scaled(coord, size):
            return coord / size


        def _flipped(box):
            return tf.image.flip_left_right(box)


        def _long(coord):
            if coord is None:
                return coord
            return tf.minimum(coord, 1.0)


        def _one(box, size, training):
            a = tf.cond(size > 0.0, lambda: _scaled(box, size), lambda: box)
            b = tf.cond(tf.reduce_sum(box) > 0.0, lambda: _flipped(box), lambda: box)
            c = tf.cond(tf.reduce_sum(box) > 0.0, lambda: _long(box), lambda: box)
            d = tf.cond(training, lambda: _clip(box), lambda: box)
            return a + b + c + d


        def _clip(coord):
            return tf.minimum(coord, 1.0)


        def all_boxes(boxes, size, training):
            return tf.map_fn(lambda b: _one(b, size, training), boxes)
        """
    )
    # A division the cond guards, an image op the cond skips, a helper with a branch (not one
    # value), and a choice on a flag the map closes over (one choice for every box).
    assert lint(source, ["TFP202"]) == []


def test_a_per_box_helper_in_another_module_with_a_helper_branch(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'det'\n")
    package = tmp_path / "det"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "box_utils.py").write_text("import tensorflow as tf\n\n\n" + CHECK_BBOX_AREA)
    (package / "augment.py").write_text(
        "import tensorflow as tf\n\nfrom det import box_utils\n\n\n"
        + ROTATE_BBOX.replace("CHECK", "box_utils._check_bbox_area")
    )
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", "TFP202", ".", cwd=tmp_path)
    found = [(d["filename"].replace("\\", "/"), d["location"]["row"], d["message"]) for d in json.loads(result.stdout)]
    assert [(name, row) for name, row, _ in found] == [("det/box_utils.py", 12), ("det/box_utils.py", 15)], result.stderr
    assert "the `tf.map_fn` in `rotate_with_bboxes` (in `det/augment.py`)" in found[0][2]
