"""`referee match --sandbox docker` at the game level, against the real Docker engine.

Hostile SDK bots (tests/docker_bots/hostile_*, `from take5 import Bot, run`) play real games against
the example bots, through the command line as a user would run it. Each behaviour is its own test
and checks: the match completes; the record holds the right fault kind and cause and passes
`referee verify`; the other bots are unaffected (no faults); nothing of the run is left (no
container, no socket folder).

Without an engine the docker tests skip with the reason, except with CI set, where they fail
(scripts/setup-docker.sh starts an engine and builds the base images). Images are built once per
session (fixture `images`); the referee then finds them up to date. Network probes only target
loopback and, once a bot has checked that its namespace holds nothing but `lo`, a TEST-NET address.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import DOCKER_BOTS, EXAMPLES, ROOT, unavailable

from take5.record import load_record, verify_record

TOKEN = secrets.token_hex(3)
GVISOR = os.environ.get("TAKE5_RUNTIME", "").strip() == "runsc"
"""The Docker tests run under gVisor (TAKE5_RUNTIME=runsc): a few things are stricter there."""
HOSTILE = [
    "oom",
    "exit",
    "fork",
    "spin",
    "sleep",
    "flood",
    "socket",
    "snoop",
    "net",
    "write",
    "memory",
]
NET_PORT = 47815  # hostile_net tries 127.0.0.1 on this port; the test listens there on the host


def hostile(name: str) -> str:
    return str(DOCKER_BOTS / f"hostile_{name}")


def example(name: str) -> str:
    return str(EXAMPLES / name)


# -- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def engine():
    from docker_images import image_exists, prune_bot_images

    from take5_arena.referee.defaults import BASE_IMAGE
    from take5_arena.referee.sandbox import containers, engine
    from take5_arena.referee.sandbox.errors import EngineUnavailableError

    try:
        version = engine.engine_version()
    except EngineUnavailableError as exc:
        unavailable(str(exc))
    if not image_exists(BASE_IMAGE):
        unavailable(f"base image {BASE_IMAGE} is missing (run scripts/setup-docker.sh)")
    yield version
    left = _containers(lambda run, owner: run.startswith(f"pytest-{TOKEN}"))
    for run in {run for run, _ in left}:
        containers.remove_run(engine.client(), run)
    assert not left, f"containers left behind: {left}"
    # Keep only the newest image of each bot (every SDK change gives them new source hashes).
    prune_bot_images([f"hostile_{name}" for name in HOSTILE] + ["lowest", "random"], keep=1)


@pytest.fixture(scope="session")
def images(engine):
    """Every bot these tests run, built once (the referee then finds the images up to date)."""
    from take5_arena.referee.sandbox.images import build_image

    folders = [hostile(name) for name in HOSTILE] + [example("lowest"), example("random")]
    started = time.monotonic()
    built = {folder: build_image(folder) for folder in folders}
    print(
        f"\nimages ready in {time.monotonic() - started:.1f} s "
        f"({sum(1 for i in built.values() if i.built)} built)"
    )
    return built


def _containers(keep) -> list[tuple[str, str]]:
    """(run, owner) of the take5 containers for which keep(run, owner) holds."""
    from take5_arena.referee.sandbox import containers, engine

    rows = [
        (
            (s.get("Labels") or {}).get("take5.run", ""),
            (s.get("Labels") or {}).get("take5.owner", ""),
        )
        for s in containers.list_containers(engine.client())
    ]
    return [(run, owner) for run, owner in rows if keep(run, owner)]


def _owned_by(pid: int) -> list[tuple[str, str]]:
    return _containers(lambda run, owner: owner.split(":")[2:3] == [str(pid)])


def _socket_roots(prefix: str) -> list[Path]:
    return sorted(Path("/tmp").glob(f"t5-{prefix}-*"))


class Run:
    """One `referee match --sandbox docker ... --json --records DIR` run."""

    def __init__(
        self, proc: subprocess.Popen[str], out: str, err: str, records: Path, seconds: float
    ) -> None:
        self.pid = proc.pid
        self.code = proc.returncode
        self.out = out
        self.err = err
        self.records = records
        self.seconds = seconds

    @property
    def doc(self) -> dict:
        return json.loads(self.out)

    def record(self, n: int = 1) -> dict:
        return load_record(self.records / f"s0-g{n}.json")

    def faults(self, seat: int, game: int = 1) -> list[dict]:
        return self.record(game)["faults"][seat]

    def log(self, name: str) -> str:
        (path,) = (self.records / "logs").glob(f"bot*-{name}.log")
        return path.read_text(errors="replace")

    def report(self, name: str) -> dict:
        lines = [line for line in self.log(name).splitlines() if line.startswith("REPORT ")]
        assert lines, self.log(name)[-2000:]
        return json.loads(lines[0][len("REPORT ") :])


def referee(
    *args: str, tmp_path: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> Run:
    prefix = f"pytest-{TOKEN}-{secrets.token_hex(2)}"
    records = tmp_path / f"records-{prefix}"
    argv = [
        sys.executable,
        "-m",
        "take5_arena",
        "match",
        "--sandbox",
        "docker",
        *args,
        "--json",
        "--records",
        str(records),
    ]
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TAKE5_RUN_PREFIX": prefix, **(env or {})},
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # Stopped as Ctrl-C would (its bots and containers go with it), and what it said shown:
        # a match that hangs must say where.
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        pytest.fail(f"`referee match` did not end within {timeout:g} s; it said:\n{err[-4000:]}")
    run = Run(proc, out, err, records, time.monotonic() - started)
    assert _owned_by(run.pid) == [], f"containers outlived the match:\n{err[-3000:]}"
    assert _socket_roots(prefix) == [], "socket folders outlived the match"
    return run


def check_complete(run: Run, games: int = 1) -> None:
    """Every game played and recorded; every record replays through the rules."""
    assert run.code in (0, 1), f"exit {run.code}\n{run.err[-3000:]}"
    assert run.doc["games_played"] == games
    for n in range(1, games + 1):
        record = run.record(n)
        assert record["complete"] is True
        assert verify_record(record) is None


def only_faults_of(run: Run, seat: int, games: int = 1) -> None:
    for game in range(1, games + 1):
        for other in range(len(run.record(game)["faults"])):
            if other != seat:
                assert run.faults(other, game) == [], (other, run.faults(other, game))


HOSTILE_TABLE = ("--threshold", "10", "--timeout", "1", "--max-faults", "2")


# -- clean play, fresh containers ------------------------------------------------------------------


@pytest.mark.docker
def test_games_in_fresh_containers_carry_no_memory(images, tmp_path):
    """hostile_memory plays an illegal card once it remembers an earlier game (in memory or in
    /tmp): in a fresh container per game it never does, where a local process does from game 2 on.
    """
    bots = [hostile("memory"), example("lowest"), example("random")]
    run = referee(*bots, "--games", "3", "--threshold", "10", tmp_path=tmp_path)
    check_complete(run, games=3)
    assert run.code == 0 and run.doc["exit_code"] == 0, run.err[-2000:]
    assert all(all(not f for f in g["faults"]) for g in run.doc["games"])
    # One container per bot per game, each with its own section in the bot's log.
    for name in ("hostile_memory", "lowest", "random"):
        assert run.log(name).count("[take5: container ") == 3

    local = subprocess.run(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            *bots,
            "--games",
            "2",
            "--threshold",
            "10",
            "--json",
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TAKE5_MEMORY_MARK": str(tmp_path / "seen")},
    )
    doc = json.loads(local.stdout)
    assert doc["games"][0]["faults"][0] == []
    assert {f["kind"] for f in doc["games"][1]["faults"][0]} == {"illegal-card"}


CHATTY_BOT = """
import sys
from take5 import Bot, run


