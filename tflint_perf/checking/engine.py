"""Checking one source text: prefilter, one parse, one collection pass, every rule, positions last."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Set, Type

import libcst as cst

from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.api_versions import oldest_tensorflow
from tflint_perf.analysis.deprecations import runs_only_on_tf1
from tflint_perf.analysis.model import ModuleModel
from tflint_perf.project.session import Session
from tflint_perf.checking.config import Settings, version_configured
from tflint_perf.text.diagnostics import Diagnostic, Edit, Finding, Fix, Location
from tflint_perf.text.noqa import Suppressions
from tflint_perf.text.notebook import NOTEBOOK_SUFFIX, Notebook, NotebookError
from tflint_perf.rules import all_rules
from tflint_perf.rules.base import Rule, RuleContext
from tflint_perf.fixes.building import existing_statements, import_insertion_offset
from tflint_perf.text.incremental import Buffer
from tflint_perf.text.layout import line_limit, place, too_long
from tflint_perf.text.limits import run_deep
from tflint_perf.text.parsing import InternalError, ParseError, parse_in_thread
from tflint_perf.text.positions import locate
from tflint_perf.text.prefilter import may_have_findings, may_hold_pipelines
from tflint_perf.text.source import LineIndex, newline_of


def check_text(
    text: str,
    filename: str,
    settings: Settings,
    codes: Optional[Set[str]] = None,
    rules: Optional[Sequence[Type[Rule]]] = None,
    apply_noqa: bool = True,
    tree: Optional[ast.Module] = None,
    path: Optional[Path] = None,
    session: Optional[Session] = None,
    buffer: Optional[Buffer] = None,
) -> List[Diagnostic]:
    """Diagnostics for one file's decoded text. Raises ParseError or InternalError.

    ``session``, the project's session of module models (``checking/workspace.py`` owns it), puts the
    check in its project: the module at ``path`` (its real path) is read with the first-party modules it
    imports and those importing it (never run), and only findings located in this file are returned.

    With ``apply_noqa=False`` the caller applies ``# noqa`` and ``# flake8: noqa`` itself (flake8
    does); only the file-level ``# tflint-perf: noqa``, which no other tool knows, still applies.
    ``tree``, the text's ``ast`` if the caller has one, saves parsing it again to place findings.
    ``buffer``, the file's previous parse (``checking/workspace.py`` keeps one per file), lets a text that
    differs from it by an edit be re-parsed by the statements the edit touched (``text/incremental.py``).
    """
    if not may_have_findings(text):
        return []
    enabled = [rule for rule in (rules or all_rules())
               if (codes is None or rule.code in codes) and not rule.input_error]
    if not enabled:
        return []
    # On a thread with stack enough for any file within `limits`: the tree walks below recurse.
    return run_deep(_check, text, filename, settings, enabled, apply_noqa, tree, path, session, buffer)


def _own_target(settings: Settings, model: AnalysedModule, filename: str) -> Settings:
    """The target version of this module. A version guessed from sibling notebooks fills an unknown target
    only: for code that runs only on TensorFlow 1 (``tf.Session`` through a plain ``import tensorflow``) the
    guess, a TensorFlow 2 the course's other notebooks install, is not what this code runs on, so no target
    is known. An inferred or unknown target below what the module's own Keras calls require
    (``api_versions``: ``tf.keras.optimizers.legacy`` exists from 2.9) is raised to it; a configured one is
    the user's word."""
    if settings.target_version_guessed and runs_only_on_tf1(model, filename):
        return replace(settings, target_version=None, target_version_source=None, target_version_guessed=False,
                       target_version_inferred=False)
    if version_configured(settings):
        return settings
    required = oldest_tensorflow(model)
    if required is None or (settings.target_version is not None and settings.target_version >= required.version):
        return settings
    if runs_only_on_tf1(model, filename):
        return settings  # TensorFlow 1 code calling a Keras 2.9 name cannot run at all: no version is known
    return replace(settings, target_version=required.version, target_version_source=f"{filename}: {required.describe()}",
                   target_version_guessed=False, target_version_inferred=True)


def _check(text: str, filename: str, settings: Settings, enabled: Sequence[Type[Rule]], apply_noqa: bool,
           tree: Optional[ast.Module], path: Optional[Path], session: Optional[Session],
           buffer: Optional[Buffer]) -> List[Diagnostic]:
    if path is None:
        session = None
    try:
        model = session.known(path, text) if session is not None else None  # type: ignore[arg-type]
        if model is not None:
            module = model.module
        else:
            module = buffer.parse(text, parse_in_thread) if buffer is not None else parse_in_thread(text)
            model = session.adopt(path, text, module) if session is not None else AnalysedModule(module)  # type: ignore[arg-type]
        context = RuleContext(model, _own_target(settings, model, filename), filename)
        findings: List[Finding] = []
        for rule in enabled:
            findings.extend(rule().check(context))
        if model.session is not None:
            # A pipeline built here and fitted elsewhere is reported here, where the fix goes; what
            # belongs to another module is reported when that module is checked.
            findings = [f for f in findings if _all_here(model, f)]
        if not findings:
            return []
        diagnostics = _locate(module, text, filename, findings, tree, buffer)  # positions recurse as deeply as the model
    except ParseError:
        raise  # the input's fault, reported as a syntax error
    except RecursionError:
        raise ParseError("nested too deeply to analyse") from None
    except Exception as error:  # noqa: BLE001 - reported as an internal error, never a crash
        raise InternalError(f"{type(error).__name__}: {error}") from error
    suppressions = Suppressions(text)
    if not apply_noqa:
        return [d for d in diagnostics if not suppressions.suppressed_by_own_directive(d.code)]
    return [d for d in diagnostics if not suppressions.suppressed(d.code, d.location.row)]


