"""``verify``'s target: ``FILE::FUNCTION``, ``FILE::FUNCTION[0]``, ``FILE::FUNCTION['train']``,
``FILE::Class.method``; what it names in the imported module, and the datasets its call returns.

An input function often returns more than one pipeline (``return train_ds, test_ds``, a dict of
splits, a dataset with its step count). Every ``tf.data.Dataset`` in the returned tuple, list or
dict (nested up to ``MAX_DEPTH`` levels) is verified on its own and named by its position or key
(``[0]``, ``['train']``); a selector in the target picks one. A method is called on a fresh
instance for every build, constructed with ``--init-args``/``--init-kwargs`` (written as
``--args``); a ``staticmethod`` or ``classmethod`` is called on the class itself.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union

from tflint_perf.faces.harness.call_arguments import CallArguments

MAX_DEPTH = 3
_TARGET = re.compile(r"^(?P<dotted>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:\[(?P<key>.+)\])?$")


class VerifyError(Exception):
    """A usage problem or a failure in the user's code: reported in one line, exit 2."""


@dataclass(frozen=True)
class Target:
    path: Path
    dotted: str  # "make_dataset" or "Reader.build"
    key: Union[int, str, None] = None  # the selector: which returned dataset

    @property
    def label(self) -> str:
        return f"[{self.key!r}]" if self.key is not None else ""


def parse_target(text: str) -> Target:
    path, separator, name = text.rpartition("::")
    match = _TARGET.match(name.strip()) if separator and path else None
    if match is None:
        raise VerifyError(f"expected FILE::FUNCTION, FILE::FUNCTION[0], FILE::FUNCTION['key'] or "
                          f"FILE::Class.method, got `{text}`")
    key = None
    if match.group("key") is not None:
        try:
            key = ast.literal_eval(match.group("key"))
        except (ValueError, SyntaxError):
            key = None
        if not isinstance(key, (int, str)) or isinstance(key, bool):
            raise VerifyError(f"`[{match.group('key')}]` in `{text}`: expected a position ([0]) or a key (['train'])")
    return Target(Path(path), match.group("dotted"), key)


@dataclass(frozen=True)
class Callee:
    """What the target names: a function, or a method of a class built anew for each call."""

    function: Callable[..., Any]  # the function itself, or the method as found on the class
    owner: Optional[type] = None  # the class to instantiate, for an instance method
    method: str = ""

    def check(self, dotted: str, arguments: CallArguments, init: CallArguments) -> None:
        """Fail before running the pipeline when the call cannot take the arguments given."""
        if self.owner is not None:
            _check_signature(self.owner, self.owner.__name__, init, "--init-args / --init-kwargs")
            _check_signature(self.function, dotted, arguments, "--args / --kwargs", bound=True)
        else:
            _check_signature(self.function, dotted, arguments, "--args / --kwargs")

    def call(self, args: tuple, kwargs: dict, init_args: tuple, init_kwargs: dict) -> Any:
        if self.owner is None:
            return self.function(*args, **kwargs)
        return getattr(self.owner(*init_args, **init_kwargs), self.method)(*args, **kwargs)


def find_callee(module: Any, dotted: str) -> Callee:
    value: Any = module
    parts = dotted.split(".")
    for index, part in enumerate(parts):
        if not hasattr(value, part):
            raise VerifyError(f"{module.__file__} has no `{'.'.join(parts[:index + 1])}`")
        if isinstance(value, type) and index == len(parts) - 1 and not _bound_to_class(value, part):
            function = getattr(value, part)
            if not callable(function):
                break
            return Callee(function, value, part)
        value = getattr(value, part)
    if not callable(value) or isinstance(value, type):
        raise VerifyError(f"`{dotted}` in {module.__file__} is not a function or method")
    return Callee(value)


def _bound_to_class(cls: type, name: str) -> bool:
    """A staticmethod or classmethod: called on the class, no instance needed."""
    return isinstance(inspect.getattr_static(cls, name, None), (staticmethod, classmethod))


def _check_signature(function: Any, shown: str, arguments: CallArguments, options: str, bound: bool = False) -> None:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return  # a builtin or extension: the call itself will tell
    try:
        signature.bind(*((None,) if bound else ()), *arguments.args, **arguments.kwargs)
    except TypeError as error:
        hint = "" if arguments.text else f" (pass them with {options})"
        raise VerifyError(f"cannot call {shown}({arguments.text}): {error}{hint}") from None


def datasets_in(value: Any, is_dataset: Callable[[Any], bool], depth: int = 0) -> List[Tuple[str, Any]]:
    """Every dataset in a returned value, labelled by where it is: ``""`` for the value itself,
    ``[0]``, ``['train']``, ``[1]['x']``."""
    if is_dataset(value):
        return [("", value)]
    if depth >= MAX_DEPTH:
        return []
    if isinstance(value, (tuple, list)):
        items: List[Tuple[Any, Any]] = list(enumerate(value))
    elif isinstance(value, dict):
        items = list(value.items())
    else:
        return []
    return [(f"[{key!r}]{label}", dataset) for key, item in items
            for label, dataset in datasets_in(item, is_dataset, depth + 1)]


def describe(error: BaseException) -> str:
    """An exception in one line: its type, the first line of its message, and where in the user's
    code it was raised (the innermost frame outside Python, TensorFlow and this package)."""
    message = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {message[0]}" if message else type(error).__name__
    where = None
    tb = error.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not _library_file(filename):
            where = f"{Path(filename).name}:{tb.tb_lineno}"
        tb = tb.tb_next
    return f"{text} (at {where})" if where else text


_LIBRARY_PARTS = ("site-packages", "dist-packages", f"{os.sep}lib{os.sep}python", f"{os.sep}tflint_perf{os.sep}")


def _library_file(filename: str) -> bool:
    return filename.startswith("<") or any(part in filename for part in _LIBRARY_PARTS)
