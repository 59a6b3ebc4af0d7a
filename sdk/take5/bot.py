"""The bot runtime: subclass `Bot`, then `run(MyBot())` serves it to the referee over gRPC.

A bot only ever sees immutable `View` objects (the engine's own, rebuilt from each request by
`take5.convert`), never protobuf. The runtime keeps transport apart from the bot: it decodes the
request, calls the bot's method, checks the answer's type, and turns an exception into an error
status for the referee (a bug in a bot must cost it a fault, never hang a game)::

    from take5 import Bot, run

    class Lowest(Bot):
        name = "lowest"

        def pick_card(self, view):
            return min(view.hand)

    if __name__ == "__main__":
        run(Lowest())
"""

from __future__ import annotations

import argparse
import logging
import math
import operator
import os
import signal
import stat
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any, ClassVar

from . import __version__
from .extras import missing_extra

try:
    import grpc
except ModuleNotFoundError as error:  # the [bot] extra
    raise missing_extra("bot", "take5.bot", error) from None

from .clock import Budget, ClockKind
from .convert import (
    PROTOCOL_MAJOR,
    PROTOCOL_VERSION,
    GameOver,
    ProtocolError,
    budget_from_request,
    game_over_from_request,
    parse_version,
    view_from_proto,
)
from .game import Phase, View
from .rules import bull_heads, cheapest_row
from .v1 import bot_pb2 as pb
from .v1 import bot_pb2_grpc

LISTEN_ENV = "TAKE5_LISTEN"
"""Environment variable with the address to serve on: ``unix:/path/bot.sock`` or ``host:port``."""

log = logging.getLogger("take5.bot")


@dataclass(frozen=True)
class CallContext:
    """The call being answered: which game, and how much time the referee gives (its `budget`:
    the clock, this call's limit and the bank; docs/faults.md, "Time controls and clocks")."""

    game_id: str
    """The referee's id of the game; the same in every call of one game."""
    time_limit: float
    """Seconds this call may use, on the clock in force (``budget.clock``)."""
    started: float
    """time.monotonic() when the request arrived."""
    budget: Budget | None = None
    """The call's time as the referee gave it (None: ``time_limit`` on the wall clock)."""
    cpu_started: float = field(default_factory=time.process_time)
    """time.process_time() when the request arrived (the CPU clock counts from there)."""

    @property
    def clock(self) -> ClockKind:
        """What measures this call's time: the CPU time of the bot's process, or the wall clock."""
        return self.budget.clock if self.budget is not None else ClockKind.WALL

    @property
    def bank(self) -> float:
        """Seconds in the game's bank for this decision, its increment included (without a bank:
        this call's limit). What the call does not use stays there for later decisions."""
        if self.budget is None or self.budget.bank is None:
            return self.time_limit
        return self.budget.bank

    @property
    def deadline(self) -> float:
        """time.monotonic() by which the answer must be sent at the latest (under the CPU clock:
        its wall-clock cap)."""
        wall = self.budget.wall_limit if self.budget is not None else self.time_limit
        return self.started + wall

    def used(self) -> float:
        """Seconds this call has used so far, on its clock."""
        if self.clock is ClockKind.CPU:
            return time.process_time() - self.cpu_started
        return time.monotonic() - self.started

    def time_left(self) -> float:
        """Seconds this call may still use: its limit less what it used on its clock, and never
        more than is left of its wall-clock cap (the network takes a little: keep a margin)."""
        left = self.time_limit - self.used()
        if self.clock is ClockKind.CPU:
            left = min(left, self.deadline - time.monotonic())
        return left


