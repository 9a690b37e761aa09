"""What one example costs a ``Sequential`` stack: the multiply-adds of its forward pass, read from the
layers' literal arguments (TFP209: whether a small convnet's step is as short as a small MLP's).

The stack starts from the shape its first layer declares (``declared_input``) and each layer maps the
shape it is given (spatial sizes, channels) to the shape it gives, as Keras does:

- a convolution (``Conv1D``, ``Conv2D``, separable, depthwise) costs each output position its kernel
  times its input channels times its filters (a depthwise one: its kernel times its channels times
  its ``depth_multiplier``; a separable one: both); its output positions are its input's divided by
  its strides, rounded up (the ``'same'`` padding; ``'valid'`` gives fewer: the count is a bound);
- pooling divides the positions by its strides (its pool size, 2 by default); global pooling leaves
  none; ``ZeroPadding`` adds its rows and columns; ``Flatten`` makes every number a channel;
  ``Reshape`` gives its literal target shape;
- a ``Dense`` layer costs its input's positions times its input channels times its units.

A kernel, stride, pool or target shape that is not a literal, or a layer of another kind, gives no
cost (None): a stack whose cost is not known is not evidently small.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument, int_literal

# Each convolution layer: (position of ``kernel_size``, spatial rank, kind).
_CONVOLUTIONS = {
    "Conv1D": (1, 1, "full"), "Convolution1D": (1, 1, "full"), "Conv2D": (1, 2, "full"), "Convolution2D": (1, 2, "full"),
    "SeparableConv1D": (1, 1, "separable"), "SeparableConv2D": (1, 2, "separable"),
    "DepthwiseConv2D": (0, 2, "depthwise"),
}
_POOLING = {
    "MaxPooling1D": 1, "MaxPool1D": 1, "AveragePooling1D": 1, "AvgPool1D": 1,
    "MaxPooling2D": 2, "MaxPool2D": 2, "AveragePooling2D": 2, "AvgPool2D": 2,
}
_GLOBAL_POOLING = frozenset({
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D",
    "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool1D", "GlobalMaxPool2D",
})
_PADDING = {"ZeroPadding1D": 1, "ZeroPadding2D": 2}
# Layers that keep the shape they are given and cost a few operations a number.
_ELEMENTWISE = frozenset({
    "Dropout", "SpatialDropout1D", "SpatialDropout2D", "Activation", "ReLU", "BatchNormalization",
    "LayerNormalization", "Normalization", "Rescaling", "InputLayer", "Input",
})


@dataclass
class _Shape:
    spatial: List[int]
    channels: int


def declared_input(layer: cst.Call, name: Optional[str]) -> Optional[List[int]]:
    """The shape of one example a model's first layer declares as literals: ``InputLayer(input_shape=(28,
    28))``, ``InputLayer((28, 28, 1))``, ``keras.Input(shape=(32, 32, 3))``, ``Conv2D(8, 3,
    input_shape=(28, 28, 1))``; None otherwise (a name, a ``None`` dimension)."""
    if name in ("keras.Input", "keras.layers.Input"):
        found = argument(layer, "shape", 0)
    elif name is not None and name.endswith(".InputLayer"):
        found = argument(layer, "input_shape", 0)
    else:
        found = argument(layer, "input_shape", None)
    dims: Sequence[cst.BaseExpression] = ()
    if found is not None and isinstance(found.value, (cst.Tuple, cst.List)):
        dims = [element.value for element in found.value.elements]
    else:
        batch = argument(layer, "batch_input_shape", None)
        if batch is not None and isinstance(batch.value, (cst.Tuple, cst.List)):
            dims = [element.value for element in batch.value.elements][1:]
    sizes = [int_literal(dim) for dim in dims]
    if not sizes or any(size is None or size <= 0 for size in sizes):
        return None
    return sizes  # type: ignore[return-value]


def stack_cost(input_shape: List[int], layers: Sequence[Tuple[str, cst.Call]]) -> Optional[int]:
    """The multiply-adds one example costs the ``layers`` (each its Keras class name and its call) from
    ``input_shape``; None where a layer's shape or cost is not known from literals."""
    shape = _Shape(list(input_shape[:-1]), input_shape[-1])
    cost = 0
    for name, call in layers:
        step = _apply(name, call, shape)
        if step is None:
            return None
        cost += step
    return cost


