"""The engine's sweep (take5_arena/referee/sandbox/sweep.py) against the real Docker engine.

Containers are labelled as a launcher labels them (``take5.owner`` naming a process, ``take5.run``)
with owners that the tests make: child processes killed with SIGKILL (reaped, or left a zombie),
a child that lives on, and this process with runs open or closed. Each container also carries
``pytest.sweep=TOKEN`` and each sweep here is narrowed to that label, so that a test never judges a
container it did not make (the engine is shared). The sweep function is called directly: what the
background thread does every period is that call. The Dask plugin is checked on local clusters:
their worker processes run the sweep before any table came (by the plugin, or by the preload), and
a worker that joins later without the sweep's modules (an older release) still starts. The Dask
workers' engine is one that does not exist, so that their own sweeps judge nothing here.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker_images import image_exists
from support import unavailable

from take5_arena.referee.defaults import BASE_IMAGE
from take5_arena.referee.sandbox import containers, engine, sweep
from take5_arena.referee.sandbox.errors import EngineUnavailableError
from take5_arena.referee.sandbox.limits import LABEL_OWNER, SandboxLimits
from take5_arena.referee.sandbox.reaper import owner_alive, owner_label

TOKEN = secrets.token_hex(3)
MINE = f"pytest.sweep={TOKEN}"
"""The label filter of every sweep here: only this session's containers are judged."""


@pytest.fixture
def client() -> Iterator[object]:
    try:
        docker_client = engine.client()
    except EngineUnavailableError as error:
        unavailable(str(error))
    if not image_exists(BASE_IMAGE):
        unavailable(f"base image {BASE_IMAGE} is missing (run scripts/setup-docker.sh)")
    # This process's own sweeper (started by any launcher of an earlier test) would judge the
    # containers of these tests on its own: it waits while they run.
    sweep.stop()
    yield docker_client
    for summary in containers.list_containers(docker_client, labels=[MINE]):
        containers.remove(docker_client, summary["Id"])


def _start(client: object, run: str, owner: str, *command: str) -> str:
    """A sandboxed container of the base image running `command`, labelled as owned by `owner`."""
    return containers.start_container(
        client,  # type: ignore[arg-type]
        BASE_IMAGE,
        limits=SandboxLimits(),
        run_id=run,
        socket_dir=None,
        labels={LABEL_OWNER: owner, "pytest.sweep": TOKEN},
        entrypoint=command[:1],
        command=command[1:],
    ).id


def _ids(client: object) -> set[str]:
    return {s["Id"] for s in containers.list_containers(client, labels=[MINE])}  # type: ignore[arg-type]


def _child() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "600"])


def _until_zombie(pid: int) -> None:
    """Wait until child `pid` has ended, leaving it unreaped (a zombie)."""
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)


@pytest.mark.docker
def test_the_containers_of_a_dead_owner_go_at_the_next_sweep(client):
    """A process killed outright (SIGKILL: its reaper, if any, could have died with it), reaped or
    left a zombie: its containers go, running or not, at the next sweep; a live one's stay."""
    killed, zombie, live = _child(), _child(), _child()
    try:
        run = f"pytest-{TOKEN}-dead"
        gone = {
            _start(client, run, owner_label(killed.pid), "sleep", "600"),
            _start(client, run, owner_label(zombie.pid), "sleep", "600"),
        }
        kept = _start(client, f"pytest-{TOKEN}-live", owner_label(live.pid), "sleep", "600")
        assert sweep.sweep(client, labels=[MINE]) == sweep.Swept()  # every owner is alive yet
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        zombie.send_signal(signal.SIGKILL)
        _until_zombie(zombie.pid)
        assert Path(f"/proc/{zombie.pid}").exists()  # still in the process table
        assert not owner_alive(owner_label(zombie.pid))  # its start time matches: a zombie
        swept = sweep.sweep(client, labels=[MINE])
        assert swept.dead_owners == 2 and swept.closed_runs == 0
        assert _ids(client) == {kept}
        assert not gone & _ids(client)
    finally:
        for child in (killed, zombie, live):
            child.kill()
            child.wait()


