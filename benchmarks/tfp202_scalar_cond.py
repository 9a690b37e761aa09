"""What TFP202's exclusions rest on: `tf.cond` against `tf.where` outside `tf.map_fn`.

`tf.cond` takes one scalar predicate, so outside `tf.map_fn` a `tf.where` chooses once for the whole
tensor while computing both branches. This times both forms, one thread, best of 5:

- per 512x512x3 image in a `Dataset.map`: GridMask's random `image * mask` against `image`, and
  `minimum(image, 1)` against `abs(image)` under `reduce_max(image) > 1`;
- per element of a `Dataset.map` on a scalar (AutoAugment's random sign of a magnitude);
- and checks the gradient of a division guarded by the predicate
  (`norm > t: g * t / norm else g`) at `norm == 0` in both forms.

    python benchmarks/tfp202_scalar_cond.py
    python benchmarks/tfp202_scalar_cond.py --per-box     # boxes clamped by helpers under tf.map_fn
    python benchmarks/tfp202_scalar_cond.py --bbox-area   # AutoAugment's _check_bbox_area, per image

`--bbox-area` times what AutoAugment's bbox ops do per image in the input pipeline: a `tf.map_fn`
over the image's boxes whose `_check_bbox_area` chooses with two `tf.cond`s (a branch calling a
local helper), against one `tf.where` over the boxes. Measured with TensorFlow 2.21 on the same
2-core CPU shared with other work (best of 5 passes over 200 images): 1.31 against 0.21 ms per
image with 20 boxes (6.2x), 4.92 against 0.23 ms with 100 boxes (21.6x).

Measured with TensorFlow 2.21 on a 2-core CPU: 0.60 against 3.18 ms (GridMask), 0.47 against
3.06 ms (clip), 25.0 against 23.6 us (scalar, noise); gradient 1 with `tf.cond`, NaN with `tf.where`.
A second run on the same machine under load from other work: 1.26 against 4.49 ms, 0.67 against
12.43 ms, 135 against 165 us: the absolute times move, the direction does not.
"""

from __future__ import annotations

import statistics
import sys
import time

import tensorflow as tf

tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

IMAGE = tf.random.uniform([512, 512, 3]) * 1.5
MASK = tf.cast(tf.random.uniform([512, 512, 1]) > 0.5, tf.float32)
IMAGES = 100
SCALARS = 20000


def best_of(fn, repeats: int = 5) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def drain(ds: tf.data.Dataset):
    return lambda: [None for _ in ds]


def grid_cond(image, mask):
    occur = tf.random.normal([], 0, 1) < 0.6
    return tf.cond(occur, lambda: image * mask, lambda: image)


def grid_where(image, mask):
    occur = tf.random.normal([], 0, 1) < 0.6
    return tf.where(occur, image * mask, image)


def clip_cond(image):
    return tf.cond(tf.reduce_max(image) > 1.0, lambda: tf.minimum(image, 1.0), lambda: tf.abs(image))


def clip_where(image):
    return tf.where(tf.reduce_max(image) > 1.0, tf.minimum(image, 1.0), tf.abs(image))


def _level(x):
    flip = tf.cast(tf.floor(tf.random.uniform([]) + 0.5), tf.bool)
    return flip, tf.cast(x, tf.float32) / 10.0 * 30.0


def negate_cond(x):
    flip, level = _level(x)
    return tf.cond(flip, lambda: level, lambda: -level)


def negate_where(x):
    flip, level = _level(x)
    return tf.where(flip, level, -level)


def guarded_gradient(select) -> float:
    g, t = tf.zeros([4]), tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(g)
        norm = tf.norm(g)
        y = select(norm > t, lambda: g * t / norm, lambda: g)
    return float(tape.gradient(y, g).numpy()[0])


# -- per-element code reached through helpers: the case TFP202 reports ----------------------------
# A box clamped coordinate by coordinate in a helper that `tf.map_fn` runs for every box (the shape
# of detection code's `_clip_box` / `_check_bbox_area`), against the in-place fix (`tf.where` inside
# the same map) and against one `tf.where` over the whole batch of boxes, which the fix makes possible.
BOX_COUNTS = (1000, 10000)
RUNS = 7


def median_of(fn, runs: int = RUNS) -> float:
    fn()  # trace and warm up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _clamp_cond(coord):
    return tf.cond(coord < 0.0, lambda: tf.zeros_like(coord), lambda: tf.minimum(coord, 1.0))


def _clamp_where(coord):
    return tf.where(coord < 0.0, tf.zeros_like(coord), tf.minimum(coord, 1.0))


def _clip_box_cond(box):
    return tf.stack([_clamp_cond(box[0]), _clamp_cond(box[1]), _clamp_cond(box[2]), _clamp_cond(box[3])])


def _clip_box_where(box):
    return tf.stack([_clamp_where(box[0]), _clamp_where(box[1]), _clamp_where(box[2]), _clamp_where(box[3])])


@tf.function
def boxes_map_cond(boxes):
    return tf.map_fn(_clip_box_cond, boxes)


@tf.function
def boxes_map_where(boxes):
    return tf.map_fn(_clip_box_where, boxes)