def _apply(name: str, call: cst.Call, shape: _Shape) -> Optional[int]:
    """The layer's cost, with ``shape`` updated to its output; None when either is not known."""
    positions = _product(shape.spatial)
    if name in _CONVOLUTIONS:
        kernel_position, rank, kind = _CONVOLUTIONS[name]
        kernel = _sizes(argument(call, "kernel_size", kernel_position), rank)
        strides = _sizes(argument(call, "strides", kernel_position + 1), rank, default=1)
        written = argument(call, "filters", 0) if kind != "depthwise" else None
        filters = int_literal(written.value) if written is not None else None
        if kernel is None or strides is None or len(shape.spatial) != rank or (kind != "depthwise" and filters is None):
            return None
        shape.spatial = [-(-size // stride) for size, stride in zip(shape.spatial, strides)]
        positions, taps = _product(shape.spatial), _product(kernel)
        if kind == "depthwise":
            multiplier = argument(call, "depth_multiplier", 3)
            times = int_literal(multiplier.value) if multiplier is not None else 1
            if times is None:
                return None
            cost, shape.channels = positions * taps * shape.channels * times, shape.channels * times
            return cost
        cost = positions * shape.channels * (taps * filters if kind == "full" else taps + filters)  # type: ignore[operator]
        shape.channels = filters  # type: ignore[assignment]
        return cost
    if name in _POOLING:
        rank = _POOLING[name]
        pool = _sizes(argument(call, "pool_size", 0), rank, default=2)
        written = argument(call, "strides", 1)
        left = written is None or (isinstance(written.value, cst.Name) and written.value.value == "None")
        strides = pool if left else _sizes(written, rank)  # `strides=None`: the pool size
        if pool is None or strides is None or len(shape.spatial) != rank:
            return None
        shape.spatial = [-(-size // stride) for size, stride in zip(shape.spatial, strides)]
        return 0
    if name in _GLOBAL_POOLING:
        shape.spatial = []
        return 0
    if name in _PADDING:
        padding = _sizes(argument(call, "padding", 0), _PADDING[name], default=1)
        if padding is None or len(shape.spatial) != _PADDING[name]:
            return None
        shape.spatial = [size + 2 * pad for size, pad in zip(shape.spatial, padding)]
        return 0
    if name == "Flatten":
        shape.spatial, shape.channels = [], positions * shape.channels
        return 0
    if name == "Reshape":
        target = _sizes(argument(call, "target_shape", 0), None)
        if target is None or _product(target) != positions * shape.channels:
            return None
        shape.spatial, shape.channels = target[:-1], target[-1]
        return 0
    if name == "Dense":
        units = argument(call, "units", 0)
        width = int_literal(units.value) if units is not None else None
        if width is None:
            return None
        cost = positions * shape.channels * width
        shape.channels = width
        return cost
    return 0 if name in _ELEMENTWISE else None


def _sizes(arg: Optional[cst.Arg], rank: Optional[int], default: Optional[int] = None) -> Optional[List[int]]:
    """A size per spatial dimension, written ``3`` or ``(3, 3)``; ``default`` for each when absent."""
    if arg is None:
        return None if default is None or rank is None else [default] * rank
    if isinstance(arg.value, (cst.Tuple, cst.List)):
        sizes = [int_literal(element.value) for element in arg.value.elements]
        if not sizes or any(size is None or size <= 0 for size in sizes) or (rank is not None and len(sizes) != rank):
            return None
        return sizes  # type: ignore[return-value]
    size = int_literal(arg.value)
    return None if size is None or size <= 0 or rank is None else [size] * rank


def _product(sizes: Sequence[int]) -> int:
    total = 1
    for size in sizes:
        total *= size
    return total
