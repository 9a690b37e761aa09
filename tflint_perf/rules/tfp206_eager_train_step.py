"""TFP206 eager-train-step: a custom training step called per batch and never compiled with ``tf.function``."""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.environments import is_environment_step
from tflint_perf.analysis.tf_functions import TfFunctions
from tflint_perf.analysis.model import CallSite, FunctionInfo, ModuleModel
from tflint_perf.analysis.names import dotted_text
from tflint_perf.text.diagnostics import UNSAFE, Finding, FixPlan, NodeEdit
from tflint_perf.fixes.building import tensorflow_api
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid

_UPDATES = frozenset({"apply_gradients", "minimize"})
# Keras' own loops, which cannot run inside a tf.function.
_KERAS_LOOPS = frozenset({"predict", "fit", "evaluate", "train_on_batch", "predict_on_batch", "test_on_batch"})
# Calls whose effect happens only once, at tracing, inside a tf.function: no fix is offered.
_TRACE_TIME_CALLS = frozenset({"print", "float", "int", "bool", "numpy", "item", "append", "extend", "tolist", "input",
                               "open", "write", "sleep", "time", "perf_counter"})
_TRACE_TIME_ROOTS = ("np.", "numpy.", "time.", "random.", "logging.", "tqdm")
_CREATES_STATE = ("tf.Variable", "keras.optimizers.", "keras.layers.", "keras.Sequential", "keras.Model")
_STEP = (
    "def train_step(x, y):\n    with tf.GradientTape() as tape:\n        loss = loss_fn(y, model(x, training=True))\n"
    "    grads = tape.gradient(loss, model.trainable_variables)\n"
    "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n    return loss\n\n"
)
_TF = "import tensorflow as tf\n\n"
_LOOP = "for x, y in dataset:\n    train_step(x, y)\n"


