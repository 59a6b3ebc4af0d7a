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

A store that cannot be reached for a while is said in the log, once, and tried again: the pages
go on with what they have.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from take5.record import GameRecord
from take5_arena.referee.store import Store
from take5_arena.referee.store.live import LiveGame
from take5_arena.referee.tournament.run.spec import TableSpec
from take5_arena.referee.tournament.run.table import watch_turns
from take5_arena.service import logs
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

    def post(self, game: LiveGame) -> None: ...


class _Poller:
    """A thread that runs ``step`` on an open store every :data:`INTERVAL` seconds until stopped
    (once more at the end), opening the store again after a failure."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.log = logs.logger(name)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._failing = False

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def step(self, store: Store) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        store: Store | None = None
        try:
            while True:
                stopping = self._stop.wait(INTERVAL)
                try:
                    if store is None:
                        store = Store(self.directory)
                        store.live.ensure()
                    self.step(store)
                    self._failing = False
                except Exception as error:  # noqa: BLE001 - said once; tried again
                    if not self._failing:
                        self.log.error("live games: %s: %s", type(error).__name__, error)
                    self._failing = True
                    if store is not None:
                        store.close()
                    store = None
                if stopping:
                    return
        finally:
            if store is not None:
                store.close()


class LiveWriter(_Poller):
    """Writes the games this process plays to the store (see the module text)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory, "live-writer")
        self._lock = threading.Lock()
        self._changed: dict[str, LiveGame] = {}
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
        with self._lock:
            self._changed[game_id] = game

    def step(self, store: Store) -> None:
        with self._lock:
            changed, self._changed = self._changed, {}
        try:
            store.live.write(list(changed.values()))
        except BaseException:
            with self._lock:  # written at the next step, unless newer states came meanwhile
                self._changed = {**changed, **self._changed}
            raise


class LiveReader(_Poller):
    """Hands the games other processes write to the store to ``hub`` (see the module text)."""

    def __init__(self, directory: Path, hub: Hub) -> None:
        super().__init__(directory, "live-reader")
        self.hub = hub
        self.stamp = 0

    def step(self, store: Store) -> None:
        for game in store.live.since(self.stamp):
            self.hub.post(game)
            self.stamp = max(self.stamp, game.stamp)


def shared_store(directory: Path) -> bool:
    """Whether the tournament's store is shared by several processes (PostgreSQL)."""
    with Store(directory, readonly=True) as store:
        return store.live.shared


__all__ = ["INTERVAL", "Hub", "LiveReader", "LiveWriter", "shared_store", "turn_message"]
