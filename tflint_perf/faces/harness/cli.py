"""The ``bench`` and ``verify`` subcommands. ``register(subparsers)`` adds them to a CLI.

Importing this module imports neither TensorFlow nor NumPy: each handler imports what it needs
when it runs, and says how to install TensorFlow when it is missing (exit 2).
"""

from __future__ import annotations

import argparse
import sys

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def register(subparsers) -> None:
    bench = subparsers.add_parser(
        "bench",
        help="time each rule's fix before/after on synthetic data with real TensorFlow",
        description="Run each rule's scenario (its bad example made runnable) before and after the rule's fix, "
                    "each variant in its own process, and check that the fix keeps what it must keep. "
                    "Needs TensorFlow: pip install 'tflint-perf[bench]'.",
    )
    bench.add_argument("codes", nargs="*", metavar="CODE", help="rule codes or prefixes (default: all)")
    bench.add_argument("--repeats", type=_positive, default=5, metavar="N", help="timed runs per variant (default 5)")
    bench.add_argument("--quick", action="store_true", help="small sizes: checks that every scenario runs, in seconds")
    bench.add_argument("--rewrites", choices=("both", "defaults", "off"), default="both",
                       help="TensorFlow's tf.data graph rewrites: as by default, switched off, or both (default)")
    output = bench.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="one JSON line per variant on stdout")
    output.add_argument("--markdown", action="store_true", help="the table in Markdown")
    bench.add_argument("--list", action="store_true", help="list the scenarios and exit")
    bench.set_defaults(func=run_bench_command)

    verify = subparsers.add_parser(
        "verify",
        help="time your own tf.data pipeline before/after the file's fixes (runs your code)",
        description="Import FILE as the project runs it (this runs your code), call FUNCTION, which returns a "
                    "tf.data.Dataset or a tuple, list or dict holding some, once as written and once with the "
                    "fixes `check` finds in FILE and every project module it imports applied in memory, drain "
                    "each dataset on both sides, and report the speed-up with its 95%% interval (before and after "
                    "runs interleaved until the interval excludes 1 or the time budget ends) and what the "
                    "elements say. Exit 0: identical or comparable as far as the pipeline allows; 1: the elements "
                    "differ; 2: an error.",
    )
    verify.add_argument("target", metavar="FILE::FUNCTION",
                        help="e.g. train.py::make_dataset; FILE::FUNCTION[0] or FILE::FUNCTION['train'] picks one "
                             "of the datasets returned; FILE::Class.method calls the method on an instance built "
                             "with --init-args / --init-kwargs")
    verify.add_argument("--steps", type=_positive, default=50, help="batches to drain per run (default 50)")
    verify.add_argument("--step-ms", type=_non_negative, default=10.0,
                        help="simulated training step per batch, in milliseconds (default 10)")
    verify.add_argument("--repeats", type=_positive, default=5, metavar="N",
                        help="paired before/after runs at least, per dataset (default 5)")
    verify.add_argument("--max-runs", type=_positive, default=30, metavar="N",
                        help="paired runs at most, per dataset (default 30)")
    verify.add_argument("--budget", type=_non_negative, default=60.0, metavar="SECONDS",
                        help="no new paired run starts after this many seconds per dataset, decided or not "
                             "(default 60)")
    verify.add_argument("--synthetic", action="store_true",
                        help="replace in-memory source data (from_tensor_slices / from_tensors) with random data "
                             "of the same shapes and dtypes")
    verify.add_argument("--args", default="", metavar="VALUES",
                        help="positional arguments for FUNCTION, as in a call: Python literals (read with "
                             "ast.literal_eval) or array(shape, dtype) / tensor(shape, dtype) for random data of "
                             "that shape, e.g. --args \"32, 'train', array((1000, 28, 28))\"")
    verify.add_argument("--kwargs", default="", metavar="NAME=VALUE,...",
                        help="keyword arguments for FUNCTION, e.g. --kwargs \"batch_size=32, training=True\" "
                             "(or a dict literal); values as for --args")
    verify.add_argument("--init-args", default="", metavar="VALUES",
                        help="for FILE::Class.method: positional arguments of the class's constructor, as for "
                             "--args (a new instance is built for every call)")
    verify.add_argument("--init-kwargs", default="", metavar="NAME=VALUE,...",
                        help="for FILE::Class.method: keyword arguments of the class's constructor, as for --kwargs")
    verify.add_argument("--seed", type=int, default=None,
                        help="seed TensorFlow (tf.random.set_seed, which also seeds shuffle), NumPy and Python "
                             "before each call, so shuffled or random pipelines can be compared element by element")
    verify.add_argument("--unsafe-fixes", action="store_true", help="apply unsafe fixes too")
    verify.add_argument("--rewrites-off", action="store_true",
                        help="switch off the inject_prefetch and map_parallelization graph rewrites, as on older TF")
    verify.add_argument("--json", action="store_true", help="one JSON line per side on stdout")
    verify.set_defaults(func=run_verify_command)


