"""TFP002 syntax-error: a file, or a notebook cell, that cannot be parsed."""

from __future__ import annotations

from tflint_perf.rules.base import Invalid, Rule, Valid


class InvalidSyntax(Rule):
    code = "TFP002"
    name = "syntax-error"
    summary = "A file or a notebook cell is not valid Python 3 and was not analysed"
    input_error = True

    what_it_does = """
Reports a Python file, or a notebook cell, that does not parse, with Python's own message and
position (`SyntaxError: Missing parentheses in call to 'print'...`). Also reported, at line 1, for
a file beyond what tflint-perf analyses safely: more than 2 MiB of source, or expressions nested
more than 500 levels deep.

In a notebook, a cell that does not parse is reported with its cell and skipped; the other cells
are still analysed together. IPython syntax is not an error: line magics (`%time`), shell lines
(`!pip install x`), automagics (`pip install x`, `cd data`), help (`tf.data?`), cell magics
(`%%bash` cells are skipped) and indented cells are read as IPython reads them.

Only files that mention `tensorflow` or `keras` are parsed, so a syntax error elsewhere is left to
Python's own tools (ruff's `invalid-syntax`, flake8's `E999`). The flake8 plugin never reports
TFP002: flake8 reports `E999` itself. Like any other code, TFP002 can be ignored (`--ignore TFP002`,
`per-file-ignores`, a `# noqa: TFP002` on the line of the error) and counts in the summary and the
exit code (1).
"""
    why_bad = """
Nothing in the file (or the cell) was checked. Python 2 code (`print "x"`, `except E, e:`) is the
usual cause in training code found in the wild: TensorFlow 2 does not run on Python 2. This is
ruff's `invalid-syntax` (formerly `E999`).
"""
    example = """
import tensorflow as tf

print "steps:", steps
"""
    use_instead = """
import tensorflow as tf

print("steps:", steps)
"""
    fix_safety = "There is no fix."

    valid = (Valid("import tensorflow as tf\n\nprint('steps:', steps)\n"),)
    invalid = (Invalid('import tensorflow as tf\n\nprint "steps:", steps\n'),)
