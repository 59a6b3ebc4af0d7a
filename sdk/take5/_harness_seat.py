"""How the harness asks one seat, the way the referee would (private to take5.harness): through the
protocol's messages, on its clock (take5.clock), stopped at its limits where the platform allows
(`_Deadline`), with what it prints kept per game and seat (`_Output`, `_Log`). Apart from the
harness's games and command line so that each file holds one idea.
"""

from __future__ import annotations

import contextlib
import operator
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

from .bot import Bot, CallContext, answer_problem
from .clock import (
    Bank,
    Budget,
    ClockKind,
    TimeControl,
    empty_detail,
    limit_detail,
    to_ms,
    wall_cap,
    wall_detail,
)
from .convert import budget_from_request, choose_row_request, pick_card_request, view_from_request
from .game import Phase, Player, View
from .loading import BotRaised, HarnessError, OutOfTime, bot_traceback
from .v1 import bot_pb2 as pb

LOG_LIMIT = 100_000
"""Characters of one seat's output kept per game (`take5.harness.LOG_LIMIT`)."""


class _Expired(BaseException):
    """Raised in a bot that is past its time (a BaseException: a bot's `except Exception` does not
    swallow it)."""


class _Deadline:
    """Stops a call at its limits, where it can: an ITIMER_PROF timer (CPU time of this process)
    for the CPU clock's limit and an ITIMER_REAL one for the wall-clock cap, whose signals raise
    `_Expired` in the bot. Only in the main thread on Unix, and only where nothing else handles
    those signals; elsewhere a call is judged when it returns. The handlers are installed once
    (``with _Deadline():`` around the games), the timers armed for each call (``with
    deadline.call(cpu, wall):``); `fired` says which ran out during the last call."""

    REPEAT = 0.25
    """Seconds between two more signals for a bot that caught the first."""

    def __init__(self) -> None:
        self.fired: str | None = None
        self.armed = False
        self.saved: list[tuple[int, Any]] = []

    @staticmethod
    def usable() -> bool:
        return (
            hasattr(signal, "setitimer")
            and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
            and signal.getsignal(signal.SIGPROF) is signal.SIG_DFL
        )

    def _fire(self, signum: int, frame: FrameType | None) -> None:
        self.fired = self.fired or ("limit" if signum == signal.SIGPROF else "wall")
        if self.armed:
            raise _Expired

    def __enter__(self) -> _Deadline:
        if self.usable():
            for sig in (signal.SIGALRM, signal.SIGPROF):
                self.saved.append((sig, signal.signal(sig, self._fire)))
        return self

    def _disarm(self) -> None:
        while True:  # a signal may come in here too: then again, until the timers are off
            try:
                self.armed = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.setitimer(signal.ITIMER_PROF, 0)
                return
            except _Expired:
                continue

    def __exit__(self, *exc: object) -> None:
        if not self.saved:
            return
        self._disarm()
        while self.saved:
            sig, handler = self.saved[-1]
            signal.signal(sig, handler)
            self.saved.pop()

    @contextlib.contextmanager
    def call(self, cpu: float | None, wall: float) -> Iterator[None]:
        """One call, stopped after `cpu` seconds of CPU time (None: not on CPU time) or `wall`
        seconds of wall-clock time."""
        self.fired = None
        if not self.saved:
            yield
            return
        self.armed = True
        try:
            signal.setitimer(signal.ITIMER_REAL, max(0.001, wall), self.REPEAT)
            if cpu is not None:
                signal.setitimer(signal.ITIMER_PROF, max(0.001, cpu + 0.001), self.REPEAT)
            yield
        finally:
            self._disarm()


class _Output:
    """While games are played: what the bots write to stdout and stderr, from Python or below it,
    goes to a temporary file instead of the terminal, and `take` hands over what came since the
    last call. Where file descriptors 1 and 2 cannot be redirected, output goes where it went."""

    def __init__(self) -> None:
        self.sink: Any = None
        self.saved: list[tuple[int, int]] = []

    @staticmethod
    def _flush() -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed or replaced stream
                stream.flush()

    def __enter__(self) -> _Output:
        self._flush()
        try:
            self.sink = tempfile.TemporaryFile()
            for fd in (1, 2):
                self.saved.append((fd, os.dup(fd)))
                os.dup2(self.sink.fileno(), fd)
        except OSError:
            self.__exit__()
        return self

    def take(self, limit: int = LOG_LIMIT) -> str:
        if not self.saved:
            return ""
        self._flush()
        fd = self.sink.fileno()
        size = os.fstat(fd).st_size
        if not size:  # the usual case: nothing written
            return ""
        os.lseek(fd, 0, os.SEEK_SET)
        data = os.read(fd, min(size, 4 * limit))
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        text = data.decode("utf-8", errors="replace")
        return text + ("\n[... cut]" if size > len(data) else "")

    def __exit__(self, *exc: object) -> None:
        self._flush()
        for fd, copy in reversed(self.saved):
            os.dup2(copy, fd)
            os.close(copy)
        self.saved = []
        if self.sink is not None:
            self.sink.close()
            self.sink = None


