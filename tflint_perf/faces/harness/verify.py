"""``tflint-perf verify FILE::FUNCTION``: the user's own pipelines, before and after the fixes.

The one command that runs user code. It imports FILE as the project runs it, with the fixes
``check`` finds in every first-party module the import reaches applied in memory
(harness/project_imports.py), calls FUNCTION (or ``Class.method``, harness/targets.py) on each
side with ``--args``/``--kwargs`` (harness/call_arguments.py), and verifies every dataset it
returns: the elements of both sides compared (harness/nondeterminism.py says why a pipeline varies
between runs and compares what still can be), then before and after runs interleaved in pairs
until the ratio's interval excludes 1 or the time budget ends (harness/verdicts.py). ``--seed``
seeds TensorFlow, NumPy and Python before every call. No file on disk is changed. A function that
cannot be imported, called or iterated is reported in one line.
"""

from __future__ import annotations

import ast
import contextlib
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, List, Optional, Tuple

from tflint_perf.checking.workspace import workspace_for
from tflint_perf.faces.harness import nondeterminism as elements
from tflint_perf.faces.harness.call_arguments import CallArguments
from tflint_perf.faces.harness.dependency import import_tensorflow
from tflint_perf.faces.harness.project_imports import (
    Side, fix_line, fixed_modules, layout_of, sides, unsafe_fixes_left,
)
from tflint_perf.faces.harness.synthetic import synthetic_sources
from tflint_perf.faces.harness.targets import Callee, Target, VerifyError, datasets_in, describe, find_callee, parse_target
from tflint_perf.faces.harness.verdicts import PairedRuns, run_until_decided
from tflint_perf.faces.harness.verify_report import DatasetResult, Run, explaining, json_lines, text_report
from tflint_perf.text.source import SourceError, SourceFile

__all__ = ["VerifyError", "VerifyOptions", "describe", "verify"]


@dataclass(frozen=True)
class VerifyOptions:
    steps: int = 50
    step_ms: float = 10.0
    repeats: int = 5  # paired runs at least, before a verdict may stop the runs
    max_runs: int = 30  # paired runs at most
    budget_s: float = 60.0  # per dataset: no new pair starts after this many seconds of pairs
    synthetic: bool = False
    unsafe_fixes: bool = False
    rewrites_off: bool = False
    as_json: bool = False
    arguments: CallArguments = field(default_factory=CallArguments)
    init_arguments: CallArguments = field(default_factory=CallArguments)
    seed: Optional[int] = None


def check_defined(path: Path, dotted: str) -> None:
    """Fail before running any code when the file is unreadable or never binds the target's first name."""
    try:
        text = SourceFile.decode(path.read_bytes()).text
    except OSError as error:
        raise VerifyError(f"{path}: cannot read: {error.strerror or error}") from None
    except SourceError as error:
        raise VerifyError(f"{path}: {error}") from None
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        raise VerifyError(f"{path}: syntax error at line {error.lineno}: {error.msg}") from None
    names = set()
    for node in ast.walk(tree):  # any binding anywhere counts: a wrong guess only defers the error to runtime
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return  # a star import may bind anything
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    if dotted.split(".")[0] not in names:
        raise VerifyError(f"{path} has no `{dotted}`")


class Pipeline:
    """One side (before or after): calls the target and drains ``steps`` batches of one of its datasets."""

    def __init__(self, tf, callee: Callee, options: VerifyOptions, label: str, side: Side, call: str) -> None:
        self.tf, self.callee, self.options, self.label = tf, callee, options, label
        self.side, self.call = side, call
        self.sources_replaced = 0

    def datasets(self) -> List[Tuple[str, Any]]:
        """Every dataset one call returns, by position or key; call it inside ``side.active()``."""
        tf = self.tf
        counter = [0]
        context = synthetic_sources(tf, counter) if self.options.synthetic else contextlib.nullcontext()
        seed = self.options.seed
        if seed is not None:
            seed_everything(tf, seed)
        args, kwargs = self.options.arguments.materialise(tf, seed or 0)
        init_args, init_kwargs = self.options.init_arguments.materialise(tf, (seed or 0) + 1)
        with context:
            try:
                value = self.callee.call(args, kwargs, init_args, init_kwargs)
            except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: one line, not a traceback
                raise VerifyError(f"calling {self.call} ({self.label}) failed: {describe(error)}") from None
        self.sources_replaced = counter[0]
        found = datasets_in(value, lambda item: isinstance(item, tf.data.Dataset))
        if not found:
            raise VerifyError(f"{self.call} returned {type(value).__name__} holding no tf.data.Dataset")
        return found

    def dataset(self, key: str):
        for label, dataset in self.datasets():
            if label == key:
                break
        else:
            raise VerifyError(f"{self.call} ({self.label}) returned no dataset at {key or 'the top'}")
        if self.options.rewrites_off:
            dataset_options = self.tf.data.Options()
            dataset_options.experimental_optimization.inject_prefetch = False
            dataset_options.experimental_optimization.map_parallelization = False
            dataset = dataset.with_options(dataset_options)
        return dataset.take(self.options.steps)

    def drain(self, key: str, keep: bool) -> Tuple[float, List[elements.BatchPrint]]:
        """Time ``steps`` batches with the simulated step; with ``keep``, fingerprint them instead
        (untimed: hashing large batches would distort the timing)."""
        with self.side.active():
            dataset = self.dataset(key)
            prints = []
            pause = 0.0 if keep else self.options.step_ms / 1000
            start = time.perf_counter()
            try:
                for batch in dataset:
                    if keep:
                        prints.append(elements.batch_print(self.tf, batch))
                    if pause:
                        time.sleep(pause)  # the simulated training step
            except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: one line, not a traceback
                raise VerifyError(f"iterating the {self.label} pipeline{_named(key)} failed: "
                                  f"{describe(error)}") from None
            return time.perf_counter() - start, prints


