"""Time controls and clocks: how much time a bot has for each decision, and how it is measured.

One definition for every place that times a bot: the referee (take5_arena/referee/match/), the
record's replay (take5.record), the bot runtime (take5.bot, which tells the bot its time) and the
harness (take5.harness, which applies the same limits in-process). The rules
are docs/faults.md's ("Time controls and clocks"); docs/record-format.md says how a record keeps
them, and the independent checker (take5.audit) restates the arithmetic from that page.

A **time control** is a bank per game plus an increment per decision, and optionally a cap on any
one decision: ``30+0.5`` gives each bot 30 s for the game and adds 0.5 s before each of its
decisions. What a decision does not use stays in the bank for later ones, so a bot can think longer
where it matters. The simplest form, a fixed limit per decision (``--timeout 1``), is the control
``0+1`` capped at 1 s: nothing carries over.

A **clock** measures what a decision costs: ``cpu`` (the default where the referee can measure it)
counts the CPU time the bot's processes used while it held the question, so a busy host does not
make a bot late; ``wall`` counts the time from the question to the answer. Under the CPU clock a
wall-clock cap of ``WALL_FACTOR`` times the decision's limit (and at least ``WALL_FLOOR`` more than
it) remains, for a bot that sleeps or blocks instead of computing.

The bank is kept in whole milliseconds, so that the referee and a checker reading a record compute
the same numbers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import Enum
from functools import cached_property

from .rules import Take5Error

DEFAULT_TIMEOUT = 1.0
"""Seconds per decision when nothing else is said (``--timeout``): the control ``0+1``, capped at
1 s."""
WALL_FACTOR = 10
"""Under the CPU clock, a decision's wall-clock cap is this many times its limit
(``--wall-factor``)."""
WALL_FLOOR = 1.0
"""... and at least this many seconds more than its limit: a short limit must survive a host's
scheduling delays, which the bot cannot help."""

START_TIMEOUT = 30.0
"""Seconds a bot has to start serving, on the clock in force (``--start-timeout``)."""
START_WALL = 120.0
"""Under the CPU clock, the wall-clock seconds a bot's start may take at most (``--start-wall``)."""


class ClockKind(str, Enum):
    """What measures a bot's time (the ``--clock`` option; a record's ``time_control.clock``)."""

    CPU = "cpu"
    """CPU time of the bot's processes (its container's cgroup, or its process tree) while it held
    the question; a wall-clock cap remains as the safety net."""
    WALL = "wall"
    """Wall-clock time from the question to the answer."""

    def __str__(self) -> str:
        return self.value


DEFAULT_CLOCK = ClockKind.CPU
"""The clock in force by default, where the referee can measure it (else the wall clock)."""


class TimeControlError(Take5Error, ValueError):
    """A time control that cannot be: a negative bank, no time at all, a text that does not
    parse."""


def to_ms(seconds: float) -> int:
    """Seconds as whole milliseconds (the unit of banks and of the times in a record)."""
    return max(0, round(seconds * 1000))


_SPEC = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(?:\+\s*(\d+(?:\.\d*)?|\.\d+)\s*)?")


