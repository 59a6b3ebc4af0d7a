"""The recorded games as published: each game's record (``results.record``), and which of them
are public yet (a deal is published only once every rotation of it is played; the games and the
abandoned games say which). Writing them is :class:`~.results.Results`'s."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import cast

from take5.record import GameRecord

from .base import Repository, StoreError, WithheldError

#: the duplicate sets with a game still to play (given up games aside)
UNFINISHED = (
    "SELECT DISTINCT duplicate_set FROM games WHERE status = 'pending'"
    " AND game_id NOT IN (SELECT game_id FROM abandoned_games)"
)
UNRATED_PREFIX = "challenge-"
"""The schedules whose id starts with this hold unrated games: an author's challenges
(take5_arena/service/challenges.py). Their games are recorded like any other, but never rated,
never in the standings, the public lists or a version's counts."""
#: the games of unrated schedules (a range of the schedule ids: the index of schedule_games)
UNRATED = (
    "SELECT game_id FROM schedule_games"
    f" WHERE schedule_id >= '{UNRATED_PREFIX}' AND schedule_id < '{UNRATED_PREFIX[:-1]}.'"
)


@dataclass(frozen=True)
class FaultedGame:
    """A recorded game in which a version committed a fault (:meth:`Records.faulted_games`)."""

    game_id: str
    seat: int
    version_id: int
    finished_at: str
    record: GameRecord


def _record(text: str) -> GameRecord:
    """A record as the store wrote it (by :meth:`.Results.record_game`, from the referee's own
    games)."""
    return cast(GameRecord, json.loads(text))


@dataclass(frozen=True)
class BotGame:
    """One published game of a bot, from its seat (:meth:`Records.bot_games`)."""

    game_id: str
    finished_at: str
    version_id: int
    place: int
    score: int
    faults: int
    seats: tuple[int, ...]
    """Every seat's version id, the bot's own included."""
    places: tuple[int, ...]