class Chatty(Bot):
    name, version, author = "chatty", "1", "t"

    def pick_card(self, view):
        print(f"chatty thinks at {view.round}.{view.turn} <b>&", file=sys.stderr, flush=True)
        print("x" * 5000, flush=True)  # stdout too, past the per-turn cut
        return min(view.hand)


if __name__ == "__main__":
    print("a start-up banner", file=sys.stderr, flush=True)
    run(Chatty())
"""


@pytest.mark.docker
def test_a_bots_own_output_is_kept_with_each_turn_in_docker(images, tmp_path):
    """What a bot in a container prints is kept in the record beside the turn it printed it in
    (as with a local process), cut per turn, for every game of the match: the ladder's records
    and the faults pages are made of these. The start-up banner is not a turn's."""
    bot = tmp_path / "chatty"
    bot.mkdir()
    (bot / "bot.py").write_text(CHATTY_BOT)
    run = referee(
        str(bot), example("lowest"), "--games", "2", "--threshold", "10", tmp_path=tmp_path
    )
    check_complete(run, games=2)
    for game in (1, 2):
        record = run.record(game)
        for rnd in record["rounds"]:
            for turn in rnd["turns"]:
                (seat, text), *others = turn["logs"]
                assert seat == 0 and others == [], turn["logs"]
                assert f"chatty thinks at {rnd['round']}.{turn['turn']} <b>&" in text
                assert "[... cut: at most 2,000 characters per turn are kept]" in text
                assert "banner" not in text


