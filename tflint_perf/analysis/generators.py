"""What the generator of a ``Dataset.from_generator`` does: only slice arrays already in memory?

``in_memory_slices`` answers for ``from_generator(gen, ...)``: when ``gen`` is a same-file ``def``
(no parameters, no ``args=``) whose whole body is one ``for`` loop that yields slices of named
containers and nothing else::

    for i in range(len(x)): yield x[i], y[i]
    for a, b in zip(x, y): yield a, b
    for row in x: yield {"features": row}

it returns the containers and the structure ``from_tensor_slices`` would take (``(x, y)``). Any other
statement (reading a file, decoding, shuffling indices, arithmetic, ``while True``) means the
generator does Python work per element or streams, and the answer is None.

A container must be *rectangular*, or ``from_tensor_slices`` cannot take it: that is known when the
names are bound to NumPy calls, ``.values`` / ``.to_numpy()`` / ``.astype()``, or a
``keras.datasets`` loader, or when the call declares fully static shapes (``output_signature`` /
``output_shapes`` without ``None``). A declared ``None`` dimension (variable-length items, the
reason to use a generator) or ``np.memmap`` / ``np.load(mmap_mode=...)`` (data deliberately kept out
of memory) gives None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument, keyword_argument
from tflint_perf.analysis.model import Binding, FunctionInfo, ModuleModel
from tflint_perf.analysis.names import dotted_text

_ARRAY_METHODS = frozenset({"astype", "to_numpy", "reshape", "copy"})
_OUT_OF_MEMORY = frozenset({"numpy.memmap", "numpy.lib.format.open_memmap"})


@dataclass(frozen=True)
class GeneratorSlices:
    generator: FunctionInfo
    structure: str  # the argument from_tensor_slices would take, e.g. "(x, y)"
    containers: Tuple[str, ...]  # the names sliced, in order of appearance
    evidence: str  # "arrays" | "signature": how the containers are known to be rectangular


def in_memory_slices(model: ModuleModel, call: cst.Call, scope: Optional[FunctionInfo]) -> Optional[GeneratorSlices]:
    """For ``Dataset.from_generator(gen, ...)`` at ``call``: what ``gen`` slices, or None (see module doc)."""
    generator = _plain_generator(model, call, scope) if len(call.args) <= 4 else None
    if generator is None:
        return None
    shape = _only_loop(generator.node)
    if shape is None:
        return None
    loop, aliases = shape
    elements = _loop_elements(loop, aliases)
    if elements is None:
        return None
    yielded = _only_yield(loop)
    if yielded is None:
        return None
    used: List[str] = []
    structure = _structure(model, yielded, elements, used, aliases)
    if structure is None or not used:
        return None
    shapes = declared_shapes(call)
    if shapes == "dynamic":
        return None  # variable-length items: the reason to use a generator
    bindings = [model.scope_bindings(name, generator)[1] for name in used]
    if any(_out_of_memory(model, b) for found in bindings for b in found):
        return None
    if all(found and all(_binds_array(model, b) for b in found) for found in bindings):
        evidence = "arrays"
    elif shapes == "static":
        evidence = "signature"
    else:
        return None
    return GeneratorSlices(generator, structure, tuple(dict.fromkeys(used)), evidence)


def _plain_generator(model: ModuleModel, call: cst.Call, scope: Optional[FunctionInfo]) -> Optional[FunctionInfo]:
    """The generator of ``from_generator(gen, ...)`` at ``call`` when it is a same-file, undecorated,
    module- or function-level ``def`` called without arguments (no ``args=``, no parameters)."""
    if keyword_argument(call, "args") is not None or any(a.star for a in call.args):
        return None
    first = argument(call, "generator", 0)
    if first is None or not isinstance(first.value, cst.Name):
        return None
    generator = model.lookup_function(first.value.value, scope)
    if generator is None or generator.node.decorators or generator.class_info is not None:
        return None
    params = generator.node.params
    if params.params or params.posonly_params or params.kwonly_params or isinstance(params.star_arg, cst.Param) or params.star_kwarg:
        return None
    return generator


def draws_only(model: ModuleModel, call: cst.Call, scope: Optional[FunctionInfo]) -> bool:
    """``Dataset.from_generator(gen, ...)`` at ``call`` makes up its elements: ``gen`` is a same-file
    ``def`` without parameters whose whole body is one loop that yields NumPy random draws or constant
    arrays and nothing else (``while True: yield np.random.rand(4)``): no input to read, a few
    microseconds of work."""
    generator = _plain_generator(model, call, scope)
    if generator is None:
        return False
    body = generator.node.body.body if isinstance(generator.node.body, cst.IndentedBlock) else ()
    statements = [s for s in body if not _is_docstring(s)]
    if len(statements) != 1 or not isinstance(statements[0], (cst.For, cst.While)) or statements[0].orelse:
        return False
    yielded = _only_yield(statements[0])
    return yielded is not None and _made_up(model, yielded)


def _made_up(model: ModuleModel, expr: cst.CSTNode) -> bool:
    """Built from literals, names and NumPy random draws or constant arrays only (no rows read by subscript)."""
    stack: List[cst.CSTNode] = [expr]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            name = model.call_name(current) or ""
            if not (name.startswith("numpy.random.") or name in _CONSTANT_ARRAYS):
                return False
            stack.extend(arg.value for arg in current.args)
            continue
        if isinstance(current, (cst.BinaryOperation, cst.Lambda, cst.ListComp, cst.DictComp, cst.GeneratorExp,
                                cst.SetComp, cst.Await, cst.Yield, cst.Subscript)):
            return False  # a subscript reads rows of data (``TOKENS[i]``): the generator's elements are input
        stack.extend(current.children)
    return True


_CONSTANT_ARRAYS = frozenset({"numpy.zeros", "numpy.ones", "numpy.full", "numpy.array", "numpy.asarray"})


# -- the generator's body ---------------------------------------------------------------------
def _only_loop(node: cst.FunctionDef) -> Optional[Tuple[cst.For, Dict[str, str]]]:
    """The generator's one ``for`` loop and the aliases bound before it, when nothing else runs.

    Before the loop the body may only name the arrays again (``inputs = X_train``: the loop then
    slices ``X_train``) and guard them (``if len(inputs) != len(targets): raise ...``, ``assert``):
    a guard that only raises does no work per element, and the elements are the same."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    statements = [s for s in body if not _is_docstring(s)]
    if not statements or not isinstance(statements[-1], cst.For):
        return None
    aliases: Dict[str, str] = {}
    for statement in statements[:-1]:
        if _raising_guard(statement):
            continue
        alias = _alias(statement)
        if alias is None or alias[0] in aliases:
            return None
        aliases[alias[0]] = aliases.get(alias[1], alias[1])
    loop = statements[-1]
    if loop.orelse is not None or loop.asynchronous is not None:
        return None
    return loop, aliases


