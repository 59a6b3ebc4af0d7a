"""The turn protocol of one game: what each bot is asked, with which time (each seat's bank on its
clock, take5_arena/referee/match/clocks.py), and what the referee does with the answer (module text
of take5_arena/referee/match/play.py; docs/faults.md).

Every decision returns the referee's choice: the bot's answer when it is legal, else the default
move (PickCard: the lowest card of the hand or the pool; ChooseRow: the cheapest row). A fault is
written into the game with its round and turn; after ``max_faults`` of them, at once for a crash or
an incompatible protocol, or when the bot's process has ended, the seat forfeits the game and is
not asked again in it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from take5 import CardNotInHand, Game, IllegalMove, Phase, cheapest_row
from take5.clock import Budget
from take5.convert import (
    GameOver,
    choose_row_request,
    game_over_request,
    pick_card_request,
    pick_card_requests,
)
from take5.record import GameRecord

from ..errors import InfraError
from ..kinds import InfraKind
from . import botlogs, clocks, faults
from .clocks import attach_times, time_control_record
from .config import MatchConfig
from .entrant import Entrant
from .handle import BotConnection
from .remote import CallFailedError

log = logging.getLogger("take5.referee")

Observer = Callable[[GameRecord], None]
"""Sees a game's record as it grows: after every turn, and once complete (`referee match
--watch`)."""


class GameTurns:
    """The referee's bookkeeping for one game: who can still be asked, and the fault policy."""

    def __init__(
        self,
        game: Game,
        entrants: Sequence[Entrant],
        config: MatchConfig,
        game_id: str,
        observer: Observer | None = None,
    ) -> None:
        self.game = game
        self.entrants = entrants
        self.config = config
        self.game_id = game_id
        self.observer = observer
        self.counts = [0] * len(entrants)
        self.silent: set[int] = set()  # seats not asked any more in this game
        self.logs: dict[tuple[int, int], list[list[Any]]] = {}  # (round, turn) -> [[seat, text]]
        self.clocks = [clocks.SeatClock(config.calls, e.handle) for e in entrants]
        self.times: dict[tuple[int, int], list[list[int]]] = {}
        """(round, turn; 0: the draft) -> [[seat, milliseconds used, bank after], ...]"""
        self.key = (game.round, 0)

    def askable(self, seat: int) -> bool:
        return seat not in self.silent and self.entrants[seat].remote is not None

    def reject(self, seat: int, why: CallFailedError) -> None:
        """A bot that cannot play at all (rejected at the start): one fault, and it forfeits."""
        self.game.add_fault(seat, why.kind, why.detail)
        self.counts[seat] += 1
        self.game.forfeit(seat)
        self.silent.add(seat)

    def fault(self, seat: int, failed: CallFailedError) -> None:
        entrant = self.entrants[seat]
        failed = entrant.explain(failed)
        self.game.add_fault(seat, failed.kind, failed.detail)
        self.counts[seat] += 1
        log.info("%s: %s: %s: %s", self.game_id, entrant.name, failed.kind, failed.detail)
        if (
            failed.kind in faults.FATAL
            or self.counts[seat] >= self.config.calls.max_faults
            or entrant.dead
        ):
            self.forfeit(seat, failed)

    def forfeit(self, seat: int, why: CallFailedError) -> None:
        if seat in self.game.forfeited:
            return
        self.game.forfeit(seat)
        self.silent.add(seat)
        log.warning(
            "%s: %s forfeits (%d fault%s, last: %s); its seat plays the default moves",
            self.game_id,
            self.entrants[seat].name,
            self.counts[seat],
            "" if self.counts[seat] == 1 else "s",
            why.kind,
        )

    # The three decisions. Each returns the referee's choice: the bot's if legal, else the default.

    def _budgets(self, seats: Sequence[int], method: str) -> dict[int, Budget]:
        """The next decision's budget of each seat; a seat whose bank is empty is not asked (a
        timeout fault, and no time passes for it)."""
        budgets = {}
        for seat in seats:
            clock = self.clocks[seat]
            budget = clock.budget()
            if clock.bank.limit_ms <= 0:
                self._time(seat, 0, clock.bank.charge(0))
                self.fault(seat, CallFailedError(faults.TIMEOUT, clock.empty_detail(method)))
                continue
            budgets[seat] = budget
        return budgets

    def _time(self, seat: int, used_ms: int, bank_ms: int) -> None:
        self.times.setdefault(self.key, []).append([seat, used_ms, bank_ms])

    def _ask(
        self,
        method: str,
        asks: Sequence[tuple[int, bytes, Budget]],
        send: Callable[[BotConnection, bytes, float], Future[bytes]],
        decode: Callable[[BotConnection, Future[bytes], float], int],
    ) -> dict[int, int | CallFailedError]:
        """Send each seat its request at once, wait for the answers on the seats' clocks, charge
        each seat's bank, and give each seat's answer (or what went wrong: a timeout says which
        clock ran out)."""
        calls = []
        for seat, request, budget in asks:
            remote = self.entrants[seat].remote
            assert remote is not None  # askable
            watch = self.clocks[seat].start(budget)
            future = send(remote, request, watch.deadline)
            future.add_done_callback(watch.stop)
            calls.append(clocks.Pending(seat, future, watch, extra=remote))
        clocks.wait(calls)
        out: dict[int, int | CallFailedError] = {}
        for call in calls:
            seat, budget = call.seat, call.watch.budget
            clock = self.clocks[seat]
            used, bank, over = clock.settle(call.watch)
            self._time(seat, used, bank)
            if over or call.given_up == "limit":
                out[seat] = CallFailedError(faults.TIMEOUT, clock.limit_detail(method, budget))
                continue
            if call.given_up == "wall":
                out[seat] = self._past_cap(call, method)
                continue
            try:
                out[seat] = decode(call.extra, call.future, call.watch.deadline)
            except CallFailedError as failed:
                if failed.kind is faults.TIMEOUT:  # the gRPC deadline: the wall-clock cap
                    failed = self._past_cap(call, method)
                out[seat] = failed
        return out

    def _past_cap(self, call: clocks.Pending, method: str) -> CallFailedError:
        """A decision past its wall-clock cap: the bot's timeout, unless the host starved it
        (clocks.SeatClock.starved): then the game is nobody's (raises InfraError, kind host)."""
        clock, budget = self.clocks[call.seat], call.watch.budget
        waited = clock.starved(call.watch)
        if waited is not None:
            raise InfraError(InfraKind.HOST, clock.host_detail(method, call.watch, waited))
        return CallFailedError(faults.TIMEOUT, clock.wall_detail(method, budget))

    def play_turn(self) -> None:
        game = self.game
        n = game.settings.players
        views = [game.view(seat) for seat in range(n)]
        cards = [min(view.hand) for view in views]  # the default move
        budgets = self._budgets([seat for seat in range(n) if self.askable(seat)], "PickCard")
        asked = list(budgets)
        requests = pick_card_requests(
            [views[seat] for seat in asked], self.game_id, [budgets[seat] for seat in asked]
        )
        answers = self._ask(
            "PickCard",
            [(seat, request, budgets[seat]) for seat, request in zip(asked, requests)],
            lambda remote, request, wall: remote.pick_card_future(request, wall),
            lambda remote, future, wall: remote.card_from(future, wall),
        )
        for seat in asked:
            answer = answers[seat]
            if isinstance(answer, CallFailedError):
                self.fault(seat, answer)
                continue
            hand = views[seat].hand
            if answer in hand:
                cards[seat] = answer
            else:  # checked here, seat by seat, because the engine takes a turn's cards all at once
                self.fault(
                    seat, CallFailedError(faults.ILLEGAL_CARD, str(CardNotInHand(answer, hand)))
                )
        game.play(cards)

    def _one(
        self,
        seat: int,
        method: str,
        request: Callable[[Budget], bytes],
        send: Callable[[BotConnection, bytes, float], Future[bytes]],
        decode: Callable[[BotConnection, Future[bytes], float], int],
    ) -> int | CallFailedError | None:
        """One seat's decision: its answer, what went wrong, or None (not asked)."""
        if not self.askable(seat):
            return None
        budgets = self._budgets([seat], method)
        if seat not in budgets:
            return None
        budget = budgets[seat]
        return self._ask(method, [(seat, request(budget), budget)], send, decode)[seat]

    def _decide(
        self,
        seat: int,
        method: str,
        request: Callable[[Budget], bytes],
        send: Callable[[BotConnection, bytes, float], Future[bytes]],
        decode: Callable[[BotConnection, Future[bytes], float], int],
        apply: Callable[[int], object],
        illegal: faults.FaultKind,
        default: int,
    ) -> None:
        """One seat's single decision (a draft pick or a row): its answer applied if the engine
        accepts it, else a fault of the kind `illegal` (or the call's own) and `default`."""
        answer = self._one(seat, method, request, send, decode)
        if isinstance(answer, int):
            try:
                apply(answer)
                return
            except IllegalMove as refused:  # the engine judges the answer
                answer = CallFailedError(illegal, str(refused))
        if isinstance(answer, CallFailedError):
            self.fault(seat, answer)
        apply(default)

    def draft(self) -> None:
        game = self.game
        seat = game.drafter
        view = game.view(seat)
        self._decide(
            seat,
            "PickCard",
            lambda budget: pick_card_request(view, self.game_id, budget).SerializeToString(),
            lambda remote, request, wall: remote.pick_card_future(request, wall),
            lambda remote, future, wall: remote.card_from(future, wall),
            game.draft,
            faults.ILLEGAL_CARD,
            min(view.pool),
        )

    def choose_row(self) -> None:
        game = self.game
        seat = game.waiting_for[0]
        view = game.view(seat)
        self._decide(
            seat,
            "ChooseRow",
            lambda budget: choose_row_request(view, self.game_id, budget).SerializeToString(),
            lambda remote, request, wall: remote.choose_row_future(request, wall),
            lambda remote, future, wall: remote.row_from(future, wall),
            game.choose_row,
            faults.ILLEGAL_ROW,
            cheapest_row(view.rows),
        )

    def play(self) -> int:
        """Play the game to its end; the number of turns played."""
        game = self.game
        turns = 0
        while True:
            phase = game.phase
            if phase is Phase.PLAY:
                self.key = (game.round, game.turn)
                self.play_turn()
                turns += 1
            elif phase is Phase.CHOOSE_ROW:
                self.choose_row()
            elif phase is Phase.DRAFT:
                self.key = (game.round, 0)
                self.draft()
            else:
                return turns
            if phase is not Phase.DRAFT and game.phase is not Phase.CHOOSE_ROW:
                self.turn_done(self.key)

    def turn_done(self, key: tuple[int, int]) -> None:
        """A turn is over: keep what each bot wrote during it; show it to the observer."""
        logs = botlogs.take_within(self.entrants, self.config.output_budget)
        if logs:
            self.logs[key] = logs
        if self.observer is not None:
            self.observer(self.record())

    def record(self) -> GameRecord:
        """The game so far, as final as it will be: the seats named as the caller names them
        (``MatchConfig.seats``) and the deal it came from (``MatchConfig.deal``)."""
        config = self.config
        seats = []
        for seat_index, (entrant, clock) in enumerate(zip(self.entrants, self.clocks)):
            seat = entrant.seat_record()
            if entrant.out is None:
                seat["clock"] = clock.kind.value
            if config.seats:
                config.seats[seat_index].stamp(seat)
            seats.append(seat)
        calls = config.calls
        record = self.game.record(
            game_id=self.game_id,
            seats=seats,
            extra={"time_control": time_control_record(calls.control, calls)},
        )
        botlogs.attach(record, self.logs)
        attach_times(record, self.times)
        if config.deal is not None:
            record["deal"] = config.deal.copy()
        return record

    def notify(self) -> None:
        """GameOver to every bot still reachable (optional for bots: failures are only logged)."""
        game, timeout = self.game, self.config.calls.notice_timeout
        result = game.result()
        pending = []
        for seat, entrant in enumerate(self.entrants):
            if entrant.remote is None or entrant.dead:
                continue
            over = GameOver(
                game_id=self.game_id,
                seat=seat,
                settings=game.settings,
                scores=result.scores,
                places=result.places,
                forfeited=result.forfeited,
                rounds=game.round,
                faults=self.counts[seat],
            )
            request = game_over_request(over, timeout).SerializeToString()
            pending.append((entrant, entrant.remote.game_over_future(request, timeout)))
        for entrant, future in pending:
            try:
                future.result()
            except Exception as error:  # noqa: BLE001 - GameOver is optional
                log.debug("%s: GameOver to %s failed: %s", self.game_id, entrant.name, error)


__all__ = ["GameTurns", "Observer"]