@tf.function
def boxes_vectorized_cond(boxes):
    return tf.vectorized_map(_clip_box_cond, boxes)


@tf.function
def boxes_where(boxes):
    return _clamp_where(boxes)  # one tf.where over every coordinate of every box


def per_box() -> None:
    forms = (("map_fn + tf.cond", boxes_map_cond), ("map_fn + tf.where", boxes_map_where),
             ("vectorized_map + tf.cond", boxes_vectorized_cond), ("one tf.where", boxes_where))
    for count in BOX_COUNTS:
        boxes = tf.random.uniform([count, 4], -0.5, 1.5)
        expected = boxes_where(boxes)
        for name, fn in forms:
            assert bool(tf.reduce_all(fn(boxes) == expected)), name
            seconds = median_of(lambda: fn(boxes).numpy())
            print(f"{count:6d} boxes  {name:26s} {1000 * seconds:9.3f} ms per call (median of {RUNS})")


def main() -> None:
    for name, fn in (("GridMask tf.cond", grid_cond), ("GridMask tf.where", grid_where)):
        ds = tf.data.Dataset.from_tensors((IMAGE, MASK)).repeat(IMAGES).map(fn)
        print(f"{name:22s} {1000 * best_of(drain(ds)) / IMAGES:7.2f} ms per image")
    for name, fn in (("clip tf.cond", clip_cond), ("clip tf.where", clip_where)):
        ds = tf.data.Dataset.from_tensors(IMAGE).repeat(IMAGES).map(fn)
        print(f"{name:22s} {1000 * best_of(drain(ds)) / IMAGES:7.2f} ms per image")
    for name, fn in (("random sign tf.cond", negate_cond), ("random sign tf.where", negate_where)):
        ds = tf.data.Dataset.range(SCALARS).map(fn)
        print(f"{name:22s} {1e6 * best_of(drain(ds)) / SCALARS:7.2f} us per element")
    print("guarded division, d/dg at norm == 0: tf.cond", guarded_gradient(tf.cond),
          "tf.where", guarded_gradient(lambda p, a, b: tf.where(p, a(), b())))


def _check_bbox_area_cond(min_y, min_x, max_y, max_x, delta=0.05):
    """AutoAugment's `_check_bbox_area` as written (google/automl, TPU detection): per box."""
    height = max_y - min_y
    width = max_x - min_x

    def _adjust_bbox_boundaries(min_coord, max_coord):
        max_coord = tf.maximum(max_coord, 0.0 + delta)
        min_coord = tf.minimum(min_coord, 1.0 - delta)
        return min_coord, max_coord
    min_y, max_y = tf.cond(tf.equal(height, 0.0), lambda: _adjust_bbox_boundaries(min_y, max_y),
                           lambda: (min_y, max_y))
    min_x, max_x = tf.cond(tf.equal(width, 0.0), lambda: _adjust_bbox_boundaries(min_x, max_x),
                           lambda: (min_x, max_x))
    return tf.stack([min_y, min_x, max_y, max_x])


def _area_per_box(image, boxes):
    return image, tf.map_fn(lambda box: _check_bbox_area_cond(box[0], box[1], box[2], box[3]), boxes)


def _area_batch(image, boxes, delta=0.05):
    """The same nudge as one `tf.where` over every box's coordinates."""
    min_y, min_x, max_y, max_x = tf.unstack(boxes, axis=1)
    flat_y, flat_x = tf.equal(max_y - min_y, 0.0), tf.equal(max_x - min_x, 0.0)
    return image, tf.stack([tf.where(flat_y, tf.minimum(min_y, 1.0 - delta), min_y),
                            tf.where(flat_x, tf.minimum(min_x, 1.0 - delta), min_x),
                            tf.where(flat_y, tf.maximum(max_y, 0.0 + delta), max_y),
                            tf.where(flat_x, tf.maximum(max_x, 0.0 + delta), max_x)], axis=1)


def bbox_area(images: int = 200) -> None:
    """Per image in a `Dataset.map` (the CPU input pipeline AutoAugment runs in): the per-box
    `map_fn` of `_check_bbox_area`'s two `tf.cond`s against one `tf.where` over the image's boxes."""
    image = tf.zeros([64, 64, 3])
    for count in (20, 100):
        mins = tf.random.uniform([count, 2], 0.0, 0.5)
        maxs = mins + tf.random.uniform([count, 2], 0.0, 0.5)
        maxs = tf.where(tf.random.uniform([count, 2]) < 0.3, mins, maxs)  # some flat boxes: both branches run
        boxes = tf.concat([mins, maxs], axis=1)
        expected = _area_batch(image, boxes)[1]
        for name, fn in (("map_fn + tf.cond", _area_per_box), ("one tf.where", _area_batch)):
            assert bool(tf.reduce_all(tf.abs(fn(image, boxes)[1] - expected) < 1e-6)), name
            ds = tf.data.Dataset.from_tensors((image, boxes)).repeat(images).map(fn)
            print(f"{count:4d} boxes per image  {name:18s} {1000 * best_of(drain(ds)) / images:8.3f} ms per image")


if __name__ == "__main__":
    if "--per-box" in sys.argv:
        per_box()
    elif "--bbox-area" in sys.argv:
        bbox_area()
    else:
        main()
