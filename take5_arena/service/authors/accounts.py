"""The arena's accounts as one object: each part is a module of this package."""

from __future__ import annotations

from take5_arena.service.authors.sessions import SignIns
from take5_arena.service.authors.submitted import SubmissionQueue
from take5_arena.service.authors.tokens import TokenChecks


class Accounts(TokenChecks, SubmissionQueue, SignIns):
    """The arena's accounts (take5_arena/service/authors/__init__.py): authors and tokens
    (tokens.py), bot names (claims.py), submissions (submitted.py), the web pages' sign-ins
    (sessions.py), over one connection (base.py).
    Thread-safe (one lock around the connection)."""

    def __enter__(self) -> Accounts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Accounts"]
