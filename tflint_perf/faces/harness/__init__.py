"""The runtime verification harness: ``tflint-perf bench`` and ``tflint-perf verify``.

Everything that imports TensorFlow lives here, and imports it lazily, inside the command that
needs it: the linter (``check``, the flake8 plugin, the pre-commit hook) never loads TensorFlow.
TensorFlow comes from the ``bench`` extra: ``pip install 'tflint-perf[bench]'``.
"""
