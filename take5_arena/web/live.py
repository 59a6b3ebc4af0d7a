"""Live feeds for the web pages: the standings as they are republished, and every game in progress
turn by turn, fanned out to any number of server-sent-event viewers.

The ladder plays on its own threads; :meth:`LiveHub.turn` (a turn watcher of
take5_arena/referee/tournament/run/table.py) is called there after every turn, makes the public form
of the record (without the bots' own output: take5_arena/service/live_feed.py's ``turn_message``)
and its JSON once, and hands it to the event loop. A viewer holds only the newest message of its
feed (each message is the whole state: a game's record so far, the standings rows), so a slow
viewer costs one message of memory, never a queue, and catches up with the present when it reads
again.

On a store shared by several processes (PostgreSQL), the games other processes play reach the hub
through the store (take5_arena/service/live_feed.py: :meth:`LiveHub.post`); a state older than the
one shown is dropped, and a game nobody has updated for a while (its referee died) leaves the
list.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from take5.record import GameRecord
from take5_arena.referee.store.live import KEEP_SECONDS, LiveGame
from take5_arena.referee.tournament.run.spec import TableSpec
from take5_arena.service.competitions import DEFAULT
from take5_arena.service.live_feed import turn_message

LIVE = "live"
"""The feed of the default competition's games in progress (their ids and bots)."""
STANDINGS = "standings"
"""The feed of the default competition's standings rows."""
KEEP_FINISHED_SECONDS = 60.0
"""How long a finished game stays watchable live (then its replay is the place)."""


def game_feed(game_id: str) -> str:
    """The feed of one game's turns."""
    return "game:" + game_id


def live_feed(competition: str = DEFAULT) -> str:
    """The feed of a competition's games in progress (:data:`LIVE`: the default's); a
    competition's name has no ``:`` (competitions.py), so no two competitions share one."""
    return f"{LIVE}:{competition}" if competition else LIVE


def standings_feed(competition: str = DEFAULT) -> str:
    """The feed of a competition's standings (:data:`STANDINGS`: the default's)."""
    return f"{STANDINGS}:{competition}" if competition else STANDINGS


class Viewer:
    """One subscriber: the newest message of its feed, and an event set when it changes (or when
    its stream is to end: :meth:`end`)."""

    def __init__(self) -> None:
        self.latest: str | None = None
        self.changed = asyncio.Event()
        self.ended = False

    def end(self) -> None:
        """End the stream at its next step (its place was given to another address's viewer)."""
        self.ended = True
        self.changed.set()

    def put(self, data: str) -> None:
        self.latest = data
        self.changed.set()

    async def next(self, timeout: float) -> str | None:
        """The newest message once there is one, or None after ``timeout`` seconds (keep-alive)."""
        try:
            await asyncio.wait_for(self.changed.wait(), timeout)
        except asyncio.TimeoutError:
            return None
        self.changed.clear()
        data, self.latest = self.latest, None
        return data


@dataclass
class _Game:
    game_id: str
    entrants: list[str]
    data: str
    round: int = 0
    turn: int = 0
    finished_at: float | None = None
    seen_at: float = 0.0
    competition: str = DEFAULT


