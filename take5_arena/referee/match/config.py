"""How a match is played: the game (take5.Settings), the limits on each call (:class:`CallLimits`),
and the match's own frame (:class:`MatchConfig`: how many games, which deals, where records go).

The game settings and the call limits are the objects the caller built: ``referee match`` builds
them from its options, a tournament from its stored settings (take5_arena/referee/tournament/
settings.py, which holds the same two objects), and the match hands them on as they are, down to
``take5.Game``. Times are in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from take5 import InvalidSettings, Settings

from .. import defaults


@dataclass(frozen=True)
class CallLimits:
    """What a bot may take: the deadline of each call, the time to start, the faults per game."""

    timeout: float = defaults.TIMEOUT
    """Deadline of each PickCard, ChooseRow and GameOver call."""
    start_timeout: float = defaults.START_TIMEOUT
    """Time a bot has to start serving after it is launched."""
    max_faults: int = defaults.MAX_FAULTS
    """Faults in one game after which the bot forfeits it."""

    def __post_init__(self) -> None:
        for name in ("timeout", "start_timeout"):
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


__all__ = ["CallLimits", "MatchConfig"]
