"""TFP402 deprecated-keras-function-api: ``tf.py_func``, ``experimental_relax_shapes``, the experimental
mixed-precision API and ``fit_generator`` / ``evaluate_generator`` / ``predict_generator``."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Optional

import libcst as cst

from tflint_perf.analysis.arguments import has_star_args, keyword_argument
from tflint_perf.analysis.deprecations import (TABLE, Deprecation, effect, lookup, message, replacement_available, respell,
                                               runs_only_on_tf1, through_compat_v1, written_for_tf1)
from tflint_perf.analysis.model import CallSite
from tflint_perf.analysis.names import dotted_text
from tflint_perf.text.diagnostics import SAFE, Finding, FixPlan, NodeEdit
from tflint_perf.fixes.building import code_in_block
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid, target_version_option

_STANDALONE = {entry.old: replace(entry, since=(2, 6), warns_from=(2, 6)) for entry in TABLE if entry.form == "method"}
_KEYWORDS = {entry.old.split(":")[1]: entry for entry in TABLE if entry.form == "keyword"}
_METHODS = {entry.old[1:]: entry for entry in TABLE if entry.form == "method"}
# `fit` keywords that Keras 3 (TensorFlow 2.16 and later) no longer accepts: they moved to `PyDataset`.
_KERAS2_ONLY = frozenset({"workers", "use_multiprocessing", "max_queue_size"})
_MODEL = "import tensorflow as tf\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"


class DeprecatedKerasFunctionApi(Rule):
    code = "TFP402"
    name = "deprecated-keras-function-api"
    summary = "`tf.py_func`, `experimental_relax_shapes`, `mixed_precision.experimental`, `fit_generator` and kin"
    fix_availability = "sometimes"
    default_enabled = False  # upgrade advice, not performance: opt-in, as ruff keeps pyupgrade out of its defaults
    opt_in_group = "TFP4"
    options = (target_version_option(
        "Reported only where the target release warns about the spelling or has removed it (nothing for a TensorFlow 1 target); the fix is offered only when the version is known and has the replacement (from 2.16, Keras 3, `*_generator` keywords such as `workers` withhold it)."
    ),)

    what_it_does = """
Checks for function and Keras APIs that were deprecated and then removed:
- `tf.py_func` / `tf.compat.v1.py_func` (use `tf.numpy_function`);
- `tf.function(experimental_relax_shapes=...)` (use `reduce_retracing`) and
  `tf.function(experimental_compile=...)` (use `jit_compile`);
- `tf.keras.mixed_precision.experimental.set_policy`, `.Policy`, `.global_policy`,
  `.LossScaleOptimizer` (use the same names without `experimental`, `set_global_policy` for
  `set_policy`) and `tf.train.experimental.enable_mixed_precision_graph_rewrite` (reported only);
- `model.fit_generator`, `evaluate_generator`, `predict_generator` (use `fit`, `evaluate`, `predict`,
  which take generators since TensorFlow 2.1; Keras 3 removed the `_generator` methods).

Off by default: this is upgrade advice, not performance (`extend-select = ["TFP4"]` turns it on;
a `tf.py_func` in a `Dataset.map` function or a `tf.function` is a performance problem, which TFP201
reports by default). What is reported is keyed to the project's target TensorFlow (`target-version`,
or the version inferred from its dependency files): a spelling is reported only where the target
release warns about it (`fit_generator` from 2.1, `experimental_relax_shapes` from 2.9, the
experimental mixed-precision API from 2.4) or has removed it (`tf.py_func` from TensorFlow 2's
namespace in 2.0, where `tf.compat.v1.py_func` still works and warns; the experimental
mixed-precision API in 2.9; `enable_mixed_precision_graph_rewrite` in 2.6; `fit_generator` in 2.16),
and the message says which. A TensorFlow 1 target, or a module that runs only on TensorFlow 1 (a
`tf.Session` through a plain `import tensorflow`, a `tf.contrib` API called or passed as a value,
a first-party module it imports that does, or every first-party module importing it doing so: an
input pipeline whose one importer trains with `tf.Session`), gets no TensorFlow 2 advice. With no target known
the message says so, and from which release the spelling warns or is removed.