def run_bench_command(args: argparse.Namespace) -> int:
    from tflint_perf.faces.harness.scenarios import select

    try:
        scenarios = select(args.codes)
    except KeyError as error:
        print(f"tflint-perf bench: error: no scenario for `{error.args[0]}`", file=sys.stderr)
        return EXIT_USAGE
    if args.list:
        for scenario in scenarios:
            gpu = " (needs a GPU)" if scenario.needs_gpu else ""
            print(f"{scenario.code}  {scenario.name}: {scenario.title}{gpu}")
        return EXIT_OK
    from tflint_perf.faces.harness.dependency import import_tensorflow

    if import_tensorflow("bench") is None:
        return EXIT_USAGE
    from tflint_perf.faces.harness import report
    from tflint_perf.faces.harness.progress import Progress
    from tflint_perf.faces.harness.runner import BenchOptions, run_bench, tensorflow_environment, variant_count

    rewrites = {"both": ("defaults", "off"), "defaults": ("defaults",), "off": ("off",)}[args.rewrites]
    options = BenchOptions(repeats=args.repeats, quick=args.quick, rewrites=rewrites)
    environment = tensorflow_environment()
    progress = Progress(variant_count(scenarios, options, environment))
    records = run_bench(scenarios, options, environment, progress)
    if args.json:
        sys.stdout.write(report.json_lines(records))
    elif args.markdown:
        sys.stdout.write(report.markdown_table(records, environment, args.repeats))
    else:
        sys.stdout.write(report.text_table(records, environment, args.repeats))
    failed = [r for r in records if r.equivalence in ("fail", "error")]
    for record in failed:
        if record.variant == "before":
            print(f"tflint-perf bench: {record.rule} ({record.rewrites}): {record.equivalence}: "
                  f"{record.equivalence_detail}", file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK


def run_verify_command(args: argparse.Namespace) -> int:
    from tflint_perf.faces.harness.call_arguments import ArgumentError, parse_arguments
    from tflint_perf.faces.harness.verify import VerifyError, VerifyOptions, verify

    try:
        arguments = parse_arguments(args.args, args.kwargs)
        init_arguments = parse_arguments(args.init_args, args.init_kwargs)
    except ArgumentError as error:
        print(f"tflint-perf verify: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    options = VerifyOptions(steps=args.steps, step_ms=args.step_ms, repeats=args.repeats, max_runs=args.max_runs,
                            budget_s=args.budget, synthetic=args.synthetic, unsafe_fixes=args.unsafe_fixes,
                            rewrites_off=args.rewrites_off, as_json=args.json, arguments=arguments,
                            init_arguments=init_arguments, seed=args.seed)
    try:
        return verify(args.target, options)
    except VerifyError as error:
        print(f"tflint-perf verify: error: {error}", file=sys.stderr)
        return EXIT_USAGE


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _non_negative(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value
