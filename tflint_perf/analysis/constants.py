"""Integer values followed to where they are set: a literal, a module constant (`BATCH_SIZE = 100`),
a parameter default (`def make(batch_size=100)`), an argparse default
(`add_argument("--batch_size", default=100)`) or an absl / `tf.compat.v1.flags` definition
(`flags.DEFINE_integer("batch_size", 100, ...)`, read as `FLAGS.batch_size`).

A value that may differ at run time (a default, a flag) says so in `origin`, so a message can name it
("flag --batch_size, default 100"); only a literal written at the use site can be fixed in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Dict, Optional

import libcst as cst

from tflint_perf.analysis.arguments import argument, bool_literal, int_literal, keyword_value, signed_int_literal
from tflint_perf.analysis.model import CallSite, FunctionInfo, ModuleModel, lambda_parameter_names
from tflint_perf.analysis.names import dotted_text

_FLAG_DEFINERS = ("DEFINE_integer", "DEFINE_int")
_MAX_DEPTH = 3  # callers followed back for a parameter's value


@dataclass(frozen=True)
class IntegerValue:
    value: int
    literal: Optional[cst.Integer]  # the literal at the use site, the only thing a fix may edit
    origin: str  # "" for a literal at the use site, else where the value comes from


class ValueSources:
    def __init__(self, model: ModuleModel, literal: Callable[[cst.BaseExpression], Optional[int]] = int_literal) -> None:
        self.model = model
        self._literal = literal  # what counts as an integer written out: sizes are never negative
        self._signed: Optional[ValueSources] = None
        self._booleans: Optional[ValueSources] = None

    def integer(self, expr: cst.BaseExpression, site: Optional[CallSite]) -> Optional[IntegerValue]:
        """The integer ``expr`` evaluates to at ``site``, when the code says."""
        return self._value(expr, site.function if site is not None else None, 0)

    def signed(self, expr: cst.BaseExpression, site: Optional[CallSite]) -> Optional[IntegerValue]:
        """``integer``, reading ``-1`` too, written there or in a constant (``ALL = -1``): a value an API
        gives a meaning to (``tfds.load(..., batch_size=ALL)``: whole tensors, no Dataset)."""
        if self._signed is None:
            self._signed = ValueSources(self.model, signed_int_literal)
        return self._signed.integer(expr, site)

    def truth(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo]) -> Optional[bool]:
        """Whether a condition is always true or always false, whatever the run: ``False``, a module
        constant (``DEBUG = False``, bound once and not rebound in the function reading it), ``not``
        of one, or a parameter no call in the project passes a true value (``_never_passed_true``);
        None for anything a run may change (a flag, a parameter, a computed value)."""
        return self._truth(expr, scope, 0)

    def _truth(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], depth: int) -> Optional[bool]:
        """``truth``, ``depth`` callers back: a helper that passes its own flag on to itself
        (``return make(files, n - 1, cache=cache)``) or to a helper that passes it back is followed
        ``_MAX_DEPTH`` calls deep, not for ever."""
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            inner = self._truth(expr.expression, scope, depth)
            return None if inner is None else not inner
        if self._booleans is None:
            self._booleans = ValueSources(self.model, _bool_literal)
        value = self._booleans._value(expr, scope, _MAX_DEPTH)  # no callers followed: a parameter is unknown
        if value is None or (value.origin and not value.origin.startswith("constant")):
            if isinstance(expr, cst.Name) and self._never_passed_true(expr.value, scope, depth):
                return False  # `if cache:`, and every call in the project leaves `cache` False
            return None  # a parameter's default or a flag's: it may differ at run time
        return bool(value.value)

    def _never_passed_true(self, name: str, scope: Optional[FunctionInfo], depth: int) -> bool:
        """``name`` is a parameter of a function (not a method: an override may be called instead) that
        every call in the project binds to a false value: ``False``, ``None`` or ``0`` written or left to
        its default, a constant that is, or a parameter of the caller that is so in turn (WZMIAOMIAO's
        ``configure_for_performance(ds, n, cache=cache_data)`` inside ``generate_ds(..., cache_data=False)``,
        whose one caller, ``train.py``, never passes it). A guard on it never runs in this project. A
        function with no call in sight (an entry point, a library's API, checked alone), or named as a
        value (a callback, stored, returned), may be called with anything: unknown."""
        function = scope
        while function is not None and name not in self.model.bindings.get(function, {}):
            function = function.parent
        if function is None or depth > _MAX_DEPTH or function.owner is not None:
            return False
        if any(binding.kind != "param" for binding in self.model.bindings[function][name]):
            return False  # rebound in the body
        graph = self.model.call_graph
        if graph.named_as_value(function):
            return False
        if function.parent is None and not self._importers_all_seen(function.name):
            return False  # an importer the session did not model (no TensorFlow in it) may pass anything
        callers = [(self.model, site) for site in graph.callers(function)] + graph.callers_elsewhere(function)
        if not callers:
            return False
        positional = function.positional_parameters
        index = positional.index(name) if name in positional else None
        default = _parameter_default(function, name)
        for model, site in callers:
            if any(arg.star for arg in site.node.args):
                return False
            arg = argument(site.node, name, index)
            values = self if model is self.model else model.integer_values  # type: ignore[attr-defined]
            if arg is None and (default is None or not self._false(default, function.parent, depth)):
                return False
            if arg is not None and not values._false(arg.value, site.function, depth):
                return False
        return True

    def _importers_all_seen(self, name: str) -> bool:
        """Every module of the project importing ``name`` from this one is modelled (``callers_elsewhere``
        reads the calls of those alone); checked alone, the module has none in sight."""
        session, path = self.model.session, self.model.path
        if session is None or path is None:
            return True
        taking = session.project.importers_using(path, frozenset({name}))
        return len(session.importers(self.model, [name])) == len(taking)

    def _false(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], depth: int) -> bool:
        """``expr`` is false wherever it is evaluated: ``False``, ``None``, ``0``, a constant bound to one,
        or a parameter never passed a true value (``_never_passed_true``)."""
        if isinstance(expr, cst.Name) and expr.value == "None":
            return True
        return self._truth(expr, scope, depth + 1) is False

    def _value(self, expr: cst.BaseExpression, scope: Optional[FunctionInfo], depth: int) -> Optional[IntegerValue]:
        value = self._literal(expr)
        if value is not None:
            return IntegerValue(value, expr, "")  # type: ignore[arg-type]
        if isinstance(expr, cst.Name):
            return self._name(expr.value, scope, depth)
        if isinstance(expr, cst.Attribute):
            flag = self._flags.get(expr.attr.value)
            receiver = dotted_text(expr.value) or ""
            if flag is not None and receiver.rsplit(".", 1)[-1] in ("FLAGS", "flags", "args", "opts", "config", "hparams", "params"):
                return flag
        return None

    def _name(self, name: str, scope: Optional[FunctionInfo], depth: int) -> Optional[IntegerValue]:
        function = scope
        while function is not None:
            bindings = self.model.bindings.get(function, {}).get(name, [])
            if any(binding.kind != "param" for binding in bindings):
                return None  # rebound inside the function: unknown
            if bindings:
                return self._parameter(function, name, depth)
            function = function.parent
        return self._constant(name)

    def _constant(self, name: str) -> Optional[IntegerValue]:
        value = self.model.module_values.get(name)
        number = self._literal(value) if value is not None else None
        if number is not None:
            return IntegerValue(number, None, f"constant `{name} = {number}`")
        return None

    def _parameter(self, function: FunctionInfo, name: str, depth: int) -> Optional[IntegerValue]:
        """A parameter's value: the one integer every same-file caller passes for it
        (``make_dataset(files, BATCH_SIZE)``), else its default (a literal, or a module constant:
        ``def make(batch_size=BATCH_SIZE)``)."""
        passed = self._passed_by_callers(function, name, depth)
        if passed is not None:
            return passed
        default = _parameter_default(function, name)
        number = self._literal(default) if default is not None else None
        if number is not None:
            return IntegerValue(number, None, f"default of parameter `{name}`")
        constant = self._constant(default.value) if isinstance(default, cst.Name) else None
        if constant is not None:
            return IntegerValue(constant.value, None, f"default of parameter `{name}`, {constant.origin}")
        return None

    def largest_passed(self, function: FunctionInfo, name: str) -> Optional[IntegerValue]:
        """The largest integer the callers in this file bind the parameter ``name`` to (passed, or left
        to a known default), when every one is known and the function is not also handed on as a value
        (a callback may be called with anything); None otherwise. What a size may reach at most
        (``self.train_discriminator(images, batch_size)`` in ``train(self, gen, batch_size)``, called
        with ``BATCH_SIZE = 400``)."""
        return self._passed_by_callers(function, name, 0, largest=True)

    def _passed_by_callers(self, function: FunctionInfo, name: str, depth: int,
                           largest: bool = False) -> Optional[IntegerValue]:
        """The integer every caller in this file binds ``name`` to, when they all bind it (passed, or
        left to a known default) to the same known value (with ``largest``, the largest of the known
        values, even if all are defaults); None when a caller is unknown or they differ."""
        callers = self.model.call_graph.callers(function) if depth < _MAX_DEPTH else []
        if not callers or self.model.call_graph.named_as_value(function):  # type: ignore[attr-defined]
            return None  # handed on as a callback too (`Thread(target=f, args=...)`): called with anything
        positional = function.positional_parameters
        index = positional.index(name) if name in positional else None
        values = set()
        passed = False
        for caller in callers:
            call = caller.node
            if any(arg.star for arg in call.args):
                return None
            arg = argument(call, name, index)
            if arg is None:  # left to its default, evaluated where the function is defined
                default = _parameter_default(function, name)
                value = self._value(default, function.parent, depth + 1) if default is not None else None
            elif _lambda_parameter(arg.value, caller):
                return None  # `lambda batch_size: gan.train(data, batch_size)`: whatever the lambda is given
            else:
                value = self._value(arg.value, caller.function, depth + 1)
                passed = True
            if value is None:
                return None
            values.add(value.value)
        if largest:
            return IntegerValue(max(values), None, f"at most {max(values)}, as the callers bind parameter `{name}`")
        if len(values) != 1 or not passed:
            return None  # they differ, or every caller leaves it to its default (said as such)
        via = value.origin or "a literal"  # type: ignore[union-attr]
        return IntegerValue(values.pop(), None, f"passed for parameter `{name}` by every caller: {via}")

    @cached_property
    def _flags(self) -> Dict[str, IntegerValue]:
        flags: Dict[str, IntegerValue] = {}
        for site in self.model.calls:
            call = site.node
            leaf = (dotted_text(call.func) or "").rsplit(".", 1)[-1]
            if leaf in _FLAG_DEFINERS:
                name = argument(call, "name", 0)
                default = argument(call, "default", 1)
                number = self._literal(default.value) if default is not None else None
                if name is not None and isinstance(name.value, cst.SimpleString) and number is not None:
                    flag = str(name.value.evaluated_value)
                    flags[flag] = IntegerValue(number, None, f"flag --{flag}, default {number}")
            elif leaf == "add_argument" and call.args and isinstance(call.args[0].value, cst.SimpleString):
                option = str(call.args[0].value.evaluated_value)
                default_value = keyword_value(call, "default")
                number = self._literal(default_value) if default_value is not None else None
                if option.startswith("--") and number is not None:
                    flags[option[2:].replace("-", "_")] = IntegerValue(number, None, f"flag {option}, default {number}")
        return flags


def _bool_literal(expr: cst.BaseExpression) -> Optional[int]:
    """``True`` / ``False`` as 1 / 0: the literal a boolean constant is read with (``truth``)."""
    value = bool_literal(expr)
    return None if value is None else int(value)


def _parameter_default(function: FunctionInfo, name: str) -> Optional[cst.BaseExpression]:
    params = function.node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name:
            return param.default
    return None


def _lambda_parameter(expr: cst.BaseExpression, site: CallSite) -> bool:
    """``expr`` is a name that a lambda around ``site`` takes as a parameter."""
    return isinstance(expr, cst.Name) and any(expr.value in lambda_parameter_names(lam) for lam in site.lambdas)
