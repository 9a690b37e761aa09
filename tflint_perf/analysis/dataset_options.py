"""What the module's `tf.data.Options` switch off of the runtime's own rewrites.

From TensorFlow 2.12 the default rewrites append a `prefetch` to a pipeline that lacks one
(`inject_prefetch`, while autotune is on), and from 2.7 they parallelise a stateless `map`
(`map_parallelization`). A module that assigns `False` to one of these options (or to autotune, or to
the default optimisations as a whole) anywhere keeps the rules that the rewrite would make moot: the
analysis does not try to tell which pipeline the options object reaches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Set

import libcst as cst

from tflint_perf.analysis.names import dotted_text
from tflint_perf.text.walk import walk

_SWITCHES = {
    "autotune.enabled": {"inject_prefetch", "map_parallelization"},
    "experimental_optimization.autotune": {"inject_prefetch", "map_parallelization"},
    "experimental_optimization.apply_default_optimizations": {"inject_prefetch", "map_parallelization"},
    "experimental_optimization.inject_prefetch": {"inject_prefetch"},
    "experimental_optimization.map_parallelization": {"map_parallelization"},
}


@dataclass(frozen=True)
class DatasetOptions:
    disabled: frozenset  # rewrites some Options object in the module switches off

    def keeps(self, rewrite: str) -> bool:
        return rewrite not in self.disabled


def dataset_options(module: cst.Module) -> DatasetOptions:
    collector = _Collector()
    walk(module, collector)  # the model's fast traversal, not LibCST's rebuilding `visit`
    return DatasetOptions(frozenset(collector.disabled))


class _Collector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.disabled: Set[str] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        if not (isinstance(node.value, cst.Name) and node.value.value == "False"):
            return
        for target in node.targets:
            text = dotted_text(target.target) or ""
            for suffix, rewrites in _SWITCHES.items():
                if text.endswith("." + suffix):
                    self.disabled.update(rewrites)
