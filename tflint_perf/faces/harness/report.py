"""Bench output: a text table (default), Markdown (for docs/benchmarks.md) or JSON lines (CI diffs)."""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from tflint_perf.faces.harness.runner import NEEDS_GPU, Environment, Record

_HEADERS = ("rule", "name", "TF graph rewrites", "before s (min-max)", "after s (min-max)", "speedup",
            "equivalence", "after from")


def json_lines(records: Sequence[Record]) -> str:
    return "".join(record.as_json() + "\n" for record in records)


def rows(records: Sequence[Record]) -> List[Tuple[str, ...]]:
    pairs: Dict[Tuple[str, str], Dict[str, Record]] = {}
    for record in records:
        pairs.setdefault((record.rule, record.rewrites), {})[record.variant] = record
    table = []
    for (rule, rewrites), variants in pairs.items():
        before, after = variants["before"], variants["after"]
        rewrites_label = "TF defaults" if rewrites == "defaults" else rewrites.replace("off: ", "") + " off"
        if before.equivalence == NEEDS_GPU:
            table.append((rule, before.name, "-", NEEDS_GPU, NEEDS_GPU, "-", NEEDS_GPU, _origin(after)))
            continue
        if before.equivalence == "error":
            table.append((rule, before.name, rewrites_label, "-", "-", "-", "error: " + _first_line(before.equivalence_detail),
                          _origin(after)))
            continue
        table.append((rule, before.name, rewrites_label, _seconds(before), _seconds(after), _speedup(after),
                      f"{after.equivalence}: {after.equivalence_detail}", _origin(after)))
    return table


def text_table(records: Sequence[Record], environment: Environment, repeats: int) -> str:
    table = [_HEADERS] + rows(records)
    widths = [max(len(row[i]) for row in table) for i in range(len(_HEADERS) - 1)]
    lines = [_title(environment, repeats), ""]
    for row in table:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1])
    lines += ["", _legend()]
    return "\n".join(lines) + "\n"


def markdown_table(records: Sequence[Record], environment: Environment, repeats: int) -> str:
    def escape(cell: str) -> str:
        return cell.replace("|", "\\|")

    lines = [_title(environment, repeats), "", "| " + " | ".join(_HEADERS) + " |",
             "|" + "---|" * len(_HEADERS)]
    lines += ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in rows(records)]
    lines += ["", _legend()]
    return "\n".join(lines) + "\n"


def _title(environment: Environment, repeats: int) -> str:
    return (f"tflint-perf bench: TensorFlow {environment.tf_version}, {environment.device}, "
            f"{environment.cores} cores; median of {repeats} runs after a warm-up, each variant in its own process")


def _legend() -> str:
    return ("speedup = before median / after median, with the 95% bootstrap interval of the ratio over the runs "
            "paired by index (each variant in its own process; the statistics are verify's, harness/verdicts.py); "
            "'no measurable difference' when the interval includes 1 or fewer than 5 runs were paired. "
            "'TF defaults': TensorFlow's default tf.data graph rewrites on; '<rewrite> off': switched off, "
            "as on TensorFlow versions without it.")


def _seconds(record: Record) -> str:
    return f"{record.median_s:.3f} ({record.min_s:.3f}-{record.max_s:.3f})"


def _speedup(record: Record) -> str:
    if record.speedup is None:
        return "-"
    label = f"{record.speedup:.2f}x"
    if record.interval is None:
        return label
    low, high = record.interval
    if record.verdict == "no measurable difference":
        return f"{label} (no measurable difference: {low:.2f}-{high:.2f})"
    return f"{label} ({low:.2f}-{high:.2f})"


def _origin(record: Record) -> str:
    origin = record.after_source
    if origin.startswith("codemod"):
        return "unsafe fix" if "unsafe" in origin else "fix"
    if "use-instead" in origin:
        return "use-instead"
    return "hand-written" if origin else "-"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