class _Log:
    """One seat's output in one game: each decision's text under a line naming it, bounded."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0

    def add(self, where: str, text: str) -> None:
        if not text or self.size > LOG_LIMIT:
            return
        text = text if text.endswith("\n") else text + "\n"
        part = f"--- {where}\n{text}"
        if self.size + len(part) > LOG_LIMIT:
            part = (
                part[: LOG_LIMIT - self.size] + "\n[... cut: at most 100,000 characters a game]\n"
            )
        self.parts.append(part)
        self.size += len(part)

    def text(self) -> str:
        return "".join(self.parts)


class _Seat:
    """Asks one player, the way the referee would: through the protocol's messages, on its clock,
    within its limits (take5.clock)."""

    def __init__(
        self,
        player: Player,
        name: str,
        control: TimeControl,
        clock: ClockKind,
        wall_factor: float,
        wire: bool,
        deadline: _Deadline | None = None,
    ) -> None:
        self.deadline = deadline or _Deadline()
        self.player = player
        self.name = name
        self.control = control
        self.clock = clock
        self.wall_factor = wall_factor
        self.wire = wire
        self.slowest = 0.0
        self.bank: Bank = control.start()

    def new_game(self) -> None:
        self.bank = self.control.start()

    def budget(self) -> Budget:
        limit = self.bank.limit_ms / 1000
        return Budget(
            limit=limit,
            clock=self.clock,
            bank=self.bank.available_ms / 1000,
            increment=self.control.increment,
            cap=self.control.cap,
            wall=wall_cap(limit, self.clock, self.wall_factor),
        )

    def _late(self, where: str, detail: str) -> OutOfTime:
        return OutOfTime(
            f"{self.name}: {where}: timeout: {detail}; the referee counts this a timeout fault "
            "(docs/faults.md)"
        )

    def ask(self, game_id: str, view: View) -> int:
        what = {Phase.PLAY: "pick_card", Phase.DRAFT: "draft_card", Phase.CHOOSE_ROW: "choose_row"}[
            view.phase
        ]
        where = f"{game_id}, round {view.round}, turn {view.turn}"
        budget = self.budget()
        if self.bank.limit_ms <= 0:
            raise self._late(where, empty_detail(self.control, self.clock, what))
        if self.wire:
            if view.phase is Phase.CHOOSE_ROW:
                raw = choose_row_request(view, game_id, budget).SerializeToString()
                request: pb.PickCardRequest | pb.ChooseRowRequest = pb.ChooseRowRequest.FromString(
                    raw
                )
            else:
                raw = pick_card_request(view, game_id, budget).SerializeToString()
                request = pb.PickCardRequest.FromString(raw)
            view = view_from_request(request)
            budget = budget_from_request(request)
        player = self.player
        method = {
            Phase.PLAY: player.pick_card,
            Phase.DRAFT: player.draft_card,
            Phase.CHOOSE_ROW: player.choose_row,
        }[view.phase]
        deadline = self.deadline
        if isinstance(player, Bot):
            player.context = CallContext(
                game_id, budget.limit, time.monotonic(), budget, time.process_time()
            )
        wall0, cpu0 = time.perf_counter(), time.process_time()
        answer: Any = None
        try:
            with deadline.call(
                budget.limit if self.clock is ClockKind.CPU else None, budget.wall_limit
            ):
                answer = method(view)
        except _Expired:
            pass
        except Exception as error:
            raise BotRaised(
                f"{self.name}: {where}: {what} raised {type(error).__name__}", bot_traceback(error)
            ) from error
        finally:
            if isinstance(player, Bot):
                player.context = None
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        used = cpu if self.clock is ClockKind.CPU else wall
        self.slowest = max(self.slowest, used)
        if deadline.fired == "wall" or (self.clock is ClockKind.CPU and wall > budget.wall_limit):
            raise self._late(where, wall_detail(self.control, self.clock, what, budget))
        if deadline.fired == "limit" or self.bank.over(to_ms(used)):
            raise self._late(where, limit_detail(self.control, self.clock, what, budget.limit))
        self.bank.charge(to_ms(used))
        allowed = (
            range(len(view.rows))
            if view.phase is Phase.CHOOSE_ROW
            else view.pool
            if view.phase is Phase.DRAFT
            else view.hand
        )
        problem = answer_problem(what, answer, allowed)
        if problem is not None:
            raise HarnessError(f"{self.name}: {where}: {problem}")
        return operator.index(answer)
