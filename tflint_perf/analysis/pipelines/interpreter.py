"""The abstract interpreter: Dataset values through one function body (or the module body).

A Dataset value is a set of possible *states* (``values.py``; may-analysis: an op added on one branch
gives two states); a state is a source plus the ops applied to it, in order. ``BodyInterpreter`` runs
the statements in order, keeps an environment of names to values, joins the environments of branches,
interprets a loop body until its environment settles, and evaluates expressions: a pipeline starts at
a tf.data / Keras / tfds source, grows by a Dataset method, and passes through tuples, subscripts,
``self`` attributes (per class) and calls of helpers (``summaries.py``). Consumers are recorded as it
meets them (``consumption.py``). Anything it cannot see (imported helpers, unknown receivers) is
*unknown*, and unknown is never a Dataset: a pandas ``.map``, a Spark RDD or the builtin ``map`` never
start a pipeline. Which bodies run, how often, and with which summaries is ``fixpoint.py``'s business.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst

from tflint_perf.analysis.arguments import int_literal
from tflint_perf.analysis.model import ClassInfo, FunctionInfo, lambda_parameter_names
from tflint_perf.analysis.pipelines.consumption import ConsumerRecognition
from tflint_perf.analysis.pipelines.sources import DATASET_METHODS, SourceRecognition, is_tfds_as_dataset, split_value
from tflint_perf.analysis.pipelines.summaries import SummaryApplication
from tflint_perf.analysis.pipelines.syntax import (
    FirstInstanceOf,
    block_statements,
    is_self,
    is_static,
    parameters,
)
from tflint_perf.analysis.pipelines.values import (
    ClassRef,
    Collection,
    Consumption,
    Env,
    FunctionRef,
    Op,
    Pipeline,
    Source,
    State,
    Summary,
    TfdsBuilder,
    TupleValue,
    Value,
    join,
    join_envs,
    same_env,
    unpacked_splits,
)

# Loops nested deeper than this are interpreted once, not twice (see BodyInterpreter._loop_passes).
_MAX_REPEATED_LOOPS = 4


class BodyInterpreter(SourceRecognition, ConsumerRecognition, SummaryApplication):
    """Interprets one function body (or the module body) from ``env``: what it returns (a function's
    summary) or leaves bound (the module's environment), and what it consumes and reads on the way."""

    def __init__(self, analysis: Any, function: Optional[FunctionInfo], env: Env) -> None:
        # `analysis` is the PipelineAnalysis (not imported: it imports this module). The interpreter
        # reads its summaries and shares its class attributes and closures with the other bodies.
        self.analysis = analysis
        self.model = analysis.model
        self.function = function
        self.env = env
        self.returns: Value = None
        self.param_consumptions: List[Consumption] = []
        self.combined_inputs: Dict[State, None] = {}  # see Summary.combined
        self._loop_depth = 0
        # What this interpretation reads and produces: see fixpoint.Interpretation.
        self.summaries_read: Dict[FunctionInfo, Optional[Summary]] = {}
        self.class_attrs_read: Dict[Tuple[ClassInfo, str], Value] = {}
        self.class_attrs_written: Dict[Tuple[ClassInfo, str], None] = {}
        self.closures_written: Dict[FunctionInfo, Env] = {}
        self.consumptions: List[Consumption] = []
        self.real_states: Dict[State, None] = {}

    # -- entry points ---------------------------------------------------------------------------
    def run_module(self) -> Env:
        for name, function in self.model.module_functions.items():
            self.env[name] = FunctionRef(function)
        for name, cls in self.model.classes.items():
            self.env[name] = ClassRef(cls)
        self.run_block(self.model.module.body)
        return self.env

    def run_function(self) -> Summary:
        assert self.function is not None
        for index, param in enumerate(parameters(self.function)):
            if index == 0 and self.function.is_method and not is_static(self.function):
                self.env[param.name.value] = None  # self / cls
                continue
            self.env[param.name.value] = Pipeline(
                frozenset({State(Source(param, "param", index, self.function))})
            )
        body = self.function.node.body
        statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
        self.run_block(statements)  # type: ignore[arg-type]
        return Summary(self.returns, tuple(self.param_consumptions), tuple(self.combined_inputs))

    def _loop_passes(self) -> int:
        """How often to interpret the loop being entered: twice (a second iteration sees what the
        first assigned), once when nested deeper than _MAX_REPEATED_LOOPS (each level doubling the
        work of those inside it would be exponential)."""
        self._loop_depth += 1
        return 2 if self._loop_depth <= _MAX_REPEATED_LOOPS else 1

    # -- statements -----------------------------------------------------------------------------
    def run_block(self, statements: Sequence[cst.CSTNode]) -> None:
        for statement in statements:
            self.run_statement(statement)

    def _branch(self, statements: Sequence[cst.CSTNode], env: Env) -> Env:
        saved = self.env
        self.env = dict(env)
        self.run_block(statements)
        result = self.env
        self.env = saved
        return result

    def run_statement(self, node: cst.CSTNode) -> None:
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                self.run_small(small)
        elif isinstance(node, cst.If):
            self.eval(node.test)
            # `if DEBUG:` with `DEBUG = False`, `if False:`: the branch the constant rules out never runs
            known = self.model.integer_values.truth(node.test, self.function)
            if known is not None:
                if known:
                    self.run_block(block_statements(node.body))
                elif node.orelse:
                    self.run_block(block_statements(node.orelse))
                return
            then_env = self._branch(block_statements(node.body), self.env)
            else_env = self._branch(block_statements(node.orelse), self.env) if node.orelse else self.env
            self.env = join_envs(then_env, else_env)
        elif isinstance(node, cst.Else):
            self.run_block(block_statements(node.body))
        elif isinstance(node, cst.For):
            iterated = self.eval_loop_iterable(node)
            self._consume_by_loop(node, iterated)
            element = _element_of(iterated)
            self._run_loop(node, lambda env: self._bind_target_env(node.target, element, env))
        elif isinstance(node, cst.While):
            self.eval(node.test)
            self._run_loop(node, lambda env: env)
        elif isinstance(node, (cst.Try, cst.TryStar)):
            before = self.env
            after_body = self._branch(block_statements(node.body), before)
            merged = join_envs(before, after_body)
            outcomes = [after_body]
            for handler in node.handlers:
                outcomes.append(self._branch(block_statements(handler.body), merged))
            if node.orelse:
                outcomes[0] = self._branch(block_statements(node.orelse.body), after_body)
            env = outcomes[0]
            for outcome in outcomes[1:]:
                env = join_envs(env, outcome)
            self.env = env
            if node.finalbody:
                self.run_block(block_statements(node.finalbody.body))
        elif isinstance(node, cst.With):
            for item in node.items:
                self.eval(item.item)
                if item.asname is not None:
                    self.assign(item.asname.name, None)
            self.run_block(block_statements(node.body))
        elif isinstance(node, cst.FunctionDef):
            info = self.model.function_info(node)
            if info is not None:
                self.env[node.name.value] = FunctionRef(info)
                if self.function is not None:
                    closure = dict(self.env)
                    self.analysis._closures[info] = closure
                    self.closures_written[info] = closure
        elif isinstance(node, cst.ClassDef):
            cls = self.model.classes.get(node.name.value)
            self.env[node.name.value] = ClassRef(cls) if cls is not None and cls.node is node else None
        elif isinstance(node, cst.Match):
            self.eval(node.subject)
            before = self.env
            env = before
            for case in node.cases:
                env = join_envs(env, self._branch(block_statements(case.body), before))
            self.env = env

    def run_small(self, node: cst.BaseSmallStatement) -> None:
        if isinstance(node, cst.Expr):
            self.eval(node.value)
        elif isinstance(node, cst.Assign):
            value = self.eval(node.value)
            for target in node.targets:
                self.assign(target.target, value)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.eval(node.value))
        elif isinstance(node, cst.AugAssign):
            self.eval(node.value)
            self.assign(node.target, None)
        elif isinstance(node, cst.Return):
            value = self.eval(node.value) if node.value is not None else None
            self.returns = join(self.returns, value)

    def assign(self, target: cst.BaseExpression, value: Value) -> None:
        if isinstance(target, cst.Name):
            self.env[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = target.elements
            items = value.items if isinstance(value, TupleValue) and len(value.items) == len(elements) \
                else unpacked_splits(value, len(elements))
            for index, element in enumerate(elements):
                inner = element.value
                if isinstance(element, cst.StarredElement):
                    self.assign(inner, None)
                else:
                    self.assign(inner, items[index] if items is not None else None)
        elif isinstance(target, cst.Attribute) and is_self(target.value):
            cls = self._class()
            if cls is not None:
                key = (cls, target.attr.value)
                # Recorded as an input too: the joined value depends on what was there.
                self.analysis._class_attrs[key] = join(self._class_attr(key), value)
                self.class_attrs_written[key] = None
                self._note_states(value)

    def _run_loop(self, node: Union[cst.For, cst.While], entry_of: Callable[[Env], Env]) -> None:
        """The loop body from ``entry_of(env)`` (the target bound, for a ``for``), iterated until the
        environment settles or the passes run out; then the ``else`` block."""
        before = self.env
        env = dict(before)
        for _ in range(self._loop_passes()):
            after = join_envs(before, self._branch(block_statements(node.body), entry_of(env)))
            env, settled = after, same_env(env, after)
            if settled:
                break
        self._loop_depth -= 1
        self.env = env
        if node.orelse:
            self.run_statement(node.orelse)

    def _bind_target_env(self, target: cst.BaseExpression, value: Value, env: Env) -> Env:
        saved = self.env
        self.env = dict(env)
        self.assign(target, value)
        result = self.env
        self.env = saved
        return result

    # -- expressions ----------------------------------------------------------------------------
    def eval(self, node: cst.BaseExpression) -> Value:
        value = self._eval(node)
        self._note_states(value)
        return value

    def _note_states(self, value: Value) -> None:
        if isinstance(value, Pipeline):
            for state in value.states:
                if state.is_real:
                    self.real_states[state] = None

    def note_combined(self, value: Value) -> None:
        """Pipelines a combinator reads (``choose_from_datasets``' list, ``zip``'s tuple): noted where
        real; built from this function's parameters, kept for its summary (``Summary.combined``)."""
        if isinstance(value, TupleValue):
            for item in value.items:
                self.note_combined(item)
        elif isinstance(value, Pipeline):
            for state in value.states:
                if not state.is_real and self.function is not None:
                    self.combined_inputs[state] = None
            self._note_states(value)

    def _class_attr(self, key: Tuple[ClassInfo, str]) -> Value:
        value = self.analysis._class_attrs.get(key)
        self.class_attrs_read.setdefault(key, value)  # the first access sees the value from before the run
        return value

    def _eval(self, node: cst.BaseExpression) -> Value:
        return _EXPRESSION_EVALUATORS.find(node)(self, node)

    def _eval_name(self, node: cst.Name) -> Value:
        return self.env.get(node.value)

    def _eval_attribute(self, node: cst.Attribute) -> Value:
        if is_self(node.value):
            cls = self._class()
            if cls is not None:
                return self._class_attr((cls, node.attr.value))
            return None
        self._consume_inspected_attribute(node, self.eval(node.value))
        return None

    def _eval_sequence(self, node: Union[cst.Tuple, cst.List]) -> Value:
        items = []
        for element in node.elements:
            items.append(self.eval(element.value) if not isinstance(element, cst.StarredElement) else None)
        return TupleValue(tuple(items))

    def _eval_subscript(self, node: cst.Subscript) -> Value:
        container = self.eval(node.value)
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                self.eval(element.slice.value)
        if isinstance(container, Collection):
            return Pipeline(container.states)
        if isinstance(container, TupleValue) and len(node.slice) == 1:
            index_node = node.slice[0].slice
            if isinstance(index_node, cst.Index):
                index = int_literal(index_node.value)
                if index is not None and -len(container.items) <= index < len(container.items):
                    return container.items[index]
        return None

    def _eval_if_exp(self, node: cst.IfExp) -> Value:
        self.eval(node.test)
        return join(self.eval(node.body), self.eval(node.orelse))

    def _eval_lambda(self, node: cst.Lambda) -> Value:
        # Pipelines built inside a lambda (an interleave's per-file dataset) are still pipelines.
        saved = self.env
        self.env = dict(saved)
        for param in lambda_parameter_names(node):
            self.env[param] = None
        self.eval(node.body)
        self.env = saved
        return None

    def _eval_parts(self, node: cst.BaseExpression) -> Value:
        """Operators, comprehensions, displays...: evaluate the expressions inside, for what they
        consume and build; the whole is unknown, except an assignment expression's value."""
        for child in node.children:
            kind = _CHILD_KINDS.find(child)
            if kind is _EXPRESSION:
                self.eval(child)  # type: ignore[arg-type]
            elif kind is _HOLDS_EXPRESSIONS:
                for grandchild in child.children:
                    if _CHILD_KINDS.find(grandchild) is _EXPRESSION:
                        self.eval(grandchild)  # type: ignore[arg-type]
        if isinstance(node, cst.NamedExpr):
            value = self.eval(node.value)
            self.assign(node.target, value)
            return value
        return None

    def _eval_other(self, node: cst.BaseExpression) -> Value:
        return None  # constants, f-string parts, `yield`...: nothing to evaluate

    def eval_call(self, call: cst.Call) -> Value:
        func = call.func
        api = self.model.call_name(call)
        if api is not None:
            return self._eval_api_call(api, call)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = self.eval(func.value)
            args = [self.eval(arg.value) for arg in call.args]
            if isinstance(receiver, Pipeline) and method in DATASET_METHODS:
                return Pipeline(frozenset(state.extended(Op(method, call)) for state in receiver.states))
            if method == "append" and len(args) == 1 and isinstance(func.value, cst.Name) \
                    and isinstance(receiver, (TupleValue, Collection)) and isinstance(args[0], Pipeline):
                # `datasets = []; datasets.append(sup_ds)`: a list of pipelines, any element one of them
                self.env[func.value.value] = _appended(receiver, args[0])
                return None
            if self._consumed_by_method_call(call, method, receiver, args):
                return None
            if method == "as_dataset" and (isinstance(receiver, TfdsBuilder) or (
                    not _holds_real_pipeline(receiver) and is_tfds_as_dataset(call))):
                return split_value(call, self.model)
            if isinstance(receiver, Collection) and method == "get":
                return Pipeline(receiver.states)
            if isinstance(receiver, ClassRef) and receiver.cls is not None and method in receiver.cls.methods:
                # `TrainingDataset.load_tfrecord(...)`: a static or class method called on its same-file class
                return self.apply(receiver.cls.methods[method], call, skip_first=True)
            if is_self(func.value):
                cls = self._class()
                if cls is not None and method in cls.methods:
                    return self.apply(cls.methods[method], call, skip_first=True)
                return None
            return self._apply_elsewhere(call) if self.model.session is not None else None
        callee = self.eval(func) if not isinstance(func, cst.Name) else self.env.get(func.value)
        if isinstance(func, cst.Name) and func.value in ("list", "tuple") and len(call.args) == 1 \
                and func.value not in self.env:
            container = self.eval(call.args[0].value)
            if isinstance(container, Collection) or (
                    isinstance(container, TupleValue) and any(isinstance(item, Pipeline) for item in container.items)):
                return container  # `tuple(datasets)`: the same pipelines in another container, none read
        if isinstance(func, cst.Name) and self._consumed_by_builtin_call(call, func.value):
            return None
        if isinstance(callee, FunctionRef):
            return self.apply(callee.function, call)
        if callee is None and isinstance(func, cst.Name) and func.value in self.model.raw_imports:
            return self._apply_elsewhere(call)
        if isinstance(callee, ClassRef) and callee.cls in self.analysis._dataset_classes:
            for arg in call.args:
                self.eval(arg.value)
            return Pipeline(frozenset({State(Source(call))}))
        if isinstance(callee, ClassRef) and callee.cls is not None:
            return self.construct(callee.cls, call)
        for arg in call.args:
            self.eval(arg.value)
        return None

    def _class(self) -> Optional[ClassInfo]:
        """The class whose ``self`` this body sees (None at module level and in plain functions)."""
        return self.function.owner if self.function is not None else None


# What `BodyInterpreter._eval` does with each kind of expression: the first entry the node is an instance of.
_EXPRESSION_EVALUATORS: "FirstInstanceOf[Callable[[BodyInterpreter, Any], Value]]" = FirstInstanceOf(
    [
        ((cst.Name,), BodyInterpreter._eval_name),
        ((cst.Call,), BodyInterpreter.eval_call),
        ((cst.Attribute,), BodyInterpreter._eval_attribute),
        ((cst.Tuple, cst.List), BodyInterpreter._eval_sequence),
        ((cst.Subscript,), BodyInterpreter._eval_subscript),
        ((cst.IfExp,), BodyInterpreter._eval_if_exp),
        ((cst.Lambda,), BodyInterpreter._eval_lambda),
        (
            (cst.BaseComp, cst.BooleanOperation, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.Dict,
             cst.Set, cst.Await, cst.FormattedString, cst.StarredElement, cst.NamedExpr),
            BodyInterpreter._eval_parts,
        ),
    ],
    BodyInterpreter._eval_other,
)
# The children `BodyInterpreter._eval_parts` looks at: expressions, and the parts that hold expressions.
_EXPRESSION = "expression"
_HOLDS_EXPRESSIONS = "holds expressions"
_CHILD_KINDS: "FirstInstanceOf[Optional[str]]" = FirstInstanceOf(
    [
        ((cst.BaseExpression,), _EXPRESSION),
        ((cst.DictElement, cst.Element, cst.CompFor, cst.ComparisonTarget, cst.FormattedStringExpression),
         _HOLDS_EXPRESSIONS),
    ],
    None,
)



def _holds_real_pipeline(value: Value) -> bool:
    return isinstance(value, Pipeline) and any(state.is_real for state in value.states)


def _element_of(value: Value) -> Value:
    """The loop variable's value when iterating ``value`` (``for ds in (train_ds, val_ds)``)."""
    if isinstance(value, TupleValue):
        element: Value = None
        for item in value.items:
            element = join(element, item)
        return element
    return None


def _appended(container: Union[TupleValue, Collection], pipeline: Pipeline) -> Collection:
    """A list of pipelines after ``append``: a ``Collection`` of every state it may hold (branches that
    append or not then join as collections, whatever the list's length)."""
    states = set(pipeline.states)
    if isinstance(container, Collection):
        states |= container.states
    else:
        for item in container.items:
            if isinstance(item, Pipeline):
                states |= item.states
    return Collection(frozenset(states))
