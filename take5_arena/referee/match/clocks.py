"""The clocks of a match: each seat's bank through a game, what each decision costs, and the
allowance a bot has to start (docs/faults.md, "Time controls and clocks").

The arithmetic of a time control is the SDK's (take5.clock: a record's checker computes the same
numbers); this module measures. A decision is timed from just before its request
is sent to the moment its answer arrives (a callback on the call's future, so that a bot that
answers in time is never charged for the referee's own waiting). Under the CPU clock its cost is
the CPU time the bot used in between, read from its handle (`BotHandle.cpu_time`: a local
process's tree, a container's cgroup; differences of readings only, so a container that served
other games before costs nothing extra), and the referee looks at it while it waits, so that a bot
that spends more than its limit is stopped there; the wall-clock cap (a multiple of the limit) ends
the wait for a bot that sleeps or blocks. Under the wall clock the cost is the time from question to
answer, and the call's gRPC deadline is its limit.

The host's load is never the bot's fault: where the handle reads its threads' run-queue waits
(`BotHandle.run_waits`, runqueue.py), the cap of a CPU-clock decision bounds the bot's own time:
the wall time less the longest run-queue wait of one of its threads. So the referee waits on for a
bot whose wait accounts for its overrun (it may still answer, and then nothing happened), up to
`HOST_GRACE` times the cap; a bot still starved then is the host's failure (`SeatClock.starved`):
the game is nobody's and is played again (InfraKind.HOST). A bot that sleeps does not wait on a run
queue: past its cap it times out as before. Where the waits cannot be read, nothing changes.

Each seat runs on the clock asked for where its handle can measure it, else on the wall clock (a
bot given by address): the record says which (`seats[i].clock`).

Thinking between decisions (``CallLimits.ponder``): with ``charge`` (the default), a CPU-clock
decision after the seat's first of the game is timed from the end of its previous one, so the CPU
its processes used between its answer and this request counts as this decision's (and its
limit's: a bot that pondered away its bank times out at once). With ``allow`` it is free. Either
way the record's arithmetic is the same (``[seat, used, bank after]``), and says the rule
(``time_control.ponder``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

from take5.clock import (
    Bank,
    Budget,
    ClockKind,
    TimeControl,
    describe_clock,
    empty_detail,
    limit_detail,
    to_ms,
    wall_cap,
    wall_detail,
)

from ..kinds import Ponder
from . import runqueue
from .config import CallLimits
from .handle import BotHandle

HOST_GRACE = 2.0
"""How many times its wall-clock cap the referee waits at most for a bot the host starves."""
POLL_SHORTEST = 0.005
"""Seconds between two looks at a bot's CPU time while it thinks, at least ..."""
POLL_LONGEST = 0.1
"""... and at most (a tenth of the limit in between)."""


class SeatClock:
    """One seat's time through one game: its bank, and the clock that measures it."""

    def __init__(self, limits: CallLimits, handle: BotHandle) -> None:
        self.limits = limits
        self.handle = handle
        self.control: TimeControl = limits.control
        self.bank: Bank = self.control.start()
        measurable = limits.clock is ClockKind.CPU and handle.cpu_time() is not None
        self.kind = ClockKind.CPU if measurable else ClockKind.WALL
        self.answered: float | None = None
        """The bot's CPU time when its last decision ended (charged from there: `start`)."""

    def budget(self) -> Budget:
        """The time of the seat's next decision (what its request says)."""
        control = self.control
        limit = self.bank.limit_ms / 1000
        return Budget(
            limit=limit,
            clock=self.kind,
            bank=self.bank.available_ms / 1000,
            increment=control.increment,
            cap=control.cap,
            wall=wall_cap(limit, self.kind, self.limits.wall_factor),
        )

    def start(self, budget: Budget) -> Stopwatch:
        """A stopwatch for a decision with `budget`, started now (just before the request goes)."""
        since = self.answered if self.limits.ponder is Ponder.CHARGE else None
        if self.kind is not ClockKind.CPU:
            return Stopwatch(budget, None, since)
        handle = self.handle  # its CPU time and its threads' waits, read together once
        return Stopwatch(budget, handle.cpu_time, since, handle.run_waits, handle.meters())

    def settle(self, watch: Stopwatch) -> tuple[int, int, bool]:
        """Charge a decision to the bank: (milliseconds used, the bank after it, whether it went
        over its limit)."""
        used = to_ms(watch.used())
        over = self.bank.over(used)
        self.answered = watch.cpu1
        return used, self.bank.charge(used), over

    def limit_detail(self, method: str, budget: Budget) -> str:
        """The detail of a timeout fault for a decision that used more than its limit: which clock
        and which part of the time control ran out (take5.clock, which the harness says too)."""
        return limit_detail(self.control, self.kind, method, budget.limit)

    def wall_detail(self, method: str, budget: Budget) -> str:
        """The detail of a timeout fault for a decision that outlasted its wall-clock cap."""
        return wall_detail(self.control, self.kind, method, budget)

    def starved(self, watch: Stopwatch) -> float | None:
        """For a CPU-clock decision the referee stopped waiting for: the seconds the host kept the
        bot waiting for a CPU, when that wait accounts for the overrun (the wall time so far less
        the wait is within the cap: the bot itself has not used its cap, it was still starved at
        the `Stopwatch.deadline`); else None (the bot's timeout; or the waits cannot be read: the
        bot's timeout, as before)."""
        if self.kind is not ClockKind.CPU:
            return None
        waited = watch.host_wait()
        if waited is None:
            return None
        return waited if watch.elapsed() - waited <= watch.budget.wall_limit else None

    def host_detail(self, method: str, watch: Stopwatch, waited: float) -> str:
        """The detail of a host failure: a decision the host starved past its wall-clock cap."""
        pressure = runqueue.cpu_pressure()
        host = f"; the host's CPU pressure {pressure:.0f}%" if pressure is not None else ""
        return (
            f"{self.handle.label}: no answer to {method} within {watch.elapsed():.1f} s (its "
            f"wall-clock cap {watch.budget.wall_limit:g} s), but the host kept the bot waiting "
            f"for a CPU for {waited:.1f} s of it (cpu clock{host}): the host's load, not the "
            "bot's fault"
        )

    def empty_detail(self, method: str) -> str:
        """The detail of a timeout fault for a decision not asked: nothing in the bank."""
        return empty_detail(self.control, self.kind, method)