class Records(Repository):
    """``store.records``: a record, all of them in order, the published ones only."""

    def unfinished_deals(self) -> set[str]:
        """The duplicate sets (deals) with a game still to play. Their recorded games are not
        published yet (standings, the site, the arena's record calls): a deal becomes public only
        once every rotation of it has been played, so that nobody reads a deal that is still to
        come (docs/security.md, "Deals")."""
        return {row[0] for row in self._db.execute(UNFINISHED)}

    def shared_tables(self) -> list[tuple[str, str]]:
        """(game id, author) of every published game (:meth:`unfinished_deals`) in which two or
        more seats belonged to that author, by the seats' ``owner`` in the records: the tables
        that had to break the rule that keeps an author's entrants apart (docs/security.md)."""
        rows = self._db.execute(
            "SELECT r.game_id, json_extract(s.value, '$.owner') AS owner FROM results r"
            " JOIN games g ON g.game_id = r.game_id, json_each(CASE WHEN json_valid(r.record)"
            " THEN r.record ELSE '{}' END, '$.seats') s"
            f" WHERE g.duplicate_set NOT IN ({UNFINISHED})"
            " GROUP BY r.seq, r.game_id, owner"
            " HAVING json_extract(s.value, '$.owner') IS NOT NULL AND COUNT(*) > 1"
            " ORDER BY r.seq, owner"
        )
        return [(str(gid), str(owner)) for gid, owner in rows]

    def get(self, game_id: str, *, published_only: bool = False) -> GameRecord:
        """A recorded game's record (``published_only``: refused while its deal is unfinished)."""
        row = self._db.execute(
            "SELECT r.record, g.duplicate_set FROM results r"
            " LEFT JOIN games g ON g.game_id = r.game_id WHERE r.game_id = ?",
            (game_id,),
        ).fetchone()
        if row is None:
            raise StoreError(f"game {game_id} is not recorded")
        if published_only and row[1] in self.unfinished_deals():
            raise WithheldError(
                f"game {game_id} is not published yet: its deal has rotations still to play"
            )
        return _record(row[0])

    def all(
        self,
        schedule_id: str | None = None,
        *,
        after: int | None = None,
        published_only: bool = False,
    ) -> Iterator[tuple[str, GameRecord]]:
        """Every recorded game in the order recorded, one at a time (a cursor, never all at once);
        with ``after``, only those recorded after the game of sequence number ``after``; with
        ``published_only``, not those whose deal is unfinished (:meth:`unfinished_deals`)."""
        sql = "SELECT r.game_id, r.record, g.duplicate_set FROM results r"
        sql += " LEFT JOIN games g ON g.game_id = r.game_id"
        args: tuple[object, ...] = ()
        if schedule_id is not None:
            sql += " JOIN schedule_games s ON s.game_id = r.game_id WHERE s.schedule_id = ?"
            args = (schedule_id,)
        if after is not None:
            sql += (" AND" if schedule_id is not None else " WHERE") + " r.seq > ?"
            args += (after,)
        hidden = self.unfinished_deals() if published_only else set()
        for row in self._db.execute(sql + " ORDER BY r.seq", args):
            if row[2] not in hidden:
                yield row[0], _record(row[1])

    def game_places(self) -> dict[str, tuple[int, int]]:
        """Game id -> (table number, rotation) of every recorded game: readable game labels
        ("table 12, game 3") without reading a record."""
        sql = (
            "SELECT g.game_id, g.table_no, g.rotation FROM results r JOIN games g ON g.game_id "
            "= r.game_id"
        )
        return {row[0]: (row[1], row[2]) for row in self._db.execute(sql)}

    def faulted_games(self, version_ids: Sequence[int], limit: int) -> list[FaultedGame]:
        """The newest ``limit`` published games (:meth:`unfinished_deals`) in which one of these
        versions committed a fault, newest first, with their records."""
        if not version_ids:
            return []
        marks = ",".join("?" * len(version_ids))
        rows = self._db.execute(
            "SELECT sr.game_id, sr.seat, sr.version_id, r.finished_at, r.record"
            " FROM seat_results sr JOIN results r ON r.game_id = sr.game_id"
            " JOIN games g ON g.game_id = sr.game_id"
            f" WHERE sr.version_id IN ({marks}) AND sr.faults != '[]'"
            f" AND g.duplicate_set NOT IN ({UNFINISHED})"
            " ORDER BY r.seq DESC LIMIT ?",
            (*version_ids, limit),
        )
        return [
            FaultedGame(gid, seat, vid, finished, _record(text))
            for gid, seat, vid, finished, text in rows
        ]

    def finished_at(self, game_ids: Sequence[str]) -> dict[str, str]:
        """When each of these recorded games finished (games not recorded are left out)."""
        found: dict[str, str] = {}
        for start in range(0, len(game_ids), 500):  # SQLite's bound on parameters
            chunk = list(game_ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT game_id, finished_at FROM results WHERE game_id IN ({marks})", chunk
            )
            found.update((gid, finished) for gid, finished in rows)
        return found

    def bot_games(
        self,
        version_ids: Sequence[int],
        limit: int,
        *,
        against: Sequence[int] | None = None,
        place: int | None = None,
        faulted: bool = False,
        since: str | None = None,
    ) -> list[BotGame]:
        """The newest ``limit`` published rated games (:meth:`unfinished_deals`, ``UNRATED``) of
        these versions, newest first, each with its date, the version's place, score and faults,
        and every seat's version and place (its opponents). Filters (a bot's page): only games
        with one of the versions ``against`` at the table, where the version placed ``place``,
        where it faulted, finished on or after ``since`` (an ISO date)."""
        if not version_ids or against == []:
            return []
        marks = ",".join("?" * len(version_ids))
        where: list[str] = []
        args: list[object] = []
        if against is not None:
            where.append(
                "sr.game_id IN (SELECT game_id FROM seat_results"
                f" WHERE version_id IN ({','.join('?' * len(against))}))"
            )
            args.extend(against)
        if place is not None:
            where.append("sr.place = ?")
            args.append(place)
        if faulted:
            where.append("json_array_length(sr.faults) > 0")
        if since is not None:
            where.append("r.finished_at >= ?")
            args.append(since)
        rows = self._db.execute(
            "SELECT sr.game_id, r.finished_at, sr.version_id, sr.place, sr.score,"
            " json_array_length(sr.faults) FROM seat_results sr"
            " JOIN results r ON r.game_id = sr.game_id JOIN games g ON g.game_id = sr.game_id"
            f" WHERE sr.version_id IN ({marks}) AND g.duplicate_set NOT IN ({UNFINISHED})"
            f" AND sr.game_id NOT IN ({UNRATED})"
            + "".join(f" AND {w}" for w in where)
            + " ORDER BY r.seq DESC LIMIT ?",
            (*version_ids, *args, limit),
        ).fetchall()
        ids = [row[0] for row in rows]
        seats: dict[str, list[tuple[int, int]]] = {}
        for start in range(0, len(ids), 500):  # SQLite's bound on parameters
            chunk = ids[start : start + 500]
            for gid, vid, place in self._db.execute(
                "SELECT game_id, version_id, place FROM seat_results"
                f" WHERE game_id IN ({','.join('?' * len(chunk))}) ORDER BY game_id, seat",
                chunk,
            ):
                seats.setdefault(gid, []).append((vid, place))
        return [
            BotGame(
                gid,
                finished,
                vid,
                place,
                score,
                faults,
                tuple(v for v, _ in seats.get(gid, [])),
                tuple(p for _, p in seats.get(gid, [])),
            )
            for gid, finished, vid, place, score, faults in rows
        ]


__all__ = ["UNFINISHED", "UNRATED", "UNRATED_PREFIX", "BotGame", "FaultedGame", "Records"]
