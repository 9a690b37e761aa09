"""A run's view of a project: its modules, each modelled once, and what they say of each other.

A ``Session`` (one per project workspace, checking/workspace.py) holds the model of every first-party module the run has
needed: the files checked (``adopt``: the engine's parse, reused while the content is the same) and
the modules they import or are imported by (``model_for``, parsed on demand). Because every module
resolves another's names through the same session, a pipeline state built in ``data.py`` and fitted
in ``train.py`` holds ``data.py``'s very nodes, so the check of ``data.py`` can report it there.
*Down*: an imported name is resolved (``definition``) and its module's own analyses are used
(``model.pipelines``, ``model.effects``, ``model.hot_paths``, computed as for a single file).
*Up*: an analysis of a module adds what the modules importing it (``importers``) do with it (see
``PipelineAnalysis.consumptions``, ``HotPaths``, ``CallGraph.loops_reaching``), one level up, from
their own analyses, so the answer never depends on the order modules were checked in. An import cycle
(two modules that reach each other within ``project.CYCLE_DEPTH`` imports) is unknown both ways, and
an analysis asked for while it is being built (a longer cycle) answers None: the rules stay silent
rather than guess or hang.
"""

from __future__ import annotations

import gc
import hashlib
from collections import Counter, OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from tflint_perf.analysis.analyses import AnalysedModule
from tflint_perf.analysis.model import ClassInfo, FunctionInfo, ModuleModel
from tflint_perf.project.index import MAX_IMPORTERS, MAX_MODULES, Project

Definition = Union[FunctionInfo, ClassInfo]
# How a first-party module's text becomes a tree: handed in by the checking layer (it knows notebooks,
# the prefilter and the parser's limits); None for a module that cannot or need not be parsed.
ParseModule = Callable[[Path, str], Optional[cst.Module]]
_TREES: "OrderedDict[Tuple[Path, bytes], Optional[cst.Module]]" = OrderedDict()
_MAX_TREES = 256  # parsed neighbours kept between the checks of one run (trees are immutable, so shareable)
# The key of ``importing``'s answers among ``importers``': no Python name is spelled so.
_ANY_NAME: FrozenSet[str] = frozenset({"<any name>"})


