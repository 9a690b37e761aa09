"""TFP205 function-created-in-loop: a ``tf.function`` (or a compiled Keras model) created anew in every iteration."""

from __future__ import annotations

from typing import Iterable, List, Optional, Set, Tuple, Union

import builtins

import libcst as cst

from tflint_perf.analysis.loops import StepLoops, names_read
from tflint_perf.analysis.keras_models import KerasModels
from tflint_perf.analysis.tf_functions import TfFunctions, wrapped_by
from tflint_perf.analysis.model import CallSite, FunctionInfo, LoopNode, ModuleModel
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.analysis.values import literal_value
from tflint_perf.text.diagnostics import SAFE, Finding, FixPlan, NodeEdit
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid, call_method_span

_TF = "import tensorflow as tf\n\n"
_KERAS = "import tensorflow as tf\nfrom tensorflow import keras\n\n"
_BUILD = (
    "def build(units):\n    model = keras.Sequential([keras.layers.Dense(units), keras.layers.Dense(1)])\n"
    "    model.compile(optimizer='adam', loss='mse')\n    return model\n\n"
)
_K_FOLD = (
    "def get_net():\n    net = keras.models.Sequential()\n    net.add(keras.layers.Dense(1))\n    return net\n\n"
    "def k_fold(k, x, y, num_epochs, learning_rate, batch_size):\n    for i in range(k):\n"
    "        data = get_k_fold_data(k, i, x, y)\n        net = get_net()\n"
    "        net.compile(loss='msle', optimizer=keras.optimizers.Adam(learning_rate))\n"
    "        net.fit(data[0], data[1], validation_data=(data[2], data[3]), epochs=num_epochs, batch_size=batch_size)\n\n"
    "k, num_epochs, lr, batch_size = {k}, 100, 5, 64\nk_fold(k, train_features, train_labels, num_epochs, lr, batch_size)\n"
)
_BUILTINS = frozenset(dir(builtins))
_CLEARS = frozenset({"clear_session", "reset_default_graph"})
_HOIST = "create it once, before the loop, and pass what changes as arguments"
# At most this many models built in all (k-fold validation with 5 or 10 folds, 2 optimizers x 3 widths):
# Keras' global state for so few models does not grow enough to matter. A grid of 6 x 3 = 18 is reported.
_FEW_MODELS = 10


