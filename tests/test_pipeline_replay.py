"""The pipeline analysis replays interpretations whose inputs did not change: that must change nothing.

Each program is analysed twice on the same model, replaying and interpreting every function every
round, and everything the analysis knows at the end must be equal, consumptions in the same order.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tests.test_pipeline_flow import FLOWS, MAP_NEGATIVES, NEGATIVES
from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.names import ImportTable
from tflint_perf.analysis.pipelines import PipelineAnalysis
from tflint_perf.analysis.pipelines.interpreter import BodyInterpreter

ROUNDS = {
    # Each helper calls the next, defined after it: every round the summaries learn one more op.
    "helpers defined before their callees": """
        import tensorflow as tf
        def a(ds):
            return b(ds).batch(2)
        def b(ds):
            return c(ds).map(f)
        def c(ds):
            return d(ds).shuffle(10)
        def d(ds):
            for batch in ds:
                print(batch)
            return ds.cache()
        model.fit(a(tf.data.TFRecordDataset(files)))
    """,
    # Never settles (every round adds an op): the analysis stops after its last round.
    "recursion that never settles": """
        import tensorflow as tf
        def grow(ds):
            if c:
                return ds
            return grow(ds.batch(2))
        model.fit(grow(tf.data.Dataset.range(10)))
    """,
    # One method's attribute read depends on another's write; the joins of a pipeline and a tuple
    # flip between unknown and known from one write to the next.
    "class attributes": """
        import tensorflow as tf
        class Trainer:
            def __init__(self, files):
                self.data = tf.data.TFRecordDataset(files).map(parse)
                self.train_ds = self.batched(tf.data.TFRecordDataset(files))
            def pair(self):
                self.data = (self.data, self.data)
            def again(self):
                self.data = self.data.batch(8)
                self.val_ds = self.train_ds.take(10)
            def train(self):
                model.fit(self.data)
                model.fit(self.prepared(), validation_data=self.val_ds)
                for x, y in self.train_ds:
                    step(x, y)
            def prepared(self):
                return self.train_ds.prefetch(1)
            def batched(self, ds):
                return ds.shuffle(100).batch(32)
        Trainer(files).train()
    """,
    "closures and nested helpers": """
        import tensorflow as tf
        def outer(files):
            base = tf.data.TFRecordDataset(files)
            def inner(ds):
                return helper(ds).batch(4)
            def uses_closure():
                return base.shuffle(5)
            model.fit(inner(base))
            return uses_closure()
        def helper(ds):
            return ds.map(f)
        for batch in outer(files):
            train_step(batch)
    """,
    "dataset subclass and tfds": """
        import tensorflow as tf
        import tensorflow_datasets as tfds
        class MyData(tf.data.Dataset):
            pass
        def load(name):
            train, test = tfds.load(name, split=["train", "test"])
            return train.batch(2), test
        def build():
            ds = MyData()
            return ds.map(f) if flag else load("mnist")[0]
        train, test = load("mnist")
        model.fit(build(), validation_data=test)
        model.evaluate(train)
    """,
}
PROGRAMS = {**ROUNDS, **FLOWS, **NEGATIVES, **MAP_NEGATIVES}


def _analyse(source: str, replay: bool, monkeypatch) -> tuple:
    model = AnalysedModule(cst.parse_module(textwrap.dedent(source)))
    monkeypatch.setattr(PipelineAnalysis, "replay_unchanged", replay)
    return model, PipelineAnalysis(model)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_replaying_changes_nothing(name, monkeypatch):
    model, replayed = _analyse(PROGRAMS[name], True, monkeypatch)
    monkeypatch.setattr(PipelineAnalysis, "replay_unchanged", False)
    every_time = PipelineAnalysis(model)  # the same model: same nodes, same functions
    assert replayed.consumptions == every_time.consumptions
    assert set(replayed.states()) == set(every_time.states())
    assert replayed._summaries == every_time._summaries
    assert replayed._class_attrs == every_time._class_attrs
    assert replayed._closures == every_time._closures


def test_unchanged_interpretations_are_replayed(monkeypatch):
    interpreted = {True: 0, False: 0}
    for replay in (True, False):
        original = BodyInterpreter.run_function

        def counting(run, replay=replay, original=original):
            interpreted[replay] += 1
            return original(run)

        monkeypatch.setattr(BodyInterpreter, "run_function", counting)
        _analyse(ROUNDS["helpers defined before their callees"], replay, monkeypatch)
        monkeypatch.setattr(BodyInterpreter, "run_function", original)
    # Five rounds of four helpers interpreted every time; with replay each round interprets only
    # the helpers whose callee's summary changed in the round before.
    assert interpreted[False] == 20
    assert interpreted[True] < interpreted[False]


def test_resolve_answers_follow_later_bindings():
    node = cst.parse_expression("tf.data.Dataset")
    table = ImportTable()
    assert table.resolve(node) is None
    table.bind("tf", "tensorflow")
    assert table.resolve(node) == "tf.data.Dataset"
    assert table.resolve(cst.parse_expression("tf.data.Dataset")) == "tf.data.Dataset"  # another node, same text
    table.rebind("tf")
    assert table.resolve(node) is None
