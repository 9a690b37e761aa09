"""Python callbacks that only read files TensorFlow has no reader for.

A ``tf.numpy_function(np.load, [path], tf.float32)`` in a map reads one preprocessed ``.npy`` feature
file per element: no TensorFlow op reads the ``.npy`` (nor a pickle, an HDF5 file, a ``.mat``, audio
through ``soundfile``, or a WAV file other than 16-bit PCM, all that ``tf.audio.decode_wav`` reads), so
"write it with TensorFlow ops" cannot be followed, and the work is file I/O, which releases the GIL: a
parallel map overlaps the reads. What
decides is what the callback does, not its name: the reader itself (``np.load``), or a lambda or
same-file function whose calls are such reads and what only carries the path to them and the array
out of them (``open``, ``str``, ``.decode()``, ``.astype(np.float32)``, ``name + '.npy'``). NumPy arithmetic that TF
could do (``(x - mean) / std``), a loop, or any other call is work the rule's advice applies to. A raw
dump (``np.fromfile(path, dtype)``) has a TF reader, ``tf.io.decode_raw(tf.io.read_file(path), dtype)``:
the advice applies to it.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from tflint_perf.analysis.model import FunctionInfo, ModuleModel

# Readers of file formats no TensorFlow op reads (`tf.io.read_file` reads bytes; nothing parses them).
FILE_READERS = frozenset({
    "numpy.load", "pickle.load", "joblib.load", "h5py.File", "soundfile.read", "scipy.io.loadmat",
    "scipy.io.wavfile.read",
})
# What only carries the path in or the array out: no computation on the data.
_CARRIERS = frozenset({"open", "str", "bytes", "numpy.asarray", "numpy.array", "numpy.float32", "numpy.int32",
                       "numpy.int64"})
_CARRYING_METHODS = frozenset({"decode", "astype", "numpy", "item"})
# `.decode()` carries only when it names at most an encoding (`path.decode('utf-8')`); `jpeg.decode(data)`,
# `tokenizer.decode(ids)` decode the data.
_DECODE = "decode"
# Nodes that compute on the data (or repeat the read an unknown number of times).
_WORK = (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation, cst.For, cst.While,
         cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp, cst.IfExp, cst.If)


def only_reads_files(model: ModuleModel, callback: cst.BaseExpression, scope: Optional[FunctionInfo]) -> bool:
    """The Python function a ``py_function`` / ``numpy_function`` / ``py_func`` wraps (``callback``,
    seen from ``scope``) only reads a file in a format TensorFlow has no reader for (``FILE_READERS``):
    ``np.load`` itself, ``lambda p: np.load(p)``, or a same-file ``def`` whose calls are such reads and
    ``_CARRIERS``. Unknown callbacks (imported, unresolved) are not."""
    if model.resolve(callback) in FILE_READERS:
        return True
    target = model.effects.resolve_callable(callback, scope, local_only=True)  # type: ignore[attr-defined]
    if target is None:
        return False
    if isinstance(target, FunctionInfo):
        if target.node.decorators:
            return False
        body: cst.CSTNode = target.node.body
        inner: Optional[FunctionInfo] = target
    else:
        body, inner = target.body, scope
    calls = _calls_if_plain(body)
    if not calls:
        return False
    reads = [call for call in calls if model.call_name(call) in FILE_READERS]
    return bool(reads) and all(call in reads or _carries(model, call, inner) for call in calls)


def _calls_if_plain(body: cst.CSTNode) -> List[cst.Call]:
    """The calls in ``body``, or none when it computes (arithmetic, comparisons, loops, branches)."""
    calls: List[cst.Call] = []
    stack: List[cst.CSTNode] = [body]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.BinaryOperation) and _builds_a_path(current):
            stack.extend((current.left, current.right))  # `name.decode('utf-8') + '.npy'`: the file's name
            continue
        if isinstance(current, _WORK):
            return []
        if isinstance(current, cst.Call):
            calls.append(current)
        stack.extend(current.children)
    return calls


def _builds_a_path(operation: cst.BinaryOperation) -> bool:
    """``path + '.npy'``, ``'%s.pkl' % name``: a string written out joined to a name, not arithmetic."""
    strings = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
    return isinstance(operation.operator, (cst.Add, cst.Modulo)) and (
        isinstance(operation.left, strings) or isinstance(operation.right, strings))


def _carries(model: ModuleModel, call: cst.Call, scope: Optional[FunctionInfo]) -> bool:
    func = call.func
    if isinstance(func, cst.Name) and func.value in _CARRIERS and model.lookup_function(func.value, scope) is None:
        return True
    if model.call_name(call) in _CARRIERS:
        return True
    if not (isinstance(func, cst.Attribute) and func.attr.value in _CARRYING_METHODS):
        return False
    return func.attr.value != _DECODE or all(isinstance(arg.value, cst.SimpleString) for arg in call.args)
