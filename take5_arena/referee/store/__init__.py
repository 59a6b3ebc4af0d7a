"""A tournament's store: one SQLite file (or one PostgreSQL database) holding settings, entrants,
schedules, games and runs (the design is in take5_arena/referee/store/store.py:
``Store`` opens the database and hands out one repository per concern)."""

from .base import StoreError, WithheldError, now
from .deal_keys import DealSeason
from .records import BotGame, FaultedGame
from .results import SeatResult, Tally, VersionStats
from .runs import pid_alive, seconds_since
from .schedules import ScheduleInfo, StoredGame
from .schema import DB_NAME, SCHEMA_VERSION, newer_schema
from .store import URL_NAME, Store, has_store
from .versions import EntrantVersion

__all__ = [
    "DB_NAME",
    "SCHEMA_VERSION",
    "URL_NAME",
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
    "has_store",
    "newer_schema",
    "now",
    "pid_alive",
    "seconds_since",
]
