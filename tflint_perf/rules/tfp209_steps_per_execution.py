"""TFP209 steps-per-execution: ``compile()`` without ``steps_per_execution`` for a small model trained in many small steps."""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from tflint_perf.analysis.arguments import argument, has_star_args, int_literal, keyword_argument
from tflint_perf.analysis.deprecations import written_for_tf1
from tflint_perf.analysis.feeders import fed_by_python
from tflint_perf.analysis.files import path_purpose
from tflint_perf.analysis.model import CallSite
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.analysis.rows import FEW, MANY, ONE
from tflint_perf.text.diagnostics import UNSAFE, Finding, FixPlan
from tflint_perf.fixes.building import add_keyword_argument
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid, target_version_option

_STEPS = 32  # what the fix passes: the catalog's measured setting
_SINCE = (2, 4)  # `steps_per_execution` (2.3 called it `experimental_steps_per_execution`)
_MAX_BATCH = 256
_MIN_EPOCHS = 3
_PER_BATCH_HOOKS = frozenset({"on_batch_begin", "on_batch_end", "on_train_batch_begin", "on_train_batch_end"})
_MLP = (
    "import tensorflow as tf\n"
    "model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation='relu'), tf.keras.layers.Dense(1)])\n"
)

_FACTORY = (
    "import tensorflow as tf\n"
    "def create_model(opt):\n"
    "    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(64, activation='relu'),\n"
    "                                 tf.keras.layers.Dense(10, activation='softmax')])\n"
    "    model.compile(optimizer=opt, loss='sparse_categorical_crossentropy')\n"
    "    return model\n"
)


