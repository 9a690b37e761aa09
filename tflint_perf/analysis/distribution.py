"""Which Keras models and pipelines a ``tf.distribute`` strategy reads its input for.

A dataset handed to ``strategy.experimental_distribute_dataset`` (or made by
``distribute_datasets_from_function``) is read through the strategy's distributed iterator, which
prefetches onto each device (the distributed-input guide: "tf.distribute adds a prefetch transformation
at the end of the user-provided dataset"). Keras ``fit``/``evaluate`` do the same for a model built
inside a non-default strategy's ``scope()``: the model keeps the strategy, and its data handler
distributes the dataset it is given. So such a pipeline's input already runs ahead of the step.

Only the strategies of ``tf.distribute`` (and TF 1.x's ``tf.contrib.distribute``) count: the default
strategy (``tf.distribute.get_strategy()`` outside any scope) distributes nothing, and DTensor,
Horovod or hand-placed ``tf.device`` code prefetch nothing for the user. A name counts as a strategy
only when every binding of it that reaches the scope is one (the Kaggle idiom that falls back to
``get_strategy()`` off a TPU does not count).
"""

from __future__ import annotations

from functools import cached_property
from typing import Callable, List, Optional, Set, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.model import CallSite, ModuleModel, Place
from tflint_perf.text.walk import walk

_STRATEGY_MODULES = ("tf.distribute.", "tf.contrib.distribute.", "tf.compat.v1.distribute.")
# Strategy classes that hand the user's dataset to no distributed iterator (the base class, and the
# parameter-server strategy, whose `fit` needs a `DatasetCreator` and a coordinator of its own).
_NOT_DISTRIBUTING = frozenset({"Strategy", "StrategyV1", "ParameterServerStrategy", "ParameterServerStrategyV2"})
_RUN_CONFIGS = ("tf.estimator.RunConfig", "tf.compat.v1.estimator.RunConfig", "tf.contrib.learn.RunConfig")
# Estimators and the Keras model converted to one (`tf.keras.estimator.model_to_estimator(..., config=...)`).
_ESTIMATORS = ("tf.estimator.", "tf.compat.v1.estimator.", "tf.contrib.learn.", "keras.estimator.")
_TRAIN_AND_EVALUATE = frozenset({"tf.estimator.train_and_evaluate", "tf.compat.v1.estimator.train_and_evaluate"})


def is_strategy_constructor(name: Optional[str]) -> bool:
    """``tf.distribute.MirroredStrategy``, ``tf.distribute.experimental.TPUStrategy``,
    ``tf.contrib.distribute.MirroredStrategy``...: a class of tf.distribute whose name ends in Strategy."""
    if name is None or not name.startswith(_STRATEGY_MODULES):
        return False
    last = name.rsplit(".", 1)[-1]
    return last.endswith("Strategy") and last not in _NOT_DISTRIBUTING


