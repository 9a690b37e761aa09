"""``tflint-perf verify FILE::FUNCTION``: the user's own pipeline, before and after the fixes.

The one command that runs user code. It applies the file's fixes in memory with the real fixer,
and those of the project modules it imports from its own directory (fixed copies in a temporary
tree, harness/local_modules.py), loads the original and the fixed source as two separate module
objects, calls FUNCTION in each with ``--args``/``--kwargs`` (harness/call_arguments.py) to get a
``tf.data.Dataset``, drains both for ``--steps`` batches with a simulated training step, and
reports throughput and whether the elements are identical. ``--seed`` seeds TensorFlow, NumPy and
Python before every call, so a shuffled pipeline gives the same order on both sides. No file on
disk is changed. A function that cannot be imported, called or iterated is reported in one line.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import inspect
import json
import os
import random
import statistics
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

from tflint_perf.checking.config import ConfigError, find_config, load_config
from tflint_perf.text.diagnostics import Diagnostic
from tflint_perf.checking.engine import check_text
from tflint_perf.text.parsing import InternalError, ParseError
from tflint_perf.fixes.fixer import fix_text
from tflint_perf.faces.harness.call_arguments import CallArguments
from tflint_perf.faces.harness.dependency import import_tensorflow
from tflint_perf.faces.harness.local_modules import FixedTree, Side, local_modules
from tflint_perf.faces.harness.synthetic import synthetic_sources
from tflint_perf.text.source import SourceError, SourceFile


class VerifyError(Exception):
    """A usage problem or a failure in the user's code: reported, exit 2."""


@dataclass(frozen=True)
class VerifyOptions:
    steps: int = 50
    step_ms: float = 10.0
    repeats: int = 3
    synthetic: bool = False
    unsafe_fixes: bool = False
    rewrites_off: bool = False
    as_json: bool = False
    arguments: CallArguments = field(default_factory=CallArguments)
    seed: Optional[int] = None


@dataclass
class Measurement:
    times: List[float]
    fingerprints: List[tuple]  # one per batch, from an untimed run

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def parse_target(target: str) -> Tuple[Path, str]:
    path, separator, function = target.rpartition("::")
    if not separator or not path or not function:
        raise VerifyError(f"expected FILE::FUNCTION, got `{target}`")
    return Path(path), function


def fixed_source(path: Path, unsafe: bool) -> Tuple[str, str, List[Diagnostic], List[Diagnostic]]:
    """The file's text, the text after its fixes, the fixes applied and the findings left."""
    try:
        source = SourceFile.decode(path.read_bytes())
    except OSError as error:
        raise VerifyError(f"{path}: cannot read: {error.strerror or error}") from None
    except SourceError as error:
        raise VerifyError(f"{path}: {error}") from None
    try:
        config = find_config(path.resolve().parent)
        settings = load_config(config, root=config.parent if config else path.resolve().parent)
    except ConfigError as error:
        raise VerifyError(str(error)) from None
    codes = settings.selected_codes()

    def check(text: str) -> List[Diagnostic]:
        return check_text(text, str(path), settings, codes)

    try:
        outcome = fix_text(source.text, check, unsafe)
    except (ParseError, InternalError) as error:
        raise VerifyError(f"{path}: {error}") from None
    return source.text, outcome.text, outcome.fixed, outcome.remaining


def load_module(text: str, path: Path, name: str, side: Side) -> types.ModuleType:
    """``text`` executed as a module named ``name`` with ``__file__`` = ``path`` (not ``__main__``),
    importing the project's modules as ``side`` sees them."""
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    try:
        with side.active():
            exec(compile(text, str(path), "exec"), module.__dict__)  # noqa: S102 - verify runs the user's code, and says so
    except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: one line, not a traceback
        raise VerifyError(f"importing {path} failed: {describe(error)}") from None
    return module


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