# -- hostile bots ----------------------------------------------------------------------------------


@pytest.mark.docker
def test_memory_hog_is_oom_killed_a_resource_fault(images, tmp_path):
    run = referee(
        hostile("oom"),
        example("lowest"),
        example("random"),
        *HOSTILE_TABLE,
        "--memory",
        "128m",
        tmp_path=tmp_path,
    )
    check_complete(run)
    assert run.code == 1
    (fault,) = run.faults(0)
    assert (fault["kind"], fault["round"], fault["turn"]) == ("resource", 1, 2)
    assert "OOMKilled" in fault["detail"] and "memory limit 128m" in fault["detail"]
    assert "exit code 137" in fault["detail"] or GVISOR  # gVisor's sandbox ends its own way
    assert run.record()["result"]["forfeited"] == [0]
    only_faults_of(run, 0)
    assert "eating memory" in run.doc["logs"]["hostile_oom"]


@pytest.mark.docker
def test_nonzero_exit_is_a_crash_with_its_exit_code(images, tmp_path):
    run = referee(
        hostile("exit"), example("lowest"), example("random"), *HOSTILE_TABLE, tmp_path=tmp_path
    )
    check_complete(run)
    (fault,) = run.faults(0)
    assert fault["kind"] == "crash" and (fault["round"], fault["turn"]) == (1, 2)
    assert fault["detail"] == "the bot's container exited with exit code 3"
    assert run.record()["result"]["forfeited"] == [0]
    only_faults_of(run, 0)


@pytest.mark.docker
def test_a_bot_that_never_calls_run_gets_the_hint_at_once(images, tmp_path):
    """A bot file that only defines its class ends at once with status 0: in a warm container the
    fork server reports that before the referee knows the bot's pid, and it is still a crash with
    the hint the local run gives (not a wait for the start allowance's wall-clock cap)."""
    folder = tmp_path / "norun"
    folder.mkdir()
    (folder / "bot.py").write_text(
        "from take5 import Bot\n\n\nclass MyBot(Bot):\n    def pick_card(self, view):\n"
        "        return min(view.hand)\n"
    )
    run = referee(str(folder), example("lowest"), tmp_path=tmp_path)
    assert run.code == 3, run.err[-3000:]
    (rejection,) = run.doc["rejections"]
    assert rejection["kind"] == "crash"
    assert rejection["detail"].startswith(
        "the bot's container exited before it served with exit code 0 — did you call run(MyBot())?"
    )


