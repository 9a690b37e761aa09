"""What TFP202's exclusions rest on: `tf.cond` against `tf.where` outside `tf.map_fn`.

`tf.cond` takes one scalar predicate, so outside `tf.map_fn` a `tf.where` chooses once for the whole
tensor while computing both branches. This times both forms, one thread, best of 5:

- per 512x512x3 image in a `Dataset.map`: GridMask's random `image * mask` against `image`, and
  `minimum(image, 1)` against `abs(image)` under `reduce_max(image) > 1`;
- per element of a `Dataset.map` on a scalar (AutoAugment's random sign of a magnitude);
- and checks the gradient of a division guarded by the predicate
  (`norm > t: g * t / norm else g`) at `norm == 0` in both forms.

    python benchmarks/tfp202_scalar_cond.py

Measured with TensorFlow 2.21 on a 2-core CPU: 0.60 against 3.18 ms (GridMask), 0.47 against
3.06 ms (clip), 25.0 against 23.6 us (scalar, noise); gradient 1 with `tf.cond`, NaN with `tf.where`.
A second run on the same machine under load from other work: 1.26 against 4.49 ms, 0.67 against
12.43 ms, 135 against 165 us: the absolute times move, the direction does not.
"""

from __future__ import annotations

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


if __name__ == "__main__":
    main()
