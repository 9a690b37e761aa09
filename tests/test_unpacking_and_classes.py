"""Tuple unpacking, same-file class hierarchies and hand-uploaded files, as the loop rules ask about
them (analysis/unpacking.py, analysis/classes.py, analysis/uploads.py, and the call graph's edges
into a subclass's override)."""

from __future__ import annotations

import libcst as cst

from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.classes import attribute_values, method_of
from tflint_perf.analysis.keras_models import KerasModels
from tflint_perf.analysis.unpacking import unpacked_sources
from tflint_perf.analysis.uploads import iterates_uploads


def model_of(source: str) -> AnalysedModule:
    return AnalysedModule(cst.parse_module(source))


def function(model: AnalysedModule, name: str, owner: str = ""):
    for info in model.functions:
        if info.name == name and (not owner or (info.owner is not None and info.owner.name == owner)):
            return info
    raise AssertionError(name)


def code(model: AnalysedModule, node) -> str:
    return model.module.code_for_node(node)


def sources_of(model: AnalysedModule, name: str, scope_name: str):
    scope = function(model, scope_name)
    (binding,) = model.scope_bindings(name, scope)[1]
    return unpacked_sources(model, binding)


GAN = """
def train(models, params):
    generator, discriminator = models
    batch_size, steps = params

def main():
    generator = build()
    models = (generator, critic)
    train(models, (64, 1000))
"""


def test_an_unpacked_parameter_is_the_element_its_caller_packs():
    model = model_of(GAN)
    (source,) = sources_of(model, "discriminator", "train")
    assert code(model, source.expr) == "critic" and source.scope is function(model, "main")
    (size,) = sources_of(model, "batch_size", "train")
    assert code(model, size.expr) == "64"


def test_an_unpacked_result_is_the_element_every_return_gives():
    model = model_of(
        "def setup(args):\n    if args.a:\n        return A(), 1\n    return B(), 2\n\n"
        "def run():\n    agent, flag = setup(args)\n"
    )
    assert [code(model, s.expr) for s in sources_of(model, "agent", "run")] == ["A()", "B()"]


def test_unknown_unpacking_stays_unknown():
    # No caller fills the parameter; a starred element; a call the analysis cannot resolve.
    model = model_of(
        "def train(models):\n    generator, critic = models\n\n"
        "def starred():\n    a, b = (*parts, 1)\n\n"
        "def loaded():\n    x, y = load()\n"
    )
    assert sources_of(model, "critic", "train") is None
    assert sources_of(model, "a", "starred") is None
    assert sources_of(model, "x", "loaded") is None


HIERARCHY = """
from tensorflow.keras.models import Model

class DQNAgent:
    def __init__(self):
        self.q_model = Model(inputs, x)

    def act(self, state):
        return self.q_model.predict(state)

    def target(self, state):
        return 0

    def replay(self, batch):
        for state in batch:
            self.target(state)

class DDQNAgent(DQNAgent):
    def target(self, state):
        return self.q_model.predict(state)
"""


def test_methods_and_attributes_come_from_same_file_bases():
    model = model_of(HIERARCHY)
    ddqn, dqn = model.classes["DDQNAgent"], model.classes["DQNAgent"]
    assert method_of(model, ddqn, "act") is dqn.methods["act"]
    assert method_of(model, ddqn, "target") is ddqn.methods["target"]
    assert method_of(model, ddqn, "missing") is None
    assert [code(model, v) for v in attribute_values(model, ddqn, "q_model")] == ["Model(inputs, x)"]


def test_a_base_class_self_call_reaches_the_subclass_override():
    model = model_of(HIERARCHY)
    override = function(model, "target", owner="DDQNAgent")
    (caller,) = model.call_graph.callers(override)
    assert code(model, caller.node) == "self.target(state)"
    assert model.call_graph.loops_reaching(override)


def test_an_object_of_several_classes_calls_the_method_they_share():
    model = model_of(
        HIERARCHY + "\nif double:\n    agent = DDQNAgent()\nelse:\n    agent = DQNAgent()\nfor s in states:\n    agent.act(s)\n"
        "    agent.target(s)\n"
    )
    act, target = (site for site in model.calls if code(model, site.node) in ("agent.act(s)", "agent.target(s)"))
    assert model.call_graph.callee(act.node) is function(model, "act")
    assert model.call_graph.callee(target.node) is None  # two different methods: not known


