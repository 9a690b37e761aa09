"""The ``tflint-perf`` command line, with ruff's contract: 0 clean, 1 findings, 2 usage or internal error.

A warm ``check`` (every result cached) imports neither the engine nor the rules, and so not LibCST:
what needs them (checking a file, a rule's metadata, validating settings not seen before, the verbs)
imports them where it is used.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, TextIO, Tuple

from tflint_perf import __version__
from tflint_perf.checking.config import (
    ConfigError,
    Settings,
    did_you_mean,
    find_config,
    load_config,
    parse_version,
    with_cli_overrides,
    with_project_version,
)
from tflint_perf.checking.cache import Cache, CacheError, clean, env_flag
from tflint_perf.checking.cache import resolve_directory as resolve_cache_directory
from tflint_perf.checking.results import FileResult, Mode
from tflint_perf.text.diagnostics import Diagnostic
from tflint_perf.checking.discovery import NO_FILES_WARNING, Found, is_excluded, iter_source_files_resolved, once_each
from tflint_perf.faces.output import FORMATS, HUMAN, WRITERS, colour_enabled, plural, set_colour, summary_lines
from tflint_perf.checking.runner import Job, check_files, default_jobs

COMMANDS = ("check", "rule", "version", "clean", "server", "bench", "verify")


def _codes(value: str) -> List[str]:
    return [code.strip() for code in value.split(",") if code.strip()]


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got `{value}`")
    return number


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tflint-perf",
        description="Find and fix performance mistakes in TensorFlow/Keras training code.",
    )
    parser.add_argument("--version", action="version", version=f"tflint-perf {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="check files (the default command)")
    check.add_argument("paths", nargs="*", help="files or directories to check, or - for stdin (default: .)")
    check.add_argument("--fix", action="store_true", help="apply safe fixes")
    check.add_argument("--unsafe-fixes", action="store_true", default=None, help="also apply (or show) unsafe fixes")
    check.add_argument("--diff", action="store_true", help="print the diff of the fixes instead of writing them")
    check.add_argument("--show-fixes", action="store_true", help="list the findings that were fixed")
    check.add_argument("--select", type=_codes, help="rule codes or prefixes to enable (replaces the config)")
    check.add_argument("--extend-select", type=_codes, help="rule codes or prefixes to enable as well")
    check.add_argument("--ignore", type=_codes, help="rule codes or prefixes to disable")
    check.add_argument("--per-file-ignores", action="append", metavar="GLOB:CODES", help="ignore codes in matching files")
    check.add_argument("--exclude", type=_codes, metavar="GLOBS", help="more paths to exclude")
    check.add_argument("--force-exclude", action="store_true", help="apply excludes to paths given explicitly too")
    check.add_argument("--output-format", choices=FORMATS, default=os.environ.get("TFLINT_PERF_OUTPUT_FORMAT", "concise"),
                       help="how findings are written (env TFLINT_PERF_OUTPUT_FORMAT; default: concise); for CI: "
                            "github annotations, sarif for code scanning, gitlab code quality, junit (docs/ci.md)")
    check.add_argument("-o", "--output-file", help="write the findings to this file")
    check.add_argument("--statistics", action="store_true",
                       help="print only a count of findings per rule (a JSON array with --output-format json)")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    check.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when any file was fixed")
    check.add_argument("--stdin-filename", help="the name to report for stdin input")
    check.add_argument("--config", help="path to a pyproject.toml to read settings from")
    check.add_argument("--isolated", action="store_true", help="ignore configuration files")
    check.add_argument("--target-version", help="the TensorFlow version the code runs on, e.g. 2.15")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings each given path is checked with (what was inferred, and from where) and exit")
    add_verb_arguments(check)
    check.add_argument("-q", "--quiet", action="store_true", help="print findings but no summary")
    check.add_argument("-j", "--jobs", type=_positive, metavar="N", help="check files in N processes (default: the number of CPUs)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write cached results (env TFLINT_PERF_NO_CACHE=1)")
    check.add_argument("--cache-dir", metavar="DIR", help="where cached results live (env TFLINT_PERF_CACHE_DIR; default: .tflint_perf_cache in the project root)")
    check.set_defaults(func=run_check)

    clean_ = commands.add_parser("clean", help="remove the cache directory")
    clean_.add_argument("--cache-dir", metavar="DIR", help="the cache directory to remove (default as for check)")
    clean_.set_defaults(func=run_clean)

    rule = commands.add_parser("rule", help="explain a rule")
    rule.add_argument("code", nargs="?", help="a rule code or name, e.g. TFP101")
    rule.add_argument("--all", action="store_true", help="explain every rule")
    rule.add_argument("--output-format", choices=("text", "json"), default="text")
    rule.set_defaults(func=run_rule)

    server = commands.add_parser("server", help="run the language server (LSP over stdio) for editors")
    server.add_argument("--stdio", action="store_true",
                        help="talk over stdin/stdout: the only transport, accepted for clients that pass it")
    server.set_defaults(func=run_server)

    version = commands.add_parser("version", help="print the version")
    version.set_defaults(func=lambda args: print(f"tflint-perf {__version__}") or 0)

    from tflint_perf.faces.harness.cli import register  # imports no TensorFlow until bench/verify run

    register(commands)
    return parser


def add_verb_arguments(check: argparse.ArgumentParser) -> None:
    """The verbs in verbs.py: --show-files, --add-noqa, --fix-only, --watch."""
    check.add_argument("--show-files", action="store_true", help="print the files that would be checked and exit")
    check.add_argument("--add-noqa", action="store_true",
                       help="add `# noqa: CODE` to every line with findings (merging with an existing `# noqa`), then exit")
    check.add_argument("--fix-only", action="store_true",
                       help="apply fixes, report nothing that remains, exit 0 (1 with --exit-non-zero-on-fix when a file was fixed)")
    check.add_argument("-w", "--watch", action="store_true",
                       help="check again whenever a file changes (needs the watchfiles package: pip install 'tflint-perf[watch]')")


def run_verbs(args: argparse.Namespace, settings: Settings) -> Optional[int]:
    """The exit code of a verb that replaces checking (--show-files, --add-noqa), else None."""
    if args.statistics:
        from tflint_perf.faces import verbs  # the verbs import the engine: only when one is asked for

        if args.output_format not in verbs.STATISTICS_FORMATS:
            raise ConfigError(f"--statistics: unsupported output format `{args.output_format}` "
                              f"(use {', '.join(verbs.STATISTICS_FORMATS)})")
    if args.show_files:
        from tflint_perf.faces import verbs

        return verbs.show_files(gather(args.paths or ["."], settings, args.force_exclude, args.quiet))
    if args.add_noqa:
        from tflint_perf.faces import verbs

        return verbs.add_noqa(gather(args.paths or ["."], settings, args.force_exclude, args.quiet), settings, display_name)
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in arguments), None)
    if first is None or (first not in COMMANDS and first not in ("-h", "--help", "--version")):
        arguments.insert(0, "check")  # `tflint-perf --fix train.py` means `tflint-perf check --fix train.py`
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as error:  # noqa: BLE001 - a bug of ours: exit 2 with a report, not exit 1 with a bare traceback
        import traceback

        traceback.print_exc()
        print(f"tflint-perf: internal error: {type(error).__name__}: {error} (please report this)", file=sys.stderr)
        return 2


def run_server(args: argparse.Namespace) -> int:
    from tflint_perf.faces.server import run  # pygls only for the server

    return run()


# -- rule ------------------------------------------------------------------------------------------
def run_rule(args: argparse.Namespace) -> int:
    from tflint_perf.rules import all_rules, find_rule

    if args.all:
        rules = all_rules()
    elif args.code:
        try:
            rules = [find_rule(args.code)]
        except KeyError:
            print(f"tflint-perf: error: unknown rule `{args.code}`{did_you_mean(args.code)}", file=sys.stderr)
            return 2
    else:
        print("tflint-perf: error: give a rule code (e.g. TFP101) or --all", file=sys.stderr)
        return 2
    if args.output_format == "json":
        payload = [
            {
                "code": r.code,
                "name": r.name,
                "summary": r.summary,
                "fix": r.fix_availability,
                "default_enabled": r.default_enabled,
                "options": [{"key": o.key, "type": o.toml_type_name(), "default": o.default, "help": o.help}
                            for o in r.options],
                "explanation": r.docs_markdown(),
            }
            for r in rules
        ]
        print(json.dumps(payload if args.all else payload[0], indent=2))
    else:
        print("\n".join(r.docs_markdown() for r in rules))
    return 0


# -- clean -----------------------------------------------------------------------------------------
def run_clean(args: argparse.Namespace) -> int:
    config = find_config(Path.cwd())
    root = config.parent.resolve() if config is not None else Path.cwd()
    directory = resolve_cache_directory(root, args.cache_dir)
    try:
        removed = clean(directory)
    except (CacheError, OSError) as problem:
        print(f"tflint-perf: error: {problem}", file=sys.stderr)
        return 2
    print(f"Removed {directory}" if removed else f"No cache at {directory}", file=sys.stderr)
    return 0


# -- check -----------------------------------------------------------------------------------------
@dataclass
class Run:
    """What a check run found and did, across files."""

    settings: Settings
    args: argparse.Namespace
    results: List[FileResult] = field(default_factory=list)
    missing: List[str] = field(default_factory=list)
    stdout_source: Optional[bytes] = None  # with --fix on stdin: what to write to stdout

    @property
    def unsafe(self) -> bool:
        return bool(self.args.unsafe_fixes if self.args.unsafe_fixes is not None else self.settings.unsafe_fixes)

    @property
    def mode(self) -> Mode:
        return Mode(fix=self.args.fix or self.args.fix_only, diff=self.args.diff, unsafe=self.unsafe)


def load_settings(args: argparse.Namespace, validate: bool = True) -> Settings:
    """The run's settings. ``validate=False`` checks nothing that needs the rules (selectors, rule
    options): only for settings known to be valid (``settings_for_run``)."""
    if args.isolated:
        settings = Settings()
    elif args.config:
        path = Path(args.config)
        if not path.is_file():
            raise ConfigError(f"{args.config}: configuration file not found")
        settings = load_config(path, validate=validate)
    else:
        settings = load_config(find_config(Path.cwd()), validate=validate)
    settings = with_cli_overrides(settings, args.select, args.extend_select, args.ignore, args.exclude,
                                  args.per_file_ignores, validate=validate)
    if args.target_version:
        settings.target_version = parse_version(args.target_version, "--target-version")
        settings.target_version_source = "--target-version"
    return settings


def gather(paths: Sequence[str], settings: Settings, force_exclude: bool, quiet: bool
           ) -> List[Tuple[str, Optional[Path], bool]]:
    """(raw argument, file, explicit) for every file to check; file is None for a missing path."""
    return [(raw, path, explicit) for raw, path, explicit, _ in gather_resolved(paths, settings, force_exclude, quiet)]


def gather_resolved(paths: Sequence[str], settings: Settings, force_exclude: bool, quiet: bool) -> List[Found]:
    """As ``gather``, with the real path of each file found in a directory (discovery resolved it).
    Each file once, however many of the paths name it; when none names anything, a warning on
    stderr (not with --quiet), as ruff."""
    files: List[Found] = []
    for raw in paths:
        if raw == "-":
            files.append((raw, None, True, None))
            continue
        path = Path(raw)
        if path.is_dir():
            files.extend((raw, file, False, real) for file, real in iter_source_files_resolved(path, settings))
        elif path.exists() or path.is_symlink():
            if not (force_exclude and is_excluded(path, settings)):
                files.append((raw, path, True, None))
        else:
            files.append((raw, None, False, None))
    if not files and not quiet:
        print(NO_FILES_WARNING, file=sys.stderr)
    return once_each(files)


def settings_for_run(args: argparse.Namespace, cache_directory: Optional[Callable[[Settings], Optional[Path]]]
                     ) -> Tuple[Settings, Optional[str]]:
    """The run's settings, and their effective fingerprint when the results cache remembers these
    settings as written from a run that validated them: they are then taken without asking any rule
    (a warm run imports none). Otherwise, or on any error, they are loaded and validated in full, so
    that every error is the one the validating load reports."""
    if cache_directory is not None:
        try:
            quick = load_settings(args, validate=False)
        except ConfigError:
            quick = None
        directory = cache_directory(quick) if quick is not None else None
        if quick is not None and directory is not None:
            fingerprint = Cache.known_fingerprint(directory, quick)
            if fingerprint is not None:
                return quick, fingerprint
    return load_settings(args), None


def run_check(args: argparse.Namespace) -> int:
    if args.output_format not in FORMATS:  # argparse checks choices on the command line, not a default from the environment
        print(f"tflint-perf: error: TFLINT_PERF_OUTPUT_FORMAT={args.output_format!r} is not an output format "
              f"(choose from {', '.join(FORMATS)})", file=sys.stderr)
        return 2
    if args.watch:
        from tflint_perf.faces import verbs

        return verbs.watch(args, run_check)
    use_cache = not (args.no_cache or env_flag("TFLINT_PERF_NO_CACHE"))
    try:
        settings, fingerprint = settings_for_run(
            args, (lambda quick: resolve_cache_directory(quick.root, args.cache_dir)) if use_cache else None)
        verb = run_verbs(args, settings)
    except ConfigError as problem:
        print(f"tflint-perf: error: {problem}", file=sys.stderr)
        return 2
    if verb is not None:
        return verb
    if args.show_settings:
        return show_settings(settings, args.paths or ["."])
    run = Run(settings, args)
    gathered = gather_resolved(args.paths or ["."], settings, args.force_exclude, args.quiet)
    jobs = [Job(path, display_name(path), explicit, real) for raw, path, explicit, real in gathered
            if raw != "-" and path is not None]
    cache = Cache(resolve_cache_directory(settings.root, args.cache_dir), settings, fingerprint) if use_cache else None
    checked = iter(check_files(jobs, settings, run.mode, cache, args.jobs or default_jobs()))
    for raw, path, explicit, _ in gathered:  # results in the order the files were gathered, whatever --jobs
        if raw == "-":
            check_stdin(run)
        elif path is None:  # like ruff: a TFP001 finding (a line on stderr when TFP001 is not selected)
            from tflint_perf.checking.checker import unreadable

            missing = unreadable(raw, Path(raw), settings, "no such file or directory")
            run.results.append(missing) if missing.diagnostics else run.missing.append(raw)
        else:
            run.results.append(next(checked))
    set_colour(not args.output_file and colour_enabled(sys.stderr if run.stdout_source is not None else sys.stdout))
    return report(run)


def show_settings(settings: Settings, paths: Sequence[str]) -> int:
    """Like ruff's --show-settings: the resolved settings, per path since the TensorFlow version is per project."""
    from tflint_perf.rules import all_rules
    from tflint_perf.rules.base import options_of

    print(f"config file: {settings.config_file or '(none)'}")
    print(f"root: {settings.root}")
    selected = settings.selected_codes()
    print(f"selected rules: {', '.join(sorted(selected))}")
    # Which rules the default set holds, and which opt-in rules these settings turn on (ruff's
    # --show-settings lists its linter.rules; here the default set is worth saying too).
    print(f"rules on by default: {', '.join(r.code for r in all_rules() if r.default_enabled)}")
    opt_in = [f"{r.code} ({'selected' if r.code in selected else 'off'})" for r in all_rules() if not r.default_enabled]
    print(f"rules off by default (opt-in): {', '.join(opt_in) or '(none)'}")
    if settings.per_file_ignores:
        print(f"per-file-ignores: {dict(settings.per_file_ignores)}")
    print(f"unsafe-fixes: {str(settings.unsafe_fixes).lower()}")
    print(f"respect-gitignore: {str(settings.respect_gitignore).lower()}")
    print(f"exclude: {', '.join(settings.exclude)}")
    if settings.extend_exclude:
        print(f"extend-exclude: {', '.join(settings.extend_exclude)}")
    for key, option in sorted(options_of(all_rules()).items()):  # every rule option, set or not
        where = "configured" if key in settings.options else "default"
        print(f"option {key}: {settings.option(key)!r} ({where})")
    for raw in paths:
        resolved = with_project_version(settings, Path(raw).resolve())
        version = resolved.target_version
        where = resolved.target_version_source or "not configured, and no dependency file declares TensorFlow"
        shown = f"{version[0]}.{version[1]}" if version else "unknown"
        print(f"{raw}: target-version {shown} ({where})")
    return 0


