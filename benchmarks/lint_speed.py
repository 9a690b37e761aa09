"""How fast tflint-perf is at repository scale: cold, warm and after a change, against flake8 and ruff.

Run it in an environment that has TensorFlow, Keras, tf-models-official, flake8, ruff and tflint-perf
installed (TensorFlow and the Model Garden are needed only for their source files; nothing here
imports them):

    python3 -m venv /tmp/benchenv
    /tmp/benchenv/bin/pip install tensorflow-cpu tf-models-official flake8 ruff -e .
    /tmp/benchenv/bin/python benchmarks/lint_speed.py --runs 3 --training-tree DIR

What it measures, each several times (medians of wall-clock and CPU seconds, children included):

- ``tf``: the TensorFlow-heavy tree, the installed ``tensorflow`` and ``keras`` packages' own ``.py``
  files copied to a work directory (one file gets touched): ``tflint-perf check`` cold (empty cache),
  warm (nothing changed) and after touching one file; ``flake8`` with its default plugins (pycodestyle,
  pyflakes, mccabe; the TFP plugin hidden) unless ``--no-flake8``;
- ``training``: a tree of training code (``--training-tree DIR``: its ``.py`` and ``.ipynb`` files are
  copied; docs/performance.md says which): ``tflint-perf check`` cold and warm, and ``ruff check
  --no-cache`` (``--ruff PATH``, else the ``ruff`` beside this Python or on ``PATH``);
- ``project``: a multi-module project where first-party imports resolve and the project index is at
  work (the installed ``tf-models-official`` package's ``official`` and ``orbit`` sources, or
  ``--project-tree DIR``, copied as the project's root): ``tflint-perf check`` cold, warm, after changing
  a typical module (imported by one to three others) and after changing the most imported module
  (how many modules that change re-checks is printed), and ``flake8`` unless ``--no-flake8``;
- ``imports``: what the command line costs before it checks anything (importing it, best of 10), and
  whether a warm run imported LibCST or the rules (``python -X importtime``);
- ``plain``: a tree without TensorFlow (pip's sources): ``flake8`` without and with the TFP plugin;
- ``editor``: ``flake8`` on one 1,000-line training script, without and with the plugin, and the
  plugin's own time on it measured in-process.

All tools run with their default parallelism (one process per CPU). The goals it reports against are
in docs/performance.md.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.metadata
import importlib.util
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

# flake8 finds plugins through entry points, and an installed plugin cannot be switched off from the
# command line. This runs flake8 with every plugin but tflint-perf's.
FLAKE8_WITHOUT_TFP = textwrap.dedent(
    """\
    import sys
    from flake8.plugins import finder
    _found = finder._find_importlib_plugins
    finder._find_importlib_plugins = lambda: (p for p in _found() if p.package != "tflint-perf")
    from flake8.main.cli import main
    sys.exit(main())
    """
)


class Timing:
    def __init__(self, label: str, walls: List[float], cpus: List[float]) -> None:
        self.label = label
        self.walls = walls
        self.cpus = cpus

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)

    def row(self) -> str:
        spread = f"{min(self.walls):.2f}-{max(self.walls):.2f}" if len(self.walls) > 1 else ""
        return f"  {self.label:<52} {self.wall:8.2f} s wall {self.cpu:8.2f} s CPU   (wall range {spread}, n={len(self.walls)})"


def timed(command: Sequence[str], cwd: Path, env: Optional[Dict[str, str]] = None) -> Tuple[float, float]:
    """Wall and CPU seconds (user + system, with every child process) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({completed.returncode}):\n{completed.stderr.decode()[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(label: str, runs: int, command: Sequence[str], cwd: Path, before: Callable[[int], None] = lambda run: None,
            env: Optional[Dict[str, str]] = None) -> Timing:
    walls, cpus = [], []
    for run in range(runs):
        before(run)
        wall, cpu = timed(command, cwd, env)
        walls.append(wall)
        cpus.append(cpu)
    timing = Timing(label, walls, cpus)
    print(timing.row(), flush=True)
    return timing


Spec = Tuple[str, str, Sequence[str], Path, Callable[[int], None]]  # key, label, command, cwd, before each run


def interleaved(runs: int, specs: Sequence[Spec]) -> Dict[str, Timing]:
    """Run every command once per round, in turn, so that a change in the machine's load hits them alike."""
    walls: Dict[str, List[float]] = {key: [] for key, *_ in specs}
    cpus: Dict[str, List[float]] = {key: [] for key, *_ in specs}
    for run in range(runs):
        for key, _, command, cwd, before in specs:
            before(run)
            wall, cpu = timed(command, cwd)
            walls[key].append(wall)
            cpus[key].append(cpu)
    timings = {}
    for key, label, *_ in specs:
        timings[key] = Timing(label, walls[key], cpus[key])
        print(timings[key].row(), flush=True)
    return timings


def nothing(run: int) -> None:
    pass


def package_dir(name: str) -> Optional[Path]:
    spec = importlib.util.find_spec(name)  # finds without importing
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent


def copy_sources(source: Path, target: Path) -> None:
    """Copy the .py files of a package (once; a copy with the same file count is reused)."""
    copy_tree(source, target, (".py",), dependency_files=False)


def tree_size(root: Path) -> Tuple[int, int, int]:
    files = lines = marked = 0
    for path in root.rglob("*.py"):
        data = path.read_bytes()
        files += 1
        lines += data.count(b"\n")
        marked += b"tensorflow" in data or b"keras" in data
    return files, lines, marked


def version_of(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def plugin_installed() -> bool:
    return any(ep.name == "TFP" for ep in importlib.metadata.entry_points(group="flake8.extension"))


def training_script(lines: int = 1000) -> str:
    """A realistic TF2 training script of about ``lines`` lines: pipelines, models, a custom loop, callbacks."""
    header = textwrap.dedent(
        """\
        \"\"\"Train image classifiers on TFRecord shards (benchmark input for the editor path).\"\"\"
        import argparse
        import functools
        import os

        import numpy as np
        import tensorflow as tf
        from tensorflow import keras
        from tensorflow.keras import layers

        AUTOTUNE = tf.data.AUTOTUNE
        """
    )
    block = textwrap.dedent(
        """\


        def parse_{n}(record):
            features = {{
                "image": tf.io.FixedLenFeature([], tf.string),
                "label": tf.io.FixedLenFeature([], tf.int64),
            }}
            example = tf.io.parse_single_example(record, features)
            image = tf.io.decode_jpeg(example["image"], channels=3)
            image = tf.image.resize(image, [224, 224]) / 255.0
            return image, example["label"]


        def augment_{n}(image, label):
            image = tf.image.random_flip_left_right(image)
            image = tf.image.random_brightness(image, 0.1)
            return image, label


        def make_dataset_{n}(pattern, batch_size, training):
            files = tf.data.Dataset.list_files(pattern, shuffle=training)
            ds = files.interleave(tf.data.TFRecordDataset, cycle_length=4)
            ds = ds.map(parse_{n})
            if training:
                ds = ds.shuffle(10_000).map(augment_{n})
            ds = ds.batch(batch_size)
            return ds


        def build_model_{n}(num_classes):
            inputs = keras.Input(shape=(224, 224, 3))
            x = layers.Conv2D(30, 3, activation="relu")(inputs)
            x = layers.MaxPooling2D()(x)
            x = layers.Conv2D(64, 3, activation="relu")(x)
            x = layers.GlobalAveragePooling2D()(x)
            x = layers.Dense(100, activation="relu")(x)
            x = layers.Dropout(0.2)(x)
            outputs = layers.Dense(num_classes)(x)
            return keras.Model(inputs, outputs, name="classifier_{n}")


        class LogLearningRate_{n}(keras.callbacks.Callback):
            def on_epoch_end(self, epoch, logs=None):
                rate = float(keras.backend.get_value(self.model.optimizer.learning_rate))
                print(f"epoch {{epoch}}: learning rate {{rate:.5f}}")


        @tf.function
        def train_step_{n}(model, optimizer, loss_fn, images, labels):
            with tf.GradientTape() as tape:
                logits = model(images, training=True)
                loss = loss_fn(labels, logits)
            gradients = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))
            return loss


        def custom_loop_{n}(args):
            model = build_model_{n}(args.classes)
            optimizer = keras.optimizers.Adam(args.lr)
            loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            train = make_dataset_{n}(args.train, args.batch, training=True)
            for epoch in range(args.epochs):
                total = 0.0
                for step, (images, labels) in enumerate(train):
                    total += float(train_step_{n}(model, optimizer, loss_fn, images, labels))
                print("epoch", epoch, "loss", total / max(step, 1))
            return model


        def fit_{n}(args):
            model = build_model_{n}(args.classes)
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
            train = make_dataset_{n}(args.train, args.batch, training=True)
            val = make_dataset_{n}(args.val, args.batch, training=False).prefetch(AUTOTUNE)
            callbacks = [LogLearningRate_{n}(), keras.callbacks.EarlyStopping(patience=3)]
            model.fit(train, validation_data=val, epochs=args.epochs, callbacks=callbacks)
            scores = np.asarray(model.predict(val))
            return functools.reduce(max, scores.argmax(axis=1), 0)
        """
    )
    footer = textwrap.dedent(
        """\


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--train", default=os.path.join("data", "train-*.tfrecord"))
            parser.add_argument("--val", default=os.path.join("data", "val-*.tfrecord"))
            parser.add_argument("--batch", type=int, default=100)
            parser.add_argument("--epochs", type=int, default=10)
            parser.add_argument("--classes", type=int, default=10)
            parser.add_argument("--lr", type=float, default=1e-3)
            args = parser.parse_args()
            fit_0(args)


        if __name__ == "__main__":
            main()
        """
    )
    parts = [header]
    n = 0
    while sum(part.count("\n") for part in parts) + block.count("\n") + footer.count("\n") <= lines:
        parts.append(block.format(n=n))
        n += 1
    parts.append(footer)
    text = "".join(parts)
    missing = lines - text.count("\n")
    return text + "\n".join(f"# padding line {i}" for i in range(missing)) + ("\n" if missing else "")


PLUGIN_IN_PROCESS = textwrap.dedent(
    """\
    import ast, sys, time
    start = time.perf_counter()
    from tflint_perf.faces.flake8_plugin import Plugin
    imported = time.perf_counter()
    import tflint_perf.checking.engine  # what the plugin imports for the first file that mentions TensorFlow
    engine = time.perf_counter()
    path = sys.argv[1]
    lines = open(path, encoding="utf-8").read().splitlines(keepends=True)
    tree = ast.parse("".join(lines))  # flake8 parses the file anyway
    best = float("inf")
    for _ in range(int(sys.argv[2])):
        begin = time.perf_counter()
        found = list(Plugin(tree, lines, path).run())
        best = min(best, time.perf_counter() - begin)
    print(f"{imported - start:.4f} {engine - imported:.4f} {best:.4f} {len(found)}")
    """
)


# The plugin's own CPU time on every file of a tree, in one process, as flake8 would call it: robust to the
# machine's load in a way that the difference of two flake8 runs is not.
PLUGIN_ON_TREE = textwrap.dedent(
    """\
    import pathlib, sys, time
    start = time.process_time()
    from tflint_perf.faces.flake8_plugin import Plugin
    imported = time.process_time() - start
    total, files, found = 0.0, 0, 0
    for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.py")):
        lines = path.read_text(encoding="utf-8", errors="surrogateescape").splitlines(keepends=True)
        begin = time.process_time()
        found += len(list(Plugin(None, lines, str(path)).run()))
        total += time.process_time() - begin
        files += 1
    print(f"{imported:.4f} {total:.4f} {files} {found}")
    """
)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each measurement (default 3)")
    parser.add_argument("--editor-runs", type=int, default=10, help="runs of each editor-path measurement")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "tflint_perf_lint_speed"))
    parser.add_argument("--sections", default="tf,training,project,imports",
                        help="what to measure: tf, training, project, imports, plain, editor (default: the first four)")
    parser.add_argument("--training-tree", help="a tree of training code for the `training` section (copied)")
    parser.add_argument("--project-tree", help="a multi-module project's root (copied; default: the installed "
                        "tf-models-official package's official/ and orbit/)")
    parser.add_argument("--ruff", help="the ruff executable (default: beside this Python, else on PATH)")
    parser.add_argument("--no-flake8", action="store_true", help="do not time flake8 in the tf and project sections")
    parser.add_argument("--more", action="store_true",
                        help="also time --no-cache with -j 2 and -j 1, and flake8 with the plugin, on the TensorFlow tree")
    args = parser.parse_args(argv)
    sections = set(args.sections.split(","))
    python = sys.executable
    work = Path(args.workdir).absolute()
    work.mkdir(parents=True, exist_ok=True)

    print("tflint-perf lint speed benchmark")
    print(f"  date        {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"  machine     {platform.machine()}, {os.cpu_count()} CPUs ({_cpu_model()}), {_memory()}")
    print(f"  python      {platform.python_version()} ({python})")
    print(f"  versions    tflint-perf {version_of('tflint-perf')} ({_tflint_perf_origin(python)}), libcst "
          f"{version_of('libcst')}, flake8 {version_of('flake8')} (pycodestyle {version_of('pycodestyle')}, "
          f"pyflakes {version_of('pyflakes')}, mccabe {version_of('mccabe')}), ruff {version_of('ruff')}, "
          f"tensorflow sources {_tf_version()}, keras sources {version_of('keras')}, "
          f"tf-models-official {version_of('tf-models-official')}")
    print(f"  command     {' '.join([os.path.basename(python)] + sys.argv)}")
    print(f"  load        {_load()} at start")
    package = package_dir("tflint_perf")
    if package is not None and os.environ.get("PYTHONDONTWRITEBYTECODE"):
        # An editable install never gets its bytecode written here; a wheel install would have it.
        compileall.compile_dir(str(package), quiet=1)
        print("  bytecode    compiled tflint_perf first (PYTHONDONTWRITEBYTECODE is set, as a wheel would have it)")
    has_plugin = plugin_installed()
    if not has_plugin and sections & {"plain", "editor"}:
        print("  NOTE        the TFP flake8 plugin is not installed (no flake8.extension entry point `TFP`):")
        print("              the plugin measurements are skipped.")
    flake8_plain = [python, "-c", FLAKE8_WITHOUT_TFP, "--isolated", "--exit-zero", "."]
    flake8_with = [python, "-m", "flake8", "--isolated", "--exit-zero", "."]
    results: Dict[str, Timing] = {}
    notes: Dict[str, str] = {}

    # -- the TensorFlow-heavy tree ----------------------------------------------------------------
    if "tf" in sections:
        tf_tree = work / "tf-tree"
        sources = {name: package_dir(name) for name in ("tensorflow", "keras")}
        for name, source in sources.items():
            if source is None:
                raise SystemExit(f"`{name}` is not installed in {python}; see the module docstring")
            copy_sources(source, tf_tree / name)
        files, lines, marked = tree_size(tf_tree)
        print(f"\nTensorFlow tree: {tf_tree} ({files} files, {lines:,} lines; {marked} mention tensorflow/keras)")
        cache = work / "cache"
        touched = tf_tree / "keras" / "src" / "layers" / "core" / "dense.py"
        if not touched.is_file():
            touched = sorted(tf_tree.rglob("*.py"))[len(list(tf_tree.rglob("*.py"))) // 2]
        original = touched.read_bytes()
        check = [python, "-m", "tflint_perf", "check", "--isolated", "--exit-zero", "--cache-dir", str(cache), "."]

        def touch(run: int) -> None:
            touched.write_bytes(original + f"\n# touched by the benchmark, run {run} {time.time()}\n".encode())

        specs: List[Spec] = [] if args.no_flake8 else [
            ("flake8", "flake8 (default plugins, TFP hidden)", flake8_plain, tf_tree, nothing)]
        specs += [
            ("cold", "tflint-perf check, cold (empty cache)", check, tf_tree, emptying(cache)),
            ("warm", "tflint-perf check, warm (nothing changed)", check, tf_tree, nothing),
            ("touched", "tflint-perf check, one file changed", check, tf_tree, touch),
        ]
        try:
            results.update(interleaved(args.runs, specs))
            if args.more:
                results.update(interleaved(1, [
                    ("nocache", "tflint-perf check --no-cache", check + ["--no-cache"], tf_tree, nothing),
                    ("serial", "tflint-perf check --no-cache -j 1", check + ["--no-cache", "-j", "1"], tf_tree, nothing),
                ]))
                if has_plugin:
                    results.update(interleaved(1, [("flake8+tfp-tf", "flake8 with the TFP plugin", flake8_with, tf_tree,
                                                    nothing)]))
        finally:
            touched.write_bytes(original)

    # -- a tree of training code, against ruff ------------------------------------------------------
    if "training" in sections:
        results.update(_training_section(args, python, work))

    # -- a multi-module project: the project index at work ---------------------------------------------
    if "project" in sections:
        project_results, project_notes = _project_section(args, python, work, flake8_plain)
        results.update(project_results)
        notes.update(project_notes)

    # -- what the command line costs before it checks anything ----------------------------------------
    if "imports" in sections:
        notes.update(_imports_section(python, work, results))

    # -- a tree without TensorFlow ----------------------------------------------------------------
    plain_source = package_dir("pip")
    plain_tree = work / "plain-tree" / "pip"
    if "plain" in sections and plain_source is not None:
        copy_sources(plain_source, plain_tree)
        files, lines, marked = tree_size(plain_tree)
        print(f"\nTree without TensorFlow: {plain_tree} ({files} files, {lines:,} lines; {marked} mention tensorflow/keras)")
        specs = [("plain", "flake8 (default plugins, TFP hidden)", flake8_plain, plain_tree, nothing)]
        if has_plugin:
            specs.append(("plain+tfp", "flake8 with the TFP plugin", flake8_with, plain_tree, nothing))
        results.update(interleaved(args.runs, specs))
        if has_plugin:
            output = subprocess.run([python, "-c", PLUGIN_ON_TREE, str(plain_tree)], capture_output=True, text=True,
                                    check=True).stdout.split()
            import_s, run_s, count, found = float(output[0]), float(output[1]), int(output[2]), int(output[3])
            results["plugin-own"] = Timing("plugin's own CPU", [import_s + run_s], [import_s + run_s])
            print(f"  in-process: the plugin's own CPU time: import {import_s * 1000:.0f} ms + {count} files "
                  f"{run_s * 1000:.0f} ms ({found} findings)")

    # -- the editor path --------------------------------------------------------------------------
    if "editor" in sections:
        script_dir = work / "editor"
        script_dir.mkdir(exist_ok=True)
        script = script_dir / "train.py"
        script.write_text(training_script(1000), encoding="utf-8")
        print(f"\nEditor path: flake8 on {script} ({script.read_text().count(chr(10))} lines), one process per run")
        specs = [("editor", "flake8 train.py (TFP hidden)",
                  [python, "-c", FLAKE8_WITHOUT_TFP, "--isolated", "--exit-zero", "train.py"], script_dir, nothing)]
        if has_plugin:
            specs.append(("editor+tfp", "flake8 train.py with the TFP plugin",
                          [python, "-m", "flake8", "--isolated", "--exit-zero", "train.py"], script_dir, nothing))
        results.update(interleaved(args.editor_runs, specs))
        if has_plugin:
            output = subprocess.run([python, "-c", PLUGIN_IN_PROCESS, str(script), "5"], capture_output=True,
                                    text=True, check=True).stdout.split()
            import_s, libcst_s, check_s, found = float(output[0]), float(output[1]), float(output[2]), int(output[3])
            results["plugin-check"] = Timing("plugin check", [check_s], [check_s])
            print(f"  in-process: importing the plugin {import_s * 1000:.0f} ms, then LibCST and the engine "
                  f"(on the first file that mentions TensorFlow) {libcst_s * 1000:.0f} ms; checking train.py "
                  f"{check_s * 1000:.0f} ms (best of 5, {found} findings)")

    # -- against the goals ------------------------------------------------------------------------
    print("\nAgainst the goals of issue 20 (medians; CPU ratios are steadier on a shared machine):")
    if "cold" in results:
        _goal("keras+tensorflow: warm vs cold", results["warm"], results["cold"], "<= 1/30", 1 / 30)
        _goal("keras+tensorflow: one file changed vs cold", results["touched"], results["cold"], "(no goal)", None)
        if "flake8" in results:
            _goal("keras+tensorflow: cold vs flake8", results["cold"], results["flake8"], "<= 1.0", 1.0)
    if "training-cold" in results:
        _goal("training tree: warm vs cold", results["training-warm"], results["training-cold"], "<= 1/10", 1 / 10)
        if "training-ruff" in results:
            _goal("training tree: warm vs ruff check --no-cache", results["training-warm"], results["training-ruff"],
                  "< 1.0", 1.0, strict=True)
    if "project-cold" in results:
        _goal("tf-models: warm vs cold", results["project-warm"], results["project-cold"], "(no goal)", None)
        _goal("tf-models: a typical module changed vs cold", results["project-typical"], results["project-cold"],
              "<= 1/20", 1 / 20)
        _goal("tf-models: the earlier runs' module changed vs cold", results["project-first"], results["project-cold"],
              "(compare)", None)
        _goal("tf-models: the most imported module changed vs cold", results["project-hub"], results["project-cold"],
              "(report)", None)
        if "project-flake8" in results:
            _goal("tf-models: cold vs flake8", results["project-cold"], results["project-flake8"], "<= 1.0", 1.0)
    if "nocache" in results:
        _goal("--no-cache check vs flake8", results["nocache"], results["flake8"], "(no goal)", None)
        _goal("--no-cache -j 2 vs -j 1", results["nocache"], results["serial"], "(no goal)", None)
    for note in notes.values():
        print(f"  {note}")
    if "plain+tfp" in results:
        wall = results["plain+tfp"].wall / results["plain"].wall - 1
        cpu = results["plain+tfp"].cpu / results["plain"].cpu - 1
        own = results["plugin-own"].cpu / results["plain"].cpu
        print(f"  {'TFP plugin: its own CPU vs flake8 CPU, tree without TF':<52} {own:+8.1%}"
              f"{'':18} goal < +5%: {'met' if own < 0.05 else 'MISSED'}")
        print(f"  {'TFP plugin: difference of the flake8 runs (noisy)':<52} {wall:+8.1%} wall {cpu:+8.1%} CPU")
    if "editor+tfp" in results:
        added = results["editor+tfp"].wall - results["editor"].wall
        check_ms = results["plugin-check"].wall * 1000
        print(f"  {'editor path: the plugin checking train.py (in-process)':<52} {check_ms:8.0f} ms"
              f"{'':18} goal < 300 ms: {'met' if check_ms < 300 else 'MISSED'}")
        print(f"  {'editor path: latency a fresh flake8 process gains':<52} {added * 1000:8.0f} ms"
              f"{'':18} (imports LibCST: {'met' if added < 0.3 else 'over'} 300 ms)")
        print(f"  {'editor path: whole flake8 run with the plugin':<52} {results['editor+tfp'].wall * 1000:8.0f} ms")
    print(f"\n  load        {_load()} at the end")
    return 0


def emptying(cache: Path) -> Callable[[int], None]:
    def empty_cache(run: int) -> None:
        shutil.rmtree(cache, ignore_errors=True)
    return empty_cache


def copy_tree(source: Path, target: Path, suffixes: Tuple[str, ...] = (".py", ".ipynb"),
              dependency_files: bool = True, limit: Optional[int] = None) -> None:
    """Copy a tree's source files (and dependency files), as they are (once; a copy with the same file count is reused);
    with ``limit``, only the first ``limit`` files in path order."""
    keep = suffixes + ((".toml", ".cfg", ".txt", ".yml", ".yaml") if dependency_files else ())
    files = sorted(p for p in source.rglob("*") if p.is_file() and p.suffix in keep and ".tflint_perf_cache" not in p.parts)
    files = files[:limit]
    if target.is_dir() and sum(1 for p in target.rglob("*") if p.is_file() and p.suffix in keep) == len(files):
        return
    shutil.rmtree(target, ignore_errors=True)
    for path in files:
        destination = target / path.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)


def _training_section(args: argparse.Namespace, python: str, work: Path) -> Dict[str, Timing]:
    if not args.training_tree:
        print("\nTraining tree: skipped (give --training-tree DIR)")
        return {}
    tree = work / "training-tree"
    copy_tree(Path(args.training_tree), tree)
    cache = work / "training-cache"
    check = [python, "-m", "tflint_perf", "check", "--isolated", "--exit-zero", "--cache-dir", str(cache), "."]
    listed = subprocess.run(check + ["--show-files"], cwd=tree, capture_output=True, text=True).stdout.split()
    python_files = sum(1 for name in listed if name.endswith(".py"))
    lines = sum(Path(name).read_bytes().count(b"\n") for name in listed if name.endswith(".py"))
    print(f"\nTraining tree: {tree} (from {args.training_tree}: {len(listed)} files checked, {python_files} .py with "
          f"{lines:,} lines and {len(listed) - python_files} notebooks)")
    specs: List[Spec] = [
        ("training-cold", "tflint-perf check, cold (empty cache)", check, tree, emptying(cache)),
        ("training-warm", "tflint-perf check, warm (nothing changed)", check, tree, nothing),
    ]
    ruff = args.ruff or shutil.which("ruff", path=os.path.dirname(python)) or shutil.which("ruff")
    if ruff:
        specs.append(("training-ruff", "ruff check --no-cache (its default rules)",
                      [ruff, "check", "--isolated", "--no-cache", "--exit-zero", "--quiet", "."], tree, nothing))
    else:
        print("  ruff: not found (give --ruff PATH)")
    return {key: timing for key, timing in interleaved(args.runs, specs).items()}


def _project_section(args: argparse.Namespace, python: str, work: Path, flake8_plain: Sequence[str]
                     ) -> Tuple[Dict[str, Timing], Dict[str, str]]:
    tree = work / "project-tree"
    if args.project_tree:
        copy_sources(Path(args.project_tree), tree)
    else:
        sources = [package_dir(name) for name in ("official", "orbit")]
        if sources[0] is None:
            print("\nProject: skipped (pip install --no-deps tf-models-official, or give --project-tree)")
            return {}, {}
        for source in sources:
            if source is not None:
                copy_sources(source, tree / source.name)
    (tree / "pyproject.toml").write_text("[project]\nname = 'benchmark-project'\n")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tflint_perf.project.index import Project

    project = Project(tree)
    modules = [path for path in project.files() if path.suffix == ".py"]
    importers = {path: len(project.importers_of(path)) for path in modules}
    edges = sum(len(project.dependencies(path)) for path in modules)
    # A typical module: imported by one to three others, and whose change re-checks the median number of
    # modules among those (the earlier runs took the first such module in path order: a package's
    # __init__.py, which imports 15 modules and re-checks 19; it is timed too, to compare).
    candidates = [path for path in modules if 1 <= importers[path] <= 3]
    rechecked = {path: len(_affected_by(project, path)) for path in candidates}
    median = statistics.median_low(sorted(rechecked.values()))
    typical = next(path for path in candidates if rechecked[path] == median)
    first = candidates[0]
    hub = max(modules, key=lambda path: (importers[path], str(path)))
    rechecked[hub] = len(_affected_by(project, hub))
    files, lines, marked = tree_size(tree)
    print(f"\nProject: {tree} ({files} files, {lines:,} lines; {marked} mention tensorflow/keras; {edges} "
          f"first-party import edges; typical module {typical.relative_to(tree)} ({importers[typical]} importers, "
          f"{len(project.dependencies(typical))} imported; a change to a module with 1-3 importers re-checks "
          f"{median} modules at the median, {max(rechecked[p] for p in candidates)} at most), the earlier runs' "
          f"{first.relative_to(tree)} ({importers[first]} importers, {len(project.dependencies(first))} imported), "
          f"most imported {hub.relative_to(tree)} ({importers[hub]} importers))")
    cache = work / "project-cache"
    check = [python, "-m", "tflint_perf", "check", "--isolated", "--exit-zero", "--cache-dir", str(cache), "."]
    originals = {path: path.read_bytes() for path in (typical, first, hub)}

    def change(path: Path) -> Callable[[int], None]:
        def before(run: int) -> None:
            for other, data in originals.items():
                other.write_bytes(data)
            path.write_bytes(originals[path] + f"\n# changed by the benchmark, run {run} {time.time()}\n".encode())
        return before

    def restore(run: int) -> None:
        for path, data in originals.items():
            path.write_bytes(data)

    specs: List[Spec] = [] if args.no_flake8 else [
        ("flake8", "flake8 (default plugins, TFP hidden)", flake8_plain, tree, restore)]
    specs += [
        ("cold", "tflint-perf check, cold (empty cache)", check, tree, lambda run: (restore(run), emptying(cache)(run))),
        ("warm", "tflint-perf check, warm (nothing changed)", check, tree, nothing),
        ("typical", f"tflint-perf check, a typical module changed ({rechecked[typical]} re-checked)", check, tree,
         change(typical)),
        ("first", f"tflint-perf check, {first.relative_to(tree)} changed ({rechecked[first]} re-checked)", check, tree,
         change(first)),
        ("hub", f"tflint-perf check, the most imported changed ({rechecked[hub]} re-checked)", check, tree, change(hub)),
    ]
    try:
        timings = {f"project-{key}": timing for key, timing in interleaved(args.runs, specs).items()}
    finally:
        restore(0)
    notes = {"project-why": (
        f"tf-models: changing {hub.relative_to(tree)} re-checks {rechecked[hub]} of {len(modules)} modules (itself, "
        f"the modules it imports, its {importers[hub]} importers and theirs); the typical "
        f"{typical.relative_to(tree)}: {rechecked[typical]}; {first.relative_to(tree)}: {rechecked[first]}")}
    return timings, notes


def _affected_by(project, path: Path) -> set:
    """The modules a change to ``path`` re-checks: the files whose neighbourhood holds it (itself, what it
    imports, its importers two levels up): the inverse of the cache key's neighbourhood digest."""
    found = {path, *project.dependencies(path)}
    frontier = [path]
    for _ in range(2):
        frontier = [importer for file in frontier for importer in project.importers_of(file) if importer not in found]
        found.update(frontier)
    return found


IMPORT_TIME = textwrap.dedent(
    """\
    import sys, time
    start = time.perf_counter()
    import tflint_perf.faces.cli
    print(f"{time.perf_counter() - start:.4f}", "libcst" in sys.modules, "tflint_perf.rules" in sys.modules)
    """
)


def _imports_section(python: str, work: Path, results: Dict[str, Timing]) -> Dict[str, str]:
    """The command line's own start-up: importing it (best of 10), and what a warm run imports."""
    runs = [subprocess.run([python, "-c", IMPORT_TIME], capture_output=True, text=True, check=True).stdout.split()
            for _ in range(10)]
    best = min(float(run[0]) for run in runs)
    bare = min(timed([python, "-c", "pass"], work)[0] for _ in range(5))
    print(f"\nImports: `import tflint_perf.faces.cli` {best * 1000:.0f} ms (best of 10; it imports LibCST: "
          f"{runs[0][1]}, the rules: {runs[0][2]}); a bare `python -c pass` {bare * 1000:.0f} ms")
    notes = {"imports": f"importing the command line: {best * 1000:.0f} ms (LibCST imported: {runs[0][1]}, "
                        f"the rules: {runs[0][2]}; a bare interpreter starts in {bare * 1000:.0f} ms)"}
    for key, tree, cache in (("training-warm", work / "training-tree", work / "training-cache"),
                             ("warm", work / "tf-tree", work / "cache")):
        if key in results and tree.is_dir():
            shown = subprocess.run([python, "-X", "importtime", "-m", "tflint_perf", "check", "--isolated",
                                    "--exit-zero", "--cache-dir", str(cache), "."], cwd=tree, capture_output=True,
                                   text=True).stderr.splitlines()
            imported = {line.rsplit("|", 1)[-1].strip() for line in shown if line.startswith("import time:")}
            heavy = sorted(name for name in imported if name == "libcst" or name == "tflint_perf.rules")
            notes[f"imports-{key}"] = (f"a warm run on {tree.name} imported {len(imported)} modules, "
                                       f"{'among them ' + ', '.join(heavy) if heavy else 'neither LibCST nor the rules'}")
            break
    return notes


def _goal(label: str, timing: Timing, against: Timing, goal: str, bound: Optional[float], strict: bool = False
          ) -> None:
    wall, cpu = timing.wall / against.wall, timing.cpu / against.cpu
    verdict = "" if bound is None else ("met" if (wall < bound if strict else wall <= bound) else "MISSED")
    fraction = f"(1/{1 / wall:.0f})" if 0 < wall < 1 else ""
    print(f"  {label:<56} {wall:8.3f} wall {fraction:>7} {cpu:8.3f} CPU   goal {goal} {verdict}")


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f} (1-minute load average; 5-minute {five:.2f})"


def _tflint_perf_origin(python: str, cwd: Optional[Path] = None) -> str:
    """Which checkout is timed: a PYTHONPATH checkout wins over an installed one (and a checkout in ``cwd``, where
    the timed commands run, over both)."""
    found = subprocess.run([python, "-c", "import tflint_perf; print(tflint_perf.__file__)"], capture_output=True,
                           text=True, cwd=cwd).stdout.strip()
    root = Path(found).parent.parent if found else None
    commit = ""
    if root is not None and (root / ".git").exists():
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        commit = f", commit {commit}{' with local changes' if dirty else ''}"
    return f"from {root}{commit}"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _memory() -> str:
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        return f"{pages / 2**30:.0f} GiB memory"
    except (ValueError, OSError, AttributeError):
        return "memory unknown"


def _tf_version() -> str:
    for name in ("tensorflow", "tensorflow-cpu"):
        version = version_of(name)
        if version != "not installed":
            return version
    return "not installed"


if __name__ == "__main__":
    sys.exit(main())
