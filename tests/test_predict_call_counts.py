"""TFP203 by how often `predict` runs and what it is given, written from the trees spent at issue 22's
tenth stop: a handful of calls once after training (five image files, a 7 x 7 latent grid, ten random
tweets, a 14-step forecast) against autoregressive generation of hundreds of values; a loop that waits
for `input()`; a confusion matrix over 64-image `flow_from_directory` batches against 20-image ones;
a DQN agent whose `act` is reached through an episode function's parameter; a row-keeping rebinding
(`x = preprocess_input(x)`, `y = model.predict(y)`) and inputs joined in one list (`[t] + states`)."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = textwrap.dedent("""
    import random
    import numpy as np
    import tensorflow as tf
    from scipy.stats import norm

    model = tf.keras.models.load_model("m.keras")
""")


def found(source: str, filename: str = "demo.py"):
    return sorted(d.location.row for d in lint(HEAD + source, ["TFP203"], filename=filename))


# -- a handful of calls, once --------------------------------------------------------------------------

FILES = textwrap.dedent("""
    filenames = ["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg"{more}]
    input_images = [load(f) for f in filenames]
    for idx, img in enumerate(input_images):
        batch_image = tf.reshape(img, [1, 224, 224, 3])
        print(model.predict(batch_image)[0].argmax())
""")


def test_one_predict_per_image_of_five_literal_files_is_not_reported():
    assert found(FILES.format(more="")) == []


def test_the_same_loop_over_a_folder_listing_is():
    source = FILES.format(more="").replace('["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg"]', "os.listdir(folder)")
    assert found("import os\n" + source) == [14]


GRID = textwrap.dedent("""
    n = {n}
    grid_x = norm.ppf(np.linspace(0.05, 0.95, n))
    grid_y = norm.ppf(np.linspace(0.05, 0.95, n))
    for i, yi in enumerate(grid_x):
        for j, xi in enumerate(grid_y):
            z_sample = np.array([[xi, yi]])
            x_decoded = model.predict(z_sample)
""")


def test_a_7_by_7_latent_grid_is_a_handful():
    assert found(GRID.format(n=7)) == []


def test_a_30_by_30_grid_is_not():
    assert found(GRID.format(n=30)) == [15]


def test_ten_random_tweets_are_a_handful():
    source = "samples = random.sample(test_sentences, 10)\nfor s in samples:\n    print(model.predict([s]))\n"
    assert found(source) == []


FORECAST = textwrap.dedent("""
    INTO_FUTURE = {steps}

    def make_future_forecast(values, model, into_future):
        last_window = values[-7:]
        forecast = []
        for _ in range(into_future):
            pred = model.predict(tf.expand_dims(last_window, axis=0))
            forecast.append(pred)
            last_window = np.append(last_window, pred)[-7:]
        return forecast

    future = make_future_forecast(values=y_all, model=model, into_future=INTO_FUTURE)
""")


def test_a_14_step_forecast_run_once_is_a_handful():
    assert found(FORECAST.format(steps=14)) == []


def test_the_same_forecast_over_500_steps_is_reported():
    assert found(FORECAST.format(steps=500)) == [15]


def test_the_same_forecast_called_from_an_epoch_loop_is_reported():
    source = FORECAST.format(steps=14).replace(
        "future = make_future_forecast(", "for epoch in range(EPOCHS):\n    future = make_future_forecast(")
    assert found(source) == [15]


def test_a_handful_in_a_function_nothing_in_the_file_calls_is_reported():
    source = FORECAST.format(steps=14).rsplit("future =", 1)[0].replace("(values, model, into_future)", "(values, into_future)")
    assert found(source) == [15]  # the global model, in a helper that may be called any number of times



CALLBACK = textwrap.dedent("""
    def show_samples(epoch, logs=None):
        for i in range(32):
            print(epoch, model.predict(x_test[i:i + 1]))

    show_samples(0)
""")


def test_a_handful_called_once_is_silent():
    assert found(CALLBACK) == []


def test_the_same_handful_handed_on_as_an_epoch_callback_is_reported():
    source = CALLBACK + "model.fit(x, y, epochs=100, callbacks=[tf.keras.callbacks.LambdaCallback(on_epoch_end=show_samples)])\n"
    assert found(source) == [11]  # it runs after every epoch, not once


def test_the_same_handful_called_from_a_lambda_is_reported():
    source = CALLBACK.replace("show_samples(0)", "ranked = sorted(epochs, key=lambda e: show_samples(e))")
    assert found(source) == [11]


FILLED = textwrap.dedent("""
    def load_into(out, folder):
        for f in os.listdir(folder):
            out.append(np.load(os.path.join(folder, f)))

    def main():
        images = []
        {fill}
        for img in images:
            print(model.predict(img[None]))

    main()
""")


def test_a_list_a_helper_fills_is_not_a_handful():
    assert found("import os\n" + FILLED.format(fill='load_into(images, "data")')) == [18]


def test_a_list_filled_through_a_bound_append_is_not_empty():
    fill = 'add = images.append\n    for f in os.listdir("data"):\n        add(np.load(f))'
    assert found("import os\n" + FILLED.format(fill=fill)) == [20]

def test_sixteen_autoregressive_steps_once_are_a_handful_and_a_training_loop_is_not():
    once = "track = movie[:7]\nfor j in range(16):\n    new = model.predict(track[np.newaxis])\n    track = np.concatenate((track, new[:, -1]))\n"
    assert found(once) == []
    training = once.replace("for j in range(16):\n", "for j in range(16):\n    model.fit(x, y)\n")
    assert found(training) == [11]


# -- autoregressive generation over many steps --------------------------------------------------------

STATEFUL = textwrap.dedent("""
    def keras_prediction_run(model, prime_data, run_length):
        results = []
        Yout = prime_data[-1]
        for i in range(run_length + 1):
            Yout = model.predict(Yout)
            results.append(Yout[0, 0])
        return np.array(results)

    results = keras_prediction_run(model, prime_data, RUNLEN)
