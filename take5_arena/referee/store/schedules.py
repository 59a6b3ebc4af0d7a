"""The schedules and their games: the ``schedules``, ``schedule_games`` and ``games`` tables, and
which schedule is the current one (``meta``'s ``current_schedule``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .base import CLAIMS, Repository, StoreError, meta, now, set_meta
from .postgres import Row


@dataclass(frozen=True)
class StoredGame:
    game_id: str
    table_no: int
    rotation: int
    deal_seed: int
    duplicate_set: str
    seats: tuple[int, ...]  # entrant version ids by seat
    settings: dict[str, Any]
    status: str
    attempts: int
    last_error: str | None
    deal_season: int | None = None
    """The deal key that dealt the game (:meth:`.DealKeys.seasons`); None: a public seed."""
    deal_id: str | None = None
    """What the key's HMAC was taken of (docs/record-format.md, "Deals")."""

    @property
    def sealed(self) -> bool:
        """A game dealt from a secret key and not recorded yet: its seed is not in the store
        (``deal_seed`` is 0) and comes from the key when it is played."""
        return self.deal_season is not None and self.status == "pending"


@dataclass(frozen=True)
class ScheduleInfo:
    """A stored schedule (its games: :meth:`Schedules.games`)."""

    schedule_id: str
    created_at: str
    description: str
    games: int