class Bot:
    """Base class of a bot: override `pick_card`, and any of the optional methods.

    The runtime calls one method at a time. Inside a call, `self.context` tells the game id and the
    time left (`self.time_left()`). A bot may keep state between calls, but every view already holds
    everything its seat may know (docs/rules.md section 8), so it need not.
    """

    name: ClassVar[str] = ""
    """Shown in standings; empty: the referee uses the bot's folder name."""
    version: ClassVar[str] = "0"
    """Your bot's version as its handshake gives it: in the game records and on its site page."""
    author: ClassVar[str] = ""
    """Who wrote it, shown on the bot's page of the published site."""

    context: CallContext | None = None
    """The call being answered (set by the runtime and the harness before each call)."""

    def pick_card(self, view: View) -> int:
        """A card of `view.hand` to play this turn."""
        raise NotImplementedError(f"{type(self).__name__} must define pick_card(view)")

    def choose_row(self, view: View) -> int:
        """The row (0..3) to take because `view.card` is lower than every row's end.

        Default: the row with the fewest bull heads (the referee's default move too).
        """
        return cheapest_row(view.rows)

    def draft_card(self, view: View) -> int:
        """Professional variant: a card of `view.pool` to take into the hand.

        Default: the card with the most bull heads (it then hurts whoever takes its row, not you),
        the lowest of those.
        """
        return min(view.pool, key=lambda card: (-bull_heads(card), card))

    def game_over(self, result: GameOver) -> None:
        """Called when a game ends (for bots that learn); the default does nothing."""

    def time_left(self) -> float:
        """Seconds the current call may still use (infinite outside a call).

        It follows the time control: with a bank it is what this decision may draw from it (the
        whole bank, or the cap when lower), less what the call used so far on the clock in force
        (CPU time of the bot's process under the CPU clock). A bot that wants to save time for
        later decisions reads ``self.context.bank`` and spends only part of it."""
        return self.context.time_left() if self.context is not None else math.inf


def bot_name(bot: object) -> str:
    """The name a bot gives itself, else its class name."""
    return getattr(bot, "name", "") or type(bot).__name__


def unique_names(names: Sequence[str], default: str = "bot") -> list[str]:
    """Names made unique in their order: the second "random" is "random#2", the third
    "random#3" (empty names are `default`). The referee labels seats so."""
    seen: dict[str, int] = {}
    taken: set[str] = set()
    out = []
    for name in names:
        base = name or default
        count = seen.get(base, 0) + 1
        label = base if count == 1 else f"{base}#{count}"
        while label in taken:  # a bot that calls itself "random#2" beside two randoms
            count += 1
            label = f"{base}#{count}"
        seen[base] = count
        taken.add(label)
        out.append(label)
    return out


def sdk_version() -> str:
    """This SDK as a bot's handshake names it (``take5-python 1.2.3``)."""
    return f"take5-python {__version__}"


# -- the gRPC service --------------------------------------------------------------------------


