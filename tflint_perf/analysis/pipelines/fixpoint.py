"""The fixpoint over a module's bodies: every function's summary recomputed until none changes.

Same-file helpers are summarised: what they return (in terms of their parameters, so ``def
augment(ds): return ds.map(f)`` appends ``map`` to whatever the caller passes) and which parameters
they consume. A round interprets the module body, then every function, against the previous round's
summaries and the class attributes as they stand; rounds repeat until nothing changes (at most
_MAX_ROUNDS), so helpers calling helpers, in any order, are followed. A body whose inputs (the
summaries and class attributes it reads, the environment it starts from) did not change is not
interpreted again: its previous outputs are replayed (``Interpretation``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, List, Optional, Tuple, Union

import libcst as cst

from tflint_perf.analysis.model import ClassInfo, FunctionInfo, ModuleModel
from tflint_perf.analysis.pipelines.interpreter import BodyInterpreter
from tflint_perf.analysis.pipelines.values import Consumption, Env, State, Summary, Value

_MAX_ROUNDS = 5


class Fixpoint:
    """``PipelineAnalysis``'s rounds (a part of it: the summaries, class attributes and closures it
    keeps are what every interpretation reads and writes)."""

    # Replay interpretations whose inputs are unchanged (see _run). Off only in tests, which check
    # that it changes nothing.
    replay_unchanged = True

    model: ModuleModel
    _own_consumptions: List[Consumption]
    _own_states: Dict[State, None]
    _summaries: Dict[FunctionInfo, Summary]
    _class_attrs: Dict[Tuple[ClassInfo, str], Value]
    _closures: Dict[FunctionInfo, Env]

    summary_for: Callable[[FunctionInfo], Optional[Summary]]  # AcrossModules'

    def _run(self) -> None:
        # Rounds, as in a plain fixpoint: each interprets the module body, then every function, against
        # the previous round's summaries and the class attributes as they stand, until nothing changes.
        # An interpretation is a deterministic function of what it reads (see Interpretation), so one
        # whose inputs are equal to last round's is not repeated: its record is replayed instead. The
        # confirming round, and any function untouched by what changed, then costs a few comparisons.
        previous_runs: Dict[Optional[FunctionInfo], Interpretation] = {}
        runs: List[Interpretation] = []
        for _ in range(_MAX_ROUNDS):
            previous = (dict(self._summaries), dict(self._class_attrs))
            module_run = self._interpret(None, {}, previous_runs.get(None))
            runs = [module_run]
            summaries: Dict[FunctionInfo, Summary] = {}
            for function in self.model.functions:
                run = self._interpret(function, module_run.result, previous_runs.get(function))
                runs.append(run)
                summaries[function] = run.result  # type: ignore[assignment]
            self._summaries = summaries
            previous_runs = {run.function: run for run in runs}
            if previous == (self._summaries, self._class_attrs):
                break
        # The last round's outputs, in the order that round produced them.
        unique: Dict[Tuple[cst.CSTNode, FrozenSet[State]], Consumption] = {}
        for run in runs:
            self._own_states.update(run.real_states)  # a state seen again keeps its first place
            for consumption in run.consumptions:
                unique.setdefault((consumption.node, consumption.states), consumption)
        self._own_consumptions = list(unique.values())

    def _interpret(self, function: Optional[FunctionInfo], module_env: Env,
                   previous: Optional[Interpretation]) -> Interpretation:
        """Interpret the module body (``function`` None) or a function, or replay ``previous``,
        last round's interpretation of it, when what it would read is unchanged."""
        closure = self._closures.get(function) if function is not None else None
        if previous is not None and self.replay_unchanged and previous.inputs_unchanged(self, module_env, closure):
            self._class_attrs.update(previous.class_attrs_written)
            self._closures.update(previous.closures_written)
            return previous
        if function is None:
            run = BodyInterpreter(self, None, {})
            result: Union[Env, Summary] = run.run_module()
        else:
            env = dict(module_env)
            env.update(closure or {})
            run = BodyInterpreter(self, function, env)
            result = run.run_function()
        if previous is not None and previous.result == result:
            # Keep last round's equal object: the runs that read it then compare by identity.
            result = previous.result
        return Interpretation(
            function=function,
            module_env=module_env,
            closure=closure,
            summaries_read=run.summaries_read,
            class_attrs_read=run.class_attrs_read,
            result=result,
            consumptions=run.consumptions,
            real_states=run.real_states,
            class_attrs_written={key: self._class_attrs.get(key) for key in run.class_attrs_written},
            closures_written=run.closures_written,
        )

    def _effective_summary(self, function: FunctionInfo) -> Optional[Summary]:
        """The summary ``apply`` uses for ``function``: None for none at all and for one that
        returns nothing known and consumes nothing, since applying that has no effect either."""
        summary = self._summaries.get(function)
        if summary is not None and summary.returns is None and not summary.consumptions and not summary.combined:
            return None
        return summary


@dataclass(eq=False)
class Interpretation:
    """One interpretation of the module body (``function`` None) or of a function, in one round.

    Its inputs are all it reads of the analysis' shared state: the environment it starts from
    (the module's, plus the closure for a nested function), the summaries it applies, and the
    class attributes it reads or joins into, as they were before its first access (nothing else
    writes them while it runs). Its outputs are its result (the module's environment or the
    function's summary), the consumptions and concrete states it finds, in order, and the class
    attributes and closures it leaves behind. Equal inputs give equal outputs, so replaying the
    outputs is the same as interpreting again.
    """

    function: Optional[FunctionInfo]
    module_env: Env
    closure: Optional[Env]
    summaries_read: Dict[FunctionInfo, Optional[Summary]]
    class_attrs_read: Dict[Tuple[ClassInfo, str], Value]
    result: Union[Env, Summary]
    consumptions: List[Consumption]
    real_states: Dict[State, None]
    class_attrs_written: Dict[Tuple[ClassInfo, str], Value]
    closures_written: Dict[FunctionInfo, Env]

    def inputs_unchanged(self, analysis: Fixpoint, module_env: Env, closure: Optional[Env]) -> bool:
        # `is` first: unchanged results are kept as the same objects (see Fixpoint._interpret).
        if not (module_env is self.module_env or module_env == self.module_env):
            return False
        if not (closure is self.closure or closure == self.closure):
            return False
        for function, summary in self.summaries_read.items():
            current = analysis.summary_for(function)
            if not (current is summary or current == summary):
                return False
        class_attrs = analysis._class_attrs
        return all(class_attrs.get(key) == value for key, value in self.class_attrs_read.items())

