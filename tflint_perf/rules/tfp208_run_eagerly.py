"""TFP208 run-eagerly: ``compile(run_eagerly=True)`` or ``tf.config.run_functions_eagerly(True)`` in training code."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from tflint_perf.analysis.arguments import argument, bool_literal, has_star_args, keyword_argument
from tflint_perf.analysis.files import path_purpose
from tflint_perf.analysis.debugging import is_debug_guarded, module_fits, module_trains
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.analysis.rows import FEW, ONE
from tflint_perf.text.diagnostics import SAFE, Finding, FixPlan
from tflint_perf.fixes.building import remove_argument, remove_statement
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid

EAGER_SWITCHES = frozenset({"tf.config.run_functions_eagerly", "tf.config.experimental_run_functions_eagerly"})


class RunEagerly(Rule):
    code = "TFP208"
    name = "run-eagerly"
    summary = "`compile(run_eagerly=True)` / `tf.config.run_functions_eagerly(True)` left in training code"
    fix_availability = "sometimes"

    what_it_does = """
Checks for training code that switches graph execution off: `Model.compile(..., run_eagerly=True)`
and `tf.config.run_functions_eagerly(True)` (or the older
`tf.config.experimental_run_functions_eagerly(True)`).

Only the literal `True` counts: `run_eagerly=False`, `run_eagerly=args.debug` and other values the
user sets per run are left alone, and so are calls inside `if args.debug:`, `if __debug__:`,
`if FLAGS.run_eagerly:` and similar guards. `compile` is recognised by its `run_eagerly` keyword in
a module that imports TensorFlow or Keras; `run_functions_eagerly` through the module's imports.
The module must train something (`fit`, `train_on_batch`, `apply_gradients`, `minimize`, a
`tf.GradientTape`): a guide that only demonstrates the switch is not reported. Test files
(`test_*.py`, `tests/`) and evaluation or inference modules (by their path) are skipped: there,
eager execution is what the author wants to step through. A `compile(run_eagerly=True)` whose model
is then fitted only on a few rows (`model.fit(x[:64], y[:64])`, at most a small batch's worth) is
a demonstration of the switch, where eager execution costs nothing worth changing.
"""
    why_bad = """
`run_eagerly=True` makes Keras call `train_step` as plain Python for every batch instead of
running a traced `tf.function` graph, and `run_functions_eagerly(True)` does the same for every
`tf.function` in the program. Each op is then dispatched one at a time from Python, with no graph
optimisation (constant folding, op fusion, Grappler's layout passes) and no overlap of steps.
The Keras documentation says to leave it `False` when training "for best performance", and the
`run_functions_eagerly` docs call it "not recommended ... for actual production because it
significantly slows down execution". Measured on a 2-core CPU, 256 `fit` steps of a small MLP:
3.56 s eagerly, 0.35 s as a graph (10x).
"""
    example = """
import tensorflow as tf

model.compile(optimizer="adam", loss="mse", run_eagerly=True)
tf.config.run_functions_eagerly(True)
model.fit(ds, epochs=10)
"""
    use_instead = """
import tensorflow as tf

model.compile(optimizer="adam", loss="mse")
model.fit(ds, epochs=10)
"""
    fix_safety = """
The fix removes the `run_eagerly=True` keyword argument, or the `run_functions_eagerly(True)`
statement (a statement that is the only one of its block becomes `pass`). It is **safe**: the
computed values are the same in graph and eager execution. What changes is when Python code inside
`train_step`, `call` or a `tf.function` runs: once per trace instead of once per step, so a
`print` or a Python counter there stops running every step (use `tf.print`). No fix is offered when
the call is part of a larger expression or shares its line with other statements.
"""
    known_problems = """
`model.run_eagerly = True` (an attribute assignment) and `tf.data.experimental.enable_debug_mode()`
are not reported yet. A module that switches eager execution on and trains only through an imported
helper (`trainer.run()`) is not reported: the analysis sees no training in it. A training module
whose path reads as evaluation (`evaluator.py`) is skipped with the evaluation modules.
"""
    references = (
        "[`keras.Model.compile`: run_eagerly](https://keras.io/api/models/model_training_apis/#compile-method)",
        "[`tf.config.run_functions_eagerly`](https://www.tensorflow.org/api_docs/python/tf/config/run_functions_eagerly)",
        "[Better performance with tf.function](https://www.tensorflow.org/guide/function)",
    )

    valid = (
        Valid("import tensorflow as tf\nmodel.compile(optimizer='adam', loss='mse', run_eagerly=False)\n"),
        Valid("import tensorflow as tf\nmodel.compile(optimizer='adam', loss='mse', run_eagerly=args.debug)\n"),
        Valid("import tensorflow as tf\nif args.debug:\n    tf.config.run_functions_eagerly(True)\n"),
        Valid("import tensorflow as tf\nif __debug__:\n    model.compile(loss='mse', run_eagerly=True)\n"),
        Valid("import tensorflow as tf\ntf.config.run_functions_eagerly(False)\nmodel.fit(x, y)\n"),
        # A guide showing what the switch does: nothing is trained here.
        Valid("import tensorflow as tf\ntf.config.run_functions_eagerly(True)\nprint(f(x))\n"),
        # Not TensorFlow's function: resolved through imports, never by its text.
        Valid("import tensorflow as tf\nfrom mylib import config\nconfig.run_functions_eagerly(True)\n"),
        Valid("class Runner:\n    def compile(self, run_eagerly=False):\n        pass\nRunner().compile(run_eagerly=True)\n"),
        # A book showing the switch (handson-ml2 ch. 12): the model is fitted on 64 samples.
        Valid("import tensorflow as tf\nmodel = MyModel()\nmodel.compile(loss='mse', optimizer='nadam', run_eagerly=True)\n"
              "model.fit(X_train[:64], y_train[:64], epochs=1, validation_data=(X_valid[:64], y_valid[:64]))\n"),
    )
    invalid = (
        Invalid(
            "import tensorflow as tf\nmodel.compile(optimizer='adam', loss='mse', run_eagerly=True)\nmodel.fit(x, y)\n",
            fixed="import tensorflow as tf\nmodel.compile(optimizer='adam', loss='mse')\nmodel.fit(x, y)\n",
        ),
        Invalid(
            "import tensorflow as tf\nmodel.compile(\n    optimizer='adam',\n    run_eagerly=True,\n    loss='mse',\n)\nmodel.fit(x, y)\n",
            fixed="import tensorflow as tf\nmodel.compile(\n    optimizer='adam',\n    loss='mse',\n)\nmodel.fit(x, y)\n",
        ),
        Invalid(
            "import tensorflow as tf\n\ndef train(model):\n    model.compile(\n        optimizer='adam',\n        run_eagerly=True,\n    )\n    model.fit(x, y)\n",
            fixed="import tensorflow as tf\n\ndef train(model):\n    model.compile(\n        optimizer='adam',\n    )\n    model.fit(x, y)\n",
        ),
        Invalid(
            "import tensorflow as tf\nmodel.compile(optimizer='adam',\n              metrics=['accuracy'],\n"
            "              run_eagerly=True)\nmodel.fit(x, y)\n",
            fixed="import tensorflow as tf\nmodel.compile(optimizer='adam',\n              metrics=['accuracy'])\nmodel.fit(x, y)\n",
        ),
        Invalid(
            "import tensorflow as tf\nmodel.compile(\n    run_eagerly=True,  # debugging\n    loss='mse')\nmodel.fit(x, y)\n",
            fixed="import tensorflow as tf\nmodel.compile(\n    loss='mse')\nmodel.fit(x, y)\n",
        ),
        # The same model fitted on the whole training set, or on a slice of many rows: training.
        Invalid(
            "import tensorflow as tf\nmodel = MyModel()\nmodel.compile(loss='mse', run_eagerly=True)\nmodel.fit(X_train, y_train, epochs=10)\n",
            fixed="import tensorflow as tf\nmodel = MyModel()\nmodel.compile(loss='mse')\nmodel.fit(X_train, y_train, epochs=10)\n",
        ),
        Invalid(
            "import tensorflow as tf\nmodel = MyModel()\nmodel.compile(loss='mse', run_eagerly=True)\nmodel.fit(X_train[:64], y_train[:64])\n"
            "model.fit(X_train[:50000], y_train[:50000], epochs=10)\n",
            fixed="import tensorflow as tf\nmodel = MyModel()\nmodel.compile(loss='mse')\nmodel.fit(X_train[:64], y_train[:64])\n"
                  "model.fit(X_train[:50000], y_train[:50000], epochs=10)\n",
        ),
        Invalid(
            "import tensorflow as tf\ntf.config.run_functions_eagerly(True)\nmodel.fit(ds)\n",
            fixed="import tensorflow as tf\nmodel.fit(ds)\n",
        ),
        Invalid(
            "import tensorflow as tf\n\ndef setup():\n    tf.config.experimental_run_functions_eagerly(True)\n\nsetup()\nmodel.fit(x, y)\n",
            fixed="import tensorflow as tf\n\ndef setup():\n    pass\n\nsetup()\nmodel.fit(x, y)\n",
        ),
        Invalid(
            "import tensorflow as tf\nok = tf.config.run_functions_eagerly(True) or True\nmodel.fit(x, y)\n",
            fixed=None,
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        if context.is_test_code:
            return
        if path_purpose(context.filename) is not Purpose.UNKNOWN and not module_fits(model):
            return  # `evaluate.py`, `inference.py`; a `fit` there is still training
        if not model.imports.imports_framework or not module_trains(model):
            return  # a guide demonstrating the switch, a helper module: no training to slow down
        for site in model.calls:
            call = site.node
            if has_star_args(call):
                continue
            name = model.call_name(call)
            if name in EAGER_SWITCHES:
                arg = argument(call, "run_eagerly", 0)
                if arg is None or bool_literal(arg.value) is not True or is_debug_guarded(model.module, site.place):
                    continue
                edit = remove_statement(model, call)
                fix = FixPlan(SAFE, "Remove the call", (edit,)) if edit is not None else None
                yield self.finding(
                    f"`{name}(True)` runs every `tf.function` eagerly, one op at a time, with no graph "
                    "optimisation; remove it outside debugging", call, call, fix,
                )
            elif name is None and isinstance(call.func, cst.Attribute) and call.func.attr.value == "compile":
                arg = keyword_argument(call, "run_eagerly")
                if arg is None or bool_literal(arg.value) is not True or is_debug_guarded(model.module, site.place):
                    continue
                if isinstance(call.func.value, cst.Call) and model.call_name(call.func.value) is None \
                        and isinstance(call.func.value.func, cst.Name) and call.func.value.func.value in model.classes:
                    if model.keras_models.origin(call.func.value, site.function, site.place, site.lambdas) is None:
                        continue  # `Runner().compile(...)`: a same-file class that is not a Keras model
                fits = model.keras_models.later_fits(call.func.value, site)
                if fits and all(model.keras_models.fit_rows(fit) in (ONE, FEW) for fit in fits):
                    continue  # fitted only on a few rows (`x[:64]`): a demonstration, where eager costs nothing
                edit = remove_argument(model, call, arg)
                fix = FixPlan(SAFE, "Remove `run_eagerly=True`", (edit,)) if edit is not None else None
                yield self.finding(
                    "`compile(run_eagerly=True)` runs every training step as Python, one op at a time, "
                    "instead of as a traced graph", arg, arg, fix,
                )
