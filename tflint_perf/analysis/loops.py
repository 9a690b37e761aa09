"""Loops that repeat work: which loops a call runs in, and what changes from one iteration to the next.

A performance finding about "X in a loop" is worth a user's time only where the loop repeats the
step many times. Not every loop does: ``for flag in (True, False)`` runs twice; ``for x in
ds.take(3)``, ``for i in range(9)`` around ``plt.subplot`` and a loop over ``images[:5]`` inspect a
few samples. ``StepLoops`` answers, from the collector's records:

- ``lexical(site)``: the loops around a call that repeat work (not short literal loops, not
  inspection loops);
- ``reaching(function)``: the same for the loops a few callers away (``CallGraph.loops_reaching``);
- ``around_def(function)``: the loops lexically around a nested ``def`` (the collector records loops
  for calls, not for definitions);
- ``varies(expr, site, loop)``: whether an expression's value is bound anew in each iteration (the
  loop's target, or a name assigned in its body);
- ``runs_briefly(loops)``: whether nested loops run a training step at most ``FEW_STEPS`` times in all;
- ``every_nth(loop, node, function)``: how seldom a statement in a loop's body runs when an ``if``
  on the loop's counter picks every Nth iteration (``if (epoch + 1) % print_freq == 0:``);
- ``runs_in_all(site)``: at most how many times a call runs in one run of the program, when the bound
  of every loop around it and every call of the functions it is in show it (``HANDFUL``: a demo's few
  calls after training, five image files or a 7 x 7 latent grid, not a step repeated over data).
"""

from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import int_literal
from tflint_perf.analysis.cross_validation import CrossValidation
from tflint_perf.analysis.debugging import is_training_call
from tflint_perf.analysis.model import CallSite, FunctionInfo, LoopNode, ModuleModel
from tflint_perf.analysis.names import dotted_text
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.analysis.lengths import Lengths, mutated
from tflint_perf.analysis.uploads import iterates_uploads, waits_for_input
from tflint_perf.text.walk import walk

_EPOCH_VARIABLE = re.compile(r"epoch", re.IGNORECASE)
_PER_EPOCH = re.compile(r"per_?epoch", re.IGNORECASE)
_EPOCH_COUNT = re.compile(r"^(?:n|nb|num|max|total)?_?epochs?$", re.IGNORECASE)
# Calls that say a loop looks at a few samples (plots a grid, shows images).
_PLOTTING = frozenset({"imshow", "subplot", "subplots", "show", "plot", "savefig", "figure", "title", "axis",
                       "add_subplot", "set_title", "display", "scatter", "hist", "render"})
_SCALING = (cst.Multiply, cst.Divide, cst.FloorDivide)
_TRAINING_DEPTH = 3  # calls followed from a loop's body to a training step
_SHORT = 4  # a literal tuple/list loop of at most this many items is a few runs, not a loop over data
# A statement that an `if counter % N == 0` guard runs every Nth iteration of its loop, N at least this
# (a literal or a module constant), is periodic work: evaluation every second epoch or rarer is not the
# per-epoch evaluation the accelerator waits on as it does for training. N = 1 (`epoch % 1 == 0`) is every
# iteration, and a count the source does not show (`epoch % args.eval_every`) may be 1: both stay per-iteration.
PERIODIC_AT_LEAST = 2
FEW_CALLS = 10  # a loop of a known count this small runs a step too few times for its overhead to add up
# Training steps in all (the product of the known counts of the loops around a step) that take seconds
# however they run: a small model's eager step costs a few milliseconds of dispatch, a large model's is
# dominated by its kernels, which compiling does not shorten. A demonstration, not a training run.
FEW_STEPS = 500
# A parameter counting how many times a driver repeats the callable it is handed (not `maxiter`/`maxfun`:
# an optimiser's limit, whose calls feed each result back).
_REPETITIONS = re.compile(r"^(?:n_?|num_?|total_?)?(?:iterations|iters|steps|frames|repeats?|times|number)$")
_FEW = 16  # `range(n)` / `x[:n]` / `take(n)` with a literal n at most this: a few samples looked at
# Runs in all of a call that a program makes once (a demo after training: one call per image of five, per
# point of a 7 x 7 grid, per step of a 16-step forecast): its overhead adds up to a second or two, once.
HANDFUL = 64
_CALLERS_DEPTH = 4  # callers followed to count a function's runs


