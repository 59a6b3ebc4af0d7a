"""A tournament's store: one SQLite file holding settings, entrants, schedules, games and runs
(the design is in take5_arena/referee/store/store.py)."""

from .store import (
    DB_NAME,
    SCHEMA_VERSION,
    EntrantVersion,
    FaultedGame,
    ScheduleInfo,
    SeatResult,
    Store,
    StoredGame,
    StoreError,
    VersionStats,
    now,
    pid_alive,
    seconds_since,
)

__all__ = [
    "DB_NAME",
    "SCHEMA_VERSION",
    "EntrantVersion",
    "FaultedGame",
    "ScheduleInfo",
    "SeatResult",
    "Store",
    "StoreError",
    "StoredGame",
    "VersionStats",
    "now",
    "pid_alive",
    "seconds_since",
]
