"""``verify --args/--kwargs``: the arguments FUNCTION is called with, written as in a call.

``--args "32, 'train'"`` and ``--kwargs "batch_size=32, training=True"`` (or a dict literal,
``--kwargs "{'batch_size': 32}"``): each value is a Python literal, read with ``ast.literal_eval``
(numbers, strings, bytes, booleans, None, tuples, lists, dicts, sets), never evaluated as code.
Tensors and arrays are given by their shape, and filled with random data drawn from the seed, the
same for the original and the fixed function:

- ``array((1000, 28, 28))``, ``array((1000,), 'int64', high=10)``: a NumPy array;
- ``tensor((64, 32), 'float32')``: a ``tf.constant``.

Floats are uniform in [low, high) (default [0, 1)), integers in [low, high) (default [0, 10)),
booleans fair coins. Importing this module imports neither NumPy nor TensorFlow.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from typing import Any, Dict, Tuple


class ArgumentError(ValueError):
    """``--args``/``--kwargs`` that cannot be read: reported in one line."""


@dataclass(frozen=True)
class Synthetic:
    """``array(shape, dtype, low=, high=)`` / ``tensor(...)``: random data of that shape."""

    kind: str  # "array" | "tensor"
    shape: Tuple[int, ...]
    dtype: str = "float32"
    low: float = 0
    high: float = 0  # 0: the default for the dtype (1 for floats, 10 for integers)

    def make(self, tf, rng) -> Any:
        import numpy as np

        dtype = np.dtype(self.dtype)
        if dtype == np.bool_:
            array = rng.random(self.shape) < 0.5
        elif np.issubdtype(dtype, np.integer):
            array = rng.integers(int(self.low), int(self.high or 10), size=self.shape).astype(dtype)
        elif np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.complexfloating):
            array = rng.uniform(self.low, self.high or 1.0, size=self.shape).astype(dtype)
        else:
            raise ArgumentError(f"{self.kind}(): cannot fill dtype `{self.dtype}` with random data")
        return tf.constant(array) if self.kind == "tensor" else array


@dataclass(frozen=True)
class CallArguments:
    """What FUNCTION is called with; ``text`` is how the reports write the call's arguments."""

    args: Tuple[Any, ...] = ()
    kwargs: Dict[str, Any] = field(default_factory=dict)
    text: str = ""

    def materialise(self, tf, seed: int) -> Tuple[tuple, dict]:
        """Fresh values for one call: literals copied (the function may change a list it is given),
        synthetic tensors drawn from ``seed`` and their position, so every call gets the same data."""
        import numpy as np

        def value(item: Any, position: int) -> Any:
            if isinstance(item, Synthetic):
                return item.make(tf, np.random.default_rng([seed, position]))
            return copy.deepcopy(item)

        args = tuple(value(item, index) for index, item in enumerate(self.args))
        kwargs = {key: value(item, len(self.args) + index) for index, (key, item) in enumerate(self.kwargs.items())}
        return args, kwargs


def parse_arguments(args_text: str = "", kwargs_text: str = "") -> CallArguments:
    args_text, kwargs_text = args_text.strip(), kwargs_text.strip()
    args = tuple(_value(node, "--args") for node in _call(args_text, "--args", keywords=False).args) if args_text else ()
    kwargs: Dict[str, Any] = {}
    if kwargs_text.startswith("{"):
        try:
            given = ast.literal_eval(kwargs_text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as error:
            raise ArgumentError(f"--kwargs: not a Python literal: {_first_line(error)}") from None
        if not isinstance(given, dict) or not all(isinstance(key, str) and key.isidentifier() for key in given):
            raise ArgumentError("--kwargs: a dict literal must map parameter names (strings) to values")
        kwargs = given
    elif kwargs_text:
        for keyword in _call(kwargs_text, "--kwargs", keywords=True).keywords:
            kwargs[keyword.arg] = _value(keyword.value, "--kwargs")  # type: ignore[index]
    shown = [_show(value) for value in args] + [f"{key}={_show(value)}" for key, value in kwargs.items()]
    return CallArguments(args, kwargs, ", ".join(shown))


def _call(text: str, option: str, keywords: bool) -> ast.Call:
    try:
        tree = ast.parse(f"f({text})", mode="eval")
    except SyntaxError as error:
        raise ArgumentError(f"{option}: cannot read `{text}`: {error.msg}") from None
    call = tree.body
    assert isinstance(call, ast.Call)
    if keywords and call.args:
        raise ArgumentError(f"{option}: expected name=value pairs, got `{text}` (positional values go in --args)")
    if not keywords and call.keywords:
        raise ArgumentError(f"{option}: expected values, got `{text}` (name=value pairs go in --kwargs)")
    if any(isinstance(node, ast.Starred) for node in call.args) or any(k.arg is None for k in call.keywords):
        raise ArgumentError(f"{option}: `*` and `**` are not supported")
    return call


def _value(node: ast.AST, option: str) -> Any:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("array", "tensor"):
        return _synthetic(node, option)
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ArgumentError(f"{option}: `{ast.unparse(node)}` is not a Python literal (nor array(shape) / "
                            "tensor(shape))") from None


def _synthetic(node: ast.Call, option: str) -> Synthetic:
    kind = node.func.id  # type: ignore[attr-defined]
    usage = f"{option}: expected {kind}(shape, dtype='float32', low=0, high=...), got `{ast.unparse(node)}`"
    try:
        positional = [ast.literal_eval(arg) for arg in node.args]
        named = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    except (ValueError, TypeError, SyntaxError):
        raise ArgumentError(usage) from None
    names = ("shape", "dtype", "low", "high")
    if len(positional) > len(names) or None in named or set(named) - set(names):
        raise ArgumentError(usage)
    values = dict(zip(names, positional))
    if set(values) & set(named):
        raise ArgumentError(usage)
    values.update(named)  # type: ignore[arg-type]
    shape = values.get("shape")
    shape = (shape,) if isinstance(shape, int) else shape
    if not isinstance(shape, (tuple, list)) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ArgumentError(usage)
    dtype = values.get("dtype", "float32")
    low, high = values.get("low", 0), values.get("high", 0)
    if not isinstance(dtype, str) or not all(isinstance(v, (int, float)) for v in (low, high)):
        raise ArgumentError(usage)
    try:
        import numpy as np

        np.dtype(dtype)
    except (TypeError, ImportError) as error:
        raise ArgumentError(f"{option}: {kind}(): unknown dtype `{dtype}` ({_first_line(error)})") from None
    return Synthetic(kind, tuple(shape), dtype, low, high)


def _show(value: Any) -> str:
    if isinstance(value, Synthetic):
        shape = value.shape if len(value.shape) != 1 else f"({value.shape[0]},)"
        bounds = (f", low={value.low!r}" if value.low else "") + (f", high={value.high!r}" if value.high else "")
        return f"{value.kind}({shape}, {value.dtype!r}{bounds})"
    return repr(value)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
