"""Code actions: a quick fix per finding that has one, "Disable TFPxxx for this line", and
``source.fixAll.tflint-perf``; each a ``WorkspaceEdit`` of minimal text edits.

The edits come from the project's fixer (``fixes/fixer.py``: the same edits ``--fix`` applies,
laid out by the engine) and from ``text/noqa.py``'s ``add_noqa`` (the comment ``--add-noqa`` writes,
read back by the project's noqa handling), diffed against the buffer (``convert.minimal_edits``).
An unsafe fix is offered only when ``unsafeFixes`` is on, and says so in its title.
"""

from __future__ import annotations

from typing import Dict, List, Optional

from lsprotocol import types

from tflint_perf.faces.server.convert import CONFIG_ERROR_CODE, Page, minimal_edits, to_lsp
from tflint_perf.faces.server.documents import Checked, Document, Documents
from tflint_perf.faces.server.notebooks import cell_of, cell_range, fixed_cells, sources_of
from tflint_perf.fixes.fixer import applicable, apply_fixes
from tflint_perf.text.diagnostics import INPUT_ERROR_CODES, UNSAFE, Diagnostic
from tflint_perf.text.noqa import add_noqa

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.tflint-perf"
FIX_ALL_TITLE = "Fix all auto-fixable problems (tflint-perf)"
KINDS = [types.CodeActionKind.QuickFix, types.CodeActionKind(types.CodeActionKind.SourceFixAll.value), FIX_ALL]


def wanted(only: Optional[List[str]], kind: str) -> bool:
    """Whether a requested kind filter (``context.only``) lets ``kind`` through (a prefix does)."""
    return only is None or any(kind == k or kind.startswith(f"{k}.") for k in map(str, only))


def code_actions(documents: Documents, document: Document, checked: Checked, uri: str, requested: types.Range,
                 only: Optional[List[str]], encoding: str, lazy: bool = False) -> List[types.CodeAction]:
    """The actions at ``requested``. With ``lazy`` (the client resolves an action's edit when it is
    chosen), fix all carries only what finds the document again: it re-runs the fixer, and editors
    ask for actions at every cursor move."""
    actions: List[types.CodeAction] = []
    if checked.settings is None:
        return actions
    number, cell = cell_range(document.cells or [], uri)
    text = cell.text if cell is not None else checked.text
    page = Page(text, encoding)
    here = [d for d in checked.diagnostics() if (d.cell == number if document.cells is not None else True)
            and _overlaps(page, d, requested) and d.code != CONFIG_ERROR_CODE]
    if wanted(only, types.CodeActionKind.QuickFix):
        for diagnostic in here:
            action = _quick_fix(documents, document, checked, uri, diagnostic, page, encoding)
            if action is not None:
                actions.append(action)
        for diagnostic in here:
            if diagnostic.code not in INPUT_ERROR_CODES or diagnostic.code == "TFP002":
                actions.append(_noqa(uri, text, diagnostic, page))
    if (wanted(only, FIX_ALL)) and any(applicable(d, checked.settings.unsafe_fixes) for d in checked.diagnostics()):
        action = types.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL,
                                  data={"uri": document.uri, "version": document.version})
        action.edit = None if lazy else fix_all(documents, document, checked, encoding)
        if lazy or action.edit is not None:
            actions.append(action)
    return actions


def _overlaps(page: Page, diagnostic: Diagnostic, requested: types.Range) -> bool:
    start, end = page.at_location(diagnostic.location), page.at_location(diagnostic.end_location)
    key = lambda p: (p.line, p.character)  # noqa: E731
    return key(start) <= key(requested.end) and key(requested.start) <= key(end)


def _quick_fix(documents: Documents, document: Document, checked: Checked, uri: str, diagnostic: Diagnostic,
               page: Page, encoding: str) -> Optional[types.CodeAction]:
    if diagnostic.fix is None or not applicable(diagnostic, checked.settings.unsafe_fixes):
        return None
    unsafe = diagnostic.fix.applicability == UNSAFE
    if document.cells is None:
        fixed, applied = apply_fixes(checked.text, [diagnostic])
        if not applied:
            return None
        edit = types.WorkspaceEdit(changes={uri: minimal_edits(checked.text, fixed, page)})
    else:
        edit = _cells_edit(documents, document, checked, diagnostic, encoding)
        if edit is None:
            return None
    title = f"Fix {diagnostic.code}{' (unsafe)' if unsafe else ''}: {diagnostic.fix.message}"
    return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, edit=edit,
                            diagnostics=[to_lsp(diagnostic, page)], is_preferred=not unsafe)


def _cells_edit(documents: Documents, document: Document, checked: Checked, diagnostic: Diagnostic,
                encoding: str) -> Optional[types.WorkspaceEdit]:
    from tflint_perf.text.notebook import Notebook, NotebookError

    try:
        module = Notebook(checked.text).module
    except NotebookError:
        return None
    found = documents.module_diagnostics(document, module, checked.settings)
    sources = fixed_cells(checked.text, found, diagnostic) if found is not None else None
    return _edit_cells(document, sources, encoding) if sources else None


def _edit_cells(document: Document, sources: Dict[int, str], encoding: str) -> types.WorkspaceEdit:
    changes = {}
    for index, source in sources.items():
        cell = cell_of(document.cells, index + 1)
        if cell is not None and source != cell.text:
            changes[cell.uri] = minimal_edits(cell.text, source, Page(cell.text, encoding))
    return types.WorkspaceEdit(changes=changes)


def _noqa(uri: str, text: str, diagnostic: Diagnostic, page: Page) -> types.CodeAction:
    suppressed, _ = add_noqa(text, {diagnostic.location.row: [diagnostic.code]})
    return types.CodeAction(
        title=f"Disable {diagnostic.code} for this line", kind=types.CodeActionKind.QuickFix,
        edit=types.WorkspaceEdit(changes={uri: minimal_edits(text, suppressed, page)}),
        diagnostics=[to_lsp(diagnostic, page)])


def fix_all(documents: Documents, document: Document, checked: Checked, encoding: str) -> Optional[types.WorkspaceEdit]:
    """Every applicable fix of the document, as ``--fix`` applies them (re-checked between passes)."""
    fixed = documents.fixed_text(document, checked)
    if fixed is None:
        return None
    if document.cells is None:
        page = Page(checked.text, encoding)
        return types.WorkspaceEdit(changes={document.uri: minimal_edits(checked.text, fixed, page)})
    return _edit_cells(document, sources_of(fixed), encoding)
