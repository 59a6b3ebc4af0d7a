"""A tournament's settings: one frozen :class:`TournamentSettings`, from the command line (or the
store) to every game.

The settings are built once, where they enter: from the store's JSON and the options given now
(:meth:`TournamentSettings.from_json`, :meth:`TournamentSettings.updated`), checked as they are
built. After that they travel unchanged: the run, the table specs sent to the workers and the match
hold the same objects, and the match gives ``game`` (a ``take5.Settings``) to ``take5.Game`` and
``calls`` (the match layer's ``CallLimits``) to the turn protocol, and the sandbox gets ``limits``
(its own ``SandboxLimits``). Nothing converts or casts them on the way.

The store keeps them as JSON (:meth:`TournamentSettings.to_json`): a flat object whose keys are the
options' names, the same object as before this type existed, so an older store opens and reads
back the same. Keys a store holds that this referee does not know are ignored; keys it lacks take
their defaults (take5_arena/referee/defaults.py), but one: ``deals``. A new tournament deals from a
secret key; settings saved before secret deals existed (they hold a ``seed``, and no ``deals``)
deal from their public seed, as they always did, and so does a run given ``--seed N``.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from take5 import Settings, Take5Error
from take5.clock import ClockKind
from take5.rules import EndRule, Variant

from ... import defaults
from ...kinds import BotMemory, DealMode, Ponder, SandboxKind
from ...limits import SandboxLimits
from ...match.config import CallLimits
from ...store import EntrantVersion
from ..errors import TournamentError
from .schedule import DealSource, Schedule, ScheduleError, make_schedule

#: The keys of the settings JSON, in the order of :meth:`TournamentSettings.to_json`.
KEYS = (
    "players",
    "games",
    "seed",
    "deals",
    "separate_authors",
    "variant",
    "threshold",
    "end_rule",
    "duplicate",
    "timeout",
    "time_control",
    "time_cap",
    "clock",
    "wall_factor",
    "ponder",
    "start_timeout",
    "start_wall",
    "max_faults",
    "sandbox",
    "executor",
    "concurrency",
    "memory",
    "cpus",
    "pids",
    "base_image",
    "runtime",
    "bot_memory",
    "retries",
    "output_budget",
)
#: the settings a bot's smoke games take (:meth:`TournamentSettings.smoke_shape`): its table, its
#: game and its time limits, the keys of KEYS from "variant" to "max_faults" after "players"
SMOKE_SHAPE = ("players", *KEYS[KEYS.index("variant") : KEYS.index("max_faults") + 1])


def _default_game() -> Settings:
    return Settings(
        players=defaults.PLAYERS,
        variant=Variant(defaults.VARIANT),
        threshold=defaults.THRESHOLD,
        end_rule=EndRule(defaults.END_RULE),
    )


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_concurrency(table_size: int) -> int:
    """Tables played at once by default: the bots of a table think at the same time (their picks
    are simultaneous), so about one CPU per seat: ``max(1, cpus // table_size)``."""
    return max(1, cpu_count() // max(1, table_size))


def _default_limits() -> SandboxLimits:
    return SandboxLimits(
        memory=defaults.MEMORY, cpus=defaults.CPUS, pids=defaults.PIDS, runtime=defaults.RUNTIME
    )


@dataclass(frozen=True)
class TournamentSettings:
    """How a tournament's games are scheduled, played and run (see the module text)."""

    game: Settings = field(default_factory=_default_game)
    """The rules of every game; ``game.players`` is the table size."""
    games: int | None = None
    """Games wanted; None: a complete round robin if small, else 10 tables per entrant."""
    seed: int = defaults.SEED
    """Seed of the seating, and of the deals when ``deals`` is public."""
    deals: DealMode = DealMode.SECRET
    """Where the deals come from: a secret key per season, or the public ``seed``."""
    separate_authors: bool = defaults.SEPARATE_AUTHORS
    """Never two entrants of one author at a table, when the pool allows it."""
    duplicate: bool = defaults.DUPLICATE
    """Each deal replayed with the hands rotated through every seat."""
    calls: CallLimits = field(default_factory=CallLimits)
    sandbox: SandboxKind = field(default_factory=lambda: SandboxKind(defaults.TOURNAMENT_SANDBOX))
    limits: SandboxLimits = field(default_factory=_default_limits)
    """Memory, CPUs, pids and the OCI runtime of each bot container (docker)."""
    base_image: str = defaults.BASE_IMAGE
    bot_memory: BotMemory = field(default_factory=lambda: BotMemory(defaults.BOT_MEMORY))
    """What a bot process may remember from one game to the next (docker): see kinds.BotMemory."""
    executor: str = defaults.EXECUTOR
    concurrency: int | None = None
    """Tables played at once; None: from the CPU count (:attr:`tables_at_once`)."""
    retries: int = defaults.RETRIES
    """Retries of a game after an infrastructure failure."""
    output_budget: int = defaults.OUTPUT_BUDGET
    """Bytes of its own output each bot version keeps in the records."""

    def __post_init__(self) -> None:
        if self.games is not None and (not _whole(self.games) or self.games < 1):
            raise TournamentError("games must be at least 1")
        if self.concurrency is not None and (not _whole(self.concurrency) or self.concurrency < 1):
            raise TournamentError("concurrency must be at least 1")
        if not _whole(self.seed):
            raise TournamentError(f"the seed must be a whole number, not {self.seed!r}")
        if not _whole(self.retries) or self.retries < 0:
            raise TournamentError("retries must be a whole number, at least 0")
        if not _whole(self.output_budget) or self.output_budget < 0:
            raise TournamentError("the output budget must be a whole number of bytes, at least 0")
        for name in ("duplicate", "separate_authors"):
            if not isinstance(getattr(self, name), bool):
                raise TournamentError(f"{name} must be true or false, not {getattr(self, name)!r}")
        if not isinstance(self.deals, DealMode):
            raise TournamentError(f"deals must be secret or public, not {self.deals!r}")
        for name in ("base_image", "executor"):
            if not isinstance(getattr(self, name), str):
                raise TournamentError(f"{name} must be a string, not {getattr(self, name)!r}")

    # -- JSON (the store) ----------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The flat JSON object the store keeps (keys: :data:`KEYS`)."""
        tc = self.calls.time_control
        return {
            "players": self.game.players,
            "games": self.games,
            "seed": self.seed,
            "deals": self.deals.value,
            "separate_authors": self.separate_authors,
            "variant": self.game.variant.value,
            "threshold": self.game.threshold,
            "end_rule": self.game.end_rule.value,
            "duplicate": self.duplicate,
            "timeout": self.calls.timeout,
            "time_control": tc.spec if tc is not None else None,
            "time_cap": tc.cap if tc is not None else None,
            "clock": self.calls.clock.value,
            "wall_factor": self.calls.wall_factor,
            "ponder": self.calls.ponder.value,
            "start_timeout": self.calls.start_timeout,
            "start_wall": self.calls.start_wall,
            "max_faults": self.calls.max_faults,
            "sandbox": self.sandbox.value,
            "executor": self.executor,
            "concurrency": self.concurrency,
            "memory": self.limits.memory,
            "cpus": self.limits.cpus,
            "pids": self.limits.pids,
            "base_image": self.base_image,
            "runtime": self.limits.runtime,  # None: the engine's own (runc)
            "bot_memory": self.bot_memory.value,
            "retries": self.retries,
            "output_budget": self.output_budget,
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> TournamentSettings:
        """Settings from the store's JSON (or any mapping with its keys): missing keys take their
        defaults, unknown keys are ignored; a bad value is a TournamentError naming it. Settings
        saved before secret deals (a ``seed`` and no ``deals``) deal from their public seed;
        settings saved before clocks (a ``timeout`` and no ``clock``) ran on the wall clock, the
        only one there was, and read back as it; settings saved before the ponder rule read back as
        ``allow``, the rule they were played under."""
        base = cls().to_json()
        values = {**base, **{k: v for k, v in doc.items() if k in base}}
        if "seed" in doc and "deals" not in doc:
            values["deals"] = DealMode.PUBLIC.value
        if "timeout" in doc and "clock" not in doc:
            values["clock"] = ClockKind.WALL.value
        if "timeout" in doc and "ponder" not in doc:  # saved before the rule: thinking was free
            values["ponder"] = Ponder.ALLOW.value
        try:
            deals = DealMode(values["deals"])
        except ValueError:
            raise TournamentError(
                f"deals must be secret or public, not {values['deals']!r}"
            ) from None
        try:
            game = Settings(
                players=values["players"],
                variant=values["variant"],
                threshold=values["threshold"],
                end_rule=values["end_rule"],
            )
        except Take5Error as error:
            raise TournamentError(str(error)) from None
        try:  # the one builder of call limits (match/config.py), as `referee match`'s options
            cap = values["time_cap"]
            calls = CallLimits.build(
                timeout=_number(values, "timeout"),
                time_control=values["time_control"],
                time_cap=None if cap is None else _number(values, "time_cap"),
                clock=values["clock"],
                wall_factor=values["wall_factor"],
                ponder=values["ponder"],
                start_timeout=_number(values, "start_timeout"),
                start_wall=_number(values, "start_wall"),
                max_faults=values["max_faults"],
            )
        except ValueError as error:
            raise TournamentError(str(error)) from None
        try:
            sandbox = SandboxKind(values["sandbox"])
        except ValueError:
            raise TournamentError(
                f"unknown sandbox {values['sandbox']!r} (use docker or local)"
            ) from None
        try:
            limits = SandboxLimits(
                memory=str(values["memory"]),
                cpus=_number(values, "cpus"),
                pids=values["pids"],
                runtime=_runtime(values["runtime"]),
            )
        except (ValueError, TypeError) as error:
            raise TournamentError(str(error)) from None
        try:
            bot_memory = BotMemory(values["bot_memory"])
        except ValueError:
            raise TournamentError(
                f"unknown bot memory {values['bot_memory']!r} "
                f"(use {' or '.join(defaults.BOT_MEMORIES)})"
            ) from None
        return cls(
            game=game,
            games=values["games"],
            seed=values["seed"],
            deals=deals,
            separate_authors=values["separate_authors"],
            duplicate=values["duplicate"],
            calls=calls,
            sandbox=sandbox,
            limits=limits,
            base_image=values["base_image"],
            bot_memory=bot_memory,
            executor=values["executor"],
            concurrency=values["concurrency"],
            retries=values["retries"],
            output_budget=values["output_budget"],
        )

    def updated(self, options: Mapping[str, Any]) -> TournamentSettings:
        """These settings with the options given now (the command line's, named as the JSON
        keys); an option that is None was not given."""
        unknown = sorted(set(options) - set(KEYS))
        if unknown:
            raise TypeError(f"not a tournament setting: {', '.join(unknown)}")
        given = {k: v for k, v in options.items() if v is not None}
        if "seed" in given and "deals" not in given:  # --seed N: reproducible, so public
            given["deals"] = DealMode.PUBLIC.value
        if not given:
            return self
        if "timeout" in given and "time_control" in given:
            raise TournamentError(
                "give --timeout (per decision) or --time-control (a bank), not both"
            )
        if "timeout" in given:  # the fixed form again: the stored bank no longer applies
            given.update(time_control=None, time_cap=None)
        elif "time_control" in given and "time_cap" not in given:
            given["time_cap"] = None  # a new time control is uncapped unless it says
        return TournamentSettings.from_json({**self.to_json(), **given})

    # -- what they make --------------------------------------------------------------------------

    @property
    def players(self) -> int:
        """Seats at each table."""
        return self.game.players

    @property
    def tables_at_once(self) -> int:
        """``concurrency``, or the default for the table size and the CPUs."""
        return self.concurrency or default_concurrency(self.players)

    def smoke_shape(self) -> dict[str, Any]:
        """What of these settings a bot's smoke games are played with (its table, its game, its
        time limits): kept with each validated version, so that a run at another shape can say
        which entrants were never tested at it (docs/security.md, "Smoke games")."""
        flat = self.to_json()
        return {k: flat[k] for k in SMOKE_SHAPE}

    def game_context(self) -> dict[str, Any]:
        """The game settings every scheduled game keeps (in the store, and in its id)."""
        return {
            "variant": self.game.variant.value,
            "threshold": self.game.threshold,
            "end_rule": self.game.end_rule.value,
        }

    def authors(self, versions: Sequence[EntrantVersion]) -> dict[str, str | None] | None:
        """Entrant version key -> author, for a schedule that keeps authors apart (None: it
        need not)."""
        if not self.separate_authors:
            return None
        return {v.key: v.author for v in versions}

    def schedule(
        self, versions: Sequence[EntrantVersion], deals: DealSource | None = None
    ) -> Schedule:
        """The fixed schedule of these entrant versions, with deals from ``deals`` (None: the
        public seed's)."""
        try:
            return make_schedule(
                [v.key for v in versions],
                table_size=self.players,
                games=self.games,
                seed=self.seed,
                duplicate=self.duplicate,
                context=self.game_context(),
                deals=deals,
                authors=self.authors(versions),
            )
        except ScheduleError as error:
            raise TournamentError(f"no schedule: {error}") from None

    def describe(self) -> str:
        """One line about the settings, for `referee tournament run` and `status`."""
        rule = "at or above" if self.game.end_rule is EndRule.AT_OR_ABOVE else "above"
        deals = (
            "secret deals"
            if self.deals is DealMode.SECRET
            else f"deals from public seed {self.seed} (predictable)"
        )
        return (
            f"tables of {self.players}, {self.game.variant.value}, ends {rule} "
            f"{self.game.threshold}, {deals}, "
            f"{'duplicate deals' if self.duplicate else 'single deals'}, "
            f"{self.calls.describe()}, sandbox {self.sandbox.value}, "
            f"executor {self.executor}, concurrency {self.tables_at_once}"
            + (self._docker_description() if self.sandbox is SandboxKind.DOCKER else "")
        )

    def _docker_description(self) -> str:
        runtime = self.limits.runtime
        return f", bot memory: {self.bot_memory.value}" + (
            f", runtime {runtime}" if runtime else ""
        )


def _runtime(value: object) -> str | None:
    """A stored runtime: None or a string (SandboxLimits checks that it is a runtime's name)."""
    if value is None or isinstance(value, str):
        return value
    raise TournamentError(f"runtime must be a string, not {value!r}")


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(values: Mapping[str, Any], key: str) -> float:
    value = values[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TournamentError(f"{key} must be a number, not {value!r}")
    return float(value)


def schedule_id(schedule: Schedule) -> str:
    h = hashlib.blake2b(digest_size=8)
    for g in schedule.games:
        h.update(g.game_id.encode())
    return h.hexdigest()


__all__ = [
    "KEYS",
    "SMOKE_SHAPE",
    "TournamentSettings",
    "cpu_count",
    "default_concurrency",
    "schedule_id",
]
