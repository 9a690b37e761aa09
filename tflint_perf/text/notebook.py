"""Jupyter notebooks: the code cells as one module, findings mapped to cells, fixes spliced back.

A notebook is checked as the module its code cells make when run top to bottom, because a
pipeline built in one cell is usually consumed in another. Cells are joined with a boundary
comment line, so fixed text can be split back into cells. Each cell is first read as IPython reads
it: an indented cell is dedented by the indentation of its first line; IPython syntax that is not
Python (line magics ``%``, shell lines ``!``, help ``?`` and ``obj?``, ``x = !cmd``, automagics
such as ``pip install x`` or ``cd data``, and their ``\\`` continuation lines) is replaced line for
line by a ``pass`` placeholder at the same indentation, so rows inside a cell do not move; the
placeholders are turned back into the original lines, and the indentation put back, when a fix is
written. A cell run by a cell magic is skipped, except the magics whose body is Python
(``%%time``, ``%%timeit``, ``%%capture``, ``%%prun``, ``%%debug``). A cell that still does not parse
(Python 2, a typo) is left out (``without``) and reported by the checker; the other cells stay one
module.

Fixes are written back by replacing only the changed cells' ``source`` values in the notebook's own
JSON text; outputs, metadata, key order, indentation and the final newline stay byte-for-byte as
they were. ``--diff`` shows one unified diff per changed cell (``a/nb.ipynb:cell 3``), with rows
counted inside the cell.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, replace
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from tflint_perf.text.diagnostics import Diagnostic, Fix, Location
from tflint_perf.text.source import LineIndex
from tflint_perf.text.parsing import ParseError, parse

NOTEBOOK_SUFFIX = ".ipynb"

# Cell magics whose body is Python that runs in the notebook's namespace.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
# Line magics IPython runs without the `%` (automagic): its own, its shell aliases, the package
# managers ipykernel adds, and the common extensions' (tensorboard, autoreload, Colab's).
_AUTOMAGICS = frozenset("""
    alias alias_magic autoawait autocall automagic autoreload autosave aimport bookmark cat cd clear
    colors conda config cp debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts
    ldir less lf lk ll load load_ext loadpy logoff logon logstart logstate logstop ls lsmagic lx macro
    magic mamba man matplotlib micromamba mkdir more mv notebook page pastebin pdb pdef pdoc pfile
    pinfo pinfo2 pip popd pprint precision prun psearch psource pushd pwd pycat pylab qtconsole
    quickref recall rehashx reload_ext rep rerun reset reset_selective rm rmdir run save sc set_env
    store sx system tb tensorboard tensorflow_version time timeit unalias unload_ext uv who who_ls
    whos xdel xmode
""".split())
# `name rest` is an automagic when the rest does not read as the rest of a Python statement that
# starts with the name: `pip install x`, `cd ..`, `cd /content`, `ls -la`, `ls *.py` are magics;
# `pip = 3`, `ls(x)`, `time.sleep(1)`, `env[k]`, `time: int`, `cd if x else y`, `x / 2` are Python.
_AUTOMAGIC = re.compile(r"[ \t]*(?P<name>[A-Za-z_]\w*)[ \t]+(?P<rest>[^ \t\r\n].*)")
_PYTHON_AFTER_NAME = re.compile(r"[=!()<>,+%^&|:;\[@]|[*/][\s=*/]|(?:and|or|in|is|not|if|else|for)\b")
_ESCAPED = re.compile(r"[ \t]*(?:[%!?]|[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*[%!])")
_HELP = re.compile(r"[ \t]*[\w.*\[\]]+\?{1,2}[ \t]*$")
_INDENT = re.compile(r"[ \t]*")
_BLANK = re.compile(r"[ \t\n\r]*")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_DECODER = json.JSONDecoder()


class NotebookError(Exception):
    """The notebook cannot be read, or fixed cells cannot be put back; nothing is written.
    ``row`` and ``column`` (1-based): where in the file, for JSON that does not parse."""

    def __init__(self, message: str, row: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.row = row
        self.column = column


def load_document(text: str) -> dict:
    """The notebook's JSON document with its list of cells; NotebookError when it is not one."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"not a valid notebook: invalid JSON: {error.msg}", error.lineno, error.colno) from None
    except RecursionError:
        raise NotebookError("not a valid notebook: JSON nested too deeply") from None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        version = document.get("nbformat") if isinstance(document, dict) else None
        if isinstance(version, int) and version < 4:
            raise NotebookError(f"nbformat {version} notebooks are not supported; "
                                "upgrade it with `jupyter nbconvert --to notebook`")
        raise NotebookError("not a valid notebook: no list of cells")
    return document


