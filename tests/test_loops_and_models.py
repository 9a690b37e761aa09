"""The loop and model questions shared by TFP203-TFP206: analysis/loops.py, analysis/keras_models.py
and analysis/tf_functions.py."""

from __future__ import annotations

import pytest

from tflint_perf.analysis.loops import StepLoops, counts_epochs
from tflint_perf.analysis.keras_models import KerasModels
from tflint_perf.analysis.tf_functions import TfFunctions
from tests.conftest import model_of, site_named


@pytest.mark.parametrize(
    "header,repeats",
    [
        ("for x in data:", True),
        ("for x in range(1000):", True),
        ("for flag in (True, False):", False),  # a short literal tuple
        ("for x in ds.take(3):", False),  # a look at a few elements
        ("for x in images[:5]:", False),
        ("for x in range(3):", False),
        ("while not done:", True),
    ],
)
def test_loops_that_repeat_work(header, repeats):
    model = model_of(f"import tensorflow as tf\n{header}\n    step(x)\n")
    loops = StepLoops(model)
    site = site_named(model, "step(x)")
    assert bool(loops.lexical(site)) is repeats


@pytest.mark.parametrize(
    "header,epochs",
    [
        ("for epoch in range(num_epochs):", True),
        ("for _ in range(args.epochs):", True),
        ("for i in range(1, FLAGS.num_epochs + 1):", True),
        ("for i in range(n_epochs * 2):", True),  # a literal scale: still a count of epochs
        ("while epoch < num_epochs:", True),
        ("while self.epoch < max_epoch:", True),
        # A training loop counted in steps: the epoch count scaled by the data (the MNIST
        # convolutional example, facenet's tmp/mnist_center_loss.py) or by the steps per epoch.
        ("for step in xrange(int(num_epochs * train_size) // BATCH_SIZE):", False),
        ("for i in range(FLAGS.epochs * steps_per_epoch):", False),
        ("while step * batch_size < epochs * n:", False),
        ("while current_step < hparams.num_epochs * train_steps_per_epoch:", False),
        ("for step in range(steps_per_epoch):", False),
        ("while step < steps_per_epoch:", False),
        ("for i in range(total_batch):", False),
    ],
)
def test_epoch_loops_by_their_bound(header, epochs):
    model = model_of(f"{header}\n    step(x)\n")
    site = site_named(model, "step(x)")
    assert counts_epochs(site.loops[0]) is epochs


def test_a_plotting_loop_inspects_and_a_module_constant_gives_the_count():
    model = model_of("import matplotlib.pyplot as plt\nk = 4\nk = 4\nfor i in range(k):\n    f(i)\nfor i in range(40):\n"
                     "    plt.imshow(f(i))\n")
    loops = StepLoops(model)
    counted = [site for site in model.calls if model.module.code_for_node(site.node) == "f(i)"]
    assert loops.count(counted[0].loops[0]) == 4  # `k = 4` in two notebook cells is still 4
    assert loops.inspects(counted[1].loops[0])
    assert not loops.runs_few(counted[1].loops[0]) and loops.runs_few(counted[0].loops[0])


def test_varies_sees_the_target_and_assignments_later_in_the_body():
    model = model_of("lr = 0.1\nstate = reset()\nwhile True:\n    act(state, lr, 3)\n    state = step()\n")
    loops = StepLoops(model)
    site = site_named(model, "act(state, lr, 3)")
    loop = site.loops[0]
    args = [arg.value for arg in site.node.args]
    assert loops.varies(args[0], site, loop)  # rebound after the call: the next iteration sees it
    assert not loops.varies(args[1], site, loop)
    assert not loops.varies(args[2], site, loop)


def test_loops_around_a_nested_def():
    model = model_of("def train(ds):\n    for x in ds:\n        def step(y):\n            return y\n        step(x)\n")
    loops = StepLoops(model)
    step = next(f for f in model.functions if f.name == "step")
    assert len(loops.around_def(step)) == 1


@pytest.mark.parametrize(
    "source,expected",
    [
        ("from tensorflow import keras\nm = keras.Sequential([])\nm.predict(x)\n", True),
        ("import tensorflow as tf\nm = tf.keras.models.load_model('p')\nm.predict(x)\n", True),
        ("import tensorflow as tf\nm = tf.keras.applications.ResNet50()\nm.predict(x)\n", True),
        ("import tensorflow as tf\ndef build():\n    return tf.keras.Model(i, o)\nm = build()\nm.predict(x)\n", True),
        ("import tensorflow as tf\nclass Net(tf.keras.Model):\n    pass\nm = Net()\nm.predict(x)\n", True),
        ("from sklearn.svm import SVC\nm = SVC()\nm.predict(x)\n", False),
        ("import tensorflow as tf\ndef f(m):\n    m.predict(x)\n", False),  # a parameter: unknown
        ("import tensorflow as tf\nm = tf.keras.Sequential()\nif a:\n    m = other()\nm.predict(x)\n", False),
    ],
)
def test_keras_model_receivers(source, expected):
    model = model_of(source)
    site = site_named(model, "m.predict(x)")
    assert KerasModels(model).is_model_site(site.node.func.value, site) is expected


