"""What users meet: the command line and its output formats, the flake8 plugin, rule docs, the verification harness."""
