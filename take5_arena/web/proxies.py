"""Whom a request comes from when the pages sit behind a reverse proxy (``referee serve
--web-forwarded-allow-ips``; docs/operations.md, "In front of the web pages").

Behind nginx or Caddy every connection comes from the proxy, so the per-address limits (requests a
second, live streams, sign-in attempts) would count every visitor as one. The proxy names the
client in ``X-Forwarded-For``; but any client can send that header, so it is believed only from a
connection whose peer is one of the configured proxies (default: none, and the header is ignored).
The header is read from its right end, skipping the trusted proxies' own addresses: the first
address that is not one is the client, as the last trusted proxy saw it (whatever a client put at
the left end itself is never reached when the proxy appends the peer it saw). A header that is
missing or does not parse leaves the peer as the client: a proxy that does not send it counts as
one client, never as anyone the request claims.

A trusted proxy's connections are not held to the per-address connection cap
(take5_arena/web/guard.py): they carry many clients, whose own connections the proxy limits.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@dataclass(frozen=True)
class Proxies:
    """The networks whose connections may name their client in ``X-Forwarded-For``."""

    networks: tuple[_Network, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> Proxies:
        """From ``--web-forwarded-allow-ips``: addresses or networks, comma-separated (``''``:
        none). ValueError naming the first entry that is neither."""
        networks: list[_Network] = []
        for part in (text or "").split(","):
            part = part.strip()
            if not part:
                continue
            try:
                networks.append(ipaddress.ip_network(part, strict=False))
            except ValueError:
                raise ValueError(f"not an address or a network: {part!r}") from None
        return cls(tuple(networks))

    def trusts(self, host: str | None) -> bool:
        """Whether ``host`` (a connection's peer) is one of the proxies."""
        if not self.networks or not host:
            return False
        address = _address(host)
        return address is not None and any(address in network for network in self.networks)

    def client(self, peer: str, forwarded: list[str]) -> str:
        """The client of a connection from ``peer`` whose request carries these
        ``X-Forwarded-For`` values (each header line as sent): the peer itself unless it is a
        proxy, else the right-most address of the header that is not a proxy."""
        if not self.trusts(peer):
            return peer
        hops = [hop for value in forwarded for hop in value.split(",")]
        client = peer
        for hop in reversed(hops):
            address = _address(hop)
            if address is None:
                return client  # a hop that does not parse: believe nothing to its left
            client = str(address)
            if not any(address in network for network in self.networks):
                return client
        return client


NO_PROXIES = Proxies()
"""The default: no proxy is trusted, ``X-Forwarded-For`` is ignored."""

__all__ = ["NO_PROXIES", "Proxies"]