def _named(key: str) -> str:
    return f" {key}" if key else ""


def seed_everything(tf, seed: int) -> None:
    """TensorFlow's global seed (which also seeds every unseeded ``shuffle`` and random op, in the
    order they are created), NumPy's and Python's."""
    import numpy as np

    tf.random.set_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def measure(before: Pipeline, after: Pipeline, key: str, options: VerifyOptions, cores: int, progress
            ) -> DatasetResult:
    """Elements from untimed runs (the original twice, to see whether it varies between runs), a
    warm-up each, then interleaved pairs (which side goes first alternates) until a verdict."""
    name = _named(key)
    progress(f"reading the elements of both pipelines{name}")
    _, first = before.drain(key, keep=True)
    _, fixed = after.drain(key, keep=True)
    _, second = before.drain(key, keep=True)
    for pipeline in (before, after):
        progress(f"{pipeline.label}{name}: warm-up")
        pipeline.drain(key, keep=False)

    def run_pair(index: int) -> Tuple[float, float]:
        progress(f"paired run {index + 1}{name}")
        if index % 2:
            new, _ = after.drain(key, keep=False)
            old, _ = before.drain(key, keep=False)
        else:
            old, _ = before.drain(key, keep=False)
            new, _ = after.drain(key, keep=False)
        return old, new

    runs: PairedRuns = run_until_decided(run_pair, cores, options.repeats, max(options.max_runs, options.repeats),
                                         options.budget_s)
    return DatasetResult(key, runs, first, second, fixed)


def verify(target_text: str, options: VerifyOptions, out=None, err=None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    target: Target = parse_target(target_text)
    check_defined(target.path, target.dotted)
    layout = layout_of(target.path)
    fixed = fixed_modules(layout, options.unsafe_fixes)
    fixes = [fix_line(layout, module, d) for module in fixed for d in module.fixes]
    if not fixes:
        unsafe_left = 0 if options.unsafe_fixes else unsafe_fixes_left(layout)
        hint = f" ({unsafe_left} more with --unsafe-fixes)" if unsafe_left else ""
        print(f"tflint-perf verify: no fix applies to {target.path} or the project modules it imports{hint}; "
              "nothing to compare", file=err)
        return 0
    init = f"({options.init_arguments.text})" if "." in target.dotted else ""
    call = f"{target.dotted.replace('.', init + '.', 1) if init else target.dotted}({options.arguments.text})"
    print(f"tflint-perf verify: importing {layout.module_name} and calling {call} twice (as written and as "
          "fixed): this runs your code, which `check` and `bench` never do", file=err)
    tf = import_tensorflow("verify", err)
    if tf is None:
        return 2
    pipelines = []
    for label, side in sides(layout, fixed).items():
        try:
            module = side.import_module(layout.module_name)
        except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: one line, not a traceback
            raise VerifyError(f"importing {target.path} failed: {describe(error)}") from None
        callee = find_callee(module, target.dotted)
        callee.check(target.dotted, options.arguments, options.init_arguments)
        pipelines.append(Pipeline(tf, callee, options, label, side, call))
    before, after = pipelines
    with before.side.active():
        keys = [key for key, _ in before.datasets()]
    if target.key is not None:
        keys = [key for key in keys if key.startswith(target.label)]
        if not keys:
            raise VerifyError(f"{call} returned no dataset at {target.label}")

    def progress(message: str) -> None:
        print(f"tflint-perf verify: {message}", file=err, flush=True)

    cores = os.cpu_count() or 1
    results = [measure(before, after, key, options, cores, progress) for key in keys]
    session = workspace_for(layout.reached[0], Path.cwd()).session
    causes = elements.static_causes(session, layout.reached, layout.root)
    for result in results:
        result.allowed = elements.allowed(explaining(causes, options.seed))
    environment = {"tf_version": tf.__version__, "device": "gpu" if tf.config.list_physical_devices("GPU") else "cpu",
                   "cores": cores}
    run = Run(target_text, call, options, fixes, sorted({fix.split(":")[0] for fix in fixes}), environment, causes,
              before.sources_replaced)
    out.write(json_lines(run, results) if options.as_json else text_report(run, results))
    return 1 if any(result.elements == elements.DIFFER for result in results) else 0
