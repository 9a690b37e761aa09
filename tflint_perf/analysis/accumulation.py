"""Tensors grown step by step in a loop: quadratic copying.

``growing_tensors`` finds, among the module's ``tf.concat`` / ``tf.stack`` calls inside a loop:

- self-accumulation: ``v = tf.concat([v, x], axis)`` (``v`` among the values);
- a list concatenated on every step: ``parts.append(x)`` and ``tf.concat(parts, 0)`` / ``tf.stack(parts)``
  in the same loop body.

- a ``tf.while_loop`` body returning ``tf.concat([v, x])`` for its own loop variable ``v``.

Either copies everything accumulated so far on every step. Not when the accumulated value is read
elsewhere in the loop: then each step *needs* the grown tensor (a DenseNet block concatenating
features as the next layer's input, an autoregressive decoder feeding its tokens back), and no
TensorArray replaces it. The loop body is scanned for names here, once per candidate loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, List, Optional

import libcst as cst

from tflint_perf.analysis.arguments import argument
from tflint_perf.analysis.model import CallSite, ModuleModel

GROWING_CALLS = frozenset({"tf.concat", "tf.stack"})
LOOP_OPTIONS = "tf.autograph.experimental.set_loop_options"


@dataclass(frozen=True)
class GrowingTensor:
    site: CallSite  # the tf.concat / tf.stack call
    name: str  # the accumulated tensor, or the list appended to
    loop: cst.CSTNode  # the innermost loop around it
    form: str  # "self" | "list"


def growing_tensors(model: ModuleModel) -> Iterator[GrowingTensor]:
    appends = {}
    loop_options = {}  # `set_loop_options(shape_invariants=[(v, ...)])` names v without reading it
    for site in model.calls:
        if site.loops and model.call_name(site.node) == LOOP_OPTIONS:
            loop_options.setdefault(site.loops[-1], []).append(site.node)
    for site in model.calls:
        func = site.node.func
        if site.loops and isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name):
            appends.setdefault((func.value.value, site.loops[-1]), []).append(site.node)
    for site in model.calls:
        if not site.loops or model.call_name(site.node) not in GROWING_CALLS:
            continue
        values = argument(site.node, "values", 0)
        if values is None or values.star:
            continue
        loop = site.loops[-1]
        found = _self_accumulation(site, values.value)
        if found is not None:
            allowed = [site.node]
            form = "self"
        elif (isinstance(values.value, cst.Name) and (values.value.value, loop) in appends
              and site.place.blocks and site.place.blocks[-1] is getattr(loop, "body", None)):
            found = values.value.value
            allowed = [site.node, *appends[(found, loop)]]
            form = "list"
        else:
            continue
        if _read_elsewhere(loop, found, allowed + loop_options.get(loop, []), site):
            continue
        yield GrowingTensor(site, found, loop, form)
    for site in model.calls:
        if model.call_name(site.node) == "tf.while_loop":
            yield from _while_loop_growth(model, site)


# Ops that score each image of a batch with one number: a pass growing a tensor by them accumulates a
# float per image, a few KB for a whole evaluation set, whose quadratic copy costs microseconds. Keras'
# functional losses and metrics are not among them: `tf.keras.losses.mse(masks, preds)` averages only the
# last axis, B x H x W values for a batch of masks.
_PER_EXAMPLE_SCORES = frozenset({"tf.image.psnr", "tf.image.ssim", "tf.image.ssim_multiscale"})


def grows_by_scores(model: ModuleModel, growing: GrowingTensor) -> bool:
    """A self-accumulation over one pass whose new pieces are per-image scores (``psnr =
    tf.image.psnr(target, output)``), bound in the loop: one number per image, not the images'
    features or predictions. One pass: no loop encloses the growing loop, or the accumulator starts
    anew on each iteration of the one that does (an evaluation pass per epoch); a tensor grown across
    20 epochs of steps is reported."""
    if growing.form != "self" or not _single_pass(model, growing):
        return False
    values = argument(growing.site.node, "values", 0)
    if values is None or not isinstance(values.value, (cst.List, cst.Tuple)):
        return False
    pieces = [e.value for e in values.value.elements
              if not (isinstance(e.value, cst.Name) and e.value.value == growing.name)]
    return bool(pieces) and all(_per_example_score(model, piece, growing.site) for piece in pieces)


def _single_pass(model: ModuleModel, growing: GrowingTensor) -> bool:
    outer = growing.site.loops[:-1]
    if not outer:
        return True
    _, bindings = model.scope_bindings(growing.name, growing.site.function)
    starts = [b for b in bindings if b.value is not growing.site.node]
    return bool(starts) and all(outer[-1].body in b.place.blocks for b in starts)


def _per_example_score(model: ModuleModel, piece: cst.BaseExpression, site: CallSite) -> bool:
    if isinstance(piece, cst.Name):
        bindings = model.reaching(piece.value, site.function, site.place, site.lambdas)
        if not bindings or any(b.kind != "assign" or b.value is None for b in bindings):
            return False
        return all(_per_example_score(model, b.value, site) for b in bindings)
    return isinstance(piece, cst.Call) and model.call_name(piece) in _PER_EXAMPLE_SCORES


def _while_loop_growth(model: ModuleModel, loop: CallSite) -> Iterator[GrowingTensor]:
    """``tf.while_loop(cond, body, ...)`` whose body returns ``tf.concat([v, x])`` for its own ``v``."""
    arg = argument(loop.node, "body", 1)
    body = model.effects.resolve_callable(arg.value, loop.function) if arg is not None else None
    if body is None:
        return
    if isinstance(body, cst.Lambda):
        params = [p.name.value for p in body.params.params]
        returned: Optional[cst.BaseExpression] = body.body
        scope_node: cst.CSTNode = body.body
    else:
        params = [p.name.value for p in body.node.params.params]
        if body.is_method:
            params = params[1:]
        returned = body.returns[0].node.value if len(body.returns) == 1 else None
        scope_node = body.node.body
    if returned is None:
        return
    items = [e.value for e in returned.elements] if isinstance(returned, (cst.Tuple, cst.List)) else [returned]
    for index, item in enumerate(items[: len(params)]):
        if not isinstance(item, cst.Call) or model.call_name(item) not in GROWING_CALLS:
            continue
        values = argument(item, "values", 0)
        name = params[index]
        if values is None or not isinstance(values.value, (cst.List, cst.Tuple)):
            continue
        direct = [e for e in values.value.elements if isinstance(e.value, cst.Name) and e.value.value == name]
        if len(direct) != 1 or any(_mentions(e, name) for e in values.value.elements if e not in direct):
            continue
        site = model.site_of(item)
        if site is None or _mentions_outside(scope_node, name, item):
            continue
        yield GrowingTensor(site, name, loop.node, "self")


def _mentions_outside(node: cst.CSTNode, name: str, skip: cst.CSTNode) -> bool:
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if current is skip:
            continue
        if isinstance(current, cst.Name) and current.value == name:
            return True
        stack.extend(current.children)
    return False


def _self_accumulation(site: CallSite, values: cst.BaseExpression) -> Optional[str]:
    statement = site.statement
    if statement is None or len(statement.body) != 1 or not isinstance(values, (cst.List, cst.Tuple)):
        return None
    small = statement.body[0]
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return None
    if small.value is not site.node and not _first_step_or_concat(small.value, site.node):
        return None
    target = small.targets[0].target
    if not isinstance(target, cst.Name):
        return None
    direct = [e for e in values.elements if isinstance(e.value, cst.Name) and e.value.value == target.value]
    others = [e for e in values.elements if e not in direct]
    if len(direct) != 1 or any(_mentions(e, target.value) for e in others):
        return None  # `x = tf.concat([x, layer(x)], -1)`: each step reads the grown tensor
    return target.value


def _first_step_or_concat(value: cst.BaseExpression, call: cst.Call) -> bool:
    """``x if acc is None else tf.concat([acc, x], 0)``: the first step starts the tensor."""
    return (
        isinstance(value, cst.IfExp) and (value.orelse is call or value.body is call)
        and isinstance(value.test, cst.Comparison) and len(value.test.comparisons) == 1
        and isinstance(value.test.comparisons[0].operator, (cst.Is, cst.IsNot))
        and isinstance(value.test.comparisons[0].comparator, cst.Name)
        and value.test.comparisons[0].comparator.value == "None"
    )


def _mentions(node: cst.CSTNode, name: str) -> bool:
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and current.value == name:
            return True
        stack.extend(current.children)
    return False


def _read_elsewhere(loop: cst.CSTNode, name: str, allowed: List[cst.Call], site: CallSite) -> bool:
    """``name`` occurs in the loop (header included) other than inside the ``allowed`` calls and
    as the target of the accumulating assignment."""
    statement = site.statement
    target = None
    if statement is not None and isinstance(statement.body[0], cst.Assign):
        target = statement.body[0].targets[0].target
        value = statement.body[0].value
        if isinstance(value, cst.IfExp) and _first_step_or_concat(value, site.node):
            allowed = [*allowed, value.test]  # type: ignore[list-item]
    stack: List[cst.CSTNode] = [loop]
    while stack:
        node = stack.pop()
        if any(node is call for call in allowed) or node is target:
            continue
        if isinstance(node, cst.Name) and node.value == name:
            return True
        stack.extend(node.children)
    return False
