"""TensorFlow, imported only when a harness command needs it (the linter never does)."""

from __future__ import annotations

import os
import sys

INSTALL = "pip install 'tflint-perf[bench]'"


def import_tensorflow(command: str, err=None):
    """The ``tensorflow`` module, or None after telling the user how to install it."""
    err = err or sys.stderr
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # no C++ info logs in the output
    try:
        import tensorflow as tf
    except ImportError as error:
        print(f"tflint-perf {command}: TensorFlow is not installed ({error}).\n"
              f"The linter never needs it; `{command}` runs TensorFlow. Install it with:\n    {INSTALL}", file=err)
        return None
    except Exception as error:  # noqa: BLE001 - a broken installation, reported rather than a traceback
        print(f"tflint-perf {command}: TensorFlow could not be imported: {type(error).__name__}: {error}\n"
              f"Reinstall it with:\n    pip install --force-reinstall {INSTALL[12:]}", file=err)
        return None
    return tf