def parse_first_party(path: Path, text: str) -> Optional[cst.Module]:
    """The tree of a module another one imports or is imported by (a notebook's code cells); None
    when it cannot have findings or does not parse: what it says is then unknown."""
    if path.suffix == NOTEBOOK_SUFFIX:
        try:
            notebook = Notebook(text)
        except NotebookError:
            return None
        text = notebook.module if notebook.is_python else ""
    if not (may_have_findings(text) or may_hold_pipelines(text)):
        return None  # a module that can neither have findings nor pass pipelines between its neighbours
    try:
        return parse_in_thread(text)
    except (ParseError, InternalError):
        return None


def _all_here(model: ModuleModel, finding: Finding) -> bool:
    nodes = [finding.start, finding.end, *(edit.node for edit in (finding.fix.edits if finding.fix else ()))]
    return all(model.owns(node) for node in nodes)


def _locate(module: cst.Module, text: str, filename: str, findings: Iterable[Finding], tree: Optional[ast.Module] = None,
            buffer: Optional[Buffer] = None) -> List[Diagnostic]:
    findings = list(findings)
    nodes = [node for f in findings for node in (f.start, f.end, *(e.node for e in _node_edits(f)))]
    # PositionProvider's ranges, for the statements that need them (remembered per statement in a buffer)
    starts = buffer.starts_for(module) if buffer is not None else None
    offsets = locate(module, text, nodes, tree, starts, buffer.statement_ranges if buffer is not None else None)
    index = LineIndex(text)
    import_offset = None
    present: set = set()
    if any(f.fix is not None and f.fix.imports for f in findings):
        import_offset = import_insertion_offset(module, text)
        present = existing_statements(module)
    diagnostics = {}
    limit = None
    for finding in findings:
        start = offsets[id(finding.start)][0]
        end = offsets[id(finding.end)][1]
        fix = None
        if finding.fix is not None:
            edits = _text_edits(text, offsets, finding.fix.edits)
            if finding.fix.wrapped is not None:
                limit = limit if limit is not None else line_limit(text)
                if too_long(text, [(e.start, e.end, e.content) for e in edits], limit):
                    edits = _text_edits(text, offsets, finding.fix.wrapped)
            edits = [Edit(e.start, e.end, e.content, _location(index, e.start), _location(index, e.end)) for e in edits]
            missing = [stmt for stmt in finding.fix.imports if stmt not in present]
            if missing and import_offset is None:
                edits = []  # nowhere safe to put the import: offer no fix
            for statement in missing if edits else []:
                content = statement + newline_of(text)
                location = _location(index, import_offset)
                edits.append(Edit(import_offset, import_offset, content, location, location))
            if edits:
                fix = Fix(finding.fix.applicability, finding.fix.message, tuple(edits), finding.fix.imports)
        diagnostic = Diagnostic(
            finding.code,
            finding.name,
            finding.message,
            filename,
            _location(index, start),
            _location(index, end),
            fix,
        )
        diagnostics[(diagnostic.code, diagnostic.location, diagnostic.end_location, diagnostic.message)] = diagnostic
    return sorted(diagnostics.values(), key=lambda d: (d.location.row, d.location.column, d.code))


def _node_edits(finding: Finding):
    if finding.fix is None:
        return ()
    return (*finding.fix.edits, *(finding.fix.wrapped or ()))


def _text_edits(text: str, offsets, node_edits) -> List[Edit]:
    """Node edits as text edits, laid out by tflint_perf/text/layout.py (locations filled in later)."""
    newline = newline_of(text)
    edits = []
    for edit in node_edits:
        node_start, node_end = offsets[id(edit.node)]
        if edit.where == "after":
            begin = finish = node_end
        elif edit.where == "before":
            begin = finish = node_start
        elif edit.where == "delete-line":
            begin, finish = _whole_lines(text, node_start, node_end)
            edits.append(Edit(begin, finish, edit.content, _NOWHERE, _NOWHERE))
            continue
        else:
            begin, finish = node_start, node_end
        begin, finish, content = place(text, begin, finish, edit.content, edit.indented, edit.where == "after", newline)
        edits.append(Edit(begin, finish, content, _NOWHERE, _NOWHERE))
    return edits


_NOWHERE = Location(0, 0)


def _location(index: LineIndex, offset: int) -> Location:
    row, column = index.position(offset)
    return Location(row, column + 1)


def _whole_lines(text: str, start: int, end: int):
    """``text[start:end]`` widened to the whole lines it is on (indentation, a trailing comma and
    comment, and the line break included) when nothing else is on them; else unchanged."""
    line_start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
    if text[line_start:start].strip():
        return start, end
    line_end = len(text)
    for index in range(end, len(text)):
        if text[index] in "\r\n":
            line_end = index
            break
    rest = text[end:line_end].strip()
    if rest.startswith(","):  # an argument alone on its line, with its comma
        rest = rest[1:].strip()
    if rest and not rest.startswith("#"):
        return start, end
    if text.startswith("\r\n", line_end):
        line_end += 2
    elif line_end < len(text):
        line_end += 1
    return line_start, line_end
