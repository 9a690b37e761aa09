"""A scripted editor session against a language server: how fast a re-check after an edit is, and whether memory grows.

    python benchmarks/lsp_session.py [--edits 200] [--files 1000] [--lines 1000] [--project DIR --train REL_PATH]
    python benchmarks/lsp_session.py --server-cmd "ruff server" --check-cmd "ruff check --no-cache --exit-zero"

The client is written here, over stdio, with nothing but the standard library (JSON-RPC 2.0 with
``Content-Length`` framing), so that any server can be timed the same way: by default
``python -m tflint_perf server`` (the Python running this script; ``PYTHONPATH`` picks the checkout).

The session, as an editor would run it:

1. a project of ``--files`` files: the first ``.py`` files of ``--source-tree`` (default: the
   Model Garden's ``official``/``orbit`` under /work/trees/tfmodels_wheel, else the installed
   ``tf-models-official``), and a package ``trainer/`` holding a ``--lines``-line training script
   (``lint_speed.training_script``) that imports ``trainer/input_pipeline.py``; or ``--project DIR``
   with ``--train`` naming its training file and ``--dependency`` a module that file imports;
2. ``initialize`` (the root as the one workspace folder), ``didOpen`` of the training file, and the
   time to its first diagnostics;
3. ``--warmup`` edits not counted, then ``--edits`` edits of the training file, one ``didChange`` each
   (incremental when the server offers it, else the full text), cycling through three realistic
   edits at a different place each time: a statement typed into a function body (and removed the
   next time round), a ``Dataset.map`` call given or stripped of ``num_parallel_calls``, a number
   retyped; each edit waits for its answer before the next is sent;
4. ``didOpen`` of the imported module, then ``--dependency-edits`` edits of it (the decoding function
   the training file maps with made stateful or not, which changes the training file's TFP102), each
   timed to the training file's next diagnostics;
5. ``shutdown`` and ``exit``.

What is timed, in two sessions (``--diagnostics push,pull``):

- *push*: from sending ``didChange`` to receiving the ``publishDiagnostics`` of that document version
  (of the training file, for a dependency edit). This includes the server's debounce, the pause it
  waits for more typing before checking; ``--debounce-ms`` is subtracted in a second column.
- *pull*: the client declares pull diagnostics; from sending ``didChange`` to the response of a
  ``textDocument/diagnostic`` request sent right after it. A server checks on the request, without
  the debounce: this is the re-check itself, plus the protocol.

Beside them: a fresh ``tflint-perf check FILE`` process on the same file in the same project
(``--no-cache``; with the results cache, the file unchanged; with the cache, the file changed before
each run), or ``--check-cmd``, ``--check-runs`` rounds of them spread between each session's edits
(while the server is idle), so that a shared machine's changing load weighs on both alike; the ratio
of the session's re-check median to it; and the server's resident memory (VmRSS from /proc, with any
child processes) after the warm-up and after every ``--rss-every`` edits. Every edit leaves a text
the document never had before (see ``Rewrite``). The figures are what docs/performance.md ("The
language server") reports.
"""

from __future__ import annotations

import argparse
import json
import re
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lint_speed import (  # noqa: E402
    _cpu_model, _load, _memory, _tflint_perf_origin, copy_tree, package_dir, training_script,
)

TREES = Path("/work/trees/tfmodels_wheel")
ANSWER_TIMEOUT = 60.0  # seconds one answer may take before the session is declared broken
DEPENDENCY_TIMEOUT = 10.0  # seconds to wait for an importer's diagnostics after a dependency edit


# -- the client ----------------------------------------------------------------------------------------


class ServerDied(RuntimeError):
    pass


class Received:
    """One message from the server and when it arrived (``time.perf_counter``)."""

    __slots__ = ("at", "message")

    def __init__(self, at: float, message: Dict[str, Any]) -> None:
        self.at = at
        self.message = message


