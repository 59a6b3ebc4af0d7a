"""Fault kinds: what a bot did wrong, as recorded in game records (docs/faults.md).

Plain strings because they go into JSON records and are read by ratings and tournaments.
"""

from __future__ import annotations

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

ALL = (TIMEOUT, CRASH, CONNECTION, ILLEGAL_CARD, ILLEGAL_ROW, PROTOCOL, ERROR, INCOMPATIBLE, RESOURCE)

FATAL = frozenset({CRASH, INCOMPATIBLE})
"""Kinds after which the bot cannot play on in this game: it forfeits at once."""
