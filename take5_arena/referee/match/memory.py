"""Bots in the referee's own process: a :class:`BotHandle` that plays a take5 ``Bot`` (or a plain
function of a ``View``) without gRPC, for fast unit tests of the match and the table loops.

Everything above the transport is the real thing: the match encodes each request as it would for
a remote bot (take5.convert), the bot sees the ``View`` the SDK's runtime would build from it, and
its answer comes back encoded and is decoded and judged by the referee's own code. So a bot here
commits the same faults as over gRPC: an exception is an ``error`` fault, an answer that is not a
whole number is an ``error`` fault with the SDK's explanation, a card not in the hand is an
``illegal-card`` fault. What is missing is the process: the bot never crashes or hangs on its own,
and a limit is only checked once the call returned (a call over its limit is a ``timeout`` fault,
but the match waits for it). Its CPU clock is the CPU time of the calling thread during its calls.

    refs, launcher = in_memory([LowestBot(), lambda view: max(view.hand)])
    with Match(refs, MatchConfig(games=2), launcher=launcher) as match:
        result = match.play()
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from take5 import Phase, View
from take5.bot import Bot, CallContext, answer_problem, bot_name, sdk_version
from take5.clock import Budget
from take5.convert import (
    PROTOCOL_VERSION,
    budget_from_request,
    game_over_from_request,
    view_from_proto,
)
from take5.v1 import bot_pb2 as pb

from . import faults
from .botref import BotRef
from .handle import BotConnection, BotHandle
from .remote import BotInfo, CallFailedError, card_from, row_from
from .sanitize import clean_field

Strategy = Callable[[View], int]
"""A bot as a function: the card to play (or to draft) for a view."""
Cost = Callable[[str, str], float]
"""The CPU seconds a call is said to cost, from its method ("PickCard", ...) and game id."""


class _FunctionBot(Bot):
    """A function as a bot: it picks and drafts; rows are chosen by the SDK's default."""

    def __init__(self, strategy: Strategy, name: str) -> None:
        self.strategy = strategy
        self.label = name

    def pick_card(self, view: View) -> int:
        return self.strategy(view)

    def draft_card(self, view: View) -> int:
        return self.strategy(view)


class InMemoryBot(BotHandle):
    """A bot played in this process (see the module text)."""

    def __init__(self, bot: Bot | Strategy, *, name: str = "", cost: Cost | None = None) -> None:
        self.cost = cost
        """CPU seconds each call is said to cost, instead of the measured ones: a test of time
        controls then needs no real work and no timing (None: measured)."""
        if isinstance(bot, Bot):
            self.bot = bot
            self.name = name or bot_name(bot)
        else:
            self.name = name or getattr(bot, "__name__", "") or "function"
            self.bot = _FunctionBot(bot, self.name)
        self.label = f"memory:{self.name}"
        self.starts = 0
        self.running = False
        self.cpu = 0.0
        """CPU seconds of this thread spent in the bot's calls so far (its CPU clock)."""

    cpu_clock = True

    def cpu_time(self) -> float | None:
        return self.cpu

    def start(self) -> str:
        self.starts += 1
        self.running = True
        return self.label

    def connect(self, address: str) -> BotConnection:
        return _Connection(self)

    def stop(self, grace: float = 1.0) -> None:
        self.running = False

    def exit_status(self) -> int | None:
        return None

    def stderr_tail(self, limit: int = 2000) -> str:
        return ""


