"""The host's own load is never a bot's fault (docs/faults.md, "A host that fails is never a bot's
fault"; docs/security.md, "The host's own load").

Under the CPU clock a decision has a wall-clock cap for a bot that sleeps. A bot the host starves
passes that cap while it computes: the referee reads its threads' run-queue waits
(take5_arena/referee/match/runqueue.py) and makes that an infrastructure failure (kind ``host``:
nobody's fault, rates no one, played again), while a bot that sleeps past its cap, or that starts
busy processes of its own to wait on a run queue, still times out.

Starvation here is made, not hoped for: the bot pins itself to CPU 0 and the test runs busy
processes pinned to CPU 0 beside it (the host's load), so it gets a tenth of a CPU whatever the
machine is doing. Limits are small (0.5 s, a wall-clock factor of 2: a 1.5 s cap with
take5.clock.WALL_FLOOR) so each match takes seconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import EXAMPLES, ROOT, TEST_BOTS, referee_env

from take5.clock import Budget, ClockKind
from take5.record import load_record
from take5_arena.referee.match import runqueue
from take5_arena.referee.match.clocks import SeatClock, Stopwatch
from take5_arena.referee.match.config import CallLimits
from take5_arena.referee.match.handle import AddressHandle
from take5_arena.referee.match.local import read_tree, tree_cpu_seconds

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not hasattr(os, "sched_setaffinity"),
    reason="run-queue waits and CPU pinning are Linux's",
)

HOGS = 9
"""Busy processes pinned to the bot's CPU: it gets about a tenth of it."""


@pytest.fixture
def host_load() -> Iterator[None]:
    """The host's load: busy processes pinned to CPU 0 for the length of the test."""
    code = "import os\nos.sched_setaffinity(0, {0})\nwhile True: pass"
    # Each in a session of its own: where the kernel groups CPU time by session (autogroup), a
    # session is one share, so that the bot's share is a tenth either way.
    hogs = [
        subprocess.Popen([sys.executable, "-c", code], start_new_session=True) for _ in range(HOGS)
    ]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


def match(tmp_path: Path, mode: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    records = tmp_path / "records"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            str(TEST_BOTS / "starved"),
            str(EXAMPLES / "lowest"),
            "--timeout",
            "0.5",
            "--clock",
            "cpu",
            "--wall-factor",
            "2",
            "--max-faults",
            "1",
            "--games",
            "1",
            "--records",
            str(records),
        ],
        capture_output=True,
        text=True,
        env=referee_env(TAKE5_TEST_MODE=mode),
        timeout=180,
        cwd=ROOT,
        check=False,
    )
    return run, records


def faults_of(records: Path) -> list[dict]:
    (record,) = sorted(records.glob("*.json"))
    faults: list[dict] = load_record(record)["faults"][0]
    return faults


def test_a_bot_the_host_starves_past_its_wall_cap_is_the_hosts_failure(
    tmp_path: Path, host_load: None
) -> None:
    run, records = match(tmp_path, "compute")
    assert run.returncode == 4, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert lines[0].startswith("referee: host: "), lines
    assert "starved: no answer to PickCard within " in lines[0], lines
    assert "(its wall-clock cap 1.5 s)" in lines[0], lines
    assert "waiting for a CPU" in lines[0] and "not the bot's fault" in lines[0]
    assert not list(records.glob("*.json"))  # no game recorded: nobody's fault


def test_the_referee_waits_on_for_a_bot_the_host_starves_within_twice_its_cap(
    tmp_path: Path, host_load: None
) -> None:
    run, records = match(tmp_path, "brief")
    assert run.returncode == 0, (run.stdout, run.stderr)
    assert faults_of(records) == []


def test_a_bot_that_sleeps_past_its_cap_under_the_same_load_is_still_late(
    tmp_path: Path, host_load: None
) -> None:
    run, records = match(tmp_path, "sleep")
    assert run.returncode == 1, (run.stdout, run.stderr)
    (fault,) = faults_of(records)
    assert (fault["kind"], fault["round"], fault["turn"]) == ("timeout", 1, 1)
    assert "wall-clock cap of 1.5 s" in fault["detail"] and "slept" in fault["detail"]


