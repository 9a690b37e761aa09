"""The TensorFlow a Dockerfile installs: the image a project's code runs in is a dependency file too.

DLTFpT's Dockerfile runs ``pip install tensorflow==2.0.0`` on a Jupyter image; others start from
TensorFlow's own image (``FROM tensorflow/tensorflow:2.3.0-gpu``). Each gives a requirement string that
``requirement.lower_bound`` reads as it reads a requirements line:

- every ``RUN`` instruction's ``pip install`` arguments (continued lines joined, each command of
  ``&&``/``;`` read as a notebook's ``!pip install`` line is: ``notebook_version.install_arguments``);
- a ``FROM tensorflow/tensorflow:<X.Y.Z>[-suffix]`` image (and ``tensorflow/tensorflow-gpu``),
  as ``tensorflow==X.Y.Z``; ``latest``, ``nightly`` and other unversioned tags name no version.

Which files: ``Dockerfile``, ``Dockerfile.<variant>`` and ``<variant>.Dockerfile``. ``tf_version.py``
reads them beside the requirements files (the lowest bound of a directory's requirements, environment
and Dockerfiles; packaging metadata that names TensorFlow outranks them all).
"""

from __future__ import annotations

import re
from typing import List

from tflint_perf.project.notebook_version import install_arguments

_IMAGE = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(?:docker\.io/)?tensorflow/tensorflow(?:-gpu)?:(\d+\.\d+(?:\.\d+)?)",
                    re.IGNORECASE)
_RUN = re.compile(r"^\s*RUN\s+(.*)$", re.IGNORECASE | re.DOTALL)


def is_dockerfile(name: str) -> bool:
    return name == "Dockerfile" or name.startswith("Dockerfile.") or name.endswith(".Dockerfile")


def dockerfile_requirements(text: str) -> List[str]:
    """The TensorFlow requirements a Dockerfile's image and ``pip install`` commands show, as requirement strings."""
    found: List[str] = []
    for instruction in _instructions(text):
        image = _IMAGE.match(instruction)
        if image is not None:
            found.append(f"tensorflow=={image.group(1)}")
            continue
        run = _RUN.match(instruction)
        if run is not None:
            found.extend(install_arguments(run.group(1)))
    return found


def _instructions(text: str) -> List[str]:
    """The instructions, each on one line: a line ending in ``\\`` continues on the next; comments dropped."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    return "\n".join(lines).replace("\\\n", " ").splitlines()
