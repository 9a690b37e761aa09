"""The values the tf.data pipeline interpreter computes, and how they join.

A Dataset value is a set of possible *states*; a state is a source plus the ops applied to it, in
order. ``join`` is the may-analysis' merge of two branches. ``interpreter.py`` computes them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

import libcst as cst

from tflint_perf.analysis.model import ClassInfo, FunctionInfo
from tflint_perf.analysis.purpose import Purpose

MAX_STATES = 32  # a value with more possible states than this becomes unknown
MAX_OPS = 64  # a state keeps its last ops only


@dataclass(frozen=True)
class Source:
    """Where a pipeline starts: a constructor call, or (inside a helper) a parameter."""

    node: cst.CSTNode
    kind: str = "call"  # "call" | "param"
    index: int = 0
    function: Optional[FunctionInfo] = None
    # The source's elements arrive prefetched: a Keras loader that ends in `prefetch` itself, or
    # `Dataset.zip` of pipelines that each end in `prefetch`.
    prefetched: bool = False
    # `tfds.load(name, split=splits)` with a split the source does not spell out (a name bound to
    # `tfds.Split.TRAIN.subsplit(...)`, `list(splits)`): one Dataset, or a list of them that the code
    # unpacks, one per split (`train, val, test = tfds.load(...)`, see `unpacked_splits`).
    split_unread: bool = False


@dataclass(frozen=True)
class Op:
    name: str
    call: cst.Call


@dataclass(frozen=True)
class State:
    source: Source
    ops: Tuple[Op, ...] = ()

    @property
    def is_real(self) -> bool:
        return self.source.kind == "call"

    @property
    def last_call(self) -> cst.Call:
        """The call whose result is this state: the last op, or the source itself."""
        return self.ops[-1].call if self.ops else self.source.node  # type: ignore[return-value]

    def extended(self, op: Op) -> "State":
        return State(self.source, (self.ops + (op,))[-MAX_OPS:])

    def ops_before(self, call: cst.Call) -> Tuple[Op, ...]:
        for index, op in enumerate(self.ops):
            if op.call is call:
                return self.ops[:index]
        return self.ops

    def ops_after(self, call: cst.Call) -> Tuple[Op, ...]:
        for index, op in enumerate(self.ops):
            if op.call is call:
                return self.ops[index + 1:]
        return ()


@dataclass(frozen=True)
class Pipeline:
    states: FrozenSet[State]


def unpacked_splits(value: "Value", count: int) -> Optional[Tuple["Pipeline", ...]]:
    """``a, b, c = tfds.load(name, split=splits)`` where the split is not spelled out: a Dataset is
    never unpacked into names, so the result was a list of splits, one pipeline each (TF 2.0's
    ``tfds.Split.ALL.subsplit(weighted=(80, 10, 10))``). None for anything else."""
    if not isinstance(value, Pipeline) or not value.states:
        return None
    if not all(state.source.split_unread and not state.ops for state in value.states):
        return None
    return tuple(
        Pipeline(frozenset(State(replace(state.source, index=index, split_unread=False)) for state in value.states))
        for index in range(count)
    )


@dataclass(frozen=True)
class TupleValue:
    items: Tuple["Value", ...]


@dataclass(frozen=True)
class Collection:
    """A dict or list of Datasets (``tfds.load`` without ``split=``): any element is a Dataset."""

    states: FrozenSet[State]


@dataclass(frozen=True)
class FunctionRef:
    function: FunctionInfo


@dataclass(frozen=True)
class ClassRef:
    cls: ClassInfo


@dataclass(frozen=True)
class TfdsBuilder:
    node: cst.CSTNode


Value = Union[Pipeline, TupleValue, Collection, FunctionRef, ClassRef, TfdsBuilder, None]
Env = Dict[str, Value]


@dataclass(frozen=True)
class Consumption:
    """A place where a pipeline is iterated: ``model.fit``, a ``for`` loop, ``iter()``..., and what for."""

    node: cst.CSTNode
    kind: str  # "model" | "for" | "iter" | "iterator" | "distribute" | "one-off" | "inspection"
    description: str
    states: FrozenSet[State]
    purpose: Purpose
    role: str = ""  # for kind "model": "fit" | "validation" (fit's validation_data) | "evaluate" | "predict"
    elsewhere: str = ""  # the importing module it happens in, when not in the module checked
    # A tf.distribute strategy reads the pipeline (`experimental_distribute_dataset`, `fit` of a model
    # built in a strategy's scope): its distributed iterator prefetches onto each device.
    distributed: bool = False

    @property
    def where(self) -> str:
        """`` in `train.py` `` for a consumption in another module, else nothing: for messages."""
        return f" in `{self.elsewhere}`" if self.elsewhere else ""

    @property
    def trains_on(self) -> bool:
        """The consumer optimises on these elements: ``fit``'s data or a training loop, not
        validation, ``evaluate`` or ``predict``."""
        return self.purpose is Purpose.TRAINING

    @property
    def fits(self) -> bool:
        """A Keras ``fit`` trains on these elements: training whatever the module's name says
        (``efficient_serving.ipynb`` fits the model it then serves)."""
        return self.kind == "model" and self.role == "fit"


@dataclass(frozen=True)
class Summary:
    returns: Value
    consumptions: Tuple[Consumption, ...]
    # Pipelines built from the parameters that feed a combinator (`choose_from_datasets([ds.take(n),
    # ds.map(augment)], ...)`): read by the combined pipeline, they are pipelines in each caller's terms.
    combined: Tuple[State, ...] = ()


def join(a: Value, b: Value) -> Value:
    if a is None:
        return b
    if b is None or a is b or a == b:
        return a
    if isinstance(a, Pipeline) and isinstance(b, Pipeline):
        states = a.states | b.states
        return Pipeline(states) if len(states) <= MAX_STATES else None
    if isinstance(a, TupleValue) and isinstance(b, TupleValue) and len(a.items) == len(b.items):
        return TupleValue(tuple(join(x, y) for x, y in zip(a.items, b.items)))
    if isinstance(a, Collection) and isinstance(b, Collection):
        return Collection(a.states | b.states)
    return None


def join_envs(a: Env, b: Env) -> Env:
    merged = dict(a)
    for name, value in b.items():
        current = merged.get(name)
        # Most names (every def and class in the module, for a start) are bound to the same object on
        # both sides, and joining a value with itself gives it back.
        merged[name] = current if current is value else join(current, value)
    return merged


def same_env(a: Env, b: Env) -> bool:
    """Equal as environments: a name bound to None (unknown) is the same as an unbound one."""
    return {k: v for k, v in a.items() if v is not None} == {k: v for k, v in b.items() if v is not None}


def maximal(states: Sequence[State]) -> List[State]:
    """The states no other state in ``states`` extends: the ends of the paths, not their prefixes."""
    return [
        state for state in states
        if not any(
            other is not state and other.source == state.source and len(other.ops) > len(state.ops)
            and other.ops[: len(state.ops)] == state.ops
            for other in states
        )
    ]