@dataclass(frozen=True)
class _Cell:
    index: int  # position in the notebook's list of cells, all kinds counted
    source: str
    python: str  # the source, dedented, with IPython-only lines replaced by placeholders
    magics: Tuple[str, ...]  # the replaced lines (dedented), with their line endings, in order
    leading_magics: int  # how many placeholders come before the first Python line
    indent: str = ""  # removed from the rows in ``dedented_rows``, as IPython does for an indented cell
    dedented_rows: FrozenSet[int] = frozenset()  # 1-based

    @property
    def number(self) -> int:
        return self.index + 1  # "cell 3" counts markdown cells too, as Jupyter and ruff do


class Notebook:
    """A parsed notebook and the module its code cells make."""

    def __init__(self, text: str) -> None:
        self.text = text
        document = load_document(text)
        cells = document["cells"]
        self.language = _language(document)
        self.token = _unused_token(text)
        self.cells: List[_Cell] = []
        for index, cell in enumerate(cells):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            if isinstance(source, list) and all(isinstance(line, str) for line in source):
                source = "".join(source)
            if not isinstance(source, str):
                raise NotebookError(f"not a valid notebook: cell {index + 1} has no source text")
            converted = self._convert(index, source)
            if converted is not None:
                self.cells.append(converted)
        self._marker = f"# {self.token}\n"
        self._placeholder = re.compile(rf"[ \t]*pass  # {re.escape(self.token)} (\d+)(?:\r\n|\r|\n)?")
        self.module = self._join()
        self._spans: Optional[Dict[int, Tuple[int, int]]] = None
        self._index: Optional[LineIndex] = None

    def _join(self) -> str:
        return self._marker.join(_terminated(cell.python) for cell in self.cells)

    def without(self, numbers: Sequence[int]) -> None:
        """Leave these cells (by number) out of the module: they are not analysed, nor changed by a fix."""
        self.cells = [cell for cell in self.cells if cell.number not in numbers]
        self.module = self._join()

    def cells_that_do_not_parse(self) -> List[Tuple["_Cell", ParseError]]:
        """Each cell that does not parse on its own, with its error (rows and columns as in ``python``)."""
        bad = []
        for cell in self.cells:
            try:
                parse(cell.python)
            except ParseError as error:
                bad.append((cell, error))
        return bad

    def cell_location(self, cell: "_Cell", row: int, column: int) -> Location:
        """A position in ``cell.python`` as a position in the cell's own source."""
        return Location(row, column + len(cell.indent) if row in cell.dedented_rows else column)

    @property
    def is_python(self) -> bool:
        return self.language is None or self.language.startswith(("python", "ipython"))

    # -- cells to module -------------------------------------------------------------------------
    def _convert(self, index: int, source: str) -> Optional[_Cell]:
        lines = _lines(source)
        if not source.strip():
            return None
        first = next(i for i, line in enumerate(lines) if line.strip())
        indent = _INDENT.match(lines[first]).group(0)
        dedented_rows: FrozenSet[int] = frozenset()
        if indent:  # IPython removes the first line's indentation from every line that has it
            dedented_rows = frozenset(row for row, line in enumerate(lines, start=1) if line.startswith(indent))
            lines = [line[len(indent):] if line.startswith(indent) else line for line in lines]
        if lines[first].startswith("%%"):
            magic = lines[first][2:].split(None, 1)
            if not magic or magic[0] not in _PYTHON_CELL_MAGICS:
                return None  # another language (%%bash, %%writefile, ...): not this module's code
        python: List[str] = []
        magics: List[str] = []
        state = _Continuation()
        continued = False  # the previous line was IPython ending with a backslash
        line_indent = ""
        leading = 0
        in_prefix = True  # only blank and comment lines so far
        for row, line in enumerate(lines):
            body = line.rstrip("\r\n")
            if not (continued or row == first and body.startswith("%%") or (
                    not state.inside and (_ESCAPED.match(body) or _HELP.match(body) or _automagic(body)))):
                state.feed(line)
                python.append(line)
                in_prefix = in_prefix and (not body.strip() or body.lstrip().startswith("#"))
                continue
            if not continued:
                line_indent = _INDENT.match(line).group(0)  # continuation lines take their statement's
            continued = body.endswith("\\")
            python.append(f"{line_indent}pass  # {self.token} {len(magics)}{line[len(body):]}")
            magics.append(line)
            leading += in_prefix
        return _Cell(index, source, "".join(python), tuple(magics), leading, indent, dedented_rows)

    # -- module positions to cells ---------------------------------------------------------------
    def rows(self, module: str) -> List[Optional[Tuple[int, int]]]:
        """For each row of a module text made by this notebook (0 unused): (cell number, row in cell)."""
        mapping: List[Optional[Tuple[int, int]]] = [None]
        chunk, row = 0, 0
        for line in _lines(module):
            if line == self._marker:
                chunk, row = chunk + 1, 0
                mapping.append(None)
                continue
            row += 1
            mapping.append((self.cells[chunk].number, row) if chunk < len(self.cells) else None)
        mapping.append((self.cells[chunk].number, row + 1) if chunk < len(self.cells) else None)  # end of text
        return mapping

    def in_cells(self, diagnostics: Sequence[Diagnostic], module: str) -> List[Diagnostic]:
        """The diagnostics found on ``module`` with rows counted inside their cells."""
        rows = self.rows(module)
        by_number = {cell.number: cell for cell in self.cells}

        def place(location: Location) -> Tuple[Optional[int], Location]:
            target = rows[location.row] if 0 < location.row < len(rows) else None
            if target is None:
                return None, location
            return target[0], self.cell_location(by_number[target[0]], target[1], location.column)

        mapped = []
        for d in diagnostics:
            cell, start = place(d.location)
            fix = d.fix
            if fix is not None:
                edits = tuple(
                    replace(e, location=place(e.location)[1], end_location=place(e.end_location)[1]) for e in fix.edits
                )
                fix = Fix(fix.applicability, fix.message, edits, fix.imports)
            end = place(d.end_location)[1]
            mapped.append(replace(d, location=start, end_location=end, fix=fix, cell=cell,
                                  file_location=self.file_location(cell, start) if cell else None,
                                  file_end_location=self.file_location(cell, end) if cell else None))
        return mapped

    # -- positions in the notebook's own text ----------------------------------------------------
    def file_location(self, number: int, location: Location) -> Optional[Location]:
        """Where a position in cell ``number`` (rows and columns counted in its source) is in the
        notebook's JSON text: the line of the file that holds that source line, and the column of
        that character in its JSON spelling. None when the cell's source cannot be found."""
        if self._spans is None:
            try:
                self._spans = _source_spans(self.text)
            except (ValueError, IndexError):
                self._spans = {}
            self._index = LineIndex(self.text)
        span = self._spans.get(number - 1)
        if span is None or self._index is None:
            return None
        start, end = span
        raw = self.text[start:end]
        pieces = [(0, len(raw))] if raw.startswith('"') else list(_elements(raw, 0))
        decoded = [json.loads(raw[a:b]) for a, b in pieces]
        lines = _lines("".join(decoded))
        if location.row > len(lines):
            offset = sum(map(len, decoded))
        else:
            line = lines[location.row - 1]
            offset = sum(map(len, lines[:location.row - 1])) + min(location.column - 1, len(line.rstrip("\r\n")))
        for (a, b), text in zip(pieces, decoded):
            if offset < len(text) or b == pieces[-1][1]:
                file_row, file_column = self._index.position(start + a + _raw_offset(raw[a:b], offset))
                return Location(file_row, file_column + 1)
            offset -= len(text)
        return None

    # -- fixed module back to cells --------------------------------------------------------------
    def changed_sources(self, module: str) -> Dict[int, str]:
        """Cell index -> new source, for the cells whose text a fix changed."""
        chunks = [""]
        for line in _lines(module):
            if line == self._marker:
                chunks.append("")
            else:
                chunks[-1] += line
        if len(chunks) != len(self.cells):
            raise NotebookError("a fix crossed a cell boundary; the fixes were not written")
        changed = {}
        for cell, chunk in zip(self.cells, chunks):
            if chunk == _terminated(cell.python):
                continue
            source = self._restore(cell, chunk)
            if source != cell.source:
                changed[cell.index] = source
        return changed

    def _restore(self, cell: _Cell, chunk: str) -> str:
        lines = _lines(chunk)
        found = self._placeholders(lines)
        if [number for _, number in found] != list(range(len(cell.magics))):
            raise NotebookError(f"a fix changed IPython lines in cell {cell.number}; the fixes were not written")
        if cell.leading_magics:
            # A cell magic must stay the first line, and an import added at the top of a cell
            # belongs after its `!pip install`: lines inserted above the leading magics go below.
            original = _lines(_terminated(cell.python))
            original_end = self._placeholders(original)[cell.leading_magics - 1][0] + 1
            end = found[cell.leading_magics - 1][0] + 1
            steps = difflib.SequenceMatcher(None, original[:original_end], lines[:end], autojunk=False).get_opcodes()
            if all(tag in ("equal", "insert") for tag, *_ in steps):
                inserted = [line for tag, _, _, start, stop in steps if tag == "insert" for line in lines[start:stop]]
                lines = original[:original_end] + inserted + lines[end:]
        magic_at = dict(self._placeholders(lines))
        source = "".join(cell.magics[magic_at[row]] if row in magic_at else line for row, line in enumerate(lines))
        if cell.indent:
            source = _reindent(cell, source)
        if not cell.source.endswith(("\n", "\r")) and source.endswith("\n"):
            source = source[:-1]  # the newline added to join the cells
        if _first_line(cell.source).startswith("%%") and _first_line(source) != _first_line(cell.source):
            raise NotebookError(f"a fix moved the cell magic in cell {cell.number}; the fixes were not written")
        return source

    def _placeholders(self, lines: Sequence[str]) -> List[Tuple[int, int]]:
        """(row, number) of each placeholder line, in order."""
        matches = ((row, self._placeholder.fullmatch(line)) for row, line in enumerate(lines))
        return [(row, int(match.group(1))) for row, match in matches if match]

    def with_sources(self, sources: Dict[int, str]) -> str:
        """The notebook's JSON text with these cells' sources replaced and every other byte kept."""
        spans = _source_spans(self.text)
        ensure_ascii = self.text.isascii()
        text = self.text
        for index in sorted(sources, reverse=True):
            start, end = spans[index]
            text = text[:start] + _encode_source(self.text[start:end], sources[index], ensure_ascii) + text[end:]
        _verify(self.text, text, sources)
        return text

    def diff(self, sources: Dict[int, str], name: str) -> str:
        """One unified diff per changed cell, rows counted inside the cell."""
        by_index = {cell.index: cell for cell in self.cells}
        parts = []
        for index in sorted(sources):
            cell = by_index[index]
            parts.extend(
                difflib.unified_diff(
                    _diff_lines(cell.source),
                    _diff_lines(sources[index]),
                    fromfile=f"a/{name}:cell {cell.number}",
                    tofile=f"b/{name}:cell {cell.number}",
                )
            )
        return "".join(parts)


