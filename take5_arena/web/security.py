"""What keeps the web pages safe (docs/web.md, "Security model"):

* **Sessions.** An author signs in by posting their token once; the arena keeps the session (the
  SHA-256 of an unguessable id, the author, an expiry) with its accounts, which every web process
  shares, and the browser only its id, in a cookie that is HttpOnly, SameSite=Strict, Secure (and
  ``__Host-`` prefixed) under TLS, and expires. Its CSRF token is derived from the id. The token
  never appears in a URL, a page or a log. Each request checks the session and the author again
  (signing out, a revocation or a new token ends the sessions on every process at once).
* **CSRF.** Every state-changing request is a POST whose Origin (or, without one, Referer) must be
  this server's own, and, once signed in, whose form carries the session's CSRF token.
* **Rate limits.** Token buckets per client address (every request; sign-in attempts apart) and
  per signed-in author (their POSTs), and a cap on each client's live streams.
* **Headers.** A Content-Security-Policy that allows scripts, styles and connections to this
  origin only (no inline script or style, no framing, forms post here only), and the usual
  nosniff, referrer and no-store headers.

Escaping is not here: every page is a Jinja2 template with autoescape on, and the pages' scripts
put text into the document as text nodes only (take5_arena/leaderboard/site/site.js).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}


@dataclass
class Session:
    """One signed-in browser."""

    id: str
    author: str
    csrf: str
    expires: float
    organiser: bool = False


class SessionKeeper(Protocol):
    """Where the sessions are kept: the arena's accounts (take5_arena/service/authors/
    sessions.py), which every web process of the arena shares."""

    def open_session(self, sid: str, author: str, *, organiser: bool, expires: float) -> None: ...

    def find_session(self, sid: str) -> tuple[str, bool, float] | None: ...

    def close_session(self, sid: str) -> None: ...

    def close_sessions(self, author: str) -> int: ...

    def session_count(self) -> int: ...


def _csrf(sid: str) -> str:
    """A session's CSRF token: derived from its id (an HMAC keyed by it), so that no process has
    to keep it and every process that knows the session knows its token; the page that shows the
    token does not reveal the id (the HttpOnly cookie) it was derived from."""
    return hmac.new(sid.encode(), b"take5 csrf", hashlib.sha256).hexdigest()


class Sessions:
    """The signed-in browsers, kept in the arena's accounts (their ids hashed), so that a sign-in
    made on one web process holds on every other, and signing out or a revocation on one ends it
    on all at once. Blocking (a query): the pages call it on their pool. Thread-safe."""

    def __init__(self, keeper: SessionKeeper, seconds: float) -> None:
        self.keeper = keeper
        self.seconds = seconds

    def open(self, author: str, *, organiser: bool = False) -> Session:
        sid = secrets.token_urlsafe(32)
        expires = time.time() + self.seconds
        self.keeper.open_session(sid, author, organiser=organiser, expires=expires)
        return Session(sid, author, _csrf(sid), expires, organiser)

    def get(self, sid: str | None) -> Session | None:
        """The session of this cookie value, if it exists and has not expired."""
        if not sid or len(sid) > 100:
            return None
        found = self.keeper.find_session(sid)
        if found is None:
            return None
        author, organiser, expires = found
        return Session(sid, author, _csrf(sid), expires, organiser)

    def close(self, sid: str | None) -> None:
        if sid:
            self.keeper.close_session(sid)

    def close_author(self, author: str) -> None:
        """End every session of ``author`` (revoked)."""
        self.keeper.close_sessions(author)

    def __len__(self) -> int:
        return self.keeper.session_count()


def csrf_ok(session: Session, given: object) -> bool:
    return isinstance(given, str) and hmac.compare_digest(session.csrf, given)


def same_origin(origin: str | None, referer: str | None, scheme: str, host: str | None) -> bool:
    """Whether a state-changing request comes from this site's own pages: its Origin header (or,
    when a browser sends none, its Referer's origin) is ``scheme://host`` of the request itself."""
    if not host:
        return False
    expected = f"{scheme}://{host}".lower()
    if origin:
        return origin.lower() == expected
    if referer:
        parts = urlsplit(referer)
        return f"{parts.scheme}://{parts.netloc}".lower() == expected
    return False


@dataclass(frozen=True)
class Rate:
    """A token bucket's refill per second and its size."""

    per_second: float
    burst: float


@dataclass
class Buckets:
    """Token buckets by key (a client's address, an author's name). Thread-safe; a bucket that has
    filled up again is forgotten, so memory stays bounded by the keys active in the last minutes."""

    rate: Rate
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, key: str, cost: float = 1.0) -> float:
        """Take ``cost`` tokens: 0.0 if there were enough, else the seconds until there will be."""
        now = self.clock()
        with self._lock:
            level, at = self._buckets.get(key, (self.rate.burst, now))
            level = min(self.rate.burst, level + (now - at) * self.rate.per_second)
            if level < cost:
                self._buckets[key] = (level, now)
                return (cost - level) / self.rate.per_second
            self._buckets[key] = (level - cost, now)
            if len(self._buckets) > 10_000:
                self._forget(now)
            return 0.0

    def _forget(self, now: float) -> None:
        full = self.rate.burst / self.rate.per_second
        for key in [k for k, (_, at) in self._buckets.items() if now - at > full]:
            del self._buckets[key]


__all__ = [
    "CSP",
    "HEADERS",
    "Buckets",
    "Rate",
    "Session",
    "SessionKeeper",
    "Sessions",
    "csrf_ok",
    "same_origin",
]
