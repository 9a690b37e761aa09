"""What TensorFlow code means inside one module: the model of its one traversal (model.py) and the
analyses built on it (analyses.py builds them on demand). Imports only the text layer."""
