"""The `referee` command's entry point: signals first, then the command line.

The first thing the project runs when `referee` (or ``python3 -m take5_arena``) starts is
:func:`main` here, in a module that imports nothing but :mod:`signal` and :mod:`sys` (both already
loaded by the interpreter). It makes SIGINT and SIGTERM end the start-up quietly with exit code 130,
and only then imports the command line, whose loading takes a noticeable moment. Once it is loaded,
both signals become :class:`KeyboardInterrupt`, so that they unwind through the code that stops
bots and closes stores, and :class:`take5_arena.cli.main.ArenaGroup` prints one line for it; a
command with its own SIGTERM semantics (serve, tournament run) installs them inside. The command
line never imports this module (no import loop), so it is here that the handlers change.

The handlers are installed whatever the signals' inherited disposition: a shell starts the
background jobs of a script with SIGINT ignored, and CI runners start their commands that way, but a
stop request sent to `referee` must never be lost. Importing :mod:`take5_arena.cli.main` (as tests
and embedding programs do) installs nothing.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType


def quiet_exit(signum: int, frame: FrameType | None) -> None:
    """The start-up handler: nothing to clean up yet, so exit at once and without a traceback."""
    raise SystemExit(130)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, quiet_exit)
    # lazy: the command line loads only once the handlers are in place
    from take5_arena.cli.main import main as cli

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    cli(prog_name="referee")


if __name__ == "__main__":
    main()
    sys.exit(0)