def test_self_model_built_by_a_method():
    model = model_of(
        "import tensorflow as tf\nclass Agent:\n    def __init__(self):\n        self.model = self._build()\n"
        "    def _build(self):\n        return tf.keras.Sequential()\n    def act(self, s):\n        return self.model.predict(s)\n"
    )
    site = site_named(model, "self.model.predict(s)")
    assert KerasModels(model).is_model_site(site.node.func.value, site)


def test_tf_functions_decorated_wrapped_and_called_through_a_name():
    model = model_of(
        "import tensorflow as tf\n@tf.function(jit_compile=True)\ndef a(x):\n    return x\n\ndef b(x):\n    return x\n\n"
        "def c(x):\n    return x\n\nstep = tf.function(b)\na(1)\nstep(2)\nc(3)\n"
    )
    functions = TfFunctions(model)
    by_name = {f.name: f for f in model.functions}
    assert functions.is_tf_function(by_name["a"]) and functions.is_tf_function(by_name["b"])
    assert not functions.is_tf_function(by_name["c"])
    assert functions.called(site_named(model, "a(1)"))[0] is by_name["a"]
    target, wrapper = functions.called(site_named(model, "step(2)"))
    assert target is by_name["b"] and wrapper is not None
    assert functions.called(site_named(model, "c(3)")) is None


@pytest.mark.parametrize(
    "guard,every",
    [
        ("if epoch % 5 == 0:", 5),
        ("if (epoch + 1) % print_freq == 0:", 5),  # a module constant (tensorlayer's print_freq = 5)
        ("if epoch + 1 == 1 or (epoch + 1) % print_freq == 0:", 5),  # the first epoch, then every fifth
        ("if not epoch % 10:", 10),
        ("if epoch % 4 == 0 and epoch > 0:", 4),
        ("if epoch % 4 == 0 or improved:", None),  # may hold on any epoch
        ("if epoch % 1 == 0:", None),  # every epoch (dragen1860's 06-CIFAR-VGG)
        ("if epoch % args.eval_every == 0:", None),  # a count the source does not show
        ("if loss % 5 == 0:", None),  # not the loop's counter
        ("if epoch % 5 != 0:", None),  # the other epochs
    ],
)
def test_statements_a_guard_runs_every_nth_iteration(guard, every):
    source = f"print_freq = 5\nfor epoch in range(100):\n    train()\n    {guard}\n        evaluate()\n"
    model = model_of(source)
    site = site_named(model, "evaluate()")
    assert model.step_loops.every_nth(site.loops[0], site.statement, site.function) == every


def test_a_counter_the_body_advances_and_an_else_branch():
    source = "step = 0\nwhile True:\n    step += 1\n    if step % 50 == 0:\n        pass\n    else:\n        evaluate()\n"
    model = model_of(source)
    site = site_named(model, "evaluate()")
    assert model.step_loops.every_nth(site.loops[0], site.statement, site.function) is None
    guarded = model_of(source.replace("        pass\n    else:\n", ""))
    site = site_named(guarded, "evaluate()")
    assert guarded.step_loops.every_nth(site.loops[0], site.statement, site.function) == 50


_AGENT = """
import tensorflow as tf

class Policy(tf.keras.Model):
    def action_value(self, obs):
        return self.predict(obs)

class Agent:
    def __init__(self, model):
        self.model = model

    def train(self, env):
        for step in range(1000):
            self.model.action_value(env.obs[None, :])

agent = Agent({construction})
"""


@pytest.mark.parametrize("construction,resolved", [
    ("Policy()", True),                 # the agent is built on a Policy: its self.model is one
    ("net", True),                      # through a name bound to one (`net = Policy()` below)
    ("load_policy()", False),           # a helper's result: unknown, no edge
])
def test_a_method_called_through_an_attribute_is_reached_from_the_callers_loop(construction, resolved):
    source = _AGENT.format(construction=construction) + "net = Policy()\n"
    model = model_of(source)
    action_value = model.classes["Policy"].methods["action_value"]
    assert bool(model.call_graph.loops_reaching(action_value)) is resolved


def test_attributes_passed_round_in_a_cycle_resolve_to_nothing():
    source = (
        "class A:\n    def __init__(self, b):\n        self.b = b\n    def make(self):\n        return B(self.b)\n"
        "    def run(self):\n        for i in range(100):\n            self.b.go(i)\n\n"
        "class B:\n    def __init__(self, a):\n        self.a = a\n    def make(self):\n        return A(self.a)\n"
        "    def go(self, i):\n        pass\n"
    )
    model = model_of(source)
    assert model.call_graph.loops_reaching(model.classes["B"].methods["go"]) == frozenset()
