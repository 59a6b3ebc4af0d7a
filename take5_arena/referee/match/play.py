"""A match: 2-10 bots play a series of games, refereed by the engine, over the bot protocol.

Faults are the referee's job, and the game always finishes. Every call has a deadline; a call that
fails (late, crashed, unreachable, error status, undecodable answer) or answers something illegal
gets the documented default move (docs/faults.md):

* PickCard (play): the seat's lowest card;   * PickCard (draft): the lowest card of the pool;
* ChooseRow: the row with the fewest bull heads (then fewer cards, then the lowest index).

The fault goes into the game record with its round and turn. After `max_faults` faults in a game, or
at once for a crash or an incompatible protocol, the bot forfeits that game: the default moves play
its seat to the end and it is ranked last. A bot that cannot be started or fails its handshake is
rejected for the match: its seat is played by the default moves and forfeits every game.

All PickCard calls of a turn are sent at once (the plays are simultaneous) and each is bounded by
its own deadline, so a turn never takes much longer than the timeout.

The match package, by job: config.py (how a match is played), results.py (what it produced, and
the command line's exit codes), handle.py and entrant.py (a bot's life: start, connect, restart,
stop), turns.py (the turn protocol of one game), and this module, the order of it all: start every
bot, play each game (restarting bots that need it), write the records, stop every bot.
"""

from __future__ import annotations

import json
import logging
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from take5 import Game

from . import botlogs
from .botref import BotRef, parse_bot
from .config import MatchConfig
from .entrant import Entrant, unique_names
from .faults import describe_exit
from .handle import BotHandle
from .local import local_handle
from .results import Entry, GameSummary, MatchResult, Rejection
from .sanitize import clean_text
from .turns import GameTurns, Observer

log = logging.getLogger("take5.referee")

Launcher = Callable[[BotRef], BotHandle]
"""Makes the handle of each bot of a match (default: a local process, or its address)."""


def _must_restart(entrant: Entrant, game_id: str, deal: int) -> bool:
    """Whether a per-game bot must be restarted before game `game_id` of `deal` (the seed)."""
    answer = entrant.handle.serve_game(game_id, deal)
    return entrant.played if answer is None else answer


