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

All PickCard calls of a turn are sent at once (the plays are simultaneous) and each is bounded by its
own deadline, so a turn never takes much longer than the timeout.
"""

from __future__ import annotations

import json
import logging
import signal
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from take5 import CardNotInHand, Game, IllegalMove, Phase, Settings, cheapest_row
from take5.convert import (
    GameOver,
    choose_row_request,
    game_over_request,
    pick_card_request,
    pick_card_requests,
)
from take5.outcome import win_shares
from take5.rules import EndRule, Variant

from .. import defaults
from . import botlogs, faults
from .botref import BotRef, parse_bot
from .launch import BotHandle, describe_exit, local_handle
from .remote import BotInfo, CallFailed, RemoteBot
from .sanitize import clean_text
from .seat_digest import seat_digest

log = logging.getLogger("take5.referee")

Launcher = Callable[[BotRef], BotHandle]
Observer = Callable[[dict[str, Any]], None]
"""Sees a game's record as it grows: after every turn, and once complete (`referee match --watch`)."""


@dataclass(frozen=True)
class MatchConfig:
    """How a match is played. Times are in seconds."""

    games: int = defaults.GAMES
    seed: int = defaults.SEED
    variant: Variant = Variant(defaults.VARIANT)  # noqa: RUF009 - an immutable enum member
    threshold: int = defaults.THRESHOLD
    end_rule: EndRule = EndRule(defaults.END_RULE)  # noqa: RUF009 - an immutable enum member
    timeout: float = defaults.TIMEOUT
    """Deadline of each PickCard, ChooseRow and GameOver call."""
    start_timeout: float = defaults.START_TIMEOUT
    """Time a bot has to start serving after it is launched."""
    handshake_timeout: float = defaults.HANDSHAKE_TIMEOUT
    max_faults: int = defaults.MAX_FAULTS
    """Faults in one game after which the bot forfeits it."""
    records: Path | None = None
    """Folder for the game records (one JSON file per game) and the bots' output logs."""
    match_id: str = ""
    """Prefix of the game ids; default "s<seed>"."""
    game_ids: tuple[str, ...] = ()
    """The game ids by game index, when the caller names its games (a tournament's own ids; smoke
    games that look like them); else ``<prefix>-g<n>``."""
    stop_grace: float = defaults.STOP_GRACE
    """Seconds a bot has to exit after SIGTERM before it is killed."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "variant", Variant(self.variant))
        object.__setattr__(self, "end_rule", EndRule(self.end_rule))
        if self.games < 1:
            raise ValueError("a match has at least 1 game")
        if self.timeout <= 0 or self.start_timeout <= 0 or self.handshake_timeout <= 0:
            raise ValueError("timeouts must be positive")
        if self.max_faults < 1:
            raise ValueError("max_faults must be at least 1")

    @property
    def prefix(self) -> str:
        return self.match_id or f"s{self.seed}"

    def settings(self, players: int) -> Settings:
        return Settings(
            players=players, variant=self.variant, threshold=self.threshold, end_rule=self.end_rule
        )

    def plan(self, index: int, players: int) -> tuple[str, int, int]:
        """(game id, seed, rotation) of game `index` (from 0).

        Duplicate deals: each seed is played `players` times with every rotation, so every bot gets
        every hand of a deal (seed + index // players, rotation index % players).
        """
        game_id = (
            self.game_ids[index] if index < len(self.game_ids) else f"{self.prefix}-g{index + 1}"
        )
        return game_id, self.seed + index // players, index % players


# -- results -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """A bot of the match: its argument, its name in the standings, what it said about itself."""

    name: str
    bot: str
    info: BotInfo = BotInfo()


@dataclass(frozen=True)
class Rejection:
    """A bot refused before play: it could not start, or failed its handshake."""

    name: str
    bot: str
    kind: str
    detail: str


@dataclass(frozen=True)
class GameSummary:
    game_id: str
    seed: int
    rotation: int
    scores: tuple[int, ...]
    places: tuple[int, ...]
    forfeited: tuple[int, ...]
    faults: tuple[tuple[dict[str, Any], ...], ...]
    """Per seat, the faults of that seat ({round, turn, kind, detail})."""
    record: str | None = None
    """Path of the record file, when records are written."""
    seconds: float = 0.0
    turns: int = 0
    document: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    """The game record itself (docs/record-format.md), for callers that store it elsewhere."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "seed": self.seed,
            "rotation": self.rotation,
            "scores": list(self.scores),
            "places": list(self.places),
            "forfeited": list(self.forfeited),
            "faults": [list(f) for f in self.faults],
            "record": self.record,
            "seconds": round(self.seconds, 4),
            "turns": self.turns,
        }


