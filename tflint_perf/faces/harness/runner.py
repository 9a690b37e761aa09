"""Running scenarios: derive each "after" with the real fixer, time every variant in its own
process, check equivalence, and produce one record per variant."""

from __future__ import annotations

import json
import os
import pickle
import re
import statistics
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from tflint_perf.checking.config import Settings
from tflint_perf.text.diagnostics import UNSAFE
from tflint_perf.checking.engine import check_text
from tflint_perf.fixes.fixer import fix_text
from tflint_perf.faces.harness.equivalence import check
from tflint_perf.faces.harness.progress import Progress
from tflint_perf.faces.harness.scenarios import Scenario
from tflint_perf.faces.harness.verdicts import paired_verdict
from tflint_perf.rules import rules_by_code

PACKAGE_ROOT = Path(__file__).resolve().parents[3]  # the directory holding tflint_perf/
VARIANT_TIMEOUT_S = 900
NEEDS_GPU = "needs a GPU"


class ScenarioError(Exception):
    """A scenario cannot be run as defined (its rule does not fire on it, a fix fails to apply)."""


class VariantError(Exception):
    """A variant's process failed; the message ends with the tail of its error output."""


@dataclass(frozen=True)
class Environment:
    tf_version: str
    device: str  # "cpu" or "gpu: <name>"
    cores: int
    gpu: bool


@dataclass(frozen=True)
class After:
    text: str
    origin: str  # how the after was made, for the report


@dataclass
class Record:
    """One variant of one scenario under one setting of the graph rewrites: a JSON line."""

    rule: str
    name: str
    variant: str  # "before" | "after"
    rewrites: str  # "defaults" or "off: inject_prefetch, ..."
    tf_version: str
    device: str
    cores: int
    repeats: int
    median_s: Optional[float]
    min_s: Optional[float]
    max_s: Optional[float]
    speedup: Optional[float]
    equivalence: str  # "pass" | "fail" | "error" | "needs a GPU"
    equivalence_detail: str
    after_source: str
    times_s: List[float] = field(default_factory=list)
    # The same statistics as `verify` (harness/verdicts.py), over the runs paired by index: each
    # variant runs in its own process, so the pairs are not interleaved in time.
    interval: Optional[List[float]] = None
    verdict: Optional[str] = None
    verdict_text: Optional[str] = None

    def as_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=False)


@dataclass(frozen=True)
class BenchOptions:
    repeats: int = 5
    quick: bool = False  # the scenarios' small sizes (tests, CI smoke runs)
    rewrites: Sequence[str] = ("defaults", "off")
    run_gpu_scenarios_anyway: bool = False  # tests only: run GPU scenarios on a CPU to check that they work


def tensorflow_environment() -> Environment:
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    device = "cpu"
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        device = f"gpu: {details.get('device_name', gpus[0].name)}"
    return Environment(tf.__version__, device, os.cpu_count() or 1, bool(gpus))


# -- the "after" program ---------------------------------------------------------------------------
def derive_after(scenario: Scenario) -> After:
    """What the rule's codemod makes of the before program; the hand-written after where it cannot say."""
    rule = rules_by_code().get(scenario.code)
    if rule is None:
        return After(scenario.after, f"hand-written ({scenario.code} has no rule module yet)")
    filename = f"{scenario.code.lower()}_scenario.py"
    settings = Settings()
    diagnostics = check_text(scenario.before, filename, settings, {scenario.code})
    if not diagnostics:
        raise ScenarioError(f"{scenario.code} does not report its own scenario")
    fixable = [d for d in diagnostics if d.fix is not None]
    if not fixable:
        return After(scenario.after, "the rule's documented use-instead (no fix)")
    unsafe = any(d.fix.applicability == UNSAFE for d in fixable)  # type: ignore[union-attr]
    outcome = fix_text(scenario.before, lambda text: check_text(text, filename, settings, {scenario.code}), unsafe)
    if outcome.reverted:
        raise ScenarioError(f"{scenario.code}: {outcome.reverted}")
    if outcome.text == scenario.before:
        raise ScenarioError(f"{scenario.code}: the fixer changed nothing")
    return After(outcome.text, "codemod, --unsafe-fixes" if unsafe else "codemod, --fix")


def sized(text: str, sizes: Mapping[str, object]) -> str:
    """``text`` with module-level constants (``NAME = value``) set to other values."""
    for name, value in sizes.items():
        pattern = re.compile(rf"^({re.escape(name)} = )([^#\n]*?)(\s*(#.*)?)$", re.MULTILINE)
        text, count = pattern.subn(lambda m: f"{m.group(1)}{value!r}{m.group(3)}", text)
        if count != 1:
            raise ScenarioError(f"constant {name} is not defined once at module level")
    return text