class JsonRpcClient:
    """A language client over a server process's stdin and stdout: JSON-RPC 2.0, ``Content-Length`` frames.

    A reader thread takes every message as it arrives and stamps it; requests from the server
    (``workspace/configuration``, ``client/registerCapability``, ...) are answered at once from
    ``answers``. The main thread sends and waits on what was received.
    """

    def __init__(self, command: Sequence[str], cwd: Path, answers: Dict[str, Callable[[Any], Any]],
                 stderr_path: Path) -> None:
        self._stderr = open(stderr_path, "wb")
        self.process = subprocess.Popen(list(command), cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self._stderr)
        self._answers = answers
        self._next_id = 0
        self._write_lock = threading.Lock()
        self._arrived = threading.Condition()
        self.received: List[Received] = []
        self.server_requests: List[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # sending
    def _send(self, message: Dict[str, Any]) -> None:
        body = json.dumps(message).encode("utf-8")
        with self._write_lock:
            self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> float:
        """Send a notification; returns when it was sent."""
        sent = time.perf_counter()
        self._send({"jsonrpc": "2.0", "method": method, "params": params})
        return sent

    def send_request(self, method: str, params: Any) -> Tuple[int, float]:
        self._next_id += 1
        sent = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id, sent

    def request(self, method: str, params: Any, timeout: float = ANSWER_TIMEOUT) -> Tuple[Any, float]:
        """Send a request and wait for its response; returns the result and the seconds it took."""
        request_id, sent = self.send_request(method, params)
        answer = self.response(request_id, timeout)
        if "error" in answer.message:
            raise RuntimeError(f"{method} failed: {answer.message['error']}")
        return answer.message.get("result"), answer.at - sent

    def response(self, request_id: int, timeout: float = ANSWER_TIMEOUT) -> Received:
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m, 0, timeout)

    def server_request(self, method: str, start: int, timeout: float) -> Received:
        return self.wait_for(lambda m: m.get("method") == method and "id" in m, start, timeout)

    # receiving
    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    with self._arrived:
                        self._arrived.notify_all()
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length is None:
                continue
            message = json.loads(stream.read(length))
            at = time.perf_counter()
            if "method" in message and "id" in message:  # a request from the server: answered at once
                self.server_requests.append(message["method"])
                answer = self._answers.get(message["method"], lambda params: None)
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": answer(message.get("params"))})
            with self._arrived:
                self.received.append(Received(at, message))
                self._arrived.notify_all()

    def wait_for(self, wanted: Callable[[Dict[str, Any]], bool], start: int, timeout: float) -> Received:
        """The first message from index ``start`` of ``received`` on that ``wanted`` accepts."""
        deadline = time.perf_counter() + timeout
        index = start
        with self._arrived:
            while True:
                while index < len(self.received):
                    if wanted(self.received[index].message):
                        return self.received[index]
                    index += 1
                left = deadline - time.perf_counter()
                if self.process.poll() is not None:
                    raise ServerDied(f"the server exited with {self.process.returncode}")
                if left <= 0:
                    raise TimeoutError
                self._arrived.wait(left)

    def mark(self) -> int:
        """Where the messages from now on begin, for ``wait_for``."""
        with self._arrived:
            return len(self.received)

    def close(self, timeout: float = 10.0) -> Tuple[Optional[int], float]:
        """``shutdown`` then ``exit``; returns the exit status (None if it had to be killed) and the seconds."""
        started = time.perf_counter()
        try:
            self.request("shutdown", None, timeout)
            self.notify("exit", None)
            self.process.stdin.close()
            status: Optional[int] = self.process.wait(timeout)
        except (TimeoutError, subprocess.TimeoutExpired, BrokenPipeError, ServerDied, RuntimeError):
            self.process.kill()
            self.process.wait()
            status = None
        self._stderr.close()
        return status, time.perf_counter() - started


# -- documents and edits ---------------------------------------------------------------------------


