"""How a match is played: the game (take5.Settings), the limits on each call (:class:`CallLimits`:
the time control and its clock, take5.clock), and the match's own frame (:class:`MatchConfig`: how
many games, which deals, where records go, and who sits where as the caller names them:
:class:`SeatIdentity`, so that the record the match writes is final).

The game settings and the call limits are the objects the caller built: ``referee match`` builds
them from its options, a tournament from its stored settings (take5_arena/referee/tournament/
settings.py, which holds the same two objects), and the match hands them on as they are, down to
``take5.Game``. Times are in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from take5 import InvalidSettings, Settings
from take5.clock import ClockKind, TimeControl
from take5.record import DealRecord, SeatRecord

from .. import defaults
from ..kinds import Ponder


@dataclass(frozen=True)
class CallLimits:
    """What a bot may take: the time control of each game and the clock it runs on, the time to
    start, the faults per game (docs/faults.md, "Time controls and clocks")."""

    timeout: float = defaults.TIMEOUT
    """Seconds per decision (PickCard, ChooseRow) when there is no ``time_control``: the simplest
    time control, ``0+timeout`` capped at ``timeout``."""
    start_timeout: float = defaults.START_TIMEOUT
    """Seconds a bot has to start serving, on the clock in force."""
    max_faults: int = defaults.MAX_FAULTS
    """Faults in one game after which the bot forfeits it."""
    time_control: TimeControl | None = None
    """A bank per game, an increment per decision, maybe a cap (None: ``timeout`` per decision)."""
    clock: ClockKind = defaults.CLOCK
    """What measures the time: the bot's CPU time (where it can be measured, else the wall clock),
    or the wall clock."""
    wall_factor: int = defaults.WALL_FACTOR
    """Under the CPU clock, a decision's wall-clock cap is this many times its limit (and at least
    take5.clock.WALL_FLOOR more)."""
    start_wall: float = defaults.START_WALL
    """Under the CPU clock, the wall-clock seconds a bot has to start serving at most."""
    ponder: Ponder = defaults.PONDER
    """Under the CPU clock, whether the CPU a bot uses between its answer and its next request is
    taken from its bank (charge) or free (allow)."""

    @classmethod
    def build(
        cls,
        *,
        timeout: float,
        time_control: str | None,
        time_cap: float | None,
        clock: ClockKind | str,
        wall_factor: int,
        start_timeout: float,
        start_wall: float,
        max_faults: int,
        ponder: Ponder | str = defaults.PONDER,
    ) -> CallLimits:
        """The call limits from their settings as a person gives them (a time control as
        ``BANK+INCREMENT`` text, its cap apart): the one builder for every command, `referee
        match`'s options (take5_arena/cli/options.py) and a tournament's settings
        (tournament/plan/settings.py), so that both check the same things in the same words.
        Raises ValueError; each caller turns it into its own error."""
        if time_control is not None and not isinstance(time_control, str):
            raise ValueError(f"time_control must be BANK+INCREMENT, not {time_control!r}")
        if time_cap is not None and time_control is None:
            raise ValueError("time_cap caps the decisions of a time_control: give one")
        control = TimeControl.parse(time_control, cap=time_cap) if time_control else None
        return cls(
            timeout=timeout,
            time_control=control,
            clock=cast(ClockKind, clock),  # checked, and made a ClockKind, by __post_init__
            wall_factor=wall_factor,
            start_timeout=start_timeout,
            start_wall=start_wall,
            max_faults=max_faults,
            ponder=cast(Ponder, ponder),  # checked, and made a Ponder, by __post_init__
        )

    def __post_init__(self) -> None:
        for name in ("timeout", "start_timeout", "start_wall"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be a number of seconds, not {value!r}")
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be positive, not {value!r}")
            object.__setattr__(self, name, float(value))
        if isinstance(self.max_faults, bool) or not isinstance(self.max_faults, int):
            raise ValueError(f"max_faults must be a whole number, not {self.max_faults!r}")
        if self.max_faults < 1:
            raise ValueError("max_faults must be at least 1")
        if self.time_control is not None and not isinstance(self.time_control, TimeControl):
            raise ValueError(f"time_control must be a TimeControl, not {self.time_control!r}")
        try:
            object.__setattr__(self, "ponder", Ponder(self.ponder))
        except ValueError:
            raise ValueError(f"unknown ponder {self.ponder!r} (use charge or allow)") from None
        try:
            object.__setattr__(self, "clock", ClockKind(self.clock))
        except ValueError:
            raise ValueError(f"unknown clock {self.clock!r} (use cpu or wall)") from None
        factor = self.wall_factor
        if isinstance(factor, bool) or not isinstance(factor, int) or not 1 <= factor <= 1000:
            raise ValueError(f"wall_factor must be a whole number from 1 to 1000, not {factor!r}")

    @property
    def control(self) -> TimeControl:
        """The time control in force: ``time_control``, or ``timeout`` per decision."""
        if self.time_control is not None:
            return self.time_control
        return TimeControl.per_decision(self.timeout)

    @property
    def notice_timeout(self) -> float:
        """Wall-clock seconds of a GameOver call (not a decision: it draws on no bank): the fixed
        limit, or with a bank its increment, at least 1 s, within the cap."""
        control = self.control
        seconds = max(control.increment, defaults.TIMEOUT)
        return seconds if control.cap is None else min(seconds, max(control.cap, 0.001))

    def describe(self) -> str:
        """``1 s per decision, cpu clock`` or ``30+0.5 (...), wall clock``: for summaries."""
        return f"{self.control}, {self.clock.value} clock"


@dataclass(frozen=True)
class SeatIdentity:
    """Who sits at a seat as the caller knows it (a tournament's entrant version), written into
    the seat's record when the match writes it, so that a record is final as it leaves the match:
    the bot's own name is kept as ``bot_name`` (docs/record-format.md, "Seats")."""

    name: str
    """The entrant's name (the record's ``name``)."""
    entrant: str
    """``name@version``."""
    version: int
    digest: str | None = None
    """``sha256:...`` of the archive that plays, checked at each game's start and end by the
    caller (None: the seat's digest is the one the match computes from the bot's folder)."""
    owner: str | None = None
    """The entrant's author as the organiser knows it (None: not known)."""

    def stamp(self, seat: SeatRecord) -> None:
        """Name ``seat`` (what the match knows of the bot) after this identity, in place; the key
        order is the records' (new keys go last), so that records stay byte for byte the same."""
        seat["bot_name"] = seat["name"]  # what the bot called itself
        seat["name"], seat["entrant"], seat["version"] = self.name, self.entrant, self.version
        if self.digest is not None:
            seat["digest"] = self.digest
        if self.owner is not None:
            seat["owner"] = self.owner


@dataclass(frozen=True)
class MatchConfig:
    """A match: ``games`` games from the deals of ``seed``, under ``game`` and ``calls``."""

    games: int = defaults.GAMES
    seed: int = defaults.SEED
    game: Settings | None = None
    """The game's settings, ``players`` included; None: the default rules for as many players as
    the match has bots."""
    calls: CallLimits = field(default_factory=CallLimits)
    handshake_timeout: float = defaults.HANDSHAKE_TIMEOUT
    records: Path | None = None
    """Folder for the game records (one JSON file per game) and the bots' output logs."""
    match_id: str = ""
    """Prefix of the game ids; default "s<seed>"."""
    game_ids: tuple[str, ...] = ()
    """The game ids by game index, when the caller names its games (a tournament's own ids; smoke
    games that look like them); else ``<prefix>-g<n>``."""
    stop_grace: float = defaults.STOP_GRACE
    """Seconds a bot has to exit after SIGTERM before it is killed."""
    output_budget: int | None = None
    """Bytes of its own output each bot keeps in the records of the whole match (None: no total;
    a tournament bounds it across games itself, in the store)."""
    seats: tuple[SeatIdentity, ...] = ()
    """Who sits at each seat as the caller names them (a tournament's entrants), by the order of
    the bots; written into every record. Empty: each seat is named by what its bot says."""
    deal: DealRecord | None = None
    """What the records say of a deal from a secret key (docs/record-format.md, "Deals"); never
    the key. None: a public seed."""

    def __post_init__(self) -> None:
        if self.games < 1:
            raise ValueError("a match has at least 1 game")
        if self.handshake_timeout <= 0:
            raise ValueError("timeouts must be positive")

    @property
    def prefix(self) -> str:
        return self.match_id or f"s{self.seed}"

    def settings(self, players: int) -> Settings:
        """The settings of each game for ``players`` bots; InvalidSettings (a ValueError) when the
        rules do not allow that many, or the given settings are for another number."""
        if self.game is None:
            return Settings(players=players)
        if self.game.players != players:
            raise InvalidSettings(
                f"the match has {players} bots, its game settings are for {self.game.players}"
            )
        return self.game

    def plan(self, index: int, players: int) -> tuple[str, int, int]:
        """(game id, seed, rotation) of game `index` (from 0).

        Duplicate deals: each seed is played `players` times with every rotation, so every bot gets
        every hand of a deal (seed + index // players, rotation index % players).
        """
        game_id = (
            self.game_ids[index] if index < len(self.game_ids) else f"{self.prefix}-g{index + 1}"
        )
        return game_id, self.seed + index // players, index % players


__all__ = ["CallLimits", "MatchConfig", "SeatIdentity"]