@pytest.mark.docker
def test_fork_bomb_is_held_by_the_pids_limit(images, tmp_path):
    run = referee(
        hostile("fork"),
        example("lowest"),
        example("random"),
        *HOSTILE_TABLE,
        "--pids",
        "32",
        tmp_path=tmp_path,
    )
    check_complete(run)
    if GVISOR:  # the limit counts gVisor's own threads too: the sandbox ends (contained too)
        assert [f["kind"] for f in run.faults(0)] in (["timeout", "timeout"], ["crash"])
        assert run.record()["result"]["forfeited"] == [0]
        only_faults_of(run, 0)
        return
    # The second fault is a timeout, or a crash when the bomb has taken every pid before the
    # bot's own gRPC server could start a thread it needed (threads count against the limit, and
    # which comes first depends on the host's load): contained either way.
    assert [f["kind"] for f in run.faults(0)] in (["timeout", "timeout"], ["timeout", "crash"])
    # Under the CPU clock every process of the bomb counts (the container's cgroup): it runs out
    # of CPU time, or (starved by the pids limit) of its wall-clock cap.
    assert "(cpu clock" in run.faults(0)[0]["detail"]
    assert run.record()["result"]["forfeited"] == [0]
    only_faults_of(run, 0)
    log = run.log("hostile_fork")
    assert (
        "fork bomb" in log and "Resource temporarily unavailable" in log
    )  # EAGAIN: the limit held


@pytest.mark.docker
def test_cpu_spinner_times_out(images, tmp_path):
    run = referee(
        hostile("spin"), example("lowest"), example("random"), *HOSTILE_TABLE, tmp_path=tmp_path
    )
    check_complete(run)
    assert [f["kind"] for f in run.faults(0)] == ["timeout", "timeout"]
    assert run.record()["result"]["forfeited"] == [0]
    only_faults_of(run, 0)


@pytest.mark.docker
def test_the_cpu_clock_of_a_container_is_its_cgroup(images, tmp_path):
    """Every seat in Docker runs on the CPU clock, read from its container's cgroup: the spinner
    goes over its limit (or its wall-clock cap, on a starved host) and the record says which clock
    measured each seat and what each decision cost."""
    run = referee(
        hostile("spin"),
        example("lowest"),
        "--threshold",
        "10",
        "--timeout",
        "1",
        "--max-faults",
        "1",
        "--clock",
        "cpu",
        tmp_path=tmp_path,
    )
    check_complete(run)
    record = run.record()
    assert [seat["clock"] for seat in record["seats"]] == ["cpu", "cpu"]
    (fault,) = run.faults(0)
    assert fault["kind"] == "timeout" and "(cpu clock" in fault["detail"], fault
    spun = [e for t in record["rounds"][0]["turns"] if t["turn"] == 2 for e in t["clock"]]
    assert [seat for seat, _, _ in spun if seat == 0] == [0]


@pytest.mark.docker
def test_sleeper_times_out(images, tmp_path):
    run = referee(
        hostile("sleep"), example("lowest"), example("random"), *HOSTILE_TABLE, tmp_path=tmp_path
    )
    check_complete(run)
    assert [(f["kind"], f["turn"]) for f in run.faults(0)] == [("timeout", 2), ("timeout", 3)]
    assert run.record()["result"]["forfeited"] == [0]
    only_faults_of(run, 0)
    assert "sleeping forever" in run.doc["logs"]["hostile_sleep"]


class _LogPipelineWatch:
    """The most bytes Docker's log pipeline (dockerd's json-file log of a container) held for any
    container of an image, sampled while a match runs. What crosses that pipeline is what the host's
    daemons pay for; counting bytes, not daemon CPU, keeps the check true on a busy shared host
    (bench/sandbox.py measures the CPU)."""

    def __init__(self, image_part: str) -> None:
        import docker

        self.client = docker.from_env()
        self.image_part = image_part
        self.seen: dict[str, int] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        import docker

        while not self.stop.wait(0.2):
            try:
                running = self.client.containers.list(filters={"label": "take5.arena=1"})
            except docker.errors.NotFound:
                # A container went between the listing and its inspection (docker-py inspects each
                # one listed): sample again. A watcher that died here would miss the rest of the
                # flood and let the bound below pass on what it saw before.
                continue
            for c in running:
                if self.image_part not in str(c.attrs["Config"]["Image"]):
                    continue
                try:
                    size = os.path.getsize(c.attrs["LogPath"]) if c.attrs.get("LogPath") else 0
                except OSError:
                    continue
                self.seen[c.id] = max(size, self.seen.get(c.id, 0))

    def __enter__(self) -> _LogPipelineWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.client.close()


