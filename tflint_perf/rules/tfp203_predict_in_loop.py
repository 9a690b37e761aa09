"""TFP203 predict-in-loop: ``model.predict(x)`` called per sample or per small batch in a loop."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from tflint_perf.analysis.arguments import argument, has_star_args
from tflint_perf.analysis.loops import FEW_CALLS, HANDFUL, StepLoops, looks_at_few, short_literal_loop
from tflint_perf.analysis.keras_models import KerasModels
from tflint_perf.analysis.model import CallSite
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.analysis.rows import FEW, ONE, Rows
from tflint_perf.analysis.tf_functions import tf_function_decorator
from tflint_perf.text.diagnostics import SAFE, Finding, FixPlan, NodeEdit
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid, call_method_span

_KERAS = "import numpy as np\nfrom tensorflow import keras\n\nmodel = keras.models.load_model('m.keras')\n"
# jonkrohn/DLTFpT's GAN notebook: a functional generator; `{guarded}` is the sample grid plotted in the loop.
_GAN_GRID = (
    "import numpy as np\nfrom tensorflow.keras.models import Model, load_model\nfrom tensorflow.keras.layers import Input, Dense\n"
    "from matplotlib import pyplot as plt\n\ndef build_generator(latent_dim=32):\n    noise = Input((latent_dim,))\n"
    "    return Model(inputs=noise, outputs=Dense(784)(noise))\n\ngenerator = build_generator()\n"
    "discriminator = load_model('discriminator.keras')\nadversarial_model = load_model('adversarial.keras')\n\n"
    "def train(epochs=2000, batch=128, z_dim=32):\n    for i in range(epochs):\n"
    "        real_imgs = data[np.random.choice(data.shape[0], batch, replace=False)]\n"
    "        {fake}\n        discriminator.train_on_batch(np.concatenate((real_imgs, fake_imgs)), y)\n"
    "        adversarial_model.train_on_batch(np.random.uniform(-1.0, 1.0, size=[batch, z_dim]), y[:batch])\n"
    "        if (i + 1) % 100 == 0:\n            noise = np.random.uniform(-1.0, 1.0, size=[16, z_dim])\n"
    "            gen_imgs = {grid}\n            for k in range(gen_imgs.shape[0]):\n"
    "                plt.subplot(4, 4, k + 1)\n                plt.imshow(gen_imgs[k, :, :, 0], cmap='gray')\n"
    "            plt.show()\n\ntrain()\n"
)
_GAN_FAKES = "fake_imgs = generator.predict(np.random.uniform(-1.0, 1.0, size=[batch, z_dim]))"
_GAN_FAKES_CALLED = "fake_imgs = generator(np.random.uniform(-1.0, 1.0, size=[batch, z_dim]), training=False)"
# snowkylin/tensorflow-handbook's Q-learning: the model subclass defines its own `predict` (a direct call).
_OWN_PREDICT = (
    "import numpy as np\nimport tensorflow as tf\n\nclass QNetwork(tf.keras.Model):\n"
    "    def __init__(self):\n        super().__init__()\n        self.dense = tf.keras.layers.Dense(units=2)\n\n"
    "    def call(self, inputs):\n        return self.dense(inputs)\n\n"
    "{predict}model = QNetwork()\noptimizer = tf.keras.optimizers.Adam(1e-3)\nfor episode_id in range(500):\n"
    "    state = env.reset()\n    for t in range(1000):\n"
    "        action = model.predict(np.expand_dims(state, axis=0)).numpy()[0]\n"
    "        state, reward, done, info = env.step(action)\n        with tf.GradientTape() as tape:\n"
    "            loss = tf.reduce_mean(model(state[None]))\n"
    "        optimizer.apply_gradients(zip(tape.gradient(loss, model.variables), model.variables))\n"
)
_ARGMAX_PREDICT = "    def predict(self, inputs):\n        return tf.argmax(self(inputs), axis=-1)\n\n"
# A2C's shape: a model subclass whose method predicts, and an agent whose rollout loop calls it.
_A2C_HEAD = (
    "import numpy as np\nimport tensorflow as tf\n\nclass Policy(tf.keras.Model):\n"
    "    def __init__(self):\n        super().__init__()\n        self.dist = Sampler()\n\n"
    "    def action_value(self, obs):\n        logits, value = self.predict(obs)\n"
    "        action = self.dist.predict(logits)\n        return action, value\n\n"
    "class Sampler(tf.keras.Model):\n    def call(self, logits):\n        return tf.random.categorical(logits, 1)\n\n"
    "class Agent:\n    def __init__(self, model):\n        self.model = model\n\n"
    "    def train(self, env, updates=1000):\n        obs = env.reset()\n        for update in range(updates):\n"
)
# Hvass-Labs' feature extraction: a batch array preallocated for `batch_size` images, filled and
# predicted on (`image_batch[0:current]`) once per batch over the whole image set.
_EXTRACT = (
    "def process_images(filenames, batch_size=BATCH):\n    shape = (batch_size,) + img_size + (3,)\n"
    "    image_batch = np.zeros(shape=shape, dtype=np.float16)\n    shape = (len(filenames), 4096)\n"
    "    values = np.zeros(shape=shape)\n    start = 0\n    while start < len(filenames):\n"
    "        end = min(start + batch_size, len(filenames))\n"
    "        for i, name in enumerate(filenames[start:end]):\n            image_batch[i] = load_image(name)\n"
    "        values[start:end] = model.predict(image_batch[0:end - start])\n        start = end\n"
    "    return values\n"
)
# Advanced-Deep-Learning-with-Keras' GAN trainers: the models and the sizes travel packed in tuples
# (`models = (generator, ...)`, `params = (batch_size, ...)`) and are unpacked in the trainer.
_GAN = (
    "import numpy as np\nfrom tensorflow.keras.models import Model\n\n"
    "def build_generator(inputs):\n    generator = Model(inputs, inputs)\n    return generator\n\n"
    "def train(models, x_train, params):\n    generator, discriminator = models\n"
    "    batch_size, latent_size, train_steps = params\n    for i in range(train_steps):\n"
    "        noise = np.random.uniform(-1.0, 1.0, size=[batch_size, latent_size])\n"
    "        fake_images = generator.predict(noise)\n        discriminator.train_on_batch(fake_images, y)\n\n"
    "def build_and_train():\n    batch_size = BATCH\n    latent_size = 100\n"
    "    generator = build_generator(inputs)\n    discriminator = Model(inputs, inputs)\n"
    "    models = (generator, discriminator)\n    params = (batch_size, latent_size, 40000)\n"
    "    train(models, x_train, params)\n"
)
# A policy-gradient script: the agent is one of several subclasses that inherit `act` from their base,
# made by a setup function that returns it in a tuple.
_AGENTS = (
    "import numpy as np\nfrom tensorflow.keras.models import Model\n\nclass PolicyAgent:\n"
    "    def __init__(self, env):\n        self.actor_model = Model(inputs, outputs)\n\n"
    "    def act(self, state):\n        action = self.actor_model.predict(state)\n        return action[0]\n\n"
    "class REINFORCEAgent(PolicyAgent):\n    pass\n\nclass A2CAgent(PolicyAgent):\n    pass\n\n"
    "def setup_agent(env, args):\n    if args.a2c:\n        agent = A2CAgent(env)\n    else:\n"
    "        agent = REINFORCEAgent(env)\n    return agent, args.train\n\n"
    "agent, train = setup_agent(env, args)\nfor episode in range(1000):\n    state = env.reset()\n"
    "    done = False\n    while not done:\n        state = np.reshape(state, [1, 2])\n"
    "        action = agent.act(state)\n        state, reward, done, _ = env.step(action)\n"
)
# The same agents' episode loop drawing the environment every step (`env.render()`) and training each
# agent's models as it goes (`agent.train(...)`, every class's `train` fitting): training shown as it
# runs, not a look at a few samples. Without the training it is a demo of a trained agent.
_RENDERED = _AGENTS.replace(
    "    def act(self, state):", "    def train(self, state, action):\n        self.actor_model.fit(state, action)\n\n"
    "    def act(self, state):").replace(
    "        action = agent.act(state)\n", "        action = agent.act(state)\n        env.render()\n"
    "        agent.train(state, action)\n")
_DEMO = _AGENTS.replace("        action = agent.act(state)\n", "        action = agent.act(state)\n        env.render()\n")
# Double DQN: the subclass overrides the target computation that the base class's replay loop calls
# once per replayed sample, on the base's models.
_DDQN = (
    "import random\nfrom tensorflow.keras.models import Model\n\nclass DQNAgent:\n"
    "    def __init__(self):\n        self.q_model = self.build_model()\n\n"
    "    def build_model(self):\n        return Model(inputs, x)\n\n"
    "    def get_target_q_value(self, next_state, reward):\n        return reward\n\n"
    "    def replay(self, batch_size):\n        batch = random.sample(self.memory, batch_size)\n"
    "        for state, action, reward, next_state, done in batch:\n"
    "            q = self.get_target_q_value(next_state, reward)\n\n"
    "class DDQNAgent(DQNAgent):\n    def get_target_q_value(self, next_state, reward):\n"
    "        return self.q_model.predict(next_state)[0].max() + reward\n\nagent = DDQNAgent()\n"
)
# A forecast plotted window by window, with a least-squares trend fitted by scikit-learn beside it: a
# look at a few windows. `fit` on an estimator that is no Keras model trains nothing here.
_PLOT_FORECAST = (
    "import numpy as np\nimport matplotlib.pyplot as plt\nimport tensorflow as tf\n"
    "from sklearn.linear_model import LinearRegression\n\nmodel = tf.keras.models.load_model('forecaster.h5')\n"
    "for start in range(0, len(series) - 100, 50):\n    window = series[start:start + 100][np.newaxis, :, np.newaxis]\n"
    "    forecast = model.predict(window)[0]\n"
    "    trend = LinearRegression().fit(np.arange(100)[:, None], window[0, :, 0])\n"
    "    plt.plot(forecast)\n    plt.show()\n"
)
# The same loop taking a step of a TensorFlow optimizer on each window: training shown as it runs.
_PLOT_TRAINING = _PLOT_FORECAST.replace(
    "model = tf.keras", "optimizer = tf.keras.optimizers.Adam(1e-3)\nmodel = tf.keras").replace(
    "    trend = LinearRegression().fit(np.arange(100)[:, None], window[0, :, 0])\n",
    "    with tf.GradientTape() as tape:\n        loss = tf.reduce_mean((model(window) - target) ** 2)\n"
    "    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n")
# An ipywidgets upload widget's observer: one predict per file a person picks.
_UPLOAD_WIDGET = (
    "import numpy as np\nfrom io import BytesIO\nfrom ipywidgets import widgets\nimport tensorflow as tf\n\n"
    "model = tf.keras.models.load_model('m.keras')\nuploader = widgets.FileUpload(accept='image/*', multiple=True)\n\n"
    "def file_predict(filename, file):\n    image = tf.keras.utils.img_to_array(tf.keras.utils.load_img(file))\n"
    "    image = np.expand_dims(image, axis=0)\n    print(filename, model.predict(image, verbose=0)[0][0])\n\n"
    "def on_upload_change(change):\n    items = change.new\n    for item in items:\n"
    "        file_predict(item.name, BytesIO(item.content))\n\nuploader.observe(on_upload_change, names='value')\n"
)
# The old Sequential's `predict_classes` / `predict_proba` run `predict` inside: the same setup per call.
_PREDICTS = frozenset({"predict", "predict_classes", "predict_proba"})
_ARRAY = frozenset({"np.asarray", "np.array", "numpy.asarray", "numpy.array"})


class PredictInLoop(Rule):
    code = "TFP203"
    name = "predict-in-loop"
    summary = "`model.predict` called per sample in a loop pays its whole setup on every call"
    fix_availability = "sometimes"
    purposes = frozenset({Purpose.TRAINING, Purpose.EVALUATION, Purpose.INFERENCE})

    what_it_does = """