class _Servicer(bot_pb2_grpc.BotServicer):
    """Decodes requests, asks the bot, encodes answers; exceptions become error statuses."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.lock = threading.Lock()  # one call of the bot at a time, whatever the thread pool does
        self.in_flight = 0

    def _call(
        self,
        context: grpc.ServicerContext,
        game_id: str,
        budget: Budget | None,
        method: Callable[..., Any],
        *args: Any,
    ) -> Any:
        """Ask the bot, one call at a time; `budget` None: a call without one (GameOver: its
        time_limit_ms, or the gRPC deadline)."""
        with self.lock:
            remaining = context.time_remaining()
            if remaining is not None and remaining <= 0:
                # The referee has given up on this call already (it waited behind a slow one).
                context.abort(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    "the deadline passed before the bot was asked",
                )
            if budget is None:
                budget = Budget(remaining if remaining is not None else math.inf)
            self.in_flight += 1
            try:
                self.bot.context = CallContext(
                    game_id, budget.limit, time.monotonic(), budget, time.process_time()
                )
                return method(*args)
            except Exception as error:
                log.exception(
                    "%s.%s raised", type(self.bot).__name__, getattr(method, "__name__", "?")
                )
                context.abort(
                    grpc.StatusCode.INTERNAL, f"the bot raised {type(error).__name__}: {error}"
                )
            finally:
                self.bot.context = None
                self.in_flight -= 1

    def Handshake(
        self, request: pb.HandshakeRequest, context: grpc.ServicerContext
    ) -> pb.HandshakeResponse:
        try:
            major, _ = parse_version(request.protocol_version)
        except ProtocolError:
            major = -1
        if major != PROTOCOL_MAJOR:
            log.warning(
                "the referee speaks protocol %r, this SDK speaks %s: the referee will probably "
                "refuse the bot",
                request.protocol_version,
                PROTOCOL_VERSION,
            )
        bot = self.bot
        return pb.HandshakeResponse(
            name=getattr(bot, "name", "") or "",
            version=str(getattr(bot, "version", "") or ""),
            author=str(getattr(bot, "author", "") or ""),
            sdk=sdk_version(),
            protocol_version=PROTOCOL_VERSION,
        )

    def PickCard(
        self, request: pb.PickCardRequest, context: grpc.ServicerContext
    ) -> pb.PickCardResponse:
        view = view_from_proto(request.view)
        budget = budget_from_request(request, context.time_remaining())
        if view.phase is Phase.DRAFT:
            card = self._call(context, request.game_id, budget, self.bot.draft_card, view)
            return pb.PickCardResponse(card=_answer(card, "draft_card", view.pool, context))
        card = self._call(context, request.game_id, budget, self.bot.pick_card, view)
        return pb.PickCardResponse(card=_answer(card, "pick_card", view.hand, context))

    def ChooseRow(
        self, request: pb.ChooseRowRequest, context: grpc.ServicerContext
    ) -> pb.ChooseRowResponse:
        view = view_from_proto(request.view, revealed=request.revealed, card=request.card)
        budget = budget_from_request(request, context.time_remaining())
        row = self._call(context, request.game_id, budget, self.bot.choose_row, view)
        return pb.ChooseRowResponse(row=_answer(row, "choose_row", range(len(view.rows)), context))

    def GameOver(
        self, request: pb.GameOverRequest, context: grpc.ServicerContext
    ) -> pb.GameOverResponse:
        result = game_over_from_request(request)
        budget = Budget(request.time_limit_ms / 1000) if request.time_limit_ms else None
        self._call(context, request.game_id, budget, self.bot.game_over, result)
        return pb.GameOverResponse()


def answer_problem(method: str, answer: Any, allowed: Sequence[int] | range) -> str | None:
    """What is wrong with a bot's answer, said so that its author can fix it; None if it is legal.

    One text for every place that judges an answer (the runtime's log and error status, which the
    referee shows as the fault's detail, and the harness), so an author never reads two stories.
    `method` is "pick_card", "draft_card" or "choose_row"; `allowed` the hand, the pool or the rows.
    """
    if answer is None:
        return f"{method} returned None: did you forget `return`?"
    if isinstance(answer, bool) or not _is_index(answer):
        kind = type(answer).__name__
        text = f"{method} returned {_short(answer)}, a {kind}, not an int"
        whole = _as_whole(answer)
        if whole is not None:
            text += f": return {whole}, not {_short(answer)}"
        return text
    number = operator.index(answer)
    if number in allowed:
        return None
    if isinstance(allowed, range):
        text = f"{method} returned {number}, not a row number {allowed.start}..{allowed.stop - 1}"
        return text + (" (rows are numbered from 0)" if number == allowed.stop else "")
    where = "the pool" if method == "draft_card" else "your hand"
    return f"{method} returned {number}, which is not in {where} {list(allowed)}"


def _is_index(value: Any) -> bool:
    try:
        operator.index(value)
    except TypeError:
        return False
    return True


def _as_whole(value: Any) -> int | None:
    """The int a beginner meant by "11" or 11.0, if any."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _answer(
    value: Any, method: str, allowed: Sequence[int] | range, context: grpc.ServicerContext
) -> int:
    """The answer as a protocol integer. A wrong type is the bot's error (an error status with the
    reason); a whole number that is not legal goes to the referee, which judges it (a fault), and
    the author reads why in the bot's log."""
    problem = answer_problem(method, value, allowed)
    if problem is not None and not _is_index(value):
        log.warning("%s", problem)
        context.abort(grpc.StatusCode.INTERNAL, problem)
    number = operator.index(value)
    if not 0 <= number < 2**32:
        context.abort(
            grpc.StatusCode.INTERNAL, f"{method} returned {number}, which is out of range"
        )
    if problem is not None:
        log.warning("%s: the referee counts a fault", problem)
    return number


