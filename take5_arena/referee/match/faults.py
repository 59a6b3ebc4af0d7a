"""Fault kinds: what a bot did wrong, as recorded in game records (docs/faults.md).

:class:`FaultKind` is a ``str`` enum, so a kind is its own JSON value (records read the same as
when kinds were plain strings) and compares equal to that string; the module-level names
(``faults.TIMEOUT``, ...) are kept for the code that used them.
"""

from __future__ import annotations

import signal

from ..kinds import StrEnum


class FaultKind(StrEnum):
    """The kinds of fault a bot can commit (the ``kind`` field of a fault in a record)."""

    TIMEOUT = "timeout"
    """No answer before the deadline (also: the bot did not come up within the start timeout)."""
    CRASH = "crash"
    """The bot's process exited (during the match, or right after it was started)."""
    CONNECTION = "connection"
    """The bot could not be reached (refused or lost connection) while its process, if any, runs."""
    ILLEGAL_CARD = "illegal-card"
    """PickCard answered a card that is not in the hand (draft: not in the pool)."""
    ILLEGAL_ROW = "illegal-row"
    """ChooseRow answered a row outside 0..3."""
    PROTOCOL = "protocol"
    """The answer did not decode, lacked its field, or the method is not implemented."""
    ERROR = "error"
    """The bot answered with an error status (an exception inside the bot)."""
    INCOMPATIBLE = "incompatible"
    """The handshake named a protocol major version the referee does not speak."""
    RESOURCE = "resource"
    """The answer was larger than the referee accepts, or the bot ran out of a sandbox limit."""


TIMEOUT = FaultKind.TIMEOUT
CRASH = FaultKind.CRASH
CONNECTION = FaultKind.CONNECTION
ILLEGAL_CARD = FaultKind.ILLEGAL_CARD
ILLEGAL_ROW = FaultKind.ILLEGAL_ROW
PROTOCOL = FaultKind.PROTOCOL
ERROR = FaultKind.ERROR
INCOMPATIBLE = FaultKind.INCOMPATIBLE
RESOURCE = FaultKind.RESOURCE

ALL = tuple(FaultKind)

FATAL = frozenset({FaultKind.CRASH, FaultKind.INCOMPATIBLE})
"""Kinds after which the bot cannot play on in this game: it forfeits at once."""


def describe_exit(status: int) -> str:
    """'exited with status 3' or 'was killed by SIGKILL' (after "the bot ..."): the detail of a
    crash fault."""
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"was killed by {name}"
    return f"exited with status {status}"
