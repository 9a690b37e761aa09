"""One variant in its own process: ``python -m tflint_perf.faces.harness.worker SPEC RESULT``.

SPEC is a JSON file: ``kind``, ``source``, ``filename``, ``rewrites_off`` (names of tf.data
optimizations to switch off), ``repeats``. The program runs once to warm up, then ``repeats``
timed times; RESULT receives a pickle of the times, what the last run produced and any
observations. Progress goes to stdout, one line per run, for the parent's display.
"""

from __future__ import annotations

import json
import linecache
import pickle
import sys
import time
import types
from typing import Any, Dict, List


def load_program(source: str, filename: str, name: str) -> types.ModuleType:
    """Execute ``source`` as a fresh module (not ``__main__``: guarded script code does not run)."""
    module = types.ModuleType(name)
    module.__file__ = filename
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show lines
    sys.modules[name] = module
    exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - the harness's own scenario code
    return module


def to_numpy(value: Any) -> Any:
    import tensorflow as tf

    return tf.nest.map_structure(lambda leaf: leaf.numpy() if hasattr(leaf, "numpy") else leaf, value)


def without_rewrites(dataset, rewrites_off: List[str]):
    import tensorflow as tf

    if not rewrites_off:
        return dataset
    options = tf.data.Options()
    for name in rewrites_off:
        setattr(options.experimental_optimization, name, False)
    return dataset.with_options(options)


def run_pipeline(module: types.ModuleType, rewrites_off: List[str], repeats: int, report) -> Dict[str, Any]:
    """Time the program's own ``train()``, observing the batches its ``train_step`` receives."""
    make_dataset, train_step = module.make_dataset, module.train_step
    received: List[Any] = []
    module.make_dataset = lambda *args, **kwargs: without_rewrites(make_dataset(*args, **kwargs), rewrites_off)

    def observed_step(batch, *args, **kwargs):
        received.append(to_numpy(batch))
        return train_step(batch, *args, **kwargs)

    module.train_step = observed_step

    def once():
        received.clear()
        module.train()
        return list(received)

    times, batches = _repeat(once, repeats, report)
    epochs = int(getattr(module, "EPOCHS", 1))
    per_epoch = len(batches) // epochs if epochs else len(batches)
    outcome: Dict[str, Any] = {
        "times": times,
        "epochs": [batches[i * per_epoch:(i + 1) * per_epoch] for i in range(epochs)],
    }
    if hasattr(module, "observations"):
        outcome["observations"] = module.observations()
    return outcome


def run_program(module: types.ModuleType, repeats: int, report) -> Dict[str, Any]:
    times, result = _repeat(module.run, repeats, report)
    outcome: Dict[str, Any] = {"times": times, "result": to_numpy(result)}
    if hasattr(module, "probe"):
        outcome["probe"] = to_numpy(module.probe())
    return outcome


def _repeat(work, repeats: int, report):
    """One untimed warm-up run, then ``repeats`` timed runs; the last run's result."""
    report("warm-up")
    work()
    times = []
    result = None
    for index in range(repeats):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
        report(f"run {index + 1}/{repeats} {times[-1]:.2f}s")
    return times, result


def main(argv: List[str]) -> int:
    spec_path, result_path = argv
    with open(spec_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    repeats = int(spec["repeats"])

    def report(message: str) -> None:
        print(message, flush=True)

    module = load_program(spec["source"], spec["filename"], "tflint_perf_scenario")
    if spec["kind"] == "pipeline":
        outcome = run_pipeline(module, spec.get("rewrites_off", []), repeats, report)
    else:
        outcome = run_program(module, repeats, report)
    with open(result_path, "wb") as handle:
        pickle.dump(outcome, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