@dataclass(frozen=True)
class Standing:
    name: str
    bot: str
    games: int
    wins: float
    """Games won; a first place shared by k seats counts 1/k (take5.outcome.win_shares)."""
    mean_place: float
    points: int
    mean_points: float
    forfeits: int
    faults: dict[str, int] = field(default_factory=dict)

    @property
    def fault_count(self) -> int:
        return sum(self.faults.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "bot": self.bot,
            "games": self.games,
            "wins": self.wins,
            "mean_place": round(self.mean_place, 4),
            "points": self.points,
            "mean_points": round(self.mean_points, 4),
            "forfeits": self.forfeits,
            "faults": dict(self.faults),
        }


EXIT_OK = 0
EXIT_FAULTS = 1
EXIT_USAGE = 2
EXIT_REJECTED = 3
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class MatchResult:
    config: MatchConfig
    entries: tuple[Entry, ...]
    games: tuple[GameSummary, ...]
    rejections: tuple[Rejection, ...] = ()
    logs: dict[str, str] = field(default_factory=dict)
    """The end of the output of each bot that faulted, by name."""
    seconds: float = 0.0

    @property
    def standings(self) -> tuple[Standing, ...]:
        rows = []
        for seat, entry in enumerate(self.entries):
            games = len(self.games)
            places = [g.places[seat] for g in self.games]
            wins = sum(win_shares(g.places)[seat] for g in self.games)
            points = sum(g.scores[seat] for g in self.games)
            kinds: dict[str, int] = {}
            for g in self.games:
                for fault in g.faults[seat]:
                    kinds[fault["kind"]] = kinds.get(fault["kind"], 0) + 1
            rows.append(
                Standing(
                    name=entry.name,
                    bot=entry.bot,
                    games=games,
                    wins=wins,
                    mean_place=sum(places) / games if games else 0.0,
                    points=points,
                    mean_points=points / games if games else 0.0,
                    forfeits=sum(1 for g in self.games if seat in g.forfeited),
                    faults=dict(sorted(kinds.items())),
                )
            )
        return tuple(sorted(rows, key=lambda s: (s.mean_place, s.mean_points, s.name)))

    @property
    def fault_count(self) -> int:
        return sum(len(f) for g in self.games for f in g.faults)

    @property
    def exit_code(self) -> int:
        """3 a bot was rejected before play; 1 some bot faulted; 0 a clean match (docs/faults.md)."""
        if self.rejections:
            return EXIT_REJECTED
        if self.fault_count:
            return EXIT_FAULTS
        return EXIT_OK

    @property
    def turns(self) -> int:
        return sum(g.turns for g in self.games)

    def to_dict(self) -> dict[str, Any]:
        c = self.config
        return {
            "format": "take5-match",
            "version": 1,
            "match_id": c.prefix,
            "settings": {
                "players": len(self.entries),
                "variant": c.variant.value,
                "threshold": c.threshold,
                "end_rule": c.end_rule.value,
            },
            "seed": c.seed,
            "games_played": len(self.games),
            "timeout": c.timeout,
            "max_faults": c.max_faults,
            "bots": [{"name": e.name, "bot": e.bot, **_info_dict(e.info)} for e in self.entries],
            "standings": [s.to_dict() for s in self.standings],
            "rejections": [vars(r) for r in self.rejections],
            "games": [g.to_dict() for g in self.games],
            "logs": dict(self.logs),
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 3),
        }