# -- serving -----------------------------------------------------------------------------------


def _unix_path(address: str) -> str | None:
    if address.startswith("unix://"):
        return address[len("unix://") :]
    if address.startswith("unix:"):
        return address[len("unix:") :]
    return None


class BotServer:
    """A bot served on one address; `stop()` ends it. Made by `serve`."""

    def __init__(self, server: grpc.Server, servicer: _Servicer, address: str, port: int) -> None:
        self.server = server
        self.servicer = servicer
        self.address = address
        self.port = port
        """The TCP port bound (useful with ``host:0``); 0 for a Unix socket."""

    def stop(self, grace: float = 1.0) -> bool:
        """Stop serving; True when no call of the bot is still running."""
        self.server.stop(grace).wait(grace + 1.0)
        path = _unix_path(self.address)
        if path:
            try:
                os.unlink(path)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        while self.servicer.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self.servicer.in_flight


def serve(bot: Bot, address: str, *, max_message: int = 4 * 1024 * 1024) -> BotServer:
    """Start serving `bot` on `address` (``unix:/path`` or ``host:port``) and return at once."""
    path = _unix_path(address)
    if path:
        if not os.path.isabs(path):
            path = os.path.abspath(path)
            address = f"unix:{path}"
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                os.unlink(path)  # a stale socket of an earlier run
        except FileNotFoundError:
            pass
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="take5-bot"),
        options=[("grpc.max_receive_message_length", max_message), ("grpc.so_reuseport", 0)],
    )
    servicer = _Servicer(bot)
    bot_pb2_grpc.add_BotServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as error:
        raise OSError(f"cannot listen on {address}: {error}") from None
    server.start()
    if not path and address.endswith(":0"):
        address = f"{address[:-2]}:{port}"  # the port the system chose
    return BotServer(server, servicer, address, 0 if path else port)


def listen_address(argv: Sequence[str] | None = None) -> str | None:
    """The address from ``--listen ADDRESS`` or the TAKE5_LISTEN environment variable."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--listen")
    known, _ = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    return known.listen or os.environ.get(LISTEN_ENV) or None


def run(
    bot: Bot | type[Bot], *, listen: str | None = None, argv: Sequence[str] | None = None
) -> None:
    """Serve `bot` until SIGTERM (or Ctrl-C), logging to stderr; the referee starts it this way.

    The address comes from `listen`, else ``--listen`` in `argv` (default sys.argv), else the
    TAKE5_LISTEN environment variable. Exits with status 2 when there is none.
    """
    if isinstance(bot, type):
        bot = bot()
    if not logging.getLogger().handlers:
        logging.basicConfig(
            stream=sys.stderr,
            level=os.environ.get("TAKE5_LOG_LEVEL", "INFO").upper(),
            # No time stamps: the referee keeps each line with the turn it was written in, and a
            # deterministic bot then gives byte-identical records for the same seed.
            format="%(levelname)s %(name)s: %(message)s",
        )
    address = listen or listen_address(argv)
    if not address:
        print(
            f"no address to serve on: set {LISTEN_ENV} or pass --listen "
            "(for example --listen unix:/tmp/bot.sock or --listen localhost:50051). "
            "To try a bot without a referee: take5-harness bot.py",
            file=sys.stderr,
        )
        raise SystemExit(2)
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server = serve(bot, address)
    except OSError as error:
        log.error("%s", error)
        raise SystemExit(1) from None
    log.info(
        "%s %s (%s) serving on %s",
        bot_name(bot),
        getattr(bot, "version", ""),
        sdk_version(),
        server.address,
    )
    try:
        while not stop.wait(0.5):
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        clean = server.stop(grace=0.5)
        log.info("stopped")
        if not clean:
            # A call is stuck inside the bot; its thread would keep the process alive forever.
            log.warning("a call of the bot was still running; exiting anyway")
            logging.shutdown()
            os._exit(0)


__all__ = [
    "LISTEN_ENV",
    "Bot",
    "BotServer",
    "CallContext",
    "GameOver",
    "answer_problem",
    "bot_name",
    "listen_address",
    "run",
    "sdk_version",
    "serve",
    "unique_names",
]