def counts_epochs(loop: LoopNode) -> bool:
    """``for epoch in range(n)``, ``for _ in range(args.epochs)``, ``while epoch < num_epochs``
    (but not ``for step in range(steps_per_epoch)``).

    A loop is classified by its bound, not by the words in it: ``for step in range(int(num_epochs *
    train_size) // BATCH_SIZE)`` and ``while step * batch_size < epochs * n`` name the epochs but run
    once per batch, since the epoch count is scaled by the data's size (or the steps per epoch).
    Only an epoch count on its own (give or take a literal: ``range(1, epochs + 1)``) counts epochs."""
    if isinstance(loop, cst.For):
        return _mentions(loop.target, _EPOCH_VARIABLE) or _unscaled_epoch_count(loop.iter, _EPOCH_COUNT)
    return _unscaled_epoch_count(loop.test, _EPOCH_VARIABLE)


def _unscaled_epoch_count(expr: cst.CSTNode, pattern: "re.Pattern[str]") -> bool:
    """``expr`` reads a name about epochs (``pattern``) that no multiplication or division by another
    quantity turns into a count of steps; ``steps_per_epoch`` is a count of steps too."""
    stack: List[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _SCALING):
            if not _is_number(node.left) and not _is_number(node.right):
                continue  # `epochs * steps_per_epoch`, `total // epochs`: a count of steps
        if isinstance(node, cst.Name) and pattern.search(node.value) and not _PER_EPOCH.search(node.value):
            return True
        stack.extend(node.children)
    return False


def _is_number(node: cst.CSTNode) -> bool:
    return isinstance(node, (cst.Integer, cst.Float))


def breaks_after_first(loop: LoopNode) -> bool:
    """The loop's body ends in an unconditional ``break`` and no ``continue`` of its own can skip it
    (``for x, y in test_iter: pred = model.predict(x); print(pred.shape); break``): it runs at most once,
    whatever it iterates: a look at the first element, not a loop over data."""
    body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
    if not body or not isinstance(body[-1], cst.SimpleStatementLine) or not isinstance(body[-1].body[-1], cst.Break):
        return False
    finder = _OwnContinue()
    for statement in body:
        walk(statement, finder)
    return not finder.found


# A call into one of these draws anew on every call: NumPy's, Python's and TensorFlow's random number
# generators (but their `stateless_` ops, which a fixed seed repeats).
_RANDOM_MODULES = ("np.random.", "numpy.random.", "random.", "tf.random.")