class FunctionCreatedInLoop(Rule):
    code = "TFP205"
    name = "function-created-in-loop"
    summary = "A `tf.function` or a compiled Keras model created in every iteration is traced (and kept) again each time"
    fix_availability = "sometimes"
    purposes = frozenset({Purpose.TRAINING, Purpose.EVALUATION, Purpose.INFERENCE})

    what_it_does = """
Checks for three ways of building TensorFlow graphs anew in every iteration of a loop:

- `tf.function(fn)` called inside a `for` or `while` loop, or inside a function this file calls
  from a loop once per step, and the new function called there (`tf.function(loss_fn)(batch)`,
  `step = tf.function(step_fn)` followed by `step(x)`);
- a `@tf.function`-decorated `def` inside a loop body and called in it, or inside a function that
  is called from a loop and calls it once per call (a per-step helper that defines its own
  `tf.function`);
- a Keras model built (`keras.Sequential`, `keras.Model`, a same-file function returning one) and
  compiled in a loop, or in a function called from a loop, when nothing in the loop calls
  `keras.backend.clear_session()` (or `tf.compat.v1.reset_default_graph()`).

Not reported: a function that uses what the loop changes (`tf.function(model.call)` in a loop over
models, a decorated `def` reading the loop variable: each iteration needs its own graph anyway);
factories that return the new function; models kept after the loop (`ensemble.append(model)`:
they stay in memory whatever the session holds); loops of at most 4 iterations in all, counting the
whole nest (`for opt in ("adam", "sgd")`, `range(k)` with `k = 4` a module constant, 2 optimizers x 2
widths); models built at most 10 times in all, as the loops' counts show (k-fold validation over
scikit-learn's `KFold(5).split(x)`, `range(10)` trials, 2 optimizers x 5 folds, a notebook's
`for name in optimizers_examples:` over a module-level dict of seven: so few small models
leave little global state; but 6 learning rates x 3 widths is 18 models, and a bootstrap over
`ShuffleSplit(n_splits=50)` 50); loops that look at a few samples; a loop that builds each model in a
fresh `tf.Graph()`; test files.
"""
    why_bad = """
Separate `tf.function` objects never share traces: each one created in the loop traces its Python
function again on its first call, which costs far more than running the step. TensorFlow's own
retracing warning names this first: "Tracing is expensive and the excessive number of tracings
could be due to (1) creating @tf.function repeatedly in a loop ... For (1), please define your
@tf.function outside of the loop." Measured on a 2-core CPU, 50 iterations: 0.53 s with the
function created in the loop, 0.020 s created once.

Keras keeps global state for every model it builds (layer name counters, and on TensorFlow 1-style
Keras the whole graph). The Keras documentation: "If you are creating many models in a loop, this
global state will consume an increasing amount of memory over time, and you may want to clear
it." Memory grows with every model and later iterations get slower.
"""
    example = """
for batch in dataset:
    loss = tf.function(compute_loss)(batch)

for units in [16, 32, 64, 128, 256]:
    model = build_and_compile(units)
    model.fit(x, y)
"""
    use_instead = """
compute_loss_fn = tf.function(compute_loss)
for batch in dataset:
    loss = compute_loss_fn(batch)

for units in [16, 32, 64, 128, 256]:
    keras.backend.clear_session()
    model = build_and_compile(units)
    model.fit(x, y)
"""
    fix_safety = """
The fix is safe and offered in one case: `name = tf.function(fn)` on its own line in the loop body,
`fn` a plain same-file function defined outside the loop, other arguments literals, and `name`
bound nowhere else. Then the statement moves above the loop. `fn` (and the same-file functions it
calls) must read nothing but its own locals, builtins and module-level imports, functions and
classes: a function that reads a global variable, a closure or an attribute of an object could
see a different value in a later iteration, which a single trace would freeze, so it is not moved.
Otherwise there is no fix. `clear_session()` makes models built earlier in the loop unusable with
TensorFlow 1-style Keras (an ensemble kept in a list), so inserting it is the author's decision.
"""
    known_problems = """
A model built by a function of another module is not recognised as a model, so the third case
needs the builder in the same file (or `keras.Sequential` / `keras.Model` in the loop itself).
"""
    references = (
        "[Better performance with tf.function](https://www.tensorflow.org/guide/function#controlling_retracing)",
        "[`keras.backend.clear_session`](https://keras.io/api/utils/backend_utils/#clearsession-function)",
        "dslinter W5506 `memory-release-tensorflow`",
    )

    valid = (
        # Created once, before the loop.
        Valid(_TF + "step = tf.function(compute_loss)\nfor batch in dataset:\n    step(batch)\n"),
        # Each iteration needs its own function: it wraps what the loop changes.
        Valid(_TF + "for model in models:\n    predict = tf.function(model.call)\n    predict(x)\n"),
        Valid(
            _TF + "for model in models:\n    @tf.function\n    def step(x):\n        return model(x)\n\n    step(x)\n"
        ),
        # A factory: the function is returned, called once per model by its caller.
        Valid(
            _TF + "def make_step(model):\n    @tf.function\n    def step(x):\n        return model(x)\n    return step\n\n"
            "for model in models:\n    step = make_step(model)\n    for x in dataset:\n        step(x)\n"
        ),
        # A training function with its own loop, called once per configuration: one trace per model.
        Valid(
            _TF + "def train(model, dataset):\n    @tf.function\n    def step(x):\n        return model(x)\n"
            "    for x in dataset:\n        step(x)\n\nfor model in models:\n    train(model, dataset)\n"
        ),
        # Models built in a loop with clear_session, or over a short literal tuple.
        Valid(
            _KERAS + _BUILD + "for units in range(8, 256, 8):\n    keras.backend.clear_session()\n"
            "    model = build(units)\n    model.fit(x, y)\n"
        ),
        Valid(_KERAS + _BUILD + "for units in (16, 32):\n    model = build(units)\n    model.fit(x, y)\n"),
        # Dive-into-DL's house prices: k = 5 folds, its settings unpacked from one tuple and passed to a helper.
        Valid(_KERAS + _K_FOLD.format(k=5)),
        # k-fold cross-validation with k = 4 folds; an ensemble whose models are kept.
        Valid(_KERAS + _BUILD + "k = 4\nfor fold in range(k):\n    model = build(32)\n    model.fit(x, y)\n"),
        # k-fold cross-validation with scikit-learn's 5 folds (a notebook of jeffheaton/t81_558_deep_learning),
        # and with 10 trials, each a model built and trained by a helper: a few small models in all.
        Valid(
            _KERAS + "from sklearn.model_selection import KFold\nkf = KFold(5, shuffle=True, random_state=42)\n"
            "for train, test in kf.split(x):\n    model = keras.Sequential()\n    model.add(keras.layers.Dense(20))\n"
            "    model.add(keras.layers.Dense(1))\n    model.compile(loss='mean_squared_error', optimizer='adam')\n"
            "    model.fit(x[train], y[train], validation_data=(x[test], y[test]), epochs=500)\n"
        ),
        Valid(
            _KERAS + "def run_trial(units):\n    model = keras.Sequential([keras.layers.Dense(units)])\n"
            "    model.compile(optimizer='adam', loss='mse')\n    return model.fit(x, y)\n\n"
            "for fold in range(10):\n    run_trial(32)\n"
        ),
        Valid(
            _KERAS + _BUILD + "ensemble = []\nfor seed in range(10):\n    model = build(32)\n    model.fit(x, y)\n"
            "    ensemble.append(model)\n"
        ),
        # A grid of 2 optimizers x 2 widths: four models in all.
        Valid(
            _KERAS + _BUILD + "for optimizer in ('adam', 'sgd'):\n    for units in (32, 64):\n"
            "        model = build(units)\n        model.fit(x, y)\n"
        ),
        # PacktPublishing/Hands-On-Computer-Vision-with-TensorFlow-2 ch3: one model per optimizer of a
        # module-level dict of seven, compared side by side: a handful of models.
        Valid(
            _KERAS + _BUILD + "optimizers_examples = {\n    'sgd': keras.optimizers.SGD(), 'adam': keras.optimizers.Adam(),\n"
            "    'rmsprop': keras.optimizers.RMSprop(), 'adagrad': keras.optimizers.Adagrad(),\n}\n"
            "for optimizer_name in optimizers_examples:\n    model = build(32)\n    model.fit(x, y)\n"
        ),
        # The same book's ch4: a ResNet per entry of a four-item list, through `.items()` of a dict too.
        Valid(_KERAS + _BUILD + "num_frozen = [0, 1, 2, 3]\nfor n in num_frozen:\n    model = build(n)\n    model.fit(x, y)\n"),
        Valid(
            _KERAS + _BUILD + "configurations = {'none': 8, 'l1': 16, 'l2': 32}\n"
            "for name, units in configurations.items():\n    model = build(units)\n    model.fit(x, y)\n"
        ),
        # Built in a loop but never compiled (inference from loaded weights).
        Valid(
            _KERAS + "for path in paths:\n    model = keras.Sequential([keras.layers.Dense(1)])\n"
            "    model.load_weights(path)\n    model(x)\n"
        ),
    )
    invalid = (
        # The same helper run over 50 folds: more models than a handful.
        Invalid(_KERAS + _K_FOLD.format(k=50)),
        # Five folds per call, called for six learning rates: 30 models.
        Invalid(
            _KERAS + _BUILD + "from sklearn.model_selection import KFold\n\ndef run_cv(lr):\n"
            "    for train, test in KFold(5).split(x):\n        model = build(32)\n        model.fit(x[train], y[train])\n\n"
            "for lr in (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4):\n    run_cv(lr)\n"
        ),
        Invalid(_TF + "for batch in dataset:\n    loss = tf.function(compute_loss)(batch)\n"),
        # Bound in the loop and called.
        Invalid(
            _TF + "def loss_fn(x):\n    return tf.reduce_sum(x)\n\nfor batch in dataset:\n"
            "    step = tf.function(loss_fn)\n    step(batch)\n",
            fixed=_TF + "def loss_fn(x):\n    return tf.reduce_sum(x)\n\nstep = tf.function(loss_fn)\n"
            "for batch in dataset:\n    step(batch)\n",
        ),
        # Inside a function, with a comment and a nested block: the loop is rebuilt as it was.
        Invalid(
            _TF + "def loss_fn(x):\n    return tf.reduce_sum(tf.abs(x))\n\n\ndef train(dataset):\n"
            "    for batch in dataset:  # every batch\n        step = tf.function(loss_fn, jit_compile=True)\n"
            "        if batch is not None:\n            step(batch)  # call it\n",
            fixed=_TF + "def loss_fn(x):\n    return tf.reduce_sum(tf.abs(x))\n\n\ndef train(dataset):\n"
            "    step = tf.function(loss_fn, jit_compile=True)\n    for batch in dataset:  # every batch\n"
            "        if batch is not None:\n            step(batch)  # call it\n",
        ),
        # The function reads a global the loop changes: reported, not moved.
        Invalid(
            _TF + "scale = 1.0\n\ndef loss_fn(x):\n    return tf.reduce_sum(x) * scale\n\nfor batch in dataset:\n"
            "    step = tf.function(loss_fn)\n    step(batch)\n    scale = scale * 0.5\n"
        ),
        # A decorated def in the loop body that captures nothing from the loop.
        Invalid(
            _TF + "while True:\n    batch = next(it)\n\n    @tf.function\n    def step(x):\n        return tf.reduce_sum(x)\n\n"
            "    step(batch)\n"
        ),
        # A per-step helper defining its own tf.function, called from the training loop.
        Invalid(
            _TF + "def train_step(model, x):\n    @tf.function\n    def forward(x):\n        return model(x)\n"
            "    return forward(x)\n\nfor x in dataset:\n    train_step(model, x)\n"
        ),
        # Defined in the epoch loop, called per batch in the inner one: traced again every epoch
        # (its parameters share names with the inner loop's targets; it reads nothing the loop binds).
        Invalid(
            _TF + "for epoch in range(epochs):\n    @tf.function\n    def train_step(images, labels):\n"
            "        return loss_fn(labels, net(images))\n\n    for images, labels in train_ds:\n"
            "        train_step(images, labels)\n"
        ),
        # A grid search, 6 learning rates x 3 widths: 18 models, though each loop alone is short.
        Invalid(
            _KERAS + "def build(units, lr):\n    model = keras.Sequential([keras.layers.Dense(units), keras.layers.Dense(1)])\n"
            "    model.compile(optimizer=keras.optimizers.Adam(lr), loss='mse')\n    return model\n\n"
            "for lr in [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6]:\n    for units in (32, 64, 128):\n"
            "        model = build(units, lr)\n        model.fit(x, y, epochs=5)\n"
        ),
        # A module-level list of configurations that the code grows before the loop: its count is not written.
        Invalid(
            _KERAS + _BUILD + "widths = [8, 16]\nwidths.extend(range(32, 512, 16))\n"
            "for units in widths:\n    model = build(units)\n    model.fit(x, y)\n"
        ),
        # Twelve configurations written out: more than a handful.
        Invalid(
            _KERAS + _BUILD + "widths = [8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96]\n"
            "for units in widths:\n    model = build(units)\n    model.fit(x, y)\n"
        ),
        # Models built and compiled per configuration, never cleared.
        Invalid(_KERAS + _BUILD + "for units in range(8, 256, 8):\n    model = build(units)\n    model.fit(x, y)\n"),
        Invalid(
            _KERAS + "def run_trial(units):\n    model = keras.Sequential([keras.layers.Dense(units)])\n"
            "    model.compile(optimizer='adam', loss='mse')\n    return model.fit(x, y)\n\n"
            "for trial in range(50):\n    run_trial(32)\n"
        ),
        # Three optimizers x 5 folds through a helper: 15 models, though each loop alone is short.
        Invalid(
            _KERAS + "def run_trial(optimizer):\n    model = keras.Sequential([keras.layers.Dense(8)])\n"
            "    model.compile(optimizer=optimizer, loss='mse')\n    return model.fit(x, y)\n\n"
            "for optimizer in ('adam', 'sgd', 'rmsprop'):\n    for fold in range(5):\n        run_trial(optimizer)\n"
        ),
        # A bootstrap of 50 splits (jeffheaton/t81_558_deep_learning): 50 models, never cleared.
        Invalid(
            _KERAS + "from sklearn.model_selection import StratifiedShuffleSplit\nSPLITS = 50\n"
            "boot = StratifiedShuffleSplit(n_splits=SPLITS, test_size=0.1, random_state=42)\n"
            "for train, test in boot.split(x, labels):\n    model = keras.Sequential()\n"
            "    model.add(keras.layers.Dense(50))\n    model.add(keras.layers.Dense(3, activation='softmax'))\n"
            "    model.compile(loss='categorical_crossentropy', optimizer='adam')\n"
            "    model.fit(x[train], y[train], validation_data=(x[test], y[test]), epochs=1000)\n"
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        if context.is_test_code:
            return
        if not any(model.call_name(s.node) in ("tf.function",) or _is_compile(s) for s in model.calls) and not any(
            f.node.decorators for f in model.functions
        ):
            return
        loops = model.step_loops
        yield from self._wrapped(context, loops)
        yield from self._decorated(context, loops)
        yield from self._models(context, loops)

    # -- tf.function(fn) in a loop ---------------------------------------------------------------
    def _wrapped(self, context: RuleContext, loops: StepLoops) -> Iterable[Finding]:
        model = context.model
        for site in model.calls:
            call = site.node
            wrapped = wrapped_by(model, call)
            if wrapped is None:
                continue
            if site.function is not None and any(d.decorator is call for d in site.function.node.decorators):
                continue
            lexical = loops.lexical(site)
            if site.loops:
                if len(lexical) != len(site.loops) or self._captures(model, loops, site, wrapped, lexical):
                    continue
                where = "in a loop"
                scope_calls = [s for s in loops.calls_in(lexical[-1])]
            else:
                if site.function is None or not loops.reaching(site.function):
                    continue
                where = f"in `{site.function.name}`, which this file calls from a loop"
                scope_calls = model.calls_in(site.function)
            if not _created_function_called(model, site, scope_calls):
                continue
            message = f"`tf.function(...)` is created {where}: every new function traces again on its first call; {_HOIST}"
            fix = _hoist(model, loops, site, lexical[-1]) if site.loops else None
            yield self.finding(message, call, call, fix)

    def _captures(self, model: ModuleModel, loops: StepLoops, site: CallSite, wrapped: cst.BaseExpression,
                  lexical: Tuple[LoopNode, ...]) -> bool:
        target = model.effects.resolve_callable(wrapped, site.function)
        read: List[str] = []
        if isinstance(target, FunctionInfo) and target.parent is site.function and set(loops.around_def(target)) & set(lexical):
            read = names_read(target.node.body)
        elif isinstance(target, cst.Lambda):
            read = names_read(target.body)
        else:
            read = names_read(wrapped)
        return any(loops.bound_in_scope(name, site.function, loop) for name in read for loop in lexical)

    # -- @tf.function def in a loop --------------------------------------------------------------
    def _decorated(self, context: RuleContext, loops: StepLoops) -> Iterable[Finding]:
        model = context.model
        functions = TfFunctions(model)
        for function in model.functions:
            decorator = functions.decorator(function)
            if decorator is None or function.class_info is not None:
                continue
            callers = [s for s in model.call_graph.callers(function) if s.function is function.parent]
            if not callers:
                continue
            around = loops.around_def(function)
            if around:
                if not loops.nest_repeats_work(around):
                    continue
                inner = around[-1]
                if not any(inner in s.loops for s in callers):
                    continue
                # What the body reads from outside: its own parameters and locals (`images` in
                # `def train_step(images)`, also a name the inner loop binds) do not tie it to the loop.
                read = {name for name in names_read(function.node.body) if model.scope_bindings(name, function)[0] is not function}
                if any(loops.bound_in_scope(name, function.parent, loop) and name != function.name
                       for name in read for loop in around):
                    continue
                where = "in a loop body"
            else:
                parent = function.parent
                if parent is None or not loops.reaching(parent):
                    continue
                if any(s.loops for s in callers) or _returned(parent, function.name):
                    continue  # the parent loops over data itself (once per call is fine), or is a factory
                where = f"in `{parent.name}`, which this file calls from a loop"
            message = f"`@tf.function` `{function.name}` is defined {where}: every new function traces again; {_HOIST}"
            yield self.finding(message, decorator, function.node.name)

    # -- Keras models built and compiled in a loop -----------------------------------------------
    def _models(self, context: RuleContext, loops: StepLoops) -> Iterable[Finding]:
        model = context.model
        if not any(_is_compile(s) for s in model.calls):
            return
        keras = KerasModels(model)
        reported: Set[Union[LoopNode, FunctionInfo]] = set()
        for site in model.calls:
            if not keras.builds_model(site.node) or _in_fresh_graph(model, site):
                continue
            if site.loops:
                # The iterations of the whole nest count: a grid of 6 learning rates x 3 widths builds
                # 18 models, though neither loop alone is long.
                callers = tuple(model.call_graph.loops_reaching(site.function)) if site.function is not None else ()
                # Loops that call the function count too: 5 folds per learning rate, over 6 rates, is 30.
                if not loops.nest_repeats_work(site.loops) or _few_models(loops, tuple(site.loops) + callers):
                    continue
                loop = site.loops[-1]
                around = loops.calls_in(loop)
                compiled = any(_is_compile(s) for s in around) or self._builder_compiles(model, site)
                owner: Union[LoopNode, FunctionInfo] = loop
                where = "in a loop" if len(site.loops) == 1 else "in nested loops"
                reaching: Tuple[LoopNode, ...] = site.loops
            else:
                function = site.function
                if function is None or _returned(function, None) and not _calls_fit(model, function):
                    continue
                reaching = loops.reaching(function)
                # Every loop reaching it counts, short ones too (3 optimizers x 5 folds is 15 models).
                if not reaching or _few_models(loops, model.call_graph.loops_reaching(function)):
                    continue
                around = model.calls_in(function)
                compiled = any(_is_compile(s) for s in around)
                owner = function
                where = f"in `{function.name}`, which this file calls from a loop"
            if not compiled or owner in reported or _kept(site, around):
                continue
            if self._clears(model, loops, around, reaching):
                continue
            reported.add(owner)
            message = (
                f"A Keras model is built and compiled {where}, and nothing calls `keras.backend.clear_session()`: "
                "Keras keeps every model's state, so memory grows and iterations slow down; clear the session "
                "at the start of each iteration"
            )
            yield self.finding(message, call_method_span(site.node), site.node)

    def _builder_compiles(self, model: ModuleModel, site: CallSite) -> bool:
        builder = model.call_graph.callee(site.node)
        return builder is not None and any(_is_compile(s) for s in model.calls_in(builder))

    def _clears(self, model: ModuleModel, loops: StepLoops, around: List[CallSite], reaching) -> bool:
        sites = list(around)
        for loop in reaching:
            sites.extend(loops.calls_in(loop))
        for s in list(sites):
            callee = model.call_graph.callee(s.node)
            if callee is not None:
                sites.extend(model.calls_in(callee))
        return any(_leaf(s.node) in _CLEARS for s in sites)


def _few_models(loops: StepLoops, nest: Iterable[LoopNode]) -> bool:
    """The loops around a model's construction build at most ``_FEW_MODELS`` in all, as their counts show."""
    total = loops.nest_iterations(nest)
    return total is not None and total <= _FEW_MODELS


def _hoist(model: ModuleModel, loops: StepLoops, site: CallSite, loop: LoopNode) -> Optional[FixPlan]:
    """``name = tf.function(fn)`` moved above the loop, when provably the same function every time."""
    call, statement = site.node, site.statement
    if statement is None or len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
        return None
    assign = statement.body[0]
    if assign.value is not call or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    body = loop.body
    if not isinstance(body, cst.IndentedBlock) or statement not in body.body or body.body[-1] is statement:
        return None
    if any(line.comment is not None for line in statement.leading_lines):
        return None  # a comment above the statement would be lost
    name = assign.targets[0].target.value
    scope, bindings = model.scope_bindings(name, site.function)
    if scope is not site.function or len(bindings) != 1:
        return None  # bound elsewhere too: moving the binding could change what other code sees
    if any(arg.keyword is None or not literal_value(arg.value) for arg in call.args[1:]):
        return None
    target = model.effects.resolve_callable(call.args[0].value, site.function)
    if not isinstance(target, FunctionInfo) or loop in loops.around_def(target) or not _frozen(model, target, 0):
        return None
    blocks = site.place.blocks
    if body not in blocks:
        return None
    outer = blocks[: blocks.index(body)]
    if any(not isinstance(block, cst.IndentedBlock) for block in outer):
        return None
    module = model.module
    newline = module.default_newline
    indent = "".join(b.indent if b.indent is not None else module.default_indent for b in outer)  # type: ignore[union-attr]
    new_loop = loop.with_changes(body=body.with_changes(body=[s for s in body.body if s is not statement]),
                                 leading_lines=())
    # The loop's range ends where its last statement does, before that line's comment and newline.
    tail = _last_line_tail(loop)
    if tail is None:
        return None
    suffix = module.code_for_node(tail)
    if indent:
        rendered = module.code_for_node(cst.IndentedBlock(body=[new_loop], indent=indent))
        loop_text = rendered[len(newline) + len(indent):]
    else:
        loop_text = module.code_for_node(new_loop)
    if not suffix or not loop_text.endswith(suffix):
        return None
    loop_text = loop_text[: -len(suffix)]
    hoisted = module.code_for_node(statement.with_changes(leading_lines=())).rstrip("\r\n")
    text = f"{hoisted}{newline}{indent}{loop_text}"
    return FixPlan(SAFE, f"Create `{name}` once, before the loop", (NodeEdit(loop, "replace", text),))


def _last_line_tail(node: cst.CSTNode) -> Optional[cst.TrailingWhitespace]:
    """The trailing whitespace (comment, newline) of the last line of a compound statement."""
    for _ in range(100):
        if isinstance(node, cst.SimpleStatementLine):
            return node.trailing_whitespace
        if isinstance(node, cst.SimpleStatementSuite):
            return node.trailing_whitespace
        if isinstance(node, cst.IndentedBlock):
            if node.footer or not node.body:
                return None  # comments after the last statement: not worth the risk
            node = node.body[-1]
            continue
        if isinstance(node, cst.Try):
            node = node.finalbody or node.orelse or (node.handlers[-1] if node.handlers else node.body)
            continue
        orelse = getattr(node, "orelse", None)
        if orelse is not None:
            node = orelse
            continue
        body = getattr(node, "body", None)
        if body is None or not isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)):
            return None
        node = body
    return None


