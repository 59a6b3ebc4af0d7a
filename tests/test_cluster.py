"""Scale-out across Docker engines: Dask workers that share nothing with the referee but the
network.

The test starts a real cluster with scripts/cluster-local.sh (a temporary root, a free loopback
port): two Docker engines, each with its own data root, socket and ``DOCKER_HOST``, a Dask scheduler
and two workers, one per engine, each with its own artifact cache. Only the base images are copied
into the engines; the bots' images must be built by each engine from the archives that travel with
the work, and the bot folders are deleted right after submission, so nothing can rely on a shared
path. Then it kills a worker with SIGKILL in the middle of a game (its games are played elsewhere,
nothing lost or doubled) and stops an engine under a live worker (infrastructure, never a bot's
fault), and runs the arena (`referee serve --executor dask:`), whose ladder must play the same
archives on the workers. Everything it started is stopped in a finalizer.

The bots: an SDK bot and a bot that brings its own Dockerfile (two build paths). Bots in other
languages (Node, static binaries) are not in this test yet: the Docker sandbox on this branch builds
Python SDK bots and Dockerfile bots only; the images for other languages come with the hardened
build.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support import EXAMPLES, ROOT, free_port, unavailable

from take5_arena.referee.store import Store
from take5_arena.referee.tournament import submit

SCRIPT = ROOT / "scripts" / "cluster-local.sh"
#: The lowest example bot, built from its own Dockerfile (the path for bots in other languages).
OWN_DOCKERFILE = """\
ARG TAKE5_BASE_IMAGE=take5/python:3.11
FROM ${TAKE5_BASE_IMAGE}
COPY take5_sdk/take5 /opt/take5/sdk/take5
COPY bot.py /bot/bot.py
ENV PYTHONPATH=/opt/take5/sdk:${PYTHONPATH}
USER 10001:10001
WORKDIR /bot
CMD ["python3", "/bot/bot.py"]
"""

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _need(condition: bool, reason: str) -> None:
    if not condition:
        unavailable(reason)


def _engine(root: Path, i: int) -> dict[str, str]:
    return {**os.environ, "DOCKER_HOST": f"unix://{root}/engine-{i}/docker.sock"}


def _docker(root: Path, i: int, *args: str) -> str:
    return subprocess.run(
        ["docker", *args],
        env=_engine(root, i),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout


def _bot_images(root: Path, i: int) -> set[str]:
    out = _docker(root, i, "images", "--format", "{{.Repository}}:{{.Tag}}")
    return {line for line in out.split() if line.startswith("take5-bot/")}


def _pid(path: Path) -> int:
    return int(path.read_text().strip())


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (a dask worker is a nanny and its worker process)."""
    out = [pid]
    for child in Path(f"/proc/{pid}/task").glob("*/children"):
        for c in child.read_text().split():
            out.extend(_tree(int(c)))
    return out


