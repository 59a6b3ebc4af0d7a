"""The store's tables as they are, for the checks that must not trust them
(take5_arena/referee/store/integrity.py and verify.py).

Every other repository reads its rows into typed values and would stop at a row of garbage; these
readers hand the columns over untouched, so that a damaged or edited row becomes a finding of
`referee verify --tournament` naming its game, never an exception. They read every table and write
none.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from .base import Repository

_Row = tuple[Any, ...]


class Audit(Repository):
    """``store.audit``: raw rows of the games, the schedules, the results and the deal keys."""

    def games(self) -> dict[Any, _Row]:
        """game id -> (seats, status, deal seed, rotation, deal season, deal id), as stored."""
        return {
            row[0]: tuple(row[1:])
            for row in self._db.execute(
                "SELECT game_id, seats, status, deal_seed, rotation, deal_season, deal_id"
                " FROM games"
            )
        }

    def scheduled(self) -> set[Any]:
        """The game ids some schedule lists."""
        return {row[0] for row in self._db.execute("SELECT DISTINCT game_id FROM schedule_games")}

    def seat_rows(self) -> Iterator[_Row]:
        """(game id, seat, version id, score, place, forfeited, faults) by game and seat."""
        for row in self._db.execute(
            "SELECT game_id, seat, version_id, score, place, forfeited, faults FROM seat_results"
            " ORDER BY game_id, seat"
        ):
            yield tuple(row)

    def record_parts(self, parts: Sequence[str]) -> Iterator[tuple[Any, Any, Any]]:
        """(seq, game id, a JSON array of the record's top-level ``parts``) in the order
        recorded: only the parts a check reads, extracted by SQLite (one parse in C, no Python
        objects for the turns); NULL when the record is no JSON (or nested deeper than SQLite
        reads)."""
        paths = ", ".join(f"'$.{part}'" for part in parts)
        sql = (
            f"SELECT seq, game_id, CASE WHEN json_valid(record) THEN json_extract(record, {paths})"
            " END FROM results ORDER BY seq"
        )
        yield from self._db.execute(sql)

    def records_with_seats(self) -> Iterator[tuple[Any, Any, Any]]:
        """(game id, record text, the scheduled game's seats text) in the order recorded."""
        yield from self._db.execute(
            "SELECT r.game_id, r.record, g.seats FROM results r LEFT JOIN games g ON g.game_id = "
            "r.game_id ORDER BY r.seq"
        )

    def last_seq(self) -> Any:
        """The last sequence number the store handed out to a result (None: never one)."""
        try:
            row = self._db.execute(self._dialect.last_result_seq).fetchone()
        except sqlite3.OperationalError:  # SQLite: no table was ever given an AUTOINCREMENT row
            return None
        return None if row is None else row[0]

    def schedule_sizes(self) -> Iterator[tuple[Any, Any, Any]]:
        """(schedule id, games it was saved with, games it lists) by schedule id."""
        for row in self._db.execute(
            "SELECT s.schedule_id, s.games, (SELECT COUNT(*) FROM schedule_games g"
            " WHERE g.schedule_id = s.schedule_id) FROM schedules s ORDER BY s.schedule_id"
        ):
            yield row[0], row[1], row[2]

    def deal_sources(self) -> Iterator[tuple[Any, Any, Any]]:
        """(deal season or None, whether its key is revealed, recorded games) per kind of deal."""
        for row in self._db.execute(
            "SELECT g.deal_season, k.key IS NOT NULL, COUNT(*) FROM results r"
            " JOIN games g ON g.game_id = r.game_id"
            " LEFT JOIN deal_keys k ON k.season = g.deal_season GROUP BY 1, 2"
        ):
            yield row[0], row[1], row[2]


__all__ = ["Audit"]