class EagerTrainStep(Rule):
    code = "TFP206"
    name = "eager-train-step"
    summary = "A custom training step called per batch runs eagerly, op by op, unless it is a `tf.function`"
    fix_availability = "sometimes"

    what_it_does = """
Checks for a function of this file that computes gradients with `tf.GradientTape()` and applies
them (`optimizer.apply_gradients(...)` or `optimizer.minimize(...)`), or returns them to a caller
that applies them (in its own body or in the loop around the call, in this file or in a module
importing it), called from a `for` or
`while` loop (directly, or through a few same-file calls), that is not a `tf.function`: not
decorated with `@tf.function` and not wrapped by `tf.function(step)` anywhere in the file, nor
called from a `tf.function`. The same step written inline in a loop's body (`with
tf.GradientTape() as tape:` and an `apply_gradients` in the loop, nothing compiling the function
around it) is reported once per loop, at its first tape; it has no fix (the step must first become
a function).

Not reported: steps that call Keras' own loops (`model.predict(...)`, `fit`, `train_on_batch`:
they cannot run inside a `tf.function`, so decorating is not the fix), steps called from loops
of a known count of at most 10 (`for _ in range(10)`), steps that the loops around them (and around
their callers) run at most 500 times in all, as every loop's bound shows (`for i in range(100)`
around a toy regression, 3 epochs over a `from_tensor_slices` pipeline of 1,000 rows batched by 10,
100 style-transfer steps: seconds however they run, since a small model's
eager step costs milliseconds and a large model's is its kernels), steps in a loop that also steps an environment
(`env.step(action)`: a reinforcement-learning update, where the simulator dominates), `train_step` of a Keras `Model` subclass (Keras compiles it), a step handed to
another function instead of called (`strategy.run(step, ...)`, a callback: what runs it is not
visible), TensorFlow 1 code (`tensorflow.compat.v1`, `tf.enable_eager_execution()`), and test files.
"""
    why_bad = """
Eagerly, every operation of the step (each layer's matmul, the loss, every gradient, every
variable update) is dispatched from Python one at a time: the Python overhead dominates small and
medium models, and on a GPU small kernels leave the device waiting for the host. `tf.function`
traces the step once into a graph that runs as a whole, with Grappler's optimizations. TensorFlow's
GPU performance guide: "Make sure you are using `tf.function` to create TensorFlow graphs, so
that you are not running ops in a pure eager mode." Measured on a 2-core CPU, 300 steps of a
3-layer MLP on batches of 64: 3.08 s eager, 0.14 s as a `tf.function` (22x). Steps dominated by a
few large convolutions gain less.
"""
    example = """
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for x, y in dataset:
    train_step(x, y)
"""
    use_instead = """
@tf.function
def train_step(x, y):
    ...  # the same body

for x, y in dataset:
    train_step(x, y)
"""
    fix_safety = """
The fix adds `@tf.function` above the `def` and is unsafe: inside a `tf.function`, Python side
effects run once, when the function is traced, not at every step, and Python control flow on
tensors is converted by AutoGraph. No fix is offered when the body calls something that only makes
sense eagerly (`print`, `.numpy()`, `float(...)`, NumPy, `list.append`, `time`, `random`, logging),
creates variables, layers or optimizers (a `tf.function` may create variables only on its first
call), declares `global`, or when the function already has decorators or sits inside another block.
"""
    references = (
        "[Better performance with tf.function](https://www.tensorflow.org/guide/function)",
        "[Writing a training loop from scratch: speeding up your training step with tf.function]"
        "(https://www.tensorflow.org/guide/keras/writing_a_training_loop_from_scratch)",
        "[Optimize TensorFlow GPU performance](https://www.tensorflow.org/guide/gpu_performance_analysis)",
    )

    valid = (
        # An inline step in a loop inside a tf.function: AutoGraph compiles the loop with it.
        Valid(
            _TF + "@tf.function\ndef train(dataset):\n    for x, y in dataset:\n        with tf.GradientTape() as tape:\n"
            "            loss = loss_fn(y, model(x))\n"
            "        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n"
        ),
        # handson-ml2's policy gradients: the update interleaved with 50 CartPole environments stepped in Python.
        Valid(
            _TF + "import gym\nenvs = [gym.make('CartPole-v1') for _ in range(50)]\nfor iteration in range(5000):\n"
            "    actions = choose(observations)\n    observations = [env.step(a)[0] for env, a in zip(envs, actions)]\n"
            "    with tf.GradientTape() as tape:\n        loss = loss_fn(targets, model(observations))\n"
            "    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n"
        ),
        # A PPO update's minibatch loop, called from the episode loop that steps the environment.
        Valid(
            _TF + "import gym\nenv = gym.make('CartPole-v1')\n\ndef update(batch):\n    for minibatch in batch.split(8):\n"
            "        with tf.GradientTape() as tape:\n            loss = ppo_loss(minibatch)\n"
            "        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n\n"
            "for episode in range(10000):\n    obs, reward, done, info = env.step(act(obs))\n    update(buffer)\n"
        ),
        # A WGAN's train_step with an inline critic loop, on a base model class from another module.
        Valid(
            _TF + "from gans import BaseGAN\n\nclass WGAN(BaseGAN):\n    def train_step(self, data):\n"
            "        for i in range(self.d_steps):\n            with tf.GradientTape() as tape:\n"
            "                d_loss = self.d_loss(data)\n"
            "            self.d_optimizer.apply_gradients(zip(tape.gradient(d_loss, self.d.trainable_variables), "
            "self.d.trainable_variables))\n        return {'d_loss': d_loss}\n"
        ),
        # A tape for a gradient check beside SciPy's minimize: no optimizer applies anything.
        Valid(
            _TF + "from scipy import optimize\nfor trial in range(1000):\n    with tf.GradientTape() as tape:\n"
            "        y = f(x)\n    g = tape.gradient(y, x)\n    result = optimize.minimize(objective, x0)\n"
        ),
        # Saliency maps: gradients returned per image and plotted, never applied.
        Valid(
            _TF + "def saliency(image):\n    with tf.GradientTape() as tape:\n        tape.watch(image)\n"
            "        score = model(image)[0, 1]\n    grads = tape.gradient(score, image)\n    return grads\n\n"
            "for image in images:\n    plt.imshow(saliency(image)[0])\n"
        ),
        # A gradient penalty computed from a tape inside a compiled step: its result is a loss term, not gradients.
        Valid(
            _TF + "def gradient_penalty(critic, x):\n    with tf.GradientTape() as tape:\n        tape.watch(x)\n"
            "        out = critic(x)\n    grads = tape.gradient(out, x)\n    return tf.reduce_mean((tf.norm(grads) - 1.0) ** 2)\n\n"
            "for x in dataset:\n    gp = gradient_penalty(critic, x)\n    optimizer.minimize(lambda: gp, critic.trainable_variables)\n"
        ),
        # An inline step in a loop of ten: a demo.
        Valid(
            _TF + "for _ in range(10):\n    with tf.GradientTape() as tape:\n        loss = loss_fn(y, model(x))\n"
            "    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n"
        ),
        # The TensorFlow cookbook's toy regression: one weight and a bias, 100 steps in all: well under a second.
        Valid(
            _TF + "import numpy as np\nx_vals = np.random.normal(1, 0.1, 100)\nweights = tf.Variable(tf.random.normal(shape=[1]))\n"
            "biases = tf.Variable(tf.random.normal(shape=[1]))\nfor i in range(100):\n    rand_index = np.random.choice(100)\n"
            "    rand_x = [x_vals[rand_index]]\n    with tf.GradientTape() as tape:\n"
            "        loss = tf.reduce_mean(tf.square(rand_x * weights + biases - 10.))\n"
            "    gradients = tape.gradient(loss, [weights, biases])\n    my_opt.apply_gradients(zip(gradients, [weights, biases]))\n"
        ),
        # D2L's toy linear regression: 1,000 rows sliced and batched by 10, 3 epochs: 300 steps of a Dense(1).
        Valid(
            _TF + "num_epochs, batch_size = 3, 10\nfeatures = tf.random.normal(shape=(1000, 2))\n"
            "labels = features[:, 0] * 2.0\nlabels += tf.random.normal(labels.shape, stddev=0.01)\n"
            "dataset = tf.data.Dataset.from_tensor_slices((features, labels))\n"
            "dataset = dataset.shuffle(buffer_size=1000)\ndataset = dataset.batch(batch_size)\n"
            "for epoch in range(1, num_epochs + 1):\n    for batch, (X, y) in enumerate(dataset):\n"
            "        with tf.GradientTape() as tape:\n            l = loss(model(X, training=True), y)\n"
            "        trainer.apply_gradients(zip(tape.gradient(l, model.trainable_variables), model.trainable_variables))\n"
        ),
        # 100 style-transfer steps on one image (a module constant), through a step function: a one-off generation.
        Valid(
            _TF + "generations = 100\nimage = tf.Variable(content_image)\n\ndef train_step(image):\n"
            "    with tf.GradientTape() as tape:\n        loss = style_content_loss(extractor(image))\n"
            "    opt.apply_gradients([(tape.gradient(loss, image), image)])\n\n"
            "for generation in range(generations):\n    train_step(image)\n"
        ),
        # Decorated, or wrapped elsewhere in the file.
        Valid(_TF + "@tf.function\n" + _STEP + _LOOP),
        Valid(_TF + _STEP + "train_step = tf.function(train_step)\n" + _LOOP),
        Valid(_TF + _STEP + "step = tf.function(train_step)\nfor x, y in dataset:\n    step(x, y)\n"),
        # Keras compiles a Model subclass's train_step.
        Valid(
            _TF + "class MyModel(tf.keras.Model):\n    def train_step(self, data):\n        x, y = data\n"
            "        with tf.GradientTape() as tape:\n            loss = self.compiled_loss(y, self(x, training=True))\n"
            "        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables), self.trainable_variables))\n"
            "        return {'loss': loss}\n"
        ),
        # Called from a tf.function (via strategy.run): compiled there.
        Valid(
            _TF + _STEP + "@tf.function\ndef distributed_step(x, y):\n    return strategy.run(train_step, args=(x, y))\n\n"
            "for x, y in dataset:\n    distributed_step(x, y)\n"
        ),
        # Called once, not in a loop.
        Valid(_TF + _STEP + "train_step(x, y)\n"),
        Valid(_TF + _STEP + "for _ in range(10):\n    train_step(x, y)\n"),
        # A step that calls model.predict (a DQN target) cannot be compiled as it stands.
        Valid(
            _TF + "def training_step(states, next_states):\n    target_q = model.predict(next_states).max(axis=1)\n"
            "    with tf.GradientTape() as tape:\n        loss = tf.reduce_mean((model(states) - target_q) ** 2)\n"
            "    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n\n"
            "for episode in range(600):\n    training_step(states, next_states)\n"
        ),
        # TensorFlow 1 eager code.
        Valid("import tensorflow as tf\ntf.enable_eager_execution()\n\n" + _STEP + _LOOP),
        # Redefined (a notebook's later cell): the loop calls the decorated definition in effect there,
        # and the first is called once.
        Valid(_TF + _STEP + "train_step(x, y)\n\n@tf.function\n" + _STEP + _LOOP),
    )
    invalid = (
        # YunYang1994's autoencoder: 10,000 steps written inline in the loop, run eagerly.
        Invalid(
            _TF + "for step in range(10000):\n    batch_x, _ = next(batches)\n    with tf.GradientTape() as tape:\n"
            "        loss = tf.reduce_mean(tf.square(batch_x - model(batch_x)))\n    grads = tape.gradient(loss, model.trainable_variables)\n"
            "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
        ),
        # 300 epochs of a dataset whose size the code does not show: not evidently a short run.
        Invalid(
            _TF + "for i in range(300):\n    for features, label in train_generator:\n        with tf.GradientTape() as tape:\n"
            "            loss = xentropy(label, linear_model(features, A, b))\n"
            "        my_opt.apply_gradients(zip(tape.gradient(loss, [A, b]), [A, b]))\n"
        ),
        # The same loop over 60,000 rows batched by 32 for 5 epochs: 9,375 eager steps.
        Invalid(
            _TF + "import numpy as np\nx_train = np.zeros((60000, 784))\n"
            "dataset = tf.data.Dataset.from_tensor_slices(x_train).shuffle(60000).batch(32)\n"
            "for epoch in range(5):\n    for x in dataset:\n        with tf.GradientTape() as tape:\n"
            "            loss = loss_fn(x, model(x))\n"
            "        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n"
        ),
        # aymericdamien's linear regression: 1,000 eager steps, twice the short runs left alone.
        Invalid(
            _TF + "training_steps = 1000\n\ndef run_optimization():\n    with tf.GradientTape() as g:\n"
            "        loss = tf.reduce_mean(tf.square(W * X + b - Y))\n"
            "    optimizer.apply_gradients(zip(g.gradient(loss, [W, b]), [W, b]))\n\n"
            "for step in range(training_steps):\n    run_optimization()\n",
            fixed=None,
        ),
        # The WGAN's critic: five steps per iteration of a long loop.
        Invalid(
            _TF + "for epoch in range(3000000):\n    for _ in range(5):\n        with tf.GradientTape() as tape:\n"
            "            d_loss = d_loss_fn(generator, discriminator, next(db_iter))\n"
            "        d_optimizer.apply_gradients(zip(tape.gradient(d_loss, discriminator.trainable_variables), "
            "discriminator.trainable_variables))\n"
        ),
        # 400 steps for each of three learning rates: 1,200 in all, though the short sweep loop alone repeats little.
        Invalid(
            _TF + _STEP + "for lr in [0.1, 0.01, 0.001]:\n    optimizer.learning_rate = lr\n"
            "    for i in range(400):\n        train_step(*next(batches))\n",
        ),
        # dragen1860's lesson 6: the batch loop over a pipeline inside `train_epoch`, called from 30 epochs.
        Invalid(
            _TF + "def train_epoch(epoch):\n    for step, (x, y) in enumerate(train_dataset):\n        with tf.GradientTape() as tape:\n"
            "            loss = loss_fn(y, model(x))\n"
            "        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n\n"
            "def train():\n    for epoch in range(30):\n        train_epoch(epoch)\n",
            count=1,
        ),
        # A function whose batch loop holds the step, called from the epoch loop: reported once, as a function.
        Invalid(
            _TF + "def train_epoch(dataset):\n    for x, y in dataset:\n        with tf.GradientTape() as tape:\n"
            "            loss = loss_fn(y, model(x))\n"
            "        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n\n"
            "for epoch in range(100):\n    train_epoch(dataset)\n",
            count=1,
        ),
        # A GAN's two tapes in one statement, inside a function's batch loop: one finding.
        Invalid(
            _TF + "def main():\n    for epoch in range(epochs):\n        for x in dataset:\n"
            "            with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:\n"
            "                g_loss, d_loss = losses(x)\n"
            "            g_optimizer.apply_gradients(zip(g_tape.gradient(g_loss, g.trainable_variables), g.trainable_variables))\n"
            "            d_optimizer.apply_gradients(zip(d_tape.gradient(d_loss, d.trainable_variables), d.trainable_variables))\n",
            count=1,
        ),
        # PAWS: the step returns its gradients and the loop around its call applies them.
        Invalid(
            _TF + "def train_step(x, encoder):\n    with tf.GradientTape() as tape:\n        loss = loss_fn(encoder(x))\n"
            "    gradients = tape.gradient(loss, encoder.trainable_variables)\n    return loss, gradients\n\n"
            "for x in dataset:\n    loss, gradients = train_step(x, encoder)\n"
            "    optimizer.apply_gradients(zip(gradients, encoder.trainable_variables))\n",
            fixed=None,
        ),
        # A VAE-GAN's `train` applies, through a compiled method, what the eager `compute_gradients` returns.
        Invalid(
            _TF + "class VAEGAN(tf.keras.Model):\n    def compute_gradients(self, x):\n"
            "        with tf.GradientTape() as tape:\n            loss = self.compute_loss(x)\n"
            "        grads = tape.gradient(loss, self.trainable_variables)\n        return grads\n\n"
            "    @tf.function\n    def apply_gradients(self, grads):\n"
            "        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))\n\n"
            "    def train(self, x):\n        self.apply_gradients(self.compute_gradients(x))\n\n"
            "model = VAEGAN()\nfor epoch in range(200):\n    for x in train_dataset:\n        model.train(x)\n",
            fixed=None,
        ),
        # A notebook that trains with `train_step` (cell 8, 9) and redefines it for another model, called
        # once (cell 23, 24): the loop calls the first definition, the one in effect there, not the last.
        Invalid(
            _TF + _STEP + _LOOP + "\n" + _STEP + "train_step(x, y)\n",
            fixed=_TF + "@tf.function\n" + _STEP + _LOOP + "\n" + _STEP + "train_step(x, y)\n",
            unsafe=True,
        ),
        Invalid(
            _TF + _STEP + _LOOP,
            fixed=_TF + "@tf.function\n" + _STEP + _LOOP,
            unsafe=True,
        ),
        # A method called from a training loop method; `minimize`.
        Invalid(
            _TF + "class Trainer:\n    def step(self, x):\n        with tf.GradientTape() as tape:\n"
            "            loss = self.loss(x)\n        self.opt.minimize(loss, self.model.trainable_variables, tape=tape)\n"
            "        return loss\n\n    def fit(self, ds):\n        for x in ds:\n            self.step(x)\n",
            fixed=_TF + "class Trainer:\n    @tf.function\n    def step(self, x):\n        with tf.GradientTape() as tape:\n"
            "            loss = self.loss(x)\n        self.opt.minimize(loss, self.model.trainable_variables, tape=tape)\n"
            "        return loss\n\n    def fit(self, ds):\n        for x in ds:\n            self.step(x)\n",
            unsafe=True,
        ),
        # The step prints and converts to NumPy: reported, no fix.
        Invalid(
            _TF + "def train_step(x, y):\n    with tf.GradientTape() as tape:\n        loss = loss_fn(y, model(x))\n"
            "    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))\n"
            "    print(float(loss.numpy()))\n\nstep = 0\nwhile step < 1000:\n    train_step(*next(it))\n    step += 1\n"
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        if context.is_test_code or _tf1(model):
            return
        candidates = [f for f in model.functions if _is_train_step(model, f)]
        functions = TfFunctions(model)
        loops = model.step_loops
        reported = set()
        for function in candidates:
            if _compiled_or_handed_on(model, functions, function):
                continue
            reaching = loops.reaching(function, trains=True)
            if not reaching or all(loops.runs_few(loop) for loop in reaching):
                continue
            # Every loop on the way counts, those `reaching` leaves out too (`for lr in [0.1, 0.01, 0.001]`
            # around 400 steps runs 1,200), and the function's own loops around its updates (`train_epoch`
            # holds the batch loop).
            around = tuple(model.call_graph.loops_reaching(function))
            inner = tuple(dict.fromkeys(loop for s in model.calls_in(function) if _updates(model, s) for loop in s.loops))
            if loops.runs_briefly(around + inner):
                continue  # at most a few hundred steps in all: seconds, eager or compiled
            if _steps_environment(model, reaching):
                continue
            applies = "computes and applies gradients" if _tape_and_update(model, function)[1] else (
                "computes the gradients its caller applies")
            message = (
                f"`{function.name}` {applies} and is called from a loop, but is not a "
                "`tf.function`: every op of every step runs eagerly, dispatched from Python; decorate it with "
                "`@tf.function`"
            )
            reported.add(function)
            yield self.finding(message, function.node.name, function.node.name, self._fix(context, function))
        yield from self._inline_steps(model, functions, reported)

    def _inline_steps(self, model: ModuleModel, functions: TfFunctions, reported_functions) -> Iterable[Finding]:
        """A step written inline in the loop's body: ``for x, y in ds: with tf.GradientTape() as tape:
        ...; optimizer.apply_gradients(...)``. Nothing compiles it; the fix is a decorated function."""
        loops = model.step_loops
        reported = set()  # one finding per loop: a GAN's two tapes are one step
        for site in model.calls:
            if not site.loops or model.call_name(site.node) != "tf.GradientTape":
                continue
            loop = site.loops[-1]
            if loop in reported:
                continue
            body = loops.calls_in(loop)
            if not any(_updates(model, s) for s in body) or any(_method(s) in _KERAS_LOOPS for s in body):
                continue
            function = site.function
            if function in reported_functions:
                continue  # reported as a whole: decorating it compiles this loop too
            if function is not None and _compiled_or_handed_on(model, functions, function):
                continue
            if not any(loops.repeats_work(around, trains=True) and not loops.runs_few(around) for around in site.loops):
                continue  # a WGAN's critic steps, `range(5)` inside the 3,000,000-step loop, run often
            callers = tuple(model.call_graph.loops_reaching(function)) if function is not None else ()
            if loops.runs_briefly(tuple(site.loops) + callers):
                continue  # `for i in range(100)` around a toy regression's step: seconds, eager or compiled
            if _steps_environment(model, tuple(site.loops) + callers):
                continue  # a PPO update's minibatch loop, called from the episode loop that steps the environment
            message = (
                "This loop computes and applies gradients inline, and nothing compiles it: every op of every "
                "step runs eagerly, dispatched from Python; move the step into a function decorated with "
                "`@tf.function` and call it from the loop"
            )
            reported.add(loop)
            yield self.finding(message, site.node, site.node)

    def _fix(self, context: RuleContext, function: FunctionInfo) -> Optional[FixPlan]:
        model = context.model
        node = function.node
        if node.decorators or function.declares_global or _has_trace_time_effects(model, function):
            return None
        if function.parent is not None:
            return None
        if function.class_info is None:
            if node not in model.module.body:
                return None
            indent = ""
        else:
            cls = function.class_info.node
            if cls not in model.module.body or not isinstance(cls.body, cst.IndentedBlock) or node not in cls.body.body:
                return None
            indent = cls.body.indent if cls.body.indent is not None else model.module.default_indent
        anchor = model.calls_in(function)
        spelling = tensorflow_api(model, "function", anchor[0].node) if anchor else None
        if spelling is None:
            return None
        name, imports = spelling
        return FixPlan(UNSAFE, f"Decorate with `@{name}`", (NodeEdit(node, "before", f"@{name}\n{indent}"),), imports)


def _compiled_or_handed_on(model: ModuleModel, functions: TfFunctions, function: FunctionInfo) -> bool:
    """What compiles a step's function, or hands it to what may: a ``tf.function`` (itself or a caller),
    ``strategy.run(step, ...)``, or a ``train_step`` of a model subclass whose base the analysis cannot
    resolve (a Keras ``Model`` from another module, which Keras compiles)."""
    if functions.is_tf_function(function) or model.hot_paths.context_of(function) is not None:
        return True
    if _passed_as_value(model, function):
        return True
    return (function.is_method and function.name == "train_step" and function.class_info is not None
            and bool(function.class_info.node.bases))


def _steps_environment(model: ModuleModel, loops) -> bool:
    """A loop around the step also steps an environment (`env.step(action)`): a policy's update
    interleaved with a Python simulator, which dominates the iteration whatever compiles the step."""
    step_loops = model.step_loops
    return any(is_environment_step(model, site.node, site.function) for loop in loops for site in step_loops.calls_in(loop))


def _updates(model: ModuleModel, site: CallSite) -> bool:
    """``optimizer.apply_gradients(...)`` or ``optimizer.minimize(...)``; not SciPy's ``minimize``."""
    return _method(site) in _UPDATES and not (model.call_name(site.node) or "").startswith("scipy.")


def _method(site: CallSite) -> str:
    func = site.node.func
    return func.attr.value if isinstance(func, cst.Attribute) else ""


def _tf1(model: ModuleModel) -> bool:
    alias = model.tensorflow_alias()
    if alias is not None and (model.imports.qualified(alias) or "").startswith("tensorflow.compat.v1"):
        return True
    return any(
        (model.call_name(s.node) or dotted_text(s.node.func) or "").endswith("enable_eager_execution") for s in model.calls
    )


def _is_train_step(model: ModuleModel, function: FunctionInfo) -> bool:
    """The function records a tape and applies what it computes, or returns the gradients for its caller
    to apply (``grads = step(x)`` then ``optimizer.apply_gradients(zip(grads, ...))``): the step's forward
    and backward passes are the function, wherever the update sits."""
    tape, update = _tape_and_update(model, function)
    return tape and (update or (_returns_gradients(model, function) and _caller_applies(model, function)))


def _tape_and_update(model: ModuleModel, function: FunctionInfo) -> Tuple[bool, bool]:
    """Whether the function records a tape, and whether it applies an update; (False, False) when it
    calls Keras' own loops (``model.predict(...)`` inside: the step cannot run as a graph as it stands)."""
    tape = update = False
    for site in model.calls_in(function):
        if _method(site) in _KERAS_LOOPS:
            return False, False
        if model.call_name(site.node) == "tf.GradientTape":
            tape = True
        elif _updates(model, site):
            update = True
    return tape, update


def _returns_gradients(model: ModuleModel, function: FunctionInfo) -> bool:
    """A ``return`` of the function hands back a name it binds to ``tape.gradient(...)``, alone or in a
    tuple (not a value computed from gradients: a gradient penalty returns a loss term)."""
    gradients = {name for name, bindings in model.bindings.get(function, {}).items()
                 if any(b.kind in ("assign", "unpack") and isinstance(b.value, cst.Call) and isinstance(b.value.func, cst.Attribute)
                        and b.value.func.attr.value == "gradient" for b in bindings)}

    def returned(value) -> List[str]:  # `return grads`, `return loss, grads`
        items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
        return [item.value for item in items if isinstance(item, cst.Name)]

    return bool(gradients) and any(
        ret.node.value is not None and gradients & set(returned(ret.node.value)) for ret in function.returns)


def _caller_applies(model: ModuleModel, function: FunctionInfo) -> bool:
    """A caller of the function (in this file or in a module importing it) applies gradients where it
    calls it: in its own body (a function), or in the loop around the call (module level); directly, or
    through a function of its module that does (``self.apply_gradients(...)``, a compiled helper)."""
    graph = model.call_graph
    callers = [(model, site) for site in graph.callers(function)] + graph.callers_elsewhere(function)
    for owner, site in callers:
        if site.function is not None:
            around = owner.calls_in(site.function)
            if site.function is function or all(_tape_and_update(owner, site.function)):
                continue  # recursion; or the caller records its own tape and applies: the step, reported itself
        else:
            around = owner.step_loops.calls_in(site.loops[-1]) if site.loops else []
        for other in around:
            callee = owner.call_graph.callee(other.node)
            if _updates(owner, other) or (callee is not None and callee is not function
                                          and any(_updates(owner, inner) for inner in owner.calls_in(callee))):
                return True
    return False


def _passed_as_value(model: ModuleModel, function: FunctionInfo) -> bool:
    """The function is handed to another call (``strategy.run(step, ...)``) rather than only called."""
    resolve = model.effects.resolve_callable
    for site in model.calls:
        for arg in site.node.args:
            if isinstance(arg.value, (cst.Name, cst.Attribute)) and resolve(arg.value, site.function) is function:
                return True
    return False


def _has_trace_time_effects(model: ModuleModel, function: FunctionInfo) -> bool:
    sites: List[CallSite] = model.calls_in(function)
    for site in sites:
        func = site.node.func
        leaf = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        name = model.call_name(site.node) or dotted_text(func) or ""
        if leaf in _TRACE_TIME_CALLS or name.startswith(_TRACE_TIME_ROOTS) or name.startswith(_CREATES_STATE):
            return True
    return False
