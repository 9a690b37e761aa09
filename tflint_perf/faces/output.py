"""Output formats. JSON follows ruff's schema, so tools that read ruff's JSON read ours unchanged; the
CI reports (github, sarif, gitlab, junit) are the ones ruff writes, for the same consumers."""

from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Sequence, TextIO, Tuple

from tflint_perf import __version__
from tflint_perf.faces.fingerprints import fingerprints
from tflint_perf.text.diagnostics import INPUT_ERROR_CODES, Diagnostic, Fix, Location

FORMATS = ("concise", "full", "json", "json-lines", "github", "sarif", "gitlab", "junit")
DOCS_URL = "https://github.com/tflint-perf/tflint-perf/blob/main/docs/rules/{code}.md"


# ANSI styles for the human formats, as ruff colours them; off unless the CLI turns them on
# (a terminal, or FORCE_COLOR; never with NO_COLOR: colour_enabled).
_STYLES = {"path": "\033[1m", "code": "\033[1;31m", "fix": "\033[36m"}
_colour = False


def colour_enabled(stream: TextIO) -> bool:
    """As ruff and click: ``NO_COLOR`` (non-empty) turns colour off, ``FORCE_COLOR`` (non-empty) on
    even without a terminal; otherwise colour when writing to a terminal."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def set_colour(enabled: bool) -> None:
    global _colour
    _colour = enabled


def paint(text: str, style: str) -> str:
    return f"{_STYLES[style]}{text}\033[0m" if _colour else text


def _position(d: Diagnostic) -> str:
    cell = f"cell {d.cell}:" if d.cell is not None else ""
    return f"{d.filename}:{cell}{d.location.row}:{d.location.column}"


def _marker(d: Diagnostic, unsafe: bool) -> str:
    fixable = d.fix is not None and (d.fix.applicability == "safe" or unsafe)
    return paint("[*]", "fix") + " " if fixable else ""


def concise(diagnostics: Sequence[Diagnostic], out: TextIO, unsafe: bool, sources: Dict[str, str]) -> None:
    for d in diagnostics:
        out.write(f"{paint(_position(d), 'path')}: {paint(d.code, 'code')} {_marker(d, unsafe)}{d.message}\n")


def full(diagnostics: Sequence[Diagnostic], out: TextIO, unsafe: bool, sources: Dict[str, str]) -> None:
    for d in diagnostics:
        out.write(f"{paint(d.code, 'code')} {_marker(d, unsafe)}{d.message}\n")
        out.write(f"  --> {_position(d)}\n")
        lines = sources.get(d.filename, "").splitlines()
        if 0 < d.location.row <= len(lines):
            line = lines[d.location.row - 1]
            gutter = " " * len(str(d.location.row))
            end = d.end_location.column if d.end_location.row == d.location.row else len(line) + 1
            width = max(1, end - d.location.column)
            out.write(f"{gutter} |\n{d.location.row} | {line}\n")
            out.write(f"{gutter} | {' ' * (d.location.column - 1)}{'^' * width}\n")
        if d.fix is not None:
            out.write(f"  help: {d.fix.message}\n")
            if d.fix.applicability == "unsafe":
                out.write("  note: This is an unsafe fix and may change runtime behavior\n")
        out.write("\n")


def _loc(location: Location) -> dict:
    return {"row": location.row, "column": location.column}


def _fix_json(fix: Optional[Fix]) -> Optional[dict]:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability,
        "message": fix.message,
        "edits": [
            {"content": e.content, "location": _loc(e.location), "end_location": _loc(e.end_location)}
            for e in fix.edits
        ],
    }


def to_json_object(d: Diagnostic) -> dict:
    return {
        "cell": d.cell,
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "filename": d.filename,
        "location": _loc(d.location),
        "end_location": _loc(d.end_location),
        "fix": _fix_json(d.fix),
        "noqa_row": d.location.row,
        "url": DOCS_URL.format(code=d.code),
    }


def as_json(diagnostics: Sequence[Diagnostic], out: TextIO, unsafe: bool, sources: Dict[str, str]) -> None:
    json.dump([to_json_object(d) for d in diagnostics], out, indent=2)
    out.write("\n")


def json_lines(diagnostics: Sequence[Diagnostic], out: TextIO, unsafe: bool, sources: Dict[str, str]) -> None:
    for d in diagnostics:
        out.write(json.dumps(to_json_object(d)) + "\n")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _in_file(d: Diagnostic) -> Tuple[Location, Location]:
    """Where a finding is in the file itself: for a notebook cell, the line of the .ipynb that holds it."""
    if d.file_location is not None:
        return d.file_location, d.file_end_location or d.file_location
    return d.location, d.end_location


def _level(d: Diagnostic) -> str:
    return "error" if d.code in INPUT_ERROR_CODES else "warning"


def github(diagnostics: Sequence[Diagnostic], out: TextIO, unsafe: bool, sources: Dict[str, str]) -> None:
    for d in diagnostics:
        start, end = _in_file(d)
        properties = ",".join(
            [
                f"title={_escape_property(f'tflint-perf ({d.code})')}",
                f"file={_escape_property(d.filename)}",
                f"line={start.row}",
                f"col={start.column}",
                f"endLine={end.row}",
                f"endColumn={end.column}",
            ]
        )
        out.write(f"::{_level(d)} {properties}::{_escape_data(f'{_position(d)}: {d.code} {d.message}')}\n")


def sarif(diagnostics: Sequence[Diagnostic], out: TextIO, unsafe: bool, sources: Dict[str, str]) -> None:
    from tflint_perf.rules import all_rules  # the rules' metadata: only this format describes them

    rules = all_rules()
    index = {rule.code: i for i, rule in enumerate(rules)}
    results = []
    for d, fingerprint in zip(diagnostics, fingerprints(diagnostics, sources)):
        start, end = _in_file(d)
        result = {
            "ruleId": d.code,
            "ruleIndex": index.get(d.code, 0),
            "level": _level(d),
            "message": {"text": d.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": d.filename.replace("\\", "/"), "uriBaseId": "%SRCROOT%"},
                        "region": {
                            "startLine": start.row,
                            "startColumn": start.column,
                            "endLine": end.row,
                            "endColumn": end.column,
                        },
                    }
                }
            ],
            # GitHub's own spelling of this fingerprint: a hash of the flagged text, then the occurrence.
            "partialFingerprints": {"primaryLocationLineHash": f"{fingerprint.content[:16]}:{fingerprint.occurrence}"},
        }
        if d.cell is not None:  # the position the other formats give: rows and columns in the cell
            result["properties"] = {"cell": d.cell, "cellLocation": _loc(d.location),
                                    "cellEndLocation": _loc(d.end_location)}
        results.append(result)
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tflint-perf",
                        "semanticVersion": __version__,
                        "informationUri": "https://github.com/tflint-perf/tflint-perf",
                        "rules": [
                            {
                                "id": rule.code,
                                "name": rule.name,
                                "shortDescription": {"text": rule.summary[:1024]},
                                "fullDescription": {"text": " ".join(rule.what_it_does.split())[:1024]},
                                "help": {"text": rule.summary, "markdown": rule.docs_markdown()},
                                "helpUri": DOCS_URL.format(code=rule.code),
                                "defaultConfiguration": {"level": "error" if rule.input_error else "warning"},
                                "properties": {"tags": ["tensorflow"] if rule.input_error else ["performance", "tensorflow"],
                                               "precision": "high"},
                            }
                            for rule in rules
                        ],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": "./"}},
                "results": results,
            }
        ],
    }
    json.dump(document, out, indent=2)
    out.write("\n")


def _cell_place(d: Diagnostic) -> str:
    """Where a finding is, in the words of the failure texts: ``cell 4, line 2, col 13`` (a notebook
    finding: rows counted in the cell, as the json format gives them) or ``line 2, col 13``."""
    cell = f"cell {d.cell}, " if d.cell is not None else ""
    return f"{cell}line {d.location.row}, col {d.location.column}"


# GitLab's severities are info, minor, major, critical, blocker: a file that could not be checked
# ranks above a performance finding in the merge request's widget.
_GITLAB_SEVERITY = {"error": "major", "warning": "minor"}


def gitlab(diagnostics: Sequence[Diagnostic], out: TextIO, unsafe: bool, sources: Dict[str, str]) -> None:
    """GitLab's code-quality report (the Code Climate subset GitLab reads), for
    ``artifacts: reports: codequality:``. Lines are the file's own: a notebook finding is placed on
    its line of the .ipynb, with its cell and row in the description."""
    issues = []
    for d, fingerprint in zip(diagnostics, fingerprints(diagnostics, sources)):
        start, end = _in_file(d)
        cell = f" ({_cell_place(d)})" if d.cell is not None else ""
        issues.append({
            "description": f"{d.code}: {d.message}{cell}",
            "check_name": d.code,
            "fingerprint": fingerprint.unique,
            "severity": _GITLAB_SEVERITY[_level(d)],
            "location": {"path": d.filename.replace("\\", "/"), "lines": {"begin": start.row, "end": end.row}},
        })
    json.dump(issues, out, indent=2)
    out.write("\n")


def junit(diagnostics: Sequence[Diagnostic], out: TextIO, unsafe: bool, sources: Dict[str, str]) -> None:
    """JUnit XML as ruff writes it: one testsuite per file, one failing testcase per finding; a
    clean run is one passing testcase, so a test dashboard shows the check ran."""
    from xml.etree import ElementTree

    counts = {"tests": str(max(1, len(diagnostics))), "skipped": "0", "failures": str(len(diagnostics)), "errors": "0"}
    suites = ElementTree.Element("testsuites", {"name": "tflint-perf", **counts})
    by_file: Dict[str, List[Diagnostic]] = {}
    for d in diagnostics:
        by_file.setdefault(d.filename, []).append(d)
    if not by_file:
        suite = ElementTree.SubElement(suites, "testsuite", {"name": "tflint-perf", **counts, "package": "tflint-perf"})
        ElementTree.SubElement(suite, "testcase", {"name": "No errors found", "classname": "tflint-perf"})
    for filename, found in by_file.items():
        suite = ElementTree.SubElement(suites, "testsuite", {
            "name": filename, "tests": str(len(found)), "skipped": "0", "errors": "0",
            "failures": str(len(found)), "package": "tflint-perf"})
        for d in found:
            start, _ = _in_file(d)
            case = ElementTree.SubElement(suite, "testcase", {
                "name": f"tflint-perf.{d.code}", "classname": os.path.splitext(filename)[0],
                "line": str(start.row), "column": str(start.column)})
            properties = ElementTree.SubElement(case, "properties")
            ElementTree.SubElement(properties, "property", {"name": "severity", "value": _level(d)})
            failure = ElementTree.SubElement(case, "failure", {"message": d.message, "type": d.code})
            failure.text = f"{_cell_place(d)}, {d.message}"
    ElementTree.indent(suites, space="    ")
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ElementTree.tostring(suites, encoding="unicode") + "\n")


WRITERS = {
    "concise": concise,
    "full": full,
    "json": as_json,
    "json-lines": json_lines,
    "github": github,
    "sarif": sarif,
    "gitlab": gitlab,
    "junit": junit,
}
HUMAN = ("concise", "full")


def plural(count: int, word: str = "error") -> str:
    """``1 error``, ``2 errors``, ``2 unsafe fixes``."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}{'es' if word.endswith(('x', 's', 'sh', 'ch')) else 's'}"


def summary_lines(remaining: List[Diagnostic], fixed: int, unsafe: bool, fixing: bool) -> List[str]:
    safe_fixable = sum(1 for d in remaining if d.fix is not None and d.fix.applicability == "safe")
    unsafe_fixable = sum(1 for d in remaining if d.fix is not None and d.fix.applicability == "unsafe")
    total = len(remaining) + fixed
    if total == 0:
        return ["All checks passed!"]
    # As ruff: "(X fixed, Y remaining)" only when something was fixed; a --fix that fixed nothing
    # says what a check says.
    lines = [f"Found {plural(total)} ({fixed} fixed, {len(remaining)} remaining)." if fixed else f"Found {plural(total)}."]
    available = safe_fixable + (unsafe_fixable if unsafe else 0)
    if available and not fixing:
        hint = f"[*] {available} fixable with --fix"
        if unsafe_fixable and not unsafe:
            hint += f" ({plural(unsafe_fixable, 'unsafe fix')} available with --fix --unsafe-fixes)"
        lines.append(hint + ".")
    elif unsafe_fixable and not unsafe:
        lines.append(f"No fixes available ({plural(unsafe_fixable, 'unsafe fix')} available with --unsafe-fixes)."
                     if not available else "")
    return [line for line in lines if line]
