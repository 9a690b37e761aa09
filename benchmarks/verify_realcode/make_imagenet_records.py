"""Synthetic ImageNet-format TFRecords for `verify` on the real-code input pipelines (docs/benchmarks.md).

    python benchmarks/verify_realcode/make_imagenet_records.py /tmp/realcode-verify/data

writes 4 files `train-0000N-of-00004` of 64 random 256x320 JPEGs each, with a label, a class text
and one bounding box (the features both real pipelines parse), and `validation-*` links to them.
"""
import os
import sys

import numpy as np
import tensorflow as tf


def feature(value):
    if isinstance(value, bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
    if isinstance(value, float):
        return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def main(directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(0)
    for shard in range(4):
        name = f"train-{shard:05d}-of-00004"
        with tf.io.TFRecordWriter(os.path.join(directory, name)) as writer:
            for _ in range(64):
                image = rng.integers(0, 256, size=(256, 320, 3), dtype=np.uint8)
                features = {
                    "image/encoded": feature(tf.io.encode_jpeg(image).numpy()),
                    "image/class/label": feature(int(rng.integers(1, 1001))),
                    "image/class/text": feature(b"synthetic"),
                    "image/object/bbox/xmin": feature(0.1), "image/object/bbox/ymin": feature(0.2),
                    "image/object/bbox/xmax": feature(0.9), "image/object/bbox/ymax": feature(0.8),
                }
                writer.write(tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString())
        link = os.path.join(directory, name.replace("train", "validation"))
        if not os.path.lexists(link):
            os.symlink(name, link)


if __name__ == "__main__":
    main(sys.argv[1])
