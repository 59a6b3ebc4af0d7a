"""What keeps the web pages safe (docs/web.md, "Security model"):

* **Sessions.** An author signs in by posting their token once; the server keeps the session (an
  unguessable id, the author, a CSRF token, an expiry) in memory and the browser only its id, in a
  cookie that is HttpOnly, SameSite=Strict, Secure (and ``__Host-`` prefixed) under TLS, and
  expires. The token never appears in a URL, a page or a log. Each request checks the author again
  (a revoked author's sessions end at once); a server restart ends every session.
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

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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


class Sessions:
    """The signed-in browsers (in memory: a restart signs everyone out). Thread-safe."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.time) -> None:
        self.seconds = seconds
        self.clock = clock
        self._by_id: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(self, author: str, *, organiser: bool = False) -> Session:
        session = Session(
            secrets.token_urlsafe(32),
            author,
            secrets.token_urlsafe(32),
            self.clock() + self.seconds,
            organiser,
        )
        with self._lock:
            self._expire()
            self._by_id[session.id] = session
        return session

    def get(self, sid: str | None) -> Session | None:
        """The session of this cookie value, if it exists and has not expired."""
        if not sid or len(sid) > 100:
            return None
        with self._lock:
            session = self._by_id.get(sid)
            if session is not None and session.expires <= self.clock():
                del self._by_id[sid]
                return None
            return session

    def close(self, sid: str | None) -> None:
        with self._lock:
            self._by_id.pop(sid or "", None)

    def close_author(self, author: str) -> None:
        """End every session of ``author`` (revoked)."""
        with self._lock:
            for sid in [s.id for s in self._by_id.values() if s.author == author]:
                del self._by_id[sid]

    def _expire(self) -> None:
        now = self.clock()
        for sid in [s.id for s in self._by_id.values() if s.expires <= now]:
            del self._by_id[sid]

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_id)


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
    "Sessions",
    "csrf_ok",
    "same_origin",
]
