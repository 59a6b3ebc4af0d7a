"""What binds a record's seat to the code that played it: the digest of the bot's sources.

A record's `seats[i]` carries the bot's name, version and author from its handshake, but a bot says
what it likes there. The digest is the referee's own: the identity of the bot's version, the sha256
of its deterministic source archive (take5_arena/referee/artifacts.py), the same one `referee
submit` stores and a tournament ships to its workers, so anyone holding the sources can recompute
it. Bots given by address have no sources here, hence no digest.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .botref import BotRef


def seat_digest(ref: BotRef) -> dict[str, str]:
    """``{"digest": "sha256:..."}`` for a bot with a folder, else ``{}`` (never raises)."""
    folder = ref.folder
    if folder is None:
        return {}
    digest = _folder_digest(str(folder.resolve()))
    return {"digest": digest} if digest else {}


@lru_cache(maxsize=64)
def _folder_digest(folder: str) -> str | None:
    # Hashed once per folder per process: a match plays many games with the same sources.
    # lazy: the artifact code (and the folder scan) only when a seat is a bot folder
    from take5_arena.referee.artifacts import pack

    try:
        return pack(Path(folder)).digest
    except Exception:  # noqa: BLE001 - a folder that cannot be hashed is recorded without a digest
        return None