def _alias(statement: cst.CSTNode) -> Optional[Tuple[str, str]]:
    """``inputs = X_train``: (new name, the name it stands for)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if not isinstance(small, cst.Assign) or len(small.targets) != 1 or not isinstance(small.value, cst.Name):
        return None
    target = small.targets[0].target
    return (target.value, small.value.value) if isinstance(target, cst.Name) else None


def _raising_guard(statement: cst.CSTNode) -> bool:
    """``if <test>: raise ...`` (no ``else``) or ``assert <test>``: stops the generator or lets it run as is."""
    if isinstance(statement, cst.SimpleStatementLine):
        return all(isinstance(small, cst.Assert) for small in statement.body)
    if not isinstance(statement, cst.If) or statement.orelse is not None:
        return False
    inner = statement.body.body
    lines = inner if isinstance(statement.body, cst.IndentedBlock) else (statement.body,)
    return bool(lines) and all(
        isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
        and all(isinstance(small, cst.Raise) for small in line.body)
        for line in lines
    )


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString)
    )


def _only_yield(loop: "cst.For | cst.While") -> Optional[cst.BaseExpression]:
    body = loop.body.body
    if len(body) != 1 or not isinstance(body[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return None
    small = body[0].body
    if len(small) != 1 or not isinstance(small[0], cst.Expr) or not isinstance(small[0].value, cst.Yield):
        return None
    value = small[0].value.value
    return value if isinstance(value, cst.BaseExpression) else None  # `yield from` is a From node


# What each loop name stands for: ("index", None) for a range index, ("row", container) for a row.
Elements = Dict[str, Tuple[str, Optional[str]]]


def _loop_elements(loop: cst.For, aliases: Dict[str, str]) -> Optional[Elements]:
    it, target = loop.iter, loop.target
    if isinstance(it, cst.Name) and isinstance(target, cst.Name):
        return {target.value: ("row", aliases.get(it.value, it.value))}
    if not isinstance(it, cst.Call) or not isinstance(it.func, cst.Name) or any(a.keyword or a.star for a in it.args):
        return None
    if it.func.value == "range" and len(it.args) == 1 and isinstance(target, cst.Name):
        if _length_of_name(it.args[0].value) is None:
            return None
        return {target.value: ("index", None)}
    if it.func.value == "zip" and it.args and isinstance(target, cst.Tuple) and len(target.elements) == len(it.args):
        elements: Elements = {}
        for element, arg in zip(target.elements, it.args):
            if not isinstance(element.value, cst.Name) or not isinstance(arg.value, cst.Name):
                return None
            elements[element.value.value] = ("row", aliases.get(arg.value.value, arg.value.value))
        return elements
    return None


def _length_of_name(expr: cst.BaseExpression) -> Optional[str]:
    """``len(x)`` or ``x.shape[0]``: the name whose length bounds the loop."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len":
        if len(expr.args) == 1 and isinstance(expr.args[0].value, cst.Name):
            return expr.args[0].value.value
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
        if isinstance(expr.value.value, cst.Name) and len(expr.slice) == 1:
            index = expr.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) and index.value.value == "0":
                return expr.value.value.value
    return None