@dataclass(frozen=True)
class TimeControl:
    """A bank of ``bank`` seconds per game, ``increment`` seconds more before each decision, and at
    most ``cap`` seconds for any one decision (None: as much as the bank holds)."""

    bank: float
    """Seconds each bot has for the whole game at its start."""
    increment: float = 0.0
    """Seconds added to the bank before each decision."""
    cap: float | None = None
    """Most seconds one decision may take, whatever the bank holds; None: no cap."""

    def __post_init__(self) -> None:
        for name in ("bank", "increment", "cap"):
            value = getattr(self, name)
            if value is None and name == "cap":
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TimeControlError(f"the {name} must be a number of seconds, not {value!r}")
            if not (math.isfinite(value) and value >= 0):
                raise TimeControlError(f"the {name} must be 0 or more seconds, not {value!r}")
            if value > 86_400:
                raise TimeControlError(f"the {name} must be at most a day (86400 s), not {value!r}")
            object.__setattr__(self, name, float(value))
        if self.bank_ms + self.increment_ms <= 0:
            raise TimeControlError("a time control gives some time: a bank or an increment")
        if self.cap is not None and to_ms(self.cap) <= 0:
            raise TimeControlError("the cap of a decision must be at least 1 ms")

    @classmethod
    def per_decision(cls, seconds: float) -> TimeControl:
        """A fixed limit per decision (``--timeout``): nothing carries from one decision to the
        next."""
        return cls(bank=0.0, increment=seconds, cap=seconds)

    @classmethod
    def parse(cls, text: str, cap: float | None = None) -> TimeControl:
        """``"30+0.5"`` (a 30 s bank, 0.5 s per decision) or ``"30"`` (a bank alone), in seconds."""
        match = _SPEC.fullmatch(text) if isinstance(text, str) else None
        if match is None:
            raise TimeControlError(
                f"{str(text)[:40]!r} is not a time control: give BANK+INCREMENT in seconds, "
                "for example 30+0.5 (30 s a game, 0.5 s more per decision)"
            )
        return cls(bank=float(match[1]), increment=float(match[2] or 0), cap=cap)

    # -- the numbers the clock runs on (whole milliseconds; worked out once: a bank asks often) ---

    @cached_property
    def bank_ms(self) -> int:
        return to_ms(self.bank)

    @cached_property
    def increment_ms(self) -> int:
        return to_ms(self.increment)

    @cached_property
    def cap_ms(self) -> int | None:
        return None if self.cap is None else to_ms(self.cap)

    @cached_property
    def ceiling_ms(self) -> int | None:
        """The most the bank keeps between decisions (None: no bound). With a cap, saving more than
        the cap can spend would buy nothing, so the bank keeps at most its first size or the cap
        less one increment, whichever is more; without a cap it keeps all (docs/faults.md)."""
        cap = self.cap_ms
        if cap is None:
            return None
        return max(self.bank_ms, cap - self.increment_ms)

    @property
    def fixed(self) -> bool:
        """Whether this is a fixed limit per decision: no bank carries from one to the next."""
        return self.ceiling_ms == 0

    @property
    def spec(self) -> str:
        """The text :meth:`parse` reads back (the cap apart): ``30+0.5``."""
        return f"{self.bank:g}+{self.increment:g}"

    def __str__(self) -> str:
        if self.fixed:
            return f"{self.increment:g} s per decision"
        text = f"{self.spec} (a {self.bank:g} s bank, +{self.increment:g} s per decision"
        return text + (f", at most {self.cap:g} s a decision)" if self.cap is not None else ")")

    def start(self) -> Bank:
        """A seat's bank at the start of a game."""
        return Bank(self)


class Bank:
    """One seat's time through one game, in whole milliseconds (see the module text).

    Before each decision the increment is added: ``available_ms`` is what the bank then holds and
    ``limit_ms`` what the decision may use (the bank, or the cap when lower). :meth:`charge` takes
    the time the decision used: it ran out when it used more than its limit.
    """

    __slots__ = ("control", "left_ms")

    def __init__(self, control: TimeControl) -> None:
        self.control = control
        self.left_ms = control.bank_ms
        """What the bank holds between decisions (before the next increment)."""

    @property
    def available_ms(self) -> int:
        """What the bank holds for the next decision: what is left, plus its increment."""
        return self.left_ms + self.control.increment_ms

    @property
    def limit_ms(self) -> int:
        """The most the next decision may use."""
        cap = self.control.cap_ms
        available = self.available_ms
        return available if cap is None else min(available, cap)

    def over(self, used_ms: int) -> bool:
        """Whether a decision that used ``used_ms`` went over its limit (a timeout fault)."""
        return used_ms > self.limit_ms

    def charge(self, used_ms: int) -> int:
        """Take a decision's time out of the bank; what the bank holds after it (never below 0)."""
        left = max(0, self.available_ms - max(0, used_ms))
        ceiling = self.control.ceiling_ms
        self.left_ms = left if ceiling is None else min(left, ceiling)
        return self.left_ms

    def __repr__(self) -> str:
        return f"<Bank {self.left_ms} ms of {self.control.spec}>"


