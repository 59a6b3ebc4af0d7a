"""Authors and their tokens: adding an author (the token shown once), revoking, and checking a
token on every call.

Tokens: ``t5a_<token id>_<secret>``. The token id (12 hex digits) finds the author's row; the secret
(``secrets.token_urlsafe(32)``, 256 bits) is checked against a salted HMAC-SHA256 of it
(``token_check``) with a constant-time comparison. The token is printed once, when the author is
added; the database never holds it. With 256 random bits a slow password hash buys nothing against
guessing, and a cheap check is what lets every secret be checked: no limit has to turn a call away
before its secret is looked at, so nobody's wrong guesses can get its owner's correct token refused,
and guesses from any number of addresses cost one HMAC each. The salt and the HMAC keep a stolen
database from being a list of working tokens. Tokens made before ``token_check`` (schema 3) have
only a salted PBKDF2-HMAC-SHA256 hash: checked that way (at most once a second per token id after a
wrong secret) until their first use stores their check. An unknown token id is refused without a
hash: the id finds the row, the secret is what guards it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time

from take5_arena.referee.store import now
from take5_arena.service import defaults
from take5_arena.service.authors.base import AccountRow, AccountsBase
from take5_arena.service.authors.model import DEFAULT_LIMITS, Author, Limits, check_name
from take5_arena.service.errors import AuthenticationError, BadRequestError, NotFoundError

TOKEN_PREFIX = "t5a"
PBKDF2_ITERATIONS = 20_000


def _hash(secret: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, PBKDF2_ITERATIONS)


def _check(secret: str, salt: bytes) -> bytes:
    """A token's check: enough for a 256-bit random secret, and cheap (module text)."""
    return hmac.new(salt, secret.encode(), hashlib.sha256).digest()


def _split_token(token: str) -> tuple[str, str] | None:
    parts = token.strip().split("_", 2)
    if len(parts) != 3 or parts[0] != TOKEN_PREFIX or not re.fullmatch(r"[0-9a-f]{12}", parts[1]):
        return None
    return parts[1], parts[2]


class TokenChecks(AccountsBase):
    """The authors and their tokens (the module text)."""

    def add_author(
        self, name: str, limits: Limits = DEFAULT_LIMITS, *, new_token: bool = False
    ) -> str:
        """Create author ``name`` (or, with ``new_token``, replace its token); return the token.

        The token is not stored: the caller shows it once.
        """
        check_name("author", name)
        token_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        salt = secrets.token_bytes(16)
        digest = _hash(secret, salt)
        check = _check(secret, salt)
        with self.tx() as db:
            exists = db.execute("SELECT 1 FROM arena_authors WHERE name = ?", (name,)).fetchone()
            if exists and not new_token:
                raise BadRequestError(f"author {name!r} exists (--new-token replaces the token)")
            if exists:  # a new token: the old one's sign-ins end too (sessions.py)
                db.execute("DELETE FROM arena_sessions WHERE author = ?", (name,))
                db.execute(
                    "UPDATE arena_authors SET token_id = ?, salt = ?, token_hash = ?,"
                    " token_check = ?,"
                    " revoked_at = NULL, max_active_bots = ?, max_submissions_per_hour = ?,"
                    " max_archive_bytes = ?,"
                    " max_stored_bytes = ? WHERE name = ?",
                    (
                        token_id,
                        salt,
                        digest,
                        check,
                        limits.max_active_bots,
                        limits.max_submissions_per_hour,
                        limits.max_archive_bytes,
                        limits.max_stored_bytes,
                        name,
                    ),
                )
            else:
                db.execute(
                    "INSERT INTO arena_authors(name, token_id, salt, token_hash, token_check,"
                    " created_at, max_active_bots, max_submissions_per_hour, max_archive_bytes,"
                    " max_stored_bytes)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        name,
                        token_id,
                        salt,
                        digest,
                        check,
                        now(),
                        limits.max_active_bots,
                        limits.max_submissions_per_hour,
                        limits.max_archive_bytes,
                        limits.max_stored_bytes,
                    ),
                )
        return f"{TOKEN_PREFIX}_{token_id}_{secret}"

    def revoke(self, name: str) -> bool:
        """Make the author's token useless at once, and end their sign-ins on every web process
        (sessions.py). False if there is no such author."""
        with self.tx() as db:
            db.execute("DELETE FROM arena_sessions WHERE author = ?", (name,))
            return (
                db.execute(
                    "UPDATE arena_authors SET revoked_at = COALESCE(revoked_at, ?) WHERE name = ?",
                    (now(), name),
                ).rowcount
                > 0
            )

    @staticmethod
    def _author(row: AccountRow) -> Author:
        return Author(
            row["name"],
            row["created_at"],
            row["revoked_at"],
            Limits(
                row["max_active_bots"],
                row["max_submissions_per_hour"],
                row["max_archive_bytes"],
                row["max_stored_bytes"],
            ),
        )

    def authors(self) -> list[Author]:
        return [self._author(r) for r in self._read("SELECT * FROM arena_authors ORDER BY name")]

    def author(self, name: str) -> Author:
        rows = self._read("SELECT * FROM arena_authors WHERE name = ?", (name,))
        if not rows:
            raise NotFoundError(f"no author {name!r}")
        return self._author(rows[0])

    def authenticate(self, token: str | None) -> Author:
        """The author whose token this is, or AuthenticationError.

        Every secret is checked, cheaply (one HMAC against the row's ``token_check``), so a
        correct token is never refused for someone else's wrong ones; a malformed token or an
        unknown token id is refused without even that. A token made before its row had a check
        goes the old way until its first use stores it: a token already verified against its
        row's unchanged hash is not hashed again, and after a wrong secret the same token id is
        not hashed again for :data:`defaults.AUTH_RETRY_SECONDS`.
        """
        if not token:
            raise AuthenticationError("no token: pass --token-file or set TAKE5_TOKEN")
        split = _split_token(token)
        if split is None:
            raise AuthenticationError("the token is not valid")
        token_id, secret = split
        rows = self._read("SELECT * FROM arena_authors WHERE token_id = ?", (token_id,))
        if not rows:
            raise AuthenticationError("the token is not valid")
        row = rows[0]
        if row["token_check"] is not None:
            if not hmac.compare_digest(_check(secret, row["salt"]), row["token_check"]):
                raise AuthenticationError("the token is not valid")
            if row["revoked_at"] is not None:
                raise AuthenticationError("the token was revoked")
            return self._author(row)
        known = self._verified.get(token_id)
        if (
            known is None
            or known[0] != row["token_hash"]
            or not hmac.compare_digest(known[1], token)
        ):
            failed = self._failed_at.get(token_id)
            if failed is not None and time.monotonic() - failed < defaults.AUTH_RETRY_SECONDS:
                raise AuthenticationError("the token is not valid")
            if not hmac.compare_digest(_hash(secret, row["salt"]), row["token_hash"]):
                self._failed_at[token_id] = time.monotonic()
                raise AuthenticationError("the token is not valid")
            self._failed_at.pop(token_id, None)
            self._verified[token_id] = (row["token_hash"], token)
            with self.tx() as db:  # from now on, checked the cheap way
                db.execute(
                    "UPDATE arena_authors SET token_check = ? WHERE token_id = ? AND salt = ?"
                    " AND token_hash = ?",
                    (_check(secret, row["salt"]), token_id, row["salt"], row["token_hash"]),
                )
        if row["revoked_at"] is not None:
            raise AuthenticationError("the token was revoked")
        return self._author(row)


__all__ = ["PBKDF2_ITERATIONS", "TOKEN_PREFIX", "TokenChecks"]