Names are resolved through the module's imports. `fit_generator` is reported only on a receiver the
analysis can see is a Keras model (`keras.Sequential(...)`, `keras.Model(...)`, `load_model(...)`,
a `keras.applications` model, a same-file subclass of `keras.Model`, or a name or `self.` attribute
assigned one of those); a parameter or an imported helper's result is not reported. Test files are
skipped. The versions come from the table shared with TFP401 (`tflint_perf/analysis/deprecations.py`).
"""
    why_bad = """
These spellings are gone from current releases: `tf.py_func` is not in TensorFlow 2's main
namespace, the `mixed_precision.experimental` module was removed in TensorFlow 2.9 (after being
deprecated in 2.4), and Keras 3 (the `tf.keras` of TensorFlow 2.16 and later) has no
`fit_generator`. Code that still uses them fails when the environment is upgraded, and meanwhile
logs deprecation warnings. `tf.py_func` also hides a Python callback that serialises the input
pipeline (see TFP201). This is a hygiene rule: no speed-up is claimed.
"""
    example = """
import tensorflow as tf

tf.keras.mixed_precision.experimental.set_policy("mixed_float16")

@tf.function(experimental_relax_shapes=True)
def step(x):
    return tf.py_func(np.sort, [x], tf.float32)

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.fit_generator(batches, epochs=5)
"""
    use_instead = """
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")

@tf.function(reduce_retracing=True)
def step(x):
    return tf.numpy_function(np.sort, [x], tf.float32)

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
model.fit(batches, epochs=5)
"""
    fix_safety = """