@dataclass
class LiveHub:
    """The feeds and their viewers; its methods run on the web server's event loop, except
    :meth:`turn`, which any thread may call."""

    loop: asyncio.AbstractEventLoop
    clock: Callable[[], float] = time.monotonic
    _viewers: dict[str, set[Viewer]] = field(default_factory=dict)
    _games: dict[str, _Game] = field(default_factory=dict)
    _standings: dict[str, str] = field(default_factory=dict)
    competition_of: Callable[[str], str] = lambda home: DEFAULT
    """The competition whose directory is a table's ``home`` (the default's for any other
    directory, or none). Asked at every turn, not copied at the start: the server opens a
    competition added while it runs (take5_arena/service/serve.py)."""
    turns: int = 0
    """Turns seen (also of games that nobody watched)."""

    # -- from the ladder's threads ---------------------------------------------------------------

    def turn(self, spec: TableSpec, game_id: str, record: GameRecord) -> None:
        """A turn of ``game_id`` was played (a turn watcher: quick, never raises): a game of
        the competition whose directory played its table."""
        self.post(turn_message(spec, game_id, record), self.competition_of(spec.home))

    def post(self, game: LiveGame, competition: str = DEFAULT) -> None:
        """The newest state of a game in progress of ``competition``, from any thread (this
        process's tables, or another process's read from the store:
        take5_arena/service/live_feed.py)."""
        try:
            self.loop.call_soon_threadsafe(self._turn, game, competition)
        except RuntimeError:  # the loop is closed: the web server is stopping
            pass

    # -- on the loop -------------------------------------------------------------------------------

    def _turn(self, message: LiveGame, competition: str = DEFAULT) -> None:
        self.turns += 1
        self._expire()
        game = self._games.get(message.game_id)
        new = game is None
        if game is None:
            game = self._games[message.game_id] = _Game(
                message.game_id, message.entrants, message.data, competition=competition
            )
        elif game.finished_at is not None or (message.round, message.turn) < (
            game.round,
            game.turn,
        ):
            return  # an older state than shown (the same game from the store, behind)
        game.data = message.data
        game.round, game.turn = message.round, message.turn
        game.seen_at = self.clock()
        done = message.done
        if done and game.finished_at is None:
            game.finished_at = self.clock()
        self._send(game_feed(message.game_id), message.data)
        if new or done:
            self._send(live_feed(game.competition), self.live_json(game.competition))

    def _expire(self) -> None:
        now = self.clock()
        gone = [
            g
            for g in self._games.values()
            if (g.finished_at is not None and now - g.finished_at > KEEP_FINISHED_SECONDS)
            or now - g.seen_at > KEEP_SECONDS  # its referee stopped or died mid-game
        ]
        for g in gone:
            del self._games[g.game_id]
        for competition in sorted({g.competition for g in gone}):
            self._send(live_feed(competition), self.live_json(competition))

    def _send(self, feed: str, data: str) -> None:
        for viewer in self._viewers.get(feed, ()):
            viewer.put(data)

    def set_standings(self, data: str, competition: str = DEFAULT) -> None:
        self._standings[competition] = data
        self._send(standings_feed(competition), data)

    def subscribe(self, feed: str) -> Viewer:
        """A new viewer of ``feed``, given the feed's present state first (if it has one)."""
        viewer = Viewer()
        self._viewers.setdefault(feed, set()).add(viewer)
        current = self.current(feed)
        if current is not None:
            viewer.put(current)
        return viewer

    def unsubscribe(self, feed: str, viewer: Viewer) -> None:
        viewers = self._viewers.get(feed)
        if viewers is not None:
            viewers.discard(viewer)
            if not viewers:
                del self._viewers[feed]

    def current(self, feed: str) -> str | None:
        """The present state of a feed (None: nothing to show yet)."""
        kind, _, competition = feed.partition(":")
        if kind == STANDINGS:
            return self._standings.get(competition)
        if kind == LIVE:
            return self.live_json(competition)
        game = self._games.get(feed.removeprefix("game:"))
        return game.data if game is not None else None

    def has_game(self, game_id: str, competition: str = DEFAULT) -> bool:
        """Whether ``game_id`` is a game of ``competition`` in progress (or just finished)."""
        game = self._games.get(game_id)
        return game is not None and game.competition == competition

    def live_games(self, competition: str = DEFAULT) -> list[dict[str, Any]]:
        """The games in progress of ``competition`` (and those finished in the last minute),
        newest first."""
        return [
            {
                "id": g.game_id,
                "entrants": g.entrants,
                "round": g.round,
                "turn": g.turn,
                "done": g.finished_at is not None,
            }
            for g in reversed(self._games.values())
            if g.competition == competition
        ]

    def live_json(self, competition: str = DEFAULT) -> str:
        return json.dumps({"games": self.live_games(competition)}, ensure_ascii=False)

    @property
    def viewers(self) -> int:
        return sum(len(v) for v in self._viewers.values())


@dataclass
class Streams:
    """The open live streams by client address, oldest first (on the event loop)."""

    per_client: dict[str, dict[Viewer, None]] = field(default_factory=dict)
    total: int = 0

    def held(self, client: str) -> int:
        return len(self.per_client.get(client, ()))

    def add(self, client: str, viewer: Viewer) -> None:
        self.per_client.setdefault(client, {})[viewer] = None
        self.total += 1

    def release(self, client: str, viewer: Viewer) -> None:
        mine = self.per_client.get(client)
        if mine is not None and viewer in mine:
            del mine[viewer]
            self.total -= 1
            if not mine:
                del self.per_client[client]

    def make_room(self, client: str) -> bool:
        """When every place is taken: end the oldest stream of the busiest address if it holds
        more than ``client`` would with this one (fair shares); whether a place was made."""
        if not self.per_client:
            return False
        busiest, viewers = max(self.per_client.items(), key=lambda item: len(item[1]))
        if len(viewers) <= self.held(client) + 1:
            return False
        oldest = next(iter(viewers))
        self.release(busiest, oldest)
        oldest.end()
        return True


__all__ = [
    "KEEP_FINISHED_SECONDS",
    "LIVE",
    "STANDINGS",
    "LiveHub",
    "Streams",
    "Viewer",
    "game_feed",
    "live_feed",
    "standings_feed",
]