@pytest.mark.docker
def test_output_flood_is_bounded_and_not_paid_by_the_host(images, tmp_path):
    """Two threads write to stdout and stderr without end. Through Docker's log pipeline that costs
    dockerd about a core; the bot's output goes to a bounded file in its own tmpfs instead, and
    dockerd's log of the container stays (nearly) empty."""
    with _LogPipelineWatch("flood") as pipeline:
        run = referee(
            hostile("flood"),
            example("lowest"),
            example("random"),
            "--threshold",
            "66",
            tmp_path=tmp_path,
        )
    check_complete(run)
    assert run.code == 0, run.doc["games"][0]["faults"]
    log = run.log("hostile_flood")
    assert "flood xxxx" in log
    assert len(log) <= (1 << 20) + (64 << 10) + 4096  # --log size (1m) plus the folder's margin
    assert len(run.out) < 64 << 10
    assert pipeline.seen, "the flood bot's container was never seen running"
    if os.geteuid() == 0:  # the output file needs the tmpfs socket folder
        assert max(pipeline.seen.values()) < 64 << 10, pipeline.seen


@pytest.mark.docker
def test_replaced_socket_cannot_redirect_the_referee(images, tmp_path):
    """The bot swaps its socket for a symlink to /var/run/docker.sock and cuts the connection: the
    referee reconnects through the socket it pinned (without pinning it would follow the link to
    the host's Docker daemon and lose the bot)."""
    run = referee(
        hostile("socket"),
        example("lowest"),
        example("random"),
        "--threshold",
        "10",
        tmp_path=tmp_path,
    )
    check_complete(run)
    cut = {
        "round": 1,
        "turn": 3,
        "kind": "connection",
        "detail": "PickCard: the bot cannot be reached (connection lost)",
    }
    if GVISOR:  # there the bot may not even remove its socket (a host file): its call fails
        refused = (
            "PickCard: INTERNAL: the bot raised PermissionError: [Errno 1] Operation not permitted"
        )
        (error, lost) = run.faults(0)
        assert error["kind"] == "error" and error["detail"].startswith(refused), error
        assert lost == cut
    else:
        assert run.faults(0) == [cut]
    assert run.record()["result"]["forfeited"] == []
    only_faults_of(run, 0)
    log = run.log("hostile_socket")
    assert ("socket replaced by a symlink" in log or GVISOR) and "1 connection(s) cut" in log
    assert "ANSWERED-AFTER-SABOTAGE 3" in log


@pytest.mark.docker
def test_snooping_bot_sees_only_its_own_container(images, tmp_path):
    needle = f"T5SECRET{secrets.token_hex(8)}"
    run = referee(
        hostile("snoop"),
        example("lowest"),
        example("random"),
        "--threshold",
        "10",
        tmp_path=tmp_path,
        env={"TAKE5_SECRET": needle, "TAKE5_TEST_MARKER": needle},
    )
    check_complete(run)
    assert run.code == 0
    report = run.report("hostile_snoop")
    assert report["found"] == []
    assert needle not in run.log("hostile_snoop")
    # Only its own processes: no referee, no other bot. In a fresh container: docker-init (pid 1)
    # and the bot; in a warm one: the fork server (pid 1), the game's leader and the bot, both
    # forked from it (so with its command line).
    processes = report["processes"]
    if processes["1"].startswith("/sbin/docker-init"):
        assert sorted(processes.values()) == sorted([processes["1"], "python3 /bot/bot.py"])
    else:
        assert processes["1"].startswith("/usr/bin/python3 -I -S /opt/take5/forkserver.py")
        assert list(processes.values()) == [processes["1"]] * 3, processes
    assert set(report["env"]) <= {
        "HOME",
        "HOSTNAME",
        "LC_CTYPE",
        "LANG",
        "OPENBLAS_NUM_THREADS",  # the Python image's (scripts/setup-docker.sh: numpy's threads)
        "PATH",
        "PWD",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONPATH",
        "PYTHONUNBUFFERED",
        "TAKE5_CORE",  # the Python image's: its compiled core is the one in use
        "TAKE5_LISTEN",
    }, report["env"]
    assert set(report["socket_dir"]) <= {"bot.sock", "output.log"}
    assert report["hostname"] == "bot"


