"""``verify``'s report: per dataset, the timings, the verdict with its interval, and what the elements say.

The text report and the JSON lines (one per dataset and side) name the same things: the call as
made, the seed, every fix applied (``file:row:col CODE message``), the verdict (``verdict``,
``interval``, ``paired_runs``, ``stopped``) and the elements (``identical``, ``same-multiset``:
the same elements in an order that varies between runs, ``same-structure``: values that vary
between runs but the same structure, shapes and dtypes, ``differ``, or ``nondeterministic``: not
even the structure is stable), with the reasons the pipeline varies (``nondeterminism``).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from tflint_perf.faces.harness import nondeterminism as elements
from tflint_perf.faces.harness.verdicts import PairedRuns

NONDETERMINISTIC = "nondeterministic"


@dataclass
class DatasetResult:
    key: str  # "" for a returned dataset, "[0]", "['train']" for one among several
    runs: PairedRuns
    first: List[elements.BatchPrint]  # the original, twice
    second: List[elements.BatchPrint]
    fixed: List[elements.BatchPrint]
    # The most two runs of the original can share given the code's causes of variation: two runs that agree by
    # chance (random draws in a parallel map that happened to finish in the same order) prove nothing more.
    allowed: str = elements.IDENTICAL

    @property
    def stable(self) -> str:
        return elements.agreement(self.first, self.second)

    @property
    def varies(self) -> bool:
        """The original gave different elements on two runs, or its code's causes explain why the fixed one did."""
        return self.stable != elements.IDENTICAL or self.elements in (elements.SAME_MULTISET, elements.SAME_STRUCTURE)

    @property
    def elements(self) -> str:
        """What can be said of before against after, given how far the original agrees with itself."""
        stable = self.stable
        if stable == elements.DIFFER:
            return NONDETERMINISTIC
        versus = elements.agreement(self.first, self.fixed)
        if versus == elements.DIFFER:
            return elements.DIFFER
        if elements.weaker(versus, stable) == stable:
            return stable  # the fix changed nothing the original keeps from run to run
        # The original repeated itself more than its code promises: what the causes leave is what can be compared.
        return versus if elements.weaker(versus, self.allowed) == self.allowed else elements.DIFFER

    def elements_text(self, seed: Optional[int], causes: List[elements.Cause]) -> str:
        count = f"{len(self.first)} batches"
        kind = self.elements
        if kind == elements.IDENTICAL:
            return f"identical ({count})"
        if kind == elements.DIFFER:
            order_only = elements.agreement(self.first, self.fixed) == elements.SAME_MULTISET
            return (f"differ: {elements.first_difference(self.first, self.fixed)}"
                    + ("; the same elements, in another order" if order_only else ""))
        seeded = " even with --seed" if seed is not None else ""
        varies = (f"the original pipeline gives different elements on two runs{seeded}" if self.stable != elements.IDENTICAL else
                  f"the original pipeline can give different elements on two runs{seeded} (two runs agreed by chance)")
        causes = explaining(causes, seed)
        why = "; ".join(cause.text for cause in causes) or (
            "no cause found in the code (random ops the analysis cannot see: in a function passed as an "
            "argument, a py_function or a library)")
        hint = ""
        if seed is None and (not causes or any(cause.seed_fixes for cause in causes)):
            hint = "; --seed would fix the seedable ones"
        if kind == elements.SAME_MULTISET:
            what = f"the same elements in another order ({count})"
        elif kind == elements.SAME_STRUCTURE:
            what = f"the same structure, shapes and dtypes, batch by batch ({count}); values not comparable"
        else:
            what = "nothing comparable: even the structure or shapes vary"
        return f"{what}. Why: {varies}: {why}{hint}"


def explaining(causes: List[elements.Cause], seed: Optional[int]) -> List[elements.Cause]:
    """The causes that can explain a difference between two runs: with a seed, not those it fixes."""
    return [cause for cause in causes if seed is None or not cause.seed_fixes]


@dataclass
class Run:
    target: str
    call: str
    options: Any  # VerifyOptions
    fixes: List[str]
    fixed_files: List[str]
    environment: Dict[str, Any]
    causes: List[elements.Cause]
    sources_replaced: int


def json_lines(run: Run, results: List[DatasetResult]) -> str:
    options = run.options
    lines = []
    for result in results:
        verdict = result.runs.verdict
        for label, times in (("before", result.runs.before), ("after", result.runs.after)):
            median = statistics.median(times)
            record = {
                "target": run.target, "call": run.call, "seed": options.seed, "fixes": run.fixes,
                "fixed_files": run.fixed_files, "dataset": result.key, "variant": label, **run.environment,
                "steps": options.steps, "step_ms": options.step_ms, "batches": len(result.first),
                "median_s": median, "min_s": min(times), "max_s": max(times), "times_s": times,
                "batches_per_s": len(result.first) / median if median > 0 else None,
                "speedup": 1.0 if label == "before" else round(verdict.ratio, 4),
                **verdict.as_json(), "stopped": result.runs.stopped,
                "elements": result.elements, "elements_detail": result.elements_text(options.seed, run.causes),
                # What in the code can make the elements vary (even where these runs happened to agree).
                "nondeterminism": [cause.text for cause in explaining(run.causes, options.seed)],
                "synthetic_sources": run.sources_replaced if options.synthetic else None,
            }
            lines.append(json.dumps(record) + "\n")
    return "".join(lines)


def text_report(run: Run, results: List[DatasetResult]) -> str:
    options, environment = run.options, run.environment
    lines = [f"tflint-perf verify {run.target}",
             f"called {run.call}, " + (f"seed {options.seed}" if options.seed is not None else "no seed"),
             "fixes applied in memory (no file is changed):"]
    lines += [f"  {fix}" for fix in run.fixes]
    rewrites = "; inject_prefetch and map_parallelization off" if options.rewrites_off else ""
    lines.append(f"TensorFlow {environment['tf_version']}, {environment['device']}, {environment['cores']} cores; "
                 f"{options.steps} batches per run with a {options.step_ms:g} ms simulated step; before and after "
                 f"runs interleaved after a warm-up, until the 95% interval of the ratio excludes 1 (at least "
                 f"{options.repeats} pairs) or {options.budget_s:g} s per dataset{rewrites}")
    if options.synthetic:
        lines.append(f"--synthetic: {run.sources_replaced} in-memory source(s) replaced by random data of the same "
                     "shapes and dtypes" if run.sources_replaced else
                     "--synthetic: the pipeline has no in-memory source (from_tensor_slices / from_tensors); "
                     "its data is unchanged")
    if len(results) > 1 or any(result.key for result in results):
        lines.append(f"datasets returned: {', '.join(result.key for result in results)}")
    for result in results:
        if result.key:
            lines.append(f"dataset {result.key}")
        lines.append(f"{'':8}{'median s':>10}  {'min-max s':>15}  {'batches/s':>10}")
        for label, times in (("before", result.runs.before), ("after", result.runs.after)):
            median = statistics.median(times)
            rate = len(result.first) / median if median > 0 else float("nan")
            lines.append(f"{label:8}{median:>10.3f}  {min(times):>7.3f}-{max(times):<7.3f}  {rate:>10.1f}")
        lines.append(f"speedup: {result.runs.verdict.text}; stopped: {result.runs.stopped}")
        lines.append(f"elements: {result.elements_text(options.seed, run.causes)}")
    return "\n".join(lines) + "\n"
