"""Bench output: a text table (default), Markdown (for docs/benchmarks.md) or JSON lines (CI diffs)."""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from tflint_perf.faces.harness.runner import NEEDS_GPU, Environment, Record

NO_EFFECT_BELOW = 1.3  # run-to-run noise on a shared 2-core machine reaches +-20-60% (rule-catalog 9.1)
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
        table.append((rule, before.name, rewrites_label, _seconds(before), _seconds(after), _speedup(after.speedup),
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
    return (f"speedup = before median / after median; below {NO_EFFECT_BELOW}x read it as no effect (run-to-run noise). "
            "'TF defaults': TensorFlow's default tf.data graph rewrites on; '<rewrite> off': switched off, "
            "as on TensorFlow versions without it.")


def _seconds(record: Record) -> str:
    return f"{record.median_s:.3f} ({record.min_s:.3f}-{record.max_s:.3f})"


def _speedup(value) -> str:
    if value is None:
        return "-"
    label = f"{value:.2f}x"
    return label if value >= NO_EFFECT_BELOW or value <= 1 / NO_EFFECT_BELOW else f"{label} (no effect)"


def _origin(record: Record) -> str:
    origin = record.after_source
    if origin.startswith("codemod"):
        return "unsafe fix" if "unsafe" in origin else "fix"
    if "use-instead" in origin:
        return "use-instead"
    return "hand-written" if origin else "-"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
