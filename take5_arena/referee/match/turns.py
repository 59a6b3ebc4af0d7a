"""The turn protocol of one game: what each bot is asked, with which deadline, and what the
referee does with the answer (module text of take5_arena/referee/match/play.py; docs/faults.md).

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
from take5.convert import (
    GameOver,
    choose_row_request,
    game_over_request,
    pick_card_request,
    pick_card_requests,
)
from take5.record import GameRecord

from . import botlogs, faults
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

    def play_turn(self) -> None:
        game, timeout = self.game, self.config.calls.timeout
        n = game.settings.players
        views = [game.view(seat) for seat in range(n)]
        cards = [min(view.hand) for view in views]  # the default move
        asked = [seat for seat in range(n) if self.askable(seat)]
        requests = pick_card_requests([views[seat] for seat in asked], self.game_id, timeout)
        pending: list[tuple[int, BotConnection, Future[bytes]]] = []
        for seat, request in zip(asked, requests):
            remote = self.entrants[seat].remote
            assert remote is not None  # askable
            pending.append((seat, remote, remote.pick_card_future(request, timeout)))
        for seat, remote, future in pending:
            try:
                card = remote.card_from(future, timeout)
            except CallFailedError as failed:
                self.fault(seat, failed)
                continue
            hand = views[seat].hand
            if card in hand:
                cards[seat] = card
            else:  # checked here, seat by seat, because the engine takes a turn's cards all at once
                self.fault(
                    seat, CallFailedError(faults.ILLEGAL_CARD, str(CardNotInHand(card, hand)))
                )
        game.play(cards)

    def draft(self) -> None:
        game, timeout = self.game, self.config.calls.timeout
        seat = game.drafter
        view = game.view(seat)
        remote = self.entrants[seat].remote
        if self.askable(seat) and remote is not None:
            request = pick_card_request(view, self.game_id, timeout).SerializeToString()
            try:
                game.draft(remote.card_from(remote.pick_card_future(request, timeout), timeout))
                return
            except CallFailedError as failed:
                self.fault(seat, failed)
            except IllegalMove as illegal:  # the engine judges the pick
                self.fault(seat, CallFailedError(faults.ILLEGAL_CARD, str(illegal)))
        game.draft(min(view.pool))

    def choose_row(self) -> None:
        game, timeout = self.game, self.config.calls.timeout
        seat = game.waiting_for[0]
        view = game.view(seat)
        remote = self.entrants[seat].remote
        if self.askable(seat) and remote is not None:
            request = choose_row_request(view, self.game_id, timeout).SerializeToString()
            try:
                game.choose_row(remote.choose_row(request, timeout))
                return
            except CallFailedError as failed:
                self.fault(seat, failed)
            except IllegalMove as illegal:  # the engine judges the row
                self.fault(seat, CallFailedError(faults.ILLEGAL_ROW, str(illegal)))
        game.choose_row(cheapest_row(view.rows))

    def play(self) -> int:
        """Play the game to its end; the number of turns played."""
        game = self.game
        turns = 0
        key = (game.round, game.turn)
        while True:
            phase = game.phase
            if phase is Phase.PLAY:
                key = (game.round, game.turn)
                self.play_turn()
                turns += 1
            elif phase is Phase.CHOOSE_ROW:
                self.choose_row()
            elif phase is Phase.DRAFT:
                self.draft()
            else:
                return turns
            if phase is not Phase.DRAFT and game.phase is not Phase.CHOOSE_ROW:
                self.turn_done(key)

    def turn_done(self, key: tuple[int, int]) -> None:
        """A turn is over: keep what each bot wrote during it; show it to the observer."""
        logs = botlogs.take([e.handle for e in self.entrants])
        if logs:
            self.logs[key] = logs
        if self.observer is not None:
            self.observer(self.record())

    def record(self) -> GameRecord:
        record = self.game.record(
            game_id=self.game_id, seats=[e.seat_record() for e in self.entrants]
        )
        botlogs.attach(record, self.logs)
        return record

    def notify(self) -> None:
        """GameOver to every bot still reachable (optional for bots: failures are only logged)."""
        game, timeout = self.game, self.config.calls.timeout
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
