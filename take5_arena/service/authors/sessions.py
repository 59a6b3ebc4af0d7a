"""The web pages' sign-ins, kept with the accounts (``arena_sessions``, schema 4).

Why here and not in a web process's memory: an arena may have several web processes, on several
hosts, behind one proxy (docs/operators/several-hosts.md). A sign-in made on one is known to all
of them at once, and so is its end (signing out, the author revoked, a new token): no sticky
sessions, and no process that still lets in a browser another process signed out.

What is kept: the SHA-256 of the session's id (256 random bits, so a plain hash is enough: a
stolen copy of the table is no list of working cookies), the author (or the organiser), and when
it ends. Nothing else: the page's CSRF token is derived from the id (take5_arena/web/security.py),
so it is never stored either. The accounts' file is owner-only (storage.py); on PostgreSQL the
table is in the store's database, as the token hashes are.

Each author keeps at most :data:`MAX_PER_AUTHOR` sessions (a new one ends their oldest), and
every sign-in deletes the sessions that have ended, so the table stays the size of the browsers
signed in.
"""

from __future__ import annotations

import hashlib
import time

from take5_arena.referee.store import now
from take5_arena.service.authors.base import AccountsBase

MAX_PER_AUTHOR = 32
"""The sessions one author (or the organiser) may hold at once: a new one ends their oldest."""


def _key(sid: str) -> bytes:
    return hashlib.sha256(sid.encode()).digest()


class SignIns(AccountsBase):
    """The web pages' sessions (the module text). Their ids are made by the caller
    (take5_arena/web/security.py), which alone ever holds them in clear."""

    def open_session(self, sid: str, author: str, *, organiser: bool, expires: float) -> None:
        """Keep session ``sid`` of ``author`` until ``expires`` (seconds since the epoch)."""
        with self.tx() as db:
            db.execute("DELETE FROM arena_sessions WHERE expires_at <= ?", (int(time.time()),))
            db.execute(
                "INSERT INTO arena_sessions(id_hash, author, organiser, created_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (_key(sid), author, int(organiser), now(), int(expires)),
            )
            db.execute(
                "DELETE FROM arena_sessions WHERE author = ? AND id_hash NOT IN"
                " (SELECT id_hash FROM arena_sessions WHERE author = ?"
                "  ORDER BY expires_at DESC, created_at DESC LIMIT ?)",
                (author, author, MAX_PER_AUTHOR),
            )

    def find_session(self, sid: str) -> tuple[str, bool, float] | None:
        """(author, organiser, expires) of session ``sid`` if it is open and has not ended."""
        rows = self._read(
            "SELECT author, organiser, expires_at FROM arena_sessions"
            " WHERE id_hash = ? AND expires_at > ?",
            (_key(sid), int(time.time())),
        )
        if not rows:
            return None
        return str(rows[0][0]), bool(rows[0][1]), float(rows[0][2])

    def close_session(self, sid: str) -> None:
        """End session ``sid`` (signed out), on every web process at once."""
        with self.tx() as db:
            db.execute("DELETE FROM arena_sessions WHERE id_hash = ?", (_key(sid),))

    def close_sessions(self, author: str) -> int:
        """End every session of ``author`` (revoked, a new token); how many there were."""
        with self.tx() as db:
            return db.execute("DELETE FROM arena_sessions WHERE author = ?", (author,)).rowcount

    def session_count(self) -> int:
        """The sessions open now, of every web process."""
        rows = self._read(
            "SELECT COUNT(*) FROM arena_sessions WHERE expires_at > ?", (int(time.time()),)
        )
        return int(rows[0][0])


__all__ = ["MAX_PER_AUTHOR", "SignIns"]