def _info_dict(info: BotInfo) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("version", "author", "sdk", "protocol_version"):
        value = getattr(info, key)
        if value:
            out[key] = value
    if not info.handshake:
        out["handshake"] = False
    return out


# -- the bots of a match -----------------------------------------------------------------------


class _Entrant:
    """A bot during the match: its process (handle), its connection, and whether it can play."""

    def __init__(self, ref: BotRef, handle: BotHandle) -> None:
        self.ref = ref
        self.handle = handle
        self.remote: RemoteBot | None = None
        self.address = ""
        self.info = BotInfo()
        self.name = ref.default_name
        self.out: CallFailed | None = None
        """Why the bot cannot play for the rest of the match (None: it can)."""
        self.played = False
        """Whether a game was played since the bot was (re)started (see `Match._renew`)."""

    def spawn(self) -> None:
        """Start the process; in the caller's thread (the kernel ties the bot's life to it)."""
        if self.remote is not None:
            self.remote.close()
            self.remote = None
        self.played = False
        try:
            self.address = self.handle.start()
        except OSError as error:
            self.out = CallFailed(
                faults.CRASH, f"the bot could not be started: {error.strerror or error}"
            )

    def connect(self, config: MatchConfig) -> None:
        """Wait until the bot serves, then shake hands; failures set `out`."""
        if self.out is not None:
            return
        ready = getattr(self.handle, "ready", None)
        if ready is not None:
            # A launcher that knows better when its bot serves (Docker) waits for it itself and
            # gives the address to connect to only then.
            try:
                self.address = ready(config.start_timeout)
            except CallFailed as failed:
                self.out = failed
                return
        remote = RemoteBot(self.address)
        try:
            launched = self.ref.kind != "address"
            remote.wait_ready(config.start_timeout, self.handle.exit_status if launched else None)
            self.info = remote.handshake(config.handshake_timeout)
        except CallFailed as failed:
            remote.close()
            self.out = self.explain(failed)
            return
        self.remote = remote
        if self.info.name:
            self.name = self.info.name

    def explain(self, failed: CallFailed, wait: float = 0.5) -> CallFailed:
        """A lost connection to a bot whose process has ended is a crash."""
        if failed.kind not in (faults.CONNECTION, faults.CRASH):
            return failed
        deadline = time.monotonic() + wait
        while True:
            status = self.handle.exit_status()
            if status is not None:
                if failed.kind == faults.CRASH:
                    return failed
                exit_fault = getattr(self.handle, "exit_fault", None)
                if exit_fault is not None:  # the launcher knows the cause (Docker: OOM-killed)
                    return CallFailed(*exit_fault())
                return CallFailed(faults.CRASH, f"the bot {describe_exit(status)}")
            if time.monotonic() >= deadline:
                return failed
            time.sleep(0.01)

    @property
    def dead(self) -> bool:
        return self.handle.exit_status() is not None

    def stop(self, grace: float) -> None:
        if self.remote is not None:
            self.remote.close()
            self.remote = None
        self.handle.stop(grace)

    def seat_record(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "bot": self.ref.text,
            "kind": self.ref.kind,
            **_info_dict(self.info),
            **seat_digest(self.ref),
        }


def _must_restart(entrant: _Entrant, game_id: str, deal: int) -> bool:
    """Whether a per-game bot must be restarted before game `game_id` of `deal` (the seed)."""
    serve_game = getattr(entrant.handle, "serve_game", None)
    if serve_game is None:
        return entrant.played
    return bool(serve_game(game_id, deal))


def _unique_names(entrants: Sequence[_Entrant]) -> None:
    seen: dict[str, int] = {}
    for entrant in entrants:
        base = entrant.name or "bot"
        seen[base] = seen.get(base, 0) + 1
        if seen[base] > 1:
            entrant.name = f"{base}#{seen[base]}"