class Session:
    """A workspace's view of one project: each module modelled once (the checked ones and those they
    import or are imported by alike), so a module's analyses are computed once per process and every
    module resolves another's names to the same objects."""

    def __init__(self, project: Project, parse: ParseModule) -> None:
        self.project = project
        self.parse = parse
        self._models: "OrderedDict[Path, Optional[ModuleModel]]" = OrderedDict()
        self._digests: Dict[Path, bytes] = {}
        self._building: Set[Tuple[int, str]] = set()  # (model id, analysis) under construction
        self._importers: Dict[Tuple[Path, FrozenSet[str]], List[ModuleModel]] = {}
        self._registered = 0
        # Freeze long-lived models while the session is first filled (a run); once modules are updated
        # (a workspace that outlives edits), dropped models must be collectable, so freezing stops.
        self._freezing = True
        # What was frozen by the last refreeze (see _refreeze): models registered up to then, and how many
        # of those were dropped since (frozen, they wait for the next refreeze to be collected).
        self._forgets = 0  # updates taken in (edits)
        self._serials: Dict[Path, int] = {}
        self._frozen_upto = 0
        self._frozen_dropped = 0
        self.builds: Counter = Counter()  # how often each module was modelled: what a change costs

    def known(self, path: Path, text: str) -> Optional[ModuleModel]:
        """The model already built for this content of the module, if any (its analyses are reused)."""
        path = path.resolve()
        model = self._models.get(path)
        return model if model is not None and self._digests.get(path) == _digest(text) else None

    def adopt(self, path: Path, text: str, tree: cst.Module) -> ModuleModel:
        """The model of a module being checked: the one already built for this content, else a new one
        (and the models of modules importing it are dropped: they resolved its names to the old one)."""
        path = path.resolve()
        digest = _digest(text)
        known = self._models.get(path)
        if known is not None and self._digests.get(path) == digest:
            return known
        if path in self._models:
            for importer in self.project.importers_of(path):
                self._forget(importer.resolve())
            self._importers.clear()
        model = AnalysedModule(tree)
        self._register(model, path, digest)
        return model

    def _register(self, model: ModuleModel, path: Path, digest: bytes) -> None:
        self.builds[path] += 1
        model.session = self
        model.path = path
        self._models[path] = model
        self._digests[path] = digest
        self._registered += 1
        self._serials[path] = self._registered
        if self._freezing and self._registered <= MAX_MODULES:
            # The models kept for the run are long-lived: without this, every full collection walks all of
            # their trees again (measured: twice the CPU of a run on tf-models-official). Past the bound, the
            # collector is left alone, so that forgotten models can be freed.
            gc.freeze()
        while len(self._models) > MAX_MODULES:  # forgotten models are rebuilt alike when asked again
            self._forget(next(iter(self._models)))

    def _forget(self, path: Path) -> None:
        if self._serials.pop(path, self._frozen_upto + 1) <= self._frozen_upto:
            self._frozen_dropped += 1
        self._models.pop(path, None)
        self._digests.pop(path, None)

    def forget(self, paths: Iterable[Path]) -> None:
        """Drop the models of modules whose text, or whose neighbours' text, changed: they are built
        again when next asked for. The frozen generation is released, and no longer added to on each
        model built, so that dropped models can be collected (freezing again would freeze them before
        their collection); instead, a workspace being edited freezes what is alive now and then (below)."""
        for path in paths:
            self._forget(path.resolve())
        self._importers.clear()
        if self._freezing:
            gc.unfreeze()
            self._freezing = False
        self._forgets += 1
        if (self._forgets % REFREEZE_EVERY == REFREEZE_AFTER % REFREEZE_EVERY
                or self._frozen_dropped >= REFREEZE_DROPPED):
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self._frozen_upto = self._registered
            self._frozen_dropped = 0

    def __len__(self) -> int:
        return sum(1 for model in self._models.values() if model is not None)

    # -- modules ----------------------------------------------------------------------------------
    def model_for(self, path: Path) -> Optional[ModuleModel]:
        if path not in self._models:
            text = self.project.text_of(path)
            tree = _tree(path, text, self.parse)
            if tree is None:
                self._models[path] = None
                return None
            self._register(AnalysedModule(tree), path, _digest(text))
        return self._models[path]

    def importers(self, model: ModuleModel, names: Iterable[str]) -> List[ModuleModel]:
        """The modules importing ``model``'s module that use one of ``names`` from it (at most
        MAX_IMPORTERS, in path order; none that it imports back)."""
        if model.path is None:
            return []
        key = (model.path, frozenset(names))
        if key not in self._importers:
            self._importers[key] = self._modelled_importers(model.path, self.project.importers_using(model.path, key[1]))
        return self._importers[key]

    def importing(self, model: ModuleModel) -> List[ModuleModel]:
        """Every module importing ``model``'s module, whatever it takes from it (at most MAX_IMPORTERS,
        in path order; none that it imports back)."""
        if model.path is None:
            return []
        key = (model.path, _ANY_NAME)
        if key not in self._importers:
            self._importers[key] = self._modelled_importers(model.path, self.project.importers_of(model.path))
        return self._importers[key]

    def all_importers(self, model: ModuleModel) -> Optional[List[ModuleModel]]:
        """``importing``'s modules when they are every importer there is; None when the module has more
        than MAX_IMPORTERS: a question about all of them (do they all run only on TensorFlow 1?) has no
        answer from the first few."""
        if model.path is None:
            return []
        if len(self.project.importers_of(model.path)) > MAX_IMPORTERS:
            return None
        return self.importing(model)

    def _modelled_importers(self, imported: Path, paths: List[Path]) -> List[ModuleModel]:
        found = []
        for path in paths[:MAX_IMPORTERS]:
            path = path.resolve()
            if path == imported or self.project.reaches(imported, path):
                continue  # an import cycle: neither side's view of the other is reliable
            importer = self.model_for(path)
            if importer is not None:
                found.append(importer)
        return found

    def imported(self, model: ModuleModel) -> List[ModuleModel]:
        """The first-party modules ``model``'s module imports directly (modelled once each)."""
        if model.path is None:
            return []
        found = []
        for path in self.project.dependencies(model.path):
            path = path.resolve()
            imported = self.model_for(path) if path != model.path else None
            if imported is not None:
                found.append(imported)
        return found

    def importer_texts(self, model: ModuleModel, names: Iterable[str], excluding: Optional[Path] = None) -> List[str]:
        """The texts of every module importing ``model``'s module that uses one of ``names`` from it
        (but the one at ``excluding``), parsed or not (one without TensorFlow in it still reads
        attributes of what it imports)."""
        if model.path is None:
            return []
        return [self.project.text_of(path) for path in self.project.importers_using(model.path, frozenset(names))
                if excluding is None or path != excluding]

    # -- names ------------------------------------------------------------------------------------
    def definition(self, model: ModuleModel, target: Tuple[str, int, Optional[str]], attributes: Sequence[str]
                   ) -> Optional[Definition]:
        """What ``attributes`` of an import (``target``: module, dots, name) of ``model`` denote."""
        if model.path is None:
            return None
        module, level, name = target
        resolved = self.project.resolve(model.path, module, level, name)
        if resolved is None or resolved[0] == model.path:
            return None
        path, lookup = resolved
        if self.project.reaches(path, model.path):
            return None  # an import cycle: unknown, whichever module is analysed first
        names = ([lookup] if lookup else []) + list(attributes)
        return self._lookup(model, path, names)

    def _lookup(self, importer: ModuleModel, path: Path, names: Sequence[str]) -> Optional[Definition]:
        model = self.model_for(path)
        if model is None or not names or model.path is None:
            return None
        head, rest = names[0], names[1:]
        if head in model.module_functions and not rest:
            return model.module_functions[head]
        if head in model.classes:
            cls = model.classes[head]
            if not rest:
                return cls
            return cls.methods.get(rest[0]) if len(rest) == 1 else None
        if head in model.raw_imports:  # re-exported: `from .impl import make_dataset` in a package's __init__
            return self.definition(model, model.raw_imports[head], rest)
        if model.path.name == "__init__.py":  # `import pkg` then `pkg.data.make_dataset`
            submodule = self.project.resolve(model.path, "", 1, head)
            if submodule is not None and submodule[1] is None and submodule[0] != importer.path:
                return self._lookup(importer, submodule[0], rest)
        for module, level in model.star_imports:  # `from .utils import *` in a package's __init__
            found = self.definition(model, (module, level, head), rest)
            if found is not None:
                return found
        return None

    # -- analyses across modules --------------------------------------------------------------------
    def analysis(self, model: ModuleModel, name: str):
        """``model.<name>`` (``pipelines``...) for a module other than the one asking; None while that
        analysis is being built (an import cycle): unknown."""
        key = (id(model), name)
        if key in self._building:
            return None
        if name in model.__dict__:
            return model.__dict__[name]
        self._building.add(key)
        try:
            return getattr(model, name)
        finally:
            self._building.discard(key)

    @contextmanager
    def building(self, model: ModuleModel, name: str) -> Iterator[None]:
        """While ``model.<name>`` itself is built, so that a cycle back to it answers unknown."""
        key = (id(model), name)
        self._building.add(key)
        try:
            yield
        finally:
            self._building.discard(key)


