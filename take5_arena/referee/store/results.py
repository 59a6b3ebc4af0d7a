"""The results of the recorded games: the ``results``, ``seat_results``, ``bot_output`` and
``infra_failures`` tables.

Every finished game is written in one transaction (:meth:`Results.record_game`: the record, the
seats, the game's status, its bots' output accounting), and ``results.game_id`` is UNIQUE, so a game
can never be recorded twice, and a referee killed at any moment (SIGKILL included) leaves either the
whole game or none of it. The results table is derived from the records by one rule,
:func:`seat_rows`, which take5_arena/referee/store/integrity.py holds every row to.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import Connection, Repository, StoreError, now
from .records import UNRATED, Records
from .schedules import Schedules


@dataclass(frozen=True)
class VersionStats:
    """What an entrant version did so far: games recorded, faults committed in them."""

    games: int
    faults: int


@dataclass(frozen=True)
class Tally:
    """Counts over everything recorded up to a point (:meth:`Results.tally`): games, the faults in
    them by kind, and the infrastructure failures by kind. ``seq`` and ``infra_id`` mark the point,
    so that the next tally reads only what came after it (a metrics scrape costs what is new)."""

    seq: int = 0
    infra_id: int = 0
    games: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    infra: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SeatResult:
    game_id: str
    seq: int
    duplicate_set: str
    versions: tuple[int, ...]
    scores: tuple[int, ...]
    places: tuple[int, ...]
    faults: tuple[tuple[str, ...], ...]


class Results(Repository):
    """``store.results``: record a game (and a failure to play one), read the results back."""

    def __init__(self, db: Connection, schedules: Schedules, records: Records):
        super().__init__(db)
        self._schedules = schedules
        self._records = records

    def version_stats(self) -> dict[int, VersionStats]:
        """Rated games recorded and faults committed in them, per entrant version id (versions
        without a recorded game are left out; an author's unrated challenges do not count)."""
        rows = self._db.execute(
            "SELECT version_id, COUNT(*), COALESCE(SUM(json_array_length(faults)), 0)"
            f" FROM seat_results WHERE game_id NOT IN ({UNRATED}) GROUP BY version_id"
        )
        return {version_id: VersionStats(games, faults) for version_id, games, faults in rows}

    def record_game(
        self,
        game_id: str,
        record: Mapping[str, Any],
        *,
        run_id: str | None = None,
        seconds: float | None = None,
        output_budget: int | None = None,
    ) -> bool:
        """Store a finished game: its record, one row per seat, status 'done', in one transaction.
        Returns False (and changes nothing) if the game was already recorded, or was given up
        when its deal key was revealed.

        ``output_budget``: bytes of its own output (the turns' ``logs``) each entrant version may
        keep across the tournament's records; past it, that bot's output is dropped from its oldest
        records first (the games themselves stay whole: `logs` is optional in a record)."""
        game = self._schedules.game(game_id)
        if len(record["result"]["scores"]) != len(game.seats):
            raise StoreError(
                f"game {game_id}: the record has {len(record['result']['scores'])} seats, "
                f"the schedule {len(game.seats)}"
            )
        try:
            with self._transaction() as db:
                # a game given up when its deal key was revealed is never recorded, whoever
                # finishes it (a table still in flight then, on this referee or another)
                sql = "SELECT 1 FROM abandoned_games WHERE game_id = ?"
                if db.execute(sql, (game_id,)).fetchone():
                    return False
                db.execute(
                    "INSERT INTO results(game_id, record, finished_at, seconds, run_id) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (game_id, json.dumps(record, separators=(",", ":")), now(), seconds, run_id),
                )
                db.executemany(
                    "INSERT INTO seat_results(game_id, seat, version_id, score, place, forfeited, "
                    "faults) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(game_id, *row) for row in seat_rows(record, game.seats)],
                )
                self._schedules.mark_played(game_id, record.get("seed", game.deal_seed))
                used = output_bytes(record, len(game.seats))
                db.executemany(
                    "INSERT INTO bot_output(game_id, seat, version_id, bytes) VALUES (?, ?, ?, ?)",
                    [(game_id, seat, game.seats[seat], n) for seat, n in enumerate(used) if n],
                )
                if output_budget is not None:
                    for version_id in {game.seats[seat] for seat, n in enumerate(used) if n}:
                        self._keep_output_within(db, version_id, output_budget)
        except sqlite3.IntegrityError:
            if self._db.execute("SELECT 1 FROM results WHERE game_id = ?", (game_id,)).fetchone():
                return False
            raise
        return True

    @staticmethod
    def _keep_output_within(db: Connection, version_id: int, budget: int) -> None:
        """Drop ``version_id``'s output from its oldest records until what is kept fits
        ``budget``."""
        total = db.execute(
            "SELECT COALESCE(SUM(bytes), 0) FROM bot_output WHERE version_id = ? AND dropped = 0",
            (version_id,),
        ).fetchone()[0]
        if total <= budget:
            return
        rows = db.execute(
            "SELECT o.game_id, o.seat, o.bytes, r.record FROM bot_output o JOIN results r ON "
            "r.game_id = o.game_id WHERE o.version_id = ? AND o.dropped = 0 ORDER BY r.seq",
            (version_id,),
        )
        for game_id, seat, size, text in rows.fetchall():
            if total <= budget:
                break
            record = json.loads(text)
            drop_output(record, seat)
            db.execute(
                "UPDATE results SET record = ? WHERE game_id = ?",
                (json.dumps(record, separators=(",", ":")), game_id),
            )
            db.execute(
                "UPDATE bot_output SET dropped = 1 WHERE game_id = ? AND seat = ?", (game_id, seat)
            )
            total -= size

    def output_usage(self) -> dict[int, dict[str, int]]:
        """Per entrant version id: bytes of output kept, games whose output is kept, games whose
        output was dropped to stay within the budget."""
        rows = self._db.execute(
            "SELECT version_id, COALESCE(SUM(CASE WHEN dropped = 0 THEN bytes END), 0),"
            " COUNT(CASE WHEN dropped = 0 THEN 1 END), COUNT(CASE WHEN dropped = 1 THEN 1 END)"
            " FROM bot_output GROUP BY version_id"
        ).fetchall()
        return {r[0]: {"kept_bytes": r[1], "kept_games": r[2], "dropped_games": r[3]} for r in rows}

    def record_infra_failure(
        self, game_id: str, kind: str, detail: str, *, run_id: str | None = None
    ) -> None:
        """Note that a game could not be played for a reason that is nobody's fault; it stays
        pending."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO infra_failures(game_id, run_id, at, kind, detail) VALUES (?, ?, ?, "
                "?, ?)",
                (game_id, run_id, now(), kind, detail[-4000:]),
            )
            self._schedules.mark_failed(game_id, f"{kind}: {detail}")

    def infra_failures(self, schedule_id: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT f.* FROM infra_failures f"
        args: tuple[object, ...] = ()
        if schedule_id is not None:
            sql += " WHERE f.game_id IN (SELECT game_id FROM schedule_games WHERE schedule_id = ?)"
            args = (schedule_id,)
        return [dict(r) for r in self._db.execute(sql + " ORDER BY f.id", args)]

    def tally(self, since: Tally | None = None) -> Tally:
        """``since`` (or nothing) with what was recorded after it added: one read transaction."""
        since = since or Tally()
        faults, infra = dict(since.faults), dict(since.infra)
        db = self._db
        db.execute("BEGIN")  # deferred: a read transaction, also on a read-only store
        try:
            seq, games = db.execute(
                "SELECT COALESCE(MAX(seq), ?), COUNT(*) FROM results WHERE seq > ?",
                (since.seq, since.seq),
            ).fetchone()
            for kind, n in db.execute(
                "SELECT j.value, COUNT(*) FROM results r JOIN seat_results s ON s.game_id = "
                "r.game_id, json_each(s.faults) j WHERE r.seq > ? AND r.seq <= ? GROUP BY j.value",
                (since.seq, seq),
            ):
                faults[str(kind)] = faults.get(str(kind), 0) + n
            infra_id = since.infra_id
            for row_id, kind in db.execute(
                "SELECT id, kind FROM infra_failures WHERE id > ? ORDER BY id", (since.infra_id,)
            ):
                infra[kind] = infra.get(kind, 0) + 1
                infra_id = row_id
        finally:
            db.execute("COMMIT")
        return Tally(seq, infra_id, since.games + games, faults, infra)

    def recorded_count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def seat_results(
        self,
        schedule_id: str | None = None,
        *,
        published_only: bool = False,
        unrated: bool = False,
    ) -> list[SeatResult]:
        """Every rated game recorded as per-seat tuples, in the order recorded (for ratings); with
        ``published_only``, not those whose deal is unfinished
        (:meth:`.Records.unfinished_deals`); the unrated games of challenges (``UNRATED``) only
        with ``unrated``, or when ``schedule_id`` names one. A row that does not hold what the
        store writes is a StoreError naming it."""
        sql = (
            "SELECT r.seq, r.game_id, g.duplicate_set, sr.seat, sr.version_id, sr.score, sr.place, "
            "sr.faults FROM results r JOIN games g ON g.game_id = r.game_id "
            "JOIN seat_results sr ON sr.game_id = r.game_id"
        )
        args: tuple[object, ...] = ()
        if schedule_id is not None:
            sql += " WHERE r.game_id IN (SELECT game_id FROM schedule_games WHERE schedule_id = ?)"
            args = (schedule_id,)
        elif not unrated:
            sql += f" WHERE r.game_id NOT IN ({UNRATED})"
        games: dict[str, dict[str, Any]] = {}
        hidden = self._records.unfinished_deals() if published_only else set()
        for row in self._db.execute(sql + " ORDER BY r.seq, sr.seat", args):
            if row["duplicate_set"] in hidden:
                continue
            g = games.setdefault(
                row["game_id"],
                {
                    "seq": row["seq"],
                    "dup": row["duplicate_set"],
                    "v": [],
                    "s": [],
                    "p": [],
                    "f": [],
                },
            )
            g["v"].append(row["version_id"])
            g["s"].append(row["score"])
            g["p"].append(row["place"])
            g["f"].append(_fault_kinds(row["game_id"], row["seat"], row["faults"]))
        return [
            SeatResult(
                gid, g["seq"], g["dup"], tuple(g["v"]), tuple(g["s"]), tuple(g["p"]), tuple(g["f"])
            )
            for gid, g in games.items()
        ]


SeatRow = tuple[int, int, int, int, int, str]
"""A seat_results row without its game id: seat, version id, score, place, forfeited (0 or 1), the
fault kinds (a JSON list)."""


def seat_rows(record: Mapping[str, Any], seats: Sequence[int]) -> list[SeatRow]:
    """The seat_results rows of a game from its record and its seats' version ids: the one rule by
    which the results table follows from the records (:meth:`Results.record_game` writes these rows,
    and take5_arena/referee/store/integrity.py checks a store's rows against them)."""
    result = record["result"]
    forfeited = set(result.get("forfeited", ()))
    faults = record.get("faults") or [[] for _ in seats]
    return [
        (
            seat,
            version_id,
            result["scores"][seat],
            result["places"][seat],
            int(seat in forfeited),
            json.dumps([f["kind"] for f in faults[seat]]),
        )
        for seat, version_id in enumerate(seats)
    ]


def _fault_kinds(game_id: str, seat: int, text: Any) -> tuple[str, ...]:
    """The fault kinds of a seat_results row (a JSON list of strings), or a StoreError."""
    if text == "[]":
        return ()
    try:
        kinds = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        kinds = None
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise StoreError(
            f"game {game_id}, seat {seat}: the results table's faults are not a list of fault "
            f"kinds ({str(text)[:40]!r}); `referee verify --tournament` checks the store"
        )
    return tuple(kinds)


def output_bytes(record: Mapping[str, Any], seats: int) -> list[int]:
    """Bytes (UTF-8) of each seat's own output kept in ``record``'s turns."""
    used = [0] * seats
    for rnd in record.get("rounds", []):
        for turn in rnd.get("turns", []):
            for seat, text in turn.get("logs", ()):
                if isinstance(seat, int) and 0 <= seat < seats:
                    used[seat] += len(str(text).encode())
    return used


def drop_output(record: dict[str, Any], seat: int) -> None:
    """Remove seat ``seat``'s output from ``record``'s turns (in place)."""
    for rnd in record.get("rounds", []):
        for turn in rnd.get("turns", []):
            if "logs" in turn:
                kept = [entry for entry in turn["logs"] if entry[0] != seat]
                if kept:
                    turn["logs"] = kept
                else:
                    del turn["logs"]


__all__ = [
    "Results",
    "SeatResult",
    "SeatRow",
    "Tally",
    "VersionStats",
    "drop_output",
    "output_bytes",
    "seat_rows",
]