class Stopwatch:
    """One decision's time on its seat's clock (see the module text)."""

    __slots__ = ("budget", "cpu0", "cpu1", "meter", "waits", "waits0", "wall0", "wall1")

    def __init__(
        self,
        budget: Budget,
        meter: Callable[[], float | None] | None,
        since: float | None = None,
        waits: Callable[[], runqueue.Waits | None] | None = None,
        first: tuple[float | None, runqueue.Waits | None] | None = None,
    ) -> None:
        """`since`: the CPU reading to count from (the end of the seat's previous decision, to
        charge what the bot did in between), else now. `waits`: reads the bot's threads' run-queue
        waits (`BotHandle.run_waits`), to tell a starved bot from one that slept. `first`: both
        readings of now, taken together (`BotHandle.meters`), else each is read here."""
        self.budget = budget
        self.waits = waits
        self.meter = meter
        if first is not None:
            now, self.waits0 = first
        else:
            self.waits0 = waits() if waits is not None else None
            now = meter() if meter is not None else None
        self.cpu0 = since if since is not None and now is not None and since <= now else now
        self.cpu1: float | None = None
        self.wall0 = time.monotonic()
        self.wall1: float | None = None

    def stop(self, *_: object) -> None:
        """The answer arrived (or the referee gave up): the first stop counts."""
        if self.wall1 is not None:
            return
        if self.cpu0 is not None and self.meter is not None:
            self.cpu1 = self.meter()
        self.wall1 = time.monotonic()

    def wall(self) -> float:
        """Wall-clock seconds since the request was sent (until it was stopped)."""
        return (self.wall1 if self.wall1 is not None else time.monotonic()) - self.wall0

    @property
    def deadline(self) -> float:
        """The wall-clock seconds the referee waits at most (the call's gRPC deadline): the cap,
        or `HOST_GRACE` times it where the bot's run-queue waits can be read."""
        limit = self.budget.wall_limit
        return limit * HOST_GRACE if self.waits0 is not None else limit

    def elapsed(self) -> float:
        """Wall-clock seconds since the request was sent, until now (stopped or not)."""
        return time.monotonic() - self.wall0

    def host_wait(self) -> float | None:
        """Seconds, read now: the longest any thread of the bot waited for a CPU since the request
        was sent (runqueue.py); None where the waits cannot be read."""
        if self.waits is None or self.waits0 is None:
            return None
        now = self.waits()
        return None if now is None else runqueue.longest_wait(self.waits0, now)

    def cpu(self) -> float | None:
        """CPU seconds the bot used since the request was sent (None: not measured)."""
        if self.cpu0 is None or self.meter is None:
            return None
        end = self.cpu1 if self.wall1 is not None else self.meter()
        return None if end is None else max(0.0, end - self.cpu0)

    def used(self) -> float:
        """What the decision cost on its clock: its CPU time, or (on the wall clock, or when the
        bot's CPU time could not be read at the end) its wall-clock time."""
        if self.budget.clock is ClockKind.CPU:
            cpu = self.cpu()
            if cpu is not None:
                return cpu
        return self.wall()

    def overdue(self) -> str | None:
        """Whether the referee stops waiting now: "limit" (it used more than its limit on its
        clock), "wall" (past its wall-clock cap), or None."""
        wall = self.wall()
        if wall > self.budget.wall_limit:
            if wall <= self.deadline:
                waited = self.host_wait()
                if waited is not None and wall - waited <= self.budget.wall_limit:
                    return None  # starved by the host, not past its own cap: wait on
            return "wall"
        if self.budget.clock is ClockKind.CPU:
            cpu = self.cpu()
            if cpu is not None and cpu > self.budget.limit:
                return "limit"
        return None

    def poll(self) -> float:
        """Seconds until the next look at this call's clock."""
        wall = self.wall()
        left = (self.budget.wall_limit if wall < self.budget.wall_limit else self.deadline) - wall
        if self.budget.clock is not ClockKind.CPU:
            return max(0.0, left)
        step = min(POLL_LONGEST, max(POLL_SHORTEST, self.budget.limit / 10))
        return max(0.0, min(step, left))


