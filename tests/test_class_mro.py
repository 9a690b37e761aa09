"""Which base class's method an instance calls: ``analysis/classes.py``'s ``mro``, Python's C3 order,
the one answer for a same-file hierarchy and for one across first-party modules (the call graph,
the effects, the pipelines' inherited helpers and the attribute reads all ask it).

Each multiple-inheritance case is one where a simpler order gives the wrong method: depth first
(``D(B, C)`` with ``B(A)`` and ``C(A)``: ``C.m`` comes before ``A.m``) and breadth first (``D(B, C)``
with ``B(X)``: ``X.m`` comes before ``C.m``). Python's own ``__mro__`` is the oracle."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.classes import method_of, mro
from tflint_perf.checking.engine import parse_first_party
from tflint_perf.project.index import project_for
from tflint_perf.project.session import Session

# Depth first would give A.m; Python gives C.m.
_DIAMOND = (
    "class A:\n    def m(self):\n        return 'A'\n\n"
    "class B(A):\n    pass\n\n"
    "class C(A):\n    def m(self):\n        return 'C'\n\n"
    "class D(B, C):\n    pass\n"
)
# Breadth first would give C.m; Python gives X.m.
_DEEP_LEFT = (
    "class X:\n    def m(self):\n        return 'X'\n\n"
    "class B(X):\n    pass\n\n"
    "class C:\n    def m(self):\n        return 'C'\n\n"
    "class D(B, C):\n    pass\n"
)


def _python_answer(source: str) -> str:
    namespace: dict = {}
    exec(source, namespace)  # the oracle: the class statements themselves
    return namespace["D"]().m()


def _owner_name(model, cls_name: str) -> str:
    found = method_of(model, model.classes[cls_name], "m")
    assert found is not None and found.owner is not None
    return found.owner.name


def test_same_file_multiple_inheritance_follows_pythons_order():
    for source in (_DIAMOND, _DEEP_LEFT):
        model = AnalysedModule(cst.parse_module(source))
        assert _owner_name(model, "D") == _python_answer(source)
    diamond = AnalysedModule(cst.parse_module(_DIAMOND))
    assert [c.name for c in mro(diamond, diamond.classes["D"])] == ["D", "B", "C", "A"]


def _session_model(root: Path, files: dict, checked: str):
    (root / "pyproject.toml").write_text("")
    for name, text in files.items():
        (root / name).write_text(text)
    path = root / checked
    session = Session(project_for(path), parse_first_party)
    text = path.read_text()
    return session.adopt(path, text, cst.parse_module(text))


def test_multiple_inheritance_across_modules_follows_pythons_order(tmp_path):
    for index, source in enumerate((_DIAMOND, _DEEP_LEFT)):
        bases, _, subclass = source.rpartition("class D")
        root = tmp_path / str(index)
        root.mkdir()
        model = _session_model(root, {"bases.py": "import tensorflow as tf\n" + bases,
                                      "main.py": "import tensorflow as tf\nfrom bases import B, C\n\nclass D" + subclass},
                               "main.py")
        assert _owner_name(model, "D") == _python_answer(source)
        # Kept to the module, nothing is inherited from the other one.
        assert method_of(model, model.classes["D"], "m", local_only=True) is None


def test_a_cycle_or_an_unknown_base_ends_the_order():
    model = AnalysedModule(cst.parse_module(
        "import tensorflow as tf\n\nclass A(B):\n    pass\n\nclass B(A):\n    pass\n\n"
        "class K(tf.keras.Model, A):\n    pass\n"))
    assert [c.name for c in mro(model, model.classes["K"])] == ["K", "A", "B"]
    assert method_of(model, model.classes["K"], "call") is None


def test_a_class_named_as_its_imported_base_inherits_from_it(tmp_path):
    # `class Model(Model)` over the project's own `Model`: the base is the import, read before the
    # class statement rebinds the name, not the class itself.
    model = _session_model(tmp_path, {
        "base.py": "import tensorflow as tf\n\nclass Model:\n    def m(self):\n        return 'base'\n",
        "main.py": "import tensorflow as tf\nfrom base import Model\n\nclass Model(Model):\n    pass\n",
    }, "main.py")
    assert [c.name for c in mro(model, model.classes["Model"])] == ["Model", "Model"]
    found = method_of(model, model.classes["Model"], "m")
    assert found is not None and found.model is not model
