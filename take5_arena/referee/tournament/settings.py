"""A tournament's settings: defaults (take5_arena/referee/defaults.py), then what the store holds, then the
options of this run; checked once, and the schedule they make.

The settings are a plain dict because they are stored as JSON in the tournament's store and must
read back the same after an upgrade; the keys are :data:`DEFAULTS`'.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from take5 import Settings, Take5Error

from .. import defaults
from ..store import EntrantVersion
from .errors import TournamentError
from .executors import default_concurrency
from .schedule import Schedule, ScheduleError, make_schedule

DEFAULTS: dict[str, Any] = {
    "players": defaults.PLAYERS,
    "games": None,  # None: a complete round robin if small, else 10 tables per entrant
    "seed": defaults.SEED,
    "variant": defaults.VARIANT,
    "threshold": defaults.THRESHOLD,
    "end_rule": defaults.END_RULE,
    "duplicate": defaults.DUPLICATE,
    "timeout": defaults.TIMEOUT,
    "start_timeout": defaults.START_TIMEOUT,
    "max_faults": defaults.MAX_FAULTS,
    "sandbox": defaults.TOURNAMENT_SANDBOX,
    "executor": defaults.EXECUTOR,
    "concurrency": None,  # None: from the CPU count
    "memory": defaults.MEMORY,
    "cpus": defaults.CPUS,
    "pids": defaults.PIDS,
    "base_image": defaults.BASE_IMAGE,
    "runtime": defaults.RUNTIME,  # None: the engine's own (runc)
    "bot_memory": defaults.BOT_MEMORY,
    "retries": defaults.RETRIES,
    "output_budget": defaults.OUTPUT_BUDGET,
}
#: The settings that shape the schedule (and the game ids): changing one makes a new schedule.
SCHEDULE_KEYS = ("players", "games", "seed", "duplicate", "variant", "threshold", "end_rule")
GAME_KEYS = ("variant", "threshold", "end_rule")
SANDBOXES = defaults.SANDBOXES


def resolve_settings(stored: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Defaults, then the stored settings, then the options given now (None = not given)."""
    settings = dict(DEFAULTS)
    settings.update({k: v for k, v in stored.items() if k in DEFAULTS})
    settings.update({k: v for k, v in overrides.items() if v is not None and k in DEFAULTS})
    check_settings(settings)
    return settings


def check_settings(s: Mapping[str, Any]) -> None:
    try:
        Settings(
            players=s["players"],
            variant=s["variant"],
            threshold=s["threshold"],
            end_rule=s["end_rule"],
        )
    except Take5Error as error:
        raise TournamentError(str(error)) from None
    if s["sandbox"] not in SANDBOXES:
        raise TournamentError(f"unknown sandbox {s['sandbox']!r} (use docker or local)")
    if s["games"] is not None and int(s["games"]) < 1:
        raise TournamentError("games must be at least 1")
    if float(s["timeout"]) <= 0:
        raise TournamentError("the per-call deadline must be positive")
    if s["concurrency"] is not None and int(s["concurrency"]) < 1:
        raise TournamentError("concurrency must be at least 1")
    if s["bot_memory"] not in defaults.BOT_MEMORIES:
        raise TournamentError(
            f"unknown bot memory {s['bot_memory']!r} (use {' or '.join(defaults.BOT_MEMORIES)})"
        )
    if s["runtime"] is not None and not re.fullmatch(
        r"[A-Za-z0-9][A-Za-z0-9_.-]{0,40}", s["runtime"]
    ):
        raise TournamentError(f"{s['runtime']!r} is not the name of a container runtime")


def sandbox_limits(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The sandbox limits in a tournament's settings, as `SandboxLimits` takes them (a table's
    ``limits``)."""
    return {
        "memory": settings["memory"],
        "cpus": float(settings["cpus"]),
        "pids": int(settings["pids"]),
        "runtime": settings["runtime"],
    }


def game_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {k: settings[k] for k in GAME_KEYS}


def concurrency_of(settings: Mapping[str, Any]) -> int:
    return int(settings["concurrency"] or default_concurrency(int(settings["players"])))


def schedule_for(versions: Sequence[EntrantVersion], settings: Mapping[str, Any]) -> Schedule:
    try:
        return make_schedule(
            [v.key for v in versions],
            table_size=int(settings["players"]),
            games=settings["games"],
            seed=int(settings["seed"]),
            duplicate=bool(settings["duplicate"]),
            context=game_settings(settings),
        )
    except ScheduleError as error:
        raise TournamentError(f"no schedule: {error}") from None


def schedule_id(schedule: Schedule) -> str:
    h = hashlib.blake2b(digest_size=8)
    for g in schedule.games:
        h.update(g.game_id.encode())
    return h.hexdigest()


def settings_summary(settings: Mapping[str, Any]) -> str:
    """One line about the settings, for `referee tournament run` and `status`."""
    rule = "at or above" if settings.get("end_rule") == "at-or-above" else "above"
    return (
        f"tables of {settings['players']}, {settings['variant']}, ends {rule} {settings['threshold']}, "
        f"seed {settings['seed']}, {'duplicate deals' if settings['duplicate'] else 'single deals'}, "
        f"{settings['timeout']:g} s per call, sandbox {settings['sandbox']}, executor {settings['executor']}, "
        f"concurrency {concurrency_of(settings)}"
        + (
            f", bot memory: {settings.get('bot_memory', defaults.BOT_MEMORY)}"
            + (f", runtime {settings['runtime']}" if settings.get("runtime") else "")
            if settings["sandbox"] == "docker"
            else ""
        )
    )
