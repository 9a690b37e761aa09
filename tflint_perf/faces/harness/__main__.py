"""``python -m tflint_perf.faces.harness bench|verify ...``: the harness commands without the linter's CLI."""

import argparse
import sys
from typing import Optional, Sequence

from tflint_perf.faces.harness.cli import register


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tflint_perf.faces.harness")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
