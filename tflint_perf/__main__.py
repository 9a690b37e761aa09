import os
import sys

# `python -m tflint_perf` puts the working directory first on sys.path. In a checked project that has
# a directory named like one of our dependencies (its own copy of `libcst`, say), importing that
# dependency would run the project's code. Drop the entry unless tflint_perf itself was found there.
if sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.getcwd():
    if os.path.dirname(os.path.dirname(os.path.abspath(__file__))) != os.getcwd():
        del sys.path[0]

from tflint_perf.faces.cli import main  # noqa: E402 - after the sys.path repair above

sys.exit(main())
