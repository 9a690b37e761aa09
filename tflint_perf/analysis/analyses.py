"""A module's model with its analyses, each built on first use: what rules and other modules query.

The model (``analysis/model.py``) is the one traversal's records and knows none of the analyses; this
class adds them, so an analysis can ask for another (``model.effects`` from the pipeline analysis)
without the model importing any of them. The engine and the project's session build
``AnalysedModule``s; every analysis receives one.
"""

from __future__ import annotations

from functools import cached_property

from tflint_perf.analysis.callgraph import CallGraph
from tflint_perf.analysis.compatibility import CompatibilityChecks
from tflint_perf.analysis.constants import ValueSources
from tflint_perf.analysis.deprecations import module_runs_only_on_tf1
from tflint_perf.analysis.dataset_options import DatasetOptions, dataset_options
from tflint_perf.analysis.effects import EffectAnalysis
from tflint_perf.analysis.distribution import StrategyScopes
from tflint_perf.analysis.element_maps import ElementMaps
from tflint_perf.analysis.files import is_test_module
from tflint_perf.analysis.hotpaths import HotPaths
from tflint_perf.analysis.keras_models import KerasModels
from tflint_perf.analysis.layers import LayerAnalysis
from tflint_perf.analysis.loops import StepLoops
from tflint_perf.analysis.model import ModuleModel
from tflint_perf.analysis.pipelines import PipelineAnalysis
from tflint_perf.analysis.precision import Precision, PrecisionAnalysis


class AnalysedModule(ModuleModel):
    """A ``ModuleModel`` whose analyses are computed lazily, once each."""

    @cached_property
    def call_graph(self) -> CallGraph:
        return CallGraph(self)

    @cached_property
    def compatibility(self) -> CompatibilityChecks:
        return CompatibilityChecks(self)

    @cached_property
    def hot_paths(self) -> HotPaths:
        return HotPaths(self)

    @cached_property
    def element_maps(self) -> ElementMaps:
        return ElementMaps(self)

    @cached_property
    def step_loops(self) -> StepLoops:
        """Which loops repeat work, and how often: one answer per module for every rule asking."""
        return StepLoops(self)

    @cached_property
    def layers(self) -> LayerAnalysis:
        return LayerAnalysis(self)

    @cached_property
    def pipelines(self) -> PipelineAnalysis:
        return PipelineAnalysis(self)

    @cached_property
    def strategy_scopes(self) -> StrategyScopes:
        """The `with <strategy>.scope():` blocks and the models built in them."""
        return StrategyScopes(self)

    @cached_property
    def keras_models(self) -> KerasModels:
        return KerasModels(self)

    @cached_property
    def dataset_options(self) -> DatasetOptions:
        return dataset_options(self.module)

    @cached_property
    def integer_values(self) -> ValueSources:
        return ValueSources(self)

    @cached_property
    def precision(self) -> Precision:
        return PrecisionAnalysis(self).precision

    @cached_property
    def runs_only_on_tf1(self) -> bool:
        return module_runs_only_on_tf1(self)

    @cached_property
    def is_test_code(self) -> bool:
        """The module, at its path in a project session, is test code (``analysis/files.py``); without
        a path nothing says so (a rule asks ``RuleContext.is_test_code``, which knows the file's name)."""
        return self.path is not None and is_test_module(str(self.path), self.module)

    @cached_property
    def effects(self) -> EffectAnalysis:
        return EffectAnalysis(self)