# -- one game ----------------------------------------------------------------------------------


class _Table:
    """The referee's bookkeeping for one game: who can still be asked, and the fault policy."""

    def __init__(
        self, game: Game, entrants: Sequence[_Entrant], config: MatchConfig, game_id: str
    ) -> None:
        self.game = game
        self.entrants = entrants
        self.config = config
        self.game_id = game_id
        self.counts = [0] * len(entrants)
        self.silent: set[int] = set()  # seats not asked any more in this game
        self.logs: dict[
            tuple[int, int], list[list[Any]]
        ] = {}  # (round, turn) -> [[seat, text], ...]
        self.observer: Observer | None = None

    def askable(self, seat: int) -> bool:
        return seat not in self.silent and self.entrants[seat].remote is not None

    def fault(self, seat: int, failed: CallFailed) -> None:
        entrant = self.entrants[seat]
        failed = entrant.explain(failed)
        self.game.add_fault(seat, failed.kind, failed.detail)
        self.counts[seat] += 1
        log.info("%s: %s: %s: %s", self.game_id, entrant.name, failed.kind, failed.detail)
        if (
            failed.kind in faults.FATAL
            or self.counts[seat] >= self.config.max_faults
            or entrant.dead
        ):
            self.forfeit(seat, failed)

    def forfeit(self, seat: int, why: CallFailed) -> None:
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
        game, timeout = self.game, self.config.timeout
        n = game.settings.players
        views = [game.view(seat) for seat in range(n)]
        cards = [min(view.hand) for view in views]  # the default move
        asked = [seat for seat in range(n) if self.askable(seat)]
        requests = pick_card_requests([views[seat] for seat in asked], self.game_id, timeout)
        pending = [
            (seat, self.entrants[seat].remote.pick_card_future(request, timeout))  # type: ignore[union-attr]
            for seat, request in zip(asked, requests)
        ]
        for seat, future in pending:
            try:
                card = RemoteBot.card_from(future, timeout)
            except CallFailed as failed:
                self.fault(seat, failed)
                continue
            hand = views[seat].hand
            if card in hand:
                cards[seat] = card
            else:  # checked here, seat by seat, because the engine takes a turn's cards all at once
                self.fault(seat, CallFailed(faults.ILLEGAL_CARD, str(CardNotInHand(card, hand))))
        game.play(cards)

    def draft(self) -> None:
        game, timeout = self.game, self.config.timeout
        seat = game.drafter
        view = game.view(seat)
        if self.askable(seat):
            request = pick_card_request(view, self.game_id, timeout).SerializeToString()
            remote = self.entrants[seat].remote
            assert remote is not None
            try:
                game.draft(RemoteBot.card_from(remote.pick_card_future(request, timeout), timeout))
                return
            except CallFailed as failed:
                self.fault(seat, failed)
            except IllegalMove as illegal:  # the engine judges the pick
                self.fault(seat, CallFailed(faults.ILLEGAL_CARD, str(illegal)))
        game.draft(min(view.pool))

    def choose_row(self) -> None:
        game, timeout = self.game, self.config.timeout
        seat = game.waiting_for[0]
        view = game.view(seat)
        if self.askable(seat):
            request = choose_row_request(view, self.game_id, timeout).SerializeToString()
            remote = self.entrants[seat].remote
            assert remote is not None
            try:
                game.choose_row(remote.choose_row(request, timeout))
                return
            except CallFailed as failed:
                self.fault(seat, failed)
            except IllegalMove as illegal:  # the engine judges the row
                self.fault(seat, CallFailed(faults.ILLEGAL_ROW, str(illegal)))
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

    def record(self) -> dict[str, Any]:
        record = self.game.record(
            game_id=self.game_id, seats=[e.seat_record() for e in self.entrants]
        )
        botlogs.attach(record, self.logs)
        return record

    def notify(self) -> None:
        """GameOver to every bot still reachable (optional for bots: failures are only logged)."""
        game, timeout = self.game, self.config.timeout
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


