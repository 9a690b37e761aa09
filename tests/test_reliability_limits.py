"""Bounded resources: pathological files are skipped with a message, never a crash or a hang.

The limits live in ``tflint_perf/text/limits.py``; docs/reliability.md gives the numbers behind them.
Inputs that would crash LibCST's native parser if a limit failed are checked through a real
``tflint-perf`` subprocess, so that a regression fails the test instead of killing the test run.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from tests.conftest import REPO, lint, run_cli
from tflint_perf.text import limits
from tflint_perf.checking.config import Settings
from tflint_perf.checking.engine import check_text
from tflint_perf.text.parsing import ParseError, parse
from tflint_perf.text.limits import MAX_NESTING, nesting_depth, run_deep

HEADER = "import tensorflow as tf\nds = tf.data.Dataset.range(8)\n"
TRAINING = "for batch in ds:\n    train_step(batch)\n"


def deep(kind: str, n: int) -> str:
    """One statement nested ``n`` levels deep in one of the ways Python code can nest."""
    return {
        "parens": "x = " + "(" * n + "1" + ")" * n,
        "lists": "x = " + "[" * n + "1" + "]" * n,
        "calls": "x = " + "f(" * n + "ds" + ")" * n,
        "unary": "x = " + "-" * n + "1",
        "not": "x = " + "not " * n + "y",
        "binop": "x = " + " + ".join(["a"] * n),
        "boolean": "x = " + " and ".join(["a"] * n),
        "attribute": "x = a" + ".b" * n,
        "method chain": "x = obj" + ".step(g)" * (n // 2),
        "subscript": "x = a" + "[0]" * n,
        "call chain": "x = f" + "(a)" * n,
        "conditional": "x = " + "a if b else " * n + "c",
        "lambda": "x = " + "lambda: " * n + "1",
        "power": "x = " + " ** ".join(["a"] * n),
        "implicit concatenation": "x = " + " ".join(["'a'"] * n),
    }[kind] + "\n"


KINDS = ["parens", "lists", "calls", "unary", "not", "binop", "boolean", "attribute", "method chain", "subscript",
         "call chain", "conditional", "lambda", "power", "implicit concatenation"]


# -- the estimate ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_every_way_of_nesting_is_measured(kind):
    assert 180 <= nesting_depth(deep(kind, 200)) <= 420


@pytest.mark.parametrize(
    "text,expected",
    [
        ("x = 1\n", 0),
        ("x = f(a, b)\n", 1),
        ("x = a + b + c\n", 2),
        ("x = a < b < c < d\n", 0),  # one flat Comparison node
        ("x = '((((((((((' + \"]]]]\"\n", 1),  # brackets in strings do not count
        ("# ((((((((((((((((\nx = 1\n", 0),  # nor in comments
        ('x = """\n((((((((\n"""\n', 0),  # nor in triple-quoted strings spanning lines
        ("x = r'\\' + (((('\n", 0),  # one string: in a raw string too, a backslash escapes the quote
        ("x = '\\\\' + (1)\n", 2),  # an escaped backslash does not escape the quote
        ("ds.map(f).map(g).batch(3)\n", 6),  # Call, Attribute, Call, Attribute, Call, Attribute
        ("a = 1.5 + x1.y\n", 2),  # the dot in a number is no attribute access
        ("x = band + operand or nothing\n", 2),  # keywords only as whole words
        ("f(a,\n  b + c)\ny = 1\n", 2),  # a newline inside brackets continues the line
        ("x = (a +\n     b)\ny = c\n", 2),
        ("print('a' 'b' 'c')\n", 3),
    ],
)
def test_the_estimate_on_small_examples(text, expected):
    assert nesting_depth(text) == expected


def test_the_estimate_stops_early_once_over_the_limit():
    text = "x = " + "(" * 100_000 + ")" * 100_000 + "\n"
    assert nesting_depth(text, stop_above=10) == 11


def test_real_code_is_far_below_the_limit():
    # TensorFlow, Keras and LibCST stay under 60 (docs/reliability.md); this repository's own code too.
    deepest = max(nesting_depth(path.read_text(encoding="utf-8")) for path in (REPO / "tflint_perf").rglob("*.py"))
    assert deepest < MAX_NESTING // 5


# -- within the limits: analysed, whatever the caller's stack ----------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_nesting_deeper_than_pythons_default_recursion_limit_is_analysed(kind):
    # Walking this needs thousands of Python frames: more than the default limit of 1000. (Python
    # itself allows at most 200 nested brackets.)
    levels = 190 if kind in ("parens", "lists", "calls") else 300
    text = HEADER + deep(kind, levels) + "ds = ds.map(lambda x: x + 1)\n" + TRAINING
    assert nesting_depth(text) <= MAX_NESTING
    assert "TFP102" in [d.code for d in lint(text)]


def test_a_deep_caller_stack_does_not_change_the_result():
    # flake8, pytest and notebook front ends call the engine from deep stacks of their own.
    text = HEADER + deep("calls", 150) + "ds = ds.map(lambda x: x + 1)\n" + TRAINING
    expected = [d.code for d in lint(text)]

    def from_depth(remaining: int):
        return from_depth(remaining - 1) if remaining else [d.code for d in lint(text)]

    assert from_depth(sys.getrecursionlimit() - 100) == expected
    assert "TFP102" in expected


# -- beyond the limits: skipped with a message, in-process and through the command line ---------------
@pytest.mark.parametrize("kind", ["unary", "binop", "attribute", "implicit concatenation"])
def test_nesting_beyond_the_limit_is_a_parse_error_not_a_crash(kind):
    text = HEADER + deep(kind, 3 * MAX_NESTING) + TRAINING
    with pytest.raises(ParseError, match=f"nested more than {MAX_NESTING} levels deep; skipped"):
        check_text(text, "deep.py", Settings())
    with pytest.raises(ParseError, match="nested more than"):
        parse(text)


def test_extreme_nesting_through_the_command_line_is_reported_per_file(tmp_path):
    # 100,000 levels overflow LibCST's native parser: without the limit the process dies with SIGSEGV.
    for kind in KINDS:
        (tmp_path / f"deep_{kind.replace(' ', '_')}.py").write_text(HEADER + deep(kind, 100_000) + TRAINING)
    (tmp_path / "fine.py").write_text(HEADER + "ds = ds.map(lambda x: x + 1)\n" + TRAINING)
    result = run_cli("check", "--no-cache", "--fix", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "internal error" not in result.stderr
    for kind in KINDS:
        name = f"deep_{kind.replace(' ', '_')}.py"
        assert f"{name}:1:1: TFP002 expressions nested more than {MAX_NESTING} levels deep; skipped" in result.stdout
        assert (tmp_path / name).read_text() == HEADER + deep(kind, 100_000) + TRAINING
    assert "num_parallel_calls" in (tmp_path / "fine.py").read_text()  # the other file was still fixed


def test_a_large_file_is_skipped_with_a_message(tmp_path):
    literal = "x" * (10 * 1024 * 1024)
    path = tmp_path / "big.py"
    original = (HEADER + f"DATA = '{literal}'\n" + "ds = ds.map(lambda x: x + 1)\n" + TRAINING).encode()
    path.write_bytes(original)
    result = run_cli("check", "--no-cache", "--fix", str(path), cwd=tmp_path)
    assert result.returncode == 1
    assert "big.py:1:1: TFP002 file is larger than 2 MiB of source (10,485,8" in result.stdout
    assert "internal error" not in result.stderr
    assert path.read_bytes() == original


def test_the_size_limit_is_exclusive(monkeypatch):
    text = HEADER + "ds = ds.map(lambda x: x + 1)\n" + TRAINING
    monkeypatch.setattr(limits, "MAX_SOURCE_CHARS", len(text))
    assert lint(text)
    with pytest.raises(ParseError, match="larger than"):
        lint(text + " ")


def test_a_large_file_without_tensorflow_text_costs_no_parse_and_no_message():
    assert check_text("x = 1\n" * 2_000_000, "big.py", Settings()) == []


def test_deeply_nested_loops_do_not_make_the_analysis_exponential():
    # Each loop's body used to be interpreted twice, so n nested loops cost 2**n (20 loops: hours).
    # In a subprocess, so that a regression fails on the timeout instead of hanging the test run.
    loops = "".join(" " * i + f"for a{i} in range(3):\n" for i in range(19))
    text = HEADER + loops + " " * 19 + "ds = ds.map(f).shuffle(3)\n" + TRAINING
    compile(text, "nested.py", "exec")  # 19 nested blocks: still valid Python (the limit is 20)
    code = (
        "import sys\nfrom tflint_perf.checking.engine import check_text\nfrom tflint_perf.checking.config import Settings\n"
        "print(sorted({d.code for d in check_text(sys.stdin.read(), 'nested.py', Settings())}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, text=True, timeout=120,
                            cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert "TFP101" in result.stdout and "TFP102" in result.stdout


# -- run_deep --------------------------------------------------------------------------------------
def test_run_deep_returns_and_raises_like_a_call():
    assert run_deep(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(ZeroDivisionError):
        run_deep(lambda: 1 / 0)


def test_run_deep_restores_the_recursion_limit_even_from_several_threads():
    before = sys.getrecursionlimit()
    seen = []
    barrier = threading.Barrier(4)

    def work():
        barrier.wait()
        seen.append(run_deep(sys.getrecursionlimit))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen and all(limit >= 10_000 for limit in seen)
    assert sys.getrecursionlimit() == before


def test_run_deep_inside_run_deep_runs_in_the_same_thread():
    def outer():
        return threading.current_thread(), run_deep(threading.current_thread)

    first, second = run_deep(outer)
    assert first is second and first is not threading.current_thread()


def test_recursion_beyond_even_the_raised_limit_is_an_exception_not_a_crash():
    # What a bug in a tree walk would do: the thread's stack is large enough that Python's limit
    # trips first, as a RecursionError the engine reports, never as a segmentation fault.
    def endless(n):
        return tuple(endless(n + 1) for _ in (1,))

    with pytest.raises(RecursionError):
        run_deep(endless, 0)
