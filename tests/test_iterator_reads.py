"""How often an iterator over a pipeline is read (analysis/pipelines/reads.py, issue 22): a demonstration
that reads its pipeline a handful of times (google-research/simclr's colabs fine-tune "for just a few
iterations", or draw five images to plot) gets no TFP101/TFP102 finding; the same code reading it for
as many steps as training takes, or in a way the code does not bound, still does. Each both ways,
written from the real shapes, through the real engine (a notebook through the real command line)."""

from __future__ import annotations

import json
import textwrap

from tests.conftest import lint, run_cli

RULES = ["TFP101", "TFP102"]


def found(source: str):
    return sorted((d.location.row, d.code) for d in lint(textwrap.dedent(source), RULES, filename="finetune.py"))


# simclr tf2/colabs/finetuning.ipynb: the pipeline, then ten steps of a `tf.function` train step.
TF2_FINETUNE = """
    import tensorflow as tf
    import tensorflow_datasets as tfds

    def _preprocess(x):
        x['image'] = tf.image.random_flip_left_right(tf.image.resize(x['image'], [224, 224]))
        return x
    ds = tfds.load('tf_flowers', split='train').map(_preprocess).batch(64)

    total_iterations = {steps}
    iterator = iter(ds)
    for it in range(total_iterations):
        x = next(iterator)
        loss, image, logits, labels = train_step(x)
        print("[Iter {{}}] Loss: {{}}".format(it + 1, loss))
"""


def test_ten_steps_of_a_demonstration_are_not_reported():
    assert found(TF2_FINETUNE.format(steps=10)) == []


def test_the_same_loop_run_for_as_long_as_training_takes_is():
    assert found(TF2_FINETUNE.format(steps=5000)) == [(8, "TFP101"), (8, "TFP102")]


def test_a_step_count_the_code_does_not_show_is_training():
    # `FLAGS.train_steps`: whatever the run is given.
    assert found(TF2_FINETUNE.format(steps="FLAGS.train_steps")) == [(8, "TFP101"), (8, "TFP102")]


def test_an_iterator_handed_on_is_read_out_of_sight():
    source = TF2_FINETUNE.format(steps=10) + "    train_more(iterator)\n"
    assert found(source) == [(8, "TFP101"), (8, "TFP102")]


def test_reads_in_a_function_a_loop_calls_repeat_with_it():
    source = """
        import tensorflow as tf
        ds = tf.data.TFRecordDataset(files).map(parse).batch(64)

        def run_epoch(iterator):
            for _ in range(10):
                train_step(next(iterator))

        def train():
            iterator = iter(ds)
            for _ in range(10):
                train_step(next(iterator))

        for epoch in range(100):
            train()
    """
    assert found(source) == [(3, "TFP101"), (3, "TFP102")]


# simclr colabs/intriguing_properties/digits_on_tf_flowers.ipynb: five images drawn to plot.
def test_five_elements_drawn_to_plot_are_an_inspection():
    source = """
        import matplotlib.pyplot as plt
        import tensorflow as tf
        dataset = tf.data.TFRecordDataset(files).map(map_fn)
        it = iter(dataset)
        for _ in range(5):
            image, label, mnist_label = it.next()
            plt.figure(figsize=(4, 4))
            plt.imshow(image)
    """
    assert found(source) == []


def test_reads_in_a_comprehension_are_not_counted_by_its_loops():
    source = """
        import tensorflow as tf
        dataset = tf.data.TFRecordDataset(files).map(parse).batch(32)
        it = iter(dataset)
        losses = [train_step(next(it)) for _ in range(steps)]
    """
    assert found(source) == [(3, "TFP101"), (3, "TFP102")]


# simclr colabs/finetuning.ipynb (TF1): a one-shot iterator's tensors, read by ten session runs.
TF1_FINETUNE = """
    import tensorflow.compat.v1 as tf
    tf.disable_eager_execution()

    x = tf.data.make_one_shot_iterator(tf.data.TFRecordDataset(files).map(_preprocess).batch(64)).get_next()
    logits_t = tf.layers.dense(inputs=x['image'], units=5)
    train_op = optimizer.minimize(loss(logits_t, x['label']))

    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    total_iterations = {steps}
    for it in range(total_iterations):
        _, image, logits = sess.run((train_op, x['image'], logits_t))
"""


def test_ten_session_runs_of_a_tf1_demonstration_are_not_reported():
    assert found(TF1_FINETUNE.format(steps=10)) == []


def test_a_tf1_training_loop_is():
    assert found(TF1_FINETUNE.format(steps=20000)) == [(5, "TFP101"), (5, "TFP102")]


def test_a_tf1_iterator_with_no_session_loop_in_sight_is_training():
    # The steps run elsewhere (a framework, another module): nothing here says how many.
    source = TF1_FINETUNE.format(steps=10).split("    total_iterations")[0]
    assert found(source) == [(5, "TFP101"), (5, "TFP102")]


def test_a_demonstration_across_notebook_cells(tmp_path):
    # The constant in one cell, the loop in another, as the colab has them.
    cells = [
        "import tensorflow as tf\nds = tf.data.TFRecordDataset(files).map(parse).batch(16)",
        "total_steps = 10\nmodel = Model(path)",
        "iterator = iter(ds)\nfor it in range(total_steps):\n    x = next(iterator)\n    loss = model(x)",
    ]
    notebook = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}
                  for source in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 4,
    }
    path = tmp_path / "distillation_self_training.ipynb"
    path.write_text(json.dumps(notebook))
    assert run_cli("check", "--isolated", "--select", "TFP101,TFP102", str(path)).stdout.startswith("All checks passed")
    notebook["cells"][1]["source"] = "total_steps = 100000\nmodel = Model(path)"
    path.write_text(json.dumps(notebook))
    reported = run_cli("check", "--isolated", "--select", "TFP101,TFP102", "--output-format", "json", str(path))
    assert sorted((f["cell"], f["code"]) for f in json.loads(reported.stdout)) == [(1, "TFP101"), (1, "TFP102")]