@pytest.mark.docker
def test_network_is_unreachable(images, tmp_path):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", NET_PORT))
    except OSError:
        listener.close()
        listener = None  # the port is taken on this host: the probe still runs
    accepted = []
    stop = threading.Event()
    if listener is not None:
        listener.listen(8)
        listener.settimeout(0.2)

        def accept_loop():
            while not stop.is_set():
                try:
                    accepted.append(listener.accept()[0])
                except OSError:
                    pass

        thread = threading.Thread(target=accept_loop, daemon=True)
        thread.start()
    try:
        run = referee(
            hostile("net"),
            example("lowest"),
            example("random"),
            "--threshold",
            "10",
            tmp_path=tmp_path,
        )
    finally:
        stop.set()
        if listener is not None:
            thread.join(2)
            listener.close()
    check_complete(run)
    assert run.code == 0
    report = run.report("hostile_net")
    assert report["interfaces"] == ["lo"] and report["routes"] == [] and report["isolated"]
    assert report["dns"].startswith("failed")
    for target, result in report["connect"].items():
        assert result not in ("connected", "present"), (target, result)
    unreachable = "EHOSTUNREACH" if GVISOR else "ENETUNREACH"  # gVisor's own network stack
    assert report["outside"] == unreachable and report["udp"] == unreachable
    assert accepted == [], "the bot reached the host's listener"


@pytest.mark.docker
def test_writes_outside_the_tmpfs_fail(images, tmp_path):
    run = referee(
        hostile("write"),
        example("lowest"),
        example("random"),
        "--threshold",
        "10",
        tmp_path=tmp_path,
    )
    check_complete(run)
    assert run.code == 0
    report = run.report("hostile_write")
    for place, result in report["write"].items():
        if place in ("/tmp", "/dev/shm"):
            assert result == "ok", place
        else:
            assert result in ("EROFS", "EACCES", "EPERM"), (place, result)
    assert report["fill_tmp"] == [16 << 20, "ENOSPC"]  # /tmp is a 16m tmpfs
    if os.geteuid() == 0:  # the socket folder is a small tmpfs only when the referee is root
        written, error = report["fill_run"]
        assert error == "ENOSPC" and written <= (1 << 20) + (64 << 10)


# -- cleanup ---------------------------------------------------------------------------------------


def _wait(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def _start_long_match(tmp_path: Path) -> tuple[subprocess.Popen[str], str]:
    prefix = f"pytest-{TOKEN}-{secrets.token_hex(2)}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            "--sandbox",
            "docker",
            hostile("sleep"),
            example("lowest"),
            "--games",
            "20",
            "--timeout",
            "5",
            "--records",
            str(tmp_path / "records"),
        ],
        cwd=ROOT,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "TAKE5_RUN_PREFIX": prefix},
    )
    assert _wait(lambda: len(_owned_by(proc.pid)) >= 2, 60), (
        "the match did not start its containers"
    )
    return proc, prefix


@pytest.mark.docker
def test_interrupt_removes_every_container(images, tmp_path):
    proc, prefix = _start_long_match(tmp_path)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    assert _owned_by(proc.pid) == [] and _socket_roots(prefix) == []


@pytest.mark.docker
def test_killed_referee_leaves_no_container(images, tmp_path):
    """SIGKILL gives the referee no chance to clean up: its reaper process does, at once."""
    proc, prefix = _start_long_match(tmp_path)
    proc.kill()
    proc.communicate(timeout=30)
    assert _wait(lambda: _owned_by(proc.pid) == [], 15), _owned_by(proc.pid)
    assert _wait(lambda: _socket_roots(prefix) == [], 15)


