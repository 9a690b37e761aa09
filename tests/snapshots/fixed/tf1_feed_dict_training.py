"""Train an MNIST-style classifier the TensorFlow 1 way: placeholders, a Session and feed_dict.

Written as many TF1 scripts were: batches sliced from NumPy arrays and fed on every step, a
helper that builds the feed, a tf.data pipeline with a Python decoder, per-epoch evaluation, and
summaries drawn with matplotlib through py_func.
"""

import argparse

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

LEARNING_RATE = 0.001
KEEP_PROB = 0.75
BATCH_SIZE = 128


def load_arrays(path):
    with np.load(path) as data:
        return data["x_train"], data["y_train"], data["x_test"], data["y_test"]


def decode_image(path):
    # Third-party decoder: only Python can read this format.
    return np.asarray(read_custom_format(path.decode()), dtype=np.float32)


def read_custom_format(path):
    return np.zeros((28, 28), dtype=np.float32)


def file_dataset(filenames):
    ds = tf.data.Dataset.from_tensor_slices(filenames)
    ds = ds.map(lambda p: tf.py_func(decode_image, [p], tf.float32), num_parallel_calls=4)
    ds = ds.cache().shuffle(1000)
    return ds.batch(BATCH_SIZE).repeat().prefetch(1)


def build_graph(images, labels, keep_prob, learning_rate, is_training):
    flat = tf.reshape(images, [-1, 784])
    hidden = tf.layers.dense(flat, 100, activation=tf.nn.relu)
    hidden = tf.layers.dropout(hidden, rate=1 - keep_prob, training=is_training)
    logits = tf.layers.dense(hidden, 10)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss)
    correct = tf.equal(tf.argmax(logits, 1, output_type=tf.int32), labels)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    return loss, train_op, accuracy, logits


def confusion_image(labels, predictions):
    # Drawn with matplotlib for TensorBoard: a summary op, not part of training.
    return np.zeros((1, 64, 64, 3), dtype=np.uint8)


def make_feed(x_ph, y_ph, xb, yb):
    return {x_ph: xb, y_ph: yb}


def run_step(sess, train_op, loss, x_ph, y_ph, xb, yb):
    feed = make_feed(x_ph, y_ph, xb, yb)
    return sess.run([train_op, loss], feed_dict=feed)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="mnist.npz")
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()

    x_train, y_train, x_test, y_test = load_arrays(args.data)
    steps_per_epoch = len(x_train) // BATCH_SIZE

    x_ph = tf.placeholder(tf.float32, [None, 28, 28])
    y_ph = tf.placeholder(tf.int32, [None])
    keep_prob = tf.placeholder_with_default(1.0, [])
    lr_ph = tf.placeholder(tf.float32, [])
    is_training = tf.placeholder(tf.bool, [])
    loss, train_op, accuracy, logits = build_graph(x_ph, y_ph, keep_prob, lr_ph, is_training)

    predictions = tf.argmax(logits, 1)
    cm_image = tf.py_func(confusion_image, [y_ph, predictions], tf.uint8)
    cm_summary = tf.summary.image("confusion", cm_image)

    filenames = tf.placeholder(tf.string, [None])
    iterator = tf.data.make_initializable_iterator(file_dataset(filenames))
    next_images = iterator.get_next()

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(args.epochs):
            sess.run(iterator.initializer, feed_dict={filenames: ["extra-0.bin", "extra-1.bin"]})
            order = np.random.permutation(len(x_train))
            validate_feed = {x_ph: x_test[:1000], y_ph: y_test[:1000]}
            for step in range(steps_per_epoch):
                idx = order[step * BATCH_SIZE:(step + 1) * BATCH_SIZE]
                xb, yb = x_train[idx], y_train[idx]
                sess.run(
                    train_op,
                    feed_dict={x_ph: xb, y_ph: yb, keep_prob: KEEP_PROB, lr_ph: LEARNING_RATE, is_training: True},
                )
                if step % 100 == 0:
                    # Only hyperparameters fed: the images come from the iterator.
                    sess.run(next_images, feed_dict={keep_prob: 1.0, is_training: False})
                if step % 500 == 0:
                    # The same validation arrays every time, built before the loop: not per-step data.
                    print("validation", sess.run(accuracy, feed_dict=validate_feed))

            # Once per epoch: evaluation, not the training hot path.
            test_acc = sess.run(accuracy, feed_dict={x_ph: x_test, y_ph: y_test})
            summary = sess.run(cm_summary, {x_ph: x_test[:512], y_ph: y_test[:512]})
            print("epoch", epoch, "test accuracy", test_acc, summary is not None)

        # A fine-tuning pass written with a helper that builds the feed.
        for xb, yb in zip(np.array_split(x_test, 10), np.array_split(y_test, 10)):
            run_step(sess, train_op, loss, x_ph, y_ph, xb, yb)

        # One-off evaluation after training.
        final = accuracy.eval(feed_dict={x_ph: x_test, y_ph: y_test})
        print("final accuracy", final)

        # A manual loop over minibatches, evaluating with Tensor.eval.
        total = 0.0
        for start in range(0, len(x_test), 500):
            total += accuracy.eval(feed_dict={x_ph: x_test[start:start + 500], y_ph: y_test[start:start + 500]})
        print("mean", total / (len(x_test) / 500))


if __name__ == "__main__":
    main()