The fixes are **safe** renames. `tf.numpy_function` "maintains the semantics of the deprecated
`tf.py_func`"; its `stateful` argument is dropped (all such functions are then stateful).
`fit_generator(gen, ...)` becomes `fit(gen, ...)` only when the generator is the one positional
argument (`fit`'s second parameter is `y`, not `steps_per_epoch`), only on a `tf.keras` model, and not
when `workers`, `use_multiprocessing` or `max_queue_size` are passed for TensorFlow 2.16 or later
(Keras 3 moved them to `PyDataset`). `Policy(name, loss_scale=...)` and a `LossScaleOptimizer` with a
loss scale other than `"dynamic"` are reported without a fix.

A fix is offered only when every TensorFlow the project may run has the replacement:
`target-version` (or the version inferred from the project's dependency files) must be at least the
version that introduced it (`reduce_retracing`: 2.9; `jit_compile`: 2.5; `set_global_policy`: 2.4;
`fit` with generators: 2.1; `numpy_function`: 1.14). With no version known the finding is reported
without a fix. Nothing is reported where the project runs a TensorFlow older than the replacement
(where the old spelling is the only one), nor, for a standalone `keras` model, unless the project
runs TensorFlow 2.6 or later (from then on `keras` is the tf.keras release of the same version;
before, Keras up to 2.3 had no generator-taking `fit`).
"""
    references = (
        "[`tf.numpy_function`](https://www.tensorflow.org/api_docs/python/tf/numpy_function)",
        "[`tf.function`: reduce_retracing](https://www.tensorflow.org/api_docs/python/tf/function)",
        "[Mixed precision guide](https://www.tensorflow.org/guide/mixed_precision)",
        "[Keras 3 migration: `fit_generator`](https://keras.io/guides/migrating_to_keras_3/)",
    )

    valid = (
        Valid("import tensorflow as tf\ny = tf.numpy_function(f, [x], tf.float32)\n"),
        Valid("import tensorflow as tf\n@tf.function(reduce_retracing=True)\ndef f(x):\n    return x\n"),
        Valid("import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"),
        # The receiver is a parameter: not known to be a Keras model.
        Valid("import tensorflow as tf\ndef train(model, gen):\n    model.fit_generator(gen, epochs=3)\n"),
        Valid("import tensorflow as tf\nclass Trainer:\n    def fit_generator(self, gen):\n        pass\nTrainer().fit_generator(g)\n"),
        # Standalone Keras, version unknown: before Keras 2.4 `fit` took no generators.
        Valid("import keras\nmodel = keras.models.Sequential()\nmodel.fit_generator(gen, epochs=3)\n"),
        # The project runs TensorFlow 1.7: `py_func` is the only spelling it has.
        Valid("import tensorflow as tf\nx = tf.py_func(f, [y], tf.float32)\n", target_version=(1, 7)),
        # A TensorFlow 1 target gets no TensorFlow 2 advice, though numpy_function exists in 1.15.
        Valid("import tensorflow.compat.v1 as tf\ny = tf.py_func(f, [x], tf.float32)\n", target_version=(1, 15)),
        # TensorFlow 1 code (a Session through `import tensorflow`), target unknown: it runs only on 1.x.
        Valid("import tensorflow as tf\nsess = tf.Session()\ny = tf.py_func(f, [x], tf.float32)\n"),
        # ... or a TensorFlow 1 API passed as an argument (OpenSeq2Seq's data layers, TensorFlow 1.13).
        Valid("import tensorflow as tf\ndef build(ds, parse):\n    ds = ds.map(lambda l: tf.py_func(parse, [l], [tf.float32]))\n"
              "    return ds.prefetch(tf.contrib.data.AUTOTUNE)\n"),
        # TensorFlow 1 code by what it uses, not only by what it calls: `slim` from `tf.contrib`, gone in TensorFlow 2.
        Valid("import tensorflow as tf\nslim = tf.contrib.slim\ny = tf.py_func(f, [x], tf.float32)\n"),
        Valid("import tensorflow as tf\nimport tensorflow.contrib.slim as slim\ny = tf.py_func(f, [x], tf.float32)\n"),
        # fit_generator warns only from 2.1, where fit took generators.
        Valid(_MODEL + "model.fit_generator(gen, epochs=5)\n", target_version=(2, 0)),
        Valid("import tensorflow as tf\nf = tf.function(g, experimental_relax_shapes=True)\n", target_version=(2, 8)),
        # Not TensorFlow's `function` decorator.
        Valid("import tensorflow as tf\nfrom mylib import function\n@function(experimental_relax_shapes=True)\ndef f(x):\n    return x\n"),
    )
    invalid = (
        Invalid(_MODEL + "model.fit_generator(gen, epochs=5)\n", fixed=None),
        Invalid(_MODEL + "model.fit_generator(gen, epochs=5)\n", fixed=_MODEL + "model.fit(gen, epochs=5)\n",
                target_version=(2, 15)),
        Invalid(_MODEL + "model.fit_generator(generator=gen, steps_per_epoch=100)\n",
                fixed=_MODEL + "model.fit(x=gen, steps_per_epoch=100)\n", target_version=(2, 15)),
        # `fit(gen, 100)` would pass 100 as `y`.
        Invalid(_MODEL + "model.fit_generator(gen, 100, 5)\n", fixed=None, target_version=(2, 15)),
        Invalid(_MODEL + "model.fit_generator(gen, workers=4)\n", fixed=None, target_version=(2, 16)),
        Invalid(
            "import tensorflow as tf\n\nclass Net(tf.keras.Model):\n    pass\n\nnet = Net()\nscores = net.predict_generator(gen, steps=10)\n",
            fixed="import tensorflow as tf\n\nclass Net(tf.keras.Model):\n    pass\n\nnet = Net()\nscores = net.predict(gen, steps=10)\n",
            target_version=(2, 15),
        ),
        # Standalone Keras follows TensorFlow's version from 2.6 on.
        Invalid("import keras\nmodel = keras.models.load_model('m.h5')\nmodel.evaluate_generator(gen)\n",
                fixed="import keras\nmodel = keras.models.load_model('m.h5')\nmodel.evaluate(gen)\n", target_version=(2, 15)),
        Invalid("import tensorflow as tf\ny = tf.py_func(f, [x], tf.float32, stateful=False)\n",
                fixed="import tensorflow as tf\ny = tf.numpy_function(f, [x], tf.float32)\n", target_version=(2, 15)),
        # Through compat.v1 on a TensorFlow 2 target: it still works, and warns.
        Invalid("import tensorflow.compat.v1 as tf\ny = tf.py_func(f, [x], tf.float32)\n",
                fixed="import tensorflow.compat.v1 as tf\ny = tf.numpy_function(f, [x], tf.float32)\n", target_version=(2, 15)),
        # Code kept running on 1.15 and 2.x, target unknown: numpy_function exists on both (1.14 on).
        Invalid("import tensorflow.compat.v1 as tf\ny = tf.py_func(f, [x], tf.float32)\n", fixed=None),
        Invalid(
            "import tensorflow as tf\n@tf.function(experimental_relax_shapes=True)\ndef f(x):\n    return x\n",
            fixed="import tensorflow as tf\n@tf.function(reduce_retracing=True)\ndef f(x):\n    return x\n",
            target_version=(2, 15),
        ),
        Invalid("import tensorflow as tf\nf = tf.function(g, experimental_relax_shapes=True)\n", fixed=None),
        Invalid(
            "from tensorflow import keras\nkeras.mixed_precision.experimental.set_policy('mixed_float16')\n",
            fixed="from tensorflow import keras\nkeras.mixed_precision.set_global_policy('mixed_float16')\n",
            target_version=(2, 15),
        ),
        Invalid("import tensorflow as tf\np = tf.keras.mixed_precision.experimental.Policy('mixed_float16', loss_scale=128)\n",
                fixed=None, target_version=(2, 15)),
        Invalid(
            "import tensorflow as tf\nopt = tf.keras.mixed_precision.experimental.LossScaleOptimizer(opt, 'dynamic')\n",
            fixed="import tensorflow as tf\nopt = tf.keras.mixed_precision.LossScaleOptimizer(opt)\n", target_version=(2, 15),
        ),
        Invalid("import tensorflow as tf\nopt = tf.train.experimental.enable_mixed_precision_graph_rewrite(opt)\n", fixed=None,
                target_version=(2, 15)),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        if context.is_test_code:
            return
        version = context.settings.target_version
        tf1 = written_for_tf1(model, context.filename) if version is None else False
        tf1_only = runs_only_on_tf1(model, context.filename) if version is None else False
        for site in model.calls:
            call = site.node
            spelled = model.imports.spelled(call.func)
            entry = lookup(spelled, self.code)
            if entry is not None and entry.form == "function":
                clause = effect(version, entry, tf1, tf1_only, compat=through_compat_v1(model, call.func))
                if clause is None or model.compatibility.on_branch(call):
                    continue
                fix = self._function_fix(context, site, entry) if replacement_available(version, entry) else None
                yield self.finding(self._message(entry, version, clause), call.func, call, fix)
            elif spelled == "tf.function":
                for arg in call.args:
                    keyword = arg.keyword.value if arg.keyword is not None else None
                    entry = _KEYWORDS.get(keyword or "")
                    clause = effect(version, entry, tf1, tf1_only) if entry is not None else None
                    if clause is None or model.compatibility.on_branch(call):
                        continue
                    fix = None
                    if replacement_available(version, entry) and keyword_argument(call, entry.new_tail) is None:
                        fix = FixPlan(SAFE, f"Use `{entry.new_tail}`", (NodeEdit(arg.keyword, "replace", entry.new_tail),))
                    yield self.finding(message(f"`tf.function({keyword}=...)`", clause, f"`{entry.new_tail}`", version, entry),
                                       arg, arg, fix)
            elif spelled is None and isinstance(call.func, cst.Attribute) and call.func.attr.value in _METHODS:
                entry = _METHODS[call.func.attr.value]
                origin = model.keras_models.origin(call.func.value, site.function, site.place, site.lambdas)
                if origin is None:
                    continue  # not known to be a Keras model
                if origin == "keras":
                    # Standalone Keras's version follows TensorFlow's only from 2.6 (before, Keras < 2.4's
                    # `fit` took no generators): silent unless the project runs TensorFlow 2.6 or later.
                    entry = _STANDALONE[entry.old]
                    if version is None:
                        continue
                clause = effect(version, entry, tf1, tf1_only)
                if clause is None or model.compatibility.on_branch(call):
                    continue
                fix = self._method_fix(call, entry, version) if replacement_available(version, entry) else None
                replacement = f"`{entry.new_tail}`, which takes generators"
                yield self.finding(message(f"`{entry.old_tail}`", clause, replacement, version, entry), call.func.attr, call, fix)

    def _message(self, entry: Deprecation, version, clause: str) -> str:
        new = entry.new if "`" in entry.new else f"`{entry.new}`"
        return message(f"`{entry.old}`", clause, new, version, entry)

    def _function_fix(self, context: RuleContext, site: CallSite, entry: Deprecation) -> Optional[FixPlan]:
        call = site.node
        if entry.special == "report" or has_star_args(call):
            return None
        new = respell(dotted_text(call.func) or "", entry)
        if new is None:
            return None
        positional = [arg for arg in call.args if arg.keyword is None]
        keywords = {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}
        drop = None
        if entry.special == "py_func":
            if len(positional) > 4 or not set(keywords) <= {"func", "inp", "Tout", "stateful", "name"}:
                return None
            if len(positional) == 4:
                if "name" in keywords:
                    return None
                drop = positional[3]
            else:
                drop = keywords.get("stateful")
        elif entry.special == "policy":
            if len(positional) > 1 or "loss_scale" in keywords:
                return None
        elif entry.special == "loss_scale_optimizer":
            scale = keywords.get("loss_scale") or (positional[1] if len(positional) > 1 else None)
            if len(positional) > 2 or scale is None or not isinstance(scale.value, cst.SimpleString) \
                    or scale.value.evaluated_value != "dynamic" or set(keywords) - {"optimizer", "loss_scale"}:
                return None
            drop = scale
        if drop is None:
            return FixPlan(SAFE, f"Use `{new}`", (NodeEdit(call.func, "replace", new),))
        args = list(call.args)
        index = args.index(drop)
        del args[index]
        if args and index == len(args):
            args[-1] = args[-1].with_changes(comma=drop.comma, whitespace_after_arg=drop.whitespace_after_arg)
        rebuilt = call.with_changes(func=cst.parse_expression(new), args=args)
        text = code_in_block(context.model, rebuilt, site.place.blocks)
        return FixPlan(SAFE, f"Use `{new}`", (NodeEdit(call, "replace", text),))

    def _method_fix(self, call: cst.Call, entry: Deprecation, version) -> Optional[FixPlan]:
        if has_star_args(call):
            return None
        positional = [arg for arg in call.args if arg.keyword is None]
        keywords = {arg.keyword.value: arg for arg in call.args if arg.keyword is not None}
        if len(positional) > 1 or (positional and "generator" in keywords):
            return None  # `fit`'s second parameter is `y`
        if version is not None and version >= (2, 16) and _KERAS2_ONLY & set(keywords):
            return None  # Keras 3's `fit` has no `workers` / `use_multiprocessing` / `max_queue_size`
        edits = [NodeEdit(call.func.attr, "replace", entry.new_tail)]  # type: ignore[union-attr]
        if "generator" in keywords:
            edits.append(NodeEdit(keywords["generator"].keyword, "replace", "x"))
        return FixPlan(SAFE, f"Use `{entry.new_tail}`", tuple(edits))

