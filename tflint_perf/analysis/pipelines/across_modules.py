"""Pipelines across a project's modules: what importers do with pipelines built here, and the
summaries of helpers defined elsewhere.

Down: a call of another first-party module's helper (``make_dataset()``, ``data.load(ds)``) is applied
through that module's own summaries (``summary_for``), computed once per run without knowing its
callers; an import cycle is unknown. Up: the consumptions this module's pipelines get in its importers
(a pipeline returned here and fitted in ``train.py``) are taken from the importers' own analyses, and
theirs from their importers (a pipeline mapped here, batched in an importer, fitted in a third
module), once, when first asked, and only for the states that hold this module's code; an importer that
is test code consumes nothing for training, and is not asked. Outside a project session
(``model.session`` None) there is neither.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.model import FunctionInfo, ModuleModel, module_name
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.pipelines.summaries import inherited_method
from tflint_perf.analysis.pipelines.values import Consumption, State, Summary


class AcrossModules:
    """``PipelineAnalysis``'s dealings with other modules (a part of it: another module's analysis is
    a ``PipelineAnalysis`` too, read through the session)."""

    model: ModuleModel
    _own_consumptions: List[Consumption]
    _own_states: Dict[State, None]
    _from_importers: Optional[Tuple[List[Consumption], Dict[State, None]]]
    _summaries: Dict[FunctionInfo, Summary]
    _consumed_in: Dict[cst.CSTNode, Tuple["AcrossModules", Consumption]]

    _effective_summary: Callable[[FunctionInfo], Optional[Summary]]  # Fixpoint's

    @property
    def consumptions(self) -> List[Consumption]:
        """Where this module's pipelines are iterated, and what for; in a project session also where
        its importers iterate pipelines built (or extended) here."""
        return self._own_consumptions + self._importers_part()[0]

    @property
    def _real_states(self) -> Dict[State, None]:
        return self._importers_part()[1]

    def _importers_part(self) -> Tuple[List[Consumption], Dict[State, None]]:
        """The importers' consumptions of pipelines built here, and every concrete state (own first)."""
        if self._from_importers is None:
            consumptions: List[Consumption] = []
            states = self._own_states
            session = self.model.session
            # Asked again while being computed (an import cycle through the importers): own part only.
            self._from_importers = (consumptions, states)
            if session is not None:
                consumptions, theirs = self._take_from_importers(session)
                if theirs:
                    states = {**self._own_states, **theirs}
            self._from_importers = (consumptions, states)
        return self._from_importers

    def _take_from_importers(self, session) -> Tuple[List[Consumption], Dict[State, None]]:
        consumptions: List[Consumption] = []
        states: Dict[State, None] = {}
        # What importers can take from here: module-level functions (or classes, for methods) that
        # return a pipeline or consume one they are given.
        exported = [function.class_info.name if function.class_info is not None else function.name
                    for function, summary in self._summaries.items()
                    if function.parent is None and (summary.returns is not None or summary.consumptions)]
        if not exported:
            return consumptions, states
        for importer in session.importers(self.model, exported):
            if getattr(importer, "is_test_code", False):
                # `data_provider_test.py` iterating `_provide_custom_dataset(...)` checks what it yields:
                # not a training consumer. What the pipeline is for is left to the other importers (a
                # trainer that extends and prefetches it), or to the pipeline's own content and names.
                continue
            theirs = session.analysis(importer, "pipelines")
            if theirs is None:
                continue
            where = module_name(importer)
            # Their importers' consumptions too: `generate_datasets()` (here an importer) batches what
            # `get_parsed_dataset()` (this module) maps and returns it to a third module that fits it.
            for consumption in theirs.consumptions:
                mine = frozenset(state for state in consumption.states if self._touches(state))
                if mine:
                    consumptions.append(replace(consumption, states=mine, elsewhere=consumption.elsewhere or where))
                    states.update(dict.fromkeys(mine))
                    self._consumed_in[consumption.node] = (theirs, consumption)
        return consumptions, states

    def consumed_in(self, consumption: Consumption) -> Optional[Tuple["AcrossModules", Consumption]]:
        """For an importer's consumption (``consumption.elsewhere``): the importer's analysis, which sees the
        loops and functions around it, and the consumption as recorded there."""
        return self._consumed_in.get(consumption.node) if consumption.elsewhere else None

    def _touches(self, state: State) -> bool:
        """Part of the state (its source or an op) is this module's code."""
        owns = self.model.owns
        return owns(state.source.node) or any(owns(op.call) for op in state.ops)

    def summary_for(self, function: FunctionInfo) -> Optional[Summary]:
        """A function's summary, from its own module's analysis when it is defined elsewhere (None:
        unknown, as for an import cycle)."""
        owner = function.model
        if owner is None or owner is self.model:
            return self._effective_summary(function)
        session = self.model.session
        theirs = session.analysis(owner, "pipelines") if session is not None else None
        return theirs._effective_summary(function) if theirs is not None else None

    def _inherits_pipeline_method(self, func, scope: Optional[FunctionInfo]) -> bool:
        """``obj.method`` is a method this module's class inherits from another module's class, and it
        returns or consumes pipelines."""
        if not self.model.classes or not any(cls.node.bases for cls in self.model.classes.values()):
            return False
        target = inherited_method(self.model, func, scope)
        return target is not None and target.model is not self.model and self.summary_for(target) is not None

    def _calls_imported_pipeline_functions(self) -> bool:
        """In a project session: a call of another module's function that returns or consumes pipelines."""
        session = self.model.session
        if session is None or self.model.path is None:
            return False
        candidates: Dict[str, bool] = {}
        for site in self.model.calls:
            func = site.node.func
            if isinstance(func, cst.Attribute) and self._inherits_pipeline_method(func, site.function):
                return True  # `train_generator.to_dataset(...)`, the method inherited from another module
            root = dotted_text(func)
            local = root.split(".")[0] if root is not None else None
            if local is None or local not in self.model.raw_imports:
                continue
            if local not in candidates:
                module, level, name = self.model.raw_imports[local]
                target = session.project.resolve(self.model.path, module, level, name)
                candidates[local] = target is not None and session.project.mentions_pipelines(target[0])
            if not candidates[local]:
                continue
            target = self.model.effects.resolve_callable(func, site.function)
            if isinstance(target, FunctionInfo) and target.model is not self.model and self.summary_for(target) is not None:
                return True
        return False