def _structure(model: ModuleModel, expr: cst.BaseExpression, elements: Elements, used: List[str],
               aliases: Dict[str, str]) -> Optional[str]:
    if isinstance(expr, cst.Tuple):
        parts = [_structure(model, e.value, elements, used, aliases) if not isinstance(e, cst.StarredElement) else None
                 for e in expr.elements]
        if not parts or any(p is None for p in parts):
            return None
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"  # type: ignore[arg-type]
    if isinstance(expr, cst.Dict):
        items = []
        for element in expr.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                return None
            part = _structure(model, element.value, elements, used, aliases)
            if part is None:
                return None
            items.append(f"{element.key.value}: {part}")
        return "{" + ", ".join(items) + "}" if items else None
    if isinstance(expr, cst.Name):
        kind = elements.get(expr.value)
        if kind is None or kind[0] != "row":
            return None
        used.append(kind[1])  # type: ignore[arg-type]
        return kind[1]
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if not isinstance(index, cst.Index) or not isinstance(index.value, cst.Name):
            return None
        if elements.get(index.value.value, ("", None))[0] != "index" or expr.value.value in elements:
            return None
        container = aliases.get(expr.value.value, expr.value.value)
        used.append(container)
        return container
    return None


# -- what the containers are ------------------------------------------------------------------
def _binds_array(model: ModuleModel, binding: Binding) -> bool:
    value = binding.value
    if binding.kind == "unpack" and isinstance(value, cst.Call):
        return _dataset_loader(model, value)
    if binding.kind != "assign" or value is None:
        return False
    if isinstance(value, cst.Attribute) and value.attr.value == "values":
        return True
    if isinstance(value, cst.Call):
        name = model.call_name(value)
        if name is not None:
            return name.startswith("numpy.") and name not in _OUT_OF_MEMORY and not _object_dtype(value)
        return isinstance(value.func, cst.Attribute) and value.func.attr.value in _ARRAY_METHODS
    return False


_LOADER = re.compile(r"load_(?:\w+_)?(?:data|dataset)")
# Loaders of text corpora return token sequences of varying length (``imdb.load_data`` gives object
# arrays of lists): not rectangular, whatever the loader is called.
_TEXT_DATA = re.compile(r"imdb|reuters|ptb|wmt|text|word|sentence|corpus|nietzsche|mahoney|translat")


