"""`python3 -m referee.cli`: the `referee` command, which lives in the app layer (arena/cli.py).

Kept so that scripts and tests calling ``python3 -m referee.cli`` go on working; the one place in
referee/ that imports the app layer (tests/test_architecture.py allows exactly this file).
"""

import signal


def _quiet_interrupt(signum, frame):  # type: ignore[no-untyped-def]
    raise SystemExit(130)  # Ctrl-C while the command loads: no traceback (arena/cli.py takes over)


if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _quiet_interrupt)

from arena.cli import main

if __name__ == "__main__":
    main()
