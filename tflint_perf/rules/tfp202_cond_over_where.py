"""TFP202 cond-over-where: ``tf.cond`` choosing between two cheap element-wise expressions."""

from __future__ import annotations

from typing import FrozenSet, Iterable, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.element_maps import ElementReach
from tflint_perf.analysis.elementwise import (
    about_shapes_or_nan,
    about_step_counter,
    elementwise_leaves,
    equal_parts,
    is_number,
    scalar_operands,
)
from tflint_perf.analysis.usage import result_unused
from tflint_perf.analysis.model import CallSite, FunctionInfo, ModuleModel
from tflint_perf.analysis.arguments import argument, has_star_args
from tflint_perf.analysis.hotpaths import parameter_names
from tflint_perf.analysis.small_functions import returned_expression
from tflint_perf.analysis.values import TENSOR, ValueKinds
from tflint_perf.text.diagnostics import UNSAFE, Finding, FixPlan, NodeEdit
from tflint_perf.fixes.building import code_in_block, tensorflow_api
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid

_TF = "import tensorflow as tf\n"


class CondOverWhere(Rule):
    code = "TFP202"
    name = "cond-over-where"
    summary = "`tf.cond` choosing between two cheap element-wise expressions; `tf.where` avoids the branch"
    fix_availability = "sometimes"

    what_it_does = """
Checks for `tf.cond(pred, true_fn, false_fn)` (also `tf.compat.v1.cond`) in code that runs per
element of a tensor or per step (a function passed to `tf.map_fn` or `tf.vectorized_map`, a
`tf.function`, a Keras layer's `call`), whose branches are a lambda or a short local function
returning a cheap, side-effect-free element-wise expression of the same tensors (or a tuple of
them, matched element by element), and whose predicate is a tensor.

The per-element site is often a few calls below the map: `tf.map_fn(lambda bbox: _clip_box(bbox,
height, width), boxes)`, where `_clip_box` calls a `_clamp(coord)` that chooses with `tf.cond`.
The rule follows the calls that pass the element (or values computed from it) a few levels down,
into other modules of the project too (`analysis/element_maps.py`), and reports the `tf.cond`
there, naming the map that runs it; such a site is reported whether the map sits in a
`tf.function`, a `Dataset.map` function or eager code. There the predicate must read the element:
a choice on what the map closes over (a `training` flag, the image's size) is the same for every
element, and is not reported; a random draw made in the per-element code (`tf.random.uniform(()) <
p`, a Keras layer's `self._random_generator.random_uniform(...)`) is one draw per element, and is.
The branches must be built from the same element values, two numbers, or the equal parts of one
`tf.split(x, n)` / `tf.unstack(x)` (a box's corner columns); a value the map closes over may appear
in them (`tf.minimum(coord, height)`).
A branch may call a small helper of the same module: AutoAugment's `_check_bbox_area`, which
`tf.map_fn` runs per box through `_rotate_bbox`, picks `lambda: _adjust_bbox_boundaries(min_y,
max_y)` or `lambda: (min_y, max_y)`, and the helper's few lines (`max_coord = tf.maximum(max_coord,
0.0 + delta)`, ...) are read with its parameters replaced by the arguments
(`analysis/small_functions.py`); no fix is offered there, since the branch is not its own text.

The map may be reached the way augmentation layers reach it (KerasCV's `BaseImageAugmentationLayer`):
its function is a parameter of a wrapper (`_map_fn(self, func, inputs)` calling `tf.map_fn(func,
inputs)`, or the Object Detection API's `static_or_dynamic_map_fn(fn, elems)` in another module),
and the mapped `self._augment` calls `self.augment_bounding_boxes(...)` and
`self.get_random_transformation(...)`, which a subclass in another module overrides: the rule follows
what callers pass for the wrapper's parameter, and the subclasses' overrides of the methods the
base's per-element code calls. KerasCV's own vectorised layers later replaced both of RandomShear's
per-image conds (the sign of the shear picking a box's corners, `random_inversion`'s random sign) by
one `tf.where` over the batch.

A per-element `tf.cond` whose result nothing reads (`self.mask = tf.map_fn(...)` with no read of
`mask` in the class, its base classes' methods that still run, or the modules importing them) is not
reported: in a TensorFlow 1 graph that op never runs, and the fix is to delete it
(`analysis/usage.py`).

Not reported:
- a `tf.cond` directly in a function passed to `Dataset.map` (a `tf.map_fn` inside it is still
  checked): the input pipeline runs on the CPU, where there is no host round trip to save, and the
  predicate of `tf.cond` is one scalar per element, so `tf.where` only adds work. Measured on a
  2-core CPU (1 thread, `benchmarks/tfp202_scalar_cond.py`), per 512x512x3 image:
  `tf.cond(reduce_max(image) > 1, minimum(image, 1), abs(image))` 0.47 ms against 3.06 ms with
  `tf.where`; a random `image * mask` against `image` (GridMask) 0.60 ms against 3.18 ms; a random
  sign on a scalar, 25.0 against 23.6 us per element of the pipeline (noise);
- a branch that calls a model or layer, has side effects (`assign`, `tf.print`, summaries,
  `py_function`), can raise (`tf.debugging.assert_*`), is expensive (matmul, convolution) or
  calls anything not known to be element-wise;
- a branch that can produce NaN or infinity (division by a tensor, `log`, `sqrt`, `exp`, `pow`):
  there the cond is usually a guard. That holds even when the predicate proves the denominator
  positive (`tf.cond(norm > t, lambda: g * t / norm, lambda: g)`): `tf.where` computes both
  branches for every input, so at `norm == 0` it still divides by zero, and although the
  selected value is right, the gradient with respect to `g` becomes NaN (measured) where the
  `tf.cond` gives 1;
- predicates about shapes or sizes (`tf.shape`, `tf.size`, `tf.rank`, `.shape`, `len`), and
  NaN guards (`tf.math.is_finite`, `is_nan`, `is_inf`);
- branches whose shapes may differ (different tensors, a constant against a tensor, slicing
  against no slicing, `tf.zeros([0])`, `image * mask` against `image` where `mask` might
  broadcast `image` to a larger shape): `tf.where` cannot return either shape. A number against
  the element of a `tf.map_fn` is reported when the predicate compares the element itself
  (`tf.cond(tf.less(x, n), lambda: x, lambda: 0)`): the predicate of `tf.cond` is a scalar, so
  the element is one too, and `tf.where(x < n, x, 0)` over the whole tensor does it;
- predicates that are Python values (`True`, a Python comparison, a flag parameter), which
  `tf.function` resolves while tracing at no cost.
- predicates on a training-step counter (`global_step < warmup_steps`, `optimizer.iterations`,
  `epoch`), as in learning-rate schedules: see below.
"""
    why_bad = """
`tf.cond` is control flow: the predicate has to be computed before either branch can start, and
on a GPU the runtime waits for it on the host before launching the chosen branch, leaving a gap
between kernels. Inside `tf.map_fn` that cost is paid for every element of the tensor, and it
prevents vectorising the whole computation. `tf.where(pred, a, b)` computes both
cheap expressions and selects element-wise, with no control flow, and once the branch is gone the
whole `map_fn` can usually become one `tf.where` over the tensor. Measured on a 2-core CPU, the
fix alone (`tf.where` inside the same `map_fn`) gained 1.0-1.3x (`tflint-perf bench TFP202`); replacing
the `map_fn` of `tf.cond` over 5,000 elements by one `tf.where` over the tensor gained 160x (0.88 s
against 0.0055 s per 20 calls). The large win needs that second, manual step.

Boxes clamped coordinate by coordinate in helpers that `tf.map_fn` runs per box
(`benchmarks/tfp202_scalar_cond.py --per-box`, TensorFlow 2.21, one thread in a `tf.function`,
median of 7 calls, on a 2-core CPU shared with other work, three runs): `map_fn` + `tf.cond` took
41.9, 128.7 and 146.9 ms for 1,000 boxes, 416, 1,164 and 1,908 ms for 10,000; one `tf.where` over the whole
`[n, 4]` batch took 0.17-0.27 ms and 0.51-0.67 ms: 250-820x for 1,000 boxes and 810-2,850x for
10,000. Swapping `tf.cond` for `tf.where` inside the same `map_fn` gained nothing (0.73-1.07x):
the win is removing the per-element map, which the `tf.where` form makes possible.
`tf.vectorized_map` already converts such a `tf.cond` (0.26-0.34 ms and 1.4-8.0 ms), so one
`tf.where` gains 1.2-15x there.

The same holds in the CPU input pipeline, where AutoAugment's bbox ops run per image: a
`tf.map_fn` over the image's boxes whose `_check_bbox_area` chooses with two `tf.cond`s took
1.31 ms per image with 20 boxes and 4.92 ms with 100, one `tf.where` over the boxes 0.21 and
0.23 ms: 6.2x and 21.6x (`benchmarks/tfp202_scalar_cond.py --bbox-area`, a `Dataset.map` over
200 images, best of 5, same machine).

Outside `tf.map_fn` the predicate of a `tf.cond` is a single scalar and the CPU gains nothing
(2,000 calls of a scalar cond with cheap branches: 0.70 s against 0.69 s); over large tensors
`tf.where` is slower on a CPU, since it computes both branches and selects every element. What
remains is the GPU argument: a `tf.cond` in a training step whose predicate is computed on the
device makes the runtime copy it to the host before it launches the chosen branch, which leaves
a gap in the GPU's stream (the GPU performance guide shows the gaps that loss scaling's host-side
conditionals leave); `tf.where` stays on the device. Learning-rate schedules such as
`tf.cond(global_step < warmup_steps, lambda: warmup_lr, lambda: lr)` are not worth a finding: the
predicate depends only on the step counter, known when the step starts, so its copy to the host
overlaps the forward pass and leaves no gap, and the branches are scalars (≈1.0x). The rule stays
silent on predicates that read a step counter.
"""
    example = """
import tensorflow as tf

@tf.function
def leaky(x):
    return tf.map_fn(lambda v: tf.cond(v > 0, lambda: v, lambda: 0.2 * v), x)
"""
    use_instead = """
import tensorflow as tf

@tf.function
def leaky(x):
    return tf.map_fn(lambda v: tf.where(v > 0, v, 0.2 * v), x)  # or tf.where(x > 0, x, 0.2 * x)
"""
    fix_safety = """
The fix replaces the call with `tf.where(pred, A, B)`, where `A` and `B` are the two lambdas'
bodies, spelled with the module's TensorFlow alias. It is **unsafe**: `tf.where` evaluates both
branches, so a value the predicate was guarding against is computed anyway, and if the gradient
of the unused branch is NaN or infinite the gradient of the whole `tf.where` becomes NaN (the
`tf.where` documentation's warning). The rule only proposes branches made of ops that cannot
produce NaN themselves, but inputs can. The fix is offered only when both branches are lambdas
without parameters whose bodies can be copied verbatim; the `tf.map_fn` around a `tf.where` can
often be removed as well, by hand. A `tf.cond` written one argument per line becomes a `tf.where`
written the same way, comments kept; one whose arguments are aligned under its bracket becomes a
one-line `tf.where` when that fits the file's line length, else keeps its line breaks, re-aligned.
"""
    references = (
        "[`tf.where`](https://www.tensorflow.org/api_docs/python/tf/where)",
        "[`tf.cond`](https://www.tensorflow.org/api_docs/python/tf/cond)",
        "[Better performance with tf.function: conditionals](https://www.tensorflow.org/guide/function#conditionals)",
        "[Optimize TensorFlow GPU performance](https://www.tensorflow.org/guide/gpu_performance_analysis)",
    )

    known_problems = """
A branch that calls a helper of another module, or a helper longer than a few plain assignments
and a `return` (an `if` in it, a loop, a default that is not a literal), is not read: the rule
compares element-wise expressions it can read. A helper reached only through `*args`, a map
whose function is chosen at run time or held on an attribute (`self._image_resizer_fn`), and a
wrapper module that the project's import roots do not resolve are not followed.
"""
    valid = (
        # A branch that calls a layer (expensive, skipped work).
        Valid(_TF + "@tf.function\ndef f(x, p):\n    return tf.cond(p > 0, lambda: dense(x), lambda: x)\n"),
        # Side effects.
        Valid(_TF + "@tf.function\ndef f(x, v):\n    return tf.cond(x > 0, lambda: v.assign(x), lambda: v.assign(-x))\n"),
        Valid(_TF + "@tf.function\ndef f(x):\n    return tf.cond(x > 0, lambda: tf.print(x), lambda: tf.no_op())\n"),
        # Can raise.
        Valid(_TF + "@tf.function\ndef f(x):\n    return tf.cond(x > 0, lambda: tf.debugging.assert_positive(x), lambda: x)\n"),
        # A guard: the division only runs when it is safe.
        Valid(_TF + "@tf.function\ndef f(a, n):\n    return tf.cond(n > 0, lambda: a / n, lambda: tf.zeros_like(a))\n"),
        # Matmul.
        Valid(_TF + "@tf.function\ndef f(a, b):\n    return tf.cond(tf.reduce_any(a > 0), lambda: tf.matmul(a, b), lambda: a)\n"),
        # A NaN guard.
        Valid(_TF + "@tf.function\ndef f(loss):\n    return tf.cond(tf.math.is_finite(loss), lambda: loss, lambda: tf.zeros_like(loss))\n"),
        # Shape predicates and shapes that differ.
        Valid(_TF + "@tf.function\ndef f(x):\n    return tf.cond(tf.size(x) > 0, lambda: x * 2.0, lambda: x)\n"),
        Valid(_TF + "@tf.function\ndef f(x):\n    return tf.cond(x.shape[0] > 2, lambda: x * 2.0, lambda: x)\n"),
        Valid(_TF + "@tf.function\ndef f(x):\n    return tf.cond(tf.rank(x) > len(y), lambda: x * 2.0, lambda: x)\n"),
        # Side effects and Python callbacks.
        Valid(
            _TF + "@tf.function\ndef f(x, step):\n"
            "    return tf.cond(x > 0, lambda: tf.summary.scalar('x', x, step=step), lambda: False)\n"
        ),
        Valid(_TF + "@tf.function\ndef f(x):\n    return tf.cond(x > 0, lambda: tf.py_function(g, [x], tf.float32), lambda: x)\n"),
        Valid(_TF + "@tf.function\ndef f(x):\n    return tf.cond(tf.reduce_sum(x) > 0, lambda: x, lambda: tf.zeros([0]))\n"),
        Valid(_TF + "@tf.function\ndef f(x, y):\n    return tf.cond(tf.reduce_sum(x) > 0, lambda: x, lambda: y)\n"),
        Valid(_TF + "@tf.function\ndef f(x):\n    return tf.cond(tf.reduce_sum(x) > 0, lambda: x[1:], lambda: x)\n"),
        # Python-bool predicates.
        Valid(_TF + "@tf.function\ndef f(x):\n    return tf.cond(True, lambda: x * 2.0, lambda: -x)\n"),
        Valid(_TF + "@tf.function\ndef f(x, use_abs=False):\n    return tf.cond(use_abs, lambda: tf.abs(x), lambda: x)\n"),
        Valid(_TF + "SCALE = 3\n@tf.function\ndef f(x):\n    return tf.cond(SCALE > 2, lambda: x * 2.0, lambda: -x)\n"),
        # Not a hot path: eager, one-off.
        Valid(_TF + "y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: -x)\n"),
        # A helper branch that divides by what the predicate guards, per box under `tf.map_fn`.
        Valid(
            _TF + "def _scaled(coord, size):\n    return coord / size\n\n"
            "def _one(box):\n    size = tf.reduce_sum(box)\n"
            "    return tf.cond(size > 0.0, lambda: _scaled(box, size), lambda: box)\n\n"
            "def scale_boxes(boxes):\n    return tf.map_fn(_one, boxes)\n"
        ),
        # An unknown call in a branch.
        Valid(_TF + "@tf.function\ndef f(x):\n    return tf.cond(tf.reduce_sum(x) > 0, lambda: helper(x), lambda: x)\n"),
        # A division whose denominator the predicate proves positive: tf.where still divides by
        # zero in the branch it does not select, and the gradient becomes NaN.
        Valid(_TF + "@tf.function\ndef clip(g, t):\n    norm = tf.norm(g)\n"
              "    return tf.cond(norm > t, lambda: g * t / norm, lambda: g)\n"),
        # A Dataset.map function (CPU, one scalar predicate per element): tf.where is slower there.
        Valid(
            "import tensorflow as tf2\n\ndef clip(image, label):\n"
            "    image = tf2.compat.v1.cond(tf2.reduce_max(image) > 1.0, true_fn=lambda: tf2.minimum(image, 1.0),\n"
            "                               false_fn=lambda: tf2.abs(image))\n    return image, label\n\n"
            "ds = tf2.data.Dataset.from_tensor_slices((x, y)).map(clip)\n"
        ),
        Valid(
            _TF + "def negate(level, label):\n    flip = tf.random.uniform([]) < 0.5\n"
            "    return tf.cond(flip, lambda: level, lambda: -level), label\n\n"
            "ds = tf.data.Dataset.from_tensor_slices((x, y)).map(negate)\n"
        ),
        # GridMask: a random multiplication by a mask that may broadcast the image.
        Valid(
            _TF + "@tf.function\ndef grid(image, mask):\n    occur = tf.random.normal([]) < 0.6\n"
            "    return tf.cond(occur, lambda: image * mask, lambda: image)\n"
        ),
        # A helper mapped per box, choosing on a training flag the map closes over: one choice for all boxes.
        Valid(
            _TF + "def _jitter(coord, training):\n"
            "    return tf.cond(training, lambda: tf.minimum(coord, 1.0), lambda: tf.abs(coord))\n\n"
            "def jitter_boxes(boxes, training):\n    return tf.map_fn(lambda b: _jitter(b, training), boxes)\n"
        ),
        # A number against the element, where nothing shows the element is a scalar (a row of a
        # matrix): `tf.where` would broadcast the number to the row's shape, `tf.cond` keeps a scalar.
        Valid(
            _TF + "def mask_rows(rows):\n"
            "    return tf.map_fn(lambda x: tf.cond(tf.reduce_sum(x) > 0, lambda: x, lambda: 0.0), rows)\n"
        ),
        # A per-element choice whose result nothing reads (a TF1 graph op that never runs): the
        # fix is to delete it, not to speed it up.
        Valid(
            _TF + "class Network:\n    def build_losses(self):\n"
            "        self.option_mask = tf.map_fn(lambda x: tf.cond(tf.less(x, self.nb_options), lambda: x, lambda: 0),\n"
            "                                     self.options_placeholder)\n"
            "        self.loss = tf.reduce_mean(self.q_values)\n"
        ),
        Valid(
            _TF + "def build(options, n):\n"
            "    mask = tf.map_fn(lambda x: tf.cond(tf.less(x, n), lambda: x, lambda: 0), options)\n"
            "    return tf.reduce_sum(options)\n"
        ),
        # A random choice per element between different tensors that nothing shows of one shape.
        Valid(
            _TF + "def jitter(boxes, other):\n"
            "    return tf.map_fn(lambda b: tf.cond(tf.random.uniform(()) < 0.5, lambda: b, lambda: other), boxes)\n"
        ),
        # The parts of an uneven split (sizes, not a count) may differ in shape.
        Valid(
            _TF + "def pick(rows):\n"
            "    def one(row):\n        a, b = tf.split(row, [1, 3])\n"
            "        return tf.cond(tf.reduce_sum(row) > 0, lambda: a, lambda: b)\n"
            "    return tf.map_fn(one, rows)\n"
        ),
        # Learning-rate schedules: a predicate on the step counter, scalar branches.
        Valid(
            _TF + "@tf.function\ndef lr(step, warmup_lr, base_lr):\n"
            "    return tf.cond(step < 1000, lambda: warmup_lr, lambda: base_lr)\n"
        ),
        Valid(
            _TF + "@tf.function\ndef lr(global_step, base_lr, warmup_steps):\n"
            "    return tf.cond(tf.less(global_step, warmup_steps), lambda: base_lr * 0.1, lambda: base_lr)\n"
        ),
        Valid(
            _TF + "class Model(tf.keras.Model):\n    def train_step(self, data):\n"
            "        lr = tf.cond(tf.greater(self.optimizer.iterations, 100), lambda: self.lr * 0.5, lambda: self.lr)\n"
            "        return {'lr': lr}\n"
        ),
    )
    invalid = (
        Invalid(
            _TF + "@tf.function\ndef leaky(x):\n"
            "    return tf.map_fn(lambda v: tf.cond(v > 0, lambda: v, lambda: 0.2 * v), x)\n",
            unsafe=True,
            fixed=_TF + "@tf.function\ndef leaky(x):\n"
            "    return tf.map_fn(lambda v: tf.where(v > 0, v, 0.2 * v), x)\n",
        ),
        Invalid(
            _TF + "@tf.function\ndef leaky(x):\n"
            "    return tf.map_fn(lambda v: tf.cond(v > 0, lambda: v, lambda: 0.2 * v), x)\n",
            fixed=None,
        ),
        # tf.map_fn inside a Dataset.map function, keyword form, tf.compat.v1.cond.
        Invalid(
            "import tensorflow as tf2\n\ndef clip(values, label):\n"
            "    values = tf2.map_fn(lambda v: tf2.compat.v1.cond(v > 1.0, true_fn=lambda: tf2.minimum(v, 1.0),\n"
            "                                                     false_fn=lambda: tf2.abs(v)), values)\n"
            "    return values, label\n\n"
            "ds = tf2.data.Dataset.from_tensor_slices((x, y)).map(clip)\n",
            unsafe=True,
            fixed="import tensorflow as tf2\n\ndef clip(values, label):\n"
            "    values = tf2.map_fn(lambda v: tf2.where(v > 1.0, tf2.minimum(v, 1.0), tf2.abs(v)), values)\n"
            "    return values, label\n\n"
            "ds = tf2.data.Dataset.from_tensor_slices((x, y)).map(clip)\n",
        ),
        # Per-element code two calls below the map (a box clipped coordinate by coordinate): reported at the cond.
        Invalid(
            _TF + "def _clamp(coord, hi):\n"
            "    return tf.cond(coord < 0.0, lambda: tf.zeros_like(coord), lambda: tf.minimum(coord, hi))\n\n"
            "def _clip_box(box, height, width):\n    ymin, xmin, ymax, xmax = tf.unstack(box)\n"
            "    return tf.stack([_clamp(ymin, height), _clamp(xmin, width), _clamp(ymax, height), _clamp(xmax, width)])\n\n"
            "def clip_boxes(image, boxes):\n    height = tf.cast(tf.shape(image)[0], tf.float32)\n"
            "    width = tf.cast(tf.shape(image)[1], tf.float32)\n"
            "    return tf.map_fn(lambda bbox: _clip_box(bbox, height, width), boxes)\n",
            unsafe=True,
            fixed=_TF + "def _clamp(coord, hi):\n"
            "    return tf.where(coord < 0.0, tf.zeros_like(coord), tf.minimum(coord, hi))\n\n"
            "def _clip_box(box, height, width):\n    ymin, xmin, ymax, xmax = tf.unstack(box)\n"
            "    return tf.stack([_clamp(ymin, height), _clamp(xmin, width), _clamp(ymax, height), _clamp(xmax, width)])\n\n"
            "def clip_boxes(image, boxes):\n    height = tf.cast(tf.shape(image)[0], tf.float32)\n"
            "    width = tf.cast(tf.shape(image)[1], tf.float32)\n"
            "    return tf.map_fn(lambda bbox: _clip_box(bbox, height, width), boxes)\n",
        ),
        # A per-element choice between the element and a number: the predicate compares the element,
        # so it is a scalar, and so is the number (an A3C network's batch of option indices).
        Invalid(
            _TF + "class Network:\n    def build_losses(self):\n"
            "        self.option_mask = tf.map_fn(lambda x: tf.cond(tf.less(x, self.nb_options), lambda: x, lambda: 0),\n"
            "                                     self.options_placeholder)\n"
            "        self.policies = self.get_policies(self.option_mask)\n",
            unsafe=True,
            fixed=_TF + "class Network:\n    def build_losses(self):\n"
            "        self.option_mask = tf.map_fn(lambda x: tf.where(tf.less(x, self.nb_options), x, 0),\n"
            "                                     self.options_placeholder)\n"
            "        self.policies = self.get_policies(self.option_mask)\n",
        ),
        # A random sign drawn per element in a helper the map reaches through a function-valued
        # parameter (KerasCV's `random_inversion`, under `self._map_fn(self._augment, inputs)`).
        Invalid(
            _TF + "def random_inversion(generator):\n"
            "    negate = generator.random_uniform((), 0, 1) > 0.5\n"
            "    return tf.cond(negate, lambda: -1.0, lambda: 1.0)\n\n"
            "class Shear(tf.keras.layers.Layer):\n"
            "    def _map_fn(self, func, inputs):\n        return tf.vectorized_map(func, inputs)\n\n"
            "    def _augment(self, image):\n        amount = random_inversion(self._random_generator) * self.factor\n"
            "        return self.shear(image, amount)\n\n"
            "    def call(self, images):\n        return self._map_fn(self._augment, images)\n",
            unsafe=True,
            fixed=_TF + "def random_inversion(generator):\n"
            "    negate = generator.random_uniform((), 0, 1) > 0.5\n"
            "    return tf.where(negate, -1.0, 1.0)\n\n"
            "class Shear(tf.keras.layers.Layer):\n"
            "    def _map_fn(self, func, inputs):\n        return tf.vectorized_map(func, inputs)\n\n"
            "    def _augment(self, image):\n        amount = random_inversion(self._random_generator) * self.factor\n"
            "        return self.shear(image, amount)\n\n"
            "    def call(self, images):\n        return self._map_fn(self._augment, images)\n",
        ),
        # Tuple branches from local functions choosing between the equal parts of one `tf.split`
        # (KerasCV's RandomShear picking a box's corners by the sign of the image's shear), reached
        # through a base class's map calling the subclass's override.
        Invalid(
            _TF + "class Base(tf.keras.layers.Layer):\n"
            "    def _augment(self, inputs):\n        boxes = inputs['boxes']\n"
            "        shear = self.get_random_transformation(image=inputs['images'])\n"
            "        return self.augment_bounding_boxes(boxes, transformation=shear)\n\n"
            "    def call(self, inputs):\n        return tf.map_fn(self._augment, inputs)\n\n"
            "class Shear(Base):\n"
            "    def augment_bounding_boxes(self, boxes, transformation):\n"
            "        return self._four_corners(boxes, transformation)\n\n"
            "    @staticmethod\n    def _four_corners(corners, x):\n"
            "        tl_x, br_x, tr_x, bl_x = tf.split(corners, 4, axis=1)\n\n"
            "        def negative():\n            x1 = tl_x\n            x2 = br_x\n            return x1, x2\n\n"
            "        def positive():\n            x1 = bl_x\n            x2 = tr_x\n            return x1, x2\n\n"
            "        x1, x2 = tf.cond(tf.less(x, 0), negative, positive)\n"
            "        return tf.concat([x1, x2], axis=1)\n",
            unsafe=True,
            fixed=None,
        ),
        # AutoAugment's `_check_bbox_area`, per box under `tf.map_fn` two calls down: a branch that
        # calls a small local helper is read through it (reported, no fix: the branch is not its text).
        Invalid(
            _TF + "def _check_bbox_area(min_y, max_y, delta=0.05):\n    height = max_y - min_y\n\n"
            "    def _adjust(min_coord, max_coord):\n        max_coord = tf.maximum(max_coord, 0.0 + delta)\n"
            "        min_coord = tf.minimum(min_coord, 1.0 - delta)\n        return min_coord, max_coord\n\n"
            "    return tf.cond(tf.equal(height, 0.0), lambda: _adjust(min_y, max_y), lambda: (min_y, max_y))\n\n"
            "def _shift_bbox(bbox, pixels):\n    return _check_bbox_area(bbox[0] + pixels, bbox[2] + pixels)\n\n"
            "def translate_bbox(bboxes, pixels):\n    return tf.map_fn(lambda bbox: _shift_bbox(bbox, pixels), bboxes)\n",
            unsafe=True,
            fixed=None,
        ),
        # Local one-line functions as branches: reported, but no fix.
        Invalid(
            _TF + "@tf.function\ndef f(x):\n    def pos():\n        return x * 2.0\n\n    def neg():\n        return -x\n\n"
            "    return tf.cond(tf.reduce_mean(x) > 0, pos, neg)\n",
            unsafe=True,
            fixed=None,
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        values: Optional[ValueKinds] = None
        for site in model.calls:
            call = site.node
            if model.call_name(call) != "tf.cond" or has_star_args(call):
                continue
            pred = argument(call, "pred", 0)
            true_fn = argument(call, "true_fn", 1) or argument(call, "fn1", None)
            false_fn = argument(call, "false_fn", 2) or argument(call, "fn2", None)
            if pred is None or true_fn is None or false_fn is None:
                continue
            # Code a `tf.map_fn` runs for every element, directly or through the helpers it calls with
            # the element: a choice there is per element when the predicate reads the element.
            reaches = model.element_maps.reaches(site)
            reach = None
            if reaches:
                # Per element the choice is one when the predicate reads the element or a random draw
                # made per element; a training flag the map closes over is the same for every element.
                reach = next((r for r in reaches if model.element_maps.varies_per_element(r, pred.value, site)), None)
                if reach is None:
                    continue
                if result_unused(reach.map_model, reach.map_call):
                    continue  # nothing reads what the map computes (a TF1 graph op never run)
                tensors, where = reach.elements, _per_element(model, reach)
            else:
                hot = model.hot_paths.context_of_site(site)
                if hot is None or hot.kind == "dataset":
                    continue  # the CPU input pipeline: one scalar predicate per element, nothing to save
                tensors, where = model.hot_paths.element_parameters(site), hot.description
            if about_shapes_or_nan(model, pred.value) or about_step_counter(pred.value):
                continue
            values = values or ValueKinds(model)
            # A predicate reading the element is a tensor (`s > threshold`, whatever `threshold` is).
            if reach is None and values.kind(pred.value, site.function, site.place, site.lambdas, tensors) != TENSOR:
                continue
            branches = [_branch(model, fn.value, site) for fn in (true_fn, false_fn)]
            if branches[0] is None or branches[1] is None:
                continue
            pairs = _component_pairs(branches[0][0], branches[1][0])  # type: ignore[index]
            if not pairs or not all(
                _same_shaped_choice(model, values, pred.value, pair, site, tensors if reach else None)
                for pair in pairs
            ):
                continue
            message = (
                f"`tf.cond` picks between two cheap element-wise expressions in {where}; "
                "`tf.where(pred, a, b)` computes both and selects without control flow"
            )
            if reach is not None:  # the gain is in removing the map (measured: the swap alone gains nothing)
                message += ", so one `tf.where` over the whole batch can replace the per-element map"
            yield self.finding(message, call.func, call, self._fix(context, site, (pred, true_fn, false_fn), branches))

    def _fix(self, context: RuleContext, site: CallSite, args: Tuple[cst.Arg, cst.Arg, cst.Arg], branches,
             ) -> Optional[FixPlan]:
        if not all(is_lambda for _, is_lambda in branches):
            return None
        spelling = tensorflow_api(context.model, "where", site.node)
        if spelling is None:
            return None
        where, imports = spelling
        blocks = site.place.blocks
        values = (args[0].value, branches[0][0], branches[1][0])
        parts = [code_in_block(context.model, node, blocks) for node in values]
        joined = NodeEdit(site.node, "replace", f"{where}({', '.join(parts)})")
        kept = _keep_layout(context.model, site, where, args, values)
        if kept is None or "\n" not in kept.content:
            return FixPlan(UNSAFE, f"Replace with `{where}`", (joined,), imports)
        if isinstance(site.node.whitespace_before_args, cst.ParenthesizedWhitespace):
            return FixPlan(UNSAFE, f"Replace with `{where}`", (kept,), imports)  # one argument per line: keep it
        # Aligned under the bracket: one line if it fits, else the call's own line breaks.
        return FixPlan(UNSAFE, f"Replace with `{where}`", (joined,), imports, wrapped=(kept,))


def _component_pairs(first: cst.BaseExpression, second: cst.BaseExpression
                     ) -> List[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """The two branches' values side by side: one pair, or one per element of two tuples of one
    length (`lambda: (min_y, max_y)`); none when they cannot be matched."""
    if isinstance(first, cst.Tuple) or isinstance(second, cst.Tuple):
        if not (isinstance(first, cst.Tuple) and isinstance(second, cst.Tuple)):
            return []
        if len(first.elements) != len(second.elements) or any(
            isinstance(e, cst.StarredElement) for e in (*first.elements, *second.elements)
        ):
            return []
        return [(a.value, b.value) for a, b in zip(first.elements, second.elements)]
    return [(first, second)]


def _same_shaped_choice(model: ModuleModel, values: ValueKinds, pred: cst.BaseExpression, pair, site: CallSite,
                        elements: Optional[FrozenSet[str]]) -> bool:
    """Both values are cheap element-wise expressions of one shape: what ``tf.where`` can select
    between. ``elements``: the element values, in per-element code (None elsewhere)."""
    leaves = [elementwise_leaves(model, values, body, site) for body in pair]
    if leaves[0] is None or leaves[1] is None:
        return False
    if elements is not None:
        # The predicate of `tf.cond` is a scalar: two numbers are two scalars.
        if is_number(pair[0]) and is_number(pair[1]):
            return True
        # A number against the element, when the predicate compares the element and so proves
        # it a scalar (`tf.cond(x < n, lambda: x, lambda: 0)`): both branches are scalars.
        scalar = _scalar_against_number(model, pred, [(pair[0], True), (pair[1], True)], leaves, elements)
        # Per element, the branches must be built from the same element values; what the map
        # closes over (a window's height) is one value for every element, and `map_fn` would
        # reject branches whose shapes differ from one element to the next.
        leaves = [side & elements for side in leaves]
        if scalar:
            return True
        if not leaves[0] or not leaves[1]:
            return False
    # Different tensors of one shape: the parts of one equal `tf.split` (a box's corner columns).
    return leaves[0] == leaves[1] or equal_parts(model, leaves[0] | leaves[1], site.function)


def _scalar_against_number(model: ModuleModel, pred: cst.BaseExpression, branches, leaves, elements) -> bool:
    """One branch is a number and the other is built only from element values that the predicate
    compares, which makes them scalars: the two branches have the same (scalar) shape."""
    scalars = scalar_operands(model, pred) & elements
    for (body, _), other in ((branches[0], leaves[1]), (branches[1], leaves[0])):
        if is_number(body) and other and other <= scalars:
            return True
    return False


def _per_element(model: ModuleModel, reach: ElementReach) -> str:
    """Where a per-element ``tf.cond`` is, for the message: the mapped function itself, or a helper
    it calls with the element, and which map runs it."""
    mapped = reach.describe(model)
    if reach.depth == 0:
        return f"a function passed to {mapped}"
    name = f"`{reach.function.name}`" if isinstance(reach.function, FunctionInfo) else "a lambda"
    calls = "call" if reach.depth == 1 else "calls"
    return f"{name}, which {mapped} runs for every element ({reach.depth} {calls} deep)"


def _keep_layout(model: ModuleModel, site: CallSite, where: str, args, values) -> Optional[NodeEdit]:
    """The ``tf.where`` call written with the ``tf.cond`` call's own whitespace, line breaks and
    comments: each branch's lambda replaced by its body, keywords dropped. None when the call has
    other arguments or passes them out of order."""
    call = site.node
    if len(call.args) != 3 or [id(arg) for arg in call.args] != [id(arg) for arg in args]:
        return None
    new_args = [arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT, value=value)
                for arg, value in zip(call.args, values)]
    if not isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        # Continuation lines aligned under the bracket move with it (`tf.compat.v1.cond(` is longer).
        shift = len(where) - len(model.module.code_for_node(call.func))
        new_args = [_shifted(arg, shift) for arg in new_args]
    rebuilt = call.with_changes(func=cst.parse_expression(where), args=new_args, lpar=[], rpar=[])
    return NodeEdit(call, "replace", code_in_block(model, rebuilt, site.place.blocks))


def _shifted(arg: cst.Arg, shift: int) -> cst.Arg:
    comma = arg.comma
    if not isinstance(comma, cst.Comma) or not isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        return arg
    last_line = comma.whitespace_after.last_line.value
    if len(last_line) + shift < 0:
        return arg
    whitespace = comma.whitespace_after.with_changes(last_line=cst.SimpleWhitespace(" " * (len(last_line) + shift)))
    return arg.with_changes(comma=comma.with_changes(whitespace_after=whitespace))


def _branch(model: ModuleModel, expr: cst.BaseExpression, site: CallSite) -> Optional[Tuple[cst.BaseExpression, bool]]:
    """(the value a parameterless one-expression branch returns, whether it is a lambda whose body
    the fix can copy): a lambda's body, or what the small function it calls (``lambda:
    _adjust_bbox_boundaries(min_y, max_y)``) or the local function it names returns, inlined."""
    hidden = tuple(name for lam in site.lambdas for name in parameter_names(lam))
    if isinstance(expr, cst.Lambda):
        params = expr.params
        if params.params or params.posonly_params or params.kwonly_params or isinstance(params.star_arg, cst.Param):
            return None
        body = expr.body
        helper = model.call_graph.callee(body) if isinstance(body, cst.Call) else None
        inlined = returned_expression(model, helper, body, site.function, hidden) if helper is not None else None
        return (inlined, False) if inlined is not None else (body, True)
    if isinstance(expr, cst.Name):
        function = model.lookup_function(expr.value, site.function)
        body = returned_expression(model, function, None, site.function, hidden) if function is not None else None
        return (body, False) if body is not None else None
    return None