class StepsPerExecution(Rule):
    code = "TFP209"
    name = "steps-per-execution"
    summary = "`compile()` without `steps_per_execution` for a small model trained in many small steps (off by default)"
    fix_availability = "sometimes"
    default_enabled = False
    options = (target_version_option(
        "Below 2.4 (no `steps_per_execution`) nothing is reported; the fix is offered only from 2.4, for `tf.keras` models."
    ),)

    what_it_does = """
Checks for `Model.compile(...)` without `steps_per_execution` when the model is small and `fit` runs
it in many small steps: the compiled model is a `Sequential([...])` of at most 8 cheap layers
(`Dense` of at most 1024 units given as literals, `Dropout`, normalisation, `Flatten`, `Reshape`)
with at least one hidden `Dense` layer, or a small convnet on small inputs (a `Sequential` that
declares its input, at most 3,072 numbers an example: an MNIST digit, a CIFAR image, and holds at most
6 convolutions of at most 64 filters given as literals, with pooling, padding and the cheap layers
around them, whose literal kernels, strides and pools put one example at no more than 20 million
multiply-adds, as the classic MNIST convnet of 32 and 64 filters: TF Model Optimization's one-conv MNIST
classifier, 1,688 steps an epoch of a step that computes in well under a millisecond), or a lone `Dense` (a linear or logistic regression) fitted on
evidently many rows (a slice of more than 1,024 rows such as `series[:7000]`, an array reshaped to
60,000 rows; on data of unknown size a linear model is as often a demonstration on a few thousand points),
and the same model is `fit` in the same function (or, for a factory that compiles and returns it,
on the model a same-file caller assigns its result to: `model = create_model(opt)`) for at least 3 epochs (`epochs` a literal, a
constant or a flag default: one or two epochs are a demonstration) with a `batch_size` of at most 256 or none
(Keras then uses 32), or a `tf.data` pipeline batched by at most 256 (a literal, or a value followed to
where it is set: a helper's `batch_size` parameter that every caller passes `BATCH_SIZE = 32` for), on
data not evidently small (a slice of at most 1,024 rows is a few dozen steps an epoch; nor data the code
shows to be a toy dataset, as TFP101 judges one: `make_circles(1000)`, 40 points of an `np.arange`, Iris,
a few thousand rows of a few features), and not fed batch by batch from Python (`ImageDataGenerator`'s
`flow_from_directory` / `flow`, a generator function, a `keras.utils.Sequence`: making each batch is
the step's cost, and fusing steps saves nothing). A `fit` with a
callback of a same-file class that acts every batch (`on_batch_end`, `on_train_batch_begin`, ...) is
not reported: the change would make it act every N batches. Nor is code for a TensorFlow without
`steps_per_execution` (`target-version` or the version inferred from the project's dependency files,
or from a notebook's own cells (a pinned `pip install`, the saved output of `tf.__version__`,
Colab's `%tensorflow_version 2.x`, which notebooks needed only while Colab's 2.x was 2.0 or 2.1),
or, for a notebook that declares none, the one at least two of its sibling notebooks agree on, else
the oldest that three in four of its project's notebooks ran on (a course's week folders),
below 2.4: 2.2 and 2.3 have only `experimental_steps_per_execution`, 2.0 and 2.1 nothing; or
TensorFlow 1 code as TFP401 recognises it). With the version unknown, the finding is made: set
`target-version` for a project that declares its TensorFlow nowhere.
Models the analysis cannot see whole (functional models, subclasses, loaded
models, layers sized by variables) are not reported, nor are test files and evaluation or inference
modules.

**Off by default.** Whether it pays depends on the model and the hardware, and the fix changes how
often per-batch callbacks run. Enable it by naming it: `--select TFP209`, `--extend-select TFP209`
or `extend-select = ["TFP209"]`; a prefix (`TFP2`, `TFP`) or `ALL` does not enable it (as ruff's
explicit preview rules).
"""
    why_bad = """
By default `fit` returns to Python after every batch: it calls the compiled train function once per
step, updates the progress bar and the callbacks, and checks for the end of the epoch. For a small
model that host work costs as much as the step itself, and on a GPU or TPU the device idles between
steps. `steps_per_execution=N` runs N steps inside one call of the compiled function. The Keras
documentation: it "can greatly improve performance on TPUs or small models with a large Python
overhead". Measured on a 2-core CPU, an MLP trained for 1,024 steps of batch 32: 1.30 s with 1 step
per execution, 0.44 s with 32 (3.0x).

It pays when a step is short: small dense models, small batches, TPUs. It does not pay for large
models (convolutional networks, transformers, large batches), whose steps take milliseconds and
hide the host work already; that is why the rule looks only at small Sequential MLPs and at convnets
of a few narrow convolutions on inputs the size of an MNIST digit or a CIFAR image, cheap per example
(six 64-filter convolutions over a whole CIFAR image cost about 190 million multiply-adds an example:
a step of milliseconds).
"""
    example = """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y, batch_size=32, epochs=10)
"""
    use_instead = """
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse", steps_per_execution=32)
model.fit(x, y, batch_size=32, epochs=10)
"""
    fix_safety = """
The fix adds `steps_per_execution=32` and is **unsafe** (applied with `--unsafe-fixes`): the
optimisation is the same, but per-batch callbacks (`on_train_batch_begin` / `_end`, the progress
bar, `TensorBoard(update_freq="batch")`, a `ModelCheckpoint` saving every N batches, early stopping
inside an epoch) then run only every 32 batches, and the last execution of an epoch may run fewer
steps. It is offered only when `target-version` (or the inferred version) is 2.4 or later, where
`steps_per_execution` exists, and only for `tf.keras` models.
"""
    references = (
        "[`keras.Model.compile`: steps_per_execution](https://keras.io/api/models/model_training_apis/#compile-method)",
        "[Optimize TensorFlow GPU performance: analyze gaps between steps]"
        "(https://www.tensorflow.org/guide/gpu_performance_analysis)",
    )

    valid = (
        Valid(_MLP + "model.compile(optimizer='sgd', loss='mse', steps_per_execution=32)\nmodel.fit(x, y, epochs=10)\n"),
        # A callback that acts every batch (here: raises the learning rate) must keep running every batch.
        Valid(_MLP + "class ExpLR(tf.keras.callbacks.Callback):\n    def on_batch_end(self, batch, logs):\n        pass\n"
              "model.compile(optimizer='sgd', loss='mse')\nlr = ExpLR()\nmodel.fit(x, y, epochs=10, callbacks=[lr])\n"),
        # TensorFlow 2.3: only `experimental_steps_per_execution` there.
        Valid(_MLP + "model.compile(optimizer='sgd', loss='mse')\nmodel.fit(x, y, epochs=10)\n", target_version=(2, 3)),
        # dragen1860/TensorFlow-2.x-Tutorials 05-FashionMNIST/mnist_fit.py, on the TensorFlow 2.0 it targets.
        Valid(_MLP + "ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(60000).batch(100)\n"
              "model.compile(optimizer='adam', loss='mse')\nmodel.fit(ds.repeat(), epochs=30, steps_per_epoch=500)\n",
              target_version=(2, 0)),
        # A convnet whose input the code does not declare may run on large images: not evidently small.
        Valid("import tensorflow as tf\nmodel = tf.keras.Sequential([tf.keras.layers.Conv2D(12, 3), "
              "tf.keras.layers.MaxPooling2D(), tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])\n"
              "model.compile(optimizer='adam', loss='mse')\nmodel.fit(x, y, epochs=10)\n"),
        # A convnet on 224 x 224 images, or of wide convolutions: steps long enough to hide the host work.
        Valid("import tensorflow as tf\nmodel = tf.keras.Sequential([tf.keras.layers.InputLayer(input_shape=(224, 224, 3)), "
              "tf.keras.layers.Conv2D(12, 3), tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])\n"
              "model.compile(optimizer='adam', loss='mse')\nmodel.fit(x, y, epochs=10)\n"),
        # Six 64-filter convolutions over a whole CIFAR image: about 190 million multiply-adds an example.
        Valid("import tensorflow as tf\n(x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()\n"
              "model = tf.keras.Sequential([tf.keras.layers.Conv2D(64, 3, padding='same', input_shape=(32, 32, 3)), "
              + "tf.keras.layers.BatchNormalization(), tf.keras.layers.Conv2D(64, 3, padding='same'), " * 5
              + "tf.keras.layers.GlobalAveragePooling2D(), tf.keras.layers.Dense(10)])\n"
              "model.compile(optimizer='adam', loss='mse')\nmodel.fit(x_train, y_train, batch_size=128, epochs=30)\n"),
        Valid("import tensorflow as tf\nmodel = tf.keras.Sequential([tf.keras.layers.Conv2D(256, 3, input_shape=(28, 28, 1)), "
              "tf.keras.layers.Conv2D(256, 3), tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])\n"
              "model.compile(optimizer='adam', loss='mse')\nmodel.fit(x, y, epochs=10)\n"),
        # The name is bound to another model by the time it is trained.
        Valid(_MLP + "model.compile(optimizer='sgd', loss='mse')\nmodel = tf.keras.Sequential([tf.keras.layers.Conv2D(8, 3)])\n"
              "model.compile(optimizer='sgd', loss='mse', steps_per_execution=8)\nmodel.fit(x, y, epochs=10)\n"),
        # Compiled but never trained here.
        Valid(_MLP + "model.compile(optimizer='sgd', loss='mse')\nmodel.evaluate(x, y)\n"),
        # Large batches: steps are long enough.
        Valid(_MLP + "model.compile(optimizer='sgd', loss='mse')\nmodel.fit(x, y, batch_size=4096, epochs=10)\n"),
        # A pipeline batched in large batches.
        Valid(_MLP + "model.compile(optimizer='sgd', loss='mse')\nds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8192)\n"
              "model.fit(ds, epochs=3)\n"),
        # One epoch (the default): a demonstration.
        Valid(_MLP + "model.compile(optimizer='sgd', loss='mse')\nmodel.fit(x, y)\n"),
        # A linear regression on data of unknown size: in real code, a demonstration on a few thousand points.
        Valid("import tensorflow as tf\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
              "model.compile(optimizer='sgd', loss='mse')\nmodel.fit(x, y, epochs=10)\n"),
        # ... or on a few hundred rows (a toy linear classifier: a few hundred steps in all).
        Valid("import tensorflow as tf\nx, y = points[:800], labels[:800]\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
              "model.compile(optimizer='sgd', loss='mse')\nmodel.fit(x, y, epochs=10)\n"),
        # mrdbourke's classification notebook: make_circles' 1,000 points, 32 steps an epoch: seconds either way.
        Valid("import tensorflow as tf\nfrom sklearn.datasets import make_circles\nn_samples = 1000\n"
              "X, y = make_circles(n_samples, noise=0.03, random_state=42)\n"
              "model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation='relu'), tf.keras.layers.Dense(1)])\n"
              "model.compile(loss='binary_crossentropy', optimizer='adam')\nmodel.fit(X, y, epochs=100)\n"),
        # ... and its regression notebook: 40 points of an `np.arange`, given a feature axis: two steps an epoch.
        Valid("import tensorflow as tf\nimport numpy as np\nX = np.arange(-100, 100, 4)\ny = np.arange(-90, 110, 4)\n"
              "X_train, y_train = X[:40], y[:40]\n"
              "model = tf.keras.Sequential([tf.keras.layers.Dense(1), tf.keras.layers.Dense(1)])\n"
              "model.compile(loss='mae', optimizer='sgd')\nmodel.fit(tf.expand_dims(X_train, axis=-1), y_train, epochs=100)\n"),
        # Images decoded and resized in Python by ImageDataGenerator: making each batch is the step's cost.
        Valid("import tensorflow as tf\nfrom tensorflow.keras.preprocessing.image import ImageDataGenerator\n"
              "train_datagen = ImageDataGenerator(rescale=1./255)\n"
              "train_data = train_datagen.flow_from_directory('pizza_steak/train/', batch_size=32, target_size=(224, 224))\n"
              "model = tf.keras.Sequential([tf.keras.layers.Flatten(input_shape=(224, 224, 3)),\n"
              "    tf.keras.layers.Dense(4, activation='relu'), tf.keras.layers.Dense(1, activation='sigmoid')])\n"
              "model.compile(loss='binary_crossentropy', optimizer='adam')\n"
              "model.fit(train_data, epochs=5, steps_per_epoch=len(train_data))\n"),
        # ... or by a generator function.
        Valid(_MLP + "def batches(paths):\n    while True:\n        yield load_batch(paths)\n"
              "model.compile(optimizer='sgd', loss='mse')\nmodel.fit(batches(paths), epochs=10, steps_per_epoch=500)\n"),
        # Not a small model.
        Valid("import tensorflow as tf\nmodel = tf.keras.Sequential([tf.keras.layers.Conv2D(64, 3), tf.keras.layers.Dense(1)])\n"
              "model.compile(optimizer='sgd', loss='mse')\nmodel.fit(x, y, epochs=10)\n"),
        # A small MLP fitted on at most 1,024 rows (the save-and-load guide's `train_images[:1000]`): a few dozen steps an epoch.
        Valid(_MLP + "model.compile(optimizer='sgd', loss='mse')\nmodel.fit(x[:1000], y[:1000], epochs=10)\n"),
        # A factory's caller fits the returned model in large batches.
        Valid(_FACTORY + "model = create_model('sgd')\nmodel.fit(x, y, batch_size=4096, epochs=5)\n"),
        # The factory returns something else on one path: the caller's model may not be the compiled one.
        Valid("import tensorflow as tf\ndef create_model(opt, other):\n"
              "    model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation='relu'), tf.keras.layers.Dense(10)])\n"
              "    model.compile(optimizer=opt, loss='mse')\n    if other is not None:\n        return other\n    return model\n"
              "model = create_model('sgd', None)\nmodel.fit(x, y, epochs=5)\n"),
        # The model is a parameter: not seen whole.
        Valid("import tensorflow as tf\ndef train(model):\n    model.compile(optimizer='sgd', loss='mse')\n    model.fit(x, y, epochs=10)\n"),
        Valid(_MLP + "model.compile(**config)\nmodel.fit(x, y, epochs=10)\n"),
        # The helper's batch size is the caller's choice, and one caller passes 4096: not every step is small.
        Valid(_MLP + "def windowed_dataset(series, batch_size):\n"
              "    return tf.data.Dataset.from_tensor_slices(series).map(lambda w: (w[:-1], w[-1])).batch(batch_size)\n"
              "dataset = windowed_dataset(x_train, 4096)\nsmall = windowed_dataset(x_valid, 32)\n"
              "model.compile(loss='mse', optimizer='sgd')\nmodel.fit(dataset, epochs=100)\n"),
    )
    invalid = (
        # TF Model Optimization's clustering guide: a one-conv (12 filters) MNIST classifier fitted for 10
        # epochs of 1,688 steps of 32; and its depthwise-separable CIFAR-10 net of 8 to 32 channels.
        Invalid("import tensorflow as tf\nfrom tensorflow import keras\n"
                "(train_images, train_labels), _ = tf.keras.datasets.mnist.load_data()\n"
                "model = keras.Sequential([keras.layers.InputLayer(input_shape=(28, 28)), "
                "keras.layers.Reshape(target_shape=(28, 28, 1)),\n"
                "    keras.layers.Conv2D(filters=12, kernel_size=(3, 3), activation=tf.nn.relu), "
                "keras.layers.MaxPooling2D(pool_size=(2, 2)),\n    keras.layers.Flatten(), keras.layers.Dense(10)])\n"
                "model.compile(optimizer='adam', loss='sparse_categorical_crossentropy')\n"
                "model.fit(train_images, train_labels, validation_split=0.1, epochs=10)\n", fixed=None),
        Invalid("import tensorflow as tf\nfrom tensorflow import keras\nds_train = ds.cache().shuffle(1000).batch(128)\n"
                "model = keras.Sequential([keras.layers.InputLayer(input_shape=(32, 32, 3)), keras.layers.ZeroPadding2D(padding=1),\n"
                "    keras.layers.Conv2D(filters=8, kernel_size=(3, 3), strides=(2, 2)), keras.layers.BatchNormalization(), "
                "keras.layers.ReLU(),\n    keras.layers.DepthwiseConv2D(kernel_size=(3, 3), padding='same'), "
                "keras.layers.Conv2D(filters=32, kernel_size=(1, 1)),\n"
                "    keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(10)])\n"
                "model.compile(optimizer='adam', loss='mse')\nmodel.fit(ds_train, epochs=10, validation_data=ds_val)\n",
                fixed=None),
        # A linear model fitted on evidently many rows for 20 epochs (handson-ml2 ch. 15: 7,000 series;
        # Deep Learning with Python ch. 5: MNIST reshaped to 60,000 rows, then scaled): thousands of tiny steps.
        Invalid("import tensorflow as tf\nX_train, y_train = series[:7000, :50], series[:7000, -1]\n"
                "model = tf.keras.Sequential([tf.keras.layers.Flatten(input_shape=[50, 1]), tf.keras.layers.Dense(1)])\n"
                "model.compile(loss='mse', optimizer='adam')\nmodel.fit(X_train, y_train, epochs=20)\n", fixed=None),
        Invalid("import tensorflow as tf\n(train_images, train_labels), _ = tf.keras.datasets.mnist.load_data()\n"
                "train_images = train_images.reshape((60000, 28 * 28))\ntrain_images = train_images.astype('float32') / 255\n"
                "model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation='softmax')])\n"
                "model.compile(optimizer='rmsprop', loss='sparse_categorical_crossentropy')\n"
                "model.fit(train_images, train_labels, epochs=20, batch_size=128, validation_split=0.2)\n", fixed=None),
        # Generated points, but 200,000 of them: 6,250 steps an epoch, not a toy.
        Invalid("import tensorflow as tf\nfrom sklearn.datasets import make_moons\nX, y = make_moons(n_samples=200000)\n"
                "model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation='relu'), tf.keras.layers.Dense(1)])\n"
                "model.compile(loss='binary_crossentropy', optimizer='adam')\nmodel.fit(X, y, epochs=10)\n", fixed=None),
        Invalid(_MLP + "model.compile(optimizer='sgd', loss='mse')\nds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)\n"
                "model.fit(ds, epochs=3)\n"),
        # TF Addons' average-optimizers tutorial: a factory builds and compiles the MLP; each caller fits
        # the model it returns for 5 epochs of Fashion-MNIST batched by 32.
        Invalid(_FACTORY + "ds = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(5000).batch(32)\n"
                "model = create_model('sgd')\nmodel.fit(ds, epochs=5, callbacks=[cp_callback])\n"),
        Invalid(_MLP + "model.compile(optimizer='sgd', loss='mse')\nmodel.fit(x, y, batch_size=32, epochs=10)\n", fixed=None),
        # tensorflow-1-public C4_W2_Lab_3_deep_NN: windows batched by a helper's `batch_size` parameter,
        # which its one caller passes the notebook's `batch_size = 32`.
        Invalid(_MLP + "batch_size = 32\ndef windowed_dataset(series, window_size, batch_size):\n"
                "    dataset = tf.data.Dataset.from_tensor_slices(series).window(window_size + 1, shift=1)\n"
                "    dataset = dataset.flat_map(lambda w: w.batch(window_size + 1)).map(lambda w: (w[:-1], w[-1]))\n"
                "    return dataset.shuffle(1000).batch(batch_size).cache().prefetch(1)\n"
                "dataset = windowed_dataset(x_train, 20, batch_size)\n"
                "model.compile(loss='mse', optimizer='sgd')\nmodel.fit(dataset, epochs=100)\n", fixed=None),
        Invalid(
            _MLP + "model.compile(optimizer='sgd', loss='mse')\nmodel.fit(x, y, batch_size=32, epochs=10)\n",
            fixed=_MLP + "model.compile(optimizer='sgd', loss='mse', steps_per_execution=32)\nmodel.fit(x, y, batch_size=32, epochs=10)\n",
            unsafe=True, target_version=(2, 15),
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        if context.is_test_code or path_purpose(context.filename) is not Purpose.UNKNOWN:
            return
        keras = model.keras_models
        tf1 = written_for_tf1(model, context.filename)
        for site in model.calls:
            call = site.node
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "compile") or model.call_name(call) is not None:
                continue
            if has_star_args(call) or any(keyword_argument(call, key) is not None
                                          for key in ("steps_per_execution", "experimental_steps_per_execution")):
                continue
            receiver = call.func.value
            constructor = keras.constructor(receiver, site.function, site.place, site.lambdas)
            if constructor is None:
                continue
            if keras.is_small_mlp(constructor) or keras.is_small_convnet(constructor):
                fit = self._small_step_fit(context, site, receiver)
                if fit is None or keras.fit_rows(fit) in (ONE, FEW):
                    continue  # at most 1,024 rows (`train_images[:1000]`): a few dozen steps an epoch
            elif keras.is_small_linear(constructor):
                # A linear model: worth it only where the data is evidently large (a slice of
                # thousands of rows, a pipeline); toy regressions on a few thousand points are demonstrations.
                fit = self._small_step_fit(context, site, receiver)
                if fit is None or keras.fit_rows(fit) != MANY:
                    continue
            else:
                continue
            version = context.settings.target_version
            if (version is not None and version < _SINCE) or (version is None and tf1):
                continue  # the project's TensorFlow has no `steps_per_execution`
            fix = None
            origin = keras.origin(receiver, site.function, site.place, site.lambdas)
            if origin == "tf.keras" and version is not None and version >= _SINCE:
                edit = add_keyword_argument(call, "steps_per_execution", str(_STEPS))
                if edit is not None:
                    fix = FixPlan(UNSAFE, f"Pass `steps_per_execution={_STEPS}` (per-batch callbacks then run every {_STEPS} batches)",
                                  (edit,))
            yield self.finding(
                "`compile()` without `steps_per_execution` for a small model trained in small steps: `fit` returns "
                "to Python after every batch; several steps per call cut that overhead",
                call.func.attr, call, fix,
            )

    def _per_batch_callbacks(self, context: RuleContext, fit: cst.Call, site: CallSite) -> bool:
        """``fit(callbacks=[...])`` holds an instance of a same-file class with a per-batch hook
        (directly, or through a name bound to one); unknown callbacks count as not per-batch."""
        argument = keyword_argument(fit, "callbacks")
        if argument is None:
            return False
        model = context.model
        items = argument.value.elements if isinstance(argument.value, (cst.List, cst.Tuple)) else []
        for element in items:
            values = [element.value]
            if isinstance(element.value, cst.Name):
                bindings = model.reaching(element.value.value, site.function, site.place, site.lambdas) or []
                values = [b.value for b in bindings if b.value is not None]
            for value in values:
                if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                    cls = model.classes.get(value.func.value)
                    if cls is not None and _PER_BATCH_HOOKS & set(cls.methods):
                        return True
        return False

    def _batch_size(self, context: RuleContext, batch: cst.Call) -> Optional[int]:
        """A pipeline's ``batch(n)`` size: a literal, or an integer followed to where it is set (a
        helper's ``batch_size`` parameter that every caller passes ``BATCH_SIZE = 32`` for)."""
        if not batch.args:
            return None
        size = batch.args[0].value
        site = context.model.site_of(batch)  # None for another module's helper: only its literal counts
        known = context.model.integer_values.integer(size, site) if site is not None else None
        return known.value if known is not None else int_literal(size)

    def _small_step_fit(self, context: RuleContext, site: CallSite, receiver: cst.BaseExpression) -> Optional[CallSite]:
        """A later `<receiver>.fit(...)` on the same model with a small (or the default) batch size."""
        for other in context.model.keras_models.later_fits(receiver, site):
            call = other.node
            epochs = keyword_argument(call, "epochs")
            known = context.model.integer_values.integer(epochs.value, other) if epochs is not None else None
            if known is None or known.value < _MIN_EPOCHS:
                continue  # one epoch (the default) or two: a demonstration, too short to be worth it
            if self._per_batch_callbacks(context, call, other):
                return None  # a callback that acts every batch would then act every N batches
            x = argument(call, "x", 0)
            if x is not None and fed_by_python(context.model, x.value, other.function, other.place):
                continue  # each batch is made in Python (`flow_from_directory`, a generator): that is the step's cost
            if context.model.keras_models.fits_toy_set(other):
                continue  # a toy dataset (`make_circles(1000)`, 40 points): a few dozen steps an epoch, seconds in all
            batch = keyword_argument(call, "batch_size")
            fed = [c for c in context.model.pipelines.consumptions if c.node is call and c.role == "fit"]
            if fed:  # a tf.data pipeline: its own `batch(n)` sets the step size
                sizes = [self._batch_size(context, op.call)
                         for c in fed for state in c.states for op in state.ops if op.name == "batch"]
                if sizes and all(size is not None and size <= _MAX_BATCH for size in sizes):
                    return other
                continue
            if batch is None:
                return other
            size = context.model.integer_values.integer(batch.value, other)
            if size is not None and size.value <= _MAX_BATCH:
                return other
        return None