def test_busy_processes_of_its_own_burn_the_bots_cpu_clock_first(tmp_path: Path) -> None:
    """A hostile bot that makes its own run-queue wait (six busy processes on its CPU while it
    sleeps) to turn its timeout into a replay: they are its processes, on its CPU clock, so its
    limit runs out long before its wall-clock cap."""
    run, records = match(tmp_path, "swarm")
    assert run.returncode == 1, (run.stdout, run.stderr)
    (fault,) = faults_of(records)
    assert (fault["kind"], fault["round"], fault["turn"]) == ("timeout", 1, 1)
    assert "wall-clock cap" not in fault["detail"] and "(cpu clock" in fault["detail"]


def test_the_longest_wait_of_one_thread_counts_not_their_sum() -> None:
    before = {1: 100, 2: 5_000_000_000}
    after = {1: 400_000_100, 2: 5_300_000_000, 3: 200_000_000, 4: 50}
    assert runqueue.longest_wait(before, after) == pytest.approx(0.4)
    assert runqueue.longest_wait({7: 900}, {7: 100}) == 0.0  # a reused thread id counts nothing


def test_without_readable_waits_a_wall_cap_stays_the_bots_timeout() -> None:
    budget = Budget(limit=0.1, clock=ClockKind.CPU, bank=0.1, wall=0.2)
    assert Stopwatch(budget, lambda: 0.0, waits=lambda: None).host_wait() is None
    assert runqueue.thread_waits([os.getpid()])[os.getpid()] >= 0
    assert runqueue.thread_waits([2**22 + 12345]) == {}  # no such thread


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as file:
        return [int(child) for child in file.read().split()]


def test_one_walk_of_a_local_bots_tree_finds_its_cpu_time_and_every_thread() -> None:
    code = (
        "import subprocess, sys, threading, time\n"
        "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "time.sleep(60)"
    )
    bot = subprocess.Popen([sys.executable, "-c", code])
    try:
        reading = read_tree(bot.pid)
        for _ in range(200):  # its thread and its child, once started
            reading = read_tree(bot.pid)
            if reading is not None and len(reading.threads) >= 3:
                break
            time.sleep(0.02)
        assert reading is not None and bot.pid in reading.threads
        (child,) = _children(bot.pid)
        assert child in reading.threads and len(reading.threads) == 3
        assert reading.cpu_seconds > 0 and tree_cpu_seconds(bot.pid) >= reading.cpu_seconds
    finally:
        for child in _children(bot.pid):
            os.kill(child, 9)
        bot.kill()
        bot.wait()
    assert read_tree(bot.pid) is None  # gone


class _Metered(AddressHandle):
    """A bot on the CPU clock whose readings are counted."""

    cpu_clock = True

    def __init__(self) -> None:
        super().__init__("127.0.0.1:1")
        self.reads: list[str] = []

    def cpu_time(self) -> float | None:
        self.reads.append("cpu")
        return 1.0

    def run_waits(self) -> dict[int, int] | None:
        self.reads.append("waits")
        return {1: 0}

    def meters(self) -> tuple[float | None, dict[int, int] | None]:
        self.reads.append("both")
        return 1.0, {1: 0}


def test_a_decision_starts_with_one_reading_of_the_bots_meters() -> None:
    handle = _Metered()
    seat = SeatClock(CallLimits(clock=ClockKind.CPU), handle)
    handle.reads.clear()
    watch = seat.start(seat.budget())
    assert handle.reads == ["both"] and watch.cpu0 == 1.0 and watch.waits0 == {1: 0}


@pytest.mark.docker
def test_in_docker_a_bot_held_to_a_twentieth_of_a_cpu_is_the_hosts_failure(tmp_path: Path) -> None:
    """The container's cgroup: its threads' waits are read from the host. A CPU quota of 0.05
    (under 1/--wall-factor: the operator's doing, docs/faults.md) starves the computing bot."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            str(TEST_BOTS / "starved"),
            str(EXAMPLES / "lowest"),
            "--sandbox",
            "docker",
            "--cpus",
            "0.05",
            "--timeout",
            "0.5",
            "--wall-factor",
            "2",
            "--games",
            "1",
            "--records",
            str(tmp_path / "records"),
        ],
        capture_output=True,
        text=True,
        env=referee_env(),
        timeout=600,
        cwd=tmp_path,
        check=False,
    )
    assert run.returncode == 4, (run.stdout, run.stderr)
    (line,) = [x for x in run.stderr.splitlines() if x.startswith("referee: host: ")]
    assert "starved: no answer to PickCard within " in line and "waiting for a CPU" in line
