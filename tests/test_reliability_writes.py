"""Writes that cannot lose data: atomic replacement, refusals that keep the file, concurrent runs.

``writer.write_atomically`` writes a temporary file in the target's directory, fsyncs it, gives it
the target's permission bits and renames it over the target; it refuses a read-only file (by its
mode bits: the CI runs as root, which ignores them) and a file whose bytes are no longer the ones
the fix was computed from. These tests check each of those, failures in the middle of a write,
two ``--fix`` processes on one tree at once (as pre-commit runs hook partitions in parallel), a
file saved by someone else between read and write, and the bytes of ``--fix`` on stdin.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from tests.conftest import FIXTURES, REPO, run_cli
from tflint_perf.fixes import writer
from tflint_perf.checking.checker import Mode, process_bytes
from tflint_perf.checking.config import Settings
from tflint_perf.text.parsing import parse
from tflint_perf.text.source import SourceFile
from tflint_perf.fixes.writer import WriteError, write_atomically

FIXABLE = b"import tensorflow as tf\nds = tf.data.Dataset.range(8).map(lambda x: x)\nfor b in ds:\n    step(b)\n"
ENV = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}


def leftovers(directory: Path) -> List[str]:
    return sorted(str(p) for p in directory.rglob("*.tflint-perf"))


def fixed_bytes(data: bytes) -> bytes:
    result = process_bytes(data, "x.py", Path("x.py"), Settings(), Mode(fix=True, unsafe=True), explicit=True)
    assert result.fixed_text is not None
    return SourceFile.decode(data).encode_fixed(data, result.fixed_text)


# -- write_atomically ------------------------------------------------------------------------------
def test_replaces_the_content_and_keeps_the_mode(tmp_path):
    path = tmp_path / "train.py"
    path.write_bytes(b"old\n")
    path.chmod(0o640)
    write_atomically(path, b"new\n", b"old\n")
    assert path.read_bytes() == b"new\n"
    assert path.stat().st_mode & 0o7777 == 0o640
    assert list(tmp_path.iterdir()) == [path]


def test_writes_through_a_symlink_and_keeps_the_link(tmp_path):
    real = tmp_path / "real.py"
    real.write_bytes(b"old\n")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    write_atomically(link, b"new\n", b"old\n")
    assert link.is_symlink() and real.read_bytes() == b"new\n"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o555])
def test_a_read_only_file_is_refused_and_kept(tmp_path, mode):
    path = tmp_path / "train.py"
    path.write_bytes(b"old\n")
    path.chmod(mode)
    with pytest.raises(WriteError, match="file is read-only; the fix was not written"):
        write_atomically(path, b"new\n", b"old\n")
    assert path.read_bytes() == b"old\n" and path.stat().st_mode & 0o7777 == mode
    assert leftovers(tmp_path) == []


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path):
    path = tmp_path / "train.py"
    path.write_bytes(b"saved by the editor meanwhile\n")
    with pytest.raises(WriteError, match="file changed while it was being fixed"):
        write_atomically(path, b"fixed from stale content\n", b"what was read\n")
    assert path.read_bytes() == b"saved by the editor meanwhile\n"
    assert leftovers(tmp_path) == []


def test_a_file_deleted_since_it_was_read_is_not_recreated(tmp_path):
    with pytest.raises(WriteError, match="cannot write the fix"):
        write_atomically(tmp_path / "gone.py", b"new\n", b"old\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "step,error",
    [
        ("mkstemp", OSError(errno.ENOSPC, "No space left on device")),
        ("fsync", OSError(errno.EIO, "Input/output error")),
        ("chmod", OSError(errno.EPERM, "Operation not permitted")),
        ("replace", OSError(errno.EXDEV, "Invalid cross-device link")),
    ],
)
def test_a_failure_in_the_middle_keeps_the_original_and_leaves_nothing(tmp_path, monkeypatch, step, error):
    path = tmp_path / "train.py"
    path.write_bytes(b"old\n")

    def fail(*args, **kwargs):
        raise error

    target = writer.tempfile if step == "mkstemp" else writer.os
    monkeypatch.setattr(target, step, fail)
    with pytest.raises(WriteError, match=f"cannot write the fix: {error.strerror}"):
        write_atomically(path, b"new\n", b"old\n")
    monkeypatch.undo()
    assert path.read_bytes() == b"old\n"
    assert list(tmp_path.iterdir()) == [path]


def test_an_interrupt_in_the_middle_keeps_the_original_and_leaves_nothing(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_bytes(b"old\n")

    def interrupt(descriptor):
        raise KeyboardInterrupt

    monkeypatch.setattr(writer.os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, b"new\n", b"old\n")
    monkeypatch.undo()
    assert path.read_bytes() == b"old\n"
    assert list(tmp_path.iterdir()) == [path]


# -- through the command line ----------------------------------------------------------------------
def test_a_read_only_file_does_not_stop_the_others_from_being_fixed(tmp_path):
    (tmp_path / "a_read_only.py").write_bytes(FIXABLE)
    (tmp_path / "a_read_only.py").chmod(0o444)
    (tmp_path / "b_writable.py").write_bytes(FIXABLE)
    result = run_cli("check", "--fix", "--unsafe-fixes", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 1
    assert "a_read_only.py: error: file is read-only; the fix was not written" in result.stderr
    assert "internal error" not in result.stderr
    assert (tmp_path / "a_read_only.py").read_bytes() == FIXABLE
    assert (tmp_path / "b_writable.py").read_bytes() == fixed_bytes(FIXABLE)
    assert leftovers(tmp_path) == []


def test_a_file_saved_between_read_and_write_keeps_the_new_save(tmp_path):
    # Deterministic: the real command line, with the checker patched to save the file (as an editor
    # would) after the fix was computed and before it is written.
    path = tmp_path / "train.py"
    path.write_bytes(FIXABLE)
    saved = FIXABLE + b"# saved by the editor meanwhile\n"
    script = (
        "import sys\nfrom pathlib import Path\nimport tflint_perf.checking.checker as checker\nfrom tflint_perf.faces import cli\n"
        "compute = checker.process_bytes\n"
        "def compute_then_save(data, name, path, *args, **kwargs):\n"
        "    result = compute(data, name, path, *args, **kwargs)\n"
        f"    Path(path).write_bytes({saved!r})\n"
        "    return result\n"
        "checker.process_bytes = compute_then_save\n"
        "sys.exit(cli.main(['check', '--fix', '--unsafe-fixes', '--no-cache', '-j', '1', 'train.py']))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=ENV, capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert "train.py: error: file changed while it was being fixed; the fix was not written" in result.stderr
    assert path.read_bytes() == saved
    assert leftovers(tmp_path) == []


def _tree(root: Path) -> Dict[str, bytes]:
    """A tree of fixtures (two copies, some with CRLF or latin-1) and clean files, in two directories."""
    files: Dict[str, bytes] = {}
    for path in sorted(FIXTURES.glob("*.py")):
        data = path.read_bytes()
        files[f"a/{path.stem}.py"] = files[f"b/{path.stem}.py"] = data
        files[f"a/{path.stem}_crlf.py"] = data.replace(b"\n", b"\r\n")
        files[f"b/{path.stem}_latin1.py"] = b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + data
    for index in range(5):
        files[f"a/clean_{index}.py"] = b"import tensorflow as tf\nx = tf.constant(1)\n"
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return files


def _fix_command(*paths: str, jobs: str, cache: bool) -> List[str]:
    return [sys.executable, "-m", "tflint_perf", "check", "--fix", "--unsafe-fixes", "-j", jobs, "-q",
            *([] if cache else ["--no-cache"]), *paths]


@pytest.fixture(scope="module")
def single_process_result(tmp_path_factory) -> Dict[str, bytes]:
    reference = tmp_path_factory.mktemp("reference")
    files = _tree(reference)
    single = subprocess.run(_fix_command("a", "b", jobs="1", cache=False), cwd=reference, env=ENV, capture_output=True)
    assert single.returncode == 1 and b"internal error" not in single.stderr, single.stderr
    expected = {name: (reference / name).read_bytes() for name in files}
    assert sum(expected[name] != files[name] for name in files) >= 10, "the tree has fixes to race on"
    return expected


@pytest.mark.parametrize("jobs,cache", [("1", False), ("2", True)], ids=["serial", "pool-and-cache"])
def test_two_fix_processes_on_one_tree_never_corrupt_a_file(tmp_path, single_process_result, jobs, cache):
    refused = 0
    for round_ in range(2):
        work = tmp_path / f"round{round_}"
        _tree(work)
        # The same order in round 0 (the two race file by file), opposite orders in round 1 (they meet).
        first = subprocess.Popen(_fix_command("a", "b", jobs=jobs, cache=cache), cwd=work, env=ENV,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        order = ("a", "b") if round_ == 0 else ("b", "a")
        second = subprocess.Popen(_fix_command(*order, jobs=jobs, cache=cache), cwd=work, env=ENV,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        outputs = [process.communicate(timeout=600) for process in (first, second)]
        for process, (_, stderr) in zip((first, second), outputs):
            assert process.returncode in (0, 1), stderr
            assert b"internal error" not in stderr and b"Traceback" not in stderr, stderr
            for line in stderr.decode().splitlines():  # the only error a race may cause: a refused stale write
                if ": error:" in line:
                    assert line.endswith("file changed while it was being fixed; the fix was not written"), line
                    refused += 1
        for name, expected in single_process_result.items():
            data = (work / name).read_bytes()
            assert data == expected, f"round {round_}: {name} differs from the single-process result"
            parse(SourceFile.decode(data).text)
        assert leftovers(work) == []
    print(f"stale writes refused in the races: {refused}")


# -- --fix on stdin writes the input's own bytes -------------------------------------------------------
def _stdin_fix(data: bytes) -> subprocess.CompletedProcess:
    # A pinned version: run from this repository, `train.py` would take the TensorFlow of its pyproject.
    return subprocess.run([sys.executable, "-m", "tflint_perf", "check", "--fix", "--unsafe-fixes", "--no-cache",
                           "--target-version", "2.10", "--stdin-filename", "train.py", "-"],
                          input=data, capture_output=True, env=ENV)


@pytest.mark.parametrize(
    "data",
    [
        FIXABLE.replace(b"\n", b"\r\n"),
        b"\xef\xbb\xbf" + FIXABLE,
        b"# -*- coding: latin-1 -*-\n# caf\xe9 \xb1\r\n" + FIXABLE,
    ],
    ids=["crlf", "bom", "latin-1"],
)
def test_stdin_fix_keeps_encoding_bom_and_line_endings(data):
    result = _stdin_fix(data)
    assert result.returncode == 0, result.stderr
    assert result.stdout == fixed_bytes(data)


@pytest.mark.parametrize(
    "data",
    [
        b"# -*- coding: latin-1 -*-\n# caf\xe9\r\nimport tensorflow as tf\nx = 1\n",  # nothing to fix
        b"\xef\xbb\xbfimport tensorflow as tf\r\ndef broken(:\r\n",  # a syntax error
        b"import tensorflow as tf\nx = '\xff'\n",  # undecodable
    ],
    ids=["clean", "syntax-error", "undecodable"],
)
def test_stdin_fix_without_a_fix_echoes_the_input_byte_for_byte(data):
    assert _stdin_fix(data).stdout == data


def test_bytes_that_would_not_survive_re_encoding_are_not_written(tmp_path):
    # cp932 maps both b"\x87\x90" and b"\x81\xe0" to "≒", and encodes it back as b"\x81\xe0": writing
    # the fixed text would silently change a byte the fix never touched.
    data = b"# -*- coding: cp932 -*-\n# \x87\x90\n" + FIXABLE
    assert data.decode("cp932").encode("cp932") != data
    path = tmp_path / "japanese.py"
    path.write_bytes(data)
    result = run_cli("check", "--fix", "--unsafe-fixes", "--no-cache", str(path), cwd=tmp_path)
    assert result.returncode == 1
    assert "the file's cp932 bytes do not survive decoding and re-encoding; the fix was not written" in result.stderr
    assert path.read_bytes() == data
    assert _stdin_fix(data).stdout == data