# -- one variant in its own process ----------------------------------------------------------------
def run_variant(kind: str, source: str, filename: str, rewrites_off: Sequence[str], repeats: int,
                progress: Optional[Progress] = None) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tflint-perf-bench-") as work:
        spec_path, result_path = Path(work, "spec.json"), Path(work, "result.pickle")
        spec = {"kind": kind, "source": source, "filename": filename, "rewrites_off": list(rewrites_off),
                "repeats": repeats}
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        with open(Path(work, "stderr.txt"), "w+", encoding="utf-8", errors="replace") as errors:
            process = subprocess.Popen(
                [sys.executable, "-m", "tflint_perf.faces.harness.worker", str(spec_path), str(result_path)],
                stdout=subprocess.PIPE, stderr=errors, text=True, env=child_environment(),
            )
            assert process.stdout is not None
            watchdog = threading.Timer(VARIANT_TIMEOUT_S, process.kill)  # a hung program must not hang the bench
            watchdog.start()
            try:
                for line in process.stdout:
                    if progress is not None:
                        progress.update(line.strip())
                code = process.wait()
            finally:
                timed_out = not watchdog.is_alive()
                watchdog.cancel()
            if timed_out:
                raise VariantError(f"{filename} ran longer than {VARIANT_TIMEOUT_S} s and was stopped")
            if code != 0 or not result_path.exists():
                errors.seek(0)
                tail = "\n".join(errors.read().strip().splitlines()[-8:])
                raise VariantError(f"{filename} failed (exit {code}):\n{tail}")
        with open(result_path, "rb") as handle:
            return pickle.load(handle)  # noqa: S301 - written by our own worker a moment ago


def child_environment() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_ROOT), env.get("PYTHONPATH", "")) if p)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["PYTHONUNBUFFERED"] = "1"
    return env


# -- one scenario ----------------------------------------------------------------------------------
def run_scenario(scenario: Scenario, options: BenchOptions, environment: Environment,
                 progress: Optional[Progress] = None, after: Optional[After] = None) -> List[Record]:
    """Every variant of a scenario; ``after`` replaces the derived after program (tests use it)."""
    name = _rule_name(scenario)

    def record(variant, rewrites, times, speedup, verdict, detail, origin) -> Record:
        stats = (statistics.median(times), min(times), max(times)) if times else (None, None, None)
        return Record(scenario.code, name, variant, rewrites, environment.tf_version, environment.device,
                      environment.cores, options.repeats, *stats, speedup, verdict, detail, origin, list(times))

    try:
        after = after or derive_after(scenario)
        sizes = scenario.quick if options.quick else {}
        before_text, after_text = sized(scenario.before, sizes), sized(after.text, sizes)
    except (ScenarioError, ValueError) as error:
        return [record(variant, "defaults", [], None, "error", str(error), "") for variant in ("before", "after")]
    if scenario.needs_gpu and not environment.gpu and not options.run_gpu_scenarios_anyway:
        return [record(variant, "defaults", [], None, NEEDS_GPU, "the effect shows only on a GPU; none is visible",
                       after.origin) for variant in ("before", "after")]
    records = []
    for rewrites_off in rewrite_settings(scenario, options):
        label = "defaults" if not rewrites_off else "off: " + ", ".join(rewrites_off)
        outcomes = {}
        try:
            for variant, text in (("before", before_text), ("after", after_text)):
                if progress is not None:
                    progress.start(f"{scenario.code} {name} [{_short(label)}] {variant}")
                filename = f"<{scenario.code.lower()}-{variant}>"
                outcomes[variant] = run_variant(scenario.kind, text, filename, rewrites_off, options.repeats, progress)
        except VariantError as error:
            records += [record(v, label, outcomes.get(v, {}).get("times", []), None, "error", str(error), after.origin)
                        for v in ("before", "after")]
            continue
        verdict = check(scenario.equivalence, outcomes["before"], outcomes["after"])
        result = "pass" if verdict.passed else "fail"
        before_median = statistics.median(outcomes["before"]["times"])
        after_median = statistics.median(outcomes["after"]["times"])
        speedup = round(before_median / after_median, 3) if after_median > 0 else None
        pair = [record("before", label, outcomes["before"]["times"], 1.0, result, verdict.summary, after.origin),
                record("after", label, outcomes["after"]["times"], speedup, result, verdict.summary, after.origin)]
        timing = paired_verdict(outcomes["before"]["times"], outcomes["after"]["times"], environment.cores)
        if timing is not None:
            for line in pair:
                line.interval = [round(timing.low, 4), round(timing.high, 4)]
                line.verdict, line.verdict_text = timing.kind, timing.text
        records.extend(pair)
    return records


def rewrite_settings(scenario: Scenario, options: BenchOptions) -> List[List[str]]:
    settings = []
    if "defaults" in options.rewrites:
        settings.append([])
    if "off" in options.rewrites and scenario.rewrites:
        settings.append(list(scenario.rewrites))
    return settings


def _short(label: str) -> str:
    return "TF defaults" if label == "defaults" else label.replace("off: ", "") + " off"


def _rule_name(scenario: Scenario) -> str:
    rule = rules_by_code().get(scenario.code)
    return rule.name if rule is not None else scenario.name


def run_bench(scenarios: Sequence[Scenario], options: BenchOptions, environment: Environment,
              progress: Optional[Progress] = None) -> List[Record]:
    records: List[Record] = []
    for scenario in scenarios:
        records.extend(run_scenario(scenario, options, environment, progress))
    if progress is not None:
        progress.finish()
    return records


def variant_count(scenarios: Sequence[Scenario], options: BenchOptions, environment: Environment) -> int:
    """How many worker processes a bench run starts (for the progress display)."""
    runnable = [s for s in scenarios if not s.needs_gpu or environment.gpu or options.run_gpu_scenarios_anyway]
    return sum(2 * len(rewrite_settings(s, options)) for s in runnable)
