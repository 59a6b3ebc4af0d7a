"""The web server's connections, held against idle and slow clients (docs/web.md, "Limits").

uvicorn bounds neither the time a client takes to send its headers or its body nor the connections
one address holds, and its ``limit_concurrency`` counts idle connections with busy ones: a few
thousand connections that never finish their headers (slowloris) made every page answer 503. So
the server speaks HTTP through :func:`guarded_protocol`, uvicorn's own h11 protocol with, on each
connection:

* **a header deadline**: a connection's next request must have its whole head within
  ``header_seconds`` of the connection's start or of the previous response (bytes trickled in do
  not extend it, unlike uvicorn's keep-alive timer);
* **a body deadline**: a request's body must have come whole within ``body_seconds`` of its head
  (the service's upload time: a browser's upload is received under the same rule as a gRPC one);
* **a stalled-write deadline**: a client that stops reading (its socket buffer full for
  ``write_seconds``) is cut off, so a slow reader holds no stream or page for ever;
* **a count** in a :class:`ConnectionGuard`: at most ``per_client`` connections of one address,
  at most ``total`` in all; when all are taken, a newcomer from an address holding fewer than the
  busiest address takes the place of that address's oldest connection waiting for a request, so
  one address (or a few) can never keep the others out.

A connection refused gets a one-line 429 or 503 (``Connection: close``) and is closed; a connection
cut by a deadline is closed without an answer (a 408 would be read by no one).
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass, field
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from take5_arena.web.proxies import NO_PROXIES, Proxies


def client_key(host: str) -> str:
    """Whom a client address counts as: itself, or its /64 for IPv6 (one host commonly holds a
    whole /64, so counting its addresses apart would give it thousands of shares)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


@dataclass(frozen=True)
class Deadlines:
    """The per-connection deadlines, in seconds."""

    header_seconds: float
    body_seconds: float
    write_seconds: float


@dataclass
class ConnectionGuard:
    """The open connections by client address, on the web server's event loop (not thread-safe)."""

    total: int
    per_client: int
    proxies: Proxies = NO_PROXIES
    """Trusted reverse proxies: their connections carry many clients, so only ``total`` holds
    them (the proxy limits each client's own; take5_arena/web/proxies.py)."""
    _by_client: dict[str, dict[Any, None]] = field(default_factory=dict)
    _open: int = 0
    refused: int = 0
    """Connections refused since the start (over a cap)."""
    evicted: int = 0
    """Idle connections closed to make room for another address's newcomer."""

    @property
    def open(self) -> int:
        return self._open

    def held(self, client: str) -> int:
        return len(self._by_client.get(client, ()))

    def admit(
        self, client: str, connection: GuardedConnection, proxy: bool = False
    ) -> tuple[int, str] | None:
        """Count ``connection`` in, or (status, reason) to refuse it with; ``proxy``: its peer is
        a trusted proxy (held to ``total`` only)."""
        mine = self._by_client.get(client, {})
        if len(mine) >= self.per_client and not proxy:
            return 429, "too many connections from your address"
        if self._open >= self.total and not self._evict_for(len(mine)):
            return 503, "the server is full; try again later"
        self._by_client.setdefault(client, {})[connection] = None
        self._open += 1
        return None

    def release(self, client: str, connection: GuardedConnection) -> None:
        mine = self._by_client.get(client)
        if mine is None or connection not in mine:
            return
        del mine[connection]
        self._open -= 1
        if not mine:
            del self._by_client[client]

    def _evict_for(self, held: int) -> bool:
        """Close the oldest idle connection of the busiest address, if that address holds more
        than ``held`` (the newcomer's address's share): whether a place was made."""
        if not self._by_client:
            return False
        client, busiest = max(self._by_client.items(), key=lambda item: len(item[1]))
        if len(busiest) <= held + 1:
            return False
        for connection in busiest:  # oldest first (a dict keeps its order)
            if connection.idle():
                self.release(client, connection)  # now: its close comes on a later turn
                connection.cut()
                self.evicted += 1
                return True
        return False


class GuardedConnection(H11Protocol):
    """uvicorn's h11 protocol under a :class:`ConnectionGuard` and :class:`Deadlines` (made by
    :func:`guarded_protocol`, which sets the two class attributes)."""

    guard: ConnectionGuard
    deadlines: Deadlines
    _admitted = False
    _client_key = "?"
    _header_timer: asyncio.TimerHandle | None = None
    _body_timer: asyncio.TimerHandle | None = None
    _write_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._client_key = client_key(self.client[0]) if self.client else "?"
        proxy = self.guard.proxies.trusts(self.client[0]) if self.client else False
        refused = self.guard.admit(self._client_key, self, proxy)
        if refused is not None:
            self.guard.refused += 1
            status, reason = refused
            phrase = b"Too Many Requests" if status == 429 else b"Service Unavailable"
            body = reason.encode() + b"\n"
            transport.write(
                b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\n"
                b"content-length: %d\r\nretry-after: 10\r\nconnection: close\r\n\r\n%s"
                % (status, phrase, len(body), body)
            )
            transport.close()
            return
        self._admitted = True
        self._arm_header()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._admitted:
            self._admitted = False
            self.guard.release(self._client_key, self)
        for timer in (self._header_timer, self._body_timer, self._write_timer):
            if timer is not None:
                timer.cancel()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle and self.cycle is not None:  # a request's head came whole
            if self._body_timer is not None:
                self._body_timer.cancel()
            self._body_timer = self.loop.call_later(
                self.deadlines.body_seconds, self._body_late, self.cycle
            )

    def on_response_complete(self) -> None:
        self._arm_header()
        super().on_response_complete()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_timer is None:
            self._write_timer = self.loop.call_later(self.deadlines.write_seconds, self.cut)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def idle(self) -> bool:
        """Whether no request is in progress (the connection waits for one's head)."""
        return self.cycle is None or self.cycle.response_complete

    def cut(self) -> None:
        """Close at once, whatever is in progress (the application sees a disconnect)."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()

    def _arm_header(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(self.deadlines.header_seconds, self._head_late)

    def _head_late(self) -> None:
        if self.idle():
            self.cut()

    def _body_late(self, cycle: Any) -> None:
        if self.cycle is cycle and cycle.more_body and not cycle.response_complete:
            self.cut()


def guarded_protocol(guard: ConnectionGuard, deadlines: Deadlines) -> type[GuardedConnection]:
    """The protocol class for uvicorn's ``Config(http=...)``: :class:`GuardedConnection` bound to
    this server's guard and deadlines."""
    return type("GuardedConnection", (GuardedConnection,), {"guard": guard, "deadlines": deadlines})


__all__ = ["ConnectionGuard", "Deadlines", "GuardedConnection", "client_key", "guarded_protocol"]
