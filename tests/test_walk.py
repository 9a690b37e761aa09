"""The fast traversal (``analysis/walk.py``) against LibCST's own ``node.visit`` on real code.

The collector runs on ``walk``; if ``walk`` ever missed a node, entered one twice or changed the
order, every rule would silently see a different module. These tests compare the two traversals on
the repository's own sources, every fixture and rule example, a few standard-library modules and a
file of unusual syntax, both hook by hook and by what the real collector records.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any, Dict, List

import libcst as cst
import pytest

from tests.conftest import FIXTURES, REPO
from tflint_perf.text import walk as walk_module
from tflint_perf.analysis.model import _Collector
from tflint_perf.text.walk import walk
from tflint_perf.rules import all_rules

UNUSUAL = '''
import tensorflow as tf
from . import sibling
from tensorflow.keras import layers as L, models

@tf.function(jit_compile=decide())
def step(x, /, *args, y=lambda z=f(): g(z), k: ann() = 1, **kw) -> h():
    global counter
    for i, (a, b) in enumerate(zip(x, y)):
        while cond(i):
            if (n := next_value()) > 3:
                break
            elif other(): continue
        else:
            pass
    async def inner():
        async with ctx() as c, other():
            async for item in aiter_(c):
                await item.process(f"{item!r:>{width()}} {call(1)}")
    try:
        risky()
    except ValueError as e:
        handle(e)
    else:
        fine()
    finally:
        cleanup()
    match command():
        case [x, y, *rest] if guard(x):
            act(x)
        case {"k": v, **others}:
            act(v)
        case Point(x=0, y=yy) | None:
            act(yy)
        case _:
            pass
    return [f(v) for v in values() if p(v)], {k: g(k) for k in keys()}, (h(z) for z in zs())

class Model(tf.keras.Model, metaclass=meta()):
    attr: int = compute()
    def call(self, x):
        self.dense = tf.keras.layers.Dense(10)(x); del x
        x += one(); assert check(x), msg()
        with open(p()) as fh: data = fh.read()
        print(*args, **kwargs)
        gen = lambda: (yield)
        nonlocal_thing = [*a(), *b()]
        raise Error(x) from cause()

x[1:f():g(), ...]; a if b() else c()
not f() and g() or h(); -x ** y @ z
s = "implicit" "concat" f"{q()}"
'''


def _corpus() -> List[str]:
    texts = [UNUSUAL]
    texts += [path.read_text(encoding="utf-8") for path in sorted((REPO / "tflint_perf").rglob("*.py"))]
    texts += [path.read_text(encoding="utf-8") for path in sorted(FIXTURES.glob("*.py"))]
    for rule in all_rules():
        if not rule.input_error:  # their examples are files that do not parse or decode
            texts += [example.code for example in list(rule.valid) + list(rule.invalid)]
    stdlib = Path(dataclasses.__file__).parent
    for name in ("dataclasses.py", "argparse.py", "asyncio/base_events.py", "json/decoder.py"):
        if (stdlib / name).is_file():
            texts.append((stdlib / name).read_text(encoding="utf-8"))
    return texts


CORPUS = _corpus()


class _Trace(cst.CSTVisitor):
    """A hook for every node type and every non-trivia field, each logging its call."""

    def __init__(self) -> None:
        super().__init__()
        self.log: List[tuple] = []


def _add_hooks() -> None:
    def hook(kind: str, name: str):
        return lambda self, node: self.log.append((kind, name, id(node)))

    def field_hook(kind: str, name: str, field: str):
        # Around an empty field the two may differ (documented in walk()); nothing can be inside it.
        return lambda self, node: getattr(node, field) is None or self.log.append((kind, name, id(node)))

    for value in vars(cst).values():
        if not (isinstance(value, type) and issubclass(value, cst.CSTNode) and dataclasses.is_dataclass(value)):
            continue
        if issubclass(value, walk_module._TRIVIA):
            continue  # never entered by `walk`, and nothing the analysis needs lives there
        kind = value.__name__
        setattr(_Trace, f"visit_{kind}", hook("visit", kind))
        setattr(_Trace, f"leave_{kind}", hook("leave", kind))
        for field in dataclasses.fields(value):
            if not walk_module._only_trivia(field.type):
                label = f"{kind}.{field.name}"
                setattr(_Trace, f"visit_{kind}_{field.name}", field_hook("enter", label, field.name))
                setattr(_Trace, f"leave_{kind}_{field.name}", field_hook("exit", label, field.name))


_add_hooks()


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_walk_calls_the_same_hooks_in_the_same_order_as_libcst(index):
    module = cst.parse_module(CORPUS[index])
    reference, fast = _Trace(), _Trace()
    module.visit(reference)
    walk(module, fast)
    assert fast.log == reference.log


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_the_collector_records_the_same_module_either_way(index):
    module = cst.parse_module(CORPUS[index])
    reference, fast = _Collector(), _Collector()
    module.visit(reference)
    walk(module, fast)
    assert _shape(vars(fast), {}) == _shape(vars(reference), {})


@pytest.mark.parametrize("index", range(0, len(CORPUS), 7))
def test_node_ids_are_every_node_children_reaches(index):
    # A project session tells a module's findings from another module's by these ids (ModuleModel.owns).
    module = cst.parse_module(CORPUS[index])
    reference, stack = set(), [module]
    while stack:
        node = stack.pop()
        reference.add(id(node))
        stack.extend(node.children)
    assert walk_module.node_ids(module) == reference


def test_walk_honours_a_visit_hook_that_returns_false():
    class NoLambdas(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.calls: List[str] = []

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> None:
            self.calls.append(cst.Module([]).code_for_node(node.func))

    module = cst.parse_module("f(lambda: g())\nh()\n")
    reference, fast = NoLambdas(), NoLambdas()
    module.visit(reference)
    walk(module, fast)
    assert fast.calls == reference.calls == ["f", "h"]


def test_a_visitor_that_overrides_the_dispatch_itself_gets_libcsts_traversal():
    class CountsEverything(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def on_visit(self, node: cst.CSTNode) -> bool:
            self.count += 1
            return True

    module = cst.parse_module("x = f(a, b)  # comment\n")
    reference, fast = CountsEverything(), CountsEverything()
    module.visit(reference)
    walk(module, fast)
    assert fast.count == reference.count


def _shape(value: Any, seen: Dict[int, int]) -> Any:
    """A comparable picture of the collector's records: nodes by identity, objects by their fields."""
    if isinstance(value, cst.CSTNode):
        return ("node", id(value))
    if isinstance(value, dict):
        return tuple((_shape(k, seen), _shape(v, seen)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_shape(item, seen) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_shape(item, seen) for item in value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if id(value) in seen:
        return ("ref", seen[id(value)])
    seen[id(value)] = len(seen)
    fields = vars(value) if hasattr(value, "__dict__") else {s: getattr(value, s) for s in value.__slots__}
    return (type(value).__name__, _shape(fields, seen))


def test_the_corpus_has_real_code_in_it():
    assert len(CORPUS) > 20 and sum(text.count("\n") for text in CORPUS) > 5000, sys.version


@pytest.mark.parametrize("index", range(0, len(CORPUS), 7))
def test_a_models_own_node_ids_are_its_whole_tree_even_when_statements_are_shared(index):
    # ModuleModel.owns reads the ids statement by statement, remembered by the statement's identity for the
    # path's last tree (an incremental re-parse keeps unchanged statements as the same objects): the set is
    # still exactly the tree's.
    from tflint_perf.analysis.model import module_node_ids

    path = Path(f"/nowhere/module_{index}.py")
    module = cst.parse_module(CORPUS[index])
    assert module_node_ids(module, path) == walk_module.node_ids(module)
    # An edit of the end: the other statements are the same objects in the new tree.
    edited = cst.parse_module(CORPUS[index] + "\nedited = 1\n")
    reused = module.with_changes(body=[*module.body, edited.body[-1]], footer=edited.footer)
    assert module_node_ids(reused, path) == walk_module.node_ids(reused)
    assert id(edited.body[-1]) in module_node_ids(reused, path)
    # Another tree of the same path (a fresh parse): none of the first tree's nodes are its.
    again = cst.parse_module(CORPUS[index])
    ids = module_node_ids(again, path)
    assert ids == walk_module.node_ids(again) and not ids & walk_module.node_ids(module)
