"""TFP204 python-scalar-to-tf-function: a ``tf.function`` called in a loop with a changing Python number."""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import keyword_argument
from tflint_perf.analysis.loops import StepLoops, names_read
from tflint_perf.analysis.tf_functions import TfFunctions
from tflint_perf.analysis.model import CallSite, FunctionInfo, LoopNode
from tflint_perf.analysis.purpose import Purpose
from tflint_perf.analysis.values import PYTHON, ValueKinds
from tflint_perf.text.diagnostics import UNSAFE, Finding, FixPlan, NodeEdit
from tflint_perf.fixes.building import tensorflow_api
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid

_STEP = (
    "import tensorflow as tf\n\n@tf.function\ndef train_step(x, step):\n"
    "    return x * tf.cast(step, tf.float32)\n\n"
)
# sayakpaul/PAWS-TF's multi-crop loader: eight maps built once, each with one of two constant scales.
_MULTICROP = (
    "import tensorflow as tf\n\nSIZE_CROPS = [32, 18]\nNUM_CROPS = [2, 6]\nGLOBAL_SCALE = [0.75, 1.0]\n"
    "LOCAL_SCALE = [0.3, 0.75]\n\n@tf.function\ndef random_resize_distort_crop(image, scale, crop_size):\n"
    "    size = tf.random.uniform((), scale[0] * 48, scale[1] * 48)\n"
    "    return tf.image.resize(tf.image.random_crop(image, (size, size, 3)), (crop_size, crop_size))\n\n"
    "def get_multicrop_loader(ds):\n    loaders = tuple()\n    for i, num_crop in enumerate(NUM_CROPS):\n"
    "        for _ in range(num_crop):\n            if SIZE_CROPS[i] == 32:\n                scale = GLOBAL_SCALE\n"
    "            else:\n                scale = {local}\n"
    "            loader = ds.map(lambda x: random_resize_distort_crop(x, scale, SIZE_CROPS[i]))\n"
    "            loaders += (loader,)\n    return tf.data.Dataset.zip(loaders)\n"
)
# Uses of a parameter that make it drive tracing: converting it to a tensor changes what is traced.
_PYTHON_USES = frozenset({"range", "len", "int", "float", "bool", "str"})