def _dataset_loader(model: ModuleModel, call: cst.Call) -> bool:
    """``(x_train, y_train), _ = keras.datasets.mnist.load_data()``, ``X_train, y_train, X_test, y_test =
    tl.files.load_cifar10_dataset(...)``: a library's dataset loader, unpacked into its splits.

    The signal is the convention that ``keras.datasets`` set and other libraries follow: a function of an
    imported module (not one defined here, whose body the analysis could read instead) named
    ``load_data`` / ``load_<name>_dataset`` / ``load_<name>_data``, whose result is unpacked, returns the
    dataset as in-memory NumPy arrays, one per split. Text corpora are the exception (their rows are
    token lists of varying length), so a loader whose dotted name names one is not trusted."""
    dotted = dotted_text(call.func)
    if dotted is None:
        return False
    root = dotted.split(".")[0]
    if not model.imports.is_bound(root) or root in model.module_functions:
        return False
    leaf = dotted.rsplit(".", 1)[1]
    return _LOADER.fullmatch(leaf) is not None and _TEXT_DATA.search(dotted.lower()) is None


def _object_dtype(call: cst.Call) -> bool:
    """``np.array(sequences, dtype=object)``: ragged rows, not a rectangular array."""
    dtype = keyword_argument(call, "dtype")
    return dtype is not None and (
        (isinstance(dtype.value, cst.Name) and dtype.value.value == "object")
        or (isinstance(dtype.value, cst.Attribute) and dtype.value.attr.value in ("object_", "object"))
        or (isinstance(dtype.value, cst.SimpleString) and "O" in dtype.value.value)
    )


def _out_of_memory(model: ModuleModel, binding: Binding) -> bool:
    value = binding.value
    if not isinstance(value, cst.Call):
        return False
    name = model.call_name(value)
    return name in _OUT_OF_MEMORY or (name == "numpy.load" and keyword_argument(value, "mmap_mode") is not None)


def declared_shapes(call: cst.Call) -> str:
    """"static" when every declared shape is fully known, "dynamic" when one has a ``None``
    (or ``-1``), "unknown" otherwise (no shapes declared, or shapes the analysis cannot read)."""
    declared = keyword_argument(call, "output_signature") or keyword_argument(call, "output_shapes")
    if declared is None:
        positional = argument(call, "output_shapes", 2)
        declared = positional if positional is not None and positional.keyword is None else None
    if declared is None:
        return "unknown"
    shapes: List[cst.BaseExpression] = []
    if not _collect_shapes(declared.value, shapes, keyword_argument(call, "output_signature") is not None):
        return _has_none(declared.value)
    if any(_has_none(shape) == "dynamic" for shape in shapes):
        return "dynamic"
    return "static" if all(_static_shape(shape) for shape in shapes) else "unknown"


def _collect_shapes(expr: cst.BaseExpression, shapes: List[cst.BaseExpression], specs: bool) -> bool:
    """Gather the shape expressions of a signature (TensorSpecs) or of output_shapes (tuples)."""
    if specs:
        if isinstance(expr, (cst.Tuple, cst.List)):
            return all(_collect_shapes(e.value, shapes, specs) for e in expr.elements)
        if isinstance(expr, cst.Dict):
            return all(isinstance(e, cst.DictElement) and _collect_shapes(e.value, shapes, specs) for e in expr.elements)
        if isinstance(expr, cst.Call) and _leaf(expr.func) == "TensorSpec":
            shape = argument(expr, "shape", 0)
            if shape is None:
                return False
            shapes.append(shape.value)
            return True
        return False
    if isinstance(expr, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _collect_shapes(e.value, shapes, specs) for e in expr.elements)
    if isinstance(expr, (cst.Tuple, cst.List)) and expr.elements and all(
        isinstance(e.value, (cst.Tuple, cst.List, cst.Call)) for e in expr.elements
    ):
        return all(_collect_shapes(e.value, shapes, specs) for e in expr.elements)
    shapes.append(expr)
    return True


def _static_shape(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call) and _leaf(expr.func) == "TensorShape":
        return bool(expr.args) and _static_shape(expr.args[0].value)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(isinstance(e.value, cst.Integer) for e in expr.elements)
    return False


def _has_none(expr: cst.CSTNode) -> str:
    stack: List[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value == "None":
            return "dynamic"
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return "dynamic"
        stack.extend(node.children)
    return "unknown"


def _leaf(func: cst.BaseExpression) -> Optional[str]:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None
