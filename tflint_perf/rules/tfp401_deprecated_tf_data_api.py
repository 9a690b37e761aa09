"""TFP401 deprecated-tf-data-api: ``tf.data.experimental`` spellings that moved into ``tf.data``."""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple

import libcst as cst

from tflint_perf.analysis.arguments import bool_literal, has_star_args
from tflint_perf.analysis.deprecations import (Deprecation, effect, lookup, message, replacement_available, respell, runs_only_on_tf1,
                                               written_for_tf1)
from tflint_perf.analysis.names import dotted_text
from tflint_perf.text.diagnostics import SAFE, UNSAFE, Finding, FixPlan, NodeEdit
from tflint_perf.fixes.building import autotune
from tflint_perf.rules.base import Invalid, Rule, RuleContext, Valid, target_version_option

# Parameters of the experimental transformations, in order.
_PARAMETERS = {
    "map_and_batch": ("map_func", "batch_size", "num_parallel_batches", "drop_remainder", "num_parallel_calls"),
    "parallel_interleave": ("map_func", "cycle_length", "block_length", "sloppy", "buffer_output_elements",
                            "prefetch_input_elements"),
    "shuffle_and_repeat": ("buffer_size", "count", "seed"),
}
_HEADER = "import tensorflow as tf\nds = tf.data.TFRecordDataset(files)\n"