@pytest.mark.docker
def test_leftovers_of_a_dead_referee_are_removed_at_start(images):
    """Containers whose owning referee process is gone (a crash before the reaper existed, a
    reboot) are removed when the next launcher starts; containers of live referees are kept."""
    from take5_arena.referee.sandbox import containers, engine, sockets, sweep
    from take5_arena.referee.sandbox.launcher import DockerLauncher
    from take5_arena.referee.sandbox.limits import SandboxLimits
    from take5_arena.referee.sandbox.reaper import owner_label

    client = engine.client()
    # This process's sweep (started by an earlier launcher) would remove the dead referee's
    # container itself, before the launcher below could: the launcher starts it again.
    sweep.stop()

    def list_containers(run):
        return containers.list_containers(client, run_id=run)

    gone = subprocess.Popen(["true"])
    dead_owner = owner_label(gone.pid)
    gone.wait()
    dead_owner = dead_owner.rsplit(":", 1)[0] + ":1"  # its start time no longer matches anything
    runs = [f"pytest-{TOKEN}-dead", f"pytest-{TOKEN}-live"]
    info = images[example("lowest")]
    try:
        for run, owner in zip(runs, [dead_owner, owner_label()]):
            folder = Path(f"/tmp/t5-{run}") / "c0001"
            sockets.prepare_socket_dir(folder, SandboxLimits())
            containers.start_container(
                client,
                info.tag,
                limits=SandboxLimits(),
                run_id=run,
                socket_dir=folder,
                labels={"take5.owner": owner},
            )
        # A socket folder mounted by a referee that died before it created its container: no
        # container names it, the owner file of its run's folder does.
        stray = Path(f"/tmp/t5-pytest-{TOKEN}-stray")
        sockets.prepare_socket_dir(stray / "c0001", SandboxLimits())
        (stray / "owner").write_text(dead_owner + "\n")
        assert os.path.ismount(stray / "c0001") or os.geteuid() != 0
        with DockerLauncher(reaper=False) as launcher:
            assert launcher.orphans_removed >= 1
            assert list_containers(runs[0]) == []
            assert len(list_containers(runs[1])) == 1
        assert not Path(f"/tmp/t5-{runs[0]}").exists()
        assert not stray.exists()
    finally:
        for run in runs:
            containers.remove_run(client, run)
            sockets.sweep_socket_root(Path(f"/tmp/t5-{run}"))


@pytest.mark.docker
def test_containers_started_ahead_are_used(images):
    """The launcher API for tournaments: prefetch the next table's bots while a game plays; the
    match at that table then starts no container of its own."""
    from take5 import Settings
    from take5_arena.referee.match import MatchConfig, run_match
    from take5_arena.referee.sandbox.launcher import DockerLauncher

    bots = [example("lowest"), example("random")]
    with DockerLauncher(run_id=f"pytest-{TOKEN}-ahead", reaper=False) as launcher:
        launcher.prefetch(bots, game_id="table-2")
        assert launcher.containers_created == 2
        result = run_match(
            bots,
            MatchConfig(games=1, game=Settings(players=len(bots), threshold=10)),
            launcher=launcher,
        )
        assert result.exit_code == 0 and launcher.containers_created == 2
        result = run_match(
            bots,
            MatchConfig(games=3, game=Settings(players=len(bots), threshold=10)),
            launcher=launcher,
        )
        assert result.exit_code == 0
        # A fresh pair of containers per game (warm or not: no container serves two games).
        assert launcher.containers_created == 2 + 2 * 3
        assert launcher.start_seconds.count == 8
    assert _containers(lambda run, owner: run == f"pytest-{TOKEN}-ahead") == []


@pytest.mark.docker
def test_one_match_starts_no_container_it_does_not_use(images, tmp_path):
    """`referee match` of 3 games between 2 bots creates 6 bot containers, one per bot and game:
    the next game's are started ahead while a game plays, and none after the last game (a spare
    nobody takes is CPU and memory for nothing). Counted from the engine's own events."""
    from take5_arena.referee.sandbox import engine as docker_engine

    client = docker_engine.client()
    since = int(time.time()) - 1
    run = referee(example("lowest"), example("random"), "--games", "3", tmp_path=tmp_path)
    check_complete(run, games=3)
    events = client.api.events(
        since=since,
        until=int(time.time()) + 1,
        decode=True,
        filters={"type": "container", "event": "create", "label": "take5.arena=1"},
    )
    owners = [str(e.get("Actor", {}).get("Attributes", {}).get("take5.owner", "")) for e in events]
    mine = [owner for owner in owners if owner.split(":")[2:3] == [str(run.pid)]]
    assert len(mine) == 6, owners