class _Calls(cst.CSTVisitor):
    """Every call in a tree."""

    def __init__(self) -> None:
        super().__init__()
        self.found: List[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.found.append(node)


def calls_under(node: cst.CSTNode) -> List[cst.Call]:
    """Every call in ``node``'s tree, ``node`` included (walked, not through ``children``, which rebuilds)."""
    finder = _Calls()
    walk(node, finder)
    return finder.found


class _OwnContinue(cst.CSTVisitor):
    """Whether a ``continue`` belongs to the loop walked (not to a loop nested in it, nor to a function there)."""

    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Continue(self, node: cst.Continue) -> None:
        self.found = True

    def visit_For(self, node: cst.For) -> bool:
        return False

    def visit_While(self, node: cst.While) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False


def short_literal_loop(loop: LoopNode) -> bool:
    """``for flag in (True, False):``, ``for name in ["a", "b"]:``: a few fixed runs, not a loop over data."""
    return isinstance(loop, cst.For) and isinstance(loop.iter, (cst.Tuple, cst.List)) and len(loop.iter.elements) <= _SHORT


def few_literal_iterations(loop: LoopNode) -> bool:
    """``x[:5]``, ``ds.take(3)``, ``range(3)`` (also under ``enumerate``/``zip``): a literal count of a few."""
    return looks_at_few(loop) or _literal_range(loop, _SHORT)


def looks_at_few(loop: LoopNode) -> bool:
    """``for x in ds.take(3)``, ``for img in images[:5]``: the first few samples, looked at."""
    iterated = _iterated(loop)
    if isinstance(iterated, cst.Call):
        name = (dotted_text(iterated.func) or "").rsplit(".", 1)[-1]
        return name == "take" and len(iterated.args) == 1 and _small_int(iterated.args[0].value)
    if isinstance(iterated, cst.Subscript) and len(iterated.slice) == 1:
        index = iterated.slice[0].slice
        if isinstance(index, cst.Slice) and index.lower is None and index.upper is not None:
            return _small_int(index.upper)
    return False


# `xrange` (Python 2, or `from six.moves import xrange` in TF1 code) counts as `range` does.
_RANGES = frozenset({"range", "xrange"})


def _literal_range(loop: LoopNode, limit: int) -> bool:
    iterated = _iterated(loop)
    return (
        isinstance(iterated, cst.Call) and dotted_text(iterated.func) in _RANGES and len(iterated.args) == 1
        and _small_int(iterated.args[0].value, limit)
    )


def _literal_length(literal: cst.BaseExpression) -> Optional[int]:
    """The number of elements of a literal list, tuple, set or dict; None with `*xs` / `**d` inside."""
    elements = literal.elements if isinstance(literal, (cst.List, cst.Tuple, cst.Set, cst.Dict)) else ()
    if any(isinstance(element, (cst.StarredElement, cst.StarredDictElement)) for element in elements):
        return None
    return len(elements)


def _iterated(loop: LoopNode) -> Optional[cst.BaseExpression]:
    if not isinstance(loop, cst.For):
        return None
    iterated = loop.iter
    while isinstance(iterated, cst.Call) and (dotted_text(iterated.func) or "") in ("enumerate", "zip", "tqdm", "list"):
        if not iterated.args:
            return None
        iterated = iterated.args[0].value
    return iterated


class StepLoops:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self._calls_in_loop: Dict[LoopNode, List[CallSite]] = {}
        for site in model.calls:
            for loop in site.loops:
                self._calls_in_loop.setdefault(loop, []).append(site)
        self._inspected: Optional[frozenset] = None
        self._trains: Dict[LoopNode, bool] = {}
        self.cross_validation = CrossValidation(model)

    # -- which loops repeat work ------------------------------------------------------------------
    def repeats_work(self, loop: LoopNode, trains: bool = False) -> bool:
        """``trains``: the caller knows the loop runs a training step, so the pipeline analysis'
        guess that a loop over ``ds.take(n)`` inspects data does not apply (``take(steps + 1)``)."""
        if short_literal_loop(loop) or few_literal_iterations(loop) or self.inspects(loop, trains):
            return False
        if self._over_uploads(loop):
            return False  # one run per file a person uploads by hand
        if waits_for_input(self.model, self._calls_in_loop.get(loop, [])):
            return False  # one run per request a person types
        count = self.count(loop)
        return count is None or count > _SHORT

    def _over_uploads(self, loop: LoopNode) -> bool:
        sites = self._calls_in_loop.get(loop, [])
        return bool(sites) and iterates_uploads(self.model, loop, sites[0].function)

    def nest_repeats_work(self, nest: Tuple[LoopNode, ...]) -> bool:
        """Whether nested loops (outermost first) together repeat work: one of them does, or the
        product of their known counts is more than a few (a grid search over 6 learning rates and
        3 widths runs 18 times, though no loop alone is long). A loop that inspects a few samples
        stops the nest; a loop of unknown count repeats work."""
        for loop in nest:
            if self.inspects(loop) or looks_at_few(loop):
                return False
            if self.repeats_work(loop):
                return True
            if self.iterations(loop) is None:
                return False
        total = self.nest_iterations(nest)
        return total is not None and total > _SHORT

    def nest_iterations(self, nest: Iterable[LoopNode]) -> Optional[int]:
        """How many times the body of nested loops runs in all (``for lr in [...6]: for units in
        (...3):`` 18 times; ``for train, test in KFold(5).split(x)`` 5 times), when the source shows
        every loop's count; None otherwise."""
        return _product(nest, self.iterations)

    def iterations(self, loop: LoopNode) -> Optional[int]:
        """How many times a loop runs when its source shows it: once when its body ends in a ``break``
        (``breaks_after_first``), a literal tuple or list, or a ``range`` of literals or module constants
        (``count``); None otherwise."""
        if breaks_after_first(loop):
            return 1
        if isinstance(loop, cst.For) and isinstance(loop.iter, (cst.Tuple, cst.List)):
            return _literal_length(loop.iter)
        if isinstance(loop, cst.For):
            literal = self._module_collection(loop.iter)
            if literal is not None:
                return _literal_length(literal)
        return self.count(loop)

    def _module_collection(self, iterated: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The literal list, tuple, set or dict a loop iterates through a module name bound once and
        never changed (`for name in optimizers_examples:` / `configurations.items()`, with
        `optimizers_examples = {'sgd': SGD(), ...}`): a notebook's handful of configurations."""
        if (isinstance(iterated, cst.Call) and not iterated.args and isinstance(iterated.func, cst.Attribute)
                and iterated.func.attr.value in ("items", "keys", "values")):
            iterated = iterated.func.value
        if not isinstance(iterated, cst.Name):
            return None
        name = iterated.value
        bindings = [b for scope in self.model.bindings.values() for b in scope.get(name, [])]
        if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].scope is not None:
            return None  # bound again, item-assigned or a local: the count may change
        value = bindings[0].value
        if not isinstance(value, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
            return None
        return None if mutated(self.model, name) else value  # `configs.append(...)`: grown at run time

    def runs_briefly(self, loops: Iterable[LoopNode]) -> bool:
        """The loops around a training step (lexical, and those of its callers) run it at most
        ``FEW_STEPS`` times in all, as every loop's bound shows (``at_most``: ``for i in range(100)``;
        ``for epoch in range(1, 3 + 1): for x, y in dataset`` over ``from_tensor_slices`` of 1,000 rows
        batched by 10 is 300 steps; ``for epoch in range(300): for batch in dataset`` of a dataset read
        from disk does not show it)."""
        total = _product(loops, self.at_most)
        return total is not None and total <= FEW_STEPS

    def at_most(self, loop: LoopNode) -> Optional[int]:
        """At most how many times a loop runs, as its source shows: ``iterations``, else the bound of what
        it iterates (``analysis/lengths.py``: five file names, ``random.sample(tweets, 10)``); None otherwise."""
        known = self.iterations(loop)
        if known == 0:
            return None  # `images = []` looped over: filled where the source does not show (`add = images.append`)
        if known is not None or not isinstance(loop, cst.For):
            return known
        sites = self._calls_in_loop.get(loop, [])
        if not sites:
            return None
        lengths = Lengths(self.model, lambda expr: self._fixed_sum(expr, lambda e: self.fixed_integer_at(e, sites[0])))
        return lengths.at_most(loop.iter, sites[0].function, sites[0].place)

    def runs_in_all(self, site: CallSite) -> Optional[int]:
        """At most how many times ``site`` runs in one run of the program: the product of the bounds of
        the loops around it, times the runs of every call of the function it is in (summed over them, a
        few callers deep). None when a bound is unknown, when a function has no caller in this module (it
        may be called from anywhere), is called from another one or from a lambda, or is named as a value
        (a callback ``LambdaCallback(on_epoch_end=f)`` runs once per epoch), or when a loop on the way trains
        (``fit``, an optimizer step: the call is part of training, however few its runs)."""
        return self._runs(site, 0, frozenset())

    def _runs(self, site: CallSite, depth: int, seen: FrozenSet[FunctionInfo]) -> Optional[int]:
        if site.lambdas:
            return None  # `sorted(xs, key=lambda x: score(x))`: a lambda runs as often as its caller wants
        total = 1
        for loop in site.loops:
            bound = self.at_most(loop)
            if bound is None or self.trains(loop):
                return None
            total *= bound
        function = site.function
        if function is None or total == 0:
            return total
        graph = self.model.call_graph
        callers = graph.callers(function)
        if depth >= _CALLERS_DEPTH or function in seen or not callers or graph.named_as_value(function) \
                or graph.callers_elsewhere(function) or graph.base_callers_elsewhere(function):
            return None  # ... or handed on as a callback (`LambdaCallback(on_epoch_end=f)`): run beyond its calls
        calls = 0
        for caller in callers:
            runs = self._runs(caller, depth + 1, seen | {function})
            if runs is None:
                return None
            calls += runs
        return total * calls

    def runs_few(self, loop: LoopNode) -> bool:
        """A loop of a known count of at most ``FEW_CALLS`` iterations."""
        count = self.count(loop)
        return count is not None and count <= FEW_CALLS

    def count(self, loop: LoopNode) -> Optional[int]:
        """How many times ``for ... in range(n)`` runs, when ``n`` is a literal or a module constant
        (``k = 4``; not a flag or a default, which may differ at run time); how many folds a loop over
        a scikit-learn splitter's ``split`` runs (``for train, test in kf.split(x)``, ``kf = KFold(5)``)."""
        if not isinstance(loop, cst.For):
            return None
        folds = self.cross_validation.split_count(_iterated(loop))
        if folds is not None:
            return folds
        if not isinstance(loop.iter, cst.Call):
            return None
        call = loop.iter
        if dotted_text(call.func) not in _RANGES or not 1 <= len(call.args) <= 2 or any(a.keyword for a in call.args):
            return None
        bounds = []
        for arg in call.args:
            value = self.fixed_integer(arg.value)
            if value is None:
                return None
            bounds.append(value)
        return max(0, bounds[-1] - (bounds[0] if len(bounds) == 2 else 0))

    def driven(self, function: Optional[FunctionInfo]) -> bool:
        """``function`` is handed by name to a call that is also told how many times to repeat: an
        integer the source fixes above ``FEW_CALLS`` passed as a count of repetitions (``iterations``,
        ``frames``, ``steps``, ``number``), by keyword or by position into a parameter of that name of
        a function the analysis resolves: ``datavis.animate(training_step, iterations=2000 + 1)``,
        ``FuncAnimation(fig, step, frames=500)``. A driver told how many times is what repeats it, as a
        loop would. A callable handed over with no count (``tf.app.run(main)``, ``Thread(target=f)``),
        or with some other integer (``threading.Timer(60, f)``, ``root.after(1000, f)``, ``run(f, 128)``,
        ``fmin_l_bfgs_b(f, x0, maxfun=20)``), is not: a delay, a size or an optimiser's limit."""
        if function is None:
            return False
        resolve = self.model.effects.resolve_callable
        for site in self.model.calls:
            values = [arg.value for arg in site.node.args if not arg.star]
            passed = any(isinstance(value, cst.Name) and value.value == function.name
                         and resolve(value, site.function, local_only=True, place=site.place) is function
                         for value in values)
            if passed and any((self._fixed_sum(value) or 0) > FEW_CALLS for value in self._repetition_counts(site)):
                return True
        return False

    def _repetition_counts(self, site: CallSite) -> List[cst.BaseExpression]:
        """The arguments of ``site`` bound to a parameter named as a count of repetitions."""
        callee = self.model.effects.resolve_callable(site.node.func, site.function, place=site.place)
        parameters = callee.positional_parameters if isinstance(callee, FunctionInfo) else []
        positional = [arg for arg in site.node.args if arg.keyword is None and not arg.star]
        named = [(arg.keyword.value, arg.value) for arg in site.node.args if arg.keyword is not None]
        named += [(name, arg.value) for name, arg in zip(parameters, positional)]
        return [value for name, value in named if _REPETITIONS.match(name)]

    def _fixed_sum(self, expr: cst.BaseExpression, leaf=None) -> Optional[int]:
        """``fixed_integer`` (or ``leaf``), through sums and products of such integers (``10000 + 1``,
        ``num_epochs + 1``)."""
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Multiply)):
            left, right = self._fixed_sum(expr.left, leaf), self._fixed_sum(expr.right, leaf)
            if left is None or right is None:
                return None
            return left + right if isinstance(expr.operator, cst.Add) else left * right
        return (leaf or self.fixed_integer)(expr)

    def draws_batch_each_iteration(self, loop: LoopNode) -> bool:
        """The loop's own body (not a loop nested in it) draws one batch per iteration from TensorFlow's
        tutorial datasets (``mnist.train.next_batch(100)``): each iteration is one step, whatever the loop
        is named (``for epoch in range(1000)`` drawing one batch is a loop of 1,000 steps)."""
        return any(site.loops and site.loops[-1] is loop and isinstance(site.node.func, cst.Attribute)
                   and site.node.func.attr.value == "next_batch" for site in self.calls_in(loop))

    def fixed_integer(self, expr: cst.BaseExpression) -> Optional[int]:
        """The integer ``expr`` is whatever the run: a literal or a module constant (not a flag or a
        parameter's default, which may differ at run time)."""
        value = self.model.integer_values.integer(expr, None)
        if value is not None and (not value.origin or value.origin.startswith("constant")):
            return value.value
        return self._module_constant(expr)

    def fixed_integer_at(self, expr: cst.BaseExpression, site: CallSite) -> Optional[int]:
        """``fixed_integer``, or read where ``site`` is: a parameter every caller in the file passes the same
        literal or module constant for (``make_future_forecast(..., into_future=INTO_FUTURE)``)."""
        fixed = self.fixed_integer(expr)
        if fixed is not None:
            return fixed
        value = self.model.integer_values.integer(expr, site)
        origin = value.origin if value is not None else ""
        passed = origin.startswith("passed for parameter") and (origin.endswith(": a literal") or ": constant" in origin)
        return value.value if value is not None and passed else None

    def plots(self, site: CallSite) -> bool:
        """``plt.imshow(...)``, ``ax.set_title(...)``: a call that draws what the code computed."""
        name = self.model.call_name(site.node) or dotted_text(site.node.func) or ""
        return name.startswith(("plt.", "matplotlib.")) or name.rsplit(".", 1)[-1] in _PLOTTING

    def inspects(self, loop: LoopNode, trains: bool = False) -> bool:
        """A loop over ``ds.take(n)`` or made of plotting calls: a look at a few samples. A loop that
        draws and also trains (a gym episode loop calling ``env.render()`` each step and fitting the
        agent's models: Advanced-Deep-Learning-with-Keras' policy-gradient agents) is training shown
        as it runs, not a look."""
        if any(self.plots(site) for site in self._calls_in_loop.get(loop, [])):
            return not self.trains(loop)
        if trains:
            return False
        if self._inspected is None:
            consumptions = self.model.pipelines.consumptions
            self._inspected = frozenset(
                c.node for c in consumptions if c.kind == "for" and c.purpose == Purpose.INSPECTION
            )
        return loop in self._inspected

    def trains(self, loop: LoopNode) -> bool:
        """A call in the loop's body runs a training step (``fit``, ``train_on_batch``,
        ``apply_gradients``, ``minimize``), itself or in a function of the file it calls, a few calls deep
        (``agent.train_by_episode()`` whose method fits the actor and the value models)."""
        if loop not in self._trains:
            self._trains[loop] = any(self._runs_training(site, 0, set()) for site in self._calls_in_loop.get(loop, []))
        return self._trains[loop]

    def _runs_training(self, site: CallSite, depth: int, seen: Set[FunctionInfo]) -> bool:
        if is_training_call(self.model, site.node):
            return True
        if depth >= _TRAINING_DEPTH:
            return False
        target = self.model.call_graph.callee(site.node)
        # `agent.train(item)` on whichever agent class a setup function made: every method of that
        # name in the file's classes trains (and there is one).
        func = site.node.func
        targets = [target] if target is not None else [
            cls.methods[func.attr.value] for cls in self.model.classes.values() if func.attr.value in cls.methods
        ] if isinstance(func, cst.Attribute) else []
        fresh = [found for found in targets if found not in seen]
        seen.update(fresh)
        return bool(targets) and len(fresh) == len(targets) and all(
            any(self._runs_training(inner, depth + 1, seen) for inner in self.model.calls_in(found)) for found in fresh)

    def inspects_in(self, function: FunctionInfo) -> List[CallSite]:
        """The plotting calls of a function (a helper that shows what it computes)."""
        return [site for site in self.model.calls_in(function) if self.plots(site)]

    def lexical(self, site: CallSite) -> Tuple[LoopNode, ...]:
        """The loops around a call, in its own function, that repeat work (outermost first)."""
        return tuple(loop for loop in site.loops if self.repeats_work(loop))

    def reaching(self, function: Optional[FunctionInfo], trains: bool = False) -> Tuple[LoopNode, ...]:
        """The loops, a few callers away, that call ``function`` and repeat work."""
        loops = self.model.call_graph.loops_reaching(function)
        return tuple(loop for loop in loops if self.repeats_work(loop, trains))

    def calls_in(self, loop: LoopNode) -> List[CallSite]:
        """Every call lexically in a loop's body (nested loops included, nested defs not)."""
        return self._calls_in_loop.get(loop, [])

    def around_def(self, function: FunctionInfo) -> Tuple[LoopNode, ...]:
        """The loops, in the enclosing function (or module), lexically around a ``def``."""
        container = function.parent.node.body if function.parent is not None else self.model.module
        if function.class_info is not None:
            return ()
        path = _loops_to(container, function.node, ())
        return path or ()

    def _module_constant(self, expr: cst.BaseExpression) -> Optional[int]:
        """A module-level name every assignment of which is the same integer (``k = 4`` in two
        notebook cells)."""
        if not isinstance(expr, cst.Name):
            return None
        bindings = self.model.bindings.get(None, {}).get(expr.value, [])
        values = {int_literal(b.value) if b.kind == "assign" and b.value is not None else None for b in bindings}
        if len(values) != 1:
            return None
        return next(iter(values))

    # -- what changes per iteration ---------------------------------------------------------------
    def bound_in(self, name: str, site: CallSite, loop: LoopNode) -> bool:
        """``name`` is bound by ``loop`` (its target) or in its body, before or after ``site``: an
        assignment later in the body reaches the next iteration."""
        for lam in site.lambdas:
            if name in names_read(lam.params):
                return False
        return self.bound_in_scope(name, site.function, loop)

    def bound_in_scope(self, name: str, function: Optional[FunctionInfo], loop: LoopNode) -> bool:
        """``name``, a local of ``function`` (None: the module), is bound by ``loop`` or in its body."""
        scope, bindings = self.model.scope_bindings(name, function)
        if scope is not function:
            return False
        for binding in bindings:
            if binding.kind == "for" and isinstance(loop, cst.For) and binding.value is loop.iter:
                return True
            if loop.body in binding.place.blocks:
                return True
        return False

    def varies(self, expr: cst.BaseExpression, site: CallSite, loop: LoopNode) -> bool:
        """``expr`` reads a name bound anew in each iteration of ``loop``, or draws at random where it is
        (``generator.predict(np.random.uniform(-1, 1, size=[batch, z_dim]))``: fresh noise every step)."""
        return any(self.bound_in(name, site, loop) for name in names_read(expr)) or self._draws_random(expr)

    def _draws_random(self, expr: cst.BaseExpression) -> bool:
        for call in calls_under(expr):
            name = self.model.call_name(call) or dotted_text(call.func) or ""
            if name.startswith(_RANDOM_MODULES) and "stateless" not in name:
                return True
        return False

    # -- what runs only every Nth iteration -------------------------------------------------------
    def every_nth(self, loop: LoopNode, node: cst.CSTNode, function: Optional[FunctionInfo]) -> Optional[int]:
        """N when ``node`` (a statement or call in ``loop``'s body, in ``function``) runs only every Nth
        iteration of ``loop``, N at least ``PERIODIC_AT_LEAST``: an ``if`` around it whose test holds every
        Nth value of the loop's counter (``if epoch % 5 == 0:``, ``if (epoch + 1) % print_freq == 0 or
        epoch == 0:``, ``if step % 500 == 0 and step > 0:``). The counter is the loop's target or a name
        the body advances (``step += 1``). None otherwise (the ``else`` branch of such an ``if`` runs on
        the other iterations; ``% 1`` and unknown counts run every iteration as far as the source says)."""
        counters = self._counters(loop, function)
        if not counters:
            return None
        periods = [self._period(test, counters) for test in _guards_to(loop.body, node) or []]
        known = [period for period in periods if period is not None]
        return max(known) if known else None

    def _counters(self, loop: LoopNode, function: Optional[FunctionInfo]) -> List[str]:
        """The names that count a loop's iterations: its ``for`` target's names, and names the body
        advances by a literal (``step += 1`` in a ``while`` loop)."""
        names = names_read(loop.target) if isinstance(loop, cst.For) else []
        for name, bindings in self.model.bindings.get(function, {}).items():
            if any(b.kind == "augassign" and loop.body in b.place.blocks and b.value is not None
                   and int_literal(b.value) is not None for b in bindings):
                names.append(name)
        return names

    def _period(self, test: cst.BaseExpression, counters: List[str]) -> Optional[int]:
        """Every how many iterations ``test`` holds, as far as the source shows: N for ``counter % N ==
        k`` or ``not counter % N``; the larger period of an ``and``; the smaller of an ``or``, where
        ``counter == k`` holds once (no period); None when some part may hold on any iteration."""
        if isinstance(test, cst.BooleanOperation):
            left, right = self._period(test.left, counters), self._period(test.right, counters)
            if isinstance(test.operator, cst.And):
                known = [p for p in (left, right) if p is not None]
                return max(known) if known else None
            if left is None or right is None:
                return None
            return min(left, right)
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self._modulo_period(test.expression, counters)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            if isinstance(target.operator, cst.Equal):
                if _is_modulo(test.left):
                    return self._modulo_period(test.left, counters)
                if _reads_any(test.left, counters) and self.fixed_integer(target.comparator) is not None:
                    return _ONCE  # `epoch + 1 == 1`: the first iteration only
        return None

    def _modulo_period(self, expr: cst.BaseExpression, counters: List[str]) -> Optional[int]:
        """N for ``counter % N`` (``(epoch + 1) % print_freq``) with N known and at least ``PERIODIC_AT_LEAST``."""
        if not _is_modulo(expr) or not _reads_any(expr.left, counters):  # type: ignore[attr-defined]
            return None
        every = self.fixed_integer(expr.right)
        return every if every is not None and every >= PERIODIC_AT_LEAST else None

    def varies_per_call(self, expr: cst.BaseExpression, site: CallSite) -> bool:
        """``expr`` reads a parameter of the function ``site`` is in, directly or through the local
        assignments that reach it (``logits, value = self.predict(obs)`` then ``dist.predict(logits)``):
        it changes with each call of the function."""
        function = site.function
        if function is None:
            return False
        todo = [(name, site.place) for name in names_read(expr)]
        seen: set = set()
        while todo and len(seen) < 32:
            name, place = todo.pop()
            if (name, place) in seen:
                continue
            seen.add((name, place))
            for binding in self.model.reaching(name, function, place) or []:
                if binding.scope is not function:
                    continue
                if binding.kind == "param":
                    return True
                if binding.value is not None and binding.kind in ("assign", "unpack", "augassign"):
                    todo += [(read, binding.place) for read in names_read(binding.value)]
        return False


