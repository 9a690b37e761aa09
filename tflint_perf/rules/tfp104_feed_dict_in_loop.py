"""TFP104 feed-dict-in-loop: ``Session.run(..., feed_dict=...)`` feeding per-step data in a loop."""

from __future__ import annotations

import re
from typing import Iterable, Optional

import libcst as cst

from tflint_perf.analysis.data_size import DataSizes
from tflint_perf.analysis.environments import interleaved_with_environment
from tflint_perf.analysis.feeds import Feeds, Iteration, Rollouts
from tflint_perf.analysis.loops import counts_epochs, few_literal_iterations, short_literal_loop
from tflint_perf.analysis.model import CallSite, LoopNode
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.sessions import RunPurposes, Sessions, run_fetches
from tflint_perf.text.diagnostics import Finding
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid, call_method_span

_INITIALIZER = re.compile(r"init", re.IGNORECASE)
_TF1 = "import tensorflow.compat.v1 as tf\n"
# Behaviour cloning on recorded Atari frames (256 of 84x84x4 fed each step), with a few evaluation
# episodes in the simulator every 5,000 updates: the updates are not paced by the simulator.
_CLONING = (
    "import gym\nimport numpy as np\nimport tensorflow as tf\n\ndata = np.load('expert_frames.npz')\n"
    "frames, actions = data['obs'], data['actions']\nenv = gym.make('Breakout-v0')\n"
    "obs_ph = tf.placeholder(tf.float32, [None, 84, 84, 4])\nact_ph = tf.placeholder(tf.int32, [None])\n"
    "logits = tf.layers.dense(tf.layers.flatten(obs_ph), 4)\n"
    "loss = tf.losses.sparse_softmax_cross_entropy(act_ph, logits)\n"
    "train_op = tf.train.AdamOptimizer(1e-4).minimize(loss)\nsess = tf.Session()\n\n"
    "def evaluate(episodes=5):\n    for _ in range(episodes):\n        s, done = env.reset(), False\n"
    "        while not done:\n            a = sess.run(logits, {obs_ph: s[None]}).argmax()\n"
    "            s, r, done, _ = env.step(a)\n\n"
    "for it in range(100000):\n    idx = np.random.randint(0, len(frames), 256)\n"
    "    sess.run(train_op, feed_dict={obs_ph: frames[idx], act_ph: actions[idx]})\n"
    "    if it % 5000 == 0:\n        evaluate()\n"
)
_HELP = (
    "build the input with tf.data instead, e.g. `tf.data.Dataset.from_tensor_slices((x, y)).batch(n)"
    ".prefetch(tf.data.AUTOTUNE)` and an iterator's `get_next()` as the model's input"
)