@pytest.mark.docker
def test_no_docker_process_is_spawned_during_a_match(images, tmp_path):
    """Every container request of a match is an Engine API call: a `docker` first on PATH that
    records its calls is never run (images are up to date, so nothing is built)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    calls = tmp_path / "docker-calls"
    (fake / "docker").write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexit 1\n')
    (fake / "docker").chmod(0o755)
    env = {"PATH": f"{fake}{os.pathsep}{os.environ.get('PATH', '')}", "TAKE5_DOCKER": ""}
    run = referee(
        example("lowest"),
        example("random"),
        hostile("exit"),
        "--games",
        "2",
        "--threshold",
        "10",
        tmp_path=tmp_path,
        env=env,
    )
    check_complete(run, games=2)
    assert run.faults(2) and run.faults(2)[0]["kind"] == "crash"  # exits were still seen
    assert not calls.exists(), calls.read_text()


# -- building --------------------------------------------------------------------------------------


@pytest.mark.docker
def test_build_command(images):
    ok = subprocess.run(
        [sys.executable, "-m", "take5_arena", "build", example("lowest")],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ok.returncode == 0, ok.stderr
    assert f"{images[example('lowest')].tag} is up to date" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "take5_arena", "build", str(DOCKER_BOTS / "broken_build")],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 3  # the bot is rejected
    assert "T5-BUILD-MARKER" in bad.stderr  # the build's own output
    assert "FAILED" in bad.stderr


@pytest.mark.docker
def test_unbuildable_bot_is_rejected_with_its_build_output(images, tmp_path):
    run = referee(
        str(DOCKER_BOTS / "broken_build"), example("lowest"), "--threshold", "10", tmp_path=tmp_path
    )
    assert run.code == 3, run.err[-2000:]
    (rejection,) = run.doc["rejections"]
    assert rejection["kind"] == "crash" and "image could not be built" in rejection["detail"]
    assert "T5-BUILD-MARKER" in run.err
    assert "T5-BUILD-MARKER" in run.log("broken_build")


# -- without an engine -----------------------------------------------------------------------------


def test_missing_engine_is_a_clear_error(tmp_path):
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/take5-docker.sock"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            "--sandbox",
            "docker",
            example("lowest"),
            example("random"),
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2 and "--sandbox docker" in proc.stderr and "docker" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "take5_arena", "build", example("lowest")],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    # the host's fault, not the bot's: exit 4 (docs/organisers/command-line.md)
    assert proc.returncode == 4 and "no Docker engine" in proc.stderr


def test_bad_limits_are_usage_errors():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            "--sandbox",
            "docker",
            "--memory",
            "lots",
            example("lowest"),
            example("random"),
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "--memory" in proc.stderr


def test_exit_faults_name_their_cause():
    from take5_arena.referee.sandbox.dockerbot import exit_fault

    assert exit_fault(137, True, "256m") == (
        "resource",
        "the bot ran out of memory: its container was OOM-killed (OOMKilled, memory limit 256m, "
        "exit code 137)",
    )
    assert exit_fault(3, False, "256m") == ("crash", "the bot's container exited with exit code 3")
    assert exit_fault(137, False, "256m") == (
        "crash",
        "the bot's container exited with exit code 137 (killed by SIGKILL)",
    )
    assert exit_fault(1, False, "1g", before_serving=True) == (
        "crash",
        "the bot's container exited before it served with exit code 1",
    )


def test_owner_labels_tell_live_from_dead_referees():
    from take5_arena.referee.sandbox.reaper import owner_alive, owner_label

    assert owner_alive(owner_label())
    gone = subprocess.Popen(["true"])
    label = owner_label(gone.pid)
    gone.wait()
    assert not owner_alive(label.rsplit(":", 1)[0] + ":1")
    assert owner_alive("another-host:abc:1:1")  # not ours to judge
    assert owner_alive("garbage")


def test_dockerfile_only_folder_needs_the_docker_sandbox():
    from take5_arena.referee.match.botref import parse_bot

    ref = parse_bot(str(DOCKER_BOTS / "broken_build"))
    assert ref.kind == "dockerfile" and ref.default_name == "broken_build"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "match",
            str(DOCKER_BOTS / "broken_build"),
            example("lowest"),
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "--sandbox docker" in proc.stderr
