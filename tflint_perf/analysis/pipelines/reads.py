"""How often an iterator over a pipeline is read: a demonstration's few steps are not a hot path.

A colab that fine-tunes a checkpoint "for just a few iterations" (google-research/simclr's
``total_iterations = 10``, then ``for it in range(total_iterations): x = next(iterator)``) or draws
five images to plot (``it = iter(ds)``, ``for _ in range(5): image = it.next()``) reads its pipeline
a handful of times: a prefetch or a parallel map would save at most a few steps' input time. What
says "a few" is the code itself: every loop the reads run in has a count the source shows (a literal,
a module constant) and together they read at most ``FEW_CALLS`` elements; reads outside loops run once.

- ``iter(ds)`` (``ds.__iter__()``) bound to a name read only by ``next(it)``, ``it.next()`` or
  ``it.get_next()`` in the same scope (a notebook may bind the name afresh in several cells: each
  binding's reads are those it alone reaches) (any other use of the name, a read in a comprehension or in a scope a loop reaches
  leaves it unknown);
- a TF1 iterator (``make_one_shot_iterator``, ``make_initializer``): its elements are read by the
  module's session runs (``sess.run``, ``t.eval()``), so those are counted, and at least one must
  be in a loop (none means a framework or another module runs the steps); in a module that runs no
  session, one made at module level is eager (TF2's ``tf.compat.v1`` spelling) and its ``get_next()``
  calls are its reads, counted as ``next(it)`` is.

``few_reads`` answers with the purpose to record: inspection when a reading loop plots, else one-off.
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterable, List, Optional

import libcst as cst

from tflint_perf.analysis.debugging import module_trains
from tflint_perf.analysis.loops import FEW_CALLS, StepLoops
from tflint_perf.analysis.model import CallSite, ModuleModel
from tflint_perf.analysis.names import name_uses
from tflint_perf.analysis.purpose import Purpose, purpose_of_names
from tflint_perf.analysis.sessions import RunPurposes, Sessions, run_fetches

# `it.next()` (TF2 iterators keep the Python 2 spelling), `it.get_next()`, `it.__next__()`.
_READ_METHODS = frozenset({"next", "get_next", "__next__"})
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class IteratorReads:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._loops: StepLoops = model.step_loops  # type: ignore[attr-defined]  # the module's one StepLoops
        self._uses: dict = {}

    def few_reads(self, call: cst.Call, tf1: bool) -> Optional[Purpose]:
        """The purpose of an iterator made at ``call`` (``iter(ds)``; with ``tf1``, a TF1 iterator)
        when it is read a few times only; None when it may be read more, or the code does not say."""
        site = self.model.site_of(call)
        if tf1 and (self._runs or site is None or site.function is not None):
            return self._session_runs
        # A TF1 iterator made at module level in a module that runs no session (a TF2 notebook's
        # `make_one_shot_iterator(ds)`, then `item = iterator.get_next()`; `print(item.numpy())`): eager, so
        # each `get_next()` reads an element itself, as `next(it)` does. In graph code with no session here,
        # nothing in the module runs it either; one made in a function may feed a framework (an `input_fn`).
        name = _assigned_name(site, call)
        if site is None or name is None:
            return None
        reads = self._reads.get(name, [])
        if tf1 and not reads:
            return self._session_runs  # read nowhere here: another module's session, or a framework, may
        # Each use of the name is an assignment of it or a read in the same scope: nothing else sees it.
        found_scope, bindings = self.model.scope_bindings(name, site.function)
        if found_scope is not site.function or any(binding.kind != "assign" for binding in bindings) \
                or self._name_uses(name) != len(bindings) + len(reads) \
                or any(read.function is not site.function for read in reads):
            return None
        if len(bindings) > 1:
            # A notebook that makes `it = ds.__iter__()` afresh in several cells: this iterator's reads
            # are the ones its own binding alone reaches.
            mine = [binding for binding in bindings if binding.value is call]
            reached = [self.model.reaching(name, read.function, read.place) for read in reads]
            if len(mine) != 1 or any(not found or len(found) != 1 for found in reached):
                return None
            reads = [read for read, found in zip(reads, reached) if found is not None and found[0] is mine[0]]
        return self._few(reads, require_loop=False)

    def collecting_pass(self, loop: cst.CSTNode) -> bool:
        """A loop, run once (in no other loop, in a function no loop calls), whose body only appends
        each element to a list: the pipeline is read once into memory (a file list decoded image by
        image into ``train_data``, then stacked), not fed to a step."""
        if not isinstance(loop, cst.For) or loop.orelse is not None:
            return False
        body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
        if not body or not all(_appends(statement) for statement in body):
            return False
        sites = self._loops.calls_in(loop)
        return bool(sites) and all(
            site.loops[:1] == (loop,) and not self.model.call_graph.loops_reaching(site.function)  # type: ignore[attr-defined]
            for site in sites
        )

    def loop_over_iterator(self, call: cst.Call) -> Optional[cst.For]:
        """``it = iter(ds)`` then ``for x in it:`` in the same scope, the name used nowhere else: that loop."""
        made = self.model.site_of(call)
        name = _assigned_name(made, call)
        if made is None or name is None or self._name_uses(name) != 2:
            return None
        for site in self.model.calls:
            if site.function is not made.function:
                continue
            for loop in site.loops:
                if isinstance(loop, cst.For) and isinstance(loop.iter, cst.Name) and loop.iter.value == name:
                    return loop
        return None

    @cached_property
    def _session_runs(self) -> Optional[Purpose]:
        return self._few(self._runs, require_loop=True)

    @cached_property
    def _runs(self) -> List[CallSite]:
        """The module's session runs: ``sess.run(...)``, ``t.eval()``."""
        sessions = Sessions(self.model)
        return [
            site for site in self.model.calls
            if isinstance(site.node.func, cst.Attribute) and (
                site.node.func.attr.value == "eval"
                or (site.node.func.attr.value == "run" and sessions.is_session(site.node.func.value, site)))
        ]

    @cached_property
    def session_trains(self) -> bool:
        """Some session run in a loop, or in a helper a loop calls (``run_step(sess)`` returning
        ``sess.run([loss, train_op])``), fetches a train op (``sess.run([self.loss, self.optimizer])``,
        the optimizer's ``minimize``): the TF1 iterators the module reads feed training steps, whatever
        the module's name says (word2vec's ``04_word2vec_visualize.py`` trains 100,000 steps, then exports)."""
        return any(self._looped(site) for site in self._training_runs)

    @cached_property
    def _training_runs(self) -> List[CallSite]:
        """The module's ``sess.run`` calls that fetch a train op, in a loop or not."""
        purposes = RunPurposes(self.model)
        return [
            site for site in self._runs
            if site.node.func.attr.value == "run"  # type: ignore[union-attr]
            and purposes.purpose(site, run_fetches(site.node)) is Purpose.TRAINING
        ]

    def _looped(self, site: CallSite) -> bool:
        """The run repeats: it sits in a loop, or in a function a loop calls (up to a few levels away)."""
        return bool(site.loops) or bool(self.model.call_graph.loops_reaching(site.function))  # type: ignore[attr-defined]

    @cached_property
    def looped_runs_purpose(self) -> Optional[Purpose]:
        """What the module's TF1 iterators feed when its session runs in loops (or in functions loops
        call) say so, every one of them, and no run fetches a train op: each sits in a function, or
        fetches values, named for evaluation, generation or inspection. t2t's ``compute_one_decoding_video_metrics`` runs ``metrics`` over a
        zip of decoded and target videos; ``generate_samples`` runs ``get_next()`` to yield the records
        a data generator writes. No looped run (a framework runs the steps), or one that says nothing
        (``main`` fetching ``[loss, opt]``): None, and the iterator stays training input."""
        if self._training_runs:
            return None  # whichever loop runs it, a train op fetched anywhere says the iterators train
        looped = [site for site in self._runs if self._looped(site)]
        if not looped:
            return None
        if all(self._reads_out_elements(site) for site in looped) and not module_trains(self.model):
            return Purpose.ONE_OFF  # FixMatch's create_split.py: each batch's labels fetched into lists, then written
        found = []
        for site in looped:
            names = site.function.enclosing_names(classes=False) if site.function is not None else []
            names.extend(_fetched_names(run_fetches(site.node)))
            purpose = purpose_of_names(names)
            if purpose not in (Purpose.EVALUATION, Purpose.INFERENCE, Purpose.INSPECTION):
                return None
            found.append(purpose)
        return Purpose.INSPECTION if all(p is Purpose.INSPECTION for p in found) else Purpose.EVALUATION

    def _reads_out_elements(self, site: CallSite) -> bool:
        """A session run that fetches nothing but a TF1 iterator's elements (names bound to ``get_next()``)
        and feeds nothing: the pipeline's values go to Python, not to a step. In a module that trains
        nothing (``debugging.module_trains``) that is a pass reading the data out (collecting labels,
        writing records); a step on another module's train op would fetch that op, or feed it."""
        if any(arg.keyword is not None and arg.keyword.value == "feed_dict" for arg in site.node.args) \
                or len([arg for arg in site.node.args if arg.keyword is None]) > 1:
            return False
        fetches = run_fetches(site.node)
        if not isinstance(fetches, (cst.Name, cst.List, cst.Tuple)) or site.node.func.attr.value != "run":  # type: ignore[union-attr]
            return False
        leaves = [fetches] if isinstance(fetches, cst.Name) else [element.value for element in fetches.elements]  # type: ignore[union-attr]
        return bool(leaves) and all(isinstance(leaf, cst.Name) and self._element_name(leaf.value, site) for leaf in leaves)

    def _element_name(self, name: str, site: CallSite) -> bool:
        """Every binding of ``name`` where ``site`` reads it is ``... .get_next()``."""
        bindings = self.model.scope_bindings(name, site.function)[1]
        return bool(bindings) and all(
            binding.kind == "assign" and isinstance(binding.value, cst.Call)
            and isinstance(binding.value.func, cst.Attribute) and binding.value.func.attr.value == "get_next"
            for binding in bindings)

    def _few(self, reads: Iterable[CallSite], require_loop: bool) -> Optional[Purpose]:
        total, looped, plots = 0, False, False
        for read in reads:
            if _in_comprehension(read) or self.model.call_graph.loops_reaching(read.function):  # type: ignore[attr-defined]
                return None
            count = 1
            for loop in read.loops:
                iterations = self._loops.iterations(loop)
                if iterations is None:
                    return None  # `while True`, `range(steps)` from a flag: as many reads as the data holds
                count *= iterations
                plots = plots or any(self._loops.plots(other) for other in self._loops.calls_in(loop))
            if read.loops:
                looped = True
                total += count
        if total > FEW_CALLS or (require_loop and not looped):
            return None
        return Purpose.INSPECTION if plots else Purpose.ONE_OFF

    @cached_property
    def _reads(self) -> dict:
        """``next(it)``, ``it.next()``, ``it.get_next()`` calls, by the iterator's name."""
        found: dict = {}
        for site in self.model.calls:
            func = site.node.func
            if isinstance(func, cst.Name) and func.value == "next" and len(site.node.args) == 1:
                target = site.node.args[0].value
            elif isinstance(func, cst.Attribute) and func.attr.value in _READ_METHODS and not site.node.args:
                target = func.value
            else:
                continue
            if isinstance(target, cst.Name):
                found.setdefault(target.value, []).append(site)
        return found

    def _name_uses(self, name: str) -> int:
        """How often the variable ``name`` is written in the module (``names.name_uses``: not an attribute's
        or a keyword's name, `ds.unbatch().batch(20)` beside `batch = iter(...)`, nor a parameter's own)."""
        known = self._uses
        if name not in known:
            known[name] = name_uses(self.model.module, name)
        return known[name]


