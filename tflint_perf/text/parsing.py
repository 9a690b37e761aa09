"""Parsing a module's text with LibCST, within the limits of one file (text/limits.py).

A text that is not Python LibCST can parse, or that is beyond what is analysed, raises ``ParseError``
with Python's own message and position; ``InternalError`` is a bug in tflint-perf itself.
"""

from __future__ import annotations

import ast
import warnings
from typing import Optional, Tuple

import libcst as cst

from tflint_perf.text.limits import LimitExceeded, check_limits, run_deep
from tflint_perf.text.source import LineIndex


class ParseError(Exception):
    """The text is not Python that LibCST can parse; the message says where.

    ``reason`` is the message without the place; ``row`` and ``column`` (1-based) are where Python
    puts a syntax error, None for a text that is beyond what is analysed (too large, too deep).
    """

    def __init__(self, reason: str, row: Optional[int] = None, column: Optional[int] = None) -> None:
        self.reason = reason
        self.row = row
        self.column = column
        place = f"syntax error at line {row}, column {column}: " if row is not None else ""
        super().__init__(place + reason)


class InternalError(Exception):
    """A bug in tflint-perf itself while checking a file."""


def parse(text: str) -> cst.Module:
    """The module's tree; ParseError when the text is not Python or is beyond ``limits``."""
    return run_deep(_parse, text)


def _parse(text: str) -> cst.Module:
    """``parse`` on the calling thread (one already running under ``run_deep``)."""
    try:
        check_limits(text)  # before LibCST: beyond these limits its native parser can crash the process
    except LimitExceeded as error:
        raise ParseError(str(error)) from None
    if "\0" in text:  # Python refuses such a file; LibCST accepts one in a string or a comment
        row, column = LineIndex(text).position(text.index("\0"))
        raise ParseError("source code cannot contain null bytes", row, column + 1)
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise ParseError(*_describe_syntax_error(text, error)) from None
    except cst.CSTValidationError as error:
        # LibCST's check of a node it has just built (``"a" b"b"``); Python rejects such code too.
        raise ParseError(*_python_place(text, str(error), 1, 1)) from None
    except RecursionError:
        raise ParseError("nested too deeply to analyse") from None
    except (TypeError, ValueError) as error:  # LibCST raises these on some inputs it cannot handle
        raise ParseError(f"cannot be parsed: {error}") from None
    except MemoryError:
        raise ParseError("not enough memory to parse the file; skipped") from None


parse_in_thread = _parse


def _describe_syntax_error(text: str, error: cst.ParserSyntaxError) -> Tuple[str, int, int]:
    """Python's own message and position where its parser rejects the text too: LibCST puts every
    tokenizer error at line 1, column 1, and lists expected tokens where Python says what is wrong."""
    message = error.message.splitlines()[0] if error.message else "invalid syntax"
    return _python_place(text, message, error.raw_line, error.raw_column + 1)


def _python_place(text: str, message: str, line: int, column: int) -> Tuple[str, int, int]:
    """Python's own message and position of the error in ``text``, else the ones given."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings about the user's code are not ours to print
        try:
            compile(text, "<checked>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)  # parses, runs nothing
        except SyntaxError as python_error:
            if python_error.lineno:
                line, column, message = python_error.lineno, python_error.offset or 1, python_error.msg
        except (ValueError, MemoryError, RecursionError):
            pass
    return message, line, column
