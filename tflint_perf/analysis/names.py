"""What a dotted name means: the module's import-alias table and canonical TensorFlow/Keras names.

Every spelling of a TensorFlow API (``tf.data.Dataset``, ``tensorflow.data.Dataset``,
``from tensorflow import data as tfdata``, ``tf.compat.v1``, ``tf.keras``, Keras 3's ``keras``)
is reduced to one canonical string such as ``tf.data.Dataset`` or ``keras.layers.Dense``, so a
rule compares strings and never cares how the user imported things.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst


# Longest prefix first: the first match wins.
_PREFIXES = (
    ("tensorflow.compat.v1.keras.", "keras."),
    ("tensorflow.compat.v2.keras.", "keras."),
    ("tensorflow.compat.v1.", "tf."),
    ("tensorflow.compat.v2.", "tf."),
    ("tensorflow.python.keras.", "keras."),
    ("tensorflow.keras.", "keras."),
    ("tensorflow_datasets.public_api.", "tfds."),
    ("tensorflow_datasets.", "tfds."),
    ("tensorflow.", "tf."),
    ("tf_keras.", "keras."),
    ("keras.src.", "keras."),
    ("keras.api._v2.keras.", "keras."),
)
_EXACT = {
    "tensorflow": "tf",
    "tensorflow.compat.v1": "tf",
    "tensorflow.compat.v2": "tf",
    "tensorflow.keras": "keras",
    "tensorflow.python.keras": "keras",
    "tf_keras": "keras",
    "tensorflow_datasets": "tfds",
    "tensorflow_datasets.public_api": "tfds",
}
# Old or experimental homes of APIs that moved; keyed by canonical name.
_MOVED = {
    "tf.data.experimental.AUTOTUNE": "tf.data.AUTOTUNE",
    "tf.data.experimental.sample_from_datasets": "tf.data.Dataset.sample_from_datasets",
    "tf.data.experimental.choose_from_datasets": "tf.data.Dataset.choose_from_datasets",
    "tf.data.experimental.load": "tf.data.Dataset.load",
    "tf.compat.v1.data.make_one_shot_iterator": "tf.data.make_one_shot_iterator",
    "keras.preprocessing.image_dataset_from_directory": "keras.utils.image_dataset_from_directory",
    "keras.preprocessing.text_dataset_from_directory": "keras.utils.text_dataset_from_directory",
    "keras.preprocessing.timeseries_dataset_from_array": "keras.utils.timeseries_dataset_from_array",
    "tf.random_uniform": "tf.random.uniform",
    "tf.random_normal": "tf.random.normal",
    "tf.truncated_normal": "tf.random.truncated_normal",
    "tf.random_shuffle": "tf.random.shuffle",
    "tf.random_crop": "tf.image.random_crop",
    "tf.multinomial": "tf.random.categorical",
    "tf.compat.v1.py_func": "tf.py_func",
}
_MOVED_PREFIXES = (
    ("keras.layers.experimental.preprocessing.", "keras.layers."),
    ("keras.layers.preprocessing.", "keras.layers."),
)
# Roots whose names are worth resolving at all; anything else resolves to None.
TRACKED_ROOTS = (
    "tensorflow", "keras", "tf_keras", "tensorflow_datasets", "functools", "numpy", "tqdm", "gym", "gymnasium",
    "sklearn", "scipy", "ipywidgets", "pickle", "joblib", "h5py", "soundfile", "keras_tuner", "kerastuner",
)
# Packages under a root not tracked as a whole (`google.protobuf` is not needed): Colab's file upload.
TRACKED_PACKAGES = ("google.colab",)
# The roots that make a module TensorFlow code; the others are resolved only to help the analysis.
FRAMEWORK_ROOTS = frozenset({"tensorflow", "keras", "tf_keras", "tensorflow_datasets"})


@lru_cache(maxsize=4096)  # a pure function of the string, asked for again and again
def canonical_name(qualified: str) -> str:
    """Reduce a fully qualified dotted name to its canonical TensorFlow/Keras spelling."""
    return _MOVED.get(spelled_name(qualified), spelled_name(qualified))


@lru_cache(maxsize=4096)
def spelled_name(qualified: str) -> str:
    """The canonical spelling of the name as written, before moved APIs are mapped to their new
    homes: ``tf.data.experimental.AUTOTUNE`` stays itself (``canonical_name`` gives ``tf.data.AUTOTUNE``).
    Rules about deprecated spellings ask this."""
    name = _EXACT.get(qualified)
    if name is None:
        name = qualified
        for prefix, replacement in _PREFIXES:
            if qualified.startswith(prefix):
                name = replacement + qualified[len(prefix):]
                break
    for prefix, replacement in _MOVED_PREFIXES:
        if name.startswith(prefix):
            name = replacement + name[len(prefix):]
    return name


def dotted_text(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _module_dotted(node: cst.BaseExpression) -> str:
    text = dotted_text(node)
    return text or ""


class ImportTable:
    """Local names bound by imports (and by plain module-level aliases) to qualified names.

    A name bound to two different things is dropped: when unsure, resolve nothing.
    """

    def __init__(self) -> None:
        self._bindings: Dict[str, Optional[str]] = {}
        self.tensorflow_aliases: Dict[str, str] = {}
        # Set by any import of TensorFlow or Keras, even one whose name is later rebound or starred: rules
        # that judge a call by its shape (`sess.run(..., feed_dict=...)`) need the file to be TF code.
        self.imports_framework = False
        # Every module imported by name, tracked or not: a few questions are about the module alone
        # (is this a TensorFlow Decision Forests notebook?).
        self.modules: Set[str] = set()
        # resolve()'s answers by node id, each with its node: the analysis asks about the same few hundred
        # calls thousands of times. Holding the node keeps its id from being reused by another; any
        # change to the bindings empties the memo, so it never answers from an incomplete table.
        self._resolved: Dict[int, Tuple[cst.BaseExpression, Optional[str]]] = {}

    def bind(self, local: str, qualified: Optional[str]) -> None:
        self._resolved.clear()
        if qualified is not None and not qualified.split(".")[0] in TRACKED_ROOTS \
                and not any(qualified == p or qualified.startswith(p + ".") for p in TRACKED_PACKAGES):
            qualified = None
        if local in self._bindings:
            previous = self._bindings[local]
            same = (
                previous is not None
                and qualified is not None
                and canonical_name(previous) == canonical_name(qualified)
            )
            if not same:
                self._bindings[local] = None
            return
        self._bindings[local] = qualified

    def rebind(self, local: str) -> None:
        """A non-import binding of an imported name makes it ambiguous."""
        if local in self._bindings:
            self._bindings[local] = None
            self._resolved.clear()

    def add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _module_dotted(alias.name)
            self._note_module(full)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.bind(alias.asname.name.value, full)
            else:
                root = full.split(".")[0]
                self.bind(root, root)

    def add_import_from(self, node: cst.ImportFrom) -> None:
        if not node.relative and node.module is not None:
            self._note_module(_module_dotted(node.module))
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = _module_dotted(node.module)
        for alias in node.names:
            imported = alias.name.value if isinstance(alias.name, cst.Name) else _module_dotted(alias.name)
            local = imported
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.bind(local, f"{module}.{imported}")

    def _note_module(self, module: str) -> None:
        self.modules.add(module)
        if module.split(".")[0] in FRAMEWORK_ROOTS:
            self.imports_framework = True

    def qualified(self, local: str) -> Optional[str]:
        return self._bindings.get(local)

    def is_bound(self, local: str) -> bool:
        return local in self._bindings

    def resolve(self, node: cst.BaseExpression) -> Optional[str]:
        """Canonical name of a Name/Attribute chain rooted at an import, else None."""
        known = self._resolved.get(id(node))
        if known is not None and known[0] is node:
            return known[1]
        name = self._resolve(node)
        self._resolved[id(node)] = (node, name)
        return name

    def _resolve(self, node: cst.BaseExpression) -> Optional[str]:
        qualified = self.qualified_chain(node)
        return canonical_name(qualified) if qualified is not None else None

    def spelled(self, node: cst.BaseExpression) -> Optional[str]:
        """``spelled_name`` of a Name/Attribute chain rooted at an import, else None."""
        qualified = self.qualified_chain(node)
        return spelled_name(qualified) if qualified is not None else None

    def qualified_chain(self, node: cst.BaseExpression) -> Optional[str]:
        """The fully qualified dotted name of a Name/Attribute chain rooted at an import, else None."""
        text = dotted_text(node)
        if text is None:
            return None
        root, _, rest = text.partition(".")
        qualified = self._bindings.get(root)
        if qualified is None:
            return None
        return f"{qualified}.{rest}" if rest else qualified

    def alias_for(self, canonical: str) -> Optional[str]:
        """A local spelling that resolves to ``canonical`` (e.g. ``tf`` for ``tf``), if one exists."""
        candidates = sorted(
            local
            for local, qualified in self._bindings.items()
            if qualified is not None and canonical_name(qualified) == canonical
        )
        return candidates[0] if candidates else None


def name_uses(tree: cst.CSTNode, name: str, reads_only: bool = False) -> int:
    """How often the plain name ``name`` is written in ``tree``, leaving out the bodies of functions
    and lambdas whose parameter it is (there it names another value), attribute names
    (``self.dataset`` is not the name ``dataset``) and keyword names (``f(dataset=...)``). With
    ``reads_only``, the targets of plain ``name = ...`` assignments are left out too: two notebook
    cells that each bind ``text_data`` and never use it read it nowhere."""
    count = 0
    stack = [tree]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and current.value == name:
            count += 1
        if reads_only and isinstance(current, cst.AssignTarget) and isinstance(current.target, cst.Name):
            continue
        if isinstance(current, (cst.FunctionDef, cst.Lambda)) and name in parameter_names(current.params):
            continue
        if isinstance(current, cst.Attribute):
            stack.append(current.value)
        elif isinstance(current, cst.Arg):
            stack.append(current.value)
        else:
            stack.extend(current.children)
    return count


def parameter_names(params: cst.Parameters) -> List[str]:
    """The names of a signature's positional and keyword parameters (not ``*args``, ``**kwargs``)."""
    return [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]


def assigned_name(statement: cst.SimpleStatementLine) -> Optional[str]:
    """The one name a ``name = value`` statement line binds; None for any other line."""
    if len(statement.body) != 1 or not isinstance(statement.body[0], cst.Assign):
        return None
    targets = statement.body[0].targets
    if len(targets) != 1 or not isinstance(targets[0].target, cst.Name):
        return None
    return targets[0].target.value


def method_spine(expr: cst.BaseExpression) -> List[cst.BaseExpression]:
    """``a.b(x).c(y)`` -> the receivers along the method chain, outermost first."""
    nodes = []
    while True:
        nodes.append(expr)
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        elif isinstance(expr, cst.Attribute):
            expr = expr.value
        else:
            return nodes


def rooted_at(expr: cst.BaseExpression, name: str) -> bool:
    """``name.map(f).batch(32)``: a method chain whose innermost receiver is the plain name ``name``."""
    root = method_spine(expr)[-1]
    return isinstance(root, cst.Name) and root.value == name