def display_name(path: Path) -> str:
    """The path relative to the working directory (``os.path.relpath``)."""
    text = str(path)
    if not os.path.isabs(text) and not os.path.splitdrive(text)[0]:  # relpath's answer, without its work
        normal = os.path.normpath(text)
        if normal != os.pardir and not normal.startswith(os.pardir + os.sep):
            return normal
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)


def check_stdin(run: Run) -> None:
    from tflint_perf.checking.checker import process_bytes

    name = run.args.stdin_filename or "-"
    data = sys.stdin.buffer.read()
    settings = with_project_version(run.settings, Path(name).resolve()) if name != "-" else run.settings
    result = process_bytes(data, name, Path(name), settings, run.mode, explicit=True)
    run.results.append(result)
    if run.mode.fix and not run.args.diff:
        # Like ruff: with --fix on stdin the (fixed) source goes to stdout, the report to stderr. The
        # bytes are the input's, in its encoding, BOM and line endings; unchanged when nothing was fixed.
        run.stdout_source = data
        if result.fixed_text is not None:
            from tflint_perf.text.source import SourceError, SourceFile

            try:
                run.stdout_source = SourceFile.decode(data).encode_fixed(data, result.fixed_text)
            except SourceError as problem:
                result.errors.append(str(problem))
                result.diagnostics = sorted(result.diagnostics + result.fixed,
                                            key=lambda d: (d.cell or 0, d.location.row, d.location.column))
                result.fixed = []