def position(text: str, offset: int) -> Dict[str, int]:
    """The LSP position (line, UTF-16 code units) of a character offset."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return {"line": line, "character": len(text[start:offset].encode("utf-16-le")) // 2}


class Document:
    """An open text document as the client holds it: text and version, changed by (start, end, new text)."""

    def __init__(self, path: Path, language: str = "python") -> None:
        self.path = path
        self.uri = path.resolve().as_uri()
        self.text = path.read_text(encoding="utf-8")
        self.version = 1
        self.language = language
        self.seen = {hash(self.text)}
        self.repeats = 0  # edits that made a text this document already had (should stay 0: see Rewrite)

    def open_params(self) -> Dict[str, Any]:
        return {"textDocument": {"uri": self.uri, "languageId": self.language, "version": self.version,
                                 "text": self.text}}

    def change(self, start: int, end: int, new: str, incremental: bool) -> Dict[str, Any]:
        """Apply the edit and return the ``didChange`` parameters that tell the server."""
        change: Dict[str, Any] = {"range": {"start": position(self.text, start), "end": position(self.text, end)},
                                  "text": new}
        self.text = self.text[:start] + new + self.text[end:]
        self.version += 1
        self.repeats += hash(self.text) in self.seen
        self.seen.add(hash(self.text))
        if not incremental:
            change = {"text": self.text}
        return {"textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": [change]}


Edit = Tuple[int, int, str]  # start offset, end offset, new text


class Rewrite:
    """A change of one place: the first match of ``pattern`` inside the definition that begins with ``anchor`` (up
    to the next top-level one), replaced by ``replace(match, serial)``, ``serial`` counting the session's edits.

    Every edit must leave a text the server has never seen: a server may remember results by text (tflint-perf's
    workspace does), and a text seen before would time a lookup, not a re-check. So the edits that undo one another
    also write a number that only this edit writes (``fresh_number``)."""

    def __init__(self, name: str, anchor: str, pattern: str, replace: Callable[["re.Match[str]", int], str]) -> None:
        self.name = name
        self.anchor = anchor
        self.pattern = re.compile(pattern)
        self.replace = replace

    def edit(self, text: str, serial: int) -> Optional[Edit]:
        start = text.find(self.anchor)
        if start < 0:
            return None
        end = text.find("\n\n\n", start)
        match = self.pattern.search(text, start, len(text) if end < 0 else end)
        if match is None:
            return None
        return match.start(), match.end(), self.replace(match, serial)


def fresh_number(serial: int) -> str:
    """A number no other edit of the session writes, and that no generated file holds (``0.1`` and the like)."""
    return f"0.{serial + 1000}"


def training_edits(text: str) -> List[Rewrite]:
    """The realistic edits of a ``lint_speed.training_script`` file, in the order they cycle, one place each time:
    a statement typed into a function (removed the next time round: the file keeps its size), a ``Dataset.map`` call
    given ``num_parallel_calls`` or stripped of it (its finding comes and goes), a number retyped."""
    blocks = sum(1 for n in range(10_000) if f"def augment_{n}(" in text)
    edits: List[Rewrite] = []
    flip = "    image = tf.image.random_flip_left_right(image)\n"
    for n in range(blocks):
        edits.append(Rewrite("type a statement into a function body", f"def augment_{n}(",
                             re.escape(flip) + r"(    image = tf\.image\.random_contrast\(image, [0-9.]+, 1\.2\)\n)?",
                             lambda match, serial: flip if match.group(1) else
                             f"{flip}    image = tf.image.random_contrast(image, {fresh_number(serial)}, 1.2)\n"))
        edits.append(Rewrite("change a Dataset.map call", f"def make_dataset_{n}(",
                             rf"ds = ds\.map\(parse_{n}(, num_parallel_calls=AUTOTUNE)?\)\n",
                             lambda match, serial, n=n: f"ds = ds.map(parse_{n})\n" if match.group(1) else
                             f"ds = ds.map(parse_{n}, num_parallel_calls=AUTOTUNE)\n"))
        edits.append(Rewrite("retype a number", f"def augment_{n}(", r"random_brightness\(image, [0-9.]+\)",
                             lambda match, serial: f"random_brightness(image, {fresh_number(serial)})"))
    return edits


def generic_edits(text: str) -> List[Rewrite]:
    """For a file given with ``--project``: a statement typed below each ``def`` line, its number retyped each time."""
    edits = []
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("def ") and stripped.endswith(":") and line.endswith("\n"):
            indent = line[: len(line) - len(line.lstrip())] + "    "
            edits.append(Rewrite("type a statement into a function body", line,
                                 re.escape(line) + rf"({re.escape(indent)}_edited = [0-9.]+\n)?",
                                 lambda match, serial, line=line, indent=indent:
                                 f"{line}{indent}_edited = {fresh_number(serial)}\n"))
    return edits


# -- the project -------------------------------------------------------------------------------------


INPUT_PIPELINE = '''\
"""The input pipeline the trainers share (the module the benchmark's dependency edits change)."""
import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE


def decode(record):
    features = {
        "image": tf.io.FixedLenFeature([], tf.string),
        "label": tf.io.FixedLenFeature([], tf.int64),
    }
    example = tf.io.parse_single_example(record, features)
    image = tf.io.decode_jpeg(example["image"], channels=3)
    image = tf.image.adjust_brightness(image, 0.1)
    return tf.image.resize(image, [224, 224]) / 255.0, example["label"]


def make_dataset(pattern, batch_size):
    files = tf.data.Dataset.list_files(pattern)
    ds = tf.data.TFRecordDataset(files)
    ds = ds.map(decode, num_parallel_calls=AUTOTUNE)
    return ds.batch(batch_size)
'''
# The training file maps its pipeline with ``input_pipeline.decode``: whether that function is stateful (a random
# op) changes the training file's TFP102 (no safe fix then), so its diagnostics follow the dependency's edits.
DEPENDENCY_EDIT = Rewrite("the imported decoding function's op made random or not", "def decode(",
                          r"    image = tf\.image\.(adjust|random)_brightness\(image, [0-9.]+\)\n",
                          lambda match, serial: "    image = tf.image.{}_brightness(image, {})\n".format(
                              "random" if match.group(1) == "adjust" else "adjust", fresh_number(serial)))
TRAINER_IMPORT = "from trainer import input_pipeline\n"
TRAINER_USE = ("\n\ndef fit_shared(args, model):\n"
               "    files = tf.data.Dataset.list_files(args.train)\n"
               "    train = tf.data.TFRecordDataset(files).map(input_pipeline.decode)\n"
               "    train = train.batch(args.batch).prefetch(AUTOTUNE)\n"
               "    model.fit(train, epochs=args.epochs)\n")


def make_project(target: Path, source: Path, files: int, lines: int) -> Tuple[Path, Path]:
    """``files - 3`` files of ``source`` and ``trainer/{__init__,input_pipeline,train}.py``; returns the training
    file and the module it imports."""
    shutil.rmtree(target, ignore_errors=True)
    copy_tree(source, target, (".py",), dependency_files=False, limit=files - 3)
    (target / "pyproject.toml").write_text("[project]\nname = 'lsp-benchmark-project'\n", encoding="utf-8")
    trainer = target / "trainer"
    trainer.mkdir(exist_ok=True)
    (trainer / "__init__.py").write_text("", encoding="utf-8")
    (trainer / "input_pipeline.py").write_text(INPUT_PIPELINE, encoding="utf-8")
    extra = TRAINER_IMPORT.count("\n") + TRAINER_USE.count("\n")
    script = training_script(lines - extra)
    header_end = script.index("AUTOTUNE = ")  # the imports end above the first assignment
    script = script[:header_end] + TRAINER_IMPORT + script[header_end:]
    main_at = script.index("\n\ndef main():")
    script = script[:main_at] + TRAINER_USE + script[main_at:]
    (trainer / "train.py").write_text(script, encoding="utf-8")
    return trainer / "train.py", trainer / "input_pipeline.py"


def default_source() -> Optional[Path]:
    if TREES.is_dir():
        return TREES
    official = package_dir("official")
    return official.parent if official is not None else None


# -- measuring -----------------------------------------------------------------------------------------


def rss_mib(pid: int) -> float:
    """VmRSS of a process and of its descendants (a server with worker processes), in MiB."""
    children: Dict[int, List[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        pending.extend(children.get(current, []))
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            pass
    return total


def summary(seconds: Sequence[float], minus: float = 0.0) -> str:
    if not seconds:
        return "no samples"
    ms = sorted((s - minus) * 1000 for s in seconds)
    p90 = ms[min(len(ms) - 1, int(round(0.9 * (len(ms) - 1))))]
    return f"median {statistics.median(ms):7.1f} ms   p90 {p90:7.1f} ms   max {ms[-1]:7.1f} ms   (n={len(ms)})"


class Session:
    """One server process driven through the scripted session, in one diagnostics mode."""

    def __init__(self, args: argparse.Namespace, mode: str, root: Path, train: Path, dependency: Optional[Path],
                 work: Path) -> None:
        self.args = args
        self.pull = mode == "pull"
        self.root = root
        settings = json.loads(args.settings) if args.settings else {}
        answers = {"workspace/configuration": lambda params: [settings or None for _ in params.get("items", [])]}
        self.client = JsonRpcClient(args.server_cmd, root, answers, work / f"server-{mode}.stderr")
        self.train = Document(train)
        self.dependency = Document(dependency) if dependency is not None else None
        self.pushes_in_pull_mode = False
        self.stale_pulls = 0  # pulled answers after a refresh that did not reflect the change yet
        self._serial = 0
        self.mode = mode

    def start(self) -> Dict[str, Any]:
        capabilities = {
            "general": {"positionEncodings": ["utf-16"]},
            "textDocument": {
                "synchronization": {"didSave": True, "dynamicRegistration": False},
                "publishDiagnostics": {"versionSupport": True, "tagSupport": {"valueSet": [1, 2]},
                                       "codeDescriptionSupport": True, "dataSupport": True},
                "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
                    "quickfix", "source", "source.fixAll"]}}, "resolveSupport": {"properties": ["edit"]}},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
            },
            "workspace": {"configuration": True, "workspaceFolders": True,
                          "didChangeWatchedFiles": {"dynamicRegistration": True}},
            "window": {"workDoneProgress": False},
        }
        if self.pull:
            capabilities["textDocument"]["diagnostic"] = {"dynamicRegistration": False,
                                                          "relatedDocumentSupport": False}
            capabilities["workspace"]["diagnostics"] = {"refreshSupport": True}
        params = {"processId": os.getpid(), "rootUri": self.root.as_uri(), "rootPath": str(self.root),
                  "workspaceFolders": [{"uri": self.root.as_uri(), "name": self.root.name}],
                  "capabilities": capabilities, "clientInfo": {"name": "tflint-perf lsp_session benchmark"}}
        if self.args.settings:
            params["initializationOptions"] = json.loads(self.args.settings)
        result, took = self.client.request("initialize", params)
        self.client.notify("initialized", {})
        server_capabilities = result.get("capabilities", {})
        sync = server_capabilities.get("textDocumentSync", 1)
        sync_kind = sync.get("change", 1) if isinstance(sync, dict) else sync
        self.incremental = sync_kind == 2 and not self.args.full_sync
        if self.pull and "diagnosticProvider" not in server_capabilities:
            raise SystemExit("the server offers no pull diagnostics (no diagnosticProvider); use --diagnostics push")
        return {"initialize": took, "server": result.get("serverInfo", {}), "incremental": self.incremental}

    # one answer
    def diagnostics_after(self, document: Document, sent_at: int, version: Optional[int],
                          timeout: float = ANSWER_TIMEOUT) -> Received:
        """The first ``publishDiagnostics`` of ``document`` received after mark ``sent_at`` (of ``version``,
        when given and the server says which version it published)."""
        def wanted(message: Dict[str, Any]) -> bool:
            if message.get("method") != "textDocument/publishDiagnostics":
                return False
            params = message["params"]
            if params["uri"] != document.uri:
                return False
            published = params.get("version")
            return version is None or published is None or published == version
        return self.client.wait_for(wanted, sent_at, timeout)

    def pull_diagnostics(self, document: Document) -> Tuple[Received, List[Dict[str, Any]]]:
        request_id, _ = self.client.send_request("textDocument/diagnostic", {"textDocument": {"uri": document.uri}})
        answer = self.client.response(request_id)
        if "error" in answer.message:
            raise RuntimeError(f"textDocument/diagnostic failed: {answer.message['error']}")
        report = answer.message.get("result") or {}
        return answer, report.get("items", [])

    def answer(self, document: Document, mark: int, version: Optional[int], timeout: float = ANSWER_TIMEOUT
               ) -> Tuple[Received, List[Dict[str, Any]]]:
        """``document``'s diagnostics: pulled now, or the first pushed after ``mark`` (of ``version``)."""
        if self.pull:
            return self.pull_diagnostics(document)
        answer = self.diagnostics_after(document, mark, version, timeout)
        return answer, answer.message["params"]["diagnostics"]

    def open(self, document: Document) -> Tuple[float, int]:
        """Open a document; the seconds to its first diagnostics, and how many."""
        mark = self.client.mark()
        sent = self.client.notify("textDocument/didOpen", document.open_params())
        answer, items = self.answer(document, mark, document.version)
        return answer.at - sent, len(items)

    def edit(self, document: Document, change: Edit, answered_by: Document, timeout: float = ANSWER_TIMEOUT,
             differing_from: Optional[List[Tuple[Any, ...]]] = None) -> Tuple[float, List[Dict[str, Any]]]:
        """Send one edit of ``document``; the seconds until ``answered_by``'s diagnostics came, and them.

        Pulling the diagnostics of another document than the edited one is done as an editor does it: on each
        ``workspace/diagnostic/refresh`` from the server (the client declares ``refreshSupport``), until the
        answer differs from ``differing_from`` (a server may refresh before it has re-checked the importer)."""
        params = document.change(*change, incremental=self.incremental)
        mark = self.client.mark()
        sent = self.client.notify("textDocument/didChange", params)
        if answered_by is document:
            answer, items = self.answer(document, mark, document.version, timeout)
            if self.pull:
                self._drain_pushes(document, mark, document.version)
        elif self.pull:
            deadline = sent + timeout
            while True:
                refresh = self.client.server_request("workspace/diagnostic/refresh", mark,
                                                     max(0.0, deadline - time.perf_counter()))
                mark = self.client.received.index(refresh) + 1
                answer, items = self.pull_diagnostics(answered_by)
                self.stale_pulls += differing_from is not None and signature(items) == differing_from
                if differing_from is None or signature(items) != differing_from:
                    break
        else:
            answer, items = self.answer(answered_by, mark, None, timeout)
        return answer.at - sent, items

    def _drain_pushes(self, document: Document, mark: int, version: int) -> None:
        """In pull mode a server may also push after its debounce: wait for that push so that its check does not
        overlap the next edit's. Whether it pushes is learnt on the first edits."""
        if document.version <= 4 or self.pushes_in_pull_mode:
            try:
                self.diagnostics_after(document, mark, version, timeout=2.0 + self.args.debounce_ms / 1000)
                self.pushes_in_pull_mode = True
            except TimeoutError:
                pass

    def serial(self) -> int:
        """A new number for each edit of the session (see ``Rewrite``)."""
        self._serial += 1
        return self._serial

    def settle(self, quiet: float = 0.5) -> None:
        """Wait until the server has sent nothing for the debounce and ``quiet`` seconds more."""
        while True:
            mark = self.client.mark()
            try:
                self.client.wait_for(lambda message: True, mark, quiet + self.args.debounce_ms / 1000)
            except TimeoutError:
                return

    def rss(self) -> float:
        return rss_mib(self.client.process.pid)


def signature(items: List[Dict[str, Any]]) -> List[Tuple[Any, ...]]:
    """What a user sees of some diagnostics (code, place, message), to tell whether they changed."""
    return sorted((str(d.get("code")), d["range"]["start"]["line"], d["range"]["start"]["character"], d["message"])
                  for d in items)


def run_session(args: argparse.Namespace, mode: str, root: Path, train: Path, dependency: Optional[Path],
                work: Path, fresh: FreshChecks) -> Dict[str, Any]:
    session = Session(args, mode, root, train, dependency, work)
    spacing = max(1, args.edits // max(1, args.check_runs))
    figures: Dict[str, Any] = {"mode": mode}
    try:
        figures.update(session.start())
        figures["open"], figures["open_count"] = session.open(session.train)
        # The edits cycle through the kinds, and each kind through its places (A0 B0 C0 A1 B1 C1 ...), so that
        # a place is changed back the next time round and the text stays the same size.
        edits = training_edits(session.train.text) or generic_edits(session.train.text)
        if not edits:
            raise SystemExit(f"no place to edit found in {train}")
        times: List[float] = []
        counts: List[int] = []
        by_kind: Dict[str, List[float]] = {}
        rss: List[Tuple[int, float]] = []
        if args.warmup == 0:
            rss.append((0, session.rss()))
        for number in range(args.warmup + args.edits):
            rewrite = edits[number % len(edits)]
            change = rewrite.edit(session.train.text, session.serial())
            if change is None:
                raise SystemExit(f"edit {number}: '{rewrite.name}' found nothing to change")
            took, items = session.edit(session.train, change, session.train)
            measured = number - args.warmup + 1
            if measured == 0:
                rss.append((0, session.rss()))
            elif measured > 0:
                times.append(took)
                counts.append(len(items))
                by_kind.setdefault(rewrite.name, []).append(took)
                if measured % args.rss_every == 0 or measured == args.edits:
                    rss.append((measured, session.rss()))
                if measured % spacing == 0 and fresh.rounds < args.check_runs:
                    fresh.round()  # the server is idle now: nothing of the training file is pending
        figures.update(edits=times, counts=counts, by_kind=by_kind, rss=rss)
        if session.dependency is not None and args.dependency_edits:
            figures.update(dependency_edits(session, args.dependency_edits))
        figures["rss_end"] = session.rss()
        figures["repeated_texts"] = session.train.repeats + (session.dependency.repeats if session.dependency else 0)
    except TimeoutError:
        figures["broken"] = f"an answer did not come within {ANSWER_TIMEOUT:.0f} s"
    except ServerDied as died:
        figures["broken"] = str(died)
    finally:
        figures["exit"], figures["close"] = session.client.close()
        figures["requests_from_server"] = sorted(set(session.client.server_requests))
    return figures


def dependency_edits(session: Session, edits: int) -> Dict[str, Any]:
    """Open the module the training file imports, edit it ``edits`` times, and time each edit to the training
    file's next diagnostics. It is opened only now so that the training file's edits above re-check nothing else."""
    dependency = session.dependency
    session.open(dependency)
    session.settle()  # opening it may re-check the training file: not the answer to the first edit
    rewrite = DEPENDENCY_EDIT if DEPENDENCY_EDIT.edit(dependency.text, 0) else generic_edits(dependency.text)[0]
    times: List[float] = []
    changed = 0
    before = signature(session.pull_diagnostics(session.train)[1]) if session.pull and rewrite is DEPENDENCY_EDIT \
        else None
    for _ in range(edits):
        try:
            took, items = session.edit(dependency, rewrite.edit(dependency.text, session.serial()), session.train,
                                       DEPENDENCY_TIMEOUT,
                                       differing_from=before)
        except TimeoutError:  # a server that re-checks only the edited file: no point asking again
            return {"dependency": times, "dependency_missing": True}
        times.append(took)
        now = signature(items)
        changed += before is not None and now != before
        before = now
    return {"dependency": times, "dependency_changed": changed, "stale_pulls": session.stale_pulls}


class FreshChecks:
    """A fresh check process on the training file, each way (``--check-cmd``, or tflint-perf's: ``--no-cache``, with
    the cache and the file unchanged, with the cache and the file changed), a round of them at a time: the rounds
    are run between a session's edits, so that the load of a shared machine weighs on both figures alike."""

    def __init__(self, args: argparse.Namespace, root: Path, train: Path, work: Path) -> None:
        self.root = root
        self.train = train
        self.original = train.read_bytes()
        relative = str(train.relative_to(root))
        if args.check_cmd:
            self.ways: Dict[str, Tuple[List[str], bool]] = {"given": (shlex.split(args.check_cmd) + [relative], False)}
        else:
            cache = work / "check-cache"
            shutil.rmtree(cache, ignore_errors=True)
            check = [sys.executable, "-m", "tflint_perf", "check", "--exit-zero"]
            cached = check + ["--cache-dir", str(cache), relative]
            subprocess.run(cached, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fill the cache
            self.ways = {
                "no-cache": (check + ["--no-cache", relative], False),
                "cache, file unchanged": (cached, False),
                "cache, file changed": (cached, True),
            }
        self.walls: Dict[str, List[float]] = {way: [] for way in self.ways}
        self.rounds = 0

    def round(self) -> None:
        self.rounds += 1
        try:
            for way, (command, change) in self.ways.items():
                changed = f"\n# changed, round {self.rounds}\n".encode() if change else b""
                self.train.write_bytes(self.original + changed)
                started = time.perf_counter()
                done = subprocess.run(command, cwd=self.root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                self.walls[way].append(time.perf_counter() - started)
                if done.returncode not in (0, 1):
                    raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
        finally:
            self.train.write_bytes(self.original)

    def reference(self) -> float:
        """The figure the goal compares with: a fresh check without the cache (or the given command)."""
        return statistics.median(self.walls["no-cache" if "no-cache" in self.walls else "given"])


def report(figures: Dict[str, Any], debounce_ms: float) -> float:
    """Print one session's table; returns its re-check median in seconds (nan if it broke)."""
    mode = figures["mode"]
    server = figures.get("server", {})
    print(f"\n{mode} diagnostics: server {server.get('name', '?')} {server.get('version', '')}, "
          f"{'incremental' if figures.get('incremental') else 'full'} didChange; initialize "
          f"{figures.get('initialize', float('nan')) * 1000:.0f} ms; first diagnostics after didOpen "
          f"{figures.get('open', float('nan')) * 1000:.0f} ms ({figures.get('open_count', '?')} diagnostics)")
    if "broken" in figures:
        print(f"  BROKEN: {figures['broken']}")
    edits = figures.get("edits", [])
    what = "didChange -> publishDiagnostics" if mode == "push" else "didChange + textDocument/diagnostic -> response"
    print(f"  re-check after an edit ({what})")
    print(f"    {'as the client sees it':<44} {summary(edits)}")
    if mode == "push" and debounce_ms:
        print(f"    {f'minus the debounce ({debounce_ms:.0f} ms)':<44} {summary(edits, debounce_ms / 1000)}")
    for kind, times in figures.get("by_kind", {}).items():
        print(f"    {kind:<44} {summary(times)}")
    counts = figures.get("counts", [])
    if counts:
        print(f"    diagnostics per answer: {min(counts)}-{max(counts)}")
    if figures.get("repeated_texts"):
        print(f"    WARNING: {figures['repeated_texts']} edits made a text the document had before: their answers may "
              f"have come from the server's memory of results")
    dependency = figures.get("dependency", [])
    if dependency or figures.get("dependency_missing"):
        print("  dependency edit (the imported module changed -> the training file's diagnostics)")
        print(f"    {'as the client sees it':<44} {summary(dependency)}")
        if "dependency_changed" in figures:
            compared = len(dependency) - (0 if mode == "pull" else 1)
            print(f"    the training file's diagnostics changed with {figures['dependency_changed']} of the {compared} "
                  f"edits compared (each makes the decoding function it maps with stateful or not)")
        if figures.get("stale_pulls"):
            print(f"    {figures['stale_pulls']} pulls after a workspace/diagnostic/refresh still gave the training "
                  f"file's diagnostics from before the edit (pulled again on the next refresh)")
        if figures.get("dependency_missing"):
            print(f"    no diagnostics for the training file within {DEPENDENCY_TIMEOUT:.0f} s of an edit of the "
                  f"imported module: not re-checked (after {len(dependency)} that were)")
    rss = figures.get("rss", [])
    if rss:
        print("  server RSS (MiB, with children): " + ", ".join(
            f"{'after warm-up' if n == 0 else f'edit {n}'} {mib:.0f}" for n, mib in rss)
            + f"; at the end {figures.get('rss_end', float('nan')):.0f}")
        if len(rss) >= 2:
            grown = rss[-1][1] - rss[0][1]
            per_edit = grown / max(1, rss[-1][0]) * 1024
            print(f"    change from after warm-up to edit {rss[-1][0]}: {grown:+.1f} MiB "
                  f"({per_edit:+.1f} KiB per edit)")
        if len(rss) >= 3:
            later = (rss[-1][1] - rss[1][1]) / max(1, rss[-1][0] - rss[1][0]) * 1024
            print(f"    change from edit {rss[1][0]} to edit {rss[-1][0]}: {rss[-1][1] - rss[1][1]:+.1f} MiB "
                  f"({later:+.1f} KiB per edit)")
    status = figures.get("exit")
    print(f"  shutdown + exit: {f'exit status {status}' if status is not None else 'KILLED (did not exit)'} "
          f"in {figures.get('close', float('nan')) * 1000:.0f} ms; requests from the server: "
          f"{', '.join(figures.get('requests_from_server', [])) or 'none'}")
    if not edits:
        return float("nan")
    return statistics.median(edits) - (debounce_ms / 1000 if mode == "push" else 0.0)


def tflint_perf_debounce_ms() -> float:
    """How long tflint-perf's server waits after a change before checking (the one the benchmark starts)."""
    from tflint_perf.faces.server.protocol import DEBOUNCE_S

    return DEBOUNCE_S * 1000


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server-cmd", default=f"{shlex.quote(sys.executable)} -m tflint_perf server",
                        help="the server's command line (default: python -m tflint_perf server)")
    parser.add_argument("--check-cmd", help="a fresh check to compare with, the file appended (default: "
                        "python -m tflint_perf check, with and without its cache)")
    parser.add_argument("--edits", type=int, default=200, help="edits timed per session (default 200)")
    parser.add_argument("--warmup", type=int, default=10, help="edits before those, not timed (default 10)")
    parser.add_argument("--dependency-edits", type=int, default=20, help="edits of the imported module (default 20)")
    parser.add_argument("--files", type=int, default=1000, help="files in the generated project (default 1000)")
    parser.add_argument("--lines", type=int, default=1000, help="lines of the training file (default 1000)")
    parser.add_argument("--source-tree", type=Path, help="where the project's other files come from")
    parser.add_argument("--project", type=Path, help="an existing project instead of the generated one")
    parser.add_argument("--train", help="with --project: the training file, relative to it")
    parser.add_argument("--dependency", help="with --project: a module the training file imports")
    parser.add_argument("--diagnostics", default="push,pull", help="sessions to run: push, pull or both (default)")
    parser.add_argument("--debounce-ms", type=float, help="the server's debounce, subtracted from push timings in a "
                        "second column (default: tflint-perf's DEBOUNCE_S for its server, else 0)")
    parser.add_argument("--full-sync", action="store_true", help="send the whole text even if the server "
                        "takes incremental changes")
    parser.add_argument("--settings", help="JSON given as initializationOptions and answered to "
                        "workspace/configuration")
    parser.add_argument("--check-runs", type=int, default=7, help="rounds of fresh checks per session, between its "
                        "edits (default 7)")
    parser.add_argument("--rss-every", type=int, default=50, help="edits between RSS samples (default 50)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/tflint_perf_lsp_session"))
    args = parser.parse_args(argv)
    tflint_perf_server = args.server_cmd == parser.get_default("server_cmd")
    args.server_cmd = shlex.split(args.server_cmd)
    if args.debounce_ms is None:
        args.debounce_ms = tflint_perf_debounce_ms() if tflint_perf_server else 0.0
    work = args.workdir.absolute()
    work.mkdir(parents=True, exist_ok=True)

    if args.project:
        root = args.project.resolve()
        if not args.train:
            raise SystemExit("--project needs --train")
        train = root / args.train
        dependency = root / args.dependency if args.dependency else None
    else:
        source = args.source_tree or default_source()
        if source is None:
            raise SystemExit("no source tree: give --source-tree DIR (or install tf-models-official)")
        root = work / "project"
        train, dependency = make_project(root, source, args.files, args.lines)
    files = sum(1 for _ in root.rglob("*.py"))
    lines = train.read_text(encoding="utf-8").count("\n")

    print("tflint-perf LSP session benchmark")
    print(f"  date        {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"  machine     {os.cpu_count()} CPUs ({_cpu_model()}), {_memory()}")
    print(f"  server      {' '.join(args.server_cmd)} (debounce {args.debounce_ms:.0f} ms)")
    print(f"  tflint-perf {_tflint_perf_origin(sys.executable, root)}")
    print(f"  command     {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print(f"  load        {_load()} at start")
    print(f"  project     {root}: {files} .py files; training file {train.relative_to(root)} ({lines} lines)"
          + (f", imports {dependency.relative_to(root)}" if dependency else ""))
    print(f"  edits       {args.warmup} warm-up + {args.edits} timed per session; {args.dependency_edits} of the "
          f"imported module")

    command = args.check_cmd or "python -m tflint_perf check"
    verdicts = []
    for mode in (mode.strip() for mode in args.diagnostics.split(",")):
        fresh = FreshChecks(args, root, train, work)
        figures = run_session(args, mode, root, train, dependency, work, fresh)
        median = report(figures, args.debounce_ms)
        while fresh.rounds < args.check_runs:  # a session that broke early
            fresh.round()
        print(f"  fresh `{command} {train.relative_to(root)}` processes, {fresh.rounds} rounds between this session's "
              f"edits")
        for way, seconds in fresh.walls.items():
            print(f"    {way:<44} {summary(seconds)}")
        if math.isnan(median):
            verdicts.append(f"  {mode}: no figure (the session broke)")
            continue
        label = "push, minus the debounce" if mode == "push" and args.debounce_ms else mode
        ratio = median / fresh.reference()
        verdicts.append(f"  {label:<28} {median * 1000:7.1f} ms ({'met' if median < 0.1 else 'MISSED'} 100 ms);  "
                        f"{ratio:.3f} of the fresh check's {fresh.reference() * 1000:.0f} ms (1/{1 / ratio:.1f}; "
                        f"{'met' if ratio <= 0.25 else 'MISSED'} 1/4)")
    print("\nagainst the goals (re-check median under 100 ms; at most 1/4 of a fresh check process, both timed in the "
          "same session):")
    print("\n".join(verdicts))
    print(f"\n  load        {_load()} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