def _frozen(model: ModuleModel, function: FunctionInfo, depth: int) -> bool:
    """The function reads only its own locals, builtins and module-level imports, defs and classes
    (nothing a loop could change between traces), and so do the same-file functions it calls."""
    if depth > 3 or function.is_method or function.node.decorators or function.declares_global:
        return False
    stack: List[cst.CSTNode] = [function.node.body, function.node.params]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef, cst.Global, cst.Nonlocal)):
            return False
        stack.extend(node.children)
    for name in set(names_read(function.node.body)):
        scope, bindings = model.scope_bindings(name, function)
        if scope is function:
            continue
        if scope is not None:
            return False  # a closure over an enclosing function's variable
        if not bindings:
            if name not in _BUILTINS:
                return False
            continue
        if any(b.kind not in ("import", "def", "class") for b in bindings):
            return False
    return all(_frozen(model, callee, depth + 1) for callee in model.call_graph.callees(function))


def _kept(site: CallSite, around: List[CallSite]) -> bool:
    """The model built at ``site`` is kept (``models.append(model)``): an ensemble, whose models
    stay in memory whatever the session holds."""
    statement = site.statement
    if statement is None or not isinstance(statement.body[0], cst.Assign):
        return False
    names = {n for target in statement.body[0].targets for n in names_read(target.target)}
    return any(
        _leaf(other.node) in ("append", "extend", "insert", "add") and any(set(names_read(a.value)) & names for a in other.node.args)
        for other in around
    )


