"""The `take5-harness` command's entry point: signals first, then the harness.

Importing the harness loads grpc and protobuf, which takes a noticeable moment. :func:`main`
installs its handlers before that, whatever the signals' inherited disposition (a script's
background jobs start with SIGINT ignored, and a stop request must never be lost): Ctrl-C or
SIGTERM at any moment ends the command with exit code 130 and one line, never a traceback.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main() -> int:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        try:
            from .harness import main as harness_main  # lazy: a Ctrl-C while grpc loads is caught
        except ImportError as error:  # the [bot] extra is not installed: one line (take5.extras)
            if (error.name or "").split(".")[0] not in ("grpc", "google"):
                raise
            print(f"take5-harness: {error}", file=sys.stderr)
            return 2
        return harness_main()
    except KeyboardInterrupt:
        print("take5-harness: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
