"""Addresses of the arena (``HOST:PORT``), for the server and its client alike: which hosts are
loopback (the only ones a token may reach in plain text)."""

from __future__ import annotations

import ipaddress

from take5_arena.service.errors import ServeError


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 in brackets or not) is this machine's
    loopback."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def split_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` as (host, port); ServeError for anything else."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ServeError(f"{address!r}: give HOST:PORT (for example 127.0.0.1:50600)")
    return host, int(port)


__all__ = ["is_loopback", "split_address"]