def report(run: Run) -> int:
    args = run.args
    for raw in run.missing:
        print(f"{raw}: error: no such file or directory", file=sys.stderr)
    for result in run.results:
        for note in result.notes:
            print(f"{result.name}: note: {note}", file=sys.stderr)
        for problem in result.errors + result.internal_errors:
            print(f"{result.name}: error: {problem}", file=sys.stderr)
    all_diagnostics = [d for result in run.results for d in result.diagnostics]
    fixed = [d for result in run.results for d in result.fixed]
    sources = {result.name: result.text for result in run.results if result.text is not None}
    diffs = [result.diff for result in run.results if result.diff]
    file_errors = len(run.missing) + sum(len(result.errors) for result in run.results)
    internal_errors = sum(len(result.internal_errors) for result in run.results)
    fmt = args.output_format
    out: TextIO
    to_file = None
    if args.output_file:
        to_file = open(args.output_file, "w", encoding="utf-8")
        out = to_file
    elif run.stdout_source is not None:
        out = sys.stderr
    else:
        out = sys.stdout
    try:
        diagnostics = sorted(all_diagnostics,
                             key=lambda d: (d.filename, d.cell or 0, d.location.row, d.location.column, d.code))
        if args.diff:
            for diff in diffs:
                sys.stdout.write(diff)
            if fixed and not args.quiet:
                print(f"Would fix {plural(len(fixed))}.", file=sys.stderr)
            elif not args.quiet:
                print("No errors would be fixed.", file=sys.stderr)
        elif args.fix_only:
            from tflint_perf.faces import verbs

            if not args.quiet and fmt in HUMAN:
                print(verbs.fix_only_summary(len(fixed), diagnostics, run.unsafe),
                      file=sys.stderr if run.stdout_source is not None else out)
        elif args.statistics:
            from tflint_perf.faces import verbs

            verbs.write_statistics(diagnostics, out, run.unsafe, fmt)
        else:
            if args.show_fixes and fixed and fmt in HUMAN:
                out.write(f"Fixed {plural(len(fixed))}:\n")
                for result in sorted(run.results, key=lambda r: r.name):
                    if result.fixed:
                        out.write(f"- {result.name}:\n")
                        for code, name, count in _grouped(result.fixed):
                            out.write(f"    {count} × {code} ({name})\n")
            WRITERS[fmt](diagnostics, out, run.unsafe, sources)
            if fmt in HUMAN and not args.quiet:
                summary_out = sys.stderr if run.stdout_source is not None else out
                for line in summary_lines(diagnostics, len(fixed), run.unsafe, args.fix):
                    if not (file_errors and line == "All checks passed!"):  # an error was reported on stderr
                        summary_out.write(line + "\n")
        if run.stdout_source is not None:
            sys.stdout.flush()
            sys.stdout.buffer.write(run.stdout_source)
            sys.stdout.buffer.flush()
    finally:
        if to_file is not None:
            to_file.close()
    if internal_errors:
        return 2
    if args.diff:
        return 1 if diffs else 0
    if args.fix_only:  # leftover findings are not reported and do not fail the run
        return 1 if (args.exit_non_zero_on_fix and fixed) or file_errors else 0
    if args.exit_zero:
        return 0
    if diagnostics or file_errors:
        return 1
    if args.exit_non_zero_on_fix and fixed:
        return 1
    return 0


def _grouped(diagnostics: List[Diagnostic]):
    counts: Dict[tuple, int] = {}
    for d in diagnostics:
        counts[(d.code, d.name)] = counts.get((d.code, d.name), 0) + 1
    return [(code, name, count) for (code, name), count in sorted(counts.items())]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