class Cluster:
    def __init__(self, root: Path, port: int) -> None:
        self.root = root
        self.port = port
        self.address = f"tcp://127.0.0.1:{port}"

    def script(self, command: str, *extra: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(
            ["bash", str(SCRIPT), command, "--root", str(self.root), *extra],
            capture_output=True,
            text=True,
            timeout=400,
            check=False,
        )
        if check and done.returncode != 0:
            logs = "".join(f"\n--- {p}\n{p.read_text()[-3000:]}" for p in self.root.glob("*/*.log"))
            raise AssertionError(
                f"cluster-local.sh {command}: {done.returncode}\n{done.stderr}{logs}"
            )
        return done

    def start(self) -> None:
        self.script("start", "--workers", "2", "--threads", "1", "--port", str(self.port))


@pytest.fixture(scope="module")
def cluster():
    _need(os.geteuid() == 0, "starting Docker engines needs root")
    _need(
        shutil.which("dockerd") is not None and shutil.which("dask") is not None,
        "needs dockerd (scripts/setup-docker.sh) and the dask command (pip install -e '.[dask]')",
    )
    ok = subprocess.run(
        ["docker", "image", "inspect", "take5/python:3.11"], capture_output=True, check=False
    )
    _need(
        ok.returncode == 0,
        "the base image take5/python:3.11 is missing (run scripts/setup-docker.sh)",
    )
    # A short root: dockerd's and containerd's sockets live under it (108 bytes at most for a path).
    root = Path(tempfile.mkdtemp(prefix="t5c-", dir="/tmp"))
    c = Cluster(root, free_port())
    try:
        c.start()
        yield c
    finally:
        c.script("stop", check=False)
        mounts = [
            line for line in Path("/proc/mounts").read_text().splitlines() if str(root) in line
        ]
        for line in reversed(mounts):  # anything an engine left mounted (normally nothing)
            subprocess.run(["umount", "-l", line.split()[1]], check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
        leftovers = [p for p in ("scheduler.pid",) if (root / p).exists()]
        assert not leftovers and not root.exists(), f"left behind: {root}"


@pytest.fixture(scope="module")
def submitted(cluster, tmp_path_factory) -> Path:
    """An SDK bot and a bot with its own Dockerfile, submitted (validated on this machine's engine);
    their folders then deleted."""
    base = tmp_path_factory.mktemp("cluster")
    directory = base / "submitted"
    for name, source in (("random", EXAMPLES / "random"), ("ownimage", EXAMPLES / "lowest")):
        folder = shutil.copytree(source, base / f"src-{name}")
        if name == "ownimage":
            (folder / "Dockerfile").write_text(OWN_DOCKERFILE)
        submit(directory, folder, name, sandbox="docker")
        shutil.rmtree(folder)
    return directory


@pytest.fixture(scope="module")
def with_slow(cluster, submitted, tmp_path_factory) -> Path:
    """The submitted tournament plus a slow bot (a second a card: a table lasts a minute)."""
    directory = Path(shutil.copytree(submitted, tmp_path_factory.mktemp("slow") / "t"))
    folder = shutil.copytree(ROOT / "tests" / "docker_bots" / "slow", directory.parent / "src")
    submit(directory, folder, "slow", sandbox="docker")
    with Store(directory) as store:  # the slow bot against one other only
        store.versions.withdraw("ownimage")
    return directory


def _copy(submitted: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(submitted, tmp_path / "t"))


def _engine_containers(cluster: Cluster) -> list[str]:
    return [
        c
        for i in (1, 2)
        for c in _docker(cluster.root, i, "ps", "-aq", "--filter", "label=take5.arena=1").split()
    ]


def _run(cluster: Cluster, tdir: Path, games: int) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "tournament",
            "run",
            "-t",
            str(tdir),
            "-n",
            "2",
            "-g",
            str(games),
            "--sandbox",
            "docker",
            "--concurrency",
            "2",
            "--executor",
            f"dask:{cluster.address}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen, timeout: float = 400) -> tuple[int, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out + err


def _check_every_game_once(tdir: Path) -> Store:
    store = Store(tdir)
    sid = store.schedules.current()["schedule_id"]
    scheduled = {g.game_id for g in store.schedules.games(sid)}
    recorded = [game_id for game_id, _ in store.records.all()]
    assert len(recorded) == len(set(recorded)), "a game was recorded twice"
    assert set(recorded) == scheduled, f"{len(scheduled - set(recorded))} games not recorded"
    bot_faults = sum(1 for game in store.results.seat_results() for kinds in game.faults if kinds)
    assert bot_faults == 0, "a bot was blamed for something"
    verified = subprocess.run(
        [sys.executable, "-m", "take5_arena", "verify", "--tournament", str(tdir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    return store


def test_a_tournament_across_two_engines_with_no_shared_paths(cluster, submitted, tmp_path):
    tdir = _copy(submitted, tmp_path)
    with Store(tdir) as store:
        assert not any(
            Path(v.bot_dir).exists() for v in store.versions.all()
        )  # the submitted folders are gone
    code, output = _finish(_run(cluster, tdir, 4))
    assert code == 0, output
    with _check_every_game_once(tdir) as store:
        versions = store.versions.all()
    # Each engine built both bots' images itself: they were never copied, nor shared.
    images = [_bot_images(cluster.root, i) for i in (1, 2)]
    assert len(images[0]) == 2 and images[0] == images[1], images
    for i in (1, 2):
        cache = cluster.root / f"worker-{i}" / "artifacts"
        assert {p.name for p in cache.iterdir() if not p.name.startswith(".")} == {
            v.artifact.split(":")[1] for v in versions if v.artifact
        }


def test_a_worker_killed_mid_game_loses_and_doubles_nothing(cluster, submitted, tmp_path):
    tdir = _copy(submitted, tmp_path)
    proc = _run(cluster, tdir, 4)
    try:
        # Wait until worker 1's engine runs a bot of this tournament, then kill the worker outright.
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if _docker(cluster.root, 1, "ps", "-q", "--filter", "label=take5.arena=1").strip():
                break
            time.sleep(0.3)
        else:
            pytest.fail("worker 1 never started a game")
        for pid in _tree(_pid(cluster.root / "worker-1" / "worker.pid")):
            os.kill(pid, signal.SIGKILL)
        code, output = _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0, output
    _check_every_game_once(tdir).close()
    # The killed worker's bot containers (its reaper died with it) are left on engine 1, where
    # nothing plays now; the worker that takes its place sweeps as it joins (the take5-sweep plugin
    # the referee registered), before any table comes to it.
    left = _docker(cluster.root, 1, "ps", "-aq", "--filter", "label=take5.arena=1").split()
    cluster.start()  # worker 1 back, for the next test
    deadline = time.monotonic() + 120
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = _docker(cluster.root, 1, "ps", "-aq", "--filter", "label=take5.arena=1").split()
    assert not left, left


def test_a_worker_whose_engine_is_down_is_infrastructure(cluster, submitted, tmp_path):
    tdir = _copy(submitted, tmp_path)
    engine = _pid(cluster.root / "engine-1" / "docker.pid")
    os.kill(engine, signal.SIGTERM)
    for _ in range(150):
        if not Path(f"/proc/{engine}").exists():
            break
        time.sleep(0.2)
    code, output = _finish(_run(cluster, tdir, 4))
    # Worker 1 cannot play: its tables fail as infrastructure, worker 1 gets no new ones for a
    # while, and worker 2 plays the retries. Nobody is blamed.
    assert code == 0, output
    with _check_every_game_once(tdir) as store:
        kinds = {f["kind"] for f in store.results.infra_failures()}
        assert kinds <= {"engine-unavailable"}, kinds
    cluster.start()  # engine 1 back, and the cluster whole again


def test_the_arena_ladder_plays_the_archives_on_workers_with_no_shared_paths(
    cluster, submitted, tmp_path
):
    """`referee serve --executor dask:` sends the ladder's tables to the workers with the
    validated archives: the submitted folders are gone, and the workers play from their caches."""
    tdir = _copy(submitted, tmp_path)
    with Store(tdir) as store:
        versions = {v.key: v for v in store.versions.all()}
    assert versions and not any(Path(v.bot_dir).exists() for v in versions.values())
    for i in (1, 2):  # what earlier tests unpacked: the archives must come with this run's tables
        cache = cluster.root / f"worker-{i}" / "artifacts"
        for entry in cache.iterdir():
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "serve",
            "-t",
            str(tdir),
            "--listen",
            "127.0.0.1:0",
            "--sandbox",
            "docker",
            "-n",
            "2",
            "--concurrency",
            "2",
            "--executor",
            f"dask:{cluster.address}",
            "--publish-every-games",
            "1000",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 400
        recorded = 0
        while time.monotonic() < deadline and server.poll() is None:
            with Store(tdir, readonly=True) as store:
                recorded = store.results.recorded_count()
            if recorded >= 4:
                break
            time.sleep(1.0)
        server.send_signal(signal.SIGTERM)
        _, log = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert recorded >= 4, log
    assert server.returncode == 0, log
    with Store(tdir) as store:
        records = [record for _, record in store.records.all()]
        assert not store.results.infra_failures(), store.results.infra_failures()
    for record in records:
        assert not any(record["faults"]), record["faults"]
        for seat in record["seats"]:
            assert seat["digest"] == versions[seat["entrant"]].artifact
    verified = subprocess.run(
        [sys.executable, "-m", "take5_arena", "verify", "--tournament", str(tdir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # The games ran on the workers, from the archives unpacked into their own caches.
    digests = {v.artifact.split(":")[1] for v in versions.values() if v.artifact}
    played_on = [
        i
        for i in (1, 2)
        if digests <= {p.name for p in (cluster.root / f"worker-{i}" / "artifacts").iterdir()}
    ]
    assert played_on, "no worker's cache holds the archives"
    for i in played_on:
        assert len(_bot_images(cluster.root, i)) == 2


def test_a_table_whose_referee_is_killed_stops_within_seconds(cluster, with_slow, tmp_path):
    """The referee renews a lease the workers check (take5_arena/referee/tournament/run/lease.py):
    SIGKILLed mid-table, its tables stop and their containers go within seconds, although a table
    of the slow bot would play on for a minute; a new referee then plays every game once."""
    tdir = _copy(with_slow, tmp_path)
    proc = _run(cluster, tdir, 2)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if len(_engine_containers(cluster)) >= 2:
                break
            time.sleep(0.3)
        else:
            pytest.fail("no table started")
        time.sleep(3)  # a game under way
        os.kill(proc.pid, signal.SIGKILL)
        killed = time.monotonic()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    left = _engine_containers(cluster)
    while left and time.monotonic() - killed < 60:
        time.sleep(0.5)
        left = _engine_containers(cluster)
    gone_after = time.monotonic() - killed
    assert not left, f"containers still there {gone_after:.0f} s after the referee died: {left}"
    # the lease (15 s) and a second or two to stop, not the minute the table had left
    assert gone_after < 35, gone_after
    logs = "".join(p.read_text() for p in cluster.root.glob("worker-*/*.log"))
    assert "lease" in logs and "lapsed" in logs, logs[-3000:]
    # a new referee resumes: the slow bot's games take minutes on a loaded machine
    code, output = _finish(_run(cluster, tdir, 2), timeout=1500)
    assert code == 0, output
    _check_every_game_once(tdir).close()
