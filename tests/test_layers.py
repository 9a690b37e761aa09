"""The house in layers (docs/architecture.md): the import-linter contracts bite, and no import circles.

``pyproject.toml``'s ``[tool.importlinter]`` contracts are checked in CI by ``lint-imports``; here the
real ``lint-imports`` runs on a copy of the package with one deliberate wrong import, and must name
the contract it breaks (a contract that can never fail would pass CI just the same). The circle test
builds the module graph from every import statement, lazy ones inside functions included, so it
also sees what import-linter's contracts do not forbid.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # a dependency of the package below 3.11
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "tflint_perf"
LINT_IMPORTS = Path(sys.executable).parent / ("lint-imports.exe" if os.name == "nt" else "lint-imports")
MAX_TOP_LEVEL_ENTRIES = 12

needs_lint_imports = pytest.mark.skipif(
    not LINT_IMPORTS.exists(), reason="lint-imports is not installed (pip install -e '.[test]')")


def contract_names() -> List[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return [contract["name"] for contract in config["tool"]["importlinter"]["contracts"]]


LAYERS = "Layers import only downward"
MODEL = "The module model knows none of its analyses"
PROJECT = "The project layer is handed a parse function: no parser, no notebook reader"


def copy_of_the_package(directory: Path) -> Path:
    """The package and its pyproject.toml (where the contracts are) under ``directory``."""
    shutil.copytree(REPO / PACKAGE, directory / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "pyproject.toml", directory / "pyproject.toml")
    return directory


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """The real ``lint-imports`` on the copy at ``root``: ``PYTHONPATH`` and the working directory put
    the copy first, ahead of the checkout the virtual environment has installed."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_contracts_are_the_ones_these_tests_break():
    assert set(contract_names()) == {LAYERS, MODEL, PROJECT}, (
        "each contract in pyproject.toml needs a case in test_a_wrong_import_breaks_its_contract")


@needs_lint_imports
def test_the_package_as_it_is_keeps_every_contract(tmp_path):
    result = lint_imports(copy_of_the_package(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    for name in contract_names():
        assert f"{name} KEPT" in result.stdout, result.stdout
    assert "0 broken" in result.stdout


@needs_lint_imports
@pytest.mark.parametrize("module,statement,broken", [
    # text, the lowest layer, reaching up to checking.
    ("text/source.py", "import tflint_perf.checking.engine", LAYERS),
    # analysis reaching up to project (a layer above it), lazily inside a function.
    ("analysis/effects.py", "def _upward():\n    from tflint_perf.project.session import session_for\n", LAYERS),
    # The model importing one of its analyses.
    ("analysis/model.py", "from tflint_perf.analysis.pipelines import PipelineAnalysis", MODEL),
    # The project layer parsing a notebook itself instead of being handed a parse function.
    ("project/index.py", "from tflint_perf.text.notebook import Notebook", PROJECT),
], ids=["text-imports-checking", "analysis-imports-project-lazily", "model-imports-an-analysis",
        "project-imports-notebook"])
def test_a_wrong_import_breaks_its_contract(tmp_path, module, statement, broken):
    root = copy_of_the_package(tmp_path)
    path = root / PACKAGE / module
    path.write_text(path.read_text(encoding="utf-8") + "\n" + statement + "\n", encoding="utf-8")
    result = lint_imports(root)
    assert result.returncode != 0, result.stdout
    assert f"{broken} BROKEN" in result.stdout, result.stdout
    for name in contract_names():
        if name != broken:
            assert f"{name} KEPT" in result.stdout, result.stdout


# -- import circles and the top level ------------------------------------------------------------------
def module_name(relative: Path) -> str:
    parts = list(relative.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def import_graph(root: Path, package: str = PACKAGE) -> Dict[str, Set[str]]:
    """Module → the package's modules it imports, from every import statement (lazy ones included)."""
    files = {module_name(path.relative_to(root)): path
             for path in (root / package).rglob("*.py") if "__pycache__" not in path.parts}
    edges: Dict[str, Set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                # `from pkg import module` imports the module; `from module import name` the module.
                targets = [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in files else prefix
                           for alias in node.names]
            else:
                continue
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name and (target == package or target.startswith(package + ".")):
                    edges[name].add(target)
    return edges


def import_circles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, without recursion)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    circles: List[List[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        circles.append(sorted(group))
    return circles


def test_no_import_circle_among_the_package_modules():
    edges = import_graph(REPO)
    assert len(edges) > 50 and sum(map(len, edges.values())) > 100  # the whole package was read
    assert import_circles(edges) == []


def test_a_lazy_import_circle_is_found(tmp_path):
    """The circle test is not vacuous: an import inside a function closes a circle too."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("from . import c\n")
    (package / "sub" / "c.py").write_text("def f():\n    from ..a import x\n")
    (package / "d.py").write_text("import pkg.a\n")
    assert import_circles(import_graph(tmp_path, "pkg")) == [["pkg.a", "pkg.sub.b", "pkg.sub.c"]]


def test_the_top_level_shows_the_layers():
    entries = sorted(p.name for p in (REPO / PACKAGE).iterdir() if p.name != "__pycache__")
    assert len(entries) <= MAX_TOP_LEVEL_ENTRIES, entries