def test_a_builder_calling_a_builder_is_a_model_however_deep_the_question():
    model = model_of(
        "import tensorflow as tf\n\ndef inner():\n    model = tf.keras.Sequential([])\n    return model\n\n"
        "def outer():\n    model = inner()\n    return model\n\ndef use(m, xs):\n    for x in xs:\n        m.predict(x)\n\n"
        "model = outer()\nuse(model, data)\n"
    )
    models = KerasModels(model)
    site = next(s for s in model.calls if code(model, s.node) == "m.predict(x)")
    assert models.is_model_site(site.node.func.value, site)


def _loop_of(model: AnalysedModule, call_text: str):
    site = next(s for s in model.calls if code(model, s.node) == call_text)
    return site.loops[-1], site.function


def test_loops_over_files_uploaded_by_hand():
    colab = model_of(
        "from google.colab import files\nuploaded = files.upload()\nfor fn in uploaded.keys():\n    check(fn)\n"
    )
    assert iterates_uploads(colab, *_loop_of(colab, "check(fn)"))
    widget = model_of(
        "from ipywidgets import widgets\nuploader = widgets.FileUpload(multiple=True)\n\n"
        "def on_change(change):\n    items = change.new\n    for item in items:\n        check(item)\n\n"
        "uploader.observe(on_change, names='value')\n"
    )
    assert iterates_uploads(widget, *_loop_of(widget, "check(item)"))
    assert not widget.step_loops.repeats_work(_loop_of(widget, "check(item)")[0])


def test_other_loops_are_not_uploads():
    # A local `files` module, an observer of another widget, a `change.new` of a function nothing registers.
    local = model_of("import files\nuploaded = files.upload()\nfor fn in uploaded:\n    check(fn)\n")
    assert not iterates_uploads(local, *_loop_of(local, "check(fn)"))
    slider = model_of(
        "from ipywidgets import widgets\nslider = widgets.IntSlider()\n\n"
        "def on_change(change):\n    for item in change.new:\n        check(item)\n\nslider.observe(on_change)\n"
    )
    assert not iterates_uploads(slider, *_loop_of(slider, "check(item)"))
    alone = model_of("def on_change(change):\n    for item in change.new:\n        check(item)\n")
    assert not iterates_uploads(alone, *_loop_of(alone, "check(item)"))


ENSEMBLE = (
    "class Model:\n    def train(self, x):\n        return x\n\nclass Other:\n    def train(self, x):\n        return x\n\n"
)


def _train_call(model: AnalysedModule, text: str):
    (site,) = (site for site in model.calls if code(model, site.node) == text)
    return model.call_graph.callee(site.node)


def test_a_method_called_on_an_element_of_a_list_of_one_class_resolves():
    model = model_of(
        ENSEMBLE + "models = []\nfor m in range(2):\n    models.append(Model())\n"
        "for x in xs:\n    for i, m in enumerate(models):\n        m.train(x)\n    models[0].train(x)\n"
    )
    assert _train_call(model, "m.train(x)") is function(model, "train", owner="Model")
    assert _train_call(model, "models[0].train(x)") is function(model, "train", owner="Model")


def test_a_list_holding_anything_else_gives_no_edge():
    mixed = model_of(ENSEMBLE + "models = [Model()]\nmodels.append(Other())\nfor m in models:\n    m.train(1)\n")
    assert _train_call(mixed, "m.train(1)") is None  # two different methods: not known
    unknown = model_of(ENSEMBLE + "models = [Model()]\nmodels.extend(load())\nfor m in models:\n    m.train(1)\n")
    assert _train_call(unknown, "m.train(1)") is None
    handed_in = model_of(ENSEMBLE + "def run(models):\n    for m in models:\n        m.train(1)\n")
    assert _train_call(handed_in, "m.train(1)") is None
    zipped = model_of(ENSEMBLE + "models = [Model()]\nfor m, n in zip(models, names):\n    m.train(1)\n")
    assert _train_call(zipped, "m.train(1)") is None


def test_a_module_list_read_in_a_function_counts_what_the_module_appends():
    model = model_of(
        ENSEMBLE + "models = [Model()]\nmodels.append(Other())\n\ndef run(x):\n    for m in models:\n        m.train(x)\n"
    )
    assert _train_call(model, "m.train(x)") is None  # Other's train too: not known
    filled_elsewhere = model_of(
        ENSEMBLE + "models = [Model()]\n\ndef add():\n    models.append(Other())\n\nfor m in models:\n    m.train(1)\n"
    )
    assert _train_call(filled_elsewhere, "m.train(1)") is None
