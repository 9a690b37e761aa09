"""False-report classes found on TensorFlow Recommenders' example notebooks (a development tree added
for issue 22), each pinned both ways on excerpts written from the real shapes, through the real engine:

- a retrieval index built from mapped candidates (`index.index_from_dataset(...)`, directly or through a
  `Dataset.zip` of titles and their embeddings) reads them once: a one-off pass, not training input;
- the candidates handed to a metric (`tfrs.metrics.FactorizedTopK(candidates=...)`) are what the
  metric scans when it is computed: evaluation, not the training input;
- `for model in models: model.fit(train, epochs=5); model.evaluate(test)` evaluates once per trained
  model, not once per epoch; `fit(train, epochs=1)` (or `initial_epoch=`) in an epoch loop still does.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint


def found(source: str, select):
    return sorted((d.location.row, d.code) for d in lint(textwrap.dedent(source), select, filename="retrieval.py"))


MOVIES = """
    import tensorflow as tf
    import tensorflow_datasets as tfds
    import tensorflow_recommenders as tfrs

    ratings = tfds.load("movielens/100k-ratings", split="train")
    movies = tfds.load("movielens/100k-movies", split="train")
    ratings = ratings.map(lambda x: {"movie_title": x["movie_title"], "user_id": x["user_id"]})
    movies = movies.map(lambda x: x["movie_title"])
"""


# -- a retrieval index built once -------------------------------------------------------------------
def test_an_index_built_from_mapped_candidates_is_a_one_off_pass():
    source = MOVIES + """
    index = tfrs.layers.factorized_top_k.BruteForce(model.user_model)
    index.index_from_dataset(
        movies.batch(100).map(lambda title: (title, model.movie_model(title))))
    """
    assert found(source, ["TFP102"]) == []


def test_an_index_built_from_a_zip_of_titles_and_their_embeddings_is_too():
    source = MOVIES + """
    index = tfrs.layers.factorized_top_k.BruteForce(model.user_model)
    index.index_from_dataset(
      tf.data.Dataset.zip((movies.batch(100), movies.batch(100).map(model.movie_model)))
    )
    """
    assert found(source, ["TFP102"]) == []


def test_the_same_candidate_map_fitted_on_is_still_reported():
    source = MOVIES + """
    candidates = movies.batch(100).map(lambda title: (title, model.movie_model(title)))
    model.fit(candidates, epochs=3)
    """
    assert found(source, ["TFP102"]) == [(11, "TFP102")]


# -- candidates handed to a metric ----------------------------------------------------------------
def test_a_metrics_candidates_are_evaluation_not_training_input():
    source = MOVIES + """
    task = tfrs.tasks.Retrieval(metrics=tfrs.metrics.FactorizedTopK(
        movies.batch(128).map(movie_model)
      )
    )
    model = MovieLensModel(user_model, movie_model, task)
    model.fit(ratings.batch(4096), epochs=3)
    """
    assert found(source, ["TFP102"]) == []


def test_a_metric_built_inside_the_model_class_is_too():
    source = MOVIES + """
    class MovielensModel(tfrs.models.Model):
        def __init__(self, layer_sizes):
            super().__init__()
            self.candidate_model = CandidateModel(layer_sizes)
            self.task = tfrs.tasks.Retrieval(
                metrics=tfrs.metrics.FactorizedTopK(
                    candidates=movies.batch(128).map(self.candidate_model),
                ),
            )
    """
    assert found(source, ["TFP102"]) == []


def test_the_same_map_handed_to_a_task_that_is_not_a_metric_is_still_reported():
    source = MOVIES + """
    task = tfrs.tasks.Retrieval(candidates=movies.batch(128).map(movie_model))
    """
    assert found(source, ["TFP102"]) == [(11, "TFP102")]


# -- evaluation once per trained model ------------------------------------------------------------
RUNS = MOVIES + """
    train = ratings.take(80_000)
    test = ratings.skip(80_000).take(20_000)
    cached_train = train.shuffle(100_000).batch(8192).prefetch(tf.data.AUTOTUNE)
    cached_test = test.batch(4096).cache()
"""


def test_an_evaluation_after_each_models_several_epoch_fit_is_not_per_epoch():
    source = RUNS + """
    def run_models(models):
        aucs = []
        for model in models:
            model.fit(cached_train, epochs=epochs, verbose=False)
            metrics = model.evaluate(cached_test, return_dict=True, verbose=False)
            aucs.append(metrics["AUC"])
        return aucs
    """
    assert found(source, ["TFP101"]) == []


def test_repeated_runs_with_a_literal_epoch_count_are_not_either():
    source = RUNS + """
    for i in range(num_runs):
        model = DCN(use_cross_layer=True, deep_layer_sizes=[192, 192])
        model.compile(optimizer=tf.keras.optimizers.Adam(0.01))
        model.fit(cached_train, epochs=8, verbose=False)
        rmses.append(model.evaluate(cached_test, return_dict=True)["RMSE"])
    """
    assert found(source, ["TFP101"]) == []


def test_an_evaluation_after_a_one_epoch_fit_in_the_epoch_loop_is_per_epoch():
    source = RUNS + """
    for epoch in range(30):
        model.fit(cached_train, epochs=1)
        model.evaluate(cached_test)
    """
    assert found(source, ["TFP101"]) == [(14, "TFP101")]


def test_a_fit_resumed_at_each_epoch_is_per_epoch_too():
    source = RUNS + """
    for epoch in range(30):
        model.fit(cached_train, initial_epoch=epoch, epochs=epoch + 1)
        model.evaluate(cached_test)
    """
    assert found(source, ["TFP101"]) == [(14, "TFP101")]
