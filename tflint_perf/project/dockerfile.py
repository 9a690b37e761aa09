"""The TensorFlow a Dockerfile installs: the image a project's code runs in is a dependency file too.

DLTFpT's Dockerfile runs ``pip install tensorflow==2.0.0`` on a Jupyter image; others start from
TensorFlow's own image (``FROM tensorflow/tensorflow:2.3.0-gpu``). Each gives a requirement string that
``requirement.lower_bound`` reads as it reads a requirements line:

- every ``RUN`` instruction's ``pip install`` arguments (continued lines joined, each command of
  ``&&``/``;`` read as a notebook's ``!pip install`` line is: ``notebook_version.install_arguments``);
- a ``FROM tensorflow/tensorflow:<X.Y.Z>[-suffix]`` image (and ``tensorflow/tensorflow-gpu``, and the
  old ``gcr.io/tensorflow/tensorflow``), as ``tensorflow==X.Y.Z``; ``latest``, ``nightly``, an ``ARG``
  such as ``${TF_VERSION}`` and other unversioned tags name no version, nor does another vendor's image
  (NVIDIA's ``nvcr.io/nvidia/tensorflow:20.12-tf2-py3`` is tagged by its own release).

Only the last build stage counts, the one the image runs (with the stages it starts ``FROM`` by name):
``FROM tensorflow/tensorflow:2.3.0 AS build`` then ``FROM python:3.10`` runs no TensorFlow 2.3.

Which files: ``Dockerfile``, ``Dockerfile.<variant>`` and ``<variant>.Dockerfile``. ``tf_version.py``
reads them beside the requirements files (the lowest bound of a directory's requirements, environment
and Dockerfiles; packaging metadata that names TensorFlow outranks them all).
"""

from __future__ import annotations

import re
from typing import Dict, List

from tflint_perf.project.notebook_version import install_arguments

_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", re.IGNORECASE)
_IMAGE = re.compile(r"^(?:docker\.io/|gcr\.io/)?tensorflow/tensorflow(?:-gpu)?:(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)
_RUN = re.compile(r"^\s*RUN\s+(.*)$", re.IGNORECASE | re.DOTALL)


def is_dockerfile(name: str) -> bool:
    return name == "Dockerfile" or name.startswith("Dockerfile.") or name.endswith(".Dockerfile")


def dockerfile_requirements(text: str) -> List[str]:
    """The TensorFlow requirements a Dockerfile's image and ``pip install`` commands show, as requirement strings."""
    stages: Dict[str, List[str]] = {}
    found: List[str] = []
    for instruction in _instructions(text):
        start = _FROM.match(instruction)
        if start is not None:
            base = start.group(1)
            found = list(stages.get(base.lower(), ()))  # a new stage: what an earlier one it starts from installed
            image = _IMAGE.match(base)
            if image is not None:
                found.append(f"tensorflow=={image.group(1)}")
            if start.group(2):
                stages[start.group(2).lower()] = found
            continue
        run = _RUN.match(instruction)
        if run is not None:
            found.extend(install_arguments(run.group(1)))
    return found


def _instructions(text: str) -> List[str]:
    """The instructions, each on one line: a line ending in ``\\`` continues on the next; comments dropped."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    return "\n".join(lines).replace("\\\n", " ").splitlines()