# A workspace being edited (a language server) builds a module's model anew on each edit and drops the
# last one; everything else (the neighbours' models, the project index, the libraries) lives on. Left
# to itself, the collector's full collections walk all of it again about once per edit (measured: 40 ms
# of a 250 ms re-check of a 1,000-line file). So after the first edits, and every REFREEZE_EVERY
# updates, the objects alive are frozen (``forget``), once the models just dropped are collected: full
# collections then walk only what was built since. A frozen model dropped later (a neighbour's, after
# an edit of its own) cannot be collected until the next refreeze, so one comes as soon as
# REFREEZE_DROPPED of them wait: memory stays bounded (the first freezing policy, which froze dropped
# models, grew by 110 MiB per edit of a module with 108 importers: docs/performance.md).
REFREEZE_AFTER = 3
REFREEZE_EVERY = 50
REFREEZE_DROPPED = 16


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _tree(path: Path, text: str, parse: ParseModule) -> Optional[cst.Module]:
    """The parsed tree of a first-party module (a notebook's code cells), memoised by content."""
    key = (path, _digest(text))
    if key in _TREES:
        _TREES.move_to_end(key)
        return _TREES[key]
    tree = parse(path, text)
    _TREES[key] = tree
    while len(_TREES) > _MAX_TREES:
        _TREES.popitem(last=False)
    return tree


def forget_trees() -> None:
    _TREES.clear()