def _leaf(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _is_compile(site: CallSite) -> bool:
    return isinstance(site.node.func, cst.Attribute) and site.node.func.attr.value == "compile"


def _calls_fit(model: ModuleModel, function: FunctionInfo) -> bool:
    return any(_leaf(s.node) in ("fit", "train_on_batch", "evaluate") for s in model.calls_in(function))


def _in_fresh_graph(model: ModuleModel, site: CallSite) -> bool:
    """A loop that builds each model inside ``with tf.Graph().as_default():`` starts from an empty graph."""
    scope = model.calls_in(site.function) if site.function is not None else [s for s in model.calls if s.function is None]
    return any(model.call_name(s.node) == "tf.Graph" for s in scope if set(s.loops) & set(site.loops) or not site.loops)


def _created_function_called(model: ModuleModel, site: CallSite, scope_calls: List[CallSite]) -> bool:
    """``tf.function(f)(x)``, or the name it is bound to called among ``scope_calls`` and not returned."""
    call = site.node
    for other in scope_calls:
        if other.node.func is call:
            return True
    statement = site.statement
    if statement is None or len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
        return False
    assign = statement.body[0]
    if assign.value is not call or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return False
    name = assign.targets[0].target.value
    if site.function is not None and not site.loops and _returned(site.function, name):
        return False
    return any(isinstance(o.node.func, cst.Name) and o.node.func.value == name and o.place.order > site.place.order
               for o in scope_calls)


def _returned(function: FunctionInfo, name: Optional[str]) -> bool:
    """The function returns ``name`` (any value when None)."""
    for site in function.returns:
        value = site.node.value
        if value is None:
            continue
        items = [el.value for el in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
        if name is None or any(isinstance(item, cst.Name) and item.value == name for item in items):
            return True
    return False
