"""RunPurposes.feeds_back on the fed data: a recurrence (every fed value is what the same run returned
on an earlier step) against data that only passes near a run's result."""

from __future__ import annotations

import textwrap

import libcst as cst

from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.feeds import Feeds
from tflint_perf.analysis.sessions import RunPurposes


def _feeds_back(source: str, run_text: str) -> bool:
    model = AnalysedModule(cst.parse_module("import tensorflow.compat.v1 as tf\n" + textwrap.dedent(source)))
    [site] = [s for s in model.calls if model.module.code_for_node(s.node) == run_text]
    feed = next(arg.value for arg in site.node.args[1:])
    entries = Feeds(model).data_entries(feed, site)
    assert entries, "the feed's data entries are found"
    return RunPurposes(model).feeds_back(feed, site, entries)


def test_memory_returned_by_the_same_run_through_an_unpacking_and_a_zip_is_a_recurrence():
    # zihangdai/xlnet train_gpu.py: the memory is fed back from `fetched[:2]` on the next step.
    assert _feeds_back(
        """
        def train(sess, fetches, mems, mems_np):
            while True:
                feed_dict = {}
                for key in mems_np.keys():
                    for m, m_np in zip(mems[key], mems_np[key]):
                        feed_dict[m] = m_np
                fetched = sess.run(fetches, feed_dict=feed_dict)
                loss_np, mems_np = fetched[:2]
        """,
        "sess.run(fetches, feed_dict=feed_dict)",
    )


def test_an_lstm_state_read_by_item_and_attribute_is_a_recurrence():
    assert _feeds_back(
        """
        def run_epoch(session, model, fetches):
            state = session.run(model.initial_state)
            for step in range(model.input.num_steps):
                feed_dict = {}
                for i, (c, h) in enumerate(model.initial_state):
                    feed_dict[c] = state[i].c
                vals = session.run(fetches, feed_dict)
                state = vals["final_state"]
        """,
        "session.run(fetches, feed_dict)",
    )


def test_a_batch_fed_beside_the_state_is_not():
    assert not _feeds_back(
        """
        def train(sess, model, loader):
            state = sess.run(model.initial_state)
            for b in range(loader.num_batches):
                x, y = loader.next_batch()
                feed = {model.input_data: x}
                for i, (c, h) in enumerate(model.initial_state):
                    feed[c] = state[i].c
                loss, state, _ = sess.run([model.cost, model.final_state, model.train_op], feed)
        """,
        "sess.run([model.cost, model.final_state, model.train_op], feed)",
    )


def test_a_returned_number_that_only_bounds_a_slice_is_not():
    assert not _feeds_back(
        """
        def train(sess, X, x_ph, train_op, keep_op):
            n = 64
            for i in range(1000):
                batch = X[i * 64:(i + 1) * 64]
                feed = {x_ph: batch[:n]}
                _, n = sess.run([train_op, keep_op], feed)
        """,
        "sess.run([train_op, keep_op], feed)",
    )


def test_what_another_run_returned_is_not_this_runs_recurrence():
    # A batch fetched from an iterator by one run and fed to another: the data came from a pipeline.
    assert not _feeds_back(
        """
        def train(sess, next_element, x_ph, train_op):
            for i in range(1000):
                batch = sess.run(next_element)
                feed = {x_ph: batch}
                sess.run(train_op, feed)
        """,
        "sess.run(train_op, feed)",
    )
