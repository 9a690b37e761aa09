"""What one example costs a Sequential stack (analysis/layer_cost.py), and the small convnet TFP209 asks
about (analysis/keras_models.py ``is_small_convnet``)."""

from __future__ import annotations

import pytest

from tflint_perf.analysis.keras_models import SEQUENTIAL_MODEL_CLASSES
from tests.conftest import model_of


def _sequential(layers: str):
    model = model_of(f"import tensorflow as tf\nfrom tensorflow.keras import layers\nmodel = tf.keras.Sequential([{layers}])\n")
    (site,) = [site for site in model.calls if model.call_name(site.node) in SEQUENTIAL_MODEL_CLASSES]
    return model, site.node


def _cost(layers: str):
    from tflint_perf.analysis.layer_cost import stack_cost

    model, constructor = _sequential(layers)
    stack = model.keras_models._small_stack(constructor)
    return stack_cost(stack.input_shape, stack.calls) if stack is not None and stack.input_shape else None


# The classic MNIST convnet: 28*28*1*32*9 + 28*28*32*64*9 (same-padding bound) + 14*14*64*10.
_MNIST = ("layers.Conv2D(32, (3, 3), activation='relu', input_shape=(28, 28, 1)), layers.Conv2D(64, (3, 3)), "
          "layers.MaxPooling2D(pool_size=(2, 2)), layers.Dropout(0.25), layers.Flatten(), layers.Dense(10)")
# Six 64-filter convolutions on a whole CIFAR image.
_WIDE = ("layers.Conv2D(64, 3, padding='same', input_shape=(32, 32, 3)), "
         + "layers.BatchNormalization(), layers.Conv2D(64, 3, padding='same'), " * 5
         + "layers.GlobalAveragePooling2D(), layers.Dense(10)")


def test_the_cost_of_one_example():
    assert _cost(_MNIST) == 28 * 28 * 32 * 9 + 28 * 28 * 32 * 64 * 9 + 14 * 14 * 64 * 10
    # Strides and pools divide the positions; a depthwise convolution costs its kernel per channel, a
    # reshape sets the shape, a Dense layer its input numbers times its units.
    assert _cost("layers.InputLayer(input_shape=(28, 28)), layers.Reshape(target_shape=(28, 28, 1)), "
                 "layers.Conv2D(8, 3, strides=2), layers.DepthwiseConv2D(3), layers.MaxPool2D(2, 1), "
                 "layers.Flatten(), layers.Dense(10)") == 14 * 14 * 8 * 9 + 14 * 14 * 8 * 9 + 14 * 14 * 8 * 10
    assert _cost("layers.InputLayer(input_shape=(32, 32, 3)), layers.DepthwiseConv2D(3, depth_multiplier=2), "
                 "layers.Conv2D(8, 1), layers.Flatten(), layers.Dense(10)") == (
        32 * 32 * 3 * 9 * 2 + 32 * 32 * 6 * 8 + 32 * 32 * 8 * 10)
    assert _cost("tf.keras.Input(shape=(100, 3)), layers.Conv1D(16, 5), layers.GlobalMaxPooling1D(), "
                 "layers.Dense(1)") == 100 * 3 * 16 * 5 + 16


@pytest.mark.parametrize("layers", [
    "layers.Conv2D(32, kernel_size=KERNEL, input_shape=(28, 28, 1)), layers.Flatten(), layers.Dense(10)",
    "layers.Conv2D(32, 3, strides=STRIDE, input_shape=(28, 28, 1)), layers.Flatten(), layers.Dense(10)",
    "layers.Conv2D(32, 3, input_shape=(28, 28)), layers.Flatten(), layers.Dense(10)",  # no channel axis
    "layers.InputLayer(input_shape=(784,)), layers.Reshape((28, 28, 2)), layers.Conv2D(8, 3)",  # not 784 numbers
])
def test_a_cost_the_literals_do_not_tell_is_unknown(layers):
    assert _cost(layers) is None


@pytest.mark.parametrize("layers,small", [
    (_MNIST, True),
    ("layers.InputLayer((28, 28, 1)), layers.Conv2D(12, 3), layers.MaxPooling2D(), layers.Flatten(), layers.Dense(10)", True),
    (_WIDE, False),  # about 190 million multiply-adds an example: milliseconds a step
    ("layers.Conv1D(64, 7, padding='same', input_shape=(3000, 1)), " + "layers.Conv1D(64, 7), " * 3
     + "layers.GlobalAveragePooling1D(), layers.Dense(1)", False),
    ("layers.Conv2D(12, 3), layers.Flatten(), layers.Dense(10)", False),  # no declared input
])
def test_a_small_convnet_is_cheap_per_example(layers, small):
    model, constructor = _sequential(layers)
    assert model.keras_models.is_small_convnet(constructor) is small