@dataclass
class Pending:
    """A decision asked and not yet judged: whose, the call's future, its stopwatch."""

    seat: int
    future: futures.Future[bytes]
    watch: Stopwatch
    given_up: str | None = None
    """Why the referee stopped waiting for it ("limit" or "wall"), or None."""
    extra: Any = field(default=None)


def wait(calls: Sequence[Pending]) -> None:
    """Wait until every call is answered or overdue (its stopwatch says), whichever first."""
    waiting = list(calls)
    while waiting:
        timeout = min(call.watch.poll() for call in waiting)
        futures.wait([c.future for c in waiting], timeout, return_when=futures.FIRST_COMPLETED)
        still = []
        for call in waiting:
            if call.future.done():
                call.watch.stop()
                continue
            reason = call.watch.overdue()
            if reason is not None:
                call.watch.stop()
                call.given_up = reason
                continue
            still.append(call)
        waiting = still


class StartClock:
    """A bot's allowance to start serving: on the CPU clock (where its handle measures it) the CPU
    time its start-up uses, within a wall-clock cap; on the wall clock the start timeout."""

    def __init__(self, limits: CallLimits, handle: BotHandle) -> None:
        self.limits = limits
        self.handle = handle
        self.kind = (
            ClockKind.CPU if limits.clock is ClockKind.CPU and handle.cpu_clock else ClockKind.WALL
        )
        self.base = handle.cpu_time() if self.kind is ClockKind.CPU else None
        """The first reading of the bot's CPU time: the start counts from there (a container that
        could not be read yet counts from its first reading: in the bot's favour)."""

    @property
    def wall(self) -> float:
        """The wall-clock seconds the start may take at most."""
        if self.kind is ClockKind.CPU:
            return max(self.limits.start_wall, self.limits.start_timeout)
        return self.limits.start_timeout

    def spent(self) -> str | None:
        """A detail once the bot has used up its CPU allowance without serving, else None."""
        if self.kind is not ClockKind.CPU:
            return None
        now = self.handle.cpu_time()
        if now is None:
            return None
        if self.base is None:
            self.base = now
        if now - self.base > self.limits.start_timeout:
            return (
                f"the bot used more than {self.limits.start_timeout:g} s of CPU time "
                "without starting to serve (cpu clock)"
            )
        return None


# -- the record ------------------------------------------------------------------------------------


def time_control_record(control: TimeControl, limits: CallLimits) -> dict[str, Any]:
    """A record's ``time_control`` (docs/record-format.md): the clock asked for, the bank, the
    increment and the cap in milliseconds, and the wall-clock factor of the CPU clock."""
    return {
        "clock": limits.clock.value,
        "bank_ms": control.bank_ms,
        "increment_ms": control.increment_ms,
        "cap_ms": control.cap_ms,
        "wall_factor": limits.wall_factor,
        "ponder": limits.ponder.value,
    }


def attach_times(
    record: Mapping[str, Any], times: Mapping[tuple[int, int], list[list[int]]]
) -> None:
    """Put each decision's time into the record: ``clock`` of each turn, and of each round's draft
    (key turn 0): ``[seat, milliseconds used, bank after]`` in the order the decisions were asked.
    A record from `Game.record` shares its rounds with the game: this only sets those keys."""
    for rnd in record.get("rounds", []):
        number = rnd["round"]
        draft = rnd.get("draft")
        kept = times.get((number, 0))
        if kept and isinstance(draft, dict):
            draft["clock"] = kept
        for turn in rnd.get("turns", []):
            kept = times.get((number, turn["turn"]))
            if kept:
                turn["clock"] = kept


__all__ = [
    "HOST_GRACE",
    "POLL_LONGEST",
    "POLL_SHORTEST",
    "Pending",
    "SeatClock",
    "StartClock",
    "Stopwatch",
    "attach_times",
    "describe_clock",
    "time_control_record",
    "wait",
]