class DeprecatedTfDataApi(Rule):
    code = "TFP401"
    name = "deprecated-tf-data-api"
    summary = "`tf.data.experimental` APIs that moved into `tf.data` (`AUTOTUNE`, `map_and_batch`, `parallel_interleave`, ...)"
    fix_availability = "sometimes"
    default_enabled = False  # upgrade advice, not performance: opt-in, as ruff keeps pyupgrade out of its defaults
    opt_in_group = "TFP4"
    options = (target_version_option(
        "Reported only where the target release warns about the spelling (nothing for a TensorFlow 1 target, or one older than the warning); the fix is offered only when the version is known and has the replacement (unknown: reported without a fix, the message says the target is unknown and from which release it warns)."
    ),)

    what_it_does = """
Checks for the `tf.data.experimental` spellings of APIs that now live in `tf.data` itself:
`tf.data.experimental.AUTOTUNE`; the transformations passed to `Dataset.apply`
(`map_and_batch`, `parallel_interleave`, `shuffle_and_repeat`, `unbatch`, `enumerate_dataset`,
`ignore_errors`, `scan`, `group_by_window`, `take_while`, `unique`, `bucket_by_sequence_length`,
`rejection_resample`, `dense_to_ragged_batch`, `dense_to_sparse_batch`); and the functions that became
`tf.data.Dataset` static methods (`sample_from_datasets`, `choose_from_datasets`, `load`, `Counter`;
`get_single_element` and `save` are reported without a fix).

Off by default: this is upgrade advice, not performance (`extend-select = ["TFP4"]` turns it on).
What is reported is keyed to the project's target TensorFlow (`target-version`, or the version
inferred from its dependency files): a spelling is reported only where the target is a release on
which it logs a deprecation warning (the release that added the replacement decorated the old one
with TensorFlow's `deprecated`). `tf.data.experimental.AUTOTUNE` is a plain constant, still exported
and silent on every 2.x, so it is never reported. A TensorFlow 1 target (below 2.0), or a module
that runs only on TensorFlow 1 (it calls `tf.Session`, `tf.contrib`, `tf.placeholder`, `tf.logging`
... through a plain `import tensorflow`, or passes one as a value: `tf.contrib.data.AUTOTUNE`; or
every first-party module that imports it does), gets nothing: the experimental spelling is the only
one there. With no target known, a spelling is reported with a message that says the target is unknown
and from which release it warns; a module kept running on 1.15 (it imports `tensorflow.compat.v1`
or `compat.v2`) is then not told about replacements that 1.15 lacks.

An old spelling used only on a branch of a feature or version check (`if hasattr(tf.data.Dataset,
"sample_from_datasets")`, a helper such as `compat.tf_supports(...)`, `tf.__version__ < "2.7"`,
`try: ... except AttributeError:`, the default of `getattr(...)`) is the compatible way to support
several TensorFlow versions, not an upgrade to make: not reported.

Names are resolved through the module's imports (`import tensorflow as tf`,
`from tensorflow.data import experimental`, `tf.compat.v1`), never by their text. Test files are
skipped. Which replacement needs which TensorFlow comes from one table
(`tflint_perf/analysis/deprecations.py`, shared with TFP402).
"""
    why_bad = """
The experimental spellings are deprecated: TensorFlow logs a deprecation warning for each, and
their documentation points to the core API, saying that TensorFlow's default graph rewrites
(`map_and_batch_fusion`, `shuffle_and_repeat_fusion`) fuse `map().batch()` and `shuffle().repeat()`
themselves. Writing the core API makes the parallelism explicit (`num_parallel_calls`,
`deterministic` instead of `sloppy`) and keeps the pipeline working when the experimental names go.
This is a hygiene rule: no speed-up is claimed, and for `map_and_batch` the harness measured the
pair slower on TensorFlow 2.21 (see Fix safety).
"""
    example = """
import tensorflow as tf

ds = tf.data.TFRecordDataset(files)
ds = ds.apply(tf.data.experimental.shuffle_and_repeat(1024))
ds = ds.apply(tf.data.experimental.map_and_batch(parse, 32, drop_remainder=True))
ds = ds.prefetch(tf.data.AUTOTUNE)
"""
    use_instead = """
import tensorflow as tf

ds = tf.data.TFRecordDataset(files)
ds = ds.shuffle(1024).repeat()
ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE).batch(32, drop_remainder=True)
ds = ds.prefetch(tf.data.AUTOTUNE)
"""
    fix_safety = """
The fixes are **safe**: the pipeline yields the same elements in the same order; except the
`map_and_batch` one, which is **unsafe** (applied with `--unsafe-fixes`) for speed, not values:
`map_and_batch(f, n, num_parallel_batches=k, drop_remainder=d)` becomes
`map(f, num_parallel_calls=AUTOTUNE).batch(n, drop_remainder=d)` (a given `num_parallel_calls` is
kept), the same batches, but on TensorFlow 2.21 (2-core CPU, a cheap map function, a loaded machine)
the pair measured 0.43-0.53x the speed of `map_and_batch` in two runs (docs/benchmarks.md), so it is
not applied by default until a quiet re-run settles it; `parallel_interleave(f, cycle_length=c, block_length=b, sloppy=s)` becomes
`interleave(f, cycle_length=c, block_length=b, num_parallel_calls=AUTOTUNE, deterministic=not s)`
(`deterministic` omitted for `sloppy=False`; no fix when `buffer_output_elements` or
`prefetch_input_elements` is set, which have no counterpart); `shuffle_and_repeat(n, count, seed)`
becomes `shuffle(n, seed=seed).repeat(count)` (the docstring: "produces the same output as"; the
fused op's iterator checkpoint differs). The other moves keep their arguments.

A fix is offered only when every TensorFlow the project may run has the replacement: `target-version`
(or the version inferred from the project's dependency files) must be at least the version that
introduced it (`tf.data.AUTOTUNE`: 2.4; `deterministic`: 2.2; `sample_from_datasets`: 2.7; ...).
When no version is known the finding says from which version the replacement exists and offers no
fix. No fix either when the spelling hides the `experimental` module behind an alias
(`from tensorflow.data import experimental as tde`) or an argument spans several lines.
"""
    known_problems = """
`from tensorflow.data.experimental import AUTOTUNE` is not reported (only attribute uses are); neither is
`tf.data.experimental.AUTOTUNE` itself, which no release warns about.
"""
    references = (
        "[`tf.data.experimental.map_and_batch` (deprecated)](https://www.tensorflow.org/api_docs/python/tf/data/experimental/map_and_batch)",
        "[`tf.data.experimental.parallel_interleave` (deprecated)](https://www.tensorflow.org/api_docs/python/tf/data/experimental/parallel_interleave)",
        "[`tf.data.experimental.shuffle_and_repeat` (deprecated)](https://www.tensorflow.org/api_docs/python/tf/data/experimental/shuffle_and_repeat)",
        "[tensorflow/docs#1796: `tf.data.AUTOTUNE` is available in TF 2.4](https://github.com/tensorflow/docs/pull/1796)",
    )

    valid = (
        Valid(_HEADER + "ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE).batch(32)\n"),
        Valid(_HEADER + "ds = ds.shuffle(1024).repeat()\n"),
        # Not TensorFlow's: a project module of the same name, resolved through imports.
        Valid("import tensorflow as tf\nfrom mylib import data\nds = ds.apply(data.experimental.map_and_batch(f, 32))\n"),
        Valid("import tensorflow as tf\nclass Opts:\n    AUTOTUNE = -1\nn = Opts.AUTOTUNE\n"),
        Valid("import tensorflow as tf\nAUTOTUNE = tf.data.AUTOTUNE\nds = ds.prefetch(AUTOTUNE)\n"),
        # `tf.data.experimental.AUTOTUNE` is a plain constant, still exported and silent on every 2.x:
        # nothing warns or breaks on any target, so there is nothing to report.
        Valid(_HEADER + "ds = ds.prefetch(tf.data.experimental.AUTOTUNE)\n", target_version=(2, 15)),
        Valid(_HEADER + "ds = ds.prefetch(tf.data.experimental.AUTOTUNE)\n"),
        Valid("import tensorflow as tf\nAUTOTUNE = tf.data.experimental.AUTOTUNE\n", target_version=(2, 21)),
        # TensorFlow 1 code (`tf.Session`, `tf.contrib` through `import tensorflow`): it runs only on
        # TensorFlow 1, where the experimental spelling is the only one (the BERT/facenet shape).
        Valid("import tensorflow as tf\nds = ds.apply(tf.data.experimental.map_and_batch(parse, 32))\nsess = tf.Session()\n"),
        # A TensorFlow 1 target (requirements pin 1.15): no TensorFlow 2 advice.
        Valid(_HEADER + "ds = ds.apply(tf.data.experimental.map_and_batch(parse, 32, drop_remainder=True))\n",
              target_version=(1, 15)),
        Valid(_HEADER + "ds = ds.apply(tf.data.experimental.parallel_interleave(load, 4))\n", target_version=(2, 1)),
        Valid("import tensorflow.compat.v1 as tf\nds = ds.apply(tf.data.experimental.shuffle_and_repeat(1024))\n"),
        Valid("import tensorflow as tf\nds = tf.data.experimental.sample_from_datasets([a, b])\n", target_version=(2, 6)),
        # The fallback a feature check picks where the new API is missing (OpenNMT-tf's shape): code
        # written for several TensorFlow versions, not an upgrade to make.
        Valid("import tensorflow as tf\nfrom opennmt.utils import compat\n"
              "if compat.tf_supports('data.Dataset.sample_from_datasets'):\n"
              "    ds = tf.data.Dataset.sample_from_datasets(datasets, weights=w)\nelse:\n"
              "    ds = tf.data.experimental.sample_from_datasets(datasets, weights=w)\n", target_version=(2, 15)),
        Valid("import tensorflow as tf\nif hasattr(tf.data.Dataset, 'sample_from_datasets'):\n"
              "    ds = tf.data.Dataset.sample_from_datasets(datasets)\nelse:\n    ds = tf.data.experimental.sample_from_datasets(datasets)\n"
              "ds = ds.apply(tf.data.experimental.unbatch()) if tf.__version__ < '2.2' else ds.unbatch()\n",
              target_version=(2, 15)),
        Valid("import tensorflow as tf\ntry:\n    ds = ds.unbatch()\nexcept AttributeError:\n"
              "    ds = ds.apply(tf.data.experimental.unbatch())\n", target_version=(2, 15)),
    )
    invalid = (
        # A check that is not about the feature or the version does not make the old spelling a fallback.
        Invalid(
            _HEADER + "if training:\n    ds = ds.apply(tf.data.experimental.shuffle_and_repeat(1024))\n",
            fixed=_HEADER + "if training:\n    ds = ds.shuffle(1024).repeat()\n", target_version=(2, 15),
        ),
        # No TensorFlow version known: reported (it warns from 2.0), no fix; the message says so.
        Invalid(_HEADER + "ds = ds.apply(tf.data.experimental.shuffle_and_repeat(1024))\n", fixed=None),
        Invalid(
            "import tensorflow.compat.v1 as tf\nds = ds.apply(tf.data.experimental.unbatch())\n",
            fixed="import tensorflow.compat.v1 as tf\nds = ds.unbatch()\n", target_version=(2, 15),
        ),
        Invalid(
            _HEADER + "ds = ds.apply(tf.data.experimental.map_and_batch(parse, 32, num_parallel_batches=4, drop_remainder=True))\n",
            fixed=_HEADER + "ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE).batch(32, drop_remainder=True)\n",
            target_version=(2, 15), unsafe=True,
        ),
        Invalid(
            _HEADER + "ds = ds.apply(tf.data.experimental.map_and_batch(map_func=parse, batch_size=B, num_parallel_calls=8))\n",
            fixed=_HEADER + "ds = ds.map(parse, num_parallel_calls=8).batch(B)\n",
            target_version=(2, 15), unsafe=True,
        ),
        Invalid(
            _HEADER + "ds = ds.apply(tf.data.experimental.parallel_interleave(tf.data.TFRecordDataset, cycle_length=4, sloppy=True))\n",
            fixed=_HEADER + "ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=4, num_parallel_calls=tf.data.AUTOTUNE, "
            "deterministic=False)\n",
            target_version=(2, 15),
        ),
        Invalid(
            _HEADER + "ds = ds.apply(tf.data.experimental.parallel_interleave(load, 4, 2, sloppy=is_training))\n",
            fixed=_HEADER + "ds = ds.interleave(load, cycle_length=4, block_length=2, num_parallel_calls=tf.data.AUTOTUNE, "
            "deterministic=not is_training)\n",
            target_version=(2, 15),
        ),
        Invalid(
            _HEADER + "ds = ds.apply(tf.data.experimental.parallel_interleave(load, 4, buffer_output_elements=8))\n",
            fixed=None, target_version=(2, 15),
        ),
        Invalid(
            _HEADER + "ds = ds.apply(tf.data.experimental.shuffle_and_repeat(1024, seed=7))\n",
            fixed=_HEADER + "ds = ds.shuffle(1024, seed=7).repeat()\n", target_version=(2, 15),
        ),
        Invalid(
            "from tensorflow.data import experimental\nds = ds.apply(experimental.unbatch())\n",
            fixed="from tensorflow.data import experimental\nds = ds.unbatch()\n", target_version=(2, 15),
        ),
        Invalid(
            "import tensorflow as tf\nds = tf.data.experimental.sample_from_datasets([a, b], weights=[0.5, 0.5])\n",
            fixed="import tensorflow as tf\nds = tf.data.Dataset.sample_from_datasets([a, b], weights=[0.5, 0.5])\n",
            target_version=(2, 15),
        ),
        Invalid("import tensorflow as tf\nx = tf.data.experimental.get_single_element(ds)\n", fixed=None, target_version=(2, 15)),
    )

    def check(self, context: RuleContext) -> Iterable[Finding]:
        model = context.model
        if context.is_test_code:
            return
        version = context.settings.target_version
        tf1 = written_for_tf1(model, context.filename) if version is None else False
        tf1_only = runs_only_on_tf1(model, context.filename) if version is None else False
        applied: Dict[cst.Call, cst.Call] = {}
        for site in model.calls:
            call = site.node
            if (isinstance(call.func, cst.Attribute) and call.func.attr.value == "apply" and len(call.args) == 1
                    and call.args[0].keyword is None and not call.args[0].star and isinstance(call.args[0].value, cst.Call)):
                applied[call.args[0].value] = call
        for site in model.attributes:
            entry = lookup(model.imports.spelled(site.node), self.code)
            clause = effect(version, entry, tf1, tf1_only) if entry is not None and entry.form == "constant" else None
            if clause is None or model.compatibility.on_branch(site.node):
                continue  # not deprecated where it runs, or the fallback a version check picks
            fix = None
            new = respell(dotted_text(site.node) or "", entry)
            if new is not None and replacement_available(version, entry):
                fix = FixPlan(SAFE, f"Use `{new}`", (NodeEdit(site.node, "replace", new),))
            yield self.finding(self._message(entry, version, clause), site.node, site.node, fix)
        for site in model.calls:
            call = site.node
            entry = lookup(model.imports.spelled(call.func), self.code)
            clause = effect(version, entry, tf1, tf1_only) if entry is not None and entry.form in ("apply", "function") else None
            if clause is None or model.compatibility.on_branch(call):
                continue  # not deprecated where it runs, or the fallback a version check picks
            fix = None
            if replacement_available(version, entry) and not has_star_args(call) and entry.special != "report":
                if entry.form == "function":
                    new = respell(dotted_text(call.func) or "", entry)
                    if new is not None:
                        fix = FixPlan(SAFE, f"Use `{new}`", (NodeEdit(call.func, "replace", new),))
                elif call in applied:
                    fix = self._apply_fix(context, entry, applied[call], call)
            yield self.finding(self._message(entry, version, clause), call.func, call, fix)

    def _message(self, entry: Deprecation, version, clause: str) -> str:
        new = entry.new if entry.new.startswith("`") else f"`{entry.new}`"
        return message(f"`{entry.old}`", clause, new, version, entry)

    def _apply_fix(self, context: RuleContext, entry: Deprecation, outer: cst.Call, inner: cst.Call) -> Optional[FixPlan]:
        model = context.model
        if not isinstance(outer.func, cst.Attribute):
            return None
        if entry.special:
            rewritten = self._rewrite(context, entry.special, outer, inner)
            if rewritten is None:
                return None
            method, arguments = rewritten
        else:
            codes = [model.module.code_for_node(arg) for arg in inner.args]
            if any("\n" in code or "\r" in code for code in codes):
                return None
            method, arguments = entry.new_tail, "".join(codes)
        edits = (NodeEdit(outer.func.attr, "replace", method), NodeEdit(inner, "replace", arguments))
        # The same elements, but measured slower (see Fix safety): opt-in until a quiet re-run says otherwise.
        applicability = UNSAFE if entry.special == "map_and_batch" else SAFE
        return FixPlan(applicability, f"Use `Dataset.{method}`", edits)

    def _rewrite(self, context: RuleContext, special: str, outer: cst.Call, inner: cst.Call) -> Optional[Tuple[str, str]]:
        """``(method, text replacing the inner call)``: the text closes the method's parentheses and
        opens the next method's, whose closing parenthesis is the one of ``apply(...)``."""
        names = _PARAMETERS[special]
        args = _bind(inner, names)
        if args is None:
            return None
        code = {name: context.model.module.code_for_node(value) for name, value in args.items()}
        if any("\n" in text or "\r" in text for text in code.values()):
            return None
        spelling = autotune(context.model, context.settings, outer)
        if special == "map_and_batch":
            if "map_func" not in code or "batch_size" not in code:
                return None
            parallel = code.get("num_parallel_calls") or (spelling[0] if spelling and not spelling[1] else None)
            if parallel is None:
                return None
            batch = code["batch_size"] + (f", drop_remainder={code['drop_remainder']}" if "drop_remainder" in code else "")
            return "map", f"{code['map_func']}, num_parallel_calls={parallel}).batch({batch}"
        if special == "parallel_interleave":
            if "map_func" not in code or "cycle_length" not in code or "buffer_output_elements" in code \
                    or "prefetch_input_elements" in code or spelling is None or spelling[1]:
                return None
            parts = [code["map_func"], f"cycle_length={code['cycle_length']}"]
            if "block_length" in code:
                parts.append(f"block_length={code['block_length']}")
            parts.append(f"num_parallel_calls={spelling[0]}")
            sloppy = args.get("sloppy")
            if sloppy is not None and bool_literal(sloppy) is not False:
                literal = bool_literal(sloppy)
                if literal is True:
                    parts.append("deterministic=False")
                elif isinstance(sloppy, (cst.Name, cst.Attribute)):
                    parts.append(f"deterministic=not {code['sloppy']}")
                else:
                    parts.append(f"deterministic=not ({code['sloppy']})")
            return "interleave", ", ".join(parts)
        if special == "shuffle_and_repeat":
            if "buffer_size" not in code:
                return None
            shuffle = code["buffer_size"] + (f", seed={code['seed']}" if "seed" in code else "")
            return "shuffle", f"{shuffle}).repeat({code.get('count', '')}"
        return None


def _bind(call: cst.Call, names: Tuple[str, ...]) -> Optional[Dict[str, cst.BaseExpression]]:
    """The call's arguments by parameter name; None for unknown keywords or too many positionals."""
    if has_star_args(call):
        return None
    bound: Dict[str, cst.BaseExpression] = {}
    positional: List[cst.Arg] = [arg for arg in call.args if arg.keyword is None]
    if len(positional) > len(names):
        return None
    for name, arg in zip(names, positional):
        bound[name] = arg.value
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value not in names or arg.keyword.value in bound:
                return None
            bound[arg.keyword.value] = arg.value
    return bound
