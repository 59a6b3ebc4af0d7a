"""A bot during a match: its handle (the process), its connection (the calls), what it said about
itself, and whether it can still play.

Starting, connecting, restarting and explaining a lost connection are here; what a bot is asked
during a game is take5_arena/referee/match/turns.py's, and the order of it all is the match's
(take5_arena/referee/match/play.py).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import cast

from take5.bot import unique_names as take5_unique_names
from take5.convert import time_control_to_proto
from take5.record import SeatRecord

from .. import defaults
from . import faults
from .botref import BotRef
from .clocks import StartClock
from .config import MatchConfig
from .faults import describe_exit
from .handle import BotConnection, BotHandle
from .remote import BotInfo, CallFailedError
from .seat_digest import seat_digest


class Entrant:
    """A bot during the match: its process (handle), its connection, and whether it can play."""

    def __init__(self, ref: BotRef, handle: BotHandle) -> None:
        self.ref = ref
        self.handle = handle
        self.remote: BotConnection | None = None
        self.address = ""
        self.info = BotInfo()
        self.name = ref.default_name
        self.out: CallFailedError | None = None
        """Why the bot cannot play for the rest of the match (None: it can)."""
        self.played = False
        """Whether a game was played since the bot was (re)started (see `Match._renew`)."""
        self.output_kept = 0
        """Bytes of its output kept in this match's records (``MatchConfig.output_budget``)."""

    def spawn(self) -> None:
        """Start the process; in the caller's thread (the kernel ties the bot's life to it)."""
        if self.remote is not None:
            self.remote.close()
            self.remote = None
        self.played = False
        try:
            self.address = self.handle.start()
        except OSError as error:
            self.out = CallFailedError(
                faults.CRASH, f"the bot could not be started: {error.strerror or error}"
            )

    def connect(self, config: MatchConfig) -> None:
        """Wait until the bot serves, then shake hands; failures set `out`."""
        if self.out is not None:
            return
        # The start allowance: CPU time where the handle measures it, within a wall-clock cap.
        start = StartClock(config.calls, self.handle)
        try:
            # A launcher that knows better when its bot serves (Docker) waits for it itself and
            # gives the address to connect to only then.
            address = self.handle.ready(start.wall, start.spent)
        except CallFailedError as failed:
            self.out = failed
            return
        if address is not None:
            self.address = address
        remote = self.handle.connect(self.address)
        try:
            launched = self.ref.kind != "address"
            remote.wait_ready(
                start.wall, self.handle.exit_status if launched else None, start.spent
            )
            clock = time_control_to_proto(config.calls.control, start.kind)
            self.info = remote.handshake(config.handshake_timeout, clock)
        except CallFailedError as failed:
            remote.close()
            self.out = self.explain(failed)
            return
        self.remote = remote
        if self.info.name:
            self.name = self.info.name

    def explain(self, failed: CallFailedError, wait: float = defaults.EXIT_WAIT) -> CallFailedError:
        """A lost connection to a bot whose process has ended is a crash."""
        if failed.kind not in (faults.CONNECTION, faults.CRASH):
            return failed
        deadline = time.monotonic() + wait
        while True:
            status = self.handle.exit_status()
            if status is not None:
                if failed.kind == faults.CRASH:
                    return failed
                known = self.handle.exit_fault()  # the launcher may know the cause (OOM-killed)
                if known is not None:
                    return CallFailedError(*known)
                return CallFailedError(faults.CRASH, f"the bot {describe_exit(status)}")
            if time.monotonic() >= deadline:
                return failed
            time.sleep(0.02)

    @property
    def dead(self) -> bool:
        return self.handle.exit_status() is not None

    def stop(self, grace: float) -> None:
        if self.remote is not None:
            self.remote.close()
            self.remote = None
        self.handle.stop(grace)

    def seat_record(self) -> SeatRecord:
        """This bot's ``seats[i]`` in a record (docs/record-format.md)."""
        seat = {
            "name": self.name,
            "bot": self.ref.text,
            "kind": self.ref.kind,
            **self.info.fields(),
            **seat_digest(self.ref),
        }
        return cast(SeatRecord, seat)


def unique_names(entrants: Sequence[Entrant]) -> None:
    """Give bots that call themselves the same a ``#2``, ``#3`` suffix (names are unique in a
    game; the SDK's rule, take5.bot.unique_names, which the harness can share)."""
    for entrant, name in zip(entrants, take5_unique_names([e.name for e in entrants])):
        entrant.name = name


__all__ = ["Entrant", "unique_names"]
