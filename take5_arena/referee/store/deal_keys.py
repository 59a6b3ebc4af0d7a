"""The tournament's deal keys and the games given up when one is revealed: the ``deal_keys`` and
``abandoned_games`` tables (docs/security.md, "Deals"; the secret key itself is in DIR/secret/,
take5_arena/referee/store/deals.py)."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Repository, now


@dataclass(frozen=True)
class DealSeason:
    """One deal key of a tournament: its commitment from its start, the key once revealed."""

    season: int
    commitment: str
    created_at: str
    key: str | None = None
    """The key, 64 hex digits, once `referee tournament reveal` published it; None before."""
    revealed_at: str | None = None


class DealKeys(Repository):
    """``store.deal_keys``: each season's commitment, its key once revealed, its abandoned games."""

    def seasons(self) -> list[DealSeason]:
        """The tournament's deal keys, oldest first (none: its deals come from a public seed).
        The last one whose key is not revealed deals the games scheduled now."""
        rows = self._db.execute("SELECT * FROM deal_keys ORDER BY season").fetchall()
        return [
            DealSeason(r["season"], r["commitment"], r["created_at"], r["key"], r["revealed_at"])
            for r in rows
        ]

    def begin(self, season: int, commitment: str) -> str:
        """Commit to the key of deal season ``season`` (take5_arena/referee/store/deals.py makes
        the key and calls this once the key is safely on disk); the commitment the store holds
        for it afterwards (another process's, if it committed first)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO deal_keys(season, commitment, created_at) VALUES (?, ?, ?)"
                " ON CONFLICT DO NOTHING",
                (season, commitment, now()),
            )
            row = db.execute(
                "SELECT commitment FROM deal_keys WHERE season = ?", (season,)
            ).fetchone()
        return str(row[0]) if row else ""

    def reveal(self, season: int, key: str) -> None:
        """Publish the key of ``season`` (its games can then be checked by anyone)."""
        with self._transaction() as db:
            db.execute(
                "UPDATE deal_keys SET key = ?, revealed_at = ? WHERE season = ? AND key IS NULL",
                (key, now(), season),
            )

    def pending(self, season: int) -> list[str]:
        """The games dealt from season ``season``'s key that are not recorded yet."""
        rows = self._db.execute(
            "SELECT game_id FROM games WHERE deal_season = ? AND status = 'pending'"
            " AND game_id NOT IN (SELECT game_id FROM abandoned_games) ORDER BY game_id",
            (season,),
        )
        return [r[0] for r in rows]

    def abandon_pending(self, season: int) -> int:
        """Give up the games of ``season`` not recorded yet (before its key is revealed, which
        would make them predictable): they stay in their schedules, marked abandoned, and are never
        played; how many were abandoned."""
        with self._transaction() as db:
            return db.execute(
                "INSERT INTO abandoned_games(game_id, season, at)"
                " SELECT game_id, deal_season, ? FROM games"
                " WHERE deal_season = ? AND status = 'pending' ON CONFLICT DO NOTHING",
                (now(), season),
            ).rowcount


__all__ = ["DealKeys", "DealSeason"]
