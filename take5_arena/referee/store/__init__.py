"""A tournament's store: one SQLite file holding settings, entrants, schedules, games and runs
(the design is in take5_arena/referee/store/store.py)."""

from .store import (
    DB_NAME,
    SCHEMA_VERSION,
    BotGame,
    DealSeason,
    EntrantVersion,
    FaultedGame,
    ScheduleInfo,
    SeatResult,
    Store,
    StoredGame,
    StoreError,
    Tally,
    VersionStats,
    WithheldError,
    newer_schema,
    now,
    pid_alive,
    seconds_since,
)

__all__ = [
    "DB_NAME",
    "SCHEMA_VERSION",
    "BotGame",
    "DealSeason",
    "EntrantVersion",
    "FaultedGame",
    "ScheduleInfo",
    "SeatResult",
    "Store",
    "StoreError",
    "StoredGame",
    "Tally",
    "VersionStats",
    "WithheldError",
    "newer_schema",
    "now",
    "pid_alive",
    "seconds_since",
]