class Match:
    """Bots started for a series of games; a context manager that always stops them.

    with Match(["example_bots/random", "mybot"], MatchConfig(games=4)) as match:
        result = match.play()
    """

    def __init__(
        self,
        bots: Sequence[str | BotRef],
        config: MatchConfig | None = None,
        *,
        launcher: Launcher | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.config = config or MatchConfig()
        self.observer = observer
        """Called with the game's record so far after every turn, and when the game ends
        (--watch)."""
        refs = [b if isinstance(b, BotRef) else parse_bot(b) for b in bots]
        self.config.settings(len(refs))  # the player count is checked before anything starts
        if self.config.seats and len(self.config.seats) != len(refs):
            raise ValueError(
                f"the match has {len(refs)} bots and {len(self.config.seats)} seat identities"
            )
        self.refs = refs
        self.launcher = launcher or self._local_launcher
        self.entrants: list[Entrant] = []
        self.rejections: list[Rejection] = []
        self.games: list[GameSummary] = []
        self._started = False

    def _local_launcher(self, ref: BotRef) -> BotHandle:
        log_path = None
        if self.config.records is not None and ref.kind != "address":
            log_path = (
                Path(self.config.records)
                / "logs"
                / f"bot{len(self.entrants) + 1}-{ref.default_name}.log"
            )
        return local_handle(ref, log_path=log_path)

    def __enter__(self) -> Match:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Launch every bot, wait until they serve, shake hands; a bot that fails is rejected."""
        self._started = True
        for ref in self.refs:
            self.entrants.append(Entrant(ref, self.launcher(ref)))
        for entrant in self.entrants:
            entrant.spawn()
        self._connect(self.entrants)
        unique_names(self.entrants)
        for entrant in self.entrants:
            if entrant.out is not None:
                self.rejections.append(
                    Rejection(entrant.name, entrant.ref.text, entrant.out.kind, entrant.out.detail)
                )
                log.error(
                    "bot %s was rejected before play (its seat forfeits every game): %s: %s",
                    entrant.ref.label or f"{entrant.name} ({entrant.ref.text})",
                    entrant.out.kind,
                    entrant.out.detail,
                )
                entrant.stop(self.config.stop_grace)

    def _connect(self, entrants: Sequence[Entrant]) -> None:
        if len(entrants) == 1:
            entrants[0].connect(self.config)
            return
        with ThreadPoolExecutor(
            max_workers=len(entrants), thread_name_prefix="take5-connect"
        ) as pool:
            list(pool.map(lambda e: e.connect(self.config), entrants))

    def close(self) -> None:
        """Stop every bot (SIGTERM, then SIGKILL after the grace time); safe to call twice."""
        grace = self.config.stop_grace
        # A second Ctrl-C must not cut the clean-up short and leave bots running.
        main = threading.current_thread() is threading.main_thread()
        previous = (
            [signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)]
            if main
            else []
        )
        try:
            with ThreadPoolExecutor(
                max_workers=max(1, len(self.entrants)), thread_name_prefix="take5-stop"
            ) as pool:
                list(pool.map(lambda e: e.stop(grace), self.entrants))
        finally:
            for sig, handler in zip((signal.SIGINT, signal.SIGTERM), previous):
                signal.signal(sig, handler)

    def _revive(self) -> None:
        """Restart bots whose process ended in an earlier game; a failed restart rejects them."""
        dead = [e for e in self.entrants if e.out is None and e.dead]
        for entrant in dead:
            log.warning(
                "restarting %s (it %s)",
                entrant.name,
                describe_exit(entrant.handle.exit_status() or 0),
            )
        self._restart(dead)

    def _restart(self, entrants: list[Entrant]) -> None:
        """Start `entrants` afresh and connect them, keeping the match's names (and their #2
        suffixes). A restart that fails is tried once more in a fresh process before it rejects
        the bot for the rest of the match: a start can fail for the host's reasons (a warm
        container's reset, a slow engine), and a bot that really cannot start fails twice."""
        names = {id(e): e.name for e in entrants}
        todo = entrants
        for attempt in range(2 if entrants else 0):
            for entrant in todo:
                entrant.stop(self.config.stop_grace)
                entrant.spawn()
            self._connect(todo)
            for entrant in todo:
                entrant.name = names[id(entrant)]
            todo = [e for e in todo if e.out is not None]
            if not todo:
                return
            for entrant in todo:
                assert entrant.out is not None
                if attempt == 0:
                    log.warning(
                        "bot %s could not be restarted (%s): trying once more",
                        entrant.name,
                        entrant.out.detail,
                    )
                    entrant.out = None
                else:
                    log.error("bot %s could not be restarted: %s", entrant.name, entrant.out.detail)
                    entrant.stop(self.config.stop_grace)

    def _renew(self, index: int) -> None:
        """Bots whose handle asks for it (`per_game`: Docker) start afresh for a game unless the
        handle says their process may play it (`serve_game(game_id, deal)`: never a deal twice),
        so that nothing carries over that should not; the next game's start is prepared while
        this one plays (the handle's `prefetch(game_id)`)."""
        game_id, deal, _ = self.config.plan(index, len(self.entrants))
        fresh = [e for e in self.entrants if e.out is None and e.handle.per_game]
        self._restart([e for e in fresh if _must_restart(e, game_id, deal)])
        if index + 1 < self.config.games:
            next_id = self.config.plan(index + 1, len(self.entrants))[0]
            for entrant in fresh:
                if entrant.out is None:
                    entrant.handle.prefetch(next_id)

    def play_game(self, index: int) -> GameSummary:
        """Play game `index` (from 0) of the match and write its record."""
        if not self._started:
            self.start()
        config = self.config
        n = len(self.entrants)
        game_id, seed, rotation = config.plan(index, n)
        self._renew(index)
        self._revive()
        started = time.perf_counter()
        game = Game(config.settings(n), seed, rotation=rotation)
        table = GameTurns(game, self.entrants, config, game_id, self.observer)
        for seat, entrant in enumerate(self.entrants):
            if entrant.out is not None:  # rejected: already reported once, at the start
                table.reject(seat, entrant.out)
        for entrant in self.entrants:
            entrant.played = True
        botlogs.take([e.handle for e in self.entrants])  # start-up output is not a turn's
        turns = table.play()
        table.notify()
        seconds = time.perf_counter() - started
        record = table.record()
        if self.observer is not None:
            self.observer(record)
        path = None
        if config.records is not None:
            folder = Path(config.records)
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{game_id}.json"
            path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        result = game.result()
        summary = GameSummary(
            game_id=game_id,
            seed=seed,
            rotation=rotation,
            scores=result.scores,
            places=result.places,
            forfeited=result.forfeited,
            faults=tuple(tuple(seat_faults) for seat_faults in record["faults"]),
            record=str(path) if path else None,
            seconds=seconds,
            turns=turns,
            document=record,
        )
        self.games.append(summary)
        return summary

    def play(self, on_game: Callable[[GameSummary], None] | None = None) -> MatchResult:
        """Play every game of the match; `on_game` sees each game as it ends."""
        started = time.perf_counter()
        for index in range(len(self.games), self.config.games):
            summary = self.play_game(index)
            if on_game is not None:
                on_game(summary)
        return self.result(time.perf_counter() - started)

    def result(self, seconds: float = 0.0) -> MatchResult:
        """The standings of the games played so far."""
        faulted = {
            seat for g in self.games for seat, seat_faults in enumerate(g.faults) if seat_faults
        }
        logs = {}
        for seat in sorted(faulted):
            tail = clean_text(self.entrants[seat].handle.stderr_tail(2000)).strip()
            if tail:
                logs[self.entrants[seat].name] = tail
        return MatchResult(
            config=self.config,
            entries=tuple(Entry(e.name, e.ref.text, e.info) for e in self.entrants),
            games=tuple(self.games),
            rejections=tuple(self.rejections),
            logs=logs,
            seconds=seconds,
        )


def run_match(
    bots: Sequence[str | BotRef],
    config: MatchConfig | None = None,
    *,
    launcher: Launcher | None = None,
    on_game: Callable[[GameSummary], None] | None = None,
) -> MatchResult:
    """Start the bots, play the games, stop the bots (also on Ctrl-C or an error)."""
    with Match(bots, config, launcher=launcher) as match:
        return match.play(on_game)


__all__ = ["Launcher", "Match", "run_match"]