class _Continuation:
    """Whether the next line continues a statement (open bracket, open string, backslash), where
    ``%`` or ``!`` at the start of a line is Python, not IPython."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: Optional[str] = None
        self.backslash = False

    @property
    def inside(self) -> bool:
        return self.depth > 0 or self.quote is not None or self.backslash

    def feed(self, line: str) -> None:
        self.backslash = False
        i, n = 0, len(line)
        while i < n:
            char = line[i]
            if self.quote is not None:
                if char == "\\":
                    i += 2
                    continue
                if line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                    continue
                if char in "\r\n" and len(self.quote) == 1:
                    self.quote = None  # unterminated: the parser reports it
                i += 1
                continue
            if char == "#":
                return
            if char in "\"'":
                self.quote = line[i:i + 3] if line[i:i + 3] in ('"""', "'''") else char
                i += len(self.quote)
                continue
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            elif char == "\\" and not line[i + 1:].strip("\r\n"):
                self.backslash = True
            i += 1


def _automagic(body: str) -> bool:
    match = _AUTOMAGIC.fullmatch(body)
    return bool(match and match.group("name") in _AUTOMAGICS and not _PYTHON_AFTER_NAME.match(match.group("rest")))


def _reindent(cell: _Cell, source: str) -> str:
    """A fixed, dedented cell source with the cell's indentation put back: lines the fix kept are
    the original lines; new lines get the indentation."""
    original = _lines(_terminated(cell.source))
    dedented = [line[len(cell.indent):] if row in cell.dedented_rows else line
                for row, line in enumerate(original, start=1)]
    new = _lines(source)
    out: List[str] = []
    steps = difflib.SequenceMatcher(None, dedented, new, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in steps:
        if tag == "equal":
            out.extend(original[i1:i2])
        elif tag in ("replace", "insert"):
            out.extend(cell.indent + line if line.strip() else line for line in new[j1:j2])
    return "".join(out)


def _raw_offset(raw: str, decoded: int) -> int:
    """The offset in a JSON string literal ``raw`` (quotes included) of its ``decoded``-th character."""
    i, count = 1, 0
    while i < len(raw) - 1 and count < decoded:
        if raw[i] == "\\":
            if raw[i + 1] == "u":
                high = int(raw[i + 2:i + 6], 16)
                pair = 0xD800 <= high < 0xDC00 and raw[i + 6:i + 8] == "\\u"
                i += 12 if pair else 6
            else:
                i += 2
        else:
            i += 1
        count += 1
    return i


def _lines(text: str) -> List[str]:
    """Lines with their endings, split where Python splits them (not at form feeds, as
    ``str.splitlines`` does), so rows count as LibCST counts them."""
    return _LINE.findall(text)


def _first_line(text: str) -> str:
    return next((line.rstrip("\r\n") for line in _lines(text) if line.strip()), "")


def _terminated(text: str) -> str:
    return text if not text or text.endswith(("\n", "\r")) else text + "\n"


def _diff_lines(text: str) -> List[str]:
    return _lines(_terminated(text))


def _language(document: dict) -> Optional[str]:
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return None
    for table, key in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(table, {}).get(key) if isinstance(metadata.get(table), dict) else None
        if isinstance(value, str):
            return value.lower()
    return None


def _unused_token(text: str) -> str:
    token, n = "tflint-perf-cell", 0
    while token in text:
        n += 1
        token = f"tflint-perf-cell-{n}"
    return token


# -- the notebook's JSON text, by position --------------------------------------------------------
def _skip(text: str, at: int) -> int:
    return _BLANK.match(text, at).end()


def _members(text: str, at: int) -> Iterator[Tuple[str, int, int]]:
    """(key, value start, value end) for the object starting at ``at``."""
    at = _skip(text, at + 1)
    if text[at] == "}":
        return
    while True:
        key, at = json.decoder.scanstring(text, at + 1)
        at = _skip(text, _skip(text, at) + 1)  # past the colon
        _, end = _DECODER.raw_decode(text, at)
        yield key, at, end
        at = _skip(text, end)
        if text[at] == "}":
            return
        at = _skip(text, at + 1)


def _elements(text: str, at: int) -> Iterator[Tuple[int, int]]:
    """(start, end) of each element of the array starting at ``at``."""
    at = _skip(text, at + 1)
    if text[at] == "]":
        return
    while True:
        _, end = _DECODER.raw_decode(text, at)
        yield at, end
        at = _skip(text, end)
        if text[at] == "]":
            return
        at = _skip(text, at + 1)


def _source_spans(text: str) -> Dict[int, Tuple[int, int]]:
    spans: Dict[int, Tuple[int, int]] = {}
    for key, start, _ in _members(text, _skip(text, 0)):
        if key == "cells":
            spans.clear()  # a repeated key: the last one counts, as for json.loads
            for index, (cell_start, _end) in enumerate(_elements(text, start)):
                for cell_key, value_start, value_end in _members(text, cell_start):
                    if cell_key == "source":
                        spans[index] = (value_start, value_end)
    return spans


def _encode_source(original: str, source: str, ensure_ascii: bool) -> str:
    """``source`` in the JSON shape of ``original``: one string, or a list of lines laid out alike."""
    if original.startswith('"'):
        return json.dumps(source, ensure_ascii=ensure_ascii)
    items = list(_elements(original, 0))
    known = {}
    for start, end in items:
        known.setdefault(json.loads(original[start:end]), original[start:end])  # keep each line's own escapes
    if len(items) >= 2:
        opening, separator, closing = (original[1:items[0][0]], original[items[0][1]:items[1][0]],
                                       original[items[-1][1]:-1])
    elif items:
        opening, closing = original[1:items[0][0]], original[items[0][1]:-1]
        separator = "," + opening
    else:
        opening, separator, closing = "", ", ", ""
    lines = _lines(source)
    if not lines:
        return "[]"
    encoded = [known.get(line) or json.dumps(line, ensure_ascii=ensure_ascii) for line in lines]
    return "[" + opening + separator.join(encoded) + closing + "]"


def _verify(before: str, after: str, sources: Dict[int, str]) -> None:
    old, new = json.loads(before), json.loads(after)
    for index, source in sources.items():
        cell = new["cells"][index]
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if text != source:
            raise NotebookError(f"cell {index + 1} could not be written back; the fixes were not written")
        cell["source"] = old["cells"][index]["source"]
    if old != new:
        raise NotebookError("the notebook could not be written back unchanged; the fixes were not written")
