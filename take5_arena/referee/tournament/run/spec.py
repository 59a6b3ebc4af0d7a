"""What a worker gets to play one table (:class:`TableSpec`, its seats) and what it hands back for
each game (:class:`GameOutcome`): plain picklable data, shared by the driver that builds and
collects them, the shipping that makes their archives reachable and the table that plays them, so
that none of those three imports another to know the shape of a table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from take5.record import DealRecord, GameRecord

from ...kinds import InfraKind
from ..plan.settings import TournamentSettings
from .archives import ArchiveSource

if TYPE_CHECKING:
    from ...store import EntrantVersion


@dataclass(frozen=True)
class SeatSpec:
    """One seat of a table: the entrant version that sits there and what it plays."""

    key: str
    """``name@version``."""
    name: str
    version: int
    version_id: int
    bot: str
    """The folder it was submitted from (played only by versions without an artifact)."""
    artifact: str | None = None
    """``sha256:...`` of the validated source archive: what plays."""
    owner: str | None = None
    """The entrant's author as the organiser knows it (None: not known); into the record."""

    @classmethod
    def of(cls, v: EntrantVersion) -> SeatSpec:
        """The seat of a stored version."""
        return cls(v.key, v.name, v.version, v.id, v.bot_dir, v.artifact, v.author)


@dataclass(frozen=True)
class TableSpec:
    """Everything a worker needs to play the pending games of one table (picklable)."""

    table: int
    deal_seed: int
    seats: tuple[SeatSpec, ...]
    games: tuple[tuple[str, int], ...]
    """(game id, rotation) of the games still to play."""
    settings: TournamentSettings
    """The tournament's settings: the game, the call limits, the sandbox and its limits."""
    sources: dict[str, ArchiveSource] = field(default_factory=dict)
    """Digest -> where a worker whose cache lacks it gets the archive, for its seats (shipping.py);
    never the archive itself but for :class:`~.archives.InlineArchive`."""
    deal: DealRecord | None = None
    """For a deal from a secret key, what its records say of it (``season``, ``commitment``,
    ``id``: docs/record-format.md, "Deals"); never the key. None: a public seed."""
    lease: str | None = None
    """The referee's lease on a Dask cluster (lease.py): the worker stops the table once it lapses.
    None: not sent to a cluster."""
    home: str = ""
    """The tournament directory whose games these are, for those who show games in progress
    (``referee serve --web`` tells an arena's competitions apart by it); '' not said."""


@dataclass(frozen=True)
class GameOutcome:
    """A game played (``record``) or not (``infra_kind``/``infra_detail``: nobody's fault)."""

    game_id: str
    record: GameRecord | None = None
    infra_kind: InfraKind | None = None
    infra_detail: str | None = None
    seconds: float = 0.0
    worker: str = ""
    """The Dask worker that ran it ("" in the referee's process)."""
    stderr: dict[int, str] = field(default_factory=dict)
    """The last of what each seat that faulted wrote on its stderr (seat -> text), which a
    record's turn ``logs`` lack for a bot that failed before its first turn: the arena's
    validation gives the candidate its own (and nobody another's); a tournament ignores it."""

    @property
    def ok(self) -> bool:
        return self.record is not None


__all__ = ["GameOutcome", "SeatSpec", "TableSpec"]
