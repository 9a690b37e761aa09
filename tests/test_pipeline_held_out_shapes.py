"""Pipeline classes the spent held-out sets d to i taught (issue 22), each pinned both ways on excerpts
written from the real code, through the real engine:

- a pipeline handed to a same-file class's constructor and kept on ``self.dataset`` is read where its
  methods read ``self.dataset`` (chiphuyen/stanford-tensorflow-tutorials 04_word2vec_visualize.py: a TF1
  initializable iterator behind 100,000 session steps); a module named for visualisation still trains
  when its session loop fetches a train op;
- what a loop prints (``num_train_steps``) says nothing of what it does;
- a helper's pipelines that feed ``choose_from_datasets`` are pipelines in each caller's terms
  (tensorflow/similarity's warm-up path);
- a Keras ``fit`` trains on a pipeline whatever its variable is named (``eval_train_ds``).
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint
from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.checking.config import Settings
from tflint_perf.text.parsing import parse


def found(source: str, select, filename: str = "word2vec.py", target=None):
    settings = Settings(target_version=target)
    return sorted((d.location.row, d.code) for d in lint(textwrap.dedent(source), select, settings, filename=filename))


# chiphuyen/stanford-tensorflow-tutorials, examples/04_word2vec_visualize.py (shortened).
WORD2VEC_MODEL = """
    import tensorflow as tf

    class SkipGramModel:
        def __init__(self, dataset, vocab_size, learning_rate):
            self.vocab_size = vocab_size
            self.lr = learning_rate
            self.dataset = dataset

        def _import_data(self):
            self.iterator = self.dataset.make_initializable_iterator()
            self.center_words, self.target_words = self.iterator.get_next()

        def build_graph(self):
            self._import_data()
            self.loss = tf.reduce_mean(nce_loss(self.center_words, self.target_words))
            self.optimizer = tf.train.GradientDescentOptimizer(self.lr).minimize(self.loss)

        def train(self, num_train_steps):
            with tf.Session() as sess:
                sess.run(self.iterator.initializer)
                for index in range(num_train_steps):
                    {run}

    def gen():
        yield from word2vec_utils.batch_gen(URL, VOCAB_SIZE, BATCH_SIZE)

    def main():
        dataset = tf.data.Dataset.from_generator(gen, (tf.int32, tf.int32))
        model = SkipGramModel(dataset, VOCAB_SIZE, LEARNING_RATE)
        model.build_graph()
        model.train(NUM_TRAIN_STEPS)
"""
TRAINS = "loss_batch, _ = sess.run([self.loss, self.optimizer])"
ONLY_LOOKS = "loss_batch = sess.run(self.loss)"


def test_a_pipeline_kept_by_a_constructor_is_read_through_the_attribute():
    assert found(WORD2VEC_MODEL.format(run=TRAINS), ["TFP101"], target=(1, 4)) == [(29, "TFP101")]


def test_the_constructor_s_pipeline_is_the_caller_s_own():
    module = AnalysedModule(parse(textwrap.dedent(WORD2VEC_MODEL.format(run=TRAINS))))
    (consumption,) = module.pipelines.consumptions
    assert consumption.kind == "iterator" and consumption.purpose is Purpose.TRAINING
    (state,) = consumption.states
    assert module.call_name(state.source.node) == "tf.data.Dataset.from_generator"


def test_a_class_that_keeps_no_pipeline_leaves_the_argument_unconsumed():
    source = WORD2VEC_MODEL.format(run=TRAINS).replace("self.dataset = dataset", "self.data_dir = 'data'")
    source = source.replace("self.dataset.make_initializable_iterator()", "make_iterator(self.data_dir)")
    assert found(source, ["TFP101"], target=(1, 4)) == []


def test_a_module_named_for_visualisation_that_trains_in_its_session_loop_is_reported():
    assert found(WORD2VEC_MODEL.format(run=TRAINS), ["TFP101"], filename="04_word2vec_visualize.py",
                 target=(1, 4)) == [(29, "TFP101")]


def test_a_module_named_for_visualisation_whose_session_loop_does_not_train_is_not():
    assert found(WORD2VEC_MODEL.format(run=ONLY_LOOKS), ["TFP101"], filename="04_word2vec_visualize.py",
                 target=(1, 4)) == []


# tensorflow/similarity, tensorflow_similarity/samplers/tfdata_sampler.py (shortened).
SAMPLER = """
    import tensorflow as tf

    def apply_augmenter_ds(ds, augmenter, warmup=0):
        if not warmup:
            return ds.map(augmenter, name="augmenter")
        aug_ds = ds.map(augmenter, name="augmenter").skip(warmup)
        count_ds = tf.data.Dataset.counter()
        return tf.data.Dataset.choose_from_datasets(
            [ds.take(warmup), aug_ds],
            count_ds.map(lambda x: tf.cast(0, dtype=tf.int64) if x < warmup else tf.cast(1, dtype=tf.int64)),
        )

    def TFDataSampler(ds, augmenter=None, warmup=0):
        ds = tf.data.Dataset.choose_from_datasets(ds, choices_ds)
        if augmenter is not None:
            ds = apply_augmenter_ds(ds, augmenter, warmup)
        return ds.repeat().batch(batch_size).prefetch(tf.data.AUTOTUNE)
"""


def test_the_warm_up_path_s_augmentation_is_reported_as_the_direct_one_is():
    assert found(SAMPLER, ["TFP102"], filename="tfdata_sampler.py") == [(6, "TFP102"), (7, "TFP102")]


def test_a_helper_no_caller_gives_a_pipeline_has_no_real_combined_inputs():
    source = SAMPLER[: SAMPLER.index("    def TFDataSampler")]
    assert found(source, ["TFP102"], filename="tfdata_sampler.py") == []


def test_a_map_on_a_combined_input_at_module_level_is_reported_as_before():
    source = """
        import tensorflow as tf
        images = tf.data.TFRecordDataset(files).map(decode_and_augment)
        ds = tf.data.Dataset.sample_from_datasets([images, extra]).batch(8).prefetch(1)
        model.fit(ds, epochs=10)
    """
    assert found(source, ["TFP102"], filename="train.py") == [(3, "TFP102")]


# tensorflow/similarity, examples/unsupervised_hello_world.ipynb: the linear evaluation's training input.
LINEAR_EVALUATION = """
    import tensorflow as tf
    eval_train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).repeat().shuffle(1024)
    eval_train_ds = eval_train_ds.map(lambda x, y: (tf.image.random_flip_left_right(x), y))
    eval_train_ds = eval_train_ds.batch(512).prefetch(tf.data.AUTOTUNE)
    {consumer}
"""


def test_a_pipeline_a_fit_trains_on_is_training_input_whatever_its_name():
    source = LINEAR_EVALUATION.format(consumer="model.fit(eval_train_ds, epochs=10, steps_per_epoch=100)")
    assert found(source, ["TFP102"], filename="hello_world.py") == [(4, "TFP102")]


def test_a_pipeline_named_for_evaluation_and_only_evaluated_on_is_not():
    source = LINEAR_EVALUATION.format(consumer="model.evaluate(eval_train_ds, steps=100)")
    assert found(source, ["TFP102"], filename="hello_world.py") == []
