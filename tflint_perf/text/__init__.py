"""Text and positions: decoding, line index, diagnostics, noqa, notebooks as one module of cells, layout, limits, parsing. Imports nothing else of tflint_perf."""
