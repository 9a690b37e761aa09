"""Writing a fixed file so that no failure can lose the user's code."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class WriteError(Exception):
    """The fixed file was not written; the original is untouched. The message says why."""


def write_atomically(path: Path, data: bytes, expected: bytes) -> None:
    """Replace ``path`` with ``data`` via a temporary file in the same directory and a rename.

    Refuses when the file is read-only or no longer holds ``expected`` (someone changed it since it
    was read), keeps the file's permission bits, and fsyncs before the rename, so a crash leaves
    either the old file or the new one, never a mix.
    """
    try:
        info = path.stat()
    except OSError as error:
        raise WriteError(f"cannot write the fix: {error.strerror or error}") from None
    if not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise WriteError("file is read-only; the fix was not written")
    try:
        if path.read_bytes() != expected:
            raise WriteError("file changed while it was being fixed; the fix was not written")
    except OSError as error:
        raise WriteError(f"cannot write the fix: {error.strerror or error}") from None
    target = path.resolve()  # write through symlinks, keep the link
    temporary = None
    try:
        # In the target's directory, so that the rename cannot cross file systems.
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tflint-perf")
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, stat.S_IMODE(info.st_mode))
        os.replace(temporary, target)
        temporary = None
    except OSError as error:
        raise WriteError(f"cannot write the fix: {error.strerror or error}") from None
    finally:
        if temporary is not None:  # never leave a temporary file behind, whatever went wrong
            try:
                os.unlink(temporary)
            except OSError:
                pass
