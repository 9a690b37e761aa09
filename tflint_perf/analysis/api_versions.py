"""The oldest TensorFlow a module can run on, read from the Keras names it calls.

From TensorFlow 2.6 on, ``tf.keras`` is the ``keras`` package of the same minor version, so a name the
keras package first exports in 2.X exists in no TensorFlow before 2.X: a module that calls
``tf.keras.optimizers.legacy.Adam`` runs on TensorFlow 2.9 or later, whatever its project declares
(or when it declares nothing). The rules keyed to the target version then judge it on that version:
TFP102 leaves a stateless ``map`` to the runtime from 2.7, TFP101 a final ``prefetch`` from 2.12.

``NEW_IN`` was derived by diffing the public API packages (``keras/api/_v2/keras``) of the keras wheels
2.7 to 2.12, keeping only names first exported from 2.8 on (a name new to the wheel at 2.6 or 2.7 may
be older: tf.keras lived in TensorFlow itself before), and checking that standalone Keras 2.2 and 2.3
export none of them at those paths (the import resolver spells ``tf.keras.x`` and ``keras.x`` alike;
Keras 3 needs a TensorFlow newer than all of them). A call on a branch of a version or feature check
(``analysis/compatibility.py``: ``try: AdamW except AttributeError:``) says nothing of the version.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from tflint_perf.analysis.analyses import AnalysedModule

Version = Tuple[int, int]

# A canonical call name (as `ModuleModel.call_name` spells it), or a prefix ending in "." for a module or
# in a class-name stem (`EfficientNetV2` covers B0 to L): the first TensorFlow that exports it.
NEW_IN: Dict[str, Version] = {
    "keras.applications.EfficientNetV2": (2, 8),
    "keras.applications.efficientnet_v2.": (2, 8),
    "keras.losses.BinaryFocalCrossentropy": (2, 8),
    "keras.metrics.BinaryIoU": (2, 8),
    "keras.metrics.OneHotIoU": (2, 8),
    "keras.metrics.OneHotMeanIoU": (2, 8),
    "keras.optimizers.legacy.": (2, 9),
    "keras.layers.RandomBrightness": (2, 9),
    "keras.layers.UnitNormalization": (2, 9),
    "keras.utils.pad_sequences": (2, 9),
    "keras.regularizers.OrthogonalRegularizer": (2, 9),
    "keras.applications.RegNet": (2, 9),
    "keras.applications.ResNetRS": (2, 9),
    "keras.utils.split_dataset": (2, 10),
    "keras.utils.audio_dataset_from_directory": (2, 10),
    "keras.layers.EinsumDense": (2, 10),
    "keras.applications.ConvNeXt": (2, 10),
    "keras.layers.GroupNormalization": (2, 11),
    "keras.utils.warmstart_embedding_matrix": (2, 11),
    "keras.optimizers.AdamW": (2, 12),
    "keras.optimizers.Adafactor": (2, 12),
    "keras.utils.FeatureSpace": (2, 12),
    "keras.layers.Identity": (2, 12),
    "keras.layers.HashedCrossing": (2, 12),
    "keras.utils.to_ordinal": (2, 12),
    "keras.export.": (2, 12),
}


@dataclass(frozen=True)
class RequiredVersion:
    version: Version
    name: str  # the call that requires it, as written in the source's canonical spelling

    def describe(self) -> str:
        return f"calls `{self.name}` (TensorFlow {self.version[0]}.{self.version[1]} or later)"


def _new_in(name: str) -> Optional[Version]:
    exact = NEW_IN.get(name)
    if exact is not None:
        return exact
    found = [version for prefix, version in NEW_IN.items() if name.startswith(prefix) and prefix != name]
    return max(found) if found else None


def oldest_tensorflow(model: AnalysedModule) -> Optional[RequiredVersion]:
    """The newest of the versions the module's Keras calls require, outside version and feature checks."""
    best: Optional[RequiredVersion] = None
    for site in model.calls:
        name = model.call_name(site.node)
        if name is None or not name.startswith("keras."):
            continue
        version = _new_in(name)
        if version is None or (best is not None and version <= best.version):
            continue
        if model.compatibility.on_branch(site.node):
            continue
        best = RequiredVersion(version, name)
    return best
