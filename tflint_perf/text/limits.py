"""Bounds on what one file may cost: size, nesting, and the stack the analysis runs on.

LibCST's parser is native code that recurses per nesting level: a few thousand levels overflow the
C stack and kill the process (no exception to catch), and its time grows with the square of an
expression's depth. The model, the pipeline interpreter and position resolution recurse per level
in Python as well. So a file is measured before it is parsed (``check_limits``, a regular-expression
scan that costs about 2% of a parse), and everything that walks a tree runs in a thread with
a large stack and a raised recursion limit (``run_deep``), so that a file within the limits never
fails for lack of stack, whoever the caller is (the command line, flake8, a test runner).
docs/reliability.md has the measurements behind the numbers.
"""

from __future__ import annotations

import re
import sys
import threading
from typing import Callable, List, Optional, TypeVar

# Largest source text analysed, in characters. LibCST needs about 0.5 kB of memory per character
# and parses some 0.1-0.3 MB a second; TensorFlow's largest module (a generated one) is 0.7 MB.
MAX_SOURCE_CHARS = 2 * 1024 * 1024
# Deepest expression analysed, as estimated by ``nesting_depth``: more than ten times the deepest
# in TensorFlow and Keras (28); beyond it LibCST's time and memory grow with the square of depth.
MAX_NESTING = 500

# What the analysis may use inside ``run_deep``: ``MAX_NESTING`` levels of the deepest kind of
# expression need under 4,000 frames, and 20,000 frames fit in 32 MiB of stack (measured).
_RECURSION_LIMIT = 20_000
_STACK_BYTES = 256 * 1024 * 1024  # reserved address space; only the pages touched are used

T = TypeVar("T")


class LimitExceeded(Exception):
    """The file is beyond what tflint-perf analyses; the message says which limit."""


def check_limits(text: str) -> None:
    """Raise LimitExceeded when ``text`` is too large or too deeply nested to analyse safely."""
    if len(text) > MAX_SOURCE_CHARS:
        raise LimitExceeded(
            f"file is larger than {MAX_SOURCE_CHARS // (1024 * 1024)} MiB of source "
            f"({len(text):,} characters); skipped"
        )
    depth = nesting_depth(text, MAX_NESTING)
    if depth > MAX_NESTING:
        raise LimitExceeded(f"expressions nested more than {MAX_NESTING} levels deep; skipped")


# One token of interest per match: strings and comments whole (the brackets in them do not count),
# brackets, the end of a line, operators and the keywords that nest (`not`, `lambda`, `and`...).
# Every alternative starts with a literal character: the regular-expression engine then skips
# everything else (names, numbers, spaces) at C speed.
_TOKEN = re.compile(
    r"""
      '''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*(?:'''|\Z)
    | \"\"\"[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*(?:\"\"\"|\Z)
    | '[^'\\\r\n]*(?:\\(?:\r\n|[\s\S])[^'\\\r\n]*)*(?:'|(?=[\r\n])|\Z)
    | "[^"\\\r\n]*(?:\\(?:\r\n|[\s\S])[^"\\\r\n]*)*(?:"|(?=[\r\n])|\Z)
    | \#[^\r\n]*
    | \\(?:\r\n|\r|\n)
    | \r\n? | \n
    | \( | \[ | \{ | \)[ \t]* | \][ \t]* | \}
    | == | != | <= | >= | ->
    | \*\*= | //= | <<= | >>= | -= | \+= | \*= | /= | %= | @= | &= | \|= | \^= | := | = | , | ;
    | \*\* | // | << | >> | - | \+ | \* | / | % | @ | & | \| | \^ | ~
    | \.(?:(?!\d)|(?<!\d\.))
    | a(?<!\wa)nd\b | o(?<!\wo)r\b | n(?<!\wn)ot\b | e(?<!\we)lse\b | l(?<!\wl)ambda\b | a(?<!\wa)wait\b
    """,
    re.VERBOSE,
)
_FLAT = frozenset({"==", "!=", "<=", ">=", "->"})  # comparisons are one flat node; `->` ends nothing


def nesting_depth(text: str, stop_above: Optional[int] = None) -> int:
    """An estimate of how deep LibCST's tree for ``text`` goes, in expression levels.

    The estimate is the open brackets plus, for each open bracket and for the statement around
    them, the links chained there: operators, attribute dots, brackets closed and followed by
    another trailer (``f(x)(y)``, ``g(x).y``) and implicitly concatenated strings; ``,``, ``;``,
    ``=`` and the end of a logical line end a chain. One level is one or two nodes of the tree.
    Stops once the depth exceeds ``stop_above``.
    """
    chained: List[int] = [0]  # per open bracket (and the statement level): links chained so far
    depth = deepest = 0  # open brackets + sum(chained)
    after_string = False  # the last token was a string: another one concatenates
    for match in _TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first in "'\"":
            if not after_string:
                after_string = True
                continue
            chained[-1] += 1
            depth += 1
        elif first in "#\\":
            continue
        elif first in "\r\n":
            if len(chained) == 1:  # the end of a logical line
                after_string = False
                depth -= chained[0]
                chained[0] = 0
            continue
        elif first in "([{":
            after_string = False
            chained.append(0)
            depth += 1
        elif first in ")]}":
            after_string = False
            if len(chained) > 1:
                depth -= chained.pop() + 1
            if text[match.end():match.end() + 1] in ("(", "[", "."):  # `f(x)(y)`, `a[0][1]`, `g(x).y`
                chained[-1] += 1
                depth += 1
            continue
        elif token in _FLAT:
            after_string = False
            continue
        elif token[-1] == "=" or token in ",;":
            after_string = False
            depth -= chained[-1]
            chained[-1] = 0
            continue
        else:
            after_string = False
            chained[-1] += 1
            depth += 1
        if depth > deepest:
            deepest = depth
            if stop_above is not None and deepest > stop_above:
                break
    return deepest


_deep = threading.local()  # `.active` inside a run_deep thread
_limit_lock = threading.Lock()
_limit_users = 0
_saved_limit = 0


def run_deep(function: Callable[..., T], *args: object) -> T:
    """``function(*args)`` in a thread with a large stack and a raised recursion limit.

    Returns what it returns and raises what it raises. Runs it directly when already in such a
    thread, or when no such thread can be started (a platform that refuses the stack size).
    """
    if getattr(_deep, "active", False):
        return function(*args)
    outcome: list = []

    def target() -> None:
        _deep.active = True
        try:
            outcome.append((True, function(*args)))
        except BaseException as error:  # noqa: BLE001 - handed to the calling thread
            outcome.append((False, error))

    try:
        previous_size = threading.stack_size(_STACK_BYTES)
    except (ValueError, RuntimeError):
        return function(*args)
    thread = threading.Thread(target=target, name="tflint-perf-analysis", daemon=True)
    _raise_recursion_limit()
    try:
        try:
            thread.start()
            started = True
        except RuntimeError:  # the stack could not be had
            started = False
        finally:
            threading.stack_size(previous_size)
        if started:
            thread.join()
    finally:
        _restore_recursion_limit()
    if not started:
        return function(*args)
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    return value


def _raise_recursion_limit() -> None:
    # The limit is per process: raised while any run_deep is under way, restored by the last one.
    global _limit_users, _saved_limit
    with _limit_lock:
        if _limit_users == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, _RECURSION_LIMIT))
        _limit_users += 1


def _restore_recursion_limit() -> None:
    global _limit_users
    with _limit_lock:
        _limit_users -= 1
        if _limit_users == 0:
            sys.setrecursionlimit(_saved_limit)
