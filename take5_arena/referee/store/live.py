"""The games in progress, for the web pages of other processes: ``store.live``.

Several processes on one PostgreSQL store (docs/operators/several-hosts.md): a referee plays a
table, and a web process on another host shows it turn by turn. The referee writes the newest
public state of each game it plays (take5_arena/service/live_feed.py) to ``live_games``, one row a
game, each write with a new ``stamp`` (a sequence's: writes take the store's write lock, so stamps
are committed in order), and a web process reads the rows with a stamp above the last it saw.

Not the tournament's record: an UNLOGGED table outside schema.py (not copied by backups or
restores, not verified), made by the first process that uses it, whose rows are deleted once
nobody has written them for :data:`KEEP_SECONDS` (a game finished a while ago, or one whose
referee died). A SQLite store has none: one process serves it (the directory's run lock), and its
pages watch its own tables (take5_arena/web/live.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from .base import Repository

KEEP_SECONDS = 120.0
"""How long a row nobody writes any more is kept."""

_TABLE = (
    "CREATE UNLOGGED TABLE IF NOT EXISTS live_games ("
    " game_id TEXT PRIMARY KEY,"
    " entrants TEXT NOT NULL,"
    " round BIGINT NOT NULL,"
    " turn BIGINT NOT NULL,"
    " done BOOLEAN NOT NULL,"
    " data TEXT NOT NULL,"
    " stamp BIGINT NOT NULL,"
    " written_at DOUBLE PRECISION NOT NULL)"
)
_NOW = "extract(epoch from clock_timestamp())"


@dataclass(frozen=True)
class LiveGame:
    """The newest state of a game in progress (``data``: the JSON message of its feed)."""

    game_id: str
    entrants: list[str]
    round: int
    turn: int
    done: bool
    data: str
    stamp: int = 0


class Live(Repository):
    """``store.live``: the games in progress of every process on a shared store."""

    @property
    def shared(self) -> bool:
        """Whether the store is shared by several processes (PostgreSQL): the only stores with
        a ``live_games`` table."""
        return self._dialect.name == "postgresql"

    def ensure(self) -> None:
        """Make the table if no process has (a store opened for writing)."""
        if not self.shared:
            return
        with self._transaction() as db:  # the write lock: two processes never make it at once
            db.execute(_TABLE)
            db.execute("CREATE SEQUENCE IF NOT EXISTS live_games_stamp")

    def write(self, games: Sequence[LiveGame]) -> None:
        """The newest state of ``games``, and the rows nobody wrote for :data:`KEEP_SECONDS`
        deleted, in one transaction (none: nothing to write)."""
        if not games:
            return
        with self._transaction() as db:
            db.executemany(
                "INSERT INTO live_games(game_id, entrants, round, turn, done, data, stamp,"
                f" written_at) VALUES (?, ?, ?, ?, ?, ?, nextval('live_games_stamp'), {_NOW})"
                " ON CONFLICT (game_id) DO UPDATE SET entrants = excluded.entrants,"
                " round = excluded.round, turn = excluded.turn, done = excluded.done,"
                " data = excluded.data, stamp = excluded.stamp, written_at = excluded.written_at",
                [
                    (g.game_id, json.dumps(g.entrants), g.round, g.turn, g.done, g.data)
                    for g in games
                ],
            )
            db.execute(f"DELETE FROM live_games WHERE written_at < {_NOW} - ?", (KEEP_SECONDS,))

    def since(self, stamp: int) -> list[LiveGame]:
        """The games written after ``stamp`` (0: all there are), oldest write first."""
        rows = self._db.execute(
            "SELECT game_id, entrants, round, turn, done, data, stamp FROM live_games"
            " WHERE stamp > ? ORDER BY stamp",
            (stamp,),
        )
        return [
            LiveGame(r[0], list(json.loads(r[1])), int(r[2]), int(r[3]), bool(r[4]), r[5], r[6])
            for r in rows
        ]


__all__ = ["KEEP_SECONDS", "Live", "LiveGame"]