""")


def test_a_stateful_rnn_fed_its_own_output_is_reported():
    assert found(STATEFUL) == [13]


def test_the_same_generation_from_an_input_of_unknown_size_is_not():
    assert found(STATEFUL.replace("prime_data[-1]", "load_sequence()")) == []


SEQ2SEQ = textwrap.dedent("""
    decoder_model = tf.keras.Model([single_input] + state_inputs, [outputs] + states)

    def decode_sequence(input_seq):
        states_value = encoder.predict(input_seq)
        target_seq = np.zeros(({rows}, 1))
        for _ in range(max_len_target):
            output_tokens, h, c = decoder_model.predict([target_seq] + states_value)
            target_seq[0, 0] = np.argmax(output_tokens[0, 0, :])
            states_value = [h, c]

    while True:
        i = np.random.choice(len(input_texts))
        print(decode_sequence(encoder_inputs[i:i + 1]))
        ans = input("Continue? [Y/n]")
        if ans and ans.lower().startswith("n"):
            break
""")


def test_greedy_decoding_on_inputs_joined_in_one_list_is_reported():
    assert found(SEQ2SEQ.format(rows=1)) == [15]


def test_inputs_joined_in_one_list_of_many_rows_are_not():
    assert found(SEQ2SEQ.format(rows=4096)) == []


def test_a_loop_waiting_for_typed_input_is_one_run_per_request():
    encoder = SEQ2SEQ.format(rows=1).replace("encoder.predict", "decoder_model.predict")
    assert found(encoder) == [15]  # the encoder's call, once per typed request, is not reported
    without_input = encoder.replace('ans = input("Continue? [Y/n]")', "ans = next_answer()")
    assert found(without_input) == [12, 15]


def test_a_function_named_input_is_not_the_builtin():
    source = SEQ2SEQ.format(rows=1).replace("encoder.predict", "decoder_model.predict")
    assert found("def input(prompt):\n    return 'y'\n" + source) == [14, 17]


# -- batches read from a directory -----------------------------------------------------------------------

CONFUSION = textwrap.dedent("""
    from tensorflow.keras.preprocessing.image import ImageDataGenerator
    gen = ImageDataGenerator(preprocessing_function=preprocess_input)
    batch_size = {batch}

    def get_confusion_matrix(data_path, N):
        predictions, targets = [], []
        for x, y in gen.flow_from_directory(data_path, target_size=(224, 224), shuffle=False, batch_size=batch_size * 2):
            p = np.argmax(model.predict(x), axis=1)
            predictions = np.concatenate((predictions, p))
            targets = np.concatenate((targets, np.argmax(y, axis=1)))
            if len(targets) >= N:
                break

    cm = get_confusion_matrix(train_path, len(image_files))
""")


def test_a_confusion_matrix_over_64_image_directory_batches_is_not_reported():
    assert found(CONFUSION.format(batch=32)) == []


def test_the_same_over_20_image_batches_is():
    assert found(CONFUSION.format(batch=10)) == [16]


VISUAL_SEARCH = textwrap.dedent("""
    import os
    from tensorflow.keras.applications.inception_v3 import preprocess_input
    for filename in os.listdir(path):
        img = tf.keras.utils.img_to_array(tf.keras.utils.load_img(os.path.join(path, filename)))
        img = np.expand_dims(img, axis=0)
        img = preprocess_input(img)
        features = model.predict(img)
""")


def test_a_visual_search_over_a_folder_one_image_at_a_time_is_reported():
    assert found(VISUAL_SEARCH) == [15]


def test_the_same_search_on_what_a_helper_loads_is_not():
    assert found(VISUAL_SEARCH.replace("np.expand_dims(img, axis=0)", "load_batch(img)")) == []


# -- a DQN agent reached through an episode function's parameter ---------------------------------------

AGENT = textwrap.dedent("""
    class DQNAgent:
        def __init__(self, state_size, action_size):
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(action_size)])

        def act(self, state):
            return np.argmax(self.model.predict(state, verbose=0)[0])

        {decorator}
        def replay(self, batch_size=32):
            minibatch = self.memory.sample_batch(batch_size)
            states = minibatch["s"]
            target_full = self.model.predict(states, verbose=0)
            self.model.train_on_batch(states, target_full)

    def play_one_episode(agent, env):
        state = scaler.transform([env.reset()])
        done = False
        while not done:
            action = agent.act(state)
            next_state, reward, done, info = env.step(action)
            state = scaler.transform([next_state])
            agent.replay(32)

    agent = {agent}
    for e in range(num_episodes):
        play_one_episode(agent, env)
""")


def test_an_agent_passed_to_the_episode_function_is_followed():
    assert found(AGENT.format(decorator="", agent="DQNAgent(4, 2)")) == [14, 20]


def test_predict_inside_a_tf_function_is_not_reported():
    assert found(AGENT.format(decorator="@tf.function", agent="DQNAgent(4, 2)")) == [14]


def test_an_agent_of_unknown_class_is_not_followed():
    assert found(AGENT.format(decorator="", agent="load_agent()")) == []
