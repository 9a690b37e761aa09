"""tflint-perf: find and fix performance mistakes in TensorFlow/Keras training code."""

__version__ = "0.1.0"
