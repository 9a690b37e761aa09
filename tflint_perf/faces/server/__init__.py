"""``tflint-perf server``: the language server (LSP over stdio) that editors start.

``protocol.py`` wires the messages; ``documents.py`` keeps the open documents as overlays on the
project's long-lived workspace and checks them the command line's way; ``convert.py`` turns places
and diagnostics into the protocol's; ``actions.py`` (quick fixes, noqa, fix all), ``hover.py``,
``notebooks.py`` (notebook documents as the checker reads them) and ``settings.py`` (the editor's
settings over the project's) do one thing each. pygls is imported only when the server starts.
"""

from __future__ import annotations

import sys


def run() -> int:
    """Serve one editor over stdin/stdout until it says ``exit``: 0 after ``shutdown``, else 1; 2 when
    pygls is not installed."""
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as missing:
        print(f"tflint-perf: error: the language server needs pygls and lsprotocol ({missing}); "
              "install them with: pip install 'pygls>=2,<3' lsprotocol", file=sys.stderr)
        return 2
    from tflint_perf.faces.server.protocol import build_server

    server = build_server()
    server.start_io()
    return 0 if server.shut_down else 1