class _Connection:
    """The calls of an :class:`InMemoryBot`: decoded, answered and encoded in the caller's
    thread."""

    def __init__(self, handle: InMemoryBot) -> None:
        self.handle = handle
        self.bot = handle.bot

    def wait_ready(
        self,
        timeout: float,
        exit_status: Callable[[], int | None] | None = None,
        spent: Callable[[], str | None] | None = None,
    ) -> None:
        return None

    def handshake(self, timeout: float, clock: pb.Clock | None = None) -> BotInfo:
        bot = self.bot
        return BotInfo(
            name=clean_field(bot.name or self.handle.name),
            version=clean_field(str(bot.version or "")),
            author=clean_field(str(bot.author or "")),
            sdk=clean_field(f"{sdk_version()} (in memory)"),
            protocol_version=PROTOCOL_VERSION,
        )

    def _ask(self, method: str, game_id: str, budget: Budget, call: Callable[[], Any]) -> Any:
        """Run one of the bot's methods as the SDK's runtime would; CallFailedError for what the
        referee would see as a failed call (its time is the referee's to judge)."""
        cpu = time.thread_time()
        self.bot.context = CallContext(game_id, budget.limit, time.monotonic(), budget)
        try:
            answer = call()
        except Exception as error:  # noqa: BLE001 - the bot's exception is its fault, as over gRPC
            raise CallFailedError(
                faults.ERROR,
                clean_field(
                    f"{method}: INTERNAL: the bot raised {type(error).__name__}: {error}", 300
                ),
            ) from None
        finally:
            self.bot.context = None
            cost = self.handle.cost
            self.handle.cpu += time.thread_time() - cpu if cost is None else cost(method, game_id)
        return answer

    def _number(self, method: str, name: str, answer: Any, allowed: Sequence[int] | range) -> int:
        problem = answer_problem(name, answer, allowed)
        if problem is not None and (isinstance(answer, bool) or not _is_index(answer)):
            raise CallFailedError(faults.ERROR, clean_field(f"{method}: INTERNAL: {problem}", 300))
        number = operator.index(answer)
        if not 0 <= number < 2**32:
            raise CallFailedError(
                faults.ERROR, f"{method}: INTERNAL: {name} returned {number}, which is out of range"
            )
        return number

    def pick_card_future(self, request: bytes, timeout: float) -> Future[bytes]:
        future: Future[bytes] = Future()
        try:
            message = pb.PickCardRequest.FromString(request)
            view = view_from_proto(message.view)
            budget = budget_from_request(message, timeout)
            if view.phase is Phase.DRAFT:
                answer = self._ask(
                    "PickCard", message.game_id, budget, lambda: self.bot.draft_card(view)
                )
                card = self._number("PickCard", "draft_card", answer, view.pool)
            else:
                answer = self._ask(
                    "PickCard", message.game_id, budget, lambda: self.bot.pick_card(view)
                )
                card = self._number("PickCard", "pick_card", answer, view.hand)
            future.set_result(pb.PickCardResponse(card=card).SerializeToString())
        except CallFailedError as failed:
            future.set_exception(failed)
        return future

    def card_from(self, future: Future[bytes], timeout: float) -> int:
        return card_from(future, timeout)

    def choose_row(self, request: bytes, timeout: float) -> int:
        return self.row_from(self.choose_row_future(request, timeout), timeout)

    def choose_row_future(self, request: bytes, timeout: float) -> Future[bytes]:
        future: Future[bytes] = Future()
        try:
            message = pb.ChooseRowRequest.FromString(request)
            view = view_from_proto(message.view, revealed=message.revealed, card=message.card)
            budget = budget_from_request(message, timeout)
            answer = self._ask(
                "ChooseRow", message.game_id, budget, lambda: self.bot.choose_row(view)
            )
            row = self._number("ChooseRow", "choose_row", answer, range(len(view.rows)))
            future.set_result(pb.ChooseRowResponse(row=row).SerializeToString())
        except CallFailedError as failed:
            future.set_exception(failed)
        return future

    def row_from(self, future: Future[bytes], timeout: float) -> int:
        return row_from(future, timeout)

    def game_over_future(self, request: bytes, timeout: float) -> Future[bytes]:
        future: Future[bytes] = Future()
        message = pb.GameOverRequest.FromString(request)
        result = game_over_from_request(message)
        try:
            budget = Budget(message.time_limit_ms / 1000 if message.time_limit_ms else timeout)
            self._ask("GameOver", message.game_id, budget, lambda: self.bot.game_over(result))
            future.set_result(pb.GameOverResponse().SerializeToString())
        except CallFailedError as failed:
            future.set_exception(failed)
        return future

    def close(self) -> None:
        return None


def _is_index(value: object) -> bool:
    """Whether ``value`` is a whole number to the protocol (an int, or anything with __index__)."""
    return hasattr(type(value), "__index__")


def in_memory(
    bots: Sequence[Bot | Strategy],
    *,
    names: Sequence[str] = (),
    costs: Sequence[Cost | None] = (),
) -> tuple[list[BotRef], Callable[[BotRef], BotHandle]]:
    """Bot references and the launcher that plays them in memory, for ``Match(refs, config,
    launcher=launcher)``; ``names`` overrides the bots' own names and ``costs`` their measured
    CPU time (by position; see `InMemoryBot.cost`)."""
    handles: dict[str, InMemoryBot] = {}
    refs = []
    for index, bot in enumerate(bots):
        handle = InMemoryBot(
            bot,
            name=names[index] if index < len(names) else "",
            cost=costs[index] if index < len(costs) else None,
        )
        text = f"memory:{index + 1}:{handle.name}"
        handles[text] = handle
        refs.append(BotRef("memory", text, address=handle.name))

    def launcher(ref: BotRef) -> BotHandle:
        return handles[ref.text]

    return refs, launcher


__all__ = ["Cost", "InMemoryBot", "Strategy", "in_memory"]