@pytest.mark.docker
def test_a_live_owners_open_and_running_containers_stay(client):
    """This process is alive: its open runs keep their stopped containers (a launcher reads an
    exit code and output after the stop), its running ones stay whatever their run."""
    open_run = f"pytest-{TOKEN}-open"
    sweep.open_run(open_run)
    try:
        stopped = _start(client, open_run, owner_label(), "true")
        client.api.wait(stopped)
        running = _start(client, f"pytest-{TOKEN}-closed", owner_label(), "sleep", "600")
        assert sweep.sweep(client, labels=[MINE]) == sweep.Swept()
        assert _ids(client) == {stopped, running}
    finally:
        sweep.close_run(open_run)


@pytest.mark.docker
def test_stopped_containers_of_a_closed_run_go(client):
    """What a launcher's close() could not remove (its engine was restarting, which stops every
    container) goes at the next sweep once its run is closed, the owner being alive."""
    run = f"pytest-{TOKEN}-restart"
    sweep.open_run(run)
    try:
        exited = _start(client, run, owner_label(), "true")
        client.api.wait(exited)
        assert sweep.sweep(client, labels=[MINE]) == sweep.Swept()
    finally:
        sweep.close_run(run)
    assert sweep.sweep(client, labels=[MINE]) == sweep.Swept(closed_runs=1)
    assert exited not in _ids(client)


def test_the_sweeper_starts_once_per_process_and_stops():
    sweep.stop()
    try:
        assert sweep.start(period=3600) is True
        assert sweep.start(period=3600) is False  # idempotent
        assert sweep.running()
    finally:
        sweep.stop()
    assert not sweep.running()
    sweep.stop()  # stopping a stopped sweeper is harmless


def test_the_dask_workers_sweep_their_engines_from_the_start(monkeypatch, tmp_path):
    """``dask:local`` workers are new processes that played nothing: the ``take5-sweep`` plugin
    registered by open_executor has started their sweep. (Their engine is one that does not
    exist: their first sweep, at once, must not judge the shared engine's containers.)"""
    pytest.importorskip("distributed")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    from take5_arena.referee.tournament.run.executors import open_executor
    from take5_arena.referee.tournament.run.workers import NAME, SweepPlugin

    assert NAME == SweepPlugin.name == "take5-sweep"
    with open_executor("dask:local", 1) as (executor, info):
        assert info.kind == "dask"
        assert executor.submit(sweep.running).result(timeout=60) is True
        assert executor.submit(os.getpid).result(timeout=60) != os.getpid()


def test_a_worker_started_with_the_preload_sweeps_without_a_referee(monkeypatch, tmp_path):
    """``dask worker --preload take5_arena.referee.tournament.run.workers`` (the shipped unit):
    the worker sweeps from its start, with no plugin registered (a scheduler restarted since)."""
    distributed = pytest.importorskip("distributed")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with (
        distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            silence_logs=40,
            preload=["take5_arena.referee.tournament.run.workers"],
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as dask_client,
    ):
        assert dask_client.submit(sweep.running, pure=False).result(timeout=60) is True


def test_a_worker_of_a_release_without_the_sweep_still_joins(tmp_path):
    """The scheduler hands the registered plugin to every worker that joins later: one whose
    release has neither the plugin's module nor the sweep (a preload hides them here) must still
    start and play."""
    distributed = pytest.importorskip("distributed")
    from take5_arena.referee.tournament.run.executors import open_executor

    old_release = tmp_path / "old_release.py"
    old_release.write_text(
        "import sys\n"
        "for name in ('take5_arena.referee.tournament.run.workers',"
        " 'take5_arena.referee.sandbox.sweep'):\n"
        "    sys.modules[name] = None  # an import of it fails\n"
    )
    cluster = distributed.LocalCluster(
        n_workers=0,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=40,
        preload=[str(old_release)],
    )
    with cluster, open_executor(f"dask:{cluster.scheduler_address}", 1) as (executor, _):
        cluster.scale(1)  # joins after the referee registered the plugin
        assert executor.submit(os.getpid).result(timeout=120) != os.getpid()