class FeedDictInLoop(Rule):
    code = "TFP104"
    name = "feed-dict-in-loop"
    summary = "`Session.run` with `feed_dict` in a loop copies each step's data from Python"
    fix_availability = "none"

    what_it_does = """
Checks for TF1-style `Session.run(fetches, feed_dict=...)` (also `sess.run(fetches, feed)`,
`Tensor.eval(feed_dict=...)` and `Operation.run(feed_dict=...)`) inside a `for` or `while` loop,
or inside a function that this file calls from a loop, when the feed carries per-step data:
arrays, slices, batches, a dict built a few lines earlier (`feed = {...}`, `feed[x] = batch`). A function handed by name to a call that is also told how many times
to repeat it (an integer above 10 passed as `iterations`, `frames`, `steps` or `number`, by keyword or
by position into a parameter of that name: `datavis.animate(training_step, iterations=2000 + 1)`)
counts as called from a loop: the driver repeats it. Another integer beside it (a delay,
`threading.Timer(60, step)`; a size; an optimiser's `maxfun=20`) says nothing of repetition. A loop named for epochs whose own body draws one batch an iteration (`for epoch in
range(1000): xb, yb = mnist.train.next_batch(100)`) is a loop of steps.

The file must import TensorFlow (or Keras), and the receiver must be a session: bound to `tf.Session()` / `tf.compat.v1.Session()` /
`InteractiveSession` / `MonitoredTrainingSession` (by assignment, `with ... as sess:` or
`self.sess = ...`), or, when nothing in the file binds it, named like `sess` or `session`.

A fed value is per-step data when it changes from one iteration to the next: it is computed in
the loop (`X[i:i + B]`, `next_batch()`), bound in the loop body or as the loop's target, or, for a
`run` in a function called from a loop, bound in that function (parameters included).

Only the training step is reported, once per loop: the run that fetches a train op (a name such
as `train_op`, `optimizer`, `d_optim`, `train_step`, `update_ops`, or a value bound to
`optimizer.minimize(...)` / `apply_gradients(...)` / `tf.group(...)`, or gradient descent written out,
`tf.assign(w, w - learning_rate * d_w)`), or the single run of a
function named like a training step (`train_step`, `partial_fit`, `update`) that the file calls
from a loop. Runs that fetch only metrics, losses, summaries or samples (evaluation over test
batches, a logging re-run under `if step % 100 == 0`) are not the training step; neither is a
feedback loop whose feed is what an earlier run returned (sampling, generation, on-policy
rollouts), or whose every fed value is what this same run returned on the previous step (an
RNN's state or Transformer-XL's memory fed back, through unpackings and loops over it, while the
data come from the graph's iterator), where no input pipeline could run ahead, nor an update that feeds a rollout: data read
from a buffer (a local list, or a `self.episode_buffer` of the run's class, a few assignments or a
same-file call away) that a loop stepping an environment (`env.step(action)`) fills, nor an update
repeated once per environment step: the innermost loop around it (or around the call of its function,
a few callers away, other modules too) also steps an environment, in its body (an episode's step loop
nested in it included) or through a call of a same-file function that takes one step outside any loop
of its own (a DQN's `learn()` on a replay sample after every `env.step`), or the loop around it counts
as many updates as the environment steps just taken (DDPG's `for _ in range(episode_length)` after each
episode, `episode_length += 1` in its step loop), where the simulator sets the
pace. A rollout may also come back from a same-file function that fills it while stepping the
environment (an A3C worker's `steps, n = self.run_n_steps(t_max)`) and be regrouped step by step into
lists (`states.append(step.state)`) before the feed. An update loop of its own over a full replay memory is reported, and so is one whose environment
steps are evaluation: behind a periodic guard (`if it % 5000 == 0:`) or in a called function that runs
whole episodes in its own loop (`evaluate()`, behaviour cloning on recorded frames).

Not reported either: feeds of only Python values and hyperparameters (literals, names bound to numbers
or booleans, keys or values named like `lr`, `learning_rate`, `keep_prob`, `dropout`,
`is_training`, `step`); values bound once before the loop (a `validate_feed` built before
training and fed every 1,000 steps); calls outside loops (one-off evaluation); calls whose only
loops count epochs (`for epoch in range(n)`: once-per-epoch evaluation; a loop is judged by its
bound, so `for step in range(int(num_epochs * train_size) // BATCH_SIZE)` and `while step *
batch_size < epochs * n`, whose epoch count is scaled by the data, count steps); loops of a few runs
the source counts (`for step in xrange(1)`, `range(3)`, a literal tuple, `ds.take(3)`), around the
run or around the call of the function holding it; initializer
runs (`sess.run(iterator.initializer, feed_dict={filenames: [...]})`); test files; feeds drawn
from a toy dataset whose whole size the source shows to be at most 10,000 numbers (literal lists,
`np.random.normal(1, 0.1, 100)`, `np.linspace(0, 10, 100)`, scikit-learn's `load_iris()`, and
`np.repeat(10., 100)`, `make_circles(n_samples=350)`, `np.random.randn(64, 5)` drawn each step,
and slices, items, reshapes, NumPy's element-wise functions (`np.sin`, `np.power`), comparisons,
`[np.linspace(-1, 1, 15) for _ in range(64)]`, `np.random.normal(0, 0.1, size=x.shape)`, what a
same-file helper called without arguments returns, and loops over them; analysis/data_size.py), where each step copies a few hundred bytes and a pipeline would gain
nothing measurable; and, whatever the dataset's size, feeds whose every step's share is written and
adds up to at most 4,096 numbers: a placeholder's written shape, its batch dimension counted as the
rows a random index array of written size or a slice `x[i:i + 25]` gathers from an in-memory
array (the cookbooks' `x_vals_train[np.random.choice(len(x_vals_train), size=25)]` into
`tf.placeholder(shape=[None, 7])`), a gather and copy of microseconds. A recurrent state the same
run returned on the step before (`init_s: final_s_`) is no part of that data: a sin window of 10
numbers fed with the LSTM state it carries is a toy feed.
"""
    why_bad = """
`feed_dict` copies every fed array from Python memory into the TensorFlow runtime on each
`run`, on the training thread: while the batch is sliced, converted and copied, the accelerator
waits, and while it trains, no next batch is being prepared. A `tf.data` pipeline prepares
batches on background threads and prefetches them, so input and training overlap. TensorFlow's
own performance guide: "While feeding data using a `feed_dict` offers a high level of
flexibility, in general `feed_dict` does not provide a scalable solution. Avoid using `feed_dict`
for all but trivial examples." Measured on a 2-core CPU with 64 x 150,528 float32 batches:
9.0 s with `feed_dict`, 4.4 s with a prefetching `tf.data` pipeline (2.0x).
"""
    example = """
import tensorflow.compat.v1 as tf

with tf.Session() as sess:
    for i in range(steps):
        xb, yb = X[i * B:(i + 1) * B], Y[i * B:(i + 1) * B]
        sess.run(train_op, feed_dict={x_ph: xb, y_ph: yb})
"""
    use_instead = """
import tensorflow.compat.v1 as tf

# Placeholders feed the arrays once; a one-shot iterator over the arrays themselves would
# embed them in the graph as constants, which makes every step slower.
x_all = tf.placeholder(X.dtype, X.shape)
y_all = tf.placeholder(Y.dtype, Y.shape)
ds = tf.data.Dataset.from_tensor_slices((x_all, y_all)).batch(B).repeat().prefetch(tf.data.AUTOTUNE)
iterator = tf.data.make_initializable_iterator(ds)
xb, yb = iterator.get_next()  # build the model on xb, yb
with tf.Session() as sess:
    sess.run(iterator.initializer, feed_dict={x_all: X, y_all: Y})
    for i in range(steps):
        sess.run(train_op)
"""
    fix_safety = """
There is no automatic fix: moving to `tf.data` changes how the graph is built (the model takes
the iterator's tensors instead of placeholders), which is a design change for the author.
"""
    known_problems = """
A feed built by a function from another module, or passed in as a parameter by a caller in
another module, cannot be seen and is not reported (a parameter that same-file callers fill is
followed to them: `run_step(sess, {x: xb, y: yb})` in a step loop). Neither is a training loop in a module that does not import TensorFlow itself
(a helper handed a `sess` by its caller). Feeding the same whole arrays on every step (full-batch training,
`for i in range(n): sess.run(train_op, feed_dict={x: X, y: Y})`) copies them every time too, but
is not reported: the values are bound before the loop, like a periodic validation feed.
"""
    references = (
        "[TensorFlow 1 performance guide (input pipeline)]"
        "(https://github.com/tensorflow/docs/blob/master/site/en/r1/guide/performance/overview.md)",
        "[tf.data: Build TensorFlow input pipelines](https://www.tensorflow.org/guide/data)",
        "[Better performance with the tf.data API](https://www.tensorflow.org/guide/data_performance)",
        "[Migrate to TensorFlow 2](https://www.tensorflow.org/guide/migrate/migrate_tf2)",
    )

    valid = (
        # MorvanZhou's GAN: 64 curves of 15 points drawn in NumPy each step by a same-file helper, and
        # 64x5 random ideas: about a thousand numbers a step, microseconds next to the session call.
        Valid(
            _TF1 + "import numpy as np\nBATCH_SIZE = 64\n"
            "PAINT_POINTS = np.vstack([np.linspace(-1, 1, 15) for _ in range(BATCH_SIZE)])\n\n"
            "def artist_works():\n    a = np.random.uniform(1, 2, size=BATCH_SIZE)[:, np.newaxis]\n"
            "    paintings = a * np.power(PAINT_POINTS, 2) + (a - 1)\n    labels = (a - 1) > 0.5\n"
            "    return paintings, labels.astype(np.float32)\n\n"
            "train_d = tf.train.AdamOptimizer(1e-4).minimize(d_loss)\n"
            "sess = tf.Session()\nfor step in range(5000):\n    paintings, labels = artist_works()\n"
            "    ideas = np.random.randn(BATCH_SIZE, 5)\n"
            "    sess.run([d_loss, train_d], {g_in: ideas, real_in: paintings, art_labels: labels})\n"
        ),
        # Four optimizers fed 32 of 100 points with noise as large as the points (`size=x.shape`).
        Valid(
            _TF1 + "import numpy as np\nx = np.linspace(-1, 1, 100)[:, np.newaxis]\n"
            "noise = np.random.normal(0, 0.1, size=x.shape)\ny = np.power(x, 2) + noise\nsess = tf.Session()\n"
            "for step in range(300):\n    index = np.random.randint(0, x.shape[0], 32)\n    b_x, b_y = x[index], y[index]\n"
            "    for net in nets:\n        sess.run([net.train, net.loss], {net.x: b_x, net.y: b_y})\n"
        ),
        # An RNN regression on a sin/cos window of 10 numbers a step; the LSTM state it feeds is what the
        # same run returned on the step before, no data for a pipeline: the step's data is 20 numbers.
        Valid(
            _TF1 + "import numpy as np\nsess = tf.Session()\nfor step in range(60):\n"
            "    steps = np.linspace(step * np.pi, (step + 1) * np.pi, 10)\n"
            "    x = np.sin(steps)[np.newaxis, :, np.newaxis]\n    y = np.cos(steps)[np.newaxis, :, np.newaxis]\n"
            "    if step == 0:\n        feed_dict = {tf_x: x, tf_y: y}\n    else:\n"
            "        feed_dict = {tf_x: x, tf_y: y, init_s: final_s_}\n"
            "    _, pred_, final_s_ = sess.run([train_op, outs, final_s], feed_dict)\n"
        ),
        # A DQN's update on a replay sample after every environment step: the simulator sets the pace.
        Valid(
            _TF1 + "import gym\nimport numpy as np\nenv = gym.make('CartPole-v0')\nMEMORY = np.load('memory.npy')\n"
            "sess = tf.Session()\n\ndef learn():\n    b_memory = MEMORY[np.random.choice(2000, 32), :]\n"
            "    sess.run(train_op, {tf_s: b_memory[:, :4], tf_r: b_memory[:, 4]})\n\n"
            "for episode in range(400):\n    s = env.reset()\n    while True:\n        env.render()\n"
            "        s_, r, done, info = env.step(choose_action(s))\n        store_transition(s, r, s_)\n        learn()\n"
            "        if done:\n            break\n        s = s_\n"
        ),
        # The same DQN taking each step through a helper that steps the environment once.
        Valid(
            _TF1 + "import gym\nimport numpy as np\nenv = gym.make('CartPole-v0')\nMEMORY = np.load('memory.npy')\n"
            "sess = tf.Session()\n\ndef learn():\n    b_memory = MEMORY[np.random.choice(2000, 32), :]\n"
            "    sess.run(train_op, {tf_s: b_memory[:, :4], tf_r: b_memory[:, 4]})\n\n"
            "def act_and_step(s):\n    return env.step(choose_action(s))\n\n"
            "for episode in range(400):\n    s = env.reset()\n    while True:\n"
            "        s_, r, done, info = act_and_step(s)\n        store_transition(s, r, s_)\n        learn()\n"
            "        if done:\n            break\n        s = s_\n"
        ),
        # DDPG: after each episode, one update per environment step taken (`episode_length`, raised in the
        # episode's step loop) on a replay sample: the simulator sets the pace.
        Valid(
            _TF1 + "import gym\nenv = gym.make('Pendulum-v0')\nsess = tf.Session()\nfor i_episode in range(500):\n"
            "    s, episode_length, d = env.reset(), 0, False\n    while not d:\n"
            "        s2, r, d, _ = env.step(get_action(s))\n        episode_length += 1\n"
            "        replay_buffer.store(s, r, s2, d)\n        s = s2\n"
            "    for _ in range(episode_length):\n        batch = replay_buffer.sample_batch(100)\n"
            "        sess.run([q_loss, q_train_op], {X: batch['s'], R: batch['r']})\n"
        ),
        # An A3C worker's update on its n-step rollout, returned by the method that steps the environment and
        # regrouped into lists step by step before the feed.
        Valid(
            _TF1 + "import numpy as np\n\nclass Worker:\n    def run(self, sess):\n        while True:\n"
            "            steps, global_step = self.run_n_steps(5, sess)\n            self.update(steps, sess)\n\n"
            "    def run_n_steps(self, n, sess):\n        steps = []\n        for _ in range(n):\n"
            "            action = self.sample_action(self.state, sess)\n"
            "            next_state, reward, done, _ = self.env.step(action)\n"
            "            steps.append(Step(self.state, action, reward, next_state, done))\n"
            "        return steps, global_step\n\n"
            "    def update(self, steps, sess):\n        states, actions = [], []\n        for step in reversed(steps):\n"
            "            states.append(step.state)\n            actions.append(step.action)\n"
            "        feed_dict = {self.states: np.array(states), self.actions: actions}\n"
            "        sess.run([self.loss, self.train_op], feed_dict)\n"
        ),
        # A training step handed to a timer with a delay, not a count: it runs once, a minute later.
        Valid(
            _TF1 + "import threading\nsess = tf.Session()\n\ndef training_step():\n"
            "    batch_X, batch_Y = mnist.train.next_batch(100)\n"
            "    sess.run(train_step, feed_dict={X: batch_X, Y_: batch_Y})\n\n"
            "threading.Timer(60, training_step).start()\n"
        ),
        # An optimiser's limit on evaluations: each call feeds back the point the last one's gradients chose.
        Valid(
            _TF1 + "import numpy as np\nfrom scipy.optimize import fmin_l_bfgs_b\nsess = tf.Session()\n\n"
            "def optimize(x):\n"
            "    loss, grads = sess.run([loss_op, grad_op], feed_dict={image: x.reshape((1, 224, 224, 3))})\n"
            "    return loss, grads.flatten().astype('float64')\n\n"
            "x0 = np.random.uniform(0, 255, (1, 224, 224, 3))\n"
            "x, min_val, info = fmin_l_bfgs_b(optimize, x0.flatten(), maxfun=20)\n"
        ),
        # Moving averages written out (`m - (1 - decay) * (m - x)`) move towards a value; they are no
        # gradient-descent step, so the run is not the training step.
        Valid(
            _TF1 + "update_mean = tf.assign(pop_mean, pop_mean - (1 - decay) * (pop_mean - batch_mean))\n"
            "sess = tf.Session()\nfor i in range(1000):\n    xb, yb = mnist.train.next_batch(100)\n"
            "    sess.run(update_mean, feed_dict={X: xb})\n"
        ),
        # A training step handed to a driver with no count (a thread): nothing says it repeats.
        Valid(
            _TF1 + "import threading\nsess = tf.Session()\n\ndef training_step():\n"
            "    batch_X, batch_Y = mnist.train.next_batch(100)\n"
            "    sess.run(train_step, feed_dict={X: batch_X, Y_: batch_Y})\n\n"
            "threading.Thread(target=training_step).start()\n"
        ),
        # Hyperparameters and Python values only.
        Valid(
            _TF1 + "lr = 0.01\nwith tf.Session() as sess:\n    for step in range(1000):\n"
            "        sess.run(train_op, feed_dict={learning_rate: lr, keep_prob: 0.5, is_training: True})\n"
        ),
        # NVIDIA/OpenSeq2Seq utils/funcs.py: data come through the graph's iterator; the feed is only the
        # gradient-accumulation flag, a Python bool from the step counter and a setting read from the config.
        Valid(
            _TF1 + "def train(train_model, sess):\n    step = 0\n    while True:\n        feed_dict = {}\n"
            "        iter_size = train_model.params.get('iter_size', 1)\n        if iter_size > 1:\n"
            "            feed_dict[train_model.skip_update_ph] = step % iter_size != 0\n"
            "        sess.run(train_op, feed_dict)\n        step += 1\n"
        ),
        # facenet's tmp/seed_test.py: one step, run to compare seeded gradients (a loop of one is no loop).
        Valid(
            _TF1 + "from six.moves import xrange\nsess = tf.Session()\nfor step in xrange(1):\n"
            "    batch = np.random.random((90, 96, 96, 3))\n    sess.run(train_op, feed_dict={images_placeholder: batch})\n"
        ),
        # One-off evaluation, not in a loop.
        Valid(_TF1 + "sess = tf.Session()\nacc = sess.run(accuracy, feed_dict={x: x_test, y: y_test})\n"),
        # An iterator initializer fed file names, once per epoch.
        Valid(
            _TF1 + "with tf.Session() as sess:\n    for epoch in range(10):\n"
            "        sess.run(iterator.initializer, feed_dict={filenames: train_files})\n"
            "        while True:\n            sess.run(train_op)\n"
        ),
        # Per-epoch evaluation.
        Valid(
            _TF1 + "with tf.Session() as sess:\n    for epoch in range(10):\n        train_one_epoch(sess)\n"
            "        print(sess.run(accuracy, feed_dict={x: x_val, y: y_val}))\n"
        ),
        # Not a TensorFlow session.
        Valid(
            _TF1 + "import onnxruntime as ort\nsess = ort.InferenceSession('model.onnx')\nfor batch in batches:\n"
            "    sess.run(None, {'input': batch})\n"
        ),
        # Not TensorFlow code: nothing in the file imports it.
        Valid(
            "def train(sess, ops, batches):\n    for xb, yb in batches:\n"
            "        sess.run(ops.train, feed_dict={ops.x: xb, ops.y: yb})\n"
        ),
        # A helper handed the same whole arrays on every step (full-batch training): values bound once.
        Valid(
            _TF1 + "def run_step(session, feed):\n    return session.run([train_op, loss], feed)\n\n"
            "sess = tf.Session()\nfeed = {x: X_train, y: Y_train}\nfor i in range(num_steps):\n    run_step(sess, feed)\n"
        ),
        # A loop over epochs, however its bound is written: once per epoch.
        Valid(
            _TF1 + "with tf.Session() as sess:\n    for i in range(1, FLAGS.num_epochs + 1):\n"
            "        xs, ys = shuffle(x_train, y_train)\n"
            "        sess.run(train_op, feed_dict={x: xs, y: ys})\n"
        ),
        # Evaluation over test batches: no train op is fetched.
        Valid(
            _TF1 + "with tf.Session() as sess:\n    for i in range(0, len(X_test), 500):\n"
            "        acc = sess.run(accuracy, feed_dict={x: X_test[i:i + 500], y: Y_test[i:i + 500]})\n"
        ),
        # Periodic logging re-runs the loss on the step's batch; the training run feeds from an iterator.
        Valid(
            _TF1 + "with tf.Session() as sess:\n    for step in range(10000):\n        sess.run(train_op)\n"
            "        if step % 100 == 0:\n            xb, yb = mnist.test.next_batch(128)\n"
            "            print(sess.run([loss, accuracy], feed_dict={x: xb, y: yb}))\n"
        ),
        # A feedback loop: each step feeds what the previous run produced (sampling, generation).
        Valid(
            _TF1 + "with tf.Session() as sess:\n    state = sess.run(initial_state)\n    token = start\n"
            "    for i in range(200):\n"
            "        token, state = sess.run([sample_op, final_state], feed_dict={input_ph: token, state_ph: state})\n"
        ),
        # zihangdai/xlnet train_gpu.py: the data come from the graph's iterator; the feed is the
        # Transformer-XL memory this same run returned on the previous step, fed back through an
        # unpacking and a loop over it. No input pipeline could read it ahead.
        Valid(
            _TF1 + "def train(loss, new_mems, train_op, mems, mems_np):\n    fetches = [loss, new_mems, train_op]\n"
            "    with tf.Session() as sess:\n        while True:\n            feed_dict = {}\n"
            "            for key in mems_np.keys():\n                for m, m_np in zip(mems[key], mems_np[key]):\n"
            "                    feed_dict[m] = m_np\n            fetched = sess.run(fetches, feed_dict=feed_dict)\n"
            "            loss_np, mems_np = fetched[:2]\n"
        ),
        # An on-policy update: the fed episode is what the rollout runs returned.
        Valid(
            _TF1 + "with tf.Session() as sess:\n    for episode in range(1000):\n        obs, actions, rewards = [], [], []\n"
            "        ob = env.reset()\n        for t in range(200):\n"
            "            action = sess.run(sampled_action, feed_dict={obs_ph: [ob]})\n"
            "            ob, reward, done, _ = env.step(action)\n            actions.append(action)\n"
            "        sess.run(train_op, feed_dict={obs_ph: obs, act_ph: action})\n"
        ),
        # The same rollout on an environment known by its factory, whatever its name (`game = gym.make(...)`).
        Valid(
            _TF1 + "import gym\ngame = gym.make('Pong-v0')\nwith tf.Session() as sess:\n    for episode in range(1000):\n"
            "        obs, actions = [], []\n        ob = game.reset()\n        for t in range(200):\n"
            "            action = sess.run(sampled_action, feed_dict={obs_ph: [ob]})\n"
            "            ob, reward, done, _ = game.step(action)\n            obs.append(ob)\n            actions.append(action)\n"
            "        sess.run(train_op, feed_dict={obs_ph: obs, act_ph: actions})\n"
        ),
        # An A3C-style worker: the update feeds the rollout buffer that the acting loop fills on each
        # environment step, read in another method; the data exists only after those steps.
        Valid(
            _TF1 + "import numpy as np\n\nclass Worker:\n    def train(self, bootstrap):\n"
            "        rollout = np.array(self.episode_buffer)\n        observations = rollout[:, 0]\n"
            "        feed_dict = {self.net.observation: np.stack(observations, axis=0), self.net.target: bootstrap}\n"
            "        self.sess.run([self.net.apply_grads, self.net.loss], feed_dict=feed_dict)\n\n"
            "    def play(self):\n        s = self.env.reset()\n        while not self.done:\n"
            "            s1, r, self.done, _ = self.env.step(self.action)\n"
            "            self.episode_buffer.append([s, s1, self.action, r])\n"
            "            if len(self.episode_buffer) == 20:\n                self.train(0.0)\n"
            "                self.episode_buffer = []\n            s = s1\n"
        ),
        # A loop over a short literal tuple: two runs, not a loop over batches.
        Valid(
            _TF1 + "with tf.Session() as sess:\n    xb, yb = next_batch()\n    for flag in (True, False):\n"
            "        sess.run(train_op, {x: xb, y: yb, is_training: flag})\n"
        ),
        # A step function called from a loop of two literal settings: two runs, as when the loop is around the run.
        Valid(
            _TF1 + "def run_step(sess, xb, flag):\n    sess.run(train_op, feed_dict={x: xb, is_training: flag})\n\n"
            "sess = tf.Session()\nxb = load_batch()\nfor flag in (True, False):\n    run_step(sess, xb, flag)\n"
        ),
        # aymericdamien's linear regression: 17 points fed one at a time; the whole dataset is 34 numbers.
        Valid(
            _TF1 + "import numpy\ntrain_X = numpy.asarray([3.3, 4.4, 5.5, 6.71, 6.93, 4.168, 9.779])\n"
            "train_Y = numpy.asarray([1.7, 2.76, 2.09, 3.19, 1.694, 1.573, 3.366])\nwith tf.Session() as sess:\n"
            "    for epoch in range(1000):\n        for (x, y) in zip(train_X, train_Y):\n"
            "            sess.run(optimizer, feed_dict={X: x, Y: y})\n"
        ),
        # A cookbook regression: a batch drawn each step from 100 random points and Iris's petal widths.
        Valid(
            _TF1 + "import numpy as np\nfrom sklearn import datasets\niris = datasets.load_iris()\n"
            "x_vals = np.array([x[3] for x in iris.data])\ny_vals = np.random.normal(1, 0.1, 100)\n"
            "sess = tf.Session()\nfor i in range(1500):\n    rand_index = np.random.choice(len(x_vals), size=25)\n"
            "    rand_x = np.transpose([x_vals[rand_index]])\n    rand_y = np.transpose([y_vals[rand_index]])\n"
            "    sess.run(train_step, feed_dict={x_data: rand_x, y_target: rand_y, keep_prob: 0.5})\n"
        ),
        # No feed.
        Valid(_TF1 + "with tf.Session() as sess:\n    for step in range(100):\n        sess.run(train_op)\n"),
        # Values bound once before the loop: a feedable iterator's handle, a periodic validation feed.
        Valid(
            _TF1 + "with tf.Session() as sess:\n    train_handle = sess.run(train_iterator.string_handle())\n"
            "    validate_feed = {x: x_val, y: y_val}\n    for i in range(10000):\n"
            "        sess.run(train_op, feed_dict={handle: train_handle})\n        if i % 1000 == 0:\n"
            "            print(sess.run(accuracy, feed_dict=validate_feed))\n"
        ),
        # The cookbook's low-birthweight table read from a CSV file (size unknown): 25 rows of 7
        # features and 25 targets a step, gathered by a random index array of written size.
        Valid(
            _TF1 + "import numpy as np\nbirth_data = [[float(x) for x in row] for row in csv.reader(open('bw.csv'))]\n"
            "x_vals = np.array([x[1:8] for x in birth_data])\ny_vals = np.array([x[0] for x in birth_data])\n"
            "batch_size = 25\nx_data = tf.placeholder(shape=[None, 7], dtype=tf.float32)\n"
            "y_target = tf.placeholder(shape=[None, 1], dtype=tf.float32)\nsess = tf.Session()\n"
            "for i in range(1500):\n    rand_index = np.random.choice(len(x_vals), size=batch_size)\n"
            "    rand_x = x_vals[rand_index]\n    rand_y = np.transpose([y_vals[rand_index]])\n"
            "    sess.run(train_step, feed_dict={x_data: rand_x, y_target: rand_y})\n"
        ),
        # The cookbook's back-propagation recipe: one of 100 points a step into placeholders of shape [1].
        Valid(
            _TF1 + "import numpy as np\nx_vals = np.random.normal(1, 0.1, 100)\ny_vals = np.repeat(10., 100)\n"
            "x_data = tf.placeholder(shape=[1], dtype=tf.float32)\ny_target = tf.placeholder(shape=[1], dtype=tf.float32)\n"
            "sess = tf.Session()\nfor i in range(100):\n    rand_index = np.random.choice(100)\n"
            "    sess.run(train_step, feed_dict={x_data: [x_vals[rand_index]], y_target: [y_vals[rand_index]]})\n"
        ),
        # An SVM on 350 generated 2-D points.
        Valid(
            _TF1 + "import numpy as np\nfrom sklearn import datasets\n"
            "(x_vals, y_vals) = datasets.make_circles(n_samples=350, factor=.5, noise=.1)\n"
            "y_vals = np.array([1 if y == 1 else -1 for y in y_vals])\nsess = tf.Session()\n"
            "for i in range(1000):\n    rand_index = np.random.choice(len(x_vals), size=350)\n"
            "    sess.run(train_step, feed_dict={x_data: x_vals[rand_index], y_target: np.transpose([y_vals[rand_index]])})\n"
        ),
    )
    invalid = (
        # tensorflow-without-a-phd: the training step drawn and fed per call, repeated 2,001 times by a
        # visualisation driver instead of a loop in sight.
        Invalid(
            _TF1 + "sess = tf.Session()\n\ndef training_step(i, update_test_data, update_train_data):\n"
            "    batch_X, batch_Y = mnist.train.next_batch(100)\n"
            "    sess.run(train_step, feed_dict={X: batch_X, Y_: batch_Y})\n\n"
            "datavis.animate(training_step, iterations=2000 + 1, train_data_update_freq=10)\n"
        ),
        # The count by position, into the driver's `iterations` parameter (the driver defined in this file).
        Invalid(
            _TF1 + "sess = tf.Session()\n\ndef animate(compute_step, iterations, update_freq=20):\n"
            "    for i in range(iterations):\n        compute_step(i, i % update_freq == 0)\n\n"
            "def training_step(i, update_train_data):\n    batch_X, batch_Y = mnist.train.next_batch(100)\n"
            "    sess.run(train_step, feed_dict={X: batch_X, Y_: batch_Y})\n\n"
            "animate(training_step, 10001, update_freq=20)\n"
        ),
        # A loop named for epochs that draws one batch an iteration: 1,000 steps.
        Invalid(
            _TF1 + "sess = tf.Session()\nfor epoch in range(1000):\n    batch_x, batch_y = mnist.train.next_batch(100)\n"
            "    sess.run(optimizer, feed_dict={X: batch_x, Y: batch_y})\n"
        ),
        # Gradient descent written out as variable assignments, fetched as the step.
        Invalid(
            _TF1 + "step = [tf.assign(w1, w1 - learning_rate * d_w1), tf.assign(b1, b1 - learning_rate * d_b1)]\n"
            "sess = tf.InteractiveSession()\nfor i in range(10000):\n    batch_xs, batch_ys = mnist.train.next_batch(10)\n"
            "    sess.run(step, feed_dict={X: batch_xs, Y: batch_ys})\n"
        ),
        # A model class's train() called per batch through the instances held in a list (an ensemble).
        Invalid(
            _TF1 + "class Model:\n    def __init__(self, sess):\n        self.sess = sess\n\n"
            "    def train(self, x_data, y_data):\n"
            "        return self.sess.run([self.cost, self.optimizer], feed_dict={self.X: x_data, self.Y: y_data})\n\n"
            "sess = tf.Session()\nmodels = []\nfor m in range(2):\n    models.append(Model(sess))\n"
            "for epoch in range(15):\n    for i in range(550):\n        batch_xs, batch_ys = mnist.train.next_batch(100)\n"
            "        for m_idx, m in enumerate(models):\n            c, _ = m.train(batch_xs, batch_ys)\n"
        ),
        # An update loop of its own count after each episode: not one update per environment step.
        Invalid(
            _TF1 + "import gym\nenv = gym.make('Pendulum-v0')\nsess = tf.Session()\nfor i_episode in range(500):\n"
            "    s, episode_length, d = env.reset(), 0, False\n    while not d:\n"
            "        s2, r, d, _ = env.step(get_action(s))\n        episode_length += 1\n        s = s2\n"
            "    for _ in range(1000):\n        batch = replay_buffer.sample_batch(100)\n"
            "        sess.run([q_loss, q_train_op], {X: batch['s'], R: batch['r']})\n"
        ),
        # An off-policy update loop of its own over a full replay memory: no environment is stepped in it.
        Invalid(
            _TF1 + "import gym\nenv = gym.make('Breakout-v0')\n\nclass Agent:\n"
            "    def optimize(self, iterations):\n        for i in range(iterations):\n"
            "            states, q_values = self.replay_memory.random_batch()\n"
            "            self.session.run([self.loss, self.optimizer], feed_dict={self.x: states, self.q: q_values})\n\n"
            "    def run(self):\n        for episode in range(100):\n            while not done:\n"
            "                state, reward, done, _ = env.step(self.act())\n                self.replay_memory.add(state)\n"
            "            self.optimize(1000)\n"
        ),
        # Evaluation episodes every 5,000 updates, in a function of their own or written in the loop under
        # the periodic guard: the other updates are not paced by the simulator.
        Invalid(_CLONING),
        Invalid(_CLONING.replace("    if it % 5000 == 0:\n        evaluate()\n",
                                 "    if it % 5000 == 0:\n        s, done = env.reset(), False\n        while not done:\n"
                                 "            s, r, done, _ = env.step(sess.run(logits, {obs_ph: s[None]}).argmax())\n")),
        # Synthetic images drawn in NumPy each step, 64 of 224x224x3: ten million numbers a step.
        Invalid(
            _TF1 + "import numpy as np\nsess = tf.Session()\nfor step in range(1000):\n"
            "    images = np.random.rand(64, 224, 224, 3)\n    sess.run(train_op, feed_dict={x: images})\n"
        ),
        Invalid(
            _TF1 + "with tf.Session() as sess:\n    for i in range(steps):\n"
            "        xb, yb = X[i * B:(i + 1) * B], Y[i * B:(i + 1) * B]\n"
            "        sess.run(train_op, feed_dict={x_ph: xb, y_ph: yb})\n"
        ),
        # The same flag with each step's batch from Python, and a setting read without a default.
        Invalid(
            _TF1 + "def train(train_model, sess, loader):\n    step = 0\n    while True:\n"
            "        scale = train_model.params.get('scale')\n        feed_dict = {images: loader.next_batch() * scale}\n"
            "        feed_dict[train_model.skip_update_ph] = step % 2 != 0\n        sess.run(train_op, feed_dict)\n        step += 1\n"
        ),
        # The dict is built a few lines earlier; positional feed.
        Invalid(
            _TF1 + "sess = tf.Session()\nwhile not done:\n    batch = loader.next_batch()\n"
            "    feed = {lr_ph: 0.1}\n    feed[images] = batch\n    loss, _ = sess.run([loss_op, train_op], feed)\n"
        ),
        # In a function the file calls from a loop; `Tensor.eval`.
        Invalid(
            _TF1 + "def train_step(batch_x, batch_y):\n    return loss.eval(feed_dict={x: batch_x, y: batch_y})\n\n"
            "for bx, by in batches:\n    train_step(bx, by)\n"
        ),
        # Two training runs in one loop (a GAN's discriminator and generator steps): one finding.
        Invalid(
            _TF1 + "with tf.Session() as sess:\n    for idx in range(batch_idxs):\n"
            "        batch = data[idx * B:(idx + 1) * B]\n        z = np.random.uniform(-1, 1, [B, 100])\n"
            "        sess.run([d_optim, d_sum], feed_dict={inputs: batch, z_ph: z})\n"
            "        sess.run([g_optim, g_sum], feed_dict={z_ph: z})\n"
            "        if idx % 100 == 0:\n            samples = sess.run(sampler, feed_dict={z_ph: z, inputs: batch})\n"
        ),
        # A training loop counted in steps, not epochs: its bound is the epoch count scaled by the
        # data (the MNIST convolutional example, facenet's tmp/mnist_center_loss.py).
        Invalid(
            _TF1 + "with tf.Session() as sess:\n    for step in xrange(int(num_epochs * train_size) // BATCH_SIZE):\n"
            "        offset = (step * BATCH_SIZE) % (train_size - BATCH_SIZE)\n"
            "        batch_data = train_data[offset:(offset + BATCH_SIZE), ...]\n"
            "        feed_dict = {train_data_node: batch_data}\n"
            "        _, l = sess.run([optimizer, loss], feed_dict=feed_dict)\n"
        ),
        # `while step * batch_size < ...`, the feed passed positionally.
        Invalid(
            _TF1 + "sess = tf.Session()\nstep = 1\nwhile step * batch_size < epochs * n_samples:\n"
            "    batch_x, batch_y = mnist.train.next_batch(batch_size)\n"
            "    sess.run(optimizer, {x: batch_x, y: batch_y, keep_prob: dropout})\n    step += 1\n"
        ),
        # The feed dict handed positionally to a helper, built by its caller in the step loop.
        Invalid(
            _TF1 + "def run_step(session, feed):\n    return session.run([train_op, loss], feed)\n\n"
            "sess = tf.Session()\nfor i in range(num_steps):\n    xb, yb = data.next_batch(64)\n"
            "    run_step(sess, {x: xb, y: yb})\n"
        ),
        # char-rnn: the state is fed back, but each step's characters come from the loader in Python.
        Invalid(
            _TF1 + "def train(sess, model, loader):\n    state = sess.run(model.initial_state)\n"
            "    for b in range(loader.num_batches):\n        x, y = loader.next_batch()\n"
            "        feed = {model.input_data: x, model.targets: y}\n"
            "        for i, (c, h) in enumerate(model.initial_state):\n            feed[c] = state[i].c\n"
            "        train_loss, state, _ = sess.run([model.cost, model.final_state, model.train_op], feed)\n"
        ),
        # The same, the feed made by `dict(zip(...))`: entries not written out are not known to be fed back.
        Invalid(
            _TF1 + "def train(sess, model, loader):\n    state = sess.run(model.initial_state)\n"
            "    for b in range(loader.num_batches):\n        x, y = loader.next_batch()\n"
            "        feed = dict(zip([model.input_data, model.targets], [x, y]))\n"
            "        for i, (c, h) in enumerate(model.initial_state):\n            feed[c] = state[i].c\n"
            "        train_loss, state, _ = sess.run([model.cost, model.final_state, model.train_op], feed)\n"
        ),
        # The run returns a count that only bounds the next slice: the slice of the arrays is the data.
        Invalid(
            _TF1 + "def train(sess, X, x_ph, train_op, keep_op):\n    n = 64\n    for i in range(100000):\n"
            "        batch = X[i * 64:(i + 1) * 64]\n        feed = {x_ph: batch[:n]}\n"
            "        _, n = sess.run([train_op, keep_op], feed)\n"
        ),
        # The same loops over a loader's `step`: neither made by a simulator nor named as an environment.
        Invalid(
            _TF1 + "loader = Loader()\nwith tf.Session() as sess:\n    for episode in range(1000):\n"
            "        obs, actions = [], []\n        ob = loader.reset()\n        for t in range(200):\n"
            "            action = sess.run(sampled_action, feed_dict={obs_ph: [ob]})\n"
            "            ob, reward, done, _ = loader.step(action)\n            obs.append(ob)\n            actions.append(action)\n"
            "        sess.run(train_op, feed_dict={obs_ph: obs, act_ph: actions})\n"
        ),
        # Batches gathered into a list from a data loader, not from an environment's steps.
        Invalid(
            _TF1 + "import numpy as np\n\nclass Trainer:\n    def train(self):\n"
            "        feed = {self.x: np.stack(self.buffer)}\n        self.sess.run(self.train_op, feed_dict=feed)\n\n"
            "    def fit(self, loader):\n        for sample in loader:\n            self.buffer.append(sample)\n"
            "            if len(self.buffer) == 32:\n                self.train()\n                self.buffer = []\n"
        ),
        # A session stored on self, used in a method called from a loop.
        Invalid(
            _TF1 + "class Trainer:\n    def __init__(self):\n        self.sess = tf.InteractiveSession()\n\n"
            "    def step(self, xb):\n        self.sess.run(self.train_op, feed_dict={self.x: xb})\n\n"
            "    def fit(self, data):\n        for xb in data:\n            self.step(xb)\n"
        ),
        # The same loop over 100,000 random points: not a toy dataset.
        Invalid(
            _TF1 + "import numpy as np\nx_vals = np.random.normal(1, 0.1, 100000)\ny_vals = np.random.normal(1, 0.1, 100000)\n"
            "sess = tf.Session()\nfor i in range(1500):\n    rand_index = np.random.choice(len(x_vals), size=25)\n"
            "    rand_x = np.transpose([x_vals[rand_index]])\n    rand_y = np.transpose([y_vals[rand_index]])\n"
            "    sess.run(train_step, feed_dict={x_data: rand_x, y_target: rand_y})\n"
        ),
        # The same gather into a placeholder 784 wide: 78,400 numbers a step (MNIST from a CSV file).
        Invalid(
            _TF1 + "import numpy as np\nx_vals = np.loadtxt('mnist_train.csv')\nbatch_size = 100\n"
            "x_data = tf.placeholder(shape=[None, 784], dtype=tf.float32)\nsess = tf.Session()\n"
            "for i in range(5000):\n    rand_index = np.random.choice(len(x_vals), size=batch_size)\n"
            "    sess.run(train_step, feed_dict={x_data: x_vals[rand_index]})\n"
        ),
        # A slice of a batch a step, 784 wide.
        Invalid(
            _TF1 + "import numpy as np\nx_train = np.load('x.npy')\nx = tf.placeholder(tf.float32, [None, 784])\n"
            "sess = tf.Session()\nfor i in range(0, len(x_train), 128):\n"
            "    sess.run(train_op, feed_dict={x: x_train[i:i + 128]})\n"
        ),
        # The Stanford chatbot's run_step: a per-bucket train op in a fetch list chosen by a flag, the feed
        # built item by item and passed positionally, called from train()'s `while True` loop.
        Invalid(
            _TF1 + "def run_step(sess, model, encoder_inputs, bucket_id, forward_only):\n    input_feed = {}\n"
            "    for step in range(model.encoder_size):\n        input_feed[model.encoder_inputs[step].name] = encoder_inputs[step]\n"
            "    if not forward_only:\n        output_feed = [model.train_ops[bucket_id], model.losses[bucket_id]]\n"
            "    else:\n        output_feed = [model.losses[bucket_id]]\n    return sess.run(output_feed, input_feed)\n\n"
            "def train():\n    model = ChatBotModel(False, 64)\n    with tf.Session() as sess:\n        while True:\n"
            "            encoder_inputs = get_batch(data_buckets, bucket_id)\n"
            "            run_step(sess, model, encoder_inputs, bucket_id, False)\n"
        ),
        # 128 skip-gram pairs a step, but built by a Python generator: its work is the cost, not the copy.
        Invalid(
            _TF1 + "import numpy as np\nBATCH_SIZE = 128\ncenter_words = tf.placeholder(tf.int32, shape=[BATCH_SIZE])\n"
            "target_words = tf.placeholder(tf.int32, shape=[BATCH_SIZE, 1])\nbatch_gen = process_data(VOCAB_SIZE, BATCH_SIZE)\n"
            "sess = tf.Session()\nfor index in range(100000):\n    centers, targets = next(batch_gen)\n"
            "    sess.run([loss, optimizer], feed_dict={center_words: centers, target_words: targets})\n"
        ),
        # A reshape may move a row's numbers into rows: 128 images of 784 fed as 100,352 rows of one.
        Invalid(
            _TF1 + "import numpy as np\nx_train = np.load('x.npy')\nx = tf.placeholder(tf.float32, [None, 1])\n"
            "sess = tf.Session()\nfor i in range(0, len(x_train), 128):\n"
            "    sess.run(train_op, feed_dict={x: x_train[i:i + 128].reshape(-1, 1)})\n"
        ),
        # One index drops the row dimension: one whole point cloud a step, not three numbers.
        Invalid(
            _TF1 + "import numpy as np\nclouds = np.load('clouds.npy')\npoints = tf.placeholder(tf.float32, [None, 3])\n"
            "sess = tf.Session()\nfor step in range(10000):\n"
            "    sess.run(train_op, feed_dict={points: clouds[np.random.choice(len(clouds))]})\n"
        ),
        # A batch size from a flag may be anything at run time.
        Invalid(
            _TF1 + "import numpy as np\nx_vals = np.loadtxt('table.csv')\nx_data = tf.placeholder(tf.float32, [None, 100])\n"
            "flags.DEFINE_integer('batch_size', 32, 'batch size')\nFLAGS = flags.FLAGS\nsess = tf.Session()\n"
            "for i in range(5000):\n    rand_index = np.random.choice(len(x_vals), FLAGS.batch_size)\n"
            "    sess.run(train_step, feed_dict={x_data: x_vals[rand_index]})\n"
        ),
        # The rows gathered are not counted when the index array's size is not written.
        Invalid(
            _TF1 + "import numpy as np\nx_vals = np.loadtxt('table.csv')\n"
            "x_data = tf.placeholder(shape=[None, 7], dtype=tf.float32)\nsess = tf.Session()\n"
            "for i in range(5000):\n    rand_index = np.random.choice(len(x_vals), size=get_batch_size())\n"
            "    sess.run(train_step, feed_dict={x_data: x_vals[rand_index]})\n"
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        if context.is_test_code or not model.imports.imports_framework:
            return  # `x.run(..., feed_dict=...)` is judged by its shape, so the file must be TensorFlow code
        sessions: Optional[Sessions] = None
        feeds: Optional[Feeds] = None
        purposes: Optional[RunPurposes] = None
        rollouts: Optional[Rollouts] = None
        sizes: Optional[DataSizes] = None
        reported = set()  # one finding per loop: its training step, not each run in it
        for site in model.calls:
            call = site.node
            func = call.func
            if not isinstance(func, cst.Attribute) or func.attr.value not in ("run", "eval"):
                continue
            if not site.loops and not site.function:
                continue  # module level outside any loop: a one-off call
            sessions = sessions or Sessions(model)
            feed = self._feed(sessions, site)
            if feed is None or self._is_initializer_run(context, site):
                continue
            lexical = frozenset(loop for loop in site.loops if _steps(model, loop))
            looped = any(_steps(model, loop) for loop in model.call_graph.loops_reaching(site.function))
            called = looped or model.step_loops.driven(site.function)
            if not lexical and not called:
                continue
            feeds = feeds or Feeds(model)
            iteration = Iteration(lexical, site.function if called else None)
            if feeds.per_step_entry(feed, site, iteration) is None:
                continue
            purposes = purposes or RunPurposes(model)
            if purposes.purpose(site, run_fetches(call)) not in self.purposes:
                continue
            data = feeds.data_entries(feed, site)
            if purposes.feeds_back(feed, site, data):
                continue
            rollouts = rollouts or Rollouts(model)
            if rollouts.from_rollout(feed, site):
                continue
            if interleaved_with_environment(model, site):
                continue  # an update after every environment step: the simulator sets the pace
            sizes = sizes or DataSizes(model)
            fresh = [entry for entry in data or () if not purposes.fed_back_entry(entry, site)]
            if fresh and sizes.feeds_little(fresh):
                continue  # a toy dataset, or a few hundred numbers per step (a fed-back state aside): microseconds
            loop = _innermost(site.loops) if lexical else site.function
            if loop in reported:
                continue
            reported.add(loop)
            where = "in a loop" if lexical else "in a function called from a loop" if looped \
                else "in a function a driver calls repeatedly"
            what = f"The training step's `{dotted_text(func) or func.attr.value}` with `feed_dict`"
            message = f"{what} {where} copies each step's data from Python before the step can run; {_HELP}"
            yield self.finding(message, call_method_span(call), call)

    def _feed(self, sessions: Sessions, site: CallSite) -> Optional[cst.BaseExpression]:
        call = site.node
        keyword = argument(call, "feed_dict", None)
        if keyword is not None:
            return keyword.value
        method = call.func.attr.value  # type: ignore[union-attr]
        if method == "run" and sessions.is_session(call.func.value, site):  # type: ignore[union-attr]
            positional = argument(call, "feed_dict", 1)
            return positional.value if positional is not None else None
        if method == "eval" and call.args and isinstance(call.args[0].value, cst.Dict) and call.args[0].keyword is None:
            return call.args[0].value  # Tensor.eval({x: batch})
        return None

    def _is_initializer_run(self, context: RuleContext, site: CallSite) -> bool:
        call = site.node
        # `sess.run(fetches, ...)`; for `op.run(feed_dict=...)` and `tensor.eval(...)` the receiver is the fetch.
        fetches = argument(call, "fetches", 0) if call.func.attr.value == "run" else None  # type: ignore[union-attr]
        target = fetches.value if fetches is not None else call.func.value  # type: ignore[union-attr]
        items = [el.value for el in target.elements] if isinstance(target, (cst.List, cst.Tuple)) else [target]
        return bool(items) and all(_names_initializer(context, item) for item in items)


def _names_initializer(context: RuleContext, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call):
        name = context.model.call_name(expr) or dotted_text(expr.func) or ""
        return "initializer" in name
    text = dotted_text(expr)
    return text is not None and bool(_INITIALIZER.search(text.rsplit(".", 1)[-1]))


def _steps(model, loop: LoopNode) -> bool:
    """A loop that may run a step per batch: not an epoch loop (unless its own body draws one batch per
    iteration), nor a few runs the source counts (`for flag in (True, False)`, `range(3)`), whether the
    run is in it or in a function it calls."""
    if counts_epochs(loop) and not model.step_loops.draws_batch_each_iteration(loop):
        return False
    return not short_literal_loop(loop) and not few_literal_iterations(loop)


def _innermost(loops) -> Optional[LoopNode]:
    return loops[-1] if loops else None
