"""What a match produced: its entries, the games (:class:`GameSummary`), the standings, the bots
rejected before play, and the exit code the command line reports for it (docs/faults.md).

Plain frozen data, JSON-ready through ``to_dict``; nothing here talks to a bot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from take5.outcome import win_shares
from take5.record import FaultRecord, GameRecord

from .config import MatchConfig
from .faults import FaultKind
from .remote import BotInfo


@dataclass(frozen=True)
class Entry:
    """A bot of the match: its argument, its name in the standings, what it said about itself."""

    name: str
    bot: str
    info: BotInfo = field(default_factory=BotInfo)


@dataclass(frozen=True)
class Rejection:
    """A bot refused before play: it could not start, or failed its handshake."""

    name: str
    bot: str
    kind: FaultKind
    detail: str


@dataclass(frozen=True)
class GameSummary:
    game_id: str
    seed: int
    rotation: int
    scores: tuple[int, ...]
    places: tuple[int, ...]
    forfeited: tuple[int, ...]
    faults: tuple[tuple[FaultRecord, ...], ...]
    """Per seat, the faults of that seat ({round, turn, kind, detail})."""
    record: str | None = None
    """Path of the record file, when records are written."""
    seconds: float = 0.0
    turns: int = 0
    document: GameRecord | None = field(default=None, repr=False, compare=False)
    """The game record itself (docs/record-format.md), for callers that store it elsewhere."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "seed": self.seed,
            "rotation": self.rotation,
            "scores": list(self.scores),
            "places": list(self.places),
            "forfeited": list(self.forfeited),
            "faults": [list(f) for f in self.faults],
            "record": self.record,
            "seconds": round(self.seconds, 4),
            "turns": self.turns,
        }


@dataclass(frozen=True)
class Standing:
    name: str
    bot: str
    games: int
    wins: float
    """Games won; a first place shared by k seats counts 1/k (take5.outcome.win_shares)."""
    mean_place: float
    points: int
    mean_points: float
    forfeits: int
    faults: dict[str, int] = field(default_factory=dict)

    @property
    def fault_count(self) -> int:
        return sum(self.faults.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "bot": self.bot,
            "games": self.games,
            "wins": self.wins,
            "mean_place": round(self.mean_place, 4),
            "points": self.points,
            "mean_points": round(self.mean_points, 4),
            "forfeits": self.forfeits,
            "faults": dict(self.faults),
        }


class ExitCode(IntEnum):
    """The exit codes of ``referee match`` (docs/faults.md), also its JSON's ``exit_code``;
    REJECTED is also ``referee submit``'s for a refused bot, local or with ``--server``."""

    OK = 0
    """Every game was played and no bot faulted."""
    FAULTS = 1
    """Every game was played, but some bot faulted (and maybe forfeited games)."""
    USAGE = 2
    """Bad usage: an unknown BOT, a bad option, a player count the variant does not allow."""
    REJECTED = 3
    """A bot was rejected before play; the games were still played, its seat forfeiting each."""
    INTERRUPTED = 130
    """Ctrl-C or SIGTERM: every bot was stopped."""


@dataclass(frozen=True)
class MatchResult:
    config: MatchConfig
    entries: tuple[Entry, ...]
    games: tuple[GameSummary, ...]
    rejections: tuple[Rejection, ...] = ()
    logs: dict[str, str] = field(default_factory=dict)
    """The end of the output of each bot that faulted, by name."""
    seconds: float = 0.0

    @property
    def standings(self) -> tuple[Standing, ...]:
        rows = []
        for seat, entry in enumerate(self.entries):
            games = len(self.games)
            places = [g.places[seat] for g in self.games]
            wins = sum(win_shares(g.places)[seat] for g in self.games)
            points = sum(g.scores[seat] for g in self.games)
            kinds: dict[str, int] = {}
            for g in self.games:
                for fault in g.faults[seat]:
                    kinds[fault["kind"]] = kinds.get(fault["kind"], 0) + 1
            rows.append(
                Standing(
                    name=entry.name,
                    bot=entry.bot,
                    games=games,
                    wins=wins,
                    mean_place=sum(places) / games if games else 0.0,
                    points=points,
                    mean_points=points / games if games else 0.0,
                    forfeits=sum(1 for g in self.games if seat in g.forfeited),
                    faults=dict(sorted(kinds.items())),
                )
            )
        return tuple(sorted(rows, key=lambda s: (s.mean_place, s.mean_points, s.name)))

    @property
    def fault_count(self) -> int:
        return sum(len(f) for g in self.games for f in g.faults)

    @property
    def exit_code(self) -> ExitCode:
        """REJECTED a bot was rejected before play; FAULTS some bot faulted; OK a clean match."""
        if self.rejections:
            return ExitCode.REJECTED
        if self.fault_count:
            return ExitCode.FAULTS
        return ExitCode.OK

    @property
    def turns(self) -> int:
        return sum(g.turns for g in self.games)

    def to_dict(self) -> dict[str, Any]:
        c = self.config
        return {
            "format": "take5-match",
            "version": 1,
            "match_id": c.prefix,
            "settings": c.settings(len(self.entries)).to_dict(),
            "seed": c.seed,
            "games_played": len(self.games),
            "timeout": c.calls.timeout,
            "time_control": str(c.calls.control),
            "clock": c.calls.clock.value,
            "max_faults": c.calls.max_faults,
            "bots": [{"name": e.name, "bot": e.bot, **e.info.fields()} for e in self.entries],
            "standings": [s.to_dict() for s in self.standings],
            "rejections": [vars(r) for r in self.rejections],
            "games": [g.to_dict() for g in self.games],
            "logs": dict(self.logs),
            "exit_code": int(self.exit_code),
            "seconds": round(self.seconds, 3),
        }