def check_defined(text: str, path: Path, dotted: str) -> None:
    """Fail before running any code when the file never binds FUNCTION's first name at top level."""
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


def pipeline_function(module: types.ModuleType, dotted: str) -> Callable[..., Any]:
    value: Any = module
    for part in dotted.split("."):
        if not hasattr(value, part):
            raise VerifyError(f"{module.__file__} has no `{dotted}`")
        value = getattr(value, part)
    if not callable(value):
        raise VerifyError(f"`{dotted}` in {module.__file__} is not a function")
    return value


def check_call(function: Callable[..., Any], dotted: str, arguments: CallArguments) -> None:
    """Fail before running the pipeline when FUNCTION cannot take the arguments given."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return  # a builtin or extension: the call itself will tell
    try:
        signature.bind(*arguments.args, **arguments.kwargs)
    except TypeError as error:
        hint = "" if arguments.text else " (pass them with --args / --kwargs)"
        raise VerifyError(f"cannot call {dotted}({arguments.text}): {error}{hint}") from None


class Pipeline:
    """One side (before or after): builds the dataset and drains ``steps`` batches."""

    def __init__(self, tf, function: Callable[..., Any], options: VerifyOptions, label: str, side: Side,
                 call: str) -> None:
        self.tf, self.function, self.options, self.label = tf, function, options, label
        self.side, self.call = side, call
        self.sources_replaced = 0

    def dataset(self):
        tf = self.tf
        counter = [0]
        context = synthetic_sources(tf, counter) if self.options.synthetic else contextlib.nullcontext()
        seed = self.options.seed
        if seed is not None:
            seed_everything(tf, seed)
        args, kwargs = self.options.arguments.materialise(tf, seed or 0)
        with context:
            try:
                dataset = self.function(*args, **kwargs)
            except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: one line, not a traceback
                raise VerifyError(f"calling {self.call} ({self.label}) failed: {describe(error)}") from None
        self.sources_replaced = counter[0]
        if not isinstance(dataset, tf.data.Dataset):
            raise VerifyError(f"{self.call} returned {type(dataset).__name__}, not a tf.data.Dataset")
        if self.options.rewrites_off:
            dataset_options = tf.data.Options()
            dataset_options.experimental_optimization.inject_prefetch = False
            dataset_options.experimental_optimization.map_parallelization = False
            dataset = dataset.with_options(dataset_options)
        return dataset.take(self.options.steps)

    def drain(self, keep: bool) -> Tuple[float, List[tuple]]:
        """Time ``steps`` batches with the simulated step; with ``keep``, fingerprint them instead
        (untimed: hashing large batches would distort the timing)."""
        with self.side.active():
            dataset = self.dataset()
            fingerprints = []
            pause = 0.0 if keep else self.options.step_ms / 1000
            start = time.perf_counter()
            try:
                for batch in dataset:
                    if keep:
                        fingerprints.append(fingerprint(self.tf, batch))
                    if pause:
                        time.sleep(pause)  # the simulated training step
            except (Exception, SystemExit) as error:  # noqa: BLE001 - the user's code: one line, not a traceback
                raise VerifyError(f"iterating the {self.label} pipeline failed: {describe(error)}") from None
            return time.perf_counter() - start, fingerprints


def seed_everything(tf, seed: int) -> None:
    """TensorFlow's global seed (which also seeds every unseeded ``shuffle`` and random op, in the
    order they are created), NumPy's and Python's."""
    import numpy as np

    tf.random.set_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def fingerprint(tf, batch) -> tuple:
    """A batch as (dtype, shape, digest) per tensor (ragged and sparse ones by their components):
    equal exactly when the elements are identical."""
    return tuple((str(leaf.dtype), tuple(leaf.shape), _digest(leaf))
                 for leaf in (t.numpy() for t in tf.nest.flatten(batch, expand_composites=True)))


def _digest(array) -> str:
    if array.dtype == object:  # strings: bytes objects, not a buffer of values
        data = b"\0".join(item if isinstance(item, bytes) else repr(item).encode() for item in array.ravel())
    else:
        data = array.tobytes()
    return hashlib.sha256(data).hexdigest()


def first_difference(old: List[tuple], new: List[tuple]) -> Optional[str]:
    if len(old) != len(new):
        return f"{len(old)} batches before, {len(new)} after"
    for index, (a, b) in enumerate(zip(old, new)):
        if a != b:
            what = "dtype or shape" if [x[:2] for x in a] != [y[:2] for y in b] else "values"
            return f"batch {index}: {what} differ"
    return None


def measure(before: Pipeline, after: Pipeline, repeats: int, progress) -> Tuple[Measurement, Measurement, bool]:
    """Elements from untimed runs (the original twice, to see whether it is deterministic), then
    a warm-up each and alternating timed runs."""
    progress("reading the elements of both pipelines")
    _, first = before.drain(keep=True)
    _, fixed = after.drain(keep=True)
    _, second = before.drain(keep=True)
    results = {before.label: Measurement([], first), after.label: Measurement([], fixed)}
    for pipeline in (before, after):
        progress(f"{pipeline.label}: warm-up")
        pipeline.drain(keep=False)
    for index in range(repeats):
        for pipeline in (before, after):
            progress(f"{pipeline.label}: run {index + 1}/{repeats}")
            elapsed, _ = pipeline.drain(keep=False)
            results[pipeline.label].times.append(elapsed)
    return results[before.label], results[after.label], first_difference(first, second) is None


def verify(target: str, options: VerifyOptions, out=None, err=None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    path, function_name = parse_target(target)
    original, fixed, applied, remaining = fixed_source(path, options.unsafe_fixes)
    check_defined(original, path, function_name)
    tree = FixedTree(local_modules(path, original), lambda source: _fixed_module(source, options.unsafe_fixes))
    fixes = [_fix_line(path, path, d) for d in applied]
    fixes += [_fix_line(path, source, d) for source, diagnostics in tree.fixes for d in diagnostics]
    if not fixes:
        unsafe_left = [d for d in remaining if d.fix is not None]
        hint = f" ({len(unsafe_left)} more with --unsafe-fixes)" if unsafe_left and not options.unsafe_fixes else ""
        print(f"tflint-perf verify: no fix applies to {path}{hint}; nothing to compare", file=err)
        return 0
    call = f"{function_name}({options.arguments.text})"
    print(f"tflint-perf verify: importing {path} and calling {call} twice (as written and as fixed): "
          "this runs your code, which `check` and `bench` never do", file=err)
    tf = import_tensorflow("verify", err)
    if tf is None:
        return 2
    with tree:
        return _compare(tf, target, path, function_name, call, original, fixed, tree, fixes, options, out, err)


def _compare(tf, target: str, path: Path, function_name: str, call: str, original: str, fixed: str, tree: FixedTree,
             fixes: List[str], options: VerifyOptions, out, err) -> int:
    directory = str(path.resolve().parent)
    names = set(tree.modules)
    before_side = Side([directory], names)
    after_side = Side(([str(tree.root)] if tree.root is not None else []) + [directory], names)
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    pipelines = []
    for label, text, side in (("before", original, before_side), ("after", fixed, after_side)):
        function = pipeline_function(load_module(text, path, f"tflint_perf_verify_{stem}_{label}", side),
                                     function_name)
        check_call(function, function_name, options.arguments)
        pipelines.append(Pipeline(tf, function, options, label, side, call))
    before, after = pipelines

    def progress(message: str) -> None:
        print(f"tflint-perf verify: {message}", file=err, flush=True)

    old, new, deterministic = measure(before, after, options.repeats, progress)
    difference = first_difference(old.fingerprints, new.fingerprints)
    if not deterministic:
        elements = "nondeterministic"
        elements_text = ("cannot compare: the original pipeline gives different elements on two runs "
                         "(shuffle or random ops without a fixed seed; try --seed)")
    elif difference is None:
        elements, elements_text = "identical", f"identical ({len(old.fingerprints)} batches)"
    else:
        elements, elements_text = "differ", f"differ: {difference}"
    speedup = old.median / new.median if new.median > 0 else None
    environment = {"tf_version": tf.__version__, "device": "gpu" if tf.config.list_physical_devices("GPU") else "cpu",
                   "cores": os.cpu_count() or 1}
    run = {"target": target, "call": call, "seed": options.seed, "fixes": fixes,
           "fixed_files": sorted({fix.split(":")[0] for fix in fixes})}
    if options.as_json:
        for label, measurement in (("before", old), ("after", new)):
            record = {
                **run, "variant": label, **environment, "steps": options.steps, "step_ms": options.step_ms,
                "batches": len(measurement.fingerprints), "median_s": measurement.median, "min_s": min(measurement.times),
                "max_s": max(measurement.times), "batches_per_s": _rate(measurement),
                "speedup": 1.0 if label == "before" else speedup, "elements": elements,
                "synthetic_sources": before.sources_replaced if options.synthetic else None,
            }
            out.write(json.dumps(record) + "\n")
    else:
        out.write(_text_report(run, options, environment, old, new, speedup, elements_text, before.sources_replaced))
    return 1 if elements == "differ" else 0


def _fixed_module(path: Path, unsafe: bool) -> Tuple[str, List[Diagnostic]]:
    _, text, applied, _ = fixed_source(path, unsafe)
    return text, applied


def _fix_line(target: Path, source: Path, diagnostic: Diagnostic) -> str:
    """``file.py:row:col CODE message``, the file named relative to the target's directory."""
    try:
        name = source.resolve().relative_to(target.resolve().parent).as_posix()
    except ValueError:
        name = str(source)
    message = diagnostic.fix.message if diagnostic.fix else ""
    return f"{name}:{diagnostic.location.row}:{diagnostic.location.column} {diagnostic.code} {message}"


