"""TFP301 unaligned-layer-dim: a hidden layer's width is not a multiple of what tensor cores want."""

from __future__ import annotations

from typing import Iterable

from tflint_perf.text.diagnostics import Finding
from tflint_perf.rules.alignment import ALIGNMENT_OPTIONS, misaligned
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid

_KERAS = "import tensorflow as tf\nfrom tensorflow import keras\n"
_MIXED = _KERAS + "keras.mixed_precision.set_global_policy('mixed_float16')\n"


class UnalignedLayerDim(Rule):
    code = "TFP301"
    name = "unaligned-layer-dim"
    summary = "Hidden layer width under mixed precision is not a multiple of 8, so tensor cores run it less efficiently"
    fix_availability = "always"
    options = ALIGNMENT_OPTIONS

    what_it_does = """
Checks Keras layers whose width is an integer literal that is not a multiple of the alignment.
The alignment follows the module's precision: 8 under a `mixed_float16` / `mixed_bfloat16` policy
(or `dtype="float16"` layers, or the mixed-precision graph rewrite); the message names what it
assumed. float32 code gets no finding unless `alignment` is set (4 for TF32 tensor cores): float32
says nothing about the GPU (TF32 tensor cores exist from Ampere on; a T4 or a V100 runs float32
without them), while a mixed-precision policy is the code's own statement that it targets tensor
cores. Modules that use a TPU (`TPUStrategy`, `TPUClusterResolver`, `TPUEstimator`) or TensorFlow
Decision Forests get no finding. The width that
counts, per layer:

| layer | argument |
|---|---|
| `Dense` | `units` |
| `EinsumDense` | the last dimension of `output_shape` |
| `Conv1D/2D/3D`, `Conv1D/2D/3DTranspose`, `SeparableConv1D/2D` | `filters` (output channels) |
| `LSTM`, `GRU`, `SimpleRNN` (and the CuDNN variants) | `units` |
| `Embedding` | `output_dim` |
| `MultiHeadAttention` | `key_dim` |

Output layers are never reported: their width is the number of classes or targets. A layer is an
output layer when it is the last layer of a `Sequential` list or of a run of `model.add(...)`
calls, when its result flows to the outputs of `Model(inputs, outputs)` or is returned from a
function (a subclassed model's `call`, a `build_head` helper), or when it has a softmax or sigmoid
activation or feeds a `Softmax` layer. Widths below `min-width` (64), widths passed as variables
(`Dense(num_classes)`) and test files (`test_*.py`, `*_test.py`, `tests/`) are not reported
either.
"""
    why_bad = """
This matters on NVIDIA GPUs with tensor cores (Volta and later) when the math runs in 16-bit
(`mixed_float16`, `mixed_bfloat16`) or TF32 (the default for float32 on Ampere and later). Tensor
cores multiply tiles whose sides are multiples of 8 elements for 16-bit types (4 for TF32, 16
for int8). A dense layer's forward pass is a matrix multiply whose dimensions are its units, its
fan-in and the batch size; a convolution's are its input and output channels. When a dimension
is not a multiple of the tile, cuBLAS and cuDNN pad it or fall back to slower kernels, so a
`Dense(500)` can run noticeably slower than a `Dense(512)` that does more work. TensorFlow's
mixed-precision guide: "Tensor Cores requires certain dimensions of tensors to be a multiple
of 8". On CPUs, TPUs (which want multiples of 128) and in plain float32 without TF32, the
alignment makes no reliable difference: set `alignment` for your hardware or disable the rule.

Measured on an NVIDIA H200 (CUDA 13, cuDNN 9.19, through PyTorch, which calls the same cuBLAS and
cuDNN kernels as TensorFlow; `benchmarks/tensor_core_alignment.py`, kernel time per training step,
three runs agreeing within 0.05 except where a range is given): a Dense layer's three training GEMMs
at 500 units against 504, batch 32 to 128, run 1.5-1.7x longer in float16 or bfloat16; at 4,090
units against 4,096 (batch 256) 2.2x; an LSTM of 150 or 500 units against 152 or 504, 1.3-1.6x;
a Conv2D of 100 or 250 filters against 104 or 256, 1.1-2.3x (convolutions vary most between runs). In float32 with TF32 a Dense layer
of 150 or 4,090 units ran 1.2x and 1.8x longer than one of 152 or 4,092, but in absolute terms
the small layer saves 3 microseconds a step; with TF32 off alignment made no difference (0.97-1.00x).
"""
    example = """
from tensorflow import keras

keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([
    keras.layers.Dense(500, activation="relu"),
    keras.layers.Dense(10, activation="softmax"),
])
"""
    use_instead = """
from tensorflow import keras

keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([
    keras.layers.Dense(504, activation="relu"),
    keras.layers.Dense(10, activation="softmax"),
])
"""
    fix_safety = """
The fix rounds the literal up to the next multiple of the alignment. It is **unsafe**: it changes
the architecture (parameter count, capacity, compatibility with saved checkpoints and weights),
so results and saved models change. It is offered only with `--unsafe-fixes`.
"""
    known_problems = """
The rule reads the precision from the module itself: a policy set in another module, or a TPU
chosen by a flag at run time, is not seen (set `alignment` to state your hardware). On CPU-only
training or GPUs without tensor cores the finding is noise. The fan-in of the first layer (the input feature
count) is not checked: it comes from the data, not from a literal in the layer.
"""
    references = (
        "[Mixed precision guide: GPU performance tips](https://www.tensorflow.org/guide/mixed_precision#gpu_performance_tips)",
        "[Optimize TensorFlow GPU performance](https://www.tensorflow.org/guide/gpu_performance_analysis)",
        "[NVIDIA: Linear/Fully-Connected Layers User's Guide]"
        "(https://docs.nvidia.com/deeplearning/performance/dl-performance-fully-connected/index.html)",
        "[NVIDIA: Convolutional Layers User's Guide]"
        "(https://docs.nvidia.com/deeplearning/performance/dl-performance-convolutional/index.html)",
        "[NVIDIA: Matrix Multiplication Background: Tensor Core requirements]"
        "(https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html)",
    )

    valid = (
        # A stateful RNN run at batch 1 (character generation): matrix-vector products, nothing to align.
        # (The same layers stateless, or at batch 64, are reported: see the test file.)
        Valid(
            _MIXED + "rnn = keras.layers.LSTM(1020, stateful=True, batch_input_shape=[1, None, 64])\n"
            "gru = keras.layers.GRU(1020, stateful=True, batch_size=1, return_sequences=True)\n"
        ),
        # A width that a Reshape turns into a shape (7 * 7 * 50) is the shape's product, not a choice.
        Valid(
            _MIXED + "decoder = keras.Sequential([keras.layers.Dense(512), keras.layers.Dense(2450),\n"
            "    keras.layers.Reshape((7, 7, 50)), keras.layers.Conv2DTranspose(1, 5)])\n"
        ),
        Valid(
            _MIXED + "z = keras.Input(shape=(128,))\nx = keras.layers.Dense(2450)(z)\nx = keras.layers.Reshape((7, 7, 50))(x)\n"
        ),
        # float32 says nothing about the GPU (TF32 tensor cores only from Ampere on): no finding
        # unless `alignment` is set (the test file sets it).
        Valid(_KERAS + "model = keras.Sequential([keras.layers.Dense(250, activation='relu'), keras.layers.Dense(10)])\n"),
        # TPU code pads to its own tiles: no GPU alignment finding.
        Valid(
            _MIXED + "strategy = tf.distribute.TPUStrategy(resolver)\nwith strategy.scope():\n"
            "    model = keras.Sequential([keras.layers.Dense(500, activation='relu'), keras.layers.Dense(10)])\n"
        ),
        # TensorFlow Decision Forests trains no matrix multiply.
        Valid(
            "import tensorflow_decision_forests as tfdf\n" + _KERAS
            + "preprocessing = keras.Sequential([keras.layers.Dense(250, activation='relu'), keras.layers.Dense(4)])\n"
            "model = tfdf.keras.RandomForestModel(preprocessing=preprocessing)\n"
        ),
        # The last layer of a Sequential list is the output layer.
        Valid(_KERAS + "model = keras.Sequential([keras.layers.Dense(512), keras.layers.Dense(100)])\n"),
        # The layer producing a functional model's outputs, through a name and a Softmax layer.
        Valid(
            _KERAS + "inputs = keras.Input(shape=(64,))\nx = keras.layers.Dense(256)(inputs)\n"
            "x = keras.layers.Dense(100)(x)\noutputs = keras.layers.Softmax()(x)\n"
            "model = keras.Model(inputs, outputs)\n"
        ),
        # Softmax / sigmoid heads anywhere.
        Valid(_KERAS + "head = keras.layers.Dense(37, activation='softmax')\n"),
        Valid(_KERAS + "head = keras.layers.Dense(37, activation=tf.nn.sigmoid)\n"),
        # A class count passed as a variable.
        Valid(_KERAS + "num_classes = 100\nhidden = [keras.layers.Dense(num_classes)]\n"),
        # Below the minimum width.
        Valid(_KERAS + "layer = keras.layers.Dense(10, activation='relu')\n"),
        # Aligned widths; DepthwiseConv2D has no output-channel GEMM.
        Valid(_KERAS + "a = keras.layers.Conv2D(96, 3)\nb = keras.layers.DepthwiseConv2D(3)\n"),
        # The last `model.add` is the output layer.
        Valid(
            _KERAS + "model = keras.Sequential()\nmodel.add(keras.layers.Dense(512))\n"
            "model.add(keras.layers.Dense(20))\nmodel.add(keras.layers.Activation('linear'))\n"
        ),
        # A subclassed model's `call` returns its head's result.
        Valid(
            _KERAS + "class Net(keras.Model):\n    def __init__(self):\n        super().__init__()\n"
            "        self.body = keras.layers.Dense(512)\n        self.head = keras.layers.Dense(20)\n\n"
            "    def call(self, x):\n        return self.head(self.body(x))\n"
        ),
        # Not Keras: a same-named class of the user's own.
        Valid("import tensorflow as tf\nclass Dense:\n    def __init__(self, n):\n        self.n = n\nlayer = Dense(100)\n"),
    )
    invalid = (
        Invalid(
            _MIXED + "model = keras.Sequential([keras.layers.Dense(500, activation='relu'), keras.layers.Dense(10)])\n",
            fixed=_MIXED + "model = keras.Sequential([keras.layers.Dense(504, activation='relu'), keras.layers.Dense(10)])\n",
            unsafe=True,
        ),
        Invalid(
            _MIXED + "model = keras.Sequential([keras.layers.Dense(500, activation='relu'), keras.layers.Dense(10)])\n",
            fixed=None,
        ),
        Invalid(
            "from tensorflow.keras import layers, Model, Input, mixed_precision\n"
            "mixed_precision.set_global_policy('mixed_bfloat16')\ninputs = Input(shape=(32, 32, 3))\n"
            "x = layers.Conv2D(filters=100, kernel_size=3)(inputs)\nx = layers.Flatten()(x)\n"
            "x = layers.Dense(units=500)(x)\noutputs = layers.Dense(10)(x)\nmodel = Model(inputs, outputs)\n",
            count=2,
            fixed="from tensorflow.keras import layers, Model, Input, mixed_precision\n"
            "mixed_precision.set_global_policy('mixed_bfloat16')\ninputs = Input(shape=(32, 32, 3))\n"
            "x = layers.Conv2D(filters=104, kernel_size=3)(inputs)\nx = layers.Flatten()(x)\n"
            "x = layers.Dense(units=504)(x)\noutputs = layers.Dense(10)(x)\nmodel = Model(inputs, outputs)\n",
            unsafe=True,
        ),
        Invalid(
            _MIXED + "encoder = keras.Sequential([\n    keras.layers.Embedding(20000, 100),\n"
            "    keras.layers.LSTM(250),\n    keras.layers.Dense(1, activation='sigmoid'),\n])\n",
            count=2,
            fixed=_MIXED + "encoder = keras.Sequential([\n    keras.layers.Embedding(20000, 104),\n"
            "    keras.layers.LSTM(256),\n    keras.layers.Dense(1, activation='sigmoid'),\n])\n",
            unsafe=True,
        ),
        Invalid(
            _MIXED + "attention = keras.layers.MultiHeadAttention(num_heads=4, key_dim=100)\n"
            "projection = keras.layers.EinsumDense('abc,cd->abd', output_shape=(None, 100))\n",
            count=2,
            fixed=_MIXED + "attention = keras.layers.MultiHeadAttention(num_heads=4, key_dim=104)\n"
            "projection = keras.layers.EinsumDense('abc,cd->abd', output_shape=(None, 104))\n",
            unsafe=True,
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        layers = context.model.layers
        for site in context.model.calls:
            width = layers.width_expression(site.node)
            if width is None:
                continue
            layer, parameter, expr = width
            miss = misaligned(context, expr, site)
            if miss is None or layers.is_output_layer(site.node) or layers.is_reshaped(site.node):
                continue
            if layers.runs_at_batch_one(site.node):
                continue  # a stateful RNN stepped one sequence at a time: no batch dimension to fill tiles
            message = (
                f"`{layer}` {parameter}={miss.describe()}; "
                f"tensor cores on NVIDIA GPUs run aligned sizes faster, e.g. {miss.aligned}"
            )
            yield self.finding(message, expr, fix=miss.fix())