class Schedules(Repository):
    """``store.schedules``: the schedules saved, their games in order, each game's status."""

    def save(
        self,
        schedule_id: str,
        games: Sequence[Mapping[str, Any]],
        *,
        description: str,
        settings: Mapping[str, Any],
        entrants: Sequence[str],
    ) -> bool:
        """Store a schedule and its games (``game_id, table, rotation, deal_seed, duplicate_set,
        seats`` (version ids), ``settings``, and for a game dealt from a deal key ``deal_season``
        and ``deal_id``: its seed is then kept out of the store until the game is recorded). Games
        already known (same id) are kept as they are. Returns whether the schedule is new."""
        with self._transaction() as db:
            if db.execute(
                "SELECT 1 FROM schedules WHERE schedule_id = ?", (schedule_id,)
            ).fetchone():
                set_meta(db, "current_schedule", schedule_id)
                return False
            db.execute(
                "INSERT INTO schedules(schedule_id, created_at, description, settings, entrants, "
                "games) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    schedule_id,
                    now(),
                    description,
                    json.dumps(dict(settings), sort_keys=True),
                    json.dumps(list(entrants)),
                    len(games),
                ),
            )
            stamp = now()
            db.executemany(
                "INSERT INTO games(game_id, table_no, rotation, deal_seed, duplicate_set,"
                " seats, settings, scheduled_at, deal_season, deal_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [
                    (
                        g["game_id"],
                        g["table"],
                        g["rotation"],
                        0 if g.get("deal_season") is not None else g["deal_seed"],  # sealed
                        g["duplicate_set"],
                        json.dumps(list(g["seats"])),
                        json.dumps(dict(g["settings"]), sort_keys=True),
                        stamp,
                        g.get("deal_season"),
                        g.get("deal_id"),
                    )
                    for g in games
                ],
            )
            db.executemany(
                "INSERT INTO schedule_games(schedule_id, position, game_id) VALUES (?, ?, ?)",
                [(schedule_id, i, g["game_id"]) for i, g in enumerate(games)],
            )
            set_meta(db, "current_schedule", schedule_id)
        return True

    def all(self, prefix: str = "") -> list[ScheduleInfo]:
        """The schedules whose id starts with ``prefix`` (all: ""), by id."""
        rows = self._db.execute(
            "SELECT schedule_id, created_at, description, games FROM schedules"
            " WHERE substr(schedule_id, 1, ?) = ? ORDER BY schedule_id",
            (len(prefix), prefix),
        )
        return [ScheduleInfo(*row) for row in rows]

    def schedule_of(self, game_id: str) -> str | None:
        """The id of the schedule a game belongs to (None: no such game)."""
        row = self._db.execute(
            "SELECT schedule_id FROM schedule_games WHERE game_id = ? ORDER BY schedule_id LIMIT 1",
            (game_id,),
        ).fetchone()
        return None if row is None else str(row[0])

    def scheduled_seats(self, prefix: str) -> dict[int, int]:
        """Games scheduled per entrant version id (recorded or not), over the schedules whose id
        starts with ``prefix``."""
        counts: dict[int, int] = {}
        rows = self._db.execute(
            "SELECT g.seats FROM games g JOIN schedule_games s ON s.game_id = g.game_id"
            " WHERE substr(s.schedule_id, 1, ?) = ?",
            (len(prefix), prefix),
        )
        for (seats,) in rows:
            for version_id in json.loads(seats):
                counts[version_id] = counts.get(version_id, 0) + 1
        return counts

    def pending_games(self, prefix: str) -> dict[str, list[str]]:
        """The games still to play (not recorded, not abandoned) of the schedules whose id starts
        with ``prefix``, by schedule id in order, each in schedule order: what a referee picks up
        from the store, whoever planned them (several referees on one ladder:
        take5_arena/service/ladder.py)."""
        rows = self._db.execute(
            "SELECT s.schedule_id, g.game_id FROM games g"
            " JOIN schedule_games s ON s.game_id = g.game_id"
            " WHERE g.status = 'pending' AND substr(s.schedule_id, 1, ?) = ?"
            " AND g.game_id NOT IN (SELECT game_id FROM abandoned_games)"
            " ORDER BY s.schedule_id, s.position",
            (len(prefix), prefix),
        )
        pending: dict[str, list[str]] = {}
        for sid, game_id in rows:
            pending.setdefault(str(sid), []).append(str(game_id))
        return pending

    def current(self) -> dict[str, Any] | None:
        sid = meta(self._db, "current_schedule")
        return None if sid is None else self.get(sid)

    def get(self, schedule_id: str) -> dict[str, Any] | None:
        """A schedule's id, creation time, description, settings, entrants and number of games
        (None: no such schedule)."""
        row = self._db.execute(
            "SELECT * FROM schedules WHERE schedule_id = ?", (schedule_id,)
        ).fetchone()
        return (
            None
            if row is None
            else {
                "schedule_id": row["schedule_id"],
                "created_at": row["created_at"],
                "description": row["description"],
                "settings": json.loads(row["settings"]),
                "entrants": json.loads(row["entrants"]),
                "games": row["games"],
            }
        )

    @staticmethod
    def _game(row: sqlite3.Row | Row) -> StoredGame:
        return StoredGame(
            game_id=row["game_id"],
            table_no=row["table_no"],
            rotation=row["rotation"],
            deal_seed=row["deal_seed"],
            duplicate_set=row["duplicate_set"],
            seats=tuple(json.loads(row["seats"])),
            settings=json.loads(row["settings"]),
            status=row["status"],
            attempts=row["attempts"],
            last_error=row["last_error"],
            deal_season=row["deal_season"],
            deal_id=row["deal_id"],
        )

    def games(self, schedule_id: str, *, pending_only: bool = False) -> list[StoredGame]:
        """The games of a schedule in schedule order (only those not yet recorded, if asked)."""
        sql = (
            "SELECT g.* FROM schedule_games s JOIN games g ON g.game_id = s.game_id "
            "WHERE s.schedule_id = ?"
            + (
                " AND g.status = 'pending'"
                " AND g.game_id NOT IN (SELECT game_id FROM abandoned_games)"
                if pending_only
                else ""
            )
            + " ORDER BY s.position"
        )
        return [self._game(r) for r in self._db.execute(sql, (schedule_id,))]

    def game(self, game_id: str) -> StoredGame:
        row = self._db.execute("SELECT * FROM games WHERE game_id = ?", (game_id,)).fetchone()
        if row is None:
            raise StoreError(f"no game {game_id}")
        return self._game(row)

    def claim(self, key: str) -> bool:
        """Claim the table whose key is ``key`` (its first game's id) for this store's referee,
        or False when another referee on the same store holds it (several referees on one
        PostgreSQL store: base.py's POSTGRES dialect). Granted on SQLite, where the directory's run
        lock lets one referee play. Not a promise that its games are still to play: read their
        status after the claim."""
        if self._dialect.claim is None:
            return True
        return bool(self._db.execute(self._dialect.claim, (CLAIMS, key)).fetchone()[0])

    def release(self, key: str) -> None:
        """Give back a table :meth:`claim` claimed (its games recorded, or given up)."""
        if self._dialect.release is not None:
            self._db.execute(self._dialect.release, (CLAIMS, key)).fetchone()

    def mark_played(self, game_id: str, seed: int) -> None:
        """The game is played: one more attempt, and a game dealt from a deal key gets its seed,
        kept out of the store until now (:meth:`save`). Called inside the transaction that records
        the game (:meth:`.Results.record_game`), which it joins: the same connection."""
        self._db.execute(
            "UPDATE games SET status = 'done', attempts = attempts + 1,"
            " deal_seed = CASE WHEN deal_season IS NULL THEN deal_seed ELSE ? END"
            " WHERE game_id = ?",
            (seed, game_id),
        )

    def mark_failed(self, game_id: str, error: str) -> None:
        """One more attempt at the game, which failed for ``error`` and stays pending (inside the
        transaction of :meth:`.Results.record_infra_failure`)."""
        self._db.execute(
            "UPDATE games SET attempts = attempts + 1, last_error = ? WHERE game_id = ?",
            (error[:2000], game_id),
        )

    def progress(self, schedule_id: str) -> dict[str, int]:
        row = self._db.execute(
            "SELECT COUNT(*) AS total, COUNT(CASE WHEN g.status = 'done' THEN 1 END) AS done, "
            "COALESCE(SUM(g.attempts), 0) AS attempts "
            "FROM schedule_games s JOIN games g ON g.game_id = s.game_id WHERE s.schedule_id = ?"
            " AND (g.status = 'done' OR g.game_id NOT IN (SELECT game_id FROM abandoned_games))",
            (schedule_id,),
        ).fetchone()
        failures = self._db.execute(
            "SELECT COUNT(*) FROM infra_failures f JOIN schedule_games s ON s.game_id = f.game_id "
            "WHERE s.schedule_id = ?",
            (schedule_id,),
        ).fetchone()[0]
        return {"total": row["total"], "done": row["done"], "infra_failures": failures}


__all__ = ["ScheduleInfo", "Schedules", "StoredGame"]
