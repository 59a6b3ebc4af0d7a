"""`referee tournament status` of a tournament played on a Dask cluster: the workers its scheduler
sees now, and the disk the tournament uses. A real scheduler and worker on loopback (no Docker:
the status only asks the scheduler), then the scheduler stopped: the status says so in a line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import ROOT, free_port, referee, referee_env

from take5_arena.referee.store import Store
from take5_arena.referee.tournament.plan.settings import TournamentSettings

GOLDEN = ROOT / "tests" / "data" / "tournament-v3"
DASK = shutil.which("dask")


def _start(*args: str) -> subprocess.Popen[bytes]:
    assert DASK is not None
    return subprocess.Popen(
        [DASK, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=referee_env(),
        start_new_session=True,
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)


def _status(directory: Path) -> dict:
    done = referee("tournament", "status", "-t", str(directory), "--json", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.skipif(DASK is None, reason="the dask command is not installed (the [dask] extra)")
def test_status_shows_the_workers_and_the_disk(tmp_path: Path) -> None:
    directory = Path(shutil.copytree(GOLDEN, tmp_path / "T"))
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    with Store(directory) as store:
        settings = TournamentSettings.from_json(store.settings.get()).updated(
            {"executor": f"dask:{address}"}
        )
        store.settings.set(settings.to_json())
    scheduler = _start("scheduler", "--host", "127.0.0.1", "--port", str(port))
    worker = None
    try:
        worker = _start(
            "worker", address, "--host", "127.0.0.1", "--name", "take5-worker-a",
            "--nthreads", "2", "--nworkers", "1", "--no-dashboard",
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while True:
            status = _status(directory)
            seen = status["workers"]["workers"]
            if seen or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert status["workers"]["error"] is None, status["workers"]
        assert [(w["name"], w["threads"]) for w in seen] == [("take5-worker-a", 2)]
        assert seen[0]["address"].startswith("tcp://127.0.0.1:")
        disk = status["disk"]
        assert disk["total"] == sum(v for k, v in disk.items() if k != "total")
        assert disk["tournament.sqlite"] > 0 and disk["artifacts"] > 0

        shown = referee("tournament", "status", "-t", str(directory))
        assert shown.returncode == 0, shown.stderr
        assert f"workers: 1 seen by the dask scheduler {address}" in shown.stdout
        assert "take5-worker-a" in shown.stdout and "disk used: " in shown.stdout
    finally:
        if worker is not None:
            _stop(worker)
        _stop(scheduler)

    gone = referee("tournament", "status", "-t", str(directory))
    assert gone.returncode == 0 and "Traceback" not in gone.stderr, gone.stderr
    assert f"workers: the dask scheduler {address}: cannot reach it" in gone.stdout


def _recorded(directory: Path) -> int:
    with Store(directory, readonly=True) as store:
        return store.results.recorded_count()


@pytest.mark.slow
@pytest.mark.skipif(DASK is None, reason="the dask command is not installed (the [dask] extra)")
def test_the_referee_waits_for_a_lost_scheduler_to_come_back(tmp_path: Path) -> None:
    """The scheduler killed in the middle of a run and started again 15 s later (longer than the
    client's connection timeout): the referee says it lost it and waits, the tables cut off are
    played again when it is back (its workers restarted, as their units do), and the run ends with
    every game recorded once, not with "executor: CancelledError"."""
    directory = Path(shutil.copytree(GOLDEN, tmp_path / "T"))
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    worker_args = ("worker", address, "--host", "127.0.0.1", "--nthreads", "2", "--no-dashboard")
    scheduler = _start("scheduler", "--host", "127.0.0.1", "--port", str(port))
    worker = _start(*worker_args)
    run = None
    try:
        before = _recorded(directory)
        run = subprocess.Popen(
            [sys.executable, "-m", "take5_arena", "tournament", "run", "-t", str(directory)]
            + ["--games", "60", "--executor", f"dask:{address}", "-j", "2", "--no-progress"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=referee_env(),
        )
        deadline = time.monotonic() + 300
        while _recorded(directory) < before + 6 and run.poll() is None:
            assert time.monotonic() < deadline, "no games on the cluster"
            time.sleep(0.5)
        os.killpg(scheduler.pid, signal.SIGKILL)
        scheduler.wait(30)
        time.sleep(15)
        scheduler = _start("scheduler", "--host", "127.0.0.1", "--port", str(port))
        _stop(worker)  # what systemd does to a worker that gave up: start it again
        worker = _start(*worker_args)
        out, _ = run.communicate(timeout=600)
    finally:
        if run is not None and run.poll() is None:
            run.kill()
        _stop(worker)
        _stop(scheduler)
    assert run.returncode == 0, out
    assert f"lost the dask scheduler {address}: waiting up to" in out, out
    assert f"the dask scheduler {address} is back after" in out, out
    assert "CancelledError" not in out and "Traceback" not in out, out
    done = referee("verify", "--tournament", str(directory), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    with Store(directory, readonly=True) as store:
        current = store.schedules.current()
        assert current is not None
        progress = store.schedules.progress(current["schedule_id"])
    assert progress["done"] == progress["total"] > 0, progress