def _rate(measurement: Measurement) -> Optional[float]:
    return len(measurement.fingerprints) / measurement.median if measurement.median > 0 else None


def _text_report(run: dict, options, environment, old, new, speedup, elements_text, replaced) -> str:
    lines = [f"tflint-perf verify {run['target']}",
             f"called {run['call']}, " + (f"seed {run['seed']}" if run["seed"] is not None else "no seed"),
             "fixes applied in memory (no file is changed):"]
    lines += [f"  {fix}" for fix in run["fixes"]]
    rewrites = "; inject_prefetch and map_parallelization off" if options.rewrites_off else ""
    lines.append(f"TensorFlow {environment['tf_version']}, {environment['device']}, {environment['cores']} cores; "
                 f"{options.steps} batches per run with a {options.step_ms:g} ms simulated step; median of "
                 f"{options.repeats} runs after a warm-up{rewrites}")
    if options.synthetic:
        lines.append(f"--synthetic: {replaced} in-memory source(s) replaced by random data of the same shapes and dtypes"
                     if replaced else "--synthetic: the pipeline has no in-memory source (from_tensor_slices / "
                                      "from_tensors); its data is unchanged")
    lines.append(f"{'':8}{'median s':>10}  {'min-max s':>15}  {'batches/s':>10}")
    for label, measurement in (("before", old), ("after", new)):
        rate = _rate(measurement)
        lines.append(f"{label:8}{measurement.median:>10.3f}  "
                     f"{min(measurement.times):>7.3f}-{max(measurement.times):<7.3f}  "
                     f"{rate if rate is not None else float('nan'):>10.1f}")
    lines.append(f"speedup: {speedup:.2f}x" if speedup else "speedup: -")
    lines.append(f"elements: {elements_text}")
    return "\n".join(lines) + "\n"