class PythonScalarToTfFunction(Rule):
    code = "TFP204"
    name = "python-scalar-to-tf-function"
    summary = "A changing Python number passed to a `tf.function` traces a new graph for every value"
    fix_availability = "sometimes"
    purposes = frozenset({Purpose.TRAINING, Purpose.EVALUATION, Purpose.INFERENCE})

    what_it_does = """
Checks for calls to a `tf.function` of this file (a `@tf.function` def, or a name bound to
`tf.function(fn)`) inside a `for` or `while` loop, where an argument is a plain Python value that
changes from one iteration to the next: the loop variable of `range(...)` / `enumerate(...)`
(`for step in range(n)`), a number assigned in the loop (`lr = lr * 0.9`), `len(batch)`, or
arithmetic on those. The value must be known to be a Python number, string or boolean: a name
whose reaching bindings are all such values, never a guess from the name.

Not reported: arguments that do not change (`training=True`, a learning rate set once), tensors
(`tf.constant(step)`, `optimizer.iterations`), a `tf.function` with an `input_signature` (it
refuses Python values instead of retracing), short literal loops (`for flag in (True, False)`),
values that take only a few in all: booleans computed in the loop (`step % 2 == 0`: two traces at
most), a flag assigned only constants (`first_batch = True` before the loop and `first_batch =
False` in it, as Horovod trainers broadcast variables after the first step: two traces in all; a
`phase` set to one of a few strings; a state that is `None` on the first call and what a `tf.function`
or a reloaded SavedModel's function returned after it, tensors traced by shape, never by value: two
traces in all), and test files. Values that change every iteration are
reported: loop counters, step numbers, accumulated floats.
"""
    why_bad = """
A `tf.function` keys its traces on Python arguments by *value*: "For Python primitive values, the
type corresponds to the value itself" (TensorFlow's function guide). Each new step number, batch
length or learning rate traces the whole function again and builds a new graph, which is slower
than running the step eagerly, and TensorFlow warns about excessive retracing. A tensor argument
is keyed by dtype and shape, so every value reuses one graph. Measured on a 2-core CPU, 60 calls
with 60 different Python integers: 0.87 s (60 traces), with `tf.constant(k)`: 0.074 s (1 trace).
"""
    example = """
@tf.function
def train_step(x, step):
    ...

for step in range(1000):
    train_step(x, step)
"""
    use_instead = """
@tf.function
def train_step(x, step):
    ...

for step in range(1000):
    train_step(x, tf.constant(step))
"""
    fix_safety = """
The fix wraps the argument in `tf.constant(...)` and is unsafe: it changes what the function
sees. Where the parameter is used as data (`x * step`, `tf.cast(step, ...)`) the results are the
same; where it drives tracing (`if step % 100 == 0:`, `range(n)`, a shape), the Python `if`
becomes a `tf.cond` and a Python loop a `tf.while_loop`, or tracing fails. No fix is offered when
the function's body passes the parameter to `range`, `len`, `int`, `float`, `bool` or `str`, tests
it in an `if` or `while`, or when the argument is a string. An alternative is
`@tf.function(reduce_retracing=True)` with tensors, or an `input_signature`.
"""
    references = (
        "[Better performance with tf.function: rules of tracing](https://www.tensorflow.org/guide/function#rules_of_tracing)",
        "[tf.function: pass tensors instead of Python literals]"
        "(https://www.tensorflow.org/guide/function#depending_on_python_global_and_free_variables)",
    )

    valid = (
        # Two scales, constant lists bound to `scale`: two traces in all, none per step.
        Valid(_MULTICROP.format(local="LOCAL_SCALE")),
        # TF Text's text generation: `states` is None on the first call and the GRU state tensors the
        # tf.function returned after it (or a reloaded SavedModel's function): two traces in all.
        Valid(
            "import tensorflow as tf\n\nclass OneStep(tf.keras.Model):\n    @tf.function\n"
            "    def generate_one_step(self, inputs, states=None):\n        return inputs, states\n\n"
            "one_step_model = OneStep()\nreloaded = tf.saved_model.load('one_step')\nstates = None\n"
            "next_char = tf.constant(['ROMEO:'])\nfor n in range(1000):\n"
            "    next_char, states = one_step_model.generate_one_step(next_char, states=states)\n"
            "states = None\nfor n in range(100):\n    next_char, states = reloaded.generate_one_step(next_char, states=states)\n"
        ),
        # The same Python value every call: one trace.
        Valid(_STEP + "for x in batches:\n    train_step(x, 1)\n"),
        Valid(_STEP + "lr = 0.01\nfor x in batches:\n    train_step(x, lr)\n"),
        # A tensor.
        Valid(_STEP + "for step in range(1000):\n    train_step(x, tf.constant(step))\n"),
        # Not a tf.function.
        Valid("import tensorflow as tf\n\ndef train_step(x, step):\n    return x\n\nfor step in range(10):\n    train_step(x, step)\n"),
        # An input_signature: Python values are refused, never retraced.
        Valid(
            "import tensorflow as tf\n\n@tf.function(input_signature=[tf.TensorSpec(None, tf.float32), tf.TensorSpec([], tf.int64)])\n"
            "def train_step(x, step):\n    return x\n\nfor step in range(10):\n    train_step(x, step)\n"
        ),
        # Two runs over a literal tuple.
        Valid(_STEP + "for training in (True, False):\n    train_step(x, training)\n"),
        # Unknown kind: an element of a dataset (a tensor).
        Valid(_STEP + "for x, step in dataset:\n    train_step(x, step)\n"),
        # Not in a loop.
        Valid(_STEP + "train_step(x, 3)\n"),
        # NVIDIA's Horovod trainers: a flag True for the first step and False after (broadcast the
        # variables once): two traces in all, on purpose.
        Valid(
            "import tensorflow as tf\n\n@tf.function\ndef train_step(images, labels, first_batch):\n"
            "    loss = compute(images, labels)\n    if first_batch:\n        broadcast_variables()\n    return loss\n\n"
            "first_batch = True\nfor images, labels in dataset:\n    loss = train_step(images, labels, first_batch)\n"
            "    first_batch = False\n"
        ),
        # A phase set to one of two strings in the loop.
        Valid(
            _STEP + "phase = 'warmup'\nfor step in range(1000):\n    if step == 100:\n        phase = 'train'\n"
            "    train_step(x, phase)\n"
        ),
    )
    invalid = (
        # A scale computed in the loop is a new Python value, a new trace, on every iteration.
        Invalid(_MULTICROP.format(local="[0.3, 0.3 + 0.05 * _]")),
        # None first, then a Python count made from what the tf.function returned: a new value every step.
        Invalid(
            "import tensorflow as tf\n\n@tf.function\ndef step(x, n=None):\n    return x\n\n"
            "n = None\nfor i in range(1000):\n    out = step(x, n)\n    n = i * 2\n"
        ),
        Invalid(
            _STEP + "for step in range(1000):\n    train_step(x, step)\n",
            fixed=_STEP + "for step in range(1000):\n    train_step(x, tf.constant(step))\n",
            unsafe=True,
        ),
        # A learning rate decayed in the loop, passed by keyword to a wrapped function.
        Invalid(
            "import tensorflow as tf\n\ndef step_fn(x, lr):\n    return x * lr\n\nstep = tf.function(step_fn)\n"
            "lr = 0.1\nfor x in batches:\n    step(x, lr=lr)\n    lr = lr * 0.9\n",
            fixed="import tensorflow as tf\n\ndef step_fn(x, lr):\n    return x * lr\n\nstep = tf.function(step_fn)\n"
            "lr = 0.1\nfor x in batches:\n    step(x, lr=tf.constant(lr))\n    lr = lr * 0.9\n",
            unsafe=True,
        ),
        # The parameter drives Python control flow: reported, no fix.
        Invalid(
            "import tensorflow as tf\n\n@tf.function\ndef train_step(x, step):\n    if step % 100 == 0:\n"
            "        tf.print(x)\n    return x\n\nfor i, x in enumerate(batches):\n    train_step(x, i)\n"
        ),
        # A step counter kept by hand, and an accumulated float: a new value every iteration.
        Invalid(
            _STEP + "global_step = 0\nfor x in batches:\n    train_step(x, global_step)\n    global_step += 1\n",
            fixed=_STEP + "global_step = 0\nfor x in batches:\n    train_step(x, tf.constant(global_step))\n    global_step += 1\n",
            unsafe=True,
        ),
        Invalid(
            _STEP + "warmup = 0.0\nfor x in batches:\n    warmup = warmup + 0.001\n    train_step(x, warmup)\n",
            fixed=_STEP + "warmup = 0.0\nfor x in batches:\n    warmup = warmup + 0.001\n    train_step(x, tf.constant(warmup))\n",
            unsafe=True,
        ),
        # len() of a per-iteration list.
        Invalid(
            _STEP + "for batch in batches:\n    rows = [r for r in batch if r]\n    train_step(rows, len(rows))\n",
            fixed=_STEP + "for batch in batches:\n    rows = [r for r in batch if r]\n"
            "    train_step(rows, tf.constant(len(rows)))\n",
            unsafe=True,
        ),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        if context.is_test_code:
            return
        functions: Optional[TfFunctions] = None
        loops: Optional[StepLoops] = None
        kinds: Optional[ValueKinds] = None
        for site in model.calls:
            if not site.loops or not site.node.args:
                continue
            functions = functions or TfFunctions(model)
            called = functions.called(site)
            if called is None:
                continue
            target, wrapper = called
            if self._has_signature(context, functions, target, wrapper):
                continue
            loops = loops or model.step_loops
            lexical = loops.lexical(site)
            if not lexical or len(lexical) != len(site.loops):
                continue
            kinds = kinds or ValueKinds(model)
            for arg, param in _bound_arguments(site.node, target):
                if param is None or arg.star:
                    continue
                loop = self._varying_loop(loops, kinds, site, arg.value, lexical)
                if loop is None:
                    continue
                message = (
                    f"`{param}` gets a Python value that changes in the loop: `{target.name}` is a `tf.function`, "
                    "which traces a new graph for every new Python value; pass a tensor (`tf.constant(...)`)"
                )
                yield self.finding(message, arg.value, arg.value, self._fix(context, site, arg.value, target, param))

    def _has_signature(self, context: RuleContext, functions: TfFunctions, target: FunctionInfo,
                       wrapper: Optional[cst.Call]) -> bool:
        calls: List[cst.Call] = []
        decorator = functions.decorator(target)
        if decorator is not None and isinstance(decorator.decorator, cst.Call):
            calls.append(decorator.decorator)
        if wrapper is not None:
            calls.append(wrapper)
        return any(keyword_argument(call, "input_signature") is not None for call in calls)

    def _varying_loop(self, loops: StepLoops, kinds: ValueKinds, site: CallSite, expr: cst.BaseExpression,
                      lexical: Tuple[LoopNode, ...]) -> Optional[LoopNode]:
        if kinds.few_values(expr, site.function, site.place, site.lambdas):
            return None  # a boolean or a flag set from a few constants: a few traces in all, not one per step
        if _is_len(expr) or kinds.kind(expr, site.function, site.place, site.lambdas) == PYTHON:
            for loop in reversed(lexical):
                if loops.varies(expr, site, loop):
                    return loop
        return None

    def _fix(self, context: RuleContext, site: CallSite, expr: cst.BaseExpression, target: FunctionInfo,
             param: str) -> Optional[FixPlan]:
        if isinstance(expr, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            return None
        if _drives_tracing(context, target, param):
            return None
        spelling = tensorflow_api(context.model, "constant", site.node)
        if spelling is None:
            return None
        name, imports = spelling
        text = context.model.module.code_for_node(expr)
        if "\n" in text:
            return None
        return FixPlan(UNSAFE, f"Wrap in `{name}`", (NodeEdit(expr, "replace", f"{name}({text})"),), imports)


def _is_len(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len"


def _bound_arguments(call: cst.Call, target: FunctionInfo) -> List[Tuple[cst.Arg, Optional[str]]]:
    """Each argument with the parameter it binds (None when unknown)."""
    positional = target.positional_parameters
    names = set(positional) | {p.name.value for p in target.node.params.kwonly_params}
    bound: List[Tuple[cst.Arg, Optional[str]]] = []
    index = 0
    for arg in call.args:
        if arg.keyword is not None:
            bound.append((arg, arg.keyword.value if arg.keyword.value in names else None))
        elif arg.star:
            bound.append((arg, None))
        else:
            bound.append((arg, positional[index] if index < len(positional) else None))
            index += 1
    return bound


def _drives_tracing(context: RuleContext, target: FunctionInfo, param: str) -> bool:
    """The parameter is passed to ``range``/``len``/``int``... or tested by an ``if``/``while`` in the body."""
    for site in context.model.calls_in(target):
        func = site.node.func
        if isinstance(func, cst.Name) and func.value in _PYTHON_USES:
            if any(param in names_read(arg.value) for arg in site.node.args):
                return True
    stack: List[cst.CSTNode] = [target.node.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.If, cst.While)) and param in names_read(node.test):
            return True
        if isinstance(node, cst.IfExp) and param in names_read(node.test):
            return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        stack.extend(node.children)
    return False