def wall_cap(limit: float, clock: ClockKind, factor: float = WALL_FACTOR) -> float:
    """The wall-clock seconds a decision with ``limit`` seconds on ``clock`` may last at most: the
    limit itself on the wall clock; under the CPU clock ``factor`` times it, and at least
    ``WALL_FLOOR`` more."""
    if clock is ClockKind.WALL:
        return limit
    return max(limit * factor, limit + WALL_FLOOR)


# -- what a timeout says (the referee's fault details; the harness's messages) --------------------


def describe_clock(kind: ClockKind) -> str:
    """The clock in words, for messages ("CPU time", "wall-clock time")."""
    return "CPU time" if kind is ClockKind.CPU else "wall-clock time"


def limit_detail(control: TimeControl, kind: ClockKind, method: str, limit: float) -> str:
    """Why a decision with ``limit`` seconds that used more is a timeout: which clock and which
    part of the time control ran out."""
    clock = f"{kind.value} clock"
    if control.fixed:
        if kind is ClockKind.WALL:
            return f"no answer to {method} within {limit:g} s ({clock})"
        return f"{method} used more than its {limit:g} s of {describe_clock(kind)} ({clock})"
    if control.cap is not None and limit >= control.cap:
        return (
            f"{method} used more than the {control.cap:g} s cap of a decision "
            f"({clock}, time control {control.spec})"
        )
    return (
        f"{method} ran out of its time bank: it used more than the {limit:g} s left "
        f"({clock}, time control {control.spec})"
    )


def wall_detail(control: TimeControl, kind: ClockKind, method: str, budget: Budget) -> str:
    """Why a decision that outlasted its wall-clock cap is a timeout."""
    if kind is ClockKind.WALL:
        return limit_detail(control, kind, method, budget.limit)
    return (
        f"no answer to {method} within its wall-clock cap of {budget.wall_limit:g} s "
        f"(cpu clock: the bot used less than its {budget.limit:g} s of CPU time, but slept, "
        "blocked or waited that long)"
    )


def empty_detail(control: TimeControl, kind: ClockKind, method: str) -> str:
    """Why a decision was not asked at all: nothing in the bank."""
    return (
        f"{method} was not asked: the time bank is empty and the time control "
        f"{control.spec} adds nothing ({kind.value} clock)"
    )


@dataclass(frozen=True)
class Budget:
    """What a bot is told about the time of one call: which clock, this call's limit, the bank.

    The referee sends it in every request (``Clock`` in proto/take5/v1/bot.proto); the runtime
    gives it to the bot as ``Bot.context.budget``; ``Bot.time_left()`` follows it.
    """

    limit: float
    """Seconds this call may use, on ``clock``."""
    clock: ClockKind = ClockKind.WALL
    """What measures them."""
    bank: float | None = None
    """Seconds in the game's bank now, this decision's increment included (None: not said)."""
    increment: float = 0.0
    """Seconds added to the bank before each decision."""
    cap: float | None = None
    """Most seconds a decision may take whatever the bank holds (None: no cap)."""
    wall: float | None = None
    """Wall-clock seconds the call may last at most (None: ``limit``, on the wall clock)."""

    @property
    def wall_limit(self) -> float:
        """Wall-clock seconds the call may last at most."""
        return self.limit if self.wall is None else self.wall


__all__ = [
    "DEFAULT_CLOCK",
    "DEFAULT_TIMEOUT",
    "START_TIMEOUT",
    "START_WALL",
    "WALL_FACTOR",
    "WALL_FLOOR",
    "Bank",
    "Budget",
    "ClockKind",
    "TimeControl",
    "TimeControlError",
    "describe_clock",
    "empty_detail",
    "limit_detail",
    "to_ms",
    "wall_cap",
    "wall_detail",
]