def names_read(expr: cst.CSTNode) -> List[str]:
    """The bare names an expression reads (not attribute names, not names a lambda binds)."""
    found: List[str] = []
    stack: List[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            found.append(node.value)
            continue
        if isinstance(node, cst.Attribute):
            stack.append(node.value)
            continue
        if isinstance(node, (cst.Lambda, cst.FunctionDef)):
            continue
        stack.extend(node.children)
    return found


# The period of a test that holds on one iteration only (`epoch == 0`): rarer than any other.
_ONCE = 1 << 30


def _is_modulo(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo)


def _reads_any(expr: cst.BaseExpression, names: List[str]) -> bool:
    return any(name in names for name in names_read(expr))


def _guards_to(block: cst.BaseSuite, target: cst.CSTNode) -> Optional[List[cst.BaseExpression]]:
    """The tests of the ``if`` (and ``elif``) statements on the way from ``block`` down to the statement
    ``target`` whose body holds it (not an ``else``); None when ``target`` is not a statement below
    ``block`` (a nested def's statements are not). Walks statements only, not expressions."""
    if not isinstance(block, cst.IndentedBlock):
        return None
    for statement in block.body:
        if statement is target:
            return []
        for inner, test in _blocks_of(statement):
            found = _guards_to(inner, target)
            if found is not None:
                return ([test] if test is not None else []) + found
    return None


def _blocks_of(statement: cst.BaseStatement) -> List[Tuple[cst.BaseSuite, Optional[cst.BaseExpression]]]:
    """The blocks a compound statement holds, each with the test that guards it (an ``if``'s body)."""
    if isinstance(statement, cst.If):
        blocks: List[Tuple[cst.BaseSuite, Optional[cst.BaseExpression]]] = [(statement.body, statement.test)]
        orelse = statement.orelse
        if isinstance(orelse, cst.If):
            blocks.extend(_blocks_of(orelse))  # `elif b:` guards its body with `b`
        elif isinstance(orelse, cst.Else):
            blocks.append((orelse.body, None))
        return blocks
    if isinstance(statement, (cst.For, cst.While)):
        return [(statement.body, None)] + ([(statement.orelse.body, None)] if statement.orelse else [])
    if isinstance(statement, cst.With):
        return [(statement.body, None)]
    if isinstance(statement, cst.Try):
        return ([(statement.body, None)] + [(h.body, None) for h in statement.handlers]
                + ([(statement.orelse.body, None)] if statement.orelse else [])
                + ([(statement.finalbody.body, None)] if statement.finalbody else []))
    return []


def _loops_to(container: cst.CSTNode, target: cst.CSTNode, loops: Tuple[LoopNode, ...]) -> Optional[Tuple[LoopNode, ...]]:
    """The loops on the way from ``container`` to ``target`` (None when not found below it)."""
    for child in container.children:
        if child is target:
            return loops
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(child, (cst.BaseExpression, cst.Decorator)):
            continue
        inner = loops + (child,) if isinstance(child, (cst.For, cst.While)) else loops
        found = _loops_to(child, target, inner)
        if found is not None:
            return found
    return None


def _small_int(node: cst.BaseExpression, limit: int = _FEW) -> bool:
    return isinstance(node, cst.Integer) and int(node.value.replace("_", ""), 0) <= limit


def _mentions(node: cst.CSTNode, pattern: "re.Pattern[str]") -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and pattern.search(current.value):
            return True
        stack.extend(current.children)
    return False


def _product(loops: Iterable[LoopNode], count: Callable[[LoopNode], Optional[int]]) -> Optional[int]:
    """How many times the body of nested loops runs in all, by ``count`` of each; None when one is unknown."""
    total = 1
    for loop in loops:
        each = count(loop)
        if each is None:
            return None
        total *= each
    return total