def _assigned_name(site: Optional[CallSite], call: cst.Call) -> Optional[str]:
    """``it = iter(ds)``: the one name the call's value is bound to."""
    statement = site.statement if site is not None else None
    small = statement.body[0] if statement is not None and len(statement.body) == 1 else None
    if isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1:
        target = small.targets[0].target
        return target.value if isinstance(target, cst.Name) else None
    return None


def _fetched_names(fetches: Optional[cst.BaseExpression]) -> List[str]:
    """The names a run's fetches are spelled with (``metrics``, ``[self.loss, psnr]``): each leaf."""
    found: List[str] = []
    stack: List[cst.CSTNode] = [fetches] if fetches is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            found.append(node.value)
        elif isinstance(node, cst.Attribute):
            found.append(node.attr.value)
        elif isinstance(node, (cst.List, cst.Tuple)):
            stack.extend(element.value for element in node.elements)
        elif isinstance(node, cst.Subscript):
            stack.append(node.value)
    return found


def _appends(statement: cst.BaseStatement) -> bool:
    """``items.append(...)`` as the whole statement."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    return all(
        isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)
        and isinstance(small.value.func, cst.Attribute) and small.value.func.attr.value == "append"
        for small in statement.body
    )


def _in_comprehension(site: CallSite) -> bool:
    """A read inside ``[next(it) for _ in range(n)]`` runs once per item, which the loops do not show."""
    statement = site.statement
    if statement is None:
        return True  # a compound statement's header (`while next(it)`): unsure
    stack: List[cst.CSTNode] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, _COMPREHENSIONS):
            inner: List[cst.CSTNode] = [node]
            while inner:
                current = inner.pop()
                if current is site.node:
                    return True
                inner.extend(current.children)
            continue
        stack.extend(node.children)
    return False