Checks for `model.predict(x)` (or the old Sequential's `predict_classes` / `predict_proba`, which
call it) inside a `for` or `while` loop (or inside a function that this file calls from one, a
method a subclass inherits or overrides included, a method of an object every caller of a function
passes in, as `agent.act(state)` in `play_one_episode(agent, env)` with `agent = DQNAgent(...)`, or an
override that a base class of another module of the project calls from its loop) when `x` changes from one iteration to the next and is evidently one sample
or a small batch: `x[None]`, `np.expand_dims(x, 0)`, `x.reshape(1, ...)`, `x[i:i + 1]`, a slice of at
most 1,024 rows, `np.zeros((1, n))`, `np.random.normal(size=(20, d))`, a tokenizer called on a list
of one sentence (or a converter given one list per input, `to_array([token_ids], [segment_ids])`),
one item of an array, one element (a batch) of what the loop iterates (or its parts, unpacked in the
loop's body: `s, a, r, next_s, done = transition`), or a dict
of named inputs one of which is such (`{"decoder_input": np.zeros(shape)}` with `shape = (1, n)`),
a slice of an array of a few rows (`image_batch[0:n]` of `np.zeros((batch_size,) + size)`, where
`batch_size=32` is a parameter's default no caller in the file overrides, or a parameter every caller
fills with a small integer, followed through the callers' own parameters to a module constant: a GAN's
`generator.predict(tf.random.normal((batch_size, z_dim)))` in the discriminator step, `BATCH_SIZE = 400`), what another model's
`predict` returned on such an input, a parameter every caller in the file passes such an input
for (`action_value(obs[None, :])`), what a same-file helper returns when every `return` is such
(`preprocess_state` returning `np.reshape(state, [1, 4])`), or a name unpacked from a tuple written out
(`batch_size, latent_size = params` with the caller's `params = (64, 100)`). An
input that is evidently large (a slice of more rows, such as a shard of 200,000; `np.array_split(x,
n)[k]`; a fold of a cross-validation split, `x[test]` in `for train, test in kf.split(x)` with `kf` a
scikit-learn `KFold` or `ShuffleSplit`; a tf.data pipeline, which `predict` batches; a batch of at least 64 images that a Keras
`flow_from_directory` iterator reads from disk, whose reads and forward pass dwarf the setup) or of unknown size (a helper's result, a
parameter no caller in the file fills) is not reported: `predict` is built for large inputs. How big an input is comes from
`tflint_perf/analysis/rows.py`.

The receiver must be a Keras model the analysis can see: bound to `keras.Sequential(...)`,
`keras.Model(...)`, `keras.models.load_model(...)`, `keras.applications.*`, an instance of a
`keras.Model` subclass of this file (`self` in its own methods, `self.dist` assigned one), a
same-file function returning one, a name unpacked from a tuple of such (`generator, discriminator =
models`, the caller's `models = (generator, discriminator)`), `self.model` assigned one of those (in the
class or a same-file base; or of a Keras callback), a global that a function reads when it runs (the
bindings reaching the top-level calls that lead to it; for a function this file never calls, such as a
callback's helper, the last top-level binding: `model = Model(model.input, output)` after `model =
build_transformer_model(...)`), `keras_hub.models.X.from_preset(...)`, or a parameter that
every same-file caller passes a model for. `clf.predict(x)` of scikit-learn, or a `model`
parameter of a function nobody in the file calls, is not reported, nor a model whose class (or a
first-party base) defines its own `predict` (`def predict(self, x): return tf.argmax(self(x), -1)`: a
direct call, no Keras prediction loop). An input drawn at random where it is passed
(`generator.predict(np.random.uniform(-1, 1, size=[batch, z_dim]))`) changes every iteration.

Not reported: a loop whose body ends in `break` (it runs once: `for x, y in test_iter: pred =
model.predict(x); print(pred.shape); break`), a call under `if step % N == 0:` on the counter of the loop it runs in, with N at least 10 (a sample
grid plotted every hundred steps spreads one set-up over N steps), loops that look at a few samples (`for i in range(9)` around `plt.subplot`, a loop that
draws what it computes unless it also trains, as a gym episode loop calling `env.render()` and fitting
the agent does (a Keras model's `fit` / `train_on_batch`, a TensorFlow optimizer's `minimize` /
`apply_gradients`; a scikit-learn estimator's `fit` or scipy's `minimize` trains nothing),
`for x in ds.take(3)`, `for img in images[:5]`, a literal tuple of inputs), a helper that plots
what it predicts, loops of a known count of at most 10 (`for step in range(10)`, a module constant,
the folds of `KFold(5).split(x)`: ten calls' setup costs well under a second), a handful of calls
(at most 64) made once in all, as the bounds of every loop around the call and of every call of its
function show (one predict per image of five literal file names, per point of a `7 x 7` latent grid of
`norm.ppf(np.linspace(0.05, 0.95, n))`, per tweet of `random.sample(tweets, 10)`, per step of a 14-step
forecast its one caller asks for; not in a loop that trains, not in a function nothing in the file
calls, called from a lambda or handed on as a callback such as `LambdaCallback(on_epoch_end=show)`, and
not over a list the source fills out of sight, `images = []` then a helper's `out.append`), a `predict` whose input does not change in the loop (once per epoch on the validation set), a
loop over files a person uploads by hand (Colab's `files.upload()`, an `ipywidgets.FileUpload`
observer's `change.new`) or that waits for typed `input()` each iteration, a `predict` inside a
`@tf.function` (Keras refuses it there), and test files. A loop over a folder's listing, a generation
length or an episode loop has no such bound and is reported.
"""
    why_bad = """
`Model.predict` is built for large inputs: on every call it wraps the input in a data adapter,
builds (and on the first call traces) a predict function, runs a batch loop with callbacks and
progress bar, and concatenates the batches. For one sample or one small batch this setup costs
far more than the model itself. The Keras docstring says so: "For small numbers of inputs that
fit in one batch, directly use `__call__()` for faster execution, e.g., `model(x)`, or
`model(x, training=False)`". Measured on a 2-core CPU, 100 calls on 16 rows: `predict` 8.6 s,
`model(x)` 0.22 s, `predict_on_batch` 0.064 s.
"""
    example = """
for obs in observations:
    action = model.predict(obs[None], verbose=0)
"""
    use_instead = """
for obs in observations:
    action = model.predict_on_batch(obs[None])  # NumPy, like predict
    # or, where a tensor will do: model(obs[None], training=False)
"""
    fix_safety = """
The fix is safe and offered in two cases. When the input is one sample (`x[None]`,
`x[np.newaxis]`, `np.expand_dims(x, 0)`, `x.reshape(1, ...)`, `x[i:i + 1]`, `np.zeros((1, n))`, a
batch of one built so and grown along another axis), `predict` becomes
`predict_on_batch`, which returns the same NumPy array (`verbose` is dropped: it prints nothing).
When the result goes straight into `np.asarray(...)` / `np.array(...)`, `predict` becomes
`model(x, training=False)`: the same values, converted the same way. Otherwise there is no fix:
`model(x)` returns a tensor, not a NumPy array, and on an input larger than one batch `predict`
splits it into batches of 32 where `predict_on_batch` would run it whole.
"""
    known_problems = """
How big an element of what a loop iterates is cannot be known statically: a loop over chunks of
10,000 rows is reported too, although `predict`'s setup is then a small share of each call. An input
of unknown size is not reported (a helper's result, a parameter of a function that nothing in the
file calls, or that is called from elsewhere with other sizes than the callers in the file pass).
"""
    references = (
        "[Keras `Model.predict`](https://keras.io/api/models/model_training_apis/#predict-method)",
        "[Keras FAQ: What's the difference between `predict()` and `__call__()`?]"
        "(https://keras.io/getting_started/faq/#whats-the-difference-between-model-methods-predict-and-call)",
    )

    valid = (
        # The sample grid a GAN's loop plots every hundred steps: periodic display, one set-up per 100 steps.
        Valid(_GAN_GRID.format(fake=_GAN_FAKES_CALLED, grid="generator.predict(noise)")),
        # The model's class defines its own `predict` (a direct call, then argmax): not Keras' predict loop.
        Valid(_OWN_PREDICT.format(predict=_ARGMAX_PREDICT)),
        # Dive-into-DL's FCN: the loop breaks after the first batch, predicted to check shapes: it runs once.
        Valid(_KERAS + "for X, Y in iter(test_iter):\n    pred = model.predict(X)\n    print(X.shape, pred.shape)\n    break\n"),
        # A trained agent's episodes drawn step by step (`env.render()`), nothing trained: a demo.
        Valid(_DEMO),
        # Plotting loops whose `fit` / `minimize` belong to scikit-learn and scipy, not to TensorFlow.
        Valid(_PLOT_FORECAST),
        Valid(_PLOT_FORECAST.replace("from sklearn.linear_model import LinearRegression", "from scipy import optimize")
              .replace("LinearRegression().fit(np.arange(100)[:, None], window[0, :, 0])", "optimize.minimize(cost, x0)")),
        # Once per epoch on a fixed validation set: the input does not change in the loop.
        Valid(_KERAS + "for epoch in range(10):\n    model.fit(x_train, y_train)\n    preds = model.predict(x_val)\n"),
        # A few samples drawn for a plot.
        Valid(
            _KERAS + "import matplotlib.pyplot as plt\nfor i in range(9):\n    plt.subplot(3, 3, i + 1)\n"
            "    plt.imshow(x_test[i])\n    plt.title(model.predict(x_test[i][None]).argmax())\n"
        ),
        # The first images only, and a loop over a take(3) of a pipeline.
        Valid(_KERAS + "for img in images[:5]:\n    print(model.predict(img[None]))\n"),
        Valid(
            _KERAS + "import tensorflow as tf\nds = tf.data.Dataset.from_tensor_slices(x).batch(8)\n"
            "for batch in ds.take(3):\n    print(model.predict(batch))\n"
        ),
        # Not a Keras model: scikit-learn, or a model the file does not build.
        Valid(
            "import tensorflow as tf\nfrom sklearn.linear_model import LogisticRegression\nclf = LogisticRegression()\n"
            "for row in rows:\n    clf.predict([row])\n"
        ),
        Valid("import tensorflow as tf\n\ndef score(model, rows):\n    for row in rows:\n        model.predict(row[None])\n"),
        # A fixed literal tuple of inputs.
        Valid(_KERAS + "for x in (x_small, x_large):\n    model.predict(x)\n"),
        # Shards of 200,000 rows: predict batches each one itself; its setup is a small share.
        Valid(_KERAS + "for i in range(n_shards):\n    preds.append(model.predict(x[i * 200000:(i + 1) * 200000], batch_size=4096))\n"),
        Valid(_KERAS + "for shard in range(8):\n    out = model.predict(np.array_split(x, 8)[shard])\n"),
        # A tf.data pipeline per file: predict runs it batch by batch.
        Valid(
            _KERAS + "import tensorflow as tf\nfor path in files:\n    ds = tf.data.TFRecordDataset(path).map(parse).batch(256)\n"
            "    scores.append(model.predict(ds))\n"
        ),
        # Size unknown (a helper's result, a parameter): silent.
        Valid(_KERAS + "for path in files:\n    x = load_features(path)\n    scores.append(model.predict(x))\n"),
        # A model subclass's method called from another class's loop on every step, but on the whole
        # set of observations a caller passes (size unknown): silent.
        Valid(
            _A2C_HEAD + "            actions, values = self.model.action_value(all_observations)\n"
            "agent = Agent(Policy())\n"
        ),
        # The same extraction in chunks of 200,000 rows: predict batches each one itself.
        Valid(_KERAS + _EXTRACT.replace("BATCH", "200000")),
        # One predict per split of a bootstrap (jeffheaton/t81_558_deep_learning), on the whole 10% the
        # split holds out, after a fit of up to 1,000 epochs; and per fold of a 5-fold validation.
        Valid(
            _KERAS + "from sklearn.model_selection import ShuffleSplit\nSPLITS = 50\n"
            "boot = ShuffleSplit(n_splits=SPLITS, test_size=0.1, random_state=42)\nfor train, test in boot.split(x):\n"
            "    x_train = x[train]\n    x_test = x[test]\n    model.fit(x_train, y[train], epochs=1000)\n"
            "    pred = model.predict(x_test)\n"
        ),
        Valid(
            _KERAS + "from sklearn.model_selection import KFold\nkf = KFold(5, shuffle=True, random_state=42)\n"
            "for train, test in kf.split(x):\n    model.fit(x[train], y[train], epochs=500)\n"
            "    oos_pred.append(model.predict(x[test]))\n"
        ),
        # Images a person uploads in Colab or through an upload widget: a handful of interactive runs.
        Valid(
            _KERAS + "from google.colab import files\nuploaded = files.upload()\nfor fn in uploaded.keys():\n"
            "    x = np.expand_dims(load(fn), axis=0)\n    print(fn, model.predict(x))\n"
        ),
        Valid(_UPLOAD_WIDGET),
        # The parts of a loop element whose name the loop does not bind (a parameter): size unknown.
        Valid(_KERAS + "def replay(transition, steps):\n    for _ in range(steps):\n"
              "        s, a, r = transition\n        target = model.predict(s)\n"),
        # A global rebound at the top level to something that is no Keras model: the helper that a
        # loop calls once the module has run reads the last binding.
        Valid(
            _KERAS + "from sklearn.linear_model import LogisticRegression\n\ndef score(row):\n"
            "    return model.predict(row[None])\n\nmodel = LogisticRegression()\nfor row in rows:\n    score(row)\n"
        ),
        # The helper's loop runs while the global is still a scikit-learn model; the Keras model it is
        # rebound to afterwards is not what those calls read (`predict_on_batch` would raise there).
        Valid(
            "import numpy as np\nfrom sklearn.linear_model import LogisticRegression\nfrom tensorflow import keras\n\n"
            "model = LogisticRegression().fit(x_train, y_train)\n\ndef score(row):\n    return model.predict(row[None])\n\n"
            "for row in x_test:\n    print(score(row))\n\nmodel = keras.Sequential([keras.layers.Dense(10)])\n"
            "model.fit(x_train, y_train, epochs=5)\n"
        ),
        # Unpacked from a tuple whose batch size is a shard of 200,000 rows, or from a parameter no
        # caller fills: silent.
        Valid(_GAN.replace("BATCH", "200000")),
        Valid(
            "import numpy as np\nfrom tensorflow.keras.models import Model\n\ndef train(models, params):\n"
            "    generator, discriminator = models\n    batch_size, latent_size = params\n    for i in range(1000):\n"
            "        generator.predict(np.random.uniform(size=[batch_size, latent_size]))\n"
        ),
        # A same-file helper returning a whole array of unknown size: silent.
        Valid(
            _KERAS + "def load_batch(path):\n    return np.load(path)\n\nfor path in files:\n"
            "    scores.append(model.predict(load_batch(path)))\n"
        ),
    )
    invalid = (
        # The GAN's fakes, fresh noise predicted every one of 2,000 steps (the grid every 100th is not reported).
        Invalid(_GAN_GRID.format(fake=_GAN_FAKES, grid="generator.predict(noise)")),
        # Keras' own predict on the same subclass, once per environment step.
        Invalid(_OWN_PREDICT.format(predict=""), fixed=_OWN_PREDICT.format(predict="").replace(
            "model.predict(", "model.predict_on_batch(")),
        # Every tenth epoch, a loop over the test set predicting sample by sample: the guard spreads nothing.
        Invalid(_KERAS + "for epoch in range(100):\n    model.fit(x_train, y_train, epochs=1)\n    if epoch % 10 == 0:\n"
                "        for i in range(len(x_test)):\n            print(model.predict(x_test[i:i + 1]))\n",
                fixed=_KERAS + "for epoch in range(100):\n    model.fit(x_train, y_train, epochs=1)\n    if epoch % 10 == 0:\n"
                "        for i in range(len(x_test)):\n            print(model.predict_on_batch(x_test[i:i + 1]))\n"),
        # A loop that breaks only on some condition runs over the data.
        Invalid(_KERAS + "for X, Y in iter(test_iter):\n    pred = model.predict(X)\n    if pred.max() > 0.9:\n        break\n"),
        # A GAN trainer: the generator and the batch size (64) unpacked from tuples the caller packs.
        Invalid(_GAN.replace("BATCH", "64")),
        # The agent's `act` is inherited from the base of every class the agent may be, and the agent
        # comes out of a tuple its setup function returns; one state per environment step.
        Invalid(
            _AGENTS,
            fixed=_AGENTS.replace("self.actor_model.predict(state)", "self.actor_model.predict_on_batch(state)"),
        ),
        Invalid(_RENDERED, fixed=_RENDERED.replace("self.actor_model.predict(state)", "self.actor_model.predict_on_batch(state)")),
        # Double DQN: an override called from the base class's replay loop, per replayed sample, on a model
        # the base assigns.
        Invalid(_DDQN),
        Invalid(_PLOT_TRAINING, fixed=_PLOT_TRAINING.replace("model.predict(window)", "model.predict_on_batch(window)")),
        # DQN: the state comes from a method returning one row (`np.reshape(state, [1, 4])`).
        Invalid(
            "import numpy as np\nfrom tensorflow.keras.models import Sequential\n\nclass DQN:\n"
            "    def __init__(self):\n        self.model = Sequential()\n\n"
            "    def preprocess_state(self, state):\n        return np.reshape(state, [1, 4])\n\n"
            "    def train(self, env):\n        for e in range(1000):\n"
            "            state = self.preprocess_state(env.reset())\n            done = False\n"
            "            while not done:\n                action = np.argmax(self.model.predict(state))\n"
            "                next_state, reward, done, _ = env.step(action)\n"
            "                state = self.preprocess_state(next_state)\n",
            fixed="import numpy as np\nfrom tensorflow.keras.models import Sequential\n\nclass DQN:\n"
            "    def __init__(self):\n        self.model = Sequential()\n\n"
            "    def preprocess_state(self, state):\n        return np.reshape(state, [1, 4])\n\n"
            "    def train(self, env):\n        for e in range(1000):\n"
            "            state = self.preprocess_state(env.reset())\n            done = False\n"
            "            while not done:\n                action = np.argmax(self.model.predict_on_batch(state))\n"
            "                next_state, reward, done, _ = env.step(action)\n"
            "                state = self.preprocess_state(next_state)\n",
        ),
        # Text generation with the old Sequential's predict_classes (predict inside), one padded sequence
        # per generated word: reported, with no fix (it returns classes).
        Invalid(
            "import tensorflow as tf\nfrom tensorflow.keras.models import Sequential\n"
            "from tensorflow.keras.preprocessing.sequence import pad_sequences\n\nmodel = Sequential()\n"
            "for _ in range(100):\n    token_list = tokenizer.texts_to_sequences([seed_text])[0]\n"
            "    token_list = pad_sequences([token_list], maxlen=20, padding='pre')\n"
            "    predicted = model.predict_classes(token_list, verbose=0)\n    seed_text += ' ' + words[predicted[0]]\n"
        ),
        # A forecast loop over a series, the model from a builder that calls another builder.
        Invalid(
            "import numpy as np\nimport tensorflow as tf\n\ndef create_uncompiled_model():\n"
            "    model = tf.keras.models.Sequential([tf.keras.layers.Dense(1)])\n    return model\n\n"
            "def create_model():\n    model = create_uncompiled_model()\n    model.compile(loss='mse')\n    return model\n\n"
            "def generate_forecast(model, series, window_size):\n    forecast = []\n"
            "    for time in range(window_size, len(series)):\n"
            "        forecast.append(model.predict(series[time - window_size:time][np.newaxis])[0][0])\n"
            "    return forecast\n\nmodel = create_model()\nforecast = generate_forecast(model, SERIES, 20)\n",
            fixed="import numpy as np\nimport tensorflow as tf\n\ndef create_uncompiled_model():\n"
            "    model = tf.keras.models.Sequential([tf.keras.layers.Dense(1)])\n    return model\n\n"
            "def create_model():\n    model = create_uncompiled_model()\n    model.compile(loss='mse')\n    return model\n\n"
            "def generate_forecast(model, series, window_size):\n    forecast = []\n"
            "    for time in range(window_size, len(series)):\n"
            "        forecast.append(model.predict_on_batch(series[time - window_size:time][np.newaxis])[0][0])\n"
            "    return forecast\n\nmodel = create_model()\nforecast = generate_forecast(model, SERIES, 20)\n",
        ),
        # An outer loop over a literal tuple repeats the inner loop; the model is a parameter its caller
        # fills; the input is one row (`np.zeros((1, ...))`, filled in place).
        Invalid(
            _KERAS + "def generate(m, text):\n    for temperature in [0.2, 0.5, 1.0]:\n"
            "        for i in range(400):\n            x = np.zeros((1, maxlen, len(chars)))\n"
            "            for t, char in enumerate(text):\n                x[0, t, char_indices[char]] = 1.0\n"
            "            text += sample(m.predict(x, verbose=0)[0], temperature)\n\n"
            "generate(model, seed)\n",
            fixed=_KERAS + "def generate(m, text):\n    for temperature in [0.2, 0.5, 1.0]:\n"
            "        for i in range(400):\n            x = np.zeros((1, maxlen, len(chars)))\n"
            "            for t, char in enumerate(text):\n                x[0, t, char_indices[char]] = 1.0\n"
            "            text += sample(m.predict_on_batch(x)[0], temperature)\n\n"
            "generate(model, seed)\n",
        ),
        # Greedy decoding: a tokenizer called on a list of one sentence, two inputs of one row.
        Invalid(
            _KERAS + "def decode(sentence):\n    source = vectorize([sentence])\n    decoded = '[start]'\n"
            "    for i in range(20):\n        target = vectorize([decoded])\n"
            "        probs = model.predict([source, target], verbose=0)\n        decoded += ' ' + vocab[np.argmax(probs[0, i])]\n"
            "    return decoded\n",
            fixed=_KERAS + "def decode(sentence):\n    source = vectorize([sentence])\n    decoded = '[start]'\n"
            "    for i in range(20):\n        target = vectorize([decoded])\n"
            "        probs = model.predict_on_batch([source, target])\n        decoded += ' ' + vocab[np.argmax(probs[0, i])]\n"
            "    return decoded\n",
        ),
        # A GAN's training loop: 20 latent vectors (a module constant) per step.
        Invalid(
            _KERAS + "batch_size = 20\nfor step in range(10000):\n"
            "    latent = np.random.normal(size=(batch_size, 100))\n    fake = model.predict(latent)\n"
        ),
        # Feature extraction, one call per batch of a dataset (preprocessed row by row first).
        Invalid(
            "import numpy as np\nfrom tensorflow import keras\n\nconv_base = keras.applications.VGG16(include_top=False)\n"
            "for images, labels in dataset:\n    x = keras.applications.vgg16.preprocess_input(images)\n"
            "    features.append(conv_base.predict(x, verbose=0))\n"
        ),
        # One batch of a tf.data pipeline per call, whether its parts are unpacked in the loop's header
        # or in its body: one answer for both spellings.
        Invalid(
            _KERAS + "import tensorflow as tf\ntest_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(64)\n"
            "for images, labels in test_ds:\n    preds = model.predict(images)\n"
        ),
        Invalid(
            _KERAS + "import tensorflow as tf\ntest_ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(64)\n"
            "for test_batch in test_ds:\n    images, labels = test_batch\n    preds = model.predict(images)\n"
        ),
        # The next batch of a validation generator, every epoch.
        Invalid(
            _KERAS + "for step in range(validation_steps):\n    x_batch, y_batch = next(validation_generator)\n"
            "    y_pred.extend(model.predict(x_batch))\n"
        ),
        # A sequence grown one note at a time along its second axis: still one row.
        Invalid(
            "import numpy as np\nimport tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(4)])\n"
            "notes = tf.reshape(seed, [1, -1])\nfor step in range(100):\n"
            "    nxt = np.argmax(model.predict(notes), axis=-1)[:1, -1:]\n    notes = tf.concat([notes, nxt], axis=1)\n",
            fixed="import numpy as np\nimport tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(4)])\n"
            "notes = tf.reshape(seed, [1, -1])\nfor step in range(100):\n"
            "    nxt = np.argmax(model.predict_on_batch(notes), axis=-1)[:1, -1:]\n    notes = tf.concat([notes, nxt], axis=1)\n",
        ),
        Invalid(
            _KERAS + "for obs in observations:\n    action = model.predict(obs[None], verbose=0)\n",
            fixed=_KERAS + "for obs in observations:\n    action = model.predict_on_batch(obs[None])\n",
        ),
        # A same-file builder; np.expand_dims; a while loop.
        Invalid(
            "import numpy as np\nimport tensorflow as tf\n\ndef build():\n"
            "    return tf.keras.Sequential([tf.keras.layers.Dense(2)])\n\nmodel = build()\nstate = env.reset()\n"
            "while not done:\n    q = model.predict(np.expand_dims(state, axis=0))\n"
            "    state, reward, done, _ = env.step(q.argmax())\n",
            fixed="import numpy as np\nimport tensorflow as tf\n\ndef build():\n"
            "    return tf.keras.Sequential([tf.keras.layers.Dense(2)])\n\nmodel = build()\nstate = env.reset()\n"
            "while not done:\n    q = model.predict_on_batch(np.expand_dims(state, axis=0))\n"
            "    state, reward, done, _ = env.step(q.argmax())\n",
        ),
        # Converted with np.asarray: `model(x, training=False)` computes the same.
        Invalid(
            _KERAS + "for batch in batches:\n    out.append(np.asarray(model.predict(batch)))\n",
            fixed=_KERAS + "for batch in batches:\n    out.append(np.asarray(model(batch, training=False)))\n",
        ),
        # One-row slices of a test set: one sample each, so `predict_on_batch` returns the same.
        Invalid(
            _KERAS + "for i in range(len(x_test)):\n    p = model.predict(x_test[i:i + 1])\n    print(p[0].argmax())\n",
            fixed=_KERAS + "for i in range(len(x_test)):\n    p = model.predict_on_batch(x_test[i:i + 1])\n    print(p[0].argmax())\n",
        ),
        # A method called from a loop, on self.model built by the class, given one state as a row.
        Invalid(
            "import tensorflow as tf\n\nclass Agent:\n    def __init__(self):\n        self.model = self._build()\n\n"
            "    def _build(self):\n        model = tf.keras.Sequential([tf.keras.layers.Dense(4)])\n        return model\n\n"
            "    def act(self, state):\n        return self.model.predict(state[None], verbose=0)\n\n"
            "    def run(self, env):\n        state = env.reset()\n        for t in range(500):\n"
            "            state = env.step(self.act(state))\n",
            fixed="import tensorflow as tf\n\nclass Agent:\n    def __init__(self):\n        self.model = self._build()\n\n"
            "    def _build(self):\n        model = tf.keras.Sequential([tf.keras.layers.Dense(4)])\n        return model\n\n"
            "    def act(self, state):\n        return self.model.predict_on_batch(state[None])\n\n"
            "    def run(self, env):\n        state = env.reset()\n        for t in range(500):\n"
            "            state = env.step(self.act(state))\n",
        ),
        # A2C: `self.predict` and `self.dist.predict` inside a `keras.Model` subclass's method, which
        # another class's rollout loop calls on one observation per environment step (the agent's
        # `self.model` is the `Policy()` its construction is given).
        Invalid(
            _A2C_HEAD + "            action, value = self.model.action_value(obs[None, :])\n"
            "            obs, reward, done, _ = env.step(action)\n"
            "agent = Agent(Policy())\n",
            fixed=_A2C_HEAD.replace("self.predict(obs)", "self.predict_on_batch(obs)").replace(
                "self.dist.predict(logits)", "self.dist.predict_on_batch(logits)")
            + "            action, value = self.model.action_value(obs[None, :])\n"
            "            obs, reward, done, _ = env.step(action)\n"
            "agent = Agent(Policy())\n",
            count=2,
        ),
        # Feature extraction per batch of 32 images (a parameter's default no caller overrides).
        Invalid(_KERAS + _EXTRACT.replace("BATCH", "32")),
        # bert4keras' evaluation helpers: a converter given one list per input (`to_array([token_ids],
        # [segment_ids])`), on the global model the module rebuilt (`model = Model(model.input, output)`)
        # before the per-sentence evaluation loop that calls the helper.
        Invalid(
            "import numpy as np\nfrom keras.models import Model\nfrom lib import build_transformer_model, to_array\n\n"
            "model = build_transformer_model(config_path)\nmodel = Model(model.input, output)\n\n"
            "def recognize(text):\n    token_ids, segment_ids = tokenizer.encode(text)\n"
            "    token_ids, segment_ids = to_array([token_ids], [segment_ids])\n"
            "    return model.predict([token_ids, segment_ids])[0]\n\n"
            "def evaluate(data):\n    for d in data:\n        recognize(d[0])\n",
            fixed="import numpy as np\nfrom keras.models import Model\nfrom lib import build_transformer_model, to_array\n\n"
            "model = build_transformer_model(config_path)\nmodel = Model(model.input, output)\n\n"
            "def recognize(text):\n    token_ids, segment_ids = tokenizer.encode(text)\n"
            "    token_ids, segment_ids = to_array([token_ids], [segment_ids])\n"
            "    return model.predict_on_batch([token_ids, segment_ids])[0]\n\n"
            "def evaluate(data):\n    for d in data:\n        recognize(d[0])\n",
        ),
        # The same helper, its loop run once the global holds the Keras model.
        Invalid(
            "import numpy as np\nfrom sklearn.linear_model import LogisticRegression\nfrom tensorflow import keras\n\n"
            "model = LogisticRegression().fit(x_train, y_train)\n\ndef score(row):\n    return model.predict(row[None])\n\n"
            "model = keras.Sequential([keras.layers.Dense(10)])\nfor row in x_test:\n    print(score(row))\n",
            fixed="import numpy as np\nfrom sklearn.linear_model import LogisticRegression\nfrom tensorflow import keras\n\n"
            "model = LogisticRegression().fit(x_train, y_train)\n\ndef score(row):\n    return model.predict_on_batch(row[None])\n\n"
            "model = keras.Sequential([keras.layers.Dense(10)])\nfor row in x_test:\n    print(score(row))\n",
        ),
        # DQN replay: the parts of each replayed transition, unpacked inside the loop over the batch.
        Invalid(
            _KERAS + "def learn(batch_samples):\n    for transition in batch_samples:\n"
            "        s, a, r, next_s, done = transition\n        target = r + np.amax(model.predict(next_s)[0])\n"
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        if context.is_test_code:
            return
        loops: Optional[StepLoops] = None
        models: Optional[KerasModels] = None
        rows: Optional[Rows] = None
        for site in model.calls:
            func = site.node.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in _PREDICTS:
                continue
            if not site.loops and (site.function is None or not model.call_graph.loops_reaching(site.function)):
                continue
            x = argument(site.node, "x", 0)
            if x is None or has_star_args(site.node):
                continue
            loops = loops or model.step_loops
            where = self._where(loops, site, x.value)
            if where is None:
                continue
            # Only one sample or a small batch wastes predict's setup; a large input (a shard of 200k
            # rows, a pipeline) is what predict batches well, and an input of unknown size stays silent.
            rows = rows or Rows(model)
            size = rows.of(x.value, site)
            if size not in (ONE, FEW):
                continue
            models = models or KerasModels(model)
            if not models.is_model_site(func.value, site) or models.defines_own(func.value, site, func.attr.value):
                continue  # not a Keras model, or its class's own `predict` (`tf.argmax(self(x), -1)`)
            what = "on one sample" if size == ONE else "on one sample or a small batch"
            message = (
                f"`{dotted_text(func) or 'predict'}` {what} {where} sets up a whole prediction loop for every call; "
                "call the model directly (`model(x, training=False)`) or use `predict_on_batch(x)`"
            )
            yield self.finding(message, call_method_span(site.node), site.node, self._fix(context, site, x.value, size))

    def _where(self, loops: StepLoops, site: CallSite, x: cst.BaseExpression) -> Optional[str]:
        if any(loops.inspects(loop) or looks_at_few(loop) for loop in site.loops):
            return None  # a look at a few samples, inside or around
        if site.loops and (loops.every_nth(site.loops[-1], site.statement or site.node, site.function) or 0) >= FEW_CALLS:
            # `if step % 100 == 0:` a sample grid plotted: the set-up spread over a hundred steps. The guard
            # is on the innermost loop: under `if epoch % 10 == 0:`, a loop over the test set calls it per sample.
            return None
        if site.function is not None and tf_function_decorator(loops.model, site.function) is not None:
            return None  # Keras refuses `predict` inside a tf.function: the code fails before it is slow
        runs = loops.runs_in_all(site)
        if runs is not None and runs <= HANDFUL:
            return None  # a handful of calls in all, once (a demo after training): well under seconds of setup
        lexical = tuple(loop for loop in loops.lexical(site) if not loops.runs_few(loop))
        if lexical:
            # An outer loop over a literal tuple (`for temperature in [0.2, 0.5, 1.0]`) repeats the inner one.
            return "in a loop" if any(loops.varies(x, site, loop) for loop in lexical) else None
        if any(loops.runs_few(loop) or short_literal_loop(loop) for loop in site.loops):
            return None
        if site.loops or site.function is None or not loops.reaching(site.function):
            return None
        if any(loops.inspects_in(site.function)):
            return None  # a helper that plots or shows what it predicts
        if loops.varies_per_call(x, site):
            return "in a function called from a loop"
        return None

    def _fix(self, context: RuleContext, site: CallSite, x: cst.BaseExpression, size: str) -> Optional[FixPlan]:
        call = site.node
        if not isinstance(call.func, cst.Attribute) or call.func.attr.value != "predict":
            return None  # `predict_classes` returns classes: nothing returns the same without more code
        others = [arg for arg in call.args if arg.value is not x]
        if any(arg.keyword is None or arg.keyword.value != "verbose" for arg in others):
            return None
        code = context.model.module.code_for_node
        receiver, x_text = code(call.func.value), code(x)  # type: ignore[union-attr]
        if "\n" in receiver or "\n" in x_text:
            return None
        if size == ONE:
            text = f"{receiver}.predict_on_batch({x_text})"
            return FixPlan(SAFE, "Use `predict_on_batch`", (NodeEdit(call, "replace", text),))
        parent = _array_conversion(context, site)
        if parent is not None and not others:
            text = f"{receiver}({x_text}, training=False)"
            return FixPlan(SAFE, "Call the model directly", (NodeEdit(call, "replace", text),))
        return None


def _array_conversion(context: RuleContext, site: CallSite) -> Optional[cst.Call]:
    """The ``np.asarray(...)`` / ``np.array(...)`` call the predict call is the only argument of."""
    for other in context.model.calls:
        if other.place.order >= site.place.order:
            break
        call = other.node
        if len(call.args) == 1 and call.args[0].value is site.node and call.args[0].keyword is None:
            name = context.model.call_name(call) or dotted_text(call.func) or ""
            return call if name in _ARRAY else None
    return None

