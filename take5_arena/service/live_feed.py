"""Games in progress through a store that several processes share (PostgreSQL: the store's
``live_games``, take5_arena/referee/store/live.py), so that the web pages of any process show
every referee's games turn by turn, not only those of their own process. Each state is the one
message of the game's feed (:func:`turn_message`), made once wherever it is shown.

- :class:`LiveWriter`, in a referee that plays the ladder: a turn watcher keeps the newest state of
  each of its games in memory (quick, on the table's thread), and a thread writes the states that
  changed every :data:`INTERVAL` seconds, in one transaction (a game's turns between two writes
  are skipped: each state is the whole game so far).
- :class:`LiveReader`, in a web process: reads the states written since the last read every
  :data:`INTERVAL` seconds and hands them to the pages' hub (take5_arena/web/live.py's
  ``LiveHub.post``), which drops a state older than the one it shows (its own process's, seen
  first).

Each competition of the arena has its own store (take5_arena/service/competitions.py: on
PostgreSQL a schema of the arena's database), and its games in progress go through that store: the
writer puts each game into the store of the competition whose directory played its table, and the
reader hands each state to the hub as a game of the competition whose store it read, so that a
game of ``duel`` is listed on ``/c/duel/live`` of every web process, and nowhere else. The
competitions are asked for at every round: one added while the server runs is shared from then
on.

A store that cannot be reached for a while is said in the log, once, and tried again: the pages
go on with what they have.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from take5.record import GameRecord
from take5_arena.referee.store import Store
from take5_arena.referee.store.live import LiveGame
from take5_arena.referee.tournament.run.spec import TableSpec
from take5_arena.referee.tournament.run.table import watch_turns
from take5_arena.service import logs
from take5_arena.service.competitions import DEFAULT
from take5_arena.service.messages import public_record

INTERVAL = 0.5
"""Seconds between two writes of a referee, and two reads of a web process."""


def turn_message(spec: TableSpec, game_id: str, record: GameRecord) -> LiveGame:
    """A game's state after a turn, as its feed sends it: the public form of the record so far
    (without the bots' own output: take5_arena/service/messages.py), in JSON made once."""
    entrants = [seat.name for seat in spec.seats]
    rounds = record.get("rounds") or []
    last: dict[str, Any] = dict(rounds[-1]) if rounds else {}
    done = bool(record.get("complete"))
    message = {
        "id": game_id,
        "entrants": entrants,
        "record": public_record(record),
        "done": done,
        "sent_at": time.time(),
    }
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return LiveGame(
        game_id, entrants, int(last.get("round", 0)), len(last.get("turns") or []), done, data
    )


class Hub(Protocol):
    """Where a web process's pages take the states of games in progress (web/live.py's hub)."""

    def post(self, game: LiveGame, competition: str = DEFAULT) -> None: ...


Competitions = Callable[[], Mapping[str, Path]]
"""The competitions a process serves as they are now, by name ('' the default), each with its
directory (take5_arena/service/servicer.py's ``ServiceParts.competition_directories``): the
server opens a competition added while it runs."""


class _Poller:
    """A thread that runs ``step`` on the store of each competition that several processes share
    every :data:`INTERVAL` seconds until stopped (once more at the end), opening a store again
    after a failure. A competition on SQLite (one made on it before competitions went to
    PostgreSQL, in an arena on PostgreSQL) has no games in progress to share: it is skipped."""

    def __init__(self, competitions: Competitions, name: str) -> None:
        self.competitions = competitions
        self.log = logs.logger(name)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._stores: dict[str, Store | None] = {}
        """Each competition's open store (None: not shared)."""
        self._failing: set[str] = set()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def step(self, competition: str, store: Store) -> None:
        raise NotImplementedError

    def _store(self, competition: str, directory: Path) -> Store | None:
        if competition not in self._stores:
            store: Store | None = None
            if shared_store(directory):
                store = Store(directory)
                try:
                    store.live.ensure()
                except BaseException:
                    store.close()
                    raise
            self._stores[competition] = store
        return self._stores[competition]

    def _round(self) -> None:
        for competition, directory in self.competitions().items():
            try:
                store = self._store(competition, directory)
                if store is not None:
                    self.step(competition, store)
                self._failing.discard(competition)
            except Exception as error:  # noqa: BLE001 - said once; tried again
                if competition not in self._failing:
                    where = f" of competition {competition}" if competition else ""
                    self.log.error("live games%s: %s: %s", where, type(error).__name__, error)
                self._failing.add(competition)
                failed = self._stores.pop(competition, None)
                if failed is not None:
                    failed.close()

    def _run(self) -> None:
        try:
            while True:
                stopping = self._stop.wait(INTERVAL)
                self._round()
                if stopping:
                    return
        finally:
            for store in self._stores.values():
                if store is not None:
                    store.close()


class LiveWriter(_Poller):
    """Writes the games this process plays to the store of their competition (see the module
    text); ``competition_of`` names the competition of a table's ``home`` directory."""

    def __init__(self, competitions: Competitions, competition_of: Callable[[str], str]) -> None:
        super().__init__(competitions, "live-writer")
        self.competition_of = competition_of
        self._lock = threading.Lock()
        self._changed: dict[str, dict[str, LiveGame]] = {}
        """By competition, by game: the newest states not written yet."""
        self._unwatch: Callable[[], None] | None = None

    def start(self) -> None:
        self._unwatch = watch_turns(self.turn)
        super().start()

    def stop(self) -> None:
        if self._unwatch is not None:
            self._unwatch()
        super().stop()

    def turn(self, spec: TableSpec, game_id: str, record: GameRecord) -> None:
        """A turn watcher (take5_arena/referee/tournament/run/table.py): quick, never raises."""
        game = turn_message(spec, game_id, record)
        competition = self.competition_of(spec.home)
        with self._lock:
            self._changed.setdefault(competition, {})[game_id] = game

    def step(self, competition: str, store: Store) -> None:
        with self._lock:
            changed = self._changed.pop(competition, {})
        try:
            store.live.write(list(changed.values()))
        except BaseException:
            with self._lock:  # written at the next step, unless newer states came meanwhile
                self._changed[competition] = {**changed, **self._changed.get(competition, {})}
            raise

    def _round(self) -> None:
        super()._round()
        served = set(self.competitions())
        with self._lock:  # a competition with no store to share: its states go nowhere
            for gone in set(self._changed) - served:
                del self._changed[gone]
            for competition in served:
                if self._stores.get(competition, False) is None:
                    self._changed.pop(competition, None)


class LiveReader(_Poller):
    """Hands the games other processes write to the stores of the competitions to ``hub``, each
    as a game of its competition (see the module text)."""

    def __init__(self, competitions: Competitions, hub: Hub) -> None:
        super().__init__(competitions, "live-reader")
        self.hub = hub
        self.stamps: dict[str, int] = {}
        """By competition, the last stamp read of its store."""

    def step(self, competition: str, store: Store) -> None:
        stamp = self.stamps.get(competition, 0)
        for game in store.live.since(stamp):
            self.hub.post(game, competition)
            stamp = max(stamp, game.stamp)
        self.stamps[competition] = stamp

    def _store(self, competition: str, directory: Path) -> Store | None:
        if competition not in self._stores:
            self.stamps.pop(competition, None)  # (again) from the first state there is
        return super()._store(competition, directory)


def shared_store(directory: Path) -> bool:
    """Whether the tournament's store is shared by several processes (PostgreSQL)."""
    with Store(directory, readonly=True) as store:
        return store.live.shared


__all__ = [
    "INTERVAL",
    "Competitions",
    "Hub",
    "LiveReader",
    "LiveWriter",
    "shared_store",
    "turn_message",
]
