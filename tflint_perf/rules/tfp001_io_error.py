"""TFP001 io-error: a file that cannot be read or decoded, or a notebook that is not valid JSON."""

from __future__ import annotations

from tflint_perf.rules.base import Invalid, Rule, Valid


class IoError(Rule):
    code = "TFP001"
    name = "io-error"
    summary = "A file cannot be read or decoded, or a notebook is not a valid notebook"
    input_error = True

    what_it_does = """
Reports a file that tflint-perf was asked to check but could not read as source text: a path that
does not exist or cannot be read (permissions, a directory), bytes that are not valid in the
file's encoding (UTF-8 unless a `# -*- coding: ... -*-` line says otherwise, as for Python), an
encoding declaration Python does not know, and a notebook (`.ipynb`) that is not valid JSON or has
no list of cells. A notebook is reported whether or not it mentions TensorFlow.

The finding is at the place Python (or the JSON parser) gives: the line and column of the first
byte that cannot be decoded, the line of the unknown encoding declaration, the line and column
where the notebook's JSON breaks; line 1, column 1 for a file that cannot be read at all. Like
any other code it can be ignored (`--ignore TFP001`, `per-file-ignores`) and counts in the summary
and the exit code (1); a path named on the command line that does not exist is still an error
(on stderr) when TFP001 is ignored. The flake8 plugin never reports TFP001: flake8 reports a file
it cannot read as `E902` itself.
"""
    why_bad = """
Nothing in such a file was checked. Reporting it as a finding (rather than a line on stderr)
keeps it in every output format, so a CI job that reads JSON or SARIF, or an editor, sees that the
file was skipped. This is ruff's `E902` (`io-error`).
"""
    example = """
# -*- coding: klingon -*-
import tensorflow as tf
"""
    use_instead = """
# -*- coding: utf-8 -*-
import tensorflow as tf
"""
    fix_safety = "There is no fix: only the author knows what the file should contain."

    valid = (Valid("# -*- coding: latin-1 -*-\nimport tensorflow as tf\n"),)
    invalid = (Invalid("# -*- coding: klingon -*-\nimport tensorflow as tf\n"),)