class StrategyScopes:
    """The ``with <strategy>.scope():`` blocks of one module, and what was built inside them."""

    def __init__(self, model: ModuleModel) -> None:
        self.model = model

    @cached_property
    def _withs(self) -> List[cst.With]:
        if not any(self._scope_call(site.node) for site in self.model.calls):
            return []  # no `x.scope()` call at all: nothing to walk for
        finder = _Withs()
        walk(self.model.module, finder)
        return finder.found

    @cached_property
    def _blocks(self) -> Set[cst.CSTNode]:
        """The bodies of ``with S.scope():`` statements whose ``S`` is a tf.distribute strategy."""
        return {
            with_node.body for with_node in self._withs
            if any(self._strategy_scope(item.item) for item in with_node.items)
        }

    @cached_property
    def _with_bodies(self) -> Set[cst.CSTNode]:
        return {with_node.body for with_node in self._withs}

    @staticmethod
    def _scope_call(node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value == "scope"

    def _strategy_scope(self, item: cst.BaseExpression) -> bool:
        """``strategy.scope()`` (every binding of ``strategy`` reaching it a strategy constructor) or
        ``tf.distribute.MirroredStrategy().scope()``."""
        if not self._scope_call(item):
            return False
        site = self.model.site_of(item)  # type: ignore[arg-type]
        return site is not None and self._is_strategy(item.func.value, site)  # type: ignore[union-attr]

    def _is_strategy(self, value: cst.BaseExpression, site: CallSite) -> bool:
        """``value``, read at ``site``, is a strategy: a constructor call, or a name every binding of which
        that reaches ``site`` is one."""
        made = self.model.reaching_calls(value, site)
        return bool(made) and all(is_strategy_constructor(self.model.call_name(call)) for call in made)

    def estimator_distributes(self, site: CallSite, spec: bool) -> bool:
        """``estimator.train(input_fn=...)`` at ``site``, or (``spec``) a ``TrainSpec(input_fn=...)`` handed
        to ``train_and_evaluate(estimator, spec)``, trains an Estimator whose ``config`` is a ``RunConfig``
        with ``train_distribute`` set to a strategy: the Estimator hands the input function to the
        strategy, whose distributed iterator prefetches onto each device. Every binding of the
        estimator's name that reaches the call must be built so; a config made elsewhere counts as none."""
        if not spec:
            func = site.node.func
            return isinstance(func, cst.Attribute) and self._distributed_estimator(func.value, site)
        runs = [run for run in self.model.calls if self.model.call_name(run.node) in _TRAIN_AND_EVALUATE
                and self._receives(run, site.node)]
        return bool(runs) and all(
            (estimator := argument(run.node, "estimator", 0)) is not None
            and self._distributed_estimator(estimator.value, run) for run in runs)

    def _receives(self, run: CallSite, spec: cst.Call) -> bool:
        """``train_and_evaluate(estimator, spec, ...)`` at ``run`` takes the ``TrainSpec(...)`` call ``spec``,
        written in place or through a name bound to it."""
        given = argument(run.node, "train_spec", 1)
        return given is not None and spec in self.model.reaching_calls(given.value, run)

    def _distributed_estimator(self, value: cst.BaseExpression, site: CallSite) -> bool:
        """``value``, read at ``site``, is an Estimator built with a distributing ``RunConfig``."""
        return self._built_with(value, site, _ESTIMATORS, "config", self._distributing_config)

    def _distributing_config(self, value: cst.BaseExpression, site: CallSite) -> bool:
        return self._built_with(value, site, _RUN_CONFIGS, "train_distribute", self._is_strategy)

    def _built_with(self, value: cst.BaseExpression, site: CallSite, makers: Tuple[str, ...], keyword: str,
                    accepts: Callable[[cst.BaseExpression, CallSite], bool]) -> bool:
        """``value``, read at ``site``, is made (by every binding that reaches it) by a call of one of
        ``makers`` whose ``keyword`` argument ``accepts`` takes."""
        made = self.model.reaching_calls(value, site)
        return bool(made) and all(
            (self.model.call_name(call) or "").startswith(makers)
            and (given := argument(call, keyword, None)) is not None
            and accepts(given.value, self.model.site_of(call) or site)
            for call in made)

    def inside(self, place: Place) -> bool:
        """The place sits in the body of a strategy's ``with ... scope():``."""
        blocks = self._blocks
        return bool(blocks) and any(block in blocks for block in place.blocks)

    def model_distributes(self, site: CallSite) -> bool:
        """``model.fit(ds)`` / ``model.evaluate(ds)`` at ``site`` reads its dataset through a strategy:
        the call sits in a strategy's scope, or every binding of the receiver's name that reaches it
        (``with strategy.scope(): model = build()``) was made in one."""
        if not self._blocks:
            return False
        if self.inside(site.place):
            return True
        func = site.node.func
        receiver = func.value if isinstance(func, cst.Attribute) else None
        if not isinstance(receiver, cst.Name):
            return False
        bindings = self.model.reaching(receiver.value, site.function, site.place, site.lambdas)
        if not bindings:
            return False
        # A `with` body always runs: the last binding made in one that the call's blocks enclose hides
        # the earlier ones (a notebook's `with strategy.scope(): model = ...` rebinding a model built
        # cells before without a strategy).
        for binding in sorted(bindings, key=lambda b: b.place.order, reverse=True):
            if binding.place.order < site.place.order and self._always_runs_before(binding.place, site.place):
                return binding.kind != "param" and self.inside(binding.place)
            if binding.kind == "param" or not self.inside(binding.place):
                return False
        return True

    def _always_runs_before(self, earlier: Place, later: Place) -> bool:
        """``earlier``'s blocks, less the ``with`` bodies it sits in, enclose ``later``: straight-line code."""
        blocks = earlier.blocks
        while blocks and blocks[-1] in self._with_bodies and blocks != later.blocks[:len(blocks)]:
            blocks = blocks[:-1]
        return later.blocks[:len(blocks)] == blocks


class _Withs(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: List[cst.With] = []

    def visit_With(self, node: cst.With) -> None:
        self.found.append(node)
