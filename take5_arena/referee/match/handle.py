"""What the match needs of a bot: a :class:`BotHandle` (its process) and a :class:`BotConnection`
(the calls).

The match layer only needs an address to connect to, a way to stop the bot, and, when a call fails,
to know whether the bot is still alive (a crash and a refused connection are different faults).
Local processes (take5_arena/referee/match/local.py), Docker containers
(take5_arena/referee/sandbox/), bots someone else runs (:class:`AddressHandle`) and bots in the
referee's own process (take5_arena/referee/match/memory.py, for tests) all fit behind this
interface.

Both are :class:`typing.Protocol` classes. The four methods every handle must have are abstract;
the others have a default that says "nothing special" (a handle that starts the bot once, connects
over gRPC, keeps no output). A launcher that knows more subclasses :class:`BotHandle` and overrides
them (take5_arena/referee/sandbox/launcher.py's ``DockerBot`` overrides them all).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Protocol

from take5.v1 import bot_pb2 as pb

from .faults import FaultKind
from .remote import BotInfo, RemoteBot

Spent = Callable[[], "str | None"]
"""Asked while a bot starts: a detail once it has used up its start allowance (else None)."""


class BotConnection(Protocol):
    """The calls the referee makes to one bot (``RemoteBot``: gRPC; or in memory).

    Requests arrive encoded (take5.convert) and answers leave as plain numbers; every way a call
    can fail raises ``CallFailedError`` with a fault kind (take5_arena/referee/match/remote.py)."""

    def wait_ready(
        self,
        timeout: float,
        exit_status: Callable[[], int | None] | None = None,
        spent: Spent | None = None,
    ) -> None:
        """Return once the bot accepts calls (see ``RemoteBot.wait_ready``)."""
        ...

    def handshake(self, timeout: float, clock: pb.Clock | None = None) -> BotInfo:
        """Who the bot says it is (told the match's time control, `clock`)."""
        ...

    def pick_card_future(self, request: bytes, timeout: float) -> Future[bytes]:
        """Send an encoded PickCardRequest without waiting for the answer."""
        ...

    def card_from(self, future: Future[bytes], timeout: float) -> int:
        """The card of a future made by :meth:`pick_card_future`."""
        ...

    def choose_row(self, request: bytes, timeout: float) -> int:
        """Send an encoded ChooseRowRequest and wait for the row."""
        ...

    def choose_row_future(self, request: bytes, timeout: float) -> Future[bytes]:
        """Send an encoded ChooseRowRequest without waiting for the answer."""
        ...

    def row_from(self, future: Future[bytes], timeout: float) -> int:
        """The row of a future made by :meth:`choose_row_future`."""
        ...

    def game_over_future(self, request: bytes, timeout: float) -> Future[bytes]:
        """Tell the bot how the game ended; the answer does not matter."""
        ...

    def close(self) -> None:
        """Drop the connection; a call still waiting ends at once."""
        ...


class BotHandle(Protocol):
    """One bot the referee runs (or merely reaches)."""

    label: str
    """For messages: where the bot comes from."""

    per_game: bool = False
    """True: the match starts the bot afresh before every game, so that nothing carries over from
    one game to the next (Docker)."""

    def start(self) -> str:
        """Start the bot (again, after it exited) and return its address at once.

        The bot may need a moment before the address answers; the caller waits for it and checks
        `exit_status()` meanwhile.
        """
        ...

    def stop(self, grace: float = 1.0) -> None:
        """Ask the bot to stop (SIGTERM), kill it after `grace` seconds; idempotent."""
        ...

    def exit_status(self) -> int | None:
        """The exit status once the bot's process has ended (negative: killed by that signal), else
        None."""
        ...

    def stderr_tail(self, limit: int = 2000) -> str:
        """The end of what the bot wrote to stderr and stdout, for diagnosing a fault."""
        ...

    # -- with defaults ---------------------------------------------------------------------------

    def ready(self, timeout: float, spent: Spent | None = None) -> str | None:
        """Wait until the bot serves and return the address to connect to, or raise
        ``CallFailedError`` (timeout, crash, resource). ``timeout`` is the wall-clock limit;
        ``spent``, when given, says (a detail) that the bot used up its start allowance on the CPU
        clock (take5_arena/referee/match/clocks.py). None (the default): the launcher knows no
        better than the connection, which waits for the address :meth:`start` gave."""
        return None

    cpu_clock: bool = False
    """Whether :meth:`cpu_time` can measure this bot: the CPU clock's precondition."""

    def cpu_time(self) -> float | None:
        """CPU seconds the bot has used so far: every process of it (threads, children; in Docker
        its container's cgroup); only differences of two readings count. None (the default):
        not measurable now, and the wall clock measures the bot."""
        return None

    def run_waits(self) -> dict[int, int] | None:
        """How long each of the bot's threads has waited for a CPU so far (nanoseconds by thread
        id: take5_arena/referee/match/runqueue.py), to tell a bot the host starved from one that
        slept. None (the default): not readable, and a wall-clock cap is the bot's timeout."""
        return None

    def meters(self) -> tuple[float | None, dict[int, int] | None]:
        """:meth:`cpu_time` and :meth:`run_waits` read together, at a decision's start: a handle
        that finds both by one walk (a local bot's process tree) reads them once."""
        return self.cpu_time(), self.run_waits()

    def connect(self, address: str) -> BotConnection:
        """The connection to the bot at ``address`` (default: gRPC)."""
        return RemoteBot(address)

    def serve_game(self, game_id: str, deal: int) -> bool | None:
        """A `per_game` bot's next game is `game_id`, of `deal` (its seed): whether the bot must
        be started afresh for it. A handle whose process may play several deals (never one twice:
        duplicate deals rotate the hands, so a deal remembered is every opponent's hand) answers
        False for a deal its process has not seen. None (the default): afresh after any game."""
        return None

    def prefetch(self, game_id: str) -> None:
        """Prepare the next game's start while this game plays (default: nothing to prepare)."""
        return None

    def exit_fault(self) -> tuple[FaultKind, str] | None:
        """The fault a bot that ended amounts to, when the launcher knows its cause (Docker:
        OOM-killed is a resource fault); None (the default): a crash with its exit status."""
        return None

    def take_output(self) -> str:
        """What the bot wrote since the last call (kept per turn in the record,
        take5_arena/referee/match/botlogs.py); default: nothing is kept."""
        return ""


class AddressHandle(BotHandle):
    """A bot that runs elsewhere: the referee connects to it and never starts or stops it."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.label = address

    def start(self) -> str:
        return self.address

    def stop(self, grace: float = 1.0) -> None:
        return None

    def exit_status(self) -> int | None:
        return None

    def stderr_tail(self, limit: int = 2000) -> str:
        return ""


__all__ = ["AddressHandle", "BotConnection", "BotHandle", "Spent"]