# -- the match ---------------------------------------------------------------------------------


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
        """Called with the game's record so far after every turn, and when the game ends (--watch)."""
        refs = [b if isinstance(b, BotRef) else parse_bot(b) for b in bots]
        self.config.settings(
            len(refs)
        )  # the player count and settings are checked before anything starts
        self.refs = refs
        self.launcher = launcher or self._local_launcher
        self.entrants: list[_Entrant] = []
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
            self.entrants.append(_Entrant(ref, self.launcher(ref)))
        for entrant in self.entrants:
            entrant.spawn()
        self._connect(self.entrants)
        _unique_names(self.entrants)
        for entrant in self.entrants:
            if entrant.out is not None:
                self.rejections.append(
                    Rejection(entrant.name, entrant.ref.text, entrant.out.kind, entrant.out.detail)
                )
                log.error(
                    "bot %s (%s) rejected: %s: %s",
                    entrant.name,
                    entrant.ref.text,
                    entrant.out.kind,
                    entrant.out.detail,
                )
                entrant.stop(self.config.stop_grace)

    def _connect(self, entrants: Sequence[_Entrant]) -> None:
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
        if not dead:
            return
        names = [e.name for e in dead]
        for entrant in dead:
            log.warning(
                "restarting %s (it %s)",
                entrant.name,
                describe_exit(entrant.handle.exit_status() or 0),
            )
            entrant.spawn()
        self._connect(dead)
        for entrant, name in zip(dead, names):
            entrant.name = name  # keep the match's name (and its #2 suffix)
            if entrant.out is not None:
                log.error("bot %s could not be restarted: %s", entrant.name, entrant.out.detail)
                entrant.stop(self.config.stop_grace)

    def _renew(self, index: int) -> None:
        """Bots whose handle asks for it (`per_game`: Docker) start afresh for a game unless the
        handle says their process may play it (`serve_game(game_id, deal)`: never a deal twice),
        so that nothing carries over that should not; the next game's start is prepared while
        this one plays (the handle's `prefetch(game_id)`)."""
        game_id, deal, _ = self.config.plan(index, len(self.entrants))
        fresh = [e for e in self.entrants if e.out is None and getattr(e.handle, "per_game", False)]
        stale = [e for e in fresh if _must_restart(e, game_id, deal)]
        if stale:
            names = [e.name for e in stale]
            for entrant in stale:
                entrant.stop(self.config.stop_grace)
                entrant.spawn()
            self._connect(stale)
            for entrant, name in zip(stale, names):
                entrant.name = name  # keep the match's name (and its #2 suffix)
                if entrant.out is not None:
                    log.error("bot %s could not be restarted: %s", entrant.name, entrant.out.detail)
                    entrant.stop(self.config.stop_grace)
        if index + 1 < self.config.games:
            next_id = self.config.plan(index + 1, len(self.entrants))[0]
            for entrant in fresh:
                prefetch = getattr(entrant.handle, "prefetch", None)
                if entrant.out is None and prefetch is not None:
                    prefetch(next_id)

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
        table = _Table(game, self.entrants, config, game_id)
        for seat, entrant in enumerate(self.entrants):
            if entrant.out is not None:  # rejected: already reported once, at the start
                game.add_fault(seat, entrant.out.kind, entrant.out.detail)
                table.counts[seat] += 1
                game.forfeit(seat)
                table.silent.add(seat)
        for entrant in self.entrants:
            entrant.played = True
        botlogs.take([e.handle for e in self.entrants])  # start-up output is not a turn's
        table.observer = self.observer
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


__all__ = [
    "EXIT_FAULTS",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_REJECTED",
    "EXIT_USAGE",
    "Entry",
    "GameSummary",
    "Match",
    "MatchConfig",
    "MatchResult",
    "Rejection",
    "Standing",
    "run_match",
]
