"""Notebook documents as the checker reads them: the cells an editor syncs, written as the ``.ipynb``
JSON that ``text/notebook.py`` joins into one module (cross-cell analysis, IPython lines, the cell
numbering the command line reports), and each finding's cell number back to the cell's URI."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from lsprotocol import types

from tflint_perf.fixes.fixer import apply_fixes
from tflint_perf.text.diagnostics import Diagnostic
from tflint_perf.text.notebook import Notebook, NotebookError, load_document


@dataclass(frozen=True)
class Cell:
    uri: str
    code: bool
    text: str


def document_json(cells: List[Cell]) -> str:
    """The notebook an editor holds, as nbformat 4 JSON: cell numbers are positions in this list."""
    return json.dumps({
        "cells": [{"cell_type": "code" if cell.code else "markdown", "metadata": {}, "source": cell.text,
                   **({"outputs": [], "execution_count": None} if cell.code else {})} for cell in cells],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    })


def cell_of(cells: List[Cell], number: Optional[int]) -> Optional[Cell]:
    """The cell a diagnostic's ``cell`` number (1-based, markdown cells counted) names."""
    return cells[number - 1] if number is not None and 0 < number <= len(cells) else None


def sources_of(notebook_json: str) -> Dict[int, str]:
    """Cell index -> source, from a notebook's JSON (the checker's fixed text)."""
    sources = {}
    for index, cell in enumerate(load_document(notebook_json)["cells"]):
        source = cell.get("source", "") if isinstance(cell, dict) else ""
        sources[index] = "".join(source) if isinstance(source, list) else source
    return sources


def fixed_cells(notebook_json: str, module_diagnostics: List[Diagnostic], wanted: Diagnostic
                ) -> Optional[Dict[int, str]]:
    """Cell index -> new source after applying only ``wanted``'s fix (``wanted`` as placed in its cell;
    ``module_diagnostics`` as found on the joined module). None when it cannot be placed back."""
    try:
        notebook = Notebook(notebook_json)
        for found, placed in zip(module_diagnostics, notebook.in_cells(module_diagnostics, notebook.module)):
            if (placed.code, placed.cell, placed.location, placed.end_location) == (
                    wanted.code, wanted.cell, wanted.location, wanted.end_location):
                fixed, applied = apply_fixes(notebook.module, [found])
                return notebook.changed_sources(fixed) if applied else None
    except NotebookError:
        return None
    return None


def cell_range(cells: List[Cell], uri: str) -> Tuple[Optional[int], Optional[Cell]]:
    """The number and cell of a cell URI."""
    for number, cell in enumerate(cells, start=1):
        if cell.uri == uri:
            return number, cell
    return None, None


def cells_of(notebook: types.NotebookDocument, text_of) -> List[Cell]:
    return [Cell(cell.document, cell.kind == types.NotebookCellKind.Code, text_of(cell.document))
            for cell in notebook.cells]
