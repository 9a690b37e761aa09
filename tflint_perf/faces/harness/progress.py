"""The progress display on stderr while benchmarks run: one updating line on a terminal, plain
lines elsewhere (CI logs)."""

from __future__ import annotations

import shutil
import sys
from typing import Optional, TextIO


class Progress:
    def __init__(self, total: int, stream: Optional[TextIO] = None) -> None:
        self.total = total
        self.index = 0
        self.label = ""
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()

    def start(self, label: str) -> None:
        self.index += 1
        self.label = label
        self.update("starting (importing TensorFlow)")

    def update(self, message: str) -> None:
        line = f"[{self.index}/{self.total}] {self.label}: {message}"
        if self.live:
            width = shutil.get_terminal_size((100, 20)).columns - 1
            self.stream.write("\r\033[K" + line[:width])
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.live:
            self.stream.write("\r\033[K")
            self.stream.flush()
